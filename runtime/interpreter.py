"""The numpy reference interpreter for the `pd` dialect.

It is the oracle every compiled backend is tested against, so it stays simple: one
kernel per op (registered with `@kernel(OpClass)` in `runtime/kernels/<family>.py`),
computing in the op's result dtype with plain numpy.

float16 and bfloat16 values are held narrow (float16 arrays; bfloat16 as its bits in
uint16 arrays, as Paddle's `numpy()` gives them: `dialects/bfloat16.py`) and
computed in float32: an op reading one gets float32 arrays (`compute_array`), an op
whose result is one computes it in float32 (`np_dtype` is float32 there) and the
interpreter rounds it to nearest even on store (`storage_array`).  So each op rounds
once, as Paddle's kernels (which compute 16-bit floats in float32) and the compiled
code do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.bfloat16 import bf16_to_f32, f32_to_bf16
from pullback.dialects.limits import TensorTooLarge, check_tensor_size, max_tensor_bytes
from pullback.dialects.pd.base import PdOp
from xdsl.dialects.builtin import bf16, f16

Kernel = Callable[..., "np.ndarray | tuple[np.ndarray, ...] | list[np.ndarray]"]
"""`kernel(op, *operand_arrays) -> array or sequence of arrays` (one per result)."""

KERNELS: dict[type[Operation], Kernel] = {}

RegionKernel = Callable[
    [Operation, "MutableMapping[SSAValue, np.ndarray]", "Mapping[str, np.ndarray]", "Mapping[str, np.ndarray]"],
    None,
]
"""`region_kernel(op, env, feeds, scope)`: runs an op with regions (`pd.if`,
`pd.while`) in the environment, binding its results in `env` itself."""

REGION_KERNELS: dict[type[Operation], RegionKernel] = {}


class InterpreterError(RuntimeError):
    """A program could not be run (missing feed, unknown op, unfilled backward...)."""


class IndexOutOfRange(InterpreterError, IndexError, ValueError):
    """An id or label outside its range, naming the op and the value: the same
    exception from every backend (compiled code reports it through its status
    buffer).  An IndexError, and a ValueError as Paddle raises it."""


def out_of_range(op_name: str, what: str, value: int, limit: int) -> IndexOutOfRange:
    """`'<op>': <what> <value> is out of range [0, <limit>)`."""
    return IndexOutOfRange(f"'{op_name}': {what} {value} is out of range [0, {limit})")


NARROW_KERNELS: dict[type[Operation], Kernel] = {}
"""Kernels that read 16-bit float operands as they are held (bfloat16 as uint16
bits) instead of float32 copies (`narrow_kernel`); by op class."""


def narrow_kernel(*op_types: type[Operation]) -> Callable[[Kernel], Kernel]:
    """Register a kernel reading 16-bit float storage directly (a bfloat16 GEMM): it
    returns the op's results (in float32 or the result type) or None to decline, and
    the op then runs its ordinary kernel on float32 copies."""

    def register(fn: Kernel) -> Kernel:
        for t in op_types:
            NARROW_KERNELS[t] = fn
        return fn

    return register


def run_narrow(op: Operation, kernel_fn: Kernel, args: Sequence[Any]) -> Any:
    """The results of `op`, which reads 16-bit floats, on its operands as held: its
    narrow kernel's when it has one that takes them, else `kernel_fn` on float32
    copies (the rounding to the result types is the caller's, `storage_array`)."""
    narrow = NARROW_KERNELS.get(type(op))
    if narrow is not None:
        out = narrow(op, *args)
        if out is not None:
            return out
    return kernel_fn(op, *[compute_array(a, v.type) for a, v in zip(args, op.operands)])


def kernel(*op_types: type[Operation]) -> Callable[[Kernel], Kernel]:
    """Register a numpy kernel for one or more op classes."""

    def register(fn: Kernel) -> Kernel:
        for t in op_types:
            KERNELS[t] = fn
        return fn

    return register


def region_kernel(*op_types: type[Operation]) -> Callable[[RegionKernel], RegionKernel]:
    """Register the executor of an op with regions (it runs blocks with `run_block`)."""

    def register(fn: RegionKernel) -> RegionKernel:
        for t in op_types:
            REGION_KERNELS[t] = fn
        return fn

    return register


def np_dtype(t: Attribute) -> np.dtype[Any]:
    """The numpy dtype a kernel computes a tensor type's elements in (float32 for the
    16-bit floats, see the module's docstring)."""
    elem = t.get_element_type() if isinstance(t, TensorType) else t
    return pd.DTYPE_BY_ELEM[elem].compute


NARROW_FLOATS = (f16, bf16)
"""The element types held in 16 bits and computed in float32."""


def _elem(t: Attribute) -> Attribute:
    return t.get_element_type() if isinstance(t, TensorType) else t


def compute_array(a: np.ndarray, t: Attribute) -> np.ndarray:
    """The array a kernel reads for a value of type `t` held as `a` (float32 values
    of a 16-bit float's storage; `a` itself otherwise)."""
    elem = _elem(t)
    if elem == bf16:
        return bf16_to_f32(a)
    if elem == f16:
        return np.asarray(a, dtype=np.float32)
    return a


def storage_array(v: Any, t: Attribute) -> np.ndarray:
    """A kernel's result `v` held as a value of type `t`: in `t`'s numpy dtype, a
    16-bit float rounded to nearest even (bfloat16 as its uint16 bits)."""
    elem = _elem(t)
    if elem == bf16:
        a = np.asarray(v)
        return a if a.dtype == np.uint16 else f32_to_bf16(a)
    return np.asarray(v, dtype=pd.DTYPE_BY_ELEM[elem].numpy)


def host_array(v: Any, t: Attribute) -> np.ndarray:
    """Host data given for a value of type `t` (a feed, a scope entry) as it is held:
    for bfloat16, uint16 arrays are bits already and any other numbers are rounded."""
    return storage_array(v, t)


def reads_narrow(op: Operation) -> bool:
    """Whether `op` reads a 16-bit float (its kernel then gets float32 arrays)."""
    for v in op.operands:
        if _elem(v.type) in NARROW_FLOATS:
            return True
    return False


_loaded = False


def _load_kernels() -> None:
    """Import every kernel family once (registration happens at import)."""
    global _loaded
    if not _loaded:
        from pullback.runtime.kernels import load_all

        load_all()
        _loaded = True


def run_block(
    block: Block,
    env: MutableMapping[SSAValue, np.ndarray],
    feeds: Mapping[str, np.ndarray],
    scope: Mapping[str, np.ndarray],
) -> None:
    """Execute the ops of `block` in order, binding results in `env`.

    `pd.data` reads `feeds` by name, `pd.parameter` reads `scope` by name, and
    `pd.backward` runs its region in the same environment.
    """
    _load_kernels()
    for op in block.ops:
        try:
            run_op(op, env, feeds, scope)
        except Exception as e:
            locate_error(e, op)
            raise


def locate_error(e: BaseException, op: Operation) -> None:
    """Record `op` as the op an error was raised at (`e.failed_op`), unless an op
    nested in it was recorded already: tools print its source location."""
    if getattr(e, "failed_op", None) is None:
        with contextlib.suppress(AttributeError, TypeError):
            e.failed_op = op  # type: ignore[attr-defined]


def run_op(
    op: Operation,
    env: MutableMapping[SSAValue, np.ndarray],
    feeds: Mapping[str, np.ndarray],
    scope: Mapping[str, np.ndarray],
) -> None:
    """Execute one op (see `run_block`)."""
    if isinstance(op, pd.DataOp):
        name = op.var_name.data
        if name not in feeds:
            raise InterpreterError(f"feed '{name}' is missing")
        env[op.out] = host_array(feeds[name], op.out.type)
        return
    if isinstance(op, pd.ParameterOp):
        name = op.var_name.data
        if name not in scope:
            raise InterpreterError(
                f"parameter '{name}' is not initialized in the scope "
                "(run the startup program first)"
            )
        env[op.out] = scope[name]
        return
    if isinstance(op, pd.BackwardOp):
        if not op.is_filled:
            raise InterpreterError(
                "pd.backward has an empty region: run the autodiff pass first"
            )
        run_block(op.body.block, env, feeds, scope)
        term = op.body.block.last_op
        assert isinstance(term, pd.YieldOp)
        for res, val in zip(op.grads, term.values):
            env[res] = env[val]
        return
    if isinstance(op, (pd.FetchOp, pd.YieldOp, pd.ConditionOp)):
        return
    region_fn = REGION_KERNELS.get(type(op))
    if region_fn is not None:
        region_fn(op, env, feeds, scope)
        return
    fn = KERNELS.get(type(op))
    if fn is None:
        raise InterpreterError(f"the interpreter has no kernel for '{op.name}'")
    try:
        args = [env[v] for v in op.operands]
    except KeyError:
        raise InterpreterError(f"'{op.name}' reads a value no op computed before it (a malformed program)") from None
    narrow = reads_narrow(op)
    bound = max_tensor_bytes()
    for i, result in enumerate(op.results):  # before anything is allocated (dialects/limits.py)
        t = result.type
        if isinstance(t, TensorType):
            shape = t.get_shape()
            try:
                check_tensor_size(op, i, shape, t.get_element_type(), bound)
            except TensorTooLarge:
                if all(d >= 0 for d in shape):
                    raise
                _check_inferred_sizes(op, args, bound)  # the shapes these operands give
    out = run_narrow(op, fn, args) if narrow else fn(op, *args)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(outs) != len(op.results):
        raise InterpreterError(
            f"kernel for '{op.name}' returned {len(outs)} values for {len(op.results)} results"
        )
    for i, (result, computed) in enumerate(zip(op.results, outs)):
        arr = storage_array(computed, result.type)
        env[result] = arr
        if arr.nbytes > bound and isinstance(result.type, TensorType):  # a dynamic shape, known only now
            check_tensor_size(op, i, arr.shape, result.type.get_element_type(), bound)


def _check_inferred_sizes(op: Operation, args: list[np.ndarray], bound: int) -> None:
    """`check_tensor_size` of `op`'s results with the shapes its typing rule gives for
    these operands (the compiled backends check those, `lowering/shapes.py`): for a
    result whose static dimensions alone exceed the bound."""
    infer = getattr(type(op), "infer", None)
    if infer is None or not isinstance(op, PdOp):
        return
    try:
        types = [TensorType(v.type.get_element_type(), a.shape) for v, a in zip(op.operands, args)]  # type: ignore[attr-defined]
        results = infer(types, op.py_props())
    except Exception:  # noqa: BLE001 - the kernel reports bad operands itself
        return
    for i, t in enumerate(results):
        check_tensor_size(op, i, t.get_shape(), t.get_element_type(), bound)


def run_module(
    module: ModuleOp,
    feeds: Mapping[str, np.ndarray],
    scope: Mapping[str, np.ndarray],
) -> dict[SSAValue, np.ndarray]:
    """Run a whole program; returns the value of every SSA value it computed."""
    env: dict[SSAValue, np.ndarray] = {}
    run_block(module.body.block, env, feeds, scope)
    return env


def evaluate(ops: Iterable[Operation], inputs: Mapping[SSAValue, np.ndarray]) -> dict[SSAValue, np.ndarray]:
    """Run loose ops (eager mode's single-op calls) given values for their operands."""
    _load_kernels()
    env: dict[SSAValue, np.ndarray] = dict(inputs)
    for op in ops:
        run_op(op, env, {}, {})
    return env
