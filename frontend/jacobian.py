"""`paddle.autograd.jacobian` and `paddle.autograd.hessian`: lazily evaluated
Jacobian and Hessian matrices, in dynamic and static mode.

Reverse mode gives one row of a Jacobian per backward pass: row `i` is the
gradient of the `i`-th (flattened) output element with respect to the flattened
inputs.  A `Jacobian` computes rows only when an index asks for them and keeps each
row it computed, as Paddle's does:

* `batch_axis=None`: `ys` and `xs` are 0-D or 1-D; `J` has shape `[M, N]` for
  `ys` of `[M]` and `xs` of `[N]` (a 0-D side drops its axis), rows along axis 0;
* `batch_axis=0`: `ys` and `xs` are 1-D or 2-D with the batch first; `J` has shape
  `[B, M, N]`, rows along axis 1 (one backward pass gives row `i` of every batch
  entry, since entries of a batch do not interact).

A row is `paddle.grad(..., create_graph=True, allow_unused=True)` in dynamic mode
(so a Jacobian can be differentiated again: that is how `hessian` is built) and
`paddle.static.gradients` in static mode; an input the outputs do not depend on
gives zeros.  Indexing takes ints and slices per axis (trailing axes may be left
out); an Ellipsis raises IndexError, as in Paddle.  Any other attribute or
arithmetic evaluates the whole matrix and applies to that tensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pullback.frontend import core
from pullback.frontend.ops import shape as S
from pullback.frontend.ops.elementwise import zeros_like
from pullback.frontend.ops.indexing import assign, stack

Index = int | slice


def _is_tuple(v: Any) -> bool:
    """Paddle's test for "several tensors": a list or a tuple (a Tensor is not)."""
    return isinstance(v, (list, tuple))


def _grads(ys: Any, xs: Any, v: Any = None) -> Any:
    """`paddle.grad` (dynamic, graph kept) or `gradients` (static) of `ys` seeded by
    `v`, zeros for inputs `ys` does not depend on, shaped like `xs` (tensor or tuple)."""
    outs = list(ys) if _is_tuple(ys) else [ys]
    ins = list(xs) if _is_tuple(xs) else [xs]
    seeds = None if v is None else (list(v) if _is_tuple(v) else [v])
    grads: list[Any]
    if core.in_dynamic_mode():
        from pullback.frontend.autograd import grad

        grads = grad(outs, ins, seeds, create_graph=True, allow_unused=True)
    else:
        from pullback.frontend.backward import gradients

        grads = gradients(outs, ins, seeds)
    out = []
    for g, x in zip(grads, ins):
        if g is None:
            g = zeros_like(x)
            g.stop_gradient = x.stop_gradient
        out.append(g)
    return tuple(out) if _is_tuple(xs) else out[0]


class _Rows:
    """The lazily evaluated matrix behind a `Jacobian` (see the module docstring)."""

    def __init__(self, ys: Any, xs: Any, batched: bool, flat: bool = False) -> None:
        """`flat`: `paddle.incubate.autograd`'s layout, where every side is
        flattened (and several tensors concatenated) whatever its rank, so the
        matrix is always `[M, N]` (`[B, M, N]`)."""
        if isinstance(ys, (Jacobian, FunctionalJacobian)):  # hessians: a Jacobian's Jacobian
            ys = ys._evaluate_all()
        if flat:
            ys = self._flatten_with(ys, batched)
        self.batched = batched
        # (flat: these only size the inner matrix; tuples are concatenated)
        self.ys_shape = list(ys.shape)
        self.xs_shape = [] if _is_tuple(xs) else list(xs.shape)
        self.xs = xs
        if not batched and len(ys.shape) == 0:
            ys = S.reshape(ys, [-1])
        if batched and len(ys.shape) == 1:
            ys = S.reshape(ys, [-1, 1])
        self.flat_ys = self._flatten(ys)
        flat_xs = self._flatten(xs)
        self.lazy_axis = 1 if batched else 0
        if batched:
            self.inner_shape = [flat_xs.shape[0], self.flat_ys.shape[1], flat_xs.shape[1]]
            self.shape = [flat_xs.shape[0], *self.ys_shape[1:2], *self.xs_shape[1:2]]
            # A 1-D side has no axis of its own in `shape`: its inner axis has size 1.
            self.dropped = {1} if len(self.ys_shape) == 1 else set()
            self.dropped |= {2} if len(self.xs_shape) == 1 else set()
        else:
            self.inner_shape = [self.flat_ys.shape[0], flat_xs.shape[0]]
            self.shape = [*self.ys_shape[0:1], *self.xs_shape[0:1]]
            self.dropped = {0} if len(self.ys_shape) == 0 else set()
            self.dropped |= {1} if len(self.xs_shape) == 0 else set()
        if flat:
            self.shape, self.dropped = list(self.inner_shape), set()
        self.cache: dict[int, Any] = {}

    @staticmethod
    def _flatten_with(xs: Any, batched: bool) -> Any:
        """Flatten to `[N]` (batch: `[B, N]`); several tensors are concatenated."""
        parts = list(xs) if _is_tuple(xs) else [xs]
        flat = [S.reshape(x, [x.shape[0], -1] if batched else [-1]) for x in parts]
        return flat[0] if len(flat) == 1 else S.concat(flat, axis=1 if batched else 0)

    def _flatten(self, xs: Any) -> Any:
        return self._flatten_with(xs, self.batched)

    def row(self, i: int) -> Any:
        """Row `i` along the lazy axis (computed once)."""
        got = self.cache.get(i)
        if got is None:
            y = self.flat_ys[:, i] if self.batched else self.flat_ys[i]
            got = self.cache[i] = self._flatten(_grads(y, self.xs))
        return got

    def _standard_index(self, index: Any) -> tuple[Index, ...]:
        """Ints and slices for every axis of `inner_shape`, non-negative (Paddle's
        `_multi_index`, after mapping the index of a matrix with a dropped axis)."""
        if not self.batched:
            if len(self.shape) == 0:
                raise IndexError("0-D tensor can not be indexed.")
            if len(self.shape) == 1:
                index = (0, index) if len(self.ys_shape) == 0 else (index, 0)
        elif len(self.shape) == 1:
            index = (index, 0, 0)
        elif len(self.shape) == 2:
            if isinstance(index, slice):
                index = (index, slice(None))
            else:
                index = (index[0], 0, index[1]) if len(self.ys_shape) == 1 else (index[0], index[1], 0)
        parts = tuple(index) if isinstance(index, tuple) else (index,)
        if any(p is Ellipsis for p in parts):
            raise IndexError("Ellipsis index currently is not supported.")
        if len(parts) > len(self.inner_shape):
            raise IndexError(f"too many indices for a Jacobian of shape {self.shape}: {index!r}")
        parts = parts + (slice(None),) * (len(self.inner_shape) - len(parts))
        out: list[Index] = []
        for axis, (p, n) in enumerate(zip(parts, self.inner_shape)):
            if axis in self.dropped:
                out.append(0)  # not an axis of the result
            elif isinstance(p, slice):
                out.append(slice(*p.indices(n)))
            elif isinstance(p, int) and not isinstance(p, bool):
                if not -n <= p < n:
                    raise IndexError(f"index {p} is out of range for an axis of size {n}")
                out.append(p % n)
            else:
                raise TypeError(f"Not supported index type {p!r}.")
        return tuple(out)

    def __getitem__(self, index: Any) -> Any:
        parts = self._standard_index(index)
        lazy = parts[self.lazy_axis]
        others = parts[: self.lazy_axis] + parts[self.lazy_axis + 1 :]
        if isinstance(lazy, int):
            return self.row(lazy)[others]
        rows = [self.row(i) for i in range(lazy.start, lazy.stop, lazy.step)]
        block = stack(rows, axis=self.lazy_axis)
        return block[parts[: self.lazy_axis] + (slice(None),) + parts[self.lazy_axis + 1 :]]

    def evaluate_all(self) -> Any:
        """The whole matrix (a 0-D tensor when both sides are 0-D)."""
        if len(self.shape) == 0:
            return S.reshape(self.row(0), [])
        return self[:]


class Jacobian:
    """A lazily evaluated Jacobian matrix (`paddle.autograd.jacobian`'s result).

    `J[:]` is the whole matrix, `J[i]`/`J[:, j]`/`J[i, j]` (batched: `J[:, i, :]`,
    ...) its parts: only the rows an index needs are computed, each once.  `shape`
    needs no evaluation; other attributes (`numpy()`, ...) and arithmetic act on the
    whole evaluated matrix."""

    def __init__(self, ys: Any, xs: Any, is_batched: bool = False) -> None:
        for arg, v in (("ys", ys), ("xs", xs)):
            if not hasattr(v, "shape") or isinstance(v, np.ndarray):  # (a Jacobian has a shape: hessian)
                raise TypeError(f"jacobian: {arg} must be a Tensor/Variable or a tuple of them, "
                                f"got {type(v).__name__}")
            rank = len(v.shape)
            lo, hi = (1, 2) if is_batched else (0, 1)
            if not lo <= rank <= hi:
                raise ValueError(f"{arg}.ndim should be {lo} or {hi} when is_batched={is_batched} but got {rank}")
        self._jacobian = _Rows(ys, xs, is_batched)

    @property
    def shape(self) -> list[int]:
        """The shape of the (flattened) Jacobian matrix."""
        return list(self._jacobian.shape)

    def __getitem__(self, index: Any) -> Any:
        return self._jacobian[index]

    def _evaluate_all(self) -> Any:
        return self._jacobian.evaluate_all()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_jacobian":
            raise AttributeError(name)
        return getattr(self._evaluate_all(), name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={self.shape})"


def _binary(op: str) -> Any:
    def method(self: Jacobian, other: Any) -> Any:
        rhs = other._evaluate_all() if isinstance(other, Jacobian) else other
        return getattr(self._evaluate_all(), op)(rhs)

    method.__name__ = op
    method.__doc__ = f"`{op}` of the evaluated matrix."
    return method


for _op in ("__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__mod__", "__floordiv__",
            "__matmul__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(Jacobian, _op, _binary(_op))
Jacobian.__hash__ = object.__hash__  # type: ignore[method-assign,assignment]


class Hessian(Jacobian):
    """A lazily evaluated Hessian matrix (`paddle.autograd.hessian`'s result)."""


def _check_batch_axis(batch_axis: Any) -> bool:
    if batch_axis is not None and batch_axis != 0:
        raise ValueError(f"batch_axis should be None or 0, but got {batch_axis}.")
    return batch_axis is not None


def jacobian(ys: Any, xs: Any, batch_axis: int | None = None) -> Any:
    """`paddle.autograd.jacobian(ys, xs, batch_axis=None)`: the Jacobian of `ys`
    with respect to `xs`, evaluated lazily (module docstring).  Tuples nest the
    result: `J[i][j]` for tuples `ys` and `xs`, `J[j]` (`J[i]`) when only `xs`
    (`ys`) is a tuple."""
    batched = _check_batch_axis(batch_axis)
    if _is_tuple(ys) and _is_tuple(xs):
        return tuple(tuple(Jacobian(y, x, batched) for x in xs) for y in ys)
    if _is_tuple(ys):
        return tuple(Jacobian(y, xs, batched) for y in ys)
    if _is_tuple(xs):
        return tuple(Jacobian(ys, x, batched) for x in xs)
    return Jacobian(ys, xs, batched)


def hessian(ys: Any, xs: Any, batch_axis: int | None = None) -> Any:
    """`paddle.autograd.hessian(ys, xs, batch_axis=None)`: the Hessian of the
    one-element `ys` (batched: one element per batch entry) with respect to `xs`;
    `H[i][j]` is the block of `xs[i]` and `xs[j]` when `xs` is a tuple."""
    if batch_axis is None:
        if int(_numel(ys)) > 1:
            raise ValueError(f"Only support ys.numel()({_numel(ys)})==1 when batch_axis is None.")
        ys = S.reshape(ys, [])
    elif isinstance(batch_axis, int) and not isinstance(batch_axis, bool):
        if batch_axis != 0:
            raise ValueError("Only support batch_axis=0 yet.")
        per_entry = _numel(ys) // max(ys.shape[0], 1) if ys.shape and ys.shape[0] > 0 else 1
        if per_entry > 1:
            raise ValueError(f"Only support ys[0].numel()({per_entry})==1 when batch_axis is int")
        ys = S.reshape(ys, [-1])
    else:
        raise ValueError(f"batch_axis should be None or int, but got {type(batch_axis)}.")
    first = jacobian(ys, xs, batch_axis)
    if not _is_tuple(xs):
        h = jacobian(first, xs, batch_axis)
        h.__class__ = Hessian
        return h
    blocks = tuple(jacobian(j, xs, batch_axis) for j in first)
    for row in blocks:
        for b in row:
            b.__class__ = Hessian
    return blocks


# ------------------------------------------------ paddle.incubate.autograd (functional)


def _separate(xs: Any) -> Any:
    """Fresh leaves with the values of `xs`, so that derivatives are taken with
    respect to them and nothing flows into what produced `xs` (Paddle's `_separate`)."""
    if xs is None:
        return None
    if _is_tuple(xs):
        return tuple(_separate(x) for x in xs)
    if not core.in_dynamic_mode():
        return xs
    if not xs.stop_gradient:
        # Already differentiable (an outer Jacobian's input, in Hessian): stay
        # connected through a copy, so the outer derivative sees this one.
        return assign(xs)
    y = xs.detach()
    y.stop_gradient = False
    return y


def _call(func: Any, xs: Any) -> Any:
    if not callable(func):
        raise TypeError(f"Expected 'func' is Callable, but got {type(func).__name__}.")
    return func(*xs) if _is_tuple(xs) else func(xs)


def _check_v(v: Any, like: Any, what: str) -> None:
    """`v` matches `like` tensor for tensor, shape for shape (None: ones)."""
    if v is None:
        return
    vs, ls = (list(v) if _is_tuple(v) else [v]), (list(like) if _is_tuple(like) else [like])
    if len(vs) != len(ls):
        raise RuntimeError(f"The argument v is a tuple of invalid length: should be {len(ls)} but got {len(vs)}.")
    for k, (a, b) in enumerate(zip(vs, ls)):
        if list(a.shape) != list(b.shape):
            raise RuntimeError(f"The v[{k}] has invalid shape: should be {list(b.shape)} ({what}) but got "
                               f"{list(a.shape)}.")


def vjp(func: Any, xs: Any, v: Any = None) -> tuple[Any, Any]:
    """`paddle.incubate.autograd.vjp(func, xs, v=None)`: `(func(xs), v^T J)`, the
    vector-Jacobian product (reverse mode); `v` is shaped like func's output(s),
    ones when None."""
    xs, v = _separate(xs), _separate(v)
    ys = _call(func, xs)
    _check_v(v, ys, "the output of func")
    return ys, _grads(ys, xs, v)


def jvp(func: Any, xs: Any, v: Any = None) -> tuple[Any, Any]:
    """`paddle.incubate.autograd.jvp(func, xs, v=None)`: `(func(xs), J v)`, the
    Jacobian-vector product; `v` is shaped like `xs`, ones when None.  Computed by
    the double-backward trick: `u -> J^T u` is linear in `u`, and its gradient
    seeded by `v` is `J v`."""
    xs, v = _separate(xs), _separate(v)
    ys = _call(func, xs)
    _check_v(v, xs, "the input xs")
    if _is_tuple(ys):
        u: Any = tuple(_separate(zeros_like(y)) for y in ys)
    else:
        u = _separate(zeros_like(ys))
    return ys, _grads(_grads(ys, xs, u), u, v)


class FunctionalJacobian:
    """`paddle.incubate.autograd.Jacobian(func, xs, is_batched=False)`: the Jacobian
    of `func` at `xs`, every input and output flattened and concatenated: shape
    `[M, N]` (`is_batched`: `[B, M, N]`), rows evaluated lazily like `Jacobian`'s."""

    def __init__(self, func: Any, xs: Any, is_batched: bool = False) -> None:
        xs = _separate(xs)
        self._jacobian = _Rows(_call(func, xs), xs, bool(is_batched), flat=True)

    @property
    def shape(self) -> list[int]:
        """The shape of the flattened Jacobian matrix."""
        return list(self._jacobian.shape)

    def __getitem__(self, index: Any) -> Any:
        return self._jacobian[index]

    def _evaluate_all(self) -> Any:
        return self._jacobian.evaluate_all()


class FunctionalHessian:
    """`paddle.incubate.autograd.Hessian(func, xs, is_batched=False)`: the Hessian of
    a `func` returning one element (`[1]`; batched `[B, 1]`), inputs flattened and
    concatenated: shape `[N, N]` (`[B, N, N]`)."""

    def __init__(self, func: Any, xs: Any, is_batched: bool = False) -> None:
        def gradient(*args: Any) -> Any:
            jac = FunctionalJacobian(func, args if len(args) > 1 or _is_tuple(xs) else args[0], is_batched)
            if jac.shape[1 if is_batched else 0] != 1:
                raise RuntimeError("The function given to Hessian should return as single element Tensor "
                                   "or batched single element Tensor.")
            return jac[:, 0, :] if is_batched else jac[0, :]

        self.symbolic = FunctionalJacobian(gradient, xs, is_batched)

    @property
    def shape(self) -> list[int]:
        """The shape of the flattened Hessian matrix."""
        return self.symbolic.shape

    def __getitem__(self, index: Any) -> Any:
        return self.symbolic[index]


def _numel(x: Any) -> int:
    n = 1
    for d in x.shape:
        n *= int(d)
    return n


__all__ = ["FunctionalHessian", "FunctionalJacobian", "Hessian", "Jacobian", "hessian", "jacobian", "jvp", "vjp"]
