"""`ParamAttr`: how a layer creates one of its parameters (name, initializer,
trainability, learning-rate multiplier), as `paddle.ParamAttr` / `fluid.ParamAttr`."""

from __future__ import annotations

from typing import Any, Literal

from pullback.frontend.initializer import Initializer


class ParamAttr:
    """Attributes of a parameter a layer creates.

    `name` fixes the parameter's name (layers sharing a name share the parameter),
    `initializer` overrides the layer's default, `learning_rate` scales the
    optimizer's step for this parameter, `trainable=False` freezes it.
    `regularizer`, `do_model_average` and `need_clip` are accepted for Paddle's
    signature; pullback's optimizers do not use them.
    """

    def __init__(
        self,
        name: str | None = None,
        initializer: Initializer | None = None,
        learning_rate: float = 1.0,
        regularizer: Any = None,
        trainable: bool = True,
        do_model_average: bool = True,
        need_clip: bool = True,
    ) -> None:
        if name is not None and not isinstance(name, str):
            raise TypeError(f"ParamAttr: name must be a str, got {type(name).__name__}")
        if initializer is not None and not isinstance(initializer, Initializer):
            raise TypeError(
                "ParamAttr: initializer must be an Initializer (e.g. "
                f"paddle.nn.initializer.Constant(0.0)), got {type(initializer).__name__}"
            )
        if not isinstance(learning_rate, (int, float)) or isinstance(learning_rate, bool):
            raise TypeError(
                f"ParamAttr: learning_rate must be a number, got {type(learning_rate).__name__}"
            )
        self.name = name
        self.initializer = initializer
        self.learning_rate = float(learning_rate)
        self.regularizer = regularizer
        self.trainable = bool(trainable)
        self.do_model_average = do_model_average
        self.need_clip = need_clip

    @staticmethod
    def _to_attr(arg: Any) -> ParamAttr | Literal[False]:
        """Normalize a layer's `param_attr`/`bias_attr` argument as Paddle does.

        None or True: default attributes; a str: the parameter's name; an
        Initializer: its initializer; False: no such parameter (e.g. no bias).
        """
        if arg is None or arg is True:
            return ParamAttr()
        if arg is False:
            return False
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        raise TypeError(
            "a parameter attribute must be None, a bool, a str name, an Initializer or "
            f"a ParamAttr, got {type(arg).__name__}"
        )

    def __repr__(self) -> str:
        return (
            f"ParamAttr(name={self.name!r}, initializer={self.initializer!r}, "
            f"learning_rate={self.learning_rate}, trainable={self.trainable})"
        )
