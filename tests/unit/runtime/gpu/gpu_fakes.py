"""Fakes of the GPU runtime's outside world, shared by the GPU runtime tests: a
recording device (buffers in host memory, launches logged, host<->device copies
counted) and a cuBLAS library computing what cuBLAS's column-major gemm computes on
host memory (so the argument mapping is checked against numpy)."""

from __future__ import annotations

import ctypes
from collections import Counter

import numpy as np


# ------------------------------------------------------------ a recording device


class FakeBuffer:
    """Device memory in a host array; `ptr` is its real host address (for FakeCublas)."""

    def __init__(self, device: FakeDevice, nbytes: int) -> None:
        self.device = device
        self.nbytes = nbytes
        self.data = np.zeros(max(nbytes, 1), np.uint8)
        self.ptr = ctypes.c_uint64(self.data.ctypes.data)

    def upload(self, array: np.ndarray) -> None:
        self.device.copies["up"] += 1
        self.data[: self.nbytes] = np.ascontiguousarray(array).reshape(-1).view(np.uint8)

    def copy_from(self, other: FakeBuffer, nbytes: int | None = None) -> None:
        n = self.nbytes if nbytes is None else nbytes
        self.data[:n] = other.data[:n]

    def download(self, out: np.ndarray) -> np.ndarray:
        self.device.copies["down"] += 1
        out.reshape(-1).view(np.uint8)[:] = self.data[: self.nbytes]
        if self.nbytes == 1 and self.device.predicates:
            # No kernel runs here: a one-byte read (a branch or loop predicate) is
            # answered from the device's script.
            out.reshape(-1).view(np.uint8)[:] = self.device.predicates.pop(0)
        return out


class FakeFunction:
    def __init__(self, log: list, name: str) -> None:
        self.log, self.name = log, name

    def launch(self, grid, block, args, shared_bytes: int = 0) -> None:
        self.launch_packed(grid, block, self.pack(args), shared_bytes)

    def pack(self, args) -> FakePacked:
        return FakePacked(args)

    def launch_packed(self, grid, block, packed, shared_bytes: int = 0) -> None:
        self.log.append((self.name, tuple(grid), tuple(block), list(packed.args)))


class FakePacked:
    """What `Function.pack` returns, on the fake: the argument list itself."""

    def __init__(self, args) -> None:
        self.args = list(args)

    def set_buffer(self, pos: int, buffer) -> None:
        self.args[pos] = buffer


class FakeModule:
    def __init__(self, log: list) -> None:
        self.log = log

    def function(self, name: str) -> FakeFunction:
        return FakeFunction(self.log, name)


class FakeDevice:
    """Records launches; counts copies (`copies['up']`, `copies['down']`)."""

    index = 0
    name = "Fake GPU"
    compute_capability = (9, 0)
    peak_bandwidth_gbs = 1000.0

    def __init__(self) -> None:
        self.launches: list = []
        self.copies: Counter[str] = Counter()
        self.predicates: list[bool] = []
        """Values of the next one-byte downloads (predicates the kernels would compute)."""

    @property
    def uploads(self) -> int:
        return self.copies["up"]

    def alloc(self, nbytes: int) -> FakeBuffer:
        return FakeBuffer(self, nbytes)

    def to_device(self, array: np.ndarray) -> FakeBuffer:
        buf = FakeBuffer(self, np.asarray(array).nbytes)
        buf.upload(array)
        return buf

    def load_module(self, ptx: str) -> FakeModule:
        assert ".entry" in ptx
        return FakeModule(self.launches)

    def make_current(self) -> None:
        pass

    def synchronize(self) -> None:
        pass


# ------------------------------------------------------------------ a fake cuBLAS


def _colmajor(addr: int, ld: int, rows: int, cols: int, dtype) -> np.ndarray:
    """A (rows x cols) column-major matrix with leading dimension `ld` at `addr`."""
    ctype = np.ctypeslib.as_ctypes_type(dtype)
    raw = (ctype * (ld * (cols - 1) + rows)).from_address(addr)
    flat = np.frombuffer(raw, dtype)
    return np.lib.stride_tricks.as_strided(
        flat, (rows, cols), (flat.itemsize, ld * flat.itemsize), writeable=True
    )


class FakeCublas:
    """libcublas's gemm entry points on host memory, column-major as the real one."""

    def __init__(self, status: int = 0) -> None:
        self.status = status
        self.calls: list[tuple] = []
        self.math_mode: int | None = None

    def cublasCreate_v2(self, ref):
        ref._obj.value = 1234
        return self.status

    def cublasSetStream_v2(self, handle, stream):
        return 0

    def cublasSetMathMode(self, handle, mode):
        self.math_mode = mode.value
        return 0

    def cublasDestroy_v2(self, handle):
        return 0

    def cublasGetStatusString(self, status):
        return b"an invalid value was used as an argument"

    def _gemm(self, dtype, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count):
        ta, tb, m, n, k = ta.value, tb.value, m.value, n.value, k.value
        lda, ldb, ldc = lda.value, ldb.value, ldc.value
        itemsize = np.dtype(dtype).itemsize
        for i in range(count):
            A = _colmajor(a.value + i * sa * itemsize, lda, *((k, m) if ta else (m, k)), dtype)
            B = _colmajor(b.value + i * sb * itemsize, ldb, *((n, k) if tb else (k, n)), dtype)
            C = _colmajor(c.value + i * sc * itemsize, ldc, m, n, dtype)
            C[...] = alpha._obj.value * ((A.T if ta else A) @ (B.T if tb else B)) + beta._obj.value * C
        return 0

    def cublasSgemm_v2(self, h, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc):
        self.calls.append(("S", 1))
        return self._gemm(np.float32, ta, tb, m, n, k, al, a, lda, 0, b, ldb, 0, be, c, ldc, 0, 1)

    def cublasDgemm_v2(self, h, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc):
        self.calls.append(("D", 1))
        return self._gemm(np.float64, ta, tb, m, n, k, al, a, lda, 0, b, ldb, 0, be, c, ldc, 0, 1)

    def cublasSgemmStridedBatched(self, h, ta, tb, m, n, k, al, a, lda, sa, b, ldb, sb, be, c, ldc, sc, count):
        self.calls.append(("S", count.value))
        return self._gemm(np.float32, ta, tb, m, n, k, al, a, lda, sa.value, b, ldb, sb.value,
                          be, c, ldc, sc.value, count.value)


