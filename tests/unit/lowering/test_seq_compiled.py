"""Issue 13's frontend functions run on the compiled backend without falling back,
and agree with the interpreter: activations, losses, attention, einsum, scans,
indexing, forward and backward, in one program (float64)."""

from __future__ import annotations

import numpy as np
import pullback as paddle
from pullback.frontend import core
from pullback.runtime.native.backend import CompiledBackend
from pullback.runtime.interpreter import run_module

F = paddle.nn.functional


def test_composites_compile_natively_and_match_the_interpreter():
    core.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, 4], "float64")
            x.stop_gradient = False
            y = paddle.static.data("y", [None], "int64")
            q = paddle.static.data("q", [2, 3, 2, 2], "float64")
            q.stop_gradient = False
            acts = [F.mish(x), F.hardswish(x), F.selu(x), F.celu(x), F.softsign(x), F.tanhshrink(x),
                    F.relu6(x), F.hardsigmoid(x), F.glu(x), paddle.log2(paddle.abs(x) + 1.0),
                    paddle.rsqrt(paddle.abs(x) + 1.0), paddle.logsumexp(x, axis=1), paddle.var(x, axis=1),
                    paddle.norm(x, p=1, axis=1), paddle.einsum("ij,kj->ik", x, x),
                    paddle.cumsum(x, axis=1), paddle.sin(x), paddle.triu(x), x[:, ::-1],
                    paddle.gather(x, y, axis=1), paddle.roll(x, 1, 1), paddle.tile(x, [1, 2])]
            losses = [F.cross_entropy(x, y, label_smoothing=0.1), F.nll_loss(F.log_softmax(x), y),
                      F.cross_entropy(x, y, weight=paddle.abs(x[0]) + 0.5),
                      F.smooth_l1_loss(x, x * 0.3), F.kl_div(F.log_softmax(x), F.softmax(x)),
                      paddle.mean(F.scaled_dot_product_attention(q, q, q))]
            total = paddle.add_n([paddle.sum(a) for a in acts] + losses)
            grads = paddle.static.gradients([total], [x, q])
        rng = np.random.default_rng(0)
        feed = {"x": rng.standard_normal((3, 4)), "y": np.array([0, 3, 1]),
                "q": rng.standard_normal((2, 3, 2, 2))}
        fetch = [v.value for v in [*acts, *losses, *grads]]
        want = [run_module(main.module, feed, {})[v] for v in fetch]
        got = CompiledBackend(fallback=False).run(main.module, feed, {}, fetch)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)
    finally:
        core.disable_static()
