"""Where computed gradients go: leaves' `.grad` (`backward`) or the list `grad`
returns, shared by both engines (`engine.py`, `staged.py`).

Also the *ghost* leaves: leaves that took part in a graph only through gradients
recorded by an earlier `create_graph=True` backward (`Node.ghosts`).  Paddle's
double-grad nodes read all their forward inputs, so such a leaf receives zeros
where it receives nothing else; these helpers give it those zeros.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pullback.frontend import hooks
from pullback.frontend.autograd.graph import Graph
from pullback.frontend.eager import Tensor


def deliver_leaf(leaf: Tensor, grad: np.ndarray) -> None:
    """Accumulate a leaf's gradient of one backward call, after its hooks."""
    hs = hooks.leaf_hooks(leaf)
    if hs:
        grad = hooks.run_hooks(hs, Tensor._new(grad, None, 0, True))._data
    leaf._accumulate_grad(grad)
    for hook in hooks.void_hooks(leaf):
        hook()


def ghost_leaves(g: Graph, cut: frozenset[Any]) -> dict[int, Tensor]:
    """The leaves that took part in `g` through recorded gradients (`Node.ghosts`)
    and may receive a gradient."""
    out: dict[int, Tensor] = {}
    for node in g.nodes:
        for t in node.ghosts:
            if not t.stop_gradient and id(t) not in cut:
                out[id(t)] = t
    return out


def deliver_ghost_zeros(ghosts: dict[int, Tensor], delivered: set[int]) -> None:
    """Zero gradients for the leaves that took part but received none (Paddle's
    double-grad nodes fill them with zeros)."""
    for k, leaf in ghosts.items():
        if k not in delivered:
            deliver_leaf(leaf, np.zeros_like(leaf._data))


def ghost_zero_results(
    grads: list[Any], inputs: list[Tensor], ghosts: dict[int, Tensor], create_graph: bool
) -> list[Any]:
    """`grads` with zeros for the inputs that took part but received none."""
    out = list(grads)
    for i, (gr, x) in enumerate(zip(grads, inputs)):
        if gr is None and id(x) in ghosts:
            zeros = np.zeros_like(x._data)
            out[i] = Tensor._new(zeros, None, 0, False) if create_graph else zeros
    return out


def check_used(used: Sequence[bool]) -> None:
    """Paddle's error for an input the outputs do not depend on (`allow_unused=False`)."""
    for i, u in enumerate(used):
        if not u:
            raise ValueError(
                f"The {i}-th input does not appear in the backward graph. Please check "
                "the input tensor or set allow_unused=True to get None result."
            )
