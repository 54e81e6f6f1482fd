"""Eager Tensors: to_tensor, metadata, Paddle's printed form, gradients' bookkeeping,
and eager `apply` (verifier errors, non-Tensor inputs, what gets recorded)."""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle
from pullback.dialects import pd
from pullback.frontend import core
from pullback.frontend.eager import Tensor, format_tensor, to_tensor


@pytest.fixture(autouse=True)
def dynamic_mode():
    core.disable_static()
    yield


# ------------------------------------------------------------------ to_tensor


def test_to_tensor_copies_and_keeps_shape():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = to_tensor(a)
    a[0, 0] = 100
    assert t.shape == [2, 3] and t.numpy()[0, 0] == 0
    t.numpy()[0, 1] = 100  # numpy() is a copy too
    assert t.numpy()[0, 1] == 1
    assert to_tensor(3.0).shape == [] and to_tensor(3.0).item() == 3.0
    u = to_tensor(t, dtype="float64", stop_gradient=False)
    assert u.dtype == "float64" and not u.stop_gradient and u.is_leaf


def test_to_tensor_rejects_bad_arguments():
    with pytest.raises(TypeError, match="dtype"):
        to_tensor([1.0], dtype="float8_e4m3fn")
    with pytest.raises(TypeError, match="invalid dtype 'paddle.float64'"):  # a printed dtype, as in Paddle
        to_tensor([1.0], dtype="paddle.float64")
    with pytest.raises(TypeError):
        to_tensor(["a", "b"])
    with pytest.raises(ValueError, match="CPU"):
        to_tensor([1.0], place="gpu:0")
    with pytest.raises(TypeError, match="stop_gradient"):
        to_tensor([1.0], stop_gradient="no")
    assert str(to_tensor([1.0], place="cpu").place) == "Place(cpu)"


def test_tensor_metadata_and_python_protocol():
    t = to_tensor([[1.0, 2.0], [3.0, 4.0]])
    assert (t.ndim, t.size, len(t), t.dim()) == (2, 4, 2, 2)
    assert t.stop_gradient and t.grad is None and t.is_leaf and not t.persistable
    assert t.name.startswith("generated_tensor_") and t.name == t.name
    t.name = "mine"
    assert t.name == "mine"
    np.testing.assert_array_equal(np.asarray(t), t.numpy())
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert float(to_tensor([2.5])) == 2.5 and int(to_tensor(3)) == 3
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t)
    assert len({t, t.detach()}) == 2  # identity hashing
    t.stop_gradient = False
    assert not t.stop_gradient
    assert isinstance(paddle.Tensor([1.0, 2.0]), Tensor)


def test_set_value_keeps_recorded_values():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    y = x * x
    x.set_value([5.0, 5.0])
    assert x.numpy().tolist() == [5.0, 5.0]
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])  # the values y was made from
    with pytest.raises(ValueError, match="shape"):
        x.set_value([1.0])


# ------------------------------------------------------------------ printing

REPRS = [
    (
        to_tensor([[12.0, 18.0], [17.0, 25.0]], stop_gradient=False),
        "Tensor(shape=[2, 2], dtype=float32, place=Place(cpu), stop_gradient=False,\n"
        "       [[12., 18.],\n        [17., 25.]])",
    ),
    (
        to_tensor(3.0),
        "Tensor(shape=[], dtype=float32, place=Place(cpu), stop_gradient=True,\n       3.)",
    ),
    (
        to_tensor([0.5, -1.0, 2.25]),
        "Tensor(shape=[3], dtype=float32, place=Place(cpu), stop_gradient=True,\n"
        "       [0.50000000, -1.       , 2.25000000])",  # (sic: Paddle's widths)
    ),
    (
        to_tensor([1.0, 8.0, -27.0]),
        "Tensor(shape=[3], dtype=float32, place=Place(cpu), stop_gradient=True,\n"
        "       [ 1. ,  8. , -27.])",
    ),
    (
        to_tensor([[1, 2], [3, 4]]),
        "Tensor(shape=[2, 2], dtype=int64, place=Place(cpu), stop_gradient=True,\n"
        "       [[1, 2],\n        [3, 4]])",
    ),
    (
        to_tensor([True, False]),
        "Tensor(shape=[2], dtype=bool, place=Place(cpu), stop_gradient=True,\n"
        "       [True , False])",
    ),
]


@pytest.mark.parametrize("t, text", REPRS)
def test_repr_is_paddles(t, text):
    assert repr(t) == text and str(t) == text


def test_long_rows_wrap_and_big_tensors_are_summarized():
    text = format_tensor(to_tensor(np.arange(30, dtype=np.float32)))
    lines = text.split("\n")[1:]
    # 14 items of width 3 (+2) fit after the 7-column indent
    assert len(lines) == 3 and all(len(l) <= 80 for l in lines)
    assert lines[1].startswith("        ")  # continuation indented past '['
    big = format_tensor(to_tensor(np.zeros((50, 50), np.float32)))
    assert "..." in big and big.count("\n") < 20


# ------------------------------------------------------------------ gradients


def test_grad_property_and_clear():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    (x * x).backward()
    g = x.grad
    assert isinstance(g, Tensor) and not g.stop_gradient
    np.testing.assert_allclose(x.gradient(), [2.0, 4.0])
    x.clear_grad()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])
    x.grad = None
    assert x.grad is None and x.gradient() is None


# ------------------------------------------------------------------ eager apply


def test_verifier_errors_become_value_errors():
    a, b = to_tensor(np.ones((2, 3), np.float32)), to_tensor(np.ones((4, 5), np.float32))
    with pytest.raises(ValueError, match="pd.matmul"):
        core.apply(pd.MatmulOp, [a, b], prefix="matmul")


def test_non_tensor_inputs_are_type_errors():
    with pytest.raises(TypeError, match="must be a Tensor in dynamic mode"):
        core.apply(pd.ReluOp, [np.ones(2, np.float32)], prefix="relu")


def test_only_differentiable_float_ops_with_grad_inputs_are_recorded():
    x = to_tensor([1.0, -2.0], stop_gradient=False)
    c = to_tensor([1.0, 1.0])
    assert (x * c)._node is not None and not (x * c).stop_gradient
    assert (c * c)._node is None and (c * c).stop_gradient
    cmp = core.apply(pd.GreaterThanOp, [x, c], prefix="greater_than")
    assert cmp.dtype == "bool" and cmp.stop_gradient and cmp._node is None
    ones = core.apply(pd.FillAnyLikeOp, [x], prefix="fill_any_like", value=1.0)
    assert ones.stop_gradient


def test_operators_come_from_the_op_families():
    x = to_tensor([1.0, 2.0])
    np.testing.assert_allclose((x + 1.0).numpy(), [2.0, 3.0])
    np.testing.assert_allclose((2.0 * x - x / 2.0).numpy(), [1.5, 3.0])
    np.testing.assert_allclose((x**2).numpy(), [1.0, 4.0])
    np.testing.assert_allclose((-x).numpy(), [-1.0, -2.0])
    assert (x > 1.5).numpy().tolist() == [False, True]
    assert x.exp is not None and x.astype("float64").dtype == "float64"


# ------------------------------------------------------------------ fast path

from pullback.frontend.eager import _FAST_BINARY, template_for  # noqa: E402
from pullback.runtime.interpreter import KERNELS  # noqa: E402


def _data(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    a = rng.standard_normal(shape).astype(dtype)
    flat = a.reshape(-1)
    flat[: min(2, flat.size)] = [np.nan, -np.inf][: min(2, flat.size)]
    return a


@pytest.mark.parametrize("op_cls", list(_FAST_BINARY), ids=lambda c: c.name)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((2, 1, 3), (4, 3)), ((5,), (5,)), ((), (2, 2))])
def test_fast_path_agrees_with_the_interpreter_kernel(op_cls, dtype, shapes):
    rng = np.random.default_rng(0)
    arrays = [_data(rng, s, dtype) for s in shapes]
    tpl = template_for(op_cls, arrays, {})
    assert tpl.fast is not None
    want = np.asarray(KERNELS[op_cls](tpl.op, *arrays), dtype=tpl.dtypes[0])
    np.testing.assert_array_equal(tpl.run(arrays)[0], want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fast_relu_and_where_agree_with_their_kernels(dtype):
    rng = np.random.default_rng(1)
    x = _data(rng, (4, 3), dtype)
    relu = template_for(pd.ReluOp, [x], {})
    np.testing.assert_array_equal(relu.run([x])[0], KERNELS[pd.ReluOp](relu.op, x))
    c, y = x > 0, _data(rng, (3,), dtype)
    where = template_for(pd.WhereOp, [c, x, y], {})
    assert relu.fast is not None and where.fast is not None
    np.testing.assert_array_equal(where.run([c, x, y])[0], KERNELS[pd.WhereOp](where.op, c, x, y))


def test_paddle_axis_alignment_and_integers_use_the_kernel():
    a, b = np.ones((2, 3, 4), np.float32), np.arange(3, dtype=np.float32)
    aligned = template_for(pd.ElementwiseAddOp, [a, b], {"axis": 1})
    assert aligned.fast is None
    np.testing.assert_array_equal(aligned.run([a, b])[0], a + b.reshape(1, 3, 1))
    ints = template_for(pd.ElementwiseMulOp, [np.ones(2, np.int64)] * 2, {})
    assert ints.fast is None
