"""GPU test programs of the `geometric` family: message passing (`sum` and `mean`,
whose combines are atomic adds; `max`/`min` are refused on the GPU, and so is
`segment_pool`, whose row count host code reads from the ids:
`gpu.pipeline.reject_racy_combines`).  The graph utilities are `HOST_ONLY`.  Entries as in `gpu_specs/elementwise.py`; index inputs are drawn from
`[0, 4)`, so indexed dimensions have at least 4 entries."""

from pullback.dialects import pd

F = "float32"
I = "int64"

SPECS = [
    (pd.SendRecvOp, [((4, 3), F), ((5,), I), ((5,), I)], "message", {"reduce_op": "sum"}),
    (pd.SendRecvOp, [((4, 3), F), ((5,), I), ((5,), I), ((5, 1), F)], "message",
     {"reduce_op": "mean", "message_op": "mul", "out_size": 4}),
]
