"""Paddle's bitwise functions (`bitwise_and`, `bitwise_or`, `bitwise_xor`,
`bitwise_not`), the integer `gcd`/`lcm`, and the Python operators `&`, `|`, `^`, `~`
of Tensors/Variables.

`&`, `|`, `^` are the `pd.bitwise_*` ops (integer and bool tensors; on bool they
are the logical operations); `~x` is `logical_not` on bool and the exact composite
`-1 - x` (two's complement) on integers.  `gcd` runs Euclid's algorithm in a
`while_loop` until every element is done.  No gradients (integer results).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pullback.dialects import pd
from pullback.dialects.pd.dtypes import INT_NAMES as _INT_DTYPES
from pullback.frontend.ops.control import while_loop
from pullback.frontend.ops.elementwise import (
    _binary,
    add,
    check_tensor,
    constant_like,
    equal,
    is_scalar,
    less_than,
    multiply,
    not_equal,
    subtract,
    where,
)
from pullback.frontend.ops.logic import any as logical_any
from pullback.frontend.ops.logic import logical_not
from pullback.frontend.ops.math import floor_divide, remainder



def _operands(fn: str, x: Any, y: Any) -> tuple[Any, Any]:
    if is_scalar(y) or isinstance(y, bool):
        check_tensor(fn, "x", x)
        y = constant_like(x, int(y))
    check_tensor(fn, "x", x)
    check_tensor(fn, "y", y)
    if x.dtype != y.dtype:
        raise TypeError(f"{fn}: x ({x.dtype}) and y ({y.dtype}) must have the same dtype")
    if x.dtype != "bool" and x.dtype not in _INT_DTYPES:
        raise TypeError(f"{fn}: x must be bool or an integer type, got {x.dtype}")
    return x, y


def bitwise_and(x: Any, y: Any, out: Any = None, name: str | None = None) -> Any:
    """`paddle.bitwise_and`: elementwise `x & y` (bool or integer tensors)."""
    x, y = _operands("bitwise_and", x, y)
    return _binary(pd.BitwiseAndOp, "bitwise_and", x, y, name=name)


def bitwise_or(x: Any, y: Any, out: Any = None, name: str | None = None) -> Any:
    """`paddle.bitwise_or`: elementwise `x | y` (bool or integer tensors)."""
    x, y = _operands("bitwise_or", x, y)
    return _binary(pd.BitwiseOrOp, "bitwise_or", x, y, name=name)


def bitwise_xor(x: Any, y: Any, out: Any = None, name: str | None = None) -> Any:
    """`paddle.bitwise_xor`: elementwise `x ^ y` (bool or integer tensors)."""
    x, y = _operands("bitwise_xor", x, y)
    return _binary(pd.BitwiseXorOp, "bitwise_xor", x, y, name=name)


def bitwise_not(x: Any, out: Any = None, name: str | None = None) -> Any:
    """`paddle.bitwise_not`: elementwise `~x` (bool: not; integers: `-x - 1`)."""
    check_tensor("bitwise_not", "x", x)
    if x.dtype == "bool":
        return logical_not(x)
    if x.dtype not in _INT_DTYPES:
        raise TypeError(f"bitwise_not: x must be bool or an integer type, got {x.dtype}")
    return subtract(constant_like(x, -1), x)  # exact in integer arithmetic


def _int_pair(fn: str, x: Any, y: Any) -> tuple[Any, Any]:
    x, y = _operands(fn, x, y)
    if x.dtype == "bool":
        raise TypeError(f"{fn}: x must be an integer type, got bool")
    return x, y


def gcd(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.gcd`: the elementwise greatest common divisor of |x| and |y|
    (`gcd(0, 0) = 0`), by Euclid's algorithm in a `while_loop` that runs until every
    element is done (one `pd.while` in static mode)."""
    x, y = _int_pair("gcd", x, y)
    a, b = abs_int(x), abs_int(y)
    a, b = add(a, subtract(b, b)), add(b, subtract(a, a))  # broadcast both to one shape

    def cond(a: Any, b: Any) -> Any:
        return any_nonzero(b)

    def body(a: Any, b: Any) -> list[Any]:
        nonzero = not_equal(b, constant_like(b, 0))
        safe = where(nonzero, b, constant_like(b, 1))
        return [where(nonzero, b, a), where(nonzero, remainder(a, safe), b)]

    return while_loop(cond, body, [a, b])[0]


def lcm(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.lcm`: the elementwise least common multiple of |x| and |y| (0 when
    either is 0)."""
    x, y = _int_pair("lcm", x, y)
    g = gcd(x, y)
    zero = equal(g, constant_like(g, 0))
    safe = where(zero, constant_like(g, 1), g)
    return where(zero, constant_like(g, 0), abs_int(multiply(floor_divide(x, safe), y)))


def abs_int(x: Any) -> Any:
    """|x| for an integer tensor (exact)."""
    return where(less_than(x, constant_like(x, 0)), subtract(constant_like(x, 0), x), x)


def any_nonzero(x: Any) -> Any:
    """A 0-D bool: whether any element of the integer tensor x is nonzero."""
    return logical_any(not_equal(x, constant_like(x, 0)))


OPERATORS: dict[str, Callable[..., Any]] = {
    "__and__": lambda self, other: bitwise_and(self, other),
    "__rand__": lambda self, other: bitwise_and(self, other),
    "__or__": lambda self, other: bitwise_or(self, other),
    "__ror__": lambda self, other: bitwise_or(self, other),
    "__xor__": lambda self, other: bitwise_xor(self, other),
    "__rxor__": lambda self, other: bitwise_xor(self, other),
    "__invert__": lambda self: bitwise_not(self),
}
"""`&`, `|`, `^` (and reflected) and `~` of Variables/Tensors."""


def install_operators(cls: type) -> None:
    """Attach `&`, `|`, `^`, `~` (`OPERATORS`) to a Variable/Tensor class."""
    for dunder, fn in OPERATORS.items():
        setattr(cls, dunder, fn)


_ALL: list[Callable[..., Any]] = [bitwise_and, bitwise_or, bitwise_xor, bitwise_not, gcd, lcm]

PADDLE: list[Callable[..., Any]] = list(_ALL)
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {f.__name__: f for f in _ALL}
