"""Kernels of the control-flow ops: `pd.if` and `pd.while` run their regions in the
enclosing environment (regions read outer values directly); the stacks are numpy
arrays whose first dimension counts entries."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

import numpy as np
from pullback.dialects import pd
from pullback.runtime.interpreter import (
    InterpreterError,
    kernel,
    out_of_range,
    region_kernel,
    run_block,
)
from xdsl.ir import Block, SSAValue

Env = MutableMapping[SSAValue, np.ndarray]


def _truth(op_name: str, value: np.ndarray) -> bool:
    """The value of a one-element predicate (checked at runtime: dynamic shapes)."""
    if value.size != 1:
        raise InterpreterError(
            f"'{op_name}': the predicate must have exactly one element, got shape "
            f"{list(value.shape)}"
        )
    return bool(value.reshape(()))


def _run_yielding(block: Block, env: Env, feeds: Mapping[str, np.ndarray], scope: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Run a block and return the values its terminator passes on."""
    run_block(block, env, feeds, scope)
    term = block.last_op
    assert term is not None
    return [env[v] for v in term.operands]


@region_kernel(pd.IfOp)
def run_if(op: pd.IfOp, env: Env, feeds: Mapping[str, np.ndarray], scope: Mapping[str, np.ndarray]) -> None:
    region = op.then_region if _truth(op.name, env[op.cond]) else op.else_region
    for res, val in zip(op.outs, _run_yielding(region.block, env, feeds, scope)):
        env[res] = val


@region_kernel(pd.WhileOp)
def run_while(op: pd.WhileOp, env: Env, feeds: Mapping[str, np.ndarray], scope: Mapping[str, np.ndarray]) -> None:
    values = [env[v] for v in op.inits]
    cond, body = op.cond_block(), op.body_block()
    while True:
        env.update(zip(cond.args, values))
        (pred,) = _run_yielding(cond, env, feeds, scope)
        if not _truth(op.name, pred):
            break
        env.update(zip(body.args, values))
        new = _run_yielding(body, env, feeds, scope)
        # Dynamic dimensions may change between iterations (a growing stack);
        # the verifier already holds the static ones fixed.
        values = new
    for res, val in zip(op.outs, values):
        env[res] = val


@kernel(pd.StackCreateOp)
def stack_create(op: pd.StackCreateOp, x: np.ndarray) -> np.ndarray:
    return np.empty((0, *x.shape), dtype=x.dtype)


@kernel(pd.StackPushOp)
def stack_push(op: pd.StackPushOp, stack: np.ndarray, x: np.ndarray) -> np.ndarray:
    if stack.shape[1:] != x.shape:
        raise InterpreterError(
            f"'pd.stack_push': entry of shape {list(x.shape)} on a stack of "
            f"{list(stack.shape[1:])} entries"
        )
    return np.concatenate([stack, x[None]], axis=0)


@kernel(pd.StackPopOp)
def stack_pop(op: pd.StackPopOp, stack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if stack.shape[0] == 0:
        # (as the compiled code reports it: the top entry, -1, of an empty stack)
        raise out_of_range(op.name, "index", -1, 0)
    return stack[:-1], stack[-1]


def _index(op_name: str, stack: np.ndarray, index: np.ndarray) -> int:
    i = int(index.reshape(()))
    if not 0 <= i < stack.shape[0]:
        raise out_of_range(op_name, "index", i, stack.shape[0])
    return i


@kernel(pd.StackReadOp)
def stack_read(op: pd.StackReadOp, stack: np.ndarray, index: np.ndarray) -> np.ndarray:
    return stack[_index(op.name, stack, index)]


@kernel(pd.StackWriteOp)
def stack_write(op: pd.StackWriteOp, stack: np.ndarray, index: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = stack.copy()
    out[_index(op.name, stack, index)] = x
    return out


@kernel(pd.StackSizeOp)
def stack_size(op: pd.StackSizeOp, stack: np.ndarray) -> np.ndarray:
    return np.asarray(stack.shape[0], dtype=np.int64)
