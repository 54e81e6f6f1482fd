"""`paddle.base.core` / `fluid.core`: the few C++-core entry points Python programs
and Paddle's tests reach for (build facts, places, dtype enums, flags)."""

from __future__ import annotations

from typing import Any

from pullback.dialects.pd.dtypes import DTYPE_TABLE
from pullback.frontend import flags
from pullback.frontend.api.device import is_compiled_with_cuda
from pullback.frontend.reader import EOFException
from pullback.runtime.places import CPUPlace, CUDAPlace
from pullback.runtime.scope import Scope


def is_compiled_with_xpu() -> bool:
    """False: pullback has no XPU backend."""
    return False


def is_compiled_with_rocm() -> bool:
    """False: pullback has no ROCm backend."""
    return False


def is_compiled_with_custom_device(device_type: str = "") -> bool:
    """False: pullback has no custom devices."""
    return False


def is_compiled_with_mkldnn() -> bool:
    """False: pullback does not use oneDNN."""
    return False


def globals() -> dict[str, Any]:
    """The FLAGS and their values (`core.globals()['FLAGS_x']`)."""
    return dict(flags._values)


class VarDesc:
    """`core.VarDesc.VarType`: the dtypes under Paddle's enum spellings (`FP32` is
    `paddle.float32`, one per row of the dtype table), and variable kinds."""

    class VarType:
        LOD_TENSOR = "lod_tensor"
        DENSE_TENSOR = "lod_tensor"
        SELECTED_ROWS = "selected_rows"


for _d in DTYPE_TABLE:
    setattr(VarDesc.VarType, _d.enum, _d)


class _EagerNamespace:
    """`core.eager`: `core.eager.Tensor` is the eager Tensor class (loaded on first
    use, so importing this module does not load eager mode)."""

    @property
    def Tensor(self) -> Any:
        from pullback.frontend.eager import Tensor

        return Tensor

    @staticmethod
    def _add_backward_final_hook(hook: Any) -> None:
        """Call `hook()` once, at the end of the next eager backward."""
        from pullback.frontend.autograd import add_backward_final_hook

        add_backward_final_hook(hook)


eager = _EagerNamespace()


def set_num_threads(num_threads: int) -> None:
    """`core.set_num_threads(n)`: compiled programs run their large loops on `n`
    threads (`runtime/native/threadpool.py`), and the BLAS libraries at most `n`, fewer while
    other processes occupy the cores, unless `OPENBLAS_NUM_THREADS` / `MKL_NUM_THREADS`
    say otherwise (`runtime/native/blas_threads.py`); both take effect at once."""
    from pullback.runtime.native import blas_threads
    from pullback.runtime.native.threadpool import set_num_threads as set_threads

    set_threads(num_threads)
    blas_threads.apply()

__all__ = [
    "CPUPlace", "CUDAPlace", "EOFException", "Scope", "VarDesc", "eager", "globals", "is_compiled_with_cuda",
    "is_compiled_with_custom_device", "is_compiled_with_mkldnn", "is_compiled_with_rocm",
    "is_compiled_with_xpu", "set_num_threads",
]
