"""Eager gradient hooks: `Tensor.register_hook`, `Tensor.retain_grads`,
`Tensor._register_backward_hook`.

Hooks are attached where Paddle attaches them:

* on a leaf, to the tensor itself: each backward call runs its hooks, in
  registration order, on the leaf's gradient before it is accumulated into `.grad`
  (a hook returning a tensor replaces the gradient, None keeps it);
* on an interior tensor (a recorded op's result), to that result of the graph node:
  the hooks run on the complete gradient flowing into it during `backward` /
  `paddle.grad`, and what they return flows on to the op's inputs.  `retain_grads()`
  keeps that gradient, before the hooks, as the tensor's `.grad`.

`frontend/autograd/engine.py` asks `has_interior()` whether a graph needs the staged
backward that hooks require; with no hook or retained tensor registered it costs one
integer test per call.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import Any

from pullback.frontend.eager import Node, Tensor

Hook = Callable[[Tensor], "Tensor | None"]

_ids = itertools.count()

_node_hooks: weakref.WeakKeyDictionary[Node, dict[int, dict[int, Hook]]] = weakref.WeakKeyDictionary()
"""Interior hooks: node -> result index -> hook id -> hook."""
_retained: weakref.WeakKeyDictionary[Node, dict[int, weakref.ref[Tensor]]] = weakref.WeakKeyDictionary()
"""Interior tensors whose gradient is kept (their chains hold the keeping hook):
node -> result index -> tensor, for the zeros an unused output of a traversed op
gets."""


class HookRemoveHelper:
    """The handle `register_hook` returns: `remove()` unregisters the hook (True the
    first time, False when it was already removed)."""

    def __init__(self, hooks: dict[int, Hook], hook_id: int) -> None:
        self._hooks = hooks
        self._id = hook_id

    def remove(self) -> bool:
        """Unregister the hook; False when there was nothing to remove."""
        return self._hooks.pop(self._id, None) is not None


def _check_hook(api: str, tensor: Tensor, hook: Any) -> None:
    if not callable(hook):
        raise TypeError(f"{api}: the hook must be callable, got {type(hook).__name__}")
    if tensor.stop_gradient:
        raise RuntimeError(
            "Cannot register hook on a tensor that stop gradient (stop_gradient=True)."
        )


def register_hook(self: Tensor, hook: Hook) -> HookRemoveHelper:
    """`Tensor.register_hook(hook)`: call `hook(grad)` when this tensor's gradient is
    computed; a returned tensor replaces the gradient.  Returns a handle whose
    `remove()` unregisters it."""
    _check_hook("register_hook", self, hook)
    hook_id = next(_ids)
    if self._node is None:
        hooks: dict[int, Hook] = self.__dict__.setdefault("_grad_hooks", {})
    else:
        hooks = _node_hooks.setdefault(self._node, {}).setdefault(self._index, {})
    hooks[hook_id] = hook
    return HookRemoveHelper(hooks, hook_id)


def retain_grads(self: Tensor) -> None:
    """`Tensor.retain_grads()`: keep this interior tensor's gradient in `.grad` after
    backward (leaves always keep theirs).  It takes its place in the tensor's hook
    chain: hooks registered before it change what is kept, later ones do not."""
    if self.stop_gradient or self._node is None:
        return
    ref = weakref.ref(self)

    def keep(grad: Tensor) -> None:
        t = ref()
        if t is not None:
            t.grad = grad

    _node_hooks.setdefault(self._node, {}).setdefault(self._index, {})[next(_ids)] = keep
    _retained.setdefault(self._node, {})[self._index] = ref


def register_backward_hook(self: Tensor, hook: Callable[[], None]) -> None:
    """`Tensor._register_backward_hook(hook)`: call `hook()` each time backward has
    accumulated this leaf's gradient."""
    if not callable(hook):
        raise TypeError("_register_backward_hook: the hook must be callable")
    if self._node is not None:
        raise ValueError("Only can register backward hook for leaf Tensor.")
    if self.stop_gradient:
        raise ValueError("Cannot register backward hook on a Tensor that stop gradient.")
    self.__dict__.setdefault("_void_hooks", []).append(hook)


def grad_ivar(self: Tensor) -> Tensor | None:
    """`Tensor._grad_ivar()`: the gradient tensor, or None."""
    return self.grad


# ------------------------------------------------------------ queries for autograd


def has_interior() -> bool:
    """True when some interior tensor has hooks or retains its gradient."""
    return bool(_node_hooks)


def interior(node: Node, index: int) -> tuple[list[Hook], bool] | None:
    """The hook chain of result `index` of `node` (retention included, in order) and
    whether a live tensor retains its gradient; None when there is no hook."""
    hooks = _node_hooks.get(node)
    hs = list(hooks.get(index, {}).values()) if hooks else []
    if not hs:
        return None
    ref = (_retained.get(node) or {}).get(index)
    return hs, ref is not None and ref() is not None


def run_hooks(hooks: list[Hook], grad: Tensor) -> Tensor:
    """Apply `hooks` in order; each may replace the gradient."""
    for hook in hooks:
        out = hook(grad)
        if out is not None:
            if not isinstance(out, Tensor):
                raise TypeError(
                    f"a gradient hook must return a Tensor or None, got {type(out).__name__}"
                )
            if out.shape != grad.shape:
                raise ValueError(
                    f"a gradient hook changed the gradient's shape from {grad.shape} to {out.shape}"
                )
            grad = out
    return grad


def leaf_hooks(tensor: Tensor) -> list[Hook]:
    """The gradient hooks of a leaf, in registration order."""
    return list(tensor.__dict__.get("_grad_hooks", {}).values())


def void_hooks(tensor: Tensor) -> list[Callable[[], None]]:
    """The `_register_backward_hook` hooks of a leaf."""
    return list(tensor.__dict__.get("_void_hooks", ()))


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "register_hook": register_hook,
    "retain_grads": retain_grads,
    "_register_backward_hook": register_backward_hook,
    "_grad_ivar": grad_ivar,
}
"""Attached to `Tensor` by `frontend/install.py`."""

__all__ = [
    "TENSOR_METHODS",
    "HookRemoveHelper",
    "grad_ivar",
    "has_interior",
    "interior",
    "leaf_hooks",
    "register_backward_hook",
    "register_hook",
    "retain_grads",
    "run_hooks",
    "void_hooks",
]
