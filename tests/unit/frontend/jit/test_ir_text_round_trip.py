"""The pullback IR text `jit.save(..., model_format='pullback')` writes must always
parse back (issue 29): every op of the `pd` registry, built with its default
properties (and awkward values for the required ones: infinities, NaN, quotes in
strings), printed in generic form and parsed again prints the same text; and a
residual add followed by a layer_norm (1-D and 2-D normalized shapes) saves and
loads in both formats."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr, Builtin, DenseArrayBase, FloatAttr, IntegerAttr, ModuleOp, StringAttr, TensorType, f32, f64, i32, i64,
)
from xdsl.ir import Block, Region
from xdsl.irdl import OptOperandDef, OptResultDef, VarOperandDef, VarResultDef
from xdsl.parser import Parser
from xdsl.printer import Printer

import pullback as paddle
from pullback.dialects import pd
from pullback.dialects.pd.base import _REQUIRED

T = TensorType(f32, [2, 3])

FLOATS = [0.5, math.inf, -math.inf, math.nan, -0.0, 1e-30]
STRINGS = ["float32", 'a "quoted" \\ name', "ünïcode"]


def _required(constr: object, variant: int) -> object:
    text = repr(constr)
    if "DenseArrayBase" in text:
        return DenseArrayBase.from_list(i64, [1, -1, 2][: variant + 1])
    if "FloatAttr" in text:
        return FloatAttr(FLOATS[variant % len(FLOATS)], f64)
    if "StringAttr" in text:
        return StringAttr(STRINGS[variant % len(STRINGS)])
    if "IntegerAttr" in text:
        return IntegerAttr([1, -1, 2**40][variant % 3], i64)
    if "ArrayAttr" in text:
        return ArrayAttr([StringAttr("a")] * variant)
    raise AssertionError(f"no value for a required property constrained by {text}")


def _build(cls: type, producer: pd.DataOp, variant: int):
    irdl = cls.get_irdl_definition()
    operands: list = []
    for _, d in irdl.operands:
        n = 2 if isinstance(d, VarOperandDef) and not isinstance(d, OptOperandDef) else 1
        operands.append([producer.results[0]] * n)
    results: list = []
    for _, d in irdl.results:
        n = 2 if isinstance(d, VarResultDef) and not isinstance(d, OptResultDef) else 1
        results.append([T] * n)
    specs = cls.prop_specs() if hasattr(cls, "prop_specs") else {}
    props = {}
    for k, v in specs.items():
        if v is _REQUIRED:
            props[k] = _required(irdl.properties[k].constr, variant)
        elif v is not None:
            props[k] = pd.to_attr(v)
    if "name" in irdl.properties:
        props["name"] = StringAttr(["x", "fc_0.b_0", "layer_norm_3.tmp_2"][variant % 3])
    for opt in irdl.options:  # AttrSized{Operand,Result}Segments
        kind = type(opt).__name__
        if "Operand" in kind:
            props["operandSegmentSizes"] = DenseArrayBase.from_list(i32, [len(o) for o in operands])
        elif "Result" in kind:
            props["resultSegmentSizes"] = DenseArrayBase.from_list(i32, [len(r) for r in results])
    regions = [Region(Block()) for _ in irdl.regions]
    return cls.create(operands=[v for o in operands for v in o], result_types=[t for r in results for t in r],
                      properties=props, regions=regions)


def _text(op) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(op)
    return out.getvalue()


def _ops():
    return sorted(pd.PD.operations, key=lambda c: c.name)


@pytest.mark.parametrize("variant", [0, 1, 2, 3])
def test_every_registered_op_prints_text_that_parses_back(variant):
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(pd.PD)
    failures = []
    for cls in _ops():
        producer = pd.DataOp.make("x", [2, 3], "float32")
        try:
            op = _build(cls, producer, variant)
        except Exception as e:  # an op this generic builder cannot make is reported too
            failures.append(f"{cls.name}: cannot build ({type(e).__name__}: {e})")
            continue
        module = ModuleOp([producer, op])
        text = _text(module)
        try:
            again = _text(Parser(ctx, text).parse_module())
        except Exception as e:
            failures.append(f"{cls.name}: {type(e).__name__}: {str(e).strip().splitlines()[-1]}\n{text}")
            continue
        if again != text:
            failures.append(f"{cls.name}: reprinted differently\n{text}\n{again}")
    assert not failures, "\n".join(failures)


def test_registry_is_covered():
    assert len(_ops()) > 100


class _Residual(paddle.nn.Layer):
    def __init__(self, shape):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)
        self.ln = paddle.nn.LayerNorm(shape)

    def forward(self, x):
        return self.ln(x + self.fc(x))


@pytest.mark.parametrize("fmt", ["paddle", "pullback"])
@pytest.mark.parametrize("shape", [4, [3, 4]])
def test_residual_add_then_layer_norm_saves_and_loads(tmp_path, fmt, shape):
    net = _Residual(shape)
    x = paddle.rand([2, 3, 4])
    want = net(x).numpy()
    path = str(tmp_path / "m")
    paddle.jit.save(net, path, input_spec=[paddle.static.InputSpec([None, 3, 4], "float32", "x")],
                    model_format=fmt)
    got = paddle.jit.load(path)(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
