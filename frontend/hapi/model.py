"""`paddle.Model`: Paddle's high-level training API over a Layer.

`Model(network, inputs, labels)`; `prepare(optimizer, loss, metrics)`; then
`fit`/`evaluate`/`predict` over Datasets or DataLoaders (with callbacks and
Paddle's progress lines), or `train_batch`/`eval_batch`/`predict_batch` on one
batch; `save`/`load` (`.pdparams` + `.pdopt`, or an inference model) and
`summary`.  In dynamic mode the network's forward runs through
`paddle.jit.to_static` when `inputs` are InputSpecs (one compiled program for
every batch size), falling back to eager with a warning if the forward cannot be
traced, and a training step (forward, loss, backward, optimizer update) is one
compiled static program updating the parameters in place (`compiled_step.py`).
In static-graph mode (`paddle.enable_static()`, `inputs` required) each of
train/eval/test is one static program built from the InputSpecs (the network's
parameters are shared by name) and run by an Executor.
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from pullback.dialects import pd
from pullback.frontend import core
from pullback.frontend.autograd import no_grad
from pullback.frontend.eager import Tensor, to_tensor
from pullback.frontend.hapi.callbacks import config_callbacks
from pullback.frontend.hapi import compiled_step
from pullback.frontend.hapi.compiled_step import CompiledTrainStep, NotCompilable
from pullback.frontend.input_spec import InputSpec
from pullback.frontend.io import DataLoader, Dataset
from pullback.frontend.jit.static_function import Dy2StaticError, StaticFunction
from pullback.frontend.metric import Metric
from pullback.frontend.nn_layers import Layer


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _to_tensors(xs: Sequence[Any]) -> list[Tensor]:
    return [x if isinstance(x, Tensor) else to_tensor(np.asarray(x)) for x in xs]


def _numpy(x: Any) -> np.ndarray:
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


class Model:
    """A Layer with its training setup (see the module docstring)."""

    def __init__(self, network: Layer, inputs: Any = None, labels: Any = None) -> None:
        self._input_info: list[tuple[list[int], Any]] | None = None
        self._amp_level = "O0"
        self._amp_custom_lists: dict[str, Any] = {}
        self._amp_configs: dict[str, Any] = {}
        self._scaler: Any = None
        if not isinstance(network, Layer):
            raise TypeError(f"Model: network must be a paddle.nn.Layer, got {type(network).__name__}")
        self.network = network
        self._static_mode = not core.in_dynamic_mode()
        self._inputs = self._specs(inputs, "inputs")
        self._labels = self._specs(labels, "labels")
        if self._static_mode and not self._inputs:
            raise TypeError("paddle.Model: 'inputs' (InputSpecs) must be given in static graph mode")
        self._programs: dict[str, Any] = {}
        self._optimizer: Any = None
        self._loss: Any = None
        self._metrics: list[Metric] = []
        self.stop_training = False
        self._static: StaticFunction | None = None
        # Compiled whole training steps by label signature (`compiled_step.py`);
        # None once one could not be built (the eager step runs instead).
        self._train_steps: dict[Any, CompiledTrainStep] | None = {}
        # Without `inputs`, Paddle takes the inputs to be `forward`'s named positional
        # arguments (`_verify_spec`): a batch's first that many fields go to the network.
        self._n_forward_args = self._forward_arity(network)
        if not self._static_mode and self._inputs and all(isinstance(s, InputSpec) for s in self._inputs):
            forward = type(network).forward
            if not isinstance(network.__dict__.get("forward"), StaticFunction):
                fn = forward._function if isinstance(forward, StaticFunction) else forward
                self._static = StaticFunction(fn, list(self._inputs), network)

    @staticmethod
    def _forward_arity(network: Layer) -> int | None:
        forward = getattr(network, "forward", None)
        if isinstance(forward, StaticFunction):
            forward = getattr(forward, "_function", None)
        try:
            spec = inspect.getfullargspec(forward)  # type: ignore[arg-type]
        except TypeError:
            return None
        args = [a for a in spec.args if a != "self"]
        return len(args) if args and spec.varargs is None else None

    def _n_inputs(self, n_fields: int) -> int:
        """How many of a batch's `n_fields` are inputs (the rest are labels)."""
        if self._inputs:
            return len(self._inputs)
        if self._n_forward_args is not None:
            return min(self._n_forward_args, n_fields)
        if self._loss is not None or self._labels:
            return n_fields - len(self._labels or [1])
        return n_fields

    @staticmethod
    def _specs(specs: Any, what: str) -> list[Any]:
        if specs is None:
            return []
        if isinstance(specs, dict):
            specs = list(specs.values())
        out = _as_list(specs)
        for i, s in enumerate(out):
            if not isinstance(s, (InputSpec, Tensor)):
                raise TypeError(f"Model: {what} must be paddle.static.InputSpec objects, got {type(s).__name__}")
            if isinstance(s, InputSpec) and s.name is None:
                # As Paddle (`_verify_spec`): the specs name the feeds.
                raise ValueError(f"paddle.Model: requires {what}[{i}].name != None, but received None with {s}")
        return out

    # -- setup ---------------------------------------------------------------------

    def prepare(self, optimizer: Any = None, loss: Any = None, metrics: Any = None,
                amp_configs: Any = None) -> None:
        """Set the optimizer, the loss (a Layer or function of outputs and labels)
        and the metrics (`paddle.metric.Metric`s)."""
        if loss is not None and not callable(loss):
            raise TypeError("'loss' must be sub classes of `paddle.nn.Layer` or any callable function.")
        self._optimizer = optimizer
        self._loss = loss
        self._programs = {}
        self._train_steps = {}
        self._set_amp(amp_configs)
        metrics = _as_list(metrics)
        for m in metrics:
            if not isinstance(m, Metric):
                raise TypeError(f"{type(m).__name__} is not sub class of Metric")
        self._metrics = metrics

    _AMP_KEYS = frozenset({"init_loss_scaling", "incr_ratio", "decr_ratio", "incr_every_n_steps",
                           "decr_every_n_nan_or_inf", "use_dynamic_loss_scaling", "use_fp16_guard"})

    def _set_amp(self, amp_configs: Any) -> None:
        """Paddle's `amp_configs` of `prepare`: a level ('O0', 'O1', 'O2') or a dict
        of the level (default 'O1'), the `auto_cast` custom lists and the
        `GradScaler` arguments.  In eager mode a training step runs the network
        under `auto_cast` and scales the loss with a `GradScaler` (`self._scaler`,
        saved to `.pdscaler`); a static Model trains in float32, as Paddle's does
        on a CPU."""
        self._amp_level = "O0"
        self._amp_custom_lists = {}
        self._amp_configs = {}
        self._scaler = None
        if not amp_configs:
            return
        if isinstance(amp_configs, str):
            if amp_configs not in ("O0", "O1", "O2"):
                raise ValueError("The level of amp_configs should be 'O0', 'O1' or 'O2'.")
            self._amp_level = amp_configs
            return
        level = amp_configs.get("level", "O1")
        if level not in ("O0", "O1", "O2"):
            raise ValueError("amp_configs['level'] should be 'O0', 'O1' or 'O2'.")
        self._amp_level = level
        keys = set(amp_configs) - {"level"}
        if not keys or level == "O0":
            return
        if "use_pure_fp16" in keys:
            raise ValueError("'use_pure_fp16' is an invalid parameter, the level of mixed precision training "
                             "only depends on 'O1' or 'O2'.")
        for name in ("custom_white_list", "custom_black_list", "custom_black_varnames"):
            if name in keys:
                self._amp_custom_lists[name] = amp_configs[name]
                keys.discard(name)
        unknown = keys - self._AMP_KEYS
        if unknown:
            raise ValueError("Except for 'level', the keys of 'amp_configs' must be accepted by mixed precision "
                             f"APIs, but {tuple(sorted(unknown))} could not be recognized.")
        if "use_fp16_guard" in keys:
            if not self._static_mode:
                raise ValueError("'use_fp16_guard' is supported in static graph mode only.")
            keys.discard("use_fp16_guard")
        self._amp_configs = {k: amp_configs[k] for k in keys}

    def _amp_guard(self) -> Any:
        from pullback.frontend.amp import auto_cast

        lists = {k: v for k, v in self._amp_custom_lists.items() if k != "custom_black_varnames"}
        return auto_cast(enable=self._amp_level != "O0", level=self._amp_level, **lists)

    def parameters(self, *args: Any, **kwargs: Any) -> list[Any]:
        """The network's parameters."""
        return self.network.parameters(*args, **kwargs)

    def _metric_names(self) -> list[str]:
        names: list[str] = []
        for m in self._metrics:
            n = m.name()
            names.extend(n if isinstance(n, (list, tuple)) else [n])
        return names

    # -- one batch -----------------------------------------------------------------

    def _forward(self, inputs: list[Tensor]) -> list[Tensor]:
        if not self._inputs and self._input_info is None:
            # As Paddle, a Model without `inputs` remembers its first batch's input
            # shapes and dtypes, for `save(training=False)`.
            self._input_info = [(list(t.shape), t.dtype) for t in inputs]
        if self._static is not None:
            try:
                outs = self._static(*inputs)
            except Dy2StaticError as e:
                warnings.warn(f"paddle.Model: running the network eagerly: {e}", stacklevel=3)
                self._static = None
                outs = self.network(*inputs)
        else:
            outs = self.network(*inputs)
        return _as_list(outs)

    def _split(self, data: Any) -> tuple[list[Any], list[Any]]:
        data = _as_list(data)
        n_in = max(1, min(self._n_inputs(len(data)), len(data)))
        return data[:n_in], data[n_in:]

    def _update_metrics(self, outs: list[Tensor], labels: list[Tensor]) -> list[Any]:
        results = []
        for m in self._metrics:
            r = m.compute(*outs, *labels)
            r = m.update(*[_numpy(x) for x in _as_list(r)])
            results.append(r)
        return results

    def _loss_of(self, outs: list[Tensor], labels: list[Tensor]) -> list[Tensor]:
        if self._loss is None:
            raise ValueError("paddle.Model: call prepare(loss=...) before training or evaluating")
        return _as_list(self._loss(*outs, *labels))

    def train_batch(self, inputs: Any, labels: Any = None, update: bool = True) -> Any:
        """One training step; returns `[loss]` (numpy), or `([loss], metrics)`."""
        if self._optimizer is None:
            raise ValueError("paddle.Model: call prepare(optimizer=...) before training")
        if self._static_mode:
            return self._static_batch("train", inputs, labels)
        self.network.train()
        ins, labs = _to_tensors(_as_list(inputs)), _to_tensors(_as_list(labels))
        step = self._train_step(labs) if update and self._amp_level == "O0" else None
        if step is not None and step.ready():
            loss_np, metric_values = step([t._data for t in ins + labs])
            results = [m.update(*values) for m, values in zip(self._metrics, metric_values)]
            return (loss_np, results) if self._metrics else loss_np
        if step is not None:
            # The eager step while the compiled one is not ready (compiling, or the
            # state needs the eager step): the network itself, not its to_static
            # forward, whose programs would compile now for nothing.
            outs = _as_list(self.network(*ins))
        elif self._amp_level != "O0":
            from pullback.frontend.amp import GradScaler

            if self._scaler is None:
                self._scaler = GradScaler(**self._amp_configs)
            with self._amp_guard():
                if self._input_info is None and not self._inputs:
                    self._input_info = [(list(t.shape), t.dtype) for t in ins]
                outs = _as_list(self.network(*ins))
        else:
            outs = self._forward(ins)
        losses = self._loss_of(outs, labs)
        total: Any = losses[0]
        for extra in losses[1:]:
            total = total + extra
        if self._scaler is not None and self._amp_level != "O0":
            scaled = self._scaler.scale(total)
            scaled.backward()
            if update:
                self._scaler.minimize(self._optimizer, scaled)
                self._optimizer.clear_grad()
        else:
            total.backward()
            if update:
                self._optimizer.step()
                self._optimizer.clear_grad()
        metrics = self._update_metrics(outs, labs)
        loss_np = [_numpy(x) for x in losses]
        return (loss_np, metrics) if self._metrics else loss_np

    def _train_step(self, labels: list[Tensor]) -> CompiledTrainStep | None:
        """The compiled whole training step for these labels' signature (built on
        first use), or None when the step runs eagerly: without InputSpecs (the
        network is then only ever run eagerly, as Paddle's dynamic Model does),
        after the forward fell back to eager, or when the step cannot be one
        static program (warned once, naming why)."""
        if self._train_steps is None or self._static is None or self._loss is None \
                or not compiled_step.ENABLED:
            return None
        key = tuple((tuple(t.shape[1:]), str(t.dtype)) for t in labels)
        step = self._train_steps.get(key)
        if step is not None:
            if step.error is not None:
                warnings.warn(f"paddle.Model: the training step runs eagerly: {step.error}", stacklevel=4)
                self._train_steps = None
                return None
            return step
        if self._labels and len(self._labels) == len(labels) and all(isinstance(s, InputSpec) for s in self._labels):
            label_specs = list(self._labels)
        else:
            label_specs = [InputSpec([None, *t.shape[1:]], t.dtype, f"label_{i}") for i, t in enumerate(labels)]
        try:
            step = CompiledTrainStep(self.network, self._loss, self._metrics, self._optimizer,
                                     [*self._inputs, *label_specs], len(self._inputs))
        except Exception as e:  # noqa: BLE001 - any failure to trace: the eager step runs (and re-raises a user error)
            why = str(e) if isinstance(e, (NotCompilable, Dy2StaticError)) else f"{type(e).__name__}: {e}"
            warnings.warn(f"paddle.Model: the training step runs eagerly: {why}", stacklevel=4)
            self._train_steps = None
            return None
        self._train_steps[key] = step
        return step

    def eval_batch(self, inputs: Any, labels: Any = None) -> Any:
        """One evaluation step (no gradients); returns like `train_batch`."""
        if self._static_mode:
            return self._static_batch("eval", inputs, labels)
        self.network.eval()
        with no_grad():
            ins, labs = _to_tensors(_as_list(inputs)), _to_tensors(_as_list(labels))
            outs = self._forward(ins)
            losses = self._loss_of(outs, labs) if self._loss is not None else []
            metrics = self._update_metrics(outs, labs)
        loss_np = [_numpy(x) for x in losses]
        return (loss_np, metrics) if self._metrics else loss_np

    def predict_batch(self, inputs: Any) -> list[np.ndarray]:
        """The network's outputs for one batch, as numpy arrays."""
        if self._static_mode:
            return self._static_batch("test", inputs, None)
        self.network.eval()
        with no_grad():
            outs = self._forward(_to_tensors(_as_list(inputs)))
        return [_numpy(o) for o in outs]

    # -- static graph mode -----------------------------------------------------------

    def _static_program(self, mode: str) -> tuple[Any, list[str], list[Any], list[Any], list[Any]]:
        """The program of `mode` ('train', 'eval', 'test'), built once: feeds from
        the InputSpecs, the network's outputs, the losses, the metrics' `compute`
        outputs, and for 'train' the optimizer's update (`minimize`)."""
        hit = self._programs.get(mode)
        if hit is not None:
            return hit
        from pullback.frontend.framework import Program, default_startup_program, program_guard
        from pullback.frontend.layers import data
        from pullback.runtime.executor import CPUPlace, Executor
        from pullback.runtime.scope import global_scope

        main, startup = Program(), Program()
        specs = list(self._inputs) + (list(self._labels) if mode != "test" else [])
        names = [s.name or f"{'input' if i < len(self._inputs) else 'label'}_{i}" for i, s in enumerate(specs)]
        with program_guard(main, startup):
            feeds = [data(n, [d if d >= 0 else None for d in s.shape], s.dtype)
                     for n, s in zip(names, specs)]
            ins, labs = feeds[: len(self._inputs)], feeds[len(self._inputs):]
            if mode == "train":
                self.network.train()
            else:
                self.network.eval()
            outs = _as_list(self.network(*ins))
            losses = _as_list(self._loss(*outs, *labs)) if mode != "test" and self._loss is not None else []
            metrics = [_as_list(m.compute(*outs, *labs)) for m in self._metrics] if mode != "test" else []
            if mode == "train":
                total = losses[0]
                for extra in losses[1:]:
                    total = total + extra
                self._optimizer.minimize(total)
        exe = self._executor = getattr(self, "_executor", None) or Executor(CPUPlace())
        scope = global_scope()
        params = [op.var_name.data for op in main.module.body.block.ops if isinstance(op, pd.ParameterOp)]
        if any(n not in scope for n in params):
            exe.run(default_startup_program())
        exe.run(startup)
        if mode != "train":
            main = main.clone(for_test=True)
        entry = (main, names, outs, losses, metrics)
        self._programs[mode] = entry
        return entry

    def _static_batch(self, mode: str, inputs: Any, labels: Any) -> Any:
        main, names, outs, losses, metrics = self._static_program(mode)
        values = [_numpy(x) for x in _as_list(inputs) + (_as_list(labels) if mode != "test" else [])]
        feed = dict(zip(names, values))
        flat_metrics = [v for group in metrics for v in group]
        fetch = (outs if mode == "test" else []) + losses + flat_metrics
        got = self._executor.run(main, feed=feed, fetch_list=fetch)
        if mode == "test":
            return got[: len(outs)]
        loss_np = got[: len(losses)]
        rest = got[len(losses):]
        results = []
        for m, group in zip(self._metrics, metrics):
            results.append(m.update(*rest[: len(group)]))
            rest = rest[len(group):]
        return (loss_np, results) if self._metrics else loss_np

    # -- loops ---------------------------------------------------------------------

    @staticmethod
    def _loader(data: Any, batch_size: int, shuffle: bool, drop_last: bool, num_workers: int) -> Any:
        if data is None:
            return None
        if isinstance(data, Dataset):
            return DataLoader(data, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                              num_workers=num_workers)
        return data

    @staticmethod
    def _steps(loader: Any) -> int | None:
        try:
            return len(loader)
        except TypeError:
            return None

    def _logs(self, losses: list[np.ndarray], batch_size: int) -> dict[str, Any]:
        logs: dict[str, Any] = {}
        if losses:
            logs["loss"] = [float(np.asarray(x).ravel()[0]) for x in losses]
        for m in self._metrics:
            names, values = m.name(), m.accumulate()
            names = names if isinstance(names, (list, tuple)) else [names]
            values = values if isinstance(values, (list, tuple)) else [values]
            for n, v in zip(names, values):
                logs[n] = v
        logs["batch_size"] = batch_size
        return logs

    def fit(self, train_data: Any = None, eval_data: Any = None, batch_size: int = 1, epochs: int = 1,
            eval_freq: int = 1, log_freq: int = 10, save_dir: str | None = None, save_freq: int = 1,
            verbose: int = 2, drop_last: bool = False, shuffle: bool = True, num_workers: int = 0,
            callbacks: Any = None, accumulate_grad_batches: int = 1, num_iters: int | None = None) -> None:
        """Train for `epochs` over `train_data` (a Dataset or DataLoader),
        evaluating on `eval_data` every `eval_freq` epochs and saving to
        `save_dir` every `save_freq` epochs."""
        if train_data is None:
            raise AssertionError("train_data must be given!")
        loader = self._loader(train_data, batch_size, shuffle, drop_last, num_workers)
        eval_loader = self._loader(eval_data, batch_size, False, False, num_workers)
        steps = self._steps(loader)
        cbks = config_callbacks(
            _as_list(callbacks) + self._checkpoint(save_dir, save_freq), self,
            params={"batch_size": batch_size, "epochs": epochs, "steps": steps, "verbose": verbose,
                    "metrics": self._metric_names(), "save_dir": save_dir},
            log_freq=log_freq, verbose=verbose)
        self.stop_training = False
        cbks.on_begin("train")
        it = 0
        for epoch in range(epochs):
            cbks.on_epoch_begin(epoch)
            for m in self._metrics:
                m.reset()
            logs: dict[str, Any] = {}
            for step, data in enumerate(loader):
                cbks.on_batch_begin("train", step, logs)
                ins, labs = self._split(data)
                update = (step + 1) % accumulate_grad_batches == 0 or step + 1 == steps
                res = self.train_batch(ins, labs, update=update)
                losses = res[0] if self._metrics else res
                logs = self._logs(losses, int(_as_list(ins)[0].shape[0]))
                cbks.on_batch_end("train", step, logs)
                it += 1
                if num_iters is not None and it >= num_iters:
                    self.stop_training = True
                    break
            cbks.on_epoch_end(epoch, logs)
            if eval_loader is not None and (epoch + 1) % eval_freq == 0:
                self._run_eval(eval_loader, cbks)
            if self.stop_training:
                break
        cbks.on_end("train", {})

    @staticmethod
    def _checkpoint(save_dir: str | None, save_freq: int) -> list[Any]:
        from pullback.frontend.hapi.callbacks import ModelCheckpoint

        return [ModelCheckpoint(save_freq, save_dir)] if save_dir else []

    def _run_eval(self, loader: Any, cbks: Any) -> dict[str, Any]:
        for m in self._metrics:
            m.reset()
        cbks.on_begin("eval", {"steps": self._steps(loader), "metrics": self._metric_names()})
        losses_all: list[list[float]] = []
        samples = 0
        logs: dict[str, Any] = {}
        for step, data in enumerate(loader):
            cbks.on_batch_begin("eval", step, logs)
            ins, labs = self._split(data)
            res = self.eval_batch(ins, labs)
            losses = res[0] if self._metrics else res
            n = int(_as_list(ins)[0].shape[0])
            samples += n
            logs = self._logs(losses, n)
            if losses:
                losses_all.append([float(np.asarray(x).ravel()[0]) for x in losses])
            cbks.on_batch_end("eval", step, logs)
        result = self._logs([], samples)
        result.pop("batch_size")
        if losses_all:
            # Paddle reports the last batch's loss (its logs keep the latest value), not
            # the mean over batches; the metrics are accumulated over all of them.
            result = {"loss": losses_all[-1], **result}
        cbks.on_end("eval", {**result, "samples": samples})
        return result

    def evaluate(self, eval_data: Any, batch_size: int = 1, log_freq: int = 10, verbose: int = 2,
                 num_workers: int = 0, callbacks: Any = None, num_iters: int | None = None) -> dict[str, Any]:
        """Evaluate on `eval_data`; returns `{'loss': [last batch's loss], <metric>:
        accumulated value}` (Paddle's convention)."""
        loader = self._loader(eval_data, batch_size, False, False, num_workers)
        cbks = config_callbacks(_as_list(callbacks), self,
                                params={"batch_size": batch_size, "verbose": verbose,
                                        "metrics": self._metric_names()}, log_freq=log_freq, verbose=verbose)
        return self._run_eval(loader, cbks)

    def predict(self, test_data: Any, batch_size: int = 1, num_workers: int = 0, stack_outputs: bool = False,
                verbose: int = 1, callbacks: Any = None) -> list[Any]:
        """The network's outputs over `test_data`: per output, the list of batch
        arrays (or one array, `stack_outputs=True`)."""
        loader = self._loader(test_data, batch_size, False, False, num_workers)
        cbks = config_callbacks(_as_list(callbacks), self, params={"batch_size": batch_size, "verbose": verbose},
                                log_freq=10, verbose=verbose)
        cbks.on_begin("predict", {})
        outputs: list[list[np.ndarray]] = []
        samples = 0
        for step, data in enumerate(loader):
            cbks.on_batch_begin("predict", step, {})
            ins = _as_list(data)
            outs = self.predict_batch(ins[:max(1, self._n_inputs(len(ins)))])
            samples += int(outs[0].shape[0]) if outs and outs[0].ndim else 1
            if not outputs:
                outputs = [[] for _ in outs]
            for acc, o in zip(outputs, outs):
                acc.append(o)
            cbks.on_batch_end("predict", step, {"batch_size": batch_size})
        cbks.on_end("predict", {"samples": samples})
        if stack_outputs:
            return [np.concatenate(o, axis=0) for o in outputs]
        return outputs

    # -- saving --------------------------------------------------------------------

    def save(self, path: str, training: bool = True) -> None:
        """`training=True`: the parameters to `path.pdparams` and the optimizer
        state (if it has any) to `path.pdopt`; False: an inference model (`paddle.jit.save` with
        the Model's `inputs`)."""
        from pullback.frontend.jit.save_load import save as jit_save
        from pullback.frontend.serialization import save as paddle_save

        if training and self._static_mode:
            from pullback.frontend.serialization import _scope_value, static_save
            from pullback.runtime.scope import global_scope

            static_save(self._static_program("train" if self._optimizer is not None else "test")[0], path)
            # As Paddle's static adapter, the parameters are keyed by their structured
            # names (`network.state_dict()`), so an eager Model loads them (and back).
            scope = global_scope()
            params = {k: _scope_value(scope, v.name, "paddle.Model.save")
                      for k, v in self.network.state_dict().items()}
            paddle_save(params, path + ".pdparams")
            return
        if training:
            directory = os.path.dirname(path)
            if directory:
                os.makedirs(directory, exist_ok=True)
            paddle_save(self.network.state_dict(), path + ".pdparams")
            state = self._optimizer.state_dict() if self._optimizer is not None else None
            if state:  # as Paddle: no .pdopt for a stateless optimizer (plain SGD)
                paddle_save(state, path + ".pdopt")
            if self._scaler is not None and self._scaler.state_dict():
                paddle_save(self._scaler.state_dict(), path + ".pdscaler")
            return
        if os.path.basename(path) == "":
            raise ValueError(f"paddle.Model.save: path should be of 'dirname/filename' format, got {path!r}")
        if self._static_mode:
            from pullback.frontend.serialization import save_inference_model

            main, names, outs, _, _ = self._static_program("test")
            block = main.global_block()
            feeds = [block.var(n) for n in names[: len(self._inputs)]]
            save_inference_model(path, feeds, outs, self._executor, program=main)
            return
        specs = list(self._inputs)
        if not specs:
            info = self._input_info
            if info is None:
                raise RuntimeError(
                    "paddle.Model.save(training=False): 'inputs' (InputSpecs) must be given to the Model, "
                    "or the Model must have run a batch (fit / *_batch) in dynamic mode"
                )
            specs = [InputSpec([None, *shape[1:]], dtype, f"x{i}") for i, (shape, dtype) in enumerate(info)]
        jit_save(self.network, path, input_spec=specs)

    def load(self, path: str, skip_mismatch: bool = False, reset_optimizer: bool = False) -> None:
        """Load what `save(path)` wrote (the optimizer state too, unless
        `reset_optimizer` or there is no `.pdopt`)."""
        from pullback.frontend.serialization import load as paddle_load

        params = path if path.endswith(".pdparams") else path + ".pdparams"
        if not os.path.exists(params):
            raise ValueError(f"paddle.Model.load: there is no '{params}'")
        if self._static_mode:
            from pullback.frontend.serialization import set_program_state

            program = self._static_program("train" if self._optimizer is not None else "test")[0]
            saved = paddle_load(params)
            # Keys are structured names (Paddle's, and an eager Model's) or, from
            # `paddle.static.save`, variable names.
            state = {}
            for k, v in self.network.state_dict().items():
                value = saved.get(k, saved.get(v.name))
                if value is None:
                    if skip_mismatch:
                        continue
                    raise ValueError(f"paddle.Model.load: '{k}' ({v.name}) is not in '{params}'")
                if skip_mismatch and list(np.shape(value)) != list(v.shape):
                    continue
                state[v.name] = value
            set_program_state(program, state)
            opt_path = params[: -len(".pdparams")] + ".pdopt"
            if self._optimizer is not None and not reset_optimizer and os.path.exists(opt_path):
                opt_state = paddle_load(opt_path)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    set_program_state(program, opt_state)
            return
        state = paddle_load(params)
        if skip_mismatch:
            own = self.network.state_dict()
            state = {k: v for k, v in state.items() if k in own and list(np.shape(v)) == list(own[k].shape)}
        own = self.network.state_dict()
        # Accumulators are named after parameter names, which differ between the
        # saving and the loading network: map them through the structured names.
        renames = {
            getattr(v, "name", None): own[k].name for k, v in state.items()
            if k in own and getattr(v, "name", None) and getattr(own[k], "name", None)
        }
        self.network.set_state_dict(state)
        scaler_path = params[: -len(".pdparams")] + ".pdscaler"
        if self._scaler is not None and os.path.exists(scaler_path):
            self._scaler.load_state_dict(paddle_load(scaler_path))
        opt_path = params[: -len(".pdparams")] + ".pdopt"
        if self._optimizer is not None and not reset_optimizer and os.path.exists(opt_path):
            opt_state = paddle_load(opt_path)
            olds = sorted((n for n in renames if n), key=len, reverse=True)
            converted: dict[str, Any] = {}
            for key, value in opt_state.items():
                for old in olds:
                    if isinstance(key, str) and key.startswith(old + "_"):
                        key = renames[old] + key[len(old):]
                        break
                converted[key] = value
            self._optimizer.set_state_dict(converted)

    def summary(self, input_size: Any = None, dtype: Any = None) -> dict[str, int]:
        """`paddle.summary` of the network (input sizes default to the Model's inputs)."""
        from pullback.frontend.summary import summary

        if input_size is None and self._inputs:
            input_size = [tuple(s.shape) for s in self._inputs]
            input_size = input_size[0] if len(input_size) == 1 else input_size
        if input_size is None:
            raise ValueError("paddle.Model.summary: input_size is required when the Model has no inputs")
        return summary(self.network, input_size, dtypes=dtype)


__all__ = ["Model"]
