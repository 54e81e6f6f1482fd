"""GPU test programs of the `shape` family: shape ops.

Each entry is `(op, inputs, group, options)`: inputs are `(shape, dtype)` (`-1`: a
dynamic batch), ops of one group share one program (one `ptxas` run), options are
the op"s properties plus `grad` (differentiate it, default True) and `ids_below`
(integer inputs are drawn from `[0, ids_below)`, default 4).  Loaded by
`tests/unit/lowering/gpu/gpu_programs.py`."""

from pullback.dialects import pd

F = "float32"

SPECS = [
    (pd.ReshapeOp, [((-1, 3, 4), F)], "shape", {"shape": [0, -1]}),
    (pd.TransposeOp, [((2, 3, 4), F)], "shape", {"perm": [2, 0, 1]}),
    (pd.ConcatOp, [((2, 3), F), ((2, 5), F)], "shape", {"axis": 1}),
    (pd.SplitOp, [((2, 6), F)], "shape", {"num": 3, "axis": 1}),
    (pd.SliceOp, [((4, 6), F)], "shape", {"axes": [1], "starts": [1], "ends": [4]}),
    (pd.PadOp, [((2, 3), F)], "shape", {"paddings": [1, 0, 0, 2]}),
    (pd.SqueezeOp, [((2, 1, 3), F)], "shape", {"axes": [1]}),
    (pd.UnsqueezeOp, [((2, 3), F)], "shape", {"axes": [0]}),
    (pd.ExpandOp, [((1, 3), F)], "shape", {"shape": [4, 3]}),
]
