"""Optimizer updates. They write persistable variables, so they are not `Pure`: DCE
keeps them. Each result carries the name of the state it overwrites.

```mlir
%w_new = pd.sgd %w, %w_grad {learning_rate = 0.01 : f64, name = "fc_0.w_0"} : (tensor<13x1xf32>, tensor<13x1xf32>) -> tensor<13x1xf32>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import FloatAttr, StringAttr, TensorType
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

from .base import PdOp, expect_float, f64_attr, fmt_shape, shape_of, shapes_compatible


def expect_like_param(op: str, param: Attribute, **others: Attribute) -> None:
    """Raise unless each named operand has the parameter's type."""
    expect_float(op, "param", param)
    for what, t in others.items():
        if t != param and not shapes_compatible(shape_of(t), shape_of(param)):
            raise VerifyException(
                f"'{op}': {what} shape {fmt_shape(shape_of(t))} differs from param "
                f"shape {fmt_shape(shape_of(param))}"
            )


@irdl_op_definition
class SgdOp(PdOp):
    """`param - learning_rate * grad`."""

    name = "pd.sgd"
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


OPTIMIZER_OPS = [SgdOp]
