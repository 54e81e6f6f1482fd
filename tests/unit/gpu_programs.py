"""Small `pd` programs covering every op, forward and backward, for the GPU tests.

`OPS` lists one spec per op (inputs and properties); `program(specs)` builds one
module computing all of them, with a `pd.backward` region differentiating every
float result with respect to every float input (the `autodiff` pass fills it), and
fetches of every result and gradient.  Family-sized programs keep the number of
`ptxas` runs small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from pullback.dialects import pd
from pullback.dialects.pd.base import is_float


@dataclass(frozen=True)
class Spec:
    """One op applied to fed inputs `(shape, dtype)` (`-1`: a dynamic batch)."""

    op: type[pd.PdOp]
    inputs: Sequence[tuple[Sequence[int], str]]
    props: dict[str, Any] = field(default_factory=dict)
    grad: bool = True
    family: str = ""
    ids_below: int = 4
    """Integer inputs are drawn from `[0, ids_below)`."""


F = "float32"


def _s(op, inputs, family, grad=True, ids_below=4, **props):
    return Spec(op, inputs, props, grad, family, ids_below)


OPS: list[Spec] = [
    # elementwise binary with Paddle's axis broadcasting, comparisons, select
    *[_s(c, [((-1, 3), F), ((3,), F)], "elementwise") for c in (
        pd.ElementwiseAddOp, pd.ElementwiseSubOp, pd.ElementwiseMulOp, pd.ElementwiseDivOp,
        pd.ElementwiseMaxOp, pd.ElementwiseMinOp)],
    _s(pd.ElementwisePowOp, [((2, 3), F), ((2, 3), F)], "elementwise"),
    _s(pd.ElementwiseAddOp, [((2, 3, 4), F), ((3,), F)], "elementwise", axis=1),
    *[_s(c, [((2, 3), F), ((2, 3), F)], "compare", grad=False) for c in (
        pd.GreaterThanOp, pd.GreaterEqualOp, pd.LessThanOp, pd.LessEqualOp, pd.EqualOp,
        pd.NotEqualOp)],
    _s(pd.WhereOp, [((2, 3), "bool"), ((2, 3), F), ((2, 3), F)], "compare"),
    # unary
    *[_s(c, [((-1, 5), F)], "unary") for c in (
        pd.ReluOp, pd.SigmoidOp, pd.TanhOp, pd.ExpOp, pd.LogOp, pd.SqrtOp, pd.SquareOp,
        pd.AbsOp, pd.ErfOp)],
    _s(pd.SignOp, [((-1, 5), F)], "unary", grad=False),
    _s(pd.GeluOp, [((4, 5), F)], "unary"),
    _s(pd.GeluOp, [((4, 5), F)], "unary", approximate=True),
    _s(pd.ScaleOp, [((4, 5), F)], "unary", scale=2.0, bias=0.5),
    _s(pd.PowOp, [((4, 5), F)], "unary", factor=3.0),
    _s(pd.ClipOp, [((4, 5), F)], "unary", min=-0.5, max=0.5),
    _s(pd.CastOp, [((4, 5), F)], "unary", dtype="float64"),
    _s(pd.ScaleOp, [((4, 5), "int64")], "unary", grad=False, scale=3.0),
    _s(pd.ElementwiseAddOp, [((2, 3), "float64"), ((2, 3), "float64")], "unary"),
    # reductions and normalizations
    _s(pd.MeanOp, [((-1, 6), F)], "reduction"),
    _s(pd.ReduceSumOp, [((-1, 6), F)], "reduction", axis=[1], keepdim=True),
    _s(pd.ReduceSumOp, [((300, 2), F)], "reduction", axis=[0]),
    _s(pd.ReduceMeanOp, [((3, 4, 5), F)], "reduction", axis=[0, 2]),
    _s(pd.ReduceMaxOp, [((3, 4), F)], "reduction", axis=[1]),
    _s(pd.SumOp, [((3, 4), F), ((3, 4), F), ((3, 4), F)], "reduction"),
    _s(pd.SoftmaxOp, [((-1, 7), F)], "reduction"),
    _s(pd.LogSoftmaxOp, [((3, 4, 5), F)], "reduction", axis=1),
    # losses
    _s(pd.OneHotOp, [((-1,), "int64")], "loss", grad=False, depth=5),
    _s(pd.CrossEntropyOp, [((-1, 5), F), ((-1, 1), "int64")], "loss", ids_below=5),
    _s(pd.SoftmaxWithCrossEntropyOp, [((-1, 5), F), ((-1, 1), "int64")], "loss", ids_below=5),
    _s(pd.SoftmaxWithCrossEntropyOp, [((4, 5), F), ((4, 5), F)], "loss", soft_label=True),
    _s(pd.SquareErrorCostOp, [((-1, 1), F), ((-1, 1), F)], "loss"),
    # matrix products
    _s(pd.MatmulOp, [((-1, 13), F), ((13, 20), F)], "matmul"),
    _s(pd.MatmulOp, [((33, 17), F), ((40, 17), F)], "matmul", transpose_y=True),
    _s(pd.MatmulOp, [((2, 3, 4), F), ((4, 5), F)], "matmul"),
    _s(pd.MatmulOp, [((4,), F), ((4, 5), F)], "matmul"),
    # optimizers (forward only: updates have no gradient)
    _s(pd.SgdOp, [((3, 2), F), ((3, 2), F)], "optimizer", grad=False, learning_rate=0.1),
    _s(pd.MomentumOp, [((3, 2), F), ((3, 2), F), ((3, 2), F)], "optimizer", grad=False, mu=0.9),
    _s(pd.AdamOp, [((3, 2), F), ((3, 2), F), ((3, 2), F), ((3, 2), F), ((1,), F), ((1,), F)],
       "optimizer", grad=False),
    # program
    _s(pd.FillAnyLikeOp, [((-1, 3), F)], "program", grad=False, value=2.0),
    # shape
    _s(pd.ReshapeOp, [((-1, 3, 4), F)], "shape", shape=[0, -1]),
    _s(pd.TransposeOp, [((2, 3, 4), F)], "shape", perm=[2, 0, 1]),
    _s(pd.ConcatOp, [((2, 3), F), ((2, 5), F)], "shape", axis=1),
    _s(pd.SplitOp, [((2, 6), F)], "shape", num=3, axis=1),
    _s(pd.SliceOp, [((4, 6), F)], "shape", axes=[1], starts=[1], ends=[4]),
    _s(pd.PadOp, [((2, 3), F)], "shape", paddings=[1, 0, 0, 2]),
    _s(pd.SqueezeOp, [((2, 1, 3), F)], "shape", axes=[1]),
    _s(pd.UnsqueezeOp, [((2, 3), F)], "shape", axes=[0]),
    _s(pd.ExpandOp, [((1, 3), F)], "shape", shape=[4, 3]),
    # neural-network ops
    _s(pd.LookupTableOp, [((-1, 3), "int64"), ((10, 4), F)], "nn", ids_below=10),
    _s(pd.Conv2DOp, [((2, 3, 6, 6), F), ((4, 3, 3, 3), F)], "nn", paddings=[1, 1]),
    _s(pd.Pool2DOp, [((2, 3, 6, 6), F)], "nn", ksize=[2, 2], strides=[2, 2]),
    _s(pd.Pool2DOp, [((2, 3, 6, 6), F)], "nn", pooling_type="avg", ksize=[3, 3], strides=[2, 2], paddings=[1, 1]),
    _s(pd.LayerNormOp, [((-1, 8), F), ((8,), F), ((8,), F)], "nn"),
    _s(pd.DropoutOp, [((4, 8), F)], "nn", dropout_prob=0.25, seed=3),
]


def family_names() -> list[str]:
    """The families of `OPS`, in order of first appearance."""
    return list(dict.fromkeys(s.family for s in OPS))


def spec_id(s: Spec) -> str:
    """A readable test id."""
    extra = ",".join(f"{k}={v}" for k, v in s.props.items())
    return f"{s.op.name}({extra})" if extra else s.op.name


def program(specs: Sequence[Spec]) -> ModuleOp:
    """One module computing every spec, with its backward region (unfilled)."""
    ops: list[Any] = []
    targets, wrt = [], []
    fetched = []
    for i, s in enumerate(specs):
        feeds = [pd.DataOp.make(f"in{i}_{j}", shape, dtype) for j, (shape, dtype) in enumerate(s.inputs)]
        ops += feeds
        op = s.op.make(*[f.out for f in feeds], **s.props)
        ops.append(op)
        fetched += list(op.results)
        if s.grad:
            targets += [r for r in op.results if is_float(pd.elem_of(r.type))]
            wrt += [f.out for f in feeds if is_float(pd.elem_of(f.out.type))]
    module = ModuleOp(ops)
    if targets and wrt:
        bw = pd.BackwardOp.make(targets, wrt)
        module.body.block.add_op(bw)
        fetched += list(bw.grads)
    for v in fetched:
        module.body.block.add_op(pd.FetchOp.create(operands=[v]))
    return module


def autodiff(module: ModuleOp) -> ModuleOp:
    """Fill the module's backward regions (in place) and return it."""
    from pullback.passes import PASSES

    if not any(isinstance(op, pd.BackwardOp) for op in module.walk()):
        return module  # nothing differentiable (the pass would warn)
    ctx = Context()
    ctx.load_dialect(pd.PD)
    PASSES["autodiff"]()().apply(ctx, module)
    return module


def feeds_for(specs: Sequence[Spec], batch: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    """Random feeds for `program(specs)` (dynamic dimensions get `batch`)."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for i, s in enumerate(specs):
        for j, (shape, dtype) in enumerate(s.inputs):
            concrete = tuple(batch if d < 0 else d for d in shape)
            if dtype in ("int64", "int32"):
                out[f"in{i}_{j}"] = rng.integers(0, s.ids_below, concrete).astype(dtype)
            elif dtype == "bool":
                out[f"in{i}_{j}"] = rng.random(concrete) < 0.5
            else:
                # Positive inputs keep log/sqrt/pow defined; beta pows stay below 1.
                out[f"in{i}_{j}"] = rng.uniform(0.1, 0.9, concrete).astype(dtype)
    return out


__all__ = ["OPS", "Spec", "autodiff", "family_names", "feeds_for", "program", "spec_id"]
