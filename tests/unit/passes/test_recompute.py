"""Recompute (activation checkpointing) and the peak-memory statistic.

Gradients with recompute must equal those without (dropout replays its mask), on
the interpreter and the compiled backend, static and eager; the memory statistic is
checked against a hand-computed peak, and recompute must lower it.
"""

from __future__ import annotations

import numpy as np
import pullback as paddle
import pullback.nn.functional as F
import pytest
from pullback.dialects import pd
from pullback.lowering.memory import analyze_module, parse_dims
from pullback.passes.recompute import RecomputePass
from pullback.runtime.executor import Executor
from pullback.tools.pullback_opt import restore_all_name_hints
from xdsl.context import Context

DEPTH, WIDTH, BATCH = 6, 16, 8


def _mlp(depth: int = DEPTH, width: int = WIDTH, checkpoints: str | None = None):
    """A static MLP with dropout: (main, startup, loss, [(param, grad)])."""
    paddle.seed(2024)  # the same dropout seeds in every build
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data("x", [None, width], "float32")
        h, acts = x, []
        for _ in range(depth):
            h = paddle.static.nn.fc(h, width, activation="relu")
            h = F.dropout(h, p=0.25, training=True)
            acts.append(h)
        loss = paddle.mean(h * h)
        if checkpoints == "manual":
            pairs, names = paddle.static.append_backward(loss, checkpoints=acts[1::2])
            assert names == [a.name for a in acts[1::2]]
        else:
            pairs = paddle.static.append_backward(loss)
            if checkpoints == "auto":
                RecomputePass().apply(Context(), main.module)
                main._bump()
    return main, startup, loss, pairs


def _run(main, startup, pairs, backend: str, x: np.ndarray):
    exe = Executor(paddle.CPUPlace(), backend=backend)
    scope = paddle.static.global_scope()
    exe.run(startup)
    rng = np.random.default_rng(5)
    for p in main.global_block().all_parameters():
        scope[p.name] = (0.3 * rng.standard_normal(p.shape)).astype("float32")
    fetch = [g for _, g in pairs]
    return exe.run(main, feed={"x": x}, fetch_list=fetch), exe, fetch


@pytest.fixture(autouse=True)
def _static():
    paddle.enable_static()
    yield
    paddle.disable_static()


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
@pytest.mark.parametrize("mode", ["manual", "auto"])
def test_static_gradients_equal_without_recompute(backend: str, mode: str) -> None:
    x = np.random.default_rng(0).standard_normal((BATCH, WIDTH)).astype("float32")
    main0, startup0, _, pairs0 = _mlp()
    base, *_ = _run(main0, startup0, pairs0, backend, x)
    main, startup, _, pairs = _mlp(checkpoints=mode)
    texts = str(main.module)
    assert "@RECOMPUTE" in texts  # something was replayed
    got, *_ = _run(main, startup, pairs, backend, x)
    assert len(got) == len(base) == 2 * DEPTH
    for a, b in zip(got, base):
        np.testing.assert_array_equal(a, b)  # a replay is bit-identical


def test_recompute_lowers_the_peak() -> None:
    x = np.random.default_rng(0).standard_normal((BATCH, WIDTH)).astype("float32")
    peaks = {}
    for mode in (None, "manual", "auto"):
        main, startup, _, pairs = _mlp(checkpoints=mode)
        _, exe, fetch = _run(main, startup, pairs, "compiled", x)
        peak = exe.memory_peak(main, feed={"x": x}, fetch_list=fetch)
        assert peak.bytes == sum(b.size.value({"x_d0": BATCH}) for b in peak.live)
        peaks[mode] = peak.bytes
    assert peaks["manual"] < peaks[None]
    assert peaks["auto"] < peaks[None]


SMALL = """
%x = pd.data "x" : tensor<?x8xf32>
%w = pd.parameter "w" : tensor<8x4xf32>
%h = pd.matmul %x, %w {name = "h"} : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
%t = pd.tanh %h {name = "t"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
%s = pd.matmul %t, %t {transpose_y = true, name = "s"} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>
%l = pd.mean %s {name = "loss"} : (tensor<?x?xf32>) -> tensor<f32>
pd.fetch %l : tensor<f32>
"""


@pytest.mark.parametrize("n", [1, 3, 4, 10])
def test_memory_peak_hand_computed(n: int) -> None:
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser

    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(pd.PD)
    module = Parser(ctx, SMALL).parse_module()
    restore_all_name_hints(module)
    (report,) = analyze_module(module)
    # h = 16n bytes, t = 16n; h dies once t exists, then s = t t^T = 4n^2 bytes.
    expected = max(16 * n + 16 * n, 16 * n + 4 * n * n)
    peak = report.peak({"x_d0": n})
    assert peak.bytes == expected
    names = {b.name for b in peak.live}
    if 32 * n > 16 * n + 4 * n * n:
        assert names == {"h", "t"}
    elif 32 * n < 16 * n + 4 * n * n:
        assert names == {"t", "s"}
    assert report.argument_bytes() == 8 * 4 * 4 + 4  # w and the scalar output


def test_parse_dims_errors() -> None:
    assert parse_dims('x_d0=4, y_d1=2') == {"x_d0": 4, "y_d1": 2}
    with pytest.raises(ValueError, match="'x_d0' is not NAME=INTEGER"):
        parse_dims("x_d0")


def test_append_backward_checkpoint_errors() -> None:
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data("x", [None, 4], "float32")
        loss = paddle.mean(paddle.static.nn.fc(x, 4))
        with pytest.raises(ValueError, match="no variable named 'nope'"):
            paddle.static.append_backward(loss, checkpoints=["nope"])
        with pytest.raises(TypeError, match="checkpoints must be Variables or names"):
            paddle.static.append_backward(loss, checkpoints=[3])
        # Not a non-empty list: plain append_backward, plain result (as in Paddle).
        assert isinstance(paddle.static.append_backward(loss, checkpoints=[]), list)


@pytest.mark.parametrize("wrapper", ["RecomputeOptimizer", "fleet"])
def test_recompute_optimizer_trains_like_the_wrapped_one(wrapper: str) -> None:
    from pullback.distributed import fleet
    from pullback.incubate.optimizer import RecomputeOptimizer

    x = np.random.default_rng(1).standard_normal((BATCH, WIDTH)).astype("float32")
    results = []
    for recompute in (False, True):
        paddle.seed(7)  # the same dropout seeds in both builds
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
            xv = paddle.static.data("x", [None, WIDTH], "float32")
            h1 = F.dropout(paddle.static.nn.fc(xv, WIDTH, activation="relu"), p=0.5)
            h2 = paddle.static.nn.fc(h1, WIDTH, activation="tanh")
            loss = paddle.mean(paddle.static.nn.fc(h2, 1) ** 2)
            opt = paddle.optimizer.SGD(learning_rate=0.1)
            if recompute and wrapper == "fleet":
                fleet.init(is_collective=True)
                strategy = fleet.DistributedStrategy()
                strategy.recompute = True
                strategy.recompute_configs = {"checkpoints": [h2.name]}
                opt = fleet.distributed_optimizer(opt, strategy)
            elif recompute:
                opt = RecomputeOptimizer(opt)
                with pytest.raises(ValueError, match="_set_checkpoints first"):
                    opt.minimize(loss)
                opt._set_checkpoints([h2])
            opt.minimize(loss)
        exe = Executor(paddle.CPUPlace())
        exe.run(startup)
        scope = paddle.static.global_scope()
        rng = np.random.default_rng(2)
        params = main.global_block().all_parameters()
        for p in params:
            scope[p.name] = (0.3 * rng.standard_normal(p.shape)).astype("float32")
        losses = [exe.run(main, feed={"x": x}, fetch_list=[loss])[0] for _ in range(3)]
        results.append((losses, [np.array(scope[p.name]) for p in params]))
        if recompute:
            assert "@RECOMPUTE" in str(main.module)
    (l0, p0), (l1, p1) = results
    np.testing.assert_allclose(l1, l0, rtol=1e-6)
    for a, b in zip(p1, p0):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_recompute_optimizer_argument_errors() -> None:
    from pullback.incubate.optimizer import RecomputeOptimizer

    opt = RecomputeOptimizer(paddle.optimizer.SGD(learning_rate=0.1))
    with pytest.raises(TypeError, match="checkpoints must be a list"):
        opt._set_checkpoints("fc_0.tmp_0")
    with pytest.raises(TypeError, match="must be an Optimizer"):
        RecomputeOptimizer(3)
    with pytest.raises(NotImplementedError):
        opt.load({})
    paddle.disable_static()
    try:
        with pytest.raises(Exception, match="In dygraph, don't support RecomputeOptimizer"):
            RecomputeOptimizer(paddle.optimizer.SGD(learning_rate=0.1, parameters=paddle.nn.Linear(2, 2).parameters()))
    finally:
        paddle.enable_static()


def test_eager_recompute_gradients_equal() -> None:
    from pullback.frontend.recompute import recompute

    paddle.disable_static()
    try:
        x_np = np.random.default_rng(3).standard_normal((4, 6)).astype("float32")
        w_np = np.random.default_rng(4).standard_normal((6, 6)).astype("float32")
        grads = []
        for use in (False, True):
            paddle.seed(11)  # the same dropout seed draw in both runs
            w = paddle.to_tensor(w_np, stop_gradient=False)
            x = paddle.to_tensor(x_np)

            def block(v, w=w):
                return F.dropout(paddle.tanh(paddle.matmul(v, w)), p=0.5, training=True)

            with paddle.utils.unique_name.guard():  # the same dropout seed both times
                y = recompute(block, x, preserve_rng_state=True) if use else block(x)
            paddle.mean(y * y).backward()
            grads.append(w.grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])
        with pytest.raises(ValueError, match="use_reentrant=False"):
            recompute(lambda v, k=1: v, paddle.to_tensor(x_np), k=2)
        with pytest.raises(TypeError, match="must be callable"):
            recompute(3)
    finally:
        paddle.enable_static()


def test_eager_recompute_keeps_only_its_arguments() -> None:
    """Between forward and backward, the recorded graph of a recomputed block holds
    its argument only; without recompute it holds every layer's activations.  The
    retained memory is measured (tracemalloc sees numpy's buffers) and the gradients
    of the parameters used inside are equal."""
    import tracemalloc

    from pullback.frontend.recompute import recompute

    paddle.disable_static()
    try:
        rng = np.random.default_rng(5)
        ws_np = [rng.standard_normal((128, 128)).astype("float32") / 12 for _ in range(8)]
        x_np = rng.standard_normal((64, 128)).astype("float32")
        retained, grads = {}, {}
        for use in (False, True):
            ws = [paddle.to_tensor(w, stop_gradient=False) for w in ws_np]
            x = paddle.to_tensor(x_np)

            def block(h, ws=ws):
                for w in ws:
                    h = paddle.tanh(paddle.matmul(h, w))
                return h

            # Warm up (templates and caches are made on first use), then measure.
            block(x)
            recompute(block, x)
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            y = recompute(block, x) if use else block(x)
            retained[use] = tracemalloc.get_traced_memory()[0] - before
            tracemalloc.stop()
            paddle.sum(y * y).backward()
            grads[use] = [w.grad.numpy() for w in ws]
        activation = 64 * 128 * 4
        assert retained[False] > 15 * activation  # each layer's input and output
        assert retained[True] < 3 * activation  # the output (and bookkeeping) only
        for a, b in zip(grads[False], grads[True]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    finally:
        paddle.enable_static()
