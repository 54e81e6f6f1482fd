"""`paddle.jit.to_static`: a Python function or Layer traced into a `pd` program.

A `StaticFunction` wraps the function.  Called in dynamic mode, it

1. flattens the arguments: Tensors (nested in lists, tuples and dicts too) are the
   program's inputs; every other value is a constant of the trace;
2. looks up the `ConcreteProgram` of this signature: per Tensor its shape (the
   `input_spec`'s, with `None` dimensions, when given) and dtype, the constants,
   and the Layer's `training` flag; on a miss it *traces*: the function runs in
   static mode on `paddle.static.data` variables inside a fresh Program, and each
   eager Tensor an op reads (the Layer's parameters and buffers, captured
   constants) becomes a `pd.parameter` of the program named after it;
3. runs the program as ONE eager op, `pd.run_program`, over the argument Tensors
   and the captured ones: compiled forward now, compiled backward when
   `backward()` reaches it (`frontend/jit/program.py`).  Gradients land on the
   eager parameters; updated running statistics are written back to their Tensors.

Before tracing, `dy2static.convert_function` rewrites the function's `if`/`while`
statements and `for ... in range(...)` loops (an AST transformation, as Paddle's
dy2static): conditions on Python values still run as Python (unrolled), conditions
on tensors become `pd.if`/`pd.while`.  Any other need for a tensor's Python value
while tracing raises `Dy2StaticError` naming the file and line.
`paddle.jit.enable_to_static(False)` makes every StaticFunction call the Python
function itself (eager), and `not_to_static` marks functions never traced.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import types
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from pullback.frontend import core
from pullback.frontend.amp import amp_state
from pullback.frontend.eager import DTYPE_NAMES, Tensor, is_grad_enabled
from pullback.frontend.framework import Program, Variable, program_guard
from pullback.frontend.input_spec import InputSpec
from pullback.frontend.nn_layers import FORWARD_CONVERTER
from pullback.frontend.jit.dy2static import Dy2StaticError, convert_function
from pullback.frontend.jit.program import ConcreteProgram
from pullback.dialects import pd
from pullback.dialects.pd.dtypes import to_numpy_dtype

_to_static_enabled = True


def enable_to_static(enable_to_static_bool: bool) -> None:
    """`paddle.jit.enable_to_static`: False makes `to_static` functions run eagerly
    (the Python function itself), True turns conversion back on."""
    if not isinstance(enable_to_static_bool, bool):
        raise TypeError(
            "The type of 'enable_to_static_bool' in paddle.jit.enable_to_static must be bool, "
            f"but received {type(enable_to_static_bool).__name__}."
        )
    global _to_static_enabled
    _to_static_enabled = enable_to_static_bool


def not_to_static(func: Callable[..., Any] | None = None) -> Any:
    """`paddle.jit.not_to_static`: mark `func` to run as plain Python even when
    called from a converted function (pullback traces through calls, so the mark
    only matters when `func` itself is passed to `to_static`)."""
    if func is None:
        return not_to_static
    try:
        func._not_to_static = True  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return func


def ignore_module(modules: list[Any]) -> None:
    """`paddle.jit.ignore_module`: functions of these modules are never converted
    (pullback converts only the to_static function and the Layers it calls, so
    this only checks its argument)."""
    if not isinstance(modules, list):
        raise TypeError(f"modules must be a list of modules, got {type(modules).__name__}")


def set_code_level(level: int = 100, also_to_stdout: bool = False) -> None:
    """`paddle.jit.set_code_level`: accepted for Paddle's API (pullback does not
    log converted code; `StaticFunction.code` shows it)."""
    if not isinstance(level, int):
        raise TypeError(f"level must be an int, got {type(level).__name__}")


def set_verbosity(level: int = 0, also_to_stdout: bool = False) -> None:
    """`paddle.jit.set_verbosity`: accepted for Paddle's API (no conversion log)."""
    if not isinstance(level, int):
        raise TypeError(f"level must be an int, got {type(level).__name__}")


# ------------------------------------------------------------- tracing state

_tracing: list[str] = []
"""Names of the functions being traced (innermost last)."""


def tracing() -> bool:
    """True while a `to_static` function is being traced."""
    return bool(_tracing)


def _user_line() -> str:
    """`file:line` of the innermost user frame (outside pullback's own modules)."""
    import os
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    own = tuple(os.path.join(root, d) + os.sep for d in ("frontend", "dialects", "passes", "runtime", "lowering"))
    f: Any = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(own):
        f = f.f_back
    return "<unknown>" if f is None else f"{f.f_code.co_filename}:{f.f_lineno}"


def _value_error(what: str) -> Callable[..., Any]:
    def fail(self: Variable, *args: Any) -> Any:
        if not _tracing:
            return _ORIGINAL[what](self, *args)
        raise Dy2StaticError(
            f"paddle.jit.to_static: {_user_line()}: the Python value of tensor '{self.name}' "
            f"is needed ({what}) while tracing {_tracing[-1]}, but it is only known when the "
            "program runs. to_static converts `if`/`while` statements and `for ... in range(...)` "
            "of the decorated function itself (not conditional expressions, loops with break/continue, "
            "returns inside loops, or functions it calls): rewrite this with paddle.static.nn.cond / "
            "paddle.static.nn.while_loop (or paddle.where), or run it eagerly "
            "(paddle.jit.enable_to_static(False) or @paddle.jit.not_to_static)."
        )

    return fail


_ORIGINAL: dict[str, Callable[..., Any]] = {}


def _install_value_guards() -> None:
    """Make Python-value conversions of static Variables (`bool`, `float`, `int`,
    `numpy()`) fail clearly while tracing; outside tracing they keep their meaning."""
    if _ORIGINAL:
        return
    defaults: dict[str, Callable[..., Any]] = {
        "__bool__": lambda self: True,  # Python's default truthiness of an object
    }
    for what in ("__bool__", "__float__", "__int__", "__index__", "numpy", "item", "tolist"):
        original = Variable.__dict__.get(what) or defaults.get(what)
        if original is None:
            def original(self: Variable, *args: Any, _what: str = what) -> Any:
                raise TypeError(f"static Variable '{self.name}' has no Python value ({_what})")
        _ORIGINAL[what] = original
        setattr(Variable, what, _value_error(what))


class Capture:
    """Turns each eager Tensor an op of the traced program reads into one
    `pd.parameter` named after the Tensor (the Layer's parameter names); makes
    the per-call seeds of random ops (`seed()`: placeholders in `tensors`,
    replaced by fresh seeds at every call, their positions in `seeds`)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.by_id: dict[int, Variable] = {}
        self.tensors: list[Tensor] = []
        self.names: list[str] = []
        self.seeds: list[int] = []

    def seed(self) -> Variable:
        """A new int64 seed input, fed a fresh value at every call."""
        placeholder = Tensor._new(np.array(0, np.int64), None, 0, True)
        placeholder._name = f"_jst.seed_{len(self.seeds)}"
        var = self(placeholder)
        self.seeds.append(len(self.tensors) - 1)
        return var

    def __call__(self, x: Any) -> Any:
        if not isinstance(x, Tensor):
            return x
        var = self.by_id.get(id(x))
        if var is not None:
            return var
        name = x.name
        base, k = name, 0
        while name in self.names or self.program._lookup(name) is not None:
            k += 1
            name = f"{base}_{k}"
        op = pd.ParameterOp.make(name, list(x.shape), DTYPE_NAMES[x._arr.dtype], trainable=not x.stop_gradient)
        block = self.program.global_block()
        block.append(op)
        var = block.wrap(op.out)
        var.stop_gradient = x.stop_gradient
        self.by_id[id(x)] = var
        self.tensors.append(x)
        self.names.append(name)
        return var


def _converted_forward(layer: Any) -> Callable[..., Any]:
    """The forward of a Layer called while tracing, with its `if`/`while`
    converted (a `to_static` forward is traced through, not called as a program)."""
    forward = layer.__dict__.get("forward")
    if forward is None:
        forward = type(layer).forward
    if isinstance(forward, StaticFunction):
        forward = forward._function
    elif inspect.ismethod(forward):
        forward = forward.__func__
    if not isinstance(forward, types.FunctionType):
        return layer.forward
    return functools.partial(convert_function(forward), layer)


@contextlib.contextmanager
def static_trace(program: Program, startup: Program, capture: Capture, what: str) -> Iterator[None]:
    """Trace into `program` (`startup` for initializers): static mode, `capture`
    turning the eager Tensors ops read into parameters and making the random ops'
    seeds, Layers' forwards converted (`if`/`while`), Python-value reads of
    Variables raising `Dy2StaticError` naming `what`."""
    was_static = not core.in_dynamic_mode()
    core.enable_static()
    old_capture = core.set_capture(capture)
    old_seeds = core.set_seed_source(capture.seed)
    old_converter, FORWARD_CONVERTER[0] = FORWARD_CONVERTER[0], _converted_forward
    _install_value_guards()
    _tracing.append(what)
    try:
        with program_guard(program, startup):
            yield
    finally:
        _tracing.pop()
        FORWARD_CONVERTER[0] = old_converter
        core.set_seed_source(old_seeds)
        core.set_capture(old_capture)
        if not was_static:
            core.disable_static()


# ---------------------------------------------------------------- arguments


def _flatten(obj: Any, tensors: list[Any], arrays: bool = False) -> Any:
    """The structure of `obj` with each Tensor/Variable (and, with `arrays`, each
    numpy array, as a Tensor: Paddle's to_static takes them as inputs) replaced by
    its position in `tensors` (appended); other leaves kept as they are."""
    if arrays and isinstance(obj, np.ndarray):
        obj = Tensor(obj)
    if isinstance(obj, (Tensor, Variable)):
        tensors.append(obj)
        return ("__tensor__", len(tensors) - 1)
    if isinstance(obj, (list, tuple)):
        items = [_flatten(x, tensors, arrays) for x in obj]
        return (type(obj).__name__, tuple(items))
    if isinstance(obj, dict):
        return ("dict", tuple((k, _flatten(v, tensors, arrays)) for k, v in obj.items()))
    return ("const", obj)


def _unflatten(struct: Any, values: Sequence[Any]) -> Any:
    kind, body = struct
    if kind == "__tensor__":
        return values[body]
    if kind == "list":
        return [_unflatten(x, values) for x in body]
    if kind == "tuple":
        return tuple(_unflatten(x, values) for x in body)
    if kind == "dict":
        return {k: _unflatten(v, values) for k, v in body}
    return body


def _hashable(struct: Any) -> Any:
    try:
        hash(struct)
        return struct
    except TypeError:
        return repr(struct)


def _flat_specs(input_spec: Any) -> list[InputSpec | None]:
    """The input_spec's InputSpecs in flattening order (None for non-spec leaves)."""
    if input_spec is None:
        return []
    leaves: list[Any] = []
    _flatten_specs(input_spec, leaves)
    return leaves


def _flatten_specs(obj: Any, out: list[Any]) -> None:
    if isinstance(obj, (InputSpec, Tensor)):
        out.append(obj if isinstance(obj, InputSpec) else InputSpec.from_tensor(obj))
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _flatten_specs(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _flatten_specs(x, out)
    else:
        out.append(None)


def _check_spec(spec: InputSpec, t: Tensor, i: int, where: str) -> None:
    shape = list(spec.shape)
    if len(shape) != t.ndim or any(d >= 0 and d != g for d, g in zip(shape, t.shape)):
        raise ValueError(
            f"{where}: input #{i} has shape {t.shape}, which does not match input_spec shape {shape}"
        )
    if f"{spec.dtype}" != f"{t.dtype}":
        raise ValueError(f"{where}: input #{i} has dtype {t.dtype}, input_spec says {spec.dtype}")


# ------------------------------------------------------------- StaticFunction


class StaticFunction:
    """A function converted by `to_static` (see the module docstring).  As a
    class attribute (`@to_static def forward(self, x)`) it binds to the instance
    like a method; `concrete_program` and `get_concrete_program` expose the trace."""

    _function: Callable[..., Any]

    def __init__(self, function: Callable[..., Any], input_spec: Any = None,
                 instance: Any = None, **kwargs: Any) -> None:
        if isinstance(function, StaticFunction):
            function = function._function
        self._function = function
        self._input_spec = input_spec
        # Weakly: a bound method cached per instance must not keep it alive.
        self._instance_ref: Callable[[], Any] | None = None
        if instance is not None:
            try:
                self._instance_ref = weakref.ref(instance)
            except TypeError:
                self._instance_ref = lambda: instance
        self._cache: dict[Any, tuple[ConcreteProgram, Any, list[int]]] = {}
        self._bound: weakref.WeakKeyDictionary[Any, StaticFunction] = weakref.WeakKeyDictionary()
        self._last: ConcreteProgram | None = None
        self._converted_fn: Callable[..., Any] | None = None
        self._kwargs = kwargs
        functools.update_wrapper(self, function)  # type: ignore[arg-type]

    @property
    def _instance(self) -> Any:
        """The instance a method is bound to (None for a plain function)."""
        return None if self._instance_ref is None else self._instance_ref()

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        bound = self._bound.get(instance)
        if bound is None:
            bound = StaticFunction(self._function, self._input_spec, instance, **self._kwargs)
            self._bound[instance] = bound
        return bound

    @property
    def dygraph_function(self) -> Callable[..., Any]:
        """The original Python function (bound to the instance for a method)."""
        if self._instance is not None:
            return functools.partial(self._function, self._instance)
        return self._function

    @property
    def input_spec(self) -> Any:
        """The `input_spec` given to `to_static` (None when shapes come from calls)."""
        return self._input_spec

    @property
    def _where(self) -> str:
        name = getattr(self._function, "__qualname__", getattr(self._function, "__name__", "function"))
        return f"{name}()"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _to_static_enabled or not core.in_dynamic_mode() or _tracing \
                or getattr(self._function, "_not_to_static", False):
            return self.dygraph_function(*args, **kwargs)
        tensors: list[Any] = []
        struct = _flatten((args, kwargs), tensors, arrays=True)
        concrete, out_struct, seeds = self._concrete_for(struct, tensors)
        captured = list(concrete.captured)
        if seeds:
            from pullback.frontend.random import default_generator

            for i in seeds:
                captured[i] = Tensor._new(np.array(default_generator().next_seed(), np.int64), None, 0, True)
        operands = [*tensors, *captured]
        grads = is_grad_enabled() and any(not t.stop_gradient for t in operands)
        key = concrete.key if grads else concrete.inference.key
        results = core.apply(pd.RunProgramOp, operands, prefix="run_program", program=key)
        results = results if isinstance(results, list) else [results]
        n_out = concrete.n_outputs
        first_update = n_out + (concrete.n_saved if grads else 0)
        by_name = dict(zip(concrete.param_names, concrete.captured))
        for name, new in zip(concrete.update_names, results[first_update:]):
            by_name[name].set_value(new._data)
        return _unflatten(out_struct, results[:n_out])

    def _signature(self, struct: Any, tensors: list[Any]) -> tuple[Any, list[Any]]:
        specs = _flat_specs(self._input_spec)
        shapes: list[Any] = []
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"{self._where}: argument #{i} is a {type(t).__name__}, expected an eager Tensor")
            spec = specs[i] if i < len(specs) else None
            if spec is not None:
                _check_spec(spec, t, i, self._where)
                shapes.append(tuple(spec.shape))
            else:
                shapes.append(tuple(t.shape))
        training = getattr(self._instance, "training", None)
        # The trace records the casts of the `paddle.amp.auto_cast` it ran under: a
        # call under another one (or none) needs a trace of its own.
        st = amp_state()
        amp = None if st is None else (st.dtype, st.level, st.white, st.black)
        key = (_hashable(struct), tuple(shapes), tuple(str(t.dtype) for t in tensors), training,
               tuple(t.stop_gradient for t in tensors), amp)
        return key, shapes

    def _concrete_for(self, struct: Any, tensors: list[Any]) -> tuple[ConcreteProgram, Any, list[int]]:
        key, shapes = self._signature(struct, tensors)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._trace(struct, tensors, shapes)
            # The compiled programs live as long as this function.
            weakref.finalize(self, hit[0].release)
        self._last = hit[0]
        return hit

    def _trace(self, struct: Any, tensors: list[Any], shapes: list[Any]) -> tuple[ConcreteProgram, Any, list[int]]:
        from pullback.frontend.layers import data

        specs = _flat_specs(self._input_spec)
        main, startup = Program(), Program()
        capture = Capture(main)
        names = self._arg_names(struct, tensors, specs)
        with static_trace(main, startup, capture, self._where):
            feeds: list[Variable] = []
            for i, t in enumerate(tensors):
                v = data(names[i], [d if d >= 0 else None for d in shapes[i]], t.dtype)
                v.stop_gradient = t.stop_gradient
                feeds.append(v)
            args, kwargs = _unflatten(struct, feeds)
            out = self._converted()(*args, **kwargs)
            out_vars: list[Any] = []
            out_struct = _flatten(out, out_vars)
            out_vars = [capture(v) if isinstance(v, Tensor) else v for v in out_vars]
        created = [op.var_name.data for op in main.module.body.block.ops
                   if isinstance(op, pd.ParameterOp) and op.var_name.data not in capture.names]
        if created:
            raise Dy2StaticError(
                f"paddle.jit.to_static: {self._where} creates parameters while it runs "
                f"({', '.join(created[:4])}): create the layers in __init__, not in forward"
            )
        concrete = ConcreteProgram(
            main, [v.value for v in feeds], [v.value for v in out_vars], capture.names, capture.tensors,
            where=self._where,
        )
        concrete.out_struct = out_struct  # the outputs' structure (jit.save orders dicts as Paddle)
        return concrete, out_struct, list(capture.seeds)

    def _converted(self) -> Callable[..., Any]:
        """The function with tensor-dependent `if`/`while` converted (dy2static),
        bound to the instance for a method."""
        if self._converted_fn is None:
            self._converted_fn = convert_function(self._function)
        fn = self._converted_fn
        return functools.partial(fn, self._instance) if self._instance is not None else fn

    def _arg_names(self, struct: Any, tensors: list[Any], specs: list[InputSpec | None]) -> list[str]:
        """Feed names: the InputSpec's name, else the name of the argument holding
        the tensor (`x`, `xs_1` inside a list argument), else `x_<i>`; unique."""
        by_id: dict[int, str] = {}
        try:
            args, kwargs = _unflatten(struct, tensors)
            fn = self._function
            bound = (inspect.signature(fn).bind(self._instance, *args, **kwargs) if self._instance is not None
                     else inspect.signature(fn).bind(*args, **kwargs))
            for arg, value in bound.arguments.items():
                inner: list[Any] = []
                _flatten(value, inner)
                for k, t in enumerate(inner):
                    by_id.setdefault(id(t), arg if len(inner) == 1 else f"{arg}_{k}")
        except (TypeError, ValueError):
            pass
        out: list[str] = []
        for i, t in enumerate(tensors):
            spec = specs[i] if i < len(specs) else None
            name = spec.name if spec is not None and spec.name else by_id.get(id(t), f"x_{i}")
            if name in out:
                name = f"{name}_{i}"
            out.append(name)
        return out

    # -- Paddle's StaticFunction API --------------------------------------------

    @property
    def concrete_program(self) -> ConcreteProgram:
        """The program traced by the latest call (or for the `input_spec`)."""
        if self._last is None:
            return self.get_concrete_program()
        return self._last

    def get_concrete_program(self, *args: Any, **kwargs: Any) -> ConcreteProgram:
        """The program for these arguments (default: the `input_spec`, as zeros)."""
        if not args and not kwargs:
            if self._input_spec is None:
                raise ValueError(f"{self._where}: no input_spec and no call yet: pass example inputs")
            args = tuple(_example(s) for s in self._input_spec)
        tensors: list[Any] = []
        struct = _flatten((args, kwargs), tensors)
        return self._concrete_for(struct, tensors)[0]

    @property
    def code(self) -> str:
        """The function's source as converted for tracing (dy2static)."""
        from pullback.frontend.jit.dy2static import converted_source

        return converted_source(self._function)

    @property
    def main_program(self) -> Program:
        """The traced forward Program."""
        return self.concrete_program.program

    @property
    def inputs(self) -> list[Any]:
        """The traced program's input Variables (the tensor arguments; not `self`,
        not Python values), of the latest call or else of the `input_spec`."""
        return self.concrete_program.inputs

    @property
    def outputs(self) -> list[Any]:
        """The traced program's output Variables, flattened."""
        return self.concrete_program.outputs

    def rollback(self) -> Callable[..., Any]:
        """The original function (Paddle: undo the conversion of a Layer's forward)."""
        if self._instance is not None and self._instance.__dict__.get("forward") is self:
            del self._instance.__dict__["forward"]
        return self.dygraph_function


def _example(spec: Any) -> Any:
    if isinstance(spec, InputSpec):
        shape = [d if d >= 0 else 1 for d in spec.shape]
        t = Tensor._new(np.zeros(shape, dtype=to_numpy_dtype(spec.dtype, "InputSpec")), None, 0,
                        spec.stop_gradient)
        return t
    if isinstance(spec, (list, tuple)):
        return type(spec)(_example(s) for s in spec)
    if isinstance(spec, dict):
        return {k: _example(v) for k, v in spec.items()}
    return spec


def to_static(function: Any = None, input_spec: Any = None, build_strategy: Any = None,
              backend: Any = None, **kwargs: Any) -> Any:
    """`@paddle.jit.to_static` / `paddle.jit.to_static(layer_or_fn, input_spec=...)`:
    convert a function, method or Layer so that it runs as one compiled program
    (see the module docstring).  A Layer is returned itself with its `forward`
    converted."""
    if input_spec is not None:
        if not isinstance(input_spec, (list, tuple)):
            raise TypeError(
                "The type of 'input_spec' should be one of [list, tuple], but received "
                f"{type(input_spec).__name__}."
            )
        for i, spec in enumerate(_flat_specs(input_spec)):
            if spec is None:
                raise TypeError(f"to_static: input_spec[{i}] must be an InputSpec or a Tensor")

    def decorate(fn: Any) -> Any:
        from pullback.frontend.nn_layers import Layer

        if isinstance(fn, Layer):
            forward: Any = type(fn).forward
            if isinstance(forward, StaticFunction):
                forward = forward._function
            sf = StaticFunction(forward, input_spec, instance=fn, **kwargs)
            fn.__dict__["forward"] = sf
            return fn
        if not callable(fn):
            raise TypeError(f"to_static: expected a function or a Layer, got {type(fn).__name__}")
        if inspect.ismethod(fn):
            return StaticFunction(fn.__func__, input_spec, instance=fn.__self__, **kwargs)
        return StaticFunction(fn, input_spec, **kwargs)

    return decorate if function is None else decorate(function)


__all__ = ["Dy2StaticError", "StaticFunction", "enable_to_static", "ignore_module", "not_to_static", "set_code_level",
           "set_verbosity", "to_static", "tracing"]
