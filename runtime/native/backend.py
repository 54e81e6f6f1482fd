"""The compiled CPU backend: `pd` programs run as native code built by our pipeline.

`CompiledBackend().run(module, feeds, scope, fetches)` is the executor's backend seam
(`runtime/executor.py`; `make_backend` is its factory, `BACKEND_MODULES["compiled"]`).
This module owns the in-memory caches of compiled programs and the choice of what
runs where; compiling is `native/compiler.py`'s, calling the native code
`native/program.py`'s (the package's docstring lists the rest).

- *Compile* once per program content, fetch list and feed dtypes/ranks
  (`compile_program`).  Compiled programs are kept per backend, least recently used
  first out beyond `cache_size` (default `DEFAULT_CACHE_SIZE`, 64 programs) or
  `cache_bytes` (`PULLBACK_PROGRAM_CACHE_BYTES`, default `DEFAULT_CACHE_BYTES`),
  found by the module's identity (without printing it) or by its printed content
  (equal programs share code).  A dropped program's machine code is freed with its
  engine (`native/jit.py`).
- *Run* with `execute`: the feeds are checked before any native code runs.
- Startup-style programs (host-only initializers) run on the interpreter by design.
  Programs that do not compile raise `NotCompilable`; `CompiledBackend(fallback=True)`
  then runs them on the interpreter instead, with a warning, never silently.
"""

from __future__ import annotations

import hashlib
import os
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Region, SSAValue

from pullback.dialects.pd.base import PdOp
from pullback.runtime.native.compiler import NotCompilable, compile_program, value_positions
from pullback.runtime.native.env import int_setting
from pullback.runtime.native.jit import Jit
from pullback.runtime.native.program import CompiledProgram, execute, remember

DEFAULT_CACHE_SIZE = 64
"""Compiled programs one `CompiledBackend` keeps (least recently used dropped first).
A program is specialized to its static shapes, so a workload whose shapes keep
changing would otherwise grow the cache, and the process, without bound."""

DEFAULT_CACHE_BYTES = 256 << 20
"""The bytes of compiled programs one `CompiledBackend` keeps (`program_bytes`; least
recently used dropped first) when `PULLBACK_PROGRAM_CACHE_BYTES` is unset: a bound
for a few very large programs, where `DEFAULT_CACHE_SIZE` bounds many small ones."""

PROGRAM_OVERHEAD_BYTES = 16 << 10
"""What a linked program costs besides its object code (its share of an engine's
pages and tables: about 11 KB for a small program, measured)."""


def program_bytes(p: CompiledProgram) -> int:
    """The memory a compiled program holds, estimated: its machine code (about the
    size of its object files), `PROGRAM_OVERHEAD_BYTES`, and its constants."""
    code = p.native.nbytes if p.native is not None else 0
    return code + PROGRAM_OVERHEAD_BYTES + sum(int(a.nbytes) for a in p.constants.values())


def cache_bytes_setting() -> int:
    """`PULLBACK_PROGRAM_CACHE_BYTES`, else `DEFAULT_CACHE_BYTES`."""
    value = int_setting("PULLBACK_PROGRAM_CACHE_BYTES", minimum=1, what="a number of bytes (1 or more)")
    return DEFAULT_CACHE_BYTES if value is None else value


class CompiledBackend:
    """Runs `pd` programs as JIT-compiled native code (see the module docstring)."""

    def __init__(
        self, fallback: bool = False, blas: bool | None = None, cache_size: int = DEFAULT_CACHE_SIZE,
        cache_bytes: int | None = None,
    ) -> None:
        if cache_size < 1:
            raise ValueError(f"CompiledBackend: cache_size must be at least 1, got {cache_size}")
        self.fallback = fallback
        self.blas = blas
        self.cache_size = cache_size
        self.cache_bytes = cache_bytes_setting() if cache_bytes is None else cache_bytes
        """Bytes of programs kept (`program_bytes`), at least the last one compiled."""
        self._by_identity: OrderedDict[
            tuple[Any, ...], tuple[ModuleOp, CompiledProgram | None, tuple[Any, ...] | None]
        ] = OrderedDict()
        self._by_content: OrderedDict[tuple[Any, ...], CompiledProgram] = OrderedDict()
        self._sealed: weakref.WeakSet[ModuleOp] = weakref.WeakSet()
        self.compiles = 0
        Jit.prewarm()

    def seal(self, module: ModuleOp) -> None:
        """The caller will not change `module` again (the executor's private copy of
        a program): its calls find their compiled program by the module's identity
        alone, without walking its ops to notice changes."""
        self._sealed.add(module)

    def cache_info(self) -> dict[str, int]:
        """Entries of the two program caches, their bound and the compiles so far."""
        return {"identity": len(self._by_identity), "content": len(self._by_content),
                "size": self.cache_size, "compiles": self.compiles,
                "bytes": sum(map(program_bytes, self._by_content.values())), "bytes_bound": self.cache_bytes}

    # The cache: an identity key (module object, its ops, fetches, feed dtypes/ranks)
    # finds a program without printing the module; the content key (its text) lets
    # equal programs share code.  Both are LRU-bounded by `cache_size`, with one
    # recency: a hit by identity refreshes the content entry too.
    def program_for(
        self, module: ModuleOp, fetches: Sequence[SSAValue], feeds: Mapping[str, np.ndarray]
    ) -> CompiledProgram | None:
        """The compiled program for this call (compiling on first use)."""
        sig = tuple(sorted((n, np.asarray(a).dtype.str, np.ndim(a)) for n, a in feeds.items()))
        ops = 0 if module in self._sealed else hash(_op_ids(module))
        ident = (id(module), ops, tuple(id(v) for v in fetches), sig)
        hit = self._by_identity.get(ident)
        if hit is not None and hit[0] is module:
            self._by_identity.move_to_end(ident)
            if hit[2] is not None and hit[2] in self._by_content:
                self._by_content.move_to_end(hit[2])
            return hit[1]
        positions = value_positions(module, fetches)
        text = str(module)  # printed once: the disk cache's key reuses it
        content = (hashlib.sha1(text.encode()).hexdigest(), positions, sig)
        compiled = self._by_content.get(content)
        if compiled is None and _initializers_only(module):
            # Startup programs: random initializers stay on the host by design
            # (they run once, drawing from numpy's generator), so no warning.
            remember(self._by_identity, ident, (module, None, None), self.cache_size)
            return None
        if compiled is None:
            try:
                compiled = compile_program(module, fetches, self.blas, text=text)
                self.compiles += 1
            except NotCompilable as e:
                if not self.fallback:
                    raise
                warnings.warn(f"compiled backend: {e}; running this program on the interpreter", stacklevel=3)
                remember(self._by_identity, ident, (module, None, None), self.cache_size)
                return None
            remember(self._by_content, content, compiled, self.cache_size)
            self._trim_bytes()
        else:
            self._by_content.move_to_end(content)
            compiled = compiled.for_module(module, fetches)
        remember(self._by_identity, ident, (module, compiled, content), self.cache_size)
        return compiled

    def _trim_bytes(self) -> None:
        """Drop the least recently used programs (and the identity entries that name
        them) while the programs kept exceed `cache_bytes`; the newest stays."""
        total = sum(map(program_bytes, self._by_content.values()))
        dropped = set()
        while total > self.cache_bytes and len(self._by_content) > 1:
            key, old = self._by_content.popitem(last=False)
            total -= program_bytes(old)
            dropped.add(key)
        if dropped:
            for ident in [i for i, (_, _, c) in self._by_identity.items() if c in dropped]:
                del self._by_identity[ident]

    def run(
        self,
        module: ModuleOp,
        feeds: Mapping[str, np.ndarray],
        scope: MutableMapping[str, np.ndarray],
        fetches: Sequence[SSAValue],
    ) -> list[np.ndarray]:
        """Run `module` natively; returns the values of `fetches` (parameter updates
        are made in place in `scope`'s arrays, which are returned for them)."""
        compiled = self.program_for(module, fetches, feeds)
        if compiled is None:
            from pullback.runtime.interpreter import run_module

            env = run_module(module, feeds, scope)
            return [env[v] for v in fetches]
        return execute(compiled, feeds, scope)


def _op_ids(module: ModuleOp) -> tuple[int, ...]:
    """The identity of every op in `module`, in walk order: the per-call part of the
    program cache's identity key (an op added, removed or replaced changes it).

    Plain loops over the linked lists of blocks and ops: xDSL's nested `walk`
    generators cost about 6 us an op (6% of a 10 ms training step of 95 ops), an
    explicit stack of children ~0.9 us, these loops ~0.35 us."""
    ids: list[int] = [id(module)]
    append = ids.append

    def region_ops(region: Region) -> None:
        block = region.first_block
        while block is not None:
            op = block.first_op
            while op is not None:
                append(id(op))
                for nested in op.regions:
                    region_ops(nested)
                op = op.next_op
            block = block.next_block

    for region in module.regions:
        region_ops(region)
    return tuple(ids)


# `pd.broadcast`: a data-parallel start-up program sends rank 0's initial values
# (see passes/data_parallel.py); it still runs once, on the host.
_INITIALIZER_OPS = frozenset({"pd.fill_constant", "pd.parameter", "pd.fetch", "pd.broadcast"})


def _initializers_only(module: ModuleOp) -> bool:
    """True for startup-style programs: host-only initializers and constants."""
    ops = list(module.body.block.ops)
    host_only = [isinstance(op, PdOp) and op.HOST_ONLY is not None for op in ops]
    return any(host_only) and all(
        host or op.name in _INITIALIZER_OPS for host, op in zip(host_only, ops)
    )


def make_backend(place: Any) -> CompiledBackend:
    """The executor's factory (`runtime.executor.BACKEND_MODULES["compiled"]`): a
    backend for CPU places, falling back to the interpreter unless
    `PULLBACK_COMPILED_FALLBACK=0`."""
    kind = getattr(place, "kind", "cpu")
    if kind != "cpu":
        raise ValueError(f"the compiled backend runs on CPUPlace only, not {place}")
    return CompiledBackend(fallback=os.environ.get("PULLBACK_COMPILED_FALLBACK", "1") != "0")


__all__ = ["DEFAULT_CACHE_BYTES", "DEFAULT_CACHE_SIZE", "PROGRAM_OVERHEAD_BYTES", "CompiledBackend", "make_backend",
           "program_bytes"]
