"""VJP rules of the recurrent family.

`pd.rnn`'s VJP is one `pd.rnn_grad` (Paddle's `rnn_grad`): backpropagation through
time from the forward op's `reserve`.  Gradients that do not arrive (an unused final
state, the output of an op whose states alone are read) enter as zeros.

`pd.rnn_grad` has no VJP rule, as Paddle's has none: differentiating it again raises
the autodiff pass's "no VJP rule" error, with the hint below.  A recurrent layer
that must be differentiated twice is written unrolled, `nn.RNN(nn.LSTMCell(...))`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from pullback.dialects import pd
from pullback.passes.autodiff import AutodiffError
from pullback.passes.vjp import vjp
from pullback.passes.vjp.builder import VjpBuilder

Grads = list["SSAValue | None"]
Out = Sequence["SSAValue | None"]

SECOND_ORDER_HINT = (
    "no VJP rule for 'pd.rnn_grad' (the gradient of nn.LSTM/nn.GRU/nn.SimpleRNN, Paddle's "
    "rnn_grad, has none): for a second derivative, build the layer unrolled, e.g. "
    "nn.RNN(nn.LSTMCell(input_size, hidden_size))"
)
"""The message of a second derivative through a fused recurrent layer."""


@vjp(pd.RnnOp)
def rnn_vjp(b: VjpBuilder, op, grads: Grads) -> Out:
    """`pd.rnn_grad` over the forward operands, `out`, `reserve` and the gradients
    of `out` and the final states (zeros where none arrive); the sequence length
    gets none."""
    assert isinstance(op, pd.RnnOp)
    lay = op.layout()
    x, pre, weights, seq, _ = op.parts()
    res = list(op.results)
    g_out = grads[0] if grads[0] is not None else b.full_like(res[0], 0.0)
    g_states = [g if g is not None else b.full_like(r, 0.0)
                for g, r in zip(grads[1:1 + lay.states], res[1:1 + lay.states])]
    operands = [x, *pre, *weights, *([seq] if seq is not None else []),
                res[0], res[1 + lay.states], g_out, *g_states]
    d = b.emit_multi(pd.RnnGradOp, *operands, **op.py_props())
    return [*d, *([None] if seq is not None else [])]


@vjp(pd.RnnGradOp)
def rnn_grad_vjp(b: VjpBuilder, op, grads: Grads) -> Out:
    """No second derivative (Paddle's rnn_grad has none): a clear error."""
    raise AutodiffError(SECOND_ORDER_HINT, op)
