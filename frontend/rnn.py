"""Paddle's recurrent layers: the cells `nn.SimpleRNNCell`, `nn.LSTMCell`,
`nn.GRUCell`, the wrappers `nn.RNN(cell)` and `nn.BiRNN(cell_fw, cell_bw)`, and the
multi-layer `nn.SimpleRNN`, `nn.LSTM`, `nn.GRU` (`num_layers`, `direction='forward'`
or `'bidirect'`/`'bidirectional'`, `time_major`, `dropout` between layers,
`sequence_length`).

Cells follow Paddle's equations, gate order and parameter shapes (`weight_ih`
`[gates * hidden, input]`, `weight_hh` `[gates * hidden, hidden]`, biases
`[gates * hidden]`, all initialized `U(-1/sqrt(hidden), 1/sqrt(hidden))`):

    SimpleRNN: h = act(x W_ih^T + b_ih + h W_hh^T + b_hh)
    LSTM:      i, f, g, o = split(x W_ih^T + b_ih + h W_hh^T + b_hh, 4)
               c = sigmoid(f) c + sigmoid(i) tanh(g);  h = sigmoid(o) tanh(c)
    GRU:       r, z, c from x W_ih^T + b_ih and h W_hh^T + b_hh (3 chunks each):
               r = sigmoid(x_r + h_r), z = sigmoid(x_z + h_z), c = tanh(x_c + r h_c)
               h = (h - c) z + c

The multi-layer layers append ONE `pd.rnn` op (Paddle's `rnn` operator, as
RNNBase's `_cudnn_impl` does), in static and eager mode: the program does not grow
with the sequence length and the gradient is one `pd.rnn_grad` (not differentiable
again, as in Paddle).  With an LSTM projection (`proj_size`), or with inter-layer
dropout in a to_static trace, they unroll like `nn.RNN`.  A weight or
bias disabled with `attr=False` is, as in Paddle 3.x, a frozen parameter of ones
(weights) or zeros (biases), so such layers still use the fused op.

`nn.RNN(cell)` and `nn.BiRNN` unroll the time loop over the (static) sequence
length: each step adds a few ops, so a program grows linearly with the length and
gradients flow through time by the ordinary VJP rules (twice differentiable).  With
`sequence_length`, steps at or past a sequence's length keep its state and output
zeros (a reverse direction starts at each sequence's own last step), as Paddle does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pullback.dialects import pd
from pullback.frontend import unique_name
from pullback.frontend.core import apply, in_dynamic_mode, traced_seed
from pullback.frontend.initializer import Constant, Uniform
from pullback.frontend.nn_layers import Layer, LayerList
from pullback.frontend.ops import elementwise as E
from pullback.frontend.ops import nn as N
from pullback.frontend.ops import shape as S
from pullback.frontend.ops.indexing import stack
from pullback.frontend.ops.nn import _static_dropout_seed
from pullback.frontend.random import default_generator


def _zeros_state(x_t: Any, hidden: int) -> Any:
    """Zeros `[batch, hidden]`, the batch taken from `x_t` `[batch, ...]` (dynamic too)."""
    first = S.slice(x_t, [len(x_t.shape) - 1], [0], [1]) if len(x_t.shape) > 1 else x_t
    return S.expand(E.full_like(first, 0.0), [-1, hidden])


def _step_input(x: Any, t: int) -> Any:
    """`x[:, t]` of a batch-major `[batch, time, ...]` sequence."""
    return S.squeeze(S.slice(x, [1], [t], [t + 1]), [1])


def _masked(mask: Any, new: Any, old: Any) -> Any:
    """`new` where the step is valid (`mask` `[batch, 1]`, 1 or 0), else `old`."""
    return new * mask + old * E.scale(mask, -1.0, 1.0)


class RNNCellBase(Layer):
    """Shared parameters and state handling of the cells."""

    GATES = 1

    def __init__(self, input_size: int, hidden_size: int, weight_ih_attr: Any = None,
                 weight_hh_attr: Any = None, bias_ih_attr: Any = None, bias_hh_attr: Any = None,
                 name: str | None = None) -> None:
        super().__init__()
        for arg, v in (("input_size", input_size), ("hidden_size", hidden_size)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{type(self).__name__}: {arg} must be a positive int, got {v!r}")
        self.input_size, self.hidden_size = input_size, hidden_size
        g = self.GATES * hidden_size
        std = 1.0 / math.sqrt(hidden_size)
        init = Uniform(-std, std)

        def param(shape: list[int], attr: Any, is_bias: bool) -> Any:
            if attr is False:
                # Paddle 3.x: a disabled weight or bias is still a parameter, frozen at
                # ones (weights) or zeros (biases), so the layer keeps its four.
                p = self.create_parameter(shape, None, is_bias=is_bias,
                                          default_initializer=Constant(0.0 if is_bias else 1.0))
                p.stop_gradient = True
                return p
            return self.create_parameter(shape, attr, is_bias=is_bias, default_initializer=init)

        self.weight_ih = param([g, input_size], weight_ih_attr, False)
        self.weight_hh = param([g, self.recurrent_size], weight_hh_attr, False)
        self.bias_ih = param([g], bias_ih_attr, True)
        self.bias_hh = param([g], bias_hh_attr, True)

    @property
    def recurrent_size(self) -> int:
        """The width of the state `h` fed back into `weight_hh`."""
        return self.hidden_size

    # -- pieces shared with the multi-layer layers -----------------------------------

    def project_input(self, x: Any) -> Any:
        """`x W_ih^T + b_ih` for `x` `[..., input_size]` (a step or a whole sequence;
        a sequence is flattened to one 2-D product, which BLAS runs in one call)."""
        lead = list(x.shape[:-1])
        flat = x if len(lead) <= 1 or sum(d < 0 for d in lead) > 1 else S.reshape(x, [-1, x.shape[-1]])
        out = N.matmul(flat, self.weight_ih, transpose_y=True)
        if self.bias_ih is not None:
            out = out + self.bias_ih
        if flat is not x:
            out = S.reshape(out, [-1 if d < 0 else d for d in lead] + [self.weight_ih.shape[0]])
        return out

    def project_hidden(self, h: Any) -> Any:
        """`h W_hh^T + b_hh`."""
        out = N.matmul(h, self.weight_hh, transpose_y=True)
        return out + self.bias_hh if self.bias_hh is not None else out

    def initial_states(self, x_t: Any) -> Any:
        """Zero states for a batch like `x_t`."""
        return _zeros_state(x_t, self.hidden_size)

    def step(self, xw: Any, states: Any) -> tuple[Any, Any]:
        """One step from the projected input `xw`; returns `(output, new_states)`."""
        raise NotImplementedError

    def forward(self, inputs: Any, states: Any = None) -> tuple[Any, Any]:
        """One step on `inputs` `[batch, input_size]`: `(output, new_states)`."""
        if states is None:
            states = self.initial_states(inputs)
        return self.step(self.project_input(inputs), states)

    @property
    def state_shape(self) -> Any:
        """The shape of the state (without the batch dimension)."""
        return (self.hidden_size,)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class SimpleRNNCell(RNNCellBase):
    """`paddle.nn.SimpleRNNCell`: `h = act(x W_ih^T + b_ih + h W_hh^T + b_hh)`,
    `act` = `tanh` or `relu`."""

    def __init__(self, input_size: int, hidden_size: int, activation: str = "tanh",
                 weight_ih_attr: Any = None, weight_hh_attr: Any = None, bias_ih_attr: Any = None,
                 bias_hh_attr: Any = None, name: str | None = None) -> None:
        if activation not in ("tanh", "relu"):
            raise ValueError(f"SimpleRNNCell: activation must be 'tanh' or 'relu', got {activation!r}")
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                         bias_hh_attr, name)
        self.activation = activation
        self._act = E.tanh if activation == "tanh" else E.relu

    def step(self, xw: Any, states: Any) -> tuple[Any, Any]:
        """`h = act(xw + h W_hh^T + b_hh)`."""
        h = self._act(xw + self.project_hidden(states))
        return h, h


class LSTMCell(RNNCellBase):
    """`paddle.nn.LSTMCell`: states `(h, c)`, gates in Paddle's order i, f, g, o.

    With `proj_size > 0` the output is projected, `h = (o * tanh(c)) @ weight_ho`
    (`weight_ho` `[hidden_size, proj_size]`, made with `weight_hh_attr`), and
    `weight_hh` is `[4 * hidden_size, proj_size]`.  `state_shape` is then
    `((proj_size,), (hidden_size,))`, the shapes of h and c (Paddle's property
    returns them swapped)."""

    GATES = 4

    def __init__(self, input_size: int, hidden_size: int, weight_ih_attr: Any = None,
                 weight_hh_attr: Any = None, bias_ih_attr: Any = None, bias_hh_attr: Any = None,
                 proj_size: int = 0, name: str | None = None) -> None:
        if isinstance(proj_size, bool) or not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError(f"LSTMCell: proj_size must be a non-negative int, got {proj_size!r}")
        if proj_size >= hidden_size:
            raise ValueError(f"LSTMCell: proj_size must be smaller than hidden_size, got {proj_size} >= {hidden_size}")
        self.proj_size = proj_size
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                         bias_hh_attr, name)
        if proj_size > 0:
            std = 1.0 / math.sqrt(hidden_size)
            self.weight_ho = self.create_parameter([hidden_size, proj_size], weight_hh_attr,
                                                   default_initializer=Uniform(-std, std))

    @property
    def recurrent_size(self) -> int:
        return self.proj_size or self.hidden_size

    def initial_states(self, x_t: Any) -> Any:
        return (_zeros_state(x_t, self.recurrent_size), _zeros_state(x_t, self.hidden_size))

    def step(self, xw: Any, states: Any) -> tuple[Any, Any]:
        """One LSTM step; returns `(h, (h, c))`."""
        h, c = states
        i, f, g, o = S.split(xw + self.project_hidden(h), 4, axis=-1)
        c = E.sigmoid(f) * c + E.sigmoid(i) * E.tanh(g)
        h = E.sigmoid(o) * E.tanh(c)
        if self.proj_size > 0:
            h = N.matmul(h, self.weight_ho)
        return h, (h, c)

    @property
    def state_shape(self) -> Any:
        return ((self.recurrent_size,), (self.hidden_size,))


class GRUCell(RNNCellBase):
    """`paddle.nn.GRUCell`: gates r, z and the candidate c, `h = (h - c) z + c`."""

    GATES = 3

    def step(self, xw: Any, states: Any) -> tuple[Any, Any]:
        """One GRU step; returns `(h, h)`."""
        h = states
        x_r, x_z, x_c = S.split(xw, 3, axis=-1)
        h_r, h_z, h_c = S.split(self.project_hidden(h), 3, axis=-1)
        r = E.sigmoid(x_r + h_r)
        z = E.sigmoid(x_z + h_z)
        c = E.tanh(x_c + r * h_c)
        h = (h - c) * z + c
        return h, h


# ------------------------------------------------------------------ time loops


def _length_masks(sequence_length: Any, steps: int, dtype: str) -> list[Any] | None:
    """Per step `t`, a `[batch, 1]` float mask: 1 where `t < sequence_length`."""
    if sequence_length is None:
        return None
    lens = S.unsqueeze(E.cast(sequence_length, dtype), [-1])
    return [E.cast(E.greater_than(lens, E.full_like(lens, float(t))), dtype) for t in range(steps)]


def _map_states(fn: Any, *states: Any) -> Any:
    """Apply `fn` leafwise over (possibly nested tuple) states."""
    if isinstance(states[0], (tuple, list)):
        return tuple(_map_states(fn, *parts) for parts in zip(*states))
    return fn(*states)


def run_cell(cell: RNNCellBase, xw_steps: Sequence[Any], states: Any, reverse: bool,
             masks: list[Any] | None, project: bool = False) -> tuple[list[Any], Any]:
    """Run `cell` over the steps (inputs already projected unless `project`);
    returns the per-step outputs (in time order) and the final states."""
    steps = len(xw_steps)
    outs: list[Any] = [None] * steps
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    for t in order:
        xw = cell.project_input(xw_steps[t]) if project else xw_steps[t]
        out, new = cell.step(xw, states)
        if masks is not None:
            m = masks[t]
            new = _map_states(lambda a, b, m=m: _masked(m, a, b), new, states)
            out = out * m
        states = new
        outs[t] = out
    return outs, states


def _steps(fn: str, x: Any, time_major: bool) -> tuple[Any, int]:
    """`x` batch-major and its static number of steps."""
    if len(x.shape) != 3:
        raise ValueError(f"{fn}: inputs must be 3-D, got shape {list(x.shape)}")
    if time_major:
        x = S.transpose(x, [1, 0, 2])
    steps = x.shape[1]
    if steps < 0:
        raise ValueError(f"{fn}: the sequence length (time dimension) must be static")
    return x, steps


class RNN(Layer):
    """`paddle.nn.RNN(cell, is_reverse=False, time_major=False)`: run a cell over a
    sequence; `forward(inputs, initial_states=None, sequence_length=None)` returns
    `(outputs, final_states)`."""

    def __init__(self, cell: RNNCellBase, is_reverse: bool = False, time_major: bool = False) -> None:
        super().__init__()
        self.cell = cell
        self.is_reverse, self.time_major = is_reverse, time_major

    def forward(self, inputs: Any, initial_states: Any = None, sequence_length: Any = None,
                **kwargs: Any) -> tuple[Any, Any]:
        """The outputs `[batch, time, hidden]` (time-major if asked) and final states."""
        x, steps = _steps("RNN", inputs, self.time_major)
        xs = [_step_input(x, t) for t in range(steps)]
        states = initial_states if initial_states is not None else self.cell.initial_states(xs[0])
        masks = _length_masks(sequence_length, steps, inputs.dtype)
        outs, final = run_cell(self.cell, xs, states, self.is_reverse, masks, project=True)
        y = stack(outs, axis=0 if self.time_major else 1)
        return y, final


class BiRNN(Layer):
    """`paddle.nn.BiRNN(cell_fw, cell_bw, time_major=False)`: a forward and a reverse
    RNN, outputs concatenated on the last axis; final states `(fw, bw)`."""

    def __init__(self, cell_fw: RNNCellBase, cell_bw: RNNCellBase, time_major: bool = False) -> None:
        super().__init__()
        self.cell_fw, self.cell_bw = cell_fw, cell_bw
        self.time_major = time_major

    def forward(self, inputs: Any, initial_states: Any = None, sequence_length: Any = None,
                **kwargs: Any) -> tuple[Any, Any]:
        """`(concat(out_fw, out_bw), (state_fw, state_bw))`."""
        x, steps = _steps("BiRNN", inputs, self.time_major)
        xs = [_step_input(x, t) for t in range(steps)]
        s_fw, s_bw = initial_states if initial_states is not None else (None, None)
        s_fw = s_fw if s_fw is not None else self.cell_fw.initial_states(xs[0])
        s_bw = s_bw if s_bw is not None else self.cell_bw.initial_states(xs[0])
        masks = _length_masks(sequence_length, steps, inputs.dtype)
        o_fw, f_fw = run_cell(self.cell_fw, xs, s_fw, False, masks, project=True)
        o_bw, f_bw = run_cell(self.cell_bw, xs, s_bw, True, masks, project=True)
        y = S.concat([stack(o_fw, 1), stack(o_bw, 1)], axis=-1)
        if self.time_major:
            y = S.transpose(y, [1, 0, 2])
        return y, (f_fw, f_bw)


class RNNBase(LayerList):
    """The multi-layer recurrent layers (`SimpleRNN`, `LSTM`, `GRU`): layer `l` holds
    `RNN(cell)` or `BiRNN(cell_fw, cell_bw)` (Paddle's structure and parameter
    names, `0.cell.weight_ih`, `0.cell_fw.weight_ih`, ...)."""

    CELL: type[RNNCellBase]
    STATES = 1

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 weight_ih_attr: Any = None, weight_hh_attr: Any = None, bias_ih_attr: Any = None,
                 bias_hh_attr: Any = None, name: str | None = None, **cell_kwargs: Any) -> None:
        super().__init__()
        fn = type(self).__name__
        if direction not in ("forward", "bidirect", "bidirectional"):
            raise ValueError(f"{fn}: direction must be 'forward', 'bidirect' or 'bidirectional', got {direction!r}")
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"{fn}: num_layers must be a positive int, got {num_layers!r}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.num_directions = 1 if direction == "forward" else 2
        self.direction, self.time_major, self.dropout = direction, time_major, dropout
        attrs = {"weight_ih_attr": weight_ih_attr, "weight_hh_attr": weight_hh_attr,
                 "bias_ih_attr": bias_ih_attr, "bias_hh_attr": bias_hh_attr}
        out_size = cell_kwargs.get("proj_size", 0) or hidden_size  # a layer's output width
        for layer in range(num_layers):
            size = input_size if layer == 0 else out_size * self.num_directions
            cells = [self.CELL(size, hidden_size, **cell_kwargs, **attrs)
                     for _ in range(self.num_directions)]
            self.append(RNN(cells[0], False, time_major) if len(cells) == 1
                        else BiRNN(cells[0], cells[1], time_major))
        self.could_use_cudnn = len(self.parameters()) == num_layers * 4 * self.num_directions
        # As Paddle, each parameter is also an attribute of this layer (`weight_ih_l0`,
        # `bias_hh_l1_reverse`, ...): the names of `named_parameters()` and `jit.save`.
        for k, cell in enumerate(self._cells()):
            layer, d = divmod(k, self.num_directions)
            for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                p = getattr(cell, kind)
                if p is not None:
                    setattr(self, f"{kind}_l{layer}{'_reverse' if d else ''}", p)
        self.flatten_parameters()

    def flatten_parameters(self) -> None:
        """Paddle's hook for cuDNN's contiguous weights: here it only refreshes
        `_all_weights`, the parameters in the order of the `rnn` op's `WeightList`."""
        self._all_weights = self._weight_list() or []

    def _split_states(self, initial_states: Any) -> list[Any]:
        """Per (layer, direction), the initial state, from Paddle's stacked
        `[num_layers * num_directions, batch, hidden]` tensors (None: zeros)."""
        n = self.num_layers * self.num_directions
        if initial_states is None:
            return [None] * n
        parts = tuple(initial_states) if isinstance(initial_states, (list, tuple)) else (initial_states,)
        per = [S.split(p, n, axis=0) if n > 1 else [p] for p in parts]
        per = [[S.squeeze(s, [0]) for s in group] for group in per]
        if self.STATES > 1:
            return [tuple(group[k] for group in per) for k in range(n)]
        return per[0]

    def _stack_states(self, finals: list[Any]) -> Any:
        """Paddle's final states: `[num_layers * num_directions, batch, hidden]` each."""
        if self.STATES > 1:
            return tuple(stack([f[k] for f in finals], 0) for k in range(self.STATES))
        return stack(finals, 0)

    MODE = "LSTM"

    def _mode(self) -> str:
        """The `mode` of Paddle's `rnn` op for this layer."""
        return self.MODE

    def _cells(self) -> list[RNNCellBase]:
        """The cells, layer by layer, forward direction first."""
        cells: list[RNNCellBase] = []
        for wrapper in self:
            cells += [wrapper.cell] if self.num_directions == 1 else [wrapper.cell_fw, wrapper.cell_bw]
        return cells

    def _weight_list(self) -> list[Any] | None:
        """The parameters in the order of Paddle's `rnn` op `WeightList` (per layer and
        direction `weight_ih`, `weight_hh`, then per layer and direction `bias_ih`,
        `bias_hh`), or None when a cell lacks one (the op needs all four)."""
        cells = self._cells()
        if any(c.bias_ih is None or c.bias_hh is None for c in cells):
            return None
        return ([w for c in cells for w in (c.weight_ih, c.weight_hh)]
                + [b for c in cells for b in (c.bias_ih, c.bias_hh)])

    def _fused(self) -> bool:
        """Whether this call appends Paddle's single `rnn` op (`pd.rnn`) rather than
        the unrolled steps: when the cells have exactly their four parameters
        (`could_use_cudnn`, as Paddle decides; not with an LSTM projection), except
        with inter-layer dropout in a to_static trace (the op's mask comes from its
        `seed` property, which a traced program would fix for every call)."""
        if not self.could_use_cudnn or self._weight_list() is None:
            return False
        if self.dropout and self.training and self.num_layers > 1:
            return in_dynamic_mode() or traced_seed() is None
        return True

    def forward(self, inputs: Any, initial_states: Any = None, sequence_length: Any = None) -> tuple[Any, Any]:
        """`(outputs, final_states)`: outputs `[batch, time, hidden * num_directions]`
        (time-major if asked); final states as Paddle stacks them."""
        if self._fused():
            return self._fused_forward(inputs, initial_states, sequence_length)
        return self._unrolled_forward(inputs, initial_states, sequence_length)

    def _fused_forward(self, inputs: Any, initial_states: Any, sequence_length: Any) -> tuple[Any, Any]:
        """One `pd.rnn` (Paddle's `rnn` op, as RNNBase's `_cudnn_impl` appends it)."""
        fn = type(self).__name__
        if len(inputs.shape) != 3:
            raise ValueError(f"{fn}: inputs must be 3-D, got shape {list(inputs.shape)}")
        x = inputs if self.time_major else S.transpose(inputs, [1, 0, 2])
        n = self.num_layers * self.num_directions
        if initial_states is None:
            step0 = S.squeeze(S.slice(x, [0], [0], [1]), [0])  # [batch, input]
            zero = S.unsqueeze(_zeros_state(step0, self.hidden_size), [0])
            zeros = S.expand(zero, [n, -1, self.hidden_size]) if n > 1 else zero
            states = [zeros] * self.STATES
        else:
            # (Paddle takes a single state as a tensor or as a one-element list.)
            states = list(initial_states) if isinstance(initial_states, (list, tuple)) else [initial_states]
            if len(states) != self.STATES:
                raise ValueError(f"{fn}: initial_states must hold {self.STATES} tensors, got {len(states)}")
        weights = self._weight_list()
        assert weights is not None
        seq = [sequence_length] if sequence_length is not None else []
        dropout = float(self.dropout or 0.0)
        active = dropout > 0 and self.training and self.num_layers > 1
        seed = 0
        if active and in_dynamic_mode():
            # A new mask per call, as Paddle's: the seed is a property, so each call
            # is a new op and eager's backward plan is rebuilt (still ~3x faster than
            # the unrolled steps with per-call seed operands).
            seed = default_generator().next_seed()
        elif active:
            seed = _static_dropout_seed(unique_name.generate("rnn_dropout"), None)
        outs = apply(pd.RnnOp, [x, *states, *weights, *seq], prefix="rnn", mode=self._mode(),
                     input_size=self.input_size, hidden_size=self.hidden_size,
                     num_layers=self.num_layers, is_bidirec=self.num_directions == 2,
                     dropout_prob=dropout, is_test=not self.training, seed=seed)
        y = outs[0] if self.time_major else S.transpose(outs[0], [1, 0, 2])
        finals = outs[1:1 + self.STATES]
        return y, (tuple(finals) if self.STATES > 1 else finals[0])

    def _unrolled_forward(self, inputs: Any, initial_states: Any, sequence_length: Any) -> tuple[Any, Any]:
        """The time loop unrolled into per-step ops (LSTM projection, traced dropout)."""
        fn = type(self).__name__
        x, steps = _steps(fn, inputs, self.time_major)
        init = self._split_states(initial_states)
        masks = _length_masks(sequence_length, steps, inputs.dtype)
        finals: list[Any] = []
        for layer, wrapper in enumerate(self):
            cells = [wrapper.cell] if self.num_directions == 1 else [wrapper.cell_fw, wrapper.cell_bw]
            outs = []
            for d, cell in enumerate(cells):
                xw = cell.project_input(x)  # the whole sequence at once
                xw_steps = [_step_input(xw, t) for t in range(steps)]
                state = init[layer * self.num_directions + d]
                if state is None:
                    state = cell.initial_states(xw_steps[0])
                o, f = run_cell(cell, xw_steps, state, d == 1, masks)
                outs.append(stack(o, 1))
                finals.append(f)
            x = outs[0] if len(outs) == 1 else S.concat(outs, axis=-1)
            if self.dropout and layer < self.num_layers - 1:
                x = N.dropout(x, self.dropout, training=self.training, mode="upscale_in_train")
        y = S.transpose(x, [1, 0, 2]) if self.time_major else x
        return y, self._stack_states(finals)

    def extra_repr(self) -> str:
        """Paddle's: the sizes, then `num_layers`, `time_major`, `dropout` where not default."""
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.time_major is not False:
            s += f", time_major={self.time_major}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        return s


class SimpleRNN(RNNBase):
    """`paddle.nn.SimpleRNN` (`activation` 'tanh' or 'relu')."""

    CELL = SimpleRNNCell

    def _mode(self) -> str:
        return "RNN_RELU" if self.activation == "relu" else "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 activation: str = "tanh", weight_ih_attr: Any = None, weight_hh_attr: Any = None,
                 bias_ih_attr: Any = None, bias_hh_attr: Any = None, name: str | None = None) -> None:
        super().__init__(input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr, name,
                         activation=activation)
        self.activation = activation


class LSTM(RNNBase):
    """`paddle.nn.LSTM`: final states `(h, c)`; with `proj_size > 0` every layer's
    output (and h) is projected to `proj_size` (see `LSTMCell`), unrolled."""

    CELL = LSTMCell
    STATES = 2

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 direction: str = "forward", time_major: bool = False, dropout: float = 0.0,
                 weight_ih_attr: Any = None, weight_hh_attr: Any = None, bias_ih_attr: Any = None,
                 bias_hh_attr: Any = None, proj_size: int = 0, name: str | None = None) -> None:
        self.proj_size = proj_size
        super().__init__(input_size, hidden_size, num_layers, direction, time_major, dropout,
                         weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr, name,
                         proj_size=proj_size)


class GRU(RNNBase):
    """`paddle.nn.GRU`."""

    CELL = GRUCell
    MODE = "GRU"


__all__ = [
    "GRU",
    "LSTM",
    "RNN",
    "BiRNN",
    "GRUCell",
    "LSTMCell",
    "RNNCellBase",
    "SimpleRNN",
    "SimpleRNNCell",
]
