"""A bfloat16 matrix product on the CPU's AVX512-BF16 dot-product instruction.

`pullback_sbgemm` has the ILP64 CBLAS row-major signature of `pullback_sgemm`
(`lowering/convert_linalg_to_blas.py`) with bfloat16 `A` and `B` and a float32 `C`:

    C = alpha * op(A) @ op(B) + beta * C

OpenBLAS has such a GEMM (`sbgemm`) only when built with `BUILD_BFLOAT16`, which the
copy numpy bundles is not, and MKL's `cblas_gemm_bf16bf16f32` runs no faster than its
sgemm on the AMD guest (measured: 86 vs 90 GFLOP/s on 128x784 @ 784x512, 42 vs 80 on
512x128 @ 128x784), so the kernel is ours: a BLIS-style blocked product written
here as LLVM IR (llvmlite's IR builder) and compiled once per process for the host.

* **The instruction.** `vdpbf16ps` (`llvm.x86.avx512bf16.dpbf16ps.512`) adds to
  each of 16 float32 lanes the products of two pairs of bfloat16s.  Both operands are
  therefore packed in *k-pairs*: a 32-bit word holds `(X[.., 2p], X[.., 2p+1])`.
* **Packing.** For each block of `KC` pairs of the inner dimension, `B` is packed into
  panels of `NR` = 32 columns (`[panel][pair][32]` words), and for each block of `MC`
  rows, `A` into panels of `MR` rows (`[panel][pair][MR]` words).  Rows, columns and
  a last odd `k` past the matrix are packed as zeros, so the micro-kernel never tests
  a bound.  Packing reads through the strides of `op(X)`, so transposed operands cost
  nothing extra beyond the copy.
* **Micro-kernel.** An `MR` x 32 tile of `C` lives in 2 * `MR` vector registers (12 x 32:
  24 of the 32 zmm registers) over the whole block; per pair it loads two vectors of
  `B`, broadcasts one word of `A` per row and issues 2 * `MR` dot products.
* **Writing `C`.** `C` is first scaled by `beta` (set to zero when `beta == 0`, so a
  NaN in uninitialised memory does not survive, as BLAS specifies), then every tile
  adds `alpha * tile` -- straight from the registers when the tile is inside `C`,
  through a stack tile otherwise.

Single-threaded: the products it serves are those of bfloat16 training steps run
one thread each in the benchmarks; splitting the column panels over the thread pool
is the next step when it matters.  Not available (`available()` is False) on CPUs
without `avx512bf16`: the compiled backend then widens bfloat16 products to float32
(`lowering/widen.py`).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

from pullback.runtime.native.env import flag_setting

MR = 12
"""Rows of the register tile."""
NR = 32
"""Columns of the register tile (two vectors of 16 float32 lanes)."""
KC = 128
"""Pairs of the inner dimension per packed block (256 values of k): an `A` panel
(12 x 128 words, 6 KiB) and a `B` panel (128 x 32 words, 16 KiB) fit in L1 together."""
MC = 96
"""Rows of `A` per packed block (8 panels, 48 KiB: L2)."""

SYMBOL = "pullback_sbgemm"
"""The symbol generated code calls."""

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112

_lock = threading.Lock()
_engine: Any = None
_address: int | None = None
_fn: Any = None


def host_has_bf16_dot() -> bool:
    """Whether this CPU has the AVX512-BF16 instructions (as LLVM reads its features)."""
    import llvmlite.binding as llvm

    features = llvm.get_host_cpu_features()
    return bool(features.get("avx512bf16")) and bool(features.get("avx512f"))


def _kernel_ir() -> str:
    """The LLVM IR text of `pullback_sbgemm` (see the module docstring)."""
    from llvmlite import ir

    i16, i32, i64 = ir.IntType(16), ir.IntType(32), ir.IntType(64)
    f32 = ir.FloatType()
    ptr = ir.PointerType(ir.IntType(8))
    v16f = ir.VectorType(f32, 16)
    v16i = ir.VectorType(i32, 16)
    mod = ir.Module(name="pullback_bf16_gemm")
    dot = ir.Function(mod, ir.FunctionType(v16f, [v16f, v16i, v16i]), "llvm.x86.avx512bf16.dpbf16ps.512")
    malloc = ir.Function(mod, ir.FunctionType(ptr, [i64]), "malloc")
    free = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ptr]), "free")
    args = [i32, i32, i32, i64, i64, i64, f32, ptr, i64, ptr, i64, f32, ptr, i64]
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), args), SYMBOL)
    _order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc = fn.args
    for arg in (a, b, c):
        arg.add_attribute("noalias")
    bld = ir.IRBuilder(fn.append_basic_block("entry"))

    def c64(v: int) -> Any:
        return ir.Constant(i64, v)

    def loop(lo: Any, hi: Any, step: int, body: Any, name: str) -> None:
        """`for iv in range(lo, hi, step): body(iv)` (a counted loop, bottom test)."""
        pre = bld.block
        head = fn.append_basic_block(name + ".head")
        inner = fn.append_basic_block(name + ".body")
        done = fn.append_basic_block(name + ".done")
        bld.cbranch(bld.icmp_signed("<", lo, hi), head, done)
        bld.position_at_end(head)
        iv = bld.phi(i64, name=name)
        iv.add_incoming(lo, pre)
        bld.branch(inner)
        bld.position_at_end(inner)
        body(iv)
        nxt = bld.add(iv, c64(step))
        iv.add_incoming(nxt, bld.block)
        bld.cbranch(bld.icmp_signed("<", nxt, hi), head, done)
        bld.position_at_end(done)

    def smin(x: Any, y: Any) -> Any:
        return bld.select(bld.icmp_signed("<", x, y), x, y)

    def elem_ptr(base: Any, index: Any, t: Any) -> Any:
        return bld.gep(bld.bitcast(base, ir.PointerType(t)), [index], inbounds=True)

    def load16(base: Any, index: Any) -> Any:
        return bld.zext(bld.load(elem_ptr(base, index, i16), align=2), i32)

    def pair(base: Any, at: Any, step: Any, has_second: Any) -> Any:
        """The word `(x[at], x[at + step])`, its high half 0 when not `has_second`."""
        lo = load16(base, at)
        hi_block, pre = fn.append_basic_block("pair.hi"), bld.block
        join = fn.append_basic_block("pair.join")
        bld.cbranch(has_second, hi_block, join)
        bld.position_at_end(hi_block)
        hi = bld.shl(load16(base, bld.add(at, step)), ir.Constant(i32, 16))
        bld.branch(join)
        bld.position_at_end(join)
        high = bld.phi(i32)
        high.add_incoming(hi, hi_block)
        high.add_incoming(ir.Constant(i32, 0), pre)
        return bld.or_(lo, high)

    def store_word(buf: Any, index: Any, word: Any) -> None:
        bld.store(word, elem_ptr(buf, index, i32), align=4)

    # Strides of op(A) (rows i, inner kk) and op(B) (inner kk, columns j).
    a_t = bld.icmp_signed("==", ta, ir.Constant(i32, _TRANS))
    b_t = bld.icmp_signed("==", tb, ir.Constant(i32, _TRANS))
    a_rs, a_ks = bld.select(a_t, c64(1), lda), bld.select(a_t, lda, c64(1))
    b_ks, b_cs = bld.select(b_t, c64(1), ldb), bld.select(b_t, ldb, c64(1))

    # C *= beta (C = 0 when beta == 0).
    beta_zero = bld.fcmp_ordered("==", beta, ir.Constant(f32, 0.0))

    def scale_row(i: Any) -> None:
        def scale(j: Any) -> None:
            p = elem_ptr(c, bld.add(bld.mul(i, ldc), j), f32)
            old = bld.load(p, align=4)
            bld.store(bld.select(beta_zero, ir.Constant(f32, 0.0), bld.fmul(old, beta)), p, align=4)

        loop(c64(0), n, 1, scale, "scale.j")

    beta_one = bld.fcmp_ordered("==", beta, ir.Constant(f32, 1.0))
    with bld.if_then(bld.not_(beta_one)):
        loop(c64(0), m, 1, scale_row, "scale.i")

    n_panels = bld.sdiv(bld.add(n, c64(NR - 1)), c64(NR))
    bp_words = bld.mul(bld.mul(n_panels, c64(NR)), c64(KC))
    bp = bld.call(malloc, [bld.mul(bp_words, c64(4))])
    ap = bld.call(malloc, [c64(MC * KC * 4)])
    tile = bld.bitcast(bld.alloca(ir.ArrayType(f32, MR * NR), name="tile"), ptr)
    pairs_total = bld.sdiv(bld.add(k, c64(1)), c64(2))
    alpha_v = bld.insert_element(ir.Constant(v16f, ir.Undefined), alpha, ir.Constant(i32, 0))
    alpha_v = bld.shuffle_vector(alpha_v, ir.Constant(v16f, ir.Undefined), ir.Constant(v16i, [0] * 16))

    def k_block(p0: Any) -> None:  # p0: the first pair of the block
        kcp = smin(c64(KC), bld.sub(pairs_total, p0))

        # --- pack B: bp[panel][pair][32]
        def pack_b_panel(jp: Any) -> None:
            def pack_b_pair(q: Any) -> None:
                kk = bld.mul(bld.add(p0, q), c64(2))
                second = bld.icmp_signed("<", bld.add(kk, c64(1)), k)
                row = bld.mul(bld.add(bld.mul(jp, c64(KC)), q), c64(NR))

                def pack_b_col(jj: Any) -> None:
                    j = bld.add(bld.mul(jp, c64(NR)), jj)
                    inside = bld.icmp_signed("<", j, n)
                    word_block, pre = fn.append_basic_block("pb.in"), bld.block
                    join = fn.append_basic_block("pb.join")
                    bld.cbranch(inside, word_block, join)
                    bld.position_at_end(word_block)
                    word = pair(b, bld.add(bld.mul(kk, b_ks), bld.mul(j, b_cs)), b_ks, second)
                    got = bld.block
                    bld.branch(join)
                    bld.position_at_end(join)
                    w = bld.phi(i32)
                    w.add_incoming(word, got)
                    w.add_incoming(ir.Constant(i32, 0), pre)
                    store_word(bp, bld.add(row, jj), w)

                loop(c64(0), c64(NR), 1, pack_b_col, "pb.j")

            loop(c64(0), kcp, 1, pack_b_pair, "pb.q")

        loop(c64(0), n_panels, 1, pack_b_panel, "pb.panel")

        def m_block(i0: Any) -> None:
            mc = smin(c64(MC), bld.sub(m, i0))
            m_panels = bld.sdiv(bld.add(mc, c64(MR - 1)), c64(MR))

            # --- pack A: ap[panel][pair][MR]
            def pack_a_panel(ip: Any) -> None:
                def pack_a_pair(q: Any) -> None:
                    kk = bld.mul(bld.add(p0, q), c64(2))
                    second = bld.icmp_signed("<", bld.add(kk, c64(1)), k)
                    base = bld.mul(bld.add(bld.mul(ip, c64(KC)), q), c64(MR))
                    for r in range(MR):
                        i = bld.add(bld.add(i0, bld.mul(ip, c64(MR))), c64(r))
                        inside = bld.icmp_signed("<", i, m)
                        word_block, pre = fn.append_basic_block("pa.in"), bld.block
                        join = fn.append_basic_block("pa.join")
                        bld.cbranch(inside, word_block, join)
                        bld.position_at_end(word_block)
                        word = pair(a, bld.add(bld.mul(i, a_rs), bld.mul(kk, a_ks)), a_ks, second)
                        got = bld.block
                        bld.branch(join)
                        bld.position_at_end(join)
                        w = bld.phi(i32)
                        w.add_incoming(word, got)
                        w.add_incoming(ir.Constant(i32, 0), pre)
                        store_word(ap, bld.add(base, c64(r)), w)

                loop(c64(0), kcp, 1, pack_a_pair, "pa.q")

            loop(c64(0), m_panels, 1, pack_a_panel, "pa.panel")

            def col_panel(jp: Any) -> None:
                b_panel = bld.mul(bld.mul(jp, c64(KC)), c64(NR))

                def row_panel(ip: Any) -> None:
                    a_panel = bld.mul(bld.mul(ip, c64(KC)), c64(MR))
                    zero = ir.Constant(v16f, [0.0] * 16)
                    # The micro-kernel: 2 * MR accumulators carried around the pair loop.
                    pre = bld.block
                    head = fn.append_basic_block("mk.body")
                    done = fn.append_basic_block("mk.done")
                    bld.cbranch(bld.icmp_signed("<", c64(0), kcp), head, done)
                    bld.position_at_end(head)
                    q = bld.phi(i64, name="q")
                    q.add_incoming(c64(0), pre)
                    accs = []
                    for _ in range(2 * MR):
                        phi = bld.phi(v16f)
                        phi.add_incoming(zero, pre)
                        accs.append(phi)
                    brow = bld.add(b_panel, bld.mul(q, c64(NR)))
                    b0 = bld.load(bld.bitcast(elem_ptr(bp, brow, i32), ir.PointerType(v16i)), align=4)
                    b1 = bld.load(bld.bitcast(elem_ptr(bp, bld.add(brow, c64(16)), i32), ir.PointerType(v16i)), align=4)
                    arow = bld.add(a_panel, bld.mul(q, c64(MR)))
                    new = []
                    for r in range(MR):
                        word = bld.load(elem_ptr(ap, bld.add(arow, c64(r)), i32), align=4)
                        splat = bld.insert_element(ir.Constant(v16i, ir.Undefined), word, ir.Constant(i32, 0))
                        splat = bld.shuffle_vector(splat, ir.Constant(v16i, ir.Undefined), ir.Constant(v16i, [0] * 16))
                        new.append(bld.call(dot, [accs[2 * r], splat, b0]))
                        new.append(bld.call(dot, [accs[2 * r + 1], splat, b1]))
                    q_next = bld.add(q, c64(1))
                    q.add_incoming(q_next, head)
                    for phi, v in zip(accs, new):
                        phi.add_incoming(v, head)
                    bld.cbranch(bld.icmp_signed("<", q_next, kcp), head, done)
                    bld.position_at_end(done)
                    sums = []
                    for idx in range(2 * MR):  # (all phis first: they head the block)
                        phi = bld.phi(v16f)
                        phi.add_incoming(zero, pre)
                        phi.add_incoming(new[idx], head)
                        sums.append(phi)
                    finals = [bld.fmul(v, alpha_v) for v in sums]
                    # C += alpha * tile.
                    row0 = bld.add(i0, bld.mul(ip, c64(MR)))
                    col0 = bld.mul(jp, c64(NR))
                    full = bld.and_(
                        bld.icmp_signed("<=", bld.add(row0, c64(MR)), m),
                        bld.icmp_signed("<=", bld.add(col0, c64(NR)), n),
                    )
                    with bld.if_else(full) as (then, otherwise):
                        with then:
                            for r in range(MR):
                                for h in range(2):
                                    at = bld.add(bld.mul(bld.add(row0, c64(r)), ldc), bld.add(col0, c64(16 * h)))
                                    p = bld.bitcast(elem_ptr(c, at, f32), ir.PointerType(v16f))
                                    bld.store(bld.fadd(bld.load(p, align=4), finals[2 * r + h]), p, align=4)
                        with otherwise:
                            for r in range(MR):
                                for h in range(2):
                                    p = bld.bitcast(elem_ptr(tile, c64(r * NR + 16 * h), f32), ir.PointerType(v16f))
                                    bld.store(finals[2 * r + h], p, align=4)
                            rows = smin(c64(MR), bld.sub(m, row0))
                            cols = smin(c64(NR), bld.sub(n, col0))

                            def edge_row(r: Any) -> None:
                                def edge_col(j: Any) -> None:
                                    src = bld.load(elem_ptr(tile, bld.add(bld.mul(r, c64(NR)), j), f32), align=4)
                                    at = bld.add(bld.mul(bld.add(row0, r), ldc), bld.add(col0, j))
                                    p = elem_ptr(c, at, f32)
                                    bld.store(bld.fadd(bld.load(p, align=4), src), p, align=4)

                                loop(c64(0), cols, 1, edge_col, "edge.j")

                            loop(c64(0), rows, 1, edge_row, "edge.i")

                loop(c64(0), m_panels, 1, row_panel, "rp")

            loop(c64(0), n_panels, 1, col_panel, "cp")

        loop(c64(0), m, MC, m_block, "mb")

    with bld.if_then(bld.and_(bld.icmp_signed(">", m, c64(0)), bld.icmp_signed(">", n, c64(0)))):
        loop(c64(0), pairs_total, KC, k_block, "kb")
    bld.call(free, [ap])
    bld.call(free, [bp])
    bld.ret_void()
    return str(mod)


def address() -> int | None:
    """The address of `pullback_sbgemm`, compiled on first use; None when this CPU has
    no AVX512-BF16 (the caller then computes in float32)."""
    global _engine, _address
    with _lock:
        if _address is None and host_has_bf16_dot():
            from pullback.runtime.native.llvm_engine import compile_ir

            _engine = compile_ir(_kernel_ir(), opt=3, host_cpu=True, optimize=True)
            _address = _engine.get_function_address(SYMBOL)
        return _address


def enabled() -> bool:
    """Whether compiled programs multiply bfloat16 matrices with this kernel: the CPU
    has AVX512-BF16 and `PULLBACK_BF16_GEMM` is not `0` (then such products are
    widened to float32 and run by the float32 BLAS, `lowering/widen.py`)."""
    return flag_setting("PULLBACK_BF16_GEMM", True) and host_has_bf16_dot()


def bind(llvm: Any) -> None:
    """Make `pullback_sbgemm` resolvable by the programs `llvm`'s engines link
    (compiling the kernel first if needed); RuntimeError on a CPU without it."""
    addr = address()
    if addr is None:
        raise RuntimeError(
            "compiled backend: this program calls the bfloat16 GEMM, which needs a CPU with "
            "AVX512-BF16 (it was compiled on another machine?); set PULLBACK_BF16_GEMM=0 and recompile"
        )
    llvm.add_symbol(SYMBOL, addr)


SBGEMM = ctypes.CFUNCTYPE(
    None, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
    ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_float,
    ctypes.c_void_p, ctypes.c_int64,
)
"""The C signature of `pullback_sbgemm`, for calling it from Python (tests, eager)."""


def call(trans_a: bool, trans_b: bool, m: int, n: int, k: int, a: Any, b: Any, out: Any) -> None:
    """`out = op(a) @ op(b)` for C-contiguous bfloat16 (uint16) arrays `a`, `b` and a
    C-contiguous float32 `out` of shape (m, n) (eager and interpreter products)."""
    global _fn
    if _fn is None:
        addr = address()
        if addr is None:
            raise RuntimeError("the bfloat16 GEMM needs a CPU with AVX512-BF16")
        _fn = SBGEMM(addr)
    _fn(_ROW_MAJOR, _TRANS if trans_a else _NO_TRANS, _TRANS if trans_b else _NO_TRANS, m, n, k, 1.0,
        a.ctypes.data, a.shape[1], b.ctypes.data, b.shape[1], 0.0, out.ctypes.data, max(n, 1))


__all__ = ["KC", "MC", "MR", "NR", "SBGEMM", "SYMBOL", "address", "bind", "call", "enabled", "host_has_bf16_dot"]
