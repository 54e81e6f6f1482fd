"""`paddle.tensor`: every tensor function of the `paddle` namespace, and Paddle's
submodules grouping them (`paddle.tensor.math`, `.random`, `.creation`,
`.manipulation`, `.linalg`, `.logic`, `.search`, `.stat`).

The functions are the op families' (`frontend/ops/*`); the submodules are made here
from the table `SUBMODULES` and registered as `pullback.frontend.api.tensor.<part>`
(what the package root's `paddle.tensor.<part>` aliases load), so each name has one
home, its family.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from pullback.frontend.api import registry
from pullback.frontend.layers import create_parameter
from pullback.frontend.ops.creation import fluid_gaussian_random

__path__: list[str] = []  # children (`paddle.tensor.math`, ...) are registered below

_LAZY = {"to_tensor": "pullback.frontend.ops.creation:to_tensor"}

SUBMODULES: dict[str, list[str]] = {
    "math": [
        "abs", "add", "add_n", "clip", "divide", "erf", "exp", "log", "max", "maximum",
        "minimum", "multiply", "pow", "scale", "sigmoid", "sign", "sqrt", "square",
        "subtract", "sum", "tanh", "remainder", "mod", "floor_mod", "floor_divide", "atan2",
        "trunc", "frac", "neg", "hypot", "logit", "signbit", "heaviside", "nan_to_num",
        "nansum", "nanmean", "count_nonzero", "addmm", "baddbmm", "inner", "tensordot", "trace",
        "diagonal", "logcumsumexp", "cummax", "cummin", "lgamma", "digamma", "erfinv", "gcd",
        "lcm", "diff", "increment", "multiplex", "kron", "outer", "cumsum", "cumprod", "prod",
        "logsumexp", "amax", "amin", "min", "diag_embed",
    ],
    "random": ["gaussian", "normal", "rand", "randn", "standard_normal", "uniform", "randint",
               "randint_like", "randperm", "bernoulli", "multinomial"],
    "creation": ["full", "full_like", "ones", "ones_like", "zeros", "zeros_like", "to_tensor",
                 "create_parameter", "meshgrid", "tril_indices", "triu_indices", "vander",
                 "diag", "eye", "arange", "linspace"],
    "manipulation": ["broadcast_to", "cast", "concat", "expand", "expand_as", "flatten",
                     "reshape", "slice", "split", "squeeze", "transpose", "unsqueeze", "moveaxis",
                     "swapaxes", "swapdims", "unbind", "unflatten", "rot90", "tensor_split",
                     "hsplit", "vsplit", "dsplit", "take", "tolist", "stack", "unstack", "flip",
                     "roll", "tile", "gather", "scatter", "chunk"],
    "linalg": ["matmul", "bmm", "dot", "cov", "corrcoef", "norm", "cond", "cross", "cholesky",
               "eig", "eigvals", "eigvalsh", "eigh", "matrix_power", "qr", "svd", "multi_dot",
               "pinv", "solve", "cholesky_solve", "triangular_solve", "lstsq", "lu", "lu_unpack",
               "mv", "histogram", "bincount"],
    "logic": ["equal", "greater_equal", "greater_than", "less_equal", "less_than", "not_equal",
              "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_xor",
              "logical_not", "any", "all", "isclose", "allclose", "equal_all", "is_tensor",
              "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"],
    "search": ["where", "sort", "argsort", "kthvalue", "mode", "searchsorted", "bucketize",
               "topk", "argmax", "argmin", "nonzero", "masked_select", "index_select"],
    "stat": ["mean", "median", "quantile", "std", "var", "numel"],
}
"""Paddle's submodule of each function (those pullback has)."""


def gaussian(shape: Any, mean: float = 0.0, std: float = 1.0, seed: int = 0, dtype: Any = None,
             name: str | None = None) -> Any:
    """`paddle.tensor.random.gaussian`: normal samples of `shape` (float32 unless
    `dtype` says otherwise)."""
    return fluid_gaussian_random(shape, mean, std, seed, dtype or "float32", name)


def _lookup(name: str) -> Any:
    """The function `name` (None when pullback does not have it)."""
    if name in _LAZY:
        import importlib

        mod, _, attr = _LAZY[name].partition(":")
        return getattr(importlib.import_module(mod), attr)
    if name == "create_parameter":
        return create_parameter
    if name == "gaussian":
        return gaussian
    return registry.paddle().get(name)


def _make_submodules() -> dict[str, types.ModuleType]:
    out = {}
    for part, names in SUBMODULES.items():
        full = f"{__name__}.{part}"
        mod = sys.modules.get(full)
        if mod is None:
            mod = types.ModuleType(full, f"`paddle.tensor.{part}` (see {__name__}).")
            present = [n for n in names if _lookup(n) is not None]
            for n in present:
                setattr(mod, n, _lookup(n))
            mod.__all__ = present  # type: ignore[attr-defined]
            sys.modules[full] = mod
        out[part] = mod
    return out


globals().update(registry.paddle())
globals().update(_make_submodules())


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return _lookup(name)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


__all__ = [*SUBMODULES, *registry.paddle(), "create_parameter", "gaussian"]  # noqa: PLE0604
