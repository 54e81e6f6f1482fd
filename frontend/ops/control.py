"""Paddle's control flow: `cond`, `while_loop`, `switch_case`, `case` (and
`increment`, the loop counter's op).

In static mode the functions trace `true_fn`/`false_fn`/`cond`/`body` once into the
regions of a `pd.if` or `pd.while` (ops they add land in the region; values from
outside are used directly).  In eager mode they are plain Python control flow on the
tensors' values, as in Paddle, so eager gradients come from the ops that ran.

Structures follow Paddle's `map_structure`: functions may return (nested) lists,
tuples and dicts of tensors; both branches must return the same structure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pullback.dialects import pd
from pullback.dialects.pd.base import dtype_name, elem_of, fmt_shape, shape_of
from pullback.frontend.core import apply, in_dynamic_mode, output_names
from pullback.frontend.framework import Variable, default_main_program
from pullback.frontend.ops.elementwise import equal, full, is_scalar
from xdsl.ir import Block as XBlock
from xdsl.ir import Region, SSAValue
from xdsl.utils.exceptions import VerifyException

# ------------------------------------------------------------------ structures


def _flatten(x: Any) -> list[Any]:
    """The leaves of a nested list/tuple/dict (dicts in sorted key order)."""
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _flatten(item)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _flatten(x[k])]
    return [x]


def _pack(like: Any, leaves: Sequence[Any]) -> Any:
    """Rebuild `like`'s structure from `leaves` (the inverse of `_flatten`)."""
    it = iter(leaves)

    def build(s: Any) -> Any:
        if isinstance(s, (list, tuple)):
            items = [build(item) for item in s]
            return items if isinstance(s, list) else tuple(items)
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        return next(it)

    return build(like)


def _structure(x: Any) -> Any:
    """A comparable description of a nested structure (leaves replaced by '*')."""
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_structure(i) for i in x))
    if isinstance(x, dict):
        return ("dict", tuple((k, _structure(x[k])) for k in sorted(x)))
    return "*"


def _to_variable(fn: str, what: str, x: Any) -> Variable:
    """A Variable for a returned leaf: Python numbers become constants (as Paddle's
    `to_static_variable` does); anything else is an error."""
    if isinstance(x, Variable):
        return x
    if isinstance(x, bool):
        return full([1], x, dtype="bool")
    if is_scalar(x):
        return full([1], x, dtype="int64" if isinstance(x, int) else "float32")
    raise TypeError(f"{fn}: {what} must be Tensors (Variables), got {type(x).__name__}")


def _check_pred(fn: str, arg: str, pred: Any) -> None:
    """Paddle's checks of a predicate: a bool Variable with one element."""
    if not isinstance(pred, Variable):
        raise TypeError(f"{fn}: '{arg}' must be a Variable, got {type(pred).__name__}")
    if pred.dtype != "bool":
        raise TypeError(f"{fn}: '{arg}' must be a bool tensor, got {pred.dtype}")
    if any(d != 1 for d in pred.shape):
        raise TypeError(
            f"{fn}: '{arg}' must have exactly one element (shape [1] or []), got "
            f"shape {pred.shape}"
        )


def _trace(fn: Callable[..., Any] | None, block: XBlock, *args: Any) -> Any:
    """Call `fn` with new ops going into `block` (None stays None)."""
    if fn is None:
        return None
    with default_main_program().insertion_point(block):
        return fn(*args)


def _yield(block: XBlock, values: Sequence[SSAValue]) -> None:
    block.add_op(pd.YieldOp.create(operands=list(values)))


def _emit(op: Any, prefix: str, name: str | None) -> list[Variable]:
    """Append a region op to the current block, name its results, wrap them."""
    program = default_main_program()
    pd.set_result_names(op, output_names(prefix, name, len(op.results)))
    block = program.global_block()
    block.append(op)
    return [block.wrap(r) for r in op.results]


# ------------------------------------------------------------------------ cond


def cond(
    pred: Any,
    true_fn: Callable[[], Any] | None = None,
    false_fn: Callable[[], Any] | None = None,
    name: str | None = None,
    return_names: Sequence[str] | None = None,
) -> Any:
    """`paddle.static.nn.cond`: `true_fn()` if `pred` else `false_fn()`.

    Static mode builds one `pd.if` whose results have the branches' common structure
    (a dimension on which the branches disagree becomes dynamic); eager mode runs
    the chosen function.  Returns None when both functions return None.
    """
    for arg, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
        if fn is not None and not callable(fn):
            raise TypeError(f"The {arg} in cond must be callable, but received {type(fn).__name__}")
    if in_dynamic_mode():
        fn = true_fn if bool(pred) else false_fn
        return fn() if fn is not None else None
    _check_pred("cond", "pred", pred)
    then_block, else_block = XBlock(), XBlock()
    t_out = _trace(true_fn, then_block)
    f_out = _trace(false_fn, else_block)
    if t_out is None and f_out is None:
        return None  # branches without results compute nothing observable
    if t_out is None or f_out is None:
        which = "true_fn" if t_out is None else "false_fn"
        other = "false_fn" if t_out is None else "true_fn"
        raise ValueError(
            "Incompatible return values of true_fn and false_fn in cond: "
            f"{which} returns None while {other} returns non-None"
        )
    if _structure(t_out) != _structure(f_out):
        raise ValueError(
            "Incompatible return values of true_fn and false_fn in cond: true_fn and "
            f"false_fn return different structures ({_structure(t_out)} vs {_structure(f_out)})"
        )
    types = []
    branch_values: list[list[SSAValue]] = []
    for block, out in ((then_block, t_out), (else_block, f_out)):
        with default_main_program().insertion_point(block):
            leaves = [_to_variable("cond", "the branches' return values", x) for x in _flatten(out)]
        branch_values.append([v.value for v in leaves])
    for i, (a, b) in enumerate(zip(*branch_values)):
        joined = pd.join_types(a.type, b.type)
        if joined is None:
            raise ValueError(
                "Incompatible return values of true_fn and false_fn in cond: return "
                f"value #{i} is {dtype_name(elem_of(a.type))} {fmt_shape(shape_of(a.type))} "
                f"in true_fn but {dtype_name(elem_of(b.type))} {fmt_shape(shape_of(b.type))} "
                "in false_fn"
            )
        types.append(joined)
    _yield(then_block, branch_values[0])
    _yield(else_block, branch_values[1])
    op = pd.IfOp.make(pred.value, Region(then_block), Region(else_block), types)
    outs = _emit(op, "cond", name)
    return _pack(t_out, outs)


# ------------------------------------------------------------------ while_loop


def while_loop(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Sequence[Any],
    is_test: bool = False,
    name: str | None = None,
) -> list[Any]:
    """`paddle.static.nn.while_loop`: `while cond(*loop_vars): loop_vars = body(*loop_vars)`.

    `body` returns the next values in `loop_vars`' structure (a single value is
    accepted for one loop variable); each keeps its dtype and shape.  Static mode
    builds one `pd.while`; eager mode loops in Python.  Returns the final values as
    a list.
    """
    if not callable(cond):
        raise TypeError("cond in while_loop should be callable")
    if not callable(body):
        raise TypeError("body in while_loop should be callable")
    if not isinstance(loop_vars, (list, tuple)):
        raise TypeError(
            f"loop_vars in while_loop should be a list or tuple, got {type(loop_vars).__name__}"
        )
    if len(loop_vars) == 0:
        raise ValueError("loop_vars in while_loop should not be empty")
    if in_dynamic_mode():
        return _eager_while(cond, body, list(loop_vars))

    program = default_main_program()
    inits = [_to_variable("while_loop", "loop_vars", x) for x in _flatten(loop_vars)]
    types = [v.value.type for v in inits]
    cond_region, body_region = pd.WhileOp.empty_regions(types)
    block0 = program.global_block()

    args = _pack(list(loop_vars), [block0.wrap(a) for a in cond_region.block.args])
    c = _trace(cond, cond_region.block, *args)
    if not isinstance(c, Variable):
        raise TypeError(f"cond in while_loop should return a variable, got {type(c).__name__}")
    _check_pred("while_loop", "the value cond returns", c)
    cond_region.block.add_op(pd.ConditionOp.create(operands=[c.value]))

    args = _pack(list(loop_vars), [block0.wrap(a) for a in body_region.block.args])
    out = _trace(body, body_region.block, *args)
    if not isinstance(out, (list, tuple)) or len(loop_vars) == 1 and _structure(out) != _structure(list(loop_vars)):
        out = [out]
    if _structure(list(out)) != _structure(list(loop_vars)):
        raise ValueError(
            "body in while_loop should return the same arity (length and structure) as "
            f"loop_vars: got {_structure(list(out))}, expected {_structure(list(loop_vars))}"
        )
    with program.insertion_point(body_region.block):
        nexts = [_to_variable("while_loop", "the values body returns", x) for x in _flatten(out)]
    for i, (nxt, t) in enumerate(zip(nexts, types)):
        got = nxt.value.type
        if pd.join_types(got, t) is None or elem_of(got) != elem_of(t) or not pd.shapes_compatible(
            shape_of(got), shape_of(t)
        ):
            raise ValueError(
                f"body in while_loop should keep the dtype and shape of loop var #{i}: "
                f"{dtype_name(elem_of(t))} {fmt_shape(shape_of(t))} became "
                f"{dtype_name(elem_of(got))} {fmt_shape(shape_of(got))}"
            )
    _yield(body_region.block, [v.value for v in nexts])
    try:
        op = pd.WhileOp.make([v.value for v in inits], cond_region, body_region)
        op.verify()
    except VerifyException as e:
        raise ValueError(f"while_loop: {e}") from None
    outs = _emit(op, "while", name)
    return list(_pack(list(loop_vars), outs))


def _eager_while(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: list[Any]) -> list[Any]:
    """Paddle's dygraph `while_loop`: Python iteration on the tensors' values."""
    now = cond(*loop_vars)
    while bool(now):
        out = body(*loop_vars)
        if not isinstance(out, (list, tuple)):
            out = [out]
        if len(out) != len(loop_vars):
            raise ValueError(
                "body in while_loop should return the same arity (length and structure) "
                f"and types as loop_vars: got {len(out)} values for {len(loop_vars)}"
            )
        loop_vars = list(out)
        now = cond(*loop_vars)
    return loop_vars


# ------------------------------------------------------------- case, switch_case


def case(
    pred_fn_pairs: Sequence[tuple[Any, Callable[[], Any]]],
    default: Callable[[], Any] | None = None,
    name: str | None = None,
) -> Any:
    """`paddle.static.nn.case`: the function of the first pair whose predicate is
    true, else `default()` (the last pair's function when `default` is None).
    Built as nested `cond`s."""
    if not isinstance(pred_fn_pairs, (list, tuple)):
        raise TypeError(
            f"The type of 'pred_fn_pairs' in case must be list or tuple, but received "
            f"{type(pred_fn_pairs).__name__}"
        )
    if not pred_fn_pairs:
        raise ValueError("case: 'pred_fn_pairs' must not be empty")
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(
                "The elements of 'pred_fn_pairs' in case must be tuples of size 2 "
                f"(pred, fn), got {pair!r}"
            )
        pred, fn = pair
        if not in_dynamic_mode():
            _check_pred("case", "pred", pred)
        if not callable(fn):
            raise TypeError(f"case: the fn of pair {pair!r} must be callable")
    if default is None:
        default = pred_fn_pairs[-1][1]
        pred_fn_pairs = pred_fn_pairs[:-1]
    elif not callable(default):
        raise TypeError(f"The default in case must be callable, got {type(default).__name__}")
    if in_dynamic_mode():
        for pred, fn in pred_fn_pairs:
            if bool(pred):
                return fn()
        return default()
    chain: Callable[[], Any] = default
    for pred, fn in reversed(list(pred_fn_pairs)):
        chain = _cond_step(pred, fn, chain, name)
    return chain()


def _cond_step(pred: Any, fn: Callable[[], Any], rest: Callable[[], Any], name: str | None) -> Callable[[], Any]:
    return lambda: cond(pred, fn, rest, name=name)


def switch_case(
    branch_index: Any,
    branch_fns: Any,
    default: Callable[[], Any] | None = None,
    name: str | None = None,
) -> Any:
    """`paddle.static.nn.switch_case`: run the function keyed by `branch_index`
    (`branch_fns` is a dict, a list of (int, fn) pairs, or a list of functions keyed
    by position); `default()` when no key matches (the largest key's function when
    `default` is None)."""
    if not hasattr(branch_index, "dtype") or is_scalar(branch_index):
        raise TypeError(
            f"switch_case: 'branch_index' must be a Tensor, got {type(branch_index).__name__}"
        )
    if branch_index.dtype not in ("int32", "int64", "uint8"):
        raise TypeError(
            f"switch_case: 'branch_index' must be int32, int64 or uint8, got {branch_index.dtype}"
        )
    if isinstance(branch_fns, dict):
        pairs = list(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)):
        pairs = [item if isinstance(item, tuple) else (i, item) for i, item in enumerate(branch_fns)]
    else:
        raise TypeError(
            f"The type of 'branch_fns' in switch_case must be dict, list or tuple, but "
            f"received {type(branch_fns).__name__}"
        )
    keys = []
    for pair in pairs:
        if len(pair) != 2 or not isinstance(pair[0], int) or isinstance(pair[0], bool):
            raise TypeError(f"switch_case: the keys of 'branch_fns' must be ints, got {pair!r}")
        if not callable(pair[1]):
            raise TypeError(f"switch_case: the function of key {pair[0]} must be callable")
        keys.append(pair[0])
    if len(set(keys)) != len(keys):
        raise ValueError(f"switch_case: the keys of 'branch_fns' must be unique, got {keys}")
    pairs.sort(key=lambda p: p[0])
    if default is None:
        default = pairs[-1][1]
        pairs = pairs[:-1]
    elif not callable(default):
        raise TypeError(f"The default in switch_case must be callable, got {type(default).__name__}")
    if in_dynamic_mode():
        index = int(branch_index)
        for key, fn in pairs:
            if key == index:
                return fn()
        return default()
    chain: Callable[[], Any] = default
    for key, fn in pairs:
        pred = equal(branch_index, full(branch_index.shape or [1], key, dtype=branch_index.dtype))
        if pred.shape not in ([1], []):
            raise TypeError(
                f"switch_case: 'branch_index' must have one element, got shape {branch_index.shape}"
            )
        chain = _cond_step(pred, fn, chain, name)
    return chain()


# ------------------------------------------------------------------- increment


def increment(x: Any, value: float = 1.0, name: str | None = None) -> Any:
    """`paddle.increment`: `x + value` for a one-element tensor.  As in Paddle the
    static op writes `x` itself: the Variable now stands for the new value (under
    its name), so a loop body may `increment(i)` and return `i`."""
    if not hasattr(x, "dtype") or is_scalar(x):
        raise TypeError(f"increment: 'x' must be a Tensor, got {type(x).__name__}")
    if any(d != 1 for d in x.shape):
        raise ValueError(f"increment: 'x' must have exactly one element, got shape {x.shape}")
    if in_dynamic_mode():
        return x + value
    out = apply(pd.ScaleOp, [x], prefix="increment", out_names=[x.name], scale=1.0, bias=float(value))
    block = x.block
    block._vars.pop(x.value, None)
    x.value = out.value
    block._vars[out.value] = x
    return x


PADDLE: list[Callable[..., Any]] = [increment]
STATIC_NN: list[Callable[..., Any]] = [cond, while_loop, switch_case, case]
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "cond": cond,
    "while_loop": while_loop,
    "switch_case": switch_case,
    "case": case,
    "increment": increment,
}
