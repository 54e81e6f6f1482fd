"""`complex-to-real` (passes/complex_to_real.py): complex programs on the compiled
backend.  Every op the pass rewrites runs compiled and on the interpreter, in
complex64 and complex128, with broadcasting and a dynamic batch dimension (two
batch sizes through one compiled program), forward values and gradients alike;
complex128 gradients of the compiled program are checked against float64 finite
differences in Paddle's convention (`d/d re + i d/d im`); no run falls back
(`warnings.simplefilter("error")`).  Then a static training loop with a complex
parameter, and an op the pass has no rule for (it still falls back, naming it)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pullback as paddle
from pullback.dialects import pd
from pullback.frontend import core, unique_name

@pytest.fixture(autouse=True)
def _static_mode():
    """Static mode for each test, and the mode it found restored after."""
    was_dynamic = core.in_dynamic_mode()
    core.enable_static()
    yield
    if was_dynamic:
        core.disable_static()


PART = {"complex64": "float32", "complex128": "float64"}


def _idx(values: list[int]) -> Any:
    return paddle.assign(np.array(values, dtype=np.int64))


# Each case: a function of x (complex [N, 3]), y (complex [3]) and r (real [N, 3] of
# the parts' dtype) giving one tensor, complex or real.
CASES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda x, y, r: x + y,
    "sub": lambda x, y, r: y - x,
    "mul": lambda x, y, r: x * y,
    "div": lambda x, y, r: x / y,
    "mul_real": lambda x, y, r: x * paddle.cast(r, x.dtype),
    "scale_bias": lambda x, y, r: paddle.scale(x, 2.0, 0.5),
    "scale_bias_before": lambda x, y, r: paddle.scale(x, -1.5, 0.25, bias_after_scale=False),
    "neg": lambda x, y, r: -x,
    "conj": lambda x, y, r: paddle.conj(x) * y,
    "real": lambda x, y, r: paddle.real(x * y),
    "imag": lambda x, y, r: paddle.imag(x * y),
    "complex": lambda x, y, r: paddle.complex(r, paddle.real(x)) * y,
    "complex_broadcast": lambda x, y, r: paddle.complex(r, paddle.imag(y)),
    "abs": lambda x, y, r: paddle.abs(x * y),
    "angle": lambda x, y, r: paddle.angle(x + y),
    "as_real": lambda x, y, r: paddle.as_real(x * y),
    "as_complex": lambda x, y, r: paddle.as_complex(paddle.as_real(x) * 2.0) * y,
    "cast_to_real": lambda x, y, r: paddle.cast(x * y, r.dtype),
    "cast_from_real": lambda x, y, r: paddle.cast(r, x.dtype) + y,
    "cast_widen": lambda x, y, r: paddle.cast(x, "complex128") * paddle.cast(y, "complex128"),
    "matmul": lambda x, y, r: paddle.matmul(x, paddle.unsqueeze(y, 1)),
    "matmul_transposed": lambda x, y, r: paddle.matmul(x, x * y, transpose_y=True),
    "matmul_batched": lambda x, y, r: paddle.matmul(paddle.unsqueeze(x, 1), paddle.unsqueeze(x * y, 2)),
    "sum_all": lambda x, y, r: paddle.sum(x * y),
    "sum_axis": lambda x, y, r: paddle.sum(x * y, axis=-1),
    "mean": lambda x, y, r: paddle.mean(x * y),
    "mean_axis": lambda x, y, r: paddle.mean(x * y, axis=0, keepdim=True),
    "reshape": lambda x, y, r: paddle.reshape(x * y, [-1]),
    "transpose": lambda x, y, r: paddle.transpose(x, [1, 0]) * paddle.unsqueeze(y, 1),
    "slice": lambda x, y, r: (x * y)[:, 1:],
    "concat": lambda x, y, r: paddle.concat([x, x * y], axis=-1),
    "split": lambda x, y, r: paddle.split(x * y, [1, 2], axis=1)[1],
    "squeeze_unsqueeze": lambda x, y, r: paddle.squeeze(paddle.unsqueeze(x, -1) * y.reshape([3, 1]), -1),
    "expand": lambda x, y, r: paddle.expand(paddle.unsqueeze(y, 0), [4, 3]) * 2.0,
    "full": lambda x, y, r: x * paddle.full([3], 2.0, dtype=x.dtype),
    "ones_like": lambda x, y, r: x + paddle.ones_like(x),
    "exp": lambda x, y, r: paddle.exp(x * y),
    "log": lambda x, y, r: paddle.log(x * y),
    "square": lambda x, y, r: paddle.square(x) + y,
    "sqrt": lambda x, y, r: paddle.sqrt(x * y),
    "cumsum": lambda x, y, r: paddle.cumsum(x * y, axis=1),
    "gather": lambda x, y, r: paddle.gather(y, _idx([2, 0, 0])) * x,
    "where": lambda x, y, r: paddle.where(r > 0, x, x * y),
    "equal": lambda x, y, r: paddle.where(paddle.equal(x, paddle.conj(paddle.conj(x))), x * y, x),
    "not_equal": lambda x, y, r: paddle.cast(paddle.not_equal(x, x * y), r.dtype) + r,
    "strided_slice": lambda x, y, r: paddle.strided_slice(x * y, [1], [0], [3], [2]),
    "set_value": lambda x, y, r: _set_value(y.reshape([3, 1]) * y, y.reshape([3, 1]) * paddle.exp(y[1:])),
    "gather_nd": lambda x, y, r: paddle.gather_nd(x, _idx([[1, 2], [0, 0]]).reshape([2, 2])) * y[:2],
    "scatter": lambda x, y, r: paddle.scatter(x, _idx([1, 0]), x[:2] * y),
    "scatter_nd_add": lambda x, y, r: paddle.scatter_nd_add(x, _idx([[1], [0]]).reshape([2, 1]), x[:2] * y),
    "tril": lambda x, y, r: paddle.tril(x * y) + paddle.triu(x, 1),
}


def _set_value(x: Any, v: Any) -> Any:
    """`x[:, 1:] = v` on a copy (Paddle's `set_value`)."""
    out = x * 1.0
    out[:, 1:] = v
    return out


def _loss(out: Any) -> Any:
    """A real scalar that tells the parts apart (squares, a cross term, an odd
    term): a conjugation or a swap of the parts changes it."""
    if out.dtype in (paddle.complex64, paddle.complex128):
        re, im = paddle.real(out), paddle.imag(out)
        return paddle.sum(re * re * 0.5 + im * 0.7 + re * im * 0.3)
    return paddle.sum(out * out * 0.5 + out * 0.3)


def _build(case: str, dtype: str) -> tuple[Any, list[Any], list[str]]:
    """The case's program: fetches out, the loss, and the gradients of the loss
    with respect to those of x, y and r it depends on (whose names come third)."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, 3], dtype=dtype)
        y = paddle.static.data("y", [3], dtype=dtype)
        r = paddle.static.data("r", [-1, 3], dtype=PART[dtype])
        for v in (x, y, r):
            v.stop_gradient = False
        out = CASES[case](x, y, r)
        loss = _loss(out)
        grads = paddle.static.gradients([loss], [x, y, r])
    wrt = [(n, g) for n, g in zip("xyr", grads) if g is not None]  # (None: no path to the loss)
    return main, [out, loss, *(g for _, g in wrt)], [n for n, _ in wrt]


def _feeds(dtype: str, n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def c(*shape: int) -> np.ndarray:
        return (rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape)
                + 1j * rng.uniform(-1.5, 1.5, shape)).astype(dtype)

    return {"x": c(n, 3), "y": c(3), "r": rng.standard_normal((n, 3)).astype(PART[dtype])}


def _run(exe: Any, main: Any, fetches: list[Any], feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to the interpreter fails the test
        return exe.run(main, feed=feed, fetch_list=fetches)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_matches_interpreter(case: str, dtype: str) -> None:
    main, fetches, _ = _build(case, dtype)
    compiled = paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
    interp = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    tol = {"complex64": dict(rtol=2e-4, atol=2e-5), "complex128": dict(rtol=1e-10, atol=1e-12)}[dtype]
    for n in (2, 5):  # one compiled program, two batch sizes
        feed = _feeds(dtype, n, seed=n)
        got, want = _run(compiled, main, fetches, feed), _run(interp, main, fetches, feed)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, **tol)


def _fd_grad(f: Callable[[np.ndarray], float], a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of a real scalar `f` at `a`: `d/d re + i d/d im` for a
    complex `a` (Paddle's convention), `d/da` for a real one."""
    g = np.zeros(a.shape, dtype=a.dtype)
    steps = [1.0, 1j] if np.iscomplexobj(a) else [1.0]
    for k in np.ndindex(a.shape):
        for s in steps:
            hi, lo = a.copy(), a.copy()
            hi[k] += eps * s
            lo[k] -= eps * s
            g[k] += (f(hi) - f(lo)) / (2 * eps) * (1 if s == 1.0 else 1j)
    return g


FD_CASES = ["div", "mul_real", "conj", "complex", "abs", "angle", "as_complex", "cast_to_real", "matmul",
            "matmul_transposed", "mean_axis", "concat", "exp", "log", "square", "sqrt", "cumsum", "gather", "where",
            "complex_broadcast", "scale_bias", "gather_nd", "scatter_nd_add", "tril", "strided_slice", "set_value", "scatter"]


@pytest.mark.parametrize("case", FD_CASES)
def test_compiled_gradients_match_finite_differences(case: str) -> None:
    main, fetches, wrt = _build(case, "complex128")
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
    feed = _feeds("complex128", 2, seed=7)
    got = _run(exe, main, fetches, feed)
    assert wrt and len(got) == 2 + len(wrt)
    for name, g in zip(wrt, got[2:]):
        def loss_at(a: np.ndarray, name: str = name) -> float:
            return float(_run(exe, main, fetches, {**feed, name: a})[1])

        np.testing.assert_allclose(g, _fd_grad(loss_at, feed[name]), rtol=1e-5, atol=1e-6, err_msg=name)


def test_feeds_and_fetches_are_the_pair_bytes() -> None:
    """The compiled program reads a complex feed's buffer as float pairs and gives
    complex results back: the values are numpy's."""
    main, fetches, _ = _build("mul", "complex64")
    feed = _feeds("complex64", 3, seed=1)
    got = _run(paddle.static.Executor(paddle.CPUPlace(), backend="compiled"), main, fetches, feed)
    assert got[0].dtype == np.complex64
    np.testing.assert_allclose(got[0], feed["x"] * feed["y"], rtol=1e-6)


def _train(backend: str) -> tuple[list[np.ndarray], np.ndarray]:
    """Three SGD steps on a complex parameter, written back to it by name (`pd.sgd`
    takes real parameters only, so the step is spelled out)."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, 3], dtype="complex64")
        t = paddle.static.data("t", [-1, 3], dtype="complex64")
        p = paddle.static.create_parameter(
            [3], dtype="complex64", name="p", default_initializer=paddle.nn.initializer.Constant(0.5)
        )
        err = x * p - t
        loss = paddle.mean(paddle.real(err * paddle.conj(err)))
        (g,) = paddle.static.gradients([loss], [p])
        step = p - g * 0.1
        step.name = "p"  # the update of the parameter
    scope = paddle.static.Scope()
    feed = _feeds("complex64", 4, seed=3)
    data = {"x": feed["x"], "t": (feed["x"] * np.array([1 + 1j, 2, -1j], np.complex64)).astype(np.complex64)}
    with paddle.static.scope_guard(scope):
        exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
        exe.run(startup)
        outs = [_run(exe, main, [loss, g, x], data) for _ in range(3)]
        param = np.array(scope.find_var("p").get_tensor())
    return [v for o in outs for v in o], param


def test_static_training_with_a_complex_parameter_matches_the_interpreter() -> None:
    got, got_p = _train("compiled")
    want, want_p = _train("interpreter")
    assert got_p.dtype == np.complex64 and not np.allclose(got_p, 0.5)  # updated
    np.testing.assert_allclose(got_p, want_p, rtol=1e-5)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert got[0] > got[3] > got[6]  # the loss goes down


def test_an_op_without_a_rule_falls_back_naming_it() -> None:
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [4], dtype="complex128")
        y = paddle.abs(paddle.fft.fft(x * x))
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
    z = np.array([1 + 2j, 3, -1j, 0.5])
    with pytest.warns(UserWarning, match=r"'pd\.fft_c2c'.*complex128 values are computed by the host interpreter only"):
        (got,) = exe.run(main, feed={"x": z}, fetch_list=[y])
    np.testing.assert_allclose(got, np.abs(np.fft.fft(z * z)), rtol=1e-12)


def test_the_pass_refuses_a_rule_slip_by_name() -> None:
    """A rewrite whose result has not the pair type is refused (never computed)."""
    from xdsl.dialects.builtin import ModuleOp

    from pullback.lowering.abi import LoweringError
    from pullback.passes import complex_to_real as c2r

    x = pd.DataOp.make("x", [2, 3], dtype="complex64")
    neg = pd.ScaleOp.make(x.out, scale=-1.0)
    module = ModuleOp([x, neg, pd.FetchOp.create(operands=[neg.results[0]])])
    saved = c2r.RULES[pd.ScaleOp]
    c2r.RULES[pd.ScaleOp] = lambda e, op: [e.re(op.operands[0])]  # the wrong shape
    try:
        with pytest.raises(LoweringError, match=r"'pd\.scale'.*rewrite gave tensor<2x3x1xf32>, expected tensor<2x3x2xf32>"):
            c2r.complex_to_real(module)
    finally:
        c2r.RULES[pd.ScaleOp] = saved
    new, _, orig = c2r.complex_to_real(module)
    assert not c2r.needs_rewrite(new) and c2r.needs_rewrite(module)  # (a copy; the module is unchanged)
    assert sorted(str(t) for t in orig.values()) == ["tensor<2x3xcomplex<f32>>"] * 2


def test_abs_and_log_of_large_and_tiny_values_do_not_overflow() -> None:
    """`abs` is scaled as hypot is: |3e20 + 4e20j| is 5e20 in complex64 (the squares
    overflow float32), |3e-30 + 4e-30j| is 5e-30 (they underflow), |0| is 0."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [4], dtype="complex64")
        a, lg = paddle.abs(x), paddle.log(x)
    z = np.array([3e20 + 4e20j, 3e-30 + 4e-30j, 0, -1 + 0.5j], np.complex64)
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
    got_abs, got_log = _run(exe, main, [a, lg], {"x": z})
    np.testing.assert_allclose(got_abs, [5e20, 5e-30, 0, np.hypot(1, 0.5)], rtol=1e-6)
    np.testing.assert_allclose(got_log[[0, 1, 3]], np.log(z[[0, 1, 3]].astype(np.complex128)), rtol=1e-6)


def test_division_by_large_and_tiny_values_does_not_overflow() -> None:
    """The divisor is scaled before it is squared: (1 + 1j) / (3e20 + 4e20j) and
    (1e-30 + 1e-30j) / (3e-30 + 4e-30j) in complex64 are numpy's."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [3], dtype="complex64")
        y = paddle.static.data("y", [3], dtype="complex64")
        q = x / y
    xs = np.array([1 + 1j, 1e-30 + 1e-30j, 2 - 1j], np.complex64)
    ys = np.array([3e20 + 4e20j, 3e-30 + 4e-30j, 0.5 + 2j], np.complex64)
    (got,) = _run(paddle.static.Executor(paddle.CPUPlace(), backend="compiled"), main, [q], {"x": xs, "y": ys})
    np.testing.assert_allclose(got, xs.astype(np.complex128) / ys, rtol=1e-6)


def test_sqrt_on_the_axes_and_at_zero_is_numpys() -> None:
    """The principal root where the formulas divide by zero or cancel: 0, the
    negative real axis, a tiny imaginary part beside a large negative real one."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [6], dtype="complex128")
        root = paddle.sqrt(x)
    z = np.array([0, -4, 4j, -9 + 1e-12j, -9 - 1e-12j, 3 - 4j], np.complex128)
    (got,) = _run(paddle.static.Executor(paddle.CPUPlace(), backend="compiled"), main, [root], {"x": z})
    np.testing.assert_allclose(got, np.sqrt(z), rtol=1e-14, atol=1e-300)
