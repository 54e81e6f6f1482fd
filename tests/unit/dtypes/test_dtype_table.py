"""docs/dtypes.md (op x dtype support) is generated from the registry by
`python -m pullback.tools.dtype_table`; it must be current, and what it says must hold
for a sample of its cells."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pullback.dialects import pd
from pullback.tools import dtype_table

DOC = Path(__file__).resolve().parents[3] / "docs" / "dtypes.md"
"""The checkout's table (the installed package has no docs/: CI installs it, not editable)."""


def test_dtype_table_is_current() -> None:
    text = dtype_table.render()
    assert DOC.read_text() == text, (
        f"{DOC} is out of date (an op or a dtype rule changed): regenerate it with "
        f"`{dtype_table.COMMAND}` and commit the result"
    )


def test_table_covers_every_op_and_dtype() -> None:
    text = DOC.read_text()
    header = next(line for line in text.splitlines() if line.startswith("| op |"))
    assert [c.strip() for c in header.strip("|").split("|")[1:]] == [d.name for d in pd.DTYPES]
    for op in pd.ALL_OPS:
        assert f"| `{op.name}` |" in text, op.name


@pytest.mark.parametrize("op,dtype,mark", [
    (pd.ElementwiseAddOp, "bfloat16", "∂"), (pd.ExpOp, "float16", "∂"), (pd.BitwiseAndOp, "uint8", "✓"),
    (pd.BitwiseAndOp, "float16", "·"), (pd.ReluOp, "bool", "·"), (pd.MatmulOp, "bfloat16", "∂"),
])
def test_cells_say_what_the_typing_rules_do(op: type[pd.PdOp], dtype: str, mark: str) -> None:
    assert dtype_table.cell(op, pd.DTYPE_BY_NAME[dtype]) == mark
    if mark == "·":
        return
    from pullback.testing import run_op
    from pullback.testing.low_precision import round_to

    n = 2 if op in (pd.ElementwiseAddOp, pd.BitwiseAndOp) else 1
    a = np.arange(6).reshape(2, 3) % 3 + 1
    arrays = [round_to(a.astype(np.float64), dtype) if dtype in ("float16", "bfloat16") else a.astype(dtype)] * n
    if op is pd.MatmulOp:
        arrays = [arrays[0], arrays[0].T.copy()]
    out = run_op(op, *arrays)
    assert out.dtype == pd.DTYPE_BY_NAME[dtype].numpy
