"""The recurrent family: Paddle's fused multi-layer `rnn` operator and its gradient.

`pd.rnn` is what `paddle.nn.LSTM`, `nn.GRU` and `nn.SimpleRNN` append (Paddle's
`rnn` op, RNNBase's `_cudnn_impl`): the whole multi-layer, possibly bidirectional
recurrence over a time-major sequence in one op, so a program does not grow with
the sequence length.  `pd.rnn_grad` is Paddle's `rnn_grad`: backpropagation through
time from what the forward op saved in its `reserve` result.

Operands are one flat list, its structure given by the properties (as Paddle's
`Input`, `PreState`, `WeightList`, `SequenceLength` slots):

    input [T, B, input_size]                        (time-major)
    pre_states: [L*D, B, H]  x 2 (LSTM: h, c) or x 1 (GRU, RNN_TANH, RNN_RELU)
    weights: 2*L*D weight matrices, then 2*L*D bias vectors (Paddle's WeightList):
             for each layer l, direction d: W_ih [G*H, in_l], W_hh [G*H, H];
             then for each (l, d): b_ih [G*H], b_hh [G*H]
    sequence_length [B] (int32/int64), optional

with `L = num_layers`, `D = 2 if is_bidirec else 1`, `G` the gates of the mode
(LSTM 4: i, f, g, o; GRU 3: r, z, c; RNN 1) and `in_l = input_size` for layer 0,
`D*H` above.  Results: `out [T, B, D*H]`, the final states (like `pre_states`),
`reserve` and `dropout_state`.

`reserve` `[T, B, R]` holds, per step and batch row, what the backward pass needs:
for each (layer, direction) block `RESERVE_GATES[mode] * H` values (LSTM: the
activated gates i, f, g, o, the cell c and the output h; GRU: r, z, the candidate c,
the recurrent candidate projection `h W_hc^T + b_hc` and h; RNN: h), then, when
inter-layer dropout is active, for each layer above the first its `D*H` dropout
scales (0 or `1/(1-p)`).  `dropout_state` `[1]` int64 holds the dropout seed (Paddle's
is an opaque uint8 cuDNN state).  The input of layer `l >= 1` keeps element `i`
(row-major over `[T, B, D*H]`) by `pd.dropout`'s hash with seed `seed + l` (training
only; `is_test` applies no dropout, Paddle's `upscale_in_train`).

Steps at or past a row's `sequence_length` keep the state and output zeros; the
reverse direction starts at each row's own last step (Paddle's CPU kernel).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import (
    DYN,
    INT_TYPES,
    MultiResultNames,
    PdOp,
    bool_attr,
    dims_compatible,
    elem_of,
    expect_float,
    f64_attr,
    fmt_shape,
    i64,
    i64_attr,
    shape_of,
    tensor_type,
)

_FORMAT = "operands attr-dict `:` functional-type(operands, results)"

RNN_GATES: dict[str, int] = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
"""Gate blocks of `W_ih`/`W_hh` per mode (Paddle's `mode` attribute)."""

RESERVE_GATES: dict[str, int] = {"LSTM": 6, "GRU": 5, "RNN_TANH": 1, "RNN_RELU": 1}
"""Reserve values per step, batch row and (layer, direction), in units of H."""


@dataclass(frozen=True)
class RnnLayout:
    """The structure of an `rnn`/`rnn_grad` op's operands and reserve."""

    mode: str
    num_layers: int
    directions: int
    input_size: int
    hidden_size: int
    dropout: bool
    """Inter-layer dropout is applied (training, p > 0, more than one layer)."""

    @property
    def gates(self) -> int:
        """Gate blocks of the weights."""
        return RNN_GATES[self.mode]

    @property
    def states(self) -> int:
        """State tensors (LSTM: h and c)."""
        return 2 if self.mode == "LSTM" else 1

    @property
    def blocks(self) -> int:
        """(layer, direction) pairs."""
        return self.num_layers * self.directions

    @property
    def weight_count(self) -> int:
        """Tensors of the weight list."""
        return 4 * self.blocks

    def layer_input(self, layer: int) -> int:
        """The input width of `layer`."""
        return self.input_size if layer == 0 else self.directions * self.hidden_size

    @property
    def block_width(self) -> int:
        """Reserve values per step and row for one (layer, direction)."""
        return RESERVE_GATES[self.mode] * self.hidden_size

    def block_offset(self, layer: int, direction: int) -> int:
        """Where (layer, direction)'s block starts in a reserve row."""
        return (layer * self.directions + direction) * self.block_width

    def dropout_offset(self, layer: int) -> int:
        """Where the dropout scales of the input of `layer` (>= 1) start."""
        return self.blocks * self.block_width + (layer - 1) * self.directions * self.hidden_size

    @property
    def reserve_width(self) -> int:
        """Values per step and row of the reserve."""
        drop = (self.num_layers - 1) * self.directions * self.hidden_size if self.dropout else 0
        return self.blocks * self.block_width + drop


def rnn_layout(props: Mapping[str, Any]) -> RnnLayout:
    """The layout for these (Python-valued) properties."""
    return RnnLayout(
        mode=props["mode"],
        num_layers=props["num_layers"],
        directions=2 if props["is_bidirec"] else 1,
        input_size=props["input_size"],
        hidden_size=props["hidden_size"],
        dropout=props["dropout_prob"] > 0 and not props["is_test"] and props["num_layers"] > 1,
    )


class _RnnBase(PdOp, MultiResultNames):
    """Shared properties, operand checks and accessors of `rnn` and `rnn_grad`."""

    args = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    mode = prop_def(StringAttr, default_value=StringAttr("LSTM"))
    input_size = prop_def(IntegerAttr)
    hidden_size = prop_def(IntegerAttr)
    num_layers = prop_def(IntegerAttr, default_value=i64_attr(1))
    is_bidirec = prop_def(BoolAttr, default_value=bool_attr(False))
    dropout_prob = prop_def(FloatAttr, default_value=f64_attr(0.0))
    is_test = prop_def(BoolAttr, default_value=bool_attr(False))
    seed = prop_def(IntegerAttr, default_value=i64_attr(0))
    names = opt_prop_def(ArrayAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    EXPENSIVE: ClassVar[bool] = True

    def layout(self) -> RnnLayout:
        """This op's operand and reserve layout."""
        return rnn_layout(self.py_props())

    def has_sequence_length(self) -> bool:
        """Whether the optional `sequence_length` operand is present."""
        lay = self.layout()
        return len(self.args) == 1 + lay.states + lay.weight_count + 1 + self.tail_count(lay)

    @classmethod
    def tail_count(cls, lay: RnnLayout) -> int:
        """Operands after the optional sequence length."""
        return 0

    def parts(self) -> tuple[Any, list[Any], list[Any], Any, list[Any]]:
        """(input, pre_states, weights, sequence_length or None, tail operands)."""
        lay = self.layout()
        a = list(self.args)
        s, w = 1 + lay.states, 1 + lay.states + lay.weight_count
        seq = a[w] if self.has_sequence_length() else None
        tail = a[w + (1 if seq is not None else 0):]
        return a[0], a[1:s], a[s:w], seq, tail

    @classmethod
    def check_forward_operands(
        cls, types: Sequence[Attribute], props: Mapping[str, Any], tail: int
    ) -> tuple[RnnLayout, list[Attribute], Attribute | None, list[Attribute], int]:
        """Check input, states, weights and sequence length; returns the layout, the
        pre-state types, the sequence length type, the tail types and the batch."""
        op = cls.name
        mode = props["mode"]
        if mode not in RNN_GATES:
            raise VerifyException(f"'{op}': mode must be one of {list(RNN_GATES)}, got '{mode}'")
        for key in ("num_layers", "input_size", "hidden_size"):
            if props[key] is None or props[key] < 1:
                raise VerifyException(f"'{op}': {key} must be >= 1, got {props[key]}")
        if not 0.0 <= props["dropout_prob"] <= 1.0:
            raise VerifyException(f"'{op}': dropout_prob must be in [0, 1], got {props['dropout_prob']}")
        lay = rnn_layout(props)
        base = 1 + lay.states + lay.weight_count + tail
        if len(types) not in (base, base + 1):
            raise VerifyException(
                f"'{op}': mode {mode} with {lay.num_layers} layer(s) and {lay.directions} "
                f"direction(s) takes {base} operands (input, {lay.states} state(s), "
                f"{lay.weight_count} weights{', ' if tail else ''}"
                f"{f'{tail} more' if tail else ''}) plus an optional sequence_length, "
                f"got {len(types)}"
            )
        tx = types[0]
        expect_float(op, "input", tx)
        elem = elem_of(tx)
        xs = shape_of(tx)
        if len(xs) != 3:
            raise VerifyException(f"'{op}': input must be [time, batch, input_size], got {fmt_shape(xs)}")
        if not dims_compatible(xs[2], lay.input_size):
            raise VerifyException(
                f"'{op}': input {fmt_shape(xs)} does not end in input_size {lay.input_size}"
            )
        batch = xs[1]
        states = list(types[1:1 + lay.states])
        H = lay.hidden_size
        for k, t in enumerate(states):
            ss = shape_of(t)
            if elem_of(t) != elem or len(ss) != 3 or not all(
                dims_compatible(a, b) for a, b in zip(ss, (lay.blocks, batch, H))
            ):
                raise VerifyException(
                    f"'{op}': pre_state #{k} must be [{lay.blocks}, batch, {H}] of the input's "
                    f"dtype, got {t}"
                )
            if batch == DYN:
                batch = ss[1]
        weights = types[1 + lay.states:1 + lay.states + lay.weight_count]
        G = lay.gates * H
        for i, t in enumerate(weights):
            block = (i % (2 * lay.blocks)) // 2
            layer = block // lay.directions
            want: tuple[int, ...]
            if i < 2 * lay.blocks:
                want = (G, lay.layer_input(layer) if i % 2 == 0 else H)
            else:
                want = (G,)
            if elem_of(t) != elem or shape_of(t) != want:
                raise VerifyException(
                    f"'{op}': weight #{i} must have shape {list(want)} and the input's dtype, "
                    f"got {t}"
                )
        seq: Attribute | None = None
        rest = list(types[1 + lay.states + lay.weight_count:])
        if len(rest) > tail:
            seq = rest.pop(0)
            ls = shape_of(seq)
            if elem_of(seq) not in INT_TYPES or len(ls) != 1 or not dims_compatible(ls[0], batch):
                raise VerifyException(
                    f"'{op}': sequence_length must be an int32/int64 [batch] tensor, got {seq}"
                )
        return lay, states, seq, rest, batch


@irdl_op_definition
class RnnOp(_RnnBase):
    """Paddle's `rnn` operator: a multi-layer LSTM, GRU or simple RNN over a
    time-major sequence (module docstring: operands, results, reserve layout).

    ```mlir
    %out, %h, %c, %res, %ds = pd.rnn %x, %h0, %c0, %wih, %whh, %bih, %bhh {input_size = 4 : i64, hidden_size = 3 : i64} : (tensor<5x?x4xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>, tensor<12x4xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<12xf32>) -> (tensor<5x?x3xf32>, tensor<1x?x3xf32>, tensor<1x?x3xf32>, tensor<5x?x18xf32>, tensor<1xi64>)
    ```
    """

    name = "pd.rnn"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        lay, states, _, _, batch = cls.check_forward_operands(operand_types, props, 0)
        tx = operand_types[0]
        T = shape_of(tx)[0]
        elem = elem_of(tx)
        out = tensor_type(elem, [T, batch, lay.directions * lay.hidden_size])
        st = tensor_type(elem, [lay.blocks, batch, lay.hidden_size])
        reserve = tensor_type(elem, [T, batch, lay.reserve_width])
        return [out, *([st] * len(states)), reserve, tensor_type(i64, [1])]


@irdl_op_definition
class RnnGradOp(_RnnBase):
    """Paddle's `rnn_grad`: the gradients of `pd.rnn` by backpropagation through time.

    Operands: the forward operands (input, pre-states, weights, optional
    sequence_length), then the forward `out` and `reserve`, the gradient of `out`,
    and one gradient per final state.  Results: the gradients of the input, of each
    pre-state and of each weight (Paddle's `Input@GRAD`, `PreState@GRAD`,
    `WeightList@GRAD`).  It has no VJP (as Paddle's): a second derivative of a
    recurrent layer needs the unrolled `nn.RNN(nn.LSTMCell(...))`.  The input
    gradient is computed only when something reads it (Paddle's kernel likewise
    skips `Input@GRAD` when it is not requested); unread, its value is unspecified.

    ```mlir
    %dx, %dh0, %dw, %du, %db, %dc = pd.rnn_grad %x, %h0, %w, %u, %b, %c, %out, %res, %gout, %gh {mode = "RNN_TANH", input_size = 4 : i64, hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<5x2x3xf32>, tensor<5x2x3xf32>, tensor<5x2x3xf32>, tensor<1x2x3xf32>) -> (tensor<5x2x4xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>)
    ```
    """

    name = "pd.rnn_grad"

    @classmethod
    def tail_count(cls, lay: RnnLayout) -> int:
        """out, reserve, the gradient of out and of each final state."""
        return 3 + lay.states

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        lay = rnn_layout(props) if props["mode"] in RNN_GATES else None
        tail = cls.tail_count(lay) if lay is not None else 0
        lay, states, _, rest, batch = cls.check_forward_operands(operand_types, props, tail)
        fwd = RnnOp.infer(list(operand_types[: len(operand_types) - tail]), props)
        want = [fwd[0], fwd[1 + lay.states], fwd[0], *fwd[1:1 + lay.states]]
        what = ["out", "reserve", "out's gradient"] + [f"state #{k}'s gradient" for k in range(lay.states)]
        for w, t, got in zip(what, want, rest):
            if elem_of(got) != elem_of(t) or len(shape_of(got)) != len(shape_of(t)) or not all(
                dims_compatible(a, b) for a, b in zip(shape_of(got), shape_of(t))
            ):
                raise VerifyException(f"'{cls.name}': {w} must be {t}, got {got}")
        n = 1 + lay.states + lay.weight_count
        return list(operand_types[:n])


RNN_OPS: list[type[PdOp]] = [RnnOp, RnnGradOp]

__all__ = [
    "RESERVE_GATES",
    "RNN_GATES",
    "RNN_OPS",
    "RnnGradOp",
    "RnnLayout",
    "RnnOp",
    "rnn_layout",
]
