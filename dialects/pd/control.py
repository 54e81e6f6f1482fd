"""Structured control flow: `pd.if`, `pd.while`, their terminators, and the value
stacks reverse mode uses to carry a loop's per-iteration values to its backward loop.

The semantics follow Paddle's newer IR (`pd_op.if` / `pd_op.while` with `cf.yield`):
regions use values defined outside them directly (no explicit capture list), ops nest
freely, and a loop-carried value is read inside the loop through the region's block
arguments, i.e. at the current iteration.

```mlir
%y = pd.if %pred : tensor<i1> -> (tensor<3xf32>) {
  %a = pd.tanh %x : (tensor<3xf32>) -> tensor<3xf32>
  pd.yield %a : tensor<3xf32>
} else {
  pd.yield %x : tensor<3xf32>
}
%r:2 = pd.while (%i0, %x0 : tensor<i64>, tensor<3xf32>) -> (tensor<i64>, tensor<3xf32>) cond {
^bb0(%i : tensor<i64>, %x : tensor<3xf32>):
  %c = pd.less_than %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
  pd.condition %c : tensor<i1>
} do {
^bb0(%i : tensor<i64>, %x : tensor<3xf32>):
  ...
  pd.yield %i1, %x1 : tensor<i64>, tensor<3xf32>
}
```

`pd.while` evaluates its `cond` region on the carried values; while it yields true,
the `do` region maps them to the next iteration's.  The results are the values the
condition rejected (the initial ones when the loop runs zero times).

The stack ops are pure tensor functions over a `tensor<?x...>` whose leading
dimension counts entries: `pd.stack_push` returns the stack with one more entry,
`pd.stack_read` indexes it with a runtime integer.  They close under
differentiation (the VJP of a push is a pop, of a read a write), which is what lets
gradients of gradients of loops be taken like any other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import ArrayAttr, StringAttr, TensorType
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Operation,
    OpResult,
    Region,
    SSAValue,
)
from xdsl.ir.core import SSAValues
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from .base import (
    declare_complex,
    DYN,
    MultiResultNames,
    OpFacts,
    PdOp,
    PureOp,
    dtype_name,
    elem_of,
    expect_operands,
    fmt_shape,
    i1,
    i64,
    shape_of,
    shapes_compatible,
    tensor_type,
)
from .program import AcceptsPdYield, YieldOp


def captured_values(op: Operation) -> list[SSAValue]:
    """Values used inside `op`'s regions but defined outside `op` (its implicit
    inputs), in order of first use."""
    seen: dict[SSAValue, None] = {}
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            if v not in seen and not op.is_ancestor(v.owner):
                seen[v] = None
    return list(seen)


def _is_scalar_like(t: Attribute) -> bool:
    """A tensor with exactly one element (shape `[]`, `[1]`, `[1, 1]`...)."""
    return isinstance(t, TensorType) and all(d == 1 for d in shape_of(t))


def _types_fit(got: Attribute, want: Attribute) -> bool:
    """A yielded type fits a declared one: same dtype, compatible shapes."""
    return (
        isinstance(got, TensorType)
        and isinstance(want, TensorType)
        and elem_of(got) == elem_of(want)
        and shapes_compatible(shape_of(got), shape_of(want))
    )


def _fmt_types(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


def join_types(a: Attribute, b: Attribute) -> Attribute | None:
    """The most precise type both `a` and `b` fit (dimensions that differ become
    dynamic); None when the dtypes or ranks differ."""
    if elem_of(a) != elem_of(b) or len(shape_of(a)) != len(shape_of(b)):
        return None
    dims = [x if x == y else DYN for x, y in zip(shape_of(a), shape_of(b))]
    return tensor_type(elem_of(a), dims)


def _check_region_yield(op: str, what: str, region: Region, want: Sequence[Attribute]) -> None:
    if len(region.blocks) != 1:
        raise VerifyException(f"'{op}': the {what} region must have exactly one block")
    term = region.block.last_op
    if not isinstance(term, YieldOp):
        raise VerifyException(f"'{op}': the {what} region must end in pd.yield")
    got = [v.type for v in term.values]
    if len(got) != len(want) or not all(_types_fit(g, w) for g, w in zip(got, want)):
        raise VerifyException(
            f"'{op}': the {what} region yields {_fmt_types(got)} but the op expects "
            f"{_fmt_types(want)}"
        )


@irdl_op_definition
class IfOp(IRDLOperation, MultiResultNames, OpFacts):
    """`paddle.static.nn.cond`: runs the `then` or the `else` region on a one-element
    boolean predicate; the results are what the region run yields.

    ```mlir
    %y = pd.if %pred : tensor<i1> -> (tensor<3xf32>) {
      pd.yield %a : tensor<3xf32>
    } else {
      pd.yield %b : tensor<3xf32>
    }
    ```
    """

    name = "pd.if"
    cond = operand_def(TensorType)
    outs = var_result_def(TensorType)
    names = opt_prop_def(ArrayAttr)
    then_region = region_def()
    else_region = region_def()
    traits = traits_def(RecursiveMemoryEffect(), AcceptsPdYield())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$cond `:` type($cond) `->` `(` type($outs) `)` attr-dict-with-keyword "
        "$then_region `else` $else_region"
    )

    @staticmethod
    def make(
        cond: SSAValue, then_region: Region, else_region: Region, result_types: Sequence[Attribute]
    ) -> IfOp:
        """An if over two filled regions (each one block ending in `pd.yield`)."""
        return IfOp.create(
            operands=[cond],
            result_types=list(result_types),
            regions=[then_region, else_region],
        )

    def verify_(self) -> None:
        t = self.cond.type
        if not _is_scalar_like(t) or elem_of(t) != i1:
            raise VerifyException(
                f"'pd.if': the predicate must be a bool tensor with one element, got {t}"
            )
        want = list(self.result_types)
        _check_region_yield("pd.if", "then", self.then_region, want)
        _check_region_yield("pd.if", "else", self.else_region, want)
        for region in (self.then_region, self.else_region):
            if region.block.args:
                raise VerifyException("'pd.if': its regions take no block arguments")


@irdl_op_definition
class WhileOp(IRDLOperation, MultiResultNames, OpFacts):
    """`paddle.static.nn.while_loop`: loop-carried values start at `inits`; the `cond`
    region (ending in `pd.condition`) decides on the current values whether the `do`
    region (ending in `pd.yield`) runs again.  Both regions receive the current values
    as block arguments; results are the final values (types equal `inits`').

    ```mlir
    %r = pd.while (%x0 : tensor<3xf32>) -> (tensor<3xf32>) cond {
    ^bb0(%x : tensor<3xf32>):
      pd.condition %c : tensor<i1>
    } do {
    ^bb0(%x : tensor<3xf32>):
      pd.yield %x1 : tensor<3xf32>
    }
    ```
    """

    name = "pd.while"
    inits = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    names = opt_prop_def(ArrayAttr)
    cond_region = region_def()
    body = region_def()
    traits = traits_def(RecursiveMemoryEffect(), AcceptsPdYield())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "`(` ($inits^ `:` type($inits))? `)` `->` `(` type($outs) `)` "
        "attr-dict-with-keyword `cond` $cond_region `do` $body"
    )

    @staticmethod
    def make(inits: Sequence[SSAValue], cond_region: Region, body: Region) -> WhileOp:
        """A loop over filled regions whose blocks take the carried values."""
        return WhileOp.create(
            operands=list(inits),
            result_types=[v.type for v in inits],
            regions=[cond_region, body],
        )

    @staticmethod
    def empty_regions(types: Sequence[Attribute]) -> tuple[Region, Region]:
        """Two regions with one block each taking the carried values."""
        return Region(Block(arg_types=list(types))), Region(Block(arg_types=list(types)))

    def cond_block(self) -> Block:
        return self.cond_region.block

    def append_carried(self, inits: Sequence[SSAValue]) -> tuple[list[BlockArgument], list[OpResult]]:
        """Carry more values through this loop, in place: `inits` become operands,
        both regions take them as block arguments and the op gets results for them
        (unnamed).  The caller appends their next values to the body's `pd.yield`.
        Returns the body's new block arguments and the new results.

        In place, so that values and Variables naming the existing results stay
        valid: reverse mode uses it to make the forward loop push onto stacks."""
        first = len(self.results)
        self.operands = [*self.operands, *inits]
        for block in (self.cond_block(), self.body_block()):
            for v in inits:
                block.insert_arg(v.type, len(block.args))
        self.results = SSAValues(
            (*self.results, *(OpResult(v.type, self, first + i) for i, v in enumerate(inits)))
        )
        if "names" in self.properties:
            names = [a.data for a in self.properties["names"].data]  # type: ignore[attr-defined]
            self.properties["names"] = ArrayAttr(
                [StringAttr(n) for n in names + [""] * len(inits)]
            )
        return list(self.body_block().args[first:]), list(self.results[first:])

    def body_block(self) -> Block:
        return self.body.block

    def verify_(self) -> None:
        types = [v.type for v in self.inits]
        if list(self.result_types) != types:
            raise VerifyException(
                f"'pd.while': result types {_fmt_types(list(self.result_types))} differ "
                f"from the carried values' {_fmt_types(types)}"
            )
        for what, region in (("cond", self.cond_region), ("do", self.body)):
            if len(region.blocks) != 1:
                raise VerifyException(f"'pd.while': the {what} region must have exactly one block")
            args = [a.type for a in region.block.args]
            if args != types:
                raise VerifyException(
                    f"'pd.while': the {what} region takes {_fmt_types(args)} but the loop "
                    f"carries {_fmt_types(types)}"
                )
        if not isinstance(self.cond_region.block.last_op, ConditionOp):
            raise VerifyException("'pd.while': the cond region must end in pd.condition")
        _check_region_yield("pd.while", "do", self.body, types)


@irdl_op_definition
class ConditionOp(IRDLOperation):
    """Terminates the `cond` region of `pd.while` with the loop's predicate (a bool
    tensor with one element).

    ```mlir
    pd.condition %c : tensor<i1>
    ```
    """

    name = "pd.condition"
    cond = operand_def(TensorType)
    traits = traits_def(IsTerminator(), HasParent(WhileOp), Pure())
    assembly_format = "$cond attr-dict `:` type($cond)"

    def verify_(self) -> None:
        t = self.cond.type
        if not _is_scalar_like(t) or elem_of(t) != i1:
            raise VerifyException(
                f"'pd.condition': the loop predicate must be a bool tensor with one "
                f"element, got {t}"
            )


# --------------------------------------------------------------------- stacks


def _stack_entry(op: str, stack: Attribute) -> tuple[Attribute, tuple[int, ...]]:
    s = shape_of(stack)
    if not s:
        raise VerifyException(f"'{op}': a stack has rank >= 1 (entries first), got {stack}")
    return elem_of(stack), s[1:]


def _expect_index(op: str, t: Attribute) -> None:
    if not _is_scalar_like(t) or dtype_name(elem_of(t)) not in ("int32", "int64"):
        raise VerifyException(
            f"'{op}': the index must be an int32/int64 tensor with one element, got {t}"
        )


def _expect_entry(op: str, stack: Attribute, x: Attribute) -> None:
    elem, entry = _stack_entry(op, stack)
    if elem_of(x) != elem or not shapes_compatible(entry, shape_of(x)):
        raise VerifyException(
            f"'{op}': entry type {x} does not fit stack {stack} (entries "
            f"{fmt_shape(entry)} of {dtype_name(elem)})"
        )


@irdl_op_definition
class StackCreateOp(PureOp):
    """An empty stack for values typed like `x` (only x's type and runtime shape are
    read).

    ```mlir
    %s = pd.stack_create %x : (tensor<3xf32>) -> tensor<?x3xf32>
    ```
    """

    name = "pd.stack_create"
    x = operand_def(TensorType)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        expect_operands(cls.name, operand_types, 1)
        (t,) = operand_types
        return [tensor_type(elem_of(t), [DYN, *shape_of(t)])]


@irdl_op_definition
class StackPushOp(PureOp):
    """The stack with `x` added on top.

    ```mlir
    %s1 = pd.stack_push %s, %x : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
    ```
    """

    name = "pd.stack_push"
    stack = operand_def(TensorType)
    x = operand_def(TensorType)
    assembly_format = "$stack `,` $x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        expect_operands(cls.name, operand_types, 2)
        s, x = operand_types
        _expect_entry(cls.name, s, x)
        return [tensor_type(elem_of(s), [DYN, *shape_of(s)[1:]])]


@irdl_op_definition
class StackPopOp(PdOp, MultiResultNames):
    """The stack without its top entry, and that entry (a runtime error when empty).

    ```mlir
    %rest, %top = pd.stack_pop %s : (tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<3xf32>)
    ```
    """

    name = "pd.stack_pop"
    stack = operand_def(TensorType)
    rest = result_def(TensorType)
    top = result_def(TensorType)
    names = opt_prop_def(ArrayAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$stack attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        expect_operands(cls.name, operand_types, 1)
        (s,) = operand_types
        elem, entry = _stack_entry(cls.name, s)
        return [tensor_type(elem, [DYN, *entry]), tensor_type(elem, entry)]


@irdl_op_definition
class StackReadOp(PureOp):
    """Entry `index` of the stack (0 is the bottom; a runtime error when out of range).

    ```mlir
    %x = pd.stack_read %s, %i : (tensor<?x3xf32>, tensor<i64>) -> tensor<3xf32>
    ```
    """

    name = "pd.stack_read"
    stack = operand_def(TensorType)
    index = operand_def(TensorType)
    assembly_format = "$stack `,` $index attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        expect_operands(cls.name, operand_types, 2)
        s, i = operand_types
        _expect_index(cls.name, i)
        elem, entry = _stack_entry(cls.name, s)
        return [tensor_type(elem, entry)]


@irdl_op_definition
class StackWriteOp(PureOp):
    """The stack with entry `index` replaced by `x` (the VJP of `pd.stack_read`).

    ```mlir
    %s1 = pd.stack_write %s, %i, %x : (tensor<?x3xf32>, tensor<i64>, tensor<3xf32>) -> tensor<?x3xf32>
    ```
    """

    name = "pd.stack_write"
    stack = operand_def(TensorType)
    index = operand_def(TensorType)
    x = operand_def(TensorType)
    assembly_format = "$stack `,` $index `,` $x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        expect_operands(cls.name, operand_types, 3)
        s, i, x = operand_types
        _expect_index(cls.name, i)
        _expect_entry(cls.name, s, x)
        return [s]


@irdl_op_definition
class StackSizeOp(PureOp):
    """The number of entries of a stack, as an int64 scalar.

    ```mlir
    %n = pd.stack_size %s : (tensor<?x3xf32>) -> tensor<i64>
    ```
    """

    name = "pd.stack_size"
    stack = operand_def(TensorType)
    assembly_format = "$stack attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        expect_operands(cls.name, operand_types, 1)
        _stack_entry(cls.name, operand_types[0])
        return [tensor_type(i64, [])]


CONTROL_OPS = [
    IfOp,
    WhileOp,
    ConditionOp,
    StackCreateOp,
    StackPushOp,
    StackPopOp,
    StackReadOp,
    StackWriteOp,
    StackSizeOp,
]

__all__ = [
    "CONTROL_OPS",
    "ConditionOp",
    "IfOp",
    "StackCreateOp",
    "StackPopOp",
    "StackPushOp",
    "StackReadOp",
    "StackSizeOp",
    "StackWriteOp",
    "WhileOp",
    "captured_values",
    "join_types",
]


# Control flow carries complex values as any other (its VJP rules compose the inner ones).
declare_complex(IfOp, WhileOp, StackCreateOp, StackPushOp, StackPopOp, StackReadOp, StackWriteOp, StackSizeOp)
