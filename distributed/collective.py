"""`paddle.distributed.all_reduce`, `broadcast`, `all_gather`, `reduce_scatter` and
`barrier` on Tensors (eager) and Variables (static), in place as in Paddle: the
tensor passed in holds the result afterwards.

In eager mode the collective runs at once; in static mode it is appended to the
program (`pd.allreduce` ...) and runs with it, the Variable now standing for the
collective's result (Paddle's ops write their output over their input's name).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pullback.runtime.process_group import Group, get_world_size
from pullback.frontend import core
from pullback.frontend.framework import Variable
from pullback.frontend.ops import distributed as ops


class ReduceOp:
    """Reductions of `all_reduce` (Paddle's `paddle.distributed.ReduceOp`)."""

    SUM = 0
    MAX = 1
    MIN = 2
    PROD = 3
    AVG = 4


_REDUCE_NAMES = {ReduceOp.SUM: "sum", ReduceOp.MAX: "max", ReduceOp.MIN: "min", ReduceOp.PROD: "prod", ReduceOp.AVG: "avg"}


class Task:
    """What a collective with `sync_op=False` returns; ours have completed already."""

    def wait(self) -> bool:
        """Wait for completion (immediate)."""
        return True

    def is_completed(self) -> bool:
        """True: the collective has completed."""
        return True


def _reduce_name(op: Any) -> str:
    name = _REDUCE_NAMES.get(op)
    if name is None:
        raise ValueError(
            f"all_reduce: op must be a paddle.distributed.ReduceOp (SUM, MAX, MIN, PROD, AVG), got {op!r}"
        )
    return name


def _check_tensor(fn: str, x: Any) -> None:
    want = "Tensor" if core.in_dynamic_mode() else "Variable"
    from pullback.frontend.eager import Tensor

    if not isinstance(x, (Tensor, Variable)):
        raise TypeError(f"{fn}: tensor must be a paddle {want}, got {type(x).__name__}")


def _check_group(fn: str, group: Group | None) -> None:
    if group is not None and not isinstance(group, Group):
        raise TypeError(f"{fn}: group must be a Group from new_group/get_group, got {type(group).__name__}")


def assign_inplace(target: Any, result: Any) -> None:
    """Make `target` stand for `result`: eager, take its value (and its place in the
    autograd graph); static, rebind the Variable to the new value, keeping its name."""
    if isinstance(target, Variable):
        block = target.block
        block._vars[result.value] = target
        target.value = result.value
        return
    target._data = result._data
    if result._node is not None:
        target._node, target._index = result._node, result._index
        target.stop_gradient = result.stop_gradient


def _done(sync_op: bool) -> Task | None:
    return None if sync_op else Task()


def all_reduce(tensor: Any, op: Any = ReduceOp.SUM, group: Group | None = None, sync_op: bool = True) -> Task | None:
    """Reduce `tensor` over all ranks with `op`; every rank's `tensor` holds the
    result (in place)."""
    _check_tensor("all_reduce", tensor)
    _check_group("all_reduce", group)
    name = _reduce_name(op)
    out_names = [tensor.name] if isinstance(tensor, Variable) else None
    (out,) = ops.allreduce([tensor], name, out_names)
    assign_inplace(tensor, out)
    return _done(sync_op)


def broadcast(tensor: Any, src: int = 0, group: Group | None = None, sync_op: bool = True) -> Task | None:
    """Every rank's `tensor` receives rank `src`'s value (in place)."""
    _check_tensor("broadcast", tensor)
    _check_group("broadcast", group)
    n = get_world_size(group)
    if not isinstance(src, int) or not 0 <= src < n:
        raise ValueError(f"broadcast: src must be a rank in [0, {n}), got {src!r}")
    out = ops.broadcast(tensor, src, tensor.name if isinstance(tensor, Variable) else None)
    assign_inplace(tensor, out)
    return _done(sync_op)


def reduce(tensor: Any, dst: int, op: Any = ReduceOp.SUM, group: Group | None = None, sync_op: bool = True) -> Task | None:
    """Rank `dst`'s `tensor` becomes the reduction over all ranks (in place); the
    other ranks' `tensor` becomes zeros (Paddle leaves it unspecified)."""
    _check_tensor("reduce", tensor)
    _check_group("reduce", group)
    name = _reduce_name(op)
    if name == "avg":
        raise ValueError("reduce: ReduceOp.AVG is not supported, use SUM and divide")
    n = get_world_size(group)
    if not isinstance(dst, int) or not 0 <= dst < n:
        raise ValueError(f"reduce: dst must be a rank in [0, {n}), got {dst!r}")
    assign_inplace(tensor, ops.reduce(tensor, dst, name))
    return _done(sync_op)


def all_gather(tensor_list: list[Any], tensor: Any, group: Group | None = None, sync_op: bool = True) -> Task | None:
    """Append every rank's `tensor` (rank order) to `tensor_list`."""
    _check_tensor("all_gather", tensor)
    _check_group("all_gather", group)
    if not isinstance(tensor_list, list):
        raise TypeError(f"all_gather: tensor_list must be a list, got {type(tensor_list).__name__}")
    n = get_world_size(group)
    if tensor.ndim == 0:
        raise ValueError("all_gather: tensor must have at least one dimension")
    gathered = ops.allgather(tensor, n)
    from pullback.frontend.ops.shape import split

    parts = split(gathered, n, axis=0) if n > 1 else [gathered]
    tensor_list.extend(parts)
    return _done(sync_op)


def reduce_scatter(
    tensor: Any, tensor_list: Sequence[Any], op: Any = ReduceOp.SUM, group: Group | None = None,
    sync_op: bool = True,
) -> Task | None:
    """`tensor` (in place) becomes the sum over ranks of `tensor_list[rank]`."""
    _check_tensor("reduce_scatter", tensor)
    _check_group("reduce_scatter", group)
    if _reduce_name(op) != "sum":
        raise ValueError("reduce_scatter: only ReduceOp.SUM is supported")
    n = get_world_size(group)
    if len(tensor_list) != n:
        raise ValueError(f"reduce_scatter: tensor_list must hold one tensor per rank ({n}), got {len(tensor_list)}")
    from pullback.frontend.ops.shape import concat

    stacked = concat(list(tensor_list), axis=0) if n > 1 else tensor_list[0]
    out = ops.reduce_scatter(stacked, n)
    assign_inplace(tensor, out)
    return _done(sync_op)


def barrier(group: Group | None = None) -> None:
    """Wait until every rank gets here (eager: now; static: where the program has
    got to when it runs)."""
    _check_group("barrier", group)
    if core.in_dynamic_mode():
        from pullback.frontend.eager import Tensor

        ops.barrier(Tensor(np.zeros([1], np.float32)))
        return
    from pullback.frontend.framework import default_main_program

    block = default_main_program().global_block()
    token = next(reversed(list(block.vars.values())), None)
    if token is None:
        raise ValueError("barrier: in static mode the program must define a variable first")
    assign_inplace(token, ops.barrier(token, token.name))

from pullback.namespaces import adopt_real  # noqa: E402 - names of Paddle's module it lacks

adopt_real(__name__)
