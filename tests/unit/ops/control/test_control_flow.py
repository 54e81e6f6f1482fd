"""Control flow: `cond`, `while_loop`, `switch_case`, `case` (static and eager), their
execution, and reverse mode through them.

Gradients are checked against float64 central finite differences of the same
program, to second order, and static results against eager ones.  Every static
program runs on the compiled backend (`lowering/control.py`: `scf.if`/`scf.while`
and heap stacks) and is checked against the interpreter on every run; a fallback to
the interpreter is an error here, but for the one case that must fall back (a
fetched value whose shape only control flow decides).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.lowering.convert_pd_to_linalg import build_entry
from pullback.lowering.gpu.pipeline import lower_to_gpu
from pullback.runtime.native.backend import CompiledBackend
from pullback.testing import fd_grad

X = np.array([0.3, -0.4, 0.9])
W = np.array([0.5, -0.2, 0.7])


@pytest.fixture
def static_mode():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        yield main, startup
    paddle.disable_static()


pytestmark = pytest.mark.filterwarnings("error:compiled backend")


def _interp() -> Any:
    return paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")


@functools.cache
def _compiled() -> Any:
    # One executor for the module: its backend keeps the compiled programs, so the
    # finite-difference runs of one program compile it once.
    return paddle.static.Executor(paddle.CPUPlace(), backend="compiled")


def _run_both(program: Any = None, **kwargs: Any) -> list[np.ndarray]:
    """Run on the compiled backend and on the interpreter; check that they agree and
    return the compiled results."""
    got = _compiled().run(program, **kwargs)
    want = _interp().run(program, **kwargs)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    return got


def _static_grads(
    build: Callable[[Any, Any], Any], feeds: dict[str, np.ndarray], order: int = 1
) -> tuple[Any, list[np.ndarray], Callable[[np.ndarray, np.ndarray], list[np.ndarray]]]:
    """Build `loss = build(x, w)` (x, w float64 feeds of shape [3]) with its gradient
    wrt x and w (and for order 2, the gradient of sum(dx**2) wrt x); returns the
    program, a runner `(x, w) -> [loss, dx, dw, (ddx)]` (compiled, checked against
    the interpreter)."""
    x = paddle.static.data("x", [3], "float64")
    w = paddle.static.data("w", [3], "float64")
    x.stop_gradient = False
    w.stop_gradient = False
    others = {
        name: paddle.static.data(name, list(v.shape), str(v.dtype))
        for name, v in feeds.items()
    }
    loss = build(x, w, **others)
    dx, dw = paddle.static.gradients([loss], [x, w])
    fetch = [loss, dx, dw]
    if order == 2:
        (ddx,) = paddle.static.gradients([paddle.sum(dx * dx)], [x])
        fetch.append(ddx)
    main = paddle.static.default_main_program()

    def run(xv: np.ndarray, wv: np.ndarray) -> list[np.ndarray]:
        return _run_both(main, feed={"x": xv, "w": wv, **feeds}, fetch_list=fetch)

    return main, fetch, run


def _check_first_order(run: Callable[[np.ndarray, np.ndarray], list[np.ndarray]]) -> None:
    _, dx, dw = run(X, W)[:3]
    np.testing.assert_allclose(dx, fd_grad(lambda v: float(run(v, W)[0]), X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dw, fd_grad(lambda v: float(run(X, v)[0]), W), rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------------ cond


def _cond_loss(x, w, p):
    y = paddle.static.nn.cond(p, lambda: paddle.tanh(x) * w, lambda: x * x * x)
    return paddle.sum(y * y)


def _cond_ref(x, w, p):
    y = np.tanh(x) * w if p else x**3
    return float((y * y).sum())


@pytest.mark.parametrize("pv", [True, False])
def test_cond_value_and_gradients(static_mode, pv):
    _, _, run = _static_grads(_cond_loss, {"p": np.array([pv])})
    loss, _, dw = run(X, W)
    assert float(loss) == pytest.approx(_cond_ref(X, W, pv))
    _check_first_order(run)
    if not pv:
        # w is not used by the branch taken: its gradient is zero, not missing.
        np.testing.assert_array_equal(dw, np.zeros(3))


@pytest.mark.parametrize("pv", [True, False])
def test_cond_second_order(static_mode, pv):
    _, _, run = _static_grads(_cond_loss, {"p": np.array([pv])}, order=2)
    ddx = run(X, W)[3]
    np.testing.assert_allclose(
        ddx, fd_grad(lambda v: float((run(v, W)[1] ** 2).sum()), X), rtol=1e-5, atol=1e-8
    )


def test_cond_branch_returning_outer_value_and_structures(static_mode):
    x = paddle.static.data("x", [3], "float64")
    p = paddle.static.data("p", [], "bool")
    out = paddle.static.nn.cond(
        p, lambda: {"a": x, "b": [x * 2.0]}, lambda: {"a": x * 3.0, "b": [x]}
    )
    assert set(out) == {"a", "b"} and isinstance(out["b"], list)
    for pv, (a, b) in ((True, (1.0, 2.0)), (False, (3.0, 1.0))):
        ra, rb = _run_both(feed={"x": X, "p": np.array(pv)}, fetch_list=[out["a"], out["b"][0]])
        np.testing.assert_allclose(ra, a * X)
        np.testing.assert_allclose(rb, b * X)


def test_cond_branches_of_different_shapes_give_a_dynamic_result(static_mode):
    p = paddle.static.data("p", [1], "bool")
    out = paddle.static.nn.cond(
        p, lambda: paddle.full([2, 3], 1.0), lambda: paddle.full([4, 3], 2.0)
    )
    assert out.shape == [-1, 3]
    (r,) = _interp().run(feed={"p": np.array([False])}, fetch_list=[out])
    np.testing.assert_array_equal(r, np.full([4, 3], 2.0, np.float32))
    # The caller allocates outputs before the call, from shapes planned from the
    # feeds: this one only the branch taken decides, so the compiled backend runs
    # the program on the interpreter, saying why.
    exe = _compiled()
    with pytest.warns(UserWarning, match="cannot lower a fetch .* known only once control flow ran"):
        (rc,) = exe.run(feed={"p": np.array([True])}, fetch_list=[out])
    np.testing.assert_array_equal(rc, np.full([2, 3], 1.0, np.float32))
    # Read inside the program, the dynamic result is compiled.
    (total,) = _run_both(feed={"p": np.array([True])}, fetch_list=[paddle.sum(out)])
    assert float(total) == 6.0


def test_cond_none_branches_and_errors(static_mode):
    x = paddle.static.data("x", [3], "float64")
    p = paddle.static.data("p", [1], "bool")
    assert paddle.static.nn.cond(p, lambda: None, lambda: None) is None
    with pytest.raises(ValueError, match="true_fn returns None while false_fn returns non-None"):
        paddle.static.nn.cond(p, None, lambda: x)
    with pytest.raises(TypeError, match="'pred' must be a bool tensor"):
        paddle.static.nn.cond(x, lambda: x, lambda: x)
    with pytest.raises(TypeError, match="true_fn in cond must be callable"):
        paddle.static.nn.cond(p, 3, lambda: x)
    with pytest.raises(ValueError, match="different structures"):
        paddle.static.nn.cond(p, lambda: [x, x], lambda: [x])
    with pytest.raises(ValueError, match=r"return value #0 is float64 \[3\] in true_fn but int64"):
        paddle.static.nn.cond(p, lambda: x, lambda: paddle.full([3], 1, dtype="int64"))


# ---------------------------------------------------------------------- while


def _loop_loss(x, w):
    """A loop whose trip count depends on the data: grow x until its sum passes 4."""

    def cond(v):
        return paddle.sum(v) < 4.0

    def body(v):
        return [paddle.tanh(v) * w + v * 1.5]

    (r,) = paddle.static.nn.while_loop(cond, body, [x])
    return paddle.sum(r * r)


def _loop_ref(x, w):
    trips = 0
    while x.sum() < 4.0:
        x = np.tanh(x) * w + 1.5 * x
        trips += 1
    return float((x * x).sum()), trips


@pytest.mark.parametrize("scale", [1.0, 3.0, 10.0])
def test_while_data_dependent_trip_count(static_mode, scale):
    _, _, run = _static_grads(_loop_loss, {})
    x0 = X * scale
    loss = run(x0, W)[0]
    ref, trips = _loop_ref(x0, W)
    assert float(loss) == pytest.approx(ref)
    # the three scales give several trips, one trip and zero trips
    assert trips == {1.0: 3, 3.0: 1, 10.0: 0}[scale]
    dx, dw = run(x0, W)[1:3]
    np.testing.assert_allclose(dx, fd_grad(lambda v: float(run(v, W)[0]), x0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dw, fd_grad(lambda v: float(run(x0, v)[0]), W), rtol=1e-6, atol=1e-8)


def _counted_loss(x, w, n):
    i = paddle.full([1], 0, dtype="int64")

    def cond(i, v):
        return i < n

    def body(i, v):
        inner = paddle.static.nn.cond(
            paddle.sum(v) > 1.0, lambda: v * w, lambda: paddle.tanh(v) + w
        )
        return [i + 1, inner]

    _, r = paddle.static.nn.while_loop(cond, body, [i, x])
    return paddle.sum(r * r)


def _counted_ref(x, w, n):
    for _ in range(n):
        x = x * w if x.sum() > 1.0 else np.tanh(x) + w
    return float((x * x).sum())


@pytest.mark.parametrize("n", [0, 1, 4])
def test_cond_inside_while(static_mode, n):
    _, _, run = _static_grads(_counted_loss, {"n": np.array([n], np.int64)})
    assert float(run(X, W)[0]) == pytest.approx(_counted_ref(X, W, n))
    _check_first_order(run)


def test_nested_while_loops(static_mode):
    def build(x, w):
        i = paddle.full([1], 0, dtype="int64")

        def outer_body(i, v):
            j = paddle.full([1], 0, dtype="int64")
            _, v2 = paddle.static.nn.while_loop(
                lambda j, u: j < i + 1, lambda j, u: [j + 1, paddle.tanh(u) * w], [j, v]
            )
            return [i + 1, v2 + v]

        _, r = paddle.static.nn.while_loop(lambda i, v: i < 3, outer_body, [i, x])
        return paddle.sum(r * r)

    _, _, run = _static_grads(build, {})

    def ref(x, w):
        for i in range(3):
            u = x
            for _ in range(i + 1):
                u = np.tanh(u) * w
            x = u + x
        return float((x * x).sum())

    assert float(run(X, W)[0]) == pytest.approx(ref(X, W))
    _check_first_order(run)


def _while_in_cond(x, w, p):
    def looped():
        i = paddle.full([1], 0, dtype="int64")
        _, v = paddle.static.nn.while_loop(
            lambda i, v: i < 3, lambda i, v: [i + 1, paddle.tanh(v) * w], [i, x]
        )
        return v * 2.0

    y = paddle.static.nn.cond(p, looped, lambda: x * w)
    return paddle.sum(y * y)


@pytest.mark.parametrize("pv", [True, False])
def test_while_inside_cond(static_mode, pv):
    _, _, run = _static_grads(_while_in_cond, {"p": np.array([pv])}, order=2)
    v = X
    for _ in range(3):
        v = np.tanh(v) * W
    y = 2.0 * v if pv else X * W
    assert float(run(X, W)[0]) == pytest.approx(float((y * y).sum()))
    _check_first_order(run)
    ddx = run(X, W)[3]
    np.testing.assert_allclose(
        ddx, fd_grad(lambda u: float((run(u, W)[1] ** 2).sum()), X), rtol=1e-5, atol=1e-7
    )


def test_while_second_order(static_mode):
    _, _, run = _static_grads(_counted_loss, {"n": np.array([3], np.int64)}, order=2)
    ddx = run(X, W)[3]
    np.testing.assert_allclose(
        ddx, fd_grad(lambda v: float((run(v, W)[1] ** 2).sum()), X), rtol=1e-5, atol=1e-7
    )


def test_while_loop_paddle_example_with_increment(static_mode):
    i = paddle.full(shape=[1], fill_value=0, dtype="int64")
    ten = paddle.full(shape=[1], fill_value=10, dtype="int64")

    def body(i, ten):
        i = paddle.increment(i)
        return [i, ten]

    out, ten2 = paddle.static.nn.while_loop(lambda i, ten: i < ten, body, [i, ten])
    res = _run_both(fetch_list=[out, ten2])
    assert res[0].tolist() == [10] and res[1].tolist() == [10]


def test_while_loop_errors(static_mode):
    x = paddle.static.data("x", [3], "float64")
    with pytest.raises(TypeError, match="cond in while_loop should be callable"):
        paddle.static.nn.while_loop(1, lambda v: v, [x])
    with pytest.raises(TypeError, match="body in while_loop should be callable"):
        paddle.static.nn.while_loop(lambda v: v, None, [x])
    with pytest.raises(ValueError, match="loop_vars in while_loop should not be empty"):
        paddle.static.nn.while_loop(lambda: True, list, [])
    with pytest.raises(TypeError, match="must be a bool tensor"):
        paddle.static.nn.while_loop(lambda v: paddle.sum(v), lambda v: [v], [x])
    with pytest.raises(ValueError, match=r"loop var #0: float64 \[3\] became float64 \[4\]"):
        paddle.static.nn.while_loop(
            lambda v: paddle.sum(v) < 1.0, lambda v: [paddle.concat([v, v[:1]])], [x]
        )
    with pytest.raises(ValueError, match="same arity"):
        paddle.static.nn.while_loop(lambda v: paddle.sum(v) < 1.0, lambda v: [v, v], [x])


# ---------------------------------------------------------------- switch, case


def _switch(index, x):
    return paddle.static.nn.switch_case(
        index, {1: lambda: x * 2.0, 3: lambda: x * 3.0, 7: lambda: x * 7.0}
    )


@pytest.mark.parametrize("k, factor", [(1, 2.0), (3, 3.0), (7, 7.0), (5, 7.0)])
def test_switch_case_static_and_eager(static_mode, k, factor):
    index = paddle.static.data("index", [1], "int64")
    x = paddle.static.data("x", [3], "float64")
    x.stop_gradient = False
    y = _switch(index, x)
    (dx,) = paddle.static.gradients([paddle.sum(y * y)], [x])
    out, g = _run_both(feed={"index": np.array([k]), "x": X}, fetch_list=[y, dx])
    # no default: the largest key's function runs for an unknown index
    np.testing.assert_allclose(out, factor * X)
    np.testing.assert_allclose(g, 2 * factor**2 * X)
    paddle.disable_static()
    try:
        xe = paddle.to_tensor(X, stop_gradient=False)
        ye = _switch(paddle.to_tensor(np.array([k])), xe)
        paddle.sum(ye * ye).backward()
        np.testing.assert_allclose(ye.numpy(), out)
        np.testing.assert_allclose(xe.grad.numpy(), g)
    finally:
        paddle.enable_static()


def test_switch_case_list_default_and_errors(static_mode):
    index = paddle.static.data("index", [1], "int32")
    x = paddle.static.data("x", [3], "float64")
    y = paddle.static.nn.switch_case(index, [lambda: x, lambda: x * 2.0], default=lambda: x * 0.0)
    for k, f in ((0, 1.0), (1, 2.0), (9, 0.0)):
        (r,) = _run_both(feed={"index": np.array([k], np.int32), "x": X}, fetch_list=[y])
        np.testing.assert_allclose(r, f * X)
    with pytest.raises(TypeError, match="'branch_index' must be int32, int64 or uint8"):
        paddle.static.nn.switch_case(x, [lambda: x])
    with pytest.raises(TypeError, match="must be dict, list or tuple"):
        paddle.static.nn.switch_case(index, lambda: x)
    with pytest.raises(ValueError, match="must be unique"):
        paddle.static.nn.switch_case(index, [(1, lambda: x), (1, lambda: x)])


def test_case_first_true_wins_and_default(static_mode):
    x = paddle.static.data("x", [1], "float64")
    y = paddle.static.nn.case(
        [(x < 0.0, lambda: x * -1.0), (x < 1.0, lambda: x * 10.0), (x < 2.0, lambda: x * 100.0)]
    )
    z = paddle.static.nn.case([(x < 0.0, lambda: x * -1.0)], default=lambda: x * 5.0)
    for v, ry, rz in ((-0.5, 0.5, 0.5), (0.5, 5.0, 2.5), (1.5, 150.0, 7.5), (3.0, 300.0, 15.0)):
        out = _run_both(feed={"x": np.array([v])}, fetch_list=[y, z])
        np.testing.assert_allclose(out[0], [ry])
        np.testing.assert_allclose(out[1], [rz])
    with pytest.raises(TypeError, match="must be tuples of size 2"):
        paddle.static.nn.case([x < 0.0])


def test_fluid_layers_spellings():
    from pullback import fluid

    for name in ("cond", "while_loop", "switch_case", "case", "increment"):
        assert callable(getattr(fluid.layers, name))
    assert paddle.static.nn.cond is fluid.layers.cond


# ------------------------------------------------------------- static vs eager


def test_eager_control_flow_matches_static(static_mode):
    n = np.array([3], np.int64)
    _, _, run = _static_grads(_counted_loss, {"n": n})
    loss, dx, dw = run(X, W)
    paddle.disable_static()
    try:
        xe = paddle.to_tensor(X, stop_gradient=False)
        we = paddle.to_tensor(W, stop_gradient=False)
        le = _counted_loss(xe, we, paddle.to_tensor(n))
        le.backward()
        assert float(le) == pytest.approx(float(loss))
        np.testing.assert_allclose(xe.grad.numpy(), dx, rtol=1e-12)
        np.testing.assert_allclose(we.grad.numpy(), dw, rtol=1e-12)
        ye = paddle.static.nn.cond(paddle.to_tensor(True), lambda: xe * 2.0, lambda: xe)
        np.testing.assert_allclose(ye.numpy(), 2 * X)
        assert paddle.static.nn.cond(paddle.to_tensor(False), lambda: xe, None) is None
    finally:
        paddle.enable_static()


# ----------------------------------------------------------- compiled backend


def test_control_flow_compiles_to_native_loops_and_branches(static_mode):
    """No fallback: the program (forward loop with an `if`, its reverse loop and the
    stacks between them) is one native function of `scf.while`/`scf.if`."""
    main, fetch, run = _static_grads(_counted_loss, {"n": np.array([2], np.int64)})
    feed = {"x": X, "w": W, "n": np.array([2], np.int64)}
    fn, _ = build_entry(main.module, [v.value for v in fetch], only_given_fetches=True)
    text = str(fn)
    assert text.count("scf.while") == 2 and "scf.if" in text
    backend = CompiledBackend(fallback=False)
    got = backend.run(main.module, feed, {}, [v.value for v in fetch])
    for a, b in zip(got, run(X, W)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert backend.compiles == 1


def test_compiled_loop_serves_every_batch_size(static_mode):
    """A dynamic batch dimension is carried through the loop (and its stacks) as a
    size: one compiled program for every batch, gradients included."""
    x = paddle.static.data("x", [-1, 3], "float32")
    w = paddle.static.data("w", [3, 3], "float32")
    x.stop_gradient = w.stop_gradient = False
    i0 = paddle.full([1], 0, dtype="int64")
    _, h = paddle.static.nn.while_loop(
        lambda i, h: i < 3, lambda i, h: [i + 1, paddle.tanh(paddle.matmul(h, w))], [i0, x]
    )
    loss = paddle.mean(h * h)
    dx, dw = paddle.static.gradients([loss], [x, w])
    rng = np.random.default_rng(0)
    wv = rng.normal(size=(3, 3)).astype(np.float32)
    backend = CompiledBackend(fallback=False)
    module = paddle.static.default_main_program().module
    fetch = [h, loss, dx, dw]
    for batch in (2, 5):
        xv = rng.normal(size=(batch, 3)).astype(np.float32)
        got = backend.run(module, {"x": xv, "w": wv}, {}, [v.value for v in fetch])
        want = _interp().run(feed={"x": xv, "w": wv}, fetch_list=fetch)
        ref = xv
        for _ in range(3):
            ref = np.tanh(ref @ wv)
        np.testing.assert_allclose(got[0], ref, rtol=1e-5, atol=1e-6)
        for a, b in zip(got, want):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert backend.compiles == 1


def test_compiled_loop_whose_state_grows(static_mode):
    """A carried value of dynamic length that grows each iteration: its size is
    carried at run time; a value computed from it is fetched natively, the value
    itself (whose shape only the run decides) runs on the interpreter, saying why."""
    x = paddle.static.data("x", [-1], "float64")
    (r,) = paddle.static.nn.while_loop(
        lambda v: paddle.sum(v) < 20.0, lambda v: [paddle.concat([v, v[:1] * 2.0])], [x]
    )
    total = paddle.sum(r * r) + paddle.mean(r)
    for xv in (np.array([1.0, 2.0]), np.array([3.0, 1.0, 0.5]), np.array([30.0])):
        v = xv
        while v.sum() < 20.0:
            v = np.concatenate([v, v[:1] * 2.0])
        (got,) = _run_both(feed={"x": xv}, fetch_list=[total])
        assert float(got) == pytest.approx(float((v * v).sum() + v.mean()))
    with pytest.warns(UserWarning, match="cannot lower a fetch of 'while_0.tmp_0'"):
        (rv,) = _compiled().run(feed={"x": np.array([1.0, 2.0])}, fetch_list=[r])
    np.testing.assert_array_equal(rv, [1.0] + [2.0] * 10)


def test_cond_with_layers_in_its_branches_trains_compiled():
    """Paddle's TestCondBackward pattern: each branch builds its own fc layer; SGD
    updates the parameters of the branch taken, natively, as the interpreter does."""
    losses = {}
    for backend in ("interpreter", "compiled"):
        paddle.enable_static()
        main, startup = paddle.static.Program(), paddle.static.Program()
        scope = paddle.static.Scope()
        try:
            with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard(), \
                    paddle.static.scope_guard(scope):
                x = paddle.static.data("x", [4, 3], "float32")
                i = paddle.static.data("i", [1], "int64")
                y = paddle.static.nn.cond(
                    paddle.equal(i, paddle.full([1], 0, "int64")),
                    lambda x=x: paddle.static.nn.fc(x, 2),
                    lambda x=x: paddle.static.nn.fc(paddle.tanh(x), 2),
                )
                loss = paddle.mean(y * y)
                paddle.optimizer.SGD(0.1).minimize(loss)
                exe = _interp() if backend == "interpreter" else _compiled()
                exe.run(startup)
                for k, prm in enumerate(sorted(p.name for p in main.all_parameters())):
                    t = scope.find_var(prm).get_tensor()
                    t.set(np.random.default_rng(k).normal(size=t.numpy().shape).astype(np.float32))
                losses[backend] = [
                    float(exe.run(main, feed={"x": np.full((4, 3), 0.1 * (it + 1), np.float32),
                                              "i": np.array([it % 2])}, fetch_list=[loss])[0])
                    for it in range(4)
                ]
        finally:
            paddle.disable_static()
    np.testing.assert_allclose(losses["compiled"], losses["interpreter"], rtol=1e-5)


def test_host_only_op_inside_a_branch_is_named_by_the_fallback(static_mode):
    x = paddle.static.data("x", [3], "float32")
    p = paddle.static.data("p", [1], "bool")
    y = paddle.static.nn.cond(p, lambda: x + paddle.rand([3]), lambda: x)
    with pytest.warns(UserWarning, match="cannot lower 'pd.uniform_random' to native code: random"):
        (out,) = _compiled().run(feed={"x": np.ones(3, np.float32), "p": np.array([False])}, fetch_list=[y])
    np.testing.assert_array_equal(out, np.ones(3, np.float32))


def test_gpu_lowering_keeps_control_flow_on_the_host(static_mode):
    """The branch stays an `scf.if` of the host function with the kernels of each
    branch launched inside it (the runtime reads the predicate from the device)."""
    from xdsl.dialects import gpu, scf

    x = paddle.static.data("x", [2, 2], "float32")
    p = paddle.static.data("p", [], "bool")
    y = paddle.static.nn.cond(p, lambda: paddle.tanh(x), lambda: x)
    module = paddle.static.default_main_program().module
    assert isinstance(y.value.owner, pd.IfOp)
    module.body.block.add_op(pd.FetchOp.create(operands=[y.value]))
    lowered = lower_to_gpu(module)
    ifs = [op for op in lowered.walk() if isinstance(op, scf.IfOp)]
    assert ifs and any(isinstance(o, gpu.LaunchFuncOp) for o in ifs[0].true_region.walk())


# ------------------------------------------------------------------------ RNN


def _rnn_data(steps: int, batch: int, hidden: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(steps, batch, hidden)), rng.normal(size=(batch, 1))


def _build_rnn(seq, label, unrolled: bool, steps: int, hidden: int):
    """h_t = tanh(x_t W + h_{t-1} U + b); loss = mean((h_T V - y)^2)."""
    def attr(n):
        return paddle.ParamAttr(
            name=n, initializer=paddle.nn.initializer.Uniform(-0.5, 0.5)
        )
    W = paddle.static.create_parameter([hidden, hidden], "float64", attr=attr("W"))
    U = paddle.static.create_parameter([hidden, hidden], "float64", attr=attr("U"))
    b = paddle.static.create_parameter([hidden], "float64", attr=attr("b"))
    V = paddle.static.create_parameter([hidden, 1], "float64", attr=attr("V"))
    h0 = paddle.zeros([seq.shape[1], hidden], dtype="float64")

    def cell(x_t, h):
        return paddle.tanh(paddle.matmul(x_t, W) + paddle.matmul(h, U) + b)

    if unrolled:
        h = h0
        for t in range(steps):
            h = cell(seq[t], h)
    else:

        def body(t, h):
            # x_t = seq[t] for a runtime t: a one-hot contraction over the steps.
            onehot = paddle.cast(paddle.nn.functional.one_hot(t, steps), "float64")
            x_t = paddle.sum(seq * paddle.reshape(onehot, [steps, 1, 1]), axis=0)
            return [t + 1, cell(x_t, h)]

        t0 = paddle.full([1], 0, dtype="int64")
        _, h = paddle.static.nn.while_loop(lambda t, h: t < steps, body, [t0, h0])
    pred = paddle.matmul(h, V)
    return paddle.mean((pred - label) * (pred - label)), [W, U, b, V]


def test_rnn_with_while_loop_matches_unrolled_and_trains_compiled():
    steps, batch, hidden = 4, 3, 5
    seq_v, label_v = _rnn_data(steps, batch, hidden)
    results = {}
    for unrolled in (False, True):
        paddle.enable_static()
        main, startup = paddle.static.Program(), paddle.static.Program()
        try:
            with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
                seq = paddle.static.data("seq", [steps, batch, hidden], "float64")
                label = paddle.static.data("label", [batch, 1], "float64")
                loss, params = _build_rnn(seq, label, unrolled, steps, hidden)
                grads = paddle.static.gradients([loss], params)
                test_prog = main.clone()
                paddle.optimizer.SGD(learning_rate=0.5).minimize(loss)
            exe = _compiled()  # the loop program trains natively
            exe.run(startup)
            rng = np.random.default_rng(1)  # the same start for both programs
            for prm in params:
                value = rng.uniform(-0.5, 0.5, size=prm.shape)
                paddle.static.global_scope().find_var(prm.name).get_tensor().set(value)
            feed = {"seq": seq_v, "label": label_v}
            first = exe.run(test_prog, feed=feed, fetch_list=[loss, *grads])
            reference = _interp().run(test_prog, feed=feed, fetch_list=[loss, *grads])
            for a, b in zip(first, reference):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
            losses = [float(exe.run(main, feed=feed, fetch_list=[loss])[0]) for _ in range(30)]
            results[unrolled] = (first, losses, exe, test_prog, feed, loss)
        finally:
            paddle.disable_static()
    (loop_first, loop_losses, exe, prog, feed, loss), (unr_first, unr_losses, *_) = (
        results[False],
        results[True],
    )
    for a, b in zip(loop_first, unr_first):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(loop_losses, unr_losses, rtol=1e-9)
    assert loop_losses[-1] < 0.5 * loop_losses[0]
    # finite differences of the loop program itself, through U (the recurrence)
    scope = paddle.static.global_scope()
    u0 = scope.find_var("U").get_tensor().numpy().copy()
    (gu,) = exe.run(prog, feed=feed, fetch_list=[prog.global_block().var("U@GRAD")])

    def loss_at(u: np.ndarray) -> float:
        scope.find_var("U").get_tensor().set(u, paddle.CPUPlace())
        return float(exe.run(prog, feed=feed, fetch_list=[loss])[0])

    fd = fd_grad(loss_at, u0)
    np.testing.assert_allclose(gu, fd, rtol=1e-6, atol=1e-9)
