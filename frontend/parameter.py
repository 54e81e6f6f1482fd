"""Eager parameters: `EagerParamBase` and how one is made and initialized.

An eager parameter is a leaf Tensor (`stop_gradient=False` unless frozen) carrying
Paddle's parameter attributes.  Its initial value comes from running its
initializer's op (the one a startup program would run) with the interpreter kernel,
so `paddle.seed` and the initializers mean what they mean in static programs.
Shared by the layers (`Layer.create_parameter`) and `paddle.create_parameter`.
"""

from __future__ import annotations

import numpy as np
from pullback.frontend.eager import Template, Tensor
from pullback.frontend.framework import Program, default_main_program
from pullback.frontend.initializer import Initializer
from pullback.frontend.param_attr import ParamAttr
from pullback.frontend.random import default_generator


class EagerParamBase(Tensor):
    """An eager parameter: a leaf tensor with Paddle's parameter attributes
    (`trainable`, `optimize_attr`, `regularizer`, `need_clip`)."""

    @property
    def trainable(self) -> bool:
        """Whether optimizers update it (the negation of `stop_gradient`)."""
        return not self.stop_gradient

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self.stop_gradient = not bool(value)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__


_SEED_STRIDE = 1_000_003
_SEED_MAX = 2**31 - 1


class _EagerSeeds:
    """Seeds of eager parameter initializers.  With `paddle.seed(s)` set, the k-th
    parameter initialized since the seed last changed gets a seed derived from
    (s, k): a seeded model is reproducible and its parameters differ from each other
    (static programs derive theirs from the count of random ops instead).

    The sequence restarts when the seed changes, when `paddle.seed` is called (even
    with the same value: Paddle's tests seed twice to build the same model twice)
    and on `reset()`."""

    seed: int | None = None
    epoch = -1
    count = 0

    def next_for(self, seed: int) -> int:
        """The seed of the next initializer under global seed `seed` (non-zero)."""
        epoch = default_generator().epoch
        if seed != self.seed or epoch != self.epoch:
            self.seed, self.epoch, self.count = seed, epoch, 0
        self.count += 1
        return (seed * _SEED_STRIDE + self.count - 1) % _SEED_MAX or 1

    def reset(self) -> None:
        """Restart the sequence (what `paddle.seed` should call)."""
        self.seed, self.epoch, self.count = None, -1, 0


EAGER_SEEDS = _EagerSeeds()


def _eager_init(init: Initializer, name: str, shape: list[int], dtype: str) -> np.ndarray:
    """The initial value of an eager parameter: the initializer's op (the one a
    startup program would run), computed with its interpreter kernel."""
    scratch = Program()
    seed = int(default_main_program().random_seed)
    if seed:
        scratch.random_seed = EAGER_SEEDS.next_for(seed)
    return Template(init.make_op(name, shape, dtype, scratch)).run([])[0]


def eager_parameter(name: str, shape: list[int], dtype: str, attr: ParamAttr, init: Initializer) -> EagerParamBase:
    """An eager parameter named `name`, initialized by `init` and carrying `attr`'s
    learning rate, regularizer and clipping choice."""
    p = EagerParamBase._new(_eager_init(init, name, shape, dtype), None, 0, not attr.trainable)
    p._name = name
    p.persistable = True
    p.optimize_attr = {"learning_rate": attr.learning_rate}
    p.regularizer = attr.regularizer
    p.need_clip = attr.need_clip
    p.do_model_average = attr.do_model_average
    return p


__all__ = ["EAGER_SEEDS", "EagerParamBase", "eager_parameter"]
