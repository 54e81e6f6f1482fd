"""Shape ops: reshape, transpose, concat, split, slice, pad, squeeze/unsqueeze, expand."""

from __future__ import annotations

SHAPE_OPS: list[type] = []
