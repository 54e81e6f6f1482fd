"""`python -m pullback.tools.api_table`: write docs/api.md, the supported Paddle API.

The table is generated from the frontend's registry (`frontend/api/registry.py`: the
functions each op family exports to `paddle`, `paddle.nn.functional`,
`paddle.static.nn`, `fluid.layers` and as Tensor methods, plus the families' Python
operators).  For each function, the `pd` ops it can emit are found by walking its
code (the op classes it names, and the frontend functions it calls, transitively);
from them:

* modes: `static, eager`, or `static` when the function requires static mode;
* backends: `native` when every op has a CPU lowering (the compiled backend runs
  it), `interpreter` when none has, else the ops that only the interpreter runs
  (which the function may emit only for some arguments);
* differentiable: `yes` when some op has a VJP rule, `no` when every op is declared
  non-differentiable.

A second table lists the other public names of each namespace (layers,
optimizers, initializers, ...).  `tests/unit/repo/test_api_table.py` fails when the file
is out of date; rerun this command to update it (`--check` only compares).
"""

from __future__ import annotations

import argparse
import ast
import dis
import functools
import importlib
import inspect
import json
import sys
import textwrap
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pullback.dialects import pd
from pullback.frontend.api import ALIASES, ROOT_NAMESPACE, registry
from pullback.passes import vjp as vjp_rules

OUTPUT = Path(__file__).resolve().parent.parent / "docs" / "api.md"
"""docs/api.md of the checkout this module belongs to."""

COMMAND = "python -m pullback.tools.api_table"

NAMESPACES: tuple[tuple[str, str], ...] = (
    ("PADDLE", "paddle"),
    ("FUNCTIONAL", "paddle.nn.functional"),
    ("STATIC_NN", "paddle.static.nn"),
    ("FLUID_LAYERS", "paddle.fluid.layers"),
    ("TENSOR_METHODS", "Tensor"),
)
"""Registry export list -> the public prefix of its names (in table order)."""

STRUCTURAL = frozenset(pd.STRUCTURAL_OPS)
"""Ops every backend handles as program structure, not computation."""

_OP_CLASSES = {
    name: cls for name, cls in vars(pd).items() if isinstance(cls, type) and issubclass(cls, pd.PdOp)
}


# ------------------------------------------------------------------ code analysis


def _callees(obj: Any) -> Iterable[Any]:
    """The objects a function refers to: its globals, closure cells, defaults and
    nested code's names (functools.partial: its function and arguments)."""
    if isinstance(obj, functools.partial):
        yield obj.func
        yield from obj.args
        yield from obj.keywords.values()
        return
    fn = getattr(obj, "__func__", obj)  # bound methods
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    for cell in fn.__closure__ or ():
        try:
            yield cell.cell_contents
        except ValueError:  # an empty cell
            continue
    yield from fn.__defaults__ or ()
    stack = [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval in fn.__globals__:
                yield fn.__globals__[ins.argval]
            elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval in _OP_CLASSES:
                yield _OP_CLASSES[ins.argval]  # `pd.MatmulOp`
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


def _is_frontend_function(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return (
        isinstance(obj, (types.FunctionType, functools.partial))
        and (module.startswith("pullback.frontend.ops") or module == "pullback.frontend.layers")
    ) or isinstance(obj, functools.partial)


def analyze(fn: Callable[..., Any]) -> tuple[frozenset[type[pd.PdOp]], bool]:
    """The `pd` op classes `fn` can emit, and whether it requires static mode."""
    from pullback.frontend.layers import require_static

    ops: set[type[pd.PdOp]] = set()
    static_only = False
    seen: set[int] = set()
    stack: list[Any] = [fn]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        for ref in _callees(obj):
            if ref is require_static:
                static_only = True
            elif isinstance(ref, type) and issubclass(ref, pd.PdOp):
                ops.add(ref)
            elif _is_frontend_function(ref):
                stack.append(ref)
    return frozenset(ops), static_only


# ------------------------------------------------------------------------- facts


def backends(ops: Iterable[type[pd.PdOp]]) -> str:
    """`native` when every op has a CPU lowering, `interpreter` when no computing op
    has one, else `native; interpreter: <the ops without one>`."""
    from pullback.lowering.convert_pd_to_linalg import lowering_gap

    compute = [o for o in ops if o not in STRUCTURAL]
    missing = sorted(o.name for o in compute if lowering_gap(o) is not None)
    if not missing:
        return "native"
    if len(missing) == len(compute):
        return "interpreter"
    return f"native; interpreter: {', '.join(f'`{m}`' for m in missing)}"


def differentiable(ops: Iterable[type[pd.PdOp]]) -> str:
    """`yes` if a gradient flows through some op, `no` if none can, `no VJP` when an
    op is neither differentiable nor declared non-differentiable."""
    vjp_rules.load_all()
    compute = [o for o in ops if o not in STRUCTURAL]
    if any(o in vjp_rules.VJP_RULES for o in compute):
        return "yes"
    unknown = sorted(o.name for o in compute if o not in vjp_rules.NON_DIFFERENTIABLE)
    if unknown:
        return f"no VJP ({', '.join(f'`{u}`' for u in unknown)})"
    return "no"


# ------------------------------------------------------------------------ tables


def registry_entries() -> dict[str, Callable[..., Any]]:
    """Every public name the registry gives (`paddle.add`, `Tensor.__add__`, ...) ->
    its function, in table order."""
    out: dict[str, Callable[..., Any]] = {}
    for kind, prefix in NAMESPACES:
        for name, fn in sorted(registry.gather(kind).items()):
            out[f"{prefix}.{name}"] = fn
    operators: dict[str, Callable[..., Any]] = {}
    for mod in registry.families():
        install = getattr(mod, "install_operators", None)
        if callable(install):
            probe = type("Probe", (), {})
            install(probe)
            operators.update((k, v) for k, v in vars(probe).items() if callable(v))
    for name, fn in sorted(operators.items()):
        out[f"Tensor.{name}"] = fn
    return out


PADDLE_MODULES = Path(__file__).resolve().parent.parent / "frontend" / "api" / "paddle_modules.json"
"""The public names of real Paddle's modules (recorded from Paddle 3.3.1)."""


@functools.cache
def _paddle_modules() -> tuple[str, dict[str, Any]]:
    data = json.loads(PADDLE_MODULES.read_text())
    return str(data.get("paddle_version", "?")), data["modules"]


def paddle_lacks(name: str) -> bool:
    """Whether real Paddle has no such public name (`paddle.svd`: Paddle has only
    `paddle.linalg.svd`).  `Tensor.*` methods are not recorded: never marked."""
    module, _, attr = name.rpartition(".")
    names = _paddle_modules()[1].get(module)
    return names is not None and attr not in names


def always_raises(fn: Callable[..., Any]) -> bool:
    """Whether the function's body ends in an unconditional `raise` (e.g.
    `paddle.linalg.eig`, which pullback cannot compute: complex results)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(fn))))
    except (OSError, TypeError, SyntaxError):
        return False
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.FunctionDef) else []
    return bool(body) and isinstance(body[-1], ast.Raise)


def _name_cell(name: str) -> str:
    return f"`{name}` (not in Paddle)" if paddle_lacks(name) else f"`{name}`"


def api_rows() -> list[tuple[str, str, str, str, str]]:
    """(names, modes, backends, differentiable, ops): one row per function, its
    public names together."""
    by_fn: dict[int, list[str]] = {}
    fns: dict[int, Callable[..., Any]] = {}
    for name, fn in registry_entries().items():
        by_fn.setdefault(id(fn), []).append(name)
        fns[id(fn)] = fn
    rows = []
    for key, names in by_fn.items():
        ops, static_only = analyze(fns[key])
        compute = sorted(o.name for o in ops if o not in STRUCTURAL)
        raises = not compute and always_raises(fns[key])
        rows.append((
            "<br>".join(_name_cell(n) for n in names),
            "static" if static_only else "static, eager",
            "none: raises NotImplementedError" if raises else backends(ops),
            "-" if raises else differentiable(ops),
            ", ".join(f"`{c}`" for c in compute) or "-",
        ))
    return rows


def _public_names(module_name: str) -> list[str]:
    mod = importlib.import_module(module_name)
    names = set(getattr(mod, "__all__", None) or (
        n for n, v in vars(mod).items()
        if not n.startswith("_") and getattr(v, "__module__", None) == module_name
    ))
    names |= set(dir(mod)) - set(vars(mod))  # loaded on first use (module __getattr__)
    return sorted(n for n in names if not n.startswith("_"))


def namespace_rows() -> list[tuple[str, str]]:
    """(namespace, other public names): what each namespace offers besides the
    registry's functions (layers, optimizers, initializers, helpers)."""
    in_table = {id(fn) for fn in registry_entries().values()}
    spaces = {"paddle": ROOT_NAMESPACE, **{f"paddle.{a}": m for a, m in ALIASES.items()}}
    rows = []
    for space, module_name in sorted(spaces.items()):
        mod = importlib.import_module(module_name)
        names = [n for n in _public_names(module_name) if id(getattr(mod, n, None)) not in in_table]
        subspaces = {s.rsplit(".", 1)[1] for s in spaces if s.startswith(space + ".") and s.count(".") == space.count(".") + 1}
        names = [n for n in names if n not in subspaces]
        if names:
            rows.append((f"`{space}`", ", ".join(f"`{n}`" for n in names)))
    return rows


def render() -> str:
    """The whole of docs/api.md."""
    lines = [
        "# Supported Paddle API",
        "",
        f"<!-- Generated by `{COMMAND}` from the frontend's registry; do not edit. -->",
        "",
        "`import pullback as paddle` supports the names below.  Functions of the op",
        "families, with the `pd` ops they can emit (found in their code: some only for",
        "some arguments, e.g. `paddle.where(cond)` alone emits `pd.nonzero`):",
        "",
        "* **modes**: `static` (after `paddle.enable_static()`) and/or `eager` (Paddle 2.x's",
        "  default dygraph mode);",
        "* **backends**: `native` when the compiled CPU backend (`Executor(CPUPlace())`'s",
        "  default) runs every op, `interpreter` when it runs none (the default backend",
        "  falls back to the numpy interpreter), else the ops only the interpreter runs;",
        "* **differentiable**: whether gradients flow through it (`no` for comparisons,",
        "  constants and other integer-valued results).",
        "",
        "`Tensor.*` are methods of eager Tensors and static Variables alike.  A name",
        f"marked *(not in Paddle)* is pullback's own spelling: real Paddle {_paddle_modules()[0]} has",
        "no such public name (e.g. `paddle.svd`: Paddle has `paddle.linalg.svd`), so code",
        "using it runs only on pullback.  Functions marked *none: raises* are accepted",
        "names that always raise `NotImplementedError` (saying what is missing).",
        "",
        "| API | modes | backends | differentiable | `pd` ops |",
        "|---|---|---|---|---|",
    ]
    for row in api_rows():
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "## Other names",
        "",
        "Layers, optimizers, initializers, program and executor classes and helpers of",
        "each namespace, built on the functions above:",
        "",
        "| namespace | names |",
        "|---|---|",
    ]
    for space, names in namespace_rows():
        lines.append(f"| {space} | {names} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Write docs/api.md (or, with `--check`, exit 1 when it is out of date)."""
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"file to write (default: {OUTPUT})")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 if the file differs")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            sys.stderr.write(f"{args.output} is out of date: run `{COMMAND}`\n")
            raise SystemExit(1)
        return
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
