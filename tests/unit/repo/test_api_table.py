"""docs/api.md, the supported-API table, is generated from the frontend's registry
and must be current; the analysis behind its columns is checked on known cases."""

from __future__ import annotations

from pathlib import Path

from pullback.dialects import pd
from pullback.frontend.core import apply
from pullback.frontend.layers import require_static
from pullback.frontend.ops import elementwise, nn
from pullback.tools import api_table

DOC = Path(__file__).resolve().parents[3] / "docs" / "api.md"


def test_api_table_is_current() -> None:
    expected = api_table.render()
    current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    assert current == expected, (
        f"{DOC} is out of date (an API was added or changed): regenerate it with "
        f"`{api_table.COMMAND}` and commit the result"
    )


def test_every_registry_function_has_a_row() -> None:
    text = api_table.render()
    for name in api_table.registry_entries():
        assert f"`{name}`" in text, name


def test_ops_of_a_function_follow_its_calls() -> None:
    ops, static_only = api_table.analyze(nn.linear)
    assert pd.MatmulOp in ops and not static_only
    ops, _ = api_table.analyze(elementwise.relu)
    assert ops == {pd.ReluOp}


def _host_only_static(x: object) -> object:
    require_static("test")
    return apply(pd.UniformRandomOp, [], prefix="uniform_random", shape=[2], dtype="float32")


def _compare(x: object, y: object) -> object:
    return apply(pd.EqualOp, [x, y], prefix="equal")


def test_columns() -> None:
    ops, static_only = api_table.analyze(_host_only_static)
    assert ops == {pd.UniformRandomOp} and static_only
    assert api_table.backends(ops) == "interpreter"
    assert api_table.backends(ops | {pd.ReluOp}) == "native; interpreter: `pd.uniform_random`"
    assert api_table.differentiable(ops) == "no"
    ops, _ = api_table.analyze(_compare)
    assert api_table.backends(ops) == "native" and api_table.differentiable(ops) == "no"
    assert api_table.differentiable(api_table.analyze(nn.linear)[0]) == "yes"


def test_names_real_paddle_lacks_are_marked_and_eig_is_not_native():
    """Issue 29: `paddle.svd`/`paddle.solve` are pullback's spellings (Paddle 3.3.1 has
    only `paddle.linalg.*`), and `eig` (complex results, numpy's LAPACK) runs on the
    host interpreter, never native code."""
    from pullback.tools import api_table

    assert api_table.paddle_lacks("paddle.svd") and api_table.paddle_lacks("paddle.solve")
    assert not api_table.paddle_lacks("paddle.linalg.svd") and not api_table.paddle_lacks("paddle.add")
    rows = {r[0]: r for r in api_table.api_rows()}
    eig = next(r for k, r in rows.items() if "`paddle.eig`" in k)
    assert eig[2] == "interpreter" and eig[4] == "`pd.eig`"
    add = next(r for k, r in rows.items() if k.startswith("`paddle.add`"))
    assert "not in Paddle" not in add[0]
