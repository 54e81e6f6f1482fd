"""Paddle's `Operator` view of a `pd` op, for code that inspects programs.

`program.global_block().ops` is a list of `Operator`s: Paddle's `type` (the op name
without `pd.`), its input and output *slots* (`X`, `Param`, `LearningRate`, `Out`,
`ParamOut`, ...) holding variable names, and its attributes.  Nothing is stored here:
a view reads the op each time, so it always agrees with the IR.

Slot names are derived from the op's ODS definition, generically: an operand or
result definition `beta1_pow` is Paddle's slot `Beta1Pow`, `param_out` is
`ParamOut`, and a variadic `xs` is `X` (Paddle's `sum`/`concat` take a list in `X`).
The gradient ops of a filled `pd.backward` region appear in the op list in place of
the region op, as Paddle's `*_grad` ops appear after `append_backward`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pullback.dialects import pd
from pullback.dialects.pd.base import value_name
from xdsl.ir import Operation, SSAValue

if TYPE_CHECKING:
    from pullback.frontend.framework import Block
    from pullback.passes.autodiff import GradOpRecord


def slot_name(field: str, variadic: bool = False) -> str:
    """Paddle's slot name for an ODS operand/result field (`beta1_pow` ->
    `Beta1Pow`); a variadic field's plural `s` is dropped (`xs` -> `X`)."""
    if variadic and field.endswith("s") and len(field) > 1:
        field = field[:-1]
    return "".join(part[:1].upper() + part[1:] for part in field.split("_") if part)


def _groups(op: Operation, defs: list[tuple[str, Any]], values: Any) -> dict[str, list[SSAValue]]:
    """Values of `op` grouped by ODS field (variadic fields take what is left)."""
    values = list(values)
    n_var = sum(1 for _, d in defs if type(d).__name__.startswith("Var"))
    fixed = len(defs) - n_var
    out: dict[str, list[SSAValue]] = {}
    pos = 0
    for field, d in defs:
        variadic = type(d).__name__.startswith("Var")
        if type(d).__name__.startswith("Opt"):
            count = 1 if len(values) - pos > fixed - 1 else 0
        elif variadic:
            # One variadic field takes everything the fixed ones leave (the pd ops
            # have at most one; several would need segment sizes).
            count = len(values) - fixed if n_var == 1 else 0
        else:
            count = 1
        out[slot_name(field, variadic)] = values[pos : pos + count]
        pos += count
        if not variadic:
            fixed -= 1
    return out


def _unfold(value: SSAValue, folded: Any) -> SSAValue:
    """The value an operator reads in Paddle's view: through ops folded into it."""
    while isinstance(value.owner, Operation) and value.owner in folded and value.owner.operands:
        value = value.owner.operands[0]
    return value


def _var_name(value: SSAValue) -> str:
    n = value_name(value)
    return n if n is not None else f"_generated_var_{id(value)}"


class OpDescView:
    """`op.desc`: the C++ `OpDesc` accessor spellings (`desc.type()`,
    `desc.input('X')`, `desc.attr('scale')`, ...)."""

    def __init__(self, operator: Operator) -> None:
        self._op = operator

    def type(self) -> str:
        """Paddle's operator type."""
        return self._op.type

    def input(self, slot: str) -> list[str]:
        """Names in input slot `slot`."""
        return self._op.input(slot)

    def output(self, slot: str) -> list[str]:
        """Names in output slot `slot`."""
        return self._op.output(slot)

    def input_names(self) -> list[str]:
        """The input slots."""
        return self._op.input_names

    def output_names(self) -> list[str]:
        """The output slots."""
        return self._op.output_names

    def input_arg_names(self) -> list[str]:
        """Every input variable name."""
        return self._op.input_arg_names

    def output_arg_names(self) -> list[str]:
        """Every output variable name."""
        return self._op.output_arg_names

    def attr(self, name: str) -> Any:
        """An attribute's value."""
        return self._op.attr(name)

    def has_attr(self, name: str) -> bool:
        """Whether the op has attribute `name`."""
        return self._op.has_attr(name)

    def attr_names(self) -> list[str]:
        """The attribute names."""
        return self._op.attr_names


class Operator:
    """A view of one `pd` op with Paddle's `Operator` interface."""

    def __init__(self, block: Block, op: Operation) -> None:
        self.block = block
        self.ir = op
        """The viewed xDSL operation."""

    # -- identity ------------------------------------------------------------------

    @property
    def type(self) -> str:
        """Paddle's operator type: the one the frontend recorded where it differs
        from the `pd` op's name (`fc`'s `pd.matmul` is a `mul`, `paddle.mean`'s
        `pd.mean` a `reduce_mean`), else the op name without the `pd.` prefix."""
        return self.block.program.op_type(self.ir)

    @property
    def desc(self) -> OpDescView:
        """The `OpDesc`-style accessors (`op.desc.type()`)."""
        return OpDescView(self)

    @property
    def idx(self) -> int:
        """The position of this op in its block's op list."""
        for i, o in enumerate(self.block.ops):
            if o.ir is self.ir:
                return i
        raise ValueError(f"operator {self.type} is no longer in its block")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Operator) and other.ir is self.ir

    def __hash__(self) -> int:
        return hash(id(self.ir))

    # -- slots ---------------------------------------------------------------------

    def _inputs(self) -> dict[str, list[SSAValue]]:
        if isinstance(self.ir, pd.BackwardOp):
            return {"Targets": list(self.ir.targets), "Wrt": list(self.ir.wrt)}
        irdl = getattr(type(self.ir), "get_irdl_definition", None)
        if irdl is None:
            return {"X": list(self.ir.operands)} if self.ir.operands else {}
        slots = _groups(self.ir, irdl().operands, self.ir.operands)
        folded = self.block.program.folded_ops
        if folded:
            slots = {k: [_unfold(v, folded) for v in vs] for k, vs in slots.items()}
        return slots

    def _outputs(self) -> dict[str, list[SSAValue]]:
        if isinstance(self.ir, pd.BackwardOp):
            return {"Grads": list(self.ir.results)}
        irdl = getattr(type(self.ir), "get_irdl_definition", None)
        if irdl is None:
            return {"Out": list(self.ir.results)} if self.ir.results else {}
        return _groups(self.ir, irdl().results, self.ir.results)

    def input(self, name: str) -> list[str]:
        """The variable names in input slot `name` (Paddle's `op.input('X')`)."""
        slots = self._inputs()
        if name not in slots:
            raise ValueError(
                f"operator {self.type} has no input slot '{name}' (its inputs: "
                f"{', '.join(slots) or 'none'})"
            )
        return [_var_name(v) for v in slots[name]]

    def output(self, name: str) -> list[str]:
        """The variable names in output slot `name` (Paddle's `op.output('Out')`)."""
        slots = self._outputs()
        if name not in slots:
            raise ValueError(
                f"operator {self.type} has no output slot '{name}' (its outputs: "
                f"{', '.join(slots) or 'none'})"
            )
        return [_var_name(v) for v in slots[name]]

    @property
    def input_names(self) -> list[str]:
        """The input slot names."""
        return list(self._inputs())

    @property
    def output_names(self) -> list[str]:
        """The output slot names."""
        return list(self._outputs())

    @property
    def input_arg_names(self) -> list[str]:
        """Every input variable name, slot by slot."""
        return [_var_name(v) for vs in self._inputs().values() for v in vs]

    @property
    def output_arg_names(self) -> list[str]:
        """Every output variable name, slot by slot."""
        return [_var_name(v) for vs in self._outputs().values() for v in vs]

    # -- attributes ----------------------------------------------------------------

    def _attrs(self) -> dict[str, Any]:
        if isinstance(self.ir, pd.PdOp):
            props = self.ir.py_props()
        else:
            props = {k: pd.from_attr(v) for k, v in self.ir.properties.items()}
        # Variable names are slots' business, not attributes.
        props.pop("name", None)
        props.pop("names", None)
        return props

    @property
    def attr_names(self) -> list[str]:
        """The attribute names."""
        return list(self._attrs())

    def has_attr(self, name: str) -> bool:
        """Whether the op has attribute `name`."""
        return name in self._attrs()

    def attr(self, name: str) -> Any:
        """The value of attribute `name` (its declared default when not set)."""
        attrs = self._attrs()
        if name not in attrs:
            raise ValueError(
                f"operator {self.type} has no attribute '{name}' (its attributes: "
                f"{', '.join(attrs) or 'none'})"
            )
        return attrs[name]

    def all_attrs(self) -> dict[str, Any]:
        """Every attribute and its value."""
        return self._attrs()

    def _set_attr(self, name: str, value: Any) -> None:
        """Set attribute `name` (a declared property of the op)."""
        if not isinstance(self.ir, pd.PdOp) or name not in type(self.ir).prop_specs():
            raise ValueError(f"operator {self.type} has no attribute '{name}' to set")
        default = type(self.ir).prop_specs()[name]
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # a float attribute set from an int literal
        self.ir.properties[name] = pd.to_attr(value)
        self.block.program._bump()

    def __repr__(self) -> str:
        ins = ", ".join(f"{k}={self.input(k)}" for k in self.input_names)
        outs = ", ".join(f"{k}={self.output(k)}" for k in self.output_names)
        return f"{{{outs}}} = {self.type}(inputs={{{ins}}}, {self.all_attrs()})"

    __str__ = __repr__


class GradOperator(Operator):
    """A view of the gradient operator of one forward op (Paddle's `mul_grad`, ...)
    or of one gradient accumulation (`sum`): the `pd` ops a VJP rule emitted for it,
    seen as the single operator Paddle's `append_backward` adds.  Its type is
    `<forward type>_grad`, its input slots the forward op's plus `<slot>@GRAD` for
    its outputs' gradients, its output slots `<slot>@GRAD` for the gradients of
    its inputs, and its attributes the forward op's, as in Paddle."""

    def __init__(self, block: Block, op: Operation, record: GradOpRecord) -> None:
        super().__init__(block, op)
        self.record = record
        """The autodiff pass's record of this gradient operator."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GradOperator) and other.ir is self.ir and other.record is self.record

    def __hash__(self) -> int:
        return hash((id(self.ir), id(self.record)))

    @property
    def idx(self) -> int:
        """The position of this operator in its block's op list."""
        for i, o in enumerate(self.block.ops):
            if o == self:
                return i
        raise ValueError(f"operator {self.type} is no longer in its block")

    def _forward(self) -> Operator | None:
        fwd = self.record.forward_op
        return None if fwd is None else Operator(self.block, fwd)

    @property
    def type(self) -> str:
        """`<forward type>_grad` (`mul_grad` for a static fc), or `sum`."""
        return self.record.paddle_type(self.block.program.op_type)

    def _slots(self, outputs: bool) -> dict[str, list[str]]:
        fwd = self._forward()
        if fwd is None:
            return dict(self.record.outputs if outputs else self.record.inputs)
        if outputs:
            # The record keys each input's gradient by `<input name>@GRAD` and
            # holds the gradient's actual name (a pass-through keeps its own).
            made = self.record.outputs
            slots = {}
            for slot in fwd.input_names:
                grads = [g for n in fwd.input(slot) for g in made.get(f"{n}@GRAD", [])]
                if grads:
                    slots[f"{slot}@GRAD"] = grads
            return slots
        slots = {slot: fwd.input(slot) for slot in fwd.input_names}
        given = list(self.record.inputs.get("Out@GRAD", []))
        out_slots = [(slot, len(fwd.output(slot))) for slot in fwd.output_names]
        if len(out_slots) == 1 and given:
            slots[f"{out_slots[0][0]}@GRAD"] = given
        elif sum(k for _, k in out_slots) == len(given):
            for slot, k in out_slots:
                slots[f"{slot}@GRAD"], given = given[:k], given[k:]
        elif given:
            # Some outputs had no gradient and the record does not say which.
            slots["Out@GRAD"] = given
        return slots

    def input(self, name: str) -> list[str]:
        """The variable names in input slot `name` (`X`, `Out@GRAD`, ...)."""
        slots = self._slots(False)
        if name not in slots:
            raise ValueError(
                f"operator {self.type} has no input slot '{name}' (its inputs: "
                f"{', '.join(slots) or 'none'})"
            )
        return list(slots[name])

    def output(self, name: str) -> list[str]:
        """The variable names in output slot `name` (`X@GRAD`, ...)."""
        slots = self._slots(True)
        if name not in slots:
            raise ValueError(
                f"operator {self.type} has no output slot '{name}' (its outputs: "
                f"{', '.join(slots) or 'none'})"
            )
        return list(slots[name])

    @property
    def input_names(self) -> list[str]:
        """The input slot names."""
        return list(self._slots(False))

    @property
    def output_names(self) -> list[str]:
        """The output slot names."""
        return list(self._slots(True))

    @property
    def input_arg_names(self) -> list[str]:
        """Every input variable name, slot by slot."""
        return [n for names in self._slots(False).values() for n in names]

    @property
    def output_arg_names(self) -> list[str]:
        """Every output variable name, slot by slot."""
        return [n for names in self._slots(True).values() for n in names]

    def _attrs(self) -> dict[str, Any]:
        fwd = self._forward()
        return {} if fwd is None else fwd._attrs()

    def _set_attr(self, name: str, value: Any) -> None:
        raise ValueError(f"operator {self.type}: a gradient operator's attributes are its forward op's")


def block_operators(block: Block, ops: Iterator[Operation]) -> list[Operator]:
    """The operator views Paddle would list for `ops` of `block`: in a filled
    backward region, the ops of each gradient operator as one `GradOperator`;
    feeds and parameters left out (Paddle's are variables, not operators)."""
    out: list[Operator] = []
    folded = block.program.folded_ops
    for op in ops:
        if isinstance(op, (pd.DataOp, pd.ParameterOp)) or op in folded:
            continue
        if isinstance(op, pd.BackwardOp) and op.is_filled:
            out.extend(_region_operators(block, op))
        else:
            out.append(Operator(block, op))
    return out


def _region_operators(block: Block, bw: pd.BackwardOp) -> list[Operator]:
    """A filled region's operators.  A gradient operator whose ops are all gone (its
    gradients pass through unchanged, or later passes folded its ops away) is
    listed just before the next one that still has ops, as Paddle lists it."""
    folded = block.program.folded_ops
    # The gradient of a folded op is part of its consumer's gradient operator
    # (the one just before it in the reverse sweep).
    records: list[GradOpRecord] = []
    owner: dict[int, GradOpRecord] = {}
    for rec in block.program.grad_records.get(bw, []):
        host = rec
        if rec.forward_op is not None and rec.forward_op in folded and records:
            host = records[-1]
        else:
            records.append(rec)
        for o in rec.ops:
            owner[id(o)] = host
    region = [o for o in bw.body.block.ops if not isinstance(o, pd.YieldOp)]
    present = {id(o) for o in region}
    anchor: dict[int, list[GradOpRecord]] = {}  # first op of a record -> records listed before it
    pending: list[GradOpRecord] = []
    first: dict[int, Operation] = {}
    for o in region:
        owning = owner.get(id(o))
        if owning is not None and id(owning) not in first:
            first[id(owning)] = o
    for rec in records:
        if not any(id(o) in present for o in rec.ops):
            pending.append(rec)
        elif pending:
            anchor.setdefault(id(first[id(rec)]), []).extend(pending)
            pending = []
    out: list[Operator] = []
    seen: set[int] = set()
    for o in region:
        for before in anchor.get(id(o), ()):
            out.append(GradOperator(block, o, before))
        owning = owner.get(id(o))
        if owning is None:
            out.append(Operator(block, o))
        elif id(owning) not in seen:
            seen.add(id(owning))
            out.append(GradOperator(block, o, owning))
    anchor_op = region[-1] if region else bw
    out.extend(GradOperator(block, anchor_op, rec) for rec in pending)
    return out


def block_operations(ops: Iterator[Operation]) -> Iterator[Operation]:
    """The ops Paddle would list for a block: a filled `pd.backward` op is replaced
    by the gradient ops of its region (its terminator left out)."""
    for op in ops:
        if isinstance(op, pd.BackwardOp) and op.is_filled:
            for inner in op.body.block.ops:
                if not isinstance(inner, pd.YieldOp):
                    yield inner
        else:
            yield op


__all__ = ["GradOperator", "OpDescView", "Operator", "block_operations", "block_operators", "slot_name"]
