"""`apply`: the one way API functions add an op, in static and eager mode alike.

Every Paddle-style function (`paddle.matmul`, `F.relu`, `x + y`, ...) validates its
Python arguments, then calls `apply(OpClass, inputs, prefix=..., **props)`:

* static mode: the op is appended to the current program's block 0 and its results
  named as Paddle's `LayerHelper` names them (`relu_0.tmp_0`, or `<name>.tmp_0`);
* eager mode: the same op is computed at once and recorded for `backward`
  (`frontend/install.py` installs that path, `eager.eager_apply`, with
  `set_eager_apply`: `eager` builds on this module, so this module cannot import it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.utils.exceptions import VerifyException

from pullback.dialects import pd
from pullback.frontend import unique_name
from pullback.frontend.framework import Variable, default_main_program

_static_mode = False
_eager_apply: Callable[..., Any] | None = None
_capture: Callable[[Any], Any] | None = None
"""While `paddle.jit.to_static` traces a function: turns an eager Tensor that an op
of the traced program reads (a parameter, a captured constant) into a Variable."""


def in_dynamic_mode() -> bool:
    """True in eager (dygraph) mode, Paddle 2.x's default."""
    return not _static_mode


def enable_static() -> None:
    """Switch to static-graph mode (`paddle.enable_static()`)."""
    global _static_mode
    _static_mode = True


def disable_static(place: Any = None) -> None:
    """Switch back to eager mode (`paddle.disable_static()`)."""
    global _static_mode
    _static_mode = False


def set_eager_apply(fn: Callable[..., Any]) -> None:
    """Install eager mode's implementation of `apply`."""
    global _eager_apply
    _eager_apply = fn


_seed_source: Callable[[], Any] | None = None


def set_seed_source(fn: Callable[[], Any] | None) -> Callable[[], Any] | None:
    """While `paddle.jit.to_static` traces: a function giving a fresh seed input
    (an int64 Variable fed anew at every call of the traced program), so that
    random ops such as dropout draw a new mask per call as in dynamic mode.
    Returns the previous source."""
    global _seed_source
    old, _seed_source = _seed_source, fn
    return old


def traced_seed() -> Any:
    """A per-call seed Variable when a to_static trace is running, else None."""
    return None if _seed_source is None else _seed_source()


def _from_other_program(x: Variable, op: str) -> Variable:
    """A Variable of another program, as the current program names it (Paddle
    resolves variables by name): a parameter of a Layer built elsewhere becomes a
    `pd.parameter` of the same name here (its value lives in the scope)."""
    program = default_main_program()
    block = program.global_block()
    value = program._lookup(x.name)
    if value is not None:
        return block.wrap(value)
    owner = x.value.owner
    if isinstance(owner, pd.ParameterOp):
        new = pd.ParameterOp.make(x.name, list(pd.shape_of(owner.out.type)), pd.dtype_name(pd.elem_of(owner.out.type)),
                                  trainable=bool(owner.trainable.value.data))
        block.append(new)
        var = block.wrap(new.out)
        for attr in ("optimize_attr", "regularizer", "need_clip", "do_model_average"):
            if hasattr(x, attr):
                setattr(var, attr, getattr(x, attr))
        return var
    raise ValueError(
        f"{op}: input '{x.name}' is a variable of another program, and the current program has no "
        "variable of that name (build the ops inside the same program_guard)"
    )


def set_capture(fn: Callable[[Any], Any] | None) -> Callable[[Any], Any] | None:
    """Install how static `apply` turns non-Variable inputs (eager Tensors read by
    a function `paddle.jit.to_static` traces) into Variables; returns the previous
    hook (None: such inputs are an error)."""
    global _capture
    old, _capture = _capture, fn
    return old


def output_names(prefix: str, name: str | None, count: int) -> list[str]:
    """Paddle's LayerHelper names: `<base>.tmp_<k>`, base = name or `<prefix>_<n>`."""
    base = name or unique_name.generate(prefix)
    return [unique_name.generate(f"{base}.tmp") for _ in range(count)]


_amp_hook: Callable[[type[pd.PdOp], Sequence[Any]], Sequence[Any]] | None = None
"""`frontend.amp.cast_inputs` while a `paddle.amp.auto_cast` is active, else None."""


def set_amp_hook(hook: Callable[[type[pd.PdOp], Sequence[Any]], Sequence[Any]] | None) -> None:
    """Install (or remove, None) the function `apply` passes every op's inputs through
    first (`paddle.amp.auto_cast`)."""
    global _amp_hook
    _amp_hook = hook


def amp_hook_installed() -> bool:
    """Whether a `paddle.amp.auto_cast` is active."""
    return _amp_hook is not None


def apply(
    op_cls: type[pd.PdOp],
    inputs: Sequence[Any],
    *,
    prefix: str,
    name: str | None = None,
    out_names: Sequence[str] | None = None,
    op_type: str | None = None,
    **props: Any,
) -> Any:
    """Add one op; returns its result Variable/Tensor (a list for several results).

    `inputs` are Variables (static) or Tensors (eager).  A shape or dtype mismatch
    raises ValueError with the verifier's message, before anything is added.
    `op_type` is Paddle's operator type when it is not the `pd` op's name (`fc`'s
    `pd.matmul` is a `mul`); `append_backward` callbacks report it.
    """
    if _amp_hook is not None:
        inputs = _amp_hook(op_cls, inputs)  # inside paddle.amp.auto_cast: casts by its op lists
    if in_dynamic_mode():
        assert _eager_apply is not None, "importing pullback.frontend installs eager mode"
        return _eager_apply(op_cls, inputs, prefix=prefix, name=name, **props)
    if _capture is not None:
        inputs = [x if isinstance(x, Variable) else _capture(x) for x in inputs]
    for i, x in enumerate(inputs):
        if not isinstance(x, Variable):
            raise TypeError(
                f"{op_cls.name}: input #{i} must be a Variable in static mode, "
                f"got {type(x).__name__}"
            )
    program = default_main_program()
    block = program.global_block()
    inputs = [x if x.block.program is program else _from_other_program(x, op_cls.name) for x in inputs]
    try:
        op = op_cls.make(*[x.value for x in inputs], **props)
    except VerifyException as e:
        raise ValueError(str(e)) from None
    names = list(out_names) if out_names else output_names(prefix, name, len(op.results))
    pd.set_result_names(op, names)
    block.append(op)
    if op_type is not None:
        program.op_types[op] = op_type
    # As in Paddle's static mode, op outputs start with stop_gradient=False: feeds
    # (stop_gradient=True) cut gradients where they enter, not downstream.
    outs = [block.wrap(r) for r in op.results]
    return outs[0] if len(outs) == 1 else outs
