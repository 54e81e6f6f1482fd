"""`pullback-run`: run a `pd` program from a `.mlir` file.

    pullback-run main.mlir --feed x=x.npy --feed y=y.npy --fetch mean_0.tmp_0 \\
        [--param fc_0.w_0=w.npy | --params DIR | --startup startup.mlir] [--out DIR]

Feeds are `.npy` files checked like `Executor.run` checks them (names, ranks, fixed
dimensions, dtypes).  Parameters come from `.npy` files (`--param NAME=FILE`, or
`--params DIR` holding `NAME.npy` files) or from running a startup program first.
Without `--fetch`, the values marked by `pd.fetch` ops are fetched.  Empty
`pd.backward` regions are filled by the `autodiff` pass first, so gradients can be
fetched by name (`--fetch fc_0.w_0@GRAD`); a forward-only program is differentiated
with `--targets mean_0.tmp_0 [--wrt fc_0.w_0,fc_0.b_0] [--no-grad NAME]`, as
`pullback-opt -p 'autodiff{targets=... wrt=...}'` does.  Fetched values are printed, or saved as
`DIR/NAME.npy` with `--out DIR`.

Every error (bad IR, a missing file, a bad feed, an uninitialized parameter) is one
message on stderr and exit status 1; an error raised at an op of the program (a
kernel's, a tensor too large) is located at that op (`FILE:LINE:COL: error:`).
Warnings come after the error, or after a successful run.
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.lexer import Span

from pullback.dialects import pd
from pullback.dialects.pd.base import value_name
from pullback.tools.pullback_opt import ToolError, format_error, parse_pd_file, run_guarded, show_warnings_as

if TYPE_CHECKING:
    from pullback.frontend.framework import Program
    from pullback.runtime.executor import Executor
    from pullback.runtime.scope import Scope

TOOL = "pullback-run"


def _pair(spec: str, what: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise ToolError(f"{TOOL}: error: {what} '{spec}' must be NAME=FILE.npy")
    return name, path


def load_npy(path: str, what: str) -> np.ndarray:
    """Load an array from a `.npy` file, or raise ToolError saying what failed."""
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise ToolError(f"{TOOL}: error: {what}: no such file '{path}'") from None
    except (OSError, ValueError) as e:
        raise ToolError(f"{TOOL}: error: {what}: cannot read '{path}' as .npy: {e}") from None


def program_of(module: ModuleOp) -> Program:
    """Wrap a parsed module as a frontend `Program` the Executor can run."""
    from pullback.frontend.framework import Program

    program: Program = Program()
    program.module = module
    return program


def fill_backward_regions(
    module: ModuleOp,
    path: str,
    targets: Sequence[str] = (),
    wrt: Sequence[str] = (),
    no_grad: Sequence[str] = (),
) -> None:
    """Run the `autodiff` pass when some `pd.backward` region is empty, so that the
    gradients it defines (`x@GRAD`) are values of the program that can be fetched.
    With `targets`, first append a `pd.backward` op differentiating them with respect
    to `wrt` (default: every trainable parameter), as `autodiff{targets=... wrt=...}`."""
    if not targets and (wrt or no_grad):
        raise ToolError(f"{TOOL}: error: --wrt and --no-grad need --targets (the values to differentiate)")
    if not targets and not any(
        isinstance(op, pd.BackwardOp) and not op.is_filled for op in module.walk()
    ):
        return
    from xdsl.context import Context

    from pullback.passes.autodiff import AutodiffError, AutodiffPass

    try:
        AutodiffPass(targets=tuple(targets), wrt=tuple(wrt), no_grad=tuple(no_grad)).apply(
            Context(allow_unregistered=True), module
        )
    except AutodiffError as e:
        raise ToolError(f"{path}: error: {e}") from None


def split_names(specs: Sequence[str]) -> list[str]:
    """`--wrt a,b --wrt c` -> ['a', 'b', 'c']."""
    return [n for spec in specs for n in spec.split(",") if n]


def program_names(module: ModuleOp) -> list[str]:
    """The names that can be fetched: those of the top-level values."""
    return [
        n for op in module.body.block.ops for n in pd.result_names(op) if n is not None
    ] + [
        n
        for op in module.body.block.ops
        if isinstance(op, (pd.DataOp, pd.ParameterOp))
        for n in [value_name(op.results[0])]
        if n is not None
    ]


def check_fetch_names(module: ModuleOp, fetch: Sequence[str], path: str) -> None:
    """A fetch name that is not in the program is an error, with close matches."""
    known = program_names(module)
    for name in fetch:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(set(known)), n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise ToolError(f"{path}: error: fetch variable '{name}' is not in the program{hint}")


def default_fetches(module: ModuleOp) -> list[str]:
    """Names of the values marked by `pd.fetch` ops."""
    names = []
    for op in module.body.block.ops:
        if isinstance(op, pd.FetchOp):
            name = value_name(op.x)
            if name is None:
                raise ToolError(
                    f"{TOOL}: error: a pd.fetch operand has no name property; pass --fetch"
                )
            names.append(name)
    return names


def safe_filename(name: str) -> str:
    """A file name for a variable name (`/` is not allowed in file names)."""
    return name.replace(os.sep, "_") + ".npy"


def run_startup(exe: Executor, path: str, scope: Scope) -> None:
    """Run a startup program and store every named value it computes in `scope`
    (a startup program holds only persistable variables, as in Paddle)."""
    module = parse_pd_file(path, TOOL)
    names = [
        n for op in module.body.block.ops for n in pd.result_names(op) if n is not None
    ]
    try:
        values = exe.run(program_of(module), fetch_list=names, scope=scope)
    except (ValueError, RuntimeError, TypeError) as e:
        raise ToolError(f"{path}: error: {e}") from None
    scope.update(zip(names, values))


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = argparse.ArgumentParser(prog=TOOL, description="Run a pd-dialect program.")
    p.add_argument("program", help="the .mlir file of the program to run")
    p.add_argument("--feed", action="append", default=[], metavar="NAME=FILE.npy",
                   help="value of a data variable (repeatable)")
    p.add_argument("--fetch", action="append", default=[], metavar="NAME",
                   help="variable to return (repeatable; default: the pd.fetch values)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=FILE.npy",
                   help="value of a parameter (repeatable)")
    p.add_argument("--params", metavar="DIR",
                   help="directory of NAME.npy files, one per parameter")
    p.add_argument("--startup", metavar="FILE.mlir",
                   help="a startup program run first to initialize parameters")
    p.add_argument("--targets", action="append", default=[], metavar="NAME[,NAME...]",
                   help="differentiate these values first (a forward-only program gets a "
                   "pd.backward op, as with pullback-opt -p 'autodiff{targets=...}'); "
                   "fetch the gradients as NAME@GRAD")
    p.add_argument("--wrt", action="append", default=[], metavar="NAME[,NAME...]",
                   help="with --targets: the inputs to differentiate with respect to "
                   "(default: every trainable parameter)")
    p.add_argument("--no-grad", action="append", default=[], metavar="NAME[,NAME...]",
                   help="with --targets: values no gradient flows through")
    p.add_argument("--out", metavar="DIR", help="save fetched values as DIR/NAME.npy")
    p.add_argument("--backend", default=None,
                   help="executor backend (default: interpreter, or $PULLBACK_BACKEND)")
    return p


def run(args: argparse.Namespace) -> None:
    """Load the program, its parameters and feeds; run it; report the fetches."""
    from pullback.runtime.executor import CPUPlace, Executor
    from pullback.runtime.scope import Scope

    spans: dict[Operation, Span[str] | Span[bytes]] = {}
    module = parse_pd_file(args.program, TOOL, spans)
    fill_backward_regions(
        module, args.program, split_names(args.targets), split_names(args.wrt),
        split_names(args.no_grad),
    )
    program = program_of(module)
    scope = Scope()
    # The reference interpreter by default: pullback-run is the debugging tool.
    backend = args.backend or os.environ.get("PULLBACK_BACKEND") or "interpreter"
    exe = Executor(CPUPlace(), backend=backend)
    if args.startup:
        run_startup(exe, args.startup, scope)
    if args.params:
        if not os.path.isdir(args.params):
            raise ToolError(f"{TOOL}: error: --params: '{args.params}' is not a directory")
        for entry in sorted(os.listdir(args.params)):
            if entry.endswith(".npy"):
                scope[entry[:-4]] = load_npy(os.path.join(args.params, entry), "--params")
    for spec in args.param:
        name, path = _pair(spec, "--param")
        scope[name] = load_npy(path, f"--param {name}")
    feed = {}
    for spec in args.feed:
        name, path = _pair(spec, "--feed")
        feed[name] = load_npy(path, f"--feed {name}")
    missing = [
        op.var_name.data
        for op in module.body.block.ops
        if isinstance(op, pd.ParameterOp) and op.var_name.data not in scope
    ]
    if missing:
        raise ToolError(
            f"{args.program}: error: no value for parameter(s) "
            + ", ".join(f"'{n}'" for n in missing)
            + ": pass --param NAME=FILE.npy, --params DIR or --startup FILE.mlir"
        )
    fetch = args.fetch or default_fetches(module)
    if not fetch:
        raise ToolError(f"{TOOL}: error: nothing to fetch: pass --fetch NAME")
    check_fetch_names(module, fetch, args.program)
    try:
        values = exe.run(program, feed=feed, fetch_list=fetch, scope=scope)
    except Exception as e:  # noqa: BLE001 - every failure is one located message
        message = str(e) if isinstance(e, (ValueError, RuntimeError, TypeError)) else f"{type(e).__name__}: {e}"
        raise ToolError(format_error(message, _span_of(getattr(e, "failed_op", None), module, spans),
                                     args.program)) from None
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for name, value in zip(fetch, values):
            np.save(os.path.join(args.out, safe_filename(name)), value)
        return
    with np.printoptions(threshold=200):
        for name, value in zip(fetch, values):
            print(f"{name} = {np.array2string(value, separator=', ')}  # {list(value.shape)} {value.dtype}")


def _span_of(
    op: Operation | None, module: ModuleOp, spans: Mapping[Operation, Span[str] | Span[bytes]]
) -> Span[str] | Span[bytes] | None:
    """Where in the file the op an error was raised at was written.  The executor
    runs a copy of the program, so the op is found in the parsed module by its name
    and its results' names (None if that is not one op of the file)."""
    if op is None:
        return None
    if op in spans:
        return spans[op]
    names = pd.result_names(op)
    if not any(names):
        return None
    found = [o for o in module.walk() if o.name == op.name and pd.result_names(o) == names]
    return spans.get(found[0]) if len(found) == 1 else None


def _describe(err: BaseException) -> str:
    if isinstance(err, ToolError):
        return str(err)
    return f"{TOOL}: error: {type(err).__name__}: {err}"


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the `pullback-run` console script."""
    args = build_parser().parse_args(argv)
    show_warnings_as(lambda: args.program)
    run_guarded(lambda: run(args), _describe)


if __name__ == "__main__":
    main()
