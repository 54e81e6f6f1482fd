"""The pass driver's helpers, in-process: pass-option quoting, the `autodiff` pass's
options and its warning, UTF-8 checking.  (The command lines themselves are covered
by the lit tests in `tests/filecheck/tools`.)"""

from __future__ import annotations

import warnings

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.parser import Parser

from pullback.dialects import pd
from pullback.passes.autodiff import AutodiffError, AutodiffPass, AutodiffWarning
from pullback.tools.pullback_opt import ToolError, check_utf8, quote_option_values

FORWARD = """\
%x = pd.data "x" : tensor<?x3xf32>
%w = pd.parameter "fc_0.w_0" : tensor<3x1xf32>
%f = pd.parameter "frozen" {trainable = false} : tensor<3x1xf32>
%h = pd.matmul %x, %w {name = "fc_0.tmp_0"} : (tensor<?x3xf32>, tensor<3x1xf32>) -> tensor<?x1xf32>
%g = pd.matmul %x, %f {name = "fc_1.tmp_0"} : (tensor<?x3xf32>, tensor<3x1xf32>) -> tensor<?x1xf32>
%s = pd.elementwise_add %h, %g {name = "s"} : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
%m = pd.mean %s {name = "loss"} : (tensor<?x1xf32>) -> tensor<f32>
"""


def _parse(text: str) -> ModuleOp:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(pd.PD)
    return Parser(ctx, text).parse_module()


def _backward_ops(module: ModuleOp) -> list[pd.BackwardOp]:
    return [op for op in module.walk() if isinstance(op, pd.BackwardOp)]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("autodiff{targets=loss wrt=fc_0.w_0,fc_0.b_0}", 'autodiff{targets=loss wrt="fc_0.w_0","fc_0.b_0"}'),
        ("a{x=1.5 y=-2 z=true},b,c{t=x@GRAD}", 'a{x=1.5 y=-2 z=true},b,c{t="x@GRAD"}'),
        ('autodiff{targets="a.b",c.d}', 'autodiff{targets="a.b","c.d"}'),
        ("lower-to-loops,dce", "lower-to-loops,dce"),
    ],
)
def test_quote_option_values(spec: str, expected: str) -> None:
    assert quote_option_values(spec) == expected


def test_autodiff_options_append_a_backward_op_over_trainable_parameters() -> None:
    module = _parse(FORWARD)
    AutodiffPass(targets=("loss",)).apply(Context(), module)
    (bw,) = _backward_ops(module)
    assert bw.is_filled
    # wrt defaults to the trainable parameters: `frozen` is left out.
    assert pd.result_names(bw) == ["fc_0.w_0@GRAD"]
    assert module.body.block.last_op is bw


def test_autodiff_options_wrt_and_no_grad() -> None:
    module = _parse(FORWARD)
    AutodiffPass(targets=("loss",), wrt=("fc_0.tmp_0", "fc_1.tmp_0"), no_grad=("fc_1.tmp_0",)).apply(
        Context(), module
    )
    (bw,) = _backward_ops(module)
    assert pd.result_names(bw) == ["fc_0.tmp_0@GRAD"]
    assert pd.from_attr(bw.no_grad) == ["fc_1.tmp_0"]


def test_autodiff_unknown_name_suggests_close_ones() -> None:
    with pytest.raises(AutodiffError, match=r"target 'los' is not a value of the program; did you mean 'loss'"):
        AutodiffPass(targets=("los",)).apply(Context(), _parse(FORWARD))
    with pytest.raises(AutodiffError, match="need 'targets'"):
        AutodiffPass(wrt=("fc_0.w_0",)).apply(Context(), _parse(FORWARD))


def test_autodiff_without_backward_op_warns_and_changes_nothing() -> None:
    module = _parse(FORWARD)
    before = str(module)
    with pytest.warns(AutodiffWarning, match="no pd.backward op"):
        AutodiffPass().apply(Context(), module)
    assert str(module) == before


def test_autodiff_on_filled_backward_is_quiet() -> None:
    module = _parse(FORWARD)
    AutodiffPass(targets=("loss",)).apply(Context(), module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AutodiffPass().apply(Context(), module)


def test_check_utf8_locates_the_byte_in_characters() -> None:
    check_utf8("é = ok\n".encode(), "f.mlir")
    bad = "x\n\u00e9\u00e9".encode() + b"\xfe rest\n"
    with pytest.raises(ToolError) as info:
        check_utf8(bad, "f.mlir", line_offset=10)
    assert str(info.value).startswith("f.mlir:12:3: error: invalid UTF-8 byte 0xfe")
