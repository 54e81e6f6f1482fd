"""Every table of benchmarks/RESULTS.md from one command (issue 26).

    python -m pullback.benchmarks.run_all [--quick] [--threads N] [--only NAME ...]
        [--write [PATH]] [--json PATH] [--paddle-python PATH] [--rounds R] [--no-pin]

Each workload runs in fresh worker processes (`--worker`, below) with the same thread
settings for every side: `OPENBLAS_NUM_THREADS`, `OMP_NUM_THREADS`, `MKL_NUM_THREADS`,
`PULLBACK_NUM_THREADS` and `PULLBACK_COMPILE_THREADS` = N, torch on N threads and one
inter-op thread, XLA's CPU client on one thread when N is 1 (`XLA_FLAGS`), Paddle's
`set_num_threads(N)`.  When the machine has N cores this process pins itself to the
first N (`os.sched_setaffinity`) and every worker inherits the mask: XLA keeps a second
thread busy whatever its flags say (`bench_cpu`), and only the mask makes one thread
against one thread a fact.

A step workload is measured twice: in-process (one worker runs all sides of this
interpreter in interleaved rounds of random order, `bench_cpu.interleaved_times`) and
in separate processes (ours and each peer in its own worker, alternating for R rounds,
each timing its own median over k steps after warm-up; the tables give the median of
the per-round ratios and their range).  Paddle runs in its own interpreter
(`--paddle-python`, `paddle_peer.py`), so only in separate processes.  A peer that is
not installed is a "skipped: X not installed" row.  Nothing here needs the network.

The Markdown goes to stdout; `--write` replaces the generated section of RESULTS.md
(`_results.py`), `--json` saves the raw results.  `--quick` is a pass of a few minutes:
fewer rounds and steps, every workload at its real size, ResNet-18 compiled once.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pullback.benchmarks import _results as R
from pullback.benchmarks._workloads import (
    EAGER_WORKLOADS,
    OURS,
    PADDLE_SIDES,
    SIDE_LABELS,
    STEP_SIDES,
    TINY_AD_SIZES,
    missing_peer,
    paddle_workload,
)

HERE = Path(__file__).resolve().parent
T = TypeVar("T")
RESULTS_MD = HERE / "RESULTS.md"
MARKER = "RUN_ALL_RESULT "
"""The prefix of a worker's result line (libraries may print other lines)."""

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "PULLBACK_NUM_THREADS", "PULLBACK_COMPILE_THREADS")
"""Set to the thread count in every worker's environment."""


@dataclass(frozen=True)
class StepSpec:
    """A step workload: its title, sides (`_workloads.STEP_SIDES`), and for (full,
    quick): steps timed per separate process, separate-process rounds, in-process
    interleaved rounds; `warmup` untimed calls (the first included) before timing."""

    title: str
    steps: tuple[int, int]
    rounds: tuple[int, int]
    inproc: tuple[int, int]
    warmup: int = 2


STEP_WORKLOADS: dict[str, StepSpec] = {
    "mlp": StepSpec("MLP train step 784-512-512-10, batch 128, SGD", (30, 10), (7, 2), (30, 10)),
    "resmlp": StepSpec("Residual MLP train step 784-256, 4 x (h + relu(h W + b)), -> 10, batch 128, SGD",
                       (30, 10), (5, 1), (30, 10)),
    "fanout": StepSpec("Fan-out chain fwd+bwd, 1M float32, 20 ops, h = f(h) + x every 4, loss = sum",
                       (20, 5), (5, 1), (20, 5)),
    "resnet18": StepSpec("ResNet-18 train step, batch 32 of 3x32x32, Momentum 0.9", (10, 3), (5, 1), (10, 3), 1),
    "lstm": StepSpec("LSTM train step (input 128, hidden 128), sequence 32, batch 32, MSE, AdamW",
                     (15, 5), (3, 1), (15, 5)),
    "transformer": StepSpec("Transformer encoder train step (2 layers, d_model 128, 4 heads, feed-forward 512), "
                            "sequence 64, batch 16, MSE, AdamW", (10, 3), (3, 1), (10, 3)),
    "eager-mlp": StepSpec("Eager MLP step with dropout (`nn` layers, 64-128-128-10, batch 32, MSE): "
                          "forward, backward, clear_grad", (300, 100), (5, 2), (300, 100)),
    # Issue 33's eager set (`--only eager`): the static tables' models run eagerly.
    "eager-lenet": StepSpec("Eager LeNet train step, batch 64 of 1x28x28, cross entropy, Adam", (30, 10), (3, 1),
                            (30, 10)),
    "eager-resnet18": StepSpec("Eager ResNet-18 train step, batch 32 of 3x32x32, Momentum 0.9", (8, 3), (3, 1),
                               (8, 3)),
    "eager-transformer": StepSpec("Eager Transformer encoder train step (2 layers, d_model 128, 4 heads, "
                                  "feed-forward 512), sequence 64, batch 16, MSE, AdamW", (10, 3), (3, 1), (10, 3)),
    "eager-lstm": StepSpec("Eager LSTM train step (input 128, hidden 128), sequence 32, batch 32, MSE, AdamW",
                           (15, 5), (3, 1), (15, 5)),
    "fit-lenet": StepSpec("`paddle.Model.fit`, dynamic against static mode: LeNet, batch 64 of 1x28x28, Adam "
                          "(per step; one epoch of 20 batches a call)", (5, 2), (3, 1), (5, 2)),
    "fit-mlp": StepSpec("`paddle.Model.fit`, dynamic against static mode: MLP 784-512-512-10, batch 64, Adam "
                        "(per step; one epoch of 20 batches a call)", (5, 2), (3, 1), (5, 2)),
}

AD_ROUNDS = (3, 1)
PADDLE_AD_SIZES: tuple[tuple[int, ...], tuple[int, ...]] = ((1000, 5000), (1000,))
"""Paddle's `append_backward` (PIR) grows quadratically (1,000 ops 0.6 s, 2,000 ops
2.5 s on the 2-vCPU guest): 10,000 ops would take minutes, so (full, quick) sizes."""
COMPILE_ROUNDS = {"compile-mlp": (5, 2), "compile-resnet18": (3, 1)}
COMPILE_TITLES = {"compile-mlp": "MLP 784-512-512-10 step, batch 128",
                  "compile-resnet18": "ResNet-18 step, batch 32 of 3x32x32"}

ORDER = [*STEP_WORKLOADS, "ad-build", "compile"]
"""Every table, in the order of the generated section (`--only` takes these names)."""

GROUPS = {"eager": list(EAGER_WORKLOADS)}
"""`--only` names that stand for several tables (`eager`: issue 33's eager set)."""


# ------------------------------------------------------------ environment


def xla_flags(threads: int) -> str:
    """XLA's CPU flags for `threads` threads (its Eigen pool off for one)."""
    if threads == 1:
        return "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    return f"intra_op_parallelism_threads={threads}"


def worker_env(threads: int, base: Mapping[str, str] | None = None, cache: bool = True) -> dict[str, str]:
    """A worker's environment: `base` (this process's) with every side's thread
    settings at `threads`, JAX on the CPU, and our default backend; `cache=False`
    turns the compile cache off (compile-time workloads)."""
    env = dict(os.environ if base is None else base)
    for var in THREAD_VARIABLES:
        env[var] = str(threads)
    env["RUN_ALL_THREADS"] = str(threads)  # torch.set_num_threads, Paddle's set_num_threads
    env["XLA_FLAGS"] = xla_flags(threads)
    env["JAX_PLATFORMS"] = "cpu"  # no probing for accelerators
    env["CPU_NUM"] = "1"  # Paddle's static executor: one CPU place, not data parallel
    env.pop("PULLBACK_BACKEND", None)  # our default backend (compiled), as a user gets it
    if not cache:
        env["PULLBACK_CACHE"] = "0"
    return env


def pin_cores(threads: int) -> list[int] | None:
    """The cores to pin to (the first `threads` this process may use), or None where
    there are fewer or the system cannot pin."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    cores = sorted(os.sched_getaffinity(0))
    return cores[:threads] if len(cores) >= threads else None


def machine() -> str:
    """`lscpu`'s model name, the CPU count, the OS and Python."""
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        model = next((line.split(":", 1)[1].strip() for line in out.splitlines()
                      if line.startswith("Model name:")), "")
    except (OSError, subprocess.SubprocessError):
        pass
    model = f"{model} (lscpu)" if model else (platform.processor() or platform.machine())
    return f"{model}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def revision() -> str:
    """This checkout's commit, `+changes` when the work tree differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True,
                              text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}{'+changes' if dirty else ''}" if head else "unknown"


def load() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def utc_now() -> str:
    """`2026-11-28 05:40 UTC`."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# ------------------------------------------------------------------ worker


def _os_threads() -> int | None:
    """Threads of this process now (Linux), whatever library started them."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def run_worker(workload: str, sides: Sequence[str], steps: int, warmup: int = 2, tiny: bool = False) -> dict[str, Any]:
    """Measure `sides` of `workload` in this process: one side, `steps` timed calls
    after `warmup`; several, `steps` interleaved rounds.  Value workloads (ad-build,
    compile-*) measure once (`steps`: `append_backward`'s repeats).  Returns the
    result `--worker` prints."""
    from pullback.benchmarks import _workloads as W

    out: dict[str, Any] = {"workload": workload, "pid": os.getpid(), "sides": {}}
    if hasattr(os, "sched_getaffinity"):
        out["cores"] = sorted(os.sched_getaffinity(0))
    threads = int(os.environ.get("RUN_ALL_THREADS", "1"))
    if workload not in STEP_SIDES:
        try:
            out["sides"]["ours"] = {"values": W.measure_values(workload, tiny, steps)}
        except Exception as e:  # noqa: BLE001 - reported in the table
            out["sides"]["ours"] = {"error": f"{type(e).__name__}: {e}"[:300]}
    else:
        if "torch" in sides and W.missing_peer("torch") is None:
            W.configure_torch(threads)
        out["sides"] = _time_sides(workload, sides, steps, warmup, tiny)
    out["threads"] = W.thread_report(list(sides))
    out["versions"] = W.version_report()
    out["os_threads"] = _os_threads()
    return out


def _time_sides(workload: str, sides: Sequence[str], steps: int, warmup: int, tiny: bool) -> dict[str, Any]:
    """Build and time each side (see `run_worker`)."""
    from pullback.benchmarks import _workloads as W
    from pullback.benchmarks.bench_cpu import interleaved_times

    results: dict[str, Any] = {}
    ready: dict[str, W.Prepared] = {}
    firsts: dict[str, list[float]] = {}
    for side in sides:
        try:
            prepared = W.prepare(workload, side, tiny)
            if workload in EAGER_WORKLOADS:
                # Issue 33 asks for the first three steps' latency (of a fresh process
                # in the separate-process rounds).
                firsts[side] = []
                for _ in range(3):
                    t = time.perf_counter()
                    prepared.step()
                    firsts[side].append((time.perf_counter() - t) / prepared.per_call)
                prepared.first_s = firsts[side][0]
                if prepared.settle is not None:
                    prepared.settle()
            elif prepared.first_s is None:
                t = time.perf_counter()
                prepared.step()
                prepared.first_s = time.perf_counter() - t
            ready[side] = prepared
        except W.SideSkipped as e:
            results[side] = {"skipped": str(e)}
        except Exception as e:  # noqa: BLE001 - reported in the table
            results[side] = {"error": f"{type(e).__name__}: {e}"[:300]}
    names = list(ready)
    try:
        # The first call is made: `warmup - 1` more untimed rounds.
        times = interleaved_times([ready[n].step for n in names], steps, max(0, warmup - 1))
    except Exception as e:  # noqa: BLE001 - one failing side spoils the interleaved rounds
        return results | {n: {"error": f"{type(e).__name__}: {e}"[:300]} for n in names}
    for name, ts in zip(names, times):
        per_call = ready[name].per_call
        results[name] = {"times_s": [t / per_call for t in ts], "first_s": ready[name].first_s,
                         "note": ready[name].note}
        if name in firsts:
            results[name]["first_steps_s"] = firsts[name]
    return results


def worker_main(argv: Sequence[str]) -> None:
    """`--worker WORKLOAD --sides a,b --steps K [--warmup W] [--tiny]`: print the result line."""
    ap = argparse.ArgumentParser(prog="run_all --worker")
    ap.add_argument("--worker", required=True)
    ap.add_argument("--sides", default="ours")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--tiny", action="store_true", help="small shapes (tests)")
    args = ap.parse_args(argv)
    out = run_worker(args.worker, args.sides.split(","), args.steps, args.warmup, args.tiny)
    print(MARKER + json.dumps(out), flush=True)


def parse_result(stdout: str) -> dict[str, Any] | None:
    """The result of a worker's output (its last result line), or None."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            result: dict[str, Any] = json.loads(line[len(MARKER):])
            return result
    return None


# ------------------------------------------------------------------ driver


@dataclass
class Settings:
    """How this run measures (from the command line)."""

    quick: bool = False
    threads: int = 1
    pin: bool = True
    paddle_python: str | None = None
    rounds: int | None = None
    tiny: bool = False
    timeout_s: float = 1800.0


class Runner:
    """Starts workers with the equal-thread environment and collects their results."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.workers = 0

    def pick(self, pair: tuple[T, T]) -> T:
        """The full or quick value of a (full, quick) pair."""
        return pair[1] if self.settings.quick else pair[0]

    def skip_reason(self, side: str) -> str | None:
        """Why `side` cannot run here (a missing library), else None."""
        if side in PADDLE_SIDES:
            if self.settings.paddle_python is None:
                return "Paddle not installed (none in this interpreter; give --paddle-python PATH)"
            if shutil.which(self.settings.paddle_python) is None:
                return f"Paddle not installed (no interpreter {self.settings.paddle_python})"
            return None
        missing = missing_peer(side)
        return None if missing is None else f"{missing} not installed"

    def spawn(self, cmd: list[str], cache: bool = True, env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Run one worker (`env`: variables added to its environment); its result, or
        `{"error": ...}` saying why there is none."""
        self.workers += 1
        t = time.perf_counter()
        try:
            proc = subprocess.run(cmd, env=worker_env(self.settings.threads, cache=cache) | dict(env or {}),
                                  capture_output=True,
                                  text=True, timeout=self.settings.timeout_s, cwd=HERE.parent)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {self.settings.timeout_s:.0f} s", "cmd": cmd}
        except OSError as e:  # the interpreter cannot be started
            return {"error": f"{type(e).__name__}: {e}", "cmd": cmd}
        result = parse_result(proc.stdout)
        if result is None:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            return {"error": f"exit {proc.returncode}: {tail[:300]}", "cmd": cmd}
        result["wall_s"] = time.perf_counter() - t
        return result

    def ours(self, workload: str, sides: Sequence[str], steps: int, warmup: int = 2,
             cache: bool = True, env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """A worker of this interpreter (ours, torch, jax)."""
        cmd = [sys.executable, "-m", "pullback.benchmarks.run_all", "--worker", workload,
               "--sides", ",".join(sides), "--steps", str(steps), "--warmup", str(warmup)]
        return self.spawn(cmd + (["--tiny"] if self.settings.tiny else []), cache, env)

    def paddle(self, workload: str, steps: int, warmup: int = 2, sizes: Sequence[int] = ()) -> dict[str, Any]:
        """A worker of Paddle's interpreter (`paddle_peer.py`)."""
        assert self.settings.paddle_python is not None
        cmd = [self.settings.paddle_python, str(HERE / "paddle_peer.py"), workload,
               "--steps", str(steps), "--warmup", str(warmup)]
        if sizes:
            cmd += ["--sizes", *map(str, sizes)]
        return self.spawn(cmd + (["--tiny"] if self.settings.tiny else []))

    def side(self, workload: str, side: str, steps: int, warmup: int,
             env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """One side of a step workload in its own worker (`env`: added to ours)."""
        if side in PADDLE_SIDES:
            result = self.paddle(paddle_workload(workload, side), steps, warmup)
            if side != "paddle" and "sides" in result:  # paddle_peer names its one side "paddle"
                result["sides"] = {side: result["sides"].get("paddle")}
            return result
        return self.ours(workload, [side], steps, warmup, env=env)


def log(message: str) -> None:
    """Progress, on stderr (the tables go to stdout)."""
    print(f"run_all: {message}", file=sys.stderr, flush=True)


def run_step_workload(runner: Runner, name: str) -> dict[str, Any]:
    """Both measurements of a step workload: the raw results."""
    spec = STEP_WORKLOADS[name]
    sides = STEP_SIDES[name]
    warmup, steps, inproc = spec.warmup, runner.pick(spec.steps), runner.pick(spec.inproc)
    raw: dict[str, Any] = {"name": name, "started": utc_now(), "load_before": load(), "skipped": {},
                           "inprocess": None, "separate": [], "steps": steps, "inproc_rounds": inproc,
                           "warmup": warmup}
    available = []
    for side in sides:
        reason = runner.skip_reason(side)
        if reason is None:
            available.append(side)
        else:
            raw["skipped"][side] = reason
    here = [s for s in available if s not in PADDLE_SIDES]
    if inproc > 0 and any(s in OURS for s in here) and any(s not in OURS for s in here):
        t = time.perf_counter()
        raw["inprocess"] = runner.ours(name, here, inproc, warmup)
        log(f"{name}: in-process {','.join(here)}, {inproc} rounds: {time.perf_counter() - t:.1f} s")
    rounds = runner.settings.rounds or runner.pick(spec.rounds)
    # Issue 33's eager set: our workers share a new disk cache of compiled code, so the
    # first round's starts cold and the later rounds' warm (their first steps say so).
    cache_dir = tempfile.mkdtemp(prefix=f"run_all_{name}_") if name in EAGER_WORKLOADS else None
    env = {"PULLBACK_CACHE_DIR": cache_dir} if cache_dir else None
    try:
        for r in range(rounds):
            # Reversed every other round, so that neither side always runs first.
            order = available if r % 2 == 0 else available[::-1]
            t = time.perf_counter()
            raw["separate"].append({side: runner.side(name, side, steps, warmup, env) for side in order})
            log(f"{name}: separate processes, round {r + 1}/{rounds}: {time.perf_counter() - t:.1f} s")
    finally:
        if cache_dir:
            shutil.rmtree(cache_dir, ignore_errors=True)
    raw["load_after"] = load()
    return raw


def run_ad_build(runner: Runner) -> dict[str, Any]:
    """`append_backward` on each chain, ours and Paddle's, in alternating processes."""
    repeats = 1 if runner.settings.quick else 3
    raw: dict[str, Any] = {"name": "ad-build", "started": utc_now(), "load_before": load(), "skipped": {},
                           "separate": [], "repeats": repeats, "quick": runner.settings.quick}
    paddle_skip = runner.skip_reason("paddle")
    if paddle_skip:
        raw["skipped"]["paddle"] = paddle_skip
    sizes = TINY_AD_SIZES if runner.settings.tiny else runner.pick(PADDLE_AD_SIZES)
    rounds = runner.settings.rounds or runner.pick(AD_ROUNDS)
    for r in range(rounds):
        one = {"ours": runner.ours("ad-build", ["ours"], repeats)}
        if not paddle_skip:
            # One build per size: Paddle's 5,000-op chain alone takes ~15 s.
            one["paddle"] = runner.paddle("ad-build", 1, sizes=sizes)
        raw["separate"].append(one)
        log(f"ad-build: round {r + 1}/{rounds}")
    raw["load_after"] = load()
    return raw


def run_compile(runner: Runner) -> dict[str, Any]:
    """Compile time of the MLP and ResNet-18 steps, each sample a fresh process with
    the disk cache off."""
    raw: dict[str, Any] = {"name": "compile", "started": utc_now(), "load_before": load(), "programs": {}}
    for program, pair in COMPILE_ROUNDS.items():
        n = runner.settings.rounds or runner.pick(pair)
        raw["programs"][program] = [runner.ours(program, ["ours"], 1, cache=False) for _ in range(n)]
        log(f"compile: {program}, {n} processes")
    raw["load_after"] = load()
    return raw


# ------------------------------------------------------------------ tables


@dataclass
class Context:
    """What every table states besides its own measurements."""

    command: str
    machine: str
    threads: int
    pinned: list[int] | None
    revision: str


def _workers(raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every worker result of a workload's raw results."""
    out = [raw["inprocess"]] if raw.get("inprocess") else []
    for one in raw.get("separate", []):
        out += list(one.values())
    for results in raw.get("programs", {}).values():
        out += results
    return [w for w in out if isinstance(w, dict)]


THREAD_NAMES = {"pullback": "pullback", "pullback compile": "pullback compile", "pullback BLAS": "pullback's BLAS",
                "openblas": "OpenBLAS",
                "mkl": "MKL", "blis": "BLIS", "torch": "PyTorch", "jax XLA_FLAGS": "JAX `XLA_FLAGS`",
                "paddle": "Paddle `set_num_threads`", "paddle OMP_NUM_THREADS": "Paddle `OMP_NUM_THREADS`"}


def _merged(workers: Sequence[Mapping[str, Any]], key: str) -> dict[str, list[str]]:
    """`key` ("threads" or "versions") of every worker: each entry's distinct values."""
    out: dict[str, list[str]] = {}
    for w in workers:
        for k, v in (w.get(key) or {}).items():
            if str(v) not in out.setdefault(k, []):
                out[k].append(str(v))
    return out


def facts(raw: Mapping[str, Any], ctx: Context, mode: str) -> list[tuple[str, str]]:
    """The lines above a table: command, date, machine and load, threads (as each
    worker reported them), pinning, versions."""
    workers = _workers(raw)
    threads = _merged(workers, "threads")
    thread_text = ", ".join(f"{THREAD_NAMES.get(k, k)} " + (f"`{v[0]}`" if k == "jax XLA_FLAGS" else "/".join(v))
                            for k, v in threads.items()) or "no worker reported"
    per_process: dict[str, list[int]] = {}
    for w in workers:
        sides = list(w.get("sides", {}))
        if w.get("os_threads"):
            who = SIDE_LABELS.get(sides[0], sides[0]) if len(sides) == 1 else "in-process worker"
            if raw["name"] not in STEP_WORKLOADS:  # the AD build and compiles run no step
                who = who.split()[0]
            per_process.setdefault(who, []).append(int(w["os_threads"]))
    if per_process:
        thread_text += "; OS threads per process: " + ", ".join(
            f"{who} {min(n)}" + (f"-{max(n)}" if max(n) > min(n) else "") for who, n in per_process.items())
    cores = {tuple(w["cores"]) for w in workers if w.get("cores") is not None}
    if ctx.pinned is not None:
        pinned = f"yes, every process to core{'s' if len(ctx.pinned) > 1 else ''} " \
                 f"{', '.join(map(str, ctx.pinned))} (`os.sched_setaffinity`)"
        if cores and cores != {tuple(ctx.pinned)}:
            pinned += f"; workers reported cores {sorted(cores)}"
    else:
        available = ", ".join(map(str, sorted(cores)[0])) if cores else "all"
        pinned = f"no (cores {available} available to each process)"
    versions = _merged(workers, "versions")
    return [
        ("Command", f"`{ctx.command}` ({raw['started']}, pullback {ctx.revision})"),
        ("Machine", f"{ctx.machine}; load average {raw['load_before']:.2f} before, {raw['load_after']:.2f} after"),
        ("Threads", f"{ctx.threads} asked of every side (the `*_NUM_THREADS` variables, torch's "
                    f"`set_num_threads`, `XLA_FLAGS`, Paddle's `set_num_threads`); ran: {thread_text}"),
        ("Pinned", pinned),
        ("Versions", ", ".join(f"{k} {'/'.join(v)}" for k, v in versions.items()) or "-"),
        ("Measured", mode),
    ]


def _side(worker: Mapping[str, Any] | None, side: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the side's result, why it has none) in a worker result."""
    if worker is None:
        return None, "not run"
    if "error" in worker and "sides" not in worker:
        return None, f"failed: {worker['error']}"
    result = worker.get("sides", {}).get(side)
    if result is None:
        return None, "not run"
    if "skipped" in result:
        return None, f"skipped: {result['skipped']}"
    if "error" in result:
        return None, f"failed: {result['error']}"
    return result, None


def _step_median(result: Mapping[str, Any]) -> float | None:
    """The median of a side's step times."""
    return R.median(result.get("times_s", []))


def step_table(raw: Mapping[str, Any], ctx: Context) -> R.Table:
    """The table of a step workload: a row per (our side, peer, measurement)."""
    name = raw["name"]
    spec = STEP_WORKLOADS[name]
    sides = STEP_SIDES[name]
    ours_sides = [s for s in sides if s in OURS]
    peers = [s for s in sides if s not in OURS]
    rows: list[list[str]] = []
    inproc = raw.get("inprocess")
    n_rounds = len(raw.get("separate", []))
    for o in ours_sides:
        for p in peers:
            label, peer = SIDE_LABELS[o], SIDE_LABELS[p]
            if p in raw.get("skipped", {}):
                rows.append([label, peer, "-", "-", f"skipped: {raw['skipped'][p]}", "-", "-", "-"])
                continue
            if inproc is not None and p not in PADDLE_SIDES:
                (ro, why_o), (rp, why_p) = _side(inproc, o), _side(inproc, p)
                mode = f"in-process, {len(ro['times_s']) if ro else 0} interleaved rounds"
                if ro is None or rp is None:
                    rows.append([label, peer, mode, fmt_cell(ro, why_o), fmt_cell(rp, why_p), "-", "-", "-"])
                else:
                    to, tp = _step_median(ro), _step_median(rp)
                    ratio = to / tp if to and tp else None
                    target = R.step_target(name, o, p, separate=False)
                    rows.append([label, peer, mode, R.fmt_seconds(to), R.fmt_seconds(tp), R.fmt_ratio(ratio), "-",
                                 target.check(ratio) if target else "-"])
            if n_rounds:
                rows.append(_separate_row(raw, name, o, p, label, peer))
        if n_rounds and all(p in raw.get("skipped", {}) for p in peers):
            # No peer ran (none installed): our own time still says something.
            times = [m for one in raw["separate"] if (r := _side(one.get(o), o)[0]) and (m := _step_median(r))]
            rows.append([SIDE_LABELS[o], "-", f"separate processes, {_n(n_rounds, 'round')}",
                         R.fmt_seconds(R.median(times)) if times else "-", "-", "-", "-", "-"])
    parts = []
    if inproc is not None:
        parts.append(f"in-process: one worker, {raw['inproc_rounds']} interleaved rounds after "
                     f"{raw['warmup']} warm-up call(s) of each side, medians")
    if n_rounds:
        parts.append(f"separate processes: {_n(n_rounds, 'round')}, each side's worker timing {raw['steps']} "
                     f"steps after {raw['warmup']} warm-up call(s), its median")
    mode = "; ".join(parts) or "nothing ran"
    notes = []
    if any(p in PADDLE_SIDES and p not in raw.get("skipped", {}) for p in peers):
        notes.append("Paddle runs in its own interpreter, so in separate processes only.")
    said = sorted({f"{SIDE_LABELS.get(side, side)}: {r['note']}" for w in _workers(raw)
                   for side, r in w.get("sides", {}).items() if isinstance(r, dict) and r.get("note")})
    notes += [f"Noted by a worker: {n}." for n in said]
    firsts = _first_calls(raw, ["ours"] if "ours" in ours_sides else [])
    if firsts:
        notes.append(f"First call (compile, or a load from the disk cache) of ours: {firsts}.")
    if name in EAGER_WORKLOADS:
        three = _first_three(raw, sides)
        if three:
            per = "per step of each of the first three epochs" if name.startswith("fit-") else "each"
            notes.append(f"First three steps of a fresh process ({per}, ms; ours' disk cache of compiled code "
                         f"cold in round 1, warm after): {three}.")
    return R.Table(name, spec.title, facts(raw, ctx, mode),
                   ["ours", "peer", "measured", "ours time", "peer time", "ours / peer", "range of rounds", "target"],
                   rows, notes)


def _n(count: int, noun: str, plural: str | None = None) -> str:
    """`1 round`, `3 rounds`."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def fmt_cell(result: Mapping[str, Any] | None, why: str | None) -> str:
    """A time cell: the median step, or why there is none."""
    return R.fmt_seconds(_step_median(result)) if result is not None else (why or "-")


def _separate_row(raw: Mapping[str, Any], name: str, o: str, p: str, label: str, peer: str) -> list[str]:
    """The separate-processes row of (our side `o`, peer `p`): medians over rounds of
    each process's median, the median and range of the per-round ratios."""
    to: list[float] = []
    tp: list[float] = []
    ratios: list[float] = []
    problems: list[str] = []
    for one in raw["separate"]:
        (ro, why_o), (rp, why_p) = _side(one.get(o), o), _side(one.get(p), p)
        mo, mp = (_step_median(ro) if ro else None), (_step_median(rp) if rp else None)
        if mo is not None:
            to.append(mo)
        if mp is not None:
            tp.append(mp)
        if mo is not None and mp is not None:
            ratios.append(mo / mp)
        problems += [w for w in (why_o, why_p) if w]
    mode = f"separate processes, {_n(len(raw['separate']), 'round')}"
    ratio = R.median(ratios)
    target = R.step_target(name, o, p, separate=True)
    ours_cell = R.fmt_seconds(R.median(to)) if to else (problems[0] if problems else "-")
    peer_cell = R.fmt_seconds(R.median(tp)) if tp else (problems[-1] if problems else "-")
    if problems and to and tp:
        mode += f" ({len(problems)} failed: {problems[0]})"
    return [label, peer, mode, ours_cell, peer_cell, R.fmt_ratio(ratio), R.fmt_range(ratios),
            target.check(ratio) if target else "-"]


def _first_three(raw: Mapping[str, Any], sides: Sequence[str]) -> str:
    """Each side's first three step latencies in the separate-process rounds (ours'
    rounds labelled cold / warm disk cache), `; `-joined."""
    parts = []
    for side in sides:
        runs = []
        for r, one in enumerate(raw.get("separate", [])):
            result, _ = _side(one.get(side), side)
            if result and result.get("first_steps_s"):
                steps = "/".join(f"{1e3 * t:.1f}" for t in result["first_steps_s"])
                if side in OURS or side == "ours-fit-static":
                    steps += " (cold)" if r == 0 else " (warm)"
                runs.append(steps)
        if runs:
            parts.append(f"{SIDE_LABELS.get(side, side)} {', '.join(runs)}")
    return "; ".join(parts)


def _first_calls(raw: Mapping[str, Any], ours_sides: Sequence[str]) -> str:
    """Our sides' first-call seconds over the workers, as a range."""
    parts = []
    for o in ours_sides:
        firsts = [r["first_s"] for w in _workers(raw) for s, r in w.get("sides", {}).items()
                  if s == o and isinstance(r, dict) and r.get("first_s") is not None]
        if firsts:
            lo, hi = min(firsts), max(firsts)
            span = f"{lo:.2f} s" if len(firsts) == 1 else f"{lo:.2f}-{hi:.2f} s"
            parts.append(f"{SIDE_LABELS[o]} {span}")
    return ", ".join(parts)


def ad_table(raw: Mapping[str, Any], ctx: Context) -> R.Table:
    """`append_backward` seconds per chain length, ours and Paddle's, and the scaling."""
    rounds = raw["separate"]
    ours = [r["ours"].get("sides", {}).get("ours", {}).get("values") for r in rounds]
    ours_ok = [v for v in ours if v]
    paddle_skip = raw.get("skipped", {}).get("paddle")
    theirs = [] if paddle_skip else [r.get("paddle", {}).get("sides", {}).get("paddle", {}).get("values")
                                     for r in rounds]
    theirs_ok = [v for v in theirs if v]
    sizes = [k for k in (ours_ok[0] if ours_ok else {})]
    rows = []
    for n in sizes:
        ts = [v[n] for v in ours_ok]
        tp = [v[n] for v in theirs_ok if n in v]
        ratios = [v[n] / w[n] for v, w in zip(ours, theirs) if v and w and n in w]
        if paddle_skip:
            peer = f"skipped: {paddle_skip}"
        elif not theirs_ok:
            peer = _why_none(rounds, "paddle")
        else:
            peer = R.fmt_seconds(R.median(tp)) if tp else (
                "not run in --quick" if raw.get("quick") and int(n) in PADDLE_AD_SIZES[0]
                else "not run (grows quadratically: minutes)")
        targets = []
        if int(n) == 5000:
            targets.append(R.AD_TARGET_5K.check(R.median(ts)))
        if ratios:
            targets.append(R.PADDLE_TARGET.check(R.median(ratios)))
        t = R.median(ts)
        rows.append([f"{int(n):,} ops", R.fmt_seconds(t), f"{1e6 * t / int(n):.0f} us" if t else "-",
                     R.fmt_range(ts, "s"), peer, R.fmt_ratio(R.median(ratios)), "; ".join(targets) or "-"])
    if not sizes:
        rows.append(["-", _why_none(rounds, "ours"), "-", "-", "-", "-", "-"])
    if len(sizes) >= 2:
        lo, hi = sizes[0], sizes[-1]
        scaling = [v[hi] / v[lo] for v in ours_ok]
        paddle_scaling = [v[hi] / v[lo] for v in theirs_ok if hi in v and lo in v]
        target = R.AD_TARGET_SCALING if (int(lo), int(hi)) == (1000, 10000) else None
        rows.append([f"{int(hi):,} / {int(lo):,} ops", R.fmt_ratio(R.median(scaling)), "-",
                     R.fmt_range(scaling), R.fmt_ratio(R.median(paddle_scaling)) if paddle_scaling else "-", "-",
                     target.check(R.median(scaling)) if target else "-"])
    mode = f"separate processes, {_n(len(rounds), 'round')} (ours, then Paddle); per process the best of " \
           f"{_n(raw['repeats'], 'build')} up to 5,000 ops, one build above (Paddle: one build of each)"
    return R.Table("ad-build", "AD build time: `append_backward` on chains of multiply, tanh and scale "
                   "(`ad_build.build_chain`)", facts(raw, ctx, mode),
                   ["chain", "pullback", "per op", "range of rounds", "Paddle", "ours / Paddle", "target"], rows)


def _why_none(rounds: Sequence[Mapping[str, Any]], side: str) -> str:
    """Why no round has a result for `side`."""
    for one in rounds:
        _, why = _side(one.get(side), side)
        if why:
            return why
    return "not run"


def compile_table(raw: Mapping[str, Any], ctx: Context) -> R.Table:
    """Compile seconds per program, one fresh process per sample."""
    rows = []
    for program, results in raw["programs"].items():
        values = [w["sides"]["ours"]["values"]["compile"] for w in results
                  if "values" in w.get("sides", {}).get("ours", {})]
        target = R.COMPILE_TARGETS.get(program)
        t = R.median(values)
        cell = R.fmt_seconds(t) if values else _why_none([{"ours": w} for w in results], "ours")
        rows.append([COMPILE_TITLES[program], _n(len(results), "process", "processes"), cell, R.fmt_range(values, "s"),
                     target.check(t) if target else "-"])
    mode = "separate processes, the disk cache off (`PULLBACK_CACHE=0`), each after a small warm-up compile " \
           "that sets the JIT up"
    return R.Table("compile", "Compile time (`compile_program`, disk cache off)", facts(raw, ctx, mode),
                   ["program", "samples", "compile (median)", "range", "target"], rows)


def tables(raws: Sequence[Mapping[str, Any]], ctx: Context) -> list[R.Table]:
    """The tables of the raw results."""
    out = []
    for raw in raws:
        if raw["name"] in STEP_WORKLOADS:
            out.append(step_table(raw, ctx))
        elif raw["name"] == "ad-build":
            out.append(ad_table(raw, ctx))
        else:
            out.append(compile_table(raw, ctx))
    return out


# ------------------------------------------------------------------ main


def default_paddle_python() -> str | None:
    """This interpreter when it has paddle, else None."""
    return sys.executable if importlib.util.find_spec("paddle") is not None else None


def main(argv: Sequence[str] | None = None) -> None:
    """Run the chosen workloads, print their tables, and write what was asked."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--worker" in argv:
        worker_main(argv)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="fewer rounds and steps (a pass of a few minutes)")
    ap.add_argument("--threads", type=int, default=1, help="threads of every side (default 1)")
    ap.add_argument("--only", nargs="+", action="extend", choices=[*ORDER, *GROUPS], metavar="NAME",
                    help=f"run only these tables: {', '.join(ORDER)}; or a set of them: "
                         + "; ".join(f"{g} ({', '.join(ns)})" for g, ns in GROUPS.items()))
    ap.add_argument("--write", nargs="?", const=str(RESULTS_MD), metavar="PATH",
                    help="replace the generated section of RESULTS.md (or of PATH)")
    ap.add_argument("--json", metavar="PATH", help="save the raw results")
    ap.add_argument("--paddle-python", metavar="PATH", default=default_paddle_python(),
                    help="an interpreter with PaddlePaddle for Paddle's side (default: this one if it has paddle)")
    ap.add_argument("--rounds", type=int, help="separate-process rounds (overrides each workload's)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the processes to cores")
    ap.add_argument("--tiny", action="store_true", help="tiny shapes: tests the harness, measures nothing")
    args = ap.parse_args(argv)
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    settings = Settings(args.quick, args.threads, not args.no_pin, args.paddle_python, args.rounds, args.tiny)
    pinned = pin_cores(args.threads) if settings.pin else None
    if pinned is not None:
        # Inherited by every worker started from here on.
        os.sched_setaffinity(0, pinned)
    ctx = Context("python -m pullback.benchmarks.run_all" + "".join(f" {shlex.quote(a)}" for a in argv),
                  machine(), args.threads, pinned, revision())
    runner = Runner(settings)
    only = {n for name in args.only or [] for n in GROUPS.get(name, [name])}
    started = time.perf_counter()
    raws: list[dict[str, Any]] = []
    for name in [n for n in ORDER if not only or n in only]:
        log(f"{name}: start (load {load():.2f})")
        if name in STEP_WORKLOADS:
            raw = run_step_workload(runner, name)
        elif name == "ad-build":
            raw = run_ad_build(runner)
        else:
            raw = run_compile(runner)
        raw["quick"] = args.quick
        raws.append(raw)
    made = tables(raws, ctx)
    for table in made:
        print(R.render_table(table))
    log(f"{runner.workers} workers, {time.perf_counter() - started:.0f} s in all")
    if args.json:
        Path(args.json).write_text(json.dumps({"context": ctx.__dict__, "workloads": raws}, indent=1))
    if args.write:
        R.write_results(Path(args.write), made, ORDER)
        log(f"wrote {args.write}")


if __name__ == "__main__":
    main()
