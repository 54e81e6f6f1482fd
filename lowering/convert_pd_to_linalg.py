"""`convert-pd-to-linalg`: a `pd` program becomes one `func.func` on memrefs.

This is the pass module: it imports every op family's lowering
(`lowering/<family>.py`, registered in `lowering/registry.py`'s `LOWERINGS`) and
builds the entry function, lowering its ops with a `Lowerer` (`lowering/lowerer/`).

What the pass produces
----------------------
* One function, `@main` by default, in destination-passing style.  Its arguments are,
  in order: one `index` per dynamic dimension of a feed, the feeds, the persistables
  read with `pd.parameter`, and one caller-allocated buffer per output.  The order is
  recorded on the function (`pullback.abi`, see `lowering/abi.py`) so the runtime
  can call it.  Dynamic dimensions stay dynamic: one compiled program serves every
  batch size.
* Temporaries are explicit `memref.alloc`s, freed by `memref.dealloc` right after
  their last reader.
* `pd.backward` regions are lowered inline: their bodies are ordinary `pd` ops.
* Optimizer updates (ops declared `WRITES_PERSISTABLE`) write the parameter buffers
  in place (they ARE the Scope's numpy arrays); when the old value is still read
  afterwards the update goes to a temporary that is copied back at the end.
* Pointwise ops are fused into their readers (`lowering/lowerer/fusion_plan.py`),
  forward and backward chains alike: a chain of twenty elementwise ops and its
  gradient become one loop for the loss and one for the gradient.

Assumptions checked by the runtime before any call (`lowering/shapes.py`): a dynamic
dimension is never broadcast at run time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, PdOp, dtype_name, is_complex, result_names, shape_of

from pullback.lowering import fusion
from pullback.lowering.abi import Abi, LoweringError, Program
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.registry import LOWERINGS
from pullback.lowering.views import memref_type
from pullback.lowering.widen import widen
from pullback.passes.complex_to_real import complex_to_real

FAMILIES = pd.family_modules("pullback.lowering")
"""The lowering modules, one per op family of the dialect (`pd.FAMILIES`) that has
lowerings: importing each registers them in `registry.LOWERINGS`."""

PLANNERS = (fusion,)
"""Program-wide planners the pass runs besides the op rules: `fusion` groups the
pointwise ops left materialized into multi-output loops (`fusion_plan.MULTI_OUTPUT`)."""


def lowering_gap(op_type: type[Operation]) -> str | None:
    """Why ops of class `op_type` cannot be lowered to native code, or None when
    they can (structural ops are consumed by `abi.Program`)."""
    if op_type in pd.STRUCTURAL_OPS or op_type is pd.ConditionOp:
        return None  # (pd.condition: lowered by its loop's rule, lowering/control.py)
    reason = getattr(op_type, "HOST_ONLY", None)
    if reason is not None:
        return reason
    entry = LOWERINGS.get(op_type)
    if entry is None or (entry.rule is None and entry.body is None):
        return "not yet: no rule in convert-pd-to-linalg"
    return None


def lowerable_ops() -> set[type[Operation]]:
    """The op classes of the dialect this pass can lower (structural ones included)."""
    return {t for t in pd.ALL_OPS if lowering_gap(t) is None}


def check_lowerable(op: Operation) -> None:
    """Raise LoweringError naming `op` when the pass cannot lower it."""
    reason = lowering_gap(type(op))
    if reason is not None:
        raise LoweringError(f"cannot lower '{op.name}' to native code: {reason}")


def check_not_complex(op: Operation) -> None:
    """Raise LoweringError naming `op` when it reads or makes a complex tensor: the
    native code has no complex arithmetic.  `build_entry` rewrites complex values
    into real pairs first (`complex-to-real`, which refuses the ops it has no rule
    for by name, and the compiled backends then run the program on the
    interpreter, with a warning); this check is the backstop after it, so that a
    complex value never reaches the op lowerings."""
    for v in (*op.operands, *op.results):
        t = v.type
        if isinstance(t, TensorType) and is_complex(t.get_element_type()):
            raise LoweringError(
                f"cannot lower '{op.name}' to native code: {dtype_name(t.get_element_type())} values are "
                "computed by the host interpreter only"
            )


def _tensor_type(v: SSAValue) -> TensorType:
    t = v.type
    assert isinstance(t, TensorType)
    return t


# ----------------------------------------------------------------- entry point


def build_entry(
    module: ModuleOp,
    extra_fetches: Sequence[SSAValue] = (),
    entry: str = "main",
    only_given_fetches: bool = False,
    range_checks: bool = True,
    fold_reductions: bool = True,
    bf16_gemm: bool = False,
) -> tuple[func.FuncOp, Abi]:
    """Lower the `pd` program in `module` to a new entry function (not inserted).

    Outputs are the `pd.fetch` operands then `extra_fetches` (only the latter when
    `only_given_fetches`).  `module` itself is left unchanged.  `range_checks`: ids
    and labels are checked at run time (`Abi.checks`; off for the GPU backend).
    `fold_reductions`: a loss may be summed in the loop of the elementwise work
    that reads the same values (`Lowerer.fold_reductions`; off for the GPU).
    `bf16_gemm`: bfloat16 matrix products call the bfloat16 GEMM (`widen`'s
    `bf16_gemm`; the CPU backend's choice, `runtime/native/bf16_gemm.py`).
    """
    # Complex values become real pairs `S + [2]` (passes/complex_to_real.py); the ABI
    # keeps their complex types: the caller's complex arrays are the pairs' bytes.
    module, extra_fetches, complex_of = complex_to_real(module, extra_fetches)
    module, extra_fetches = widen(module, extra_fetches, bf16_gemm=bf16_gemm)  # 16-bit floats and uint8 compute wide
    prog = Program.of(module, extra_fetches, use_fetch_ops=not only_given_fetches)
    for op in prog.ops:
        for inner in op.walk():  # (the ops of control-flow regions too)
            check_lowerable(inner)
            check_not_complex(inner)

    abi = Abi()
    feeds: dict[str, SSAValue] = {}
    params: dict[str, list[SSAValue]] = {}
    for op in prog.ops:
        if isinstance(op, pd.DataOp):
            name = op.var_name.data
            if name in feeds:
                raise LoweringError(f"'pd.data': feed '{name}' is declared twice")
            feeds[name] = op.out
        elif isinstance(op, pd.ParameterOp):
            params.setdefault(op.var_name.data, []).append(op.out)

    # Persistable updates: results named like a persistable, last writer wins.
    writes: dict[str, SSAValue] = {}
    for op in prog.ops:
        if isinstance(op, (pd.DataOp, pd.ParameterOp)):
            continue
        for r, n in zip(op.results, result_names(op)):
            if n is not None and (n in params or op.WRITES_PERSISTABLE):
                writes[n] = r
    abi.writes = list(writes)

    def abi_type(v: SSAValue) -> TensorType:
        return complex_of.get(v) or _tensor_type(v)

    abi.feeds = [(n, abi_type(v)) for n, v in feeds.items()]
    abi.params = [(n, abi_type(vs[0])) for n, vs in params.items()]
    # A fetched parameter update needs no output buffer: it lands in the parameter's
    # own (Scope) buffer, which the runtime returns.
    in_param = {writes[n]: n for n in writes if n in params}
    fetches: list[SSAValue] = []
    for v in prog.fetches:
        if v in in_param:
            abi.fetches.append(["param", in_param[v]])
            continue
        if v not in fetches:
            fetches.append(v)
        abi.fetches.append(["out", fetches.index(v)])
    new_persistables = [n for n in writes if n not in params]
    out_values = [*fetches, *(writes[n] for n in new_persistables)]
    abi.outputs = [("", abi_type(v)) for v in fetches] + [(n, abi_type(writes[n])) for n in new_persistables]
    for fi, (_, t) in enumerate(abi.feeds):
        for k, d in enumerate(shape_of(t)):
            if d == DYN:
                abi.dims.append((fi, k))

    arg_types: list[Attribute] = [IndexType()] * len(abi.dims)
    arg_values = [*feeds.values(), *(vs[0] for vs in params.values()), *out_values]
    arg_types += [memref_type(t.get_element_type(), t.get_shape()) for t in map(_tensor_type, arg_values)]
    block = Block(arg_types=arg_types)
    fn = func.FuncOp(entry, (arg_types, []), Region(block))
    fn.attributes["pullback.abi"] = StringAttr(abi.to_json())
    fn.attributes["llvm.emit_c_interface"] = UnitAttr()
    args = list(block.args)
    dim_args, args = args[: len(abi.dims)], args[len(abi.dims):]
    feed_args, args = args[: len(abi.feeds)], args[len(abi.feeds):]
    param_args, out_args = args[: len(abi.params)], args[len(abi.params):]

    low = Lowerer(
        prog, Builder(InsertPoint.at_end(block)), abi, range_checks=range_checks, fold_reductions=fold_reductions
    )
    dim_of: dict[tuple[int, int], SSAValue] = {}
    for (fi, k), a in zip(abi.dims, dim_args):
        a.name_hint = f"{_safe(abi.feeds[fi][0])}_d{k}"
        dim_of[(fi, k)] = a
    for fi, ((name, _), a) in enumerate(zip(abi.feeds, feed_args)):
        a.name_hint = _safe(name)
        v = feeds[name]
        t = _tensor_type(v)  # (a complex feed's pair axis is its last, of size 2)
        low.sizes[v] = [dim_of[(fi, k)] if d == DYN else d for k, d in enumerate(shape_of(t))]
        # A dynamically shaped argument is used through a view that names its sizes:
        # memrefs lower to bare pointers, and the view is where sizes are found.
        low.buf[v] = low.shape_view(a, low.sizes[v]) if DYN in shape_of(t) else a
    for (name, _), a in zip(abi.params, param_args):
        a.name_hint = _safe(name)
        for v in params[name]:
            low.sizes[v] = list(shape_of(v.type))
            low.buf[v] = a

    # Destinations: fetched values are computed straight into their output buffers
    # (copied there when they are feeds, parameters or updated in place).
    late_copies: list[tuple[SSAValue, SSAValue]] = []
    for v, a in zip(fetches, out_args):
        if isinstance(v.owner, (pd.DataOp, pd.ParameterOp)) or v in writes.values():
            late_copies.append((v, a))
        else:
            low.dest[v] = a
    for n, a in zip(new_persistables, out_args[len(fetches):]):
        low.dest.setdefault(writes[n], a)
        if low.dest[writes[n]] is not a:
            late_copies.append((writes[n], a))

    # In-place persistable updates, when nothing reads the old value afterwards.
    for n, v in writes.items():
        if n not in params or v in low.dest:
            continue
        target = low.buf[params[n][0]]
        writer = v.owner
        assert isinstance(writer, PdOp)
        writer_pos = prog.pos[writer]
        later_reads = [
            prog.pos[u] for p in prog.views_of(params[n]) for u, _ in prog.uses.get(p, [])
            if prog.pos[u] > writer_pos
        ]
        # With a commit point (CPU: range checks on), only optimizer ops write a
        # parameter in place; other writers (batch-norm statistics, an assign) go
        # through a copy at the end, so that an interrupted run abandoned at the
        # commit point (before the optimizer) has written nothing.
        if later_reads or (range_checks and not writer.WRITES_PERSISTABLE):
            low.copy_back.append((v, target))
        else:
            low.dest[v] = target

    # The commit point (Ctrl-C: `LowererBase.commit_point`) goes before the first op
    # that may write a persistable's buffer: optimizer ops, updates in place (copies
    # back at the end have one of their own, `Lowerer._finish`).
    param_bufs = {low.buf[vs[0]] for vs in params.values()}
    writers = [prog.pos[op] for op in prog.ops if op.WRITES_PERSISTABLE]
    writers += [prog.pos[v.owner] for v, dst in low.dest.items() if dst in param_bufs]
    low.commit_at = min(writers, default=None)
    # Fetched feeds/parameters are copied before anything can overwrite them.
    low.current = 0
    for v, a in late_copies:
        if isinstance(v.owner, (pd.DataOp, pd.ParameterOp)):
            low.copy_value(v, a)
    low.lower()
    # Fetched values written in place: copy them out before returning.
    ret = block.last_op
    assert ret is not None
    ret.detach()
    for v, a in late_copies:
        if not isinstance(v.owner, (pd.DataOp, pd.ParameterOp)):
            low.copy_value(v, a)
    block.add_op(ret)
    if low.status is not None:  # range checks added the status argument
        fn.function_type = FunctionType.from_lists([a.type for a in block.args], [])
        fn.attributes["pullback.abi"] = StringAttr(abi.to_json())
    return fn, abi


def _safe(name: str) -> str | None:
    cleaned = re.sub(r"[^A-Za-z0-9_$]", "_", name)
    return cleaned if cleaned[:1].isalpha() else None


def declare_callees(module: ModuleOp) -> None:
    """Declare, as external functions of `module`, the callees of `func.call`s it
    does not define (C functions a lowering calls, e.g. MPI's), with the calls'
    types."""
    defined = {o.sym_name.data for o in module.body.block.ops if isinstance(o, func.FuncOp)}
    for op in list(module.walk()):
        if isinstance(op, func.CallOp) and op.callee.string_value() not in defined:
            name = op.callee.string_value()
            module.body.block.add_op(
                func.FuncOp.external(name, [a.type for a in op.arguments], [r.type for r in op.res])
            )
            defined.add(name)


@dataclass(frozen=True)
class ConvertPdToLinalgPass(ModulePass):
    """Lower a `pd` program to one `func.func` on memrefs (linalg, scf, arith, math).

    The module's top-level `pd` ops are replaced by the entry function.
    """

    name = "convert-pd-to-linalg"

    entry: str = "main"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fn, _ = build_entry(op, entry=self.entry)
        for child in list(op.body.block.ops):
            child.detach()
            child.erase(safe_erase=False)
        op.body.block.add_op(fn)
        declare_callees(op)


__all__ = [
    "FAMILIES",
    "ConvertPdToLinalgPass",
    "LoweringError",
    "build_entry",
    "check_lowerable",
    "check_not_complex",
    "declare_callees",
    "lowerable_ops",
    "lowering_gap",
]
