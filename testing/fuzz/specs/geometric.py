"""Fuzzer specs of the geometric family: `send_recv` with in-range node ids, with or
without an edge operand.

Only the `sum` and `mean` reductions are drawn: `max`/`min` give every tied message
the whole gradient (Paddle's convention), and two edges carrying the same message to
the same node (a repeated `(src, dst)` pair, which random ids draw) are such a tie,
where finite differences disagree by design.  They are checked against Paddle and
finite differences (untied values) in tests/unit/ops/geometric/test_geometric_ops.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pullback.dialects import pd

from ..gen import Gen, Spec, registry

SPECS: dict[type[pd.PdOp], Spec] = {}
spec = registry(SPECS)


@spec(pd.SendRecvOp)
def _send_recv(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    shape = g.val(x).array.shape
    n, e = shape[0], g.randint(1, 6)
    rows = n if g.coin() else g.randint(1, n + 2)
    src = g.add_input(g.ints((e,), n), dynamic=False)
    dst = g.add_input(g.ints((e,), rows), dynamic=False)
    props: dict[str, Any] = {"reduce_op": g.choice(["sum", "mean"]), "out_size": 0 if rows == n else rows}
    operands = [x, src, dst]
    if g.coin():
        operands.append(g.add_input(g.floats((e, *shape[1:]), 0.5, 2.0), dynamic=False))
        props["message_op"] = g.choice(list(pd.GRAPH_MESSAGE_OPS))
    return operands, props
