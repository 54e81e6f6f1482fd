"""`paddle.seed` and the global generator: reproducible initialization and dropout in
eager mode and in any static program, 0 a seed like any other; eager dropout draws a
new mask per call yet reuses one backward plan."""

from __future__ import annotations

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import autograd
from pullback.frontend.random import default_generator


@pytest.fixture(autouse=True)
def _restore_generator(dynamic_mode):
    """Eager mode; the global generator's state is restored afterwards (dynamic_mode)."""
    yield


def _eager_weights(seed: int | None) -> np.ndarray:
    if seed is not None:
        paddle.seed(seed)
    return paddle.nn.Linear(3, 4).weight.numpy()


def _static_weights(seed: int | None, dropout: bool = False) -> dict[str, np.ndarray]:
    """Build a user-created Program pair after `paddle.seed(seed)`; run it."""
    paddle.enable_static()
    try:
        if seed is not None:
            paddle.seed(seed)
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
            x = paddle.static.data("x", [None, 3])
            h = paddle.static.nn.fc(x, 4)
            out = paddle.nn.functional.dropout(h, 0.5) if dropout else h
        scope = paddle.static.Scope()
        exe = paddle.static.Executor(paddle.CPUPlace())
        with paddle.static.scope_guard(scope):
            exe.run(startup)
            (y,) = exe.run(main, feed={"x": np.ones((2, 3), np.float32)}, fetch_list=[out])
            return {"w": np.array(scope.find_var("fc_0.w_0").get_tensor()), "y": y}
    finally:
        paddle.disable_static()


def test_seed_zero_is_a_seed():
    a, b, c = _eager_weights(0), _eager_weights(0), _eager_weights(1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_unseeded_initialization_differs_between_runs():
    paddle.seed(3)
    default_generator().seed()  # what a fresh process starts from: a random seed
    a = _eager_weights(None)
    default_generator().seed()
    assert not np.array_equal(a, _eager_weights(None))


def test_seed_reaches_programs_the_user_creates():
    a, b, c = _static_weights(0), _static_weights(0), _static_weights(7)
    np.testing.assert_array_equal(a["w"], b["w"])
    assert not np.array_equal(a["w"], c["w"])


def test_seed_makes_static_dropout_reproducible():
    a, b = _static_weights(11, dropout=True), _static_weights(11, dropout=True)
    np.testing.assert_array_equal(a["y"], b["y"])
    assert (a["y"] == 0).any()


def test_seed_leaves_program_random_seed_alone():
    """Paddle 3.x's `paddle.seed` seeds the generator only; a program's own
    `random_seed` (0: unset) keeps its meaning and still takes precedence."""
    main = paddle.static.default_main_program()
    before = main.random_seed
    gen = paddle.seed(42)
    assert gen is default_generator() and gen.initial_seed() == 42
    assert main.random_seed == before
    with pytest.raises(ValueError, match="non-negative int"):
        paddle.seed(-1)
    with pytest.raises(TypeError, match="expected an int"):
        paddle.seed("3")


def test_program_random_seed_takes_precedence_over_the_generator():
    def build(generator_seed: int) -> np.ndarray:
        paddle.enable_static()
        try:
            paddle.seed(generator_seed)
            main, startup = paddle.static.Program(), paddle.static.Program()
            startup.random_seed = 5
            with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
                paddle.static.nn.fc(paddle.static.data("x", [None, 3]), 4)
            scope = paddle.static.Scope()
            with paddle.static.scope_guard(scope):
                paddle.static.Executor(paddle.CPUPlace()).run(startup)
                return np.array(scope.find_var("fc_0.w_0").get_tensor())
        finally:
            paddle.disable_static()

    np.testing.assert_array_equal(build(1), build(2))


def test_program_global_seed_sets_new_programs():
    from pullback.frontend.framework import Program

    old = Program._global_seed
    try:
        Program().global_seed(9)
        assert Program().random_seed == 9
    finally:
        Program._global_seed = old
    assert Program().random_seed == old


def test_rng_state_round_trip():
    paddle.seed(4)
    state = paddle.get_rng_state()
    a = _eager_weights(None)
    paddle.set_rng_state(state)
    np.testing.assert_array_equal(_eager_weights(None), a)
    with pytest.raises(ValueError, match="Length of cpu state list"):
        paddle.set_rng_state([])


# ------------------------------------------------------------------ eager dropout


def _dropout_net():
    nn = paddle.nn
    return nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.5), nn.Linear(8, 2))


def test_eager_dropout_reuses_one_backward_plan():
    paddle.seed(0)
    model = _dropout_net()
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32))
    autograd.clear_cache()
    masks, grads = [], []
    for _ in range(20):
        h = model[1](model[0](x))
        masks.append(h.numpy() == 0)
        model[2](h).sum().backward()
        grads.append(model[0].weight.grad.numpy().copy())
        model.clear_gradients()
    info = autograd.cache_info()
    assert (info["hits"], info["misses"]) == (19, 1)
    assert len({m.tobytes() for m in masks}) > 1  # a new mask every step
    assert not np.array_equal(grads[0], grads[1])


def test_eager_dropout_gradient_uses_the_forward_mask():
    paddle.seed(1)
    x = paddle.to_tensor(np.linspace(1, 2, 40, dtype=np.float64).reshape(5, 8), stop_gradient=False)
    for _ in range(3):  # the cached plan must read each step's own seed
        y = paddle.nn.functional.dropout(x, 0.25)
        (y * y).sum().backward()
        keep = y.numpy() != 0
        # d/dx sum(y^2) = 2 y * dy/dx = 2 y / (1 - p) where kept, else 0
        np.testing.assert_allclose(x.grad.numpy(), np.where(keep, 2 * y.numpy() / 0.75, 0.0), rtol=1e-12)
        x.clear_grad()


def test_eager_dropout_is_reproducible_under_seed():
    x = paddle.ones([6, 6])

    def masks() -> list[np.ndarray]:
        paddle.seed(2)
        return [paddle.nn.functional.dropout(x, 0.5).numpy() for _ in range(3)]

    a, b = masks(), masks()
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], a[1])


def test_fluid_dropout_explicit_seed_fixes_the_mask():
    x = paddle.ones([6, 6])
    a = paddle.fluid.layers.dropout(x, 0.5, seed=3).numpy()
    np.testing.assert_array_equal(paddle.fluid.layers.dropout(x, 0.5, seed=3).numpy(), a)
