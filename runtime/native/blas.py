"""The BLAS behind compiled matrix products (`pullback_sgemm` / `pullback_dgemm`).

Generated code calls two symbols with the ILP64 CBLAS row-major signature
(`lowering/convert_linalg_to_blas.py`).  This module binds them, once per process,
to one of two libraries:

* **OpenBLAS**, the copy numpy's wheels bundle (`numpy.libs/libscipy_openblas64_*`):
  always there where numpy is;
* **Intel MKL** (`libmkl_rt`, from `pip install pullback[mkl]`), when installed.

With both present (`PULLBACK_BLAS=auto`, the default) each call is routed by its
size: products of at least `MKL_MIN_MACS` multiply-adds over an inner dimension of
at least `MKL_MIN_K` (or with all three dimensions at least `MKL_MIN_SIDE`) go to
MKL, the others to OpenBLAS.  Why both, measured on the 2-vCPU AMD EPYC guest (single-threaded, see
`benchmarks/RESULTS.md`, "BLAS"): OpenBLAS 0.3.31's Haswell sgemm runs the
batch-128 products of an MLP step (128x784 @ 784x256, 128x256 @ 256x256) at
10-13 GFLOP/s where MKL runs them at 33-40, yet MKL's entry costs ~12 us a call, so
below about a million multiply-adds (32x128 @ 128x128 and smaller) OpenBLAS is 1.5-5x
faster.  The routing is for single-threaded BLAS: when either library runs more
than one thread, `auto` binds OpenBLAS alone, because two thread pools that each
spin after their calls take the cores from each other (the MLP step on two threads:
16.0 ms routed, 7.3 ms OpenBLAS alone, 8.2 ms MKL alone).  `PULLBACK_BLAS=openblas`
or `=mkl` pins one library.  Both libraries' thread counts follow pullback's own
(`set_num_threads`, `PULLBACK_NUM_THREADS`, `OMP_NUM_THREADS`), fewer while other
processes occupy the cores, unless `OPENBLAS_NUM_THREADS` / `MKL_NUM_THREADS` set
theirs (`runtime/native/blas_threads.py`); the routing then reads the most threads each may
run under that rule (`blas_threads.ceiling`), not the count it ran at that moment.

The router is a few lines of LLVM IR compiled into its own MCJIT engine, so a
compiled program's object code does not depend on the library: the disk cache
(`runtime/native/disk_cache.py`) serves it whichever BLAS the process binds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import sys
import threading
from dataclasses import dataclass, replace
from typing import Any

from pullback.runtime.native import blas_threads
from pullback.runtime.native.llvm_engine import compile_ir

MKL_MIN_MACS = 1 << 21
"""Smallest product (m * n * k multiply-adds) `auto` sends to MKL: the measured
crossover is between 1M (OpenBLAS ahead on most shapes) and 4M (MKL ahead or even)."""
MKL_MIN_K = 256
"""Shortest inner dimension `auto` sends to MKL, unless every dimension is at least
`MKL_MIN_SIDE`.  Products with a short k (a convolution's im2col product over 3x3
taps of few channels: 25088x9 @ 9x8 took 513 us in MKL, 192 us in OpenBLAS; 6272x144
@ 144x32 made the CNN step 10% slower in MKL) stay with OpenBLAS; long ones (a layer
of 256 or 784 inputs, a filter gradient summed over 25088 pixels) go to MKL."""
MKL_MIN_SIDE = 128
"""A product whose m, n and k are all at least this goes to MKL even with a shorter
k: a weight gradient summed over a batch of 128 (256x128 @ 128x256) made the
residual MLP step 10-15% slower in OpenBLAS."""

CHOICES = ("auto", "openblas", "mkl")
"""Values of `PULLBACK_BLAS`."""

SYMBOLS = {"s": "pullback_sgemm", "d": "pullback_dgemm"}
"""The symbols generated code calls, by BLAS precision letter."""


@dataclass(frozen=True)
class Library:
    """One loaded CBLAS: its name, path and the addresses of its ILP64 sgemm/dgemm."""

    name: str
    path: str
    sgemm: int
    dgemm: int
    threads: int = 1
    """The threads its GEMM uses (read once, when it is found; in `bind`, the most
    it may use under `runtime/native/blas_threads.py`'s rule when that rule drives it)."""


@dataclass(frozen=True)
class Binding:
    """What `pullback_sgemm`/`_dgemm` call in this process."""

    libraries: tuple[Library, ...]
    """One library, or (OpenBLAS, MKL) routed by size."""
    min_macs: int
    """With two libraries: products this large or larger go to the second..."""
    min_k: int = MKL_MIN_K
    """... when their inner dimension is at least this long..."""
    min_side: int = MKL_MIN_SIDE
    """... or all three dimensions are at least this long."""

    def describe(self) -> str:
        """One line for logs and benchmark headers."""
        if len(self.libraries) == 1:
            return self.libraries[0].name
        small, large = self.libraries
        return (f"{large.name} from {self.min_macs} multiply-adds with k >= {self.min_k} "
                f"or m, n, k >= {self.min_side}, {small.name} for the others")


def _cblas(path: str, sgemm: str, dgemm: str, name: str, threads: str) -> Library | None:
    try:
        lib = ctypes.CDLL(path)
        s = ctypes.cast(getattr(lib, sgemm), ctypes.c_void_p).value
        d = ctypes.cast(getattr(lib, dgemm), ctypes.c_void_p).value
    except (OSError, AttributeError):
        return None
    if not s or not d:
        return None
    try:
        count = int(getattr(lib, threads)())
    except (AttributeError, ValueError):
        count = 1
    return Library(name, path, s, d, max(count, 1))


def find_openblas() -> Library | None:
    """numpy's bundled ILP64 OpenBLAS, or None (a numpy built against another BLAS)."""
    import numpy

    roots = [
        os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs"),
        os.path.join(os.path.dirname(numpy.__file__), ".dylibs"),
    ]
    for root in roots:
        for path in sorted(glob.glob(os.path.join(root, "libscipy_openblas64_*"))):
            lib = _cblas(path, "scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_", "OpenBLAS",
                         "scipy_openblas_get_num_threads64_")
            if lib is not None:
                return lib
    return None


def _mkl_candidates() -> list[str]:
    # The `mkl` wheel puts libmkl_rt in <prefix>/lib; a system MKL is on the loader path.
    found = []
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        found += sorted(glob.glob(os.path.join(prefix, "lib", "libmkl_rt.so*")))
    system = ctypes.util.find_library("mkl_rt")
    if system:
        found.append(system)
    return found


def find_mkl() -> Library | None:
    """Intel MKL's single dynamic library (`libmkl_rt`, ILP64 entry points), or None."""
    for path in _mkl_candidates():
        lib = _cblas(path, "cblas_sgemm_64", "cblas_dgemm_64", "MKL", "MKL_Get_Max_Threads")
        if lib is not None:
            return lib
    return None


def choose(choice: str, openblas: Library | None, mkl: Library | None) -> Binding | None:
    """The binding `PULLBACK_BLAS=choice` asks for, from the libraries found.

    Raises ValueError for an unknown choice or a pinned library that is not installed
    (never a silent fallback to the other one)."""
    if choice not in CHOICES:
        raise ValueError(f"PULLBACK_BLAS={choice!r}: expected one of {', '.join(CHOICES)}")
    if choice == "openblas" or choice == "mkl":
        lib = openblas if choice == "openblas" else mkl
        if lib is None:
            hint = " (pip install pullback[mkl])" if choice == "mkl" else ""
            raise ValueError(f"PULLBACK_BLAS={choice}: the library is not installed{hint}")
        return Binding((lib,), 0)
    if openblas is not None and mkl is not None and max(openblas.threads, mkl.threads) > 1:
        # Two multi-threaded pools that each spin after their calls take the cores
        # from each other: one library only, the one that was faster on its own here.
        return Binding((openblas,), 0)
    libs = tuple(lib for lib in (openblas, mkl) if lib is not None)
    return Binding(libs, MKL_MIN_MACS) if libs else None


_ROUTER_IR = """
define void @pullback_Xgemm(i32 %o, i32 %ta, i32 %tb, i64 %m, i64 %n, i64 %k, T %al, ptr %a,
                            i64 %lda, ptr %b, i64 %ldb, T %be, ptr %c, i64 %ldc) {
entry:
  %mn = mul i64 %m, %n
  %mnk = mul i64 %mn, %k
  %many = icmp uge i64 %mnk, MIN
  %long = icmp uge i64 %k, KMIN
  %mside = icmp uge i64 %m, SIDE
  %nside = icmp uge i64 %n, SIDE
  %kside = icmp uge i64 %k, SIDE
  %mn_wide = and i1 %mside, %nside
  %wide = and i1 %mn_wide, %kside
  %shape = or i1 %long, %wide
  %large = and i1 %many, %shape
  %f = select i1 %large, ptr inttoptr (i64 LARGE to ptr), ptr inttoptr (i64 SMALL to ptr)
  tail call void %f(i32 %o, i32 %ta, i32 %tb, i64 %m, i64 %n, i64 %k, T %al, ptr %a, i64 %lda,
                    ptr %b, i64 %ldb, T %be, ptr %c, i64 %ldc)
  ret void
}
"""


def _router_ir(binding: Binding) -> str:
    small, large = binding.libraries[0], binding.libraries[-1]
    parts = []
    for letter, ty in (("s", "float"), ("d", "double")):
        attr = letter + "gemm"
        parts.append(
            _ROUTER_IR.replace("Xgemm", attr).replace("T ", ty + " ")
            .replace("KMIN", str(binding.min_k)).replace("SIDE", str(binding.min_side))
            .replace("MIN", str(binding.min_macs))
            .replace("LARGE", str(getattr(large, attr))).replace("SMALL", str(getattr(small, attr)))
        )
    return "\n".join(parts)


class _Router:
    """The routing functions' machine code; its engine lives as long as the process."""

    def __init__(self, binding: Binding) -> None:
        self.engine = compile_ir(_router_ir(binding))
        self.addresses = {name: self.engine.get_function_address(name) for name in SYMBOLS.values()}


def _following(*libs: Library | None) -> tuple[Library | None, ...]:
    """`libs` once their thread counts follow `runtime/native/blas_threads.py`'s rule (set
    now, MKL's just loaded included), each with the most threads that rule may give
    it: the count it happened to run when found may be one the load rule lowered for
    a moment, and `choose` must not route both libraries for that.  A library the
    rule does not drive (no threadpoolctl) keeps the count it was found with."""
    driven = {os.path.realpath(path) for path in blas_threads.apply(rescan=True)}
    api = {"OpenBLAS": "openblas", "MKL": "mkl"}
    return tuple(
        replace(lib, threads=blas_threads.ceiling(api[lib.name]))
        if lib is not None and lib.name in api and os.path.realpath(lib.path) in driven else lib
        for lib in libs
    )


_lock = threading.Lock()
_bound: Binding | None = None
_router: _Router | None = None
_done = False


def bind(llvm: Any) -> Binding | None:
    """Bind `pullback_sgemm`/`_dgemm` for every program this process compiles (once);
    the binding, or None when no CBLAS is found (matrix products then compile to loops).

    Reads `PULLBACK_BLAS` (`auto`, `openblas`, `mkl`); ValueError on a bad value."""
    global _bound, _router, _done
    with _lock:
        if _done:
            return _bound
        binding = choose(os.environ.get("PULLBACK_BLAS", "auto").strip().lower() or "auto",
                         *_following(find_openblas(), find_mkl()))
        if binding is not None:
            if len(binding.libraries) == 1:
                (lib,) = binding.libraries
                addresses = {SYMBOLS["s"]: lib.sgemm, SYMBOLS["d"]: lib.dgemm}
            else:
                _router = _Router(binding)
                addresses = _router.addresses
            for name, addr in addresses.items():
                llvm.add_symbol(name, addr)
        _bound, _done = binding, True
        return binding


def bound() -> Binding | None:
    """The binding made by `bind`, or None before the compiled backend starts (or without BLAS)."""
    return _bound


__all__ = ["CHOICES", "MKL_MIN_K", "MKL_MIN_MACS", "MKL_MIN_SIDE", "Binding", "Library", "bind", "bound", "choose", "find_mkl", "find_openblas"]
