"""GPU test programs of the `creation` family: ranges, eye and constants (the
random ops are `HOST_ONLY`).  Entries as in `gpu_specs/elementwise.py`."""

from pullback.dialects import pd
from pullback.dialects.pd.base import f64_attr
from xdsl.dialects.builtin import ArrayAttr

SPECS = [
    (pd.ArangeOp, [], "creation", {"start": 1.0, "end": 7.0, "step": 2.0, "dtype": "float32"}),
    (pd.LinspaceOp, [], "creation", {"start": 0.0, "stop": 1.0, "num": 5}),
    (pd.EyeOp, [], "creation", {"num_rows": 3, "num_columns": 4}),
    (pd.AssignValueOp, [], "creation",
     {"shape": [2, 2], "values": ArrayAttr([f64_attr(v) for v in (1.0, -2.0, 3.5, 0.0)])}),
]
