"""Program-structure ops: feeds, parameters, fetches, constants, initializers and the
backward region.

A Paddle program is a `builtin.module` whose body is Paddle's block 0: `pd.data` ops
stand for feeds, `pd.parameter` ops for persistable variables held in the Scope, and
`pd.backward` ops hold the gradient computation built by the `autodiff` pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator, NoTerminator, OpTrait, Pure
from xdsl.utils.exceptions import VerifyException

from .base import (
    COMPLEX_TYPES,
    dtype_name,
    declare_complex,
    PureOp,
    tensor_type,
    MultiResultNames,
    PdOp,
    dtype_from_name,
    elem_of,
    f64_attr,
    fmt_shape,
    i64_attr,
    shape_of,
    shapes_compatible,
    strs_attr,
    tensor,
)


def _shape_prop(props: Mapping[str, Any], op: str) -> list[int]:
    shape = props["shape"]
    if any((d < 0 and d != -1) for d in shape):
        raise VerifyException(f"'{op}': invalid shape {shape}")
    return shape


@irdl_op_definition
class DataOp(PdOp):
    """A feed variable (`paddle.static.data`). `-1` dimensions are dynamic.

    ```mlir
    %x = pd.data "x" : tensor<?x13xf32>
    ```
    """

    name = "pd.data"
    var_name = prop_def(StringAttr, prop_name="name")
    out = result_def(TensorType)
    assembly_format = "$name attr-dict `:` type($out)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        raise VerifyException("'pd.data': its type is given, not inferred")

    def verify_(self) -> None:
        if not isinstance(self.out.type, TensorType):
            raise VerifyException("'pd.data': result must be a tensor")

    @classmethod
    def make(cls, name: str, shape: Sequence[int | None], dtype: str = "float32") -> DataOp:  # type: ignore[override]  # a feed has no operands
        """A feed named `name`; `None`/`-1` dimensions are dynamic."""
        op = cls.create(
            result_types=[tensor(shape, dtype_from_name(dtype))],
            properties={"name": StringAttr(name)},
        )
        op.out.name_hint = None
        from .base import restore_name_hints

        restore_name_hints(op)
        return op


@irdl_op_definition
class ParameterOp(PdOp):
    """A persistable variable read from the Scope (a parameter or optimizer state).

    ```mlir
    %fc_0.w_0 = pd.parameter "fc_0.w_0" : tensor<13x1xf32>
    %beta1_pow = pd.parameter "beta1_pow_acc_0" {trainable = false} : tensor<1xf32>
    ```
    """

    name = "pd.parameter"
    var_name = prop_def(StringAttr, prop_name="name")
    trainable = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    out = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$name attr-dict `:` type($out)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        raise VerifyException("'pd.parameter': its type is given, not inferred")

    def verify_(self) -> None:
        t = self.out.type
        if not isinstance(t, TensorType) or not t.has_static_shape():
            raise VerifyException(
                f"'pd.parameter': a parameter needs a static tensor type, got {t}"
            )

    @classmethod
    def make(  # type: ignore[override]  # a parameter has no operands
        cls, name: str, shape: Sequence[int], dtype: str = "float32", trainable: bool = True
    ) -> ParameterOp:
        """A persistable variable of a static shape."""
        props: dict[str, Attribute] = {"name": StringAttr(name)}
        if not trainable:
            props["trainable"] = BoolAttr.from_bool(False)
        op = cls.create(result_types=[tensor(shape, dtype_from_name(dtype))], properties=props)
        from .base import restore_name_hints

        restore_name_hints(op)
        return op


@irdl_op_definition
class FetchOp(IRDLOperation):
    """Marks a value as a program output (Paddle's `fetch`); keeps it alive under DCE.

    ```mlir
    pd.fetch %loss : tensor<f32>
    ```
    """

    name = "pd.fetch"
    x = operand_def(TensorType)
    assembly_format = "$x attr-dict `:` type($x)"


@irdl_op_definition
class FillConstantOp(PureOp):
    """A tensor filled with one value (`paddle.full`, `fill_constant`).  A complex
    result's value is `value + i * imag`; `imag` must be 0 for any other dtype.

    ```mlir
    %c = pd.fill_constant {shape = [2, 3], value = 1.0 : f64, dtype = "float32"} : tensor<2x3xf32>
    %z = pd.fill_constant {shape = [2], value = 1.0 : f64, imag = 2.0 : f64, dtype = "complex64"} : tensor<2xcomplex<f32>>
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.fill_constant"
    shape = prop_def(DenseArrayBase)
    value = prop_def(FloatAttr)
    imag = prop_def(FloatAttr, default_value=f64_attr(0.0))
    dtype = prop_def(StringAttr, default_value=StringAttr("float32"))
    assembly_format = "attr-dict `:` type($out)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        elem = dtype_from_name(props["dtype"])
        if props["imag"] != 0.0 and elem not in COMPLEX_TYPES:
            raise VerifyException(
                f"'{cls.name}': an imaginary part ({props['imag']}) needs a complex result, not {dtype_name(elem)}")
        return [tensor(_shape_prop(props, cls.name), elem)]


@irdl_op_definition
class FillAnyLikeOp(PureOp):
    """A tensor shaped like `x` (dynamic dimensions included) filled with one value
    (`paddle.full_like`, `ones_like`, `zeros_like`). `dtype = ""` keeps x's dtype.
    A complex result's value is `value + i * imag` (a Python complex operand,
    `x + 1j`); `imag` must be 0 for any other dtype.

    ```mlir
    %ones = pd.fill_any_like %loss {value = 1.0 : f64} : (tensor<f32>) -> tensor<f32>
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.fill_any_like"
    x = operand_def(TensorType)
    value = prop_def(FloatAttr)
    imag = prop_def(FloatAttr, default_value=f64_attr(0.0))
    dtype = prop_def(StringAttr, default_value=StringAttr(""))
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (t,) = operand_types
        elem = dtype_from_name(props["dtype"]) if props["dtype"] else elem_of(t)
        if props["imag"] != 0.0 and elem not in COMPLEX_TYPES:
            raise VerifyException(
                f"'{cls.name}': an imaginary part ({props['imag']}) needs a complex result, not {dtype_name(elem)}")
        return [tensor_type(elem, shape_of(t))]


class _RandomInitOp(PdOp):
    """Shared definition of the seeded random initializers of startup programs."""

    HOST_ONLY: ClassVar[str | None] = (
        "random initializers draw from numpy's generator, which native code does not "
        "reproduce; they run on the host interpreter (startup programs run once)"
    )

    shape = prop_def(DenseArrayBase)
    dtype = prop_def(StringAttr, default_value=StringAttr("float32"))
    seed = prop_def(IntegerAttr, default_value=i64_attr(0))
    var_name = opt_prop_def(StringAttr, prop_name="name")
    out = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($out)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        shape = _shape_prop(props, cls.name)
        if any(d < 0 for d in shape):
            raise VerifyException(f"'{cls.name}': shape must be static, got {shape}")
        return [tensor(shape, dtype_from_name(props["dtype"]))]


@irdl_op_definition
class UniformRandomOp(_RandomInitOp):
    """Uniform samples in `[min, max)` (`paddle.nn.initializer.Uniform`, Xavier).

    ```mlir
    %w = pd.uniform_random {shape = [13, 1], min = -0.5 : f64, max = 0.5 : f64, seed = 0 : i64} : tensor<13x1xf32>
    ```
    """

    name = "pd.uniform_random"
    min = prop_def(FloatAttr, default_value=f64_attr(-1.0))
    max = prop_def(FloatAttr, default_value=f64_attr(1.0))


@irdl_op_definition
class GaussianRandomOp(_RandomInitOp):
    """Normal samples (`paddle.nn.initializer.Normal`).

    ```mlir
    %w = pd.gaussian_random {shape = [13, 1], mean = 0.0 : f64, std = 1.0 : f64} : tensor<13x1xf32>
    ```
    """

    name = "pd.gaussian_random"
    mean = prop_def(FloatAttr, default_value=f64_attr(0.0))
    std = prop_def(FloatAttr, default_value=f64_attr(1.0))


@dataclass(frozen=True)
class AcceptsPdYield(OpTrait):
    """Marks the ops whose regions end in `pd.yield` (`pd.backward`, `pd.if`, the
    body of `pd.while`); `pd.yield` verifies that its parent has this trait."""


@dataclass(frozen=True)
class _InPdYieldParent(OpTrait):
    """`pd.yield` must sit directly in a region of an op marked `AcceptsPdYield`."""

    def verify(self, op: Operation) -> None:
        parent = op.parent_op()
        if parent is not None and not parent.has_trait(AcceptsPdYield):
            raise VerifyException(
                f"'pd.yield' expects parent op 'pd.backward', 'pd.if' or 'pd.while', "
                f"not '{parent.name}'"
            )


@irdl_op_definition
class TruncatedGaussianRandomOp(_RandomInitOp):
    """Normal samples redrawn until they lie within two standard deviations of the
    mean (`paddle.nn.initializer.TruncatedNormal`).

    ```mlir
    %w = pd.truncated_gaussian_random {shape = array<i64: 13, 1>, std = 2.000000e-02 : f64, seed = 7 : i64} : tensor<13x1xf32>
    ```
    """

    name = "pd.truncated_gaussian_random"
    mean = prop_def(FloatAttr, default_value=f64_attr(0.0))
    std = prop_def(FloatAttr, default_value=f64_attr(1.0))
    a = prop_def(FloatAttr, default_value=f64_attr(-2.0))
    b = prop_def(FloatAttr, default_value=f64_attr(2.0))

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if not props["a"] < props["b"]:
            raise VerifyException(
                f"'{cls.name}': the truncation bounds must satisfy a < b, got a={props['a']}, b={props['b']}"
            )
        return super().infer(operand_types, props)


@irdl_op_definition
class BackwardOp(IRDLOperation, MultiResultNames):
    """The backward region: gradients of `targets` (seeded by `seeds`, ones where
    absent) with respect to `wrt`, cutting through the names in `no_grad`.

    The region uses forward values directly (no tape). `append_backward`, `gradients`
    and eager `backward` create it empty; the `autodiff` pass fills it and keeps in
    `wrt` only the inputs that receive a gradient (results follow `wrt` one to one).

    ```mlir
    %w_grad = pd.backward targets(%loss : tensor<f32>) wrt(%w : tensor<13x1xf32>)
        {names = ["fc_0.w_0@GRAD"]} {
      ...
      pd.yield %g : tensor<13x1xf32>
    } -> tensor<13x1xf32>
    ```
    """

    name = "pd.backward"
    targets = var_operand_def(TensorType)
    seeds = var_operand_def(TensorType)
    wrt = var_operand_def(TensorType)
    grads = var_result_def(TensorType)
    no_grad = prop_def(ArrayAttr, default_value=ArrayAttr([]))
    seed_mask = opt_prop_def(ArrayAttr)
    names = opt_prop_def(ArrayAttr)
    body = region_def()
    """At most one block; no block (or an empty one) until `autodiff` fills it."""
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    traits = traits_def(NoTerminator(), AcceptsPdYield())
    assembly_format = (
        "`targets` `(` $targets `:` type($targets) `)` "
        "(`seeds` `(` $seeds^ `:` type($seeds) `)`)? "
        "`wrt` `(` ($wrt^ `:` type($wrt))? `)` attr-dict-with-keyword $body "
        "`->` `(` type($grads) `)`"
    )

    @staticmethod
    def make(
        targets: Sequence[SSAValue],
        wrt: Sequence[SSAValue],
        seeds: Sequence[SSAValue | None] = (),
        no_grad: Sequence[str] = (),
        body: Region | None = None,
    ) -> BackwardOp:
        """A backward op (empty unless `body` is given); `seeds[i] is None` means
        ones for `targets[i]`."""
        seed_list = list(seeds) + [None] * (len(targets) - len(seeds))
        given = [s for s in seed_list if s is not None]
        props: dict[str, Attribute] = {"no_grad": strs_attr(sorted(set(no_grad)))}
        if given and len(given) != len(targets):
            # Only some targets are seeded: say which (all or none needs no mask).
            props["seed_mask"] = ArrayAttr([i64_attr(int(s is not None)) for s in seed_list])
        return BackwardOp.create(
            operands=[*targets, *given, *wrt],
            result_types=[v.type for v in wrt],
            properties={
                **props,
                "operandSegmentSizes": _segments(len(targets), len(given), len(wrt)),
            },
            regions=[body if body is not None else Region(Block())],
        )

    def seed_for(self, i: int) -> SSAValue | None:
        """The seed gradient given for target `i`, or None (meaning ones)."""
        if "seed_mask" not in self.properties:
            return self.seeds[i] if len(self.seeds) == len(self.targets) else None
        mask = [a.value.data for a in self.properties["seed_mask"].data]  # type: ignore[attr-defined]
        if not mask[i]:
            return None
        return self.seeds[sum(mask[:i])]

    @property
    def is_filled(self) -> bool:
        """True once the autodiff pass has built the region."""
        return bool(self.body.blocks) and not self.body.blocks[0].is_empty

    def body_block(self) -> Block:
        """The region's block, created empty if the region has none yet."""
        if not self.body.blocks:
            self.body.add_block(Block())
        return self.body.blocks[0]

    def verify_(self) -> None:
        if "seed_mask" in self.properties:
            mask = [a.value.data for a in self.properties["seed_mask"].data]  # type: ignore[attr-defined]
            if len(mask) != len(self.targets) or sum(mask) != len(self.seeds):
                raise VerifyException(
                    "'pd.backward': seed_mask must have one entry per target and as many "
                    "ones as there are seeds"
                )
        elif self.seeds and len(self.seeds) != len(self.targets):
            raise VerifyException(
                f"'pd.backward': {len(self.seeds)} seeds for {len(self.targets)} targets; "
                "give one seed per target, or a seed_mask saying which targets are seeded"
            )
        if len(self.body.blocks) > 1:
            raise VerifyException("'pd.backward': the region must have at most one block")
        if len(self.grads) != len(self.wrt):
            raise VerifyException(
                f"'pd.backward': {len(self.wrt)} wrt values but {len(self.grads)} results"
            )
        for v, g in zip(self.wrt, self.grads):
            if v.type != g.type:
                raise VerifyException(
                    f"'pd.backward': gradient type {g.type} differs from its input's {v.type}"
                )
        for i, t in enumerate(self.targets):
            seed = self.seed_for(i)
            if seed is not None and not shapes_compatible(
                shape_of(seed.type), shape_of(t.type)
            ):
                raise VerifyException(
                    f"'pd.backward': seed shape {fmt_shape(shape_of(seed.type))} differs "
                    f"from target shape {fmt_shape(shape_of(t.type))}"
                )
        if self.is_filled:
            term = self.body.block.last_op
            if not isinstance(term, YieldOp):
                raise VerifyException("'pd.backward': a filled region must end in pd.yield")
            yielded = [v.type for v in term.values]
            if len(yielded) != len(self.grads) or not all(
                elem_of(y) == elem_of(g.type)
                and shapes_compatible(shape_of(y), shape_of(g.type))
                for y, g in zip(yielded, self.grads)
            ):
                raise VerifyException(
                    "'pd.backward': pd.yield types "
                    f"({', '.join(str(t) for t in yielded)}) do not match the gradient "
                    f"results ({', '.join(str(g.type) for g in self.grads)})"
                )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates a `pd.backward` region (yielding the gradients in `wrt` order), a
    `pd.if` branch or a `pd.while` body (yielding the results / next carried values).

    ```mlir
    pd.yield %w_grad, %b_grad : tensor<13x1xf32>, tensor<1xf32>
    ```
    """

    name = "pd.yield"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator(), _InPdYieldParent(), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"


# ------------------------------------------------------------ compiled sub-programs


class ProgramFunction(Protocol):
    """A traced and compiled program that `pd.run_program` calls (what
    `paddle.jit.to_static` makes of a Python function).  Registered in
    `RUN_PROGRAMS` under the key the op's `program` property names."""

    n_outputs: int
    """The leading results that are the function's outputs (they receive gradients);
    the results after them are values its backward reads and state updates."""

    @property
    def grad_positions(self) -> Sequence[int]:
        """The operands the outputs depend on differentiably (the only ones whose
        gradients `run_grad` can compute; the others get none)."""
        ...

    def result_types(self, operand_types: Sequence[Attribute]) -> list[Attribute]:
        """The op's result types for these operand types (VerifyException if they
        do not fit the traced signature)."""
        ...

    def run(self, arrays: Sequence[Any]) -> list[Any]:
        """The results for these operand arrays."""
        ...

    def run_grad(self, wrt: Sequence[int], arrays: Sequence[Any]) -> list[Any]:
        """Gradients of the operands at positions `wrt`, from the operands, the
        results and the output gradients (in that order)."""
        ...


RUN_PROGRAMS: dict[str, ProgramFunction] = {}
"""Programs `pd.run_program` can call, by key (registered by `paddle.jit`)."""


def _program(op: str, props: Mapping[str, Any]) -> ProgramFunction:
    key = props["program"]
    fn = RUN_PROGRAMS.get(key)
    if fn is None:
        raise VerifyException(
            f"'{op}': program '{key}' is not loaded in this process (it is made by "
            "paddle.jit.to_static)"
        )
    return fn


class _RunProgramBase(PdOp, MultiResultNames):
    """Shared checks: the op's text round-trips without its program loaded (the
    result types are then taken as declared)."""

    HOST_ONLY: ClassVar[str | None] = (
        "it calls a separately compiled program (paddle.jit.to_static) from the host interpreter"
    )

    def verify_(self) -> None:
        if self.prop("program") in RUN_PROGRAMS:
            super().verify_()


@irdl_op_definition
class RunProgramOp(_RunProgramBase):
    """Call a traced, compiled program (Paddle's `run_program`, what
    `paddle.jit.to_static` runs in dynamic mode): the operands are the function's
    tensor inputs and the parameters it reads; the results are its outputs, then
    the forward values its backward reads and the new values of state it updates.

    ```mlir
    %y, %h = pd.run_program %x, %w {program = "forward_0"} : (tensor<4x3xf32>, tensor<3x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>)
    ```
    """

    name = "pd.run_program"
    xs = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    program = prop_def(StringAttr)
    names = opt_prop_def(ArrayAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$xs attr-dict `:` functional-type($xs, $outs)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        return _program(cls.name, props).result_types(operand_types)


@irdl_op_definition
class RunProgramGradOp(_RunProgramBase):
    """The backward of a `pd.run_program`: the gradients of the operands at
    positions `wrt`, from the forward operands, the forward results and the
    gradients of the function's outputs (in that order).

    ```mlir
    %dw = pd.run_program_grad %x, %w, %y, %h, %dy {program = "forward_0", wrt = array<i64: 1>} : (...) -> tensor<3x2xf32>
    ```
    """

    name = "pd.run_program_grad"
    xs = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    program = prop_def(StringAttr)
    wrt = prop_def(DenseArrayBase)
    names = opt_prop_def(ArrayAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$xs attr-dict `:` functional-type($xs, $outs)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        _program(cls.name, props)
        wrt = list(props["wrt"])
        if any(not 0 <= i < len(operand_types) for i in wrt):
            raise VerifyException(f"'{cls.name}': wrt {wrt} out of range")
        return [operand_types[i] for i in wrt]


# ------------------------------------------------------------------ host callbacks


@dataclass
class PyFunction:
    """A Python function a `pd.py_func` op calls (`paddle.static.py_func`),
    registered in `PY_FUNCS`: its declared result types, and the key of the
    function computing its operands' gradients (None: no gradient)."""

    func: Any
    result_types: list[Attribute]
    backward: str | None = None
    skip: tuple[int, ...] = ()
    """Positions among (operands, results) not passed to the backward function."""


PY_FUNCS: dict[str, PyFunction] = {}
"""Functions `pd.py_func` can call, by key (registered by `paddle.static.py_func`)."""


@irdl_op_definition
class PyFuncOp(PdOp, MultiResultNames):
    """Call a registered Python function on the host (Paddle's `py_func`): it
    receives the operands as numpy arrays and returns the results, which must have
    the declared types.  The op has a side effect (it is not `Pure`): it stays in
    the program even when nothing reads its results.

    ```mlir
    %y = pd.py_func %x {func = "py_func_0"} : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    HOST_ONLY: ClassVar[str | None] = (
        "it calls a Python function (paddle.static.py_func): the program runs on the host interpreter"
    )

    name = "pd.py_func"
    xs = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    func = prop_def(StringAttr)
    names = opt_prop_def(ArrayAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$xs attr-dict `:` functional-type($xs, $outs)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        fn = PY_FUNCS.get(props["func"])
        if fn is None:
            raise VerifyException(f"'{cls.name}': function '{props['func']}' is not registered in this process")
        return list(fn.result_types)

    def verify_(self) -> None:
        if self.prop("func") in PY_FUNCS:  # the text round-trips without its function
            super().verify_()


PRINT_PHASES = ("forward", "backward", "both")


@irdl_op_definition
class PrintOp(PdOp):
    """Print a tensor when the program runs and pass it through (Paddle's `print`
    op, `paddle.static.Print`): name, message, place, shape, layout, dtype and the
    first `summarize` values (-1: all), at most `first_n` times (-1: always).  The
    gradient passes through too, printed when `print_phase` is `backward` or
    `both`.  It has a side effect, so it is kept when its result is unused.

    ```mlir
    %y = pd.print %x {message = "x:", var = "x"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    ```
    """

    HOST_ONLY: ClassVar[str | None] = (
        "it prints (paddle.static.Print, a debugging aid): the program runs on the host interpreter"
    )

    name = "pd.print"
    x = operand_def(TensorType)
    out = result_def(TensorType)
    message = prop_def(StringAttr, default_value=StringAttr(""))
    var = prop_def(StringAttr, default_value=StringAttr(""))
    first_n = prop_def(IntegerAttr, default_value=i64_attr(-1))
    summarize = prop_def(IntegerAttr, default_value=i64_attr(20))
    print_tensor_name = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    print_tensor_type = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    print_tensor_shape = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    print_tensor_lod = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    print_phase = prop_def(StringAttr, default_value=StringAttr("both"))
    is_forward = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    var_name = opt_prop_def(StringAttr, prop_name="name")
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if props["print_phase"] not in PRINT_PHASES:
            raise VerifyException(f"'{cls.name}': print_phase must be one of {list(PRINT_PHASES)}, "
                                  f"got {props['print_phase']!r}")
        return [operand_types[0]]


def _segments(*sizes: int) -> Attribute:
    from xdsl.dialects.builtin import DenseArrayBase, i32

    return DenseArrayBase.from_list(i32, list(sizes))


PROGRAM_OPS: list[type[Operation]] = [
    DataOp,
    ParameterOp,
    FetchOp,
    FillConstantOp,
    FillAnyLikeOp,
    UniformRandomOp,
    GaussianRandomOp,
    TruncatedGaussianRandomOp,
    BackwardOp,
    YieldOp,
    RunProgramOp,
    RunProgramGradOp,
    PyFuncOp,
    PrintOp,
]

STRUCTURAL_OPS: tuple[type[Operation], ...] = (DataOp, ParameterOp, FetchOp, BackwardOp, YieldOp)
"""Program structure rather than computation: feeds, persistables, outputs and the
backward region.  Every consumer handles them itself: the interpreter binds and runs
them, the autodiff pass treats feeds and parameters as leaves and differentiates
backward regions by nesting, and the lowering makes them entry-function arguments
and outputs (`lowering/abi.py`).  They have no kernel, VJP rule or lowering rule."""


# Feeds, constants and to_static programs hold complex values too (fetch, backward and
# yield are structure, not `PdOp`s: they take any type).
declare_complex(DataOp, ParameterOp, FillConstantOp, FillAnyLikeOp, RunProgramOp, RunProgramGradOp, PrintOp)
