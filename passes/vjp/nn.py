"""VJP rules of the nn ops, all written with `pd` ops so that they differentiate again.

The dedicated gradient ops close under differentiation:

* `lookup_table` <-> `lookup_table_grad` (gather and scatter-add are adjoint);
* `conv2d(x, w)` is bilinear; its adjoints are `conv2d_transpose` (in x) and
  `conv2d_filter_grad` (in w), and each of the three differentiates into the others;
* `pool2d_grad` is linear in the incoming gradient: for average pooling its adjoint
  is `pool2d` itself. Max pooling's adjoint would gather at the argmax, which no op
  expresses, so the second derivative of max pooling raises (documented limitation);
* `dropout` is linear in x for its fixed mask: its VJP is the same dropout;
* `batch_norm` reuses its own saved mean and inverse std in its VJP and handles
  gradients arriving at those saved results, so the VJP of its VJP flows back into
  it (second order without a dedicated gradient op).

Convolution gradients need the forward window as explicit paddings: with `SAME`
padding they need a static spatial size, and the input gradient of a strided
convolution needs a static input size (its `output_size`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, shape_of
from pullback.dialects.pd.nn import explicit_pads, resolve_window
from pullback.passes.autodiff import AutodiffError
from pullback.passes.vjp import vjp
from pullback.passes.vjp.builder import VjpBuilder
from pullback.passes.vjp.reduction import reduced_count
from xdsl.ir import Operation, SSAValue

Grads = list["SSAValue | None"]
Out = Sequence["SSAValue | None"]


# --------------------------------------------------------------------------- matmul


def _matmul_grads(
    b: VjpBuilder, x: SSAValue, y: SSAValue, g: SSAValue, tx: bool, ty: bool
) -> tuple[SSAValue, SSAValue]:
    """Gradients of `matmul(x, y, tx, ty)` for operands of rank >= 2, before the
    broadcast batch dimensions are summed away."""
    def mm(a, c, ta=False, tc=False):
        return b.emit(
            pd.MatmulOp, a, c, transpose_x=ta, transpose_y=tc
        )
    if not tx and not ty:
        return mm(g, y, tc=True), mm(x, g, ta=True)
    if tx and not ty:
        return mm(y, g, tc=True), mm(x, g)
    if not tx and ty:
        return mm(g, y), mm(g, x, ta=True)
    return mm(y, g, ta=True, tc=True), mm(g, x, ta=True, tc=True)


@vjp(pd.MatmulOp)
def matmul_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """Matrix gradients per transpose case; 1-D operands are lifted to matrices
    (and the gradient squeezed back), broadcast batch dimensions are summed."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.MatmulOp)
    x, y = op.x, op.y
    xr, yr = len(shape_of(x.type)), len(shape_of(y.type))
    if xr == 1 and yr == 1:  # a dot product: g is 0-D
        return b.mul(g, y), b.mul(g, x)
    tx, ty = op.prop("transpose_x") and xr > 1, op.prop("transpose_y") and yr > 1
    x2, y2 = x, y
    if xr == 1:  # [K] -> [1, K]; the result lost the row dimension
        x2 = b.emit(pd.UnsqueezeOp, x, axes=[0])
        g = b.emit(pd.UnsqueezeOp, g, axes=[len(shape_of(g.type)) - 1])
    if yr == 1:  # [K] -> [K, 1]; the result lost the column dimension
        y2 = b.emit(pd.UnsqueezeOp, y, axes=[1])
        g = b.emit(pd.UnsqueezeOp, g, axes=[len(shape_of(g.type))])
    dx, dy = _matmul_grads(b, x2, y2, g, tx, ty)
    dx, dy = b.unbroadcast(dx, x2), b.unbroadcast(dy, y2)
    if xr == 1:
        dx = b.emit(pd.SqueezeOp, dx, axes=[0])
    if yr == 1:
        dy = b.emit(pd.SqueezeOp, dy, axes=[1])
    return dx, dy


@vjp(pd.LinearOp)
def linear_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """`x @ w + b`: the matmul's gradients (batch dimensions of x summed out of the
    weight's) and the bias gradient summed over every leading dimension."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.LinearOp)
    dx, dw = _matmul_grads(b, op.x, op.weight, g, False, False)
    return dx, b.unbroadcast(dw, op.weight), b.unbroadcast(g, op.bias)


# ------------------------------------------------------------------------ embedding


@vjp(pd.LookupTableOp)
def lookup_table_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """Scatter-add the gradient rows into the table; ids get none."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.LookupTableOp)
    rows = shape_of(op.w.type)[0]
    if rows == DYN:
        raise AutodiffError("'pd.lookup_table': the table gradient needs a static row count")
    return None, b.emit(
        pd.LookupTableGradOp, op.ids, g, num_rows=rows, padding_idx=op.prop("padding_idx")
    )


@vjp(pd.LookupTableGradOp)
def lookup_table_grad_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """Scatter-add is linear in its gradient operand; its adjoint is the gather."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.LookupTableGradOp)
    return None, b.emit(pd.LookupTableOp, op.ids, g, padding_idx=op.prop("padding_idx"))


# ---------------------------------------------------------------------- convolution


def _explicit_window(op: pd.ConvWindowOp, hw: Sequence[int], khw: Sequence[int]) -> dict[str, Any]:
    """The op's window with `SAME`/`VALID` resolved for spatial size `hw`:
    window properties for an `EXPLICIT` op of the same geometry."""
    algo = op.prop("padding_algorithm")
    t, bo, l, r = explicit_pads(op.name, op.prop("paddings"))
    strides, dils = op.prop("strides"), op.prop("dilations")
    if algo == "SAME" and (DYN in hw or DYN in khw):
        raise AutodiffError(
            f"'{op.name}': the gradient of SAME padding needs static spatial sizes, "
            f"got input {list(hw)} and filter {list(khw)}"
        )
    dims = [
        resolve_window(algo, pads, size, k, s, d)
        for pads, size, k, s, d in zip([(t, bo), (l, r)], hw, khw, strides, dils)
    ]
    return {
        "strides": strides,
        "paddings": [dims[0][0], dims[0][1], dims[1][0], dims[1][1]],
        "dilations": [dims[0][2], dims[1][2]],
        "groups": op.prop("groups"),
    }


def _spatial(v: SSAValue) -> tuple[int, int]:
    s = shape_of(v.type)
    return s[2], s[3]


def _conv_input_grad(
    b: VjpBuilder, op: pd.ConvWindowOp, g: SSAValue, w: SSAValue, like: SSAValue
) -> SSAValue:
    """The gradient of `conv2d(like, w)` (op's window) w.r.t. `like`, for output
    gradient `g`: a transposed convolution back to `like`'s spatial size."""
    hw = _spatial(like)
    window = _explicit_window(op, hw, _spatial(w))
    if DYN in hw and any(s > 1 for s in window["strides"]):
        raise AutodiffError(
            f"'{op.name}': the input gradient of a strided convolution needs a static "
            f"input size, got {list(hw)}"
        )
    size = [] if DYN in hw else list(hw)
    return b.emit(pd.Conv2DTransposeOp, g, w, output_size=size, **window)


@vjp(pd.Conv2DOp)
def conv2d_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """Input: transposed convolution of g; filter: `conv2d_filter_grad(x, g)`."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.Conv2DOp)
    khw = _spatial(op.filter)
    if DYN in khw:
        raise AutodiffError("'pd.conv2d': the filter gradient needs a static filter size")
    dx = _conv_input_grad(b, op, g, op.filter, op.input)
    # The filter-gradient op resolves SAME from the forward input, as conv2d does.
    dw = b.emit(pd.Conv2DFilterGradOp, op.input, g, filter_size=list(khw), **_window_props(op))
    return dx, dw


def _window_props(op: pd.ConvWindowOp) -> dict[str, Any]:
    """The op's window properties, unchanged."""
    keys = ("strides", "paddings", "dilations", "groups", "padding_algorithm")
    return {k: op.prop(k) for k in keys}


@vjp(pd.Conv2DFilterGradOp)
def conv2d_filter_grad_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """`dW = F(x, g)` is bilinear: with cotangent `Wb`, d/dx is the input gradient
    of `conv2d(x, Wb)` for g and d/dg is `conv2d(x, Wb)` itself."""
    (wb,) = grads
    assert wb is not None and isinstance(op, pd.Conv2DFilterGradOp)
    dx = _conv_input_grad(b, op, op.grad, wb, op.input)
    dg = b.emit(pd.Conv2DOp, op.input, wb, **_window_props(op))
    return dx, dg


@vjp(pd.Conv2DTransposeOp)
def conv2d_transpose_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """`conv2d_transpose(g, w)` is the adjoint of `conv2d(., w)`: with cotangent yb,
    d/dg is `conv2d(yb, w)` and d/dw is `conv2d_filter_grad(yb, g)`, in the window
    this op's paddings resolve to."""
    (yb,) = grads
    assert yb is not None and isinstance(op, pd.Conv2DTransposeOp)
    khw = _spatial(op.filter)
    if DYN in khw:
        raise AutodiffError("'pd.conv2d_transpose': the gradient needs a static filter size")
    hw = _spatial(op.input)
    window = _explicit_window(op, hw, khw)
    yb = _uncover_extra(b, op, yb, hw, khw, window)
    dg = b.emit(pd.Conv2DOp, yb, op.filter, **window)
    dw = b.emit(pd.Conv2DFilterGradOp, yb, op.input, filter_size=list(khw), **window)
    return dg, dw


def _uncover_extra(
    b: VjpBuilder, op: pd.Conv2DTransposeOp, yb: SSAValue, hw: Sequence[int], khw: Sequence[int], window: dict[str, Any],
) -> SSAValue:
    """Fit the adjoint convolution's window to an output made `e` larger by
    `output_padding` or `output_size`: the forward keeps `e` more rows of its full
    (uncropped) result at the end (`runtime/kernels/nn.py`), so the adjoint pads
    `pad_after - e` there; where that is negative, the rows past the full result
    (zeros, reached by no tap) are sliced off the cotangent instead.  Edits
    `window["paddings"]`; returns the cotangent to convolve."""
    out_hw = shape_of(op.results[0].type)[2:]
    sizes, extra_pad = op.prop("output_size"), op.prop("output_padding")
    if not sizes and not any(extra_pad or ()):
        return yb
    pads = window["paddings"]
    crop_axes, crop_ends = [], []
    for i in range(2):
        if sizes:
            if DYN in (hw[i], out_hw[i]):
                raise AutodiffError(
                    f"'{op.name}': the gradient with output_size needs a static input size, got {list(hw)}"
                )
            s, d = window["strides"][i], window["dilations"][i]
            base = (hw[i] - 1) * s - pads[2 * i] - pads[2 * i + 1] + d * (khw[i] - 1) + 1
            extra = out_hw[i] - base
        else:
            extra = extra_pad[i]
        after = pads[2 * i + 1] - extra
        pads[2 * i + 1] = max(after, 0)
        if after < 0:
            crop_axes.append(2 + i)
            crop_ends.append(after)  # negative: counted from the end
    if not crop_axes:
        return yb
    return b.emit(pd.SliceOp, yb, axes=crop_axes, starts=[0] * len(crop_axes), ends=crop_ends)


# -------------------------------------------------------------------------- pooling

_POOL_PROPS = (
    "pooling_type",
    "ksize",
    "strides",
    "paddings",
    "global_pooling",
    "ceil_mode",
    "exclusive",
    "adaptive",
    "padding_algorithm",
)


def _pool_props(op: Operation) -> dict[str, Any]:
    assert isinstance(op, pd.PoolWindowOp)
    return {k: op.prop(k) for k in _POOL_PROPS}


@vjp(pd.Pool2DOp)
def pool2d_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """`pool2d_grad(x, g)` with the same window."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.Pool2DOp)
    return (b.emit(pd.Pool2DGradOp, op.x, g, **_pool_props(op)),)


@vjp(pd.Pool2DGradOp)
def pool2d_grad_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """Linear in `grad` (no gradient for x: the routing is piecewise constant in x).
    For average pooling the adjoint of spreading is `pool2d` itself."""
    (xb,) = grads
    assert xb is not None and isinstance(op, pd.Pool2DGradOp)
    if op.prop("pooling_type") == "max":
        raise AutodiffError(
            "'pd.pool2d_grad': second derivatives of max pooling are not supported"
        )
    return None, b.emit(pd.Pool2DOp, xb, **_pool_props(op))


# ------------------------------------------------------------------------ layer norm


@vjp(pd.LayerNormOp)
def layer_norm_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """With `xh = (x - mean) * rstd` over the normalized axes A and `gh = g * scale`:

        dx     = rstd * (gh - mean_A(gh) - xh * mean_A(gh * xh))
        dscale = sum over the leading axes of g * xh;   dbias = that of g

    recomputing the statistics from x with differentiable `pd` ops."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.LayerNormOp)
    x, params = op.x, list(op.params)
    shape = shape_of(x.type)
    begin = op.prop("begin_norm_axis")
    axes, lead = list(range(begin, len(shape))), list(range(begin))

    def mean(v: SSAValue) -> SSAValue:
        return b.emit(pd.ReduceMeanOp, v, axis=axes, keepdim=True)

    xc = b.sub(x, mean(x))
    var = mean(b.mul(xc, xc))
    rstd = b.emit(pd.PowOp, b.scale(var, 1.0, bias=op.prop("epsilon")), factor=-0.5)
    xh = b.mul(xc, rstd)

    gh = g
    if params:
        gh = b.mul(g, _as_normalized(b, params[0], shape[begin:]))
    dx = b.mul(rstd, b.sub(b.sub(gh, mean(gh)), b.mul(xh, mean(b.mul(gh, xh)))))

    def param_grad(v: SSAValue, like: SSAValue) -> SSAValue:
        s = b.emit(pd.ReduceSumOp, v, axis=lead) if lead else v
        return s if len(axes) == 1 else b.emit(pd.ReshapeAsOp, s, like)

    out: list[SSAValue | None] = [dx]
    if params:
        out.append(param_grad(b.mul(g, xh), params[0]))
    if len(params) == 2:
        out.append(param_grad(g, params[1]))
    return out


def _as_normalized(b: VjpBuilder, p: SSAValue, dims: Sequence[int]) -> SSAValue:
    """A 1-D scale reshaped to the normalized dimensions (for broadcasting)."""
    if len(dims) == 1:
        return p
    if DYN in dims:
        raise AutodiffError(
            "'pd.layer_norm': the gradient with a scale over several axes needs static "
            f"normalized dimensions, got {pd.fmt_shape(dims)}"
        )
    return b.emit(pd.ReshapeOp, p, shape=list(dims))


# ------------------------------------------------------------------------ batch norm


@vjp(pd.BatchNormOp)
def batch_norm_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """With `A` the reduced axes, `M` their size, `mu`/`rstd` the op's own saved mean
    and inverse std (Paddle reuses `SavedVariance` too), `xh = (x - mu) * rstd`:

        dbias = sum_A(gy),   dscale = sum_A(gy * xh)
        batch statistics:  dx = rstd * (gh - mean_A(gh) - xh * mean_A(gh * xh)),
                           gh = gy * scale
        global statistics: dx = gy * scale * rstd, and the running mean/variance
                           get `-sum_A(gh) * rstd` / `-rstd^2 * scale * dscale / 2`

    plus what arrives at the other results: `mean_out`/`variance_out` (momentum `m`
    of it to the running operands, `1 - m` through the batch statistics), and
    `saved_mean`/`saved_variance` (through `mu` and `rstd = (var + eps)^-1/2`).
    Those last terms make the rule differentiable again: its own ops read
    `saved_mean`/`saved_variance`, so the second derivative arrives there.

    With one value per channel (`M == 1`) the forward pass is `y = x` (Paddle's
    kernel); the rule gives `dx = gy` there, by a per-channel select when `M` is
    only known at run time.

    Paddle's kernel computes the input gradient with global statistics whenever
    `is_test` is set, even with `trainable_statistics` (when its forward pass used
    the batch's): that is not the derivative of its forward pass. This rule follows
    the statistics the forward pass used."""
    gy, gmo, gvo, gsm, gsv = grads
    assert isinstance(op, pd.BatchNormOp)
    x, scale = op.x, op.scale
    ch, axes = op.channel_axis(), op.reduced_axes()
    m = op.prop("momentum")
    mu, rstd = op.saved_mean, op.saved_variance

    def per_ch(cls: type[pd.PdOp], a: SSAValue, v: SSAValue) -> SSAValue:
        return b.emit(cls, a, v, axis=ch)

    def sum_a(v: SSAValue) -> SSAValue:
        return b.emit(pd.ReduceSumOp, v, axis=axes)

    def add(a: SSAValue | None, c: SSAValue | None) -> SSAValue | None:
        return c if a is None else a if c is None else b.add(a, c)

    dx = dscale = dbias = dmean = dvar = None
    xc = xh = None
    if gy is not None or gvo is not None or gsv is not None:
        xc = per_ch(pd.ElementwiseSubOp, x, mu)
        xh = per_ch(pd.ElementwiseMulOp, xc, rstd)
    if gy is not None:
        assert xh is not None
        dbias = sum_a(gy)
        dscale = sum_a(b.mul(gy, xh))
        gh = per_ch(pd.ElementwiseMulOp, gy, scale)
    rstd2 = b.mul(rstd, rstd) if (gy is not None and op.global_stats()) or gsv is not None else None
    # d rstd / d var = -rstd^3 / 2: what reaches the variance through saved_variance.
    g_var = None if gsv is None else b.scale(b.mul(gsv, b.mul(rstd2, rstd)), -0.5)

    if op.global_stats():
        if gy is not None:
            dx = per_ch(pd.ElementwiseMulOp, gy, b.mul(scale, rstd))
            dmean = b.neg(b.mul(b.mul(dbias, scale), rstd))
            dvar = b.scale(b.mul(b.mul(rstd2, scale), dscale), -0.5)
        dmean = add(add(dmean, gmo), gsm)
        dvar = add(add(dvar, gvo), g_var)
        return dx, dscale, dbias, dmean, dvar

    xs = shape_of(x.type)
    static_part = math.prod(xs[a] for a in axes if xs[a] != DYN)
    maybe_single = static_part == 1  # one value per channel possible (or certain)
    count = reduced_count(b, x, axes, keepdim=False) if maybe_single else None
    if isinstance(count, float):
        # One value per channel: the kernel passes x through, as Paddle's does.
        return gy, None, None, gmo, gvo
    if gy is not None:
        assert xh is not None

        def mean_a(v: SSAValue) -> SSAValue:
            return b.emit(pd.ReduceMeanOp, v, axis=axes)

        inner = b.sub(gh, per_ch(pd.ElementwiseMulOp, xh, mean_a(b.mul(gh, xh))))
        inner = per_ch(pd.ElementwiseSubOp, inner, mean_a(gh))
        dx = per_ch(pd.ElementwiseMulOp, inner, rstd)
    # Gradients reaching the batch mean and variance (per channel), pushed to x:
    # d mu / dx = 1/M,  d var / dx = 2 (x - mu) / M.
    g_mu = add(None if gmo is None else b.scale(gmo, 1.0 - m), gsm)
    g_bvar = add(None if gvo is None else b.scale(gvo, 1.0 - m), g_var)
    if g_mu is not None or g_bvar is not None:
        if count is None:
            count = reduced_count(b, x, axes, keepdim=False)

        def over_count(v: SSAValue, factor: float) -> SSAValue:
            if isinstance(count, float):
                return b.scale(v, factor / count)
            return b.scale(b.div(v, count), factor)

        if g_bvar is not None:
            assert xc is not None
            coef = over_count(g_bvar, 2.0)
            dx = add(dx, per_ch(pd.ElementwiseMulOp, xc, coef))
        if g_mu is not None:
            spread = over_count(g_mu, 1.0)
            if dx is None:
                dx = per_ch(pd.ElementwiseMulOp, b.full_like(x, 1.0), spread)
            else:
                dx = per_ch(pd.ElementwiseAddOp, dx, spread)
    if not maybe_single:
        dmean = None if gmo is None else b.scale(gmo, m)
        dvar = None if gvo is None else b.scale(gvo, m)
        return dx, dscale, dbias, dmean, dvar
    # The reduced dimensions known only at run time may give one value per channel,
    # where the kernel passes x through: select per channel between the two
    # derivatives (`single` is 1 there, 0 elsewhere), on [C] vectors but for dx.
    assert count is not None and not isinstance(count, float)
    single = b.cast_like(b.emit(pd.EqualOp, count, b.full_like(count, 1.0)), count)
    several = b.scale(single, -1.0, bias=1.0)
    if dx is not None:
        dx = per_ch(pd.ElementwiseMulOp, dx, several)
    if gy is not None:
        dx = add(dx, per_ch(pd.ElementwiseMulOp, gy, single))
    dscale = None if dscale is None else b.mul(dscale, several)
    dbias = None if dbias is None else b.mul(dbias, several)
    keep = b.add(b.scale(several, m), single)  # d mean_out / d mean: m, or 1 when passed through
    dmean = None if gmo is None else b.mul(gmo, keep)
    dvar = None if gvo is None else b.mul(gvo, keep)
    return dx, dscale, dbias, dmean, dvar


# --------------------------------------------------------------------------- dropout


@vjp(pd.DropoutOp)
def dropout_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """Linear in x for its fixed mask: the same dropout (same seed, property or
    operand) of g; the seed gets no gradient."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.DropoutOp)
    props = {k: op.prop(k) for k in ("dropout_prob", "is_test", "seed", "dropout_implementation")}
    seed = [] if op.seed_tensor is None else [op.seed_tensor]
    return (b.emit(pd.DropoutOp, g, *seed, **props), *[None] * len(seed))

