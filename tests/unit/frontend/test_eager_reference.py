"""A systematic search of eager ops and their options against float64 numpy references
written from Paddle's definitions (independent of pullback's kernels): squeeze,
avg/max_pool2d (kernel, stride, padding forms, ceil_mode, exclusive), slice, matmul
(transposes, broadcast batches, vectors), divide (broadcasting) and transpose, alone
and chained as in the program that first showed a loss 25% off.  Forward values in
float32 and float64; gradients in float64 against central finite differences of the
reference.

What it found: non-exclusive average pooling divided by `kh*kw` where Paddle's CPU
kernel divides by the window clipped to the input padded by the top/left padding
(a ceil_mode overhang or a larger bottom/right padding is not counted), and
`padding='SAME'` with `ceil_mode=True` was refused (Paddle refuses `'VALID'` only).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pullback as paddle
import pullback.nn.functional as F
import pytest

from pullback.testing import fd_grad


@pytest.fixture(autouse=True)
def _eager(dynamic_mode):
    yield


# ------------------------------------------------------------------ references


def ref_squeeze(x: np.ndarray, axis: Any) -> np.ndarray:
    """Drop size-1 dimensions: all of them, or those listed (others stay)."""
    if axis is None:
        return x.reshape([d for d in x.shape if d != 1])
    axes = {a % x.ndim for a in ([axis] if isinstance(axis, int) else axis)}
    return x.reshape([d for i, d in enumerate(x.shape) if not (i in axes and d == 1)])


def _pads(padding: Any, hw: Sequence[int], k: Sequence[int], s: Sequence[int]) -> tuple[int, int, int, int]:
    """`(top, bottom, left, right)` of Paddle's padding argument forms."""
    if padding == "VALID":
        return 0, 0, 0, 0
    if padding == "SAME":
        out = [-(-n // st) for n, st in zip(hw, s)]
        tot = [max((o - 1) * st + kk - n, 0) for o, st, kk, n in zip(out, s, k, hw)]
        return tot[0] // 2, tot[0] - tot[0] // 2, tot[1] // 2, tot[1] - tot[1] // 2
    if isinstance(padding, int):
        return (padding,) * 4
    if len(padding) == 2:
        return padding[0], padding[0], padding[1], padding[1]
    return tuple(padding)  # type: ignore[return-value]


def ref_pool2d(x: np.ndarray, k: Sequence[int], s: Sequence[int], padding: Any, ceil_mode: bool,
               exclusive: bool, kind: str) -> np.ndarray:
    """Paddle's CPU Pool2dFunctor, loop by loop."""
    n, c, h, w = x.shape
    t, b, left, r = _pads(padding, (h, w), k, s)

    def size(dim: int, kk: int, p0: int, p1: int, st: int) -> int:
        return (dim - kk + p0 + p1 + (st - 1 if ceil_mode else 0)) // st + 1

    oh, ow = size(h, k[0], t, b, s[0]), size(w, k[1], left, r, s[1])
    out = np.zeros((n, c, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        hs, ws = i * s[0] - t, j * s[1] - left
        he, we = min(hs + k[0], h + t), min(ws + k[1], w + left)
        pool_size = (he - hs) * (we - ws)
        hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
        win = x[:, :, hs:he, ws:we]
        if win.size == 0:
            raise ValueError("a window past the input")
        if kind == "max":
            out[:, :, i, j] = win.max(axis=(2, 3))
        else:
            out[:, :, i, j] = win.sum(axis=(2, 3)) / ((he - hs) * (we - ws) if exclusive else pool_size)
    return out


def ref_slice(x: np.ndarray, axes: Sequence[int], starts: Sequence[int], ends: Sequence[int]) -> np.ndarray:
    """Negative indices count from the end; out-of-range ones are clamped."""
    idx = [slice(None)] * x.ndim
    for a, st, en in zip(axes, starts, ends):
        d = x.shape[a]
        st, en = st + d if st < 0 else st, en + d if en < 0 else en
        idx[a] = slice(min(max(st, 0), d), min(max(en, 0), d))
    return x[tuple(idx)]


def ref_matmul(x: np.ndarray, y: np.ndarray, tx: bool, ty: bool) -> np.ndarray:
    if tx and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if ty and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    return np.matmul(x, y)


# ---------------------------------------------------------------- the harness


def check(eager: Callable[..., Any], ref: Callable[..., np.ndarray], *inputs: np.ndarray) -> None:
    """`eager(*tensors)` against `ref(*arrays)`: float32 and float64 forward, and the
    gradient of every input (float64) against finite differences of `ref`."""
    want = ref(*inputs)
    got32 = eager(*[paddle.to_tensor(a.astype(np.float32)) for a in inputs]).numpy()
    assert got32.shape == want.shape, (got32.shape, want.shape)
    np.testing.assert_allclose(got32, want, rtol=2e-5, atol=2e-5)
    ts = [paddle.to_tensor(a, stop_gradient=False) for a in inputs]
    out = eager(*ts)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-12)
    weights = np.random.default_rng(1).standard_normal(want.shape)
    (out * paddle.to_tensor(weights)).sum().backward()
    for k, t in enumerate(ts):
        def f(z: np.ndarray, k: int = k) -> float:
            return float((ref(*[z if i == k else a for i, a in enumerate(inputs)]) * weights).sum())

        np.testing.assert_allclose(t.grad.numpy(), fd_grad(f, inputs[k]), rtol=1e-6, atol=1e-7,
                                   err_msg=f"gradient of input #{k}")


RNG = np.random.default_rng(0)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


# ----------------------------------------------------------------------- cases

POOL_SIZES = [(5, 5), (6, 7)]
KERNELS = [(2, 2), (3, 2)]
STRIDES = [(1, 1), (2, 2), (3, 2)]
PADDINGS = [0, 1, [1, 0], [0, 1, 1, 0], [1, 2, 0, 1], "SAME", "VALID"]


def _pool_cases() -> list[tuple[Any, ...]]:
    cases = []
    for hw, k, s, padding, ceil, exclusive, kind in itertools.product(
        POOL_SIZES, KERNELS, STRIDES, PADDINGS, [False, True], [True, False], ["avg", "max"]
    ):
        if kind == "max" and not exclusive or padding == "VALID" and ceil:
            continue
        t, b, left, r = _pads(padding, hw, k, s)
        if max(t, b) >= k[0] or max(left, r) >= k[1]:
            continue  # a window entirely in the padding: undefined for max, 0/0 for avg
        try:
            ref_pool2d(np.zeros((1, 1, *hw)), k, s, padding, ceil, exclusive, kind)
        except ValueError:
            continue  # a ceil_mode window past the input (empty): as above
        cases.append((hw, k, s, padding, ceil, exclusive, kind))
    return cases


@pytest.mark.parametrize("hw,k,s,padding,ceil,exclusive,kind", _pool_cases())
def test_pool2d(hw, k, s, padding, ceil, exclusive, kind):
    def eager(x):
        if kind == "max":
            return F.max_pool2d(x, k, s, padding, ceil_mode=ceil)
        return F.avg_pool2d(x, k, s, padding, ceil_mode=ceil, exclusive=exclusive)

    check(eager, lambda x: ref_pool2d(x, k, s, padding, ceil, exclusive, kind), normal(1, 2, *hw))


def test_valid_padding_refuses_ceil_mode_as_paddle_does():
    with pytest.raises(ValueError, match=r'When Attr\(padding\) is "VALID", Attr\(ceil_mode\) must be False'):
        F.avg_pool2d(paddle.ones([1, 1, 4, 4]), 2, padding="VALID", ceil_mode=True)


@pytest.mark.parametrize("shape,axis", [
    ((1, 3, 1, 2), None), ((1, 3, 1, 2), 0), ((1, 3, 1, 2), -2), ((1, 3, 1, 2), [0, 2]),
    ((1, 3, 1, 2), 1), ((2, 1), [1, 0]), ((1,), None), ((1, 1), -1),
])
def test_squeeze(shape, axis):
    check(lambda x: paddle.squeeze(x, axis), lambda x: ref_squeeze(x, axis), normal(*shape))


@pytest.mark.parametrize("axes,starts,ends", [
    ([1], [1], [3]), ([0, 2], [-2, 0], [10, -1]), ([2], [-10], [2]), ([1, 2], [0, 1], [-1, 100]),
    ([0], [1], [2]),
])
def test_slice(axes, starts, ends):
    check(lambda x: paddle.slice(x, axes, starts, ends), lambda x: ref_slice(x, axes, starts, ends),
          normal(3, 4, 5))


@pytest.mark.parametrize("xs,ys,tx,ty", [
    ((3, 4), (4, 2), False, False), ((4, 3), (4, 2), True, False), ((3, 4), (2, 4), False, True),
    ((2, 3, 4), (4, 5), False, False), ((2, 1, 3, 4), (3, 4, 2), False, False),
    ((4,), (4, 3), False, False), ((3, 4), (4,), False, False), ((4,), (4,), False, False),
    ((2, 4, 3), (2, 5, 4), True, True),
])
def test_matmul(xs, ys, tx, ty):
    check(lambda x, y: paddle.matmul(x, y, tx, ty), lambda x, y: ref_matmul(x, y, tx, ty),
          normal(*xs), normal(*ys))


@pytest.mark.parametrize("xs,ys", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3,))])
def test_divide(xs, ys):
    y = normal(*ys)
    y = np.where(np.abs(y) < 0.5, 0.5 + np.abs(y), y)  # away from zero: smooth
    check(lambda a, b: paddle.divide(a, b), np.divide, normal(*xs), y)


@pytest.mark.parametrize("perm", [[1, 0, 2], [2, 0, 1], [0, 1, 2], [2, 1, 0]])
def test_transpose(perm):
    check(lambda x: paddle.transpose(x, perm), lambda x: np.transpose(x, perm), normal(2, 3, 4))


# ---------------------------------------------------------- chains of the ops


def _chain(seed: int) -> tuple[Callable[..., Any], Callable[..., np.ndarray], list[np.ndarray]]:
    """squeeze -> pool -> slice -> matmul -> divide -> transpose with options drawn
    from `seed`, the shape of the program whose loss was 25% off."""
    rng = np.random.default_rng(seed)
    h, w = int(rng.integers(5, 8)), int(rng.integers(5, 8))
    k = (int(rng.integers(2, 4)),) * 2
    s = (int(rng.integers(1, 3)),) * 2
    padding = [0, 1, [0, 1, 1, 0], "SAME"][int(rng.integers(4))]
    if max(_pads(padding, (h, w), k, s)) >= k[0]:
        padding = 0
    ceil, exclusive = bool(rng.integers(2)), bool(rng.integers(2))
    try:
        oh = ref_pool2d(np.zeros((1, 1, h, w)), k, s, padding, ceil, exclusive, "avg").shape[2:]
    except ValueError:  # a ceil_mode window past the input
        ceil = False
        oh = ref_pool2d(np.zeros((1, 1, h, w)), k, s, padding, ceil, exclusive, "avg").shape[2:]
    cut = int(rng.integers(0, oh[0] - 1))
    width = oh[1]
    x, m, d = normal(2, 1, 3, h, w), normal(width, 4), normal(4) + 3.0

    def eager(x, m, d):
        y = paddle.squeeze(x, 1)
        y = F.avg_pool2d(y, k, s, padding, ceil_mode=ceil, exclusive=exclusive)
        y = paddle.slice(y, [2], [cut], [oh[0]])
        y = paddle.matmul(y, m)
        y = paddle.divide(y, d)
        return paddle.transpose(y, [0, 2, 1, 3])

    def ref(x, m, d):
        y = ref_squeeze(x, 1)
        y = ref_pool2d(y, k, s, padding, ceil, exclusive, "avg")
        y = ref_slice(y, [2], [cut], [oh[0]])
        return np.transpose(ref_matmul(y, m, False, False) / d, [0, 2, 1, 3])

    return eager, ref, [x, m, d]


@pytest.mark.parametrize("seed", range(12))
def test_chain(seed):
    eager, ref, inputs = _chain(seed)
    check(eager, ref, *inputs)
