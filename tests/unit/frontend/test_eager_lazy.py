"""Deferred eager ops (`frontend/eager_lazy.py`): a training step traced and flushed
gives the per-op path's results -- bitwise when the flush runs op by op, to float32
rounding when it runs as one compiled program -- through reads mid-step, structure
changes, hooks, PyLayer, retain_grads, in-place ops and `no_grad`; errors in a
deferred op name the op and the user line; metadata never runs anything."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import pullback as paddle
import pullback.nn.functional as F
from pullback.dialects import pd
from pullback.dialects.bfloat16 import bf16_to_f32
from pullback.frontend import eager, eager_lazy, eager_native
from pullback.frontend.autograd import plan_cache
from pullback.frontend.eager import Template, Tensor, eager_apply, to_tensor
from pullback.testing import fuzz
from pullback.testing.fuzz.case import cast_input, resolve


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    """Each test sets deferral itself; the suite's setting comes back after."""
    old = eager_lazy.enabled()
    yield
    eager_lazy.set_enabled(old)


@pytest.fixture
def native(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every region compiled from its first use and kept (no cost threshold, one
    probe, no calibration), on fresh template, plan and trace caches."""
    monkeypatch.setattr(eager_native, "MIN_US", 0.0)
    monkeypatch.setattr(eager_native, "PROBES", 1)
    monkeypatch.setattr(eager_native, "CALIBRATE", False)
    monkeypatch.setattr(eager, "_TEMPLATES", {})
    monkeypatch.setattr(plan_cache, "_PLANS", {})
    monkeypatch.setattr(eager_lazy, "_REGIONS", type(eager_lazy._REGIONS)())
    old = eager_native.set_enabled(True)
    yield
    eager_native.wait(120)
    eager_native.set_enabled(old)


def _lazy(flag: bool, fn: Callable[[], Any]) -> Any:
    """`fn()` with deferral on or off."""
    eager_lazy.set_enabled(flag)
    try:
        return fn()
    finally:
        eager_lazy.flush()


# ------------------------------------------------------------------- models


def _mlp() -> paddle.nn.Layer:
    return paddle.nn.Sequential(paddle.nn.Linear(8, 16), paddle.nn.ReLU(), paddle.nn.Linear(16, 3))


def _lenet() -> paddle.nn.Layer:
    return paddle.nn.Sequential(
        paddle.nn.Conv2D(1, 4, 3), paddle.nn.ReLU(), paddle.nn.MaxPool2D(2, 2),
        paddle.nn.Conv2D(4, 6, 3, padding=1), paddle.nn.ReLU(), paddle.nn.AvgPool2D(2, 2),
        paddle.nn.Flatten(), paddle.nn.Linear(6 * 2 * 2, 10), paddle.nn.ReLU(), paddle.nn.Linear(10, 3),
    )


class _Rnn(paddle.nn.Layer):
    """An LSTM-like cell unrolled over the time steps in Python."""

    def __init__(self) -> None:
        super().__init__()
        self.wx = self.create_parameter([8, 12])
        self.wh = self.create_parameter([12, 12])
        self.gate = self.create_parameter([12, 12])
        self.out = paddle.nn.Linear(12, 3)

    def forward(self, x: Tensor) -> Tensor:
        h = paddle.zeros([x.shape[0], 12])
        for t in range(x.shape[1]):
            cand = paddle.tanh(paddle.matmul(x[:, t, :], self.wx) + paddle.matmul(h, self.wh))
            keep = F.sigmoid(paddle.matmul(h, self.gate))
            h = keep * h + (1 - keep) * cand
        return self.out(h)


def _data(model: str, batch: int, seed: int) -> tuple[Tensor, Tensor]:
    rng = np.random.default_rng(seed)
    shape = {"mlp": (batch, 8), "lenet": (batch, 1, 12, 12), "rnn": (batch, 4, 8)}[model]
    x = to_tensor(rng.standard_normal(shape).astype(np.float32))
    return x, to_tensor(rng.integers(0, 3, (batch,)).astype(np.int64))


def _train(
    model: str, opt: str, steps: int, read: Callable[[int], bool] = lambda i: False,
    batch: Callable[[int], int] = lambda i: 5, each: Callable[[int], None] = lambda i: None,
) -> tuple[list[np.ndarray], list[float]]:
    """`steps` training steps from a fixed start; `read(i)` reads the loss before
    the backward of step i (a flush mid-step), `batch(i)` its batch size, `each(i)`
    runs after it.  Returns the parameters and the losses."""
    paddle.seed(3)
    net = {"mlp": _mlp, "lenet": _lenet, "rnn": _Rnn}[model]()
    o = getattr(paddle.optimizer, opt)(learning_rate=0.05, parameters=net.parameters())
    losses: list[Any] = []
    for i in range(steps):
        x, label = _data(model, batch(i), i)
        loss = F.cross_entropy(net(x), label)
        if read(i):
            losses.append(float(loss.numpy()))
        else:
            losses.append(loss)
        loss.backward()
        o.step()
        o.clear_grad()
        eager_native.wait(120)  # each step's compiles land before the next
        each(i)
    return [p.numpy() for p in net.parameters()], [float(v) for v in losses]


def _same(a: tuple[list[np.ndarray], list[float]], b: tuple[list[np.ndarray], list[float]]) -> None:
    for x, y in zip(a[0], b[0]):
        np.testing.assert_array_equal(x, y)
    assert a[1] == b[1]


def _close(a: tuple[list[np.ndarray], list[float]], b: tuple[list[np.ndarray], list[float]]) -> None:
    for x, y in zip(a[0], b[0]):
        np.testing.assert_allclose(x, y, rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(a[1], b[1], rtol=2e-4, atol=1e-5)


# -------------------------------------------------------- same results, per op


@pytest.mark.parametrize("model", ["mlp", "lenet", "rnn"])
@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_training_steps_equal_the_per_op_path_bitwise(model: str, opt: str) -> None:
    """Flushed op by op (native kernels off), a deferred step computes exactly
    what the per-op path computes, and the whole step is one flush."""
    want = _lazy(False, lambda: _train(model, opt, 4))
    before = dict(eager_lazy.stats)
    got = _lazy(True, lambda: _train(model, opt, 4))
    _same(got, want)
    flushes = eager_lazy.stats["flushes"] - before["flushes"]
    assert eager_lazy.stats["deferred_ops"] > before["deferred_ops"]
    # Step 1 flushes at its backward (no step has followed one yet) and at its
    # update; from then on the update joins the trace: 2 + 1 + 1 + 1, and the
    # final parameter reads flush nothing more.
    assert flushes == 5, flushes


def test_reads_mid_step_and_structure_changes_fall_back_and_come_back() -> None:
    """A loss read before the backward (a flush mid-step) on some steps, the batch
    size changing on others, and a Python `if` on a tensor value: the parameters
    equal the per-op run's, bitwise."""
    reads = {2, 3, 6}

    def run() -> tuple[list[np.ndarray], list[float]]:
        return _train("mlp", "Adam", 9, read=lambda i: i in reads, batch=lambda i: 3 if i == 4 else 5)

    want = _lazy(False, run)
    _same(_lazy(True, run), want)

    def branchy() -> list[np.ndarray]:
        paddle.seed(5)
        net = _mlp()
        o = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
        for i in range(5):
            x, label = _data("mlp", 5, i)
            loss = F.cross_entropy(net(x), label)
            if loss > 1.1:  # reads the value: the trace so far runs here
                loss = loss * 2.0
            loss.backward()
            o.step()
            o.clear_grad()
        return [p.numpy() for p in net.parameters()]

    for a, b in zip(_lazy(True, branchy), _lazy(False, branchy)):
        np.testing.assert_array_equal(a, b)


def test_random_programs_equal_the_per_op_path() -> None:
    """The fuzzer's random programs (fan-out, broadcasting, 0-d values) run
    eagerly with a backward: values and gradients equal with and without deferral."""

    def run(case: fuzz.Case) -> list[np.ndarray]:
        tensors: list[Tensor] = []
        leaves: list[Tensor] = []
        for it in case.items:
            if isinstance(it, fuzz.Input):
                t = to_tensor(cast_input(it.array, case.dtype), stop_gradient=not it.grad)
                tensors.append(t)
                if it.grad:
                    leaves.append(t)
            else:
                out = eager_apply(it.op, [tensors[a] for a in it.args], prefix=it.op.name[3:],
                                  **resolve(it.props, case.dtype))
                tensors.extend(out if isinstance(out, list) else [out])
        total: Any = None
        for k in case.terms:
            term = eager_apply(pd.ReduceSumOp, [tensors[k]], prefix="sum")
            total = term if total is None else eager_apply(pd.ElementwiseAddOp, [total, term], prefix="add")
        if leaves and not total.stop_gradient:
            total.backward()
        return [t.numpy() for t in tensors] + [
            np.zeros(0) if t.grad is None else t.grad.numpy() for t in leaves
        ]

    checked = 0
    for seed in range(24):
        case = fuzz.generate(seed)
        if case.dtype not in ("float32", "float64"):
            continue
        want = _lazy(False, lambda c=case: run(c))
        got = _lazy(True, lambda c=case: run(c))
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b, err_msg=f"fuzz seed {seed}")
        checked += 1
    assert checked >= 10


# ------------------------------------------------------ the compiled step


@pytest.mark.parametrize("model", ["mlp", "lenet"])
def test_a_repeated_step_runs_as_one_compiled_program(native: None, model: str) -> None:
    """Once compiled, a whole step (forward, backward, Adam) is one native call;
    the results equal the per-op reference's to float32 rounding."""
    eager_native.set_enabled(False)
    want = _lazy(False, lambda: _train(model, "Adam", 6))
    eager_native.set_enabled(True)
    before = eager_lazy.stats["fused"]
    got = _lazy(True, lambda: _train(model, "Adam", 6))
    _close(got, want)
    assert eager_lazy.stats["fused"] - before >= 3
    states = [r.state for r in eager_lazy._REGIONS.values() if r is not None]
    assert eager_native.NATIVE in states, states


def test_switching_between_compiled_and_per_op_steps(native: None) -> None:
    """The acceptance test: a `.numpy()` read appears mid-step on some steps and
    goes away again; the steps without it run compiled, the others split at the
    read; the parameters equal the per-op run's (to float32 rounding: the
    compiled program may sum in another order)."""
    reads = {3, 4, 7}
    eager_native.set_enabled(False)
    want = _lazy(False, lambda: _train("mlp", "Adam", 10, read=lambda i: i in reads))
    eager_native.set_enabled(True)
    seen: list[tuple[int, int]] = []

    def each(i: int) -> None:
        seen.append((eager_lazy.stats["fused"], eager_lazy.stats["per_op"]))

    got = _lazy(True, lambda: _train("mlp", "Adam", 10, read=lambda i: i in reads, each=each))
    _close(got, want)
    fused = [b[0] - a[0] for a, b in zip(seen, seen[1:])]  # per step from the second on
    per_op = [b[1] - a[1] for a, b in zip(seen, seen[1:])]
    # Step 3 is the first with a read: its two parts (forward; backward and
    # update) are new structures and run op by op.  Steps 5, 8 and 9 have no
    # read again: each is one compiled call, nothing op by op.
    assert per_op[3 - 1] == 2, per_op
    for i in (5, 8, 9):
        assert (fused[i - 1], per_op[i - 1]) == (1, 0), (i, fused, per_op)


# ------------------------------------------------------------ 16-bit steps


def _amp_train(dtype: str, level: str, steps: int) -> tuple[list[np.ndarray], list[float]]:
    """`steps` Adam steps of the MLP under `auto_cast(level, dtype)` (O2: the
    model and optimizer `decorate`d, float32 master weights); returns the
    parameters and the losses as float32."""
    paddle.seed(3)
    net = _mlp()
    o = paddle.optimizer.Adam(learning_rate=0.05, parameters=net.parameters())
    if level == "O2":
        net, o = paddle.amp.decorate(net, o, level="O2", dtype=dtype)
    losses: list[Any] = []
    for i in range(steps):
        x, label = _data("mlp", 5, i)
        with paddle.amp.auto_cast(level=level, dtype=dtype):
            loss = F.cross_entropy(net(x), label)
        loss.backward()
        o.step()
        o.clear_grad()
        eager_native.wait(120)
        losses.append(loss)
    return [_f32(p) for p in net.parameters()], [float(_f32(v)) for v in losses]


def _f32(t: Tensor) -> np.ndarray:
    """A tensor's values as float32, read without another (deferred) op."""
    a = t.numpy()
    return bf16_to_f32(a) if a.dtype == np.uint16 else a.astype(np.float32)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("level", ["O1", "O2"])
def test_16_bit_training_steps_are_deferred_and_equal_the_per_op_path(dtype: str, level: str) -> None:
    """float16/bfloat16 ops are deferred like the others: flushed op by op, a
    mixed-precision step computes exactly what the per-op path computes; under O1
    each step is one trace (a 16-bit op run at its call would read its pending
    inputs, a flush mid-step)."""
    want = _lazy(False, lambda: _amp_train(dtype, level, 4))
    before = dict(eager_lazy.stats)
    got = _lazy(True, lambda: _amp_train(dtype, level, 4))
    _same(got, want)
    assert eager_lazy.stats["deferred_ops"] > before["deferred_ops"]
    if level == "O1":
        # (O2's optimizer reads each master weight's value to round it into its
        # 16-bit parameter: a flush per parameter.)
        assert eager_lazy.stats["flushes"] - before["flushes"] == 5


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("level", ["O1", "O2"])
def test_a_16_bit_step_runs_as_one_compiled_program(native: None, dtype: str, level: str) -> None:
    """A repeated mixed-precision step compiles as one native program whose ops
    round each result to its 16-bit type as the per-op kernels do: the results
    equal the reference's to a unit in the last place of the 16-bit type (the
    compiled products may sum in another order)."""
    eager_native.set_enabled(False)
    want = _lazy(False, lambda: _amp_train(dtype, level, 6))
    eager_native.set_enabled(True)
    before = eager_lazy.stats["fused"]
    got = _lazy(True, lambda: _amp_train(dtype, level, 6))
    ulp = 2.0**-7 if dtype == "bfloat16" else 2.0**-10
    for a, b in zip(got[0], want[0]):
        np.testing.assert_allclose(a, b, rtol=ulp, atol=ulp * 0.1)
    np.testing.assert_allclose(got[1], want[1], rtol=ulp, atol=ulp * 0.1)
    assert eager_lazy.stats["fused"] - before >= 3
    narrow = "bf16" if dtype == "bfloat16" else "f16"
    compiled_16_bit = [
        r for r in eager_lazy._REGIONS.values()
        if r is not None and r.state is eager_native.NATIVE
        and any(str(v.type.get_element_type()) == narrow for op, _, _ in r.steps for v in op.results)
    ]
    assert compiled_16_bit, [r.state for r in eager_lazy._REGIONS.values() if r is not None]


# --------------------------------------------------- what makes it fall back


def _hooked_step(kind: str) -> list[np.ndarray]:
    """Two steps of a small model with one of the features that need values
    mid-step; returns the parameters, gradients seen by hooks included."""
    paddle.seed(7)
    net = _mlp()
    o = paddle.optimizer.Adam(learning_rate=0.05, parameters=net.parameters())
    seen: list[np.ndarray] = []
    for i in range(2):
        x, label = _data("mlp", 5, i)
        if kind == "no_grad":
            with paddle.no_grad():
                x = x * 2.0 + 1.0
        h = net[0](x)
        if kind == "hook":
            h.register_hook(lambda g: (seen.append(g.numpy()), g * 0.5)[1])
        elif kind == "leaf_hook":
            net[2].weight.register_hook(lambda g: g * 3.0)
        elif kind == "retain":
            h.retain_grads()
        elif kind == "inplace":
            with paddle.no_grad():
                net[0].bias.add_(paddle.ones_like(net[0].bias))
            h = paddle.nn.functional.relu(h)
            h.scale_(2.0)
        h = net[2](net[1](h))
        if kind == "pylayer":
            h = _Double.apply(h)
        loss = F.cross_entropy(h, label)
        loss.backward()
        if kind == "retain":
            seen.append(h.grad.numpy() if h.grad is not None else np.zeros(0))
        o.step()
        o.clear_grad()
    return [p.numpy() for p in net.parameters()] + seen


class _Double(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        return x * 2.0

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensor()
        return g * 2.0 + 0.0 * x


@pytest.mark.parametrize("kind", ["hook", "leaf_hook", "retain", "pylayer", "inplace", "no_grad"])
def test_hooks_pylayer_retain_inplace_and_no_grad_give_unchanged_results(kind: str) -> None:
    want = _lazy(False, lambda: _hooked_step(kind))
    got = _lazy(True, lambda: _hooked_step(kind))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------- the mechanics


def test_metadata_does_not_run_deferred_ops_and_a_read_does() -> None:
    eager_lazy.set_enabled(True)
    x = to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3), stop_gradient=False)
    y = paddle.exp(x) * 2.0
    assert isinstance(y._arr, eager_lazy.Pending)
    assert (y.shape, y.dtype, y.ndim, y.size, len(y)) == ([2, 3], paddle.float32, 2, 6, 2)
    assert isinstance(y._arr, eager_lazy.Pending)  # still not computed
    np.testing.assert_array_equal(y.numpy(), np.exp(np.arange(6, dtype=np.float32).reshape(2, 3)) * 2.0)
    assert type(y._arr) is np.ndarray


def test_metadata_reads_outside_the_tensor_do_not_flush() -> None:
    """Code elsewhere reading a tensor's dtype, shape or size (a layer's `to`,
    `set_state_dict`'s checks, gradient buckets, the scalar conversions' size
    errors) reads the pending value's metadata: the trace is not run (counted by
    the module's own flush counter)."""
    from pullback.distributed.parallel import gradient_buckets

    eager_lazy.set_enabled(True)
    eager_lazy.flush()
    lin = paddle.nn.Linear(3, 2)
    x = to_tensor(np.ones((2, 3), np.float32))
    y = paddle.exp(x) * 2.0
    w = paddle.tanh(lin.weight)
    lin.weight._arr = w._arr  # a parameter holding a deferred update's value
    before = eager_lazy.stats["flushes"]
    assert isinstance(y._arr, eager_lazy.Pending) and y._arr.nbytes == 24 and y._arr.itemsize == 4
    for convert, error in ((bool, ValueError), (float, TypeError), (int, TypeError)):
        with pytest.raises(error):
            convert(y)
    with pytest.raises(TypeError, match="integer tensors"):
        [1, 2][y]
    assert [[id(t) for t in b] for b in gradient_buckets([y, w], 1.0, 1.0)] == [[id(w), id(y)]]
    lin.to(dtype="float32")  # already float32: nothing to convert, nothing to run
    lin.set_state_dict({"bias": np.zeros(2, np.float64)})  # converted to the target's dtype
    assert eager_lazy.stats["flushes"] == before
    assert isinstance(y._arr, eager_lazy.Pending) and isinstance(lin.weight._arr, eager_lazy.Pending)
    assert lin.bias.dtype == paddle.float32
    np.testing.assert_array_equal(y.numpy(), np.full((2, 3), np.exp(np.float32(1)) * 2, np.float32))
    assert eager_lazy.stats["flushes"] == before + 1


def test_a_trace_nobody_reads_is_not_run() -> None:
    eager_lazy.set_enabled(True)
    eager_lazy.flush()
    x = to_tensor(np.ones((3, 3), np.float32))
    before = eager_lazy.stats["skipped"]
    y = paddle.matmul(x, x)
    del y
    eager_lazy.flush()
    assert eager_lazy.stats["skipped"] == before + 1


def test_an_error_in_a_deferred_op_names_the_op_and_the_user_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel failing at the flush: the error says which op failed and the
    line that called it, and the values it should have made say they are gone."""
    eager_lazy.set_enabled(True)
    x = to_tensor(np.ones((2, 2), np.float32))
    y = paddle.tanh(x)  # the line the error must name
    line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
    real = Template.run

    def failing(self: Template, arrays: Any, quiet: bool = False) -> Any:
        if self.type == "tanh":
            raise FloatingPointError("the kernel failed")
        return real(self, arrays, quiet)

    monkeypatch.setattr(Template, "run", failing)
    with pytest.raises(FloatingPointError, match=rf"the kernel failed \(eager op 'pd.tanh' called at .*"
                                                 rf"test_eager_lazy.py:{line} "):
        y.numpy()
    with pytest.raises(RuntimeError, match="never computed"):
        y.numpy()


def test_pending_values_are_shared_by_detach_and_saved_by_nodes() -> None:
    """A detached pending value and a node's saved value get the same array."""
    eager_lazy.set_enabled(True)
    x = to_tensor(np.full((2, 2), 0.5, np.float32), stop_gradient=False)
    y = paddle.sin(x)
    d = y.detach()
    z = (y * y).sum()
    z.backward()
    np.testing.assert_array_equal(d.numpy(), np.sin(np.full((2, 2), 0.5, np.float32)))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.sin(0.5) * np.cos(0.5) * np.ones((2, 2)), rtol=1e-6)
    assert y._node is not None and y._node.saved_in is None  # freed by the backward, as without deferral


def test_gradients_accumulate_over_deferred_backwards() -> None:
    """Two backwards before a read: the second adds to the first's pending
    gradient, with finite differences' value."""
    eager_lazy.set_enabled(True)
    x = to_tensor(np.array([0.3, -1.2], np.float64), stop_gradient=False)

    def f(v: Any) -> Any:
        return (paddle.sin(v) * v).sum()

    f(x).backward()
    f(x).backward()
    eps = 1e-6
    a = np.array([0.3, -1.2])
    fd = np.array([(np.sum(np.sin(a + eps * e) * (a + eps * e)) - np.sum(np.sin(a - eps * e) * (a - eps * e)))
                   / (2 * eps) for e in np.eye(2)])
    np.testing.assert_allclose(x.grad.numpy(), 2 * fd, rtol=1e-7)


def test_deferral_that_gains_nothing_is_suspended_then_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    """Traces whose regions are never compiled (here every region is below the
    cost threshold) stop being deferred after `USELESS_FLUSHES` flushes, are tried
    again after `SUSPEND_STEPS` steps, and the parameters equal the per-op run's."""
    monkeypatch.setattr(eager_native, "MIN_US", 1e9)
    monkeypatch.setattr(eager_lazy, "SUSPEND_STEPS", 6)
    monkeypatch.setattr(eager_lazy, "_REGIONS", type(eager_lazy._REGIONS)())
    old = eager_native.set_enabled(True)
    try:
        want = _lazy(False, lambda: _train("mlp", "SGD", 16))
        states: list[bool] = []
        got = _lazy(True, lambda: _train("mlp", "SGD", 16, each=lambda i: states.append(eager_lazy.suspended())))
    finally:
        eager_native.set_enabled(old)
    _same(got, want)
    # Each structure is probed twice before its region is off, then four useless
    # flushes suspend; six backwards and steps later (three training steps) the
    # thread defers again, and is suspended again.
    assert not states[0] and True in states[:8], states
    first = states.index(True)
    back = states.index(False, first)
    assert back - first <= 4 and True in states[back:], states


def _bad_label_run() -> tuple[list[np.ndarray], list[str]]:
    """Eight SGD steps; step 5's labels are out of range (its error stops it)."""
    paddle.seed(2)
    net = _mlp()
    o = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    errors: list[str] = []
    for i in range(8):
        x, label = _data("mlp", 5, i)
        if i == 5:
            label = to_tensor(np.array([0, 1, 7, 1, 0], np.int64))
        try:
            loss = F.cross_entropy(net(x), label)
            loss.backward()
            o.step()
            o.clear_grad()
        except IndexError as e:
            errors.append(str(e))
        eager_native.wait(120)
    return [p.numpy() for p in net.parameters()], errors


@pytest.mark.parametrize("compiled", [False, True])
def test_a_bad_value_fails_the_step_as_the_per_op_path_does(compiled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """An out-of-range label found at the flush (by the compiled step or the
    per-op kernel) raises the kernel's error, naming the op and the line that
    called it; the step's gradients and updates are undone, so training goes on
    from the same parameters as on the per-op path (where the error stopped the
    step at the loss), and a compiled step stays compiled."""
    want, want_err = _lazy(False, _bad_label_run)
    if compiled:
        monkeypatch.setattr(eager_native, "MIN_US", 0.0)
        monkeypatch.setattr(eager_native, "PROBES", 1)
        monkeypatch.setattr(eager_native, "CALIBRATE", False)
        monkeypatch.setattr(eager_lazy, "_REGIONS", type(eager_lazy._REGIONS)())
        monkeypatch.setattr(eager_native, "_enabled", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (per-op native kernels warn about the label)
        got, got_err = _lazy(True, _bad_label_run)
    assert len(got_err) == len(want_err) == 1
    assert "label 7 is out of range" in got_err[0] and "'pd.softmax_with_cross_entropy' called at" in got_err[0]
    assert "test_eager_lazy.py" in got_err[0]
    for a, b in zip(got, want):
        if compiled:
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(a, b)
    if compiled:
        assert eager_native.NATIVE in [r.state for r in eager_lazy._REGIONS.values() if r is not None]


def test_a_step_runs_at_clear_grad_or_at_the_next_op() -> None:
    """`opt.step()` completes the trace; it runs at the `clear_grad()` that follows
    (the cleared gradients no longer wanted) or, without one (gradients accumulated
    over two backwards), at the next deferred op or read: the same results as the
    per-op path either way."""

    def accumulate() -> tuple[list[np.ndarray], list[float]]:
        paddle.seed(3)
        net = _mlp()
        o = paddle.optimizer.Adam(learning_rate=0.05, parameters=net.parameters())
        losses = []
        for i in range(6):
            x, label = _data("mlp", 5, i)
            loss = F.cross_entropy(net(x), label)
            loss.backward()
            losses.append(loss)
            if i % 2:
                o.step()
                if i == 3:
                    float(net.parameters()[0].sum())  # a read right after the step
                o.clear_grad()
        return [p.numpy() for p in net.parameters()], [float(v) for v in losses]

    _same(_lazy(True, accumulate), _lazy(False, accumulate))

    def timing() -> None:
        paddle.seed(3)
        net = _mlp()
        o = paddle.optimizer.SGD(learning_rate=0.05, parameters=net.parameters())
        x, label = _data("mlp", 5, 0)
        F.cross_entropy(net(x), label).backward()
        o.step()
        flushes = eager_lazy.stats["flushes"]
        w = net.parameters()[0]
        assert type(w._arr) is eager_lazy.Pending and w._arr.value is None  # the update is not run yet
        o.clear_grad()
        assert eager_lazy.stats["flushes"] == flushes + 1 and w._arr.value is not None
        assert eager.is_zero_gradient(w.grad._arr)

    _lazy(True, timing)
