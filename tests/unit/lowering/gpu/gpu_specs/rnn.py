"""GPU test programs of the `rnn` family: Paddle's fused recurrent op (its backward
program exercises `pd.rnn_grad`).

Entries as in `gpu_specs/loss.py`: `(op, inputs, group, options)`."""

from pullback.dialects import pd

F = "float32"

SPECS = [
    (pd.RnnOp, [((3, -1, 2), F), ((1, -1, 3), F), ((1, -1, 3), F), ((12, 2), F), ((12, 3), F),
                ((12,), F), ((12,), F)], "rnn", {"mode": "LSTM", "input_size": 2, "hidden_size": 3}),
    (pd.RnnOp, [((3, -1, 2), F), ((2, -1, 3), F), ((9, 2), F), ((9, 3), F), ((9, 2), F), ((9, 3), F),
                ((9,), F), ((9,), F), ((9,), F), ((9,), F), ((-1,), "int64")], "rnn",
     {"mode": "GRU", "input_size": 2, "hidden_size": 3, "is_bidirec": True, "ids_below": 4}),
]
