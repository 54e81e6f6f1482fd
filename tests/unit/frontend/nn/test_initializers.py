"""Parameter creation as Paddle users write it: every `paddle.nn.initializer`,
`ParamAttr` fields, `paddle.create_parameter` / `Layer.create_parameter` in both
modes, `set_global_initializer`, `calculate_gain`."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pullback as paddle

I = paddle.nn.initializer


@pytest.fixture
def static_mode(static_programs):
    """Fresh static programs, names and scope (`conftest.static_programs`)."""
    return static_programs


def _static_value(startup, init, shape, dtype="float32", seed=0):
    startup.random_seed = seed
    w = paddle.static.create_parameter(shape, dtype, attr=paddle.ParamAttr(initializer=init))
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    exe.run(startup)
    return w, paddle.static.global_scope()[w.name]


def test_assign_static_and_eager(static_mode, dynamic_mode=None):
    _, startup = static_mode
    value = np.arange(6, dtype="float32").reshape(2, 3) / 4
    w, got = _static_value(startup, I.Assign(value), [2, 3])
    np.testing.assert_array_equal(got, value)
    assert [op.type for op in startup.global_block().ops] == ["assign_value"]
    with pytest.raises(ValueError, match=r"value's shape \[2, 3\] does not match"):
        paddle.static.create_parameter([3, 2], "float32", attr=paddle.ParamAttr(initializer=I.Assign(value)))


def test_initializers_in_eager_layers(dynamic_mode):
    value = np.array([[1.0, -2.0], [0.5, 3.0]], "float32")
    lin = paddle.nn.Linear(2, 2, weight_attr=paddle.ParamAttr(initializer=I.Assign(value)),
                           bias_attr=paddle.ParamAttr(initializer=I.Constant(0.5)))
    np.testing.assert_array_equal(lin.weight.numpy(), value)
    np.testing.assert_array_equal(lin.bias.numpy(), [0.5, 0.5])
    w = paddle.create_parameter([3, 4], "float64", default_initializer=I.Assign(np.ones([3, 4])))
    assert w.name == "create_parameter_0.w_0" and w.dtype == "float64" and not w.stop_gradient
    np.testing.assert_array_equal(w.numpy(), np.ones([3, 4]))
    b = paddle.create_parameter([4], "float32", is_bias=True)
    np.testing.assert_array_equal(b.numpy(), np.zeros(4))


def test_truncated_normal_stays_within_two_std(static_mode):
    _, startup = static_mode
    _, got = _static_value(startup, I.TruncatedNormal(mean=1.0, std=0.5), [200, 50], seed=3)
    assert got.min() >= 0.0 and got.max() <= 2.0
    assert abs(got.mean() - 1.0) < 0.02 and 0.4 < got.std() < 0.5  # truncation shrinks std to ~0.44
    assert [op.type for op in startup.global_block().ops] == ["truncated_gaussian_random"]


def test_orthogonal_rows_or_columns_are_orthonormal(static_mode):
    _, startup = static_mode
    _, wide = _static_value(startup, I.Orthogonal(gain=2.0), [3, 2, 4], seed=5)
    flat = wide.reshape(3, 8)
    np.testing.assert_allclose(flat @ flat.T, 4.0 * np.eye(3), atol=1e-5)
    _, tall = _static_value(startup, I.Orthogonal(), [6, 2], seed=5)
    np.testing.assert_allclose(tall.T @ tall, np.eye(2), atol=1e-5)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        paddle.static.create_parameter([4], "float32", attr=paddle.ParamAttr(initializer=I.Orthogonal()))


def test_dirac_makes_identity_convolutions(dynamic_mode):
    conv = paddle.nn.Conv2D(3, 3, 3, padding=1, weight_attr=paddle.ParamAttr(initializer=I.Dirac()),
                            bias_attr=False)
    x = paddle.to_tensor(np.random.default_rng(0).normal(size=(1, 3, 5, 5)).astype("float32"))
    np.testing.assert_allclose(conv(x).numpy(), x.numpy(), rtol=1e-6)
    w = paddle.create_parameter([4, 2, 3], "float32", default_initializer=I.Dirac(groups=2))
    want = np.zeros([4, 2, 3])
    for g in range(2):
        for j in range(2):
            want[g * 2 + j, j, 1] = 1.0
    np.testing.assert_array_equal(w.numpy(), want)


@pytest.mark.parametrize(
    "init, check",
    [
        (I.Uniform(-0.3, 0.2), lambda v, fi, fo: v.min() >= -0.3 and v.max() < 0.2),
        (I.Normal(0.5, 0.1), lambda v, fi, fo: abs(v.mean() - 0.5) < 0.01 and abs(v.std() - 0.1) < 0.01),
        (I.XavierUniform(), lambda v, fi, fo: np.abs(v).max() <= math.sqrt(6 / (fi + fo))),
        (I.XavierNormal(), lambda v, fi, fo: abs(v.std() - math.sqrt(2 / (fi + fo))) < 0.01),
        (I.KaimingUniform(), lambda v, fi, fo: np.abs(v).max() <= math.sqrt(6 / fi)
         and np.abs(v).max() > 0.9 * math.sqrt(6 / fi)),
        (I.KaimingNormal(), lambda v, fi, fo: abs(v.std() - math.sqrt(2 / fi)) < 0.01),
        (I.KaimingNormal(nonlinearity="leaky_relu", negative_slope=0.5),
         lambda v, fi, fo: abs(v.std() - math.sqrt(2 / 1.25) / math.sqrt(fi)) < 0.01),
    ],
)
def test_random_initializers_follow_their_distributions(dynamic_mode, init, check):
    paddle.seed(11)
    w = paddle.create_parameter([64, 96], "float32", default_initializer=init)
    assert check(w.numpy(), 64, 96)


def test_calculate_gain():
    assert I.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert I.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert I.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert I.calculate_gain("conv2d") == 1.0
    with pytest.raises(ValueError, match="nonlinearity function swish is not supported"):
        I.calculate_gain("swish")


def test_set_global_initializer_precedence(dynamic_mode):
    I.set_global_initializer(I.Constant(2.0), I.Constant(-1.0))
    try:
        lin = paddle.nn.Linear(2, 3)
        np.testing.assert_array_equal(lin.weight.numpy(), np.full([2, 3], 2.0))
        np.testing.assert_array_equal(lin.bias.numpy(), np.full([3], -1.0))
        own = paddle.nn.Linear(2, 3, weight_attr=paddle.ParamAttr(initializer=I.Constant(7.0)))
        np.testing.assert_array_equal(own.weight.numpy(), np.full([2, 3], 7.0))
    finally:
        I.set_global_initializer(None)
    assert not np.all(paddle.nn.Linear(2, 3).weight.numpy() == 2.0)
    with pytest.raises(TypeError, match="weight_init must be an Initializer"):
        I.set_global_initializer("xavier")


def test_set_global_initializer_in_static_programs(static_mode):
    main, startup = static_mode
    I.set_global_initializer(I.Constant(3.0))
    try:
        x = paddle.static.data("x", [None, 2])
        paddle.static.nn.fc(x, 2)
    finally:
        I.set_global_initializer(None)
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    exe.run(startup)
    scope = paddle.static.global_scope()
    np.testing.assert_array_equal(scope["fc_0.w_0"], np.full([2, 2], 3.0))
    np.testing.assert_array_equal(scope["fc_0.b_0"], np.zeros([2]))  # no global bias init


def test_param_attr_fields_reach_the_parameter(dynamic_mode):
    reg = paddle.regularizer.L2Decay(0.01)
    attr = paddle.ParamAttr(name="my_w", initializer=I.Constant(1.0), learning_rate=0.5,
                            regularizer=reg, trainable=True, need_clip=False)
    w = paddle.create_parameter([2], "float32", attr=attr)
    assert w.name == "my_w" and w.optimize_attr == {"learning_rate": 0.5}
    assert w.regularizer is reg and w.need_clip is False and w.trainable
    frozen = paddle.create_parameter([2], "float32", attr=paddle.ParamAttr(trainable=False))
    assert frozen.stop_gradient and not frozen.trainable


def test_layer_create_parameter_static_and_fluid_spellings(static_mode):
    main, _ = static_mode

    class Scale(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter([3], attr=paddle.ParamAttr(regularizer=paddle.regularizer.L1Decay(0.1)),
                                           default_initializer=I.Constant(2.0))

        def forward(self, x):
            return x * self.w

    layer = Scale()
    assert layer.w.name == "scale_0.w_0" and isinstance(layer.w.regularizer, paddle.regularizer.L1Decay)
    fw = paddle.fluid.layers.create_parameter([2, 2], "float32", name="fw",
                                              default_initializer=paddle.fluid.initializer.ConstantInitializer(1.0))
    assert fw.name == "fw" and any(p is fw for p in main.all_parameters())
    assert paddle.fluid.initializer.NumpyArrayInitializer is I.Assign
    assert paddle.fluid.initializer.TruncatedNormalInitializer is I.TruncatedNormal
