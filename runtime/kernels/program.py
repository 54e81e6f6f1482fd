"""Kernels of the program-structure ops: constants and seeded initializers."""

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import InterpreterError, kernel, np_dtype


@kernel(pd.FillConstantOp)
def fill_constant(op: pd.FillConstantOp) -> np.ndarray:
    return np.full(op.prop("shape"), op.prop("value"), dtype=np_dtype(op.out.type))


@kernel(pd.FillAnyLikeOp)
def fill_any_like(op: pd.FillAnyLikeOp, x: np.ndarray) -> np.ndarray:
    return np.full(x.shape, op.prop("value"), dtype=np_dtype(op.out.type))


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
