"""The compiled CPU backend: `pd` programs run as native code built by our pipeline.

`CompiledBackend().run(module, feeds, scope, fetches)` (the executor's backend seam):

1. *Compile* once per program content, fetch list and feed dtypes/ranks: lower with
   `lowering.pipeline` (pd -> linalg -> loops -> llvm dialect -> llvmlite IR), verify,
   optimize at O3 for the host CPU with loop and SLP vectorization, and JIT with
   MCJIT.  Matrix products call numpy's bundled OpenBLAS when it can be found.
2. *Check* the feeds before any native code runs: names, dtypes, ranks and sizes
   (`lowering.shapes.plan_shapes`, cached per concrete feed shapes).  A wrong shape
   raises ValueError; it never reaches compiled code.
3. *Call* the program's packed entry point through ctypes with one array of 8-byte
   slots (sizes and buffer addresses).  Feeds are passed without copies when they
   already have the right dtype and layout; parameters are the Scope's own arrays,
   updated in place by the optimizer ops; outputs are fresh numpy arrays.  The
   generated code frees its temporaries before returning.

Ops the pipeline cannot lower raise `NotCompilable` (naming the op) at compile time;
`CompiledBackend(fallback=True)` then runs that program on the interpreter instead,
with a warning, never silently.
"""

from __future__ import annotations

import ctypes
import glob
import hashlib
import os
import threading
import warnings
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

from pullback.dialects.pd.base import DTYPES, PdOp
from pullback.lowering.abi import LoweringError, Program, abi_of, output_values
from pullback.lowering.convert_pd_to_linalg import build_entry
from pullback.lowering.shapes import ShapeError, plan_shapes

_NP = {d.short: d.numpy for d in DTYPES}
"""numpy dtypes by the element type names of ABI descriptions (`'f32'`)."""


class NotCompilable(RuntimeError):
    """The program uses an op the compiled backend cannot lower (message names it)."""


# ------------------------------------------------------------------------ LLVM


class _Jit:
    """One MCJIT engine for the process; compiled modules are added to it."""

    _lock = threading.Lock()
    _instance: _Jit | None = None

    def __init__(self) -> None:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        self.llvm = llvm
        target = llvm.Target.from_default_triple()
        self.tm = target.create_target_machine(
            cpu=llvm.get_host_cpu_name(),
            features=llvm.get_host_cpu_features().flatten(),
            opt=3,
            jit=True,
        )
        self.blas = _bind_blas(llvm)
        backing = llvm.parse_assembly("")
        self.engine = llvm.create_mcjit_compiler(backing, self.tm)

    @classmethod
    def get(cls) -> _Jit:
        """The process-wide JIT (created on first use)."""
        with cls._lock:
            if cls._instance is None:
                cls._instance = _Jit()
            return cls._instance

    def compile(self, llvm_ir: str, symbol: str) -> int:
        """Verify, optimize at O3 (vectorizers on), JIT, and return `symbol`'s address."""
        llvm = self.llvm
        mod = llvm.parse_assembly(llvm_ir)
        mod.triple = self.tm.triple
        mod.data_layout = str(self.tm.target_data)
        mod.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pto.loop_unrolling = True
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)
        with self._lock:
            self.engine.add_module(mod)
            self.engine.finalize_object()
            return self.engine.get_function_address(symbol)


def _bind_blas(llvm: Any) -> bool:
    """Bind `pullback_sgemm`/`_dgemm` to numpy's bundled OpenBLAS (ILP64 CBLAS).

    Returns False (matmuls then compile to loops) when no such library is found.
    """
    import numpy

    roots = [os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")]
    roots.append(os.path.join(os.path.dirname(numpy.__file__), ".dylibs"))
    for root in roots:
        for path in sorted(glob.glob(os.path.join(root, "libscipy_openblas64_*"))):
            try:
                lib = ctypes.CDLL(path)
                s = ctypes.cast(lib.scipy_cblas_sgemm64_, ctypes.c_void_p).value
                d = ctypes.cast(lib.scipy_cblas_dgemm64_, ctypes.c_void_p).value
            except (OSError, AttributeError):
                continue
            llvm.add_symbol("pullback_sgemm", s)
            llvm.add_symbol("pullback_dgemm", d)
            return True
    return False


# ----------------------------------------------------------------- compiled code


@dataclass
class CompiledProgram:
    """A program compiled for one fetch list and feed dtypes/ranks."""

    prog: Program
    outputs: list[SSAValue]
    """The `pd` value behind each output buffer (`abi.output_values`)."""
    abi: dict[str, Any]
    fn: Any
    compile_seconds: float
    shape_plans: dict[tuple[tuple[int, ...], ...], list[tuple[int, ...]]] = field(default_factory=dict)
    """Output shapes per feed shapes: they depend only on the program's structure."""

    def for_module(self, module: ModuleOp, fetches: Sequence[SSAValue]) -> CompiledProgram:
        """This native code serving an equal (printed-identical) module: the same code,
        ABI and shape plans, with a `Program` view of that module's own values."""
        prog = Program.of(module, fetches, use_fetch_ops=False)
        return replace(self, prog=prog, outputs=output_values(prog, self.abi, fetches))

    def output_shapes(self, feeds: Sequence[np.ndarray]) -> list[tuple[int, ...]]:
        """Concrete output shapes for these feeds (checked; cached per feed shapes)."""
        key = tuple(f.shape for f in feeds)
        plan = self.shape_plans.get(key)
        if plan is None:
            names = [n for n, _ in self.abi["feeds"]]
            shapes = plan_shapes(self.prog, dict(zip(names, key)))
            plan = [shapes[v] for v in self.outputs]
            self.shape_plans[key] = plan
        return plan


def compile_program(module: ModuleOp, fetches: Sequence[SSAValue], blas: bool | None = None) -> CompiledProgram:
    """Lower, optimize and JIT `module` for `fetches` (no caching here)."""
    import time

    from pullback.lowering.pipeline import loop_passes, run_passes, to_llvmlite

    t0 = time.perf_counter()
    jit = _Jit.get()
    use_blas = jit.blas if blas is None else blas and jit.blas
    digest = hashlib.sha1(str(module).encode()).hexdigest()[:16]
    entry = f"pb_{digest}_{next(_COUNTER)}"
    try:
        fn_op, _ = build_entry(module, fetches, entry=entry, only_given_fetches=True)
    except LoweringError as e:
        raise NotCompilable(str(e)) from None
    lowered = ModuleOp([fn_op])
    abi = abi_of(lowered, entry)
    run_passes(lowered, loop_passes(blas=use_blas))
    ir = str(to_llvmlite(lowered))
    addr = jit.compile(ir, "_pullback_packed_" + entry)
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(addr)
    prog = Program.of(module, fetches, use_fetch_ops=False)
    return CompiledProgram(prog, output_values(prog, abi, fetches), abi, fn, time.perf_counter() - t0)


def _counter():  # type: ignore[no-untyped-def]
    n = 0
    while True:
        n += 1
        yield n


_COUNTER = _counter()


# ---------------------------------------------------------------------- backend


class CompiledBackend:
    """Runs `pd` programs as JIT-compiled native code (see the module docstring)."""

    def __init__(self, fallback: bool = False, blas: bool | None = None) -> None:
        self.fallback = fallback
        self.blas = blas
        self._by_identity: dict[tuple[Any, ...], tuple[ModuleOp, CompiledProgram | None]] = {}
        self._by_content: dict[tuple[Any, ...], CompiledProgram] = {}
        self.compiles = 0

    # The cache: an identity key (module object, its ops, fetches, feed dtypes/ranks)
    # finds a program without printing the module; the content key (its text) lets
    # equal programs share code.
    def program_for(
        self, module: ModuleOp, fetches: Sequence[SSAValue], feeds: Mapping[str, np.ndarray]
    ) -> CompiledProgram | None:
        """The compiled program for this call (compiling on first use)."""
        sig = tuple(sorted((n, np.asarray(a).dtype.str, np.ndim(a)) for n, a in feeds.items()))
        ops = tuple(id(op) for op in module.walk())
        ident = (id(module), hash(ops), tuple(id(v) for v in fetches), sig)
        hit = self._by_identity.get(ident)
        if hit is not None and hit[0] is module:
            return hit[1]
        positions = _value_positions(module, fetches)
        content = (hashlib.sha1(str(module).encode()).hexdigest(), positions, sig)
        compiled = self._by_content.get(content)
        if compiled is None and _initializers_only(module):
            # Startup programs: random initializers stay on the host by design
            # (they run once, drawing from numpy's generator), so no warning.
            self._by_identity[ident] = (module, None)
            return None
        if compiled is None:
            try:
                compiled = compile_program(module, fetches, self.blas)
                self.compiles += 1
            except NotCompilable as e:
                if not self.fallback:
                    raise
                warnings.warn(f"compiled backend: {e}; running this program on the interpreter", stacklevel=3)
                self._by_identity[ident] = (module, None)
                return None
            self._by_content[content] = compiled
        else:
            compiled = compiled.for_module(module, fetches)
        self._by_identity[ident] = (module, compiled)
        return compiled

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


def _value_positions(module: ModuleOp, values: Sequence[SSAValue]) -> tuple[tuple[int, int], ...]:
    """Each value as (index of its defining op in a walk, result index)."""
    index = {id(op): i for i, op in enumerate(module.walk())}
    out = []
    for v in values:
        owner = v.owner
        out.append((index.get(id(owner), -1), getattr(v, "index", 0)))
    return tuple(out)


def _as_input(name: str, value: Any, spec: list[Any], what: str) -> np.ndarray:
    """A C-contiguous array of the declared dtype and rank (copying only if needed)."""
    shape, elem = spec
    dtype = np.dtype(_NP[elem])
    arr = np.asarray(value)
    if arr.ndim != len(shape):
        raise ValueError(
            f"{what} '{name}' has rank {arr.ndim} (shape {list(arr.shape)}), "
            f"but the program declares rank {len(shape)}"
        )
    if arr.dtype != dtype:
        if not np.can_cast(arr.dtype, dtype, casting="same_kind") and not (
            arr.dtype.kind in "iub" and dtype.kind in "iu"
        ):
            raise ValueError(f"{what} '{name}' has dtype {arr.dtype}, expected {dtype}")
        arr = arr.astype(dtype)
    return np.ascontiguousarray(arr)


def execute(
    compiled: CompiledProgram, feeds: Mapping[str, np.ndarray], scope: MutableMapping[str, np.ndarray]
) -> list[np.ndarray]:
    """Check the feeds, call the native code, return the fetched values."""
    abi = compiled.abi
    feed_arrays = []
    for name, spec in abi["feeds"]:
        if name not in feeds:
            raise ValueError(f"feed '{name}' is missing")
        feed_arrays.append(_as_input(name, feeds[name], spec, "feed"))
    try:
        out_shapes = compiled.output_shapes(feed_arrays)
    except ShapeError as e:
        raise ValueError(str(e)) from None
    params = []
    for name, (shape, elem) in abi["params"]:
        if name not in scope:
            raise RuntimeError(f"parameter '{name}' is not initialized in the scope (run the startup program first)")
        arr = scope[name]
        dtype = np.dtype(_NP[elem])
        if not (isinstance(arr, np.ndarray) and arr.dtype == dtype and arr.flags.c_contiguous and arr.flags.writeable):
            arr = np.ascontiguousarray(np.asarray(arr), dtype=dtype).copy()
            scope[name] = arr  # updates in place from now on
        if tuple(arr.shape) != tuple(shape):
            raise ValueError(f"parameter '{name}' has shape {list(arr.shape)} in the scope, expected {shape}")
        params.append(arr)
    outs = [np.empty(s, dtype=_NP[spec[1]]) for s, (_, spec) in zip(out_shapes, abi["outputs"])]
    writable = [p.ctypes.data for p in params if p.size] + [o.ctypes.data for o in outs if o.size]
    if len(set(writable)) != len(writable):
        raise ValueError("two parameters share one buffer; the compiled code needs distinct arrays")
    slots = np.empty(len(abi["dims"]) + len(feed_arrays) + len(params) + len(outs), dtype=np.int64)
    i = 0
    for fi, k in abi["dims"]:
        slots[i] = feed_arrays[fi].shape[k]
        i += 1
    for a in (*feed_arrays, *params, *outs):
        slots[i] = a.ctypes.data
        i += 1
    compiled.fn(slots.ctypes.data)
    for (name, _), o in zip(abi["outputs"][len(out_shapes) - _n_new(abi):], outs[len(out_shapes) - _n_new(abi):]):
        scope[name] = o
    by_name = dict(zip((n for n, _ in abi["params"]), params))
    return [outs[ref] if kind == "out" else by_name[ref] for kind, ref in abi["fetches"]]


def _n_new(abi: dict[str, Any]) -> int:
    return sum(1 for n, _ in abi["outputs"] if n)


_INITIALIZER_OPS = frozenset({"pd.fill_constant", "pd.parameter", "pd.fetch"})


def _initializers_only(module: ModuleOp) -> bool:
    """True for startup-style programs: host-only initializers and constants."""
    ops = list(module.body.block.ops)
    host_only = [isinstance(op, PdOp) and op.HOST_ONLY is not None for op in ops]
    return any(host_only) and all(
        host or op.name in _INITIALIZER_OPS for host, op in zip(host_only, ops)
    )


def make_backend(place: Any) -> CompiledBackend:
    """The executor's factory (`runtime.executor.BACKEND_MODULES["compiled"]`)."""
    kind = getattr(place, "kind", "cpu")
    if kind != "cpu":
        raise ValueError(f"the compiled backend runs on CPUPlace only, not {place}")
    return CompiledBackend(fallback=os.environ.get("PULLBACK_COMPILED_FALLBACK", "1") != "0")


__all__ = ["CompiledBackend", "CompiledProgram", "NotCompilable", "compile_program", "execute", "make_backend"]
_ = TensorType
