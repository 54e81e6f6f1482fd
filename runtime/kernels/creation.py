"""Kernels of the creation ops: ranges, identity matrices and seeded random tensors
(numpy's PCG64 generator seeded with the op's `seed`)."""

from __future__ import annotations

import numpy as np
from pullback.dialects import pd
from pullback.runtime.interpreter import kernel, np_dtype


@kernel(pd.AssignValueOp)
def assign_value(op: pd.AssignValueOp) -> np.ndarray:
    """The stored values in the stored shape (with their imaginary parts, complex)."""
    values = np.array(op.prop("values"), dtype=np.float64)
    imags = op.prop("imag_values")
    if imags is not None:
        values = values + 1j * np.array(imags, dtype=np.float64)
    return values.reshape(op.prop("shape"))


@kernel(pd.ArangeOp)
def arange(op: pd.ArangeOp) -> np.ndarray:
    """`start + i * step` for `i < size`, computed in the result dtype."""
    dt = np_dtype(op.out.type)
    n = pd.arange_size(op.prop("start"), op.prop("end"), op.prop("step"))
    if np.issubdtype(dt, np.integer):
        return (int(op.prop("start")) + np.arange(n, dtype=np.int64) * int(op.prop("step"))).astype(dt)
    return (dt.type(op.prop("start")) + np.arange(n, dtype=dt) * dt.type(op.prop("step"))).astype(dt)


@kernel(pd.LinspaceOp)
def linspace(op: pd.LinspaceOp) -> np.ndarray:
    """Evenly spaced, both ends included (computed in float64, then cast)."""
    return np.linspace(op.prop("start"), op.prop("stop"), op.prop("num"))


@kernel(pd.EyeOp)
def eye(op: pd.EyeOp) -> np.ndarray:
    """Ones on the main diagonal."""
    return np.eye(op.prop("num_rows"), op.prop("num_columns"), dtype=np_dtype(op.out.type))


@kernel(pd.RandintOp)
def randint(op: pd.RandintOp) -> np.ndarray:
    """Uniform integers in `[low, high)`."""
    rng = np.random.default_rng(op.prop("seed"))
    return rng.integers(op.prop("low"), op.prop("high"), size=op.prop("shape"), dtype=np.int64)


@kernel(pd.RandpermOp)
def randperm(op: pd.RandpermOp) -> np.ndarray:
    """A random permutation of `0 .. n-1`."""
    return np.random.default_rng(op.prop("seed")).permutation(op.prop("n"))


@kernel(pd.BernoulliOp)
def bernoulli(op: pd.BernoulliOp, x: np.ndarray) -> np.ndarray:
    """1 where a uniform sample in `[0, 1)` falls below the probability, else 0."""
    u = np.random.default_rng(op.prop("seed")).random(x.shape)
    return (u < x).astype(x.dtype)
