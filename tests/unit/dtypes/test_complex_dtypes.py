"""complex64 / complex128 through the layers: Paddle 3.3.1's dtype rules
(`data/paddle_complex_facts.json`, made by `paddle_complex_facts.py`), refusals by
ops that do not take complex numbers, static programs (the interpreter, and the
compiled backend, which refuses a complex op it has no rule for, such as fft, by
name and falls back with a warning),
`paddle.save`/`load` and `jit.to_static`."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import pullback as paddle
from pullback.dialects.pd.dtypes import promote_types

FACTS = json.loads((Path(__file__).resolve().parent / "data" / "paddle_complex_facts.json").read_text())
Z = np.array([1 + 2j, -3 + 0.5j])


@pytest.mark.parametrize("pair", sorted(FACTS["add"]))
def test_promotion_matches_paddle(pair: str) -> None:
    a, b = pair.split("+")
    want = FACTS["add"][pair]
    assert promote_types(a, b) == want
    assert promote_types(b, a) == want
    assert (paddle.ones([2], a) + paddle.ones([2], b)).dtype == want


def test_scalar_operands_match_paddle() -> None:
    for key, want in FACTS["scalars"].items():
        dt, s = key.split("+", 1)
        scalar = complex(s) if "j" in s else (float(s) if "." in s else int(s))
        assert (paddle.ones([2], dt) + scalar).dtype == want, key
    np.testing.assert_allclose((paddle.ones([2], "float32") + 2j).numpy(), [1 + 2j, 1 + 2j])
    np.testing.assert_allclose((1j - paddle.ones([2], "float64")).numpy(), [-1 + 1j, -1 + 1j])


def test_creation_keeps_the_dtype_given() -> None:
    got = {
        "to_tensor(1+2j)": paddle.to_tensor(1 + 2j).dtype,
        "to_tensor([1+2j])": paddle.to_tensor([1 + 2j]).dtype,
        "to_tensor(complex128 array)": paddle.to_tensor(Z).dtype,
        "to_tensor(complex64 array)": paddle.to_tensor(Z.astype(np.complex64)).dtype,
        "to_tensor(float array, dtype=complex64)": paddle.to_tensor(np.array([1.5]), dtype="complex64").dtype,
    }
    assert {k: str(v).replace("paddle.", "") for k, v in got.items()} == FACTS["creations"]
    assert paddle.to_tensor(np.array([1.5]), dtype=paddle.complex128).numpy().tolist() == [1.5 + 0j]


def test_casts_match_paddle() -> None:
    values = FACTS["values"]
    assert paddle.to_tensor(Z).astype("float32").numpy().tolist() == values["astype float32"]
    assert paddle.to_tensor(Z).astype("int64").numpy().tolist() == values["astype int64"]
    got = paddle.cast(paddle.to_tensor([1.5, -2.0], dtype="float64"), "complex128").numpy()
    assert [[v.real, v.imag] for v in got] == values["cast float64->complex128"]


def test_result_dtypes_match_paddle() -> None:
    c = paddle.to_tensor(Z)
    res = FACTS["results"]
    assert paddle.abs(c).dtype == res["abs"] and paddle.real(c).dtype == res["real"]
    assert paddle.angle(c).dtype == res["angle"]
    assert paddle.abs(c.astype("complex64")).dtype == res["abs complex64"]
    assert list(paddle.as_real(c).shape) == res["as_real shape"]
    assert paddle.is_complex(c) is res["is_complex"] and c.is_complex()
    assert c.mean().dtype == res["mean"] and c.sum().dtype == res["sum"]
    assert not paddle.to_tensor([1.0]).is_complex()


@pytest.mark.parametrize("fn", [
    lambda c: paddle.nn.functional.relu(c),
    lambda c: paddle.maximum(c, c),
    lambda c: paddle.sort(c),
    lambda c: paddle.floor(c),
    lambda c: c > c,
])
def test_ops_without_complex_numbers_refuse_them(fn) -> None:
    with pytest.raises((TypeError, ValueError), match="complex"):
        fn(paddle.to_tensor(Z))


def test_fft_refuses_what_paddle_refuses() -> None:
    with pytest.raises(TypeError, match="rfft: 'x' must be a float32 or float64"):
        paddle.fft.rfft(paddle.to_tensor(Z))
    with pytest.raises(TypeError, match="float16"):
        paddle.fft.fft(paddle.ones([4], "float16"))
    with pytest.raises(ValueError, match="norm must be one of"):
        paddle.fft.fft(paddle.to_tensor(Z), norm="none")


def _static(backend: str) -> list[np.ndarray]:
    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            x = paddle.static.data("x", [2], dtype="complex128")
            x.stop_gradient = False
            y = paddle.fft.fft(x * x, norm="ortho")
            loss = paddle.abs(y).sum()
            (gx,) = paddle.static.gradients([loss], [x])
        exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
        return exe.run(main, feed={"x": Z}, fetch_list=[y, loss, gx])
    finally:
        paddle.disable_static()


def _eager() -> list[np.ndarray]:
    x = paddle.to_tensor(Z, stop_gradient=False)
    y = paddle.fft.fft(x * x, norm="ortho")
    loss = paddle.abs(y).sum()
    loss.backward()
    return [y.numpy(), loss.numpy(), x.grad.numpy()]


def test_static_programs_on_the_interpreter_match_eager() -> None:
    got, want = _static("interpreter"), _eager()
    assert [g.dtype for g in got] == [np.complex128, np.float64, np.complex128]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_compiled_backend_refuses_complex_by_name_and_falls_back() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _static("compiled")
    assert any("complex128 values are computed by the host interpreter only" in str(w.message) for w in caught)
    for g, w in zip(got, _eager()):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_lowering_refuses_complex_values() -> None:
    from pullback.dialects import pd
    from pullback.lowering.abi import LoweringError
    from pullback.lowering.convert_pd_to_linalg import check_not_complex

    op = pd.DataOp.make("z", [2], dtype="complex64")
    with pytest.raises(LoweringError, match="'pd.data'.*complex64"):
        check_not_complex(op)


def test_save_load_round_trip(tmp_path: Path) -> None:
    path = os.fspath(tmp_path / "c.pdparams")
    paddle.save({"a": paddle.to_tensor(Z), "b": paddle.to_tensor(Z, dtype="complex64")}, path)
    back = paddle.load(path)
    assert back["a"].dtype == paddle.complex128 and back["b"].dtype == paddle.complex64
    np.testing.assert_array_equal(back["a"].numpy(), Z)


def test_to_static_gradients_match_eager() -> None:
    @paddle.jit.to_static
    def f(x):
        return paddle.abs(paddle.fft.fft(x * x, norm="ortho")).sum()

    x = paddle.to_tensor(Z, stop_gradient=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the compiled backend's fallback to the interpreter
        out = f(x)
    out.backward()
    _, loss, grad = _eager()
    np.testing.assert_allclose(out.numpy(), loss, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-12)


def test_printing_matches_paddle() -> None:
    """Paddle 3.3.1's `print` of complex tensors (read off `print(paddle.to_tensor(...))`)."""
    assert repr(paddle.to_tensor(np.array([[1 + 2j, -3 - 1.5j], [0.5j, 2]]))) == (
        "Tensor(shape=[2, 2], dtype=complex128, place=Place(cpu), stop_gradient=True,\n"
        "       [[ (1.00000000+2.00000000j), (-3.00000000-1.50000000j)],\n"
        "        [ (0.00000000+0.50000000j),  (2.00000000+0.00000000j)]])"
    )
    assert repr(paddle.to_tensor(1 + 2j)) == (
        "Tensor(shape=[], dtype=complex64, place=Place(cpu), stop_gradient=True,\n"
        "       (1.00000000+2.00000000j))"
    )


def test_assign_of_complex_data() -> None:
    assert paddle.assign(Z).dtype == paddle.complex128
    assert paddle.assign(Z.astype(np.complex64)).dtype == paddle.complex64
    np.testing.assert_array_equal(paddle.assign(Z).numpy(), Z)
    paddle.enable_static()
    try:
        # A complex constant in a static program (test_complex_functions.py runs them).
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            c = paddle.assign(Z)
        assert c.dtype == paddle.complex128 and "imag_values" in str(main)
    finally:
        paddle.disable_static()


@pytest.mark.parametrize("name", ["scatter", "take_along_axis", "index_add", "put_along_axis", "expand_as"])
def test_complex_gathers_paddle_lacks_match_finite_differences(name: str) -> None:
    """Ops pullback computes on complex tensors where Paddle 3.3.1 has no complex
    kernel (so no Paddle values to compare): gradients against finite differences."""
    from pullback.testing import check_complex_grad

    def idx(v):
        return paddle.to_tensor(np.array(v, dtype=np.int64))

    fns = {
        "scatter": lambda a: paddle.scatter(a, idx([2, 0]), a[:2] * 2),
        "take_along_axis": lambda a: paddle.take_along_axis(a, idx([[0], [2], [1]]), 1),
        "index_add": lambda a: paddle.index_add(a, idx([0, 2]), 0, a[:2]),
        "put_along_axis": lambda a: paddle.put_along_axis(a, idx([[0], [2], [1]]), a[:, :1] * 3, 1),
        "expand_as": lambda a: paddle.expand_as(a[:1], a) * a,
    }
    rng = np.random.default_rng(5)
    check_complex_grad(fns[name], [rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))])
