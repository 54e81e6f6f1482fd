"""Paddle's dtype objects: `paddle.float32` prints as `paddle.float32` and equals the
name `'float32'`, so both spellings work wherever Paddle accepts a dtype."""

from __future__ import annotations

from pullback.dialects.pd.base import DTYPES


class DType(str):
    """A dtype name that prints as Paddle prints it (`paddle.float32`).

    It is a `str` holding the plain name, so comparisons (`x.dtype == 'float32'`),
    dict lookups and formatting (`f"{x.dtype}"` gives `float32`) use the name; only
    `print`/`str`/`repr` add the `paddle.` prefix.
    """

    __slots__ = ()

    @property
    def name(self) -> str:
        """The plain dtype name (`'float32'`)."""
        return str.__str__(self)

    def __str__(self) -> str:
        return f"paddle.{self.name}"

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)


_CACHE: dict[str, DType] = {}


def dtype(name: str) -> DType:
    """The shared DType object for a dtype name."""
    plain = str.__str__(name)
    found = _CACHE.get(plain)
    if found is None:
        found = _CACHE[plain] = DType(plain)
    return found


float32, float64, int32, int64, bool_ = (dtype(d.name) for d in DTYPES)
"""Paddle's dtype objects, one per entry of the dialect's dtype table (`pd.DTYPES`)."""
