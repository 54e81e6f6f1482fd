"""Test helpers: gradient checks of VJP rules against finite differences, the
finite differences themselves (`fd_grad`, `fd_jacobian`: `finite_differences.py`),
and `input_range`, where tests draw an op's inputs from (its declared domain).

`check_vjp(OpClass, [inputs...], props={...})` builds a one-op program

    loss = sum_k reduce_sum(result_k * P_k)        (P_k fixed random projections)

appends an empty `pd.backward`, runs the `autodiff` pass, evaluates the gradients with
the reference interpreter and compares them with central finite differences of the
same interpreter in float64.  With `order=2` it differentiates the gradient again
(`sum_i reduce_sum(grad_i * Q_i)`) and checks that against finite differences of the
first-order gradients, so a rule is known to be differentiable, not merely present.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from pullback.dialects import pd
from pullback.passes.autodiff import differentiate
from pullback.runtime.interpreter import np_dtype, run_module

from .finite_differences import central_differences, fd_complex_grad, fd_grad, fd_jacobian

__all__ = [
    "central_differences",
    "check_complex_grad",
    "check_eager_grad",
    "fd_complex_grad",
    "check_vjp",
    "fd_grad",
    "fd_jacobian",
    "input_range",
    "run_fetch",
    "run_op",
]

_DTYPE_NAMES = {d.numpy: d.name for d in pd.DTYPES}


def _data(name: str, a: np.ndarray, dynamic: bool) -> pd.DataOp:
    shape: list[int | None] = list(a.shape)
    if dynamic and shape:
        shape[0] = None
    return pd.DataOp.make(name, shape, _DTYPE_NAMES[a.dtype])


def _projected_sum(ops: list[Operation], values: Sequence[SSAValue], projs: Sequence[SSAValue]) -> SSAValue:
    """Append ops computing `sum_k reduce_sum(values_k * projs_k)`; return the scalar."""
    terms: list[SSAValue] = []
    for v, p in zip(values, projs):
        mul = pd.ElementwiseMulOp.make(v, p)
        red = pd.ReduceSumOp.make(mul.out)
        ops += [mul, red]
        terms.append(red.out)
    if len(terms) == 1:
        return terms[0]
    total = pd.SumOp.make(*terms)
    ops.append(total)
    return total.out


class _Program:
    """The one-op program of a gradient check, built once, run many times."""

    def __init__(
        self,
        op_cls: type[pd.PdOp],
        inputs: Sequence[np.ndarray],
        props: Mapping[str, Any],
        wrt: Sequence[int],
        order: int,
        dynamic_batch: bool | Sequence[int],
        rng: np.random.Generator,
    ) -> None:
        ops: list[Operation] = []
        dyn = set(range(len(inputs))) if dynamic_batch is True else set(dynamic_batch or ())
        self.data = [_data(f"in{i}", a, i in dyn) for i, a in enumerate(inputs)]
        ops += self.data
        self.op = op_cls.make(*[d.out for d in self.data], **props)
        ops.append(self.op)
        float_results = [r for r in self.op.results if pd.is_float(pd.elem_of(r.type))]
        self.feeds: dict[str, np.ndarray] = {f"in{i}": a for i, a in enumerate(inputs)}
        projs = []
        for k, r in enumerate(float_results):
            d = pd.DataOp.make(
                f"proj{k}", [None] * len(pd.shape_of(r.type)), pd.dtype_name(pd.elem_of(r.type))
            )
            ops.append(d)
            projs.append(d.out)
        self.float_results = float_results
        self.proj_ops = projs
        self.loss = _projected_sum(ops, float_results, projs)
        self.module = ModuleOp(ops)
        bw = pd.BackwardOp.make([self.loss], [self.data[i].out for i in wrt])
        self.module.body.block.add_op(bw)
        self.bw = differentiate(bw)
        self.grads = list(self.bw.grads)
        self.grad_wrt = [next(i for i in wrt if self.data[i].out is w) for w in self.bw.wrt]
        self.bw2: pd.BackwardOp | None = None
        if order >= 2 and self.grads:
            ops2: list[Operation] = []
            qs = []
            for k, g in enumerate(self.grads):
                d = pd.DataOp.make(
                    f"q{k}", [None] * len(pd.shape_of(g.type)), pd.dtype_name(pd.elem_of(g.type))
                )
                ops2.append(d)
                qs.append(d.out)
            loss2 = _projected_sum(ops2, self.grads, qs)
            for o in ops2:
                self.module.body.block.add_op(o)
            bw2 = pd.BackwardOp.make([loss2], [self.data[i].out for i in wrt])
            self.module.body.block.add_op(bw2)
            self.bw2 = differentiate(bw2)
        self.module.verify()

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[SSAValue, np.ndarray]:
        return run_module(self.module, feeds, {})


def check_vjp(
    op_cls: type[pd.PdOp],
    inputs: Sequence[np.ndarray],
    *,
    props: Mapping[str, Any] | None = None,
    wrt: Sequence[int] | None = None,
    order: int = 1,
    dynamic_batch: bool | Sequence[int] = False,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> pd.BackwardOp:
    """Check `op_cls`'s VJP rule against float64 finite differences.

    `inputs`: float64 arrays for differentiable operands (integer arrays for labels
    and ids); `wrt`: operand indices to differentiate (default: every float input);
    `dynamic_batch`: declare dimension 0 of every input (True) or of the inputs at
    the given indices dynamic (`?`); `order=2`
    also checks the second derivative.  Raises AssertionError on a mismatch and
    returns the filled backward op (for structural assertions).
    """
    inputs = [np.array(a) for a in inputs]
    props = dict(props or {})
    if wrt is None:
        wrt = [i for i, a in enumerate(inputs) if np.issubdtype(a.dtype, np.floating)]
    rng = np.random.default_rng(seed)
    prog = _Program(op_cls, inputs, props, wrt, order, dynamic_batch, rng)

    # Projections shaped like each result at run time.
    fwd_shapes = _result_shapes(prog)
    feeds = dict(prog.feeds)
    for k, (shape, r) in enumerate(zip(fwd_shapes, prog.float_results)):
        feeds[f"proj{k}"] = rng.standard_normal(shape).astype(np_dtype(r.type))
    for k, g in enumerate(prog.grads):
        feeds[f"q{k}"] = rng.standard_normal(inputs[prog.grad_wrt[k]].shape).astype(np_dtype(g.type))

    env = prog.run(feeds)

    def loss_in(i: int) -> Callable[[np.ndarray], float]:
        """The loss as a function of input i alone."""
        return lambda x: float(prog.run({**feeds, f"in{i}": x})[prog.loss])

    missing = [i for i in wrt if i not in prog.grad_wrt]
    for i in missing:
        # No gradient at all means a zero derivative; confirm it numerically.
        num = fd_grad(loss_in(i), feeds[f"in{i}"], eps)
        np.testing.assert_allclose(num, 0.0, atol=max(atol, 1e-4), err_msg=f"{op_cls.name}: input #{i} got no gradient but its numeric gradient is not zero")
    for k, i in enumerate(prog.grad_wrt):
        analytic = env[prog.grads[k]]
        num = fd_grad(loss_in(i), feeds[f"in{i}"], eps)
        np.testing.assert_allclose(
            analytic, num, rtol=rtol, atol=atol,
            err_msg=f"{op_cls.name}: first-order gradient of input #{i} differs from finite differences",
        )
    if prog.bw2 is not None:
        second = dict(zip(prog.bw2.wrt, prog.bw2.grads))

        def inner_in(i: int) -> Callable[[np.ndarray], float]:
            """The projected first-order gradients as a function of input i alone."""
            def inner(x: np.ndarray) -> float:
                fd = {**feeds, f"in{i}": x}
                e = prog.run(fd)
                return float(sum(np.sum(e[g] * fd[f"q{k}"]) for k, g in enumerate(prog.grads)))
            return inner

        for i in wrt:
            num = fd_grad(inner_in(i), feeds[f"in{i}"], eps)
            w = prog.data[i].out
            analytic = env[second[w]] if w in second else np.zeros_like(num)
            np.testing.assert_allclose(
                analytic, num, rtol=max(rtol, 1e-4), atol=max(atol, 1e-5),
                err_msg=f"{op_cls.name}: second-order gradient of input #{i} differs from finite differences",
            )
    return prog.bw


def _result_shapes(prog: _Program) -> list[tuple[int, ...]]:
    """Run-time shapes of the op's float results (evaluated with the interpreter)."""
    from pullback.runtime.interpreter import evaluate

    env = evaluate([prog.op], {d.out: prog.feeds[d.var_name.data] for d in prog.data})
    return [env[r].shape for r in prog.float_results]


def input_range(*ops: type[pd.PdOp], operand: str = "x", lo: float = -3.0, hi: float = 3.0,
                margin: float = 0.1) -> tuple[float, float]:
    """Where a test draws `operand` of each op in `ops` from: `(lo, hi)` narrowed to
    lie `margin` inside every op's declared input domain (`DOMAIN`), so that no test
    restates where log, asin or a divisor are defined.  `input_range(pd.Log1pOp)` is
    `(-0.9, 3.0)`; raises ValueError when nothing is left."""
    for op in ops:
        lo, hi = op.input_domain(operand).interval(margin, lo, hi)
    return float(lo), float(hi)


def run_fetch(program: Any, feeds: Mapping[str, np.ndarray], *outs: Any) -> list[np.ndarray]:
    """Verify a frontend `Program` and run it with the interpreter; the values of the
    Variables `outs`."""
    program.module.verify()
    env = run_module(program.module, feeds, {})
    return [env[v.value] for v in outs]


def run_op(
    op_cls: type[pd.PdOp], *arrays: np.ndarray, dynamic: bool = False, **props: Any
) -> Any:
    """Build `op_cls` on feeds shaped like `arrays` (dimension 0 dynamic if asked),
    evaluate it with the interpreter, check that each result fits its static type
    (shape and dtype), and return the result (a list for several)."""
    from pullback.runtime.interpreter import evaluate

    datas = [
        pd.DataOp.make(
            f"in{i}",
            [None if dynamic and j == 0 else d for j, d in enumerate(a.shape)],
            _DTYPE_NAMES[a.dtype],
        )
        for i, a in enumerate(arrays)
    ]
    op = op_cls.make(*[d.out for d in datas], **props)
    op.verify()
    env = evaluate([op], {d.out: a for d, a in zip(datas, arrays)})
    outs = [env[r] for r in op.results]
    for r, v in zip(op.results, outs):
        assert pd.shapes_compatible(pd.shape_of(r.type), v.shape), (r.type, v.shape)
        assert v.dtype == pd.DTYPE_BY_ELEM[pd.elem_of(r.type)].numpy, (r.type, v.dtype)
    return outs[0] if len(outs) == 1 else outs


def check_eager_grad(
    fn: Callable[..., Any],
    inputs: Sequence[np.ndarray],
    *,
    order: int = 1,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    seed: int = 0,
) -> None:
    """Check eager-mode gradients of a composite function against float64 finite
    differences: `fn(*tensors)` returns one Tensor; the checked scalar is
    `sum(fn(...) * P)` for a fixed random projection `P`.  `order=2` also checks
    `paddle.grad(..., create_graph=True)` differentiated once more (projected by a
    random `Q`) against finite differences of the first-order gradients.

    Functions built from differentiable ops (layers, `F.group_norm`, ...) are
    checked this way; single ops use `check_vjp`.  Raises AssertionError."""
    from pullback.frontend.autograd import grad
    from pullback.frontend.eager import to_tensor

    rng = np.random.default_rng(seed)
    arrays = [np.array(a, dtype=np.float64) for a in inputs]
    proj = rng.standard_normal(np.shape(fn(*[to_tensor(a) for a in arrays]).numpy()))
    qs = [rng.standard_normal(a.shape) for a in arrays]

    def first(values: Sequence[np.ndarray], create_graph: bool = False) -> tuple[Any, list[Any]]:
        ts = [to_tensor(v, stop_gradient=False) for v in values]
        out = (fn(*ts) * to_tensor(proj)).sum()
        return out, grad([out], ts, create_graph=create_graph, allow_unused=True) + ts

    def loss(values: Sequence[np.ndarray]) -> float:
        ts = [to_tensor(v) for v in values]
        return float((fn(*ts) * to_tensor(proj)).sum())

    def inner(values: Sequence[np.ndarray]) -> float:
        _, res = first(values)
        gs = res[: len(values)]
        return float(sum(0.0 if g is None else np.sum(g.numpy() * q) for g, q in zip(gs, qs)))

    def at(f: Callable[[Sequence[np.ndarray]], float], i: int) -> Callable[[np.ndarray], float]:
        """`f` as a function of input i alone."""
        return lambda x: f([*arrays[:i], x, *arrays[i + 1:]])

    _, res = first(arrays, create_graph=order >= 2)
    gs, ts = res[: len(arrays)], res[len(arrays):]
    for i, a in enumerate(arrays):
        num = fd_grad(at(loss, i), a, eps)
        got = np.zeros_like(a) if gs[i] is None else gs[i].numpy()
        np.testing.assert_allclose(got, num, rtol=rtol, atol=atol,
                                   err_msg=f"first-order gradient of input #{i} differs from finite differences")
    if order >= 2:
        from pullback.frontend.eager import Tensor

        terms: list[Any] = [(cast(Any, g) * to_tensor(q)).sum() for g, q in zip(gs, qs)
                            if isinstance(g, Tensor) and not g.stop_gradient]
        if not terms:
            return
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        second = grad([total], ts, allow_unused=True)
        for i, a in enumerate(arrays):
            num = fd_grad(at(inner, i), a, eps)
            gi = second[i]
            got = np.zeros_like(a) if gi is None else gi.numpy()
            np.testing.assert_allclose(got, num, rtol=max(rtol, 1e-4), atol=max(atol, 1e-5),
                                       err_msg=f"second-order gradient of input #{i} differs from finite differences")


def check_complex_grad(
    fn: Callable[..., Any],
    inputs: Sequence[np.ndarray],
    *,
    order: int = 1,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    seed: int = 0,
) -> None:
    """`check_eager_grad` for functions of complex (or real) tensors: the checked
    scalar is `sum(re(out) * P + im(out) * Q)` for fixed random P, Q (`sum(out * P)`
    for a real result), and each complex input's gradient is compared with
    `fd_complex_grad` (Paddle's convention, `d/d re + i d/d im`); real inputs
    (float64) with `fd_grad`.  `order=2` also differentiates the first-order
    gradients' real inner product with random directions once more.  Inputs are
    computed in complex128 / float64.  Raises AssertionError."""
    from pullback.frontend.autograd import grad
    from pullback.frontend.eager import Tensor, to_tensor
    from pullback.frontend.ops.complex import imag, real

    rng = np.random.default_rng(seed)
    arrays = [np.array(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64) for a in inputs]
    shape = np.shape(fn(*[to_tensor(a) for a in arrays]).numpy())
    p_re, p_im = rng.standard_normal(shape), rng.standard_normal(shape)
    qs = [rng.standard_normal(a.shape) + (1j * rng.standard_normal(a.shape) if np.iscomplexobj(a) else 0)
          for a in arrays]

    def project(out: Any) -> Any:
        if out.dtype in pd.COMPLEX_NAMES:
            return (real(out) * to_tensor(p_re) + imag(out) * to_tensor(p_im)).sum()
        return (out * to_tensor(p_re)).sum()

    def real_inner(g: Any, q: np.ndarray) -> Any:
        """`sum(re(g) re(q) + im(g) im(q))` as a tensor."""
        if g.dtype in pd.COMPLEX_NAMES:
            return (real(g) * to_tensor(q.real) + imag(g) * to_tensor(q.imag)).sum()
        return (g * to_tensor(np.real(q))).sum()

    def first(values: Sequence[np.ndarray], create_graph: bool = False) -> tuple[list[Any], list[Any]]:
        ts = [to_tensor(v, stop_gradient=False) for v in values]
        return grad([project(fn(*ts))], ts, create_graph=create_graph, allow_unused=True), ts

    def loss(values: Sequence[np.ndarray]) -> float:
        return float(project(fn(*[to_tensor(v) for v in values])).numpy())

    def inner(values: Sequence[np.ndarray]) -> float:
        gs, _ = first(values)
        return float(sum(0.0 if g is None else float(real_inner(g, q).numpy()) for g, q in zip(gs, qs)))

    def numeric(f: Callable[[Sequence[np.ndarray]], float], i: int) -> np.ndarray:
        def of_input(x: np.ndarray) -> float:
            return f([*arrays[:i], x, *arrays[i + 1:]])
        return fd_complex_grad(of_input, arrays[i], eps) if np.iscomplexobj(arrays[i]) else fd_grad(of_input, arrays[i], eps)

    gs, ts = first(arrays, create_graph=order >= 2)
    for i, a in enumerate(arrays):
        got = np.zeros_like(a) if gs[i] is None else gs[i].numpy()
        assert got.dtype == a.dtype, f"gradient of input #{i} is {got.dtype}, the input {a.dtype}"
        np.testing.assert_allclose(got, numeric(loss, i), rtol=rtol, atol=atol,
                                   err_msg=f"first-order gradient of input #{i} differs from finite differences")
    if order >= 2:
        terms = [real_inner(g, q) for g, q in zip(gs, qs) if isinstance(g, Tensor) and not g.stop_gradient]
        if not terms:
            return
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        second = grad([total], ts, allow_unused=True)
        for i, a in enumerate(arrays):
            gi = second[i]
            got = np.zeros_like(a) if gi is None else gi.numpy()
            np.testing.assert_allclose(got, numeric(inner, i), rtol=max(rtol, 1e-4), atol=max(atol, 1e-5),
                                       err_msg=f"second-order gradient of input #{i} differs from finite differences")
