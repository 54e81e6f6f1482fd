"""GPU test programs of the `elementwise` family: binary arithmetic with Paddle's axis
broadcasting, comparisons and `where`, unary ops.

Each entry is `(op, inputs, group, options)`: inputs are `(shape, dtype)` (`-1`: a
dynamic batch), ops of one group share one program (one `ptxas` run), options are
the op"s properties plus `grad` (differentiate it, default True) and `ids_below`
(integer inputs are drawn from `[0, ids_below)`, default 4).  Loaded by
`tests/unit/lowering/gpu/gpu_programs.py`."""

from pullback.dialects import pd

F = "float32"

SPECS = [
    (pd.ElementwiseAddOp, [((-1, 3), F), ((3,), F)], "elementwise", {}),
    (pd.ElementwiseSubOp, [((-1, 3), F), ((3,), F)], "elementwise", {}),
    (pd.ElementwiseMulOp, [((-1, 3), F), ((3,), F)], "elementwise", {}),
    (pd.ElementwiseDivOp, [((-1, 3), F), ((3,), F)], "elementwise", {}),
    (pd.ElementwiseMaxOp, [((-1, 3), F), ((3,), F)], "elementwise", {}),
    (pd.ElementwiseMinOp, [((-1, 3), F), ((3,), F)], "elementwise", {}),
    (pd.ElementwisePowOp, [((2, 3), F), ((2, 3), F)], "elementwise", {}),
    (pd.ElementwiseAddOp, [((2, 3, 4), F), ((3,), F)], "elementwise", {"axis": 1}),
    (pd.GreaterThanOp, [((2, 3), F), ((2, 3), F)], "compare", {"grad": False}),
    (pd.GreaterEqualOp, [((2, 3), F), ((2, 3), F)], "compare", {"grad": False}),
    (pd.LessThanOp, [((2, 3), F), ((2, 3), F)], "compare", {"grad": False}),
    (pd.LessEqualOp, [((2, 3), F), ((2, 3), F)], "compare", {"grad": False}),
    (pd.EqualOp, [((2, 3), F), ((2, 3), F)], "compare", {"grad": False}),
    (pd.NotEqualOp, [((2, 3), F), ((2, 3), F)], "compare", {"grad": False}),
    (pd.BitwiseAndOp, [((-1, 3), "int64"), ((3,), "int64")], "compare", {"grad": False, "ids_below": 16}),
    (pd.BitwiseOrOp, [((2, 3), "int64"), ((2, 3), "int64")], "compare", {"grad": False, "ids_below": 16}),
    (pd.BitwiseXorOp, [((2, 3), "int64"), ((2, 3), "int64")], "compare", {"grad": False, "ids_below": 16}),
    (pd.WhereOp, [((2, 3), "bool"), ((2, 3), F), ((2, 3), F)], "compare", {}),
    (pd.ReluOp, [((-1, 5), F)], "unary", {}),
    (pd.SigmoidOp, [((-1, 5), F)], "unary", {}),
    (pd.TanhOp, [((-1, 5), F)], "unary", {}),
    (pd.ExpOp, [((-1, 5), F)], "unary", {}),
    (pd.LogOp, [((-1, 5), F)], "unary", {}),
    (pd.SqrtOp, [((-1, 5), F)], "unary", {}),
    (pd.SquareOp, [((-1, 5), F)], "unary", {}),
    (pd.AbsOp, [((-1, 5), F)], "unary", {}),
    (pd.ErfOp, [((-1, 5), F)], "unary", {}),
    (pd.SignOp, [((-1, 5), F)], "unary", {"grad": False}),
    (pd.GeluOp, [((4, 5), F)], "unary", {}),
    (pd.SinOp, [((-1, 5), F)], "math", {}),
    (pd.CosOp, [((-1, 5), F)], "math", {}),
    (pd.TanOp, [((-1, 5), F)], "math", {}),
    (pd.AsinOp, [((-1, 5), F)], "math", {}),
    (pd.AcosOp, [((-1, 5), F)], "math", {}),
    (pd.AtanOp, [((-1, 5), F)], "math", {}),
    (pd.SinhOp, [((-1, 5), F)], "math", {}),
    (pd.CoshOp, [((-1, 5), F)], "math", {}),
    (pd.Log1pOp, [((-1, 5), F)], "math", {}),
    (pd.Expm1Op, [((-1, 5), F)], "math", {}),
    (pd.FloorOp, [((-1, 5), F)], "math", {"grad": False}),
    (pd.CeilOp, [((-1, 5), F)], "math", {"grad": False}),
    (pd.RoundOp, [((-1, 5), F)], "math", {"grad": False}),
    (pd.GeluOp, [((4, 5), F)], "unary", {"approximate": True}),
    (pd.ScaleOp, [((4, 5), F)], "unary", {"scale": 2.0, "bias": 0.5}),
    (pd.PowOp, [((4, 5), F)], "unary", {"factor": 3.0}),
    (pd.ClipOp, [((4, 5), F)], "unary", {"min": -0.5, "max": 0.5}),
    (pd.CastOp, [((4, 5), F)], "unary", {"dtype": "float64"}),
    (pd.ScaleOp, [((4, 5), "int64")], "unary", {"scale": 3.0, "grad": False}),
    (pd.ElementwiseAddOp, [((2, 3), "float64"), ((2, 3), "float64")], "unary", {}),
]
