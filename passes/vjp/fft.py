"""VJP rules of the Fourier transforms (Paddle's `fft_c2c_grad`, `fft_r2c_grad`,
`fft_c2r_grad`), written with the transforms themselves.

Each transform is linear; its adjoint is the transform the other way with the norm
seen from the other side (`swap`: an unscaled forward fft's adjoint is `n` times
numpy's ifft, an ifft with norm "forward").  So `fft_c2c(norm, forward)`'s
gradient is `fft_c2c(g, swap(norm), not forward)`.  A real input's gradient is the
real part of that, and the onesided output's gradient is zero-padded to the full
length first.  The Hermitian ones (`fft_c2r`) read each frequency `1 <= k < n - m + 1`
for itself and its mirror image: their gradient is the one-sided r2c of g with
those bins doubled.  Gradients follow Paddle's complex convention
(`d/d re + i d/d im`, see `passes/vjp/__init__.py`); rules are `complex_aware`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import elem_of, f64_attr, shape_of
from pullback.passes.vjp import complex_aware, vjp
from pullback.passes.vjp.builder import VjpBuilder

Grads = list["SSAValue | None"]

SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
"""The norm of the adjoint transform."""

complex_aware(*pd.FFT_OPS)


def _one(grads: Grads) -> SSAValue:
    (g,) = grads
    assert g is not None
    return g


def _resize_last(b: VjpBuilder, g: SSAValue, axis: int, n: int) -> SSAValue:
    """g cut or zero-padded to length n along `axis`."""
    s = shape_of(g.type)
    m = s[axis]
    if m == n:
        return g
    if m > n:
        return b.emit(pd.SliceOp, g, axes=[axis], starts=[0], ends=[n])
    pads = [0] * (2 * len(s))
    pads[2 * axis + 1] = n - m
    return b.emit(pd.PadOp, g, paddings=pads, value=0.0)


@vjp(pd.FftC2COp)
def c2c_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """The transform the other way, norm swapped."""
    assert isinstance(op, pd.FftC2COp)
    return [b.emit(pd.FftC2COp, _one(grads), axes=list(op.prop("axes")),
                   normalization=SWAP[op.prop("normalization")], forward=not op.prop("forward"))]


@vjp(pd.FftR2COp)
def r2c_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """re(c2c(g zero-padded to the full length, swapped norm, the other way))."""
    assert isinstance(op, pd.FftR2COp)
    g = _one(grads)
    x = op.operands[0]
    axes = [a % len(shape_of(x.type)) for a in op.prop("axes")]
    if op.prop("onesided"):
        g = _resize_last(b, g, axes[-1], shape_of(x.type)[axes[-1]])
    full = b.emit(pd.FftC2COp, g, axes=axes, normalization=SWAP[op.prop("normalization")],
                  forward=not op.prop("forward"))
    return [b.emit(pd.RealOp, full)]


@vjp(pd.FftC2ROp)
def c2r_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """The one-sided r2c of g (swapped norm, the other way), frequencies
    `1 .. n - n // 2 - 1` doubled (each stands for itself and its mirror image),
    cut or padded to the input's length."""
    assert isinstance(op, pd.FftC2ROp)
    g = _one(grads)
    x = op.operands[0]
    rank = len(shape_of(x.type))
    axes = [a % rank for a in op.prop("axes")]
    last = axes[-1]
    n = pd.c2r_length(op)
    gx = b.emit(pd.FftR2COp, g, axes=axes, normalization=SWAP[op.prop("normalization")],
                forward=not op.prop("forward"), onesided=True)
    m = n // 2 + 1
    doubled = n - m
    if doubled > 0:
        weights = [2.0 if 1 <= k <= doubled else 1.0 for k in range(m)]
        shape = [m] + [1] * (rank - 1 - last)
        part = pd.dtype_name(elem_of(g.type))
        mask = b.emit(pd.AssignValueOp, shape=shape, values=ArrayAttr([f64_attr(w) for w in weights]), dtype=part)
        gx = b.mul(gx, b.cast_like(mask, gx))
    return [_resize_last(b, gx, last, shape_of(x.type)[last])]
