"""`paddle.autograd.PyLayer`: an eager op whose forward and backward are Python.

`MyLayer.apply(*args, **kwargs)` runs `MyLayer.forward(ctx, *args, **kwargs)` with
recording off (its inner ops leave no graph behind) and, when some Tensor argument
needs a gradient, makes its Tensor outputs the results of one `PyNode`.  A backward
call that reaches a `PyNode` (frontend/autograd/staged.py) stops there as at a hooked tensor:
once the node's outputs have their complete gradients (the engine processes such
nodes latest-created first), it calls `MyLayer.backward(ctx, *grads)` and carries the
returned gradients on to the forward's Tensor arguments, in their order.

This is also how eager recompute (`frontend/recompute.py`) keeps no activations.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pullback.dialects.pd.dtypes import is_inexact_data
from pullback.frontend.eager import Node, Tensor, _parent_of, _set_grad_enabled, is_grad_enabled


class PyLayerContext:
    """The `ctx` of a PyLayer's `forward` and `backward`: tensors saved for the
    backward (`save_for_backward` / `saved_tensor`) and any attribute the user sets."""

    def __init__(self) -> None:
        self.container: tuple[Any, ...] | None = None
        self.not_inplace_tensors: tuple[Any, ...] = ()
        self.non_differentiable: tuple[Any, ...] = ()
        self.materialize_grads = True

    if TYPE_CHECKING:
        # Users (and eager recompute) keep any attribute on the ctx.
        def __getattr__(self, name: str) -> Any: ...

        def __setattr__(self, name: str, value: Any) -> None: ...

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep `tensors` for `backward` (read them with `saved_tensor()`)."""
        self.container = tensors

    def saved_tensor(self) -> tuple[Any, ...] | None:
        """What `save_for_backward` kept (None when it was not called)."""
        return self.container

    def mark_not_inplace(self, *args: Any) -> None:
        """Outputs that are not modified in place (pullback never aliases them)."""
        self.not_inplace_tensors = args

    def mark_non_differentiable(self, *args: Any) -> None:
        """Outputs that get no gradient (their `stop_gradient` stays True)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether `backward` receives zeros (True, the default) or None for outputs
        that got no gradient."""
        self.materialize_grads = bool(value)


class PyNode:
    """One `PyLayer.apply` in the eager graph: its layer class, context, where each
    Tensor argument came from (`parents`, as `Node.parents`) and its Tensor
    outputs' shapes and dtypes (for zero gradients)."""

    __slots__ = ("layer", "ctx", "parents", "inputs", "outputs", "seq", "freed", "__weakref__")

    def __init__(
        self, layer: type[PyLayer], ctx: PyLayerContext, parents: tuple[tuple[Any, int], ...],
        inputs: list[np.ndarray], outputs: list[np.ndarray],
    ) -> None:
        self.layer = layer
        self.ctx = ctx
        self.parents = parents
        self.inputs = [(a.shape, a.dtype) for a in inputs]
        self.outputs = [(a.shape, a.dtype) for a in outputs]
        self.freed = False
        # The same numbering as recorded ops: creation order is a topological order.
        self.seq = next(Node._seq)

    def free(self) -> None:
        """Drop what the forward saved (after a backward without retain_graph)."""
        self.ctx.container = None
        self.freed = True

    def run_backward(self, grads: list[Tensor | None], create_graph: bool) -> list[Tensor | None]:
        """Call the layer's `backward` on the outputs' gradients; one gradient (or
        None) per Tensor argument of `forward`, checked."""
        if self.ctx.materialize_grads:
            grads = [
                Tensor._new(np.zeros(shape, dtype), None, 0, True) if g is None else g
                for g, (shape, dtype) in zip(grads, self.outputs)
            ]
        old = _set_grad_enabled(create_graph)
        try:
            res = self.layer.backward(self.ctx, *grads)
        finally:
            _set_grad_enabled(old)
        out = list(res) if isinstance(res, (tuple, list)) else [res]
        name = self.layer.__name__
        if len(out) != len(self.parents):
            raise ValueError(
                f"{name}.backward returned {len(out)} gradient(s), but forward received "
                f"{len(self.parents)} Tensor input(s): return one gradient (or None) per Tensor input"
            )
        for i, (g, (shape, _)) in enumerate(zip(out, self.inputs)):
            if g is None:
                continue
            if not isinstance(g, Tensor):
                raise ValueError(
                    f"{name}.backward: gradient #{i} must be a Tensor or None, got {type(g).__name__}"
                )
            if tuple(g.shape) != shape:
                raise ValueError(
                    f"{name}.backward: gradient #{i} has shape {list(g.shape)}, but Tensor input "
                    f"#{i} of forward has shape {list(shape)}"
                )
        return out

    def __repr__(self) -> str:
        return f"<PyNode {self.layer.__name__}{' (freed)' if self.freed else ''}>"


class PyLayer:
    """Subclass with static methods `forward(ctx, *args, **kwargs)` and
    `backward(ctx, *grads)`, then call `MyLayer.apply(*args, **kwargs)`.

    `backward` receives one gradient per Tensor output of `forward` and returns one
    gradient (a Tensor, or None) per Tensor argument of `forward` (positional ones,
    then keyword ones, in order; the tensors of a list or tuple argument count one by
    one).  A forward with no Tensor output, or a backward gradient that is neither a
    Tensor nor None, raises ValueError, as in Paddle."""

    # True for layers whose forward may read parameters that are not arguments
    # (recompute): they are recorded even when no argument needs a gradient.
    _reads_parameters: ClassVar[bool] = False

    @staticmethod
    def forward(ctx: PyLayerContext, *args: Any, **kwargs: Any) -> Any:
        """The forward computation (override it)."""
        raise NotImplementedError("You must implement the forward function for PyLayer.")

    @staticmethod
    def backward(ctx: PyLayerContext, *args: Any) -> Any:
        """The gradients of the forward's Tensor inputs (override it)."""
        raise NotImplementedError("You must implement the backward function for PyLayer.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run `forward` now (without recording its ops) and, when a Tensor argument
        needs a gradient, record this layer as one node of the eager graph."""
        ctx = PyLayerContext()
        # Tensors directly in a list or tuple argument are inputs too (as in Paddle:
        # `apply([x1, x2, x3])` gets one gradient per tensor of the list).
        tensors = [
            t for a in itertools.chain(args, kwargs.values())
            for t in (a if isinstance(a, (list, tuple)) else (a,)) if isinstance(t, Tensor)
        ]
        old = _set_grad_enabled(False)
        try:
            outs = cls.forward(ctx, *args, **kwargs)
        finally:
            _set_grad_enabled(old)
        record = is_grad_enabled() and (cls._reads_parameters or any(not t.stop_gradient for t in tensors))
        single = not isinstance(outs, (tuple, list))
        items = [outs] if single else list(outs)
        positions = [i for i, o in enumerate(items) if isinstance(o, Tensor)]
        if not positions:
            raise ValueError(f"{cls.__name__}: at least one output of `PyLayer.forward` must be a Tensor")
        if not record:
            return outs
        node = PyNode(cls, ctx, tuple(_parent_of(t) for t in tensors), [t._data for t in tensors],
                      [items[i]._data for i in positions])
        skip = {id(t) for t in ctx.non_differentiable}
        given = {id(t) for t in tensors}
        not_inplace = {id(t) for t in ctx.not_inplace_tensors}
        for i in positions:
            o = items[i]
            if id(o) in given and id(o) not in not_inplace and not o.stop_gradient and o._node is None:
                # Paddle treats a returned input as modified in place, which a leaf
                # that needs a gradient must not be (mark_not_inplace allows it).
                raise ValueError(
                    f"{cls.__name__}: Leaf Var that doesn't stop gradient can't use inplace strategy "
                    "(forward returns its input; call ctx.mark_not_inplace(x) or return a new tensor)"
                )
        for k, i in enumerate(positions):
            o = items[i]
            diff = is_inexact_data(o._arr.dtype) and id(o) not in skip
            if id(o) in given or o._node is not None:
                # An argument passed through (or a tensor with a graph of its own):
                # a new tensor, so the argument's own history stays as it was.
                items[i] = o = Tensor._new(o._data, None, 0, True)
            # As in Paddle, the returned tensor itself becomes the layer's output,
            # so one the forward saved for backward is differentiable again.
            if diff:
                o._node, o._index, o.stop_gradient = node, k, False
        if single:
            return items[0]
        return tuple(items) if isinstance(outs, tuple) else items


class EagerPyLayer(PyLayer):
    """Paddle's older name of `PyLayer`."""


EagerPyLayerContext = PyLayerContext


def is_pynode(obj: Any) -> bool:
    """Whether `obj` (a tensor's producer) is a PyLayer node."""
    return type(obj) is PyNode


__all__ = ["EagerPyLayer", "EagerPyLayerContext", "PyLayer", "PyLayerContext", "PyNode", "is_pynode"]
