"""Shared machinery of the `pd` dialect: types, shape inference, Paddle names.

Every `pd` op derives from `PdOp`. An op states its typing rule once, as the class
method `infer(operand_types, props)`; that single rule serves three users:

* the verifier (`PdOp.verify_`) checks the op's result types against it;
* builders (`PdOp.make`) call it so that nobody ever spells a result type;
* the AD pass, which builds backward ops with `make` as well.

Paddle variable names (`fc_0.w_0`, `fc_0.w_0@GRAD`) live in the `name` property
(`names` for ops with several results).  They are the truth; SSA name hints are set
from them where xDSL allows, purely as decoration.
"""

from __future__ import annotations

import functools
import math
import re
import weakref
from dataclasses import dataclass
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    UNKNOWN_LOC,
    AnyFloat,
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.core import OpResult, SSAValues, Use
from xdsl.irdl import (
    IRDLOperation,
    OptionalDef,
    ParsePropInAttrDict,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

# The dtype facts live in `dtypes.py`; these are re-exported for modules that read
# them from `pd.base`.
from pullback.dialects.pd.dtypes import (
    DTYPE_BY_ELEM,
    DTYPE_BY_NAME,
    DTYPE_BY_NUMPY,
    DTYPE_BY_SHORT,
    DTYPES,
    FLOAT_TYPES,
    INT_TYPES,
    COMPLEX_TYPES,
    dtype_from_name,
    dtype_name,
    is_complex,
    is_float,
    is_inexact,
)

DYN = DYNAMIC_INDEX
"""A dynamic dimension (`?`) in a shape tuple."""

Shape = tuple[int, ...]



# --------------------------------------------------------------------------- types


@functools.lru_cache(maxsize=65536)
def _tensor_type(elem: Attribute, shape: tuple[int, ...]) -> TensorType[Any]:
    return TensorType(elem, shape)


def tensor_type(elem: Attribute, shape: Sequence[int]) -> TensorType[Any]:
    """`TensorType(elem, shape)`, memoized: xDSL verifies every attribute it builds,
    and typing rules build the same few types over and over (attributes are
    immutable, so sharing them is safe)."""
    return _tensor_type(elem, tuple(int(d) for d in shape))


def tensor(shape: Sequence[int | None], elem: Attribute = f32) -> TensorType[Any]:
    """A tensor type; `None` or `-1` in `shape` means a dynamic dimension."""
    return tensor_type(elem, [DYN if d is None or d < 0 else d for d in shape])


def shape_of(t: Attribute) -> Shape:
    """The shape of a tensor type as a tuple (`DYN` for `?`)."""
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def elem_of(t: Attribute) -> Attribute:
    """The element type of a tensor type."""
    assert isinstance(t, TensorType)
    return t.get_element_type()


def fmt_shape(shape: Sequence[int]) -> str:
    """Render a shape as Paddle prints it, with `?` for dynamic dimensions."""
    return "[" + ", ".join("?" if d == DYN else str(d) for d in shape) + "]"


def dims_compatible(a: int, b: int) -> bool:
    """Two dimensions agree when equal or when either is dynamic."""
    return a == DYN or b == DYN or a == b


def shapes_compatible(a: Sequence[int], b: Sequence[int]) -> bool:
    """Shapes agree when ranks match and every dimension is compatible."""
    return len(a) == len(b) and all(dims_compatible(x, y) for x, y in zip(a, b))


def broadcast_shapes(
    x: Sequence[int], y: Sequence[int], axis: int = -1, *, op: str = "pd"
) -> Shape:
    """Paddle's elementwise broadcasting.

    `axis == -1` is numpy broadcasting (right-aligned).  Otherwise `y` (of rank at most
    rank(x)) is aligned with `x` starting at dimension `axis`, as Paddle's legacy
    `elementwise_*` ops do.  A dynamic dimension against a static `n > 1` gives `n`.
    """
    x, y = tuple(x), tuple(y)
    if axis != -1 and len(x) != len(y):
        # Paddle aligns the lower-rank operand into the higher-rank one at `axis`.
        big, small = (x, y) if len(x) > len(y) else (y, x)
        if not 0 <= axis <= len(big) - len(small):
            raise VerifyException(
                f"'{op}': axis={axis} cannot align shape {fmt_shape(small)} "
                f"with shape {fmt_shape(big)}"
            )
        small = (1,) * axis + small + (1,) * (len(big) - len(small) - axis)
        x, y = (big, small) if len(x) > len(y) else (small, big)
    rank = max(len(x), len(y))
    xs = (1,) * (rank - len(x)) + x
    ys = (1,) * (rank - len(y)) + y
    out: list[int] = []
    for a, b in zip(xs, ys):
        if a == b:
            out.append(a)
        elif a == 1:
            out.append(b)
        elif b == 1:
            out.append(a)
        elif a == DYN:
            out.append(b)
        elif b == DYN:
            out.append(a)
        else:
            raise VerifyException(
                f"'{op}': operand shapes {fmt_shape(x)} and {fmt_shape(y)} "
                "are not broadcastable"
            )
    return tuple(out)


def dynamic_broadcast_error(
    op: str,
    static: Sequence[int],
    concrete: Sequence[int],
    out: Sequence[int],
    out_dims: Sequence[int | None],
) -> str | None:
    """Why a run-time operand shape breaks the rule that a dynamic dimension is never
    broadcast at run time, or None when it does not.

    Typing takes a `?` facing another size to equal it (`broadcast_shapes`), and so do
    the VJP rules and the compiled code: were a `?` 1 at run time, broadcasting it
    would make gradients (and compiled loops) silently wrong.  `static` and
    `concrete` are the operand's declared and run-time shapes, `out` the run-time
    result shape and `out_dims[j]` the result dimension operand dimension `j` lines
    up with (None: none).  Every backend checks this before computing.
    """
    for j, (s, c, k) in enumerate(zip(static, concrete, out_dims)):
        if k is not None and s == DYN and c != out[k]:
            return (
                f"'{op}': an operand of shape {list(concrete)} would be broadcast along its "
                f"dynamic dimension {j} to {list(out)}; pullback never broadcasts a dimension "
                "declared dynamic (?): feed equal sizes there, or declare the size-1 "
                "dimension statically"
            )
    return None


def normalize_axis(axis: int, rank: int, op: str) -> int:
    """Map a possibly negative axis into `[0, rank)`, or raise a VerifyException."""
    if not -max(rank, 1) <= axis < max(rank, 1):
        raise VerifyException(f"'{op}': axis {axis} is out of range for rank {rank}")
    return axis % max(rank, 1)


# ------------------------------------------------------------------- attributes


def i64_attr(v: int) -> IntegerAttr[IntegerType]:
    """A 64-bit integer attribute."""
    return IntegerAttr(int(v), i64)


def f64_attr(v: float) -> FloatAttr[AnyFloat]:
    """A 64-bit float attribute (Paddle attributes are stored in double precision)."""
    return FloatAttr(float(v), f64)


def bool_attr(v: bool) -> BoolAttr:
    """A boolean attribute."""
    return BoolAttr.from_bool(bool(v))


def ints_attr(vs: Sequence[int]) -> DenseArrayBase[Any]:
    """An array of integers, printed as `array<i64: 1, 2>`."""
    return DenseArrayBase.from_list(i64, [int(v) for v in vs])


def strs_attr(vs: Sequence[str]) -> ArrayAttr[StringAttr]:
    """An array of strings."""
    return ArrayAttr([StringAttr(v) for v in vs])


def to_attr(value: Any) -> Attribute:
    """Convert a Python property value to the attribute form the dialect uses."""
    if isinstance(value, str) and type(value) is not str:
        value = str.__str__(value)  # e.g. a DType: attributes hold the plain name
    if isinstance(value, list) and any(isinstance(v, float) for v in value):
        # not cached: [0.0, 0.0] and [0, 0] are equal keys, but a float array and an
        # int array (a reshape's shape) are different attributes
        return _to_attr(value)
    key = tuple(value) if isinstance(value, list) else value
    try:
        return _to_attr_cached(type(value), key)  # type: ignore[arg-type]  # (mypy: a class is Hashable)
    except TypeError:  # unhashable
        return _to_attr(value)


@functools.lru_cache(maxsize=16384)
def _to_attr_cached(kind: type, key: Any) -> Attribute:
    # `kind` keeps 1, 1.0 and True apart (they hash equal).
    return _to_attr(list(key) if kind is list else key)


def _to_attr(value: Any) -> Attribute:
    if isinstance(value, Attribute):
        return value
    if isinstance(value, bool):
        return bool_attr(value)
    if isinstance(value, int):
        return i64_attr(value)
    if isinstance(value, float):
        return f64_attr(value)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, (list, tuple)):
        if not value:
            return ints_attr([])  # empty lists are shapes and axes far more often
        if all(isinstance(v, str) for v in value):
            return strs_attr(value)
        if all(isinstance(v, (int,)) and not isinstance(v, bool) for v in value):
            return ints_attr(value)
        if all(isinstance(v, float) for v in value):  # (prior_box's sizes and ratios)
            return DenseArrayBase.from_list(f64, list(value))
    raise TypeError(f"cannot express {value!r} as a pd attribute")


def from_attr(attr: Attribute) -> Any:
    """Convert a dialect attribute back to a plain Python value."""
    if isinstance(attr, IntegerAttr):
        v = attr.value.data
        return bool(v) if attr.type == i1 else int(v)
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, IntAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        if isinstance(attr.elt_type, IntegerType):
            return [int(v) for v in attr.get_values()]
        return [float(v) for v in attr.get_values()]
    if isinstance(attr, ArrayAttr):
        return [from_attr(a) for a in attr.data]
    return attr


# ------------------------------------------------------------------------- names

_HINT_OK = re.compile(r"^[A-Za-z_][A-Za-z0-9_.$-]*$")


def _hint_for(name: str) -> str | None:
    """An SSA name hint for a Paddle name, where xDSL accepts its characters."""
    # '@' is not a hint character: gradient names (`x@GRAD`, one per gradient AD
    # makes) get none, without running the pattern.
    if name.endswith("@GRAD"):
        return None
    return name if _HINT_OK.match(name) else None


def result_names(op: Operation) -> list[str | None]:
    """The Paddle variable names of an op's results (None where unnamed)."""
    props = op.properties
    if "names" in props:
        names = from_attr(props["names"])
        return [n if n else None for n in names] + [None] * (len(op.results) - len(names))
    if "name" in props and len(op.results) == 1:
        return [from_attr(props["name"])]
    return [None] * len(op.results)


def value_name(value: SSAValue) -> str | None:
    """The Paddle variable name of a value: its defining op's name property."""
    owner: Operation | Block
    if type(value) is OpResult:
        owner = value.op  # (no ABC isinstance: AD asks this for every value it touches)
    else:
        parent = value.owner
        if not isinstance(parent, Operation):
            return None
        owner = parent
    props = owner.properties
    # Fast path (AD asks this for every value it touches): a single `name`.
    name = props.get("name")
    if name is not None and "names" not in props and len(owner.results) == 1:
        return name.data  # type: ignore[attr-defined]
    names = props.get("names")
    if isinstance(names, ArrayAttr):
        # One entry, not the whole list: a backward op names one result per parameter.
        index: int = value.index  # type: ignore[attr-defined]
        entries = names.data
        return entries[index].data or None if index < len(entries) else None  # type: ignore[attr-defined]
    return result_names(owner)[value.index]  # type: ignore[attr-defined]


def _create(
    cls: type[_OpT], operands: Sequence[SSAValue], result_types: Sequence[Attribute], properties: dict[str, Attribute]
) -> _OpT:
    """`cls.create(operands=..., result_types=..., properties=...)` for an op without
    regions or successors, in half the time: what `Operation.__init__` does for such
    an op, without its generic steps for successors, regions, attributes and the
    old operands' uses (an op is made for every gradient and every lowered value:
    `autodiff` on 5,000 ops makes 11,700).  The default properties IRDL's post-init
    fills in are filled in from a list made once per class;
    `tests/unit/dialects/test_op_create.py` checks the result equals `create`'s."""
    fill = cls.__dict__.get("_pd_fill")
    if fill is None:
        irdl = cls.get_irdl_definition()
        plain = not irdl.regions and not irdl.successors and not any(
            not isinstance(d, OptionalDef) and d.default_value is not None for _, d in irdl.attributes.items()
        )
        # IRDL's post-init fills these defaults in; done here from a list made once.
        fill = cls._pd_fill = (plain, [  # type: ignore[attr-defined]
            (k, d.default_value) for k, d in irdl.properties.items()
            if not isinstance(d, OptionalDef) and d.default_value is not None
        ])
    if not fill[0]:
        return cls.create(operands=list(operands), result_types=result_types, properties=properties)
    op = cls.__new__(cls)
    values = SSAValues(operands)
    uses = tuple([Use(op, i) for i in range(len(values))])
    for v, use in zip(values, uses):
        v.add_use(use)
    op._operands = values
    op._operand_uses = uses
    op.results = SSAValues([OpResult(t, op, i) for i, t in enumerate(result_types)])
    props = dict(properties)
    for k, default in fill[1]:
        if k not in props:
            props[k] = default
    op.properties = props
    op.attributes = {}
    op.location = UNKNOWN_LOC
    return op


class RenameWatcher(Protocol):
    """Told of renames in a block it watches (`watch_renames`)."""

    def renamed(self, op: Operation) -> None:
        """`op`, a named op of the watched block, has just been given other names."""


_rename_watchers: weakref.WeakKeyDictionary[Block, weakref.WeakSet[Any]] = weakref.WeakKeyDictionary()


def watch_renames(block: Block, watcher: RenameWatcher) -> None:
    """Call `watcher.renamed(op)` whenever an op directly in `block` that had names
    gets other ones (`set_result_names`; naming a fresh op does not count).  Both are
    held weakly.  Name indexes (`frontend/name_index.py`) use it to stay exact without
    rescanning the block."""
    _rename_watchers.setdefault(block, weakref.WeakSet()).add(watcher)


def set_result_names(op: Operation, names: Sequence[str | None]) -> None:
    """Give an op's results Paddle names (and matching SSA name hints)."""
    props = op.properties
    renamed = ("name" in props or "names" in props) and result_names(op) != list(names)
    if len(op.results) == 1 and not isinstance(op, MultiResultNames):
        if names[0] is not None:
            op.properties["name"] = StringAttr(names[0])
    else:
        op.properties["names"] = strs_attr([n or "" for n in names])
    for res, n in zip(op.results, names):
        if n is not None:
            res.name_hint = _hint_for(n)
    if renamed and op.parent is not None:
        for watcher in list(_rename_watchers.get(op.parent, ())):
            watcher.renamed(op)


def set_value_name(value: SSAValue, name: str) -> None:
    """Rename one result value (keeps the other results' names)."""
    owner = value.owner
    assert isinstance(owner, Operation)
    if len(owner.results) == 1:
        # (No decoding of the old names: every gradient AD makes is named here.)
        set_result_names(owner, [name])
        return
    names = result_names(owner)
    names[value.index] = name  # type: ignore[attr-defined]
    set_result_names(owner, names)


def restore_name_hints(op: Operation) -> None:
    """Set SSA name hints from the `name`/`names` properties (used after parsing)."""
    for res, n in zip(op.results, result_names(op)):
        if n is not None and res.name_hint is None:
            res.name_hint = _hint_for(n)


# --------------------------------------------------------------------------- ops


class MultiResultNames:
    """Marker mixin: the op names its results with a `names` array property."""


_OpT = TypeVar("_OpT", bound="PdOp")

_REQUIRED = object()
_NAME_PROPS = ("name", "names")


@dataclass(frozen=True)
class Domain:
    """The real values an operand may hold for its op's result and derivative to be
    finite (an op's `DOMAIN` fact, per operand): the interval from `lo` to `hi`, open at
    an end unless `lo_closed`/`hi_closed`, less the points `excluded`.  `Domain()` is
    every real number.

    ```python
    Domain(0.0)                     # log, sqrt: x > 0
    Domain(-1.0, 1.0)               # asin, acos: -1 < x < 1
    Domain(excluded=(0.0,))         # a divisor: y != 0
    ```
    """

    lo: float = -math.inf
    hi: float = math.inf
    lo_closed: bool = False
    hi_closed: bool = False
    excluded: tuple[float, ...] = ()

    @property
    def unbounded(self) -> bool:
        """Every real number is in the domain."""
        return self.lo == -math.inf and self.hi == math.inf and not self.excluded

    def contains(self, values: Any, margin: float = 0.0) -> np.ndarray:
        """Elementwise: each value lies in the domain; for `margin > 0`, more than
        `margin` inside its ends and away from its excluded points (NaN never lies in it)."""
        a = np.asarray(values)
        lo, hi = self.lo + margin, self.hi - margin
        with np.errstate(invalid="ignore"):
            ok = (a >= lo if self.lo_closed and not margin else a > lo) & (
                a <= hi if self.hi_closed and not margin else a < hi)
            for p in self.excluded:
                ok &= np.abs(a - p) > margin
        return np.asarray(ok)

    def interval(self, margin: float = 0.0, lo: float = -math.inf, hi: float = math.inf) -> tuple[float, float]:
        """`(lo, hi)` narrowed to lie `margin` inside the domain's ends: where to draw
        values from (the excluded points are not cut out: callers that draw from
        the whole interval keep `margin` away from them themselves).  Raises
        ValueError when nothing is left."""
        low, high = float(max(self.lo + margin, lo)), float(min(self.hi - margin, hi))
        if not low < high:
            raise ValueError(f"{self} holds no interval {margin} inside its ends within ({lo}, {hi})")
        return low, high

    def __str__(self) -> str:
        text = f"{'[' if self.lo_closed else '('}{self.lo:g}, {self.hi:g}{']' if self.hi_closed else ')'}"
        return text + "".join(f" \\ {{{p:g}}}" for p in self.excluded)


REALS = Domain()
"""Every real number: the domain of an operand its op does not restrict."""


class OpFacts:
    """Facts about an op class that passes and backends need beyond its typing rule,
    declared with the value of an ordinary pure tensor op (`PdOp` and the region ops
    of `control.py` carry them; the family modules set them on the ops they concern).
    """

    HOST_ONLY: ClassVar[str | None] = None
    """Why the op always runs on the host interpreter and is never lowered to native
    code (the reason is shown to users), or None for an op native code computes."""

    EXPENSIVE: ClassVar[bool] = False
    """Costly to recompute (a transcendental function, a division): fusion, which
    recomputes an elementwise value in each of its readers, counts it 4 times."""

    POINTWISE: ClassVar[bool] = False
    """Each result element is computed from operand elements the indices pick by a
    fixed map (elementwise math, broadcasts, transposes, fills, optimizer updates):
    the lowering builds it from a scalar body and fuses it into its readers, and
    replaying it costs O(its result) (`recompute`'s cost model).  The lowering
    registers a scalar body exactly for these ops (`lowering/registry.py`, `@pointwise`)."""

    VIEW: ClassVar[bool] = False
    """The result holds operand 0's elements in the same row-major order (a reshape):
    the lowering makes it a view of the operand's buffer, no copy, so a write to the
    operand's buffer is a write to the result."""

    WRITES_PERSISTABLE: ClassVar[bool] = False
    """The results overwrite persistables (optimizer updates): the op is kept even
    when nothing reads its results, and its results are never fused into readers."""

    COMPLEX: ClassVar[bool] = False
    """The op takes and makes complex64/complex128 tensors (computed by the host
    interpreter's numpy kernel; the compiled backends refuse complex values).  Only
    ops declaring it do: any other op given or inferring a complex tensor is refused
    by `PdOp.make` and the verifier (`refuse_complex`), so an op whose meaning or VJP
    rule was written for real numbers only (max, relu, comparisons by order) never
    computes a silently wrong complex result.  Holomorphic and real-linear ops set
    it; their real-mode VJP rules serve complex values conjugated around
    (`passes/vjp/__init__.py`, `conjugated`)."""

    DOMAIN: ClassVar[Mapping[str, Domain]] = {}
    """The values each restricted operand (by operand name) may hold for the result
    and its derivative to be finite (`{"x": Domain(-1.0)}` for log1p); an operand not
    listed takes any real number.  Tests draw their inputs from it: the fuzzer, the
    per-op tests and the GPU test programs (`input_domain`)."""

    @classmethod
    def input_domain(cls, operand: str) -> Domain:
        """The declared domain of the operand named `operand` (`REALS` if none)."""
        return cls.DOMAIN.get(operand, REALS)


class PdOp(IRDLOperation, OpFacts):
    """Base of every `pd` op: one typing rule serves verifier and builders.

    Subclasses declare their properties with `prop_def`/`opt_prop_def` (defaults via
    `default_value`) and implement `infer`.  `make(*operands, name=..., **props)`
    takes Python property values and makes a fully typed op.

    Facts about an op that passes and backends need beyond its typing rule are the
    class attributes of `OpFacts` (`HOST_ONLY`, `EXPENSIVE`, `VIEW`,
    `WRITES_PERSISTABLE`, `DOMAIN`), set by the family modules on the ops they concern.
    """

    @classmethod
    def infer(
        cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]
    ) -> list[Attribute]:
        """Result types for these operand types and (Python-valued) properties.

        Raises VerifyException naming the op and the mismatch when they do not fit.
        """
        raise NotImplementedError(f"{cls.__name__} does not define infer()")

    @classmethod
    def prop_specs(cls) -> dict[str, Any]:
        """Declared properties (other than names) with their Python defaults.

        The value is the default, None for an optional property without default,
        or the `_REQUIRED` sentinel for a property that must be given.
        """
        cached = cls.__dict__.get("_pd_prop_specs")
        if cached is not None:
            return cached
        specs: dict[str, Any] = {}
        for key, pdef in cls.get_irdl_definition().properties.items():
            if key in _NAME_PROPS:
                continue
            if pdef.default_value is not None:
                specs[key] = from_attr(pdef.default_value)
            elif isinstance(pdef, OptionalDef):
                specs[key] = None
            else:
                specs[key] = _REQUIRED
        cls._pd_prop_specs = specs  # type: ignore[attr-defined]  # a per-class cache, read from __dict__
        return specs

    def prop(self, key: str) -> Any:
        """A property's Python value (its declared default when absent)."""
        if key in self.properties:
            return from_attr(self.properties[key])
        default = type(self).prop_specs().get(key)
        return None if default is _REQUIRED else default

    def py_props(self) -> dict[str, Any]:
        """All declared properties as Python values."""
        return {k: self.prop(k) for k in type(self).prop_specs()}

    @classmethod
    def make(
        cls: type[_OpT],
        *operands: SSAValue,
        name: str | Sequence[str | None] | None = None,
        **props: Any,
    ) -> _OpT:
        """Create a typed op from operands and Python property values."""
        specs = cls.prop_specs()
        if props:
            unknown = set(props) - set(specs)
            if unknown:
                raise TypeError(f"{cls.name}: unknown properties {sorted(unknown)}")
            full = {**specs, **props}
            # Defaults stay implicit, as MLIR prints them: the IR reads like the call.
            attrs = {k: to_attr(v) for k, v in props.items() if v is not None and v != specs[k]}
        else:
            full, attrs = specs, {}
        if _REQUIRED in full.values():
            missing = [k for k, v in full.items() if v is _REQUIRED]
            raise TypeError(f"{cls.name}: missing properties {missing}")
        operand_types = [o.type for o in operands]
        result_types = cls.infer(operand_types, full)
        if not cls.COMPLEX:
            refuse_complex(cls.name, operand_types, result_types)
        op = _create(cls, operands, result_types, attrs)
        if name is not None:
            set_result_names(op, [name] if isinstance(name, str) else list(name))
        return op

    def verify_(self) -> None:
        for t in self.operand_types:
            if not isinstance(t, TensorType):
                raise VerifyException(f"'{self.name}': operands must be tensors, got {t}")
        expected = type(self).infer(list(self.operand_types), self.py_props())
        if not self.COMPLEX:
            refuse_complex(self.name, self.operand_types, self.result_types)
        if len(expected) != len(self.results):
            raise VerifyException(
                f"'{self.name}': expected {len(expected)} results, got {len(self.results)}"
            )
        for i, (want, got) in enumerate(zip(expected, self.result_types)):
            if not isinstance(got, TensorType) or not isinstance(want, TensorType):
                raise VerifyException(f"'{self.name}': result #{i} must be a tensor")
            if elem_of(want) != elem_of(got) or not shapes_compatible(
                shape_of(want), shape_of(got)
            ):
                raise VerifyException(
                    f"'{self.name}': result #{i} has type {got}, "
                    f"but the operands imply {want}"
                )


class PureOp(PdOp):
    """A side-effect-free op with one result named by the optional `name` property:
    most of the dialect.  Subclasses declare operands, properties and a format."""

    var_name = opt_prop_def(StringAttr, prop_name="name")
    out = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)


# ----------------------------------------------------------------- small checks


def declare_complex(*op_classes: type[OpFacts]) -> None:
    """Declare that these ops take complex tensors (`OpFacts.COMPLEX`): said once per
    family module, next to the ops."""
    for cls in op_classes:
        cls.COMPLEX = True


def refuse_complex(op: str, operand_types: Sequence[Attribute], result_types: Sequence[Attribute]) -> None:
    """Raise naming `op` when one of these types is a complex tensor (for ops that do
    not declare `COMPLEX`)."""
    for t in (*operand_types, *result_types):
        elem = t.get_element_type() if isinstance(t, TensorType) else None
        if elem is not None and elem in COMPLEX_TYPES:
            raise VerifyException(
                f"'{op}': {dtype_name(elem)} tensors are not supported by this op "
                f"(pullback computes complex numbers in the ops that declare them)"
            )


def expect_float(op: str, what: str, t: Attribute) -> None:
    """Raise unless `t` is a tensor of f32/f64."""
    if not is_float(elem_of(t)):
        raise VerifyException(f"'{op}': {what} must be float32 or float64, got {t}")


def expect_inexact(op: str, what: str, t: Attribute) -> None:
    """Raise unless `t` is a tensor of a float or complex dtype (ops defined on
    complex numbers too)."""
    if not is_inexact(elem_of(t)):
        raise VerifyException(f"'{op}': {what} must be a float or complex tensor, got {t}")


def expect_same_elem(op: str, types: Sequence[Attribute]) -> Attribute:
    """Raise unless all tensors share one element type; return it."""
    first = elem_of(types[0])
    if any(elem_of(t) != first for t in types[1:]):
        raise VerifyException(
            f"'{op}': operands must have the same dtype, got "
            + ", ".join(dtype_name(elem_of(t)) for t in types)
        )
    return first


def expect_rank(op: str, what: str, t: Attribute, *ranks: int) -> Shape:
    """Raise unless the tensor's rank is one of `ranks`; return its shape."""
    s = shape_of(t)
    if len(s) not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise VerifyException(f"'{op}': {what} must have rank {want}, got {fmt_shape(s)}")
    return s


def expect_operands(op: str, types: Sequence[Attribute], n: int) -> None:
    """Raise unless exactly `n` operands were given."""
    if len(types) != n:
        raise VerifyException(f"'{op}': expected {n} operands, got {len(types)}")


__all__ = [
    # re-exported from `dtypes.py` (their home)
    "DTYPES",
    "DTYPE_BY_ELEM",
    "DTYPE_BY_NAME",
    "DTYPE_BY_NUMPY",
    "DTYPE_BY_SHORT",
    "DYN",
    "FLOAT_TYPES",
    "INT_TYPES",
    "COMPLEX_TYPES",
    "Domain",
    "MultiResultNames",
    "OpFacts",
    "PdOp",
    "PureOp",
    "REALS",
    "Shape",
    "bool_attr",
    "broadcast_shapes",
    "dims_compatible",
    "dtype_from_name",
    "dtype_name",
    "dynamic_broadcast_error",
    "elem_of",
    "expect_float",
    "expect_inexact",
    "expect_operands",
    "expect_rank",
    "expect_same_elem",
    "refuse_complex",
    "declare_complex",
    "f32",
    "f64",
    "f64_attr",
    "fmt_shape",
    "from_attr",
    "i1",
    "i32",
    "i64",
    "i64_attr",
    "ints_attr",
    "is_complex",
    "is_float",
    "is_inexact",
    "normalize_axis",
    "restore_name_hints",
    "RenameWatcher",
    "result_names",
    "set_result_names",
    "watch_renames",
    "set_value_name",
    "shape_of",
    "shapes_compatible",
    "strs_attr",
    "tensor",
    "tensor_type",
    "to_attr",
    "value_name",
]
