"""Eager parameters: `EagerParamBase` and how one is made and initialized.

An eager parameter is a leaf Tensor (`stop_gradient=False` unless frozen) carrying
Paddle's parameter attributes.  Its initial value comes from running its
initializer's op (the one a startup program would run) with the interpreter kernel,
so `paddle.seed` and the initializers mean what they mean in static programs.
Shared by the layers (`Layer.create_parameter`) and `paddle.create_parameter`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pullback.frontend.eager import Template, Tensor
from pullback.frontend.framework import Program, default_main_program
from pullback.frontend.initializer import Initializer
from pullback.frontend.param_attr import ParamAttr


class EagerParamBase(Tensor):
    """An eager parameter: a leaf tensor with Paddle's parameter attributes
    (`trainable`, `optimize_attr`, `regularizer`, `need_clip`)."""

    optimize_attr: dict[str, Any]
    regularizer: Any
    need_clip: bool
    do_model_average: bool | None

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


def _eager_init(init: Initializer, name: str, shape: list[int], dtype: str) -> np.ndarray:
    """The initial value of an eager parameter: the initializer's op (the one a
    startup program would run), computed with its interpreter kernel.

    As in Paddle, a random initializer takes the main program's `random_seed` when
    it is set (`paddle.framework.random._manual_program_seed`): every such
    initializer then draws the same sequence, so same-shaped parameters built by
    the same initializer start equal (Paddle's tests rely on it to build one model
    twice); with the seed unset, each draws from the global generator."""
    scratch = Program()
    scratch.random_seed = default_main_program().random_seed
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


__all__ = ["EagerParamBase", "eager_parameter"]
