"""A dynamic `paddle.Model`'s training step as one compiled static program.

`Model.train_batch` in dynamic mode runs the network, the loss, `backward()` and
`optimizer.step()` eagerly: even with the forward traced (`to_static`) that is a
forward program, a gradient program and the optimizer's updates, three native
calls and the eager bookkeeping between them on every batch.  The static
Model runs the same step as one program whose updates write the parameters in
place.  `CompiledTrainStep` gives the dynamic Model that program:

- **trace** (once per feed signature): the network, the loss and the metrics'
  `compute` run in static mode on `paddle.static.data` feeds (the InputSpecs' shapes,
  so one program serves every batch size), each eager Tensor an op reads
  becoming a `pd.parameter` named after it (`jit.static_function`'s capture), then
  the optimizer's own static `minimize` appends the backward and the updates.  The
  optimizer's accumulators are made eagerly first, so the updates read and write
  the very Tensors `optimizer.state_dict()` holds;
- **run** (every batch): an `Executor` over a private scope whose entries *are* the
  eager Tensors' arrays, so the compiled updates land in the parameters,
  accumulators and running statistics in place.  An array something else still
  holds (a recorded graph, a user's `np.asarray(param)`) is copied first and the
  Tensor given the copy: eager writes never change an array others can see, and
  this keeps that promise.

It serves only the plain case and says so (`unsupported`): the eager step runs
instead under `paddle.amp`, gradient accumulation (`update=False`), parameter
groups, gradient hooks, a parameter outside the optimizer's list that gets a
gradient, or gradients already accumulated on a parameter.  After a compiled step
the parameters' gradients are zeros, as the eager step's `clear_grad()` leaves them.
The program compiles on a thread of its own while the first steps run eagerly.

Cost: tracing is linear in the network's size (one pass of the forward, one
`append_backward`); a step costs the program plus a constant per state Tensor.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pullback.dialects import pd
from pullback.frontend.autograd.api import has_post_backward_hooks
from pullback.frontend.eager import Tensor, is_zero_gradient, zero_gradient
from pullback.frontend.framework import Program, Variable
from pullback.frontend.input_spec import InputSpec
from pullback.frontend.jit.static_function import Capture, static_trace
from pullback.runtime.native.env import flag_setting

# `PULLBACK_MODEL_STEP=0`: a dynamic Model's training steps always run eagerly.
ENABLED = flag_setting("PULLBACK_MODEL_STEP", True)

_compiling: set[threading.Thread] = set()
"""Compiles in flight.  Their threads are not daemons: the interpreter joins them
before it exits (a thread stopped inside LLVM as the interpreter tears down can
crash the process, and one joined later, in an `atexit` hook, leaves engines that
teardown closes after llvmlite is gone: `Exception ignored in ObjectRef.__del__`)."""


def wait(timeout: float | None = None) -> bool:
    """Block until every Model step's compile in flight is done (tests,
    benchmarks); False on timeout."""
    for t in list(_compiling):
        t.join(timeout)
    return not _compiling

# Parameter attributes the optimizer's static update reads from a parameter
# variable (its learning-rate multiplier, regularizer, clipping choice).
_PARAM_ATTRS = ("optimize_attr", "regularizer", "need_clip", "do_model_average")


class NotCompilable(Exception):
    """This Model's step cannot be one static program (the message says why)."""


def unsupported(optimizer: Any, params: Sequence[Tensor]) -> str | None:
    """Why `optimizer`'s eager step over `params` cannot be compiled, or None."""
    if getattr(optimizer, "_pending_groups", None) is not None:
        return "the optimizer has parameter groups"
    if getattr(optimizer, "_multi_precision", False):
        return "the optimizer keeps master weights (paddle.amp.decorate)"
    if optimizer._get_auxiliary_var("found_inf") is not None:
        return "the optimizer has a 'found_inf' flag"
    return None


def _eager_only(params: Sequence[Tensor]) -> str | None:
    """Why this step must run eagerly although the program exists: gradient hooks
    on a parameter, or post-backward hooks (`paddle.DataParallel`'s all-reduce),
    which the compiled step would not call."""
    if has_post_backward_hooks():
        return "post-backward hooks are registered (paddle.DataParallel)"
    for p in params:
        if p.__dict__.get("_grad_hooks"):
            return f"parameter '{p.name}' has gradient hooks"
    return None


def _exclusive(t: Tensor, held_by_scope: bool) -> np.ndarray:
    """`t`'s array, made one that nothing but `t` (and the step's scope) holds, in
    C order and writable: the compiled updates overwrite it in place."""
    arr = t._data
    # References: `t`, the local `arr`, getrefcount's argument, and the scope's.
    others = sys.getrefcount(arr) - 3 - (1 if held_by_scope else 0)
    if others > 0 or not (arr.flags.c_contiguous and arr.flags.writeable and arr.flags.aligned):
        arr = np.array(arr, copy=True, order="C")
        t._data = arr
    return arr


class CompiledTrainStep:
    """One dynamic Model's training step for one feed signature (module doc)."""

    def __init__(self, network: Any, loss_fn: Callable[..., Any], metrics: Sequence[Any], optimizer: Any,
                 specs: Sequence[InputSpec], n_inputs: int) -> None:
        """Trace the step.  `specs`: a shape and dtype per feed (inputs first, then
        labels; `None`/-1 dimensions dynamic).  NotCompilable when the optimizer's
        step or the network cannot be one static program."""
        from pullback.frontend.layers import data
        from pullback.runtime.executor import CPUPlace, Executor
        from pullback.runtime.scope import Scope

        params = list(optimizer._eager_params("step"))
        why = unsupported(optimizer, params)
        if why is not None:
            raise NotCompilable(why)
        # The accumulators exist before the trace, as eager Tensors: the static
        # updates then read and write them (captured by name) instead of making
        # static state of their own.
        for p in params:
            if not p.stop_gradient:
                optimizer._create_accumulators(p)
        main, startup = Program(), Program()
        capture = Capture(main)
        self.feed_names = [s.name or f"feed_{i}" for i, s in enumerate(specs)]
        with static_trace(main, startup, capture, "paddle.Model.train_batch"):
            feeds = [data(n, [d if d is not None and d >= 0 else None for d in s.shape], s.dtype)
                     for n, s in zip(self.feed_names, specs)]
            ins, labs = feeds[:n_inputs], feeds[n_inputs:]
            outs = _as_list(network(*ins))
            outs = [capture(o) for o in outs]
            losses = _as_list(loss_fn(*outs, *labs))
            self.metric_groups = [_as_list(m.compute(*outs, *labs)) for m in metrics]
            by_id = capture.by_id
            trainable = {id(t) for t in capture.tensors if not t.stop_gradient}
            in_optimizer = {id(p) for p in params}
            stray = [t.name for t in capture.tensors if id(t) in trainable - in_optimizer]
            if stray:
                raise NotCompilable(f"parameter(s) {', '.join(stray[:3])} get gradients but are not the optimizer's")
            for p in params:
                var = by_id.get(id(p))
                if var is not None:
                    for attr in _PARAM_ATTRS:
                        if hasattr(p, attr):
                            setattr(var, attr, getattr(p, attr))
            total = losses[0]
            for extra in losses[1:]:
                total = total + extra
            # The parameters the step differentiates (each has a gradient after it).
            self._wrt = [p for p in params if id(p) in by_id and not p.stop_gradient]
            optimizer.minimize(total, startup_program=startup, parameters=[by_id[id(p)] for p in self._wrt])
        self.program = main
        self.losses: list[Variable] = losses
        self._fetch = [*losses, *(v for group in self.metric_groups for v in group)]
        self._lr_var = optimizer._lr_vars.get(main)
        names = list(capture.names)
        if len(set(names)) != len(names) or any(t.name != n for n, t in zip(names, capture.tensors)
                                                if not n.startswith("_jst.seed_")):
            # Updates name their results after the state they write: two Tensors
            # of one name would be ambiguous.
            raise NotCompilable("two Tensors the step reads share a name")
        created = [op.var_name.data for op in main.module.body.block.ops
                   if isinstance(op, pd.ParameterOp) and op.var_name.data not in names
                   and (self._lr_var is None or op.var_name.data != self._lr_var.name)]
        if created:
            raise NotCompilable(f"the step creates state while it runs ({', '.join(created[:3])})")
        self._seed_names = [capture.names[i] for i in capture.seeds]
        # The eager state the step reads and writes (the seeds' placeholders aside).
        self._state = [(n, t) for n, t in zip(capture.names, capture.tensors) if n not in self._seed_names]
        self._params = params
        self._optimizer = optimizer
        self._scope = Scope()
        self._executor = Executor(CPUPlace())
        self._zero_grads: dict[int, np.ndarray] = {}
        self._frozen = [(p, p.stop_gradient) for p in params]
        # Native code is compiled on a thread of its own: the eager step runs
        # meanwhile, so a cold compile (seconds for a CNN) stalls no training loop.
        self.error: str | None = None
        self._thread: threading.Thread | None = None
        from pullback.runtime.native.backend import CompiledBackend

        if isinstance(self._executor.backend, CompiledBackend):
            sample = {n: np.zeros([1 if d is None or d < 0 else d for d in v.shape], np.dtype(f"{v.dtype}"))
                      for n, v in zip(self.feed_names, feeds)}
            self._thread = threading.Thread(target=self._compile, args=(sample,), name="pullback-model-step")
            _compiling.add(self._thread)
            self._thread.start()

    def _compile(self, sample: dict[str, np.ndarray]) -> None:
        """Compile the step's program (on its own thread); a failure, or a program
        that would run on the interpreter, is kept in `error`."""
        try:
            if not self._executor.compile(self.program, sample, self._fetch):
                self.error = "its program does not compile to native code"
        except Exception as e:  # noqa: BLE001 - reported by the Model, on its thread
            self.error = f"{type(e).__name__}: {e}"
        finally:
            _compiling.discard(threading.current_thread())

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the step's native code is compiled (tests, benchmarks);
        False on timeout."""
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def ready(self) -> bool:
        """True when the eager state allows the compiled step now: the parameters
        it differentiates are still the trainable ones, no hooks want the
        gradients, and no parameter carries an accumulated gradient (a gradient
        is None, or zeros as the last step or `clear_grad()` left it)."""
        if self._thread is not None and self._thread.is_alive():
            return False
        if _eager_only(self._params) is not None:
            return False
        if any(p.stop_gradient != frozen for p, frozen in self._frozen):
            return False
        for p in self._params:
            g = p._grad
            if g is None:
                continue
            arr = g._data
            if is_zero_gradient(arr) or self._zero_grads.get(id(p)) is arr:
                continue
            if arr.any():
                return False
            self._zero_grads[id(p)] = arr
        return True

    def __call__(self, values: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
        """Run one step on the feeds `values`; the losses and each metric's
        `compute` results, as numpy arrays."""
        from pullback.frontend.random import default_generator

        scope = self._scope
        for name in self._seed_names:
            scope[name] = np.array(default_generator().next_seed(), np.int64)
        for name, t in self._state:
            scope[name] = _exclusive(t, name in scope and scope.raw(name) is t._arr)
        if self._lr_var is not None:
            scope[self._lr_var.name] = np.full([1], self._optimizer.get_lr(), np.dtype(f"{self._lr_var.dtype}"))
        got = self._executor.run(self.program, feed=dict(zip(self.feed_names, values)),
                                 fetch_list=self._fetch, scope=scope)
        for name, t in self._state:
            new = scope[name]
            if new is not t._arr:
                t._data = new  # the interpreter (or a copy-in) wrote a new array
        for p in self._wrt:
            if p._grad is None:
                p._grad = Tensor._new(zero_gradient(p._arr.shape, p._arr.dtype), None, 0, False)
        n = len(self.losses)
        metrics: list[list[np.ndarray]] = []
        rest = got[n:]
        for group in self.metric_groups:
            metrics.append(rest[: len(group)])
            rest = rest[len(group):]
        return got[:n], metrics


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


__all__ = ["CompiledTrainStep", "NotCompilable", "unsupported", "wait"]
