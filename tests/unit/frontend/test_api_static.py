"""`import pullback as paddle`: namespaces, feeds, layers and parameters.

Names and structure of the programs the seed documents build (`fc_0.w_0`,
`my_fc.w_0`, `embedding_0.w_0`, `block(0).all_parameters()` order, printed `pd` IR),
Paddle's naming of layer outputs, initializers, and argument errors (type and
message fragment).
"""

from __future__ import annotations

import importlib
import math
import re
import sys

import numpy as np
import pytest

import pullback as paddle
from pullback import fluid
from pullback.frontend.api import registry


@pytest.fixture(autouse=True)
def static_programs(static_programs):
    """Fresh static programs, names and scope (`conftest.static_programs`)."""
    return static_programs


def _ops(program) -> list[str]:
    return [op.type for op in program.global_block().ops]


def _run_startup(startup) -> dict[str, np.ndarray]:
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    return dict(paddle.static.global_scope())


# ------------------------------------------------------------------------ namespaces


@pytest.mark.parametrize(
    "module",
    [
        "pullback.static", "pullback.static.nn", "pullback.fluid", "pullback.fluid.layers",
        "pullback.fluid.backward", "pullback.fluid.initializer", "pullback.fluid.optimizer",
        "pullback.fluid.unique_name", "pullback.nn", "pullback.nn.functional",
        "pullback.nn.initializer", "pullback.optimizer", "pullback.utils",
        "pullback.utils.unique_name", "pullback.autograd",
    ],
)
def test_namespaces_are_importable_submodules(module):
    mod = importlib.import_module(module)
    assert sys.modules[module] is mod
    parent, _, child = module.rpartition(".")
    assert getattr(importlib.import_module(parent), child) is mod


def test_from_imports_and_attribute_access_agree():
    from pullback.fluid import layers
    from pullback.nn import functional as F

    assert layers is paddle.fluid.layers and F is paddle.nn.functional
    assert paddle.fluid.layers.fc is not paddle.static.nn.fc  # two spellings, one core
    assert paddle.static.Executor is fluid.Executor
    assert paddle.ParamAttr is fluid.ParamAttr
    assert paddle.utils.unique_name is fluid.unique_name
    assert fluid.backward.append_backward is paddle.static.append_backward


def test_seed_names_exist_in_their_namespaces():
    for ns, names in {
        paddle: ["enable_static", "disable_static", "in_dynamic_mode", "mean", "ParamAttr", "CPUPlace"],
        paddle.static: ["Program", "program_guard", "default_main_program", "default_startup_program",
                        "data", "Executor", "global_scope", "scope_guard", "append_backward",
                        "gradients", "cpu_places", "CPUPlace"],
        paddle.static.nn: ["fc", "embedding", "conv2d"],
        fluid: ["Program", "program_guard", "default_main_program", "default_startup_program",
                "Executor", "CPUPlace", "ParamAttr", "gradients", "data"],
        fluid.layers: ["data", "fc", "embedding", "conv2d", "square_error_cost", "mean", "relu"],
        fluid.backward: ["append_backward", "gradients", "calc_gradient"],
        paddle.nn.functional: ["square_error_cost", "relu"],
        paddle.nn.initializer: ["Constant", "Uniform", "Normal", "XavierUniform", "XavierNormal"],
        fluid.initializer: ["Constant", "Uniform", "Normal", "Xavier", "ConstantInitializer"],
        paddle.optimizer: ["SGD", "Momentum", "Adam"],
        fluid.optimizer: ["SGD", "SGDOptimizer", "Momentum", "Adam"],
    }.items():
        missing = [n for n in names if not hasattr(ns, n)]
        assert not missing, f"{ns.__name__} lacks {missing}"


def test_family_exports_reach_every_namespace():
    for kind, ns in [("PADDLE", paddle), ("FUNCTIONAL", paddle.nn.functional),
                     ("STATIC_NN", paddle.static.nn), ("FLUID_LAYERS", fluid.layers)]:
        for fam, table in registry.exports_by_family(kind).items():
            for name in table:
                assert hasattr(ns, name), f"{fam}.{kind} exports {name}, missing from {ns.__name__}"


def test_no_two_families_export_the_same_name():
    for kind in registry.LIST_EXPORTS + registry.DICT_EXPORTS:
        seen: dict[str, str] = {}
        for fam, table in registry.exports_by_family(kind).items():
            for name in table:
                assert seen.get(name) in (None, fam), (
                    f"{kind}: '{name}' exported by both {seen[name]} and {fam}"
                )
                seen[name] = fam


def test_tensor_methods_are_installed_on_variables():
    x = paddle.static.data("x", [None, 3], "float32")
    for name in registry.tensor_methods():
        assert hasattr(x, name), name


def test_unknown_root_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        paddle.no_such_thing  # noqa: B018


# -------------------------------------------------------------------------- feeds


def test_static_data_keeps_shape_and_none_is_dynamic(static_programs):
    main, _ = static_programs
    x = paddle.static.data(name="x", shape=[None, 13], dtype="int64")
    assert (x.name, x.shape, x.dtype, x.stop_gradient, x.persistable) == ("x", [-1, 13], "int64", True, False)
    assert x.block is main.global_block() and x.op is None
    assert 'pd.data "x" : tensor<?x13xi64>' in str(main)


def test_fluid_layers_data_prepends_a_batch_dimension():
    assert fluid.layers.data(name="x", shape=[13], dtype="float32").shape == [-1, 13]
    assert fluid.layers.data(name="a", shape=[2, 8, 8]).shape == [-1, 2, 8, 8]
    assert fluid.layers.data(name="b", shape=[3], append_batch_size=False).shape == [3]
    assert fluid.layers.data(name="c", shape=[-1, 3]).shape == [-1, 3]
    assert fluid.data(name="d", shape=[None, 3]).shape == [-1, 3]
    e = fluid.layers.data("e", [1], "int64")  # dtype given in third place
    assert (e.shape, e.dtype) == ([-1, 1], "int64")


def test_fluid_data_switches_to_static_mode():
    paddle.disable_static()
    x = fluid.layers.data(name="x", shape=[13])
    assert not paddle.in_dynamic_mode() and x.shape == [-1, 13]


def test_static_data_in_dynamic_mode_says_to_enable_static():
    paddle.disable_static()
    with pytest.raises(RuntimeError, match="paddle.enable_static"):
        paddle.static.data("x", [None, 3])


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        ({"name": 3, "shape": [1]}, TypeError, "name must be a non-empty str"),
        ({"name": "x", "shape": 3}, TypeError, "shape must be a list or tuple"),
        ({"name": "x", "shape": [1.5]}, TypeError, "shape entries must be ints or None"),
        ({"name": "x", "shape": [-2]}, ValueError, "invalid dimension -2"),
        ({"name": "x", "shape": [1], "dtype": "float8_e5m2"}, TypeError, "unsupported dtype 'float8_e5m2'"),
    ],
)
def test_data_argument_errors(kwargs, error, fragment):
    with pytest.raises(error, match=fragment):
        paddle.static.data(**kwargs)


def test_data_name_clash_is_an_error_unless_identical():
    x = paddle.static.data("x", [None, 3])
    assert paddle.static.data("x", [None, 3]) is x
    with pytest.raises(ValueError, match="'x' already exists"):
        paddle.static.data("x", [None, 4])


# --------------------------------------------------------------------------- layers


def test_fit_a_line_fc_names_and_ir(static_programs):
    main, startup = static_programs
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y_predict = fluid.layers.fc(input=x, size=1, act=None)
    assert y_predict.name == "fc_0.tmp_1"
    assert [p.name for p in main.block(0).all_parameters()] == ["fc_0.w_0", "fc_0.b_0"]
    w, b = main.block(0).all_parameters()
    assert (w.shape, b.shape, w.persistable, w.stop_gradient, w.trainable) == ([13, 1], [1], True, False, True)
    text = str(main)
    assert '%fc_0.w = pd.parameter "fc_0.w_0" : tensor<13x1xf32>' in text
    assert 'pd.matmul %x, %fc_0.w {name = "fc_0.tmp_0"}' in text
    assert 'pd.elementwise_add %fc_0.tmp, %fc_0.b {axis = 1 : i64, name = "fc_0.tmp_1"}' in text
    # Startup: Xavier uniform for the weight, zeros for the bias, named like them.
    assert _ops(startup) == ["uniform_random", "fill_constant"]
    values = _run_startup(startup)
    limit = math.sqrt(6.0 / (13 + 1))
    assert values["fc_0.w_0"].shape == (13, 1) and values["fc_0.w_0"].dtype == np.float32
    assert np.all(np.abs(values["fc_0.w_0"]) <= limit) and np.ptp(values["fc_0.w_0"]) > 0
    np.testing.assert_array_equal(values["fc_0.b_0"], np.zeros(1, np.float32))


def test_fc_output_names_with_activation_and_counter():
    x = paddle.static.data("x", [None, 4])
    h = paddle.static.nn.fc(x, 3, activation="relu")
    out = paddle.static.nn.fc(h, 2, name="my_fc", bias_attr=False)
    other = paddle.static.nn.fc(h, 2)
    assert h.name == "fc_0.tmp_2"
    assert out.name == "my_fc.tmp_0"
    assert other.name == "fc_1.tmp_1"
    names = [p.name for p in paddle.static.default_main_program().all_parameters()]
    assert names == ["fc_0.w_0", "fc_0.b_0", "my_fc.w_0", "fc_1.w_0", "fc_1.b_0"]


def test_fc_flattens_trailing_dimensions():
    x = paddle.static.data("x", [None, 13, 256])
    y = paddle.static.nn.fc(x, 1)
    z = paddle.static.nn.fc(x, 5, num_flatten_dims=2, name="per_step")
    assert paddle.static.default_main_program().block(0).var("fc_0.w_0").shape == [13 * 256, 1]
    assert y.shape == [-1, 1] and z.shape == [-1, 13, 5]


def test_fc_forward_value_matches_numpy(static_programs):
    main, startup = static_programs
    x = paddle.static.data("x", [None, 2, 3])
    y = paddle.static.nn.fc(x, 4, activation="sigmoid")
    exe = paddle.static.Executor()
    exe.run(startup)
    scope = paddle.static.global_scope()
    xv = np.random.default_rng(0).normal(size=(5, 2, 3)).astype(np.float32)
    (got,) = exe.run(main, feed={"x": xv}, fetch_list=[y])
    want = 1 / (1 + np.exp(-(xv.reshape(5, 6) @ scope["fc_0.w_0"] + scope["fc_0.b_0"])))
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_fc_with_several_inputs_sums_products():
    a = paddle.static.data("a", [None, 2])
    b = paddle.static.data("b", [None, 3])
    y = paddle.static.nn.fc([a, b], 4)
    names = [p.name for p in paddle.static.default_main_program().all_parameters()]
    assert names == ["fc_0.w_0", "fc_0.w_1", "fc_0.b_0"]
    assert y.name == "fc_0.tmp_3" and "pd.sum" in str(paddle.static.default_main_program())


@pytest.mark.parametrize(
    "call, error, fragment",
    [
        (lambda x: paddle.static.nn.fc(x, 0), ValueError, "'size' must be a positive int"),
        (lambda x: paddle.static.nn.fc(np.ones(3), 2), TypeError, "must be a Variable"),
        (lambda x: paddle.static.nn.fc(x, 2, num_flatten_dims=2), ValueError, "num_flatten_dims must be in [1, 1]"),
        (lambda x: paddle.static.nn.fc(x, 2, activation="nope"), ValueError, "unknown activation 'nope'"),
        (lambda x: paddle.static.nn.fc(x, 2, weight_attr=False), ValueError, "weight cannot be disabled"),
        (lambda x: paddle.static.nn.fc(x, 2, weight_attr=3), TypeError, "a parameter attribute must be"),
    ],
)
def test_fc_argument_errors(call, error, fragment):
    x = paddle.static.data("x", [None, 3])
    with pytest.raises(error, match=re.escape(fragment)):
        call(x)


def test_seed_embedding_and_my_fc_forward_program(static_programs):
    main, _ = static_programs
    x = paddle.static.data(name="x", shape=[None, 13], dtype="int64")
    y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
    x_emb = paddle.static.nn.embedding(x, size=[100, 256])
    y_predict = paddle.static.nn.fc(x=x_emb, size=1, activation=None, name="my_fc")
    loss = paddle.nn.functional.square_error_cost(input=y_predict, label=y)
    avg_loss = paddle.mean(loss)
    params = main.block(0).all_parameters()
    assert [p.name for p in params] == ["embedding_0.w_0", "my_fc.w_0", "my_fc.b_0"]
    assert [p.name for p in params if "w_" in p.name] == ["embedding_0.w_0", "my_fc.w_0"]
    assert x_emb.name == "embedding_0.tmp_0" and x_emb.shape == [-1, 13, 256]
    assert params[0].shape == [100, 256] and params[1].shape == [3328, 1]
    assert avg_loss.shape == [] and avg_loss.dtype == "float32"
    text = str(main)
    assert text.startswith("builtin.module {")
    assert 'pd.lookup_table %x, %embedding_0.w {name = "embedding_0.tmp_0"}' in text
    assert loss.name == "square_error_cost_0.tmp_1"  # Paddle's elementwise_sub + square
    assert "pd.elementwise_sub" in text and "pd.square" in text and "pd.mean" in text


def test_fluid_embedding_drops_the_trailing_one(static_programs):
    main, startup = static_programs
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
    emb = fluid.layers.embedding(input=ids, size=[10, 4], padding_idx=0)
    assert emb.shape == [-1, 4] and emb.name == "embedding_0.tmp_0"
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    table = fluid.global_scope()["embedding_0.w_0"]
    (got,) = exe.run(main, feed={"ids": np.array([[3], [0]], np.int64)}, fetch_list=[emb])
    np.testing.assert_array_equal(got, np.stack([table[3], np.zeros(4, np.float32)]))
    with pytest.raises(ValueError, match="last dimension of input must be 1"):
        fluid.layers.embedding(input=fluid.layers.data("bad", [2], dtype="int64"), size=[10, 4])


def test_embedding_argument_errors():
    ids = paddle.static.data("ids", [None, 2], "int64")
    with pytest.raises(TypeError, match="int32 or int64 ids"):
        paddle.static.nn.embedding(paddle.static.data("f", [None, 2]), size=[10, 4])
    with pytest.raises(ValueError, match=r"size must be \[vocab_size, emb_dim\]"):
        paddle.static.nn.embedding(ids, size=10)
    with pytest.raises(ValueError, match="padding_idx 10 is out of range"):
        paddle.static.nn.embedding(ids, size=[10, 4], padding_idx=10)


def test_seed_gradients_conv_program_structure(static_programs):
    main, startup = static_programs
    x = fluid.layers.data(name="x", shape=[2, 8, 8], dtype="float32")
    x.stop_gradient = False
    y = fluid.layers.conv2d(x, 4, 1, bias_attr=False)
    y = fluid.layers.relu(y)
    y = fluid.layers.conv2d(y, 4, 1, bias_attr=False)
    y = fluid.layers.relu(y)
    assert [p.name for p in main.all_parameters()] == ["conv2d_0.w_0", "conv2d_1.w_0"]
    assert [p.shape for p in main.all_parameters()] == [[4, 2, 1, 1], [4, 4, 1, 1]]
    assert y.shape == [-1, 4, 8, 8]
    assert _ops(startup) == ["gaussian_random", "gaussian_random"]
    (z,) = fluid.gradients([y], x)
    assert z.name == "x@GRAD" and z.shape == [-1, 2, 8, 8]


def test_conv2d_bias_activation_names_and_values(static_programs):
    main, startup = static_programs
    x = paddle.static.data("x", [None, 3, 5, 5])
    y = paddle.static.nn.conv2d(x, 2, 3, padding=1, act="relu", name="c")
    assert y.name == "c.tmp_2" and y.shape == [-1, 2, 5, 5]
    assert [p.name for p in main.all_parameters()] == ["c.w_0", "c.b_0"]
    exe = paddle.static.Executor()
    exe.run(startup)
    scope = paddle.static.global_scope()
    xv = np.random.default_rng(1).normal(size=(1, 3, 5, 5)).astype(np.float32)
    (got,) = exe.run(main, feed={"x": xv}, fetch_list=["c.tmp_2"])
    w, b = scope["c.w_0"], scope["c.b_0"]
    padded = np.pad(xv, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((1, 2, 5, 5), np.float32)
    for i in range(5):
        for j in range(5):
            want[0, :, i, j] = np.einsum("ckl,ockl->o", padded[0, :, i:i + 3, j:j + 3], w)
    np.testing.assert_allclose(got, np.maximum(want + b[None, :, None, None], 0), rtol=1e-4, atol=1e-5)
    # Paddle's default filter init: normal with std sqrt(2 / (kh * kw * C)).
    (init,) = [op.ir for op in startup.global_block().ops if op.type == "gaussian_random"]
    assert init.prop("std") == pytest.approx(math.sqrt(2 / 27)) and init.prop("mean") == 0.0


def test_conv2d_argument_errors():
    x = paddle.static.data("x", [None, 3, 5, 5])
    with pytest.raises(ValueError, match="divisible by groups"):
        paddle.static.nn.conv2d(x, 4, 3, groups=2)
    with pytest.raises(ValueError, match="input must be 4-D"):
        paddle.static.nn.conv2d(paddle.static.data("v", [None, 3]), 4, 3)
    with pytest.raises(ValueError, match="data_format must be 'NCHW' or 'NHWC'"):
        paddle.static.nn.conv2d(x, 4, 3, data_format="NCWH")
    nhwc = paddle.static.nn.conv2d(paddle.static.data("xh", [None, 5, 5, 3]), 4, 3, data_format="NHWC")
    assert nhwc.shape == [-1, 3, 3, 4]
    with pytest.raises(ValueError, match="padding must be"):
        paddle.static.nn.conv2d(x, 4, 3, padding="FULL")


def test_layers_need_static_mode():
    x = paddle.static.data("x", [None, 3])
    paddle.disable_static()
    with pytest.raises(RuntimeError, match="paddle.enable_static"):
        paddle.static.nn.fc(x, 2)


# ----------------------------------------------------------- ParamAttr, initializers


def test_param_attr_name_initializer_and_sharing(static_programs):
    main, startup = static_programs
    x = paddle.static.data("x", [None, 3])
    shared = paddle.ParamAttr(name="shared_w", initializer=paddle.nn.initializer.Constant(0.5))
    paddle.static.nn.fc(x, 3, weight_attr=shared, bias_attr=False)
    paddle.static.nn.fc(x, 3, weight_attr="shared_w", bias_attr=False)
    assert [p.name for p in main.all_parameters()] == ["shared_w"]
    assert _ops(startup) == ["fill_constant"]
    np.testing.assert_array_equal(_run_startup(startup)["shared_w"], np.full((3, 3), 0.5, np.float32))
    with pytest.raises(ValueError, match="already exists with shape"):
        paddle.static.nn.fc(x, 4, weight_attr="shared_w")


def test_param_attr_trainable_false_freezes(static_programs):
    main, _ = static_programs
    x = paddle.static.data("x", [None, 3])
    paddle.static.nn.fc(x, 2, weight_attr=paddle.ParamAttr(trainable=False))
    assert [p.name for p in main.all_parameters()] == ["fc_0.b_0"]
    w = main.global_block().var("fc_0.w_0")
    assert w.persistable and w.stop_gradient and not w.trainable


def test_param_attr_errors():
    with pytest.raises(TypeError, match="initializer must be an Initializer"):
        paddle.ParamAttr(initializer="zeros")
    with pytest.raises(TypeError, match="name must be a str"):
        paddle.ParamAttr(name=3)


@pytest.mark.parametrize(
    "init, check",
    [
        (paddle.nn.initializer.Constant(2.0), lambda v: np.all(v == 2.0)),
        (paddle.nn.initializer.Uniform(-0.1, 0.1), lambda v: np.all(np.abs(v) <= 0.1) and v.std() > 0.03),
        (paddle.nn.initializer.Normal(1.0, 0.01), lambda v: abs(v.mean() - 1.0) < 0.01 and 0.005 < v.std() < 0.02),
        (paddle.nn.initializer.XavierUniform(), lambda v: np.all(np.abs(v) <= math.sqrt(6 / 300))),
        (paddle.nn.initializer.XavierNormal(), lambda v: 0.7 * math.sqrt(2 / 300) < v.std() < 1.3 * math.sqrt(2 / 300)),
        (fluid.initializer.Xavier(uniform=False), lambda v: 0.7 * math.sqrt(2 / 300) < v.std() < 1.3 * math.sqrt(2 / 300)),
        (paddle.nn.initializer.KaimingNormal(), lambda v: 0.7 * math.sqrt(2 / 100) < v.std() < 1.3 * math.sqrt(2 / 100)),
    ],
)
def test_initializers_produce_their_distribution(static_programs, init, check):
    _, startup = static_programs
    paddle.static.create_parameter([100, 200], "float32", name="p", default_initializer=init)
    v = _run_startup(startup)["p"]
    assert v.shape == (100, 200) and v.dtype == np.float32 and check(v)


def test_random_seed_makes_initialization_reproducible_and_distinct():
    def build(seed):
        main, startup = paddle.static.Program(), paddle.static.Program()
        startup.random_seed = seed
        with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
            x = paddle.static.data("x", [None, 4])
            paddle.static.nn.fc(paddle.static.nn.fc(x, 4), 4)
        with paddle.static.scope_guard(paddle.static.Scope()):
            return _run_startup(startup)

    a, b, c = build(5), build(5), build(6)
    np.testing.assert_array_equal(a["fc_0.w_0"], b["fc_0.w_0"])
    assert not np.array_equal(a["fc_0.w_0"], c["fc_0.w_0"])
    assert not np.array_equal(a["fc_0.w_0"], a["fc_1.w_0"])  # same shape, own seed


def test_initializer_called_paddle_style(static_programs):
    main, startup = static_programs
    p = paddle.static.create_parameter([2, 2], "float32", name="q")
    op = fluid.initializer.Constant(3.0)(p, startup.global_block())
    assert op.name == "pd.fill_constant"
    np.testing.assert_array_equal(_run_startup(startup)["q"], np.full((2, 2), 3.0, np.float32))


def test_create_global_var_is_persistable_and_not_trainable(static_programs):
    main, startup = static_programs
    v = paddle.static.create_global_var([1], 0.25, "float32", persistable=True, name="lr")
    assert v.persistable and not v.trainable and main.all_parameters() == []
    np.testing.assert_array_equal(_run_startup(startup)["lr"], np.array([0.25], np.float32))


def test_unique_name_guard_restarts_numbering():
    x = paddle.static.data("x", [None, 3])
    with paddle.utils.unique_name.guard():
        assert paddle.static.nn.fc(x, 2).name == "fc_0.tmp_1"
    with fluid.unique_name.guard():
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x2 = paddle.static.data("x", [None, 3])
            assert paddle.static.nn.fc(x2, 2).name == "fc_0.tmp_1"


def test_seed_seeds_the_generator_not_the_programs():
    """Paddle 3.x: `paddle.seed` reseeds the global generator (which unseeded random
    ops of every program draw from); programs' `random_seed` stays as it was."""
    before = paddle.static.default_main_program().random_seed
    assert paddle.seed(42).initial_seed() == 42
    assert paddle.static.default_main_program().random_seed == before
    with pytest.raises(ValueError, match="non-negative int"):
        paddle.seed(-1)


def test_equality_operators_compare_elementwise_as_in_paddle() -> None:
    """`==`/`!=` give bool tensors (static Variables and eager Tensors), so Paddle's
    accuracy idiom and `cond(i == 0, ...)` work; None and other objects compare by
    identity, and hashing stays by identity."""
    paddle.disable_static()
    try:
        pred = paddle.to_tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]).argmax(-1)
        label = paddle.to_tensor([1, 1, 1])
        eq = pred == label
        assert eq.dtype == paddle.bool
        np.testing.assert_array_equal(eq.numpy(), [True, False, True])
        np.testing.assert_array_equal((pred != 1).numpy(), [False, True, False])
        assert float((pred == label).astype("float32").mean()) == pytest.approx(2 / 3)
        assert (label == None) is False and (label != "x") is True  # noqa: E711
        np.testing.assert_array_equal((label == np.array([1, 0, 1])).numpy(), [True, False, True])
        assert {label: 1}[label] == 1 and label in [label]
    finally:
        paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        i = paddle.static.data("i", [1], "int64")
        out = paddle.static.nn.cond(
            i == 0, lambda: paddle.full([1], 1.0, "float32"), lambda: paddle.full([1], 2.0, "float32")
        )
        ne = i != 0
        with pytest.raises(TypeError, match="not a numpy array"):
            i == np.array([0])  # noqa: B015
    exe = paddle.static.Executor(paddle.CPUPlace())
    for v, want in ((0, 1.0), (3, 2.0)):
        got, flag = exe.run(main, feed={"i": np.array([v])}, fetch_list=[out, ne])
        assert got[0] == want and bool(flag[0]) == (v != 0)


def test_static_nn_group_norm_instance_norm_prelu() -> None:
    """The static layers create Paddle's parameters (shapes, initial values, names)
    and compute the reference formulas."""
    x = paddle.static.data("x", [None, 4, 3, 3], "float32")
    g = paddle.static.nn.group_norm(x, groups=2, act="relu")
    i = paddle.static.nn.instance_norm(x, param_attr=False)
    pa, pc, pe = (paddle.static.nn.prelu(x, m) for m in ("all", "channel", "element"))
    params = {p.name: p.shape for p in paddle.static.default_main_program().all_parameters()}
    assert params == {"group_norm_0.w_0": [4], "group_norm_0.b_0": [4], "instance_norm_0.b_0": [4],
                      "prelu_0.w_0": [1], "prelu_1.w_0": [4], "prelu_2.w_0": [4, 3, 3]}
    with pytest.raises(ValueError, match="mode should be one of all, channel, element"):
        paddle.static.nn.prelu(x, "rows")
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(paddle.static.default_startup_program())
    xv = np.random.default_rng(0).standard_normal((2, 4, 3, 3)).astype("float32")
    outs = exe.run(feed={"x": xv}, fetch_list=[g, i, pa, pc, pe])

    def normalized(groups: int) -> np.ndarray:
        m = xv.reshape(2, groups, -1)
        return ((m - m.mean(-1, keepdims=True)) / np.sqrt(m.var(-1, keepdims=True) + 1e-5)).reshape(xv.shape)

    np.testing.assert_allclose(outs[0], np.maximum(normalized(2), 0), atol=1e-5)
    np.testing.assert_allclose(outs[1], normalized(4), atol=1e-5)
    for o in outs[2:]:
        np.testing.assert_allclose(o, np.where(xv > 0, xv, 0.25 * xv), rtol=1e-6)


def test_to_tensor_in_static_mode_is_a_constant_of_the_program(static_programs) -> None:
    """Paddle 3.3.1 in static mode: `paddle.to_tensor(data)` is a program value (an
    `assign_value` constant, `stop_gradient=True` unless asked otherwise) with the
    eager dtype rules, usable with other static values; given a static value, a
    copy (cast to `dtype`)."""
    main, _ = static_programs
    x = paddle.static.data("x", [2], "float32")
    t = paddle.to_tensor([1.0, 2.0])
    i = paddle.to_tensor(3)
    b = paddle.to_tensor([1.5, 2.0], dtype="bfloat16")
    c = paddle.to_tensor(np.array([1 + 2j, 3j], np.complex64))
    f = paddle.to_tensor(np.array([0.5], np.float64), stop_gradient=False)
    z = paddle.to_tensor(x, dtype="float64")
    assert all(isinstance(v, paddle.static.Variable) for v in (t, i, b, c, f, z))
    assert (str(t.dtype), str(i.dtype), str(b.dtype), str(c.dtype), str(f.dtype), str(z.dtype)) == (
        "paddle.float32", "paddle.int64", "paddle.bfloat16", "paddle.complex64", "paddle.float64", "paddle.float64")
    assert list(i.shape) == [] and t.stop_gradient and not f.stop_gradient
    assert "assign_value" in _ops(main)
    y = x + t
    exe = paddle.static.Executor(paddle.CPUPlace())
    got = exe.run(main, feed={"x": np.array([3.0, 4.0], np.float32)}, fetch_list=[y, i, b, c, z])
    np.testing.assert_array_equal(got[0], [4.0, 6.0])
    assert got[1] == 3 and got[1].dtype == np.int64
    np.testing.assert_array_equal(got[2], np.array([0x3FC0, 0x4000], np.uint16))  # bfloat16 bits
    np.testing.assert_array_equal(got[3], np.array([1 + 2j, 3j], np.complex64))
    assert got[4].dtype == np.float64 and list(got[4]) == [3.0, 4.0]
    paddle.disable_static()
    try:
        assert type(paddle.to_tensor([1.0])).__name__ == "Tensor"  # eager again
    finally:
        paddle.enable_static()
