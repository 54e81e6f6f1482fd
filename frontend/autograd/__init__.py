"""Eager autograd: `paddle.autograd` (`backward`, `grad`, `no_grad` and friends).

This package is the `paddle.autograd` namespace (`frontend/api/__init__.py` aliases
it); this module holds only its public names.  A backward call

1. collects the recorded nodes (`frontend/eager.py`) the targets depend on, in a
   deterministic topological order, and the *sources* they read: leaves that need a
   gradient and constants (`graph.py`);
2. looks the graph's structural signature (templates, wiring, which gradients are
   wanted) up in a plan cache (`plan_cache.py`); on a miss it writes the graph as
   `pd` IR (`materialize.py`) — `pd.data` per source, one op per node, then a
   `pd.backward` op (targets, seeds, wrt) — runs the `autodiff` pass
   (`differentiate`, the same one static programs use), folds the constants of the
   filled region (`fold.py`) and turns it into a plan: its ops as templates over
   numbered slots (`plan.py`);
3. runs the plan on the nodes' saved forward values (`runner.py`; nothing is
   recomputed).  With `create_graph=True` the plan's ops run as eager ops instead,
   so they are recorded and their results can be differentiated again;
4. accumulates leaf gradients into `.grad` (`backward`) or returns them (`grad`), and
   without `retain_graph` releases the saved values of every node it went through
   (`engine.py`, `delivery.py`).

Tensors with gradient hooks and PyLayers split a backward into stages
(`staged.py`).  The argument checking of the public functions is in `api.py`, the
grad-mode guards in `grad_mode.py`.

The plan cache is what makes a training loop cheap: from the second step on, a
backward is a graph walk, a dictionary lookup and the gradient kernels.
"""

from __future__ import annotations

from pullback.frontend.api import registry
from pullback.frontend.autograd.api import (
    add_backward_final_hook,
    backward,
    grad,
)

# Not Paddle names, but how the rest of pullback reaches the engine's extras
# (`paddle.DataParallel`'s all-reduce hook, `Tensor.backward`).
from pullback.frontend.autograd.api import register_post_backward_hook as register_post_backward_hook
from pullback.frontend.autograd.api import tensor_backward as tensor_backward
from pullback.frontend.autograd.grad_mode import enable_grad, no_grad, set_grad_enabled
from pullback.frontend.autograd.materialize import recorded_program
from pullback.frontend.autograd.plan_cache import cache_info, clear_cache
from pullback.frontend.eager import is_grad_enabled
from pullback.frontend.pylayer import EagerPyLayer, EagerPyLayerContext, PyLayer, PyLayerContext

# `paddle.autograd.backward_mode` is found by the alias finder (it runs before the
# path finder, so this package's real `__path__` does not hide it); the others are
# loaded on first use to keep `import paddle.autograd` light.
__getattr__, __dir__ = registry.lazy_attributes(
    __name__,
    {
        "backward_mode": "pullback.frontend.api.backward_mode",
        "jacobian": "pullback.frontend.jacobian:jacobian",
        "hessian": "pullback.frontend.jacobian:hessian",
        "Jacobian": "pullback.frontend.jacobian:Jacobian",
        "Hessian": "pullback.frontend.jacobian:Hessian",
    },
)

__all__ = [
    "EagerPyLayer",
    "EagerPyLayerContext",
    "Hessian",  # noqa: F822 - loaded on first use (module __getattr__)
    "Jacobian",  # noqa: F822 - loaded on first use (module __getattr__)
    "PyLayer",
    "PyLayerContext",
    "add_backward_final_hook",
    "backward",
    "backward_mode",  # noqa: F822 - loaded on first use (module __getattr__)
    "cache_info",
    "clear_cache",
    "enable_grad",
    "grad",
    "hessian",  # noqa: F822 - loaded on first use (module __getattr__)
    "is_grad_enabled",
    "jacobian",  # noqa: F822 - loaded on first use (module __getattr__)
    "no_grad",
    "recorded_program",
    "set_grad_enabled",
]
