"""Every pass and builder costs time linear in the program (`testing/complexity.py`).

Each test does the same work at two sizes (8x apart unless stated) in this process
and fails when the time grows more than twice as fast as the size (16x for 8x):
linear code grows ~8x, quadratic ~64x.  Programs are chains of elementwise ops (the
shape of a deep static program: every value is read by the next op and by its
gradient) and deep residual MLPs (matrix products, fan-out, an optimizer).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

import pullback as paddle
from pullback.dialects import pd
from pullback.frontend import core, unique_name
from pullback.frontend.framework import Program, program_guard
from pullback.testing.complexity import Work, assert_linear


@pytest.fixture(autouse=True)
def _static_mode():
    """Static mode and a private name generator (no names leak to other tests)."""
    was_dynamic = core.in_dynamic_mode()
    core.enable_static()
    with unique_name.guard():
        yield
    if was_dynamic:
        core.disable_static()
    else:
        core.enable_static()


def chain(n_ops: int, *, minimize: bool = False) -> tuple[Program, Program, object]:
    """`n_ops` elementwise ops (multiply by a parameter, tanh, scale) and a mean."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 4], dtype="float32")
        w = paddle.static.create_parameter(shape=[4], dtype="float32", name="w")
        y = x
        for i in range(n_ops):
            kind = i % 3
            y = paddle.multiply(y, w) if kind == 0 else paddle.tanh(y) if kind == 1 else paddle.scale(y, 0.5, 0.1)
        loss = paddle.mean(y)
        if minimize:
            paddle.optimizer.SGD(learning_rate=0.1).minimize(loss)
    return main, startup, loss


def mlp(n_layers: int, *, minimize: bool = True) -> tuple[Program, Program, object]:
    """A residual MLP of `n_layers` 8-wide layers (fc, relu, add) with Adam."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 8], dtype="float32")
        h = x
        for _ in range(n_layers):
            h = paddle.add(h, paddle.nn.functional.relu(paddle.static.nn.fc(h, size=8)))
        loss = paddle.mean(h)
        if minimize:
            paddle.optimizer.Adam(learning_rate=0.01).minimize(loss)
    return main, startup, loss


def _ops(program: Program) -> int:
    return sum(1 for _ in program.module.walk())


# ------------------------------------------------------------------ builders


def test_building_a_program_is_linear() -> None:
    assert_linear(lambda n: lambda: mlp(n), 25)


def test_block_views_and_name_lookups_are_linear() -> None:
    def make(n: int) -> Work:
        main, _, _ = mlp(n)
        block = main.global_block()
        names = [v.name for v in block.vars.values()]

        def work() -> None:
            assert len(block.ops) > n
            for name in names:
                assert block.has_var(name)
                block.var(name)

        return work

    assert_linear(make, 25)


@pytest.mark.parametrize("callback", [False, True], ids=["plain", "with-callback"])
def test_append_backward_is_linear(callback: bool) -> None:
    seen: list[int] = []

    def make(n: int) -> Work:
        main, _, loss = chain(n)

        def work() -> None:
            with program_guard(main):
                callbacks = [lambda block, context: seen.append(1)] if callback else None
                paddle.static.append_backward(loss, callbacks=callbacks)

        return work

    assert_linear(make, 400)
    assert bool(seen) == callback


def test_error_clip_callback_is_linear() -> None:
    """Paddle's own callback looks up each gradient's variable by name."""

    def make(n: int) -> Work:
        main, _, loss = chain(n)
        main.global_block().var("w")._set_error_clip(paddle.nn.clip.ErrorClipByValue(1.0))

        def work() -> None:
            with program_guard(main):
                paddle.static.append_backward(loss, callbacks=[paddle.nn.clip.error_clip_callback])

        return work

    assert_linear(make, 400)


def test_gradients_is_linear() -> None:
    def make(n: int) -> Work:
        main, _, loss = chain(n)
        w = main.global_block().var("w")

        def work() -> None:
            with program_guard(main):
                (g,) = paddle.static.gradients([loss], [w])
                assert g is not None

        return work

    assert_linear(make, 400)


def test_minimize_and_clone_for_test_is_linear() -> None:
    def make(n: int) -> Work:
        main, startup, loss = mlp(n, minimize=False)

        def work() -> None:
            with program_guard(main, startup), unique_name.guard():
                paddle.optimizer.Adam(learning_rate=0.01).minimize(loss)
            test_program = main.clone(for_test=True)
            assert not any(isinstance(op, pd.BackwardOp) for op in test_program.module.body.block.ops)

        return work

    assert_linear(make, 25)


def test_static_amp_minimize_is_linear() -> None:
    """`paddle.static.amp.decorate(...).minimize`: the AMP pass, the scaled loss, the
    backward part, one `check_finite_and_unscale` and one `update_loss_scaling` over
    every gradient, the updates."""

    def make(n: int) -> Work:
        main, startup, loss = mlp(n, minimize=False)

        def work() -> None:
            with program_guard(main, startup), unique_name.guard():
                paddle.static.amp.decorate(paddle.optimizer.SGD(learning_rate=0.01), dtype="float16").minimize(loss)
            assert any(isinstance(op, pd.UpdateLossScalingOp) for op in main.module.body.block.ops)

        return work

    assert_linear(make, 25)


# ------------------------------------------------------------------ passes


def _module_pass(build: Callable[[int], Program], apply: Callable[[ModuleOp], object], n: int) -> None:
    def make(size: int) -> Work:
        module = build(size).module.clone()
        return lambda: apply(module)

    assert_linear(make, n)


def test_prune_pass_is_linear() -> None:
    from pullback.passes.prune import PrunePass

    _module_pass(lambda n: mlp(n)[0], lambda m: PrunePass().apply(Context(), m), 25)


def test_auto_mixed_precision_pass_is_linear() -> None:
    from pullback.passes.amp import AutoMixedPrecisionPass

    _module_pass(lambda n: mlp(n, minimize=False)[0], lambda m: AutoMixedPrecisionPass(dtype="bfloat16").apply(Context(), m), 25)


def test_low_precision_widening_is_linear() -> None:
    from pullback.lowering.widen import widen
    from pullback.passes.amp import AutoMixedPrecisionPass

    def build(n: int) -> Program:
        prog = mlp(n, minimize=False)[0]
        AutoMixedPrecisionPass(dtype="bfloat16").apply(Context(), prog.module)  # bf16 ops to widen
        return prog

    _module_pass(build, lambda m: widen(m), 25)


def complex_chain(n_ops: int) -> Program:
    """`n_ops` complex ops (multiply, divide, conjugate by turns) on complex feeds,
    `abs(.).mean()` of the result and its gradient (a filled backward region)."""
    from pullback.passes.autodiff import AutodiffPass

    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 4], dtype="complex64")
        w = paddle.static.data(name="w", shape=[4], dtype="complex64")
        x.stop_gradient = False
        y = x
        for i in range(n_ops):
            kind = i % 3
            y = paddle.multiply(y, w) if kind == 0 else paddle.divide(y, w) if kind == 1 else paddle.conj(y)
        loss = paddle.mean(paddle.abs(y))
        paddle.static.gradients([loss], [x])
    AutodiffPass().apply(Context(), main.module)
    return main


def test_complex_to_real_pass_is_linear() -> None:
    from pullback.passes.complex_to_real import complex_to_real

    _module_pass(complex_chain, lambda m: complex_to_real(m), 25)


def test_dce_is_linear() -> None:
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    _module_pass(lambda n: mlp(n)[0], lambda m: DeadCodeElimination().apply(Context(), m), 25)


def test_autodiff_pass_is_linear() -> None:
    from pullback.passes.autodiff import AutodiffPass

    _module_pass(
        lambda n: chain(n)[0],
        lambda m: AutodiffPass(targets=(pd.value_name(_last_mean(m)),)).apply(Context(), m),
        400,
    )


def _last_mean(module: ModuleOp):
    return [op for op in module.body.block.ops if isinstance(op, pd.MeanOp)][-1].results[0]


@pytest.mark.parametrize("budget", ["auto", "cost"])
def test_recompute_is_linear(budget: str) -> None:
    from pullback.passes.recompute import apply_recompute

    def make(n: int) -> Work:
        main, _, loss = chain(n)
        with program_guard(main):
            paddle.static.append_backward(loss)
        (bw,) = [op for op in main.module.body.block.ops if isinstance(op, pd.BackwardOp)]
        return lambda: apply_recompute(bw, budget=budget)

    assert_linear(make, 200)


def test_data_parallel_pass_is_linear() -> None:
    from pullback.passes.data_parallel import DataParallelPass

    _module_pass(lambda n: mlp(n)[0], lambda m: DataParallelPass(nranks=2, fuse_mb=1).apply(Context(), m), 25)


# ------------------------------------------------------------------ lowering


def _training_module(n: int) -> tuple[ModuleOp, list]:
    main, _, loss = mlp(n)
    module = main.module.clone()
    from pullback.passes.autodiff import AutodiffPass

    AutodiffPass().apply(Context(), module)
    return module, [_last_mean(module)]


def test_convert_pd_to_linalg_is_linear() -> None:
    """Planning (fusion, inlining, buffers) and emission of the whole program."""
    from pullback.lowering.convert_pd_to_linalg import build_entry

    def make(n: int) -> Work:
        module, fetches = _training_module(n)
        return lambda: build_entry(module, fetches, only_given_fetches=True)

    assert_linear(make, 6, factor=6, limit=12, repeats=2)


def test_lowering_to_llvm_ir_is_linear() -> None:
    """outline-segments, convert-linalg-to-blas, parallelize-loops,
    math-polynomial-approximation and translate-to-llvmlite, as the compiled backend
    runs them (everything before LLVM's own optimizer)."""
    from pullback.lowering.convert_pd_to_linalg import build_entry, declare_callees
    from pullback.lowering.pipeline import translate_streamed

    def make(n: int) -> Work:
        module, fetches = _training_module(n)
        fn, _ = build_entry(module, fetches, only_given_fetches=True)
        lowered = ModuleOp([fn])
        declare_callees(lowered)  # (the runtime's entry points: pb_commit_point, ...)
        return lambda: translate_streamed(lowered, lambda m, g: None, outline=True, threads=4096)

    assert_linear(make, 6, factor=6, limit=12, repeats=2)


def test_executor_preparation_is_linear() -> None:
    """The first run on the interpreter: program preparation (autodiff of a copy,
    pruning, feed and fetch resolution, caches) plus a cheap run of each op."""

    def make(n: int) -> Work:
        main, startup, loss = mlp(n)
        exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        scope = paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            exe.run(startup)

        def work() -> None:
            with paddle.static.scope_guard(scope):
                # (zeros: a deep residual net's activations stay finite)
                exe.run(main, feed={"x": np.zeros((2, 8), "float32")}, fetch_list=[loss])

        return work

    assert_linear(make, 25)


# ------------------------------------------------------------------ eager and jit


def test_eager_backward_is_linear() -> None:
    core.disable_static()

    def make(n: int) -> Work:
        x = paddle.to_tensor(np.ones((2, 4), "float32"), stop_gradient=False)
        w = paddle.to_tensor(np.ones((4,), "float32"), stop_gradient=False)

        def work() -> None:
            y = x
            for i in range(n):
                kind = i % 3
                y = paddle.multiply(y, w) if kind == 0 else paddle.tanh(y) if kind == 1 else paddle.scale(y, 0.5, 0.1)
            paddle.mean(y).backward()
            assert w.grad is not None

        return work

    assert_linear(make, 200)


def test_eager_repeated_step_is_linear() -> None:
    """The second step of the same structure (the plan cache's hit path)."""
    core.disable_static()

    def make(n: int) -> Work:
        w = paddle.to_tensor(np.ones((4,), "float32"), stop_gradient=False)

        def step() -> None:
            y = paddle.to_tensor(np.ones((2, 4), "float32"))
            for i in range(n):
                y = paddle.multiply(y, w) if i % 2 == 0 else paddle.tanh(y)
            paddle.mean(y).backward()
            w.clear_gradient()

        step()
        return step

    assert_linear(make, 200)


def test_eager_deferred_step_is_linear() -> None:
    """A deferred eager training step (`frontend/eager_lazy.py`): the forward's ops
    appended to the trace, the backward plan after them, the SGD update, and the one
    flush that runs them (op by op here: native eager kernels are off in tests)."""
    from pullback.frontend import eager_lazy

    core.disable_static()
    old = eager_lazy.set_enabled(True)
    try:
        def make(n: int) -> Work:
            w = paddle.to_tensor(np.ones((4,), "float32"), stop_gradient=False)
            opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=[w])

            def step() -> None:
                y = paddle.to_tensor(np.ones((2, 4), "float32"))
                for i in range(n):
                    y = paddle.multiply(y, w) if i % 2 == 0 else paddle.tanh(y)
                loss = paddle.mean(y)
                loss.backward()
                opt.step()
                opt.clear_grad()
                assert np.isfinite(float(loss))  # (a read: the trace is flushed here)

            deferred = eager_lazy.stats["deferred_ops"]
            step()
            assert eager_lazy.stats["deferred_ops"] >= deferred + n  # the ops were deferred
            return step

        assert_linear(make, 200)
    finally:
        eager_lazy.set_enabled(old)


def test_to_static_conversion_is_linear(tmp_path) -> None:
    """`jit.to_static` of a function with `n` statements (half of them tensor-valued
    `if`s, converted to `cond`): source conversion and tracing."""
    import importlib.util

    core.disable_static()

    def make(n: int) -> Work:
        body = "".join(f"    y = paddle.tanh(y) * {1 + i % 3}\n    if i > {i}:\n        y = y + 1\n" for i in range(n))
        path = tmp_path / f"generated_{n}_{len(list(tmp_path.iterdir()))}.py"
        path.write_text(f"import pullback as paddle\n\n\ndef f(y, i):\n{body}    return y\n")

        def work() -> None:
            spec = importlib.util.spec_from_file_location(path.stem, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            fn = paddle.jit.to_static(module.f)
            out = fn(paddle.to_tensor(np.ones((2, 2), "float32")), paddle.to_tensor(np.array(0, "int64")))
            assert out.shape == [2, 2]

        return work

    assert_linear(make, 40)


def test_model_compiled_train_step_build_is_linear() -> None:
    """A dynamic `paddle.Model`'s whole training step (`frontend/hapi/compiled_step.py`):
    the network, loss and metric traced, `minimize` appended (backward, Adam's
    updates), for a network of `n` layers."""
    from pullback.frontend.hapi.compiled_step import CompiledTrainStep
    from pullback.static import InputSpec

    core.disable_static()

    def make(n: int) -> Work:
        layers = []
        for _ in range(n):
            layers += [paddle.nn.Linear(4, 4), paddle.nn.Tanh()]
        net = paddle.nn.Sequential(*layers)
        specs = [InputSpec([None, 4], "float32", "x"), InputSpec([None, 1], "int64", "y")]

        def build() -> None:
            opt = paddle.optimizer.Adam(0.01, parameters=net.parameters())
            step = CompiledTrainStep(net, paddle.nn.CrossEntropyLoss(), [paddle.metric.Accuracy()], opt, specs, 1)
            assert len(step._state) >= 2 * n  # every layer's weight and bias captured

        return build

    assert_linear(make, 40)
