"""The fuzzer's data: a generated program (`Case`, made of `Input`s and `Step`s) and
what a fuzzing run did (`Stats`).

A case holds float inputs as float64 arrays whatever its float type; `cast_input`
gives them the case's type, and `resolve` replaces the `FLOAT` placeholder in a
step's properties with it.  Generation (`generate.py`) makes cases, checking
(`check.py`) runs them, shrinking (`shrink.py`) makes them smaller.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pullback.dialects import pd

FLOAT = "$float"
"""A dtype property meaning 'the case's float type' (float64 or float32)."""


@dataclass
class Input:
    """A fed value: `array` (float64 for floats, whatever the case's float type),
    dimension 0 declared dynamic (`?`) when `dynamic`, a trainable `pd.parameter`
    (static mode) when `param`; gradients are taken for float inputs with `grad`."""

    array: np.ndarray
    dynamic: bool = False
    param: bool = False
    grad: bool = True


@dataclass
class Step:
    """One op: its class, operands (value ids) and properties."""

    op: type[pd.PdOp]
    args: tuple[int, ...]
    props: dict[str, Any]


Item = Input | Step


@dataclass
class Case:
    """A generated program.  Values are numbered in creation order: an input makes
    one value, a step one per result (`producers[v] = (item index, result index)`).
    The loss is `sum_k reduce_sum(v_k * projections[v_k])` over the values `terms`."""

    seed: int
    dtype: str
    items: list[Item] = field(default_factory=list)
    producers: list[tuple[int, int]] = field(default_factory=list)
    terms: list[int] = field(default_factory=list)
    projections: dict[int, np.ndarray] = field(default_factory=dict)

    def steps(self) -> list[Step]:
        """The program's ops, in order."""
        return [it for it in self.items if isinstance(it, Step)]

    def describe(self, v: int) -> str:
        """Value v in words, for reports: `input in3`, `pd.tanh (step 4) result #0`."""
        i, r = self.producers[v]
        it = self.items[i]
        if isinstance(it, Input):
            return f"input in{i}"
        return f"{it.op.name} (step {i}) result #{r}"


@dataclass
class Stats:
    """What a fuzzing run did."""

    programs: int = 0
    ops: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    fd_checked: int = 0
    fd_skipped: int = 0
    failures: list[str] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)
    """The seeds checked, in order."""


def resolve(props: dict[str, Any], dtype: str) -> dict[str, Any]:
    """`props` with the `FLOAT` placeholder replaced by `dtype`."""
    return {k: (dtype if v == FLOAT else v) for k, v in props.items()}


def cast_input(a: np.ndarray, dtype: str) -> np.ndarray:
    """A fed array in the case's float type (integer and bool arrays unchanged)."""
    return a.astype(dtype) if a.dtype.kind == "f" else a


def dtype_of(a: np.ndarray, dtype: str) -> str:
    """The dtype name a fed array is declared with in a case of float type `dtype`."""
    return dtype if a.dtype.kind == "f" else pd.DTYPE_BY_NUMPY[a.dtype].name


__all__ = ["FLOAT", "Case", "Input", "Item", "Stats", "Step", "cast_input", "dtype_of", "resolve"]
