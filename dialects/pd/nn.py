"""Neural-network ops: matmul, embedding, convolution, pooling, layer norm, dropout.

```mlir
%y = pd.matmul %x, %w : (tensor<?x13xf32>, tensor<13x1xf32>) -> tensor<?x1xf32>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import BoolAttr, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import (
    PdOp,
    bool_attr,
    broadcast_shapes,
    dims_compatible,
    expect_same_elem,
    fmt_shape,
    shape_of,
)


@irdl_op_definition
class MatmulOp(PdOp):
    """`paddle.matmul`: batched matrix product with numpy-style batch broadcasting,
    optional transposes of the last two dimensions, and 1-D vector operands
    (a leading/trailing 1 is inserted and removed again, as numpy does).
    """

    name = "pd.matmul"
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    transpose_x = prop_def(BoolAttr, default_value=bool_attr(False))
    transpose_y = prop_def(BoolAttr, default_value=bool_attr(False))
    var_name = opt_prop_def(StringAttr, prop_name="name")
    out = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x `,` $y attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ty = operand_types
        elem = expect_same_elem(cls.name, [tx, ty])
        xs, ys = list(shape_of(tx)), list(shape_of(ty))
        if not xs or not ys:
            raise VerifyException("'pd.matmul': operands must have rank >= 1")
        x_vec, y_vec = len(xs) == 1, len(ys) == 1
        if x_vec:
            xs = [1] + xs
        elif props["transpose_x"]:
            xs[-2], xs[-1] = xs[-1], xs[-2]
        if y_vec:
            ys = ys + [1]
        elif props["transpose_y"]:
            ys[-2], ys[-1] = ys[-1], ys[-2]
        if not dims_compatible(xs[-1], ys[-2]):
            raise VerifyException(
                f"'pd.matmul': contraction dimensions differ: x {fmt_shape(shape_of(tx))} "
                f"and y {fmt_shape(shape_of(ty))} (transpose_x={props['transpose_x']}, "
                f"transpose_y={props['transpose_y']})"
            )
        batch = broadcast_shapes(xs[:-2], ys[:-2], op=cls.name)
        out = list(batch)
        if not x_vec:
            out.append(xs[-2])
        if not y_vec:
            out.append(ys[-1])
        return [TensorType(elem, out)]


NN_OPS = [MatmulOp]
