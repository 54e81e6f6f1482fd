"""The commit point (issue 32, `LowererBase.commit_point`): one call of
`pb_commit_point` before the entry's first write to a parameter's buffer.  Only
optimizer ops write in place after it; batch-norm statistics are copied back at the
end, so the forward and backward of a training step stay before it (interruptible)."""

from __future__ import annotations

import pytest

import pullback as paddle
from pullback.lowering.convert_pd_to_linalg import build_entry
from pullback.lowering.lowerer.base import COMMIT_POINT
from pullback.runtime.executor import resolve_fetch
from xdsl.dialects import func, memref
from xdsl.dialects.linalg.ops import GenericOp


def _written(op: object) -> list[object]:
    """The buffers a top-level op writes (what this test needs: loops and copies)."""
    if isinstance(op, GenericOp):
        return list(op.outputs)
    if isinstance(op, memref.CopyOp):
        return [op.destination]
    return [w for sub in getattr(op, "regions", []) for blk in sub.blocks for o in blk.ops for w in _written(o)]


@pytest.mark.parametrize("checks", [True, False], ids=["cpu", "gpu"])
def test_the_commit_point_comes_before_the_first_parameter_write(static_mode: None, checks: bool) -> None:
    x = paddle.static.data("x", [4, 3, 8, 8], "float32")
    h = paddle.static.nn.batch_norm(paddle.static.nn.conv2d(x, 4, 3))
    loss = paddle.mean(paddle.nn.functional.relu(h))
    paddle.optimizer.Momentum(0.1, 0.9).minimize(loss)
    main = paddle.static.default_main_program()
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    entry = exe._prepared(main, [resolve_fetch(main, loss)])
    fn, abi = build_entry(entry.module, list(entry.fetches), only_given_fetches=True, range_checks=checks)
    ops = list(fn.body.block.ops)
    commits = [i for i, op in enumerate(ops) if isinstance(op, func.CallOp) and op.callee.string_value() == COMMIT_POINT]
    if not checks:  # the GPU lowering (no status buffer): no commit point
        assert commits == [] and not abi.commit
        return
    assert len(commits) == 1 and abi.commit
    args = fn.body.block.args
    n_params = len(abi.params)
    first_param = len(abi.dims) + len(abi.feeds)
    params = set(args[first_param : first_param + n_params])
    for op in ops[: commits[0]]:
        assert not params & set(_written(op)), op.name  # nothing writes a parameter before it
    # The batch-norm statistics and every update come after it; the forward and
    # backward (most of the entry's loops) before.
    loops_before = sum(isinstance(op, GenericOp) for op in ops[: commits[0]])
    loops_after = sum(isinstance(op, GenericOp) for op in ops[commits[0]:])
    assert loops_before > loops_after
