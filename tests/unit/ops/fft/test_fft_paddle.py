"""Complex numbers and `paddle.fft` against real PaddlePaddle 3.3.1 (values and
gradients of every case of `fft_cases.py`, `paddle_fixtures.npz` from
`make_fixtures.py`) and against finite differences in the real and imaginary parts
(`pullback.testing.check_complex_grad`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import pullback as paddle
from pullback.testing import check_complex_grad

_HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("fft_cases", _HERE / "fft_cases.py")
assert _spec is not None and _spec.loader is not None
fft_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fft_cases)

CASES = fft_cases.cases()
FIXTURES = dict(np.load(_HERE / "paddle_fixtures.npz", allow_pickle=False))


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_paddle(name: str) -> None:
    fn, inputs = CASES[name]
    out, grads = fft_cases.run(paddle, fn, inputs)
    want = FIXTURES[f"{name}/out"]
    assert out.dtype == want.dtype, (out.dtype, want.dtype)
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-9)
    for i, g in enumerate(grads):
        key = f"{name}/grad{i}"
        assert (g is None) == (key not in FIXTURES), key
        if g is not None:
            assert g.dtype == FIXTURES[key].dtype, (key, g.dtype)
            np.testing.assert_allclose(g, FIXTURES[key], rtol=1e-6, atol=1e-9, err_msg=key)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_finite_differences(name: str) -> None:
    fn, inputs = CASES[name]
    check_complex_grad(lambda *ts: fn(paddle, *ts), inputs)


@pytest.mark.parametrize("name", ["mul", "exp", "abs_sum", "angle", "fft_ortho", "rfft", "irfft", "hfft"])
def test_second_order_gradients(name: str) -> None:
    """Gradients of gradients need no extra code (the rules are `pd` ops)."""
    fn, inputs = CASES[name]
    check_complex_grad(lambda *ts: fn(paddle, *ts), inputs, order=2)
