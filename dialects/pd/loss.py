"""Losses: cross_entropy, softmax_with_cross_entropy, square_error_cost, one_hot."""

from __future__ import annotations

LOSS_OPS: list[type] = []
