"""`pullback-opt` and `pullback-run` on bad input: exit status 1, one located message
on stderr, never a Python traceback.  (Output formats are covered by the lit tests in
`tests/filecheck/tools`.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from pullback.tools import pullback_opt

GOOD = """\
%x = pd.data "x" : tensor<?x3xf32>
%w = pd.parameter "w" : tensor<3x1xf32>
%y = pd.matmul %x, %w {name = "y"} : (tensor<?x3xf32>, tensor<3x1xf32>) -> tensor<?x1xf32>
pd.fetch %y : tensor<?x1xf32>
"""
BAD_TYPE = """\
%x = pd.data "x" : tensor<?x3xf32>
%w = pd.parameter "w" : tensor<4x1xf32>
%y = pd.matmul %x, %w : (tensor<?x3xf32>, tensor<4x1xf32>) -> tensor<?x1xf32>
"""
BAD_SYNTAX = '%x = pd.data "x" tensor<?x3xf32>\n'


def _tool(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=300
    )


def _opt(*args: str) -> subprocess.CompletedProcess[str]:
    return _tool("pullback.tools.pullback_opt", *args)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return _tool("pullback.tools.pullback_run", *args)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "good.mlir").write_text(GOOD)
    (tmp_path / "bad_type.mlir").write_text(BAD_TYPE)
    (tmp_path / "bad_syntax.mlir").write_text(BAD_SYNTAX)
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    np.save(tmp_path / "w.npy", np.full((3, 1), 2.0, np.float32))
    return tmp_path


def _assert_clean_failure(proc: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    for f in fragments:
        assert f in proc.stderr, proc.stderr


def test_opt_round_trips_good_ir(files: Path) -> None:
    proc = _opt(str(files / "good.mlir"))
    assert proc.returncode == 0, proc.stderr
    assert '%y = pd.matmul %x, %w {name = "y"}' in proc.stdout


def test_opt_verifier_error_is_located(files: Path) -> None:
    proc = _opt(str(files / "bad_type.mlir"))
    _assert_clean_failure(proc, "bad_type.mlir:3:1: error: 'pd.matmul': contraction dimensions differ")
    assert len(proc.stderr.strip().splitlines()) == 3  # message, source line, caret


def test_opt_parse_error_is_located(files: Path) -> None:
    _assert_clean_failure(_opt(str(files / "bad_syntax.mlir")), "bad_syntax.mlir:1:", "error:")


def test_opt_unknown_pass(files: Path) -> None:
    proc = _opt(str(files / "good.mlir"), "-p", "dce,autodif")
    _assert_clean_failure(proc, "-p dce,autodif: error: unknown pass 'autodif'; did you mean 'autodiff'")


def test_opt_missing_input(files: Path) -> None:
    _assert_clean_failure(_opt(str(files / "nope.mlir")), "cannot open", "nope.mlir")


def test_opt_reads_stdin_and_writes_output_file(files: Path) -> None:
    out = files / "out.mlir"
    proc = subprocess.run(
        [sys.executable, "-m", "pullback.tools.pullback_opt", "-o", str(out)],
        input=GOOD, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert 'pd.parameter "w"' in out.read_text()


class _ExplodingPass(ModulePass):
    name = "explode"

    def apply(self, ctx, op) -> None:  # noqa: ANN001
        raise DiagnosticException("cannot differentiate 'pd.frobnicate'")


class _BuggyPass(ModulePass):
    name = "buggy"

    def apply(self, ctx, op) -> None:  # noqa: ANN001
        raise KeyError("oops")


@pytest.mark.parametrize(
    "pass_cls, fragment",
    [
        (_ExplodingPass, "error: pass 'explode' failed: cannot differentiate 'pd.frobnicate'"),
        (_BuggyPass, "error: pass 'buggy' failed: 'oops'"),
    ],
)
def test_opt_failing_pass_is_one_message(files, monkeypatch, capsys, pass_cls, fragment) -> None:
    monkeypatch.setattr(pullback_opt, "pullback_passes", lambda: {pass_cls.name: lambda: pass_cls})
    with pytest.raises(SystemExit) as e:
        pullback_opt.main([str(files / "good.mlir"), "-p", pass_cls.name])
    assert e.value.code == 1
    err = capsys.readouterr().err
    assert fragment in err and "good.mlir" in err and "Traceback" not in err


def test_opt_knows_pd_and_our_passes() -> None:
    driver = pullback_opt.PullbackOptMain(args=["-p", "autodiff,prune,dce,cse"])
    assert {"autodiff", "prune", "dce", "cse"} <= set(driver.available_passes)
    assert "pd" in driver.ctx.registered_dialect_names


def test_universe_has_pd_and_no_duplicate_of_xdsl_passes() -> None:
    from xdsl.transforms import get_all_passes
    from xdsl.universe import Universe

    from pullback.universe import PULLBACK_UNIVERSE

    assert "pd" in PULLBACK_UNIVERSE.all_dialects
    assert not set(PULLBACK_UNIVERSE.all_passes) & set(get_all_passes())
    multiverse = Universe.get_multiverse()  # raises on duplicate names
    assert "pd" in multiverse.all_dialects and "autodiff" in multiverse.all_passes


def test_run_prints_fetches(files: Path) -> None:
    proc = _run(str(files / "good.mlir"), "--feed", f"x={files / 'x.npy'}", "--param", f"w={files / 'w.npy'}")
    assert proc.returncode == 0, proc.stderr
    assert "y = [[6.],\n [6.]]  # [2, 1] float32" in proc.stdout


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["bad_type.mlir"], ["bad_type.mlir:3:1: error: 'pd.matmul'"]),
        (["good.mlir", "--feed", "x=x.npy"], ["no value for parameter(s) 'w'", "--param NAME=FILE.npy"]),
        (["good.mlir", "--param", "w=w.npy"], ["feed 'x' is missing"]),
        (["good.mlir", "--param", "w=w.npy", "--feed", "x=w.npy"], ["The fed variable 'x' should have dimensions = 2, shape = [-1, 3], but received fed shape [3, 1]"]),
        (["good.mlir", "--param", "w=w.npy", "--feed", "x"], ["--feed 'x' must be NAME=FILE.npy"]),
        (["good.mlir", "--param", "w=nothing.npy"], ["--param w: no such file"]),
        (["good.mlir", "--param", "w=good.mlir"], ["cannot read", "as .npy"]),
        (["good.mlir", "--param", "w=w.npy", "--feed", "x=x.npy", "--fetch", "z"], ["fetch variable 'z' is not in the program"]),
    ],
)
def test_run_errors(files: Path, args: list[str], fragments: list[str]) -> None:
    resolved = [str(files / a) if a.endswith(".mlir") and "=" not in a else a for a in args]
    resolved = [
        f"{a.split('=')[0]}={files / a.split('=')[1]}" if "=" in a else a for a in resolved
    ]
    _assert_clean_failure(_run(*resolved), *fragments)
