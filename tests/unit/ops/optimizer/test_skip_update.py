"""The `skip_update` operand of `pd.adam`, `pd.adamw` and `pd.lamb` (Paddle's
`SkipUpdate` input, AMP's `found_inf`): its typing, the interpreter's and the native
lowering's steps (the state unchanged when it holds true, the ordinary step when
false), the branch the lowering emits, Paddle's slot name and the IR text round
trip, and how optimizers receive it (`_set_auxiliary_var`).  The whole AMP path
against Paddle 3.3.1 is `tests/unit/dtypes/test_static_amp.py`."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import linalg, scf
from xdsl.utils.exceptions import VerifyException

import pullback as paddle
from pullback.benchmarks.programs import ProgramBuilder
from pullback.dialects import pd
from pullback.frontend import unique_name
from pullback.frontend.serialization import program_from_text
from pullback.lowering.convert_pd_to_linalg import build_entry
from pullback.runtime.interpreter import run_module
from pullback.runtime.kernels import load_all
from pullback.runtime.native.backend import CompiledBackend

load_all()
ADAM_LIKE = [(pd.AdamOp, {}), (pd.AdamwOp, {"coeff": 0.1}), (pd.LambOp, {"weight_decay": 0.05})]
STATE = ["w", "m1", "m2", "p1", "p2"]


def _scope(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "w": rng.standard_normal((3, 4)).astype(np.float32), "lr": np.array([0.1], np.float32),
        "m1": rng.standard_normal((3, 4)).astype(np.float32),
        "m2": np.abs(rng.standard_normal((3, 4))).astype(np.float32),
        "p1": np.array([0.81], np.float32), "p2": np.array([0.998], np.float32),
    }


def _program(op_cls: type[pd.PdOp], props: dict, read_old_w: bool = False):
    """One update of `w` and its state by `op_cls`, the gradient and the flag fed;
    with `read_old_w`, an op after the update reads the old `w` (so the update
    cannot write it in place)."""
    b = ProgramBuilder()
    w, lr = b.param("w", [3, 4]), b.param("lr", [1])
    m1, m2, p1, p2 = b.param("m1", [3, 4]), b.param("m2", [3, 4]), b.param("p1", [1]), b.param("p2", [1])
    g, skip = b.data("g", [3, 4]), b.data("skip", [1], "bool")
    op = b.op(op_cls.make(w, g, lr, m1, m2, p1, p2, skip, name=STATE, **props))
    fetch = [b.add(pd.ScaleOp, w, scale=2.0)] if read_old_w else []
    return b.module, op, fetch


def test_skip_update_must_be_a_one_element_bool() -> None:
    f = [pd.ParameterOp.make(n, s, "float32") for n, s in
         (("w", [3]), ("g", [3]), ("lr", [1]), ("m1", [3]), ("m2", [3]), ("p1", [1]), ("p2", [1]))]
    vals = [p.out for p in f]
    with pytest.raises(VerifyException, match="skip_update must be a one-element bool"):
        pd.AdamOp.make(*vals, pd.ParameterOp.make("s", [1], "float32").out)
    with pytest.raises(VerifyException, match="skip_update must be a one-element bool"):
        pd.LambOp.make(*vals, pd.ParameterOp.make("s", [2], "bool").out)
    with pytest.raises(VerifyException, match="optional skip_update, got 6 operands"):
        pd.AdamwOp.make(*vals[:6])
    op = pd.AdamOp.make(*vals, pd.ParameterOp.make("s", [1], "bool").out)
    op.verify()
    assert op.skip_update is not None and pd.AdamOp.make(*vals).skip_update is None


@pytest.mark.parametrize("op_cls,props", ADAM_LIKE, ids=lambda v: getattr(v, "name", ""))
@pytest.mark.parametrize("read_old_w", [False, True], ids=["in-place", "copied-back"])
def test_interpreter_and_compiled_skip_or_step(op_cls: type[pd.PdOp], props: dict, read_old_w: bool) -> None:
    module, op, fetch = _program(op_cls, props, read_old_w)
    backend = CompiledBackend(fallback=False)
    rng = np.random.default_rng(5)
    g = rng.standard_normal((3, 4)).astype(np.float32)
    before = _scope(rng)
    # The ordinary step: what the op computes without the operand.
    plain = ProgramBuilder()
    ins = [plain.param(n, list(before[n].shape)) if n != "g" else plain.data("g", [3, 4])
           for n in ("w", "g", "lr", "m1", "m2", "p1", "p2")]
    plain_op = plain.op(op_cls.make(*ins, name=STATE, **props))
    env = run_module(plain.module, {"g": g}, before)
    want_step = {name: env[r] for name, r in zip(STATE, plain_op.results)}
    for skip in (True, False):
        feed = {"g": g, "skip": np.array([skip])}
        env = run_module(module, feed, before)  # (the interpreter returns the new state)
        interp = {name: env[r] for name, r in zip(STATE, op.results)}
        native = {k: v.copy() for k, v in before.items()}
        got = backend.run(module, feed, native, fetch)
        if read_old_w:  # the old w, read after the update
            np.testing.assert_array_equal(got[0], 2 * before["w"])
        for name in STATE:
            if skip:  # exactly as before: no decay, no step, the powers not advanced
                np.testing.assert_array_equal(interp[name], before[name], err_msg=name)
                np.testing.assert_array_equal(native[name], before[name], err_msg=name)
            else:
                assert not np.array_equal(interp[name], before[name]), name
                np.testing.assert_allclose(interp[name], want_step[name], rtol=1e-6, err_msg=name)
                np.testing.assert_allclose(native[name], want_step[name], rtol=2e-5, atol=1e-6, err_msg=name)
    assert backend.compiles == 1


def test_lowering_branches_and_copies_only_when_skipping() -> None:
    for read_old_w in (False, True):
        module, _, fetch = _program(pd.AdamOp, {}, read_old_w)
        fn, _ = build_entry(module, fetch, only_given_fetches=True)
        (branch,) = [op for op in fn.walk() if isinstance(op, scf.IfOp) and op.cond.name_hint != "status"
                     and any(isinstance(o, linalg.GenericOp) for o in op.false_region.walk())]
        keep = [o for o in branch.true_region.block.ops if not isinstance(o, scf.YieldOp)]
        # In place (the usual case) a skipped step does nothing; when the new w goes
        # to a buffer of its own, the skipped branch copies the old w there (one copy).
        assert len(keep) == (1 if read_old_w else 0), [o.name for o in keep]


def test_slot_name_and_text_round_trip() -> None:
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), unique_name.guard():
            x = paddle.static.data("x", [4, 3], "float32")
            loss = paddle.mean(paddle.static.nn.fc(x, 2))
            opt = paddle.static.amp.decorate(paddle.optimizer.Adam(0.1), dtype="float16")
            opt.minimize(loss)
        adam = [op for op in main.global_block().ops if op.type == "adam"]
        assert len(adam) == 2
        for op in adam:  # Paddle's SkipUpdate slot holds check_finite_and_unscale's flag
            (flag,) = op.input("SkipUpdate")
            assert main.global_block().var(flag).dtype == paddle.bool
        again = program_from_text(str(main))
        ops = [op for op in again.module.walk() if isinstance(op, pd.AdamOp)]
        assert len(ops) == 2 and all(op.skip_update is not None for op in ops)
        assert str(again) == str(main)
    finally:
        paddle.disable_static()


def test_static_found_inf_must_be_a_variable() -> None:
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), unique_name.guard():
            x = paddle.static.data("x", [4, 3], "float32")
            opt = paddle.optimizer.Adam(0.1)
            opt._set_auxiliary_var("found_inf", True)
            with pytest.raises(TypeError, match="'found_inf' of a static program must be a \\[1\\] bool Variable"):
                opt.minimize(paddle.mean(paddle.static.nn.fc(x, 2)))
        # The flag one program's decorator set is not another program's.
        inner = paddle.optimizer.Adam(0.1)
        with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()), unique_name.guard():
            x = paddle.static.data("x", [4, 3], "float32")
            paddle.static.amp.decorate(inner, dtype="float16").minimize(paddle.mean(paddle.static.nn.fc(x, 2)))
        assert inner._get_auxiliary_var("found_inf") is not None
        with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()), unique_name.guard():
            x = paddle.static.data("x", [4, 3], "float32")
            with pytest.raises(ValueError, match="belongs to another program than parameter 'fc_0.b_0'"):
                inner.minimize(paddle.mean(paddle.static.nn.fc(x, 2)))
    finally:
        paddle.disable_static()


def test_eager_step_with_found_inf_is_skipped_whole() -> None:
    # Paddle's dygraph `Optimizer.step`: a true `found_inf` (a Tensor, read once and
    # kept as a bool) skips every update; a false one lets the step run.
    paddle.seed(0)
    model = paddle.nn.Linear(3, 2)
    opt = paddle.optimizer.Adam(0.1, parameters=model.parameters())
    paddle.mean(model(paddle.ones([4, 3]))).backward()
    before = model.weight.numpy().copy()
    opt._set_auxiliary_var("found_inf", paddle.to_tensor([True]))
    opt.step()
    np.testing.assert_array_equal(model.weight.numpy(), before)
    assert opt._get_auxiliary_var("found_inf") is True
    opt._set_auxiliary_var("found_inf", paddle.to_tensor([False]))
    opt.step()
    assert opt._get_auxiliary_var("found_inf") is False
    assert not np.array_equal(model.weight.numpy(), before)


def test_gpu_host_runtime_launches_the_update_only_when_taken() -> None:
    # The GPU host function keeps the branch; its runtime reads the flag from device
    # memory.  On the recording fake device (`tests/unit/runtime/gpu/gpu_fakes.py`,
    # buffers in host memory, no kernel computing) a skipped step launches nothing.
    import pullback_gpu_fakes as fakes

    from pullback.runtime.gpu import backend as gpu_backend

    launches = {}
    for op_cls, props in ADAM_LIKE:
        module, _, _ = _program(op_cls, props)
        for skip in (True, False):
            backend = gpu_backend.GpuBackend(None, device=fakes.FakeDevice(), gemm=(None, "tiled kernel (test)"))
            scope = _scope(np.random.default_rng(0))
            backend.run(module, {"g": np.ones((3, 4), np.float32), "skip": np.array([skip])}, scope, [])
            launches[op_cls.name, skip] = backend.stats["launches"]
        assert launches[op_cls.name, True] == 0 and launches[op_cls.name, False] >= 2, launches
