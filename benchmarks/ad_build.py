"""How long `append_backward` takes on long chains of ops (run by hand).

    python -m pullback.benchmarks.ad_build            # 1000, 5000, 10000 ops
    python -m pullback.benchmarks.ad_build 2000 20000

Builds `y = x; repeat: y = tanh(y * w_k)` style chains (alternating elementwise
multiply by a parameter, tanh and scale), times `append_backward` alone, and prints
the time per forward op and the scaling from the smallest to the largest chain (1.0
means perfectly linear).  Target: at most 0.5 s for 5000 ops on one core.
"""

from __future__ import annotations

import sys
import time

import pullback as paddle


def build_chain(n_ops: int) -> tuple[paddle.static.Program, object]:
    """A program of about `n_ops` forward ops ending in a scalar loss."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data(name="x", shape=[None, 16], dtype="float32")
        w = paddle.static.create_parameter(shape=[16], dtype="float32", name="w")
        y = x
        count = 0
        while count < n_ops - 1:
            kind = count % 3
            if kind == 0:
                y = paddle.multiply(y, w)
            elif kind == 1:
                y = paddle.tanh(y)
            else:
                y = paddle.scale(y, scale=0.5, bias=0.1)
            count += 1
        loss = paddle.mean(y)
    return main, loss


def time_append_backward(n_ops: int, repeats: int = 3) -> float:
    """Best-of-`repeats` seconds for `append_backward` on an `n_ops` chain."""
    best = float("inf")
    for _ in range(repeats):
        main, loss = build_chain(n_ops)
        with paddle.static.program_guard(main):
            t0 = time.perf_counter()
            paddle.static.append_backward(loss)
            best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str]) -> None:
    """Print time and per-op cost for each chain length, then the scaling."""
    paddle.enable_static()
    sizes = [int(a) for a in argv] or [1000, 5000, 10000]
    results = []
    print(f"{'ops':>8} {'seconds':>9} {'us/op':>8}")
    for n in sizes:
        t = time_append_backward(n, repeats=3 if n <= 5000 else 1)
        results.append((n, t))
        print(f"{n:>8} {t:>9.3f} {1e6 * t / n:>8.1f}")
    (n0, t0), (n1, t1) = results[0], results[-1]
    print(f"scaling {n0}->{n1}: per-op cost ratio {(t1 / n1) / (t0 / n0):.2f} (1.0 = linear)")


if __name__ == "__main__":
    main(sys.argv[1:])
