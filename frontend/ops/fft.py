"""`paddle.fft`: discrete Fourier transforms and their helpers, as Paddle 3.3.1's
`python/paddle/tensor/fft.py` builds them.

Every transform is one of the three `fft` family ops (`dialects/pd/fft.py`) after
its input is cut or zero-padded to the lengths `n=` / `s=` ask for, as Paddle does:
`fft`/`ifft`/`fftn`... of a complex tensor are `fft_c2c`; of a float tensor
`fft_r2c` with both halves (`onesided=False`); an integer or bool tensor is cast to
the default float dtype first (Paddle's too); `rfft*`/`ihfft*` take float tensors
(`fft_r2c`), `irfft*`/`hfft*` complex ones (`fft_c2r`; a float tensor is read as
complex numbers with zero imaginary parts, as Paddle reads it).  float16 and
bfloat16 are refused, as Paddle's kernels refuse them.  `fftfreq`, `rfftfreq` are
constants, `fftshift`/`ifftshift` rolls.  Gradients: `passes/vjp/fft.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pullback.dialects import pd
from pullback.dialects.pd.dtypes import COMPLEX_NAMES, INT_NAMES, get_default_dtype, to_dtype_name
from pullback.frontend.core import apply
from pullback.frontend.ops.complex import complex as _complex
from pullback.frontend.ops.elementwise import cast, check_tensor, full_like
from pullback.frontend.ops.indexing import roll, to_constant

_FLOATS = ("float32", "float64")


def _norm(fn: str, norm: str) -> str:
    if norm not in pd.NORMS:
        raise ValueError(f"{fn}: norm must be one of {', '.join(repr(n) for n in pd.NORMS)}, got {norm!r}")
    return norm


def _axes(fn: str, x: Any, axes: Sequence[int]) -> list[int]:
    rank = len(x.shape)
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool) or not -rank <= a < rank:
            raise ValueError(f"{fn}: axis {a!r} is out of range for a tensor of rank {rank}")
        out.append(int(a) % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}: repeated axis in {list(axes)}")
    return out


def _real_input(fn: str, x: Any) -> Any:
    """A float32/float64 tensor to transform: integers and bools cast to the default
    float dtype (Paddle's), complex refused."""
    check_tensor(fn, "x", x)
    if x.dtype in INT_NAMES or x.dtype == "bool":
        return cast(x, get_default_dtype())
    if x.dtype not in _FLOATS:
        raise TypeError(f"{fn}: 'x' must be a float32 or float64 tensor (or integer), got {x.dtype}")
    return x


def _complex_input(fn: str, x: Any) -> Any:
    """A complex tensor to transform: a float (or integer) tensor read as complex
    numbers with zero imaginary parts."""
    check_tensor(fn, "x", x)
    if x.dtype in COMPLEX_NAMES:
        return x
    x = _real_input(fn, x)
    return _complex(x, full_like(x, 0.0))


def _resize(fn: str, x: Any, axes: Sequence[int], sizes: Sequence[int | None]) -> Any:
    """x cut (a slice) or zero-padded (at the end) to `sizes` along `axes`."""
    for a, n in zip(axes, sizes):
        if n is None:
            continue
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise ValueError(f"{fn}: invalid length {n!r}: each transformed length must be a positive int")
        m = x.shape[a]
        if m < 0:
            raise ValueError(f"{fn}: axis {a} must have a static size to be cut or padded")
        if n < m:
            x = apply(pd.SliceOp, [x], prefix="slice", axes=[a], starts=[0], ends=[int(n)])
        elif n > m:
            pads = [0] * (2 * len(x.shape))
            pads[2 * a + 1] = int(n) - m
            x = apply(pd.PadOp, [x], prefix="pad", paddings=pads, value=0.0)
    return x


def _plan(fn: str, x: Any, s: Sequence[int] | None, axes: Sequence[int] | None) -> tuple[list[int], list[int | None]]:
    """The axes and lengths of an n-dimensional transform: numpy's rules (`axes`
    None: the last `len(s)` axes, or every axis)."""
    if s is not None and not isinstance(s, (list, tuple)):
        raise TypeError(f"{fn}: s must be a list or tuple of ints, got {type(s).__name__}")
    if axes is None:
        rank = len(x.shape)
        axes = list(range(rank - len(s), rank)) if s is not None else list(range(rank))
    elif isinstance(axes, (int, np.integer)):
        axes = [int(axes)]
    norm_axes = _axes(fn, x, axes)
    if not norm_axes:
        raise ValueError(f"{fn}: no axis to transform")
    if s is not None and len(s) != len(norm_axes):
        raise ValueError(f"{fn}: s and axes differ in length ({len(s)}, {len(norm_axes)})")
    return norm_axes, list(s) if s is not None else [None] * len(norm_axes)


# ------------------------------------------------------------------- transforms


def _c2c_or_r2c(fn: str, x: Any, s: Any, axes: Any, norm: str, forward: bool, name: str | None) -> Any:
    norm = _norm(fn, norm)
    check_tensor(fn, "x", x)
    if x.dtype not in COMPLEX_NAMES:
        x = _real_input(fn, x)
    ax, sizes = _plan(fn, x, s, axes)
    x = _resize(fn, x, ax, sizes)
    if x.dtype in COMPLEX_NAMES:
        return apply(pd.FftC2COp, [x], prefix="fft_c2c", name=name, axes=ax, normalization=norm, forward=forward)
    return apply(pd.FftR2COp, [x], prefix="fft_r2c", name=name, axes=ax, normalization=norm, forward=forward,
                 onesided=False)


def _r2c(fn: str, x: Any, s: Any, axes: Any, norm: str, forward: bool, name: str | None) -> Any:
    norm = _norm(fn, norm)
    x = _real_input(fn, x)
    ax, sizes = _plan(fn, x, s, axes)
    x = _resize(fn, x, ax, sizes)
    return apply(pd.FftR2COp, [x], prefix="fft_r2c", name=name, axes=ax, normalization=norm, forward=forward,
                 onesided=True)


def _c2r(fn: str, x: Any, s: Any, axes: Any, norm: str, forward: bool, name: str | None) -> Any:
    norm = _norm(fn, norm)
    x = _complex_input(fn, x)
    ax, sizes = _plan(fn, x, s, axes)
    last = sizes[-1]
    if last is None:
        m = x.shape[ax[-1]]
        if m < 0:
            raise ValueError(f"{fn}: the last transformed axis must have a static size")
        last = 2 * (m - 1)
        if last < 1:
            raise ValueError(f"{fn}: invalid output length {last} from {m} input frequencies; pass n=/s=")
    x = _resize(fn, x, ax, [*sizes[:-1], int(last) // 2 + 1])
    return apply(pd.FftC2ROp, [x], prefix="fft_c2r", name=name, axes=ax, normalization=norm, forward=forward,
                 last_dim_size=int(last))


def _one(n: Any) -> list[int] | None:
    return None if n is None else [n]


def fft(x: Any, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Any:
    """`paddle.fft.fft`: the one-dimensional discrete Fourier transform."""
    return _c2c_or_r2c("fft", x, _one(n), [axis], norm, True, name)


def ifft(x: Any, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Any:
    """`paddle.fft.ifft`: the one-dimensional inverse transform."""
    return _c2c_or_r2c("ifft", x, _one(n), [axis], norm, False, name)


def rfft(x: Any, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Any:
    """`paddle.fft.rfft`: the transform of a real signal, the `n // 2 + 1`
    non-negative frequencies."""
    return _r2c("rfft", x, _one(n), [axis], norm, True, name)


def irfft(x: Any, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Any:
    """`paddle.fft.irfft`: the inverse of `rfft` (n real values; default
    `2 * (m - 1)`)."""
    return _c2r("irfft", x, _one(n), [axis], norm, False, name)


def hfft(x: Any, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Any:
    """`paddle.fft.hfft`: the transform of a Hermitian-symmetric signal given by its
    first half (a real result)."""
    return _c2r("hfft", x, _one(n), [axis], norm, True, name)


def ihfft(x: Any, n: int | None = None, axis: int = -1, norm: str = "backward", name: str | None = None) -> Any:
    """`paddle.fft.ihfft`: the inverse of `hfft` (of a real signal)."""
    return _r2c("ihfft", x, _one(n), [axis], norm, False, name)


def fftn(x: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = "backward",
         name: str | None = None) -> Any:
    """`paddle.fft.fftn`: the n-dimensional transform."""
    return _c2c_or_r2c("fftn", x, s, axes, norm, True, name)


def ifftn(x: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = "backward",
          name: str | None = None) -> Any:
    """`paddle.fft.ifftn`."""
    return _c2c_or_r2c("ifftn", x, s, axes, norm, False, name)


def rfftn(x: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = "backward",
          name: str | None = None) -> Any:
    """`paddle.fft.rfftn`."""
    return _r2c("rfftn", x, s, axes, norm, True, name)


def irfftn(x: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = "backward",
           name: str | None = None) -> Any:
    """`paddle.fft.irfftn`."""
    return _c2r("irfftn", x, s, axes, norm, False, name)


def hfftn(x: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = "backward",
          name: str | None = None) -> Any:
    """`paddle.fft.hfftn`."""
    return _c2r("hfftn", x, s, axes, norm, True, name)


def ihfftn(x: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = "backward",
           name: str | None = None) -> Any:
    """`paddle.fft.ihfftn`."""
    return _r2c("ihfftn", x, s, axes, norm, False, name)


def _two(fn: str, s: Any, axes: Any) -> None:
    if s is not None and (not isinstance(s, (list, tuple)) or len(s) != 2):
        raise ValueError(f"{fn}: s must be two lengths, got {s!r}")
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise ValueError(f"{fn}: axes must be two axes, got {axes!r}")


def _make_2d(nd: Callable[..., Any], fn: str) -> Callable[..., Any]:
    def f(x: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str = "backward",
          name: str | None = None) -> Any:
        _two(fn, s, axes)
        return nd(x, s, axes, norm, name)

    f.__name__ = f.__qualname__ = fn
    f.__doc__ = f"`paddle.fft.{fn}`: `{nd.__name__}` over two axes (the last two by default)."
    return f


fft2 = _make_2d(fftn, "fft2")
ifft2 = _make_2d(ifftn, "ifft2")
rfft2 = _make_2d(rfftn, "rfft2")
irfft2 = _make_2d(irfftn, "irfft2")
hfft2 = _make_2d(hfftn, "hfft2")
ihfft2 = _make_2d(ihfftn, "ihfft2")


# ----------------------------------------------------------------- helpers


def _freq_dtype(fn: str, dtype: Any) -> str:
    name = to_dtype_name(dtype, fn, default=get_default_dtype())
    if name not in _FLOATS:
        raise TypeError(f"{fn}: dtype must be float32 or float64, got {name}")
    return name


def fftfreq(n: int, d: float = 1.0, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.fft.fftfreq`: the sample frequencies of an `n`-point transform with
    sample spacing `d` (a constant)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"fftfreq: n must be a positive int, got {n!r}")
    return to_constant(np.fft.fftfreq(int(n), float(d)), _freq_dtype("fftfreq", dtype))


def rfftfreq(n: int, d: float = 1.0, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.fft.rfftfreq`: the `n // 2 + 1` non-negative frequencies."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"rfftfreq: n must be a positive int, got {n!r}")
    return to_constant(np.fft.rfftfreq(int(n), float(d)), _freq_dtype("rfftfreq", dtype))


def _shift(fn: str, x: Any, axes: Any, sign: int) -> Any:
    check_tensor(fn, "x", x)
    rank = len(x.shape)
    if axes is None:
        axes = list(range(rank))
    elif isinstance(axes, (int, np.integer)):
        axes = [int(axes)]
    ax = _axes(fn, x, axes)
    if not ax:
        return x
    if any(x.shape[a] < 0 for a in ax):
        raise ValueError(f"{fn}: the shifted axes must have static sizes")
    shifts = [sign * (x.shape[a] // 2) for a in ax]
    return roll(x, shifts, ax)


def fftshift(x: Any, axes: Any = None, name: str | None = None) -> Any:
    """`paddle.fft.fftshift`: the zero frequency moved to the middle (a roll by
    `n // 2` along each axis; every axis by default)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: Any, axes: Any = None, name: str | None = None) -> Any:
    """`paddle.fft.ifftshift`: the inverse of `fftshift` (a roll by `-(n // 2)`)."""
    return _shift("ifftshift", x, axes, -1)


FFT: list[Callable[..., Any]] = [
    fft, ifft, rfft, irfft, hfft, ihfft, fftn, ifftn, rfftn, irfftn, hfftn, ihfftn,
    fft2, ifft2, rfft2, irfft2, hfft2, ihfft2, fftfreq, rfftfreq, fftshift, ifftshift,
]
"""The functions of `paddle.fft` (`frontend/api/fft.py`); none is a `paddle.X`
function (`paddle.fft` is the namespace)."""

PADDLE: list[Callable[..., Any]] = []
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
