"""Fuzzer specs of the creation ops: constants other ops read (`fill_constant`,
`fill_any_like`, `assign_value`, `arange`, `linspace`, `eye`), in the case's float
type (`FLOAT`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr

from pullback.dialects import pd

from ..case import FLOAT
from ..gen import Gen, Spec, registry

SPECS: dict[type[pd.PdOp], Spec] = {}
spec = registry(SPECS)


@spec(pd.FillConstantOp)
def _fill_constant(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    return (), {"shape": list(g.shape()), "value": g.choice([0.5, -2.0, 1.0]), "dtype": FLOAT}


@spec(pd.FillAnyLikeOp)
def _fill_any_like(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    return (g.float_val(),), {"value": g.choice([0.0, 1.0, -0.5])}


@spec(pd.AssignValueOp)
def _assign_value(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    shape = g.shape()
    values = ArrayAttr([pd.f64_attr(float(v)) for v in np.round(g.floats(shape), 3).ravel()])
    return (), {"shape": list(shape), "values": values, "dtype": FLOAT}


@spec(pd.ArangeOp)
def _arange(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    return (), {"start": g.choice([0.0, -1.5, 2.0]), "end": g.choice([3.0, 4.5]), "step": g.choice([1.0, 0.5]),
                "dtype": FLOAT}


@spec(pd.LinspaceOp)
def _linspace(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    return (), {"start": -1.0, "stop": g.choice([1.0, 2.5]), "num": g.randint(1, 5), "dtype": FLOAT}


@spec(pd.EyeOp)
def _eye(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    return (), {"num_rows": g.randint(1, 4), "num_columns": g.randint(1, 4), "dtype": FLOAT}


__all__ = ["SPECS"]
