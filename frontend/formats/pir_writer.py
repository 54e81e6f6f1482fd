"""A `pd` inference Program as Paddle 3's PIR json program (`<prefix>.json`).

Paddle 3.3.1 in its default (PIR) mode reads inference models only from
`<prefix>.json` (`load_inference_model`, `jit.load`); the legacy ProgramDesc
`.pdmodel` (`exporter.py`) serves Paddle with `FLAGS_enable_pir_api=0`, Paddle 2.x
and the tools built on it.  This module writes the json form of the same program,
op by op as Paddle 3.3.1 writes it (`base_code` version 4): `builtin.parameter`
ops for the persistables, `pd_op.data` for the feeds, each op with its operands,
typed attributes and result types, constant operands (`full`, `full_int_array`)
where PIR takes a shape or an axis as a tensor, and `pd_op.fetch` for the outputs.

`export_pir_json` raises `NotExportable` for ops it has no form for; the caller
then writes the `.pdmodel` only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.ir import Operation, SSAValue

from pullback.frontend.formats.exporter import NotExportable, imaginary_constant

PIR_VERSION = 4

_DTYPES = {
    "float16": "t_f16", "float32": "t_f32", "float64": "t_f64", "bfloat16": "t_bf16", "int8": "t_i8",
    "uint8": "t_ui8", "int16": "t_i16", "int32": "t_i32", "int64": "t_i64", "bool": "t_bool",
    "complex64": "t_c64", "complex128": "t_c128",
}


def _ttype(dtype: str, shape: Sequence[int]) -> dict[str, Any]:
    return {"#": "0.t_dtensor", "D": [{"#": f"0.{_DTYPES[dtype]}"}, [int(d) for d in shape], "NCHW", [], 0]}


def a_bool(v: Any) -> dict[str, Any]:
    return {"#": "0.a_bool", "D": bool(v)}


def a_i32(v: Any) -> dict[str, Any]:
    return {"#": "0.a_i32", "D": int(v)}


def a_i64(v: Any) -> dict[str, Any]:
    return {"#": "0.a_i64", "D": int(v)}


def a_f32(v: Any) -> dict[str, Any]:
    return {"#": "0.a_f32", "D": float(v)}


def a_f64(v: Any) -> dict[str, Any]:
    return {"#": "0.a_f64", "D": float(v)}


def a_str(v: Any) -> dict[str, Any]:
    return {"#": "0.a_str", "D": str(v)}


def a_array(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {"#": "0.a_array", "D": list(items)}


def a_i32s(v: Sequence[Any]) -> dict[str, Any]:
    return a_array([a_i32(x) for x in v])


def a_i64s(v: Sequence[Any]) -> dict[str, Any]:
    return a_array([a_i64(x) for x in v])


def a_dtype(v: str) -> dict[str, Any]:
    return {"#": "1.a_dtype", "D": v}


def a_intarray(v: Sequence[Any]) -> dict[str, Any]:
    return {"#": "1.a_intarray", "D": [int(x) for x in v]}


def a_place(kind: int) -> dict[str, Any]:
    return {"#": "1.a_place", "D": [kind, 0, ""]}


def _shape(v: SSAValue) -> list[int]:
    from pullback.dialects import pd

    return [d if d >= 0 else -1 for d in pd.shape_of(v.type)]


def _dtype(v: SSAValue) -> str:
    from pullback.dialects import pd

    return str(pd.dtype_name(pd.elem_of(v.type)))


class _Writer:
    """Ops of one block, with value ids."""

    def __init__(self) -> None:
        self.ops: list[dict[str, Any]] = []
        self.ids: dict[SSAValue, int] = {}
        self.next_id = 1
        self.names: set[str] = set()

    def new_id(self) -> int:
        i = self.next_id
        self.next_id += 1
        return i

    def id(self, v: SSAValue) -> int:
        return self.ids[v]

    def op(self, name: str, inputs: Sequence[int], results: Sequence[tuple[str, Sequence[int]]],
           attrs: dict[str, dict[str, Any]], stop_gradient: bool = False,
           extra_out_attrs: dict[str, dict[str, Any]] | None = None) -> list[int]:
        outs = [self.new_id() for _ in results]
        out_attrs = [{"AT": a_array([a_bool(stop_gradient) for _ in results]), "N": "stop_gradient"}]
        if extra_out_attrs:
            out_attrs = [{"AT": v, "N": k} for k, v in extra_out_attrs.items()] + out_attrs
        self.ops.append({
            "#": name, "A": [{"AT": v, "N": k} for k, v in attrs.items()], "I": [{"%": i} for i in inputs],
            "O": [{"%": o, "TT": _ttype(d, s)} for o, (d, s) in zip(outs, results)], "OA": out_attrs,
        })
        return outs

    def combine(self, values: Sequence[SSAValue]) -> int:
        """A `builtin.combine` of `values` (a vector operand)."""
        (vec,) = self.op("0.combine", [self.id(v) for v in values], [("float32", [])], {})
        self.ops[-1]["O"][0]["TT"] = {"#": "0.t_vec", "D": [_ttype(_dtype(v), _shape(v)) for v in values]}
        return vec

    def fresh(self, base: str) -> str:
        """A name not given before in this program."""
        k = sum(1 for n in self.names if n.startswith(base + "_"))
        name = f"{base}_{k}"
        self.names.add(name)
        return name

    def param(self, name: str, dtype: str, shape: Sequence[int], persistable: bool = True,
              trainable: bool = True) -> int:
        """A `builtin.parameter`, placed with the others at the top of the block."""
        i = self.new_id()
        op = {"#": "p", "A": [0, 1, 1, name], "DA": [], "O": {"%": i, "TT": _ttype(dtype, shape)},
              "OA": [1 if persistable else 0, 0 if trainable and persistable else 1,
                     1 if trainable and persistable else 0], "QA": []}
        at = next((k for k, o in enumerate(self.ops) if o["#"] != "p"), len(self.ops))
        self.ops.insert(at, op)
        return i

    def full_int_array(self, values: Sequence[int]) -> int:
        return self.op("1.full_int_array", [], [("int64", [len(values)])], {
            "value": a_i64s(values), "dtype": a_dtype("int64"), "place": a_place(1)}, stop_gradient=True)[0]

    def full(self, value: float, dtype: str = "float32") -> int:
        return self.op("1.full", [], [(dtype, [1])], {
            "shape": a_intarray([1]), "value": a_f64(value), "dtype": a_dtype(dtype), "place": a_place(1)},
            stop_gradient=True)[0]


Emit = Callable[[_Writer, Operation, dict[str, Any]], list[int]]


def _res(op: Operation, i: int = 0) -> tuple[str, list[int]]:
    return _dtype(op.results[i]), _shape(op.results[i])


def _unary(name: str) -> Emit:
    def em(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op(f"1.{name}", [w.id(op.operands[0])], [_res(op)], {})

    return em


def _binary(name: str) -> Emit:
    def em(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        x, y = op.operands
        yid = w.id(y)
        axis = int(p.get("axis", -1))
        rx, ry = len(_shape(x)), len(_shape(y))
        if axis != -1 and axis + ry != rx:  # Paddle 1.x alignment: y reshaped to broadcast
            shape = [1] * axis + _shape(y) + [1] * (rx - axis - ry)
            yid = w.op("1.reshape", [yid, w.full_int_array(shape)], [(_dtype(y), shape)], {})[0]
        return w.op(f"1.{name}", [w.id(x), yid], [_res(op)], {})

    return em


def _reduce(name: str, dtype_attr: bool = False) -> Emit:
    def em(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        axis = list(p.get("axis") or [])
        attrs = {"keepdim": a_bool(p.get("keepdim", False))}
        if dtype_attr:
            attrs = {"dtype": a_dtype("Undefined(ALL_DTYPE)"), **attrs}
        return w.op(f"1.{name}", [w.id(op.operands[0]), w.full_int_array(axis)], [_res(op)], attrs)

    return em


def _table() -> dict[str, Emit]:
    t: dict[str, Emit] = {}
    for name in ["relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "abs", "square", "reciprocal", "floor",
                 "ceil", "sin", "cos", "erf", "log1p", "expm1", "sign", "silu"]:
        t[f"pd.{name}"] = _unary(name)
    for pd_name, name in [("elementwise_add", "add"), ("elementwise_sub", "subtract"),
                          ("elementwise_mul", "multiply"), ("elementwise_div", "divide"),
                          ("elementwise_max", "maximum"), ("elementwise_min", "minimum"),
                          ("elementwise_pow", "elementwise_pow")]:
        t[f"pd.{pd_name}"] = _binary(name)
    t["pd.reduce_sum"] = _reduce("sum", dtype_attr=True)
    t["pd.reduce_mean"] = _reduce("mean")
    t["pd.reduce_max"] = _reduce("max")
    t["pd.reduce_min"] = _reduce("min")

    def mean(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op("1.mean", [w.id(op.operands[0]), w.full_int_array([])], [_res(op)], {"keepdim": a_bool(False)})

    def gelu(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op("1.gelu", [w.id(op.operands[0])], [_res(op)], {"approximate": a_bool(p["approximate"])})

    def softmax(kind: str) -> Emit:
        def em(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
            return w.op(f"1.{kind}", [w.id(op.operands[0])], [_res(op)], {"axis": a_i32(p["axis"])})

        return em

    def scale(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        s = w.full(p["scale"])
        return w.op("1.scale", [w.id(op.operands[0]), s], [_res(op)], {
            "bias": a_f32(p["bias"]), "bias_after_scale": a_bool(p["bias_after_scale"])})

    def clip(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        lo = w.full(-3.4028234663852886e38 if p.get("min") is None else p["min"])
        hi = w.full(3.4028234663852886e38 if p.get("max") is None else p["max"])
        return w.op("1.clip", [w.id(op.operands[0]), lo, hi], [_res(op)], {})

    def cast(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op("1.cast", [w.id(op.operands[0])], [_res(op)], {"dtype": a_dtype(p["dtype"])})

    def matmul(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op("1.matmul", [w.id(op.operands[0]), w.id(op.operands[1])], [_res(op)], {
            "transpose_x": a_bool(p["transpose_x"]), "transpose_y": a_bool(p["transpose_y"])})

    def conv2d(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op("1.conv2d", [w.id(op.operands[0]), w.id(op.operands[1])], [_res(op)], {
            "strides": a_i32s(p["strides"]), "paddings": a_i32s(p["paddings"]),
            "padding_algorithm": a_str(p["padding_algorithm"]), "dilations": a_i32s(p["dilations"]),
            "groups": a_i32(p["groups"]), "data_format": a_str("NCHW")})

    def pool2d(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        k = w.full_int_array(p["ksize"])
        return w.op("1.pool2d", [w.id(op.operands[0]), k], [_res(op)], {
            "strides": a_i64s(p["strides"]), "paddings": a_i64s(p["paddings"]), "ceil_mode": a_bool(p["ceil_mode"]),
            "exclusive": a_bool(p["exclusive"]), "data_format": a_str("NCHW"),
            "pooling_type": a_str(p["pooling_type"]), "global_pooling": a_bool(p["global_pooling"]),
            "adaptive": a_bool(p["adaptive"]), "padding_algorithm": a_str(p["padding_algorithm"])})

    def batch_norm(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        x, scale_, bias, mean_, var = (w.id(v) for v in op.operands)
        c = _res(op, 1)
        return w.op("1.batch_norm_", [x, mean_, var, scale_, bias],
                    [_res(op), c, c, c, c, ("uint8", [-1])], {
            "is_test": a_bool(True), "momentum": a_f32(p["momentum"]), "epsilon": a_f32(p["epsilon"]),
            "data_format": a_str(p["data_layout"]), "use_global_stats": a_bool(p["use_global_stats"]),
            "trainable_statistics": a_bool(p["trainable_statistics"])})

    def layer_norm(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        x = op.operands[0]
        params = [w.id(v) for v in op.operands[1:]] + [0, 0]
        axis = int(p["begin_norm_axis"])
        lead = _shape(x)[:axis]
        rows = -1 if any(d < 0 for d in lead) else math.prod(lead)
        stat = (_dtype(x), [rows])
        return w.op("1.layer_norm", [w.id(x), params[0], params[1]], [_res(op), stat, stat], {
            "epsilon": a_f32(p["epsilon"]), "begin_norm_axis": a_i32(axis)})

    def dropout(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        prob = w.full(p["dropout_prob"])
        dt, shape = _res(op)
        mode = p["dropout_implementation"]
        return w.op("1.dropout", [w.id(op.operands[0]), 0, prob], [(dt, shape), ("uint8", shape)], {
            "is_test": a_bool(True), "mode": a_str(mode), "seed": a_i32(p["seed"]), "fix_seed": a_bool(False)})

    def reshape(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op("1.reshape", [w.id(op.operands[0]), w.full_int_array(p["shape"])], [_res(op)], {})

    def squeeze(kind: str) -> Emit:
        def em(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
            return w.op(f"1.{kind}", [w.id(op.operands[0]), w.full_int_array(p["axes"])], [_res(op)], {})

        return em

    def transpose(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op("1.transpose", [w.id(op.operands[0])], [_res(op)], {"perm": a_i32s(p["perm"])})

    def concat(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        axis = w.full(p["axis"], "int32")
        vec = w.op("0.combine", [w.id(v) for v in op.operands], [("float32", [])], {})[0]
        w.ops[-1]["O"][0]["TT"] = {"#": "0.t_vec", "D": [_ttype(_dtype(v), _shape(v)) for v in op.operands]}
        return w.op("1.concat", [vec, axis], [_res(op)], {})

    def slice_(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        axes = list(p["axes"])
        starts, ends = w.full_int_array(p["starts"]), w.full_int_array(p["ends"])
        return w.op("1.slice", [w.id(op.operands[0]), starts, ends], [_res(op)], {
            "axes": a_i64s(axes), "infer_flags": a_i64s([1] * len(axes)), "decrease_axis": a_i64s([])})

    for name in ("equal", "not_equal", "greater_than", "greater_equal", "less_than", "less_equal"):
        t[f"pd.{name}"] = _binary(name)

    def split(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        axis = w.full(p["axis"], "int32")
        vec_type = {"#": "0.t_vec", "D": [_ttype(_dtype(r), _shape(r)) for r in op.results]}
        if p["num"]:
            (vec,) = w.op("1.split_with_num", [w.id(op.operands[0]), axis], [("float32", [])], {"num": a_i32(p["num"])})
        else:
            sections = w.full_int_array(p["sections"])
            (vec,) = w.op("1.split", [w.id(op.operands[0]), sections, axis], [("float32", [])], {})
        w.ops[-1]["O"][0]["TT"] = vec_type
        return w.op("0.split", [vec], [_res(op, i) for i in range(len(op.results))], {})

    def gather(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        axis = w.full(p["axis"], "int32")
        return w.op("1.gather", [w.id(op.operands[0]), w.id(op.operands[1]), axis], [_res(op)], {})

    def top_k(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        k = w.full(p["k"], "int32")
        return w.op("1.topk", [w.id(op.operands[0]), k], [_res(op, 0), _res(op, 1)], {
            "axis": a_i32(p["axis"]), "largest": a_bool(p["largest"]), "sorted": a_bool(p["sorted"])})

    def where(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op("1.where", [w.id(v) for v in op.operands], [_res(op)], {})

    def expand(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op("1.expand", [w.id(op.operands[0]), w.full_int_array(p["shape"])], [_res(op)], {})

    def arg_max(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        axis = w.full(p["axis"], "int64")
        return w.op("1.argmax", [w.id(op.operands[0]), axis], [_res(op)], {
            "keepdims": a_bool(p["keepdim"]), "flatten": a_bool(p["flatten"]), "dtype": a_dtype(p["dtype"])})

    def lookup_table(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        pad = p.get("padding_idx")
        return w.op("1.embedding", [w.id(op.operands[0]), w.id(op.operands[1])], [_res(op)], {
            "padding_idx": a_i64(-1 if pad is None else pad), "sparse": a_bool(False)})

    def fill_constant(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op("1.full", [], [_res(op)], {
            "shape": a_intarray(p["shape"]), "value": a_f64(p["value"]), "dtype": a_dtype(p["dtype"]),
            "place": a_place(0)}, stop_gradient=True)

    def assign_value(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        dt, shape = _res(op)
        (init,) = w.op("1.full", [], [(dt, shape)], {
            "shape": a_intarray(shape), "value": a_f64(0.0), "dtype": a_dtype(dt), "place": a_place(0)},
            stop_gradient=True)
        return w.op("1.assign_value_", [init], [(dt, shape)], {
            "shape": a_i32s(p["shape"]), "dtype": a_dtype(dt),
            "values": a_array([a_f64(float(v)) for v in p["values"]]), "place": a_place(0)}, stop_gradient=True)

    def sum_(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        vec = w.op("0.combine", [w.id(v) for v in op.operands], [("float32", [])], {})[0]
        w.ops[-1]["O"][0]["TT"] = {"#": "0.t_vec", "D": [_ttype(_dtype(v), _shape(v)) for v in op.operands]}
        return w.op("1.add_n", [vec], [_res(op)], {})

    def pow_(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        return w.op("1.pow", [w.id(op.operands[0])], [_res(op)], {"y": a_f32(p["factor"])})

    def strided_slice(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        ids = [w.full_int_array(p[k]) for k in ("starts", "ends", "strides")]
        return w.op("1.strided_slice", [w.id(op.operands[0]), *ids], [_res(op)], {"axes": a_i32s(p["axes"])})

    def conv2d_transpose(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        size = w.full_int_array(p["output_size"])
        return w.op("1.conv2d_transpose", [w.id(op.operands[0]), w.id(op.operands[1]), size], [_res(op)], {
            "strides": a_i32s(p["strides"]), "paddings": a_i32s(p["paddings"]),
            "output_padding": a_i32s(p["output_padding"]), "padding_algorithm": a_str(p["padding_algorithm"]),
            "groups": a_i32(p["groups"]), "dilations": a_i32s(p["dilations"]), "data_format": a_str("NCHW")})

    def fill_any_like(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        dt = _dtype(op.results[0])
        value = w.full(p["value"], dt)
        return w.op("1.full_like", [w.id(op.operands[0]), value], [_res(op)], {
            "dtype": a_dtype(dt), "place": a_place(0)})

    def rnn(w: _Writer, op: Operation, p: dict[str, Any]) -> list[int]:
        from pullback.dialects.pd.rnn import rnn_layout

        lay = rnn_layout(p)
        s, n = 1 + lay.states, 1 + lay.states + lay.weight_count
        args = list(op.operands)
        pre = w.combine(args[1:s])
        weights = w.combine(args[s:n])
        seq = w.id(args[n]) if len(args) > n else 0
        # Paddle's PIR `rnn` reads a dropout state, a non-persistable `builtin.parameter`
        # (`<layer>.dropout_state__non_persistable`, not in `.pdiparams`) as Paddle writes it.
        state_in = w.param(f"{w.fresh('rnn')}.dropout_state__non_persistable", "uint8", [], persistable=False)
        dt = _dtype(op.results[0])
        out, _dstate, vec, _reserve = w.op("1.rnn", [w.id(args[0]), pre, weights, seq, state_in], [
            _res(op), (dt, []), ("float32", []), (dt, [])], {
            "dropout_prob": a_f32(p["dropout_prob"]), "is_bidirec": a_bool(p["is_bidirec"]),
            "input_size": a_i32(p["input_size"]), "hidden_size": a_i32(p["hidden_size"]),
            "num_layers": a_i32(p["num_layers"]), "mode": a_str(p["mode"]), "seed": a_i32(p["seed"]),
            "is_test": a_bool(True)})
        w.ops[-1]["O"][2]["TT"] = {"#": "0.t_vec", "D": [_ttype(*_res(op, i)) for i in range(1, s)]}
        finals = w.op("0.split", [vec], [_res(op, i) for i in range(1, s)], {})
        # (pd.rnn's reserve and dropout state: Paddle's are opaque, unread by inference.)
        return [out, *finals, _reserve, _dstate]

    t.update({
        "pd.rnn": rnn, "pd.fill_any_like": fill_any_like, "pd.split": split, "pd.gather": gather, "pd.top_k": top_k, "pd.where": where, "pd.expand": expand,
        "pd.arg_max": arg_max, "pd.lookup_table": lookup_table, "pd.fill_constant": fill_constant,
        "pd.assign_value": assign_value, "pd.sum": sum_, "pd.pow": pow_, "pd.strided_slice": strided_slice,
        "pd.conv2d_transpose": conv2d_transpose,
    })
    t.update({
        "pd.mean": mean, "pd.gelu": gelu, "pd.softmax": softmax("softmax"), "pd.log_softmax": softmax("log_softmax"),
        "pd.scale": scale, "pd.clip": clip, "pd.cast": cast, "pd.matmul": matmul, "pd.conv2d": conv2d,
        "pd.pool2d": pool2d, "pd.batch_norm": batch_norm, "pd.layer_norm": layer_norm, "pd.dropout": dropout,
        "pd.reshape": reshape, "pd.squeeze": squeeze("squeeze"), "pd.unsqueeze": squeeze("unsqueeze"),
        "pd.transpose": transpose, "pd.concat": concat, "pd.slice": slice_,
    })
    return t


EMITTERS: dict[str, Emit] = _table()
"""`pd` op name -> what writes it as PIR ops."""


def export_pir_json(program: Any, feed_names: Sequence[str], fetch_names: Sequence[str]) -> bytes:
    """The PIR json bytes of an inference Program; `NotExportable` lists the ops
    without a PIR form here."""
    from pullback.dialects import pd
    from pullback.dialects.pd.base import value_name

    block = program.module.body.block
    missing: dict[str, int] = {}
    for op in block.ops:
        if isinstance(op, (pd.DataOp, pd.ParameterOp)):
            continue
        if (op.name not in EMITTERS or op.regions or (isinstance(op, pd.DropoutOp) and len(op.operands) > 1)
                or imaginary_constant(op)):
            missing[op.name] = missing.get(op.name, 0) + 1
    if missing:
        raise NotExportable(", ".join(f"{k}" + (f" x{n}" if n > 1 else "") for k, n in sorted(missing.items())))
    w = _Writer()
    for op in block.ops:
        if isinstance(op, pd.ParameterOp):
            w.ids[op.out] = w.param(op.var_name.data, _dtype(op.out), _shape(op.out),
                                    trainable=bool(op.trainable.value.data))
    feeds = {op.var_name.data: op for op in block.ops if isinstance(op, pd.DataOp)}
    for n in feed_names:
        data = feeds[n]
        shape = _shape(data.out)
        (w.ids[data.out],) = w.op("1.data", [], [(_dtype(data.out), shape)], {
            "name": a_str(n), "shape": a_intarray(shape), "dtype": a_dtype(_dtype(data.out)), "place": a_place(0)})
    by_name: dict[str, SSAValue] = {}
    for op in block.ops:
        if isinstance(op, (pd.DataOp, pd.ParameterOp)):
            continue
        props = op.py_props() if isinstance(op, pd.PdOp) else {}
        outs = EMITTERS[op.name](w, op, props)
        for r, i in zip(op.results, outs):
            w.ids[r] = i
            rname = value_name(r)
            if rname is not None:
                by_name[rname] = r
    for col, n in enumerate(fetch_names):
        v = by_name.get(n) or next((d.out for k, d in feeds.items() if k == n), None)
        if v is None:
            raise NotExportable(f"fetch target '{n}' is not a value of the program")
        w.op("1.fetch", [w.id(v)], [(_dtype(v), _shape(v))], {"name": a_str(f"fetch_name_{col}"), "col": a_i32(col)},
             extra_out_attrs={"persistable": a_array([a_bool(True)])})
    doc = {"base_code": {"magic": "pir", "trainable": True, "version": PIR_VERSION},
           "program": {"regions": [{"#": "region_0", "blocks": [{"#": "block_0", "args": [], "ops": w.ops}]}]}}
    return json.dumps(doc, separators=(",", ":")).encode("utf-8")


__all__ = ["EMITTERS", "export_pir_json"]
