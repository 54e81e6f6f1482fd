"""`translate_streamed` (lowering/pipeline.py): the passes after `outline-segments`
run function by function, each function handed to LLVM once translated; the IR must
be what the module-wide passes and `translate` make."""

from __future__ import annotations

import llvmlite.ir as lir
import pytest

from pullback.benchmarks.programs import mlp_train
from pullback.lowering.convert_pd_to_linalg import build_entry, declare_callees
from pullback.lowering.parallelize_loops import FORK_SUFFIX, TRAMP_SUFFIX
from pullback.lowering.pipeline import run_passes, translate, translate_passes, translate_streamed
from xdsl.dialects.builtin import ModuleOp


def _lowered() -> ModuleOp:
    m = mlp_train((12, 16, 16, 4), 0.1, optimizer="momentum")
    fn, _ = build_entry(m.module, m.fetch, entry="step", only_given_fetches=True)
    out = ModuleOp([fn])
    declare_callees(out)  # (the commit point's `pb_commit_point`, as the compiler does)
    return out


@pytest.mark.parametrize("threads", [1, None])  # every loop on the thread pool / no parallelize-loops
def test_streamed_lowering_writes_the_functions_the_module_wide_passes_do(threads: int | None) -> None:
    whole = _lowered()
    run_passes(whole, translate_passes(blas=True, outline=True, threads=threads))
    expected = {f.name: str(f) for f in translate(whole).functions if not f.is_declaration}

    streamed = _lowered()
    groups: list[list[str]] = []

    def written(mod: lir.Module, fns: list[lir.Function]) -> None:
        assert all(not f.is_declaration for f in fns)
        groups.append([f.name for f in fns])

    got = {f.name: str(f) for f in translate_streamed(streamed, written, outline=True, threads=threads).functions
           if not f.is_declaration}
    assert got == expected
    handed = [n for g in groups for n in g]
    assert sorted(handed) == sorted(expected)  # each function handed on once
    forks = [n for n in handed if n.endswith(FORK_SUFFIX)]
    assert bool(forks) == (threads is not None)
    for g in groups:  # a fork and its trampoline travel with their caller
        for n in g[1:]:
            assert n.endswith((FORK_SUFFIX, TRAMP_SUFFIX)) or n.startswith("_pullback_packed_")
