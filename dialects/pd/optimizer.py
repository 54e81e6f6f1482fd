"""Optimizer updates. They write persistable variables, so they are not `Pure`: DCE
keeps them. Each result carries the name of the state it overwrites (`name` for
single-result ops, `names` for the others), and results follow Paddle's formulas
(its phi kernels).

Every update reads its learning rate as an operand, a one-element tensor of the
parameter's dtype (Paddle's `LearningRate` input): in static programs a persistable
`learning_rate_<k>` variable (possibly scaled per parameter), so that a schedule
changes the rate through the scope, never the program.  Operands are
`param, grad, learning_rate` and then the optimizer's state; results are the new
parameter and the new state, in the same order.

```mlir
%w_new = pd.sgd %w, %w_grad, %lr {name = "fc_0.w_0"} : (tensor<13x1xf32>, tensor<13x1xf32>, tensor<1xf32>) -> tensor<13x1xf32>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import ArrayAttr, BoolAttr, FloatAttr, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from .base import (
    DYN,
    Domain,
    MultiResultNames,
    PdOp,
    bool_attr,
    dtype_name,
    elem_of,
    expect_float,
    f64_attr,
    fmt_shape,
    shape_of,
    shapes_compatible,
)

_FORMAT = "operands attr-dict `:` functional-type(operands, results)"


def expect_like_param(op: str, param: Attribute, **others: Attribute) -> None:
    """Raise unless each named operand has the parameter's dtype and shape."""
    expect_float(op, "param", param)
    for what, t in others.items():
        if elem_of(t) != elem_of(param):
            raise VerifyException(
                f"'{op}': {what} dtype {dtype_name(elem_of(t))} differs from param dtype "
                f"{dtype_name(elem_of(param))}"
            )
        if t != param and not shapes_compatible(shape_of(t), shape_of(param)):
            raise VerifyException(
                f"'{op}': {what} shape {fmt_shape(shape_of(t))} differs from param "
                f"shape {fmt_shape(shape_of(param))}"
            )


def expect_scalar_state(op: str, param: Attribute, **others: Attribute) -> None:
    """Raise unless each named operand holds one element (`[1]` or `[]`) of the
    parameter's dtype, as Paddle's beta-power accumulators do."""
    for what, t in others.items():
        s = shape_of(t)
        if elem_of(t) != elem_of(param) or len(s) > 1 or (s and s[0] not in (1, DYN)):
            raise VerifyException(
                f"'{op}': {what} must be a one-element tensor of the param dtype, got {t}"
            )


def expect_rate(op: str, **rates: float) -> None:
    """Raise unless each named property lies in `[0, 1)` (decay rates)."""
    for what, v in rates.items():
        if not 0.0 <= v < 1.0:
            raise VerifyException(f"'{op}': {what} must be in [0, 1), got {v}")


def _expect_nonnegative(op: str, **values: float) -> None:
    for what, v in values.items():
        if v < 0:
            raise VerifyException(f"'{op}': {what} must be non-negative, got {v}")


@irdl_op_definition
class SgdOp(PdOp):
    """`param - learning_rate * grad`."""

    POINTWISE: ClassVar[bool] = True

    name = "pd.sgd"
    WRITES_PERSISTABLE: ClassVar[bool] = True
    param = operand_def(TensorType)
    grad = operand_def(TensorType)
    learning_rate = operand_def(TensorType)
    var_name = opt_prop_def(StringAttr, prop_name="name")
    param_out = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$param `,` $grad `,` $learning_rate attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tp, tg, tlr = operand_types
        expect_like_param(cls.name, tp, grad=tg)
        expect_scalar_state(cls.name, tp, learning_rate=tlr)
        return [tp]


@irdl_op_definition
class MomentumOp(PdOp, MultiResultNames):
    """Paddle's `momentum` update (L2 decay and gradient rescaling fused, as in
    Paddle's kernel):

        g             = rescale_grad * grad (+ regularization_coeff * param for "l2_decay")
        velocity_out  = mu * velocity + g
        param_out     = param - learning_rate * velocity_out, or with `use_nesterov`
                        param - learning_rate * (g + mu * velocity_out)

    ```mlir
    %w1, %v1 = pd.momentum %w, %g, %lr, %v {mu = 0.9 : f64, names = ["w", "w_velocity_0"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<1xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.momentum"
    WRITES_PERSISTABLE: ClassVar[bool] = True
    param = operand_def(TensorType)
    grad = operand_def(TensorType)
    learning_rate = operand_def(TensorType)
    velocity = operand_def(TensorType)
    mu = prop_def(FloatAttr)
    use_nesterov = prop_def(BoolAttr, default_value=bool_attr(False))
    regularization_method = prop_def(StringAttr, default_value=StringAttr(""))
    regularization_coeff = prop_def(FloatAttr, default_value=f64_attr(0.0))
    rescale_grad = prop_def(FloatAttr, default_value=f64_attr(1.0))
    names = opt_prop_def(ArrayAttr)
    param_out = result_def(TensorType)
    velocity_out = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tp, tg, tlr, tv = operand_types
        expect_like_param(cls.name, tp, grad=tg, velocity=tv)
        expect_scalar_state(cls.name, tp, learning_rate=tlr)
        if props["regularization_method"] not in ("", "l2_decay"):
            raise VerifyException(
                f"'{cls.name}': regularization_method must be \"\" or \"l2_decay\", got "
                f"{props['regularization_method']!r}"
            )
        return [tp, tv]


BETA_POW = Domain(0.0, 1.0, lo_closed=True)
"""The domain of a beta power operand (`beta ** t` of a beta in [0, 1)): the updates
divide by `1 - beta1_pow`."""


class _AdamLikeOp(PdOp, MultiResultNames):
    """Operands and results shared by Adam, AdamW and Lamb: two moments and the two
    beta powers (`[1]`, starting at beta1 and beta2 and multiplied by them each step)."""

    WRITES_PERSISTABLE: ClassVar[bool] = True
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"beta1_pow": BETA_POW, "beta2_pow": BETA_POW}
    param = operand_def(TensorType)
    grad = operand_def(TensorType)
    learning_rate = operand_def(TensorType)
    moment1 = operand_def(TensorType)
    moment2 = operand_def(TensorType)
    beta1_pow = operand_def(TensorType)
    beta2_pow = operand_def(TensorType)
    beta1 = prop_def(FloatAttr, default_value=f64_attr(0.9))
    beta2 = prop_def(FloatAttr, default_value=f64_attr(0.999))
    epsilon = prop_def(FloatAttr, default_value=f64_attr(1e-8))
    names = opt_prop_def(ArrayAttr)
    param_out = result_def(TensorType)
    moment1_out = result_def(TensorType)
    moment2_out = result_def(TensorType)
    beta1_pow_out = result_def(TensorType)
    beta2_pow_out = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tp, tg, tlr, tm1, tm2, tb1, tb2 = operand_types
        expect_like_param(cls.name, tp, grad=tg, moment1=tm1, moment2=tm2)
        expect_scalar_state(cls.name, tp, learning_rate=tlr, beta1_pow=tb1, beta2_pow=tb2)
        expect_rate(cls.name, beta1=props["beta1"], beta2=props["beta2"])
        _expect_nonnegative(cls.name, epsilon=props["epsilon"])
        return [tp, tm1, tm2, tb1, tb2]


@irdl_op_definition
class AdamOp(_AdamLikeOp):
    """Paddle's `adam` update (bias correction folded into the step size, epsilon
    scaled as in Paddle >= 2.1):

        moment1_out = beta1 * moment1 + (1 - beta1) * grad
        moment2_out = beta2 * moment2 + (1 - beta2) * grad * grad
        lr_t        = learning_rate * sqrt(1 - beta2_pow) / (1 - beta1_pow)
        param_out   = param - lr_t * moment1_out / (sqrt(moment2_out) + epsilon * sqrt(1 - beta2_pow))
        beta1_pow_out = beta1_pow * beta1;  beta2_pow_out = beta2_pow * beta2

    ```mlir
    %w1, %m1, %m2, %b1, %b2 = pd.adam %w, %g, %lr, %m, %v, %b1p, %b2p {names = ["w", "w_moment1_0", "w_moment2_0", "w_beta1_pow_acc_0", "w_beta2_pow_acc_0"]} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>)
    ```
    """

    name = "pd.adam"


@irdl_op_definition
class AdamwOp(_AdamLikeOp):
    """Paddle's `adamw`: decoupled weight decay, then the Adam update, both with the
    rate `learning_rate * lr_ratio` (Paddle's kernel):

        param'    = param - learning_rate * lr_ratio * coeff * param   (when with_decay)
        param_out = adam(param', ...) with learning_rate * lr_ratio

    ```mlir
    %w1, %m1, %m2, %b1, %b2 = pd.adamw %w, %g, %lr, %m, %v, %b1p, %b2p {coeff = 0.01 : f64, names = ["w", "w_moment1_0", "w_moment2_0", "w_beta1_pow_acc_0", "w_beta2_pow_acc_0"]} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>)
    ```
    """

    name = "pd.adamw"
    coeff = prop_def(FloatAttr, default_value=f64_attr(0.01))
    lr_ratio = prop_def(FloatAttr, default_value=f64_attr(1.0))
    with_decay = prop_def(BoolAttr, default_value=bool_attr(True))


@irdl_op_definition
class LambOp(_AdamLikeOp):
    """Paddle's `lamb` (layer-wise adaptive moments):

        m1' = beta1 * m1 + (1 - beta1) * grad;  m2' = beta2 * m2 + (1 - beta2) * grad^2
        r   = (m1' / (1 - beta1_pow)) / (sqrt(m2' / (1 - beta2_pow)) + epsilon) + weight_decay * param
        ratio = ||param|| / ||r|| when both norms are positive, else 1; 1 as well when
                weight_decay is 0 and not `always_adapt` (parameters excluded from decay)
        param_out = param - learning_rate * ratio * r

    ```mlir
    %w1, %m1, %m2, %b1, %b2 = pd.lamb %w, %g, %lr, %m, %v, %b1p, %b2p {epsilon = 1.0e-06 : f64, names = ["w", "w_moment1_0", "w_moment2_0", "w_beta1_pow_acc_0", "w_beta2_pow_acc_0"]} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>)
    ```
    """

    name = "pd.lamb"
    epsilon = prop_def(FloatAttr, default_value=f64_attr(1e-6))
    weight_decay = prop_def(FloatAttr, default_value=f64_attr(0.01))
    always_adapt = prop_def(BoolAttr, default_value=bool_attr(False))


@irdl_op_definition
class AdamaxOp(PdOp, MultiResultNames):
    """Paddle's `adamax` (the infinity-norm Adam); the beta1 power is advanced by a
    separate `pd.scale` after the update, as Paddle appends one:

        moment_out   = beta1 * moment + (1 - beta1) * grad
        inf_norm_out = max(beta2 * inf_norm + epsilon, |grad|)
        param_out    = param - learning_rate / (1 - beta1_pow) * moment_out / inf_norm_out

    ```mlir
    %w1, %m1, %u1 = pd.adamax %w, %g, %lr, %m, %u, %b1p {names = ["w", "w_moment_0", "w_inf_norm_0"]} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.adamax"
    WRITES_PERSISTABLE: ClassVar[bool] = True
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"beta1_pow": BETA_POW}
    param = operand_def(TensorType)
    grad = operand_def(TensorType)
    learning_rate = operand_def(TensorType)
    moment = operand_def(TensorType)
    inf_norm = operand_def(TensorType)
    beta1_pow = operand_def(TensorType)
    beta1 = prop_def(FloatAttr, default_value=f64_attr(0.9))
    beta2 = prop_def(FloatAttr, default_value=f64_attr(0.999))
    epsilon = prop_def(FloatAttr, default_value=f64_attr(1e-8))
    names = opt_prop_def(ArrayAttr)
    param_out = result_def(TensorType)
    moment_out = result_def(TensorType)
    inf_norm_out = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tp, tg, tlr, tm, tu, tb1 = operand_types
        expect_like_param(cls.name, tp, grad=tg, moment=tm, inf_norm=tu)
        expect_scalar_state(cls.name, tp, learning_rate=tlr, beta1_pow=tb1)
        expect_rate(cls.name, beta1=props["beta1"], beta2=props["beta2"])
        _expect_nonnegative(cls.name, epsilon=props["epsilon"])
        return [tp, tm, tu]


@irdl_op_definition
class AdagradOp(PdOp, MultiResultNames):
    """Paddle's `adagrad`:

        moment_out = moment + grad * grad
        param_out  = param - learning_rate * grad / (sqrt(moment_out) + epsilon)

    ```mlir
    %w1, %m1 = pd.adagrad %w, %g, %lr, %m {names = ["w", "w_moment_0"]} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.adagrad"
    WRITES_PERSISTABLE: ClassVar[bool] = True
    param = operand_def(TensorType)
    grad = operand_def(TensorType)
    learning_rate = operand_def(TensorType)
    moment = operand_def(TensorType)
    epsilon = prop_def(FloatAttr, default_value=f64_attr(1e-6))
    names = opt_prop_def(ArrayAttr)
    param_out = result_def(TensorType)
    moment_out = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tp, tg, tlr, tm = operand_types
        expect_like_param(cls.name, tp, grad=tg, moment=tm)
        expect_scalar_state(cls.name, tp, learning_rate=tlr)
        _expect_nonnegative(cls.name, epsilon=props["epsilon"])
        return [tp, tm]


@irdl_op_definition
class AdadeltaOp(PdOp, MultiResultNames):
    """Paddle's `adadelta`:

        avg_squared_grad_out   = rho * avg_squared_grad + (1 - rho) * grad^2
        update                 = -sqrt((avg_squared_update + epsilon) / (avg_squared_grad_out + epsilon)) * grad
        avg_squared_update_out = rho * avg_squared_update + (1 - rho) * update^2
        param_out              = param + learning_rate * update

    ```mlir
    %w1, %g2, %u2 = pd.adadelta %w, %g, %lr, %ag, %au {names = ["w", "w__avg_squared_grad_0", "w__avg_squared_update_0"]} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.adadelta"
    WRITES_PERSISTABLE: ClassVar[bool] = True
    param = operand_def(TensorType)
    grad = operand_def(TensorType)
    learning_rate = operand_def(TensorType)
    avg_squared_grad = operand_def(TensorType)
    avg_squared_update = operand_def(TensorType)
    rho = prop_def(FloatAttr, default_value=f64_attr(0.95))
    epsilon = prop_def(FloatAttr, default_value=f64_attr(1e-6))
    names = opt_prop_def(ArrayAttr)
    param_out = result_def(TensorType)
    avg_squared_grad_out = result_def(TensorType)
    avg_squared_update_out = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tp, tg, tlr, ta, tu = operand_types
        expect_like_param(cls.name, tp, grad=tg, avg_squared_grad=ta, avg_squared_update=tu)
        expect_scalar_state(cls.name, tp, learning_rate=tlr)
        expect_rate(cls.name, rho=props["rho"])
        _expect_nonnegative(cls.name, epsilon=props["epsilon"])
        return [tp, ta, tu]


@irdl_op_definition
class RmspropOp(PdOp, MultiResultNames):
    """Paddle's `rmsprop` (`decay` is the optimizer's `rho`):

        mean_square_out = decay * mean_square + (1 - decay) * grad^2
        centered:  mean_grad_out = decay * mean_grad + (1 - decay) * grad
                   moment_out = momentum * moment + learning_rate * grad /
                                sqrt(mean_square_out - mean_grad_out^2 + epsilon)
        else:      mean_grad_out = mean_grad
                   moment_out = momentum * moment + learning_rate * grad / sqrt(mean_square_out + epsilon)
        param_out = param - moment_out

    ```mlir
    %w1, %mo, %ms, %mg = pd.rmsprop %w, %g, %lr, %m, %s, %a {names = ["w", "w_momentum_0", "w_mean_square_0", "w_mean_grad_0"]} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.rmsprop"
    WRITES_PERSISTABLE: ClassVar[bool] = True
    param = operand_def(TensorType)
    grad = operand_def(TensorType)
    learning_rate = operand_def(TensorType)
    moment = operand_def(TensorType)
    mean_square = operand_def(TensorType)
    mean_grad = operand_def(TensorType)
    decay = prop_def(FloatAttr, default_value=f64_attr(0.95))
    epsilon = prop_def(FloatAttr, default_value=f64_attr(1e-6))
    momentum = prop_def(FloatAttr, default_value=f64_attr(0.0))
    centered = prop_def(BoolAttr, default_value=bool_attr(False))
    names = opt_prop_def(ArrayAttr)
    param_out = result_def(TensorType)
    moment_out = result_def(TensorType)
    mean_square_out = result_def(TensorType)
    mean_grad_out = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tp, tg, tlr, tm, ts, ta = operand_types
        expect_like_param(cls.name, tp, grad=tg, moment=tm, mean_square=ts, mean_grad=ta)
        expect_scalar_state(cls.name, tp, learning_rate=tlr)
        _expect_nonnegative(cls.name, epsilon=props["epsilon"], momentum=props["momentum"],
                            decay=props["decay"])
        return [tp, tm, ts, ta]


OPTIMIZER_OPS: list[type[PdOp]] = [
    SgdOp, MomentumOp, AdamOp, AdamwOp, LambOp, AdamaxOp, AdagradOp, AdadeltaOp, RmspropOp,
]
