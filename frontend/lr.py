"""Learning-rate schedules (`paddle.optimizer.lr.*`), Paddle's formulas and state.

A scheduler is a Python object: `scheduler()` is the current rate (`last_lr`),
`scheduler.step()` advances `last_epoch` and recomputes it.  Any optimizer takes one
as `learning_rate=`:

* eager mode: each `step()` reads `scheduler()`;
* static mode: the program reads the rate from a persistable `[1]` variable
  (`learning_rate_0`) that the optimizer creates; `Executor.run` writes
  `scheduler()` into the scope before each run of a program that carries the
  scheduler (`program.lr_scheduler`), so a new rate never recompiles anything.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from pullback.runtime.interrupts import deferred_interrupts

_Step = TypeVar("_Step", bound=Callable[..., None])


def _as_a_unit(step: _Step) -> _Step:
    """A scheduler's `step` changes its state whole or not at all: when it does not
    finish (Ctrl-C's KeyboardInterrupt between `last_epoch` and `last_lr`, or an
    error), its attributes get their values from before the call back (issue 32)."""

    @functools.wraps(step)
    def unit(self: Any, *args: Any, **kwargs: Any) -> None:
        saved = dict(self.__dict__)
        try:
            step(self, *args, **kwargs)
        except BaseException:
            with deferred_interrupts():
                self.__dict__.clear()
                self.__dict__.update(saved)
            raise

    return unit  # type: ignore[return-value]


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class LRScheduler:
    """Base class: subclasses define `get_lr()` from `base_lr` and `last_epoch`.

    `last_epoch=-1` starts the schedule: the constructor calls `step()` once, so the
    first rate is that of epoch 0."""

    def __init__(self, learning_rate: float = 0.1, last_epoch: int = -1, verbose: bool = False) -> None:
        if not _is_number(learning_rate):
            raise TypeError(
                f"The type of learning rate must be float, but received {type(learning_rate)}"
            )
        self.base_lr = float(learning_rate)
        self.last_lr = float(learning_rate)
        self.last_epoch = last_epoch
        self.verbose = verbose
        self._var_name: str | None = None
        self.step()

    def __call__(self) -> float:
        """The current learning rate."""
        return self.last_lr

    @_as_a_unit
    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to `epoch`) and recompute the rate; call it
        after `optimizer.step()`."""
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            self.last_lr = closed() if closed is not None else self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to {self.last_lr}.")

    def state_keys(self) -> None:
        """Set `self.keys`, the attributes `state_dict` saves."""
        self.keys = ["last_epoch", "last_lr"]

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state: a subset of its attributes."""
        self.state_keys()
        out: dict[str, Any] = {}
        for key in self.keys:
            if key not in self.__dict__:
                continue
            value = self.__dict__[key]
            if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
                arr = np.asarray(value.numpy())
                if arr.size != 1:
                    raise ValueError(f"shape of Tensor in state_dict must be [1] {list(arr.shape)}")
                value = arr.reshape(-1)[0]
            out[key] = value
        return out

    def set_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state saved by `state_dict` (every key checked before any is set)."""
        self.state_keys()
        for key in self.keys:
            if key not in state_dict:
                raise RuntimeError(
                    "Please check whether state_dict is correct for optimizer. Can't find "
                    f"[ {key} ] in state_dict"
                )
        for key in self.keys:
            self.__dict__[key] = state_dict[key]
        if len(state_dict) > len(self.keys):
            warnings.warn(
                "There are some unused values in state_dict. Maybe the optimizer have "
                "different 'LearningRateDecay' when invoking state_dict and set_dict",
                stacklevel=2,
            )

    set_dict = set_state_dict

    def get_lr(self) -> float:
        """The rate at `last_epoch` (subclasses define it)."""
        raise NotImplementedError


class NoamDecay(LRScheduler):
    """`lr * d_model^-0.5 * min(epoch^-0.5, epoch * warmup_steps^-1.5)`."""

    def __init__(self, d_model: float, warmup_steps: int, learning_rate: float = 1.0,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if d_model <= 0:
            raise ValueError("d_model should be grater than 0")
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        a = 1 if self.last_epoch == 0 else self.last_epoch**-0.5
        b = self.warmup_steps**-1.5 * self.last_epoch
        return self.base_lr * (self.d_model**-0.5) * min(a, b)


class PiecewiseDecay(LRScheduler):
    """`values[i]` while `epoch < boundaries[i]`, the last value afterwards."""

    def __init__(self, boundaries: Sequence[int], values: Sequence[float], last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if len(values) != len(boundaries) + 1:
            raise ValueError(
                f"PiecewiseDecay: values needs one more entry than boundaries "
                f"({len(values)} values, {len(boundaries)} boundaries)"
            )
        self.boundaries = list(boundaries)
        self.values = list(values)
        super().__init__(last_epoch=last_epoch, verbose=verbose)

    def get_lr(self) -> float:
        for i, b in enumerate(self.boundaries):
            if self.last_epoch < b:
                return self.values[i]
        return self.values[-1]


class NaturalExpDecay(LRScheduler):
    """`lr * e^(-gamma * epoch)`."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if not gamma > 0.0:
            raise ValueError(" 'gamma' must be a positive number so that the learning rate will decay.")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * math.exp(-1 * self.gamma * self.last_epoch)


class InverseTimeDecay(LRScheduler):
    """`lr / (1 + gamma * epoch)`."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr / (1 + self.gamma * self.last_epoch)


class PolynomialDecay(LRScheduler):
    """`(lr - end_lr) * (1 - epoch / decay_steps)^power + end_lr`; with `cycle` the
    decay restarts every `decay_steps`."""

    def __init__(self, learning_rate: float, decay_steps: int, end_lr: float = 0.0001,
                 power: float = 1.0, cycle: bool = False, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if not (isinstance(decay_steps, int) and decay_steps > 0):
            raise ValueError(" 'decay_steps' must be a positive integer.")
        if not power > 0.0:
            raise ValueError(" 'power' must be greater than 0.0 so that the learning rate will decay.")
        self.decay_steps = decay_steps
        self.end_lr = end_lr
        self.power = power
        self.cycle = cycle
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        epoch, steps = self.last_epoch, self.decay_steps
        if self.cycle:
            div = math.ceil(float(epoch) / float(steps))
            steps = steps * (1 if epoch == 0 else div)
        else:
            epoch = min(epoch, steps)
        return (self.base_lr - self.end_lr) * ((1 - float(epoch) / float(steps)) ** self.power) + self.end_lr


class LinearWarmup(LRScheduler):
    """`start_lr -> end_lr` linearly over `warmup_steps`, then `learning_rate` (a
    float or a scheduler, which then counts epochs from the end of the warm-up)."""

    def __init__(self, learning_rate: float | LRScheduler, warmup_steps: int, start_lr: float,
                 end_lr: float, last_epoch: int = -1, verbose: bool = False) -> None:
        if not (_is_number(learning_rate) or isinstance(learning_rate, LRScheduler)):
            raise TypeError(
                "the type of learning_rate should be [int, float or LRScheduler], the current "
                f"type is {learning_rate}"
            )
        if not (isinstance(warmup_steps, int) and warmup_steps > 0):
            raise ValueError(" 'warmup_steps' must be a positive integer.")
        self.learning_rate = learning_rate
        self.warmup_steps = warmup_steps
        self.start_lr = start_lr
        self.end_lr = end_lr
        super().__init__(start_lr, last_epoch, verbose)

    def state_dict(self) -> dict[str, Any]:
        """The state, with the wrapped scheduler's under `LinearWarmup_LR`."""
        out = super().state_dict()
        if isinstance(self.learning_rate, LRScheduler):
            out["LinearWarmup_LR"] = self.learning_rate.state_dict()
        return out

    def set_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the state (and the wrapped scheduler's; both checked first)."""
        if isinstance(self.learning_rate, LRScheduler) and "LinearWarmup_LR" not in state_dict:
            raise RuntimeError(
                "Please check whether state_dict is correct for optimizer. Can't find [ LinearWarmup_LR ] in state_dict"
            )
        super().set_state_dict(state_dict)
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.set_state_dict(state_dict["LinearWarmup_LR"])

    def get_lr(self) -> float:
        if self.last_epoch < self.warmup_steps:
            return (self.end_lr - self.start_lr) * float(self.last_epoch) / float(self.warmup_steps) + self.start_lr
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(self.last_epoch - self.warmup_steps)
            return self.learning_rate()
        return float(self.learning_rate)


class ExponentialDecay(LRScheduler):
    """`lr * gamma^epoch`."""

    def __init__(self, learning_rate: float, gamma: float, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if not 0.0 < gamma < 1.0:
            raise ValueError(" 'gamma' must be in interval (0.0, 1.0) so that the learning rate will decay.")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * (self.gamma**self.last_epoch)


class MultiStepDecay(LRScheduler):
    """`lr * gamma^k`, `k` the number of milestones reached."""

    def __init__(self, learning_rate: float, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if not isinstance(milestones, (tuple, list)):
            raise TypeError(
                "The type of 'milestones' in 'MultiStepDecay' must be 'tuple, list', but "
                f"received {type(milestones)}."
            )
        if not all(milestones[i] < milestones[i + 1] for i in range(len(milestones) - 1)):
            raise ValueError("The elements of milestones must be incremented")
        if gamma >= 1.0:
            raise ValueError("gamma should be < 1.0.")
        self.milestones = milestones
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        for i, m in enumerate(self.milestones):
            if self.last_epoch < m:
                return self.base_lr * (self.gamma**i)
        return self.base_lr * (self.gamma ** len(self.milestones))


class StepDecay(LRScheduler):
    """`lr * gamma^(epoch // step_size)`."""

    def __init__(self, learning_rate: float, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if not isinstance(step_size, int) or isinstance(step_size, bool):
            raise TypeError(f"The type of 'step_size' must be 'int', but received {type(step_size)}.")
        if gamma >= 1.0:
            raise ValueError("gamma should be < 1.0.")
        if step_size <= 0:
            raise ValueError(" 'step_size' must be a positive integer.")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * (self.gamma ** (self.last_epoch // self.step_size))


class LambdaDecay(LRScheduler):
    """`lr * lr_lambda(epoch)`."""

    def __init__(self, learning_rate: float, lr_lambda: Callable[[int], float],
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if not callable(lr_lambda):
            raise TypeError(
                "The type of 'lr_lambda' in 'LambdaDecay' must be 'function', but received "
                f"{type(lr_lambda)}."
            )
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.base_lr * self.lr_lambda(self.last_epoch)


class MultiplicativeDecay(LRScheduler):
    """`lr * prod(lr_lambda(e) for e in 1..epoch)`."""

    def __init__(self, learning_rate: float, lr_lambda: Callable[[int], float],
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if not callable(lr_lambda):
            raise TypeError(
                "The type of 'lr_lambda' in 'MultiplicativeDecay' must be 'function', but "
                f"received {type(lr_lambda)}."
            )
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        cur = self.base_lr
        for epoch in range(1, self.last_epoch + 1):
            cur = cur * self.lr_lambda(epoch)
        return cur


class ReduceOnPlateau(LRScheduler):
    """Multiply the rate by `factor` once the metric passed to `step(metrics)` has
    not improved for more than `patience` epochs (then wait `cooldown` epochs)."""

    def __init__(self, learning_rate: float, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float = 0, epsilon: float = 1e-8,
                 verbose: bool = False) -> None:
        mode = mode.lower()
        if mode not in ("min", "max"):
            raise ValueError("mode: " + mode + " is unknown!")
        if factor >= 1.0:
            raise ValueError("new_lr = origin_lr * gamma and gamma should be < 1.0.")
        threshold_mode = threshold_mode.lower()
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode: " + threshold_mode + " is unknown!")
        if not _is_number(learning_rate):
            raise TypeError(
                "The type of 'learning_rate' in 'ReduceOnPlateau' must be 'float', but "
                f"received {type(learning_rate)}."
            )
        self.mode = mode
        self.factor = factor
        self.threshold_mode = threshold_mode
        self.patience = patience
        self.threshold = threshold
        self.cooldown = cooldown
        self.min_lr = min_lr
        self.epsilon = epsilon
        self.cooldown_counter = 0
        self.best: float | None = None
        self.num_bad_epochs = 0
        # Paddle does not call the base constructor: no initial step().
        self.base_lr = float(learning_rate)
        self.last_lr = float(learning_rate)
        self.last_epoch = 0
        self.verbose = verbose
        self._var_name = None

    def state_keys(self) -> None:
        """The saved attributes: counters, the best metric and the rate."""
        self.keys = ["cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"]

    @_as_a_unit
    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record `metrics` (a number, or a one-element Tensor/array) for this epoch
        and reduce the rate when it has stopped improving."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if hasattr(metrics, "shape") and not np.isscalar(metrics):
            size = int(np.prod(metrics.shape)) if len(metrics.shape) else 1
            if size != 1:
                raise ValueError(
                    "the metrics.shape should be (1L,), but the current metrics.shape is "
                    f"{list(metrics.shape)}. Maybe that you should call paddle.mean to "
                    "process it first."
                )
            metrics = float(np.asarray(metrics.numpy() if hasattr(metrics, "numpy") else metrics).reshape(-1)[0])
        elif not isinstance(metrics, (int, float, np.floating, np.integer)):
            raise TypeError(
                "metrics must be 'int', 'float', 'np.float', 'numpy.ndarray' or "
                f"'paddle.Tensor', but receive {type(metrics)}"
            )
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            return
        if self.best is None or self._is_better(metrics, self.best):
            self.best = metrics
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
            new_lr = max(self.last_lr * self.factor, self.min_lr)
            if self.last_lr - new_lr > self.epsilon:
                self.last_lr = new_lr
                if self.verbose:
                    print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to {self.last_lr}.")

    def _is_better(self, current: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return current < best - best * self.threshold
        if self.mode == "min":
            return current < best - self.threshold
        if self.threshold_mode == "rel":
            return current > best + best * self.threshold
        return current > best + self.threshold


class CosineAnnealingDecay(LRScheduler):
    """`eta_min + (lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2`, computed
    recursively as Paddle does."""

    def __init__(self, learning_rate: float, T_max: int, eta_min: float = 0,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if not isinstance(T_max, int) or isinstance(T_max, bool):
            raise TypeError(
                f"The type of 'T_max' in 'CosineAnnealingDecay' must be 'int', but received {type(T_max)}."
            )
        if not _is_number(eta_min):
            raise TypeError(
                "The type of 'eta_min' in 'CosineAnnealingDecay' must be 'float, int', but "
                f"received {type(eta_min)}."
            )
        if T_max <= 0:
            raise ValueError(" 'T_max' must be a positive integer.")
        self.T_max = T_max
        self.eta_min = float(eta_min)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        if self.last_epoch == 0:
            return self.base_lr
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return self.last_lr + (self.base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
        return (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / (
            1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)
        ) * (self.last_lr - self.eta_min) + self.eta_min

    def _get_closed_form_lr(self) -> float:
        return self.eta_min + (self.base_lr - self.eta_min) * (
            1 + math.cos(math.pi * self.last_epoch / self.T_max)
        ) / 2


class OneCycleLR(LRScheduler):
    """The one-cycle policy: from `max_learning_rate / divide_factor` up to
    `max_learning_rate` over `phase_pct` of `total_steps`, then down to
    `end_learning_rate` (cosine or linear annealing; `three_phase` adds a descent
    back to the initial rate before the final one)."""

    def __init__(self, max_learning_rate: float, total_steps: int, divide_factor: float = 25.0,
                 end_learning_rate: float = 0.0001, phase_pct: float = 0.3,
                 anneal_strategy: str = "cos", three_phase: bool = False, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if not _is_number(max_learning_rate):
            raise TypeError(f"'max_learning_rate' must be 'float' or 'int', but received {type(max_learning_rate)}")
        if max_learning_rate < 0:
            raise ValueError("'max_learning_rate' must be a positive integer.")
        if not _is_number(end_learning_rate):
            raise TypeError(f"'end_learning_rate' must be 'float' or 'int', but received {type(end_learning_rate)}")
        if end_learning_rate < 0:
            raise ValueError("'end_learning_rate' must be a positive integer.")
        if not isinstance(total_steps, int) or isinstance(total_steps, bool):
            raise TypeError(f"'total_step' must be 'int', but received {type(total_steps)}")
        if total_steps <= 0:
            raise ValueError("'total_step' must be a positive integer.")
        if not isinstance(phase_pct, float):
            raise TypeError(f"'phase_pct' must be 'float', but received {type(phase_pct)}")
        if not 0 <= phase_pct <= 1:
            raise ValueError(f"'phase_pct' must be between 0 and 1, but received {phase_pct}")
        if not _is_number(divide_factor):
            raise TypeError(f"'divide_factor' must be 'float' or 'int', but received {type(divide_factor)}")
        self.total_steps = total_steps
        initial_lr = max_learning_rate / float(divide_factor)
        min_lr = float(end_learning_rate)
        if three_phase:
            if phase_pct >= 0.5:
                raise ValueError("When three_phase is True, 'phase_pct' must be less than 0.5")
            self._step_config = [0, phase_pct * total_steps - 1, 2 * phase_pct * total_steps - 2,
                                 total_steps - 1, total_steps - 1]
            c = self._step_config
            self._steps_size = [c[1] - c[0], c[2] - c[1], c[3] - c[2], c[3] - c[2]]
            self._lr_config = [initial_lr, max_learning_rate, initial_lr, min_lr]
        else:
            self._step_config = [0, phase_pct * total_steps - 1, total_steps - 1, total_steps - 1]
            c = self._step_config
            self._steps_size = [c[1] - c[0], c[2] - c[1], c[2] - c[1]]
            self._lr_config = [initial_lr, max_learning_rate, min_lr]
        if anneal_strategy == "cos":
            self.anneal_func = self._cos_annealing
        elif anneal_strategy == "linear":
            self.anneal_func = self._linear_annealing
        else:
            raise ValueError(
                f"'anneal_strategy' must by one of 'cos' or 'linear', but received {anneal_strategy}"
            )
        super().__init__(initial_lr, last_epoch, verbose)

    def _cos_annealing(self, start_lr: float, end_lr: float, pct: float) -> float:
        return end_lr + (start_lr - end_lr) / 2.0 * (math.cos(math.pi * pct) + 1)

    def _linear_annealing(self, start_lr: float, end_lr: float, pct: float) -> float:
        return (end_lr - start_lr) * pct + start_lr

    def get_lr(self) -> float:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. However the number of total steps is {self.total_steps}"
            )
        for i, (end_step, size) in enumerate(zip(self._step_config[1:], self._steps_size)):
            if step <= end_step or i == len(self._lr_config) - 2:
                pct = (step - self._step_config[i]) / size
                return self.anneal_func(self._lr_config[i], self._lr_config[i + 1], pct)
        raise AssertionError("unreachable: the last phase always matches")


class CyclicLR(LRScheduler):
    """The rate cycles between `base_learning_rate` and `max_learning_rate`
    (`step_size_up` steps up, `step_size_down` down), the amplitude scaled by
    `mode` ('triangular', 'triangular2', 'exp_range') or `scale_fn`."""

    def __init__(self, base_learning_rate: float, max_learning_rate: float, step_size_up: int,
                 step_size_down: int | None = None, mode: str = "triangular",
                 exp_gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", last_epoch: int = -1, verbose: bool = False) -> None:
        if not _is_number(max_learning_rate):
            raise TypeError(f"'max_learning_rate' must be 'float' or 'int', but received {type(max_learning_rate)}")
        if max_learning_rate < 0:
            raise ValueError(f"'max_learning_rate' must be a positive integer, but received {max_learning_rate}")
        if not isinstance(step_size_up, int) or step_size_up <= 0:
            raise ValueError(f"'step_size_up' must be a positive integer, but received {step_size_up}")
        if step_size_down is not None and (not isinstance(step_size_down, int) or step_size_down <= 0):
            raise ValueError(f"'step_size_down' must be a positive integer, but received {step_size_down}")
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(
                "'mode' is invalid and 'scale_fn' is not specified, make sure one of 'mode' or "
                "'scale_fn' is valid"
            )
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError("'scale_mode' must be one of 'cycle' or 'iterations")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.cycle_size = up + down
        self.step_up_pct = up / self.cycle_size
        self.max_lr = float(max_learning_rate)
        self.amplitude = self.max_lr - base_learning_rate
        self.mode = mode
        self.gamma = exp_gamma
        if scale_fn is None:
            self.scale_fn = {"triangular": lambda x: 1.0,
                             "triangular2": lambda x: 1 / (2.0 ** (x - 1)),
                             "exp_range": lambda x: self.gamma**x}[mode]
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        else:
            self.scale_fn = scale_fn
            self.scale_mode = scale_mode
        super().__init__(base_learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        iterations = self.last_epoch
        cycle = 1 + iterations // self.cycle_size
        pct = 1.0 + iterations / self.cycle_size - cycle
        if pct <= self.step_up_pct:
            factor = pct / self.step_up_pct
        else:
            factor = (1 - pct) / (1 - self.step_up_pct)
        x = cycle if self.scale_mode == "cycle" else iterations
        return self.base_lr + self.amplitude * factor * self.scale_fn(x)


class LinearLR(LRScheduler):
    """The rate starts at `start_factor * learning_rate` and grows (or shrinks)
    linearly to `end_factor * learning_rate` over `total_steps` steps, then stays;
    computed recursively from the previous rate, as Paddle does."""

    def __init__(self, learning_rate: float, total_steps: int, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, last_epoch: int = -1, verbose: bool = False) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                f"`start_factor` must be greater than 0 and less or equal to 1, but got {start_factor}"
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError(f"`end_factor` must be greater than 0 and less than 1, but got {end_factor}")
        if total_steps <= 0:
            raise ValueError(f"`total_steps` must be greater than 0, but got {total_steps}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_steps = total_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        if self.last_epoch == 0:
            return self.base_lr * self.start_factor
        if self.last_epoch > self.total_steps:
            return self.last_lr
        start = self.total_steps * self.start_factor
        slope = self.end_factor - self.start_factor
        return self.last_lr * (1.0 + slope / (start + (self.last_epoch - 1) * slope))


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: `eta_min + (lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2`, where
    `T_cur` counts the epochs since the last restart and the period `T_i` starts
    at `T_0` and is multiplied by `T_mult` at each restart."""

    def __init__(self, learning_rate: float, T_0: int, T_mult: int = 1, eta_min: float = 0,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self) -> float:
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2

    @_as_a_unit
    def step(self, epoch: float | None = None) -> None:  # type: ignore[override]
        """Advance one epoch, or jump to `epoch` (fractional epochs allowed), and
        recompute the rate; a restart happens when `T_cur` reaches `T_i`."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult**n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self.last_lr = self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to {self.last_lr}.")


__all__ = [
    "CosineAnnealingDecay",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialDecay",
    "InverseTimeDecay",
    "LRScheduler",
    "LambdaDecay",
    "LinearLR",
    "LinearWarmup",
    "MultiStepDecay",
    "MultiplicativeDecay",
    "NaturalExpDecay",
    "NoamDecay",
    "OneCycleLR",
    "PiecewiseDecay",
    "PolynomialDecay",
    "ReduceOnPlateau",
    "StepDecay",
]
