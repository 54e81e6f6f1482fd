"""GPU test programs of the `loss` family: losses.

Each entry is `(op, inputs, group, options)`: inputs are `(shape, dtype)` (`-1`: a
dynamic batch), ops of one group share one program (one `ptxas` run), options are
the op"s properties plus `grad` (differentiate it, default True) and `ids_below`
(integer inputs are drawn from `[0, ids_below)`, default 4).  Loaded by
`tests/unit/lowering/gpu/gpu_programs.py`."""

from pullback.dialects import pd

F = "float32"

SPECS = [
    (pd.OneHotOp, [((-1,), "int64")], "loss", {"depth": 5, "grad": False}),
    (pd.CrossEntropyOp, [((-1, 5), F), ((-1, 1), "int64")], "loss", {"ids_below": 5}),
    (pd.SoftmaxWithCrossEntropyOp, [((-1, 5), F), ((-1, 1), "int64")], "loss", {"ids_below": 5}),
    (pd.SoftmaxWithCrossEntropyOp, [((4, 5), F), ((4, 5), F)], "loss", {"soft_label": True}),
    (pd.SquareErrorCostOp, [((-1, 1), F), ((-1, 1), F)], "loss", {}),
    (pd.AccuracyOp, [((-1, 3), F), ((-1, 3), "int64"), ((-1, 1), "int64")], "loss", {"grad": False}),
]
