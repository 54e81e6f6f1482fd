"""`paddle.callbacks`: hooks `paddle.Model.fit/evaluate/predict` call around epochs
and batches (`Callback`, `ProgBarLogger`, `ModelCheckpoint`, `EarlyStopping`,
`LRScheduler`, `ReduceLROnPlateau`), and the `CallbackList` that drives them."""

from __future__ import annotations

import numbers
import os
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np


class Callback:
    """Base class: every hook does nothing.  `self.model` and `self.params`
    (`batch_size`, `epochs`, `steps`, `verbose`, `metrics`) are set by the Model."""

    def __init__(self) -> None:
        self.model: Any = None
        self.params: dict[str, Any] = {}

    def set_params(self, params: dict[str, Any]) -> None:
        """Receive the run's parameters."""
        self.params = params

    def set_model(self, model: Any) -> None:
        """Receive the Model being run."""
        self.model = model

    def on_begin(self, mode: str, logs: dict[str, Any] | None = None) -> None:
        """Called at the start of `mode` ('train', 'eval' or 'predict')."""
        getattr(self, f"on_{mode}_begin")(logs)

    def on_end(self, mode: str, logs: dict[str, Any] | None = None) -> None:
        """Called at the end of `mode`."""
        getattr(self, f"on_{mode}_end")(logs)

    def on_batch_begin(self, mode: str, step: int, logs: dict[str, Any] | None = None) -> None:
        """Called before batch `step` of `mode`."""
        getattr(self, f"on_{mode}_batch_begin")(step, logs)

    def on_batch_end(self, mode: str, step: int, logs: dict[str, Any] | None = None) -> None:
        """Called after batch `step` of `mode`."""
        getattr(self, f"on_{mode}_batch_end")(step, logs)

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        """Start of `fit`."""

    def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
        """End of `fit`."""

    def on_eval_begin(self, logs: dict[str, Any] | None = None) -> None:
        """Start of an evaluation."""

    def on_eval_end(self, logs: dict[str, Any] | None = None) -> None:
        """End of an evaluation (`logs` holds its averaged results)."""

    def on_predict_begin(self, logs: dict[str, Any] | None = None) -> None:
        """Start of `predict`."""

    def on_predict_end(self, logs: dict[str, Any] | None = None) -> None:
        """End of `predict`."""

    def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        """Start of training epoch `epoch` (from 0)."""

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        """End of training epoch `epoch`."""

    def on_train_batch_begin(self, step: int, logs: dict[str, Any] | None = None) -> None:
        """Before training batch `step`."""

    def on_train_batch_end(self, step: int, logs: dict[str, Any] | None = None) -> None:
        """After training batch `step` (`logs`: loss, metrics, batch_size)."""

    def on_eval_batch_begin(self, step: int, logs: dict[str, Any] | None = None) -> None:
        """Before evaluation batch `step`."""

    def on_eval_batch_end(self, step: int, logs: dict[str, Any] | None = None) -> None:
        """After evaluation batch `step`."""

    def on_predict_batch_begin(self, step: int, logs: dict[str, Any] | None = None) -> None:
        """Before prediction batch `step`."""

    def on_predict_batch_end(self, step: int, logs: dict[str, Any] | None = None) -> None:
        """After prediction batch `step`."""


class CallbackList:
    """Calls each hook on every callback, in order."""

    def __init__(self, callbacks: Sequence[Callback]) -> None:
        self.callbacks = list(callbacks)

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("on_") and name not in ("set_params", "set_model"):
            raise AttributeError(name)

        def call(*args: Any) -> None:
            for c in self.callbacks:
                getattr(c, name)(*args)

        return call


def _fmt(v: Any) -> str:
    if isinstance(v, (list, tuple)) and len(v) == 1:
        v = v[0]
    if isinstance(v, np.ndarray) and v.size == 1:
        v = v.item()
    if isinstance(v, numbers.Number):
        return f"{v:.4f}" if isinstance(v, float) or isinstance(v, np.floating) else str(v)
    if isinstance(v, (list, tuple, np.ndarray)):
        return str([float(f"{float(x):.4f}") for x in np.asarray(v).ravel()])
    return str(v)


class ProgBarLogger(Callback):
    """Prints Paddle's progress lines: `Epoch 1/2`, then every `log_freq` steps and
    at the end of the epoch `step 10/10 - loss: 0.6931 - acc: 0.5000 - 3ms/step`;
    evaluations print `Eval begin...` and `Eval samples: N`.  `verbose=0` is
    silent."""

    def __init__(self, log_freq: int = 1, verbose: int = 2) -> None:
        super().__init__()
        self.log_freq = log_freq
        self.verbose = verbose
        self.epochs: int | None = None
        self._t0 = 0.0

    def _line(self, step: int, steps: int | None, logs: dict[str, Any], keys: Sequence[str]) -> str:
        parts = [f"step {step}/{steps if steps else '?'}"]
        for k in keys:
            if k in logs:
                parts.append(f"{k}: {_fmt(logs[k])}")
        elapsed = (time.perf_counter() - self._t0) / max(step, 1)
        unit = f"{elapsed * 1000:.0f}ms/step" if elapsed < 1 else f"{elapsed:.0f}s/step"
        return " - ".join([*parts, unit])

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        self.epochs = self.params.get("epochs")
        if self.verbose:
            print("The loss value printed in the log is the current step, and the metric is the average "
                  "value of previous steps.")

    def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        self.steps = self.params.get("steps")
        self._t0 = time.perf_counter()
        if self.verbose:
            print(f"Epoch {epoch + 1}/{self.epochs}")

    def _keys(self) -> list[str]:
        return ["loss", *self.params.get("metrics", [])]

    def on_train_batch_end(self, step: int, logs: dict[str, Any] | None = None) -> None:
        logs = logs or {}
        n = step + 1
        if self.verbose and (n % self.log_freq == 0 or n == self.steps):
            print(self._line(n, self.steps, logs, self._keys()))
        self._last = (n, logs)

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        last = getattr(self, "_last", None)
        if self.verbose and last is not None and self.steps is None:
            print(self._line(last[0], last[0], last[1], self._keys()))

    def on_eval_begin(self, logs: dict[str, Any] | None = None) -> None:
        self.eval_steps = (logs or {}).get("steps")
        self._t0 = time.perf_counter()
        self._eval_last: tuple[int, dict[str, Any]] | None = None
        if self.verbose:
            print("Eval begin...")

    def on_eval_batch_end(self, step: int, logs: dict[str, Any] | None = None) -> None:
        n = step + 1
        self._eval_last = (n, logs or {})
        if self.verbose and (n % self.log_freq == 0 or n == self.eval_steps):
            print(self._line(n, self.eval_steps, logs or {}, self._keys()))

    def on_eval_end(self, logs: dict[str, Any] | None = None) -> None:
        if self.verbose:
            if self.eval_steps is None and self._eval_last is not None:
                n, last = self._eval_last
                print(self._line(n, n, last, self._keys()))
            print(f"Eval samples: {(logs or {}).get('samples', 0)}")

    def on_predict_begin(self, logs: dict[str, Any] | None = None) -> None:
        self._t0 = time.perf_counter()
        if self.verbose:
            print("Predict begin...")

    def on_predict_end(self, logs: dict[str, Any] | None = None) -> None:
        if self.verbose:
            print(f"Predict samples: {(logs or {}).get('samples', 0)}")


class ModelCheckpoint(Callback):
    """Saves the model (`Model.save`) to `save_dir/<epoch>` every `save_freq`
    epochs and to `save_dir/final` at the end of training."""

    def __init__(self, save_freq: int = 1, save_dir: str | None = None) -> None:
        super().__init__()
        self.save_freq = save_freq
        self.save_dir = save_dir

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        if self.save_dir and (epoch + 1) % self.save_freq == 0:
            self.model.save(os.path.join(self.save_dir, str(epoch)))

    def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
        if self.save_dir:
            self.model.save(os.path.join(self.save_dir, "final"))


class LRScheduler(Callback):
    """Steps the optimizer's learning-rate schedule after every batch (`by_step`)
    or every epoch (`by_epoch`)."""

    def __init__(self, by_step: bool = True, by_epoch: bool = False) -> None:
        super().__init__()
        if by_step and by_epoch:
            raise ValueError("by_step option is mutually exclusive with by_epoch")
        self.by_step = by_step
        self.by_epoch = by_epoch

    def _step(self) -> None:
        from pullback.frontend.lr import LRScheduler as Schedule

        opt = getattr(self.model, "_optimizer", None)
        sched = getattr(opt, "_learning_rate", None)
        if isinstance(sched, Schedule):
            sched.step()

    def on_train_batch_end(self, step: int, logs: dict[str, Any] | None = None) -> None:
        if self.by_step:
            self._step()

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        if self.by_epoch:
            self._step()


class EarlyStopping(Callback):
    """Stops `fit` when the evaluated `monitor` stops improving by `min_delta` for
    `patience` evaluations (`mode` 'min', 'max' or 'auto': max for accuracies);
    with `save_best_model` the best model is saved to `save_dir/best_model`."""

    def __init__(self, monitor: str = "loss", mode: str = "auto", patience: int = 0, verbose: int = 1,
                 min_delta: float = 0, baseline: float | None = None, save_best_model: bool = True) -> None:
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.save_best_model = save_best_model
        self.wait_epoch = 0
        self.best_weights = None
        self.stopped_epoch = 0
        self.save_dir: str | None = None
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"EarlyStopping mode {mode} is unknown, fallback to auto mode.", stacklevel=2)
            mode = "auto"
        if mode == "auto":
            mode = "max" if "acc" in monitor else "min"
        self.mode = mode
        self.reset()

    def reset(self) -> None:
        """Forget the best value seen."""
        self.wait_epoch = 0
        self.best_value = self.baseline if self.baseline is not None else (
            np.inf if self.mode == "min" else -np.inf)

    def _better(self, current: float) -> bool:
        if self.mode == "min":
            return current < self.best_value - self.min_delta
        return current > self.best_value + self.min_delta

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        self.reset()
        self.save_dir = self.params.get("save_dir")

    def on_eval_end(self, logs: dict[str, Any] | None = None) -> None:
        if logs is None or self.monitor not in logs:
            warnings.warn(f"Monitor of EarlyStopping should be loss or metric name, got {self.monitor}.",
                          stacklevel=2)
            return
        value = logs[self.monitor]
        current = float(np.asarray(value).ravel()[0])
        if self._better(current):
            self.best_value = current
            self.wait_epoch = 0
            if self.save_best_model and self.save_dir is not None:
                self.model.save(os.path.join(self.save_dir, "best_model"))
        else:
            self.wait_epoch += 1
        if self.wait_epoch >= self.patience:
            self.model.stop_training = True
            if self.verbose > 0:
                print(f"Epoch {self.stopped_epoch + 1}: Early stopping.")
        self.stopped_epoch += 1


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` when the evaluated `monitor` has
    not improved by `min_delta` for `patience` evaluations (then waits `cooldown`
    evaluations), never below `min_lr`.  The optimizer's rate must be a float
    (a schedule sets its own)."""

    def __init__(self, monitor: str = "loss", factor: float = 0.1, patience: int = 10, verbose: int = 1,
                 mode: str = "auto", min_delta: float = 1e-4, cooldown: int = 0, min_lr: float = 0) -> None:
        super().__init__()
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0.")
        self.monitor = monitor
        self.factor = factor
        self.patience = patience
        self.verbose = verbose
        self.min_delta = min_delta
        self.cooldown = cooldown
        self.min_lr = min_lr
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"Learning rate reduction mode {mode} is unknown, fallback to auto mode.", stacklevel=2)
            mode = "auto"
        self.mode = ("max" if "acc" in monitor else "min") if mode == "auto" else mode
        self.reset()

    def reset(self) -> None:
        """Forget the best value and the counters."""
        self.best = np.inf if self.mode == "min" else -np.inf
        self.wait = 0
        self.cooldown_counter = 0

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        self.reset()

    def on_eval_end(self, logs: dict[str, Any] | None = None) -> None:
        if logs is None or self.monitor not in logs:
            warnings.warn(f"Monitor of ReduceLROnPlateau should be loss or metric name, got {self.monitor}.",
                          stacklevel=2)
            return
        opt = getattr(self.model, "_optimizer", None)
        if opt is None or not isinstance(getattr(opt, "_learning_rate", None), (int, float)):
            warnings.warn("ReduceLROnPlateau needs an optimizer with a float learning rate.", stacklevel=2)
            return
        current = float(np.asarray(logs[self.monitor]).ravel()[0])
        better = current < self.best - self.min_delta if self.mode == "min" else current > self.best + self.min_delta
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if better:
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(opt.get_lr())
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    opt.set_lr(new)
                    if self.verbose > 0:
                        print(f"Epoch: reducing learning rate from {old} to {new}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


def config_callbacks(callbacks: Sequence[Callback] | None = None, model: Any = None, batch_size: int | None = None,
                     epochs: int | None = None, steps: int | None = None, log_freq: int = 2, verbose: int = 2,
                     save_freq: int = 1, save_dir: str | None = None, metrics: Sequence[str] | None = None,
                     mode: str = "train", *, params: dict[str, Any] | None = None) -> CallbackList:
    """The run's callbacks (Paddle's `paddle.hapi.callbacks.config_callbacks`): the
    user's, plus a `ProgBarLogger`, a `ModelCheckpoint` (training with a `save_dir`)
    and an `LRScheduler` (stepping the optimizer's schedule after every training
    batch) unless given; each gets the model and the run's parameters (`params`, or
    the batch size, epochs, steps, verbosity and metric names given one by one)."""
    cbks = list(callbacks or [])
    if not any(isinstance(c, ProgBarLogger) for c in cbks):
        cbks = [ProgBarLogger(log_freq, verbose=verbose), *cbks]
    if params is None:
        if mode == "train" and save_dir and not any(isinstance(c, ModelCheckpoint) for c in cbks):
            cbks = [*cbks, ModelCheckpoint(save_freq, save_dir)]
        params = {"batch_size": batch_size, "epochs": epochs, "steps": steps, "verbose": verbose,
                  "metrics": list(metrics or []), "save_dir": save_dir}
    if not any(isinstance(c, LRScheduler) for c in cbks):
        cbks = [*cbks, LRScheduler()]
    for c in cbks:
        if not isinstance(c, Callback):
            raise TypeError(f"callbacks must be paddle.callbacks.Callback instances, got {type(c).__name__}")
        c.set_model(model)
        c.set_params(params)
    return CallbackList(cbks)


__all__ = ["Callback", "CallbackList", "EarlyStopping", "LRScheduler", "ModelCheckpoint", "ProgBarLogger",
           "ReduceLROnPlateau"]
