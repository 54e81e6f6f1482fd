"""The complex-number and `paddle.fft` cases checked against real PaddlePaddle 3.3.1:
each is `(function of the paddle module and input tensors, inputs)`, written once so
`make_fixtures.py` runs them on Paddle and the tests on pullback (`import pullback as
paddle`).  Inputs are complex128 / float64, drawn from a fixed seed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Case = tuple[Callable[..., Any], list[np.ndarray]]


def cases() -> dict[str, Case]:
    rng = np.random.default_rng(28)
    z = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    z4 = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    w = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    r = rng.standard_normal((2, 3))
    r6 = rng.standard_normal((3, 6))
    r2 = rng.standard_normal((2, 2))
    z3 = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    return {
        # complex numbers
        "abs_sum": (lambda P, a: P.abs(a).sum(), [z]),
        "xxconj": (lambda P, a: (a * a.conj()).real().sum(), [z]),
        "mul": (lambda P, a: a * a, [z]),
        "matmul": (lambda P, a, b: P.matmul(a, b), [z, w]),
        "div": (lambda P, a, b: a / b, [z, z + 3]),
        "exp": (lambda P, a: P.exp(a), [z]),
        "angle": (lambda P, a: P.angle(a), [z]),
        "real_imag": (lambda P, a: P.real(a) * P.imag(a), [z]),
        "complex": (lambda P, a, b: P.complex(a, b), [r, 2 * r]),
        "as_real": (lambda P, a: P.as_real(a), [z]),
        "as_complex": (lambda P, a: P.as_complex(a), [r2]),
        "cast": (lambda P, a: P.cast(a, "complex128") * (1 + 2j), [r]),
        "sum_mean": (lambda P, a: a.sum(axis=0) * a.mean(), [z]),
        "complex_plus_float": (lambda P, a, b: a + b, [z, r]),
        "complex_scalar": (lambda P, a: (a * (2 - 1j) + 1j) / (0.5 + 3j), [r]),
        "shape_ops": (lambda P, a: P.concat([a.reshape([3, 2]).transpose([1, 0]), a[:, 1:]], axis=1), [z]),
        "gather_where": (lambda P, a: P.where(P.to_tensor([True, False, True]), P.gather(a, P.to_tensor([1, 0]), axis=0)[0], a[1]), [z]),
        "expand_squeeze_stack": (lambda P, a: P.stack([a.unsqueeze(0).expand([2, 2, 3])[1:].squeeze(0), a]), [z]),
        "cumsum_slice": (lambda P, a: P.cumsum(a, axis=1) * a[:, 2:], [z]),
        "sqrt_log_sin_tanh": (lambda P, a: P.sqrt(a) + P.log(a) * P.sin(a) - P.tanh(a), [z]),
        "square_pow": (lambda P, a: P.square(a) + a ** 3, [z]),
        "cosh_sinh_tan_cos": (lambda P, a: P.cosh(a) * P.sinh(a) + P.tan(a) - P.cos(a), [z3]),
        "log1p_expm1": (lambda P, a: P.log1p(a) * P.expm1(a), [z3]),
        "matmul_transposed": (lambda P, a: P.matmul(a, a, transpose_x=True, transpose_y=True), [z3]),
        "mean_axis": (lambda P, a: P.mean(a, axis=1, keepdim=True) * a, [z3]),
        "pad": (lambda P, a: P.nn.functional.pad(a.unsqueeze(0).unsqueeze(0), [1, 1, 0, 2]), [z3]),
        "tril_triu": (lambda P, a: P.tril(a) + P.triu(a, 1) * a, [z3]),
        "gather_nd": (lambda P, a: P.gather_nd(a, P.to_tensor(np.array([[0, 1], [2, 2]]))), [z3]),
        "strided_setitem": (lambda P, a: _setitem(a[::2, 1:] * 1, a[1, 1:] * 2), [z3]),
        "flip_roll_add_n": (lambda P, a: P.add_n([P.flip(a, [0]) * P.roll(a, 1, 1), a]), [z3]),
        # paddle.fft
        "fft_ortho": (lambda P, a: P.fft.fft(a, norm="ortho"), [z]),
        "ifft_n5": (lambda P, a: P.fft.ifft(a, n=5), [z]),
        "fft_of_real": (lambda P, a: P.fft.fft(a, axis=0), [r]),
        "rfft": (lambda P, a: P.fft.rfft(a), [r6]),
        "rfft_n4_forward": (lambda P, a: P.fft.rfft(a, n=4, norm="forward"), [r]),
        "irfft": (lambda P, a: P.fft.irfft(a), [z4]),
        "irfft_n5_ortho": (lambda P, a: P.fft.irfft(a, n=5, norm="ortho"), [z]),
        "hfft": (lambda P, a: P.fft.hfft(a), [z4]),
        "ihfft": (lambda P, a: P.fft.ihfft(a), [r6]),
        "fft2": (lambda P, a: P.fft.fft2(a), [z4]),
        "ifft2_s": (lambda P, a: P.fft.ifft2(a, s=[2, 5]), [z4]),
        "rfft2": (lambda P, a: P.fft.rfft2(a, norm="ortho"), [r6]),
        "irfft2_s": (lambda P, a: P.fft.irfft2(a, s=[3, 6]), [z4]),
        "fftn_axes": (lambda P, a: P.fft.fftn(a, axes=[0]), [z]),
        "ifftn_forward": (lambda P, a: P.fft.ifftn(a, norm="forward"), [z4]),
        "rfftn": (lambda P, a: P.fft.rfftn(a), [r6]),
        "irfftn": (lambda P, a: P.fft.irfftn(a), [z4]),
        "hfft2": (lambda P, a: P.fft.hfft2(a), [z4]),
        "ihfftn": (lambda P, a: P.fft.ihfftn(a), [r6]),
        "fftshift": (lambda P, a: P.fft.fftshift(a) * P.fft.ifftshift(a), [z]),
    }


def _setitem(b: Any, row: Any) -> Any:
    b[0] = row
    return b


def projections(shape: tuple[int, ...], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixed weights `(P, Q)` of the checked real loss `sum(re(out) P + im(out) Q)`."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), rng.standard_normal(shape)


def run(P: Any, fn: Callable[..., Any], inputs: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """`fn`'s output and the gradients of the projected loss on each input, with the
    module `P` (Paddle or pullback) in eager mode."""
    ts = [P.to_tensor(a, stop_gradient=False) for a in inputs]
    out = fn(P, *ts)
    p, q = projections(tuple(out.shape), 7)
    if out.dtype in (P.complex64, P.complex128):
        loss = (P.real(out) * P.to_tensor(p) + P.imag(out) * P.to_tensor(q)).sum()
    else:
        loss = (out * P.to_tensor(p)).sum()
    loss.backward()
    return out.numpy(), [None if t.grad is None else t.grad.numpy() for t in ts]
