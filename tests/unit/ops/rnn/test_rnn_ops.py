"""The recurrent family (`pd.rnn`, `pd.rnn_grad`, Paddle's fused `rnn` op): the numpy
kernels against float64 finite differences (every mode, both directions, stacked,
sequence lengths, inter-layer dropout), `nn.LSTM`/`nn.GRU`/`nn.SimpleRNN` (which
append one `pd.rnn`) against the unrolled cells forward and backward, the compiled
backend against the interpreter (dynamic batch too), the typing rule's errors, and
the missing second derivative's message."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.dialects.pd.rnn import RnnLayout
from pullback.frontend import core
from pullback.runtime.kernels.rnn import rnn_backward, rnn_forward
from pullback.testing import fd_grad

nn = paddle.nn
CLASSES = {"LSTM": (nn.LSTM, {}), "GRU": (nn.GRU, {}), "RNN_TANH": (nn.SimpleRNN, {}),
           "RNN_RELU": (nn.SimpleRNN, {"activation": "relu"})}


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    paddle.seed(3)
    yield
    core.disable_static()
    paddle.seed(0)


def _operands(rng: np.random.Generator, lay: RnnLayout, T: int, B: int) -> tuple[Any, ...]:
    """Random float64 input, pre-states and weight list of this layout."""
    H = lay.hidden_size
    x = rng.standard_normal((T, B, lay.input_size))
    pre = [rng.standard_normal((lay.blocks, B, H)) for _ in range(lay.states)]
    ws = []
    for i in range(lay.weight_count):
        layer = (i % (2 * lay.blocks)) // 2 // lay.directions
        shape = ((lay.gates * H, lay.layer_input(layer) if i % 2 == 0 else H)
                 if i < 2 * lay.blocks else (lay.gates * H,))
        ws.append(rng.standard_normal(shape) * 0.5)
    return x, pre, ws


CASES = [("LSTM", 2, 2, True, True), ("LSTM", 1, 1, False, False), ("GRU", 2, 1, True, False),
         ("GRU", 1, 2, False, True), ("RNN_TANH", 2, 2, True, False), ("RNN_RELU", 1, 2, True, True)]


@pytest.mark.parametrize("mode,D,L,use_lens,dropout", CASES)
def test_kernel_gradients_match_finite_differences(mode: str, D: int, L: int, use_lens: bool,
                                                   dropout: bool) -> None:
    rng = np.random.default_rng(1)
    T, B = 4, 3
    lay = RnnLayout(mode, L, D, 2, 3, dropout)
    x, pre, ws = _operands(rng, lay, T, B)
    seq = np.array([4, 2, 3]) if use_lens else None
    out, fin, res = rnn_forward(lay, x, pre, ws, seq, 0.3, 5)
    g_out = rng.standard_normal(out.shape)
    g_st = [rng.standard_normal(f.shape) for f in fin]

    def loss() -> float:
        o, f, _ = rnn_forward(lay, x, pre, ws, seq, 0.3, 5)
        return float((o * g_out).sum() + sum((a * b).sum() for a, b in zip(f, g_st)))

    dx, dpre, dw = rnn_backward(lay, x, pre, ws, seq, res, g_out, g_st)
    for what, arr, grad in [("x", x, dx), *(("pre", p, g) for p, g in zip(pre, dpre)),
                            *(("w", w, g) for w, g in zip(ws, dw))]:
        def loss_at(a: np.ndarray, arr: np.ndarray = arr) -> float:
            """The loss with `arr` (read by `loss`) holding `a`, restored after."""
            saved = arr.copy()
            arr[...] = a
            try:
                return loss()
            finally:
                arr[...] = saved

        num = fd_grad(loss_at, arr)
        np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-7, err_msg=f"{mode} d{what}")
    if use_lens:  # past a row's length: zero outputs, and the state is kept
        np.testing.assert_array_equal(out[2:, 1], 0.0)


def _layer(mode: str, **kw: Any) -> Any:
    cls, extra = CLASSES[mode]
    return cls(3, 4, **extra, **kw)


def _flat(states: Any) -> list[Any]:
    return list(states) if isinstance(states, tuple) else [states]


@pytest.mark.parametrize("mode", list(CLASSES))
@pytest.mark.parametrize("direction,num_layers,time_major", [("forward", 1, False), ("bidirect", 2, True)])
def test_fused_layers_match_the_unrolled_cells(mode: str, direction: str, num_layers: int,
                                               time_major: bool) -> None:
    m = _layer(mode, num_layers=num_layers, direction=direction, time_major=time_major)
    rng = np.random.default_rng(2)
    x = paddle.to_tensor(rng.standard_normal((5, 2, 3) if time_major else (2, 5, 3)).astype("float32"),
                         stop_gradient=False)
    h0 = paddle.to_tensor(rng.standard_normal((num_layers * m.num_directions, 2, 4)).astype("float32"))
    init = (h0, h0 * 0.5) if mode == "LSTM" else h0
    lens = paddle.to_tensor(np.array([5, 3], "int64"))
    y, s = m(x, init, sequence_length=lens)
    y2, s2 = m._unrolled_forward(x, init, lens)
    for a, b in zip([y, *_flat(s)], [y2, *_flat(s2)]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    params = [x, *m.parameters()]
    g = paddle.grad([(y * y).sum() + sum((a * a).sum() for a in _flat(s))], params)
    g2 = paddle.grad([(y2 * y2).sum() + sum((a * a).sum() for a in _flat(s2))], params)
    for a, b in zip(g, g2):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


def test_layers_append_one_rnn_op_in_static_mode() -> None:
    paddle.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [None, 12, 3], "float32")
        y, (h, c) = nn.LSTM(3, 4, num_layers=2)(x)
        paddle.static.append_backward((y * y).mean())
    names = [op.name for op in main.module.walk()]
    assert names.count("pd.rnn") == 1 and names.count("pd.rnn_grad") == 1
    assert len(names) < 60, "the program must not grow with the sequence length"


def _static_run(mode: str, direction: str, num_layers: int, use_lens: bool, dtype: str,
                batch: int, dropout: float = 0.0) -> list[list[np.ndarray]]:
    """Forward and gradients of a small static program on both backends."""
    paddle.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [None, 5, 3], dtype)
        x.stop_gradient = False
        lens = paddle.static.data("lens", [None], "int64")
        m = _layer(mode, num_layers=num_layers, direction=direction, dropout=dropout)
        y, s = m(x, sequence_length=lens if use_lens else None)
        loss = (y * y).mean() + sum((a * a).mean() for a in _flat(s))
        grads = paddle.static.gradients([loss], [x, *m.parameters()])
    rng = np.random.default_rng(5)
    feed = {"x": rng.standard_normal((batch, 5, 3)).astype(dtype),
            "lens": rng.integers(1, 6, batch).astype("int64")}
    outs = []
    for kw in ({"backend": "interpreter"}, {}):
        exe = paddle.static.Executor(paddle.CPUPlace(), **kw)
        if kw:
            exe.run(start)
        outs.append(exe.run(main, feed=feed, fetch_list=[y, *_flat(s), *grads]))
    return outs


@pytest.mark.parametrize("mode,direction,num_layers,use_lens,dtype,dropout", [
    ("LSTM", "bidirect", 2, True, "float32", 0.0),
    ("GRU", "forward", 3, False, "float32", 0.4),  # inter-layer dropout: the same masks
    ("RNN_RELU", "bidirect", 1, True, "float32", 0.0),
])
def test_compiled_matches_the_interpreter(mode: str, direction: str, num_layers: int, use_lens: bool,
                                          dtype: str, dropout: float) -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="compiled backend")  # no interpreter fallback
        interp, comp = _static_run(mode, direction, num_layers, use_lens, dtype, batch=3, dropout=dropout)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    for a, b in zip(interp, comp):
        np.testing.assert_allclose(b, a, **tol)


def test_eager_gru_gradient_matches_finite_differences() -> None:
    m = nn.GRU(2, 3, direction="bidirect", num_layers=2)
    for p in m.parameters():
        p._data = p._data.astype(np.float64)
    x = np.random.default_rng(6).standard_normal((2, 4, 2))
    proj = np.random.default_rng(7).standard_normal((2, 4, 6))

    def loss(xv: np.ndarray) -> float:
        with paddle.no_grad():
            return float((m(paddle.to_tensor(xv))[0].numpy() * proj).sum())

    xt = paddle.to_tensor(x, stop_gradient=False)
    (gx,) = paddle.grad((m(xt)[0] * paddle.to_tensor(proj)).sum(), [xt])
    np.testing.assert_allclose(gx.numpy(), fd_grad(loss, x), rtol=1e-6, atol=1e-8)


def test_second_derivative_names_the_op_and_the_unrolled_alternative() -> None:
    m = nn.LSTM(2, 3)
    x = paddle.to_tensor(np.ones((1, 3, 2), "float32"), stop_gradient=False)
    y, _ = m(x)
    (gx,) = paddle.grad(y.sum(), [x], create_graph=True)
    with pytest.raises(Exception, match=r"rnn_grad.*nn\.RNN\(nn\.LSTMCell"):
        paddle.grad(gx.sum(), [x])


def test_typing_rule_errors_name_the_problem() -> None:
    paddle.enable_static()
    with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
        x = paddle.static.data("x", [5, 2, 3], "float32")
        h = paddle.static.data("h", [1, 2, 4], "float32")
        w_ih = paddle.static.data("w_ih", [16, 3], "float32")
        w_hh = paddle.static.data("w_hh", [16, 4], "float32")
        b = paddle.static.data("b", [16], "float32")
        props = dict(mode="LSTM", input_size=3, hidden_size=4)
        outs = core.apply(pd.RnnOp, [x, h, h, w_ih, w_hh, b, b], prefix="rnn", **props)
        assert list(outs[0].shape) == [5, 2, 4] and list(outs[3].shape) == [5, 2, 24]
        with pytest.raises(ValueError, match=r"pd.rnn.*weight #1 must have shape \[16, 4\]"):
            core.apply(pd.RnnOp, [x, h, h, w_ih, w_ih, b, b], prefix="rnn", **props)
        with pytest.raises(ValueError, match=r"pd.rnn.*takes 7 operands"):
            core.apply(pd.RnnOp, [x, h, w_ih, w_hh, b, b], prefix="rnn", **props)
        with pytest.raises(ValueError, match=r"pd.rnn.*mode must be one of"):
            core.apply(pd.RnnOp, [x, h, w_ih, w_hh, b, b], prefix="rnn", **{**props, "mode": "LSTMX"})


def test_parameters_carry_paddles_names_and_weight_list_order() -> None:
    m = nn.LSTM(2, 3, num_layers=2, direction="bidirect")
    assert m.weight_hh_l1_reverse is m[1].cell_bw.weight_hh
    assert m.bias_ih_l0 is m[0].cell_fw.bias_ih
    names = [n for n, _ in m.named_parameters()]
    assert names[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l0_reverse"]
    assert len(names) == 16 and m.could_use_cudnn
    # WeightList: per (layer, direction) weight_ih, weight_hh; then the biases likewise.
    assert m._all_weights[2] is m[0].cell_bw.weight_ih and m._all_weights[3] is m[0].cell_bw.weight_hh
    assert m._all_weights[8] is m[0].cell_fw.bias_ih and m._all_weights[15] is m[1].cell_bw.bias_hh
    assert nn.GRU(2, 3, bias_hh_attr=False).could_use_cudnn  # (a frozen zero bias, see below)


def test_lstm_projection_matches_numpy_and_stays_unrolled() -> None:
    m = nn.LSTM(3, 5, proj_size=2)
    assert not m.could_use_cudnn  # five parameters per cell: Paddle unrolls too
    cell = m[0].cell
    assert cell.state_shape == ((2,), (5,)) and list(cell.weight_hh.shape) == [20, 2]
    x = np.random.default_rng(8).standard_normal((2, 4, 3)).astype("float32")
    y, (h, c) = m(paddle.to_tensor(x))
    w_ih, w_hh, b_ih, b_hh, w_ho = (p.numpy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih,
                                                        cell.bias_hh, cell.weight_ho))
    hv, cv = np.zeros((2, 2)), np.zeros((2, 5))
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    for t in range(4):
        i, f, g, o = np.split(x[:, t] @ w_ih.T + b_ih + hv @ w_hh.T + b_hh, 4, -1)
        cv = sig(f) * cv + sig(i) * np.tanh(g)
        hv = (sig(o) * np.tanh(cv)) @ w_ho
        np.testing.assert_allclose(y.numpy()[:, t], hv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.numpy()[0], hv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.numpy()[0], cv, rtol=1e-5, atol=1e-6)


def test_a_disabled_bias_is_a_frozen_zero_parameter_and_the_op_is_still_fused() -> None:
    m = nn.GRU(3, 4, bias_ih_attr=False)
    assert len(m.parameters()) == 4 and m.could_use_cudnn
    assert m.bias_ih_l0.stop_gradient and not m.bias_ih_l0.numpy().any()
    x = paddle.to_tensor(np.random.default_rng(9).standard_normal((2, 3, 3)).astype("float32"))
    y, _ = m(x)
    y2, _ = m._unrolled_forward(x, None, None)
    np.testing.assert_allclose(y.numpy(), y2.numpy(), rtol=1e-5, atol=1e-6)
    y.sum().backward()
    assert m.bias_ih_l0.grad is None and m.bias_hh_l0.grad is not None


def test_a_dynamic_sequence_length_compiles_once_and_matches_the_interpreter() -> None:
    paddle.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [None, None, 3], "float32")  # batch and time dynamic
        x.stop_gradient = False
        m = nn.LSTM(3, 4, direction="bidirect")
        y, (h, c) = m(x)
        grads = paddle.static.gradients([(y * y).mean() + (h * h).mean()], [x, *m.parameters()])
    assert list(y.shape) == [-1, -1, 8]
    runs = []
    for kw in ({"backend": "interpreter"}, {}):
        exe = paddle.static.Executor(paddle.CPUPlace(), **kw)
        if kw:
            exe.run(start)
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message="compiled backend")
            runs.append([exe.run(main, feed={"x": np.random.default_rng(t).standard_normal((2, t, 3)).astype("float32")},
                                 fetch_list=[y, h, c, *grads]) for t in (3, 6)])
    for interp, comp in zip(*runs):
        for a, b in zip(interp, comp):
            np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_a_single_initial_state_may_come_as_a_one_element_list() -> None:
    m = nn.GRU(3, 4, num_layers=2, dropout=0.5)  # training with dropout: the unrolled path too
    x = paddle.to_tensor(np.random.default_rng(10).standard_normal((2, 5, 3)).astype("float32"))
    h0 = paddle.to_tensor(np.random.default_rng(11).standard_normal((2, 2, 4)).astype("float32"))
    m.eval()
    np.testing.assert_allclose(m(x, [h0])[0].numpy(), m(x, h0)[0].numpy(), rtol=0, atol=0)
    m.train()
    paddle.seed(1)
    a = m(x, [h0])[0].numpy()
    paddle.seed(1)
    np.testing.assert_allclose(a, m(x, h0)[0].numpy(), rtol=0, atol=0)
    with pytest.raises(ValueError, match="LSTM: initial_states must hold 2 tensors"):
        nn.LSTM(3, 4)(x, (h0[:1],))


def test_extra_repr_follows_paddle() -> None:
    assert nn.LSTM(3, 4).extra_repr() == "3, 4"
    assert nn.GRU(3, 4, num_layers=2, time_major=True, dropout=0.1).extra_repr() == \
        "3, 4, num_layers=2, time_major=True, dropout=0.1"


def test_eager_inter_layer_dropout_is_fused_redrawn_per_call_and_differentiated() -> None:
    m = nn.LSTM(2, 3, num_layers=2, dropout=0.5)
    for p in m.parameters():
        p._data = p._data.astype(np.float64)
    x = np.random.default_rng(12).standard_normal((2, 4, 2))

    def run(xv: Any) -> Any:
        paddle.seed(21)  # the same mask for every evaluation of the check
        return m(xv)[0]

    with paddle.no_grad():
        assert not np.allclose(m(paddle.to_tensor(x))[0].numpy(), m(paddle.to_tensor(x))[0].numpy())
    xt = paddle.to_tensor(x, stop_gradient=False)
    (gx,) = paddle.grad(run(xt).sum(), [xt])
    def total(a: np.ndarray) -> float:
        with paddle.no_grad():
            return float(run(paddle.to_tensor(a)).numpy().sum())

    np.testing.assert_allclose(gx.numpy(), fd_grad(total, x), rtol=1e-6, atol=1e-8)
