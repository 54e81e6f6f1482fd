"""Lowering of the optimizer family (`dialects/pd/optimizer.py`): `sgd`, `momentum`,
`adam`, `adamw`, `lamb`, `adamax`, `adagrad`, `adadelta`, `rmsprop`, and AMP's
loss-scaling ops `check_finite_and_unscale` and `update_loss_scaling`.

Updates are pointwise over the parameter: they fuse with the gradient computation
that feeds them and write the parameter (and its state) in place (the ops declare
`WRITES_PERSISTABLE`; `convert_pd_to_linalg.build_entry` chooses the buffers).  The
learning rate and the beta powers are one-element operands, read at index 0 of
every loop dimension; the rate is an operand, never a constant, so a learning-rate
schedule changes a scope value and never the compiled code.  Lamb's trust ratio
needs two norms over the whole parameter: its rule reduces them into scalars between
the moment update and the parameter update.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import f32
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from pullback.dialects import pd
from pullback.dialects.pd.base import shape_of
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.registry import lowers, pointwise
from pullback.lowering.scalar import REASSOC, DimMap, Scalar, identity_map
from pullback.lowering.views import elem_of_buffer, root_buffer


def _scalar_map(v: SSAValue) -> DimMap:
    """A one-element operand read at index 0 whatever the loop indices."""
    return tuple(None for _ in shape_of(v.type))


def param_maps(op: pd.PdOp) -> list[DimMap | None]:
    """Operands shaped like the parameter are read at the loop's indices; the
    one-element ones (learning rate, beta powers) at index 0."""
    param = shape_of(op.operands[0].type)
    rank = len(param)
    return [
        identity_map(rank) if shape_of(v.type) == param else _scalar_map(v)
        for v in op.operands
    ]


@pointwise(pd.SgdOp, maps=param_maps)
def _sgd(s: Scalar, op: pd.SgdOp, args: list[SSAValue]) -> list[SSAValue]:
    p, g, lr = args
    return [s.sub(p, s.mul(lr, g))]


@pointwise(pd.MomentumOp, maps=param_maps)
def _momentum(s: Scalar, op: pd.MomentumOp, args: list[SSAValue]) -> list[SSAValue]:
    # Paddle: g' = rescale*g (+ coeff*p); v' = mu*v + g'; p' = p - lr*v' or, Nesterov,
    # p - lr*(g' + mu*v').
    p, g, lr, v = args
    t = p.type
    if op.prop("rescale_grad") != 1.0:
        g = s.mul(g, s.const(op.prop("rescale_grad"), t))
    if op.prop("regularization_method") == "l2_decay":
        g = s.add(g, s.mul(s.const(op.prop("regularization_coeff"), t), p))
    mu = s.const(op.prop("mu"), t)
    v_new = s.add(s.mul(mu, v), g)
    step = s.add(g, s.mul(mu, v_new)) if op.prop("use_nesterov") else v_new
    return [s.sub(p, s.mul(lr, step)), v_new]


def adam_body(s: Scalar, op: pd.PdOp, p: SSAValue, g: SSAValue, lr: SSAValue, m1: SSAValue,
              m2: SSAValue, b1p: SSAValue, b2p: SSAValue) -> list[SSAValue]:
    """Adam's new parameter and moments for one element."""
    t = p.type
    one = s.const(1.0, t)
    b1 = s.const(op.prop("beta1"), t)
    b2 = s.const(op.prop("beta2"), t)
    eps = s.const(op.prop("epsilon"), t)
    m1n = s.add(s.mul(b1, m1), s.mul(s.sub(one, b1), g))
    m2n = s.add(s.mul(b2, m2), s.mul(s.mul(s.sub(one, b2), g), g))
    # Paddle: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t);
    #         p' = p - lr_t * m1' / (sqrt(m2') + eps * sqrt(1 - beta2^t)).
    c2 = s.math(xmath.SqrtOp, s.sub(one, b2p))
    lr_t = s.div(s.mul(lr, c2), s.sub(one, b1p))
    denom = s.add(s.math(xmath.SqrtOp, m2n), s.mul(eps, c2))
    return [s.sub(p, s.div(s.mul(lr_t, m1n), denom)), m1n, m2n]


def _adamw_body(s: Scalar, op: pd.AdamwOp, p: SSAValue, g: SSAValue, lr: SSAValue, m1: SSAValue,
                m2: SSAValue, b1p: SSAValue, b2p: SSAValue) -> list[SSAValue]:
    # Paddle: rate = lr * lr_ratio; p -= rate * coeff * p (with_decay); then adam at rate.
    t = p.type
    rate = s.mul(lr, s.const(op.prop("lr_ratio"), t)) if op.prop("lr_ratio") != 1.0 else lr
    if op.prop("with_decay"):
        p = s.sub(p, s.mul(s.mul(rate, s.const(op.prop("coeff"), t)), p))
    return adam_body(s, op, p, g, rate, m1, m2, b1p, b2p)


def _advance_pows(low: Lowerer, op: pd.PdOp, first: int) -> None:
    """Results `first` and `first+1` are the beta powers times beta1 and beta2: they
    advance once per step, after the update has read them."""
    b1p, b2p = op.operands[5], op.operands[6]
    one = identity_map(len(shape_of(b1p.type)))
    pow_outs = [(low.out(r), one) for r in op.results[first : first + 2]]
    b1, b2 = op.prop("beta1"), op.prop("beta2")
    low.generic(
        low.sizes_of(b1p), [(b1p, one, False), (b2p, one, False)], pow_outs,
        lambda s, a, o: [s.mul(a[0], s.const(b1, a[0].type)), s.mul(a[1], s.const(b2, a[1].type))],
    )


def _adam_reads(op: pd.PdOp) -> list[tuple[SSAValue, DimMap, bool]]:
    # The seven operands of the step (not `skip_update`, read by `_unless_skipped`).
    maps = param_maps(op)[:7]
    # Only the gradient may be an inlined expression (fusible operand 1).
    return [(v, m, i == 1) for i, (v, m) in enumerate(zip(op.operands, maps)) if m is not None]


def _unless_skipped(low: Lowerer, op: pd.AdamOp | pd.AdamwOp | pd.LambOp, step: Callable[[], None]) -> None:
    """Emit the update (`step()`); with a `skip_update` operand (AMP's `found_inf`),
    as the else branch of `scf.if %skip`, so that a skipped step computes nothing
    and a taken one copies nothing.  The then branch leaves the state as it was: a
    result written in place (its operand's own buffer, the usual case) needs
    nothing, one given a buffer of its own (an update whose old value is read
    later, copied back at the end) gets its operand copied in.  On the GPU the
    host runtime reads the flag from device memory, as for `pd.if`."""
    skip = op.skip_update
    if skip is None:
        step()
        return
    flag = low.emit(memref.LoadOp.get(low.read(skip), [low.index(0)] * len(shape_of(skip.type)))).results[0]
    keep, take = Block(), Block()
    branch = low.emit(scf.IfOp(flag, [], Region(keep), Region(take)))
    outer_b, outer_guard = low.b, low._guard
    # Allocations made by the step go before the branch (`emit_at_top` hoists them
    # above the open guard), so that their deallocation after the op stays valid.
    low._guard = outer_guard if outer_guard is not None else branch
    try:
        low.b = Builder(InsertPoint.at_end(take))
        step()
        low.b = Builder(InsertPoint.at_end(keep))
        for src, res in zip([op.operands[0], *op.operands[3:7]], op.results):
            mem = low.read(src)
            if root_buffer(low.buf[res]) is not root_buffer(mem):
                low.copy_buffer(mem, low.buf[res])
    finally:
        low.b, low._guard = outer_b, outer_guard
        keep.add_op(scf.YieldOp())
        take.add_op(scf.YieldOp())


@lowers(pd.AdamOp, pd.AdamwOp, fusible=lambda op: (1,))
def _adam(low: Lowerer, op: pd.AdamOp | pd.AdamwOp) -> None:
    p = op.operands[0]
    ident = identity_map(len(shape_of(p.type)))
    body: Callable[..., Any] = _adamw_body if isinstance(op, pd.AdamwOp) else adam_body

    def step() -> None:
        outs = [(low.out(r), ident) for r in op.results[:3]]
        low.generic(low.sizes_of(p), _adam_reads(op), outs, lambda s, a, o: body(s, op, *a))
        _advance_pows(low, op, 3)

    _unless_skipped(low, op, step)


@lowers(pd.LambOp, fusible=lambda op: (1,))
def _lamb(low: Lowerer, op: pd.LambOp) -> None:
    _unless_skipped(low, op, lambda: _lamb_step(low, op))


def _lamb_step(low: Lowerer, op: pd.LambOp) -> None:
    p = op.operands[0]
    rank = len(shape_of(p.type))
    ident = identity_map(rank)
    sizes = low.sizes_of(p)
    elem = elem_of_buffer(low.memref_type(p))
    wd = op.prop("weight_decay")
    adapt = wd > 0 or op.prop("always_adapt")
    r_buf = low.temp(elem, sizes)

    def moments(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        # m1' and m2' as Adam's; r = m1'/(1-b1^t) / (sqrt(m2'/(1-b2^t)) + eps) + wd*p.
        pv, g, _lr, m1, m2, b1p, b2p = a
        t = pv.type
        one = s.const(1.0, t)
        b1, b2 = s.const(op.prop("beta1"), t), s.const(op.prop("beta2"), t)
        m1n = s.add(s.mul(b1, m1), s.mul(s.sub(one, b1), g))
        m2n = s.add(s.mul(b2, m2), s.mul(s.mul(s.sub(one, b2), g), g))
        m1h = s.div(m1n, s.sub(one, b1p))
        m2h = s.div(m2n, s.sub(one, b2p))
        r = s.div(m1h, s.add(s.math(xmath.SqrtOp, m2h), s.const(op.prop("epsilon"), t)))
        if wd:
            r = s.add(r, s.mul(s.const(wd, t), pv))
        return [m1n, m2n, r]

    outs = [(low.out(op.results[1]), ident), (low.out(op.results[2]), ident), (r_buf, ident)]
    low.generic(sizes, _adam_reads(op), outs, moments)
    ratio_reads: list[tuple[SSAValue, DimMap, bool]] = []
    if adapt:
        # Squared norms of the parameter and of r, reduced into 0-d temporaries.
        norms = [low.temp(elem, []), low.temp(elem, [])]
        for acc in norms:
            low.fill(acc, 0.0)
        low.note_read(r_buf)
        low.generic(
            sizes, [(p, ident, False), low.buffer_read(r_buf, ident)],
            [(norms[0], ()), (norms[1], ())],
            lambda s, a, o: [s.emit(arith.AddfOp(o[0], s.mul(a[0], a[0]), REASSOC)),
                             s.emit(arith.AddfOp(o[1], s.mul(a[1], a[1]), REASSOC))],
            reductions=list(range(rank)),
        )
        for acc in norms:
            low.note_read(acc)
            ratio_reads.append(low.buffer_read(acc, ()))
    lr = op.operands[2]
    low.note_read(r_buf)
    reads = [(p, ident, False), (lr, _scalar_map(lr), False), low.buffer_read(r_buf, ident), *ratio_reads]

    def update(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        pv, lrv, r = a[:3]
        step = lrv
        if adapt:
            # Paddle: ratio = ||p|| / ||r|| when both are positive, else 1.
            t = pv.type
            zero = s.const(0.0, t)
            pn, rn = s.math(xmath.SqrtOp, a[3]), s.math(xmath.SqrtOp, a[4])
            both = s.emit(arith.AndIOp(s.cmp("gt", pn, zero), s.cmp("gt", rn, zero)))
            step = s.mul(lrv, s.select(both, s.div(pn, rn), s.const(1.0, t)))
        return [s.sub(pv, s.mul(step, r))]

    low.generic(sizes, reads, [(low.out(op.results[0]), ident)], update)
    _advance_pows(low, op, 3)


@pointwise(pd.AdamaxOp, maps=param_maps)
def _adamax(s: Scalar, op: pd.AdamaxOp, args: list[SSAValue]) -> list[SSAValue]:
    # Paddle: m' = b1*m + (1-b1)*g; u' = max(b2*u + eps, |g|); p' = p - lr/(1-b1^t) * m'/u'.
    p, g, lr, m, u, b1p = args
    t = p.type
    one = s.const(1.0, t)
    b1 = s.const(op.prop("beta1"), t)
    m_new = s.add(s.mul(b1, m), s.mul(s.sub(one, b1), g))
    u_new = s.max(s.add(s.mul(s.const(op.prop("beta2"), t), u), s.const(op.prop("epsilon"), t)),
                  s.math(xmath.AbsFOp, g))
    lr_t = s.div(lr, s.sub(one, b1p))
    return [s.sub(p, s.mul(lr_t, s.div(m_new, u_new))), m_new, u_new]


@pointwise(pd.AdagradOp, maps=param_maps)
def _adagrad(s: Scalar, op: pd.AdagradOp, args: list[SSAValue]) -> list[SSAValue]:
    # Paddle: m' = m + g^2; p' = p - lr * g / (sqrt(m') + eps).
    p, g, lr, m = args
    m_new = s.add(m, s.mul(g, g))
    denom = s.add(s.math(xmath.SqrtOp, m_new), s.const(op.prop("epsilon"), p.type))
    return [s.sub(p, s.div(s.mul(lr, g), denom)), m_new]


@pointwise(pd.AdadeltaOp, maps=param_maps)
def _adadelta(s: Scalar, op: pd.AdadeltaOp, args: list[SSAValue]) -> list[SSAValue]:
    # Paddle: E[g^2]' = rho*E[g^2] + (1-rho)*g^2;
    #         d = -sqrt((E[d^2] + eps) / (E[g^2]' + eps)) * g;
    #         E[d^2]' = rho*E[d^2] + (1-rho)*d^2;  p' = p + lr*d.
    p, g, lr, asg, asu = args
    t = p.type
    rho, eps, one = s.const(op.prop("rho"), t), s.const(op.prop("epsilon"), t), s.const(1.0, t)
    asg_new = s.add(s.mul(rho, asg), s.mul(s.sub(one, rho), s.mul(g, g)))
    ratio = s.div(s.add(asu, eps), s.add(asg_new, eps))
    upd = s.sub(s.const(0.0, t), s.mul(s.math(xmath.SqrtOp, ratio), g))
    asu_new = s.add(s.mul(rho, asu), s.mul(s.sub(one, rho), s.mul(upd, upd)))
    return [s.add(p, s.mul(lr, upd)), asg_new, asu_new]


@pointwise(pd.RmspropOp, maps=param_maps)
def _rmsprop(s: Scalar, op: pd.RmspropOp, args: list[SSAValue]) -> list[SSAValue]:
    # Paddle: ms' = rho*ms + (1-rho)*g^2; centered: mg' = rho*mg + (1-rho)*g and the
    # denominator sqrt(ms' - mg'^2 + eps), else sqrt(ms' + eps);
    # mom' = momentum*mom + lr*g/denom; p' = p - mom'.
    p, g, lr, mom, ms, mg = args
    t = p.type
    rho, one, eps = s.const(op.prop("decay"), t), s.const(1.0, t), s.const(op.prop("epsilon"), t)
    ms_new = s.add(s.mul(rho, ms), s.mul(s.sub(one, rho), s.mul(g, g)))
    if op.prop("centered"):
        mg_new = s.add(s.mul(rho, mg), s.mul(s.sub(one, rho), g))
        denom = s.math(xmath.SqrtOp, s.add(s.sub(ms_new, s.mul(mg_new, mg_new)), eps))
    else:
        mg_new = mg
        denom = s.math(xmath.SqrtOp, s.add(ms_new, eps))
    mom_new = s.add(s.mul(s.const(op.prop("momentum"), t), mom), s.div(s.mul(lr, g), denom))
    return [s.sub(p, mom_new), mom_new, ms_new, mg_new]



# ------------------------------------------------------------ loss scaling (AMP)


@lowers(pd.CheckFiniteAndUnscaleOp)
def _check_finite_and_unscale(low: Lowerer, op: pd.CheckFiniteAndUnscaleOp) -> None:
    # One 0-d float32 flag accumulates "some element so far was inf or nan" (a max
    # reduction over each x in turn); each x is then written as x / scale while the
    # flag is clear and x * 0 once set: Paddle's CPU kernel, a prefix over the xs.
    *xs, scale = op.operands
    flag = low.temp(f32, [])
    low.fill(flag, 0.0)
    for x, out in zip(xs, op.results[:-1]):
        rank = len(shape_of(x.type))
        ident = identity_map(rank)

        def scan(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
            v = a[0]
            finite = s.cmp("lt", s.math(xmath.AbsFOp, v), s.const(float("inf"), v.type))
            return [s.max(o[0], s.select(finite, s.const(0.0, f32), s.const(1.0, f32)))]

        low.generic(low.sizes_of(x), [(x, ident, False)], [(flag, ())], scan, reductions=list(range(rank)))

        def unscale(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
            v, sc, fl = a
            t = v.type
            inv = s.div(s.const(1.0, f32), sc)
            scaled = s.convert(s.mul(s.convert(v, f32), inv), t) if t != f32 else s.mul(v, inv)
            return [s.select(s.cmp("gt", fl, s.const(0.0, f32)), s.mul(v, s.const(0.0, t)), scaled)]

        low.note_read(flag)
        reads = [(x, ident, False), (scale, _scalar_map(scale), False), low.buffer_read(flag, ())]
        low.generic(low.sizes_of(x), reads, [(low.out(out), ident)], unscale)
    found = op.results[-1]
    low.note_read(flag)
    low.generic(
        low.sizes_of(found), [low.buffer_read(flag, ())], [(low.out(found), identity_map(1))],
        lambda s, a, o: [s.cmp("gt", a[0], s.const(0.0, f32))],
    )


@lowers(pd.UpdateLossScalingOp)
def _update_loss_scaling(low: Lowerer, op: pd.UpdateLossScalingOp) -> None:
    # The xs come out zeroed when found_inf; then one single-element loop updates
    # the scale and the two counters as Paddle's kernel (see the op's docstring).
    *xs, found, scale, good, bad = op.operands
    n = len(xs)
    for x, out in zip(xs, op.results[:n]):
        ident = identity_map(len(shape_of(x.type)))
        if not low.needed(out):
            continue
        low.generic(
            low.sizes_of(x), [(x, ident, False), (found, _scalar_map(found), False)], [(low.out(out), ident)],
            lambda s, a, o: [s.select(a[1], s.const(0.0, a[0].type), a[0])],
        )
    if op.prop("stop_update"):
        for src, res in zip((scale, good, bad), op.results[n:]):
            low.copy_value(src, low.out(res))
        return
    incr_n, decr_n = op.prop("incr_every_n_steps"), op.prop("decr_every_n_nan_or_inf")
    incr, decr = op.prop("incr_ratio"), op.prop("decr_ratio")

    def step(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        f, sc, g, b = a
        it = g.type
        zero, one = s.const(0, it), s.const(1, it)
        fone = s.const(1.0, f32)
        # found_inf: good = 0, bad + 1; at decr_n: scale * decr (at least 1), bad = 0.
        b1 = s.add(b, one)
        at_decr = s.cmp("eq", b1, s.const(decr_n, it))
        down = s.max(s.mul(sc, s.const(decr, f32)), fone)
        bad_scale, bad_b = s.select(at_decr, down, sc), s.select(at_decr, zero, b1)
        # finite: bad = 0, good + 1; at incr_n: scale * incr when finite, good = 0.
        g1 = s.add(g, one)
        at_incr = s.cmp("eq", g1, s.const(incr_n, it))
        up = s.mul(sc, s.const(incr, f32))
        up_ok = s.cmp("lt", s.math(xmath.AbsFOp, up), s.const(float("inf"), f32))
        good_scale = s.select(at_incr, s.select(up_ok, up, sc), sc)
        good_g = s.select(at_incr, zero, g1)
        return [s.select(f, bad_scale, good_scale), s.select(f, zero, good_g), s.select(f, bad_b, zero)]

    ident = identity_map(len(shape_of(scale.type)))
    reads = [(found, tuple([None] * len(shape_of(found.type))), False), (scale, ident, False),
             (good, ident, False), (bad, ident, False)]
    outs = [(low.out(r), ident) for r in op.results[n:]]
    low.generic(low.sizes_of(scale), reads, outs, step)


__all__ = ["adam_body", "param_maps"]
