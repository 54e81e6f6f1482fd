"""Program-structure ops carry no gradient: constants and seeded initializers.

`pd.fill_any_like` reads only its operand's shape, so nothing flows back into it
(this is what lets rules build runtime-shaped constants from forward values).
"""

from collections.abc import Sequence

from pullback.dialects import pd
from pullback.dialects.pd.base import elem_of, is_inexact
from pullback.passes.autodiff import AutodiffError
from pullback.passes.vjp import complex_aware, non_differentiable, vjp
from pullback.passes.vjp.builder import VjpBuilder
from xdsl.ir import Operation, SSAValue

non_differentiable(
    pd.FillConstantOp, pd.FillAnyLikeOp, pd.UniformRandomOp, pd.GaussianRandomOp,
    pd.TruncatedGaussianRandomOp,
)


@vjp(pd.RunProgramOp)
def run_program_vjp(b: VjpBuilder, op: Operation, grads: list[SSAValue | None]) -> Sequence[SSAValue | None]:
    """One `pd.run_program_grad` computing the gradients of the varied float
    operands (the called program's own backward, built by the autodiff pass when
    the function was traced).  Outputs that received no gradient are seeded with
    zeros; the hidden results (saved values, state updates) carry none."""
    assert isinstance(op, pd.RunProgramOp)
    fn = pd.RUN_PROGRAMS[op.prop("program")]
    reachable = set(fn.grad_positions)
    wrt = [
        i for i, x in enumerate(op.operands)
        if i in reachable and is_inexact(elem_of(x.type)) and (b.varied is None or x in b.varied)
    ]
    if not wrt:
        return [None] * len(op.operands)
    n_out = fn.n_outputs
    seeds = [g if g is not None else b.full_like(r, 0.0) for r, g in zip(op.results[:n_out], grads)]
    outs = b.emit_multi(
        pd.RunProgramGradOp, *op.operands, *op.results, *seeds, program=op.prop("program"), wrt=wrt
    )
    by_pos = dict(zip(wrt, outs))
    return [by_pos.get(i) for i in range(len(op.operands))]


# Gradients of gradients through a compiled function are not available yet: the
# autodiff pass reports the op by name instead of computing a wrong value.


@vjp(pd.RunProgramGradOp)
def run_program_grad_vjp(b: VjpBuilder, op: Operation, grads: list[SSAValue | None]) -> Sequence[SSAValue | None]:
    """Second derivatives through a `to_static` function are not supported yet:
    an error naming the op rather than a silently wrong (zero) gradient."""
    raise AutodiffError(
        "'pd.run_program_grad': second derivatives through a paddle.jit.to_static "
        "function are not supported; differentiate the dygraph function instead", op
    )


@vjp(pd.PyFuncOp)
def py_func_vjp(b: VjpBuilder, op: Operation, grads: list[SSAValue | None]) -> Sequence[SSAValue | None]:
    """One `pd.py_func` calling the registered backward function on the forward
    operands, the forward results and the results' gradients (in that order, less
    the skipped positions); it returns one gradient per operand.  Without a
    backward function the op passes no gradient (as Paddle's)."""
    assert isinstance(op, pd.PyFuncOp)
    fn = pd.PY_FUNCS[op.prop("func")]
    if fn.backward is None:
        return [None] * len(op.operands)
    seeds = [g if g is not None else b.full_like(r, 0.0) for r, g in zip(op.results, grads)]
    fwd = [v for k, v in enumerate([*op.operands, *op.results]) if k not in fn.skip]
    outs = b.emit_multi(pd.PyFuncOp, *fwd, *seeds, func=fn.backward)
    return [g if is_inexact(elem_of(x.type)) else None for x, g in zip(op.operands, outs)]


@vjp(pd.PrintOp)
def print_vjp(b: VjpBuilder, op: Operation, grads: list[SSAValue | None]) -> Sequence[SSAValue | None]:
    """The gradient passes through, printed (`name@GRAD`) unless the phase is
    `forward`."""
    assert isinstance(op, pd.PrintOp)
    (g,) = grads
    if g is None or op.prop("print_phase") == "forward":
        return [g]
    props = {k: op.prop(k) for k in ("message", "first_n", "summarize", "print_tensor_name", "print_tensor_type",
                                     "print_tensor_shape", "print_tensor_lod", "print_phase")}
    return [b.emit(pd.PrintOp, g, var=f"{op.prop('var')}@GRAD", is_forward=False, **props)]


# A to_static program's backward is the autodiff of its ops (complex-correct each).
complex_aware(pd.RunProgramOp, pd.RunProgramGradOp)
