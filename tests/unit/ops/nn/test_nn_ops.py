"""nn ops: interpreter kernels against independent numpy formulas, typing rules,
and VJP rules against finite differences (first and, where the rule is
differentiable, second order)."""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
import pytest
from pullback.dialects import pd
from pullback.frontend.api import nn_functional as F
from pullback.frontend.api import paddle as paddle_api
from pullback.frontend.backward import gradients
from pullback.frontend.ops import nn as N
from pullback.frontend.ops.reduction import mean as reduce_mean
from pullback.passes.autodiff import AutodiffError, differentiate
from pullback.runtime.kernels import load_all
from pullback.runtime.kernels.nn import dropout_uniform
from pullback.testing import check_vjp, fd_grad, run_fetch, run_op
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

# The interpreter loads kernels lazily only while none is registered; importing
# the nn kernel module above registers some, so load every family explicitly.
load_all()
RNG = np.random.default_rng(1234)


def rand(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)




def result_type(op_cls: type[pd.PdOp], *types: Any, **props: Any):
    """The inferred result type for operand types given as (shape, dtype) pairs."""
    vals = [pd.DataOp.make(f"t{i}", s, d).out for i, (s, d) in enumerate(types)]
    return op_cls.make(*vals, **props).results[0].type


# =========================================================================== matmul


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "xs,ys,tx,ty",
    [
        ((3, 4), (4, 5), False, False),
        ((4, 3), (4, 5), True, False),
        ((3, 4), (5, 4), False, True),
        ((4, 3), (5, 4), True, True),
        ((2, 1, 3, 4), (3, 4, 2), False, False),  # batch broadcasting
        ((4,), (2, 4, 3), False, False),  # vector on the left
        ((2, 3, 4), (4,), False, False),  # vector on the right
        ((4,), (4,), False, False),  # dot product
        ((4,), (3, 4), True, True),  # transpose flag of a vector is ignored
    ],
)
def test_matmul_kernel(dtype, xs, ys, tx, ty):
    x, y = rand(*xs, dtype=dtype), rand(*ys, dtype=dtype)
    got = run_op(pd.MatmulOp, x, y, transpose_x=tx, transpose_y=ty)
    a = x.swapaxes(-1, -2) if tx and x.ndim > 1 else x
    c = y.swapaxes(-1, -2) if ty and y.ndim > 1 else y
    # Independent formula: explicit vector handling and einsum over broadcast batches.
    a2 = a[None, :] if a.ndim == 1 else a
    c2 = c[:, None] if c.ndim == 1 else c
    want = np.einsum("...ik,...kj->...ij", a2, c2)
    if a.ndim == 1:
        want = want[..., 0, :]
    if c.ndim == 1:
        want = want[..., 0]
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_matmul_dynamic_batch_type():
    t = result_type(pd.MatmulOp, ([None, 3, 4], "float32"), ([4, 2], "float32"))
    assert pd.shape_of(t) == (pd.DYN, 3, 2)
    x, w = rand(5, 3, 4, dtype=np.float32), rand(4, 2, dtype=np.float32)
    np.testing.assert_allclose(run_op(pd.MatmulOp, x, w, dynamic=True), x @ w, rtol=1e-5)


@pytest.mark.parametrize(
    "xs,ys,tx,ty",
    [
        ((3, 4), (4, 2), False, False),
        ((4, 3), (4, 2), True, False),
        ((3, 4), (2, 4), False, True),
        ((4, 3), (2, 4), True, True),
        ((2, 3, 4), (4, 2), False, False),  # y broadcast over the batch
        ((1, 3, 4), (2, 2, 4), False, True),  # x broadcast over the batch
        ((4,), (2, 4, 3), False, False),
        ((2, 3, 4), (4,), False, False),
        ((4,), (4,), False, False),
    ],
)
def test_matmul_vjp(xs, ys, tx, ty):
    check_vjp(pd.MatmulOp, [rand(*xs), rand(*ys)], props={"transpose_x": tx, "transpose_y": ty}, order=2)


def test_matmul_vjp_dynamic_batch():
    check_vjp(pd.MatmulOp, [rand(3, 2, 4), rand(4, 5)], dynamic_batch=False)
    check_vjp(pd.MatmulOp, [rand(3, 4), rand(4, 5)], dynamic_batch=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs", [(3, 4), (2, 3, 4)])
def test_linear_kernel(xs, dtype):
    x, w, b = rand(*xs, dtype=dtype), rand(4, 5, dtype=dtype), rand(5, dtype=dtype)
    got = run_op(pd.LinearOp, x, w, b, dynamic=True)
    want = np.einsum("...k,kn->...n", x.astype(np.float64), w.astype(np.float64)) + b
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("xs", [(3, 4), (2, 3, 4)])
def test_linear_vjp(xs):
    check_vjp(pd.LinearOp, [rand(*xs), rand(4, 5), rand(5)], order=2)
    check_vjp(pd.LinearOp, [rand(*xs), rand(4, 5), rand(5)], dynamic_batch=[0])


@pytest.mark.parametrize(
    "types,message",
    [
        ([((3, 4), "float32"), ((5, 2), "float32"), ((2,), "float32")], "has 4 features but weight [5, 2]"),
        ([((3, 4), "float32"), ((4, 2), "float32"), ((3,), "float32")], "bias [3] does not match"),
        ([((4,), "float32"), ((4, 2), "float32"), ((2,), "float32")], "x must have rank >= 2"),
        ([((3, 4), "float32"), ((4, 2), "float64"), ((2,), "float32")], "must have the same dtype"),
    ],
)
def test_linear_typing_errors(types, message):
    with pytest.raises(VerifyException, match=re.escape(message)):
        result_type(pd.LinearOp, *types)


def test_eager_linear_is_one_recorded_op_and_differentiates_twice():
    """Eager `F.linear` with a 1-D bias records one `pd.linear` (Paddle's dygraph
    kernel); `paddle.grad(create_graph=True)` through it gives second derivatives."""
    xv, wv, bv = rand(3, 4), rand(4, 2), rand(2)
    x = paddle_api.to_tensor(xv, stop_gradient=False)
    w = paddle_api.to_tensor(wv, stop_gradient=False)
    b = paddle_api.to_tensor(bv, stop_gradient=False)
    y = F.linear(x, w, b)
    assert type(y._node.tpl.op) is pd.LinearOp
    np.testing.assert_allclose(y.numpy(), xv @ wv + bv, rtol=1e-12)
    loss = (y * y).sum()
    (gw,) = paddle_api.grad(loss, [w], create_graph=True)
    yv = xv @ wv + bv
    np.testing.assert_allclose(gw.numpy(), 2 * xv.T @ yv, rtol=1e-10)
    # S = sum(2 x^T y) = 2 sum_i r_i s_i with r = row sums of x, s = row sums of y:
    # dS/dx_ij = 2 (s_i + r_i sum_n w_jn), dS/dw_jn = 2 sum_i r_i x_ij, dS/db_n = 2 sum_i r_i.
    gw.sum().backward()
    r, srow = xv.sum(axis=1), yv.sum(axis=1)
    np.testing.assert_allclose(x.grad.numpy(), 2 * (srow[:, None] + r[:, None] * wv.sum(axis=1)), rtol=1e-10)
    np.testing.assert_allclose(w.grad.numpy(), np.repeat((2 * r @ xv)[:, None], 2, axis=1), rtol=1e-10)
    np.testing.assert_allclose(b.grad.numpy(), np.full(2, 2 * r.sum()), rtol=1e-10)


def test_eager_linear_without_the_fused_form_still_matmul_and_add():
    """No bias, or a bias that is not 1-D: the product and `elementwise_add`."""
    x, w = paddle_api.to_tensor(rand(3, 4)), paddle_api.to_tensor(rand(4, 2))
    assert F.linear(x, w)._node is None  # nothing needs a gradient: not recorded
    x.stop_gradient = False
    assert type(F.linear(x, w)._node.tpl.op) is pd.MatmulOp
    b2 = paddle_api.to_tensor(rand(3, 2))
    np.testing.assert_allclose(F.linear(x, w, b2).numpy(), x.numpy() @ w.numpy() + b2.numpy(), rtol=1e-12)


# ======================================================================== embedding


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_lookup_table_kernel(dtype, padding_idx):
    w = rand(6, 3, dtype=dtype)
    ids = np.array([[0, 2, 5], [5, 1, 2]], dtype=np.int64)
    got = run_op(pd.LookupTableOp, ids, w, dynamic=True, padding_idx=padding_idx)
    assert got.shape == (2, 3, 3)
    pad = None if padding_idx is None else padding_idx % 6
    for i, j in itertools.product(range(2), range(3)):
        want = np.zeros(3) if ids[i, j] == pad else w[ids[i, j]]
        np.testing.assert_array_equal(got[i, j], want.astype(dtype))


def test_lookup_table_int32_ids_and_types():
    w = rand(4, 2)
    ids = np.array([3, 0, 3], dtype=np.int32)
    np.testing.assert_array_equal(run_op(pd.LookupTableOp, ids, w), w[[3, 0, 3]])
    t = result_type(pd.LookupTableOp, ([None, 7], "int64"), ([10, 4], "float32"))
    assert pd.shape_of(t) == (pd.DYN, 7, 4)


def test_lookup_table_rejects_bad_ids():
    with pytest.raises(IndexError, match="'pd.lookup_table': id 4 is out of range"):
        run_op(pd.LookupTableOp, np.array([1, 4], dtype=np.int64), rand(4, 2))


def test_lookup_table_grad_kernel():
    ids = np.array([[1, 3], [1, 0]], dtype=np.int64)
    g = rand(2, 2, 3)
    got = run_op(pd.LookupTableGradOp, ids, g, num_rows=5, padding_idx=0)
    want = np.zeros((5, 3))
    for i, j in itertools.product(range(2), range(2)):
        if ids[i, j] != 0:
            want[ids[i, j]] += g[i, j]
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("padding_idx", [None, 1, -2])
def test_lookup_table_vjp(padding_idx):
    ids = np.array([[0, 1, 3], [3, 3, 2]], dtype=np.int64)
    check_vjp(pd.LookupTableOp, [ids, rand(5, 2)], props={"padding_idx": padding_idx}, order=2)


def test_lookup_table_grad_vjp():
    ids = np.array([0, 1, 1, 4], dtype=np.int64)
    check_vjp(pd.LookupTableGradOp, [ids, rand(4, 3)], props={"num_rows": 5, "padding_idx": 4}, order=2)


# ====================================================================== convolution


def same_pads(size: int, k: int, s: int) -> tuple[int, int]:
    """Paddle's SAME: output ceil(size/s), total padding split smaller half first."""
    out = (size + s - 1) // s
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


def ref_conv2d(x, w, stride=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), groups=1):
    """Direct loops over the output: out[n,o,y,x] = <window, w[o]> within o's group."""
    t, b, l, r = pads
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)))
    n_, c_, h_, w_ = xp.shape
    o_, cg, kh, kw = w.shape
    oh = (h_ - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w_ - dil[1] * (kw - 1) - 1) // stride[1] + 1
    og = o_ // groups
    out = np.zeros((n_, o_, oh, ow), x.dtype)
    for n, o, y, xx in itertools.product(range(n_), range(o_), range(oh), range(ow)):
        g = o // og
        ys, xs = y * stride[0], xx * stride[1]
        patch = xp[n, g * cg:(g + 1) * cg, ys:ys + dil[0] * (kh - 1) + 1:dil[0], xs:xs + dil[1] * (kw - 1) + 1:dil[1]]
        out[n, o, y, xx] = np.sum(patch * w[o])
    return out


def ref_conv2d_transpose(g, w, stride, pads, dil, groups, out_hw):
    """Scatter loops: every input pixel adds `g * w` into the padded output."""
    t, _, l, _ = pads
    n_, ci, h_, w_ = g.shape
    _, cog, kh, kw = w.shape
    big = np.zeros((n_, cog * groups, t + out_hw[0] + dil[0] * kh + stride[0] * h_,
                    l + out_hw[1] + dil[1] * kw + stride[1] * w_), g.dtype)
    cig = ci // groups
    for n, c, y, xx, i, j in itertools.product(range(n_), range(ci), range(h_), range(w_), range(kh), range(kw)):
        grp = c // cig
        big[n, grp * cog:(grp + 1) * cog, y * stride[0] + i * dil[0], xx * stride[1] + j * dil[1]] += g[n, c, y, xx] * w[c, :, i, j]
    return big[:, :, t:t + out_hw[0], l:l + out_hw[1]]


CONV_CASES = [
    # (x shape, filter shape, props, explicit pads for the reference, dilations)
    ((2, 3, 5, 6), (4, 3, 3, 3), {}, (0, 0, 0, 0), (1, 1)),
    ((2, 3, 5, 6), (4, 3, 3, 2), {"strides": [2, 1], "paddings": [1, 2]}, (1, 1, 2, 2), (1, 1)),
    ((1, 4, 7, 7), (6, 2, 3, 3), {"groups": 2, "paddings": [0, 1, 2, 0], "dilations": [2, 1]}, (0, 1, 2, 0), (2, 1)),
    ((1, 2, 7, 8), (3, 2, 3, 2), {"strides": [2, 3], "padding_algorithm": "SAME", "dilations": [2, 2]},
     same_pads(7, 3, 2) + same_pads(8, 2, 3), (1, 1)),
    ((1, 2, 6, 5), (2, 1, 2, 2), {"groups": 2, "paddings": [3, 3], "padding_algorithm": "VALID"}, (0, 0, 0, 0), (1, 1)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs,ws,props,pads,dil", CONV_CASES)
def test_conv2d_kernel(dtype, xs, ws, props, pads, dil):
    x, w = rand(*xs, dtype=dtype), rand(*ws, dtype=dtype)
    got = run_op(pd.Conv2DOp, x, w, dynamic=True, **props)
    want = ref_conv2d(x, w, props.get("strides", (1, 1)), pads, dil, props.get("groups", 1))
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_conv2d_static_shapes():
    t = result_type(pd.Conv2DOp, ([None, 3, 32, 32], "float32"), ([8, 3, 5, 5], "float32"),
                    strides=[2, 2], padding_algorithm="SAME")
    assert pd.shape_of(t) == (pd.DYN, 8, 16, 16)
    t = result_type(pd.Conv2DOp, ([2, 3, None, 9], "float32"), ([8, 3, 3, 3], "float32"))
    assert pd.shape_of(t) == (2, 8, pd.DYN, 7)


@pytest.mark.parametrize("xs,ws,props,pads,dil", CONV_CASES)
def test_conv2d_filter_grad_kernel(xs, ws, props, pads, dil):
    x, w = rand(*xs), rand(*ws)
    out = ref_conv2d(x, w, props.get("strides", (1, 1)), pads, dil, props.get("groups", 1))
    g = rand(*out.shape)
    got = run_op(pd.Conv2DFilterGradOp, x, g, filter_size=list(ws[2:]), **props)
    # conv2d is linear in w: d<conv(x, w), g>/dw[e] = <conv(x, e), g> for basis e.
    want = np.zeros(ws)
    for idx in itertools.product(*map(range, ws)):
        e = np.zeros(ws)
        e[idx] = 1.0
        want[idx] = np.sum(ref_conv2d(x, e, props.get("strides", (1, 1)), pads, dil, props.get("groups", 1)) * g)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    "gs,ws,props,pads,dil,out_hw",
    [
        ((2, 4, 3, 3), (4, 3, 3, 3), {}, (0, 0, 0, 0), (1, 1), (5, 5)),
        ((1, 4, 3, 2), (4, 2, 3, 3), {"strides": [2, 2], "paddings": [1, 0], "groups": 2}, (1, 1, 0, 0), (1, 1), (5, 5)),
        ((1, 2, 3, 3), (2, 1, 2, 3), {"strides": [2, 3], "output_padding": [1, 2], "dilations": [2, 1]},
         (0, 0, 0, 0), (2, 1), (8, 11)),
        ((1, 2, 3, 4), (2, 3, 3, 3), {"strides": [2, 2], "output_size": [6, 8], "paddings": [1, 1]},
         (1, 1, 1, 1), (1, 1), (6, 8)),
        ((1, 2, 3, 4), (2, 1, 3, 3), {"strides": [2, 2], "padding_algorithm": "SAME"},
         # Paddle resolves SAME from this op's input: pads (1, 1) and (0, 1).
         same_pads(3, 3, 2) + same_pads(4, 3, 2), (1, 1), (5, 8)),
    ],
)
def test_conv2d_transpose_kernel(gs, ws, props, pads, dil, out_hw):
    g, w = rand(*gs), rand(*ws)
    got = run_op(pd.Conv2DTransposeOp, g, w, **props)
    groups = props.get("groups", 1)
    want = ref_conv2d_transpose(g, w, props.get("strides", (1, 1)), pads, dil, groups, out_hw)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_conv2d_transpose_is_adjoint_of_conv2d():
    x, w = rand(2, 4, 7, 6), rand(6, 2, 3, 2)
    props = {"strides": [2, 2], "paddings": [1, 0, 2, 1], "dilations": [1, 2], "groups": 2}
    y = run_op(pd.Conv2DOp, x, w, **props)
    g = rand(*y.shape)
    xt = run_op(pd.Conv2DTransposeOp, g, w, output_size=[7, 6], **props)
    np.testing.assert_allclose(np.sum(y * g), np.sum(x * xt), rtol=1e-10)


# Gradient checks use smaller shapes: finite differences run the program per element.
CONV_VJP_CASES = [
    ((1, 2, 4, 4), (2, 2, 2, 2), {}, 2),
    ((1, 2, 5, 4), (2, 2, 3, 2), {"strides": [2, 1], "paddings": [1, 2]}, 1),
    ((1, 4, 5, 4), (4, 2, 3, 2), {"groups": 2, "paddings": [0, 1, 2, 0], "dilations": [2, 1]}, 2),
    ((1, 2, 5, 6), (2, 2, 3, 2), {"strides": [2, 3], "padding_algorithm": "SAME", "dilations": [2, 2]}, 1),
]


@pytest.mark.parametrize("xs,ws,props,order", CONV_VJP_CASES)
def test_conv2d_vjp(xs, ws, props, order):
    check_vjp(pd.Conv2DOp, [rand(*xs), rand(*ws)], props=props, order=order)


def test_conv2d_vjp_dynamic_batch():
    check_vjp(pd.Conv2DOp, [rand(2, 1, 5, 5), rand(2, 1, 3, 3)],
              props={"strides": [2, 2], "paddings": [1, 1]}, dynamic_batch=True)


@pytest.mark.parametrize(
    "gs,ws,props",
    [
        ((1, 4, 2, 2), (4, 1, 3, 2), {"strides": [2, 2], "paddings": [1, 0], "groups": 2}),
        ((1, 2, 2, 3), (2, 1, 2, 3), {"strides": [2, 3], "output_padding": [1, 2], "dilations": [2, 1]}),
        ((1, 2, 3, 2), (2, 1, 3, 3), {"strides": [2, 2], "padding_algorithm": "SAME"}),
        # output_padding larger than the pad after, at unit stride (dilated): the extra
        # rows lie past every tap, so the adjoint slices them off the cotangent.
        ((1, 2, 3, 3), (2, 2, 2, 2), {"dilations": [2, 2], "output_padding": [1, 1]}),
        # ... and within the pad after: the extra rows are computed rows the forward
        # keeps (its pad after shrinks), which the adjoint must convolve.
        ((1, 2, 3, 3), (2, 1, 3, 3), {"strides": [2, 2], "paddings": [1, 1], "output_padding": [1, 1]}),
        ((1, 2, 2, 3), (2, 2, 3, 3), {"strides": [2, 2], "paddings": [1, 2], "output_size": [4, 4]}),
    ],
)
def test_conv2d_transpose_vjp(gs, ws, props):
    check_vjp(pd.Conv2DTransposeOp, [rand(*gs), rand(*ws)], props=props, order=2)


@pytest.mark.parametrize("xs,ws,props,order", CONV_VJP_CASES)
def test_conv2d_filter_grad_vjp(xs, ws, props, order):
    out = run_op(pd.Conv2DOp, np.zeros(xs), np.zeros(ws), **props)
    check_vjp(pd.Conv2DFilterGradOp, [rand(*xs), rand(*out.shape)],
              props={"filter_size": list(ws[2:]), **props}, order=order)


def test_conv2d_vjp_needs_static_size_for_strided_dynamic_input():
    x = pd.DataOp.make("x", [1, 2, None, 5])
    w = pd.ParameterOp.make("w", [3, 2, 3, 3])
    conv = pd.Conv2DOp.make(x.out, w.out, strides=[2, 2])
    loss = pd.MeanOp.make(conv.out)
    bw = pd.BackwardOp.make([loss.out], [x.out])
    ModuleOp([x, w, conv, loss, bw])
    with pytest.raises(AutodiffError, match="needs a static input size"):
        differentiate(bw)


# ========================================================================== pooling


def ref_pool2d(x, k, s, pads, ptype, ceil_mode=False, exclusive=True):
    """Paddle's CPU pooling written out: windows start at i*s - pad, are clipped to
    the input, and average pooling divides by the clipped window size (exclusive)
    or by the window clipped to the input padded by the top/left padding on both
    sides (Paddle keeps only those for the geometry: a larger bottom/right padding
    or a ceil_mode overhang is not counted)."""
    n_, c_, h_, w_ = x.shape
    t, b, l, r = pads

    def size(dim, kk, ss, p0, p1):
        return (dim - kk + p0 + p1 + (ss - 1 if ceil_mode else 0)) // ss + 1

    oh, ow = size(h_, k[0], s[0], t, b), size(w_, k[1], s[1], l, r)
    out = np.zeros((n_, c_, oh, ow), x.dtype)
    for i, j in itertools.product(range(oh), range(ow)):
        hs, ws = i * s[0] - t, j * s[1] - l
        span = (min(hs + k[0], h_ + t) - hs) * (min(ws + k[1], w_ + l) - ws)
        he, we = min(hs + k[0], h_), min(ws + k[1], w_)
        hs, ws = max(hs, 0), max(ws, 0)
        win = x[:, :, hs:he, ws:we]
        if ptype == "max":
            out[:, :, i, j] = win.max(axis=(2, 3))
        else:
            count = (he - hs) * (we - ws) if exclusive else span
            out[:, :, i, j] = win.sum(axis=(2, 3)) / count
    return out


POOL_CASES = [
    ({"ksize": [2, 2], "strides": [2, 2]}, (0, 0, 0, 0)),
    ({"ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1]}, (1, 1, 1, 1)),
    ({"ksize": [3, 2], "strides": [2, 2], "ceil_mode": True}, (0, 0, 0, 0)),
    ({"ksize": [3, 3], "strides": [2, 1], "paddings": [1, 0, 0, 1], "ceil_mode": True, "exclusive": False}, (1, 0, 0, 1)),
    ({"ksize": [3, 3], "strides": [2, 2], "padding_algorithm": "SAME"}, same_pads(5, 3, 2) + same_pads(6, 3, 2)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ptype", ["max", "avg"])
@pytest.mark.parametrize("props,pads", POOL_CASES)
def test_pool2d_kernel(dtype, ptype, props, pads):
    x = rand(2, 3, 5, 6, dtype=dtype)
    got = run_op(pd.Pool2DOp, x, dynamic=True, pooling_type=ptype, **props)
    want = ref_pool2d(x, props["ksize"], props["strides"], pads, ptype,
                      props.get("ceil_mode", False), props.get("exclusive", True))
    assert got.shape == want.shape and got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_pool2d_hand_values():
    x = np.arange(16, dtype=np.float64).reshape(1, 1, 4, 4)
    # 3x3 windows, stride 2, padding 1: corners see 2x2, 2x3, 3x2, 3x3 input pixels.
    got = run_op(pd.Pool2DOp, x, pooling_type="avg", ksize=[3, 3], strides=[2, 2], paddings=[1, 1])
    np.testing.assert_allclose(got[0, 0], [[(0 + 1 + 4 + 5) / 4, (1 + 2 + 3 + 5 + 6 + 7) / 6],
                                           [(4 + 5 + 8 + 9 + 12 + 13) / 6, (5 + 6 + 7 + 9 + 10 + 11 + 13 + 14 + 15) / 9]])
    got = run_op(pd.Pool2DOp, x, pooling_type="avg", ksize=[3, 3], strides=[2, 2], paddings=[1, 1], exclusive=False)
    np.testing.assert_allclose(got[0, 0, 0, 0], 10 / 9)
    got = run_op(pd.Pool2DOp, x, pooling_type="max", ksize=[3, 3], strides=[2, 2], paddings=[1, 1])
    np.testing.assert_allclose(got[0, 0], [[5, 7], [13, 15]])


def test_pool2d_global_and_adaptive():
    x = rand(2, 3, 5, 7)
    got = run_op(pd.Pool2DOp, x, dynamic=True, pooling_type="avg", ksize=[1, 1], global_pooling=True)
    np.testing.assert_allclose(got, x.mean(axis=(2, 3), keepdims=True))
    got = run_op(pd.Pool2DOp, x, pooling_type="max", ksize=[2, 2], global_pooling=True)
    np.testing.assert_allclose(got, x.max(axis=(2, 3), keepdims=True))
    got = run_op(pd.Pool2DOp, x, pooling_type="avg", ksize=[2, 3], adaptive=True)
    # Adaptive windows [floor(i*H/oh), ceil((i+1)*H/oh)): rows {0..2},{2..4}; cols {0..2},{2..4},{4..6}.
    rows, cols = [(0, 3), (2, 5)], [(0, 3), (2, 5), (4, 7)]
    for (i, (h0, h1)), (j, (w0, w1)) in itertools.product(enumerate(rows), enumerate(cols)):
        np.testing.assert_allclose(got[:, :, i, j], x[:, :, h0:h1, w0:w1].mean(axis=(2, 3)))


def test_pool2d_grad_kernel():
    x = np.array([[[[1.0, 3.0, 3.0], [0.0, 2.0, 1.0], [5.0, 5.0, 0.0]]]])
    g = np.array([[[[10.0, 20.0], [30.0, 40.0]]]])
    props = {"ksize": [2, 2], "strides": [1, 1]}
    got = run_op(pd.Pool2DGradOp, x, g, pooling_type="max", **props)
    # First maxima (row-major) of the four 2x2 windows: 3 at (0,1) twice (the tie at
    # (0,2) loses), 5 at (2,0), and 5 at (2,1) for the window [[2, 1], [5, 0]].
    want = np.zeros_like(x)
    want[0, 0, 0, 1] = 10 + 20
    want[0, 0, 2, 0] = 30
    want[0, 0, 2, 1] = 40
    np.testing.assert_allclose(got, want)
    # Average pooling is linear: its gradient is the adjoint of pool2d.
    for props in [p for p, _ in POOL_CASES]:
        x = rand(1, 2, 5, 6)
        y = run_op(pd.Pool2DOp, x, pooling_type="avg", **props)
        g = rand(*y.shape)
        dx = run_op(pd.Pool2DGradOp, x, g, pooling_type="avg", **props)
        np.testing.assert_allclose(np.sum(y * g), np.sum(x * dx), rtol=1e-10)


@pytest.mark.parametrize("props,pads", POOL_CASES)
def test_pool2d_vjp(props, pads):
    # Distinct, well-separated values keep max pooling's argmax away from ties.
    x = RNG.permutation(60).reshape(1, 2, 5, 6).astype(np.float64)
    check_vjp(pd.Pool2DOp, [x], props={"pooling_type": "max", **props}, eps=1e-3)
    check_vjp(pd.Pool2DOp, [rand(1, 2, 5, 6)], props={"pooling_type": "avg", **props}, order=2, dynamic_batch=True)


def test_pool2d_vjp_global_adaptive():
    check_vjp(pd.Pool2DOp, [rand(2, 2, 5, 6)], props={"pooling_type": "avg", "ksize": [2, 4], "adaptive": True}, order=2)
    check_vjp(pd.Pool2DOp, [rand(2, 2, 5, 6)], props={"pooling_type": "avg", "ksize": [1, 1], "global_pooling": True})


def test_pool2d_grad_vjp():
    props = {"pooling_type": "avg", "ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1], "ceil_mode": True}
    x = rand(1, 2, 5, 6)
    y = run_op(pd.Pool2DOp, x, **props)
    check_vjp(pd.Pool2DGradOp, [x, rand(*y.shape)], props=props, order=2)


def test_max_pool_second_order_is_refused():
    x = RNG.permutation(16).reshape(1, 1, 4, 4).astype(np.float64)
    with pytest.raises(AutodiffError, match="second derivatives of max pooling"):
        check_vjp(pd.Pool2DOp, [x], props={"pooling_type": "max", "ksize": [2, 2], "strides": [2, 2]}, order=2)


# ======================================================================= layer norm


def ref_layer_norm(x, scale, bias, axis, eps):
    axes = tuple(range(axis, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    tail = x.shape[axis:]
    if scale is not None:
        y = y * scale.reshape(tail)
    if bias is not None:
        y = y + bias.reshape(tail)
    return y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis,nparams", [(1, 2), (1, 0), (2, 1), (1, 1), (0, 2)])
def test_layer_norm_kernel(dtype, axis, nparams):
    x = rand(3, 2, 4, dtype=dtype)
    size = int(np.prod(x.shape[axis:]))
    params = [rand(size, dtype=dtype) for _ in range(nparams)]
    got = run_op(pd.LayerNormOp, x, *params, dynamic=axis > 0, begin_norm_axis=axis, epsilon=1e-3)
    want = ref_layer_norm(x.astype(np.float64), *(params + [None, None])[:2], axis, 1e-3)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis,nparams", [(1, 2), (1, 0), (2, 1), (1, 1)])
def test_layer_norm_vjp(axis, nparams):
    x = rand(3, 2, 4)
    size = int(np.prod(x.shape[axis:]))
    params = [rand(size) for _ in range(nparams)]
    check_vjp(pd.LayerNormOp, [x, *params], props={"begin_norm_axis": axis, "epsilon": 1e-3},
              order=2, dynamic_batch=nparams == 0)


# ========================================================================== dropout


def splitmix64(seed: int, i: int) -> float:
    """Python-int reference of the dropout hash: splitmix64's (i+1)-th output."""
    m = (1 << 64) - 1
    z = (seed + (i + 1) * 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    z ^= z >> 31
    return (z >> 40) / float(1 << 24)


def test_dropout_hash_matches_reference():
    for seed in (0, 1, 12345, -7):
        u = dropout_uniform(seed, 50)
        assert [splitmix64(seed % (1 << 64), i) for i in range(50)] == list(u)
    # First output of splitmix64 from state 0 is the published 0xE220A8397B1DCDAF.
    assert splitmix64(0, 0) == (0xE220A8397B1DCDAF >> 40) / 2**24


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dropout_kernel(dtype):
    x = rand(40, 50, dtype=dtype) + 3.0
    p = 0.3
    up = run_op(pd.DropoutOp, x, dynamic=True, dropout_prob=p, seed=5, dropout_implementation="upscale_in_train")
    keep = np.array([splitmix64(5, i) >= p for i in range(x.size)]).reshape(x.shape)
    np.testing.assert_allclose(up, np.where(keep, x / (1 - p), 0), rtol=1e-6)
    assert abs(keep.mean() - (1 - p)) < 0.03
    down = run_op(pd.DropoutOp, x, dropout_prob=p, seed=5)
    np.testing.assert_array_equal(down, np.where(keep, x, 0))
    np.testing.assert_array_equal(run_op(pd.DropoutOp, x, dropout_prob=p, seed=5), down)  # deterministic
    assert not np.array_equal(run_op(pd.DropoutOp, x, dropout_prob=p, seed=6), down)
    np.testing.assert_allclose(run_op(pd.DropoutOp, x, dropout_prob=p, is_test=True), x * (1 - p), rtol=1e-6)
    np.testing.assert_array_equal(
        run_op(pd.DropoutOp, x, dropout_prob=p, is_test=True, dropout_implementation="upscale_in_train"), x)
    np.testing.assert_array_equal(
        run_op(pd.DropoutOp, x, dropout_prob=1.0, dropout_implementation="upscale_in_train"), np.zeros_like(x))
    np.testing.assert_array_equal(run_op(pd.DropoutOp, x, dropout_prob=0.0), x)


@pytest.mark.parametrize(
    "props",
    [
        {"dropout_prob": 0.4, "seed": 3},
        {"dropout_prob": 0.4, "seed": 3, "dropout_implementation": "upscale_in_train"},
        {"dropout_prob": 0.4, "is_test": True},
    ],
)
def test_dropout_vjp(props):
    check_vjp(pd.DropoutOp, [rand(4, 5)], props=props, order=2, dynamic_batch=True)


# ================================================================== typing failures


@pytest.mark.parametrize(
    "op_cls,types,props,message",
    [
        (pd.Conv2DOp, [([1, 3, 4, 4], "float32"), ([2, 3, 5, 5], "float32")], {},
         "'pd.conv2d': the 5-wide window (dilation 1) does not fit an input of size 4"),
        (pd.Pool2DOp, [([1, 3, 4, 4], "float32")], {"ksize": [2]},
         "'pd.pool2d': ksize must be 2 integers >= 1, got [2]"),
        (pd.LayerNormOp, [([2, 4], "float32"), ([4], "float64")], {},
         "'pd.layer_norm': operands must have the same dtype"),
        (pd.DropoutOp, [([2, 4], "int64")], {}, "'pd.dropout': x must be float32 or float64"),
    ],
)
def test_infer_errors(op_cls, types, props, message):
    with pytest.raises(VerifyException) as e:
        result_type(op_cls, *types, **props)
    assert message in str(e.value)


# ========================================================================= frontend


FEED_DTYPE = "float64"  # default dtype of the shared `static` fixture's feeds


def test_frontend_conv_pool_forward(static):
    main, feed = static
    x, w, b = feed("x", [-1, 2, 6, 5]), feed("w", [4, 2, 3, 3]), feed("b", [4])
    outs = [
        F.conv2d(x, w, b, stride=2, padding=[[0, 0], [0, 0], [1, 0], [2, 1]]),
        F.conv2d(x, w, padding="SAME", dilation=2),
        F.max_pool2d(x, 2),
        F.avg_pool2d(x, kernel_size=3, stride=2, padding=1, ceil_mode=True, exclusive=False),
        F.adaptive_avg_pool2d(x, [2, None]),
        N.fluid_pool2d(x, pool_type="avg", global_pooling=True),
        N.fluid_pool2d(x, pool_size=[2, 3], pool_type="max", pool_stride=[1, 2], pool_padding="VALID"),
        F.conv2d_transpose(feed("g", [-1, 4, 3, 3]), w, stride=2, output_size=[8, 7]),
    ]
    xv, wv, bv, gv = rand(2, 2, 6, 5), rand(4, 2, 3, 3), rand(4), rand(2, 4, 3, 3)
    got = run_fetch(main, {"x": xv, "w": wv, "b": bv, "g": gv}, *outs)
    want = [
        ref_conv2d(xv, wv, (2, 2), (1, 0, 2, 1)) + bv[None, :, None, None],
        ref_conv2d(xv, wv, (1, 1), same_pads(6, 3, 1) + same_pads(5, 3, 1)),  # SAME drops dilation
        ref_pool2d(xv, (2, 2), (2, 2), (0, 0, 0, 0), "max"),
        ref_pool2d(xv, (3, 3), (2, 2), (1, 1, 1, 1), "avg", ceil_mode=True, exclusive=False),
        np.stack([xv[:, :, 0:3].mean(axis=2), xv[:, :, 3:6].mean(axis=2)], axis=2),
        xv.mean(axis=(2, 3), keepdims=True),
        ref_pool2d(xv, (2, 3), (1, 2), (0, 0, 0, 0), "max"),
        ref_conv2d_transpose(gv, wv, (2, 2), (0, 0, 0, 0), (1, 1), 1, (8, 7)),
    ]
    for k, (g, wt) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, wt, rtol=1e-10, atol=1e-12, err_msg=f"output #{k}")
    assert outs[0].shape == [-1, 4, 3, 3] and outs[4].shape == [-1, 2, 2, 5]
    assert outs[0].name == "conv2d_0.tmp_1" and outs[0].op.type == "elementwise_add"


def test_frontend_dense_ops_forward(static):
    main, feed = static
    x, w, b = feed("x", [-1, 3, 4]), feed("w", [4, 5]), feed("b", [5])
    ids, table = feed("ids", [-1, 2], "int64"), feed("table", [6, 3])
    s, t = feed("s", [12]), feed("t", [12])
    outs = [
        N.matmul(x, w), x @ w, N.matmul(w, x, transpose_x=True, transpose_y=True),
        N.fluid_matmul(x, w, alpha=0.5), F.linear(x, w, b),
        F.embedding(ids, table, padding_idx=-1),
        F.layer_norm(x, [3, 4], s, t, epsilon=1e-3), F.layer_norm(x, 4), F.layer_norm(x, [3, 4], bias=t),
    ]
    xv, wv, bv, tv = rand(2, 3, 4), rand(4, 5), rand(5), rand(6, 3)
    sv, tt = rand(12), rand(12)
    idv = np.array([[0, 5], [2, 5]], dtype=np.int64)
    got = run_fetch(main, {"x": xv, "w": wv, "b": bv, "ids": idv, "table": tv, "s": sv, "t": tt}, *outs)
    emb = tv[idv]
    emb[idv == 5] = 0
    want = [
        xv @ wv, xv @ wv, np.einsum("kn,bmk->bnm", wv, xv),
        0.5 * xv @ wv, xv @ wv + bv, emb,
        ref_layer_norm(xv, sv, tt, 1, 1e-3), ref_layer_norm(xv, None, None, 2, 1e-5),
        ref_layer_norm(xv, None, tt, 1, 1e-5),
    ]
    for k, (g, wt) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, wt, rtol=1e-10, atol=1e-12, err_msg=f"output #{k}")
    assert outs[0].name == "matmul_v2_0.tmp_0"
    assert outs[4].name == "linear_0.tmp_1"
    assert outs[5].op.attr("padding_idx") == 5


def test_frontend_dropout(static):
    main, feed = static
    x = feed("x", [-1, 40])
    a, b = F.dropout(x, 0.25), F.dropout(x, 0.25)
    c = N.fluid_dropout(x, 0.25, seed=9)
    d = F.dropout(x, 0.25, training=False)
    e = N.fluid_dropout(x, 0.25, is_test=True)
    xv = rand(8, 40) + 5.0
    av, bv, cv, dv, ev = run_fetch(main, {"x": xv}, a, b, c, d, e)
    assert not np.array_equal(av == 0, bv == 0)  # each op has its own mask
    np.testing.assert_allclose(av[av != 0], (xv / 0.75)[av != 0])
    keep = dropout_uniform(9, xv.size).reshape(xv.shape) >= 0.25
    np.testing.assert_array_equal(cv, np.where(keep, xv, 0.0))  # downgrade_in_infer
    np.testing.assert_array_equal(dv, xv)
    np.testing.assert_allclose(ev, 0.75 * xv)
    test_prog = main.clone(for_test=True)
    ops = [op for op in test_prog.module.walk() if isinstance(op, pd.DropoutOp)]
    assert len(ops) == 5 and all(op.prop("is_test") for op in ops)
    assert run_fetch(main, {"x": xv}, a)[0].tolist() == av.tolist()  # same mask on every run


def test_frontend_gradient_through_conv_net(static):
    main, feed = static
    x, w, b = feed("x", [-1, 1, 5, 5]), feed("w", [2, 1, 3, 3]), feed("b", [2])
    s = feed("s", [4])
    for v in (w, b, s):
        v.stop_gradient = False
    h = F.max_pool2d(F.conv2d(x, w, b, padding=1), 2, stride=2)
    h = F.layer_norm(N.matmul(h, h, transpose_y=True), [2, 2], weight=s)
    loss = reduce_mean(h * h + h)
    grads = gradients([loss], [w, b])
    xv, wv, bv = rand(2, 1, 5, 5), rand(2, 1, 3, 3), rand(2)
    feeds = {"x": xv, "w": wv, "b": bv, "s": rand(4)}
    got = run_fetch(main, feeds, *grads)

    def f(wa, ba):
        return float(run_fetch(main, {**feeds, "w": wa, "b": ba}, loss)[0])

    for k, num in enumerate((fd_grad(lambda a: f(a, bv), wv), fd_grad(lambda a: f(wv, a), bv))):
        np.testing.assert_allclose(got[k], num, rtol=1e-5, atol=1e-7)


def test_frontend_eager():
    x = paddle_api.to_tensor(rand(2, 2, 5, 5), stop_gradient=False)
    w = paddle_api.to_tensor(rand(3, 2, 3, 3), stop_gradient=False)
    y = F.avg_pool2d(F.conv2d(x, w, padding=1), 2)
    np.testing.assert_allclose(
        y.numpy(), ref_pool2d(ref_conv2d(x.numpy(), w.numpy(), pads=(1, 1, 1, 1)), (2, 2), (2, 2), (0, 0, 0, 0), "avg"))
    m = paddle_api.to_tensor(rand(5, 4))
    np.testing.assert_allclose((x @ m).numpy(), x.numpy() @ m.numpy())
    F.linear(x, m).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(m.numpy().sum(axis=1), (2, 2, 5, 5)))


@pytest.mark.parametrize(
    "call,error,message",
    [
        (lambda x, i: F.conv2d(x, x, data_format="NCWH"), ValueError, "conv2d: data_format must be 'NCHW' or 'NHWC'"),
        (lambda x, i: F.conv2d(x, x, padding="FULL"), ValueError, "conv2d: padding must be 'SAME', 'VALID' or ints"),
        (lambda x, i: F.conv2d(x, x, padding=[1, 2, 3]), ValueError, "conv2d: padding must be"),
        (lambda x, i: F.conv2d(x, x, stride=0), ValueError, "conv2d: stride must be an int or 2 ints >= 1"),
        (lambda x, i: F.conv2d(x, x, dilation=2), ValueError, "'pd.conv2d': the 3-wide window (dilation 2)"),
        (lambda x, i: F.max_pool2d(x, 2, return_mask=True), NotImplementedError, "return_mask"),
        (lambda x, i: F.avg_pool2d(x, 2, padding="VALID", ceil_mode=True), ValueError,
         'When Attr(padding) is "VALID", Attr(ceil_mode) must be False'),
        (lambda x, i: F.layer_norm(x, [4]), ValueError, "layer_norm: normalized_shape [4] does not match"),
        (lambda x, i: F.dropout(x, 1.5), ValueError, "dropout: the dropout probability must be in [0, 1]"),
        (lambda x, i: F.dropout(x, 0.5, mode="scale"), ValueError, "dropout: mode must be one of"),
        (lambda x, i: F.embedding(x, x), TypeError, "embedding: x must be int32 or int64 ids"),
        (lambda x, i: F.embedding(i, x), ValueError, "embedding: weight must be 2-D"),
        (lambda x, i: N.matmul(x, 3.0), TypeError, "matmul: 'y' must be a Tensor/Variable"),
        (lambda x, i: N.fluid_pool2d(x, pool_type="min"), ValueError, "pool_type must be 'max' or 'avg'"),
    ],
)
def test_frontend_errors(static, call, error, message):
    main, feed = static
    x, i = feed("x", [-1, 3, 3, 3]), feed("i", [-1, 2], "int64")
    with pytest.raises(error) as e:
        call(x, i)
    assert message in str(e.value)


def test_pool_windows_wholly_in_the_padding_are_empty():
    """padding >= ksize leaves windows with no input: max gives -inf on both
    backends (Paddle's CPU kernel leaves its initial -FLT_MAX), non-exclusive average
    0, and the gradient skips them."""
    from pullback.testing import run_op

    x = np.arange(6.0).reshape(1, 1, 3, 2)
    props = {"ksize": [1, 2], "paddings": [1, 0], "strides": [1, 2]}
    mx = run_op(pd.Pool2DOp, x, pooling_type="max", **props)
    np.testing.assert_array_equal(mx.ravel(), [-np.inf, 1, 3, 5, -np.inf])
    avg = run_op(pd.Pool2DOp, x, pooling_type="avg", exclusive=False, **props)
    np.testing.assert_array_equal(avg.ravel(), [0, 0.5, 2.5, 4.5, 0])
    g = np.arange(1.0, 6.0).reshape(mx.shape)
    dx = run_op(pd.Pool2DGradOp, x, g, pooling_type="max", **props)
    np.testing.assert_array_equal(dx.ravel(), [0, 2, 0, 3, 0, 4])
