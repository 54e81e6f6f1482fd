"""Narrow dtypes computed wide: how the compiled backends run float16, bfloat16 and uint8.

Paddle's kernels compute a float16 or bfloat16 op in float32 and round its result to
nearest even (`phi::dtype::float16`'s `MPType`), and the interpreter does the same
(`runtime/interpreter.py`).  Before lowering, `widen` rewrites a copy of the program
so that every op on such values reads `pd.cast`s of its 16-bit operands to float32,
computes in float32 and is followed by a `pd.cast` of each 16-bit result back: in the
lowered code a 16-bit tensor is stored in 16 bits and converted on load and on store
(the casts fuse into the loops that read and write it), reductions and matrix
products accumulate in float32, and every op rounds once as Paddle's do.

uint8 is widened the same way, to int32 (zero-extended): a C-like integer promotion,
after which division, remainder, comparisons, max/min, shifts and conversions to
float are the signed int32 ones, right for every uint8 value; the cast back wraps
modulo 256 as Paddle's uint8 arithmetic does.  int8 and int16 need no widening:
LLVM's signed operations on `i8`/`i16` are theirs.

Left narrow: `pd.cast` (the lowering converts between every pair of element types,
`lowering/scalar.py`'s `Scalar.convert`), feeds, parameters and fetches (their
buffers hold the narrow type), ops with regions (their inner ops are widened one by
one) and optimizer updates, which write a persistable in place: an update of a
16-bit parameter is not compiled (the executor runs such a program on the
interpreter and says so; AMP's O2 keeps float32 master weights, so its optimizer
updates are float32).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, bf16, f16, f32, i32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from pullback.dialects import pd
from pullback.dialects.pd.dtypes import DTYPE_BY_ELEM, UI8
from pullback.lowering.abi import LoweringError

WIDE: dict[Attribute, Attribute] = {f16: f32, bf16: f32, UI8: i32}
"""The element type each narrow type computes in."""

_WIDE_NAMES = {DTYPE_BY_ELEM[k].name: DTYPE_BY_ELEM[v].name for k, v in WIDE.items()}

_KEEP = (pd.CastOp, pd.DataOp, pd.ParameterOp, pd.FetchOp, pd.BackwardOp, pd.YieldOp, pd.ConditionOp)


def _elem(t: Attribute) -> Attribute | None:
    return t.get_element_type() if isinstance(t, TensorType) else None


def _name_of(t: Attribute) -> str:
    """The dtype name of a tensor type's elements."""
    elem = _elem(t)
    assert elem is not None
    return DTYPE_BY_ELEM[elem].name


def is_narrow(t: Attribute) -> bool:
    """Whether values of type `t` compute in a wider type (`WIDE`)."""
    return _elem(t) in WIDE


def _widened_type(t: Attribute) -> Attribute:
    if isinstance(t, TensorType) and t.get_element_type() in WIDE:
        return TensorType(WIDE[t.get_element_type()], t.get_shape())
    return t


def _touches_narrow(op: Operation) -> bool:
    return any(is_narrow(v.type) for v in op.operands) or any(is_narrow(r.type) for r in op.results)


def needs_widening(module: ModuleOp) -> bool:
    """Whether any op of `module` computes on a narrow type."""
    return any(_touches_narrow(op) for op in module.walk())


def _widen_op(op: Operation, wide_of: dict[SSAValue, SSAValue], replaced: dict[SSAValue, SSAValue]) -> None:
    """Replace `op` by its wide version between casts (see the module's docstring)."""
    operands: list[SSAValue] = []
    for v in op.operands:
        if not is_narrow(v.type):
            operands.append(v)
            continue
        w = wide_of.get(v)
        if w is None:
            cast = pd.CastOp.make(v, dtype=_WIDE_NAMES[_name_of(v.type)])
            owner = v.owner
            if isinstance(owner, Block):
                Rewriter.insert_op(cast, InsertPoint.at_start(owner))
            else:
                Rewriter.insert_op(cast, InsertPoint.after(owner))
            w = wide_of[v] = cast.results[0]
        operands.append(w)
    props = dict(op.properties)
    for key, value in props.items():
        if "dtype" in key and isinstance(value, StringAttr) and value.data in _WIDE_NAMES:
            props[key] = StringAttr(_WIDE_NAMES[value.data])
    wide = type(op).create(
        operands=operands,
        result_types=[_widened_type(r.type) for r in op.results],
        properties=props,
        attributes=dict(op.attributes),
    )
    try:
        wide.verify()
    except Exception as e:  # noqa: BLE001 - any typing rule's complaint
        raise LoweringError(f"cannot compute '{op.name}' on {_narrow_names(op)} in a wider type: {e}") from None
    Rewriter.insert_op(wide, InsertPoint.before(op))
    replacements: list[SSAValue] = []
    for old, wide_result in zip(op.results, wide.results):
        new: SSAValue = wide_result
        if not is_narrow(old.type):
            replacements.append(new)
            continue
        back = pd.CastOp.make(new, dtype=_name_of(old.type))
        if "name" in op.properties and len(op.results) == 1:
            back.properties["name"] = op.properties["name"]
        Rewriter.insert_op(back, InsertPoint.before(op))
        replacements.append(back.results[0])
        new.name_hint = old.name_hint
        back.results[0].name_hint = old.name_hint
    for old, new in zip(op.results, replacements):
        old.replace_all_uses_with(new)
        replaced[old] = new
    op.detach()
    op.erase()


def _narrow_names(op: Operation) -> str:
    names = {DTYPE_BY_ELEM[e].name for v in (*op.operands, *op.results) if (e := _elem(v.type)) in WIDE}
    return ", ".join(sorted(names))


def _narrow_product(op: Operation, replaced: dict[SSAValue, SSAValue]) -> None:
    """Replace a product (`_PRODUCTS`) of two bfloat16 operands by one that reads them as they
    are and gives float32 (the bfloat16 GEMM's contract: exact products, float32
    sums), followed by the usual `pd.cast` back to bfloat16.

    The new op's result type is not the one its typing rule gives (that would be
    bfloat16): it exists only in this lowering copy, between here and
    `convert-linalg-to-blas`, which calls `pullback_sbgemm` for a contraction of
    bfloat16 buffers into a float32 one.  Converting the operands first (as
    `_widen_op` does) would give the same value, with two extra passes over them."""
    (old,) = op.results
    wide = type(op).create(
        operands=list(op.operands),
        result_types=[_widened_type(old.type)],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    Rewriter.insert_op(wide, InsertPoint.before(op))
    back = pd.CastOp.make(wide.results[0], dtype=_name_of(old.type))
    if "name" in op.properties:
        back.properties["name"] = op.properties["name"]
    Rewriter.insert_op(back, InsertPoint.before(op))
    wide.results[0].name_hint = back.results[0].name_hint = old.name_hint
    old.replace_all_uses_with(back.results[0])
    replaced[old] = back.results[0]
    op.detach()
    op.erase()


_PRODUCTS = (pd.MatmulOp, pd.Conv2DOp, pd.Conv2DFilterGradOp, pd.Conv2DTransposeOp)
"""Ops whose lowering is one contraction of their two operands (`lowering/nn.py`'s
`contract`, after `im2col` for convolutions): run on bfloat16 operands by the
bfloat16 GEMM."""


def _is_bf16_product(op: Operation) -> bool:
    return isinstance(op, _PRODUCTS) and all(_elem(v.type) == bf16 for v in op.operands)


def widen(
    module: ModuleOp, fetches: Sequence[SSAValue] = (), bf16_gemm: bool = False
) -> tuple[ModuleOp, list[SSAValue]]:
    """`module` with its narrow ops computed wide, and `fetches` in it: `module` itself
    when it has none (no copy), else a rewritten copy (`module` is left unchanged).
    `bf16_gemm`: a `pd.matmul` of two bfloat16 operands keeps them narrow for the
    bfloat16 GEMM (`_narrow_product`; the CPU backend on CPUs with AVX512-BF16)."""
    if not needs_widening(module):
        return module, list(fetches)
    mapping: dict[SSAValue, SSAValue] = {}
    copy = module.clone(value_mapper=mapping)
    wide_of: dict[SSAValue, SSAValue] = {}
    replaced: dict[SSAValue, SSAValue] = {}
    for op in list(copy.walk()):
        if isinstance(op, _KEEP) or op.regions or not _touches_narrow(op):
            continue
        if getattr(op, "WRITES_PERSISTABLE", False):
            raise LoweringError(
                f"'{op.name}' updates a {_narrow_names(op)} persistable: not compiled "
                "(keep float32 master weights: paddle.amp.decorate(level='O2'))"
            )
        if bf16_gemm and _is_bf16_product(op):
            _narrow_product(op, replaced)
            continue
        _widen_op(op, wide_of, replaced)
    new_fetches = []
    for v in fetches:
        v = mapping.get(v, v)
        new_fetches.append(replaced.get(v, v))
    return copy, new_fetches


__all__ = ["WIDE", "is_narrow", "needs_widening", "widen"]
