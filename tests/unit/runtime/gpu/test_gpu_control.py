"""`pd.if`/`pd.while` on the GPU: host-side control (the CPU lowering's
`scf.if`/`scf.while` in the host function) with predicates computed by kernels and
read from device memory.  On the recording fake device no kernel computes, so the
predicates are scripted (`FakeDevice.predicates`): the tests check that the host
runtime follows them — which kernels it launches, how often it reads a predicate,
and that the stacks the loop pushes onto grow on the device (`realloc`)."""

from __future__ import annotations


import numpy as np
import pytest
from xdsl.dialects import gpu, scf

import pullback as paddle
from pullback.runtime.executor import prepare
from pullback.runtime.gpu import backend as gpu_backend
import pullback_gpu_fakes as gpu_fakes


@pytest.fixture
def counted_loop(static_programs):
    """`while i < n: v = v * w if sum(v) > 1 else tanh(v) + w` and its gradient."""
    x = paddle.static.data("x", [3], "float32")
    w = paddle.static.data("w", [3], "float32")
    n = paddle.static.data("n", [1], "int64")
    x.stop_gradient = False

    def body(i, v):
        inner = paddle.static.nn.cond(paddle.sum(v) > 1.0, lambda: v * w, lambda: paddle.tanh(v) + w)
        return [i + 1, inner]

    _, r = paddle.static.nn.while_loop(lambda i, v: i < n, body, [paddle.full([1], 0, dtype="int64"), x])
    loss = paddle.sum(r * r)
    (dx,) = paddle.static.gradients([loss], [x])
    entry = prepare(paddle.static.default_main_program(), [loss.value, dx.value])
    feeds = {"x": np.ones(3, np.float32), "w": np.ones(3, np.float32), "n": np.array([2], np.int64)}
    return entry.module, entry.fetches, feeds


def _run(module, fetches, feeds, predicates):
    backend = gpu_backend.GpuBackend(None, device=gpu_fakes.FakeDevice(), gemm=(None, "tiled kernel (test)"))
    backend.device.predicates = list(predicates)  # type: ignore[attr-defined]
    out = backend.run(module, feeds, {}, fetches)
    assert len(out) == len(fetches)
    return backend


def test_host_function_keeps_the_loops_and_the_branch(counted_loop):
    module, fetches, feeds = counted_loop
    backend = _run(module, fetches, feeds, [])
    prog = next(p for _, p in backend._programs.values() if p is not None)
    whiles = [op for op in prog.host.walk() if isinstance(op, scf.WhileOp)]
    ifs = [op for op in prog.host.walk() if isinstance(op, scf.IfOp)]
    # The forward loop and the reverse loop of its gradient; the branch inside.
    assert len(whiles) == 2 and ifs
    assert any(isinstance(o, gpu.LaunchFuncOp) for o in whiles[0].after_region.walk())


def test_loop_trips_follow_the_device_predicates(counted_loop):
    module, fetches, feeds = counted_loop
    none = _run(module, fetches, feeds, [])  # every predicate false: no trip
    base = none.stats["launches"]
    one = _run(module, fetches, feeds, [True])  # one forward trip, then false
    two = _run(module, fetches, feeds, [True, False, True])  # two trips
    # Each trip launches the loop's kernels again (the branch's included).
    assert base < one.stats["launches"] < two.stats["launches"]
    assert one.device.predicates == [] and two.device.predicates == []
    # Each trip reads its predicates from the device: more small downloads.
    assert none.device.copies["down"] < one.device.copies["down"] < two.device.copies["down"]


def test_branch_launches_only_the_taken_side(counted_loop):
    module, fetches, feeds = counted_loop
    # One trip; the `if` predicate (read second) picks `v * w` or `tanh(v) + w`.
    taken = [_run(module, fetches, feeds, [True, branch]) for branch in (True, False)]
    names = [[name for name, *_ in b.device.launches] for b in taken]
    assert names[0] != names[1]


def test_stacks_grow_on_the_device(counted_loop, monkeypatch):
    """The forward loop pushes the values its reverse needs onto stacks that grow by
    `realloc`: a new device buffer keeping the old bytes, once per push."""
    module, fetches, feeds = counted_loop
    grown: list[int] = []
    real = gpu_backend.HostRun.realloc

    def counting(self, op):
        real(self, op)
        grown.append(self.env[op.results[0]].buffer.nbytes)

    monkeypatch.setattr(gpu_backend.HostRun, "realloc", counting)
    _run(module, fetches, feeds, [])
    none = len(grown)
    grown.clear()
    _run(module, fetches, feeds, [True, False, True])
    assert len(grown) > none and max(grown) > 0


# ------------------------------------------------------------------ on a real GPU

requires_gpu = gpu_fakes.requires_gpu


@requires_gpu
@pytest.mark.parametrize("n", [0, 1, 3])
def test_control_flow_matches_the_interpreter(counted_loop, n):
    from pullback.runtime.interpreter import run_module

    module, fetches, feeds = counted_loop
    feeds = {**feeds, "x": np.array([0.3, -0.4, 0.9], np.float32), "n": np.array([n], np.int64)}
    want = run_module(module, feeds, {})
    got = gpu_backend.GpuBackend(type("P", (), {"device_id": 0})()).run(module, feeds, {}, fetches)
    for v, g in zip(fetches, got):
        np.testing.assert_allclose(g, want[v], rtol=1e-5, atol=1e-6)
