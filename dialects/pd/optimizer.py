"""Optimizer updates. They write persistable variables, so they are not `Pure`: DCE
keeps them. Each result carries the name of the state it overwrites (`name` for
single-result ops, `names` for the others), and results follow Paddle's formulas.

```mlir
%w_new = pd.sgd %w, %w_grad {learning_rate = 0.01 : f64, name = "fc_0.w_0"} : (tensor<13x1xf32>, tensor<13x1xf32>) -> tensor<13x1xf32>
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


@irdl_op_definition
class SgdOp(PdOp):
    """`param - learning_rate * grad`."""

    name = "pd.sgd"
    WRITES_PERSISTABLE: ClassVar[bool] = True
    param = operand_def(TensorType)
    grad = operand_def(TensorType)
    learning_rate = prop_def(FloatAttr, default_value=f64_attr(0.001))
    var_name = opt_prop_def(StringAttr, prop_name="name")
    param_out = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$param `,` $grad attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tp, tg = operand_types
        expect_like_param(cls.name, tp, grad=tg)
        return [tp]


@irdl_op_definition
class MomentumOp(PdOp, MultiResultNames):
    """Paddle's `momentum` update:
    `velocity_out = mu * velocity + grad`, then
    `param_out = param - learning_rate * velocity_out`, or with `use_nesterov`
    `param_out = param - learning_rate * (grad + mu * velocity_out)`.

    ```mlir
    %w1, %v1 = pd.momentum %w, %g, %v {mu = 0.9 : f64, learning_rate = 0.1 : f64, names = ["w", "w_velocity_0"]} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)
    ```
    """

    name = "pd.momentum"
    WRITES_PERSISTABLE: ClassVar[bool] = True
    param = operand_def(TensorType)
    grad = operand_def(TensorType)
    velocity = operand_def(TensorType)
    mu = prop_def(FloatAttr)
    use_nesterov = prop_def(BoolAttr, default_value=bool_attr(False))
    learning_rate = prop_def(FloatAttr, default_value=f64_attr(0.001))
    names = opt_prop_def(ArrayAttr)
    param_out = result_def(TensorType)
    velocity_out = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tp, tg, tv = operand_types
        expect_like_param(cls.name, tp, grad=tg, velocity=tv)
        return [tp, tv]


@irdl_op_definition
class AdamOp(PdOp, MultiResultNames):
    """Paddle's `adam` update (`paddle.optimizer.Adam`, bias correction folded into
    the step size, epsilon scaled as in Paddle >= 2.1):

        moment1_out = beta1 * moment1 + (1 - beta1) * grad
        moment2_out = beta2 * moment2 + (1 - beta2) * grad * grad
        lr_t        = learning_rate * sqrt(1 - beta2_pow) / (1 - beta1_pow)
        param_out   = param - lr_t * moment1_out / (sqrt(moment2_out) + epsilon * sqrt(1 - beta2_pow))
        beta1_pow_out = beta1_pow * beta1;  beta2_pow_out = beta2_pow * beta2

    ```mlir
    %w1, %m1, %m2, %b1, %b2 = pd.adam %w, %g, %m, %v, %b1p, %b2p {learning_rate = 0.01 : f64, names = ["w", "w_moment1_0", "w_moment2_0", "w_beta1_pow_acc_0", "w_beta2_pow_acc_0"]} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>)
    ```
    """

    name = "pd.adam"
    WRITES_PERSISTABLE: ClassVar[bool] = True
    param = operand_def(TensorType)
    grad = operand_def(TensorType)
    moment1 = operand_def(TensorType)
    moment2 = operand_def(TensorType)
    beta1_pow = operand_def(TensorType)
    beta2_pow = operand_def(TensorType)
    beta1 = prop_def(FloatAttr, default_value=f64_attr(0.9))
    beta2 = prop_def(FloatAttr, default_value=f64_attr(0.999))
    epsilon = prop_def(FloatAttr, default_value=f64_attr(1e-8))
    learning_rate = prop_def(FloatAttr, default_value=f64_attr(0.001))
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
        tp, tg, tm1, tm2, tb1, tb2 = operand_types
        expect_like_param(cls.name, tp, grad=tg, moment1=tm1, moment2=tm2)
        expect_scalar_state(cls.name, tp, beta1_pow=tb1, beta2_pow=tb2)
        expect_rate(cls.name, beta1=props["beta1"], beta2=props["beta2"])
        if props["epsilon"] < 0:
            raise VerifyException(f"'{cls.name}': epsilon must be non-negative")
        return [tp, tm1, tm2, tb1, tb2]


OPTIMIZER_OPS: list[type[PdOp]] = [SgdOp, MomentumOp, AdamOp]
