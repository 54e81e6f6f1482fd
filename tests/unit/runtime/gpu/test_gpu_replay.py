"""Replayed GPU runs (`runtime/gpu/replay.py`): a run whose host function reads no
device memory is recorded once per feed shapes and re-issued.  On the recording
fake device no kernel computes, so the tests compare what is issued: a replayed
run must launch the same kernels with the same grids, blocks, scalars and buffer
*roles* as an interpreted run, and the products (computed by the fake cuBLAS on
host memory) must give numpy's values for new feeds and new parameters."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pullback.benchmarks.programs import mlp_train
from pullback.runtime.gpu import backend as gpu_backend, replay
from pullback.runtime.interpreter import run_module
import pullback_gpu_fakes as gpu_fakes


def _run_logged(
    backend: gpu_backend.GpuBackend, built: Any, feeds: dict[str, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> list[tuple[Any, ...]]:
    """Run one step; its launches with buffers named by role: parameters by name,
    buffers allocated during this run (its outputs: temporaries come from the pool
    or the replay after the first run) as `new k`."""
    device = backend.device
    start = len(device.launches)  # type: ignore[attr-defined]
    fresh: list[Any] = []
    alloc = type(device).alloc

    def recording_alloc(self: Any, nbytes: int) -> Any:
        buf = alloc(self, nbytes)
        fresh.append(buf)
        return buf

    with monkeypatch.context() as m:
        m.setattr(type(device), "alloc", recording_alloc)
        backend.run(built.module, feeds, built.scope, built.fetch)
    workspace = getattr(backend.blas, "workspace", None)  # cuBLAS's, allocated with the step stream
    fresh = [b for b in fresh if b is not workspace]
    names = gpu_fakes.param_buffer_names(backend, built.scope) | {id(b): f"new {k}" for k, b in enumerate(fresh)}
    return gpu_fakes.canonical_launches(device.launches[start:], names)  # type: ignore[attr-defined]


@pytest.mark.parametrize("blas", [True, False])
def test_a_replayed_step_issues_what_an_interpreted_one_does(monkeypatch: pytest.MonkeyPatch, blas: bool) -> None:
    built_a, built_b = mlp_train((13, 8, 3), lr=0.1), mlp_train((13, 8, 3), lr=0.1)
    replayed = gpu_fakes.fake_backend(blas, monkeypatch)
    interpreted = gpu_fakes.fake_backend(blas, monkeypatch)
    rng = np.random.default_rng(7)
    for step in range(4):
        feeds = gpu_fakes.mlp_feeds(step)
        if step == 2:  # a parameter set from the host: uploaded to a new buffer
            name = "fc_1.w_0"
            new = rng.standard_normal(np.asarray(built_a.scope[name]).shape).astype(np.float32)
            built_a.scope[name], built_b.scope[name] = new, new.copy()
        got = _run_logged(replayed, built_a, feeds, monkeypatch)
        assert replayed.stats["replayed"] == (step > 0)
        monkeypatch.setenv("PULLBACK_GPU_REPLAY", "0")
        want = _run_logged(interpreted, built_b, feeds, monkeypatch)
        monkeypatch.delenv("PULLBACK_GPU_REPLAY")
        assert interpreted.stats["replayed"] == 0
        assert got == want, f"step {step}"
        assert replayed.stats["launches"] == interpreted.stats["launches"] == len(got)
        assert replayed.stats["gemm_calls"] == interpreted.stats["gemm_calls"]
    if blas:
        assert replayed.blas.lib.calls == interpreted.blas.lib.calls  # type: ignore[union-attr]


def test_replayed_products_read_new_feeds_and_new_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    """`x @ w` with `w` a parameter: each replayed run uploads its feed into the
    replay's buffer, reads the parameter the scope holds now and writes a fresh
    output (the fake cuBLAS computes the product on host memory)."""
    entry = gpu_fakes.matmul_entry()
    backend = gpu_fakes.fake_backend(True, monkeypatch)
    rng = np.random.default_rng(1)
    scope: dict[str, Any] = {"w": rng.standard_normal((6, 3)).astype(np.float32)}
    outs = []
    for step in range(4):
        if step == 2:
            scope["w"] = rng.standard_normal((6, 3)).astype(np.float32)  # set from the host
        feeds = {"x": rng.standard_normal((4, 6)).astype(np.float32)}
        (got,) = backend.run(entry.module, feeds, scope, entry.fetches)
        want = run_module(entry.module, feeds, dict(scope))[entry.fetches[0]]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert backend.stats["replayed"] == (step not in (0,))
        outs.append(got)
    assert outs[0] is not outs[1]  # a fresh output each run


def test_new_feed_shapes_are_recorded_once_each(monkeypatch: pytest.MonkeyPatch) -> None:
    built = mlp_train((13, 8, 3), lr=0.1)
    backend = gpu_fakes.fake_backend(True, monkeypatch)
    seen = []
    for batch in (5, 7, 5, 7, 9):
        feeds = {"x": np.ones((batch, 13), np.float32), "label": np.zeros((batch, 1), np.int64)}
        backend.run(built.module, feeds, built.scope, built.fetch)
        seen.append(backend.stats["replayed"])
    assert seen == [0, 0, 1, 1, 0]
    (prog,) = [p for _, p in backend._programs.values()]
    assert prog is not None and set(prog.replays) == {((5, 13), (5, 1)), ((7, 13), (7, 1)), ((9, 13), (9, 1))}


def test_the_oldest_replay_is_dropped_and_gives_its_buffers_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_backend, "MAX_REPLAYS", 2)
    built = mlp_train((13, 8, 3), lr=0.1)
    backend = gpu_fakes.fake_backend(True, monkeypatch)

    def run(batch: int) -> None:
        feeds = {"x": np.ones((batch, 13), np.float32), "label": np.zeros((batch, 1), np.int64)}
        backend.run(built.module, feeds, built.scope, built.fetch)

    run(3)
    run(4)
    (prog,) = [p for _, p in backend._programs.values()]
    first = prog.replays[((3, 13), (3, 1))]
    temps = list(first.temps)
    assert temps, "the MLP step uses temporaries"
    pooled = sum(len(v) for v in backend.pool.free.values())
    run(5)
    assert ((3, 13), (3, 1)) not in prog.replays and len(prog.replays) == 2
    assert first.temps == []
    free = [b for bucket in backend.pool.free.values() for b in bucket]
    assert all(any(b is t for b in free) for t in temps)
    assert len(free) >= pooled


def test_host_functions_reading_the_device_are_interpreted_every_run(static_programs: Any) -> None:
    """`pd.while` and `pd.if` read their predicates from device memory: such a host
    function is never replayed (its launches depend on values, not shapes)."""
    import pullback as paddle
    from pullback.runtime.executor import prepare

    x = paddle.static.data("x", [3], "float32")
    n = paddle.static.data("n", [1], "int64")

    def body(i: Any, v: Any) -> list[Any]:
        return [i + 1, paddle.tanh(v)]

    _, r = paddle.static.nn.while_loop(lambda i, v: i < n, body, [paddle.full([1], 0, dtype="int64"), x])
    entry = prepare(paddle.static.default_main_program(), [r.value])
    backend = gpu_backend.GpuBackend(None, device=gpu_fakes.FakeDevice(), gemm=(None, "tiled kernel (test)"))
    feeds = {"x": np.ones(3, np.float32), "n": np.array([2], np.int64)}
    for trips in (2, 3):
        backend.device.predicates = [True] * trips + [False]  # type: ignore[attr-defined]
        backend.run(entry.module, feeds, {}, entry.fetches)
        assert backend.stats["replayed"] == 0
    (prog,) = [p for _, p in backend._programs.values()]
    assert prog is not None and prog.replayable is False and not prog.replays


def test_a_run_naming_an_unknown_buffer_is_not_replayed() -> None:
    """`replay.build` refuses a recording whose launch reads a buffer that is none
    of the run's feeds, parameters, outputs or temporaries."""
    fakes = gpu_fakes
    device = fakes.FakeDevice()
    stray = device.alloc(16)
    kernel = fakes.FakeFunction(device.launches, "k")
    rec = replay.Recording([("launch", kernel, [1, 1, 1], [256, 1, 1], [stray, 4])])
    with pytest.raises(replay.NotReplayable):
        replay.build(rec, [], {}, [], [])
    known = replay.build(rec, [], {}, [], [stray])
    assert known.launches == 1 and known.temps == [stray]
