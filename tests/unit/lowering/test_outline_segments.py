"""`outline-segments`: the entry keeps allocations, frees and views, its loops move
into functions of their own; compiled both ways, programs agree with the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from pullback.benchmarks.programs import ProgramBuilder, mlp_train
from pullback.dialects import pd
from pullback.lowering.convert_pd_to_linalg import build_entry, declare_callees
from pullback.lowering.lowerer.base import COMMIT_POINT, POLL
from pullback.lowering.outline_segments import SEGMENT_INFIX, OutlineSegmentsPass
from pullback.lowering.pipeline import run_passes
from pullback.runtime.native.compiler import compile_program
from pullback.runtime.native.program import execute
from pullback.runtime.interpreter import run_module
from xdsl.dialects import func, memref, scf
from xdsl.dialects.linalg.ops import FillOp, GenericOp
from xdsl.dialects.builtin import ModuleOp, i32


def _lowered(module, fetches):  # type: ignore[no-untyped-def]
    fn, _ = build_entry(module, fetches, entry="prog", only_given_fetches=True)
    out = ModuleOp([fn])
    declare_callees(out)
    return out


def test_the_entry_keeps_buffers_and_calls_segments() -> None:
    built = mlp_train((6, 5, 4), 0.1)
    lowered = _lowered(built.module, built.fetch)
    run_passes(lowered, [OutlineSegmentsPass()])
    lowered.verify()
    fns = {f.sym_name.data: f for f in lowered.body.block.ops if isinstance(f, func.FuncOp) and f.body.blocks}
    entry = fns.pop("prog")
    assert fns and all(SEGMENT_INFIX in n for n in fns)
    kinds = {type(op) for op in entry.body.block.ops}
    assert not kinds & {GenericOp, FillOp, scf.ForOp, scf.IfOp, scf.ParallelOp}
    assert memref.AllocOp in kinds and memref.DeallocOp in kinds and func.CallOp in kinds
    called = {op.callee.string_value() for op in entry.body.block.ops if isinstance(op, func.CallOp)}
    # The commit point (Ctrl-C) stays in the entry, before the SGD updates' segments.
    assert called == set(fns) | {COMMIT_POINT}
    # Distinct buffers are noalias arguments (LLVM vectorizes without overlap checks).
    attrs = [a for f in fns.values() for a in (f.arg_attrs or [])]
    assert any("llvm.noalias" in a.data for a in attrs)
    # The batch dimension is dynamic: segments view their memref arguments with sizes.
    assert any(isinstance(op, memref.ReinterpretCastOp) for f in fns.values() for op in f.walk())


def test_segment_calls_poll_for_interrupts_where_the_module_declares_the_poll() -> None:
    """The compiled backend declares `pb_poll`: every segment call is then guarded by
    it (an interrupted run skips the rest of its work), the commit point is not."""
    built = mlp_train((6, 5, 4), 0.1)
    lowered = _lowered(built.module, built.fetch)
    lowered.body.block.add_op(func.FuncOp.external(POLL, [], [i32]))
    run_passes(lowered, [OutlineSegmentsPass()])
    lowered.verify()
    entry = next(f for f in lowered.body.block.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "prog")
    top = [op for op in entry.body.block.ops if isinstance(op, func.CallOp)]
    assert [op.callee.string_value() for op in top].count(COMMIT_POINT) == 1
    segment_calls = [op for op in entry.walk() if isinstance(op, func.CallOp) and SEGMENT_INFIX in op.callee.string_value()]
    assert segment_calls and all(isinstance(c.parent_op(), scf.IfOp) for c in segment_calls)
    polls = [op for op in top if op.callee.string_value() == POLL]
    assert len(polls) == len(segment_calls)


@pytest.mark.parametrize("outline,unroll", [(True, 300), (False, 300), (True, 0)])
def test_both_compile_settings_agree_with_the_interpreter(outline: bool, unroll: int) -> None:
    """An MLP step (dynamic batch, in-place SGD) and a reduction with a scalar read
    back: the same numbers outlined or not, for two batch sizes."""
    built = mlp_train((6, 5, 4), 0.1)
    prog = compile_program(built.module, built.fetch, outline=outline, unroll_threshold=unroll)
    rng = np.random.default_rng(0)
    for batch in (3, 7):
        feeds = {"x": rng.standard_normal((batch, 6)).astype(np.float32),
                 "label": rng.integers(0, 4, (batch, 1)).astype(np.int64)}
        env = run_module(built.module, feeds, {k: v.copy() for k, v in built.scope.items()})
        want = env[built.fetch[0]]
        # The interpreter returns the updated parameters as the SGD ops' results.
        want_scope = {pd.value_name(op.results[0]): env[op.results[0]]
                      for op in built.module.walk() if isinstance(op, pd.SgdOp)}
        assert len(want_scope) == 4
        got_scope = {k: v.copy() for k, v in built.scope.items()}
        (got,) = execute(prog, feeds, got_scope)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
        for k in want_scope:
            np.testing.assert_allclose(got_scope[k], want_scope[k], rtol=2e-5, atol=1e-6, err_msg=k)

    b = ProgramBuilder()
    x = b.data("x", [-1, 4])
    s = b.add(pd.ReduceSumOp, b.add(pd.TanhOp, x), axis=[1])
    y = b.add(pd.ElementwiseMulOp, b.add(pd.ExpOp, x), b.add(pd.UnsqueezeOp, s, axes=[1]))
    prog = compile_program(b.module, [y], outline=outline, unroll_threshold=unroll)
    feeds = {"x": np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)}
    (got,) = execute(prog, feeds, {})
    # Each row of x is symmetric around 0 in pairs, so the interpreter's tanh sums are
    # exactly 0; float32 rounding in another summation order leaves ~1e-8: atol.
    np.testing.assert_allclose(got, run_module(b.module, feeds, {})[y], rtol=1e-5, atol=1e-6)


def _repeated_block_program(scale2: float) -> tuple[ProgramBuilder, list]:
    """Two identical tanh-scale-sum blocks on two feeds of one shape, then a third
    block with another constant (`scale2`)."""
    b = ProgramBuilder()
    outs = []
    for name, scale in (("x", 2.0), ("y", 2.0), ("z", scale2)):
        v = b.data(name, [-1, 4])
        t = b.add(pd.ScaleOp, b.add(pd.TanhOp, v), scale=scale)
        outs.append(b.add(pd.ReduceSumOp, b.add(pd.ElementwiseMulOp, t, v), axis=[1]))
    return b, outs


def test_structurally_equal_segments_are_one_function() -> None:
    b, outs = _repeated_block_program(3.0)
    counts = {}
    for dedupe in (False, True):
        lowered = _lowered(b.module, outs)
        run_passes(lowered, [OutlineSegmentsPass(max_ops=1, dedupe=dedupe)])
        lowered.verify()
        segs = [f for f in lowered.body.block.ops if isinstance(f, func.FuncOp) and SEGMENT_INFIX in f.sym_name.data]
        entry = next(f for f in lowered.body.block.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "prog")
        calls = [op.callee.string_value() for op in entry.walk() if isinstance(op, func.CallOp)]
        assert set(calls) == {f.sym_name.data for f in segs}  # every function called, none missing
        counts[dedupe] = (len(segs), len(calls))
    # The same calls either way; deduplicated, the x and y blocks share functions,
    # and the z block (another constant) keeps its own.
    assert counts[True][1] == counts[False][1]
    assert counts[False][0] > counts[True][0] > counts[False][0] // 3
    feeds = {n: np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4) * k for k, n in enumerate("xyz", 1)}
    prog = compile_program(b.module, outs)
    env = run_module(b.module, feeds, {})
    for got, v in zip(execute(prog, feeds, {}), outs):
        np.testing.assert_allclose(got, env[v], rtol=1e-5)
