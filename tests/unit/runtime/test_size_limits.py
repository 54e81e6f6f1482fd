"""One tensor's size is bounded the same way on every backend (issue 32,
`dialects/limits.py`): a value beyond `PULLBACK_MAX_TENSOR_BYTES` (default: the
machine's memory) is refused before anything is allocated or run, with one message
on the interpreter and on the compiled backend; the interpreter names an op that
reads a value nothing computed instead of raising `KeyError`."""

from __future__ import annotations

import time

import numpy as np
import pytest

import pullback as paddle
from pullback.benchmarks.programs import ProgramBuilder
from pullback.dialects import pd
from pullback.dialects.limits import TensorTooLarge, max_tensor_bytes
from pullback.runtime.interpreter import InterpreterError, run_module
from pullback.runtime.native.backend import CompiledBackend


def _errors(module: object, feeds: dict[str, np.ndarray], fetch: object) -> list[str]:
    """The message each backend gives (interpreter, compiled)."""
    out = []
    with pytest.raises(TensorTooLarge) as info:
        run_module(module, feeds, {})  # type: ignore[arg-type]
    out.append(str(info.value))
    with pytest.raises(TensorTooLarge) as info:
        CompiledBackend().run(module, feeds, {}, [fetch])  # type: ignore[arg-type,list-item]
    out.append(str(info.value))
    assert info.value.failed_op is not None
    return out


def test_a_huge_static_fill_fails_at_once_on_every_backend() -> None:
    """A 10^15-element fill ran for minutes compiled (a fused loop needs no buffer)
    where the interpreter failed at once; a 2^64-element shape wrapped around."""
    for shape in ([10**6, 10**6, 10**3], [2**32, 2**32]):
        b = ProgramBuilder()
        a = b.add(pd.FillConstantOp, shape=shape, value=1.0, dtype="float32", name="a")
        s = b.add(pd.ReduceSumOp, a, name="s")
        t0 = time.perf_counter()
        interp, compiled = _errors(b.module, {}, s)
        assert time.perf_counter() - t0 < 60
        assert interp == compiled
        assert interp.startswith(f"'pd.fill_constant': result 0 (%a) would be a float32 tensor of shape {shape}")


def test_a_dynamic_value_is_checked_with_its_fed_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """`x` of shape [?, 1] broadcast against [1, 512]: [n, 512] float32 is 2 KiB per
    row; with a bound of 64 KiB, 16 rows pass and 1000 rows fail, alike."""
    monkeypatch.setenv("PULLBACK_MAX_TENSOR_BYTES", str(64 << 10))
    b = ProgramBuilder()
    x = b.data("x", [-1, 1])
    w = b.add(pd.FillConstantOp, shape=[1, 512], value=2.0, dtype="float32", name="w")
    y = b.add(pd.ElementwiseMulOp, x, w, name="y")
    s = b.add(pd.ReduceSumOp, y, name="s")
    small = {"x": np.ones((16, 1), np.float32)}
    assert float(run_module(b.module, small, {})[s]) == float(CompiledBackend().run(b.module, small, {}, [s])[0])
    interp, compiled = _errors(b.module, {"x": np.ones((1000, 1), np.float32)}, s)
    assert interp == compiled
    assert "'pd.elementwise_mul': result 0 (%y) would be a float32 tensor of shape [1000, 512]: 1.95 MiB, " \
           "more than the 64 KiB one tensor may take" in interp


def test_the_bound_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert max_tensor_bytes() >= 1 << 20
    monkeypatch.setenv("PULLBACK_MAX_TENSOR_BYTES", "lots")
    with pytest.raises(ValueError, match="PULLBACK_MAX_TENSOR_BYTES"):
        max_tensor_bytes()


def test_static_api_and_the_executor_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through `paddle.static` and the Executor, on both backends: one message."""
    monkeypatch.setenv("PULLBACK_MAX_TENSOR_BYTES", "4096")
    paddle.enable_static()
    try:
        messages = []
        for backend in ("interpreter", "compiled"):
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
                x = paddle.static.data("x", [-1, 4], "float32")
                big = paddle.tile(x, [1, 512])
                loss = paddle.sum(big)
            exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
            with pytest.raises(ValueError, match="one tensor may take") as info:
                exe.run(main, feed={"x": np.ones((2, 4), np.float32)}, fetch_list=[loss])
            messages.append(str(info.value))
        assert messages[0] == messages[1]
    finally:
        paddle.disable_static()


def test_an_op_reading_an_uncomputed_value_is_named() -> None:
    """Cyclic SSA built by hand: the interpreter raised `KeyError: <OpResult...>`."""
    b = ProgramBuilder()
    x = b.data("x", [3])
    a = b.add(pd.TanhOp, x, name="a")
    c = b.add(pd.TanhOp, a, name="c")
    a.owner.operands[0] = c  # a = tanh(c), c = tanh(a)
    with pytest.raises(InterpreterError, match="'pd.tanh' reads a value no op computed before it") as info:
        run_module(b.module, {"x": np.ones(3, np.float32)}, {})
    assert info.value.failed_op is a.owner  # type: ignore[attr-defined]
