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
in (float8) raises TypeError saying so, rather than computing in another dtype.

complex64 and complex128 (`complex<f32>`, `complex<f64>`) are computed by the host
interpreter in eager mode; the compiled backends compile a complex program as real
pairs (the `complex-to-real` pass), and one holding a complex op the pass has no
rule for runs on the interpreter, with a warning naming it.

float16 and bfloat16 are stored in 16 bits and computed in float32, each op's result
rounded to nearest even (`DType.compute`; the interpreter in `runtime/interpreter.py`,
compiled code through `lowering/widen.py`); bfloat16 host data is its bits in numpy
uint16 arrays, as Paddle's (`dialects/bfloat16.py`).  uint8's element type is `ui8`.
Type promotion (`promote_types`, `scalar_result_dtype`) and the default float dtype
(`get_default_dtype`/`set_default_dtype`) are here too.  (Some Paddle APIs check `dtype` against a narrower list first:
`to_tensor(dtype=float)` and `empty(dtype='float')` raise there; pullback reads every
`dtype=` argument the one way.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ComplexType, IntegerType, Signedness, bf16, f16, f32, f64, i1, i8, i16, i32, i64
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
    def compute(self) -> np.dtype[Any]:
        """The numpy dtype values of this dtype are computed in: float32 for the 16-bit
        floats (stored narrow, each result rounded to nearest even), the storage dtype
        for every other."""
        if self.kind == "f" and self.numpy.itemsize == 2:
            return np.dtype(np.float32)
        return self.numpy

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


UI8 = IntegerType(8, Signedness.UNSIGNED)
"""uint8's element type (prints `ui8`)."""
C64 = ComplexType(f32)
"""complex64's element type (`complex<f32>`: two float32 parts, numpy's complex64 layout)."""
C128 = ComplexType(f64)
"""complex128's element type (`complex<f64>`)."""

DTYPE_TABLE: tuple[DType, ...] = (
    # name, kind, VarType, numpy, element type (None: pullback does not compute in it yet)
    DType("float32", "f", "FP32", np.float32, f32),
    DType("float64", "f", "FP64", np.float64, f64),
    DType("int32", "i", "INT32", np.int32, i32),
    DType("int64", "i", "INT64", np.int64, i64),
    DType("bool", "b", "BOOL", np.bool_, i1, aliases=("bool_",)),
    DType("float16", "f", "FP16", np.float16, f16),
    # Paddle keeps bfloat16 values as their 16 bits in numpy uint16 arrays (`numpy()`
    # gives them, `to_tensor` of a uint16 array is bfloat16): so does pullback
    # (`dialects/bfloat16.py` converts, rounding to nearest even).
    DType("bfloat16", "f", "BF16", np.uint16, bf16, aliases=("uint16",)),
    # uint8 is the one unsigned type: `ui8` (signless `i8` is int8), so that
    # conversions, comparisons, division, max and min know it is unsigned.
    DType("uint8", "u", "UINT8", np.uint8, UI8),
    DType("int8", "i", "INT8", np.int8, i8),
    DType("int16", "i", "INT16", np.int16, i16),
    # complex values: numpy's complex arithmetic on the interpreter; compiled code
    # holds them as real pairs (`passes/complex_to_real.py`).
    DType("complex64", "c", "COMPLEX64", np.complex64, C64),
    DType("complex128", "c", "COMPLEX128", np.complex128, C128),
    DType("float8_e4m3fn", "f", "FP8_E4M3FN"),
    DType("float8_e5m2", "f", "FP8_E5M2"),
)
"""Every dtype Paddle names, the five of pullback 0.1 first (`paddle.float32, float64,
int32, int64, bool`), then the low-precision and small integer ones, complex, then those it does not compute in yet (float8)."""

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
INT_TYPES: tuple[Attribute, ...] = tuple(d.elem for d in DTYPES if d.kind in "iu")
"""Every integer element type (signed and uint8's `ui8`; bool's `i1` is not one)."""
FLOAT_NAMES: tuple[str, ...] = tuple(d.name for d in DTYPES if d.kind == "f")
"""The float dtypes pullback computes in (`'float32', 'float64', 'float16', 'bfloat16'`)."""
INT_NAMES: tuple[str, ...] = tuple(d.name for d in DTYPES if d.kind in "iu")
"""The integer dtypes pullback computes in (`'int32', 'int64', 'uint8', 'int8', 'int16'`)."""
PADDLE_FLOAT_NAMES: tuple[str, ...] = tuple(d.name for d in DTYPE_TABLE if d.kind == "f")
"""Every floating dtype Paddle has (what `paddle.is_floating_point` asks)."""
_FLOAT_ELEM_CLASSES = tuple(type(d.elem) for d in DTYPES if d.kind == "f")
COMPLEX_TYPES: tuple[Attribute, ...] = tuple(d.elem for d in DTYPES if d.kind == "c")
"""complex64's and complex128's element types."""
COMPLEX_NAMES: tuple[str, ...] = tuple(d.name for d in DTYPES if d.kind == "c")
"""`'complex64', 'complex128'`."""
COMPLEX_OF_FLOAT: dict[str, str] = {"float32": "complex64", "float64": "complex128"}
"""The complex dtype whose parts are each float dtype (`paddle.complex(re, im)`)."""
FLOAT_OF_COMPLEX: dict[str, str] = {c: f for f, c in COMPLEX_OF_FLOAT.items()}
"""The float dtype of a complex dtype's parts (`paddle.real`, `abs`, `as_real`)."""


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
    """The dtype an eager tensor made from array data of numpy dtype `dt` holds, as in
    Paddle: `dt`'s own (uint8 pixels stay uint8, a float16 array is float16, a uint16
    array is bfloat16 bits); None for any other numpy dtype (uint32, uint64,
    float128, strings...), which Paddle refuses too."""
    return DTYPE_BY_NUMPY.get(dt)


def is_float_data(dt: np.dtype[Any]) -> bool:
    """Whether host data of numpy dtype `dt` holds floats: a numpy float, or uint16
    (bfloat16's bits)."""
    return dt.kind == "f" or dt == np.uint16


def is_inexact_data(dt: np.dtype[Any]) -> bool:
    """Whether host data of numpy dtype `dt` can carry a gradient: floats (see
    `is_float_data`) and complex numbers."""
    return dt.kind in "fc" or dt == np.uint16


# ------------------------------------------------------------- default dtype

DEFAULT_DTYPE_CHOICES: tuple[str, ...] = ("float16", "float32", "float64", "bfloat16")
"""What `paddle.set_default_dtype` takes (Paddle 3.3.1's list)."""

_default_float: list[str] = ["float32"]


def get_default_dtype() -> str:
    """`paddle.get_default_dtype()`: the float dtype of Python floats in `to_tensor`,
    of new parameters and of creation ops without `dtype=` (float32 unless set)."""
    return _default_float[0]


def set_default_dtype(d: object) -> None:
    """`paddle.set_default_dtype(d)`: one of float16, float32, float64, bfloat16 (any
    spelling `to_dtype` reads); TypeError, as Paddle's, for any other."""
    found = find_dtype(d)
    if found is None or found.name not in DEFAULT_DTYPE_CHOICES:
        shown = found.name if found is not None else d
        raise TypeError(
            f"set_default_dtype only supports [{', '.join(DEFAULT_DTYPE_CHOICES)}], but received {shown}"
        )
    _default_float[0] = found.name


# ------------------------------------------------------------- type promotion

LOW_PRECISION_NAMES: tuple[str, ...] = ("float16", "bfloat16")
"""The 16-bit floats: stored in 16 bits, computed in float32 (each op's result
rounded to nearest even on store), as Paddle's CPU and GPU kernels do."""

SMALL_INT_NAMES: tuple[str, ...] = ("uint8", "int8", "int16")
"""The integers narrower than int32."""

_FLOAT_RANK = {"float16": 1, "bfloat16": 1, "float32": 2, "float64": 3}


def promote_types(a: str, b: str) -> str | None:
    """Paddle 3.3.1's type promotion of a binary op on two tensors of dtypes `a` and
    `b` (the one table of it): the result dtype, or None where Paddle refuses the pair.

    | operands                         | result            |
    | -------------------------------- | ----------------- |
    | same dtype                       | that dtype        |
    | float16 + bfloat16               | float32           |
    | 16-bit float + float32           | float32           |
    | any float + float64              | float64           |
    | two different integer/bool dtypes | refused (uint8 + int8 too) |
    | an integer/bool + a float tensor | refused           |

    | complex + any other dtype        | complex, of the wider of complex64's float32 parts or the other's float (complex64 + float64: complex128) |

    (Read off Paddle 3.3.1's eager `+` for every pair: `tests/unit/dtypes/paddle_promotion.py`;
    the complex rows: `tests/unit/dtypes/data/make_complex_fixtures.py`.)
    A Python scalar operand does not promote like a tensor: `scalar_result_dtype`.
    """
    if a == b:
        return a
    if a in FLOAT_OF_COMPLEX or b in FLOAT_OF_COMPLEX:
        # Paddle promotes any tensor with a complex one (ints and bools too).
        wide = any(d in ("complex128", "float64") for d in (a, b))
        return "complex128" if wide else "complex64"
    ra, rb = _FLOAT_RANK.get(a), _FLOAT_RANK.get(b)
    if ra is None or rb is None:
        return None
    if ra == rb:  # float16 with bfloat16
        return "float32"
    return a if ra > rb else b


def scalar_result_dtype(tensor: str, scalar: object) -> str:
    """The dtype of `tensor_op_scalar` in Paddle 3.3.1 (`x + 1.5`, `x * 2`): a Python
    float with an integer or bool tensor gives float32 (whatever the default dtype), a Python int with a bool tensor int64; otherwise the tensor's dtype
    (a float16 tensor times 1.5 stays float16)."""
    if isinstance(scalar, bool) or tensor in FLOAT_OF_COMPLEX:
        return tensor
    if isinstance(scalar, complex) or type(scalar).__module__ == "numpy" and np.asarray(scalar).dtype.kind == "c":
        return "complex128" if tensor == "float64" else "complex64"
    if isinstance(scalar, float) or type(scalar).__module__ == "numpy" and np.asarray(scalar).dtype.kind == "f":
        return tensor if tensor in _FLOAT_RANK else "float32"
    if tensor == "bool":
        return "int64"
    return tensor


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


def is_complex(elem: Attribute) -> bool:
    """True for complex64's and complex128's element types."""
    return elem in COMPLEX_TYPES


def is_inexact(elem: Attribute) -> bool:
    """True for the element types gradients flow through: floats and complex."""
    return isinstance(elem, _FLOAT_ELEM_CLASSES) or elem in COMPLEX_TYPES


__all__ = [
    "C64",
    "C128",
    "COMPLEX_NAMES",
    "COMPLEX_OF_FLOAT",
    "COMPLEX_TYPES",
    "FLOAT_OF_COMPLEX",
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
    "is_float_data",
    "is_inexact_data",
    "DEFAULT_DTYPE_CHOICES",
    "get_default_dtype",
    "set_default_dtype",
    "LOW_PRECISION_NAMES",
    "SMALL_INT_NAMES",
    "promote_types",
    "scalar_result_dtype",
    "is_float",
    "is_complex",
    "is_inexact",
    "not_supported_message",
    "to_dtype",
    "to_dtype_name",
    "to_numpy_dtype",
]
