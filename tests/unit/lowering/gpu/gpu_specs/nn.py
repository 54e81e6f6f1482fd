"""GPU test programs of the `nn` family: matrix products, embedding, convolution,
pooling, layer and batch norm, dropout.

Each entry is `(op, inputs, group, options)`: inputs are `(shape, dtype)` (`-1`: a
dynamic batch), ops of one group share one program (one `ptxas` run), options are
the op"s properties plus `grad` (differentiate it, default True) and `ids_below`
(integer inputs are drawn from `[0, ids_below)`, default 4).  Loaded by
`tests/unit/lowering/gpu/gpu_programs.py`."""

from pullback.dialects import pd

F = "float32"

SPECS = [
    (pd.MatmulOp, [((-1, 13), F), ((13, 20), F)], "matmul", {}),
    (pd.MatmulOp, [((33, 17), F), ((40, 17), F)], "matmul", {"transpose_y": True}),
    (pd.MatmulOp, [((2, 3, 4), F), ((4, 5), F)], "matmul", {}),
    (pd.MatmulOp, [((4,), F), ((4, 5), F)], "matmul", {}),
    (pd.LinearOp, [((-1, 13), F), ((13, 20), F), ((20,), F)], "matmul", {}),
    (pd.LookupTableOp, [((-1, 3), "int64"), ((10, 4), F)], "nn", {"ids_below": 10}),
    (pd.Conv2DOp, [((2, 3, 6, 6), F), ((4, 3, 3, 3), F)], "nn", {"paddings": [1, 1]}),
    (pd.Pool2DOp, [((2, 3, 6, 6), F)], "nn", {"ksize": [2, 2], "strides": [2, 2]}),
    (pd.Pool2DOp, [((2, 3, 6, 6), F)], "nn",
     {"pooling_type": "avg", "ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1]}),
    (pd.LayerNormOp, [((-1, 8), F), ((8,), F), ((8,), F)], "nn", {}),
    (pd.DropoutOp, [((4, 8), F)], "nn", {"dropout_prob": 0.25, "seed": 3}),
    (pd.BatchNormOp, [((-1, 3, 4, 4), F)] + [((3,), F)] * 4, "norm", {}),
]
