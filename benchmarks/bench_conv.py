"""Compiled convolutions and pooling on small channel counts (issue 33), one op at a
time, against PyTorch in the same process.

    PULLBACK_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \\
        taskset -c 1 python -m pullback.benchmarks.bench_conv [--rounds R] [--iters N]

Each case is a one-op static program (`benchmarks/programs.py`'s builder, static
shapes) compiled by `compile_program` twice: with the convolution lowering's cost
rule (`lowering/conv_direct.py`, "new") and with every convolution forced onto
im2col + GEMM ("old", `conv_direct.STRATEGY = "gemm"`).  The disk cache is off
(`PULLBACK_CACHE=0`): the strategy is a lowering switch, not part of the cache key.
Calls go through `eager_native._DirectCall` (the buffers' addresses and the entry
point, what eager mode pays), fresh outputs each call as there.

PyTorch: `F.conv2d` forward; the filter and input gradients as
`torch.nn.grad.conv2d_weight` / `conv2d_input` compute them (what autograd calls);
`F.max_pool2d` forward and its autograd backward (`y.backward(g)`, the forward
included).  Rounds interleave ours (old, new) and torch; the table gives medians
of per-round times and of ratios.  Times are the calling thread's CPU time
(`per_call_us`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PULLBACK_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ["PULLBACK_CACHE"] = "0"

import numpy as np  # noqa: E402
from xdsl.ir import SSAValue  # noqa: E402

from pullback.benchmarks.programs import ProgramBuilder  # noqa: E402
from pullback.dialects import pd  # noqa: E402
from pullback.frontend.eager_native import _DirectCall  # noqa: E402
from pullback.lowering import conv_direct  # noqa: E402
from pullback.runtime.native.compiler import compile_program  # noqa: E402


@dataclass(frozen=True)
class Conv:
    """A convolution case: input `[n, c, h, w]`, `o` filters of `k x k`, padding `p`."""

    name: str
    n: int
    c: int
    o: int
    hw: int
    k: int
    p: int
    stride: int = 1

    @property
    def out(self) -> int:
        """The output's spatial size."""
        return (self.hw + 2 * self.p - self.k) // self.stride + 1


CASES = [
    Conv("LeNet conv1 1->6 3x3 p1 28x28 b64", 64, 1, 6, 28, 3, 1),
    Conv("LeNet conv1 1->6 5x5 28x28 b64", 64, 1, 6, 28, 5, 0),
    Conv("LeNet conv2 6->16 5x5 14x14 b64", 64, 6, 16, 14, 5, 0),
    Conv("ResNet 3->64 3x3 p1 32x32 b32", 32, 3, 64, 32, 3, 1),
    Conv("ResNet 64->64 3x3 p1 32x32 b32", 32, 64, 64, 32, 3, 1),
    # ResNet-18 as `bench_resnet` builds it (ImageNet stem on 32x32 images): its
    # stage-1 and stage-2 convolutions run on 8x8 and 4x4.
    Conv("ResNet-18 stage1 64->64 3x3 p1 8x8 b32", 32, 64, 64, 8, 3, 1),
    Conv("ResNet-18 stage2 128->128 3x3 p1 4x4 b32", 32, 128, 128, 4, 3, 1),
    # Where the cost rule's other side lies: deep layers, strided and 1x1 ones.
    Conv("ResNet 128->128 3x3 p1 16x16 b32", 32, 128, 128, 16, 3, 1),
    Conv("ResNet 256->256 3x3 p1 8x8 b32", 32, 256, 256, 8, 3, 1),
    Conv("ResNet 512->512 3x3 p1 4x4 b32", 32, 512, 512, 4, 3, 1),
    Conv("ResNet 64->128 3x3 s2 p1 32x32 b32", 32, 64, 128, 32, 3, 1, 2),
    Conv("ResNet 64->128 1x1 s2 32x32 b32", 32, 64, 128, 32, 1, 0, 2),
    Conv("1x1 64->64 32x32 b32", 32, 64, 64, 32, 1, 0),
    Conv("16->16 3x3 p1 8x8 b64", 64, 16, 16, 8, 3, 1),
]
POOLS = [("LeNet maxpool 2x2 6x28x28 b64", (64, 6, 28, 28)), ("LeNet maxpool 2x2 16x10x10 b64", (64, 16, 10, 10))]


@dataclass
class Row:
    """One timed op: per-round times (us) of ours old, ours new and torch."""

    name: str
    old: list[float] = field(default_factory=list)
    new: list[float] = field(default_factory=list)
    torch: list[float] = field(default_factory=list)


def per_call_us(fn: Callable[[], object], iters: int) -> float:
    """Mean CPU time of the calling thread for one call over `iters` calls, in
    microseconds.  Thread CPU time, not wall time: on the shared, overloaded
    machine (load 3-5 on 2 cores) a wall clock mostly measured the other
    processes, and every op timed here runs on the calling thread alone (one
    thread everywhere)."""
    t0 = time.thread_time()
    for _ in range(iters):
        fn()
    return (time.thread_time() - t0) / iters * 1e6


_programs = iter(range(0, 1 << 30, 100))


def compiled(build: Callable[[ProgramBuilder, list[str]], SSAValue], strategy: str | None,
             feeds: Sequence[np.ndarray]) -> Callable[[], list[np.ndarray]]:
    """Compile the one-op program `build` makes (given its feeds' names) under a
    forced `strategy` (None: the cost rule); a call with `feeds`.  Every program
    gets feed names of its own: programs of the same text share their machine code
    (`Jit.load` links a symbol once), and the strategy is not in the text."""
    slots = [next(_programs) + i for i in range(len(feeds))]
    conv_direct.STRATEGY = strategy
    try:
        b = ProgramBuilder()
        out = build(b, [f"s{k}" for k in slots])
        program = compile_program(b.module, [out])
    finally:
        conv_direct.STRATEGY = None
    call = _DirectCall.of(program, slots)
    assert call is not None, "a static one-op program has a direct call"
    arrays = list(feeds)
    return lambda: call(arrays)


def conv_rows(case: Conv, rng: np.random.Generator, new: str | None) -> list[tuple[Row, list[Callable[[], object]]]]:
    """The forward, filter-gradient and input-gradient rows of `case`: (row, [old,
    new, torch] calls); `new` forces the new column's strategy."""
    import torch as th

    F = th.nn.functional
    n, c, o, hw, k, p, s = case.n, case.c, case.o, case.hw, case.k, case.p, case.stride
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w = rng.standard_normal((o, c, k, k)).astype(np.float32) * 0.1
    g = rng.standard_normal((n, o, case.out, case.out)).astype(np.float32)

    def fwd(b: ProgramBuilder, names: list[str]) -> SSAValue:
        return b.add(pd.Conv2DOp, b.data(names[0], x.shape), b.data(names[1], w.shape), paddings=[p, p], strides=[s, s])

    def dw(b: ProgramBuilder, names: list[str]) -> SSAValue:
        return b.add(pd.Conv2DFilterGradOp, b.data(names[0], x.shape), b.data(names[1], g.shape), filter_size=[k, k],
                     paddings=[p, p], strides=[s, s])

    def dx(b: ProgramBuilder, names: list[str]) -> SSAValue:
        return b.add(pd.Conv2DTransposeOp, b.data(names[0], g.shape), b.data(names[1], w.shape),
                     output_size=[hw, hw], paddings=[p, p], strides=[s, s])

    tx, tw, tg = th.from_numpy(x), th.from_numpy(w), th.from_numpy(g)
    rows = []
    for what, build, feeds, theirs in (
        ("forward", fwd, [x, w], lambda: F.conv2d(tx, tw, padding=p, stride=s)),
        ("filter grad", dw, [x, g], lambda: th.nn.grad.conv2d_weight(tx, tw.shape, tg, padding=p, stride=s)),
        ("input grad", dx, [g, w], lambda: th.nn.grad.conv2d_input(tx.shape, tw, tg, padding=p, stride=s)),
    ):
        old, ours = compiled(build, "gemm", feeds), compiled(build, new, feeds)
        want = theirs().numpy()
        for f in (old, ours):
            got = f()[0]
            assert np.allclose(got, want, rtol=1e-3, atol=1e-3 * float(np.abs(want).max())), (case.name, what)
        rows.append((Row(f"{case.name} {what}"), [old, ours, theirs]))
    return rows


def pool_rows(name: str, shape: tuple[int, ...], rng: np.random.Generator) -> list[tuple[Row, list[Callable[[], object]]]]:
    """Max pooling 2x2/2 forward and backward rows (ours has one lowering of each:
    old and new are the same code, timed twice)."""
    import torch as th

    x = rng.standard_normal(shape).astype(np.float32)
    out_shape = (*shape[:2], shape[2] // 2, shape[3] // 2)
    g = rng.standard_normal(out_shape).astype(np.float32)

    def fwd(b: ProgramBuilder, names: list[str]) -> SSAValue:
        return b.add(pd.Pool2DOp, b.data(names[0], shape), ksize=[2, 2], strides=[2, 2])

    def bwd(b: ProgramBuilder, names: list[str]) -> SSAValue:
        return b.add(pd.Pool2DGradOp, b.data(names[0], shape), b.data(names[1], out_shape), ksize=[2, 2],
                     strides=[2, 2])

    tx, tg = th.from_numpy(x).requires_grad_(), th.from_numpy(g)

    def torch_bwd() -> None:
        tx.grad = None
        th.nn.functional.max_pool2d(tx, 2, 2).backward(tg)

    f, bk = compiled(fwd, None, [x]), compiled(bwd, None, [x, g])
    return [
        (Row(f"{name} forward"), [f, f, lambda: th.nn.functional.max_pool2d(tx.detach(), 2, 2)]),
        (Row(f"{name} backward (torch: fwd+bwd)"), [bk, bk, torch_bwd]),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--budget-ms", type=float, default=60.0, help="time per op per round (sets its iterations)")
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    ap.add_argument("--new", default=None, choices=["direct", "gemm"],
                    help="force the 'new' column onto one path (default: the cost rule)")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    rows = []
    for case in CASES:
        if args.only in case.name:
            rows += conv_rows(case, rng, args.new)
    for name, shape in POOLS:
        if args.only in name:
            rows += pool_rows(name, shape, rng)
    iters = []
    for _, fns in rows:
        for f in fns:
            f()
        once = max(per_call_us(fns[0], 3), 1.0)
        iters.append(max(3, int(args.budget_ms * 1e3 / once)))
    for _ in range(args.rounds):
        for (row, fns), it in zip(rows, iters):
            for series, f in zip((row.old, row.new, row.torch), fns):
                series.append(per_call_us(f, it))
    med = statistics.median
    print(f"{'op':<58} {'old us':>9} {'new us':>9} {'torch us':>9} {'new/old':>8} {'old/torch':>9} {'new/torch':>9}")
    for row, _ in rows:
        ratios = [(n / o, o / t, n / t) for o, n, t in zip(row.old, row.new, row.torch)]
        print(f"{row.name:<58} {med(row.old):9.0f} {med(row.new):9.0f} {med(row.torch):9.0f} "
              f"{med(r[0] for r in ratios):8.2f} {med(r[1] for r in ratios):9.2f} {med(r[2] for r in ratios):9.2f}")


if __name__ == "__main__":
    main()
