"""The stderr notice of a slow compile (issue 29): it names the fetched values by
Paddle's variable names (`fc_0.b_0`, not the SSA hint `fc_0.b`), never as `?`, ends
without a doubled ellipsis, and is silenced by `PULLBACK_COMPILE_NOTICE=0` or
`paddle.set_flags({'FLAGS_pullback_compile_notice': False})`."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import pullback as paddle
from pullback.benchmarks.programs import ProgramBuilder
from pullback.dialects import pd
from pullback.runtime.native import compiler
from pullback.runtime.native.backend import CompiledBackend


def _module(names: list[str]) -> tuple[ModuleOp, list]:
    ops = [pd.ParameterOp.make(n, [4], "float32") for n in names]
    return ModuleOp(ops), [op.results[0] for op in ops]


def test_notice_names_values_by_their_paddle_names():
    module, values = _module(["fc_0.b_0"])
    assert values[0].name_hint == "fc_0.b"  # xDSL drops the `_0`; the notice must not
    assert compiler._describe(module, values) == "a program of 1 ops fetching fc_0.b_0"


def test_notice_counts_what_it_does_not_show():
    module, values = _module(["a_0", "b_0", "c_0", "d_0", "e_0"])
    text = compiler._describe(module, values)
    assert text == "a program of 5 ops fetching a_0, b_0, c_0 and 2 more"
    assert "?" not in text and "..." not in text
    unnamed = pd.ScaleOp.make(values[0], scale=2.0)
    module.body.block.add_op(unnamed)
    assert compiler._describe(module, [unnamed.results[0]]) == "a program of 6 ops fetching 1 value"
    assert compiler._describe(module, []) == "a program of 6 ops fetching nothing"


def _program(scale: float):
    b = ProgramBuilder()
    x = b.data("x", [-1, 3])
    return b, b.add(pd.ReduceSumOp, b.add(pd.ScaleOp, b.add(pd.TanhOp, x), scale=scale))


@pytest.mark.parametrize("how", ["env", "flag"])
def test_notice_can_be_silenced(how, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("PULLBACK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "NOTICE_AFTER_S", 0.0)
    monkeypatch.delenv("PULLBACK_COMPILE_TIMES", raising=False)
    if how == "env":
        monkeypatch.setenv("PULLBACK_COMPILE_NOTICE", "0")
    else:
        assert paddle.get_flags("FLAGS_pullback_compile_notice") == {"FLAGS_pullback_compile_notice": True}
        paddle.set_flags({"FLAGS_pullback_compile_notice": False})
    try:
        b, y = _program(6.25 if how == "env" else 7.25)
        CompiledBackend().run(b.module, {"x": np.zeros((1, 3), np.float32)}, {}, [y])
        assert "pullback:" not in capfd.readouterr().err
    finally:
        paddle.set_flags({"FLAGS_pullback_compile_notice": True})
        from pullback.runtime.native import settings

        settings.set_compile_notice(None)
