"""Static-graph frontend: `Program`, `Block` and `Variable` as thin views of `pd` IR.

The IR is the single source of truth: a `Program` owns a `builtin.module` whose body
is Paddle's block 0, a `Variable` wraps one SSA value, and its name is the `name`
property of the op that defines it.  Nothing is mirrored on the Python side except
the flags Paddle keeps per variable (`stop_gradient`, `persistable`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import weakref
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block as XBlock
from xdsl.ir import Operation, SSAValue
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from pullback.dialects import pd
from pullback.dialects.pd.base import elem_of, shape_of, value_name
from pullback.dialects.pd.dtypes import DTYPE_BY_NAME, dtype_of, to_dtype_name
from pullback.frontend.name_index import NameIndex
from pullback.frontend.operator import Operator, block_operators

if TYPE_CHECKING:
    from pullback.passes.autodiff import GradOpRecord


class Variable:
    """A value of a static program (Paddle's `Variable`/static `Tensor`)."""

    def __init__(self, block: Block, value: SSAValue) -> None:
        self.block = block
        self.value = value
        owner = value.owner
        self.stop_gradient: bool = isinstance(owner, pd.DataOp) or (
            isinstance(owner, pd.ParameterOp) and not owner.trainable.value.data
        )
        self.persistable: bool = isinstance(owner, pd.ParameterOp)

    # -- Paddle's attributes -------------------------------------------------------

    @property
    def name(self) -> str:
        """The Paddle variable name (the defining op's `name` property)."""
        n = value_name(self.value)
        return n if n is not None else f"_generated_var_{id(self.value)}"

    @name.setter
    def name(self, new: str) -> None:
        self.block.program._rename(self, new)

    @property
    def grad_name(self) -> str:
        """The name of this variable's gradient (`NAME@GRAD`), as Paddle's legacy
        static Variable gives it."""
        return self.name + "@GRAD"

    @property
    def shape(self) -> list[int]:
        """The shape, `-1` for dynamic dimensions."""
        return [d if d >= 0 else -1 for d in shape_of(self.value.type)]

    @property
    def ndim(self) -> int:
        return len(shape_of(self.value.type))

    def dim(self) -> int:
        """The number of dimensions (`Variable.dim()`, as eager Tensors have it)."""
        return self.ndim

    ndimension = dim

    @property
    def dtype(self) -> str:
        """Paddle's dtype (equals `'float32'`, ...; prints as `paddle.float32`)."""
        return dtype_of(elem_of(self.value.type))

    @property
    def op(self) -> Operator | None:
        """The operator that defines this variable (None for feeds and parameters)."""
        owner = self.value.owner
        if isinstance(owner, (pd.DataOp, pd.ParameterOp)) or not isinstance(owner, Operation):
            return None
        return Operator(self.block, owner)

    @property
    def trainable(self) -> bool:
        owner = self.value.owner
        return isinstance(owner, pd.ParameterOp) and bool(owner.trainable.value.data)

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __hash__(self) -> int:
        return id(self)

    def __iter__(self) -> Iterator[Variable]:
        """`x[0], x[1], ...` over a static first dimension.  Defined because
        `__getitem__` alone would make Python iterate until an IndexError that a
        dynamic dimension never raises."""
        dims = self.shape
        if not dims or dims[0] < 0:
            raise TypeError(
                f"cannot iterate over Variable '{self.name}' of shape {dims}: the first "
                "dimension must be static"
            )
        return (self[i] for i in range(dims[0]))

    def _set_error_clip(self, error_clip: Any) -> None:
        """Clip this variable's gradient as `append_backward` builds it (applied by
        the `error_clip_callback` callback; see `frontend/clip.py`)."""
        self.error_clip = error_clip

    def register_hook(self, hook: Any) -> Any:
        """Static programs cannot run Python gradient hooks: Paddle does it with a
        `py_func` op, which pullback does not have."""
        raise NotImplementedError(
            f"register_hook on static Variable '{self.name}': gradient hooks need Paddle's "
            "py_func op, which pullback does not support; use eager mode or an "
            "append_backward callback"
        )

    # `x[index]`, operators (`+ - * / @`, comparisons) and methods (`x.mean()`) are
    # attached by `frontend/install.py` from the op families.
    if TYPE_CHECKING:

        def __getitem__(self, index: Any) -> Variable: ...


class Parameter(Variable):
    """A trainable persistable variable (`fc_0.w_0`)."""


class Block:
    """Block 0 of a program: its ops and variables, looked up by name."""

    def __init__(self, program: Program, idx: int = 0) -> None:
        self.program = program
        self.idx = idx
        self._vars: dict[SSAValue, Variable] = {}

    @property
    def ir(self):
        """The xDSL block holding this block's ops."""
        return self.program.module.body.block

    @property
    def ops(self) -> list[Operator]:
        """The block's operators, in order, as Paddle's `Operator` views: the
        gradient ops of a filled backward region in place of the region op, and no
        feeds or parameters (Paddle's are variables, not operators)."""
        return block_operators(self, iter(self.ir.ops))

    @property
    def parent_idx(self) -> int:
        """-1: block 0 has no parent."""
        return -1

    def wrap(self, value: SSAValue) -> Variable:
        """The (unique) Variable of an SSA value."""
        var = self._vars.get(value)
        if var is None:
            cls = Parameter if isinstance(value.owner, pd.ParameterOp) else Variable
            var = cls(self, value)
            self._vars[value] = var
        return var

    def _iter_values(self) -> Iterator[SSAValue]:
        for op in self.ir.ops:
            yield from op.results

    @property
    def vars(self) -> dict[str, Variable]:
        """Named variables of the block (the latest definition of each name)."""
        out: dict[str, Variable] = {}
        for v in self._iter_values():
            n = value_name(v)
            if n is not None:
                out[n] = self.wrap(v)
        return out

    def var(self, name: str) -> Variable:
        """The variable called `name`; ValueError when there is none."""
        v = self.program._lookup(name)
        if v is None:
            raise ValueError(f"var {name} is not in this block")
        return self.wrap(v)

    def has_var(self, name: str) -> bool:
        return self.program._lookup(name) is not None

    # `create_parameter(name, shape, dtype, ...)` is attached by `frontend/install.py`
    # (`layers.block_create_parameter`: parameters need initializers and layers).

    def all_parameters(self) -> list[Parameter]:
        """The trainable parameters, in creation order."""
        return [
            self.wrap(op.out)  # type: ignore[misc]
            for op in self.ir.ops
            if isinstance(op, pd.ParameterOp) and op.trainable.value.data
        ]

    def append(self, op: Operation) -> Operation:
        """Append an op at the program's insertion point (normally block 0's end;
        inside a backward region while `append_backward` callbacks run)."""
        target = self.program._insertion or self.ir
        if isinstance(op, (pd.DataOp, pd.ParameterOp)):
            # Feeds and parameters belong to block 0 even when created while a
            # control-flow region is traced (`fc` inside a `cond` branch), as in Paddle.
            target = self.ir
        target.add_op(op)
        # Appending keeps the name indexes valid (they catch up lazily).
        self.program.version += 1
        return op

    def create_var(
        self,
        name: str | None = None,
        shape: Sequence[int] | None = None,
        dtype: Any = "float32",
        persistable: bool = False,
        stop_gradient: bool = False,
        **kwargs: Any,
    ) -> Variable:
        """Paddle's legacy `Block.create_var`: a variable declared by name, shape and
        dtype before an op defines it (programs built op by op with `append_op`).
        It stands for the latest definition of its name; read before any, it is a
        feed (`pd.data`) of the declared shape.  Paddle's other keywords
        (`lod_level`, `type`, ...) are accepted and have no effect here."""
        if name is None:
            from pullback.frontend import unique_name

            name = unique_name.generate("_generated_var")
        if self.program._lookup(name) is not None:
            return self.var(name)
        plain = to_dtype_name(dtype, "create_var")
        return DeclaredVariable(self, name, list(shape or []), plain, persistable, stop_gradient)

    def append_op(
        self,
        type: str,
        inputs: dict[str, Any] | None = None,
        outputs: dict[str, Any] | None = None,
        attrs: dict[str, Any] | None = None,
    ) -> Operation:
        """Paddle's legacy `Block.append_op`: add op `pd.<type>` reading `inputs`
        (slot -> Variable(s) or names, in slot order) and naming its results after
        `outputs`.  Writing to an existing name (`outputs={'Out': [g]}` with
        `inputs={'X': [g]}`) redefines that variable, as an in-place update does in
        Paddle; this is how `append_backward` callbacks clip gradients."""
        attrs = dict(attrs or {})
        legacy = _LEGACY_OPS.get(type)
        if legacy is not None:
            op_cls, fixed = legacy
            for key, only in fixed.items():
                if attrs.pop(key, only) != only:
                    raise ValueError(f"append_op(type={type!r}): only {key}={only} is supported")
        else:
            op_cls = _op_class(type)
        values = [self._value_of(v) for vs in (inputs or {}).values() for v in _listify(vs)]
        try:
            op = op_cls.make(*values, **attrs)
        except (VerifyException, TypeError) as e:
            raise ValueError(f"append_op(type={type!r}): {e}") from None
        names = [_name_of(v) for vs in (outputs or {}).values() for v in _listify(vs)]
        if names:
            pd.set_result_names(op, names[: len(op.results)])
        self.append(op)
        if legacy is not None:
            self.program.op_types[op] = type
        return op

    def _value_of(self, v: Any) -> SSAValue:
        if isinstance(v, Variable):
            return v.value
        if isinstance(v, str):
            return self.var(v).value
        raise TypeError(f"append_op: expected a Variable or a name, got {type(v).__name__}")

    def __repr__(self) -> str:
        return self.program.to_string()


class DeclaredVariable(Variable):
    """A variable `Block.create_var` declared before any op defines it: it stands
    for the latest definition of its name (the result an `append_op` names after
    it), and becomes a feed of the declared shape and dtype when read first."""

    def __init__(
        self, block: Block, name: str, shape: list[int], dtype: Any, persistable: bool, stop_gradient: bool
    ) -> None:
        self.block = block
        self._declared = (name, shape, dtype)
        self.stop_gradient = stop_gradient
        self.persistable = persistable

    @property  # type: ignore[override]
    def value(self) -> SSAValue:
        """The latest definition of the name (a feed is added if there is none)."""
        name, shape, dtype = self._declared
        v = self.block.program._lookup(name)
        if v is None:
            dims = [None if d is None or d < 0 else int(d) for d in shape]
            v = self.block.append(pd.DataOp.make(name, dims, dtype)).results[0]
        return v

    @value.setter
    def value(self, new: SSAValue) -> None:
        raise AttributeError("a declared variable follows its name; define it with append_op")

    @property
    def name(self) -> str:
        """The declared name."""
        return self._declared[0]

    @name.setter
    def name(self, new: str) -> None:
        raise AttributeError("a declared variable cannot be renamed")

    @property
    def shape(self) -> list[int]:
        """The defining op's shape once defined, else the declared one."""
        if self.block.program._lookup(self._declared[0]) is None:
            return [d if d is not None and d >= 0 else -1 for d in self._declared[1]]
        return super().shape

    @property
    def dtype(self) -> str:
        """The defining op's dtype once defined, else the declared one."""
        if self.block.program._lookup(self._declared[0]) is None:
            return DTYPE_BY_NAME[self._declared[2]]
        return super().dtype


_LEGACY_OPS: dict[str, tuple[type[pd.PdOp], dict[str, Any]]] = {
    "mul": (pd.MatmulOp, {"x_num_col_dims": 1, "y_num_col_dims": 1}),
}
"""Paddle 1.x operator types that `append_op` builds from another `pd` op: the op
class and the attributes accepted only at one value (then dropped)."""


def _listify(v: Any) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _name_of(v: Any) -> str:
    return v if isinstance(v, str) else v.name


def _op_class(type_name: str) -> type[pd.PdOp]:
    """The `pd` op class for a Paddle operator type (`'clip'` -> `pd.ClipOp`)."""
    for cls in pd.ALL_OPS:
        if cls.name == f"pd.{type_name}" and issubclass(cls, pd.PdOp):
            return cls
    raise ValueError(f"append_op: unknown operator type '{type_name}'")


class Program:
    """A static program: a `builtin.module` of `pd` ops (Paddle's block 0).

    `random_seed` (0: unset) seeds the program's random ops that have no seed of
    their own; unset, they draw from the global generator (`paddle.seed`)."""

    _global_seed = 0
    """The `random_seed` new programs start with (`Program.global_seed`)."""

    def __init__(self) -> None:
        self.module = ModuleOp([])
        self.blocks = [Block(self, 0)]
        self.version = 0
        self.random_seed = Program._global_seed
        self._feed_readers: list[Any] = []
        """Non-iterable `DataLoader.from_generator` loaders feeding this program (see
        `frontend/reader.py`): `Executor.run` asks them for the batches it is not fed."""
        self.op_types: weakref.WeakKeyDictionary[Operation, str] = weakref.WeakKeyDictionary()
        """Paddle's operator type of ops whose `pd` name differs (an `fc`'s `pd.matmul`
        is a `mul`, `paddle.reshape`'s `pd.reshape` a `reshape2`): what `append_backward`
        callbacks report."""
        self.folded_ops: weakref.WeakSet[Operation] = weakref.WeakSet()
        """Ops that Paddle's operator does inside the op consuming their result (a
        static fc's flattening reshape is part of Paddle's `mul`): `block.ops` leaves
        them out and shows their input in the consumer's slots."""
        self.grad_records: weakref.WeakKeyDictionary[Operation, list[GradOpRecord]] = (
            weakref.WeakKeyDictionary()
        )
        """The gradient operators each filled `pd.backward` op was built from (the
        autodiff pass's records, in order): `block.ops` lists them as Paddle's
        `<type>_grad` operators."""
        self._names: NameIndex | None = None
        self._insertion_names: NameIndex | None = None
        self._insertion: XBlock | None = None
        """Where new ops go when not at the end of block 0 (see `insertion_point`)."""
        self.passes: list[Any] = []
        """xDSL module passes the executor applies to each prepared copy of the
        program before autodiff (fleet's `data-parallel`); the program itself stays
        as the user built it."""

    def op_type(self, op: Operation) -> str:
        """Paddle's operator type of `op` (`pd.matmul` built by `fc` -> `mul`)."""
        return self.op_types.get(op) or op.name.split(".", 1)[-1]

    def global_seed(self, seed: int = 0) -> None:
        """Paddle's `Program.global_seed`: `seed` becomes the `random_seed` of this
        program and of every program created afterwards."""
        Program._global_seed = self.random_seed = int(seed)

    def global_block(self) -> Block:
        return self.blocks[0]

    def block(self, idx: int) -> Block:
        if idx != 0:
            raise IndexError(f"program has only block 0 (asked for block {idx})")
        return self.blocks[0]

    def current_block(self) -> Block:
        return self.blocks[0]

    @property
    def num_blocks(self) -> int:
        """The number of blocks (pullback programs have block 0 only)."""
        return len(self.blocks)

    def all_parameters(self) -> list[Parameter]:
        return self.global_block().all_parameters()

    def list_vars(self) -> list[Variable]:
        return list(self.global_block().vars.values())

    def clone(self, for_test: bool = False) -> Program:
        """A deep copy.  `for_test=True` gives the inference program: the backward
        regions and everything computed from gradients or overwriting persistable
        state (regularization, clipping, optimizer updates) are dropped, and every op
        declaring an `is_test` property (dropout, batch_norm, ...) is switched to
        inference behaviour."""
        p = Program()
        p.module = self.module.clone()
        p.random_seed = self.random_seed
        p.passes = list(self.passes)
        p._feed_readers = list(self._feed_readers)  # (Paddle's clone copies the `read` op too)
        mapping = dict(zip(self.module.walk(), p.module.walk()))
        for old, new in mapping.items():
            if old in self.op_types:
                p.op_types[new] = self.op_types[old]
            if old in self.folded_ops:
                p.folded_ops.add(new)
            if old in self.grad_records:
                p.grad_records[new] = [
                    dataclasses.replace(
                        rec,
                        forward_op=None if rec.forward_op is None else mapping.get(rec.forward_op),
                        ops=[mapping[o] for o in rec.ops if o in mapping],
                    )
                    for rec in self.grad_records[old]
                ]
        if for_test:
            _drop_training_ops(p.module.body.block)
            for op in p.module.walk():
                if isinstance(op, pd.PdOp) and "is_test" in type(op).prop_specs():
                    op.properties["is_test"] = pd.bool_attr(True)
        else:
            # The learning-rate schedule belongs to the training program's copies.
            for attr in ("lr_scheduler", "lr_var"):
                if attr in vars(self):
                    setattr(p, attr, getattr(self, attr))
        return p

    def to_string(self, generic: bool = False) -> str:
        """The program as `pd` IR text."""
        import io

        out = io.StringIO()
        Printer(stream=out, print_generic_format=generic).print_op(self.module)
        return out.getvalue()

    def __str__(self) -> str:
        return self.to_string()

    __repr__ = __str__

    # -- internal ------------------------------------------------------------------

    def _bump(self) -> None:
        """The program changed other than by appending ops (ops inserted, removed or
        renamed): new cache version, name tables rebuilt on their next use."""
        self.version += 1
        if self._names is not None:
            self._names.invalidate()
        if self._insertion_names is not None:
            self._insertion_names.invalidate()

    @contextlib.contextmanager
    def insertion_point(self, block: XBlock) -> Iterator[None]:
        """Append new ops to `block` (a backward region) inside the `with` block;
        names defined there are visible to `Block.var` meanwhile."""
        # Switching blocks changes no op: bump the version, keep the name indexes
        # (`_lookup` makes one for a new insertion block).
        old, self._insertion = self._insertion, block
        self.version += 1
        try:
            yield
        finally:
            self._insertion = old
            self.version += 1

    def _lookup(self, name: str) -> SSAValue | None:
        """The latest value named `name`: top-level values (backward results
        included), and the insertion block's values while one is active."""
        if self._insertion is not None:
            names = self._insertion_names
            if names is None or names.block is not self._insertion:
                names = self._insertion_names = NameIndex(self._insertion)
            v = names.lookup(name)
            if v is not None:
                return v
        top = self.module.body.block
        if self._names is None or self._names.block is not top:
            self._names = NameIndex(top)
        return self._names.lookup(name)

    def _rename(self, var: Variable, new: str) -> None:
        pd.set_value_name(var.value, new)
        self._bump()


def _drop_training_ops(block: XBlock) -> None:
    """Remove from `block` the backward regions and every op that reads a gradient
    (transitively) or redefines a persistable variable (optimizer updates, beta-power
    scales): what `clone(for_test=True)` leaves out."""
    persistable = {op.var_name.data for op in block.ops if isinstance(op, pd.ParameterOp)}
    dead: set[SSAValue] = set()
    doomed: list[Operation] = []
    for op in block.ops:
        if isinstance(op, (pd.ParameterOp, pd.DataOp)):
            continue
        names = [value_name(r) for r in op.results]
        # An op whose every named result redefines persistable state is an update
        # (optimizer step, beta-power scale); batch_norm also names its running
        # statistics like persistables but computes its output, so it stays.
        updates = any(n in persistable for n in names) and all(n is None or n in persistable for n in names)
        if (
            isinstance(op, pd.BackwardOp)
            or (isinstance(op, pd.PdOp) and op.WRITES_PERSISTABLE)
            or any(v in dead for v in op.operands)
            or updates
        ):
            dead.update(op.results)
            doomed.append(op)
    for op in reversed(doomed):
        # Fetch ops of earlier runs are not part of programs; nothing else can use
        # a doomed value, since its users are doomed too.
        op.detach()
        op.erase()


# ------------------------------------------------------------------ default programs

_main_program = Program()
_startup_program = Program()


def default_main_program() -> Program:
    """The program ops are added to outside `program_guard`."""
    return _main_program


def default_startup_program() -> Program:
    """The program parameter initializers are added to."""
    return _startup_program


def switch_main_program(p: Program) -> Program:
    global _main_program
    old, _main_program = _main_program, p
    return old


def switch_startup_program(p: Program) -> Program:
    global _startup_program
    old, _startup_program = _startup_program, p
    return old


@contextlib.contextmanager
def program_guard(main_program: Program, startup_program: Program | None = None) -> Iterator[None]:
    """Build into `main_program` (and `startup_program`) inside the `with` block."""
    if not isinstance(main_program, Program):
        raise TypeError(
            f"program_guard: main_program must be a Program, got {type(main_program).__name__}"
        )
    if startup_program is not None and not isinstance(startup_program, Program):
        raise TypeError(
            "program_guard: startup_program must be a Program, got "
            f"{type(startup_program).__name__}"
        )
    old_main = switch_main_program(main_program)
    old_startup = switch_startup_program(startup_program) if startup_program else None
    try:
        yield
    finally:
        switch_main_program(old_main)
        if old_startup is not None:
            switch_startup_program(old_startup)


def as_values(xs: Sequence[Any]) -> list[SSAValue]:
    """SSA values of Variables."""
    return [x.value for x in xs]
