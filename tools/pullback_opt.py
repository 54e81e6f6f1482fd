"""`pullback-opt`: xDSL's `xdsl-opt` driver, knowing the `pd` dialect and our passes.

    pullback-opt program.mlir -p autodiff,prune,dce [-o out.mlir] [-t mlir]

Everything `xdsl-opt` offers works unchanged (`--print-between-passes`,
`--verify-diagnostics`, `--split-input-file`, `--print-op-generic`, ...).  On top:

* named pipelines (`-p lower-to-loops -t llvm` for the CPU, `-p lower-to-ptx -t ptx`
  for the GPU), listed at the end of `--help`;
* pass options may name Paddle variables without quotes
  (`-p 'autodiff{targets=mean_0.tmp_0 wrt=fc_0.w_0,fc_0.b_0}'`);
* after parsing, SSA name hints are restored from the ops' Paddle `name` properties,
  so printed IR reads `%fc_0.tmp_0` rather than `%0`;
* the verifier reports the source location of the op that fails;
* malformed IR (invalid UTF-8, nesting deeper than `MAX_NESTING` regions, an
  attribute of the wrong type, an unknown op, with close matches), an unknown pass,
  a verifier failure or a failing pass give a short located error on stderr and
  exit status 1, never a Python traceback (set `PULLBACK_TRACEBACK=1` to see one
  when debugging the compiler itself).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import textwrap
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, NoReturn

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import AttributeInvT, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.parser.core import UnresolvedOperand
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind
from xdsl.xdsl_opt_main import xDSLOptMain

from pullback.universe import get_pd_dialect, pullback_passes, pullback_pipelines, pullback_targets

TOOL = "pullback-opt"

MAX_NESTING = 64
"""Regions nested deeper than this are rejected when parsing.  Parsing, verifying,
printing and the passes recurse once per region; 64 keeps every stage well inside
Python's default recursion limit (about 100 levels would exhaust it)."""


class ToolError(Exception):
    """An error whose message is ready for the user (location included)."""


def check_utf8(source: bytes, name: str, line_offset: int = 0) -> None:
    """Raise ToolError at the first byte of `source` that is not valid UTF-8:
    `NAME:LINE:COL: error: invalid UTF-8 byte 0xff` and the line, with a caret."""
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as e:
        line_start = source.rfind(b"\n", 0, e.start) + 1
        line_end = source.find(b"\n", e.start)
        line = source[line_start : len(source) if line_end < 0 else line_end]
        # Columns count characters, as in the rest of the line.
        col = len(source[line_start : e.start].decode("utf-8", errors="replace")) + 1
        lineno = source.count(b"\n", 0, e.start) + 1 + line_offset
        text = line.decode("utf-8", errors="replace")
        raise ToolError(
            f"{name}:{lineno}:{col}: error: invalid UTF-8 byte 0x{source[e.start]:02x} "
            f"(.mlir files must be UTF-8)\n  {text}\n  {' ' * (col - 1)}^\n"
        ) from None


_OP_NAME = re.compile(
    r"""\s*(?:%[\w$.-]+(?::\d+)?\s*(?:,\s*%[\w$.-]+(?::\d+)?\s*)*=\s*)?"?([A-Za-z_][\w$.]*)"""
)
"""An operation's name after its optional result list (custom or generic form)."""


class LocatingParser(Parser):
    """An xDSL parser that remembers where each operation starts in the source and
    turns the errors of malformed input into located `ParseError`s: nesting deeper
    than `MAX_NESTING` regions, attributes of the wrong type, unknown ops (with
    close matches)."""

    def __init__(self, *args: Any, line_offset: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line_offset = line_offset
        self.op_spans: dict[Operation, Span[str] | Span[bytes]] = {}
        self.depth = 0
        # Where each value used before its definition is first used: a value never
        # defined is reported there, not at the end of the input.
        self.first_uses: dict[str, Span[Any]] = {}

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """Parse the whole input; a nesting too deep for Python's stack (nested
        attributes or types, not regions) is a located error too."""
        try:
            return super().parse_module(allow_implicit_module)
        except RecursionError:
            raise ParseError(self._located(self._current_token.span), "nesting too deep") from None
        except ParseError as e:
            raise self._locate_undefined(e) from None

    def resolve_operand(
        self, operand: UnresolvedOperand, type: AttributeInvT
    ) -> SSAValue[AttributeInvT]:
        """Resolve an operand, remembering where a not-yet-defined value is first used."""
        name = operand.operand_name
        if name not in self.ssa_values and name not in self.first_uses:
            self.first_uses[name] = operand.span
        return super().resolve_operand(operand, type)

    def _locate_undefined(self, err: ParseError) -> ParseError:
        """`values used but not defined: [%z]` at the end of the input becomes
        `use of undefined value '%z'` at its first use (with close matches)."""
        if not err.msg.strip().startswith("values used but not defined"):
            return err
        undefined = [n for n in self.forward_ssa_references if n in self.first_uses]
        if not undefined:
            return err
        name = min(undefined, key=lambda n: self.first_uses[n].start)
        others = [f"%{n}" for n in undefined if n != name]
        close = difflib.get_close_matches(name, list(self.ssa_values), n=3)
        msg = f"use of undefined value '%{name}'"
        if close:
            msg += f"; did you mean {', '.join(repr('%' + c) for c in close)}?"
        if others:
            msg += f" (also undefined: {', '.join(others)})"
        return ParseError(self._located(self.first_uses[name]), msg)

    def _located(self, span: Span[Any]) -> Span[Any]:
        return Span(span.start, span.end, span.input, self.line_offset)

    def parse_optional_region(self, arguments: Any = None) -> Region | None:
        """Parse a region, counting how deeply regions nest."""
        if self._current_token.kind != MLIRTokenKind.L_BRACE:
            return super().parse_optional_region(arguments)
        if self.depth >= MAX_NESTING:
            raise ParseError(
                self._located(self._current_token.span), f"nesting too deep (limit {MAX_NESTING})"
            )
        self.depth += 1
        try:
            return super().parse_optional_region(arguments)
        finally:
            self.depth -= 1

    def parse_operation(self) -> Operation:
        """Parse one operation, recording the span of its first token."""
        tok = self._current_token.span
        try:
            op = super().parse_operation()
        except ParseError as e:
            raise self._explain_unknown_op(e, tok) from None
        except (DiagnosticException, ValueError, TypeError) as e:
            # Raised while building the op from what was parsed (e.g. a property of
            # the wrong type): locate it at the op's name.
            name, span = self._op_name(tok)
            raise ParseError(self._located(span), f"'{name}': {str(e).strip()}") from None
        self.op_spans[op] = Span(tok.start, tok.end, tok.input, self.line_offset)
        return op

    def _op_name(self, start: Span[Any]) -> tuple[str, Span[Any]]:
        """The name of the op starting at `start`, and its span."""
        content = start.input.content
        text = content[start.start : start.start + 4096]
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        m = _OP_NAME.match(text)
        if m is None:
            return "?", start
        # ASCII up to the name, so character and byte offsets agree.
        return m.group(1), Span(start.start + m.start(1), start.start + m.end(1), start.input)

    def _explain_unknown_op(self, err: ParseError, start: Span[Any]) -> ParseError:
        """`Operation pd.rleu is not registered` pointing at the name, with close
        matches among the ops of its dialect (or among dialects)."""
        m = re.fullmatch(r"Operation (\S+) is not registered", err.msg.strip())
        if m is None:
            return err
        name = m.group(1)
        found, span = self._op_name(start)
        if found != name:
            span = err.span
        dialect_name, _, op_name = name.partition(".")
        dialect = self.ctx.get_optional_dialect(dialect_name)
        if dialect is not None:
            # Compared without the shared `dialect.` prefix, which would make every
            # op of the dialect look alike.
            ops = {o.name.partition(".")[2]: o.name for o in dialect.operations}
            close = [ops[c] for c in difflib.get_close_matches(op_name, list(ops), n=3, cutoff=0.7)]
        else:
            dialects = list(self.ctx.registered_dialect_names)
            close = [f"{d}.{op_name}" for d in difflib.get_close_matches(dialect_name, dialects, n=3)]
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return ParseError(self._located(span), f"{err.msg.strip()}{hint}")


def verify_ops(module: ModuleOp) -> None:
    """Verify innermost ops first (as MLIR does), then that every value is defined
    before its uses (`check_dominance`: xDSL's verifier checks no order in a
    module's body).  A VerifyException raised for an op carries that op as its
    `failed_op` attribute, so callers can locate it."""
    from pullback.dialects.dominance import check_dominance

    for op in module.walk(region_first=True):
        try:
            try:
                op.verify(verify_nested_ops=False)
            except (ValueError, TypeError, KeyError) as e:
                # A typing rule that refused its properties (`dtype = "float128"`).
                raise VerifyException(str(e).strip("'\"")) from None
            if op.name.startswith("pd."):
                check_element_types(op)
        except VerifyException as e:
            if not str(e).lstrip().startswith(f"'{op.name}'"):
                # Constraint messages ("2 : i64 should be of base attribute float")
                # do not say which op they are about.
                e = VerifyException(f"'{op.name}': {str(e).strip()}")
            e.failed_op = op  # type: ignore[attr-defined]
            raise e from None
    check_dominance(module)
    module.verify()


def check_element_types(op: Operation) -> None:
    """A `pd` op's tensors hold one of the dialect's element types (`pd.DTYPES`):
    `tensor<3xf128>` is refused where it is written, not where a backend meets it."""
    from xdsl.dialects.builtin import TensorType

    from pullback.dialects.pd.dtypes import DTYPE_BY_ELEM, DTYPES

    for kind, values in (("operand", op.operands), ("result", op.results)):
        for i, v in enumerate(values):
            t = v.type
            if isinstance(t, TensorType) and t.get_element_type() not in DTYPE_BY_ELEM:
                names = ", ".join(str(d.elem) for d in DTYPES)
                raise VerifyException(
                    f"'{op.name}': {kind} {i} has element type {t.get_element_type()}, "
                    f"which pd programs do not support (one of {names})"
                )


def parse_pd_file(
    path: str, tool: str = TOOL, spans: dict[Operation, Span[str] | Span[bytes]] | None = None
) -> ModuleOp:
    """Parse and verify a `pd` program file; errors are raised as `ToolError` with a
    located, ready-to-print message (`tool` prefixes errors that have no location).
    `spans`, if given, receives where each op starts in the file."""
    from xdsl.dialects.builtin import Builtin

    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        raise ToolError(f"{tool}: error: cannot open '{path}': {e.strerror}") from None
    check_utf8(source, path)
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.register_dialect("pd", get_pd_dialect)
    parser = LocatingParser(ctx, source, path)
    if spans is not None:
        parser.op_spans = spans
    try:
        module = parser.parse_module()
        restore_all_name_hints(module)
        verify_ops(module)
    except ParseError as e:
        raise ToolError(format_error(e.msg, e.span, path)) from None
    except VerifyException as e:
        op = getattr(e, "failed_op", None)
        span = parser.op_spans.get(op) if op is not None else None
        raise ToolError(format_error(str(e), span, path)) from None
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
        source = io.read()
        check_utf8(source, self.get_input_name(), self._line_offset)
        parser = LocatingParser(
            self.ctx, source, self.get_input_name(), line_offset=self._line_offset
        )
        module = parser.parse_module(not self.args.no_implicit_module)
        self._spans = parser.op_spans
        restore_all_name_hints(module)
        return module

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        """xDSL's arguments; `--help` ends with the named pipelines."""
        super().register_all_arguments(arg_parser)
        base = arg_parser.format_help
        parser_error = arg_parser.error

        def error(message: str) -> NoReturn:
            # An unknown `-t` lists the targets (with close matches), not the usage.
            m = re.match(r"argument -t/--target: invalid choice: '([^']*)'", message)
            if m is None:
                parser_error(message)
            raise UnknownTargetError(unknown_target_message(m.group(1), self.available_targets))

        arg_parser.error = error  # type: ignore[method-assign]
        # Built only when help is printed: describing a pipeline imports its passes.
        arg_parser.format_help = lambda: base() + pipelines_help(self.available_passes)  # type: ignore[method-assign]

    def setup_pipeline(self) -> None:
        """xDSL's pipeline, with a located verifier and tracking of the running pass."""
        self.args.passes = quote_option_values(self.args.passes)
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
        if isinstance(err, ToolError):
            return str(err)
        if isinstance(err, RecursionError):
            return format_error("nesting too deep", None, where)
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


def pipelines_help(available: Mapping[str, Callable[[], type[ModulePass]]]) -> str:
    """The `--help` section listing the named pipelines and the passes each runs."""
    lines = ["", "named pipelines (-p NAME; options in braces, e.g. lower-to-loops{blas=false}):"]
    indent = " " * 6
    for name in pullback_pipelines():
        if name not in available:
            continue
        cls = available[name]()
        lines.append(f"  {name}")
        lines.append(textwrap.fill(" ".join((cls.__doc__ or "").split()), 80, initial_indent=indent,
                                   subsequent_indent=indent))
        inner = ", ".join(p.name for p in cls().passes())  # type: ignore[attr-defined]
        lines.append(textwrap.fill(f"= {inner}", 80, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False))
    lines.append("  e.g. pullback-opt prog.mlir -p autodiff,lower-to-loops -t llvm")
    lines.append("       pullback-opt prog.mlir -p autodiff,lower-to-ptx -t ptx")
    return "\n".join(lines) + "\n"


_BARE_VALUE = re.compile(r"(?<=[={,])([^\s,{}\"=]+)")
_PLAIN = re.compile(r"[A-Za-z0-9_-]+|[-+]?[0-9]+(\.[0-9]*([eE][-+]?[0-9]+)?)?")


def quote_option_values(spec: str) -> str:
    """Quote the pass-option values of a `-p` pipeline that xDSL's pipeline lexer
    would reject (Paddle names such as `fc_0.w_0` or `x@GRAD`), so that
    `autodiff{targets=mean_0.tmp_0}` works without shell-unfriendly quotes.
    Identifiers, numbers and quoted strings are left alone."""
    out: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(spec):
        if ch == "{":
            if depth == 0:
                out.append(spec[start : i + 1])
                start = i + 1
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                out.append(_quote_values(spec[start:i]))
                start = i
    out.append(spec[start:])
    return "".join(out)


def _quote_values(options: str) -> str:
    def quote(m: re.Match[str]) -> str:
        value = m.group(1)
        return value if _PLAIN.fullmatch(value) else f'"{value}"'

    # Inside a quoted string nothing is touched.
    parts = re.split(r'("(?:\\.|[^"\\])*")', options)
    return "".join(p if p.startswith('"') else _BARE_VALUE.sub(quote, p) for p in parts)


class UnknownPassError(ValueError):
    """A pass named in `-p` is not registered."""


class UnknownTargetError(ValueError):
    """The target named with `-t` is not registered."""


def unknown_target_message(name: str, available: Mapping[str, object]) -> str:
    """`unknown target 'lvm'; did you mean 'llvm'?` and the list of targets."""
    close = difflib.get_close_matches(name, list(available), n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return f"-t {name}: error: unknown target '{name}'{hint}\navailable targets: " + ", ".join(
        sorted(available)
    )


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


_PENDING_WARNINGS: list[str] = []
"""Warnings `show_warnings_as` held back: printed after the run, after its error if
it failed (a tool reading the first line of stderr sees the error)."""


def flush_warnings() -> None:
    """Print the warnings held back so far (see `_PENDING_WARNINGS`)."""
    for line in _PENDING_WARNINGS:
        sys.stderr.write(line)
    _PENDING_WARNINGS.clear()
    sys.stderr.flush()


def run_guarded(body: Callable[[], None], describe: Callable[[BaseException], str]) -> None:
    """Run `body`; turn any exception into a short message and exit status 1.  The
    error comes first on stderr, then any warnings the run gave."""
    try:
        body()
    except (SystemExit, KeyboardInterrupt):
        flush_warnings()
        raise
    except BaseException as err:  # noqa: BLE001 - the tool must never show a traceback
        if os.environ.get("PULLBACK_TRACEBACK"):
            traceback.print_exc()
        message = describe(err)
        sys.stderr.write(message if message.endswith("\n") else message + "\n")
        flush_warnings()
        raise SystemExit(1) from None
    flush_warnings()


def _describe_setup_error(err: BaseException) -> str:
    if isinstance(err, (UnknownPassError, UnknownTargetError)):
        return f"{TOOL}: {err}"
    return f"{TOOL}: error: {str(err).strip()}"


def show_warnings_as(where: Callable[[], str]) -> None:
    """Print Python warnings raised while running as `WHERE: warning: MESSAGE` on
    stderr (no Python file, line or class name), when the run ends (`run_guarded`):
    after its error if it fails."""

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        _PENDING_WARNINGS.append(f"{where()}: warning: {str(message).strip()}\n")

    warnings.showwarning = show


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the `pullback-opt` console script."""
    driver: PullbackOptMain | None = None

    def setup() -> None:
        nonlocal driver
        driver = PullbackOptMain(args=argv)

    # Constructing the driver parses the pass pipeline: an unknown pass fails here.
    run_guarded(setup, _describe_setup_error)
    assert driver is not None
    show_warnings_as(driver.get_input_name)
    run_guarded(driver.run, driver.describe)


if __name__ == "__main__":
    main()
