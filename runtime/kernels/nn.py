"""Kernels of the neural-network ops."""

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import kernel


@kernel(pd.MatmulOp)
def matmul(op, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if op.prop("transpose_x") and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if op.prop("transpose_y") and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    return np.matmul(x, y)
