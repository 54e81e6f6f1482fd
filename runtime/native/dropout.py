"""The dropout of `pd.dropout` in native code, for the interpreter kernel.

The mask hashes each flat index with splitmix64 (`dialects/pd/nn.py`: `SPLITMIX_*`,
`DROPOUT_BITS`, `dropout_threshold`), and the compiled lowering reproduces it bit for
bit.  In numpy the hash is a dozen passes of unvectorized 64-bit arithmetic over the
mask (about 11 ns an element, 45 us for a [32, 128] mask: a third of an eager dropout
step, see benchmarks/RESULTS.md) and applying it (`np.where(keep, x * f, 0)`) two
more passes (~14 us); one fused native loop draws and applies the mask in about
2 ns an element, and the gradient's application of the same mask is another loop.
The loops are LLVM IR written from the same constants and JIT-compiled once per
process by llvmlite (already in the process for the compiled backend), in their own
small engine, as `runtime/native/blas.py` does its router: no thread pool, no BLAS binding.
Each entry point returns None where no native code can be had (or the arrays do not
suit it: read-only or strided), and the caller computes the same values in numpy
(tests/unit/runtime/native/test_dropout_native.py checks they agree bit for bit).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import numpy as np

from pullback.runtime.native.llvm_engine import compile_ir
from pullback.dialects.pd.nn import DROPOUT_BITS, SPLITMIX_GAMMA, SPLITMIX_LAST_SHIFT, SPLITMIX_MIX


def _i64(v: int) -> int:
    """`v` (mod 2**64) as the signed literal LLVM IR's parser accepts for an i64."""
    v %= 1 << 64
    return v - (1 << 64) if v >= 1 << 63 else v


_TYPES: dict[np.dtype[Any], tuple[str, Any]] = {np.dtype(np.float32): ("float", ctypes.c_float), np.dtype(np.float64): ("double", ctypes.c_double)}
"""The element types the apply loops are compiled for: LLVM's name and ctypes'."""


def _hash(z: str) -> list[str]:
    """IR lines hashing `%z` (the counter) into `%top`, the top `DROPOUT_BITS` bits."""
    lines, v = [], z
    for k, (shift, mult) in enumerate(SPLITMIX_MIX):
        lines += [f"  %s{k} = lshr i64 {v}, {shift}", f"  %x{k} = xor i64 {v}, %s{k}",
                  f"  %m{k} = mul i64 %x{k}, {_i64(mult)}"]
        v = f"%m{k}"
    return lines + [f"  %sl = lshr i64 {v}, {SPLITMIX_LAST_SHIFT}", f"  %h = xor i64 {v}, %sl",
                    f"  %top = lshr i64 %h, {64 - DROPOUT_BITS}"]


def _apply(t: str) -> list[str]:
    """IR lines storing `keep ? x[i] * f : 0` (numpy's `np.where(keep, x * f, 0)`) to y[i]."""
    return [f"  %xp = getelementptr {t}, ptr %x, i64 %i", f"  %v = load {t}, ptr %xp",
            f"  %scaled = fmul {t} %v, %f", f"  %r = select i1 %keep, {t} %scaled, {t} 0.0",
            f"  %yp = getelementptr {t}, ptr %y, i64 %i", f"  store {t} %r, ptr %yp"]


def _loop(name: str, params: str, first: list[str], body: list[str]) -> str:
    """A function looping `%i` over `[0, n)`; `first` are the phis after `%i`'s."""
    lines = "\n".join(first + body)
    return f"""
define void @{name}({params}) nounwind {{
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
{lines}
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""


def mask_ir() -> str:
    """The loops, per flat index `i < n` and with the hash
    `h(i) = splitmix64(seed + (i + 1) * GAMMA) >> (64 - DROPOUT_BITS)`:

    * `pb_dropout_keep(seed, n, threshold, keep)`: `keep[i] = h(i) >= threshold`
      (unsigned; one byte per element, numpy's bool);
    * `pb_dropout_<T>(seed, n, threshold, keep, x, f, y)`: that, and
      `y[i] = keep[i] ? x[i] * f : 0` (a forward dropout in one pass);
    * `pb_dropout_apply_<T>(keep, x, f, y, n)`: the second part alone, for a mask
      drawn before (the gradient of a dropout)."""
    counter = ["  %prev = phi i64 [%seed, %entry], [%z, %loop]",
               f"  %z = add i64 %prev, {_i64(SPLITMIX_GAMMA)}", *_hash("%z"),
               "  %keep = icmp uge i64 %top, %thr", "  %byte = zext i1 %keep to i8",
               "  %kp = getelementptr i8, ptr %keepout, i64 %i", "  store i8 %byte, ptr %kp"]
    mask = "i64 %seed, i64 %n, i64 %thr, ptr noalias nocapture %keepout"
    out = [_loop("pb_dropout_keep", mask, counter, [])]
    for t, _ in _TYPES.values():
        xs = f"ptr noalias nocapture %x, {t} %f, ptr noalias nocapture %y"
        out.append(_loop(f"pb_dropout_{t}", f"{mask}, {xs}", counter, _apply(t)))
        load_keep = ["  %kq = getelementptr i8, ptr %keepin, i64 %i", "  %kb = load i8, ptr %kq",
                     "  %keep = icmp ne i8 %kb, 0"]
        out.append(_loop(f"pb_dropout_apply_{t}", f"ptr noalias nocapture %keepin, {xs}, i64 %n",
                         load_keep, _apply(t)))
    return "".join(out)


class _Native:
    """The compiled loops as ctypes functions; the engine owning their machine code
    lives as long as the process."""

    def __init__(self) -> None:
        self.engine = compile_ir(mask_ir(), opt=3, host_cpu=True)
        addr = self.engine.get_function_address
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        self.keep = ctypes.CFUNCTYPE(None, ctypes.c_uint64, i64, i64, ptr)(addr("pb_dropout_keep"))
        self.fused: dict[np.dtype[Any], Any] = {}
        self.apply: dict[np.dtype[Any], Any] = {}
        for dt, (t, ct) in _TYPES.items():
            self.fused[dt] = ctypes.CFUNCTYPE(None, ctypes.c_uint64, i64, i64, ptr, ptr, ct, ptr)(
                addr(f"pb_dropout_{t}"))
            self.apply[dt] = ctypes.CFUNCTYPE(None, ptr, ptr, ct, ptr, i64)(addr(f"pb_dropout_apply_{t}"))


_lock = threading.Lock()
_native: _Native | None = None
_tried = False


def _get() -> _Native | None:
    """The compiled loops (compiled on first use), or None when llvmlite cannot JIT here."""
    global _native, _tried
    if _native is None and not _tried:
        with _lock:
            if not _tried:
                try:
                    _native = _Native()
                except Exception:  # noqa: BLE001 - no JIT on this platform: numpy computes it
                    _native = None
                _tried = True
    return _native


def address(a: np.ndarray) -> int | None:
    """The data address of a C-contiguous array, ~1 us (`a.ctypes.data` costs ~3 us,
    a fifth of a small mask); None for a read-only or strided one."""
    if not a.flags.c_contiguous:
        return None
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a.data))
    except (TypeError, ValueError):  # read-only
        return None


def keep_mask(seed: int, n: int, threshold: int) -> np.ndarray | None:
    """The flat boolean keep-mask of `n` elements (`dropout_keep`'s definition), or
    None when native code is unavailable."""
    native = _get()
    if native is None:
        return None
    out = np.empty(n, np.bool_)
    if n:
        native.keep(seed % (1 << 64), n, threshold, address(out))
    return out


def dropout(seed: int, threshold: int, x: np.ndarray, factor: float) -> tuple[np.ndarray, np.ndarray] | None:
    """`(keep, y)`: the keep-mask shaped like x and `np.where(keep, x * factor, 0)` in
    x's float type, from one pass; None when native code cannot do it (numpy then)."""
    native = _get()
    fn = None if native is None else native.fused.get(x.dtype)
    xa = None if fn is None or not x.size else address(x)
    if fn is None or xa is None:
        return None
    keep = np.empty(x.shape, np.bool_)
    y = np.empty_like(x)
    fn(seed % (1 << 64), x.size, threshold, address(keep), xa, factor, address(y))
    return keep, y


def apply_mask(keep: np.ndarray, keep_address: int, x: np.ndarray, factor: float) -> np.ndarray | None:
    """`np.where(keep, x * factor, 0)` for a mask whose data address is known (it is
    kept read-only); None when native code cannot do it."""
    native = _get()
    fn = None if native is None else native.apply.get(x.dtype)
    xa = None if fn is None or not x.size or keep.shape != x.shape else address(x)
    if fn is None or xa is None:
        return None
    y = np.empty_like(x)
    fn(keep_address, xa, factor, address(y), x.size)
    return y


__all__ = ["address", "apply_mask", "dropout", "keep_mask", "mask_ir"]
