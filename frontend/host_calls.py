"""Ops that call back into Python on the host: `paddle.static.py_func` (a Python
function as an op, with an optional Python backward) and `paddle.static.Print`
(print a tensor, and its gradient, when the program runs).

Both are `pd` ops declared `HOST_ONLY` (`pd.py_func`, `pd.print`): a program using
them runs on the host interpreter (the compiled backend says so once and falls
back).  The functions live in a process-wide registry (`pd.PY_FUNCS`), so a
program with `py_func` cannot be saved and run in another process, as in Paddle.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from pullback.dialects import pd
from pullback.dialects.pd.base import tensor
from pullback.dialects.pd.dtypes import to_dtype
from pullback.frontend.core import apply, in_dynamic_mode
from pullback.frontend.framework import DeclaredVariable, Variable

_KEYS = itertools.count()


def _listify(v: Any) -> list[Any]:
    if v is None:
        return []
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _register(func: Callable[..., Any], types: Sequence[Any], backward: str | None = None,
              skip: Sequence[int] = ()) -> str:
    key = f"py_func_{next(_KEYS)}"
    pd.PY_FUNCS[key] = pd.PyFunction(func, list(types), backward, tuple(skip))
    return key


def py_func(func: Callable[..., Any], x: Any, out: Any, backward_func: Callable[..., Any] | None = None,
            skip_vars_in_backward_input: Any = None) -> Any:
    """`paddle.static.py_func(func, x, out, backward_func=None,
    skip_vars_in_backward_input=None)`: an op calling `func` on the numpy values of
    `x` (a Variable or a list) and writing its results into the variables `out`
    (created beforehand with their shapes and dtypes, e.g. by `Block.create_var`;
    None or [] for a function called for its side effect).  `backward_func`
    receives `x`, `out` and the gradients of `out`, in that order, less the
    variables in `skip_vars_in_backward_input`, and returns the gradients of `x`.
    Returns `out`."""
    if in_dynamic_mode():
        raise RuntimeError("py_func: only available in static mode (call paddle.enable_static() first)")
    if not callable(func):
        raise TypeError(f"py_func: func must be callable, got {type(func).__name__}")
    if backward_func is not None and not callable(backward_func):
        raise TypeError(f"py_func: backward_func must be callable or None, got {type(backward_func).__name__}")
    xs, outs = _listify(x), _listify(out)
    for what, vs in (("x", xs), ("out", outs)):
        for v in vs:
            if not isinstance(v, Variable):
                raise TypeError(f"py_func: {what} must be a Variable or a list of Variables, got {type(v).__name__}")
    out_types = [tensor([None if d is None or d < 0 else int(d) for d in o.shape],
                        to_dtype(o.dtype, "py_func").elem) for o in outs]
    skips = _listify(skip_vars_in_backward_input)
    everything = [*xs, *outs]
    skip = []
    for s in skips:
        hits = [k for k, v in enumerate(everything) if v is s or (isinstance(s, str) and v.name == s)]
        if not hits:
            raise ValueError(f"py_func: skip_vars_in_backward_input: {getattr(s, 'name', s)!r} is neither in x nor in out")
        skip.extend(hits)
    backward = None
    if backward_func is not None:
        backward = _register(backward_func, [v.value.type for v in xs])
    key = _register(func, out_types, backward, skip)
    names = [o.name for o in outs]
    results = apply(pd.PyFuncOp, xs, prefix="py_func", out_names=names or None, func=key)
    results = _listify(results) if outs else []
    # Declared variables follow their names, so they now stand for the results.
    final = [o if isinstance(o, DeclaredVariable) else r for o, r in zip(outs, results)]
    if out is None or isinstance(out, (list, tuple)):
        return final if out is not None else None
    return final[0]


def Print(input: Any, first_n: int = -1, message: str | None = None, summarize: int = 20,
          print_tensor_name: bool = True, print_tensor_type: bool = True, print_tensor_shape: bool = True,
          print_tensor_lod: bool = True, print_phase: str = "both") -> Any:
    """`paddle.static.Print`: an op printing `input` each time the program runs
    (at most `first_n` times, the first `summarize` values, -1 for all) and
    passing it through; with `print_phase` `backward` or `both` the gradient
    flowing back through it is printed too.  Returns the passed-through value."""
    if not isinstance(print_phase, str) or print_phase.lower() not in pd.PRINT_PHASES:
        raise ValueError(f"Print: print_phase must be one of {list(pd.PRINT_PHASES)}, got {print_phase!r}")
    for arg, v in (("first_n", first_n), ("summarize", summarize)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"Print: {arg} must be an int, got {type(v).__name__}")
    name = getattr(input, "name", "") or ""
    return apply(pd.PrintOp, [input], prefix="print", message=message or "", var=name, first_n=first_n,
                 summarize=summarize, print_tensor_name=bool(print_tensor_name),
                 print_tensor_type=bool(print_tensor_type), print_tensor_shape=bool(print_tensor_shape),
                 print_tensor_lod=bool(print_tensor_lod), print_phase=print_phase.lower())


__all__ = ["Print", "py_func"]
