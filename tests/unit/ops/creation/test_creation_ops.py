"""Creation and random ops (dialects/pd/creation.py, frontend/ops/creation.py): ranges,
eye, empty, the random tensors' distributions and seeding (`paddle.seed`, eager and
static), dtypes, argument errors, and that no gradient flows through them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.frontend import core
from pullback.passes.vjp import NON_DIFFERENTIABLE
from pullback.runtime.kernels import load_all
from pullback.testing import run_op
from xdsl.utils.exceptions import VerifyException

load_all()


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()
    paddle.seed(0)


@pytest.mark.parametrize("args,kwargs,ref", [
    ((5,), {}, np.arange(5)),
    ((2, 9, 3), {}, np.arange(2, 9, 3)),
    ((5, 0, -2), {}, np.arange(5, 0, -2)),
    ((0.0, 1.0, 0.3), {}, np.arange(0.0, 1.0, 0.3, dtype=np.float32)),
    ((1, 4), {"dtype": "float64"}, np.arange(1, 4, dtype=np.float64)),
    ((3, 1), {}, np.arange(3, 1)),
])
def test_arange(args, kwargs, ref):
    got = paddle.arange(*args, **kwargs)
    assert got.dtype == ref.dtype.name and got.shape == list(ref.shape)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-6)


def test_linspace_eye_empty():
    np.testing.assert_allclose(paddle.linspace(-1, 2, 7).numpy(), np.linspace(-1, 2, 7), rtol=1e-6)
    assert paddle.linspace(0, 1, 3, dtype="float64").dtype == "float64"
    np.testing.assert_array_equal(paddle.eye(3).numpy(), np.eye(3))
    np.testing.assert_array_equal(paddle.eye(2, 4, dtype="int64").numpy(), np.eye(2, 4, dtype=np.int64))
    e = paddle.empty([2, 3], dtype="float64")
    assert e.shape == [2, 3] and e.dtype == "float64"
    assert paddle.empty_like(e).shape == [2, 3]


def test_random_distributions_and_dtypes():
    paddle.seed(11)
    u = paddle.uniform([4000], min=2.0, max=3.0).numpy()
    assert u.dtype == np.float32 and 2.0 <= u.min() and u.max() < 3.0 and abs(u.mean() - 2.5) < 0.02
    r = paddle.rand([2000], dtype="float64").numpy()
    assert r.dtype == np.float64 and 0 <= r.min() and r.max() < 1
    n = paddle.randn([4000]).numpy()
    assert abs(n.mean()) < 0.06 and abs(n.std() - 1) < 0.05
    m = paddle.normal(3.0, 0.5, [4000]).numpy()
    assert abs(m.mean() - 3) < 0.03 and abs(m.std() - 0.5) < 0.03
    mt = paddle.normal(paddle.to_tensor([0.0, 100.0]), paddle.to_tensor([1e-3, 1e-3])).numpy()
    np.testing.assert_allclose(mt, [0, 100], atol=0.01)
    i = paddle.randint(-3, 4, [3000]).numpy()
    assert i.dtype == np.int64 and set(np.unique(i)) == set(range(-3, 4))
    assert paddle.randint(5, shape=[2, 2], dtype="int32").dtype == "int32"
    p = paddle.randperm(10).numpy()
    np.testing.assert_array_equal(np.sort(p), np.arange(10))
    b = paddle.bernoulli(paddle.full([4000], 0.3)).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.03
    assert paddle.standard_normal([2, 3]).shape == [2, 3]
    like = paddle.randint_like(paddle.zeros([2, 2], dtype="int32"), 0, 3)
    assert like.dtype == "int32" and like.shape == [2, 2]


def test_paddle_seed_repeats_eager_samples_and_calls_differ():
    paddle.seed(5)
    a = [paddle.rand([3]).numpy(), paddle.randn([3]).numpy(), paddle.randint(0, 100, [3]).numpy()]
    paddle.seed(5)
    b = [paddle.rand([3]).numpy(), paddle.randn([3]).numpy(), paddle.randint(0, 100, [3]).numpy()]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(paddle.rand([3]).numpy(), paddle.rand([3]).numpy())
    # an explicit seed fixes the sample
    np.testing.assert_array_equal(paddle.uniform([3], seed=9).numpy(), paddle.uniform([3], seed=9).numpy())


def test_static_mode_random_and_ranges():
    paddle.enable_static()
    paddle.seed(2)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 3], "float32")
        r = paddle.rand([2, 3])
        g = paddle.fluid.layers.gaussian_random([2, 3], mean=1.0, std=0.0)
        ar = paddle.arange(3, dtype="float32")
        out = x + ar
        rng = paddle.fluid.layers.range(0, 6, 2, "int64")
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    feed = {"x": np.ones((4, 3), np.float32)}
    v1 = exe.run(main, feed=feed, fetch_list=[r, g, out, rng])
    v2 = exe.run(main, feed=feed, fetch_list=[r])
    np.testing.assert_array_equal(v1[0], v2[0])  # a seeded static program repeats
    assert 0 <= v1[0].min() and v1[0].max() < 1
    np.testing.assert_array_equal(v1[1], np.ones((2, 3)))
    np.testing.assert_array_equal(v1[2], 1 + np.arange(3)[None].repeat(4, 0))
    np.testing.assert_array_equal(v1[3], [0, 2, 4])


def test_no_gradient_through_creation_ops():
    for cls in (pd.ArangeOp, pd.LinspaceOp, pd.EyeOp, pd.RandintOp, pd.RandpermOp, pd.BernoulliOp):
        assert cls in NON_DIFFERENTIABLE
    p = paddle.to_tensor([0.2, 0.7], stop_gradient=False)
    b = paddle.bernoulli(p)
    (g,) = paddle.grad((b * p).sum(), [p])  # only the product's path carries gradient
    np.testing.assert_array_equal(g.numpy(), b.numpy())


def test_kernels_and_typing_rules():
    np.testing.assert_array_equal(run_op(pd.ArangeOp, start=1.0, end=2.0, step=0.25, dtype="float64"),
                                  [1.0, 1.25, 1.5, 1.75])
    assert run_op(pd.RandpermOp, n=4, seed=3).dtype == np.int64
    with pytest.raises(VerifyException, match="'pd.arange': step must not be 0"):
        pd.ArangeOp.make(start=0.0, end=1.0, step=0.0)
    with pytest.raises(VerifyException, match="'pd.randint': low \\(3\\) must be less than high \\(3\\)"):
        pd.RandintOp.make(low=3, high=3, shape=[2])
    with pytest.raises(VerifyException, match="'pd.randint': dtype must be int32 or int64"):
        pd.RandintOp.make(low=0, high=3, shape=[2], dtype="float32")


def test_argument_errors():
    with pytest.raises(ValueError, match="arange: step must not be 0"):
        paddle.arange(0, 3, 0)
    with pytest.raises(ValueError, match="randint: low \\(4\\) must be less than high \\(2\\)"):
        paddle.randint(4, 2)
    with pytest.raises(TypeError, match="dtype must be float32 or float64, got int64"):
        paddle.rand([2], dtype="int64")
    with pytest.raises(ValueError, match="uniform: shape must not contain negative"):
        paddle.uniform([-1, 2])
    with pytest.raises(ValueError, match="bernoulli: p must be in"):
        paddle.bernoulli(paddle.ones([2]), p=1.5)
    with pytest.raises(ValueError, match="randperm: n must be a positive int"):
        paddle.randperm(0)
