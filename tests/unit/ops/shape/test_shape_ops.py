"""Shape ops: typing rules, interpreter kernels against numpy, VJP rules against
finite differences (first and second order), and the Paddle-style frontend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, shape_of
from pullback.frontend import core, framework, unique_name
from pullback.frontend.backward import gradients
from pullback.frontend.ops import shape as S
from pullback.passes.autodiff import differentiate
from pullback.runtime.interpreter import InterpreterError, evaluate, run_module
from pullback.testing import check_vjp

RNG = np.random.default_rng(7)


def rand(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


_DT = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64", np.dtype(np.int64): "int64"}


def data(name: str, a: np.ndarray, dynamic: Sequence[int] = ()) -> pd.DataOp:
    """A feed for `a` whose dimensions in `dynamic` are declared `?`."""
    shape = [None if i in dynamic else d for i, d in enumerate(a.shape)]
    return pd.DataOp.make(name, shape, _DT[a.dtype])


def run(op_cls: type[pd.PdOp], arrays: Sequence[np.ndarray], dynamic: Sequence[int] = (),
        **props: Any) -> list[np.ndarray]:
    """Build one op on feeds of `arrays` and run it with the interpreter.

    Also checks each result against its static type: dtype, and every static
    dimension equal to the run-time one.
    """
    feeds = [data(f"in{i}", a, dynamic) for i, a in enumerate(arrays)]
    op = op_cls.make(*[f.out for f in feeds], **props)
    op.verify()
    env = evaluate([op], {f.out: a for f, a in zip(feeds, arrays)})
    outs = [env[r] for r in op.results]
    for r, o in zip(op.results, outs):
        static = shape_of(r.type)
        assert len(static) == o.ndim and all(s in (DYN, d) for s, d in zip(static, o.shape)), (
            f"{op.name}: type {r.type} does not describe run-time shape {o.shape}"
        )
        assert o.dtype == arrays[0].dtype
    return outs


def result_shape(op_cls: type[pd.PdOp], shapes: Sequence[Sequence[int | None]], **props: Any) -> list[int | None]:
    """The inferred result shape (None for `?`) of one op on feeds of `shapes`."""
    feeds = [pd.DataOp.make(f"in{i}", s) for i, s in enumerate(shapes)]
    op = op_cls.make(*[f.out for f in feeds], **props)
    return [None if d == DYN else d for d in shape_of(op.results[0].type)]


# ------------------------------------------------------------------ typing rules


@pytest.mark.parametrize(
    "x, shape, out",
    [
        ([2, 3, 4], [0, -1], [2, 12]),
        ([None, 3, 4], [0, -1], [None, 12]),  # the copied ? cancels out
        ([None, 3, 4], [-1, 12], [None, 12]),
        ([None, 3, 4], [0, 3, 2, 2], [None, 3, 2, 2]),
        ([None, 12], [-1, 3, 4], [None, 3, 4]),
        ([6], [2, -1], [2, 3]),
        ([], [-1], [1]),
        ([1], [], []),
    ],
)
def test_reshape_infers_static_dims(x, shape, out):
    assert result_shape(pd.ReshapeOp, [x], shape=shape) == out


@pytest.mark.parametrize(
    "op_cls, shapes, props, out",
    [
        (pd.TransposeOp, [[None, 3, 4]], {"perm": [-1, 0, 1]}, [4, None, 3]),
        (pd.ConcatOp, [[None, 3], [2, 3]], {"axis": 1}, [2, 6]),  # the ? is known to be 2
        (pd.ConcatOp, [[None, 3], [2, 3]], {"axis": 0}, [None, 3]),
        (pd.SplitOp, [[None, 7]], {"sections": [2, -1], "axis": -1}, [None, 2]),
        (pd.SliceOp, [[None, 5]], {"axes": [0, 1], "starts": [0, -4], "ends": [2, 100]}, [None, 4]),
        (pd.SliceOp, [[6]], {"axes": [0], "starts": [4], "ends": [2]}, [0]),
        (pd.PadOp, [[None, 5]], {"paddings": [1, 1, 0, 3]}, [None, 8]),
        (pd.SqueezeOp, [[None, 1, 3, 1]], {"axes": []}, [None, 3]),
        (pd.SqueezeOp, [[None, 1, 3, 1]], {"axes": [0, 2]}, [1, 3, 1]),  # 3 stays, ? goes
        (pd.UnsqueezeOp, [[None, 3]], {"axes": [2, 0]}, [1, None, 3, 1]),
        (pd.UnsqueezeOp, [[None, 3]], {"axes": [-1, -1]}, [None, 3, 1, 1]),
        (pd.ExpandOp, [[None, 1]], {"shape": [2, -1, 5]}, [2, None, 5]),
        (pd.ExpandAsOp, [[3, 1], [None, None]], {}, [3, None]),
        (pd.ReshapeAsOp, [[None, 12], [None, None, 4]], {}, [None, None, 4]),
    ],
)
def test_result_types(op_cls, shapes, props, out):
    assert result_shape(op_cls, shapes, **props) == out


def test_split_results_and_names():
    x = pd.DataOp.make("x", [None, 12])
    op = pd.SplitOp.make(x.out, num=3, axis=1, name=["a", "b", "c"])
    assert [shape_of(r.type) for r in op.results] == [(DYN, 4)] * 3
    assert pd.result_names(op) == ["a", "b", "c"]


def test_split_as_takes_lengths_from_likes():
    x, a, b = (pd.DataOp.make(n, s) for n, s in (("x", [None, 3]), ("a", [2, 3]), ("b", [None, 3])))
    op = pd.SplitAsOp.make(x.out, a.out, b.out)
    assert [shape_of(r.type) for r in op.results] == [(2, 3), (DYN, 3)]


@pytest.mark.parametrize(
    "op_cls, shapes, props, message",
    [
        (pd.ReshapeOp, [[3, 4]], {"shape": [5, -1]}, "'pd.reshape': cannot reshape [3, 4] to [5, -1]"),
        (pd.ReshapeOp, [[None, 4]], {"shape": [0, -2]}, "'pd.reshape': invalid dimension -2"),
        (pd.TransposeOp, [[2, 3]], {"perm": [1, 1]}, "'pd.transpose': perm [1, 1] is not a permutation"),
        (pd.ConcatOp, [[2, 3], [2]], {"axis": 0}, "'pd.concat': operand shapes [2, 3] and [2] differ"),
        (pd.SplitOp, [[None, 4]], {"axis": 1}, "'pd.split': give either num > 0 or sections"),
        (pd.SplitOp, [[None, 4]], {"sections": [-1, -1], "axis": 1}, "'pd.split': invalid sections [-1, -1]"),
        (pd.SplitOp, [[None, 4]], {"sections": [3, 3, -1], "axis": 1}, "exceed the dimension size 4"),
        (pd.SliceOp, [[3]], {"axes": [1], "starts": [0], "ends": [1]}, "'pd.slice': axis 1 is out of range for rank 1"),
        (pd.PadOp, [[3]], {"paddings": [1]}, "'pd.pad': paddings [1] must be 2 non-negative integers"),
        (pd.UnsqueezeOp, [[3]], {"axes": [-3]}, "'pd.unsqueeze': axis -3 is out of range for rank 1"),
        (pd.ExpandOp, [[3]], {"shape": [0, 3]}, "'pd.expand': invalid target dimension 0"),
        (pd.ExpandAsOp, [[2, 3], [3]], {}, "'pd.expand_as': cannot broadcast [2, 3] to the lower rank [3]"),
    ],
)
def test_typing_errors_name_op_and_mismatch(op_cls, shapes, props, message):
    feeds = [pd.DataOp.make(f"in{i}", s) for i, s in enumerate(shapes)]
    with pytest.raises(VerifyException) as e:
        op_cls.make(*[f.out for f in feeds], **props)
    assert message in str(e.value)


# --------------------------------------------------------------------- kernels

DTYPES = [np.float32, np.float64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dynamic", [(), (0,)])
def test_reshape_kernel(dtype, dynamic):
    x = rand(2, 3, 4, dtype=dtype)
    (y,) = run(pd.ReshapeOp, [x], dynamic, shape=[0, -1])
    np.testing.assert_array_equal(y, x.reshape(2, 12))
    (y,) = run(pd.ReshapeOp, [x], dynamic, shape=[4, 0, 2])
    np.testing.assert_array_equal(y, x.reshape(4, 3, 2))


def test_reshape_as_kernel():
    x, like = rand(2, 12), rand(2, 3, 4)
    (y,) = run(pd.ReshapeAsOp, [x, like], dynamic=(0, 1))
    np.testing.assert_array_equal(y, x.reshape(2, 3, 4))


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_kernel(dtype):
    x = rand(2, 3, 4, dtype=dtype)
    (y,) = run(pd.TransposeOp, [x], (0,), perm=[2, -3, 1])
    np.testing.assert_array_equal(y, np.transpose(x, (2, 0, 1)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_concat_kernel(dtype):
    a, b, c = rand(2, 1, dtype=dtype), rand(2, 3, dtype=dtype), rand(2, 2, dtype=dtype)
    (y,) = run(pd.ConcatOp, [a, b, c], (0,), axis=-1)
    np.testing.assert_array_equal(y, np.hstack([a, b, c]))
    (y,) = run(pd.ConcatOp, [b, b], (0,), axis=0)
    np.testing.assert_array_equal(y, np.vstack([b, b]))


def test_concat_of_ints():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    (y,) = run(pd.ConcatOp, [a, a], axis=1)
    np.testing.assert_array_equal(y, np.hstack([a, a]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_kernel(dtype):
    x = rand(2, 7, dtype=dtype)
    outs = run(pd.SplitOp, [x], (0,), sections=[2, -1, 1], axis=-1)
    for got, want in zip(outs, [x[:, :2], x[:, 2:6], x[:, 6:]]):
        np.testing.assert_array_equal(got, want)
    outs = run(pd.SplitOp, [x[:, :6]], (0, 1), num=3, axis=1)
    for got, want in zip(outs, np.split(x[:, :6], 3, axis=1)):
        np.testing.assert_array_equal(got, want)


def test_split_as_kernel():
    x, a, b = rand(5, 2), rand(3, 9), rand(2, 9)
    ga, gb = run(pd.SplitAsOp, [x, a, b], (0,))
    np.testing.assert_array_equal(ga, x[:3])
    np.testing.assert_array_equal(gb, x[3:])


@pytest.mark.parametrize(
    "axes, starts, ends, index",
    [
        ([1], [1], [3], np.s_[:, 1:3]),
        ([0, 1], [-2, -4], [100, -1], np.s_[-2:, -4:-1]),
        ([-1], [5], [2], np.s_[:, 5:2]),  # empty
        ([0], [-100], [1], np.s_[:1]),  # clamped
    ],
)
def test_slice_kernel(axes, starts, ends, index):
    x = rand(3, 5)
    for dynamic in [(), (0, 1)]:
        (y,) = run(pd.SliceOp, [x], dynamic, axes=axes, starts=starts, ends=ends)
        np.testing.assert_array_equal(y, x[index])


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_kernel(dtype):
    x = rand(2, 3, dtype=dtype)
    (y,) = run(pd.PadOp, [x], (0,), paddings=[1, 0, 2, 3], value=-1.5)
    np.testing.assert_array_equal(y, np.pad(x, [(1, 0), (2, 3)], constant_values=-1.5))


def test_squeeze_unsqueeze_kernels():
    x = rand(2, 1, 3, 1)
    (y,) = run(pd.SqueezeOp, [x], (0,), axes=[])
    np.testing.assert_array_equal(y, x.reshape(2, 3))
    (y,) = run(pd.SqueezeOp, [x], (0,), axes=[-1, 2])  # size 3: kept, as in Paddle
    np.testing.assert_array_equal(y, x.reshape(2, 1, 3))
    (y,) = run(pd.SqueezeOp, [x[:1]], (0,), axes=[0])  # a ? squeezed: 1 at run time
    np.testing.assert_array_equal(y, x[0])
    (y,) = run(pd.UnsqueezeOp, [x[:, 0, :, 0]], (0,), axes=[0, -1, 2])
    np.testing.assert_array_equal(y, x[:, 0, :, 0].reshape(1, 2, 1, 3, 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_expand_kernels(dtype):
    x = rand(2, 1, dtype=dtype)
    (y,) = run(pd.ExpandOp, [x], (0,), shape=[3, -1, 4])
    np.testing.assert_array_equal(y, np.broadcast_to(x, (3, 2, 4)))
    (y,) = run(pd.ExpandAsOp, [x, rand(3, 2, 4)], (0,))
    np.testing.assert_array_equal(y, np.broadcast_to(x, (3, 2, 4)))


@pytest.mark.parametrize(
    "op_cls, arrays, dynamic, props, message",
    [
        (pd.ReshapeOp, [rand(2, 6)], (0, 1), {"shape": [5, -1]}, "'pd.reshape': cannot reshape [2, 6]"),
        (pd.SqueezeOp, [rand(2, 3)], (0,), {"axes": [0]}, "axes [0] must have size 1 at run time"),
        (pd.ExpandOp, [rand(1, 3)], (0,), {"shape": [4, 3]}, "dynamic in its type but 1 at run time"),
        (pd.ExpandAsOp, [rand(1, 3), rand(4, 3)], (0,), {}, "dynamic in its type but 1 at run time"),
        (pd.SplitOp, [rand(3, 4)], (0,), {"sections": [1, 1]}, "sections [1, 1] add up to 2"),
        (pd.SplitAsOp, [rand(3, 4), rand(1, 4), rand(1, 4)], (0,), {}, "do not add up"),
        (pd.ReshapeAsOp, [rand(3, 4), rand(2, 4)], (0,), {}, "cannot reshape [3, 4] like [2, 4]"),
    ],
)
def test_run_time_shape_errors(op_cls, arrays, dynamic, props, message):
    with pytest.raises(InterpreterError) as e:
        run(op_cls, arrays, dynamic, **props)
    assert message in str(e.value) and "at run time" in str(e.value)


# ------------------------------------------------------------------------ VJPs

VJP_CASES = [
    (pd.ReshapeOp, [(2, 3, 4)], {"shape": [0, -1]}),
    (pd.ReshapeOp, [(2, 3, 4)], {"shape": [-1]}),
    (pd.ReshapeAsOp, [(2, 12), (2, 3, 4)], {}),
    (pd.TransposeOp, [(2, 3, 4)], {"perm": [2, 0, -2]}),
    (pd.ConcatOp, [(2, 3), (2, 1), (2, 2)], {"axis": -1}),
    (pd.ConcatOp, [(2, 3), (1, 3)], {"axis": 0}),
    (pd.SplitOp, [(2, 6)], {"sections": [1, -1, 2], "axis": 1}),
    (pd.SplitOp, [(4, 3)], {"num": 2}),
    (pd.SplitAsOp, [(5, 2), (3, 1), (2, 1)], {}),
    (pd.SliceOp, [(4, 5)], {"axes": [1], "starts": [1], "ends": [-1]}),
    (pd.SliceOp, [(4, 5)], {"axes": [0, 1], "starts": [1, -3], "ends": [100, 4]}),
    (pd.PadOp, [(2, 3)], {"paddings": [1, 2, 0, 1], "value": 3.0}),
    (pd.SqueezeOp, [(2, 1, 3)], {"axes": []}),
    (pd.SqueezeOp, [(1, 3, 1)], {"axes": [0, -1]}),
    (pd.UnsqueezeOp, [(2, 3)], {"axes": [0, -1]}),
    (pd.ExpandOp, [(2, 1)], {"shape": [3, -1, 4]}),
    (pd.ExpandAsOp, [(3, 1), (3, 4)], {}),
    (pd.ExpandAsOp, [(2, 1, 3), (4, 2, 5, 3)], {}),
]


@pytest.mark.parametrize("dynamic_batch", [False, True])
@pytest.mark.parametrize("op_cls, shapes, props", VJP_CASES, ids=lambda v: getattr(v, "name", None))
def test_vjp_first_and_second_order(op_cls, shapes, props, dynamic_batch):
    inputs = [rand(*s) for s in shapes]
    check_vjp(op_cls, inputs, props=props, order=2, dynamic_batch=dynamic_batch)


def _backward_ops(op_cls: type[pd.PdOp], shapes: Sequence[Sequence[int | None]],
                  loss_of: int = 0, **props: Any) -> tuple[list[str], ModuleOp, pd.BackwardOp]:
    """Differentiate `reduce_sum(result #loss_of)` of one op on float64 feeds; return
    the names of the backward ops, the module and the filled backward op."""
    feeds = [pd.DataOp.make(f"in{i}", s, "float64") for i, s in enumerate(shapes)]
    op = op_cls.make(*[f.out for f in feeds], **props)
    loss = pd.ReduceSumOp.make(op.results[loss_of])
    module = ModuleOp([*feeds, op, loss])
    bw = pd.BackwardOp.make([loss.out], [feeds[0].out])
    module.body.block.add_op(bw)
    bw = differentiate(bw)
    module.verify()
    return [o.name for o in bw.body.block.ops], module, bw


def test_static_shapes_use_paddle_ops():
    names, _, _ = _backward_ops(pd.ReshapeOp, [[2, 3, 4]], shape=[6, -1])
    assert "pd.reshape" in names and "pd.reshape_as" not in names
    names, _, _ = _backward_ops(pd.ConcatOp, [[None, 3], [2, 3]], axis=0)
    assert "pd.split" in names and "pd.split_as" not in names
    names, _, _ = _backward_ops(pd.SliceOp, [[None, 5]], axes=[1], starts=[1], ends=[3])
    assert "pd.pad" in names and "pd.concat" not in names


def test_reshape_of_several_dynamic_dims_goes_back_with_reshape_as():
    names, module, bw = _backward_ops(pd.ReshapeOp, [[None, None, 4]], shape=[-1])
    assert "pd.reshape_as" in names
    x = rand(3, 2, 4)
    env = run_module(module, {"in0": x}, {})
    np.testing.assert_array_equal(env[bw.grads[0]], np.ones_like(x))


def test_concat_of_several_dynamic_operands_goes_back_with_split_as():
    feeds = [pd.DataOp.make(f"in{i}", [None, 2], "float64") for i in range(2)]
    cat = pd.ConcatOp.make(feeds[0].out, feeds[1].out, feeds[0].out)
    w = pd.DataOp.make("w", [None, 2], "float64")
    mul = pd.ElementwiseMulOp.make(cat.out, w.out)
    loss = pd.ReduceSumOp.make(mul.out)
    module = ModuleOp([*feeds, cat, w, mul, loss])
    bw = pd.BackwardOp.make([loss.out], [f.out for f in feeds])
    module.body.block.add_op(bw)
    bw = differentiate(bw)
    assert "pd.split_as" in [o.name for o in bw.body.block.ops]
    a, b, wv = rand(2, 2), rand(3, 2), rand(7, 2)
    env = run_module(module, {"in0": a, "in1": b, "w": wv}, {})
    np.testing.assert_allclose(env[bw.grads[0]], wv[:2] + wv[5:])
    np.testing.assert_allclose(env[bw.grads[1]], wv[2:5])


def test_split_output_without_gradient_gets_zeros():
    names, module, bw = _backward_ops(pd.SplitOp, [[None, 5]], loss_of=1, sections=[2, -1], axis=1)
    assert "pd.fill_any_like" in names and "pd.concat" in names
    x = rand(3, 5)
    env = run_module(module, {"in0": x}, {})
    np.testing.assert_array_equal(env[bw.grads[0]], np.hstack([np.zeros((3, 2)), np.ones((3, 3))]))


def test_slice_of_a_dynamic_dimension_frames_with_zeros():
    names, module, bw = _backward_ops(pd.SliceOp, [[None, 4]], axes=[0, 1], starts=[-3, 1], ends=[-1, 3])
    assert "pd.pad" not in names
    x = rand(5, 4)
    env = run_module(module, {"in0": x}, {})
    want = np.zeros_like(x)
    want[-3:-1, 1:3] = 1.0
    np.testing.assert_array_equal(env[bw.grads[0]], want)


# -------------------------------------------------------------------- frontend


@pytest.fixture
def program():
    """A fresh static program to build into, with fresh names (the test checks
    them), and static mode while the test runs."""
    core.enable_static()
    main = framework.Program()
    with framework.program_guard(main), unique_name.guard():
        yield main
    core.disable_static()


def feed(program: framework.Program, name: str, shape: Sequence[int | None], dtype: str = "float32",
         stop_gradient: bool = True) -> framework.Variable:
    """A `pd.data` Variable of the program."""
    op = pd.DataOp.make(name, shape, dtype)
    program.global_block().append(op)
    var = program.global_block().wrap(op.out)
    var.stop_gradient = stop_gradient
    return var


def fetch(program: framework.Program, feeds: dict[str, np.ndarray], *vs: framework.Variable) -> list[np.ndarray]:
    env = run_module(program.module, feeds, {})
    return [env[v.value] for v in vs]


def test_frontend_shapes_names_and_values(program):
    x = feed(program, "x", [None, 3, 4])
    r = S.reshape(x, [0, -1])
    t = S.transpose(x, perm=[0, 2, 1])
    parts = S.split(r, [4, -1], axis=-1)
    one = S.split(r, 1, axis=1)
    c = S.concat([r, r], axis=1)
    s = S.slice(x, axes=[1], starts=[1], ends=[100])
    u = S.unsqueeze(x, axis=1)
    q = S.squeeze(u, axis=1)
    e = S.expand(S.unsqueeze(x, 0), [2, -1, -1, -1])
    b = S.broadcast_to(S.slice(x, [2], [0], [1]), [-1, 3, 5])
    ea = S.expand_as(S.slice(x, [2], [0], [1]), x)
    assert r.shape == [-1, 12] and r.name == "reshape2_0.tmp_0"
    assert t.shape == [-1, 4, 3]
    assert [p.shape for p in parts] == [[-1, 4], [-1, 8]] and parts[1].name == "split_0.tmp_1"
    assert isinstance(one, list) and len(one) == 1
    assert c.shape == [-1, 24] and s.shape == [-1, 2, 4]
    assert u.shape == [-1, 1, 3, 4] and q.shape == [-1, 3, 4]
    assert e.shape == [2, -1, 3, 4] and b.shape == [-1, 3, 5] and ea.shape == [-1, 3, 4]
    xv = rand(2, 3, 4, dtype=np.float32)
    got = fetch(program, {"x": xv}, r, t, *parts, c, s, q, e, b, ea)
    want = [xv.reshape(2, 12), xv.transpose(0, 2, 1), xv.reshape(2, 12)[:, :4], xv.reshape(2, 12)[:, 4:],
            np.hstack([xv.reshape(2, 12)] * 2), xv[:, 1:], xv, np.broadcast_to(xv, (2, 2, 3, 4)),
            np.broadcast_to(xv[:, :, :1], (2, 3, 5)), np.broadcast_to(xv[:, :, :1], (2, 3, 4))]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(
    "shape, start, stop, out",
    [
        ([None, 3, 4], 1, -1, [-1, 12]),
        ([None, 3, 4], 0, -1, [-1]),
        ([2, 3, 4, 5], 1, 2, [2, 12, 5]),
        ([None, 3, None], 1, 1, [-1, 3, -1]),
        ([None, 3, 4, None], 1, 2, [-1, 12, -1]),
        ([], 0, -1, [1]),
    ],
)
def test_flatten(program, shape, start, stop, out):
    x = feed(program, "x", shape)
    y = S.flatten(x, start_axis=start, stop_axis=stop)
    assert y.shape == out
    dims = [d or 2 for d in shape]
    xv = rand(*dims, dtype=np.float32)
    (yv,) = fetch(program, {"x": xv}, y)
    lo, hi = (start % len(dims), stop % len(dims)) if dims else (0, -1)
    np.testing.assert_array_equal(yv, xv.reshape(dims[:lo] + [int(np.prod(dims[lo : hi + 1]))] + dims[hi + 1 :]))


def test_flatten_errors(program):
    x = feed(program, "x", [None, 3, None])
    with pytest.raises(ValueError, match="more than one merged dimension is dynamic"):
        S.flatten(x, 0, 1)
    with pytest.raises(ValueError, match="start_axis 2 must not come after stop_axis 1"):
        S.flatten(x, 2, 1)
    with pytest.raises(ValueError, match="stop_axis 3 is out of range for a 3-D input"):
        S.flatten(x, 0, 3)


def test_fluid_flatten(program):
    x = feed(program, "x", [None, 2, 3])
    assert S.fluid_flatten(x).shape == [-1, 6]
    assert S.fluid_flatten(x, axis=0).shape == [1, -1]
    assert S.fluid_flatten(x, axis=3).shape == [-1, 1]
    assert S.fluid_flatten(feed(program, "z", [4, 2, 3]), axis=2).shape == [8, 3]


@pytest.mark.parametrize(
    "shape, pad, fmt, want",
    [
        ([2, 3], [1, 0, 0, 2], "NCHW", [(1, 0), (0, 2)]),  # every dimension, first first
        ([1, 2, 3], [1, 2], "NCL", [(0, 0), (0, 0), (1, 2)]),
        ([1, 2, 3], [1, 2], "NLC", [(0, 0), (1, 2), (0, 0)]),
        ([1, 1, 2, 3], [1, 2, 3, 0], "NCHW", [(0, 0), (0, 0), (3, 0), (1, 2)]),
        ([1, 2, 3, 1], [1, 2, 3, 0], "NHWC", [(0, 0), (3, 0), (1, 2), (0, 0)]),
        ([1, 1, 2, 2, 2], [1, 0, 0, 1, 2, 0], "NCDHW", [(0, 0), (0, 0), (2, 0), (0, 1), (1, 0)]),
    ],
)
def test_functional_pad(program, shape, pad, fmt, want):
    x = feed(program, "x", shape)
    y = S.pad(x, pad, value=0.5, data_format=fmt)
    xv = rand(*shape, dtype=np.float32)
    (yv,) = fetch(program, {"x": xv}, y)
    np.testing.assert_array_equal(yv, np.pad(xv, want, constant_values=0.5))


def test_functional_pad_errors(program):
    x = feed(program, "x", [1, 2, 3])
    with pytest.raises(ValueError, match="mode must be one of"):
        S.pad(x, [1, 1], mode="symmetric")
    with pytest.raises(ValueError, match="data_format must be one of \\['NCL', 'NLC'\\]"):
        S.pad(x, [1, 1])
    with pytest.raises(ValueError, match="a 3-D input takes 6 paddings or 2"):
        S.pad(x, [1, 1, 1])
    with pytest.raises(TypeError, match="'value' must be a number"):
        S.pad(x, [1, 1], value="0", data_format="NCL")


def test_fluid_spellings(program):
    x = feed(program, "x", [None, 4])
    a, b = S.FLUID_LAYERS["split"](x, 2)  # dim=-1 by default
    assert a.shape == [-1, 2]
    assert S.FLUID_LAYERS["concat"]([a, b], 1).shape == [-1, 4]
    u = S.FLUID_LAYERS["unsqueeze"](x, [1])
    assert S.FLUID_LAYERS["squeeze"](u, [1]).shape == [-1, 4]
    assert S.FLUID_LAYERS["reshape"](x, [-1, 2, 2], act="relu").shape == [-1, 2, 2]
    assert S.FLUID_LAYERS["pad"](x, [0, 0, 1, 1], pad_value=1.0).shape == [-1, 6]
    assert S.FLUID_LAYERS["transpose"](x, [1, 0]).shape == [4, -1]
    assert S.FLUID_LAYERS["expand_as"](S.slice(x, [0], [0], [1]), x).shape == [-1, 4]


def test_fluid_expand_tiles_and_differentiates(program):
    x = feed(program, "x", [None, 2], "float64", stop_gradient=False)
    y = S.fluid_expand(x, [2, 3], name="tiled")
    w = feed(program, "w", [None, 6], "float64")
    from pullback.frontend.ops.elementwise import multiply
    from pullback.frontend.ops.reduction import sum as reduce_sum

    loss = reduce_sum(multiply(y, w))
    (gx,) = gradients(loss, x)
    assert y.shape == [-1, 6] and y.name == "tiled.tmp_0"
    xv, wv = rand(3, 2), rand(6, 6)
    yv, gv = fetch(program, {"x": xv, "w": wv}, y, gx)
    np.testing.assert_array_equal(yv, np.tile(xv, (2, 3)))
    np.testing.assert_allclose(gv, wv.reshape(2, 3, 3, 2).sum(axis=(0, 2)))
    assert S.fluid_expand(x, [1, 1]).shape == [-1, 2]


def test_flatten_gradient_with_dynamic_batch(program):
    x = feed(program, "x", [None, 3, 4], "float64", stop_gradient=False)
    y = S.flatten(x, 1)
    from pullback.frontend.ops.reduction import sum as reduce_sum

    (gx,) = gradients(reduce_sum(y), x)
    (gv,) = fetch(program, {"x": rand(5, 3, 4)}, gx)
    np.testing.assert_array_equal(gv, np.ones((5, 3, 4)))


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (lambda x: S.reshape(x, 12), TypeError, "reshape: 'shape' must be a list or tuple of ints, got int"),
        (lambda x: S.reshape(x, [0, "a"]), TypeError, "reshape: 'shape[1]' must be an int, got str"),
        (lambda x: S.reshape(x, [True, 2]), TypeError, "reshape: 'shape[0]' must be an int, got a bool"),
        (lambda x: S.reshape(np.ones(3), [3]), TypeError, "reshape"),
        (lambda x: S.concat(x), TypeError, "concat: 'x' must be a list or tuple of tensors"),
        (lambda x: S.concat([]), ValueError, "concat: 'x' must not be empty"),
        (lambda x: S.concat([x, 1.0]), TypeError, "concat"),
        (lambda x: S.split(x, 0), ValueError, "split: num_or_sections must be positive, got 0"),
        (lambda x: S.split(x, []), ValueError, "split: num_or_sections must not be an empty list"),
        (lambda x: S.slice(x, [1], [0, 1], [2]), ValueError, "slice: axes, starts and ends must have one length"),
        (lambda x: S.squeeze(x, axis=1.0), TypeError, "squeeze: 'axis' must be an int, got float"),
        (lambda x: S.fluid_expand(x, [2]), ValueError, "expand: expand_times must hold one positive int per"),
        (lambda x: S.fluid_reshape(x, [4], actual_shape=x), NotImplementedError, "actual_shape"),
        (lambda x: S.fluid_flatten(x, axis=3), ValueError, "flatten: axis 3 must lie in [0, 2]"),
        (lambda x: S.fluid_pad(x, [1, 1]), ValueError, "pad: paddings must hold 4 ints"),
    ],
)
def test_frontend_argument_errors(program, call, exc, message):
    x = feed(program, "x", [None, 4])
    with pytest.raises(exc) as e:
        call(x)
    assert message in str(e.value)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: S.reshape(x, [0, 3]), "'pd.reshape': cannot reshape [?, 4] to [0, 3]: element counts differ (4 vs 3)"),
        (lambda x: S.transpose(x, [0, 2]), "'pd.transpose': perm entry 2 is out of range for rank 2"),
        (lambda x: S.split(x, 3, axis=1), "'pd.split': dimension of size 4 does not split into 3 pieces"),
        (lambda x: S.expand(x, [-1, 8]), "'pd.expand': cannot broadcast dimension 1 of [?, 4] (size 4) to 8"),
        (lambda x: S.concat([x, S.unsqueeze(x, 0)]), "'pd.concat': operand shapes [?, 4] and [1, ?, 4] differ"),
        (lambda x: S.unsqueeze(x, 5), "'pd.unsqueeze': axis 5 is out of range for rank 2"),
    ],
)
def test_frontend_shape_errors_come_back_as_value_errors(program, call, message):
    x = feed(program, "x", [None, 4])
    n_ops = len(program.global_block().ops)
    with pytest.raises(ValueError) as e:
        call(x)
    assert message in str(e.value)
    assert len(program.global_block().ops) <= n_ops + 1  # nothing added by the failing op


def test_export_lists():
    assert {f.__name__ for f in S.PADDLE} >= {
        "reshape", "transpose", "concat", "split", "slice", "squeeze", "unsqueeze",
        "expand", "broadcast_to", "expand_as", "flatten",
    }
    assert S.FUNCTIONAL == [S.pad]
    assert set(S.FLUID_LAYERS) >= {"reshape", "transpose", "concat", "split", "squeeze", "unsqueeze", "expand"}
    assert set(S.TENSOR_METHODS) >= {"reshape", "transpose", "flatten", "squeeze", "unsqueeze", "expand"}
    assert all(f.__doc__ for f in [*S.PADDLE, *S.FUNCTIONAL, *S.FLUID_LAYERS.values()])


def test_eager_mode_and_tensor_methods():
    import pullback as paddle

    xv = rand(2, 3, 4)
    x = paddle.to_tensor(xv, stop_gradient=False)
    a, b = paddle.split(x.flatten(1), [4, -1], axis=1)
    z = paddle.concat([b, a], axis=1).reshape([2, 3, 4]).transpose([2, 0, 1]).unsqueeze(0).squeeze(0)
    padded = paddle.nn.functional.pad(z, [1, 1, 0, 0, 0, 0], value=5.0)
    want = np.pad(np.hstack([xv.reshape(2, 12)[:, 4:], xv.reshape(2, 12)[:, :4]]).reshape(2, 3, 4)
                  .transpose(2, 0, 1), [(1, 1), (0, 0), (0, 0)], constant_values=5.0)
    np.testing.assert_array_equal(padded.numpy(), want)
    (padded * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full_like(xv, 2.0))
    assert x.expand([2, 2, 3, 4]).shape == [2, 2, 3, 4]
