"""LLVM on every core: a module's functions split into chunks, each chunk parsed,
optimized and emitted as an object file on a thread of its own.

The compiled backend's LLVM IR is many independent functions (the entry, its
outlined segments and their parallel-loop bodies, `lowering/outline_segments.py`):
LLVM's O3 and instruction selection work one function at a time (the outlined
functions are external and `noinline`, so little crosses functions: attributes
inferred for a callee), so a module cut into chunks optimizes to the same code per
function (bit-identical results, tests/unit/runtime/native/test_llvm_chunks.py), and the chunks' object files
linked together into the JIT (MCJIT resolves the calls between them) make the same
program.  `split_module` cuts the IR text; `emit_chunks` compiles the chunks in
parallel, each in its own LLVM context and with its own target machine (LLVM is
thread-safe across contexts; a target machine is not shared between threads).

llvmlite serializes every call into LLVM through one process-wide lock
(`llvmlite.binding.ffi`), which would run the threads one after another: the three
long calls (parse, the pass pipeline, object emission) are made through the raw
ctypes functions instead, which release the GIL and take no lock; every other
call goes through llvmlite as usual.  Process-wide LLVM options (`llvm.set_option`)
must not change while chunks compile: the caller sets them first.

Functions without loops (the entry, which only allocates and calls the segments,
and segments of scalar work) are gathered in a chunk of their own and emitted with
LLVM's fast instruction selector and register allocator (`Chunk.loop_free`): their
code runs once per step, and the full code generator took most of their compile
(ResNet-18's entry: 316 ms to emit at O3, 61 ms fast; its IR still optimized at O3).

A function that is not externally visible (internal or private linkage: the thread
pool's fork and trampoline functions) stays in the chunk of every function that
refers to it, with it (they are grouped before chunks are filled), so no chunk
calls another chunk's private symbol.  The cut depends only on the IR text (never on
the thread count): the same program always compiles to the same object files.
"""

from __future__ import annotations

import ctypes
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pullback.runtime.interrupts import deferred_interrupts

MAX_CHUNKS = 8
"""A module is cut into up to this many chunks, whatever the number of compile
threads, so that the object code never depends on the threads (or on the machine's
load, which decides them); more chunks than threads let a thread that is done take
the next chunk, so one slow chunk (a conv's loop nest costs LLVM far more per line
than the entry's calls) does not leave the others idle."""

MIN_CHUNK_CHARS = 15_000
"""IR text per chunk below which a module is not split further (a chunk costs a
context, a parse and a pass-pipeline set-up; a small module compiles faster whole)."""

_NAME = re.compile(r'@"((?:[^"\\]|\\.)*)"|@([-\w.$]+)')
"""A global's name in LLVM IR text, quoted (`@"a.b"`) or bare (`@abc`)."""

_LOCAL_LINKAGES = frozenset({"internal", "private"})

_LABEL = re.compile(r'^(?:"((?:[^"\\]|\\.)*)"|([-\w.$]+)):', re.M)
"""A basic block's label at the start of a line (`loop.header:`, `".11":`)."""

_TARGET = re.compile(r'label %(?:"((?:[^"\\]|\\.)*)"|([-\w.$]+))')
"""A branch target in a terminator (`label %"loop.header"`)."""


@dataclass
class _Global:
    """One top-level definition of the IR text: a function body or a global variable."""

    name: str
    text: str
    head: str
    """The line that declares it (a function's `define` line)."""
    is_function: bool
    local: bool
    """Internal or private linkage: visible only inside its module."""
    refs: set[str] = field(default_factory=set)
    loop_free: bool = True
    """No cycle in its control flow (always true of a global variable)."""


@dataclass
class Chunk:
    """One part of a split module: LLVM IR text that parses alone."""

    text: str
    functions: list[str]
    """The functions it defines (named in error messages)."""
    loop_free: bool = False
    """Every function it defines is loop-free (`has_loop`): `ChunkCompiler` emits it
    with the fast code generator."""


def has_loop(function: str) -> bool:
    """Whether the control flow of `function` (one `define ... { ... }` of LLVM IR
    text) has a cycle: a depth-first walk of its blocks from the entry finds an
    edge back to a block on the walk's path."""
    body = function.split("{", 1)[1] if "{" in function else function
    labels = list(_LABEL.finditer(body))
    if not labels:
        return False  # one unlabeled block: no branch can target it
    blocks: dict[str, list[str]] = {}
    order: list[str] = []
    if body[: labels[0].start()].strip().strip("}").strip():
        order.append("")  # an unlabeled entry block before the first label
        blocks[""] = [t.group(1) or t.group(2) for t in _TARGET.finditer(body[: labels[0].start()])]
    for k, m in enumerate(labels):
        end = labels[k + 1].start() if k + 1 < len(labels) else len(body)
        name = m.group(1) if m.group(1) is not None else m.group(2)
        order.append(name)
        blocks[name] = [t.group(1) if t.group(1) is not None else t.group(2) for t in _TARGET.finditer(body, m.end(), end)]
    state: dict[str, int] = {}  # 1: on the path, 2: done
    stack: list[tuple[str, Iterator[str]]] = [(order[0], iter(blocks[order[0]]))]
    state[order[0]] = 1
    while stack:
        block, succs = stack[-1]
        nxt = next(succs, None)
        if nxt is None:
            state[block] = 2
            stack.pop()
        elif state.get(nxt) == 1:
            return True
        elif nxt not in state and nxt in blocks:
            state[nxt] = 1
            stack.append((nxt, iter(blocks[nxt])))
    return False


def _name_of(head: str) -> str:
    m = _NAME.search(head.split("(", 1)[0] if head.startswith(("define", "declare")) else head)
    if m is None:
        raise ValueError(f"no global name in LLVM IR line {head[:120]!r}")
    return m.group(1) if m.group(1) is not None else m.group(2)


def _is_local(head: str) -> bool:
    words = head.split("(", 1)[0].split() if head.startswith("define") else head.split("=", 1)[-1].split()
    return bool(_LOCAL_LINKAGES.intersection(words))


def _parse(ir: str) -> tuple[list[str], list[_Global]]:
    """The module-level lines every chunk needs (declarations, types, attribute
    groups, metadata) and the definitions (functions, global variables), in order."""
    common: list[str] = []
    defs: list[_Global] = []
    lines = ir.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("define"):
            j = i
            while j < len(lines) and lines[j] != "}":
                j += 1
            if j == len(lines):
                raise ValueError(f"unterminated function in LLVM IR: {line[:120]!r}")
            text = "\n".join(lines[i : j + 1])
            g = _Global(_name_of(line), text, line, True, _is_local(line), loop_free=not has_loop(text))
            g.refs = {m.group(1) if m.group(1) is not None else m.group(2) for m in _NAME.finditer(text)}
            defs.append(g)
            i = j + 1
            continue
        if line.startswith("@"):
            g = _Global(_name_of(line), line, line, False, _is_local(line))
            g.refs = {m.group(1) if m.group(1) is not None else m.group(2) for m in _NAME.finditer(line)}
            defs.append(g)
        elif line.startswith(("declare", "%", "attributes", "!")):
            common.append(line)
        i += 1
    return common, defs


def _groups(defs: Sequence[_Global]) -> list[list[int]]:
    """Definitions that must share a chunk (a local symbol with everything that uses
    it; a global variable with every function using it), in order of first definition."""
    index = {g.name: k for k, g in enumerate(defs)}
    parent = list(range(len(defs)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for k, g in enumerate(defs):
        for name in g.refs:
            j = index.get(name)
            if j is not None and j != k and (defs[j].local or not defs[j].is_function):
                parent[find(j)] = find(k)
    groups: dict[int, list[int]] = {}
    for k in range(len(defs)):
        groups.setdefault(find(k), []).append(k)
    return list(groups.values())


def split_module(ir: str, n: int, min_chars: int | None = None) -> list[Chunk]:
    """`ir` (a module's LLVM IR text) cut into at most `n` chunks of at least about
    `min_chars` (default `MIN_CHUNK_CHARS`) characters each, balanced by size; each
    chunk defines its share of the functions and declares the others it calls.  One chunk (the module as it is)
    when `n` is 1 or the module is small."""
    common, defs = _parse(ir)
    min_chars = MIN_CHUNK_CHARS if min_chars is None else min_chars
    n = max(1, min(n, len(ir) // max(min_chars, 1)))
    groups = _groups(defs)
    if n == 1 or len(groups) < 2:
        return [Chunk(ir, [g.name for g in defs if g.is_function], all(g.loop_free for g in defs))]
    n = min(n, len(groups))
    sizes = [sum(len(defs[k].text) for k in g) for g in groups]
    members: list[list[int]] = []
    flat = [i for i, g in enumerate(groups) if all(defs[k].loop_free for k in g)]
    if flat and len(flat) < len(groups):
        # The loop-free functions in one chunk of their own, for the fast code
        # generator; the rest balanced over the other chunks.
        members.append([k for i in flat for k in groups[i]])
        n -= 1
    # Largest groups first, each to the lightest chunk (ties: the lower index):
    # deterministic for a given text.
    taken = set(flat) if members else set()
    order = sorted((i for i in range(len(groups)) if i not in taken), key=lambda i: (-sizes[i], i))
    n = max(1, min(n, len(order)))
    balanced: list[list[int]] = [[] for _ in range(n)]
    load = [0] * n
    for gi in order:
        c = min(range(n), key=lambda c: (load[c], c))
        balanced[c].extend(groups[gi])
        load[c] += sizes[gi]
    members.extend(balanced)
    header = [line for line in ir.split("\n", 3)[:3] if line.startswith(("target", "source_filename"))]
    chunks = []
    for mine in members:
        own = set(mine)
        used = set().union(*(defs[k].refs for k in own))
        out = [*header, *common]
        for k, g in enumerate(defs):
            if k in own:
                out.append(g.text)
            elif g.is_function and g.name in used:
                out.append(g.head.removesuffix("{").rstrip().replace("define", "declare", 1))
        chunks.append(Chunk("\n".join(out) + "\n", [defs[k].name for k in sorted(own) if defs[k].is_function],
                            all(defs[k].loop_free for k in own)))
    return chunks


class ChunkError(RuntimeError):
    """LLVM rejected or failed on one chunk (the message names its functions)."""


@dataclass
class ChunkTimes:
    """Seconds one chunk spent in each LLVM step (on its own thread)."""

    parse: float = 0.0
    optimize: float = 0.0
    codegen: float = 0.0


def _raw(llvm: Any, name: str) -> Any:
    """The ctypes function behind llvmlite's `ffi.lib.<name>`, without llvmlite's
    process-wide lock (its argument and result types already set by llvmlite)."""
    getattr(llvm.ffi.lib, name)  # llvmlite configures the function on first access
    return getattr(llvm.ffi.lib._lib, name)


def _emit_one(
    llvm: Any,
    chunk: Chunk,
    tm: Any,
    make_pass_builder: Callable[[Any], Any],
    times: ChunkTimes,
    emit_tm: Any | None = None,
) -> bytes:
    """Parse, verify, optimize (pipeline made with `tm`) and emit (with `emit_tm`,
    default `tm`) one chunk in a fresh context (any thread)."""
    context = llvm.create_context()
    try:
        t = time.perf_counter()
        with llvm.ffi.OutputString() as err:
            ptr = _raw(llvm, "LLVMPY_ParseAssembly")(context, ctypes.c_char_p(chunk.text.encode()), err)
            if not ptr:
                raise ChunkError(f"LLVM IR parsing error: {err}")
        mod = llvm.ModuleRef(ptr, context)
        try:
            mod.triple = tm.triple
            mod.data_layout = str(tm.target_data)
            with llvm.ffi.OutputString() as err:
                if _raw(llvm, "LLVMPY_VerifyModule")(mod, err):
                    raise ChunkError(f"LLVM IR verification error: {err}")
            t1 = time.perf_counter()
            pb = make_pass_builder(tm)
            _raw(llvm, "LLVMPY_RunNewModulePassManager")(pb.getModulePassManager(), mod, pb)
            t2 = time.perf_counter()
            with llvm.ffi.OutputString() as err:
                buf = _raw(llvm, "LLVMPY_TargetMachineEmitToMemory")(emit_tm or tm, mod, 1, err)
                if not buf:
                    raise ChunkError(f"LLVM code generation error: {err}")
            try:
                obj = ctypes.string_at(llvm.ffi.lib.LLVMPY_GetBufferStart(buf), llvm.ffi.lib.LLVMPY_GetBufferSize(buf))
            finally:
                llvm.ffi.lib.LLVMPY_DisposeMemoryBuffer(buf)
            times.parse, times.optimize, times.codegen = t1 - t, t2 - t1, time.perf_counter() - t2
        finally:
            mod.close()
    finally:
        context.close()
    return obj


class ChunkCompiler:
    """Compiles chunks on threads while more are still being written: `submit`
    hands a chunk to the `len(tms) - 1` helper threads started at once (the calling
    thread is busy writing the IR); `finish` makes the calling thread compile too
    until every chunk is done.  Thread `t` compiles with target machine `tms[t]` (or
    `fast_tms[t]`, made with code-generation level 0, for a `loop_free` chunk);
    `make_pass_builder(tm)` gives the optimization pipeline (always made with
    `tms[t]`).  Each thread takes the next chunk not yet taken, so unequal chunks
    still keep every thread busy."""

    def __init__(
        self,
        llvm: Any,
        tms: Sequence[Any],
        make_pass_builder: Callable[[Any], Any],
        fast_tms: Sequence[Any] | None = None,
    ) -> None:
        if not tms:
            raise ValueError("ChunkCompiler: no target machine given")
        self.llvm, self.tms, self.fast_tms, self.make_pass_builder = llvm, tms, fast_tms, make_pass_builder
        self.chunks: list[Chunk] = []
        self.objs: list[bytes | None] = []
        self.times: list[ChunkTimes] = []
        self.errors: list[BaseException | None] = []
        self.objects: list[bytes] = []
        """The object files, in submission order, once `finish` has returned."""
        self._next = 0
        self._closed = False
        self._cv = threading.Condition()
        self._threads = [
            threading.Thread(target=self._work, args=(t,), name=f"pullback-llvm-{t}", daemon=True)
            for t in range(1, len(tms))
        ]
        for th in self._threads:
            th.start()

    def submit(self, chunk: Chunk) -> None:
        """Queue `chunk` (compiled in submission order, its object file at that index)."""
        with self._cv:
            self.chunks.append(chunk)
            self.objs.append(None)
            self.times.append(ChunkTimes())
            self.errors.append(None)
            self._cv.notify()

    def _take(self) -> int | None:
        with self._cv:
            while self._next >= len(self.chunks) and not self._closed:
                self._cv.wait()
            if self._next >= len(self.chunks):
                return None
            self._next += 1
            return self._next - 1

    def _work(self, t: int) -> None:
        while (i := self._take()) is not None:
            chunk = self.chunks[i]
            fast = self.fast_tms[t] if self.fast_tms is not None and chunk.loop_free else None
            try:
                self.objs[i] = _emit_one(self.llvm, chunk, self.tms[t], self.make_pass_builder, self.times[i], fast)
            except BaseException as e:  # reported on the calling thread
                self.errors[i] = e

    def cancel(self) -> None:
        """Drop the chunks no thread has taken and wait for the helper threads (the
        IR could not be written to the end)."""
        with self._cv:
            self._closed = True
            self._next = len(self.chunks)
            self._cv.notify_all()
        for th in self._threads:
            th.join()

    def finish(self) -> tuple[list[bytes], list[ChunkTimes]]:
        """Every chunk's object file (in submission order) and times, the calling
        thread compiling along; a failure in any chunk raises `ChunkError` naming
        that chunk's functions, once every thread is done."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        try:
            self._work(0)
        except BaseException:
            # Ctrl-C while this thread compiled a chunk: the helpers must not go
            # on with the target machines the next compile will use.
            with deferred_interrupts():
                self.cancel()
            raise
        for th in self._threads:
            th.join()
        n = len(self.chunks)
        for i, e in enumerate(self.errors):
            if e is not None:
                names = self.chunks[i].functions
                shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
                where = f"chunk {i + 1} of {n} (functions {shown})" if n > 1 else f"functions {shown}"
                raise ChunkError(f"LLVM failed on {where}: {e}") from e
        self.objects = [o for o in self.objs if o is not None]
        return self.objects, self.times


def emit_chunks(
    llvm: Any,
    chunks: Sequence[Chunk],
    tms: Sequence[Any],
    make_pass_builder: Callable[[Any], Any],
    fast_tms: Sequence[Any] | None = None,
) -> tuple[list[bytes], list[ChunkTimes]]:
    """Object files of `chunks` (in order) and their times, compiled by up to
    `len(tms)` threads, the calling one among them (`ChunkCompiler`)."""
    compiler = ChunkCompiler(llvm, tms[: max(1, len(chunks))], make_pass_builder, fast_tms)
    for chunk in chunks:
        compiler.submit(chunk)
    return compiler.finish()


STREAM_CHUNK_CHARS = 15_000
"""IR text per chunk that `ChunkWriter` hands on (a chunk costs a context, a parse
and a pass-pipeline set-up, about 2 ms; ResNet-18's 0.8 MB of IR makes about 30)."""


class ChunkWriter:
    """Cuts an llvmlite module into chunks while it is being written, so that LLVM
    compiles the first chunks (`ChunkCompiler`) while the rest is translated.

    `add` takes one group of functions, each written in full: a function with every
    internal function only it calls (a segment with its forks and trampolines).  Groups
    gather, in order, into a chunk of loop-free functions and a chunk of the rest,
    each handed to `sink` once it holds `min_chars` of IR text (`close` hands on what
    is left).  A chunk declares the functions its own call and carries the module's
    metadata so far (what its functions refer to was made before them).  The cut
    depends only on the IR, never on the threads."""

    def __init__(self, sink: Callable[[Chunk], None], min_chars: int | None = None) -> None:
        self.sink = sink
        self.min_chars = STREAM_CHUNK_CHARS if min_chars is None else min_chars
        self._parts: dict[bool, tuple[list[str], list[str]]] = {True: ([], []), False: ([], [])}
        self._chars = {True: 0, False: 0}
        self._module: Any = None
        self._flushed = False
        """Whether a chunk was handed on already."""

    def add(self, module: Any, functions: Sequence[Any]) -> None:
        """One group of `module`'s functions (`llvmlite.ir.Function`s, written)."""
        self._module = module
        texts = [str(f) for f in functions]
        flat = not any(has_loop(t) for t in texts)
        own_texts, names = self._parts[flat]
        own_texts.extend(texts)
        names.extend(f.name for f in functions)
        self._chars[flat] += sum(map(len, texts))
        if self._chars[flat] >= self.min_chars:
            self._flush(flat)

    def close(self) -> None:
        """Hand on the chunks not yet full.  A module that never filled a chunk (a
        small program) goes as one chunk, loop-free functions included: each chunk
        costs a pass pipeline, and llvmlite never frees part of one (about 75 KB per
        chunk with llvmlite 0.50, `benchmarks/bench_program_memory.py`), so a small
        program compiled in one chunk leaves half of what it did in two."""
        if not self._flushed and self._parts[True][1] and self._parts[False][1]:
            (flat_texts, flat_names), (texts, names) = self._parts[True], self._parts[False]
            self._parts[False] = (texts + flat_texts, names + flat_names)
            self._parts[True] = ([], [])
        for flat in (False, True):
            if self._parts[flat][1]:
                self._flush(flat)

    def _flush(self, flat: bool) -> None:
        texts, names = self._parts[flat]
        mod = self._module
        if any(not hasattr(g, "function_type") for g in mod.globals.values()):
            raise ChunkError("ChunkWriter: global variables are not cut into chunks (none is expected)")
        mine = set(names)
        used = {m.group(1) if m.group(1) is not None else m.group(2) for t in texts for m in _NAME.finditer(t)}
        out = [f'target triple = "{mod.triple}"', f'target datalayout = "{mod.data_layout}"']
        out += [t.get_declaration() for t in mod.get_identified_types().values()]
        for name in sorted(used - mine):
            f = mod.globals.get(name)
            if f is None or f.linkage in _LOCAL_LINKAGES:
                continue
            if f.is_declaration:
                out.append(str(f))
            else:
                ft = f.function_type
                out.append(f"declare {ft.return_type} {f.get_reference()}({', '.join(map(str, ft.args))})")
        out += texts
        for k, v in mod.namedmetadata.items():
            out.append(f"!{k} = !{{ {', '.join(i.get_reference() for i in v.operands)} }}")
        out += [str(md) for md in mod.metadata]
        self.sink(Chunk("\n".join(out) + "\n", list(names), flat))
        self._flushed = True
        self._parts[flat] = ([], [])
        self._chars[flat] = 0
