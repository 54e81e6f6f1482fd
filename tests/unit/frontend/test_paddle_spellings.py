"""The spellings Paddle programs and Paddle's own tests use: `paddle.base` (and
`fluid`) with `dygraph`, `core`, flags; `paddle.tensor` and its submodules; random
tensors; `paddle.static.InputSpec`, `CompiledProgram`, `device_guard`."""

from __future__ import annotations

import importlib

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core as fcore


@pytest.mark.parametrize(
    "module",
    ["pullback.base", "pullback.base.dygraph", "pullback.base.core", "pullback.base.framework",
     "pullback.base.layers", "pullback.base.backward", "pullback.base.initializer",
     "pullback.fluid.dygraph", "pullback.fluid.core", "pullback.fluid.regularizer",
     "pullback.fluid.clip", "pullback.regularizer", "pullback.nn.clip", "pullback.tensor",
     "pullback.tensor.random", "pullback.tensor.math", "pullback.tensor.creation",
     "pullback.tensor.manipulation", "pullback.tensor.linalg", "pullback.tensor.logic",
     "pullback.tensor.search", "pullback.tensor.stat", "pullback.optimizer.lr"],
)
def test_namespaces_import(module):
    mod = importlib.import_module(module)
    parent, _, child = module.rpartition(".")
    assert getattr(importlib.import_module(parent), child) is mod


def test_base_is_fluid_and_has_paddle_test_spellings():
    from pullback import base
    from pullback.base import core

    assert base is paddle.fluid
    assert core.is_compiled_with_cuda() in (True, False) and not core.is_compiled_with_xpu()
    assert core.VarDesc.VarType.FP32 == "float32"
    assert core.eager.Tensor is paddle.Tensor
    assert isinstance(base.CPUPlace(), paddle.CPUPlace)
    assert base.backward.append_backward is paddle.static.append_backward


def test_dygraph_guard_to_variable_no_grad_and_grad():
    from pullback import base

    was_dynamic = fcore.in_dynamic_mode()
    paddle.enable_static()
    try:
        with base.dygraph.guard():
            assert base.dygraph.enabled() and base.in_dygraph_mode()
            x = base.dygraph.to_variable(np.array([1.0, 2.0], "float32"))
            assert isinstance(x, paddle.Tensor) and x.stop_gradient
            x.stop_gradient = False
            with base.dygraph.no_grad():
                assert (x * 2).stop_gradient
            (dx,) = base.dygraph.grad([(x * x).sum()], [x])
            np.testing.assert_allclose(dx.numpy(), [2.0, 4.0])
            assert paddle.tensor.random.gaussian(shape=[2, 3]).shape == [2, 3]
        assert not fcore.in_dynamic_mode()  # the previous (static) mode is back
        with base.dygraph.guard(base.CPUPlace()):
            assert fcore.in_dynamic_mode()
    finally:
        paddle.disable_static() if was_dynamic else paddle.enable_static()


def test_set_and_get_flags():
    paddle.set_flags({"FLAGS_sort_sum_gradient": True})
    try:
        assert paddle.get_flags("FLAGS_sort_sum_gradient") == {"FLAGS_sort_sum_gradient": True}
        assert paddle.base.get_flags(["FLAGS_check_nan_inf"]) == {"FLAGS_check_nan_inf": False}
        paddle.base.set_flags({"FLAGS_eager_delete_tensor_gb": 1})
        assert paddle.base.core.globals()["FLAGS_eager_delete_tensor_gb"] == 1.0
    finally:
        paddle.set_flags({"FLAGS_sort_sum_gradient": False, "FLAGS_eager_delete_tensor_gb": 0.0})
    with pytest.raises(ValueError, match="Flag FLAGS_no_such_flag cannot set its value"):
        paddle.set_flags({"FLAGS_no_such_flag": 1})
    with pytest.raises(ValueError, match="FLAGS_nope"):
        paddle.get_flags("FLAGS_nope")
    with pytest.raises(TypeError, match="should be a dict"):
        paddle.set_flags(["FLAGS_sort_sum_gradient"])
    with pytest.raises(TypeError, match="expects a str"):
        paddle.set_flags({"FLAGS_allocator_strategy": 3})


def test_tensor_namespace_holds_the_functions(dynamic_mode):
    from pullback.tensor import math, random

    assert paddle.tensor.add is paddle.add is math.add
    assert paddle.tensor.manipulation.reshape is paddle.reshape
    assert paddle.tensor.linalg.matmul is paddle.matmul
    assert paddle.tensor.creation.to_tensor is paddle.to_tensor
    assert random.uniform is paddle.uniform
    x = paddle.tensor.creation.full([2], 3.0)
    np.testing.assert_array_equal(paddle.tensor.math.multiply(x, x).numpy(), [9.0, 9.0])


def test_random_tensors_through_paddle_tensor_random(dynamic_mode):
    from pullback.tensor import random

    paddle.seed(5)
    a = random.uniform([1000], min=-2.0, max=1.0)
    b = random.gaussian([1000], mean=1.0, std=2.0, dtype="float64")
    assert a.dtype == "float32" and b.dtype == "float64" and a.stop_gradient
    assert a.numpy().min() >= -2.0 and a.numpy().max() < 1.0
    assert abs(b.numpy().mean() - 1.0) < 0.3 and abs(b.numpy().std() - 2.0) < 0.2
    paddle.seed(5)
    np.testing.assert_array_equal(random.uniform([1000], min=-2.0, max=1.0).numpy(), a.numpy())
    assert random.randn is paddle.randn and random.normal is paddle.normal
    assert random.gaussian([3], mean=1.0, std=0.0).numpy().tolist() == [1.0, 1.0, 1.0]


def test_random_tensors_in_static_programs():
    was_dynamic = fcore.in_dynamic_mode()
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        main.random_seed = 7
        with paddle.static.program_guard(main, startup):
            u = paddle.uniform([3, 4], min=0.0, max=1.0)
            g = paddle.fluid.layers.gaussian_random([3], std=2.0)
        assert [op.type for op in main.global_block().ops] == ["uniform_random", "gaussian_random"]
        exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        first = exe.run(main, fetch_list=[u, g])
        second = exe.run(main, fetch_list=[u, g])
        assert first[0].shape == (3, 4) and first[1].shape == (3,)
        np.testing.assert_array_equal(first[0], second[0])  # seeds are fixed in the program
    finally:
        paddle.disable_static() if was_dynamic else paddle.enable_static()


def test_input_spec():
    spec = paddle.static.InputSpec([None, 784], "float32", "x")
    assert spec.shape == (-1, 784) and spec.dtype == "float32" and spec.name == "x"
    assert repr(spec) == "InputSpec(shape=(-1, 784), dtype=paddle.float32, name=x, stop_gradient=False)"
    assert spec.batch(16).shape == (16, -1, 784) and spec.unbatch().shape == (-1, 784)
    assert paddle.static.InputSpec.from_numpy(np.ones((2, 3), "int64"), "ids") == paddle.static.InputSpec(
        [2, 3], "int64", "ids")
    with pytest.raises(TypeError, match="should be one of \\(tuple, list\\)"):
        paddle.static.InputSpec("784")
    with pytest.raises(ValueError, match="should be int or None"):
        paddle.static.InputSpec([1.5])


def test_compiled_program_and_device_guard_run_the_program():
    was_dynamic = fcore.in_dynamic_mode()
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), paddle.static.device_guard("cpu"):
            x = paddle.static.data("x", [None, 2])
            y = paddle.sum(x * 2.0)
        compiled = paddle.static.CompiledProgram(main, paddle.static.BuildStrategy()).with_data_parallel(
            loss_name=y.name)
        exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        (out,) = exe.run(compiled, feed={"x": np.ones((3, 2), "float32")}, fetch_list=[y])
        assert float(out) == 12.0
    finally:
        paddle.disable_static() if was_dynamic else paddle.enable_static()


def test_static_nn_layer_norm():
    was_dynamic = fcore.in_dynamic_mode()
    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start), paddle.utils.unique_name.guard(), \
                paddle.static.scope_guard(paddle.static.Scope()):
            x = paddle.static.data("x", [4, 3, 5], "float64")
            y = paddle.static.nn.layer_norm(x, begin_norm_axis=2, act="relu")
            z = paddle.static.nn.layer_norm(x, scale=False, epsilon=0.5)
            assert [p.name for p in main.all_parameters()] == [
                "layer_norm_0.w_0", "layer_norm_0.b_0", "layer_norm_1.b_0"]
            assert [p.shape for p in main.all_parameters()] == [[5], [5], [15]]
            with pytest.raises(ValueError, match="begin_norm_axis"):
                paddle.static.nn.layer_norm(x, begin_norm_axis=3)
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(start)
            xv = np.random.default_rng(0).random((4, 3, 5))
            got_y, got_z = exe.run(main, feed={"x": xv}, fetch_list=[y, z])
        m, v = xv.mean(-1, keepdims=True), xv.var(-1, keepdims=True)
        np.testing.assert_allclose(got_y, np.maximum((xv - m) / np.sqrt(v + 1e-5), 0), rtol=1e-10)
        flat = xv.reshape(4, -1)
        want_z = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 0.5)
        np.testing.assert_allclose(got_z, want_z.reshape(4, 3, 5), rtol=1e-10)
    finally:
        paddle.disable_static() if was_dynamic else paddle.enable_static()
