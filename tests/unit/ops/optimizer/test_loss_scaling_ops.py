"""AMP's loss-scaling ops `pd.check_finite_and_unscale` and `pd.update_loss_scaling`:
the interpreter against Paddle 3.3.1's kernels (the values below were read from
`_C_ops.check_finite_and_unscale_` / `_C_ops.update_loss_scaling_` on a CPU), typing,
and the compiled code against the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from pullback.benchmarks.programs import ProgramBuilder
from pullback.dialects import pd
from pullback.passes.vjp import NON_DIFFERENTIABLE
from pullback.passes.vjp import load_all as load_vjp_rules
from pullback.runtime.interpreter import run_module
from pullback.runtime.kernels import load_all
from pullback.runtime.native.backend import CompiledBackend

load_all()
INF, NAN = np.inf, np.nan


def _unscale_program(shapes, dtype="float32"):
    b = ProgramBuilder()
    xs = [b.data(f"x{i}", s, dtype) for i, s in enumerate(shapes)]
    scale = b.param("loss_scaling_0", [1], "float32")
    op = b.op(pd.CheckFiniteAndUnscaleOp.make(*xs, scale))
    return b, list(op.results)


def _run_both(b, fetch, feed, scope):
    env = run_module(b.module, feed, dict(scope))
    want = [env[v] for v in fetch]
    compiled_scope = {k: v.copy() for k, v in scope.items()}
    got = CompiledBackend(fallback=False).run(b.module, feed, compiled_scope, fetch)
    return want, got, compiled_scope


def test_check_finite_and_unscale_is_paddles_cpu_kernel():
    # Paddle 3.3.1 (CPU): [1,2,3], [4,inf,6], [8,10] by scale 2 ->
    # [0.5,1,1.5], [0,nan,0], [0,0] and found_inf [True]: x * 0 from the first bad x on.
    b, res = _unscale_program([[3], [3], [2]])
    feed = {"x0": np.array([1, 2, 3], np.float32), "x1": np.array([4, INF, 6], np.float32),
            "x2": np.array([8, 10], np.float32)}
    want, got, _ = _run_both(b, res, feed, {"loss_scaling_0": np.array([2], np.float32)})
    for w, g in zip(want, got):
        np.testing.assert_array_equal(w, g)
    np.testing.assert_array_equal(want[0], [0.5, 1, 1.5])
    np.testing.assert_array_equal(want[1], [0, NAN, 0])
    np.testing.assert_array_equal(want[2], [0, 0])
    assert want[3].dtype == np.bool_ and want[3].tolist() == [True]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_check_finite_and_unscale_finite(dtype):
    b, res = _unscale_program([[2, 3], [4]], dtype)
    rng = np.random.default_rng(0)
    feed = {"x0": rng.standard_normal([2, 3]).astype(dtype), "x1": rng.standard_normal([4]).astype(dtype)}
    want, got, _ = _run_both(b, res, feed, {"loss_scaling_0": np.array([1024], np.float32)})
    assert want[2].tolist() == [False] and got[2].tolist() == [False]
    for w, g, x in zip(want[:2], got[:2], feed.values()):
        assert g.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(w, g)
        np.testing.assert_allclose(w, x.astype(np.float32) / 1024, rtol=1e-3)


# (found, scale, good, bad, stop_update) -> (scale, good, bad), incr/decr every 2 steps,
# ratios 2 and 0.5: read from Paddle 3.3.1's `_C_ops.update_loss_scaling_`.
PADDLE_STEPS = [
    ((True, 8.0, 1, 0, False), (8.0, 0, 1)),
    ((True, 8.0, 1, 1, False), (4.0, 0, 0)),
    ((False, 8.0, 1, 1, False), (16.0, 0, 0)),
    ((False, 8.0, 0, 1, False), (8.0, 1, 0)),
    ((True, 1.5, 0, 1, False), (1.0, 0, 0)),      # never below 1
    ((False, 3e38, 1, 0, False), (3e38, 0, 0)),   # an infinite scale is not taken
    ((True, 8.0, 1, 1, True), (8.0, 1, 1)),       # stop_update: only the grads are zeroed
    ((False, 8.0, 1, 1, True), (8.0, 1, 1)),
    ((False, 8.0, 5, 1, False), (8.0, 6, 0)),     # counters compare with ==
    ((True, 8.0, 1, 5, False), (8.0, 0, 6)),
]


@pytest.mark.parametrize("case", PADDLE_STEPS, ids=[str(c[0]) for c in PADDLE_STEPS])
def test_update_loss_scaling_matches_paddle(case):
    (found, scale, good, bad, stop), (w_scale, w_good, w_bad) = case
    b = ProgramBuilder()
    x = b.data("g", [2], "float32")
    f = b.data("found", [1], "bool")
    s, g0, b0 = (b.param(n, [1], d) for n, d in (("loss_scaling_0", "float32"), ("num_good_steps_0", "int32"),
                                                  ("num_bad_steps_0", "int32")))
    op = b.op(pd.UpdateLossScalingOp.make(
        x, f, s, g0, b0, incr_every_n_steps=2, decr_every_n_nan_or_inf=2, incr_ratio=2.0, decr_ratio=0.5,
        stop_update=stop, name=["", "loss_scaling_0", "num_good_steps_0", "num_bad_steps_0"]))
    feed = {"g": np.array([1, 2], np.float32), "found": np.array([found])}
    scope = {"loss_scaling_0": np.array([scale], np.float32), "num_good_steps_0": np.array([good], np.int32),
             "num_bad_steps_0": np.array([bad], np.int32)}
    want, got, compiled_scope = _run_both(b, list(op.results), feed, scope)
    for w, gv in zip(want, got):
        np.testing.assert_array_equal(w, gv)
    np.testing.assert_array_equal(want[0], [0, 0] if found else [1, 2])
    assert (float(want[1][0]), int(want[2][0]), int(want[3][0])) == (np.float32(w_scale), w_good, w_bad)
    assert compiled_scope["loss_scaling_0"][0] == np.float32(w_scale)
    assert compiled_scope["num_good_steps_0"][0] == w_good and compiled_scope["num_bad_steps_0"][0] == w_bad


def test_typing_errors_are_clear():
    b = ProgramBuilder()
    x = b.data("g", [2], "float32")
    s64 = b.param("s", [1], "float64")
    with pytest.raises(VerifyException, match="scale must be a one-element float32"):
        pd.CheckFiniteAndUnscaleOp.make(x, s64)
    s = b.param("s32", [1], "float32")
    i = b.param("i", [1], "int32")
    with pytest.raises(VerifyException, match="found_inf must be a one-element bool"):
        pd.UpdateLossScalingOp.make(x, s, s, i, i)
    f = b.data("f", [1], "bool")
    with pytest.raises(VerifyException, match="decr_ratio"):
        pd.UpdateLossScalingOp.make(x, f, s, i, i, decr_ratio=1.5)


def test_loss_scaling_ops_carry_no_gradient():
    load_vjp_rules()
    assert pd.CheckFiniteAndUnscaleOp in NON_DIFFERENTIABLE and pd.UpdateLossScalingOp in NON_DIFFERENTIABLE
    assert pd.UpdateLossScalingOp.WRITES_PERSISTABLE and not pd.CheckFiniteAndUnscaleOp.WRITES_PERSISTABLE
