"""GPU test programs of the `optimizer` family: optimizer updates; forward only, updates
have no gradient.

Each entry is `(op, inputs, group, options)`: inputs are `(shape, dtype)` (`-1`: a
dynamic batch), ops of one group share one program (one `ptxas` run), options are
the op"s properties plus `grad` (differentiate it, default True) and `ids_below`
(integer inputs are drawn from `[0, ids_below)`, default 4).  Loaded by
`tests/unit/lowering/gpu/gpu_programs.py`."""

from pullback.dialects import pd

F = "float32"

L = ((1,), F)  # the learning rate, a one-element operand
P = ((3, 2), F)
B = ((1,), "bool")  # a one-element flag (`found_inf`)

SPECS = [
    (pd.SgdOp, [P, P, L], "optimizer", {"grad": False}),
    (pd.MomentumOp, [P, P, L, P], "optimizer", {"mu": 0.9, "grad": False}),
    (pd.MomentumOp, [P, P, L, P], "optimizer",
     {"mu": 0.9, "use_nesterov": True, "regularization_method": "l2_decay",
      "regularization_coeff": 0.1, "rescale_grad": 0.5, "grad": False}),
    (pd.AdamOp, [P, P, L, P, P, L, L], "optimizer", {"grad": False}),
    (pd.AdamwOp, [P, P, L, P, P, L, L], "optimizer", {"coeff": 0.1, "lr_ratio": 0.5, "grad": False}),
    (pd.LambOp, [P, P, L, P, P, L, L], "optimizer", {"grad": False}),
    # With AMP's `found_inf` as `skip_update`: the update in a host branch.
    (pd.AdamOp, [P, P, L, P, P, L, L, B], "optimizer", {"grad": False}),
    (pd.AdamwOp, [P, P, L, P, P, L, L, B], "optimizer", {"coeff": 0.1, "grad": False}),
    (pd.LambOp, [P, P, L, P, P, L, L, B], "optimizer", {"grad": False}),
    (pd.AdamaxOp, [P, P, L, P, P, L], "optimizer", {"grad": False}),
    (pd.AdagradOp, [P, P, L, P], "optimizer", {"grad": False}),
    (pd.AdadeltaOp, [P, P, L, P, P], "optimizer", {"grad": False}),
    (pd.RmspropOp, [P, P, L, P, P, P], "optimizer", {"centered": True, "momentum": 0.5, "grad": False}),
    # Loss scaling (AMP): one gradient, its scale; then the scale's update.
    (pd.CheckFiniteAndUnscaleOp, [P, L], "loss-scaling", {"grad": False}),
    (pd.UpdateLossScalingOp, [P, B, L, ((1,), "int32"), ((1,), "int32")], "loss-scaling",
     {"incr_every_n_steps": 2, "decr_every_n_nan_or_inf": 1, "grad": False}),
]
