"""IR materialisation: a collected graph written as `pd` IR.

The recorded nodes stay plain Python objects during the forward pass (recording
must be cheap); they become IR only when a backward needs a plan for a graph shape
not seen before (`plan.build_plan`), when a dump or a test asks for the program
(`recorded_program`).  The IR is the same dialect static programs use, so the
`autodiff` pass differentiates both.
"""

from __future__ import annotations

from collections.abc import Sequence

from pullback.dialects import pd
from pullback.frontend.autograd.graph import Graph, collect, ref_of
from pullback.frontend.eager import DTYPE_NAMES, Tensor
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue


def materialize(g: Graph) -> tuple[ModuleOp, list[SSAValue], list[list[SSAValue]]]:
    """The recorded graph as `pd` IR: a `pd.data` per source (`leaf_<k>`,
    `const_<k>`), then one op per node, named `<type>_<position>.tmp_<i>`.
    Returns the module, the sources' values and each node's results."""
    module = ModuleOp([])
    block = module.body.block
    src_vals: list[SSAValue] = []
    for k, s in enumerate(g.sources):
        data = pd.DataOp.make(f"{s.kind}_{k}", list(s.array.shape), DTYPE_NAMES[s.array.dtype])
        block.add_op(data)
        src_vals.append(data.out)
    res_vals: list[list[SSAValue]] = []
    for k, node in enumerate(g.nodes):
        tpl = node.tpl.op
        operands = [res_vals[a][b] if kind == "n" else src_vals[a] for kind, a, b in g.inputs[k]]
        # `create`, not `make`: the template was verified already, and `make` costs
        # a type inference per op.
        op = type(tpl).create(
            operands=operands,
            result_types=[r.type for r in tpl.results],
            properties=dict(tpl.properties),
            attributes=dict(tpl.attributes),
        )
        if isinstance(op, pd.PdOp) and (len(op.results) == 1 or isinstance(op, pd.MultiResultNames)):
            pd.set_result_names(op, [f"{node.tpl.type}_{k}.tmp_{i}" for i in range(len(op.results))])
        block.add_op(op)
        res_vals.append(list(op.results))
    return module, src_vals, res_vals


def recorded_program(tensors: Tensor | Sequence[Tensor]) -> ModuleOp:
    """The `pd` IR recorded for `tensors` (their graph up to leaves and constants)."""
    ts = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    roots = [ref_of(t) for t in ts if not t.stop_gradient]
    return materialize(collect(roots))[0]
