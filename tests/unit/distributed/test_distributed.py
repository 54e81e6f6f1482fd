"""Data-parallel training and collectives.

Single-process tests (always run): the collectives' kernels and VJP rules in a job
of one rank, the `data-parallel` pass (1/nranks scaling, placement, fusion), the
sampler, the launcher's command line.  Multi-rank tests start 2 ranks with the
launcher (`mpiexec` from the mpich wheel) and skip, saying why, when mpi4py or
mpiexec is missing (`pip install '.[distributed]'`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pullback.dialects import pd
from pullback.frontend import core, unique_name
from pullback.testing import check_vjp
from xdsl.context import Context

HERE = Path(__file__).parent
PROGRAMS = HERE / "distributed_programs.py"
sys.path.insert(0, str(HERE))
import distributed_programs as progs  # noqa: E402

# --------------------------------------------------------------- single process


def _run_op(op_cls, arrays, **props):  # type: ignore[no-untyped-def]
    from pullback.runtime.interpreter import evaluate

    vals = [pd.DataOp.make(f"x{i}", list(a.shape), str(a.dtype)) for i, a in enumerate(arrays)]
    op = op_cls.make(*[v.out for v in vals], **props)
    env = evaluate([op], {v.out: a for v, a in zip(vals, arrays)})
    return [env[r] for r in op.results]


def test_collectives_are_identity_in_a_lone_process() -> None:
    """One rank: sum/avg/max all-reduce, broadcast, gather and scatter return x."""
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    y = np.ones(3, np.float32)
    a, b = _run_op(pd.AllReduceOp, [x, x * 2])
    np.testing.assert_array_equal(a, x)
    np.testing.assert_array_equal(b, x * 2)
    (avg,) = _run_op(pd.AllReduceOp, [y], reduce_op="avg")
    np.testing.assert_array_equal(avg, y)
    assert avg.dtype == np.float32
    for cls, props in [
        (pd.BroadcastOp, {"root": 0}),
        (pd.AllGatherOp, {"nranks": 1}),
        (pd.ReduceScatterOp, {"nranks": 1}),
        (pd.BarrierOp, {}),
    ]:
        (out,) = _run_op(cls, [x], **props)
        np.testing.assert_array_equal(out, x)


def test_collective_errors_name_the_op() -> None:
    """A program built for 2 ranks run by 1, and a root outside the job."""
    from pullback.runtime.communicator import DistributedError

    x = np.ones((2, 3))
    with pytest.raises(DistributedError, match=r"pd.allgather: the program was built for nranks=2 but the job has 1"):
        _run_op(pd.AllGatherOp, [x], nranks=2)
    with pytest.raises(DistributedError, match=r"pd.broadcast: root 3 is not a rank of this job of 1"):
        _run_op(pd.BroadcastOp, [x], root=3)


@pytest.mark.parametrize(
    "op_cls, props",
    [
        (pd.AllReduceOp, {"reduce_op": "sum"}),
        (pd.AllReduceOp, {"reduce_op": "avg"}),
        (pd.AllGatherOp, {"nranks": 1}),
        (pd.ReduceScatterOp, {"nranks": 1}),
        (pd.BarrierOp, {}),
    ],
)
def test_vjp_of_collectives_single_rank(op_cls, props) -> None:  # type: ignore[no-untyped-def]
    """Finite differences (float64) in a job of one rank; the two-rank gradient
    is checked against its known value in the multi-rank test."""
    rng = np.random.RandomState(0)
    check_vjp(op_cls, [rng.randn(2, 3)], props=props, order=2)


def test_allreduce_max_has_no_gradient() -> None:
    """Differentiating through a max all-reduce is an error naming it."""
    from pullback.passes.autodiff import AutodiffError, differentiate
    from xdsl.dialects.builtin import ModuleOp

    x = pd.DataOp.make("x", [3], "float64")
    m = pd.AllReduceOp.make(x.out, reduce_op="max")
    loss = pd.MeanOp.make(m.results[0])
    bw = pd.BackwardOp.make([loss.out], [x.out])
    ModuleOp([x, m, loss, bw])
    with pytest.raises(AutodiffError, match="'pd.allreduce' with reduce_op 'max' has no gradient"):
        differentiate(bw)


def _static_mlp(seed: int = 1):  # type: ignore[no-untyped-def]
    import pullback as paddle

    main, startup, loss = progs.build_static(paddle, None, seed)
    with paddle.static.program_guard(main, startup):
        opt = paddle.optimizer.SGD(learning_rate=progs.LR)
        _, params_grads = opt.minimize(loss)
    return main, startup, loss, params_grads


@pytest.fixture
def static_mode():  # type: ignore[no-untyped-def]
    core.enable_static()
    with unique_name.guard():
        yield
    core.disable_static()


def test_data_parallel_pass_scales_and_places(static_mode) -> None:  # type: ignore[no-untyped-def]
    """On one rank with nranks=2, gradients are exactly half the plain ones (the
    all-reduce is the identity, the loss gradient is scaled by 1/2); fused or not,
    every parameter gradient passes through one all-reduce."""
    import pullback as paddle
    from pullback.passes.data_parallel import DataParallelPass

    main, startup, _loss, params_grads = _static_mlp()
    x, y = progs.dataset(1)
    feed = {"x": x[:4], "y": y[:4]}
    fetch = [g for _, g in params_grads]
    results = {}
    for label, passes in [
        ("plain", []),
        ("dp", [DataParallelPass(nranks=2)]),
        ("fused", [DataParallelPass(nranks=2, fuse_mb=1)]),
    ]:
        main.passes[:] = passes
        main._bump()
        scope = paddle.static.Scope()
        exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        with paddle.static.scope_guard(scope):
            exe.run(startup)
            results[label] = exe.run(main, feed=feed, fetch_list=fetch)
    for plain, dp, fused in zip(results["plain"], results["dp"], results["fused"]):
        np.testing.assert_allclose(dp, plain / 2, rtol=1e-12)
        np.testing.assert_allclose(fused, plain / 2, rtol=1e-12)

    module = main.module.clone()
    DataParallelPass(nranks=2).apply(Context(), module)
    reduces = [o for o in module.walk() if isinstance(o, pd.AllReduceOp)]
    assert len(reduces) == len(params_grads)
    for op in reduces:  # right after the op producing the gradient
        assert op.prev_op is op.operands[0].owner
    module = main.module.clone()
    DataParallelPass(nranks=2, fuse_mb=1).apply(Context(), module)
    (fused_op,) = [o for o in module.walk() if isinstance(o, pd.AllReduceOp)]
    assert len(fused_op.operands) == len(params_grads)


def test_fleet_minimize_attaches_the_pass(static_mode) -> None:  # type: ignore[no-untyped-def]
    """The user's programs stay as built; the programs the executor runs all-reduce
    the gradients (main) and broadcast the initial parameters (start-up)."""
    import pullback as paddle
    from pullback.distributed import fleet

    fleet.init(is_collective=True)
    main, startup, loss = progs.build_static(paddle, None, 1)
    with paddle.static.program_guard(main, startup):
        fleet.distributed_optimizer(paddle.optimizer.SGD(learning_rate=0.1)).minimize(loss)
    assert "pd.allreduce" not in str(main) and "pd.broadcast" not in str(startup)
    assert fleet.main_program_with_collectives(main).count("pd.allreduce") == 1  # fused: 32 MB
    assert fleet.main_program_with_collectives(startup).count("pd.broadcast") == 2  # the weights


def test_gradient_buckets_respect_size_and_dtype() -> None:
    """Buckets close once they reach the limit and never mix dtypes."""
    from pullback.passes.data_parallel import gradient_buckets

    vals = [
        pd.DataOp.make(f"g{i}", shape, dt).out
        for i, (shape, dt) in enumerate(
            [([256, 1024], "float32"), ([8], "float32"), ([4], "float64"), ([256, 1024], "float32")]
        )
    ]
    buckets = gradient_buckets(vals, 1 << 20)  # 1 MiB: the 1 MiB gradients close buckets
    assert [[vals.index(v) for v in b] for b in buckets] == [[0], [1, 3], [2]]
    assert gradient_buckets(vals, 0) == [[v] for v in vals]


def test_sampler_shards_without_overlap() -> None:
    """Every rank's batches together cover the padded dataset exactly once, and
    step k's rank batches concatenated are consecutive samples."""
    import pullback.distributed as dist

    n, bs, ranks = 21, 4, 3
    shards = [list(dist.DistributedBatchSampler(list(range(n)), bs, num_replicas=ranks, rank=r)) for r in range(ranks)]
    flat = [i for s in shards for b in s for i in b]
    per_rank = -(-n // ranks)
    assert len(flat) == per_rank * ranks
    assert sorted(flat) == sorted(list(range(n)) + list(range(per_rank * ranks - n)))
    assert shards[0][0] + shards[1][0] + shards[2][0] == list(range(12))
    assert len(dist.DistributedBatchSampler(list(range(n)), bs, num_replicas=ranks, rank=0)) == len(shards[0])
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        dist.DistributedBatchSampler(list(range(n)), 0)


def test_launcher_command_and_errors() -> None:
    """`--nproc_per_node` and `--ips` become mpiexec's -n / -hosts -ppn."""
    from pullback.distributed.launch import LaunchError, build_command, parse_args

    cmd = build_command(parse_args(["--nproc_per_node", "2", "train.py", "--lr", "1"]), "mpiexec")
    assert cmd[:3] == ["mpiexec", "-n", "2"]
    assert cmd[-4:] == ["mpi4py", "train.py", "--lr", "1"]
    cmd = build_command(parse_args(["--nproc_per_node", "4", "--ips", "a,b", "t.py"]), "mpiexec")
    assert cmd[1:7] == ["-hosts", "a,b", "-ppn", "4", "-n", "8"]
    with pytest.raises(LaunchError, match="--nproc_per_node must be >= 1"):
        build_command(parse_args(["--nproc_per_node", "0", "t.py"]), "mpiexec")


def test_dataparallel_single_process_is_plain_training(dynamic_mode) -> None:  # type: ignore[no-untyped-def]
    """With one rank, DataParallel changes nothing."""
    import pullback as paddle

    x, y = progs.dataset(1)
    batches = [(x[i : i + 4], y[i : i + 4]) for i in range(0, len(x), 4)]
    plain = progs.train_eager(paddle, batches, progs.init_weights())
    wrapped = progs.train_eager(paddle, batches, progs.init_weights(), wrap=paddle.DataParallel)
    for a, b in zip(plain, wrapped):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------- two ranks


def _mpi_ready() -> str | None:
    """Why multi-rank tests cannot run here, or None."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install '.[distributed]')"
    from pullback.distributed.launch import LaunchError, find_mpiexec

    try:
        find_mpiexec()
    except LaunchError:
        return "mpiexec is not installed (pip install '.[distributed]')"
    return None


needs_mpi = pytest.mark.skipif(_mpi_ready() is not None, reason=str(_mpi_ready()))

NRANKS = 2


def _launch(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PYTEST_XDIST"))}
    return subprocess.run(
        [sys.executable, "-m", "pullback.distributed.launch", "--nproc_per_node", str(NRANKS), *args],
        check=False, capture_output=True, text=True, timeout=timeout, env=env,
    )


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, np.ndarray]]:
    """Run `distributed_programs.py train` on 2 ranks once; each rank's results."""
    out = tmp_path_factory.mktemp("dist")
    proc = _launch(str(PROGRAMS), str(out), "train")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [dict(np.load(out / f"rank{r}.npz")) for r in range(NRANKS)]


@needs_mpi
def test_collectives_match_numpy(two_ranks) -> None:  # type: ignore[no-untyped-def]
    """Each collective on 2 ranks against numpy's formula."""
    base = np.arange(6, dtype=np.float64).reshape(2, 3)
    ranks = range(NRANKS)
    for r, res in enumerate(two_ranks):
        assert int(res["rank"]) == r and int(res["nranks"]) == NRANKS
        np.testing.assert_array_equal(res["allreduce_sum"], sum(base + k for k in ranks))
        np.testing.assert_array_equal(res["allreduce_max"], np.max([base * (k + 1) for k in ranks], axis=0))
        np.testing.assert_allclose(res["allreduce_avg"], np.mean([base + k for k in ranks], axis=0))
        np.testing.assert_array_equal(res["broadcast"], np.full(3, float(NRANKS - 1)))
        np.testing.assert_array_equal(res["allgather"], np.stack([base[:1] + 10 * k for k in ranks]))
        np.testing.assert_array_equal(res["reduce_scatter"], sum(base + r + 10 * k for k in ranks))
        # d/dx of sum_k (k+1) * sum(allreduce(x)) on rank r: sum_k (k+1), everywhere
        np.testing.assert_array_equal(res["allreduce_grad"], np.full((2, 3), sum(k + 1 for k in ranks)))
        np.testing.assert_array_equal(res["static_allreduce_x2"], 2 * sum(base + k for k in ranks))
        # gathered after the in-place all-reduce: every rank holds the same sum
        np.testing.assert_array_equal(res["static_allgather"], np.concatenate([sum(base + k for k in ranks)] * NRANKS))
        want = sum(base * (k + 1) for k in ranks) if r == 0 else np.zeros_like(base)
        np.testing.assert_array_equal(res["reduce"], want)
        want = np.full((2, 3), float(sum(k + 1 for k in ranks)) if r == 0 else 0.0)
        np.testing.assert_array_equal(res["broadcast_grad"], want)
        assert "pd.allreduce" in str(res["static_program_text"])


@needs_mpi
def test_sampler_on_two_ranks(two_ranks) -> None:  # type: ignore[no-untyped-def]
    """The ranks' batches are disjoint and together cover the dataset."""
    a, b = (res["sampler_indices"] for res in two_ranks)
    assert not set(a.ravel()) & set(b.ravel())
    assert sorted(np.concatenate([a.ravel(), b.ravel()])) == list(range(a.size + b.size))


@needs_mpi
def test_eager_data_parallel_equals_full_batch(two_ranks, dynamic_mode) -> None:  # type: ignore[no-untyped-def]
    """paddle.DataParallel on split batches (rank 1 starting from other weights)
    ends where one process training on the full batches ends (float64)."""
    ref = progs.reference_eager(NRANKS)
    for res in two_ranks:
        for i, want in enumerate(ref):
            np.testing.assert_allclose(res[f"eager_p{i}"], want, rtol=1e-10, atol=1e-12)


@needs_mpi
@pytest.mark.parametrize("backend", ["compiled", "interpreter"])
def test_static_fleet_equals_full_batch(two_ranks, backend) -> None:  # type: ignore[no-untyped-def]
    """fleet.distributed_optimizer: parameters broadcast from rank 0 at start-up
    (rank 1's own seed is overridden), then the same trajectory as one process on
    the full batches, natively (MPI called from compiled code, no fallback) and on
    the interpreter."""
    with unique_name.guard():
        init, final = progs.reference_static(NRANKS)
    for res in two_ranks:
        for name, want in init.items():
            np.testing.assert_array_equal(res[f"static_init_{backend}:{name}"], want)
        for name, want in final.items():
            np.testing.assert_allclose(res[f"static_final_{backend}:{name}"], want, rtol=1e-10, atol=1e-12)
        if backend == "compiled":
            fallbacks = [w for w in res["warnings_compiled"] if "pd.allreduce" in str(w)]
            assert not fallbacks, fallbacks


@needs_mpi
def test_failing_rank_aborts_the_job(tmp_path: Path) -> None:
    """Rank 1 raises while rank 0 waits in an all-reduce: the job ends (no hang)
    with a failure status and rank 1's message."""
    proc = _launch(str(PROGRAMS), str(tmp_path), "fail", timeout=120)
    assert proc.returncode != 0
    assert "rank 1 fails on purpose" in proc.stderr + proc.stdout


@needs_mpi
def test_collective_timeout_aborts_the_job(tmp_path: Path) -> None:
    """init_parallel_env(timeout=1): rank 0 stops waiting for a late rank 1 with an
    error naming the collective and the timeout, and the job is aborted."""
    proc = _launch(str(PROGRAMS), str(tmp_path), "timeout", timeout=120)
    assert proc.returncode != 0
    assert "pd.allreduce(sum): rank 0 waited more than 1 s" in proc.stderr + proc.stdout


@needs_mpi
def test_spawn_runs_a_function_on_new_ranks(tmp_path: Path) -> None:
    """spawn(func, args, nprocs=2): both ranks ran func and met in its all-reduce."""
    import pullback.distributed as dist

    ctx = dist.spawn(progs.spawn_target, args=(str(tmp_path), 1.5), nprocs=NRANKS)
    assert ctx.proc.returncode == 0
    for r in range(NRANKS):
        np.testing.assert_array_equal(np.load(tmp_path / f"spawn{r}.npy"), np.full(2, 1.5 * NRANKS))


def test_launcher_without_mpi4py_says_how_to_install(tmp_path: Path) -> None:
    """A Python that cannot import mpi4py gets the install hint, exit status 2."""
    blocker = tmp_path / "mpi4py.py"
    blocker.write_text("raise ImportError('blocked for the test')\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.run(
        [sys.executable, "-m", "pullback.distributed.launch", "--nproc_per_node", "2", "t.py"],
        check=False, capture_output=True, text=True, env=env, timeout=60,
    )
    assert proc.returncode == 2
    assert "pip install 'pullback[distributed]'" in proc.stderr


def test_mpiexec_lookup_prefers_the_wheel() -> None:
    """The launcher's mpiexec is the one next to this Python when there is one."""
    from pullback.distributed.launch import LaunchError, find_mpiexec

    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    try:
        found = find_mpiexec()
    except LaunchError as e:
        assert "pip install 'pullback[distributed]'" in str(e)
        return
    assert found == here or found == shutil.which("mpiexec")
