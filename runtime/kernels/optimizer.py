"""Kernels of the optimizer updates."""

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import kernel


@kernel(pd.SgdOp)
def sgd(op, param: np.ndarray, grad: np.ndarray) -> np.ndarray:
    return param - op.prop("learning_rate") * grad
