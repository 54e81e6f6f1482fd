"""Every dtype fact in one table, and the one reading of a `dtype=` argument.

`DTYPE_TABLE` has a row per dtype Paddle names: its Paddle name, the other strings Paddle's
name table takes for it, its kind, numpy dtype, `VarDesc.VarType` spelling and the
xDSL element type pullback computes in (none for the dtypes pullback does not compute
in yet).  Each row is a `DType`, the object `paddle.float32` is: a `str` holding the
plain name, printing as Paddle prints it.  Every other dtype table (numpy by element
type, names by numpy dtype, `paddle.float32`...) derives from it, so a new dtype is a
new row (then kernels, VJP rules and lowerings for it).

`to_dtype(spec, api)` reads a `dtype=` argument as Paddle does
(`convert_np_dtype_to_dtype_`): a Paddle name (`'float32'`, any case, `'bool_'`,
`'uint16'` for bfloat16), a dtype object (`paddle.float32`), or anything numpy reads as
a dtype (`np.float32`, `np.dtype('float32')`, `'float'`, `'double'`, `'f4'`, Python's
`float` / `int` / `bool`, which are float64 / int64 / bool).  A spelling Paddle does
not take raises TypeError naming it; a dtype Paddle has but pullback does not compute
in (float16, bfloat16, uint8, ...) raises TypeError saying so, rather than computing
in another dtype.  (Some Paddle APIs check `dtype` against a narrower list first:
`to_tensor(dtype=float)` and `empty(dtype='float')` raise there; pullback reads every
`dtype=` argument the one way.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import f32, f64, i1, i32, i64
from xdsl.ir import Attribute


class DType(str):
    """One dtype Paddle names: the object `paddle.float32` is, and its row of facts.

    It is a `str` holding the plain name, so comparisons (`x.dtype == 'float32'`),
    dict lookups and formatting (`f"{x.dtype}"` gives `float32`) use the name; only
    `print`/`str`/`repr` add the `paddle.` prefix.  The rows of `DTYPE_TABLE` are the only
    instances (copies and pickles give the row back).
    """

    kind: str
    """numpy's kind letter of the values: `'f'` float, `'i'` signed int, `'u'`
    unsigned int, `'b'` bool, `'c'` complex (bfloat16 is `'f'`)."""
    aliases: tuple[str, ...]
    """Other strings Paddle's name table reads as this dtype (`'bool_'`, `'uint16'`)."""
    enum: str
    """Paddle's `core.VarDesc.VarType` spelling (`'FP32'`)."""
    _numpy: np.dtype[Any] | None
    _elem: Attribute | None

    def __new__(
        cls,
        name: str,
        kind: str = "",
        enum: str = "",
        numpy: Any = None,
        elem: Attribute | None = None,
        aliases: Iterable[str] = (),
    ) -> DType:
        self = super().__new__(cls, name)
        self.kind = kind
        self.enum = enum
        self.aliases = tuple(aliases)
        self._numpy = None if numpy is None else np.dtype(numpy)
        self._elem = elem
        return self

    @property
    def name(self) -> str:
        """The plain dtype name (`'float32'`)."""
        return str.__str__(self)

    @property
    def supported(self) -> bool:
        """Whether pullback computes in this dtype (it has an element type)."""
        return self._elem is not None

    @property
    def elem(self) -> Attribute:
        """The xDSL element type (`f32`; Paddle's bool is `i1`)."""
        if self._elem is None:
            raise TypeError(not_supported_message(self))
        return self._elem

    @property
    def numpy(self) -> np.dtype[Any]:
        """The numpy dtype of host arrays (and of the compiled code's buffers)."""
        if self._numpy is None:
            raise TypeError(f"dtype {self.name} has no numpy dtype")
        return self._numpy

    @property
    def size(self) -> int:
        """Bytes per element in memory (a bool takes one byte, as in numpy)."""
        return self.numpy.itemsize

    @property
    def short(self) -> str:
        """The element type as MLIR prints it (`'f32'`), the key of ABI descriptions."""
        return str(self.elem)

    def __str__(self) -> str:
        return f"paddle.{self.name}"

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (_row, (self.name,))


DTYPE_TABLE: tuple[DType, ...] = (
    # name, kind, VarType, numpy, element type (None: pullback does not compute in it yet)
    DType("float32", "f", "FP32", np.float32, f32),
    DType("float64", "f", "FP64", np.float64, f64),
    DType("int32", "i", "INT32", np.int32, i32),
    DType("int64", "i", "INT64", np.int64, i64),
    DType("bool", "b", "BOOL", np.bool_, i1, aliases=("bool_",)),
    DType("float16", "f", "FP16", np.float16),
    DType("bfloat16", "f", "BF16", np.uint16, aliases=("uint16",)),  # Paddle keeps bfloat16 bits in uint16
    DType("uint8", "u", "UINT8", np.uint8),
    DType("int8", "i", "INT8", np.int8),
    DType("int16", "i", "INT16", np.int16),
    DType("complex64", "c", "COMPLEX64", np.complex64),
    DType("complex128", "c", "COMPLEX128", np.complex128),
    DType("float8_e4m3fn", "f", "FP8_E4M3FN"),
    DType("float8_e5m2", "f", "FP8_E5M2"),
)
"""Every dtype Paddle names, pullback's own first (`paddle.float32, float64, int32,
int64, bool`), then those it does not compute in yet."""

DTYPES: tuple[DType, ...] = tuple(d for d in DTYPE_TABLE if d.supported)
"""The dtypes pullback computes in: the dialect's element types."""

_BY_SPELLING: dict[str, DType] = {s: d for d in DTYPE_TABLE for s in (d.name, *d.aliases)}
_BY_ANY_NUMPY: dict[np.dtype[Any], DType] = {d._numpy: d for d in DTYPE_TABLE if d._numpy is not None}

DTYPE_BY_NAME: dict[str, DType] = {d.name: d for d in DTYPES}
DTYPE_BY_ELEM: dict[Attribute, DType] = {d.elem: d for d in DTYPES}
DTYPE_BY_SHORT: dict[str, DType] = {d.short: d for d in DTYPES}
DTYPE_BY_NUMPY: dict[np.dtype[Any], DType] = {d.numpy: d for d in DTYPES}
NUMPY_BY_SHORT: dict[str, np.dtype[Any]] = {d.short: d.numpy for d in DTYPES}
"""numpy dtypes by the printed element type (`'f32'`), as ABI descriptions spell them."""
NAME_BY_NUMPY: dict[np.dtype[Any], str] = {d.numpy: d.name for d in DTYPES}
"""Plain Paddle names by numpy dtype (what `pd` op properties hold)."""

FLOAT_TYPES: tuple[Attribute, ...] = tuple(d.elem for d in DTYPES if d.kind == "f")
INT_TYPES: tuple[Attribute, ...] = tuple(d.elem for d in DTYPES if d.kind == "i")
FLOAT_NAMES: tuple[str, ...] = tuple(d.name for d in DTYPES if d.kind == "f")
"""The float dtypes pullback computes in (`'float32', 'float64'`)."""
INT_NAMES: tuple[str, ...] = tuple(d.name for d in DTYPES if d.kind == "i")
"""The integer dtypes pullback computes in (`'int32', 'int64'`)."""
PADDLE_FLOAT_NAMES: tuple[str, ...] = tuple(d.name for d in DTYPE_TABLE if d.kind == "f")
"""Every floating dtype Paddle has (what `paddle.is_floating_point` asks)."""
_FLOAT_ELEM_CLASSES = tuple(type(d.elem) for d in DTYPES if d.kind == "f")


def _row(name: str) -> DType:
    """The row of a Paddle name (what pickles of `DType`s call)."""
    return _BY_SPELLING[name]


def _supported_list() -> str:
    return ", ".join(d.name for d in DTYPES)


def not_supported_message(d: DType) -> str:
    """Why dtype `d` (a Paddle dtype without an element type) cannot be used."""
    return (
        f"unsupported dtype '{d.name}': Paddle's {d.name} is not supported by pullback yet "
        f"(it computes in {_supported_list()})"
    )


# ------------------------------------------------------------------ reading dtypes


def find_dtype(spec: object) -> DType | None:
    """The Paddle dtype `spec` spells, by Paddle's rule, or None when it spells none.

    A `DType`; a string Paddle's name table has (case and surrounding blanks
    ignored); else whatever numpy reads as a dtype Paddle has (`np.float32`,
    `np.dtype('int64')`, `'double'`, `float`, `int`, `bool`).  `None` is no dtype.
    """
    if isinstance(spec, DType):
        return spec
    if spec is None:
        return None
    if isinstance(spec, str):
        found = _BY_SPELLING.get(spec.lower().strip())
        if found is not None:
            return found
    elif not isinstance(spec, (type, np.dtype)):
        # (numpy would read the dtype off any object with a `.dtype`, a tensor: no spelling)
        return None
    try:
        dt = np.dtype(spec)  # type: ignore[call-overload]
    except (TypeError, ValueError, SyntaxError):
        return None
    return _BY_ANY_NUMPY.get(dt)


def to_dtype(spec: object, api: str = "dtype", default: str | None = None) -> DType:
    """The dtype pullback computes in that `spec` spells (see `find_dtype`); `default`'s
    when `spec` is None and the API has a default.

    Raises TypeError prefixed with `api` when `spec` spells no Paddle dtype, or one
    pullback does not compute in yet.
    """
    found = find_dtype(default if spec is None and default is not None else spec)
    if found is None:
        hint = ""
        if isinstance(spec, str) and find_dtype(spec.removeprefix("paddle.")) is not None:
            hint = f" ('{spec}' is how the dtype prints: pass {spec} or '{spec.removeprefix('paddle.')}')"
        raise TypeError(
            f"{api}: invalid dtype {spec!r}: expected a Paddle dtype, e.g. 'float32', "
            f"paddle.float32, np.float32 or float (pullback computes in {_supported_list()}){hint}"
        )
    if not found.supported:
        raise TypeError(f"{api}: {not_supported_message(found)}")
    return found


def to_dtype_name(spec: object, api: str = "dtype", default: str | None = None) -> str:
    """`to_dtype(spec, api, default)`'s plain name (`'float32'`), as `pd` op properties
    hold it."""
    return to_dtype(spec, api, default).name


def to_numpy_dtype(spec: object, api: str = "dtype", default: str | None = None) -> np.dtype[Any]:
    """`to_dtype(spec, api, default)`'s numpy dtype."""
    return to_dtype(spec, api, default).numpy


def dtype_for_array(dt: np.dtype[Any]) -> DType | None:
    """The dtype an eager tensor made from array data of numpy dtype `dt` holds: `dt`'s
    own when pullback computes in it; until the other Paddle dtypes are supported,
    other floats are held as float32 and other integers as int64 (an image's
    uint8 pixels); None for data of no numeric dtype."""
    found = DTYPE_BY_NUMPY.get(dt)
    if found is not None:
        return found
    if dt.kind == "f":
        return DTYPE_BY_NAME["float32"]
    if dt.kind in "iu":
        return DTYPE_BY_NAME["int64"]
    return None


# ------------------------------------------------------------ element types (IR)


def dtype_from_name(name: str) -> Attribute:
    """Map a Paddle dtype name (`'float32'`, `'int64'`, ...) to an xDSL element type."""
    found = DTYPE_BY_NAME.get(name)
    if found is not None:
        return found.elem
    other = _BY_SPELLING.get(name)
    if other is not None and not other.supported:
        raise ValueError(not_supported_message(other))
    raise ValueError(f"unsupported dtype '{name}'; expected one of {sorted(DTYPE_BY_NAME)}")


def dtype_name(elem: Attribute) -> str:
    """Map an xDSL element type to its Paddle dtype name."""
    info = DTYPE_BY_ELEM.get(elem)
    return info.name if info is not None else str(elem)


def dtype_of(elem: Attribute) -> DType:
    """The dtype object (`paddle.float32`) of an xDSL element type (one outside the
    table, which no `pd` value has, gets an object named after it)."""
    found = DTYPE_BY_ELEM.get(elem)
    return found if found is not None else DType(str(elem))


def is_float(elem: Attribute) -> bool:
    """True for the floating-point element types the dialect computes in."""
    return isinstance(elem, _FLOAT_ELEM_CLASSES)


__all__ = [
    "DTYPES",
    "DTYPE_BY_ELEM",
    "DTYPE_BY_NAME",
    "DTYPE_BY_NUMPY",
    "DTYPE_BY_SHORT",
    "DType",
    "FLOAT_NAMES",
    "FLOAT_TYPES",
    "INT_NAMES",
    "INT_TYPES",
    "NAME_BY_NUMPY",
    "NUMPY_BY_SHORT",
    "PADDLE_FLOAT_NAMES",
    "DTYPE_TABLE",
    "dtype_from_name",
    "dtype_name",
    "dtype_of",
    "find_dtype",
    "dtype_for_array",
    "is_float",
    "not_supported_message",
    "to_dtype",
    "to_dtype_name",
    "to_numpy_dtype",
]
