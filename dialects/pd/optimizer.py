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

from xdsl.dialects.builtin import ArrayAttr, BoolAttr, FloatAttr, IntegerAttr, StringAttr, TensorType, f32, i1, i32
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
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
    i64_attr,
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
    beta powers (`[1]`, starting at beta1 and beta2 and multiplied by them each step).

    The optional last operand `skip_update` (a one-element bool, Paddle's
    `SkipUpdate` input) is AMP's `found_inf`: when it holds true the step changes
    nothing, the results are the parameter, moments and beta powers as they were
    (Paddle 3.3.1's kernels), so a step whose gradients overflowed neither decays
    the moments nor advances the bias correction.

    ```mlir
    %w1, %m1, %m2, %b1, %b2 = pd.adam %w, %g, %lr, %m, %v, %b1p, %b2p, %inf {names = ["w", "w_moment1_0", "w_moment2_0", "w_beta1_pow_acc_0", "w_beta2_pow_acc_0"]} : (tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xi1>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>)
    ```
    """

    WRITES_PERSISTABLE: ClassVar[bool] = True
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"beta1_pow": BETA_POW, "beta2_pow": BETA_POW}
    param = operand_def(TensorType)
    grad = operand_def(TensorType)
    learning_rate = operand_def(TensorType)
    moment1 = operand_def(TensorType)
    moment2 = operand_def(TensorType)
    beta1_pow = operand_def(TensorType)
    beta2_pow = operand_def(TensorType)
    skip_update = opt_operand_def(TensorType)
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
        if len(operand_types) not in (7, 8):
            raise VerifyException(
                f"'{cls.name}': takes param, grad, learning_rate, moment1, moment2, beta1_pow, beta2_pow "
                f"and an optional skip_update, got {len(operand_types)} operands"
            )
        tp, tg, tlr, tm1, tm2, tb1, tb2, *skip = operand_types
        expect_like_param(cls.name, tp, grad=tg, moment1=tm1, moment2=tm2)
        expect_scalar_state(cls.name, tp, learning_rate=tlr, beta1_pow=tb1, beta2_pow=tb2)
        for ts in skip:
            _expect_one(cls.name, "skip_update", ts, i1)
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




# ------------------------------------------------------------ loss scaling (AMP)


def _expect_one(op: str, what: str, t: Attribute, elem: Attribute) -> None:
    """Raise unless `t` is a one-element (`[1]` or `[]`) tensor of `elem`."""
    s = shape_of(t)
    if elem_of(t) != elem or len(s) > 1 or (s and s[0] not in (1, DYN)):
        raise VerifyException(f"'{op}': {what} must be a one-element {dtype_name(elem)} tensor, got {t}")


def _expect_grads(op: str, xs: Sequence[Attribute]) -> None:
    for i, t in enumerate(xs):
        expect_float(op, f"x #{i}", t)


@irdl_op_definition
class CheckFiniteAndUnscaleOp(PdOp, MultiResultNames):
    """Paddle's `check_finite_and_unscale` (its CPU kernel): each `x` divided by the
    loss scale, and `found_inf` (`[1]` bool) set when any element of any `x` is inf
    or nan.  From the first `x` holding one on, the outputs are `x * 0` (zeros, nan
    where `x` is inf or nan), as Paddle's CPU kernel writes them; the grads of such a
    step are zeroed by `pd.update_loss_scaling` or skipped by the optimizer anyway.

    ```mlir
    %gw, %gb, %inf = pd.check_finite_and_unscale %w_grad, %b_grad, %scale : (tensor<3x2xf32>, tensor<2xf32>, tensor<1xf32>) -> (tensor<3x2xf32>, tensor<2xf32>, tensor<1xi1>)
    ```
    """

    name = "pd.check_finite_and_unscale"
    xs = var_operand_def(TensorType)
    scale = operand_def(TensorType)
    outs = var_result_def(TensorType)
    found_inf = result_def(TensorType)
    names = opt_prop_def(ArrayAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if len(operand_types) < 2:
            raise VerifyException(f"'{cls.name}': needs at least one x and the scale")
        *xs, ts = operand_types
        _expect_grads(cls.name, xs)
        _expect_one(cls.name, "scale", ts, f32)
        return [*xs, TensorType(i1, [1])]


@irdl_op_definition
class UpdateLossScalingOp(PdOp, MultiResultNames):
    """Paddle's `update_loss_scaling`: dynamic loss scaling after one step.  The `x`s
    (the unscaled grads) come out as zeros when `found_inf`, else unchanged.  Unless
    `stop_update`, the scale and the two `int32` step counters (persistables, written
    in place) are updated as Paddle's kernel does:

        found_inf:  good = 0; bad += 1; when bad == decr_every_n_nan_or_inf:
                        scale = max(scale * decr_ratio, 1); bad = 0
        otherwise:  bad = 0; good += 1; when good == incr_every_n_steps:
                        scale = scale * incr_ratio if that is finite; good = 0

    ```mlir
    %g, %s, %good, %bad = pd.update_loss_scaling %g0, %inf, %s0, %good0, %bad0 {incr_every_n_steps = 1000 : i64, names = ["", "loss_scaling_0", "num_good_steps_0", "num_bad_steps_0"]} : (tensor<3xf32>, tensor<1xi1>, tensor<1xf32>, tensor<1xi32>, tensor<1xi32>) -> (tensor<3xf32>, tensor<1xf32>, tensor<1xi32>, tensor<1xi32>)
    ```
    """

    name = "pd.update_loss_scaling"
    WRITES_PERSISTABLE: ClassVar[bool] = True
    xs = var_operand_def(TensorType)
    found_inf = operand_def(TensorType)
    prev_loss_scaling = operand_def(TensorType)
    in_good_steps = operand_def(TensorType)
    in_bad_steps = operand_def(TensorType)
    incr_every_n_steps = prop_def(IntegerAttr, default_value=i64_attr(1000))
    decr_every_n_nan_or_inf = prop_def(IntegerAttr, default_value=i64_attr(2))
    incr_ratio = prop_def(FloatAttr, default_value=f64_attr(2.0))
    decr_ratio = prop_def(FloatAttr, default_value=f64_attr(0.8))
    stop_update = prop_def(BoolAttr, default_value=bool_attr(False))
    names = opt_prop_def(ArrayAttr)
    outs = var_result_def(TensorType)
    loss_scaling = result_def(TensorType)
    out_good_steps = result_def(TensorType)
    out_bad_steps = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if len(operand_types) < 4:
            raise VerifyException(f"'{cls.name}': needs found_inf, the scale and the two counters")
        *xs, tf, ts, tg, tb = operand_types
        _expect_grads(cls.name, xs)
        _expect_one(cls.name, "found_inf", tf, i1)
        _expect_one(cls.name, "prev_loss_scaling", ts, f32)
        _expect_one(cls.name, "in_good_steps", tg, i32)
        _expect_one(cls.name, "in_bad_steps", tb, i32)
        if props["incr_every_n_steps"] < 1 or props["decr_every_n_nan_or_inf"] < 1:
            raise VerifyException(f"'{cls.name}': incr_every_n_steps and decr_every_n_nan_or_inf must be >= 1")
        if not props["incr_ratio"] > 1.0:
            raise VerifyException(f"'{cls.name}': incr_ratio must be > 1, got {props['incr_ratio']}")
        if not 0.0 < props["decr_ratio"] < 1.0:
            raise VerifyException(f"'{cls.name}': decr_ratio must be in (0, 1), got {props['decr_ratio']}")
        return [*xs, ts, tg, tb]


LOSS_SCALING_OPS: list[type[PdOp]] = [CheckFiniteAndUnscaleOp, UpdateLossScalingOp]
"""AMP's loss-scaling ops (`paddle.static.amp.decorate`, `paddle.amp.GradScaler`)."""

OPTIMIZER_OPS: list[type[PdOp]] = [
    SgdOp, MomentumOp, AdamOp, AdamwOp, LambOp, AdamaxOp, AdagradOp, AdadeltaOp, RmspropOp, *LOSS_SCALING_OPS,
]
"""The family's ops: the updates, then the loss-scaling ops."""
