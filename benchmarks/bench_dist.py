"""Data-parallel MLP training on 1, 2 and 4 ranks (static program, fleet, native
code calling MPI), and the gradient all-reduce volume per step with and without
fusion.

    python -m pullback.benchmarks.bench_dist [--ranks 1,2,4] [--steps 20] [--batch 64]

The driver starts each job with `python -m pullback.distributed.launch`; rank 0 of
each job reports its timing as JSON.  Weak scaling: every rank trains on its own
batch of `--batch` samples, so N ranks process N times the samples per step;
efficiency = (samples/s with N ranks) / (N * samples/s with 1 rank).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

SIZES = (784, 512, 512, 10)


def build(paddle, fuse_mb: int, distributed: bool):  # type: ignore[no-untyped-def]
    """The MLP training program (softmax cross-entropy, SGD)."""
    from pullback.distributed import fleet

    main, startup = paddle.static.Program(), paddle.static.Program()
    startup.random_seed = 1
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, SIZES[0]], "float32")
        y = paddle.static.data("y", [None, 1], "int64")
        h = x
        for width in SIZES[1:-1]:
            h = paddle.static.nn.fc(h, width, activation="relu")
        logits = paddle.static.nn.fc(h, SIZES[-1])
        loss = paddle.mean(paddle.nn.functional.cross_entropy(logits, y))
        opt = paddle.optimizer.SGD(learning_rate=0.01)
        if distributed:
            strategy = fleet.DistributedStrategy()
            strategy.fuse_all_reduce_ops = fuse_mb > 0
            strategy.fuse_grad_size_in_MB = max(fuse_mb, 1)
            opt = fleet.distributed_optimizer(opt, strategy)
        opt.minimize(loss)
    return main, startup, loss


def allreduce_volume(main) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """(messages, payload bytes) of the gradient all-reduces one step sends, read
    from the program as the executor runs it."""
    from pullback.dialects import pd
    from xdsl.context import Context

    module = main.module.clone()
    for p in main.passes:
        p.apply(Context(), module)
    msgs = nbytes = 0
    for op in module.walk():
        if isinstance(op, pd.AllReduceOp):
            msgs += 1
            for v in op.operands:
                nbytes += int(np.prod(pd.shape_of(v.type))) * (4 if pd.elem_of(v.type) == pd.f32 else 8)
    return msgs, nbytes


def worker(steps: int, batch: int, fuse_mb: int) -> None:
    """One rank: train `steps` steps after 3 warm-ups; rank 0 prints JSON."""
    import pullback as paddle
    import pullback.distributed as dist
    from pullback.distributed import fleet

    dist.init_parallel_env()
    rank, n = dist.get_rank(), dist.get_world_size()
    fleet.init(is_collective=True)
    paddle.enable_static()
    main, startup, loss = build(paddle, fuse_mb, distributed=True)
    rng = np.random.RandomState(rank)
    x = rng.rand(batch, SIZES[0]).astype("float32")
    y = rng.randint(0, SIZES[-1], (batch, 1)).astype("int64")
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    for _ in range(3):
        exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss])
    fleet.barrier_worker()
    t0 = time.perf_counter()
    for _ in range(steps):
        exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss])
    fleet.barrier_worker()
    elapsed = time.perf_counter() - t0
    msgs, nbytes = allreduce_volume(main)
    if rank == 0:
        print("RESULT " + json.dumps({
            "nranks": n, "steps": steps, "batch": batch, "fuse_mb": fuse_mb,
            "seconds": elapsed, "samples_per_s": n * batch * steps / elapsed,
            "allreduce_msgs": msgs, "allreduce_bytes": nbytes,
        }))


def run_job(nranks: int, steps: int, batch: int, fuse_mb: int) -> dict[str, float]:
    """Start one job and return rank 0's report."""
    cmd = [
        sys.executable, "-m", "pullback.distributed.launch", "--nproc_per_node", str(nranks),
        __file__, "--worker", "--steps", str(steps), "--batch", str(batch),
        "--fuse-mb", str(fuse_mb),
    ]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"job of {nranks} ranks failed:\n{out.stdout}\n{out.stderr}")


def main() -> None:
    """Run the jobs and print the scaling and fusion tables (markdown)."""
    p = argparse.ArgumentParser()
    p.add_argument("--worker", action="store_true")
    p.add_argument("--ranks", default="1,2,4")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--fuse-mb", type=int, default=32)
    args = p.parse_args()
    if args.worker:
        worker(args.steps, args.batch, args.fuse_mb)
        return
    print(f"MLP {'-'.join(map(str, SIZES))}, float32, local batch {args.batch}, "
          f"{args.steps} steps, fuse {args.fuse_mb} MB, cpus {os.cpu_count()}")
    print("| ranks | samples/s | efficiency | all-reduce msgs/step | MB/step |")
    print("|---|---|---|---|---|")
    base = None
    for n in [int(r) for r in args.ranks.split(",")]:
        r = run_job(n, args.steps, args.batch, args.fuse_mb)
        base = base or r["samples_per_s"]
        eff = r["samples_per_s"] / (n * base)
        print(f"| {n} | {r['samples_per_s']:.0f} | {eff:.2f} | {r['allreduce_msgs']} | "
              f"{r['allreduce_bytes'] / 2**20:.2f} |")
    print()
    print("| ranks | fusion | all-reduce msgs/step | MB/step | samples/s |")
    print("|---|---|---|---|---|")
    for fuse in (0, args.fuse_mb):
        r = run_job(2, args.steps, args.batch, fuse)
        label = "none" if fuse == 0 else f"{fuse} MB buckets"
        print(f"| 2 | {label} | {r['allreduce_msgs']} | {r['allreduce_bytes'] / 2**20:.2f} | "
              f"{r['samples_per_s']:.0f} |")


if __name__ == "__main__":
    main()
