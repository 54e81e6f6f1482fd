"""benchmarks/run_all.py: the equal-thread worker environment, the tables (skipped
peers, targets), the RESULTS.md section writer, and one real tiny worker run.  Fast,
and without torch or jax."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pullback.benchmarks import _results as R
from pullback.benchmarks import run_all
import pullback.static as paddle_static

CTX = run_all.Context("python -m pullback.benchmarks.run_all --quick", "Test CPU (lscpu), 2 CPUs", 1, [0], "abc1234")


def _step_raw(**overrides: Any) -> dict[str, Any]:
    """The raw results of an MLP run whose peers are all missing, ours measured."""
    ours = {"sides": {"ours": {"times_s": [0.005, 0.004, 0.006], "first_s": 0.5}}, "cores": [0],
            "threads": {"pullback": "1", "openblas": "1"}, "versions": {"numpy": "2.0"}, "os_threads": 1}
    raw = {"name": "mlp", "started": "2026-01-01 00:00 UTC", "load_before": 0.5, "load_after": 0.7,
           "skipped": {"jax": "jax not installed", "torch": "torch not installed",
                       "paddle": "Paddle not installed (none in this interpreter; give --paddle-python PATH)"},
           "inprocess": None, "separate": [{"ours": ours}], "steps": 3, "inproc_rounds": 0, "warmup": 2}
    raw.update(overrides)
    return raw


def test_worker_env_gives_every_side_the_same_threads() -> None:
    env = run_all.worker_env(3, base={"PULLBACK_BACKEND": "interpreter", "KEEP": "x", "OMP_NUM_THREADS": "8"})
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PULLBACK_NUM_THREADS",
                "PULLBACK_COMPILE_THREADS", "RUN_ALL_THREADS"):
        assert env[var] == "3", var
    assert env["XLA_FLAGS"] == "intra_op_parallelism_threads=3"
    assert env["KEEP"] == "x" and "PULLBACK_BACKEND" not in env and "PULLBACK_CACHE" not in env
    one = run_all.worker_env(1, base={}, cache=False)
    assert one["XLA_FLAGS"] == "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    assert one["PULLBACK_CACHE"] == "0" and one["JAX_PLATFORMS"] == "cpu"


def test_missing_peers_render_as_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_all, "missing_peer", lambda side: "torch" if side == "torch" else None)
    runner = run_all.Runner(run_all.Settings())
    assert runner.skip_reason("torch") == "torch not installed"
    assert runner.skip_reason("jax") is None
    assert "give --paddle-python" in (runner.skip_reason("paddle") or "")

    text = R.render_table(run_all.step_table(_step_raw(), CTX))
    assert "| pullback compiled | PyTorch eager | - | - | skipped: torch not installed |" in text
    assert "skipped: jax not installed" in text and "skipped: Paddle not installed" in text
    for fact in ("- Command: `python -m pullback.benchmarks.run_all --quick`", "Test CPU (lscpu)",
                 "load average 0.50 before, 0.70 after", "1 asked of every side", "OpenBLAS 1",
                 "Pinned: yes, every process to core 0"):
        assert fact in text, fact
    assert "TODO" not in text


def test_separate_rounds_give_median_ratio_range_and_target() -> None:
    def worker(side: str, t: float) -> dict[str, Any]:
        return {"sides": {side: {"times_s": [t, t, t]}}, "cores": [0]}

    rounds = [{"ours": worker("ours", 0.004), "jax": worker("jax", 0.005)},
              {"jax": worker("jax", 0.004), "ours": worker("ours", 0.005)},
              {"ours": worker("ours", 0.004), "jax": worker("jax", 0.004)}]
    raw = _step_raw(separate=rounds, skipped={"torch": "torch not installed", "paddle": "Paddle not installed"})
    text = R.render_table(run_all.step_table(raw, CTX))
    # Per-round ratios 0.8, 1.25, 1.0: median 1.0 (the target is <= 1.0x: met).
    assert "| pullback compiled | JAX jit | separate processes, 3 rounds | 4.00 ms | 4.00 ms | 1.00x | " \
           "0.80-1.25x | <= 1.0x: met (issue 26) |" in text


def test_write_replaces_only_the_generated_section(tmp_path: Path) -> None:
    path = tmp_path / "RESULTS.md"
    history = "## Old section\n\nclaimed 0.40x, kept as history\n"
    path.write_text(f"# CPU benchmark results\n\nintro\n\n{history}")
    table = run_all.step_table(_step_raw(), CTX)
    R.write_results(path, [table], run_all.ORDER)
    first = path.read_text()
    # No markers before: the section goes right after the first heading line.
    assert first.startswith(f"# CPU benchmark results\n\n{R.BEGIN}\n")
    assert first.endswith(f"{R.END}\n\nintro\n\n{history}")
    assert "<!-- run_all:table mlp -->" in first

    # Another table written later: the mlp table is kept, the history untouched.
    other = R.Table("lstm", "LSTM", [("Command", "`x`")], ["a"], [["1"]])
    R.write_results(path, [other], run_all.ORDER)
    second = path.read_text()
    assert second.count(R.BEGIN) == 1 and second.count(R.END) == 1
    assert second.index("<!-- run_all:table mlp -->") < second.index("<!-- run_all:table lstm -->")
    assert R.render_table(table) in second and second.endswith(f"{R.END}\n\nintro\n\n{history}")

    # Rewriting a table replaces it, byte for byte elsewhere.
    newer = R.Table("lstm", "LSTM", [("Command", "`y`")], ["a"], [["2"]])
    R.write_results(path, [newer], run_all.ORDER)
    third = path.read_text()
    assert "| 2 |" in third and "| 1 |" not in third
    assert third.replace(R.render_table(newer), "") == second.replace(R.render_table(other), "")


def test_module_imports_without_torch_or_jax() -> None:
    code = ("import sys, pullback.benchmarks.run_all; "
            "assert not {'torch', 'jax', 'paddle'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_tiny_run_through_a_real_worker(tmp_path: Path) -> None:
    out, raw_json = tmp_path / "RESULTS.md", tmp_path / "raw.json"
    out.write_text("# Results\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pullback.benchmarks.run_all", "--quick", "--tiny", "--no-pin", "--only", "ad-build",
         "--paddle-python", "/nonexistent/python", "--write", str(out), "--json", str(raw_json)],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    raw = json.loads(raw_json.read_text())["workloads"][0]
    values = raw["separate"][0]["ours"]["sides"]["ours"]["values"]
    assert set(values) == {"30", "60"} and all(v > 0 for v in values.values())
    assert raw["separate"][0]["ours"]["threads"]["pullback"] == "1"  # PULLBACK_NUM_THREADS reached it
    text = out.read_text()
    assert "| 30 ops |" in text and "| 60 / 30 ops |" in text
    assert "skipped: Paddle not installed (no interpreter /nonexistent/python)" in text
    assert proc.stdout.strip() in text


# ------------------------------------------------------------ issue 33's eager set


def test_eager_group_names_issue_33s_tables_and_each_has_a_target() -> None:
    assert run_all.GROUPS["eager"] == ["eager-lenet", "eager-resnet18", "eager-transformer", "eager-lstm",
                                       "fit-lenet", "fit-mlp"]
    assert all(name in run_all.ORDER for name in run_all.GROUPS["eager"])
    targets = {name: R.step_target(name, "ours-fit" if name.startswith("fit-") else "ours-eager",
                                   "ours-fit-static" if name.startswith("fit-") else "torch", separate=True)
               for name in run_all.GROUPS["eager"]}
    assert {n: (t.limit, t.issue) for n, t in targets.items() if t} == {
        "eager-lenet": (1.2, 33), "eager-resnet18": (1.2, 33), "eager-transformer": (1.0, 33),
        "eager-lstm": (1.0, 33), "fit-lenet": (1.2, 33), "fit-mlp": (1.2, 33)}


def test_paddle_sides_run_paddle_peer_under_their_own_names(monkeypatch: pytest.MonkeyPatch) -> None:
    runner = run_all.Runner(run_all.Settings(paddle_python="/bin/true"))
    asked: list[str] = []

    def fake_paddle(workload: str, steps: int, warmup: int = 2, sizes: Any = ()) -> dict[str, Any]:
        asked.append(workload)
        return {"sides": {"paddle": {"times_s": [0.01]}}}

    monkeypatch.setattr(runner, "paddle", fake_paddle)
    assert runner.side("fit-lenet", "paddle-fit-static", 3, 1)["sides"] == {"paddle-fit-static": {"times_s": [0.01]}}
    assert runner.side("fit-lenet", "paddle-fit", 3, 1)["sides"] == {"paddle-fit": {"times_s": [0.01]}}
    assert runner.side("eager-lstm", "paddle-eager", 3, 1)["sides"] == {"paddle-eager": {"times_s": [0.01]}}
    assert asked == ["fit-lenet-static", "fit-lenet", "eager-lstm"]
    assert runner.skip_reason("paddle-eager") is None
    assert "give --paddle-python" in (run_all.Runner(run_all.Settings()).skip_reason("paddle-fit") or "")


def test_eager_table_states_first_three_steps_cold_then_warm_and_the_target() -> None:
    def worker(side: str, t: float, first: list[float]) -> dict[str, Any]:
        return {"sides": {side: {"times_s": [t, t, t], "first_steps_s": first}}, "cores": [0]}

    rounds = [{"ours-eager": worker("ours-eager", 0.012, [0.5, 0.02, 0.013]),
               "torch": worker("torch", 0.010, [0.05, 0.011, 0.010]),
               "paddle-eager": worker("paddle-eager", 0.030, [0.06, 0.031, 0.030])},
              {"paddle-eager": worker("paddle-eager", 0.030, [0.06, 0.031, 0.030]),
               "torch": worker("torch", 0.010, [0.05, 0.011, 0.010]),
               "ours-eager": worker("ours-eager", 0.012, [0.2, 0.015, 0.012])}]
    raw = _step_raw(name="eager-lstm", separate=rounds, skipped={})
    text = R.render_table(run_all.step_table(raw, CTX))
    assert "| pullback eager | PyTorch eager | separate processes, 2 rounds | 12.0 ms | 10.0 ms | 1.20x | " \
           "1.20-1.20x | <= 1.0x: **not met** (issue 33) |" in text
    assert "| pullback eager | Paddle dygraph | separate processes, 2 rounds | 12.0 ms | 30.0 ms | 0.40x |" in text
    assert "pullback eager 500.0/20.0/13.0 (cold), 200.0/15.0/12.0 (warm)" in text
    assert "PyTorch eager 50.0/11.0/10.0, 50.0/11.0/10.0" in text
    assert "Paddle runs in its own interpreter" in text


def test_tiny_fit_worker_times_per_step_and_records_first_steps() -> None:
    # One real in-process worker of the `fit-mlp` table, tiny: pullback's Model in
    # dynamic and static mode in one process (static mode entered and left per call).
    # A static Model builds in the default programs, as Paddle's does: fresh ones
    # here, so that its parameters do not meet later tests' layers of the same names.
    from pullback.frontend import unique_name
    from pullback.runtime.scope import Scope, scope_guard

    with paddle_static.program_guard(paddle_static.Program(), paddle_static.Program()), unique_name.guard(), \
            scope_guard(Scope()):
        out = run_all.run_worker("fit-mlp", ["ours-fit", "ours-fit-static"], 2, warmup=1, tiny=True)
    for side in ("ours-fit", "ours-fit-static"):
        result = out["sides"][side]
        assert "error" not in result, result
        assert len(result["times_s"]) == 2 and all(t > 0 for t in result["times_s"])
        assert len(result["first_steps_s"]) == 3 and result["first_s"] == result["first_steps_s"][0]
    import pullback

    assert pullback.in_dynamic_mode()  # the static side left static mode behind it
