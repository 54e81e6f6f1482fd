"""`paddle.distribution.Chi2` (Paddle 3.3.1's definitions): Gamma(df / 2, 1 / 2)."""

from __future__ import annotations

from typing import Any

import pullback as paddle
from pullback.frontend.distribution.distribution import dtype_name, is_tensor
from pullback.frontend.distribution.gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The chi-squared distribution with `df` degrees of freedom (a float or a
    tensor; positive, which eager mode checks)."""

    def __init__(self, df: Any) -> None:
        if not paddle.in_dynamic_mode() and not isinstance(df, float) and not is_tensor(df):
            raise TypeError(f"Chi2: df must be a float or a Tensor, got {type(df).__name__}")
        if self._validate_args(df):
            self.df = df
            self.dtype = dtype_name(df.dtype)
        else:
            [self.df] = self._to_tensor(df)
            self.dtype = paddle.get_default_dtype()
        self.rate = paddle.full_like(self.df, 0.5)
        if paddle.in_dynamic_mode() and not bool(paddle.all(self.df > 0)):
            raise ValueError("The arg of `df` must be positive.")
        super().__init__(self.df * 0.5, self.rate)
