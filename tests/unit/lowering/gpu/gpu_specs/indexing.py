"""GPU test programs of the `indexing` family: gathers, scatters, strided slices and
triangles (`nonzero` is `HOST_ONLY`).  Entries as in `gpu_specs/elementwise.py`;
index inputs are drawn from `[0, 4)`, so indexed dimensions have at least 4 entries."""

from pullback.dialects import pd

F = "float32"
I = "int64"
E = pd.STRIDED_END_NEG

SPECS = [
    (pd.GatherOp, [((-1, 4), F), ((3,), I)], "gather", {"axis": 1}),
    (pd.GatherNdOp, [((4, 4), F), ((3, 2), I)], "gather", {}),
    (pd.TakeAlongAxisOp, [((-1, 4), F), ((-1, 2), I)], "gather", {"axis": 1}),
    (pd.StridedSliceOp, [((-1, 4), F)], "gather", {"axes": [1], "starts": [-1], "ends": [E], "strides": [-2]}),
    (pd.IndexAddOp, [((4, 3), F), ((2,), I), ((2, 3), F)], "scatter", {"axis": 0}),
    (pd.ScatterNdAddOp, [((4, 4), F), ((3, 2), I), ((3,), F)], "scatter", {}),
    (pd.ScatterOp, [((4, 3), F), ((2,), I), ((2, 3), F)], "scatter", {"overwrite": False}),
    (pd.PutAlongAxisOp, [((-1, 4), F), ((-1, 2), I), ((-1, 2), F)], "scatter", {"axis": 1, "reduce": "add"}),
    (pd.SetValueOp, [((3, 4), F), ((3, 2), F)], "scatter",
     {"axes": [1], "starts": [0], "ends": [4], "strides": [2]}),
    (pd.TrilTriuOp, [((-1, 3, 4), F)], "triangle", {"diagonal": 1, "lower": False}),
]
