"""The native dropout mask (`runtime/native/dropout.py`) is the numpy splitmix64
formulation bit for bit, and the kernel falls back to numpy without native code."""

from __future__ import annotations

import numpy as np
import pytest

from pullback.dialects.pd.nn import dropout_threshold
from pullback.runtime.native import dropout as native_dropout
from pullback.runtime.kernels import nn as nn_kernels


def numpy_mask(seed: int, n: int, p: float) -> np.ndarray:
    """The mask by the numpy formulation the kernel used before (and falls back to)."""
    return nn_kernels._splitmix_bits(seed, n) >= np.uint64(dropout_threshold(p))


@pytest.mark.parametrize("seed", [0, 1, 11, 2**63 + 7, 2**64 - 5, -3])
@pytest.mark.parametrize("n", [0, 1, 7, 4097])
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.999, 1.0])
def test_native_mask_is_the_numpy_mask_bit_for_bit(seed: int, n: int, p: float) -> None:
    got = native_dropout.keep_mask(seed, n, dropout_threshold(p))
    assert got is not None, "llvmlite is a dependency: the native mask must compile here"
    assert got.dtype == np.bool_ and got.shape == (n,)
    np.testing.assert_array_equal(got, numpy_mask(seed, n, p))
    if n > 1000 and 0 < p < 1:  # about 1 - p of the elements are kept
        assert abs(got.mean() - (1 - p)) < 0.05


def test_the_kernel_falls_back_to_numpy_without_native_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native_dropout, "keep_mask", lambda seed, n, threshold: None)
    monkeypatch.setattr(nn_kernels, "_KEEP_CACHE", type(nn_kernels._KEEP_CACHE)())
    keep = nn_kernels.dropout_keep(12345, (6, 7), 0.3)
    np.testing.assert_array_equal(keep, numpy_mask(12345, 42, 0.3).reshape(6, 7))


def test_the_ir_is_written_from_the_dialect_constants() -> None:
    """The loop multiplies by `pd.nn`'s `SPLITMIX_MIX` constants (as signed i64 literals)."""
    from pullback.dialects.pd.nn import SPLITMIX_MIX

    ir = native_dropout.mask_ir()
    for _, mult in SPLITMIX_MIX:
        assert str(native_dropout._i64(mult)) in ir


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [0.1, 0.5, 1.0])
def test_native_forward_and_remembered_mask_are_numpys_where(dtype: type, p: float) -> None:
    """The fused draw-and-apply (a forward) and the apply of a remembered mask (its
    gradient) give `np.where(keep, x * factor, 0)` bit for bit, infinities and NaNs
    included; a read-only input takes the numpy path to the same values."""
    x = np.random.default_rng(3).standard_normal((9, 13)).astype(dtype)
    x[0, :4] = [np.inf, -np.inf, np.nan, -0.0]
    factor = dtype(0.0 if p >= 1.0 else 1.0 / (1.0 - p))
    seed = 987654321
    with np.errstate(invalid="ignore"):  # inf * 0 where p = 1, as the kernel ignores it
        want = np.where(numpy_mask(seed, x.size, p).reshape(x.shape), x * factor, dtype(0))
    drawn = native_dropout.dropout(seed, dropout_threshold(p), x, float(factor))
    assert drawn is not None
    keep, y = drawn
    np.testing.assert_array_equal(keep, numpy_mask(seed, x.size, p).reshape(x.shape))
    assert y.dtype == dtype and np.array_equal(y, want, equal_nan=True)
    again = native_dropout.apply_mask(keep, native_dropout.address(keep), x, float(factor))
    assert again is not None and np.array_equal(again, want, equal_nan=True)
    frozen = x.copy()
    frozen.flags.writeable = False
    assert native_dropout.dropout(seed, dropout_threshold(p), frozen, float(factor)) is None


def test_the_kernel_draws_then_reuses_the_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    """A forward dropout and its gradient (same seed and shape) apply one mask: the
    second call reads the remembered one, and both equal the numpy formulation."""
    from pullback.dialects import pd
    from pullback.frontend.eager import template_for

    monkeypatch.setattr(nn_kernels, "_KEEP_CACHE", type(nn_kernels._KEEP_CACHE)())
    x = np.random.default_rng(4).standard_normal((8, 16)).astype(np.float32)
    seed = np.array(4242, np.int64)
    tpl = template_for(pd.DropoutOp, [x, seed], {"dropout_prob": 0.25,
                                                 "dropout_implementation": "upscale_in_train"})
    want = np.where(numpy_mask(4242, x.size, 0.25).reshape(x.shape), x * np.float32(1 / 0.75), np.float32(0))
    (first,) = tpl.run([x, seed])
    assert len(nn_kernels._KEEP_CACHE) == 1
    (second,) = tpl.run([x, seed])
    np.testing.assert_array_equal(first, want)
    np.testing.assert_array_equal(second, want)
