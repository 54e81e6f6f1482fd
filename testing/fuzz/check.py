"""Checking a case: `build_static` makes its static program (data/parameter ops,
the steps, the projected loss and a `pd.backward` filled by the autodiff pass), and
`check_case` runs it

* on the compiled backend against the reference interpreter: every value, its shape
  (0-d stays 0-d) and dtype, the loss and every gradient (`compare`: float64 rtol
  1e-7, float32 2e-4 of the value's scale);
* (float64 cases) every gradient element against central finite differences of the
  compiled loss (`pullback.testing.finite_differences`, a step of 1e-6 relative),
  skipping elements where the one-sided differences disagree (a kink: relu at 0, a
  max tie, a floor step);
* in eager mode (Tensors, `paddle.grad`) against the interpreter.

The first difference raises `Mismatch` (a backend's own exception passes through).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from pullback.dialects import pd

from ..finite_differences import central_differences
from .case import Case, Input, Stats, Step, cast_input, dtype_of, resolve


@dataclass
class Static:
    """A case as a static `pd` module with its filled backward region."""

    module: ModuleOp
    feeds: dict[str, np.ndarray]
    scope: dict[str, np.ndarray]
    values: list[SSAValue]
    loss: SSAValue
    grads: dict[int, SSAValue]


def build_static(case: Case) -> Static:
    """The case's static program: data/parameter ops, the steps, the projected loss
    and a `pd.backward` over the grad inputs, differentiated."""
    from pullback.passes.autodiff import differentiate

    ops: list[Operation] = []
    values: list[SSAValue] = []
    feeds: dict[str, np.ndarray] = {}
    scope: dict[str, np.ndarray] = {}
    grad_inputs: list[tuple[int, SSAValue]] = []
    for k, it in enumerate(case.items):
        if isinstance(it, Input):
            a = cast_input(it.array, case.dtype)
            name = f"in{k}"
            dt = dtype_of(a, case.dtype)
            op: Operation
            if it.param:
                op = pd.ParameterOp.make(name, list(a.shape), dt)
                scope[name] = a
            else:
                op = pd.DataOp.make(name, [None if it.dynamic and i == 0 else d for i, d in enumerate(a.shape)], dt)
                feeds[name] = a
            ops.append(op)
            values.append(op.results[0])
            if it.grad:
                grad_inputs.append((len(values) - 1, op.results[0]))
        else:
            op = it.op.make(*[values[a] for a in it.args], **resolve(it.props, case.dtype))
            ops.append(op)
            values.extend(op.results)
    terms: list[SSAValue] = []
    for j, t in enumerate(case.terms):
        v = values[t]
        shape = pd.shape_of(v.type)
        proj = pd.DataOp.make(f"proj{j}", list(shape), pd.dtype_name(pd.elem_of(v.type)))
        feeds[f"proj{j}"] = case.projections[t].astype(case.dtype)
        mul = pd.ElementwiseMulOp.make(v, proj.out)
        red = pd.ReduceSumOp.make(mul.out)
        ops += [proj, mul, red]
        terms.append(red.out)
    loss: SSAValue = terms[0]
    if len(terms) > 1:
        total = pd.SumOp.make(*terms)
        ops.append(total)
        loss = total.out
    module = ModuleOp(ops)
    grads: dict[int, SSAValue] = {}
    if grad_inputs:
        bw = pd.BackwardOp.make([loss], [v for _, v in grad_inputs])
        module.body.block.add_op(bw)
        bw = differentiate(bw)
        by_wrt = dict(zip(bw.wrt, bw.grads))
        # An input the loss does not depend on gets no gradient value.
        grads = {i: by_wrt[w] for i, w in grad_inputs if w in by_wrt}
    module.verify()
    return Static(module, feeds, scope, values, loss, grads)


class Mismatch(AssertionError):
    """A difference between backends or against finite differences."""


def _tolerances(dtype: str) -> tuple[float, float]:
    """(rtol, atol relative to the value's scale) for a case's float type."""
    return (2e-4, 2e-4) if dtype == "float32" else (1e-7, 1e-8)


def compare(what: str, got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    """Raise Mismatch unless `got` equals the reference `want` in shape, dtype and
    value (floats: within the tolerances of the case's float type; NaN where the
    reference has NaN, infinities equal)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise Mismatch(f"{what}: shape {list(got.shape)}, reference {list(want.shape)}")
    if got.dtype != want.dtype:
        raise Mismatch(f"{what}: dtype {got.dtype}, reference {want.dtype}")
    if got.dtype.kind != "f":
        if not np.array_equal(got, want):
            raise Mismatch(f"{what}: {got.ravel()[:8]} vs reference {want.ravel()[:8]}")
        return
    rtol, atol = _tolerances(dtype)
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    if not np.array_equal(nan_g, nan_w):
        raise Mismatch(f"{what}: NaN at {np.argwhere(nan_g != nan_w)[:3].tolist()} on one side only")
    finite = np.isfinite(want)
    scale = max(1.0, float(np.max(np.abs(want[finite]), initial=0.0)))
    with np.errstate(all="ignore"):  # inf - inf where both are inf: compared by ==
        diff = np.abs(got - want)
    ok = np.where(finite, diff <= rtol * np.abs(want) + atol * scale, got == want)
    if not np.all(ok | nan_w):
        bad = np.argwhere(~(ok | nan_w))[0]
        raise Mismatch(f"{what}: {got[tuple(bad)]!r} vs reference {want[tuple(bad)]!r} at {bad.tolist()} "
                       f"(max |diff| {float(np.nanmax(np.where(finite, diff, 0))):.3g}, scale {scale:.3g})")


def check_case(case: Case, stats: Stats | None = None, eager: bool = True, fd: bool = True) -> None:
    """Run the case on every backend and against finite differences; raises
    Mismatch (or the exception a backend raised) on the first problem."""
    from pullback.runtime.native.backend import CompiledBackend
    from pullback.runtime.interpreter import run_module

    st = build_static(case)
    fetch = [*st.values, st.loss, *st.grads.values()]
    with np.errstate(all="ignore"):
        env = run_module(st.module, st.feeds, {k: v.copy() for k, v in st.scope.items()})
    ref = [env[v] for v in fetch]
    backend = CompiledBackend(fallback=False)
    scope = {k: v.copy() for k, v in st.scope.items()}
    got = backend.run(st.module, st.feeds, scope, fetch)
    names = [case.describe(v) for v in range(len(st.values))] + ["loss"] + [
        f"gradient of {case.describe(i)}" for i in st.grads]
    for n, a, b in zip(names, got, ref):
        compare(f"compiled vs interpreter: {n}", a, b, case.dtype)
    if fd and case.dtype == "float64":
        _check_fd(case, st, backend, fetch, dict(zip(st.grads, ref[len(st.values) + 1:])), stats)
    if eager:
        _check_eager(case, st, ref)


def _check_fd(case: Case, st: Static, backend: Any, fetch: list[SSAValue], grads: dict[int, np.ndarray],
              stats: Stats | None) -> None:
    """Gradients against central differences of the compiled loss, elementwise;
    elements where the left and right differences disagree (kinks) are skipped."""
    if any(isinstance(it, Step) and it.op is pd.CastOp and it.props["dtype"] == "float32" for it in case.items):
        return  # rounding to float32 inside would swamp the differences

    def loss(name: str, a: np.ndarray) -> float:
        feeds = dict(st.feeds)
        scope = {k: v.copy() for k, v in st.scope.items()}
        (feeds if name in feeds else scope)[name] = a
        # The checked fetch list, so that the compiled program is reused, not rebuilt.
        return float(backend.run(st.module, feeds, scope, fetch)[len(st.values)])

    f0 = float(loss(next(iter(st.feeds)), next(iter(st.feeds.values()))))
    if not np.isfinite(f0):
        return
    for v, g in grads.items():
        i, _ = case.producers[v]
        name = f"in{i}"
        x0 = (st.feeds if name in st.feeds else st.scope)[name]
        for j, lo, hi, h in central_differences(functools.partial(loss, name), x0, 1e-6, relative=True):
            left, right = (f0 - lo) / h, (hi - f0) / h
            num = (hi - lo) / (2 * h)
            if not (np.isfinite(hi) and np.isfinite(lo)) or abs(left - right) > 1e-3 * (1 + abs(left) + abs(right)):
                if stats is not None:
                    stats.fd_skipped += 1
                continue
            ana = float(g.flat[j])
            if stats is not None:
                stats.fd_checked += 1
            if not abs(ana - num) <= 1e-4 * abs(num) + 1e-5 * max(1.0, float(np.max(np.abs(g)))):
                raise Mismatch(f"gradient of {case.describe(v)} at {np.unravel_index(j, x0.shape)}: "
                               f"{ana!r}, finite differences {num!r}")


def _check_eager(case: Case, st: Static, ref: list[np.ndarray]) -> None:
    """The same program run eagerly (Tensors, paddle.grad) against the interpreter."""
    from pullback.frontend.autograd import grad
    from pullback.frontend.eager import Tensor, eager_apply, to_tensor

    tensors: list[Tensor] = []
    leaves: list[tuple[int, Tensor]] = []
    for it in case.items:
        if isinstance(it, Input):
            a = cast_input(it.array, case.dtype)
            t = to_tensor(a, stop_gradient=not it.grad)
            tensors.append(t)
            if it.grad:
                leaves.append((len(tensors) - 1, t))
        else:
            out = eager_apply(it.op, [tensors[a] for a in it.args], prefix=it.op.name[3:], **resolve(it.props, case.dtype))
            tensors.extend(out if isinstance(out, list) else [out])
    total: Any = None
    for k in case.terms:
        term = eager_apply(pd.ReduceSumOp, [eager_apply(pd.ElementwiseMulOp, [tensors[k], to_tensor(
            case.projections[k].astype(case.dtype))], prefix="mul")], prefix="sum")
        total = term if total is None else eager_apply(pd.SumOp, [total, term], prefix="sum")
    assert isinstance(total, Tensor)
    for v, tv in enumerate(tensors):
        compare(f"eager vs interpreter: {case.describe(v)}", tv.numpy(), ref[v], case.dtype)
    if leaves:
        gs = grad([total], [t for _, t in leaves], allow_unused=True)
        for (v, _), gv in zip(leaves, gs):
            if v in st.grads:
                want = ref[len(st.values) + 1 + list(st.grads).index(v)]
            else:
                want = np.zeros(case.items[case.producers[v][0]].array.shape, case.dtype)  # type: ignore[union-attr]
            got = np.zeros_like(want) if gv is None else gv.numpy()
            compare(f"eager vs interpreter: gradient of {case.describe(v)}", got, want, case.dtype)


__all__ = ["Mismatch", "Static", "build_static", "check_case", "compare"]
