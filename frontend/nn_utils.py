"""`paddle.nn.utils`: `parameters_to_vector`, `vector_to_parameters`,
`clip_grad_norm_`, `clip_grad_value_`, `weight_norm` / `remove_weight_norm` and
`spectral_norm`.

`weight_norm` and `spectral_norm` reparametrize a layer's weight: the layer's
`forward` is wrapped to recompute the weight from the new parameters before each
call (Paddle uses a forward pre-hook; the effect is the same).  `spectral_norm`'s
power iteration updates its `u` buffer in eager mode only (a static program uses
the initial `u` every run).  The gradient clipping functions act on eager `.grad`s.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from pullback.frontend.core import in_dynamic_mode
from pullback.frontend.nn_layers import Layer
from pullback.frontend.ops import elementwise as E
from pullback.frontend.ops import nn as N
from pullback.frontend.ops import reduction as R
from pullback.frontend.ops import shape as S


def parameters_to_vector(parameters: Iterable[Any], name: str | None = None) -> Any:
    """All parameters flattened and concatenated into one 1-D tensor."""
    flat = [S.reshape(p, [-1]) for p in parameters]
    if not flat:
        raise ValueError("parameters_to_vector: no parameters given")
    return S.concat(flat, axis=0, name=name) if len(flat) > 1 else flat[0]


def vector_to_parameters(vec: Any, parameters: Iterable[Any], name: str | None = None) -> None:
    """Copy consecutive slices of the 1-D `vec` into the parameters (in place, eager)."""
    if not in_dynamic_mode():
        raise NotImplementedError("vector_to_parameters: supported in eager mode only")
    data = np.asarray(vec.numpy()).reshape(-1)
    params = list(parameters)
    total = sum(math.prod(p.shape) for p in params)
    if data.size != total:
        raise ValueError(f"vector_to_parameters: vec has {data.size} elements, the parameters {total}")
    at = 0
    for p in params:
        n = math.prod(p.shape)
        p.set_value(data[at: at + n].reshape(p.shape))
        at += n


def _grads(parameters: Any) -> list[Any]:
    if not in_dynamic_mode():
        raise NotImplementedError("gradient clipping on .grad is supported in eager mode only")
    params = [parameters] if hasattr(parameters, "grad") and not isinstance(parameters, (list, tuple)) \
        else list(parameters)
    return [p for p in params if p.grad is not None]


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> Any:
    """Scale the parameters' gradients so that their total `norm_type` norm is at
    most `max_norm`; returns the total norm (before clipping)."""
    from pullback.frontend.eager import to_tensor

    params = _grads(parameters)
    grads = [p.grad.numpy().astype(np.float64) for p in params]
    if not grads:
        return to_tensor(0.0)
    if norm_type == math.inf:
        total = max(float(np.abs(g).max()) for g in grads)
    else:
        total = float(sum(float((np.abs(g) ** norm_type).sum()) for g in grads) ** (1.0 / norm_type))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} is non-finite")
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1.0:
        for p, g in zip(params, grads):
            p.grad = to_tensor((g * coef).astype(p.grad.numpy().dtype))
    return to_tensor(np.array(total, dtype=params[0].grad.numpy().dtype))


def clip_grad_value_(parameters: Any, clip_value: float) -> None:
    """Clamp every gradient entry into `[-clip_value, clip_value]`."""
    from pullback.frontend.eager import to_tensor

    for p in _grads(parameters):
        g = p.grad.numpy()
        p.grad = to_tensor(np.clip(g, -clip_value, clip_value).astype(g.dtype))


# ------------------------------------------------------------ reparametrizations


def _norm_except(w: Any, dim: int | None) -> Any:
    """The 2-norm of w over every dimension but `dim` (all when None), keeping dims."""
    rank = len(w.shape)
    axes = [a for a in range(rank) if dim is None or a != dim % rank]
    return E.sqrt(R.sum(E.square(w), axis=axes, keepdim=True))


def _wrap_forward(layer: Layer, key: str, compute: Any) -> None:
    """Recompute attribute `key` with `compute(layer)` before each forward."""
    inner = layer.forward

    def forward(*args: Any, **kwargs: Any) -> Any:
        object.__setattr__(layer, key, compute(layer))
        return inner(*args, **kwargs)

    layer.__dict__.setdefault("_reparam_forward", {})[key] = inner
    object.__setattr__(layer, "forward", forward)


def _g_broadcast(g: Any, rank: int, dim: int | None) -> Any:
    """`weight_g` (1-D `[w.shape[dim]]`, or 0-D for the whole tensor) shaped to
    broadcast against the weight."""
    if dim is None:
        return g
    return S.reshape(g, [int(g.shape[0]) if i == dim else 1 for i in range(rank)])


def weight_norm(layer: Layer, name: str = "weight", dim: int | None = 0) -> Layer:
    """Reparametrize `layer.<name>` as `g * v / ||v||` (norm over every dimension but
    `dim`; `dim=None` or `-1`: over the whole tensor), with new parameters
    `<name>_v` (the weight's shape) and `<name>_g` (Paddle's layout: 1-D
    `[shape[dim]]`, or 0-D when `dim` is None/-1), added in that order."""
    w = layer._parameters.get(name)
    if w is None:
        raise ValueError(f"weight_norm: layer has no parameter '{name}'")
    rank = len(w.shape)
    if dim is not None and not -rank <= dim < rank:
        raise ValueError("dim must set between [-R, R), R means the dimension of weight.")
    if dim is not None and dim == -1:
        dim = None
    if dim is not None:
        dim %= rank
    g_shape = [] if dim is None else [int(w.shape[dim])]
    if not in_dynamic_mode():
        raise NotImplementedError("weight_norm: supported in eager mode only")
    del layer._parameters[name]
    v = layer.create_parameter(list(w.shape), dtype=w.dtype)
    g = layer.create_parameter(g_shape, dtype=w.dtype)
    wv = w.numpy()
    v.set_value(wv)
    axes = tuple(a for a in range(rank) if dim is None or a != dim)
    g.set_value(np.sqrt((wv.astype(np.float64) ** 2).sum(axis=axes)).reshape(g_shape).astype(wv.dtype))
    layer.add_parameter(name + "_v", v)
    layer.add_parameter(name + "_g", g)
    layer.__dict__.setdefault("_weight_norm_dims", {})[name] = dim

    def compute(m: Layer) -> Any:
        wv = getattr(m, name + "_v")
        return wv * (_g_broadcast(getattr(m, name + "_g"), rank, dim) / _norm_except(wv, dim))

    _wrap_forward(layer, name, compute)
    object.__setattr__(layer, name, compute(layer))  # readable before the first forward
    return layer


def remove_weight_norm(layer: Layer, name: str = "weight") -> Layer:
    """Undo `weight_norm`: `<name>` becomes a plain parameter again."""
    inner = layer.__dict__.get("_reparam_forward", {}).pop(name, None)
    if inner is None:
        raise ValueError(f"remove_weight_norm: weight_norm of '{name}' not found in {type(layer).__name__}")
    dim = layer.__dict__.get("_weight_norm_dims", {}).pop(name, None)
    v, g = layer._parameters.pop(name + "_v"), layer._parameters.pop(name + "_g")
    w = v * (_g_broadcast(g, len(v.shape), dim) / _norm_except(v, dim))
    p = layer.create_parameter(list(v.shape), dtype=v.dtype)
    p.set_value(w.numpy())
    layer.__dict__.pop(name, None)
    layer.__dict__.pop("forward", None)
    layer.add_parameter(name, p)
    return layer


def spectral_norm(layer: Layer, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Layer:
    """Reparametrize `layer.<name>` as `w / sigma(w)`, the largest singular value
    estimated by power iteration (`<name>_orig`, buffers `<name>_u`, `<name>_v`)."""
    w = layer._parameters.get(name)
    if w is None:
        raise ValueError(f"spectral_norm: layer has no parameter '{name}'")
    if not in_dynamic_mode():
        raise NotImplementedError("spectral_norm: supported in eager mode only")
    if dim is None:
        # Paddle: dim 1 for Linear ([in, out] weights) and the transposed convolutions.
        from pullback.frontend.nn_cnn import Conv1DTranspose, Conv2DTranspose, Conv3DTranspose
        from pullback.frontend.nn_layers import Linear

        dim = 1 if isinstance(layer, (Conv1DTranspose, Conv2DTranspose, Conv3DTranspose, Linear)) else 0
    rank = len(w.shape)
    perm = [dim] + [i for i in range(rank) if i != dim]
    h = w.shape[dim]
    width = math.prod(w.shape) // h
    del layer._parameters[name]
    layer.add_parameter(name + "_orig", w)
    from pullback.frontend.eager import to_tensor

    rng = np.random.default_rng(0)
    u0 = rng.standard_normal(h)
    v0 = rng.standard_normal(width)
    layer.register_buffer(name + "_u", to_tensor((u0 / max(np.linalg.norm(u0), eps)).astype(w.numpy().dtype)))
    layer.register_buffer(name + "_v", to_tensor((v0 / max(np.linalg.norm(v0), eps)).astype(w.numpy().dtype)))
    def compute(m: Layer) -> Any:
        wo = getattr(m, name + "_orig")
        mat = S.reshape(S.transpose(wo, perm) if perm != list(range(rank)) else wo, [h, width])
        u = getattr(m, name + "_u").numpy().astype(np.float64)
        v = getattr(m, name + "_v").numpy().astype(np.float64)
        wm = mat.numpy().astype(np.float64)
        if m.training:
            for _ in range(n_power_iterations):
                v = wm.T @ u
                v /= max(np.linalg.norm(v), eps)
                u = wm @ v
                u /= max(np.linalg.norm(u), eps)
            getattr(m, name + "_u").set_value(u)
            getattr(m, name + "_v").set_value(v)
        ut = to_tensor(u.astype(wm.dtype).reshape(1, h)).astype(wo.dtype)
        vt = to_tensor(v.reshape(width, 1)).astype(wo.dtype)
        sigma = S.reshape(N.matmul(N.matmul(ut, mat), vt), [])
        return wo / sigma

    _wrap_forward(layer, name, compute)
    # As Paddle, `<name>` reads as the plain weight until the first forward (no power
    # iteration at apply time, which would move `u`/`v` one step ahead of Paddle's).
    object.__setattr__(layer, name, w * 1.0)
    return layer


__all__ = [
    "clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "remove_weight_norm",
    "spectral_norm", "vector_to_parameters", "weight_norm",
]
