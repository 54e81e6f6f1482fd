"""Kernels of the program-structure ops: constants and seeded initializers."""

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import InterpreterError, kernel, narrow_kernel, np_dtype


@kernel(pd.FillConstantOp)
def fill_constant(op: pd.FillConstantOp) -> np.ndarray:
    value, imag = op.prop("value"), op.prop("imag")
    return np.full(op.prop("shape"), complex(value, imag) if imag else value, dtype=np_dtype(op.out.type))


@kernel(pd.FillAnyLikeOp)
def fill_any_like(op: pd.FillAnyLikeOp, x: np.ndarray) -> np.ndarray:
    value, imag = op.prop("value"), op.prop("imag")
    return np.full(x.shape, complex(value, imag) if imag else value, dtype=np_dtype(op.out.type))


@kernel(pd.UniformRandomOp)
def uniform_random(op: pd.UniformRandomOp) -> np.ndarray:
    rng = np.random.default_rng(op.prop("seed"))
    return rng.uniform(op.prop("min"), op.prop("max"), size=op.prop("shape"))


@kernel(pd.GaussianRandomOp)
def gaussian_random(op: pd.GaussianRandomOp) -> np.ndarray:
    rng = np.random.default_rng(op.prop("seed"))
    return rng.normal(op.prop("mean"), op.prop("std"), size=op.prop("shape"))


@kernel(pd.TruncatedGaussianRandomOp)
def truncated_gaussian_random(op: pd.TruncatedGaussianRandomOp) -> np.ndarray:
    """Normal samples, those outside `[mean + a*std, mean + b*std]` redrawn."""
    rng = np.random.default_rng(op.prop("seed"))
    mean, std, a, b = (op.prop(k) for k in ("mean", "std", "a", "b"))
    out = rng.normal(0.0, 1.0, size=op.prop("shape"))
    bad = (out < a) | (out > b)
    while bad.any():
        out[bad] = rng.normal(0.0, 1.0, size=int(bad.sum()))
        bad = (out < a) | (out > b)
    return mean + std * out


def _called(op: pd.RunProgramOp | pd.RunProgramGradOp) -> pd.ProgramFunction:
    key = op.prop("program")
    fn = pd.RUN_PROGRAMS.get(key)
    if fn is None:
        raise InterpreterError(
            f"'{op.name}': program '{key}' is not loaded (the paddle.jit.to_static function or "
            "jit.load layer that made it was deleted, or this IR comes from another process)"
        )
    return fn


@kernel(pd.RunProgramOp)
def run_program(op: pd.RunProgramOp, *xs: np.ndarray) -> tuple[np.ndarray, ...]:
    """The called program's results (it runs on its own, compiled, backend)."""
    return tuple(_called(op).run(xs))


@kernel(pd.RunProgramGradOp)
def run_program_grad(op: pd.RunProgramGradOp, *xs: np.ndarray) -> tuple[np.ndarray, ...]:
    """The called program's backward: gradients of the operands `wrt` names."""
    return tuple(_called(op).run_grad(list(op.prop("wrt")), xs))


# The called program takes its 16-bit float inputs as they are held (bfloat16 as
# uint16 bits), not as the float32 copies ordinary kernels get: a `to_static` model
# under `paddle.amp.auto_cast` passes bfloat16 activations and their gradients.
narrow_kernel(pd.RunProgramOp)(run_program)
narrow_kernel(pd.RunProgramGradOp)(run_program_grad)


# ------------------------------------------------------------------ host callbacks


def _declared(t: object) -> tuple[np.dtype, list[int]]:
    return np_dtype(t), list(pd.shape_of(t))  # type: ignore[arg-type]


@kernel(pd.PyFuncOp)
def py_func(op: pd.PyFuncOp, *xs: np.ndarray) -> tuple[np.ndarray, ...]:
    """Call the registered function on the operand arrays; its results must match
    the declared result types (a dynamic dimension matches any size)."""
    key = op.prop("func")
    fn = pd.PY_FUNCS.get(key)
    if fn is None:
        raise InterpreterError(f"'pd.py_func': function '{key}' is not registered in this process")
    got = fn.func(*xs)
    outs = [] if got is None else list(got) if isinstance(got, (list, tuple)) else [got]
    want = [r.type for r in op.results]
    name = getattr(fn.func, "__name__", key)
    if len(outs) != len(want):
        raise InterpreterError(f"py_func: '{name}' returned {len(outs)} values for {len(want)} outputs")
    results = []
    for k, (value, t) in enumerate(zip(outs, want)):
        if value is None:
            raise InterpreterError(f"py_func: '{name}' returned None for output #{k}")
        dtype, shape = _declared(t)
        arr = np.asarray(value).astype(dtype, copy=False)
        if arr.ndim != len(shape) or any(d >= 0 and d != a for d, a in zip(shape, arr.shape)):
            raise InterpreterError(
                f"py_func: '{name}' returned shape {list(arr.shape)} for output #{k}, declared {shape}"
            )
        results.append(arr)
    return tuple(results)


_PRINTED: dict[int, int] = {}
"""How many times each `pd.print` op (by id, while it lives) has printed."""


def format_tensor(op: pd.PrintOp, x: np.ndarray) -> str:
    """Paddle's print layout: the variable's name, the message, lod, place, shape,
    layout, dtype and the first `summarize` values (-1: all)."""
    lines = []
    if op.prop("print_tensor_name") and op.prop("var"):
        lines.append(f"Variable: {op.prop('var')}")
    if op.prop("message"):
        lines.append(f"  - message: {op.prop('message')}")
    if op.prop("print_tensor_lod"):
        lines.append("  - lod: {}")
    lines.append("  - place: Place(cpu)")
    if op.prop("print_tensor_shape"):
        lines.append(f"  - shape: {list(x.shape)}")
    lines.append("  - layout: NCHW")
    if op.prop("print_tensor_type"):
        lines.append(f"  - dtype: {x.dtype.name}")
    n = op.prop("summarize")
    flat = x.reshape(-1)
    shown = flat if n == -1 else flat[: max(n, 0)]
    # C++ stream formatting, as Paddle's: 6 significant digits, bools as 1/0.
    text = (f"{v:g}" if isinstance(v, float) else str(int(v)) for v in shown.tolist())
    lines.append("  - data: [" + " ".join(text) + "]")
    return "\n".join(lines)


@kernel(pd.PrintOp)
def print_(op: pd.PrintOp, x: np.ndarray) -> np.ndarray:
    """Print x (in its phase, at most `first_n` times) and pass it through."""
    phase = op.prop("print_phase")
    active = phase != "backward" if op.prop("is_forward") else phase != "forward"
    first_n = op.prop("first_n")
    if active:
        count = _PRINTED.get(id(op), 0)
        if first_n < 0 or count < first_n:
            if count == 0:
                import weakref

                weakref.finalize(op, _PRINTED.pop, id(op), None)
            _PRINTED[id(op)] = count + 1
            print(format_tensor(op, x), flush=True)
    return x
