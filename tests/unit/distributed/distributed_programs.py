"""Programs the multi-rank tests (`test_distributed.py`) run on every rank, started
with `python -m pullback.distributed.launch --nproc_per_node N` or `mpiexec -n N`.

    python distributed_programs.py OUT_DIR train   # collectives, eager and static training
    python distributed_programs.py OUT_DIR fail    # rank 1 raises; the job must abort
    python distributed_programs.py OUT_DIR MODE    # the fault modes below (run_* functions)

`train` writes `OUT_DIR/rank<r>.npz` with what each rank computed; the test compares
it with numpy and with single-process training on the full batch
(`reference_eager`, `reference_static` below, which the test runs itself).
"""

from __future__ import annotations

import sys

import numpy as np

STEPS = 3
LOCAL_BATCH = 4
LR = 0.1


def dataset(nranks: int) -> tuple[np.ndarray, np.ndarray]:
    """`STEPS` full batches of `LOCAL_BATCH * nranks` samples (float64)."""
    rng = np.random.RandomState(7)
    n = STEPS * LOCAL_BATCH * nranks
    x = rng.uniform(-1, 1, (n, 4))
    y = np.sin(x.sum(axis=1, keepdims=True))
    return x, y


def init_weights() -> dict[str, np.ndarray]:
    """The MLP's starting parameters (the same on every rank and in the reference)."""
    rng = np.random.RandomState(3)
    return {
        "w1": rng.uniform(-0.5, 0.5, (4, 8)),
        "b1": rng.uniform(-0.1, 0.1, (8,)),
        "w2": rng.uniform(-0.5, 0.5, (8, 1)),
        "b2": np.zeros((1,)),
    }


def _eager_model(paddle, weights):  # type: ignore[no-untyped-def]
    """A two-layer tanh MLP (float64) holding `weights`."""
    l1 = paddle.nn.Linear(4, 8)
    l2 = paddle.nn.Linear(8, 1)
    model = paddle.nn.Sequential(l1, paddle.nn.Tanh(), l2)
    for p, key in zip([l1.weight, l1.bias, l2.weight, l2.bias], ["w1", "b1", "w2", "b2"]):
        p._data = np.array(weights[key], dtype=np.float64)
    return model, [l1.weight, l1.bias, l2.weight, l2.bias]


def train_eager(paddle, batches, weights, wrap=None):  # type: ignore[no-untyped-def]
    """SGD on the MLP over `batches`; returns the final parameters."""
    model, params = _eager_model(paddle, weights)
    if wrap is not None:
        model = wrap(model)
    opt = paddle.optimizer.SGD(learning_rate=LR, parameters=model.parameters())
    for x, y in batches:
        out = model(paddle.to_tensor(x))
        loss = paddle.mean((out - paddle.to_tensor(y)) ** 2)
        loss.backward()
        opt.step()
        opt.clear_grad()
    return [p.numpy() for p in params]


def build_static(paddle, weights, seed):  # type: ignore[no-untyped-def]
    """The MLP as a static program pair; returns (main, startup, loss, param names)."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    startup.random_seed = seed
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 4], "float64")
        y = paddle.static.data("y", [None, 1], "float64")
        h = paddle.static.nn.fc(x, 8, activation="tanh")
        out = paddle.static.nn.fc(h, 1)
        loss = paddle.mean((out - y) ** 2)
    return main, startup, loss


def reference_eager(nranks: int) -> list[np.ndarray]:
    """Single-process eager training on the full batches."""
    import pullback as paddle

    x, y = dataset(nranks)
    full = LOCAL_BATCH * nranks
    batches = [(x[i : i + full], y[i : i + full]) for i in range(0, len(x), full)]
    return train_eager(paddle, batches, init_weights())


def static_train(paddle, nranks_batches, seed, fleet_opt=None, backend=None):  # type: ignore[no-untyped-def]
    """Train the static MLP; `fleet_opt` wraps the optimizer (data parallel);
    `backend`: the executor's (None: the default, native code)."""
    paddle.enable_static()
    main, startup, loss = build_static(paddle, None, seed)
    with paddle.static.program_guard(main, startup):
        opt = paddle.optimizer.SGD(learning_rate=LR)
        if fleet_opt is not None:
            opt = fleet_opt(opt)
        opt.minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        init = {p.name: np.array(scope.find_var(p.name).get_tensor()) for p in main.all_parameters()}
        for x, y in nranks_batches:
            exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss])
        final = {p.name: np.array(scope.find_var(p.name).get_tensor()) for p in main.all_parameters()}
    paddle.disable_static()
    return init, final


def reference_static(nranks: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Single-process static training on the full batches (start-up seed 1)."""
    import pullback as paddle

    x, y = dataset(nranks)
    full = LOCAL_BATCH * nranks
    batches = [(x[i : i + full], y[i : i + full]) for i in range(0, len(x), full)]
    return static_train(paddle, batches, seed=1)


def run_train(out_dir: str) -> None:
    """Every rank: collectives against numpy, then eager and static data-parallel
    training on this rank's shard; results saved for the test."""
    import pullback as paddle
    import pullback.distributed as dist
    from pullback.distributed import fleet

    dist.init_parallel_env()
    rank, n = dist.get_rank(), dist.get_world_size()
    res: dict[str, np.ndarray] = {"rank": np.array(rank), "nranks": np.array(n)}

    # -- collectives, eager ----------------------------------------------------
    base = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = paddle.to_tensor(base + rank)
    dist.all_reduce(t)
    res["allreduce_sum"] = t.numpy()
    t = paddle.to_tensor(base * (rank + 1))
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    res["allreduce_max"] = t.numpy()
    t = paddle.to_tensor(base + rank)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    res["allreduce_avg"] = t.numpy()
    t = paddle.to_tensor(np.full([3], float(rank)))
    dist.broadcast(t, src=n - 1)
    res["broadcast"] = t.numpy()
    parts: list = []
    dist.all_gather(parts, paddle.to_tensor(base[:1] + 10 * rank))
    res["allgather"] = np.stack([p.numpy() for p in parts])
    out = paddle.to_tensor(np.zeros([2, 3]))
    dist.reduce_scatter(out, [paddle.to_tensor(base + r + 10 * rank) for r in range(n)])
    res["reduce_scatter"] = out.numpy()
    # Gradient through an all-reduce: d/dx sum_k sum(allreduce(x)_k * c_k) = sum_k c_k.
    x = paddle.to_tensor(base, stop_gradient=False)
    y = paddle.to_tensor(base)
    dist.all_reduce(y)  # y is not x; use the functional path for the gradient
    from pullback.frontend.ops import distributed as dops

    (s,) = dops.allreduce([x], "sum")
    (s * float(rank + 1)).sum().backward()
    res["allreduce_grad"] = x.grad.numpy()
    t = paddle.to_tensor(base * (rank + 1))
    dist.reduce(t, dst=0)
    res["reduce"] = t.numpy()
    # d/dx of sum_k (k+1) * sum(broadcast(x from 0)_k): sum_k (k+1) on rank 0, 0 elsewhere.
    x = paddle.to_tensor(base, stop_gradient=False)
    (dops.broadcast(x, 0) * float(rank + 1)).sum().backward()
    res["broadcast_grad"] = x.grad.numpy()
    dist.barrier()

    # -- collectives, static ---------------------------------------------------
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        v = paddle.static.data("v", [2, 3], "float64")
        dist.all_reduce(v)
        w = v * 2.0
        dist.barrier()
        parts = []
        dist.all_gather(parts, v)
        gathered = paddle.concat(parts, axis=0)
    exe = paddle.static.Executor(paddle.CPUPlace())
    static_sum, static_gather = exe.run(main, feed={"v": base + rank}, fetch_list=[w, gathered])
    res["static_allreduce_x2"] = static_sum
    res["static_allgather"] = static_gather
    res["static_program_text"] = np.array(str(main))
    paddle.disable_static()

    # -- sampler -----------------------------------------------------------------
    xs, ys = dataset(n)
    sampler = dist.DistributedBatchSampler(list(range(len(xs))), batch_size=LOCAL_BATCH)
    local = list(sampler)
    res["sampler_indices"] = np.array(local)

    # -- eager data parallel ---------------------------------------------------------
    weights = init_weights()
    if rank != 0:  # DataParallel must broadcast rank 0's parameters
        weights = {k: v + 1.0 for k, v in weights.items()}
    batches = [(xs[idx], ys[idx]) for idx in local]
    final = train_eager(paddle, batches, weights, wrap=paddle.DataParallel)
    for i, p in enumerate(final):
        res[f"eager_p{i}"] = p

    # -- static data parallel (fleet) -----------------------------------------------
    fleet.init(is_collective=True)
    strategy = fleet.DistributedStrategy()
    strategy.fuse_grad_size_in_MB = 1
    import warnings

    for backend in ("compiled", "interpreter"):
        with warnings.catch_warnings(record=True) as caught, paddle.utils.unique_name.guard():
            warnings.simplefilter("always")
            init, final_s = static_train(
                paddle, batches, seed=1 + rank,  # rank 1 starts elsewhere: the broadcast must fix it
                fleet_opt=lambda o: fleet.distributed_optimizer(o, strategy),
                backend=backend,
            )
        for k, v in init.items():
            res[f"static_init_{backend}:{k}"] = v
        for k, v in final_s.items():
            res[f"static_final_{backend}:{k}"] = v
        res[f"warnings_{backend}"] = np.array([str(w.message) for w in caught] or [""])
    np.savez(f"{out_dir}/rank{rank}.npz", **res)


def spawn_target(out_dir: str, scale: float) -> None:
    """Run by `paddle.distributed.spawn`: all-reduce `scale` and save the result."""
    import pullback as paddle
    import pullback.distributed as dist

    dist.init_parallel_env()
    t = paddle.to_tensor(np.full([2], scale))
    dist.all_reduce(t)
    np.save(f"{out_dir}/spawn{dist.get_rank()}.npy", t.numpy())


def spawn_sleeper(out_dir: str) -> None:
    """Run by `paddle.distributed.spawn` in the signal test: write the pid, sleep."""
    run_sleep(out_dir)


def spawn_parent(out_dir: str) -> None:
    """A program that spawns 2 sleeping ranks and joins them (signalled meanwhile)."""
    import pullback.distributed as dist

    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import distributed_programs as progs

    dist.spawn(progs.spawn_sleeper, args=(out_dir,), nprocs=2)


def run_fail() -> None:
    """Rank 1 raises before a collective; rank 0 waits in it.  The job must end
    (abort), not hang."""
    import pullback as paddle
    import pullback.distributed as dist

    dist.init_parallel_env()
    if dist.get_rank() == 1:
        raise ValueError("rank 1 fails on purpose")
    t = paddle.to_tensor(np.ones([2]))
    dist.all_reduce(t)


def run_timeout() -> None:
    """Rank 1 is late to an all-reduce; rank 0 gives up after 1 s and the job ends."""
    import time

    import pullback as paddle
    import pullback.distributed as dist

    dist.init_parallel_env(timeout=1.0)
    if dist.get_rank() == 1:
        time.sleep(6)
    t = paddle.to_tensor(np.ones([2]))
    dist.all_reduce(t)


def run_mismatch(out_dir: str) -> None:
    """Every collective called with tensors that differ between the ranks (and
    collectives that differ): each must raise DistributedError on every rank,
    before any payload moves, so the job goes on to the next case.  The messages
    are saved; then a clean all-reduce shows the ranks are still in step."""
    import json
    import warnings

    import pullback as paddle
    import pullback.distributed as dist
    from pullback.runtime.communicator import DistributedError

    dist.init_parallel_env(timeout=60)
    rank = dist.get_rank()
    t = paddle.to_tensor
    cases = {
        "all_reduce": lambda: dist.all_reduce(t(np.ones([3 if rank == 0 else 5], np.float32))),
        "broadcast": lambda: dist.broadcast(t(np.ones([2], np.float32 if rank == 0 else np.float64)), src=0),
        "reduce": lambda: dist.reduce(t(np.ones([2, 2])), dst=rank),
        "all_gather": lambda: dist.all_gather([], t(np.ones([1, 2 + rank]))),
        "reduce_scatter": lambda: dist.reduce_scatter(
            t(np.zeros([1 + rank])), [t(np.ones([1 + rank])) for _ in range(dist.get_world_size())]),
        "skipped": lambda: dist.all_reduce(t(np.ones([2]))) if rank == 0 else dist.barrier(),
    }
    messages = {}
    for name, call in cases.items():
        try:
            call()
        except DistributedError as e:
            messages[name] = str(e)
    # A compiled program, checked on its first run: rank 1 feeds another shape.
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        v = paddle.static.data("v", [None], "float32")
        dist.all_reduce(v)
        w = v * 2.0
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exe.run(main, feed={"v": np.ones([3 + 2 * rank], np.float32)}, fetch_list=[w])
        except DistributedError as e:
            messages["native"] = str(e)
        (after,) = exe.run(main, feed={"v": np.ones([3], np.float32)}, fetch_list=[w])
    paddle.disable_static()
    messages["warnings"] = [str(c.message) for c in caught]
    ok = t(np.ones([2]))
    dist.all_reduce(ok)
    messages["after"] = [ok.numpy().tolist(), after.tolist()]
    with open(f"{out_dir}/mismatch{rank}.json", "w") as f:
        json.dump(messages, f)


def run_uneven() -> None:
    """Rank 1 takes one step fewer and ends; rank 0 waits in its last all-reduce
    until the 2 s timeout, then the job is aborted naming rank 1."""
    import pullback as paddle
    import pullback.distributed as dist

    dist.init_parallel_env(timeout=2.0)
    for _ in range(3 if dist.get_rank() == 0 else 2):
        t = paddle.to_tensor(np.ones([3]))
        dist.all_reduce(t)
    print(f"rank {dist.get_rank()} finished its steps", flush=True)


def run_native_stall() -> None:
    """A compiled data-parallel step (native all-reduce): rank 1 stops after the
    first run (checked) and sleeps, so rank 0's second run (trusted) waits in
    native code until the 2 s timeout aborts the job."""
    import time

    import pullback as paddle
    import pullback.distributed as dist

    dist.init_parallel_env(timeout=2.0)
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        v = paddle.static.data("v", [3], "float32")
        dist.all_reduce(v)
        w = v * 2.0
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
    for _ in range(2 if dist.get_rank() == 0 else 1):
        exe.run(main, feed={"v": np.ones([3], np.float32)}, fetch_list=[w])
    if dist.get_rank() == 1:
        time.sleep(60)
    print(f"rank {dist.get_rank()} passed its steps", flush=True)


def run_exit3() -> None:
    """Rank 1 prints to stdout and stderr (not flushed) and calls sys.exit(3)
    while rank 0 waits in an all-reduce: the job's status must be 3 and both
    lines must reach the launcher's output."""
    import pullback as paddle
    import pullback.distributed as dist

    dist.init_parallel_env()
    if dist.get_rank() == 1:
        print("rank 1 stdout line before exit")
        sys.stderr.write("rank 1 stderr line before exit\n")
        sys.exit(3)
    t = paddle.to_tensor(np.ones([2]))
    dist.all_reduce(t)


def run_sleep(out_dir: str) -> None:
    """Each rank writes its pid and sleeps: the launcher is signalled meanwhile."""
    import os
    import time

    import pullback.distributed as dist

    dist.init_parallel_env()
    with open(f"{out_dir}/pid{dist.get_rank()}", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)


if __name__ == "__main__":
    mode, out = sys.argv[2], sys.argv[1]
    if mode == "timeout":
        run_timeout()
    elif mode == "train":
        run_train(out)
    elif mode == "fail":
        run_fail()
    elif mode in ("mismatch", "sleep", "spawn_parent"):
        {"mismatch": run_mismatch, "sleep": run_sleep, "spawn_parent": spawn_parent}[mode](out)
    elif mode in ("uneven", "native_stall", "exit3"):
        {"uneven": run_uneven, "native_stall": run_native_stall, "exit3": run_exit3}[mode]()
    else:
        raise SystemExit(f"unknown mode {mode!r}")
