"""GPU test programs of the `optimizer` family: optimizer updates; forward only, updates
have no gradient.

Each entry is `(op, inputs, group, options)`: inputs are `(shape, dtype)` (`-1`: a
dynamic batch), ops of one group share one program (one `ptxas` run), options are
the op"s properties plus `grad` (differentiate it, default True) and `ids_below`
(integer inputs are drawn from `[0, ids_below)`, default 4).  Loaded by
`tests/unit/gpu_programs.py`."""

from pullback.dialects import pd

F = "float32"

SPECS = [
    (pd.SgdOp, [((3, 2), F), ((3, 2), F)], "optimizer", {"learning_rate": 0.1, "grad": False}),
    (pd.MomentumOp, [((3, 2), F), ((3, 2), F), ((3, 2), F)], "optimizer", {"mu": 0.9, "grad": False}),
    (pd.AdamOp, [((3, 2), F), ((3, 2), F), ((3, 2), F), ((3, 2), F), ((1,), F), ((1,), F)],
     "optimizer", {"grad": False}),
]
