"""`pullback-opt`: xDSL's `xdsl-opt` driver, knowing the `pd` dialect and our passes.

    pullback-opt program.mlir -p autodiff,prune,dce [-o out.mlir] [-t mlir]

Everything `xdsl-opt` offers works unchanged (`--print-between-passes`,
`--verify-diagnostics`, `--split-input-file`, `--print-op-generic`, ...).  On top:

* after parsing, SSA name hints are restored from the ops' Paddle `name` properties,
  so printed IR reads `%fc_0.tmp_0` rather than `%0`;
* the verifier reports the source location of the op that fails;
* malformed IR, an unknown pass, a verifier failure or a failing pass give a short
  error on stderr and exit status 1, never a Python traceback (set
  `PULLBACK_TRACEBACK=1` to see one when debugging the compiler itself).
"""

from __future__ import annotations

import difflib
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.xdsl_opt_main import xDSLOptMain

from pullback.universe import get_pd_dialect, pullback_passes, pullback_targets

TOOL = "pullback-opt"


class ToolError(Exception):
    """An error whose message is ready for the user (location included)."""


class LocatingParser(Parser):
    """An xDSL parser that remembers where each operation starts in the source."""

    def __init__(self, *args, line_offset: int = 0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.line_offset = line_offset
        self.op_spans: dict[Operation, Span[str] | Span[bytes]] = {}

    def parse_operation(self) -> Operation:
        """Parse one operation, recording the span of its first token."""
        tok = self._current_token.span
        op = super().parse_operation()
        self.op_spans[op] = Span(tok.start, tok.end, tok.input, self.line_offset)
        return op


def verify_ops(module: ModuleOp) -> None:
    """Verify innermost ops first (as MLIR does).  A VerifyException raised for an op
    carries that op as its `failed_op` attribute, so callers can locate it."""
    for op in module.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            e.failed_op = op  # type: ignore[attr-defined]
            raise
    module.verify()


def parse_pd_file(path: str, tool: str = TOOL) -> ModuleOp:
    """Parse and verify a `pd` program file; errors are raised as `ToolError` with a
    located, ready-to-print message (`tool` prefixes errors that have no location)."""
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin

    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        raise ToolError(f"{tool}: error: cannot open '{path}': {e.strerror}") from None
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.register_dialect("pd", get_pd_dialect)
    parser = LocatingParser(ctx, source, path)
    try:
        module = parser.parse_module()
        restore_all_name_hints(module)
        verify_ops(module)
    except ParseError as e:
        raise ToolError(format_error(e.msg, e.span, path)) from None
    except VerifyException as e:
        op = getattr(e, "failed_op", None)
        raise ToolError(format_error(str(e), parser.op_spans.get(op), path)) from None
    return module


def restore_all_name_hints(module: ModuleOp) -> None:
    """Give every value of a `pd` op the SSA name hint of its Paddle name."""
    from pullback.dialects.pd import restore_name_hints

    for op in module.walk():
        restore_name_hints(op)


def format_error(message: str, span: Span[str] | Span[bytes] | None, fallback: str) -> str:
    """`FILE:LINE:COL: error: MESSAGE` plus the source line with a caret under the op.

    Without a span (ops created by a pass), the location is just `fallback`.
    """
    message = message.strip()
    if span is None:
        return f"{fallback}: error: {message}\n"
    loc = span.get_location()
    context = span.print_with_context().splitlines()
    # print_with_context gives the location line, then source line / caret pairs.
    excerpt = "\n".join("  " + line for line in context[1:3])
    return f"{loc}: error: {message}\n{excerpt}\n"


class PullbackOptMain(xDSLOptMain):
    """`xDSLOptMain` with the `pd` dialect, pullback's passes and located errors."""

    version_format = "pullback-opt built from xdsl version {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None) -> None:
        self._line_offset = 0
        self._spans: dict[Operation, Span[str] | Span[bytes]] = {}
        self.current_pass: str | None = None
        super().__init__(
            description="pullback's optimizer driver for pd-dialect programs", args=args
        )

    # -- registration --------------------------------------------------------------

    def register_all_dialects(self) -> None:
        """xDSL's dialects (and any universe's), plus `pd` if no universe gave it."""
        super().register_all_dialects()
        if "pd" not in self.ctx.registered_dialect_names:
            self.ctx.register_dialect("pd", get_pd_dialect)

    def register_all_passes(self) -> None:
        """xDSL's passes plus pullback's (upstream names win)."""
        super().register_all_passes()
        for name, factory in pullback_passes().items():
            self.available_passes.setdefault(name, factory)

    def register_all_targets(self) -> None:
        """xDSL's targets, with pullback's `llvm` (our lowering's LLVM IR) and `ptx`
        taking precedence over upstream ones of the same name."""
        super().register_all_targets()
        self.available_targets.update(pullback_targets())

    def register_all_frontends(self) -> None:
        """Parse `.mlir` with source locations and Paddle name hints."""
        super().register_all_frontends()
        self.available_frontends["mlir"] = self._parse_mlir

    # -- parsing and verification ----------------------------------------------------

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        """Parse one chunk, remembering its line offset within the input file."""
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def _parse_mlir(self, io: IO[bytes]) -> ModuleOp:
        parser = LocatingParser(
            self.ctx, io.read(), self.get_input_name(), line_offset=self._line_offset
        )
        module = parser.parse_module(not self.args.no_implicit_module)
        self._spans = parser.op_spans
        restore_all_name_hints(module)
        return module

    def setup_pipeline(self) -> None:
        """xDSL's pipeline, with a located verifier and tracking of the running pass."""
        check_pass_names(self.args.passes, self.available_passes)
        super().setup_pipeline()
        inner = self.pipeline.callback

        def callback(
            previous: ModulePass | None, module: ModuleOp, next_pass: ModulePass | None
        ) -> None:
            self.current_pass = None
            if not self.args.disable_verify:
                verify_ops(module)
            if inner is not None:
                inner(previous, module, next_pass)
            self.current_pass = next_pass.name if next_pass is not None else None

        self.pipeline = PassPipeline(self.pipeline.passes, callback)

    # -- errors --------------------------------------------------------------------

    def describe(self, err: BaseException) -> str:
        """A short, located description of an error raised while running."""
        where = self.get_input_name()
        if isinstance(err, ParseError):
            return format_error(err.msg, err.span, where)
        if isinstance(err, OSError) and err.filename is not None:
            return format_error(f"cannot open '{err.filename}': {err.strerror}", None, TOOL)
        msg = str(err) or type(err).__name__
        failed = getattr(err, "failed_op", None)
        span = self._spans.get(failed) if failed is not None else None
        if self.current_pass is not None:
            return format_error(f"pass '{self.current_pass}' failed: {msg}", span, where)
        if isinstance(err, DiagnosticException):
            return format_error(msg, span, where)
        return format_error(f"{type(err).__name__}: {msg}", span, where)


class UnknownPassError(ValueError):
    """A pass named in `-p` is not registered."""


def check_pass_names(spec: str, available: Mapping[str, object]) -> None:
    """Raise UnknownPassError naming each unknown pass of a `-p` pipeline, with
    close matches; a malformed pipeline raises xDSL's ArgSpecParseError."""
    for arg in parse_pipeline(spec):
        if arg.name not in available:
            close = difflib.get_close_matches(arg.name, list(available), n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise UnknownPassError(
                f"-p {spec}: error: unknown pass '{arg.name}'{hint} "
                f"(`{TOOL} --help` lists the available passes)"
            )


def fail(message: str) -> NoReturn:
    """Print an error on stderr and exit with status 1."""
    sys.stderr.write(message if message.endswith("\n") else message + "\n")
    sys.stderr.flush()
    raise SystemExit(1)


def run_guarded(body: Callable[[], None], describe: Callable[[BaseException], str]) -> None:
    """Run `body`; turn any exception into a short message and exit status 1."""
    try:
        body()
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as err:  # noqa: BLE001 - the tool must never show a traceback
        if os.environ.get("PULLBACK_TRACEBACK"):
            traceback.print_exc()
        fail(describe(err))


def _describe_setup_error(err: BaseException) -> str:
    if isinstance(err, UnknownPassError):
        return f"{TOOL}: {err}"
    return f"{TOOL}: error: {str(err).strip()}"


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the `pullback-opt` console script."""
    driver: PullbackOptMain | None = None

    def setup() -> None:
        nonlocal driver
        driver = PullbackOptMain(args=argv)

    # Constructing the driver parses the pass pipeline: an unknown pass fails here.
    run_guarded(setup, _describe_setup_error)
    assert driver is not None
    run_guarded(driver.run, driver.describe)


if __name__ == "__main__":
    main()
