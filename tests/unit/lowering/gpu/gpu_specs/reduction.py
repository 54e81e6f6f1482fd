"""GPU test programs of the `reduction` family: reductions and softmax.

Each entry is `(op, inputs, group, options)`: inputs are `(shape, dtype)` (`-1`: a
dynamic batch), ops of one group share one program (one `ptxas` run), options are
the op"s properties plus `grad` (differentiate it, default True) and `ids_below`
(integer inputs are drawn from `[0, ids_below)`, default 4).  Loaded by
`tests/unit/lowering/gpu/gpu_programs.py`."""

from pullback.dialects import pd

F = "float32"

SPECS = [
    (pd.MeanOp, [((-1, 6), F)], "reduction", {}),
    (pd.SquaredL2NormOp, [((-1, 6), F)], "reduction", {}),
    (pd.ReduceSumOp, [((-1, 6), F)], "reduction", {"axis": [1], "keepdim": True}),
    (pd.ReduceSumOp, [((300, 2), F)], "reduction", {"axis": [0]}),
    (pd.ReduceMeanOp, [((3, 4, 5), F)], "reduction", {"axis": [0, 2]}),
    (pd.ReduceMaxOp, [((3, 4), F)], "reduction", {"axis": [1]}),
    (pd.ReduceMinOp, [((3, 4), F)], "reduction", {"axis": [1]}),
    (pd.ReduceProdOp, [((-1, 4), F)], "reduction", {"axis": [1], "keepdim": True}),
    (pd.CumsumOp, [((-1, 5), F)], "scan", {"axis": 1, "reverse": True}),
    (pd.CumprodOp, [((3, 4), F)], "scan", {"axis": 0, "exclusive": True}),
    (pd.SumOp, [((3, 4), F), ((3, 4), F), ((3, 4), F)], "reduction", {}),
    (pd.SoftmaxOp, [((-1, 7), F)], "reduction", {}),
    (pd.LogSoftmaxOp, [((3, 4, 5), F)], "reduction", {"axis": 1}),
    (pd.ArgMaxOp, [((-1, 7), F)], "search", {"axis": 1, "grad": False}),
    (pd.ArgMinOp, [((3, 4, 5), F)], "search", {"flatten": True, "grad": False}),
    (pd.TopKOp, [((-1, 7), F)], "search", {"k": 3}),
]
