"""Gradient checks in float16 and bfloat16 against float64 finite differences.

`check_vjp_dtype(OpClass, [inputs...], "float16")` builds the one-op program of
`check_vjp` (loss = sum of each result times a fixed random projection) in the low
precision, evaluates its gradients with the interpreter and the compiled backend, and
compares each with central finite differences of the float64 program at the same
(rounded) inputs and projections.  The tolerance is relative to the largest reference
element and set per dtype (`TOLERANCES`): a 16-bit float carries 11 (float16) or 8
(bfloat16) significant bits, and every op rounds its result once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pullback.dialects import pd
from pullback.dialects.bfloat16 import bf16_to_f32, host_cast

from . import _Program
from .finite_differences import fd_grad

TOLERANCES: dict[str, float] = {"float16": 1.5e-2, "bfloat16": 6e-2, "float32": 1e-4}
"""Relative tolerance (of the largest reference element) of a gradient in each dtype."""


def to_float64(a: np.ndarray) -> np.ndarray:
    """Values of host data as float64 (uint16 arrays are bfloat16 bits)."""
    return bf16_to_f32(a).astype(np.float64) if a.dtype == np.uint16 else np.asarray(a, dtype=np.float64)


def round_to(a: np.ndarray, dtype: str) -> np.ndarray:
    """float64 data `a` rounded to `dtype` (held as that dtype's host data)."""
    return host_cast(a, pd.DTYPE_BY_NAME[dtype].numpy)


def check_vjp_dtype(
    op_cls: type[pd.PdOp],
    inputs: Sequence[np.ndarray],
    dtype: str,
    *,
    props: Mapping[str, Any] | None = None,
    wrt: Sequence[int] | None = None,
    rtol: float | None = None,
    compiled: bool = True,
    seed: int = 0,
) -> dict[str, list[np.ndarray]]:
    """Check `op_cls`'s gradients computed in `dtype` (see the module's docstring).

    `inputs`: float64 arrays for the float operands (rounded to `dtype` here), integer
    arrays for ids and labels.  Returns the gradients per backend (float64 values)."""
    props = dict(props or {})
    if wrt is None:
        wrt = [i for i, a in enumerate(inputs) if np.asarray(a).dtype.kind == "f"]
    narrow = [round_to(a, dtype) if np.asarray(a).dtype.kind == "f" else np.asarray(a) for a in inputs]
    exact = [to_float64(n) if np.asarray(a).dtype.kind == "f" else n for a, n in zip(inputs, narrow)]
    rng = np.random.default_rng(seed)
    low = _Program(op_cls, narrow, props, wrt, 1, False, rng)
    ref = _Program(op_cls, exact, props, wrt, 1, False, rng)
    from pullback.runtime.interpreter import evaluate

    env = evaluate([ref.op], {d.out: ref.feeds[d.var_name.data] for d in ref.data})
    projs = [to_float64(round_to(rng.standard_normal(env[r].shape), dtype)) for r in ref.float_results]
    ref_feeds = dict(ref.feeds) | {f"proj{k}": p for k, p in enumerate(projs)}
    low_feeds = dict(low.feeds) | {
        f"proj{k}": round_to(p, pd.dtype_name(pd.elem_of(r.type))) for k, (p, r) in enumerate(zip(projs, low.float_results))
    }
    tol = TOLERANCES[dtype] if rtol is None else rtol

    def loss_in(i: int) -> Any:
        return lambda x: float(ref.run({**ref_feeds, f"in{i}": x})[ref.loss])

    wanted = {i: fd_grad(loss_in(i), ref_feeds[f"in{i}"], 1e-6) for i in wrt}
    results: dict[str, list[np.ndarray]] = {}
    backends: list[str] = ["interpreter", *(["compiled"] if compiled else [])]
    for backend in backends:
        with np.errstate(all="ignore"):
            if backend == "interpreter":
                got_env = low.run(low_feeds)
                grads = [got_env[g] for g in low.grads]
            else:
                from pullback.runtime.native.backend import CompiledBackend

                grads = CompiledBackend(fallback=False).run(low.module, low_feeds, {}, list(low.grads))
        results[backend] = []
        for k, i in enumerate(low.grad_wrt):
            g = grads[k]
            want_dtype = pd.DTYPE_BY_NAME[dtype].numpy
            assert g.dtype == want_dtype, f"{op_cls.name} ({backend}): gradient #{i} is {g.dtype}, not {dtype}"
            got = to_float64(g)
            want = wanted[i]
            scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-3)
            err = float(np.max(np.abs(got - want))) if want.size else 0.0
            assert err <= tol * scale, (
                f"{op_cls.name} in {dtype} ({backend}): gradient of input #{i} is off by {err:.3g} "
                f"(> {tol} x {scale:.3g}); got {got.ravel()[:6]}, finite differences {want.ravel()[:6]}"
            )
            results[backend].append(got)
        for i in wrt:
            if i not in low.grad_wrt:
                assert np.max(np.abs(wanted[i]), initial=0.0) <= tol, f"{op_cls.name}: input #{i} got no gradient"
    return results


__all__ = ["TOLERANCES", "check_vjp_dtype", "round_to", "to_float64"]
