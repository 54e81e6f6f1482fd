"""Peak memory of a lowered program: live-buffer analysis of `memref.alloc`/`dealloc`.

`convert-pd-to-linalg` gives every temporary a `memref.alloc` and frees it with a
`memref.dealloc` right after its last reader.  Walking the entry function in program
order and keeping the running sum of allocated bytes gives the peak number of bytes of
temporaries live at once, and the buffers live at that point ("what makes the peak").
Feeds, parameters and fetched outputs are caller-owned (entry-function arguments) and
are reported separately as `argument_bytes` where their sizes are static.

A buffer with dynamic dimensions has a *symbolic* size: a coefficient times a product
of `index` arguments of the entry function (`%x_d0`, the batch size of feed `x`).
`MemoryReport.peak(dims)` resolves the symbols (unbound ones take `default`) and picks
the peak under those sizes; the compiled backend binds them from the feed shapes
(`CompiledProgram.memory_peak`).

```
pullback-opt prog.mlir -p autodiff,memory-report -o /dev/null
pullback-opt prog.mlir -p 'autodiff,recompute{checkpoints=fc_0.tmp_2},memory-report{dims="x_d0=64"}'
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute, BlockArgument, SSAValue
from xdsl.passes import ModulePass

Monomial = tuple[str, ...]
"""A product of symbolic dimensions (sorted names; `()` is the constant 1)."""


def _elem_bytes(elem: Attribute) -> int:
    width = getattr(elem, "bitwidth", None)
    if width is None:
        width = getattr(elem, "width", None)
        width = width.data if width is not None else 64  # index and friends: 64-bit
    return max(1, (int(width) + 7) // 8)


@dataclass(frozen=True)
class Size:
    """`coef * prod(symbols)` bytes (a product of static sizes and dynamic dims)."""

    coef: int
    symbols: Monomial = ()

    def value(self, dims: Mapping[str, int], default: int = 1) -> int:
        """The size in bytes with `dims` bound (unbound symbols take `default`)."""
        n = self.coef
        for s in self.symbols:
            n *= int(dims.get(s, default))
        return n

    def __str__(self) -> str:
        return "*".join([str(self.coef), *self.symbols]) if self.symbols else str(self.coef)


@dataclass
class Buffer:
    """One allocation: its name (the `pd` value it holds, where known), type and size."""

    name: str
    type: str
    size: Size


@dataclass
class Peak:
    """The peak under one binding of the dynamic dimensions."""

    bytes: int
    live: list[Buffer]
    """The buffers live at the peak, largest first."""
    position: int
    """Index of the allocation that reached the peak, in allocation order."""


@dataclass
class MemoryReport:
    """Allocation events of one entry function, in program order."""

    function: str
    events: list[tuple[str, Buffer]] = field(default_factory=list)
    """('alloc' | 'free', buffer)."""
    arguments: list[Buffer] = field(default_factory=list)
    """Caller-owned buffers: feeds, parameters, outputs."""

    @property
    def buffers(self) -> list[Buffer]:
        """Every temporary, in allocation order."""
        return [b for kind, b in self.events if kind == "alloc"]

    def peak(self, dims: Mapping[str, int] | None = None, default: int = 1) -> Peak:
        """The peak bytes of live temporaries with the dynamic dims bound."""
        dims = dims or {}
        live: dict[int, Buffer] = {}
        cur = best = 0
        best_live: list[Buffer] = []
        best_pos = -1
        n_alloc = 0
        for kind, b in self.events:
            if kind == "alloc":
                live[id(b)] = b
                cur += b.size.value(dims, default)
                if cur > best:
                    best, best_live, best_pos = cur, list(live.values()), n_alloc
                n_alloc += 1
            elif id(b) in live:
                del live[id(b)]
                cur -= b.size.value(dims, default)
        best_live.sort(key=lambda b: -b.size.value(dims, default))
        return Peak(best, best_live, best_pos)

    def argument_bytes(self, dims: Mapping[str, int] | None = None, default: int = 1) -> int:
        """Bytes of the caller-owned buffers (feeds, parameters, outputs)."""
        return sum(b.size.value(dims or {}, default) for b in self.arguments)

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON data (the compile cache stores it; `from_json`
        reads it back): buffers listed once, events and arguments by index."""
        buffers: list[Buffer] = []
        index: dict[int, int] = {}

        def ref(b: Buffer) -> int:
            if id(b) not in index:
                index[id(b)] = len(buffers)
                buffers.append(b)
            return index[id(b)]

        events = [[kind, ref(b)] for kind, b in self.events]
        arguments = [ref(b) for b in self.arguments]
        return {"function": self.function, "events": events, "arguments": arguments,
                "buffers": [[b.name, b.type, b.size.coef, list(b.size.symbols)] for b in buffers]}

    @staticmethod
    def from_json(data: Any) -> MemoryReport:
        """The report `to_json` wrote (ValueError if `data` is not of that shape)."""
        try:
            buffers = [Buffer(str(name), str(type_), Size(int(coef), tuple(str(s) for s in syms)))
                       for name, type_, coef, syms in data["buffers"]]

            def buffer(i: Any) -> Buffer:
                if not isinstance(i, int) or not 0 <= i < len(buffers):
                    raise ValueError(f"no buffer {i!r}")
                return buffers[i]

            events = [(str(kind), buffer(i)) for kind, i in data["events"]]
            if any(kind not in ("alloc", "free") for kind, _ in events):
                raise ValueError("unknown event")
            return MemoryReport(str(data["function"]), events, [buffer(i) for i in data["arguments"]])
        except (KeyError, IndexError, TypeError, ValueError) as e:
            raise ValueError(f"not a memory report: {e}") from None

    def format(self, dims: Mapping[str, int] | None = None, default: int = 1, top: int = 8) -> str:
        """A human-readable report (one `//` comment line per fact)."""
        pk = self.peak(dims, default)
        syms = sorted({s for _, b in self.events for s in b.size.symbols})
        bound = ", ".join(f"{s}={(dims or {}).get(s, default)}" for s in syms)
        lines = [
            f"// memory-report @{self.function}: {len(self.buffers)} temporaries, "
            f"peak {pk.bytes} bytes live" + (f" (with {bound})" if bound else ""),
            f"// arguments (feeds, parameters, outputs): {self.argument_bytes(dims, default)} bytes",
        ]
        for b in pk.live[:top]:
            lines.append(f"//   {b.name}: {b.type} = {b.size} bytes")
        if len(pk.live) > top:
            lines.append(f"//   ... and {len(pk.live) - top} more")
        return "\n".join(lines)


def _symbol(v: SSAValue, memo: dict[SSAValue, Size]) -> Size:
    """An `index` value as a symbolic size (constants fold, products multiply)."""
    if v in memo:
        return memo[v]
    owner = v.owner
    out: Size
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        out = Size(owner.value.value.data)
    elif isinstance(owner, arith.MuliOp):
        a, b = _symbol(owner.lhs, memo), _symbol(owner.rhs, memo)
        out = Size(a.coef * b.coef, tuple(sorted(a.symbols + b.symbols)))
    else:
        name = v.name_hint or (f"arg{v.index}" if isinstance(v, BlockArgument) else f"v{len(memo)}")
        out = Size(1, (name,))
    memo[v] = out
    return out


def _buffer(v: SSAValue, memo: dict[SSAValue, Size], dyn: list[SSAValue], name: str) -> Buffer:
    t = v.type
    assert isinstance(t, MemRefType)
    size = Size(_elem_bytes(t.get_element_type()))
    it = iter(dyn)
    for d in t.get_shape():
        s = _symbol(next(it), memo) if d < 0 else Size(d)
        size = Size(size.coef * s.coef, tuple(sorted(size.symbols + s.symbols)))
    return Buffer(name, str(t), size)


def analyze_function(fn: func.FuncOp) -> MemoryReport:
    """The allocation events of a lowered entry function (memref level)."""
    report = MemoryReport(fn.sym_name.data)
    memo: dict[SSAValue, Size] = {}
    args = list(fn.body.block.args)
    for a in args:
        if isinstance(a.type, MemRefType) and all(d >= 0 for d in a.type.get_shape()):
            report.arguments.append(_buffer(a, memo, [], a.name_hint or f"arg{a.index}"))
    by_mem: dict[SSAValue, Buffer] = {}
    for op in fn.walk():
        if isinstance(op, memref.AllocOp):
            name = op.memref.name_hint or f"tmp{len(by_mem)}"
            b = _buffer(op.memref, memo, list(op.dynamic_sizes), name)
            by_mem[op.memref] = b
            report.events.append(("alloc", b))
        elif isinstance(op, memref.DeallocOp) and op.memref in by_mem:
            report.events.append(("free", by_mem[op.memref]))
    return report


def analyze_module(module: ModuleOp) -> list[MemoryReport]:
    """Reports for every function of a lowered module, or of the `pd` program in it
    (lowered on a copy with `convert-pd-to-linalg`'s entry builder)."""
    fns = [op for op in module.body.block.ops if isinstance(op, func.FuncOp)]
    if not fns:
        from pullback.lowering.convert_pd_to_linalg import build_entry

        fn, _ = build_entry(module)
        fns = [fn]
    return [analyze_function(f) for f in fns if f.body.blocks]


def parse_dims(spec: str) -> dict[str, int]:
    """`"x_d0=64,y_d0=3"` (quoted inside a `-p` pipeline)
    -> `{"x_d0": 64, "y_d0": 3}`; a clear error otherwise."""
    out: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in spec.replace(";", ",").split(","))):
        name, eq, val = item.partition("=")
        if not eq or not val.strip().lstrip("-").isdigit():
            raise ValueError(f"memory-report: dims entry '{item}' is not NAME=INTEGER")
        out[name.strip()] = int(val)
    return out


@dataclass(frozen=True)
class MemoryReportPass(ModulePass):
    """Print the peak bytes of live temporaries (and which buffers make the peak) of
    each function, or of the `pd` program once lowered; the IR is left unchanged.
    The report goes to stdout as `//` comment lines, before the printed IR."""

    name = "memory-report"

    dims: str = ""
    """Bindings of dynamic dimensions (entry-function `index` args), quoted in a
    pipeline: `memory-report{dims="x_d0=64,y_d0=8"}`."""
    default: int = 1
    """The value of a dynamic dimension `dims` does not bind."""
    top: int = 8
    """How many of the buffers live at the peak to list."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        dims = parse_dims(self.dims)
        for r in analyze_module(op):
            print(r.format(dims, self.default, self.top), flush=True)


__all__ = [
    "Buffer",
    "MemoryReport",
    "MemoryReportPass",
    "Peak",
    "Size",
    "analyze_function",
    "analyze_module",
    "parse_dims",
]
