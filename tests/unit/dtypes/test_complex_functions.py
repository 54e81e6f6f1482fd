"""`paddle.sgn`, `polar`, `isreal`, `is_complex` (and their Tensor methods) against
Paddle 3.3.1's values (`complex_cases.py`, `data/complex_reference.npz`) and their
gradients against float64 finite differences; complex constants in static programs
(`full`/`ones`/`zeros`/`full_like`/`assign`) through the Executor, their printed IR,
and saving and loading programs holding them."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pullback as paddle
import pullback_complex_cases as CASES
from pullback.testing import check_complex_grad

HERE = Path(__file__).resolve().parent
REF = np.load(HERE / "data" / "complex_reference.npz")
Z = np.array([1 + 2j, -3 + 0.5j, 0.25 - 1j])


def compare_with_paddle(case: str, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run `complex_cases.CASES[case]` with pullback and compare each entry with
    Paddle's (dtype names exactly, values to float32 rounding); returns pullback's."""
    got = CASES.CASES[case](paddle)
    for key, value in got.items():
        if key in skip:
            continue
        want = REF[f"{case}/{key}"]
        if want.dtype.kind == "U":
            assert str(value) == str(want), key
        else:
            np.testing.assert_allclose(np.asarray(value), want, rtol=1e-5, atol=1e-6, err_msg=key)
    return got


def test_sgn_polar_isreal_match_paddle() -> None:
    compare_with_paddle("elementwise")


@pytest.mark.parametrize("name", ["sgn", "polar", "sgn_then_mul"])
def test_gradients_match_finite_differences(name: str) -> None:
    r, t = np.array([1.0, 2.5, 0.5]), np.array([0.3, -2.0, 4.0])
    cases = {
        "sgn": (lambda z: paddle.sgn(z), [Z]),
        "polar": (lambda a, b: paddle.polar(a, b), [r, t]),
        "sgn_then_mul": (lambda z: paddle.sgn(z) * z, [Z]),
    }
    fn, inputs = cases[name]
    check_complex_grad(fn, inputs)


def test_sgn_gradient_at_zero_is_zero_not_nan() -> None:
    """sgn is discontinuous at 0; pullback gives 0 there (the subgradient `abs` uses
    too), where Paddle 3.3.1 gives NaN."""
    z = paddle.to_tensor(np.array([0j, 1 + 1j]), stop_gradient=False)
    paddle.real(paddle.sgn(z)).sum().backward()
    g = z.grad.numpy()
    assert g[0] == 0 and np.isfinite(g).all()
    np.testing.assert_allclose(g[1], (1 / np.sqrt(2)) * (1 - (1 + 1j) / 2 * 1))  # d re(z/|z|) at 1+i


def test_bad_dtypes_name_the_function() -> None:
    with pytest.raises(TypeError, match="sgn: 'x' must be float32, float64, complex64 or complex128, got int64"):
        paddle.sgn(paddle.to_tensor([1, 2]))
    with pytest.raises(TypeError, match="polar: 'abs' must be float32 or float64, got complex128"):
        paddle.polar(paddle.to_tensor(Z), paddle.to_tensor([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="polar: 'angle' must be float32 or float64, got int64"):
        paddle.polar(paddle.to_tensor([1.0]), paddle.to_tensor([1]))


def _run_static(build: Any, feed: dict[str, np.ndarray] | None = None) -> tuple[list[np.ndarray], str]:
    """Build a program with `build()` (returning the values to fetch), run its startup
    and main programs on the Executor; returns the fetched arrays and the printed IR."""
    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            outs = build()
        exe = paddle.static.Executor(paddle.CPUPlace())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the compiled backend's fallback to the interpreter
            exe.run(start)
            got = exe.run(main, feed=feed or {}, fetch_list=outs)
        return got, str(main)
    finally:
        paddle.disable_static()


def test_sgn_polar_isreal_in_static_programs() -> None:
    def build() -> list[Any]:
        z = paddle.static.data("z", [3], dtype="complex128")
        r = paddle.static.data("r", [3], dtype="float64")
        return [paddle.sgn(z), z.sgn(), paddle.polar(r, r), paddle.isreal(z), z.isreal()]

    r = np.array([1.0, 2.0, 3.0])
    sgn, sgn_m, pol, isr, isr_m = _run_static(build, {"z": Z, "r": r})[0]
    np.testing.assert_allclose(sgn, Z / np.abs(Z))
    np.testing.assert_array_equal(sgn, sgn_m)
    np.testing.assert_allclose(pol, r * np.exp(1j * r))
    assert isr.tolist() == [False, False, False] and isr_m.tolist() == isr.tolist()


def test_complex_constants_in_static_programs() -> None:
    def build() -> list[Any]:
        x = paddle.static.data("x", [2], dtype="complex64")
        return [
            paddle.full([2], 1 + 2j, dtype="complex64"),
            paddle.full([2], 0.5 - 1j),  # a complex fill value makes complex128, as Paddle's
            paddle.ones([2], dtype="complex64"),
            paddle.zeros([2], dtype="complex128"),
            paddle.full_like(x, 2 - 1j),
            paddle.assign(np.array([1 + 2j, 3 - 1j])),
            paddle.assign(np.array([0.5j, -2], dtype=np.complex64)),
            x * paddle.full([2], 1j, dtype="complex64"),
        ]

    got, ir = _run_static(build, {"x": np.array([1 + 1j, 2], np.complex64)})
    want = [np.full(2, 1 + 2j, np.complex64), np.full(2, 0.5 - 1j), np.ones(2, np.complex64), np.zeros(2, np.complex128),
            np.full(2, 2 - 1j, np.complex64), np.array([1 + 2j, 3 - 1j]), np.array([0.5j, -2], np.complex64),
            np.array([-1 + 1j, 2j], np.complex64)]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    # The printed IR shows each constant's parts.
    assert 'value = 1.000000e+00 : f64, imag = 2.000000e+00 : f64' in ir
    assert 'values = [1.000000e+00 : f64, 3.000000e+00 : f64], imag_values = [2.000000e+00 : f64, -1.000000e+00 : f64], dtype = "complex128"' in ir
    assert 'pd.fill_any_like %x {value = 2.000000e+00 : f64, imag = -1.000000e+00 : f64' in ir


def test_complex_constants_refused_where_they_would_be_truncated() -> None:
    """A complex fill value into a real dtype is an error (Paddle 3.3.1's eager `full`
    keeps the real part silently); so is an imaginary part on a real constant op."""
    from pullback.dialects import pd
    from xdsl.utils.exceptions import VerifyException

    with pytest.raises(TypeError, match=r"full: a complex fill_value \(\(1\+2j\)\) needs a complex dtype, got float32"):
        paddle.full([2], 1 + 2j, dtype="float32")
    with pytest.raises(TypeError, match="full_like: a complex fill_value .* got float64"):
        paddle.full_like(paddle.to_tensor([1.0, 2.0], dtype="float64"), 1j)
    with pytest.raises(VerifyException, match="'pd.fill_constant': an imaginary part .* needs a complex result, not float32"):
        pd.FillConstantOp.make(shape=[2], value=1.0, imag=1.0, dtype="float32")
    with pytest.raises(VerifyException, match="'pd.assign_value': imaginary parts need a complex dtype, not float32"):
        pd.AssignValueOp.make(shape=[1], values=[1.0], imag_values=[1.0], dtype="float32")
    with pytest.raises(VerifyException, match="'pd.assign_value': 1 imaginary parts for 2 values"):
        pd.AssignValueOp.make(shape=[2], values=[1.0, 2.0], imag_values=[1.0], dtype="complex64")


def _program_with_complex_constant_and_parameter() -> tuple[Any, Any, Any, Any]:
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [2], dtype="complex64")
        w = paddle.static.create_parameter([2], dtype="complex64", name="w",
                                           default_initializer=paddle.nn.initializer.Constant(0.5))
        c = paddle.assign(np.array([1 + 2j, -0.5j], np.complex64))
        y = x * c + paddle.full([2], 3 - 1j, dtype="complex64") + w
    return main, start, x, y


X = np.array([1 + 1j, 2], np.complex64)
WANT = X * np.array([1 + 2j, -0.5j]) + (3 - 1j) + 0.5


@pytest.mark.parametrize("model_format", ["pullback", None])
def test_inference_model_with_complex_constants_round_trips(tmp_path: Path, model_format: str | None) -> None:
    """Paddle's model formats hold real constants only: by default the program falls
    back to pullback's IR text (with a warning) rather than losing imaginary parts."""
    paddle.enable_static()
    try:
        main, start, x, y = _program_with_complex_constant_and_parameter()
        exe = paddle.static.Executor(paddle.CPUPlace())
        prefix = os.fspath(tmp_path / "model")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exe.run(start)
            kw = {} if model_format is None else {"model_format": model_format}
            paddle.static.save_inference_model(prefix, [x], [y], exe, program=main, **kw)
            prog, feeds, fetches = paddle.static.load_inference_model(prefix, exe)
            (got,) = exe.run(prog, feed={feeds[0]: X}, fetch_list=fetches)
        if model_format is None:
            assert any("pd.assign_value" in str(w.message) and "pullback IR text" in str(w.message) for w in caught)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got, WANT, rtol=1e-6)
    finally:
        paddle.disable_static()


def test_static_save_load_of_a_complex_parameter(tmp_path: Path) -> None:
    paddle.enable_static()
    try:
        main, start, x, y = _program_with_complex_constant_and_parameter()
        exe = paddle.static.Executor(paddle.CPUPlace())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exe.run(start)
            path = os.fspath(tmp_path / "m")
            paddle.static.save(main, path)
            scope = paddle.static.global_scope()
            scope.find_var("w").get_tensor().set(np.array([9j, 9j], np.complex64), paddle.CPUPlace())
            paddle.static.load(main, path, exe)
            (got,) = exe.run(main, feed={"x": X}, fetch_list=[y])
        np.testing.assert_allclose(np.asarray(scope.find_var("w").get_tensor()), [0.5, 0.5])
        np.testing.assert_allclose(got, WANT, rtol=1e-6)
    finally:
        paddle.disable_static()


def test_paddle_written_model_with_complex_constants_loads() -> None:
    """`data/complex_model.json` (`gen_complex_model.py`): Paddle 3.3.1 writes a complex
    `full` as two real fulls and `pd_op.complex`, a complex `assign` as an
    `assign_value_` of complex scalars; pullback reads both."""
    paddle.enable_static()
    try:
        exe = paddle.static.Executor(paddle.CPUPlace())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the compiled backend's fallback to the interpreter
            prog, feeds, fetches = paddle.static.load_inference_model(os.fspath(HERE / "data" / "complex_model"), exe)
            (got,) = exe.run(prog, feed={feeds[0]: X}, fetch_list=fetches)
    finally:
        paddle.disable_static()
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, X * (1 + 2j) + np.array([1j, 2]), rtol=1e-6)
