"""Paddle's elementwise API: arithmetic, comparisons, `where`, activations, constants,
and the Python operators of Variables (`x + 1.0`, `2 * x`, `x ** 2`, `x > y`, ...).

Python scalars follow Paddle's `math_op_patch`: `x + s`, `x - s`, `x * s`, `x / s`
and `-x` become one `pd.scale`; `x ** s` is `pd.pow`; any other use of a scalar
(`s / x`, `s ** x`, comparisons, `where`) becomes a `pd.fill_any_like` of x.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any


from pullback.dialects import pd
from pullback.dialects.pd.dtypes import FLOAT_NAMES as _FLOAT_NAMES
from pullback.dialects.pd.dtypes import COMPLEX_NAMES, DTYPE_BY_NAME, INT_NAMES, get_default_dtype, promote_types, scalar_result_dtype, to_dtype_name
from pullback.frontend.core import apply
from pullback.frontend.eager import Tensor

Scalar = int | float
_FLOAT_MAX = sys.float_info.max


# --------------------------------------------------------------------- helpers


def is_scalar(v: Any) -> bool:
    """True for a Python (or numpy) number, the operands Paddle turns into constants."""
    if isinstance(v, Tensor):  # the common case in eager mode, checked first
        return False
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    return type(v).__module__ == "numpy" and getattr(v, "ndim", None) == 0


def is_complex_scalar(v: Any) -> bool:
    """True for a Python or numpy complex number (`1j`): Paddle makes it a complex
    constant (complex64 beside a float32 or integer tensor, complex128 beside float64)."""
    return isinstance(v, complex) or (type(v).__module__ == "numpy" and getattr(v, "dtype", None) is not None
                                      and getattr(v, "ndim", None) == 0 and v.dtype.kind == "c")


def complex_constant_like(x: Any, value: complex) -> Any:
    """A complex constant shaped like tensor x, of the dtype Paddle gives
    `x op value` (`dtypes.scalar_result_dtype`), and x cast to that dtype."""
    to = scalar_result_dtype(x.dtype, value)
    value = complex(value)
    const = apply(pd.FillAnyLikeOp, [x], prefix="fill_any_like", value=value.real, imag=value.imag, dtype=to)
    return const, (x if x.dtype == to else cast(x, to))


def check_tensor(fn: str, arg: str, x: Any) -> None:
    """Raise TypeError unless `x` is a Variable/Tensor (anything with dtype and shape
    that is not a Python number or a numpy array)."""
    if is_scalar(x) or not hasattr(x, "dtype") or type(x).__module__ == "numpy":
        raise TypeError(
            f"{fn}: '{arg}' must be a Tensor/Variable, got {type(x).__name__}"
        )


_FLOAT_ARRAYS = frozenset(DTYPE_BY_NAME[n].numpy for n in _FLOAT_NAMES)
"""numpy dtypes of float tensors' data (bfloat16's is uint16, its bits)."""


def check_float_tensor(fn: str, arg: str, x: Any) -> None:
    """Raise TypeError unless `x` is a float (float16/bfloat16/float32/float64) Variable/Tensor."""
    if type(x) is Tensor and x._arr.dtype in _FLOAT_ARRAYS:
        return  # every eager op checks its inputs: the common case without calls
    check_tensor(fn, arg, x)
    if x.dtype not in _FLOAT_NAMES:
        raise TypeError(f"{fn}: '{arg}' must be float32 or float64, got {x.dtype} (or float16, bfloat16)")


def check_float_or_int_tensor(fn: str, arg: str, x: Any) -> None:
    """Raise TypeError unless `x` is a float32/float64/int32/int64 Variable/Tensor
    (the error names the float dtypes, the ones a float op computes in)."""
    check_tensor(fn, arg, x)
    if x.dtype not in INT_NAMES:
        check_float_tensor(fn, arg, x)


def check_unary_input(op_cls: type[pd.PdOp], fn: str, x: Any) -> None:
    """Raise TypeError unless `x` is a tensor the unary op takes: a float one, an
    int32/int64 one where the op's `INT_INPUT` fact accepts integers, or a complex
    one where the op declares `COMPLEX`."""
    if op_cls.COMPLEX and getattr(x, "dtype", None) in COMPLEX_NAMES:
        return
    if getattr(op_cls, "INT_INPUT", "reject") != "reject":
        check_float_or_int_tensor(fn, "x", x)
    else:
        check_float_tensor(fn, "x", x)


def int_to_float32(x: Any) -> Any:
    """`x` cast to float32 if it is an int32/int64 tensor (Paddle 3.x's autocast of
    integer inputs to float math), else `x` itself."""
    if x.dtype in INT_NAMES:
        return apply(pd.CastOp, [x], prefix="cast", dtype="float32")
    return x


def _check_number(fn: str, arg: str, v: Any) -> float:
    if not is_scalar(v):
        raise TypeError(f"{fn}: '{arg}' must be a number, got {type(v).__name__}")
    return float(v)


def _fill_parts(fn: str, v: Any, dtype: str) -> dict[str, Any]:
    """The `value` (and, of a complex number, `imag`) properties of a fill of `v`
    into a `dtype` tensor.  A complex number into a real dtype is refused (Paddle
    3.3.1's eager `full` silently keeps the real part)."""
    if not is_complex_scalar(v):
        return {"value": _check_number(fn, "fill_value", v)}
    if dtype not in COMPLEX_NAMES:
        raise TypeError(f"{fn}: a complex fill_value ({v!r}) needs a complex dtype, got {dtype} "
                        "(the imaginary part would be dropped)")
    z = complex(v)
    return {"value": z.real, "imag": z.imag}


def _check_shape(fn: str, shape: Any) -> list[int]:
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = [shape]
    if not isinstance(shape, (list, tuple)) or not all(
        isinstance(d, int) and not isinstance(d, bool) for d in shape
    ):
        raise TypeError(f"{fn}: shape must be a list of ints, got {shape!r}")
    if any(d < 0 for d in shape):
        raise ValueError(f"{fn}: shape must not contain negative dimensions, got {list(shape)}")
    return [int(d) for d in shape]


def constant_like(x: Any, value: Scalar) -> Any:
    """A constant shaped like x (dynamic dimensions included), of x's dtype: how a
    Python scalar enters a tensor op without changing the result's shape."""
    return full_like(x, value)


# ------------------------------------------------------------------- constants


def full(shape: Sequence[int] | int, fill_value: Scalar, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.full`: a tensor of `shape` filled with `fill_value` (float32 by default)."""
    shape = _check_shape("full", shape)
    # A complex fill_value makes complex128 by default, as Paddle's `full`.
    default = "complex128" if is_complex_scalar(fill_value) else get_default_dtype()
    dtype = to_dtype_name(dtype, "full", default=default)
    return apply(pd.FillConstantOp, [], prefix="fill_constant", name=name,
                 shape=shape, dtype=dtype, **_fill_parts("full", fill_value, dtype))


def fill_constant(shape: Sequence[int] | int, dtype: Any, value: Scalar,
                  force_cpu: bool = False, out: Any = None, name: str | None = None) -> Any:
    """`fluid.layers.fill_constant`: `full` with the legacy argument order."""
    if out is not None:
        raise NotImplementedError("fill_constant: 'out' is not supported")
    return full(shape, value, dtype=dtype, name=name)


def ones(shape: Sequence[int] | int, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.ones`."""
    return full(shape, 1.0, dtype=dtype, name=name)


def zeros(shape: Sequence[int] | int, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.zeros`."""
    return full(shape, 0.0, dtype=dtype, name=name)


def full_like(x: Any, fill_value: Scalar, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.full_like`: shaped like x (dynamic dimensions included)."""
    check_tensor("full_like", "x", x)
    props: dict[str, Any] = {}
    if dtype is not None:
        props["dtype"] = to_dtype_name(dtype, "full_like")
    props.update(_fill_parts("full_like", fill_value, props.get("dtype", x.dtype)))
    return apply(pd.FillAnyLikeOp, [x], prefix="fill_any_like", name=name, **props)


def ones_like(x: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.ones_like`."""
    return full_like(x, 1.0, dtype=dtype, name=name)


def zeros_like(x: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.zeros_like`."""
    return full_like(x, 0.0, dtype=dtype, name=name)


# -------------------------------------------------------------------- binary


def _binary(
    op_cls: type[pd.PdOp], prefix: str, x: Any, y: Any, axis: int = -1,
    name: str | None = None,
) -> Any:
    """Add one broadcasting binary op; a scalar operand becomes a constant shaped
    like the other one."""
    if type(x) is not Tensor or type(y) is not Tensor:  # two eager Tensors need no checks
        if is_complex_scalar(y) and not is_scalar(x):
            check_tensor(prefix, "x", x)
            y, x = complex_constant_like(x, y)
        elif is_complex_scalar(x) and not is_scalar(y):
            check_tensor(prefix, "y", y)
            x, y = complex_constant_like(y, x)
        sx, sy = is_scalar(x), is_scalar(y)
        if sx and sy:
            raise TypeError(f"{prefix}: at least one of x and y must be a Tensor/Variable")
        if not sx:
            check_tensor(prefix, "x", x)
        if not sy:
            check_tensor(prefix, "y", y)
        if sy:
            y = constant_like(x, y)
        if sx:
            x = constant_like(y, x)
    if type(axis) is not int:
        raise TypeError(f"{prefix}: axis must be an int, got {axis!r}")
    if x.dtype != y.dtype:
        x, y = promote(prefix, x, y)
    return apply(op_cls, [x, y], prefix=prefix, name=name, axis=axis)


def promote(fn: str, x: Any, y: Any) -> tuple[Any, Any]:
    """x and y cast to their common dtype by Paddle 3.3.1's promotion rule
    (`dtypes.promote_types`: between float dtypes only); TypeError for a pair Paddle
    refuses (two different integer dtypes, an integer with a float)."""
    to = promote_types(x.dtype, y.dtype)
    if to is None:
        raise TypeError(
            f"{fn}: x ({x.dtype}) and y ({y.dtype}) must have the same dtype: Paddle promotes "
            f"only between float dtypes (cast one of them with astype)"
        )
    return (x if x.dtype == to else cast(x, to)), (y if y.dtype == to else cast(y, to))


def _activate(x: Any, act: str | None) -> Any:
    """Apply a fluid-style `act` argument."""
    if act is None:
        return x
    fn = _ACTS.get(act)
    if fn is None:
        raise ValueError(f"unsupported act '{act}'; expected one of {sorted(_ACTS)}")
    return fn(x)


def _binary_api(op_cls: type[pd.PdOp], paddle_name: str, prefix: str) -> Callable[..., Any]:
    """Make the Paddle 2.x function `paddle.<paddle_name>(x, y, name=None)`."""

    def f(x: Any, y: Any, name: str | None = None) -> Any:
        return _binary(op_cls, prefix, x, y, name=name)

    f.__name__ = f.__qualname__ = paddle_name
    f.__doc__ = f"`paddle.{paddle_name}`: `{op_cls.name}` with numpy broadcasting."
    return f


def _fluid_binary_api(op_cls: type[pd.PdOp], prefix: str) -> Callable[..., Any]:
    """Make `fluid.layers.elementwise_*(x, y, axis=-1, act=None, name=None)`."""

    def f(x: Any, y: Any, axis: int = -1, act: str | None = None, name: str | None = None) -> Any:
        return _activate(_binary(op_cls, prefix, x, y, axis=axis, name=name), act)

    f.__name__ = f.__qualname__ = prefix
    f.__doc__ = f"`fluid.layers.{prefix}` with Paddle's `axis` broadcasting and `act`."
    return f


add = _binary_api(pd.ElementwiseAddOp, "add", "elementwise_add")
subtract = _binary_api(pd.ElementwiseSubOp, "subtract", "elementwise_sub")
multiply = _binary_api(pd.ElementwiseMulOp, "multiply", "elementwise_mul")
divide = _binary_api(pd.ElementwiseDivOp, "divide", "elementwise_div")
maximum = _binary_api(pd.ElementwiseMaxOp, "maximum", "elementwise_max")
minimum = _binary_api(pd.ElementwiseMinOp, "minimum", "elementwise_min")
greater_than = _binary_api(pd.GreaterThanOp, "greater_than", "greater_than")
greater_equal = _binary_api(pd.GreaterEqualOp, "greater_equal", "greater_equal")
less_than = _binary_api(pd.LessThanOp, "less_than", "less_than")
less_equal = _binary_api(pd.LessEqualOp, "less_equal", "less_equal")
equal = _binary_api(pd.EqualOp, "equal", "equal")
not_equal = _binary_api(pd.NotEqualOp, "not_equal", "not_equal")

elementwise_add = _fluid_binary_api(pd.ElementwiseAddOp, "elementwise_add")
elementwise_sub = _fluid_binary_api(pd.ElementwiseSubOp, "elementwise_sub")
elementwise_mul = _fluid_binary_api(pd.ElementwiseMulOp, "elementwise_mul")
elementwise_div = _fluid_binary_api(pd.ElementwiseDivOp, "elementwise_div")
elementwise_pow = _fluid_binary_api(pd.ElementwisePowOp, "elementwise_pow")
elementwise_max = _fluid_binary_api(pd.ElementwiseMaxOp, "elementwise_max")
elementwise_min = _fluid_binary_api(pd.ElementwiseMinOp, "elementwise_min")


def pow(x: Any, y: Any, name: str | None = None) -> Any:  # noqa: A001 (Paddle's name)
    """`paddle.pow`: `x ** y`; a scalar exponent gives `pd.pow`, a tensor one
    `pd.elementwise_pow`."""
    if is_scalar(y):
        check_unary_input(pd.PowOp, "pow", x)
        return apply(pd.PowOp, [x], prefix="pow", name=name, factor=float(y))
    return _binary(pd.ElementwisePowOp, "elementwise_pow", x, y, name=name)


def fluid_pow(x: Any, factor: Scalar = 1.0, name: str | None = None) -> Any:
    """`fluid.layers.pow(x, factor)`: `x ** factor` for a scalar factor."""
    _check_number("pow", "factor", factor)
    return pow(x, factor, name=name)


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Any:
    """`paddle.where`: `condition ? x : y`, broadcasting all three."""
    if x is None and y is None:
        # `paddle.where(condition)`: the coordinates of the true entries, one 1-D
        # tensor per dimension (written with ops directly: the indexing family
        # builds on this module).
        check_tensor("where", "condition", condition)
        coords = apply(pd.NonzeroOp, [condition], prefix="where_index")
        rank = len(condition.shape)
        cols = [apply(pd.SliceOp, [coords], prefix="slice", axes=[1], starts=[i], ends=[i + 1])
                for i in range(rank)] if rank else [coords]
        return tuple(apply(pd.ReshapeOp, [c], prefix="reshape2", shape=[-1]) for c in cols)
    if x is None or y is None:
        raise ValueError("where: x and y must both be given (or neither)")
    check_tensor("where", "condition", condition)
    if condition.dtype != "bool":
        raise TypeError(f"where: condition must be bool, got {condition.dtype}")
    if is_scalar(x) and is_scalar(y):
        raise TypeError("where: at least one of x and y must be a Tensor/Variable")
    x = constant_like(y, x) if is_scalar(x) else x
    y = constant_like(x, y) if is_scalar(y) else y
    check_tensor("where", "x", x)
    check_tensor("where", "y", y)
    return apply(pd.WhereOp, [condition, x, y], prefix="where", name=name)


# --------------------------------------------------------------------- unary


def _unary_api(op_cls: type[pd.PdOp], prefix: str) -> Callable[..., Any]:
    """Make `f(x, name=None)` for a one-operand op (float input, or integer input
    where the op's `INT_INPUT` takes it)."""

    def f(x: Any, name: str | None = None) -> Any:
        check_unary_input(op_cls, prefix, x)
        return apply(op_cls, [x], prefix=prefix, name=name)

    f.__name__ = f.__qualname__ = prefix
    f.__doc__ = f"`paddle.{prefix}` (`{op_cls.name}`)."
    return f


relu = _unary_api(pd.ReluOp, "relu")
sigmoid = _unary_api(pd.SigmoidOp, "sigmoid")
tanh = _unary_api(pd.TanhOp, "tanh")
exp = _unary_api(pd.ExpOp, "exp")
log = _unary_api(pd.LogOp, "log")
sqrt = _unary_api(pd.SqrtOp, "sqrt")
square = _unary_api(pd.SquareOp, "square")
abs = _unary_api(pd.AbsOp, "abs")  # noqa: A001 (Paddle's name)
sign = _unary_api(pd.SignOp, "sign")
erf = _unary_api(pd.ErfOp, "erf")


def gelu(x: Any, approximate: bool = False, name: str | None = None) -> Any:
    """`paddle.nn.functional.gelu`: exact (erf) or tanh-approximated GELU."""
    check_float_tensor("gelu", "x", x)
    if not isinstance(approximate, bool):
        raise TypeError(f"gelu: approximate must be a bool, got {approximate!r}")
    return apply(pd.GeluOp, [x], prefix="gelu", name=name, approximate=approximate)


def scale(x: Any, scale: Scalar = 1.0, bias: Scalar = 0.0, bias_after_scale: bool = True,
          act: str | None = None, name: str | None = None) -> Any:
    """`paddle.scale`: `scale * x + bias` (`scale * (x + bias)` if not bias_after_scale)."""
    check_tensor("scale", "x", x)
    out = apply(pd.ScaleOp, [x], prefix="scale", name=name,
                scale=_check_number("scale", "scale", scale),
                bias=_check_number("scale", "bias", bias),
                bias_after_scale=bool(bias_after_scale))
    return _activate(out, act)


_CLIP_INT_DEFAULTS: dict[str, tuple[float, float]] = {
    "int32": (float(-2**31), float(2**31 - 1 - 2**7)),
    "int64": (float(-2**63), float(2**63 - 1 - 2**39)),
}


def clip(x: Any, min: Scalar | None = None, max: Scalar | None = None,  # noqa: A002
         name: str | None = None) -> Any:
    """`paddle.clip`: clamp into `[min, max]` (an absent float bound is unbounded); an
    integer x keeps its dtype, its bounds truncated as Paddle's int kernel casts them.
    Paddle's absent bounds for integers: the dtype's minimum, and a maximum below the
    dtype's (`INT32_MAX - 2**7`, `INT64_MAX - 2**39`: the largest float32 values under
    them), which `paddle.clip` really clamps to (int64's lands on the float64 nearest,
    one above, as `pd.clip`'s bounds are float attributes)."""
    check_unary_input(pd.ClipOp, "clip", x)
    lo_default, hi_default = next(
        (v for k, v in _CLIP_INT_DEFAULTS.items() if x.dtype == k), (-_FLOAT_MAX, _FLOAT_MAX))
    lo = lo_default if min is None else _check_number("clip", "min", min)
    hi = hi_default if max is None else _check_number("clip", "max", max)
    if lo > hi:
        raise ValueError(f"clip: min ({lo}) must not exceed max ({hi})")
    return apply(pd.ClipOp, [x], prefix="clip", name=name, min=lo, max=hi)


def cast(x: Any, dtype: Any) -> Any:
    """`paddle.cast`: convert x to `dtype`."""
    check_tensor("cast", "x", x)
    return apply(pd.CastOp, [x], prefix="cast", dtype=to_dtype_name(dtype, "cast"))


def _fluid_compare(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The fluid spelling of a comparison, which takes (and ignores) `cond`/`force_cpu`."""

    def f(x: Any, y: Any, force_cpu: Any = None, cond: Any = None, name: str | None = None) -> Any:
        if cond is not None:
            raise NotImplementedError(f"{fn.__name__}: 'cond' is not supported")
        return fn(x, y, name=name)

    f.__name__ = f.__qualname__ = fn.__name__
    f.__doc__ = f"`fluid.layers.{fn.__name__}`."
    return f


_ACTS: dict[str, Callable[[Any], Any]] = {
    "relu": relu, "sigmoid": sigmoid, "tanh": tanh, "exp": exp, "sqrt": sqrt,
    "square": square, "abs": abs, "gelu": gelu,
}


# ------------------------------------------------------------------ operators


def _scale_or(op_cls: type[pd.PdOp], prefix: str,
              on_scalar: Callable[[Any, float], Any]) -> Callable[[Any, Any], Any]:
    """An operator method: `on_scalar(self, s)` for a scalar, the op for a tensor."""

    def method(self: Any, other: Any) -> Any:
        if is_scalar(other):
            to = scalar_result_dtype(self.dtype, other)
            return on_scalar(self if to == self.dtype else cast(self, to), float(other))
        return _binary(op_cls, prefix, self, other)

    return method


def _true_div_operand(x: Any) -> Any:
    # Paddle's `/` is true division: integer tensors are computed in float32.
    return x if x.dtype in _FLOAT_NAMES else cast(x, "float32")


def _rsub(self: Any, other: Any) -> Any:
    if is_scalar(other):
        return scale(self, -1.0, float(other))
    return _binary(pd.ElementwiseSubOp, "elementwise_sub", other, self)


def _truediv(self: Any, other: Any) -> Any:
    if is_scalar(other):
        return scale(_true_div_operand(self), 1.0 / float(other))
    return _binary(pd.ElementwiseDivOp, "elementwise_div", self, other)


def _rtruediv(self: Any, other: Any) -> Any:
    x = _true_div_operand(self)
    if is_scalar(other):
        return _binary(pd.ElementwiseDivOp, "elementwise_div", constant_like(x, other), x)
    return _binary(pd.ElementwiseDivOp, "elementwise_div", other, self)


def _rpow(self: Any, other: Any) -> Any:
    if is_scalar(other):
        return _binary(pd.ElementwisePowOp, "elementwise_pow", constant_like(self, other), self)
    return _binary(pd.ElementwisePowOp, "elementwise_pow", other, self)


OPERATORS: dict[str, Callable[..., Any]] = {
    "__add__": _scale_or(pd.ElementwiseAddOp, "elementwise_add", lambda x, s: scale(x, 1.0, s)),
    "__radd__": _scale_or(pd.ElementwiseAddOp, "elementwise_add", lambda x, s: scale(x, 1.0, s)),
    "__sub__": _scale_or(pd.ElementwiseSubOp, "elementwise_sub", lambda x, s: scale(x, 1.0, -s)),
    "__rsub__": _rsub,
    "__mul__": _scale_or(pd.ElementwiseMulOp, "elementwise_mul", lambda x, s: scale(x, s)),
    "__rmul__": _scale_or(pd.ElementwiseMulOp, "elementwise_mul", lambda x, s: scale(x, s)),
    "__truediv__": _truediv,
    "__rtruediv__": _rtruediv,
    "__pow__": lambda self, other: pow(self, other),
    "__rpow__": _rpow,
    "__neg__": lambda self: scale(self, -1.0),
    "__gt__": lambda self, other: greater_than(self, other),
    "__ge__": lambda self, other: greater_equal(self, other),
    "__lt__": lambda self, other: less_than(self, other),
    "__le__": lambda self, other: less_equal(self, other),
    "__eq__": lambda self, other: _compare(equal, self, other),
    "__ne__": lambda self, other: _compare(not_equal, self, other),
}
"""Python operators of Variables/Tensors.  `==`/`!=` compare elementwise as in Paddle
(`(pred == label).astype("float32").mean()`, `cond(i == 0, ...)`), against a
Tensor/Variable, a number or an array; anything else (None, a string) compares by
identity.  `__hash__` stays identity-based, so Variables still live in sets and dicts;
inside pullback, membership tests on lists of tensors must use identity.  `@`
belongs to the nn family."""


def _compare(fn: Callable[..., Any], x: Any, y: Any) -> Any:
    """`fn(x, y)` for operands Paddle compares elementwise, else NotImplemented.
    A numpy array becomes a Tensor of x's dtype (eager); a static program cannot
    hold one, which is said."""
    if y is None or not (is_scalar(y) or hasattr(y, "shape")):
        return NotImplemented
    if type(y).__module__ == "numpy":
        from pullback.frontend.core import in_dynamic_mode

        if not in_dynamic_mode():
            raise TypeError(
                f"{fn.__name__}: a static Variable compares with a Variable or a number, "
                f"not a numpy array (make it a Variable with paddle.assign)"
            )
        from pullback.frontend.eager import to_tensor

        y = to_tensor(y, dtype=x.dtype)
    return fn(x, y)


def install_operators(cls: type) -> None:
    """Attach the arithmetic and comparison operators (`OPERATORS`) to a class."""
    for dunder, fn in OPERATORS.items():
        setattr(cls, dunder, fn)


PADDLE = [
    add, subtract, multiply, divide, pow, maximum, minimum, where,
    greater_than, greater_equal, less_than, less_equal, equal, not_equal,
    exp, log, sqrt, square, abs, sign, tanh, erf, sigmoid, scale, clip, cast,
    full, full_like, ones, zeros, ones_like, zeros_like,
]
FUNCTIONAL = [relu, sigmoid, tanh, gelu]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "elementwise_add": elementwise_add, "elementwise_sub": elementwise_sub,
    "elementwise_mul": elementwise_mul, "elementwise_div": elementwise_div,
    "elementwise_pow": elementwise_pow, "elementwise_max": elementwise_max,
    "elementwise_min": elementwise_min,
    "relu": relu, "sigmoid": sigmoid, "tanh": tanh, "exp": exp, "log": log,
    "sqrt": sqrt, "square": square, "abs": abs, "sign": sign, "erf": erf, "gelu": gelu,
    "scale": scale, "clip": clip, "cast": cast, "pow": fluid_pow,
    "fill_constant": fill_constant, "ones": ones, "zeros": zeros,
    "ones_like": ones_like, "zeros_like": zeros_like, "full_like": full_like,
    "greater_than": _fluid_compare(greater_than),
    "greater_equal": _fluid_compare(greater_equal),
    "less_than": _fluid_compare(less_than), "less_equal": _fluid_compare(less_equal),
    "equal": _fluid_compare(equal), "not_equal": _fluid_compare(not_equal),
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "add": add, "subtract": subtract, "multiply": multiply, "divide": divide,
    "pow": pow, "maximum": maximum, "minimum": minimum,
    "greater_than": greater_than, "greater_equal": greater_equal,
    "less_than": less_than, "less_equal": less_equal, "equal": equal,
    "not_equal": not_equal,
    "exp": exp, "log": log, "sqrt": sqrt, "square": square, "abs": abs,
    "sign": sign, "tanh": tanh, "erf": erf, "sigmoid": sigmoid, "scale": scale,
    "clip": clip, "cast": cast, "astype": cast, "where": where,
}
