"""A `pd` inference Program as Paddle's legacy `ProgramDesc` (`.pdmodel`).

What `paddle.static.save_inference_model` and `paddle.jit.save` write by default,
so real Paddle (3.3.1's `load_inference_model` and `jit.load`, and 2.x) reads
pullback's models: feed ops, the program's ops as Paddle's operators (their
slots, attributes and attribute types as Paddle 3.3.1 writes them), fetch ops,
and a variable declaration per value.  The parameters go to `.pdiparams` as
Paddle's combined tensor stream, sorted by name (`tensor_stream`).

Each `pd` op maps to one Paddle operator (`EXPORTERS`); an op without one (control
flow, `pd.run_program`, ops Paddle has no operator for) makes `export_program`
raise `NotExportable` listing them all, and the caller falls back to pullback's
IR text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.ir import Operation, SSAValue

from pullback.frontend.formats import program_desc as pdesc

PROGRAM_VERSION = 3003001
"""`ProgramDesc.version` written: Paddle 3.3.1's (the operators are its)."""

OP_VERSIONS = {
    "elementwise_add": 1, "elementwise_sub": 1, "elementwise_mul": 1, "elementwise_div": 1,
    "elementwise_pow": 1, "equal": 1, "not_equal": 1, "less_than": 1, "less_equal": 1, "greater_than": 1,
    "greater_equal": 1, "conv2d": 1, "conv2d_transpose": 2, "clip": 1, "fill_constant": 2,
    "assign_value": 1, "gather": 1, "lookup_table_v2": 1, "round": 1, "leaky_relu": 1, "softplus": 1,
}
"""The op versions Paddle 3.3.1 records for the operators written here."""


class NotExportable(ValueError):
    """A program with ops that have no Paddle operator (listed)."""


def imaginary_constant(op: Operation) -> bool:
    """Whether op is a constant with non-zero imaginary parts (`pd.fill_constant`,
    `pd.fill_any_like` with `imag`, `pd.assign_value` with `imag_values`): the
    operators written here hold real values only, so such a program is not
    exportable (it falls back to pullback's IR text) rather than silently losing
    the imaginary parts."""
    props = getattr(op, "properties", {})
    imag = props.get("imag")
    return props.get("imag_values") is not None or (imag is not None and float(imag.value.data) != 0.0)


def _i(v: Any) -> tuple[int, Any]:
    return pdesc.ATTR_INT, int(v)


def _f(v: Any) -> tuple[int, Any]:
    return pdesc.ATTR_FLOAT, float(v)


def _b(v: Any) -> tuple[int, Any]:
    return pdesc.ATTR_BOOLEAN, bool(v)


def _s(v: Any) -> tuple[int, Any]:
    return pdesc.ATTR_STRING, str(v)


def _ints(v: Any) -> tuple[int, Any]:
    return pdesc.ATTR_INTS, [int(x) for x in (v or [])]


def _longs(v: Any) -> tuple[int, Any]:
    return pdesc.ATTR_LONGS, [int(x) for x in (v or [])]


def _floats(v: Any) -> tuple[int, Any]:
    return pdesc.ATTR_FLOATS, [float(x) for x in (v or [])]


_FIELD = {
    pdesc.ATTR_INT: "i", pdesc.ATTR_FLOAT: "f", pdesc.ATTR_STRING: "s", pdesc.ATTR_INTS: "ints",
    pdesc.ATTR_FLOATS: "floats", pdesc.ATTR_STRINGS: "strings", pdesc.ATTR_BOOLEAN: "b",
    pdesc.ATTR_LONG: "l", pdesc.ATTR_LONGS: "longs",
}

_COMMON_ATTRS: list[tuple[str, tuple[int, Any]]] = [
    ("op_callstack", (pdesc.ATTR_STRINGS, [])), ("op_device", (pdesc.ATTR_STRING, "")),
    ("op_namescope", (pdesc.ATTR_STRING, "/")), ("op_role", (pdesc.ATTR_INT, 0)),
    ("op_role_var", (pdesc.ATTR_STRINGS, [])), ("with_quant_attr", (pdesc.ATTR_BOOLEAN, False)),
]


@dataclass
class _Out:
    """One exported operator."""

    type: str
    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]
    attrs: dict[str, tuple[int, Any]]


@dataclass
class _Names:
    """Paddle variable names of the program's values (unique), and the extra
    variables exported operators declare (XShape, SavedMean, ...)."""

    of: dict[SSAValue, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    extra: list[tuple[str, list[int], str]] = field(default_factory=list)
    retype: dict[str, tuple[list[int], str]] = field(default_factory=dict)
    """Variables declared otherwise than their `pd` type (an RNN's opaque reserve)."""

    def fresh(self, base: str) -> str:
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name

    def extra_var(self, base: str, shape: Sequence[int], dtype: str) -> str:
        name = self.fresh(base)
        self.extra.append((name, list(shape), dtype))
        return name


def _shape(v: SSAValue) -> list[int]:
    from pullback.dialects import pd

    return [d if d >= 0 else -1 for d in pd.shape_of(v.type)]


def _dtype(v: SSAValue) -> str:
    from pullback.dialects import pd

    return str(pd.dtype_name(pd.elem_of(v.type)))


Exporter = Callable[[Operation, dict[str, Any], list[str], list[str], _Names], list[_Out]]


def _unary(kind: str) -> Exporter:
    def ex(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out(kind, {"X": ins[:1]}, {"Out": outs[:1]}, {})]

    return ex


def _binary(kind: str, axis: bool = True) -> Exporter:
    def ex(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        attrs = {"axis": _i(p.get("axis", -1))} if axis else {}
        return [_Out(kind, {"X": ins[:1], "Y": ins[1:2]}, {"Out": outs[:1]}, attrs)]

    return ex


def _with_xshape(kind: str, attrs_of: Callable[[dict[str, Any]], dict[str, tuple[int, Any]]]) -> Exporter:
    def ex(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        x = op.operands[0]
        xshape = names.extra_var(f"{outs[0]}.xshape", [0, *_shape(x)], _dtype(x))
        return [_Out(kind, {"X": ins[:1]}, {"Out": outs[:1], "XShape": [xshape]}, attrs_of(p))]

    return ex


def _reduce(kind: str) -> Exporter:
    def ex(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        axis = list(p.get("axis") or [])
        return [_Out(kind, {"X": ins[:1]}, {"Out": outs[:1]}, {
            "dim": _ints(axis), "keep_dim": _b(p.get("keepdim", False)), "reduce_all": _b(not axis),
            "in_dtype": _i(-1), "out_dtype": _i(-1)})]

    return ex


def _var_type(dtype: str) -> int:
    return pdesc.DTYPE_VAR_TYPES[dtype]


def _table() -> dict[str, Exporter]:
    t: dict[str, Exporter] = {}
    for name in ["relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "abs", "square", "reciprocal",
                 "floor", "ceil", "round", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "erf",
                 "log1p", "expm1", "sign", "logical_not", "silu"]:
        t[f"pd.{name}"] = _unary(name)
    for name in ["elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div", "elementwise_pow",
                 "elementwise_max", "elementwise_min", "equal", "not_equal", "greater_than", "greater_equal",
                 "less_than", "less_equal"]:
        t[f"pd.{name}"] = _binary(name)

    def attrs_only(kind: str, conv: Callable[[dict[str, Any]], dict[str, tuple[int, Any]]],
                   in_slot: str = "X", out_slot: str = "Out") -> Exporter:
        def ex(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
            return [_Out(kind, {in_slot: ins[:1]}, {out_slot: outs[:1]}, conv(p))]

        return ex

    t["pd.gelu"] = attrs_only("gelu", lambda p: {"approximate": _b(p["approximate"])})
    t["pd.scale"] = attrs_only("scale", lambda p: {"scale": _f(p["scale"]), "bias": _f(p["bias"]),
                                                   "bias_after_scale": _b(p["bias_after_scale"])})
    t["pd.pow"] = attrs_only("pow", lambda p: {"factor": _f(p["factor"])})
    t["pd.softmax"] = attrs_only("softmax", lambda p: {"axis": _i(p["axis"])})
    t["pd.log_softmax"] = attrs_only("log_softmax", lambda p: {"axis": _i(p["axis"])})
    t["pd.cast"] = attrs_only("cast", lambda p: {"out_dtype": _i(_var_type(p["dtype"]))})
    t["pd.mean"] = attrs_only("mean", lambda p: {})
    t["pd.transpose"] = _with_xshape("transpose2", lambda p: {"axis": _ints(p["perm"])})
    t["pd.reshape"] = _with_xshape("reshape2", lambda p: {"shape": _ints(p["shape"])})
    t["pd.squeeze"] = _with_xshape("squeeze2", lambda p: {"axes": _ints(p["axes"])})
    t["pd.unsqueeze"] = _with_xshape("unsqueeze2", lambda p: {"axes": _ints(p["axes"])})
    t["pd.expand"] = attrs_only("expand_v2", lambda p: {"shape": _ints(p["shape"])})
    for name in ("sum", "mean", "max", "min", "prod"):
        t[f"pd.reduce_{name}"] = _reduce(f"reduce_{name}")

    def cast(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out("cast", {"X": ins[:1]}, {"Out": outs[:1]}, {
            "in_dtype": _i(_var_type(_dtype(op.operands[0]))), "out_dtype": _i(_var_type(p["dtype"]))})]

    def clip(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        lo = -3.4028234663852886e38 if p.get("min") is None else p["min"]
        hi = 3.4028234663852886e38 if p.get("max") is None else p["max"]
        return [_Out("clip", {"X": ins[:1]}, {"Out": outs[:1]}, {"min": _f(lo), "max": _f(hi)})]

    def matmul(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out("matmul_v2", {"X": ins[:1], "Y": ins[1:2]}, {"Out": outs[:1]},
                     {"trans_x": _b(p["transpose_x"]), "trans_y": _b(p["transpose_y"])})]

    def conv2d(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out("conv2d", {"Input": ins[:1], "Filter": ins[1:2]}, {"Output": outs[:1]}, {
            "strides": _ints(p["strides"]), "paddings": _ints(p["paddings"]), "dilations": _ints(p["dilations"]),
            "groups": _i(p["groups"]), "padding_algorithm": _s(p["padding_algorithm"]),
            "data_format": _s("NCHW")})]

    def conv2d_transpose(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str],
                         names: _Names) -> list[_Out]:
        return [_Out("conv2d_transpose", {"Input": ins[:1], "Filter": ins[1:2]}, {"Output": outs[:1]}, {
            "output_padding": _ints(p["output_padding"]), "output_size": _ints(p["output_size"]),
            "strides": _ints(p["strides"]), "paddings": _ints(p["paddings"]), "dilations": _ints(p["dilations"]),
            "groups": _i(p["groups"]), "padding_algorithm": _s(p["padding_algorithm"]),
            "data_format": _s("NCHW")})]

    def pool2d(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out("pool2d", {"X": ins[:1]}, {"Out": outs[:1]}, {
            "pooling_type": _s(p["pooling_type"]), "ksize": _ints(p["ksize"]), "strides": _ints(p["strides"]),
            "paddings": _ints(p["paddings"]), "global_pooling": _b(p["global_pooling"]),
            "ceil_mode": _b(p["ceil_mode"]), "exclusive": _b(p["exclusive"]), "adaptive": _b(p["adaptive"]),
            "padding_algorithm": _s(p["padding_algorithm"]), "data_format": _s("NCHW"),
            "use_cudnn": _b(True)})]

    def batch_norm(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        x, _scale, _bias, mean, _var = ins
        c = _shape(op.operands[1])
        dt = _dtype(op.operands[1])
        saved_mean = names.extra_var(f"{outs[0]}.saved_mean", c, dt)
        saved_var = names.extra_var(f"{outs[0]}.saved_variance", c, dt)
        return [_Out("batch_norm", {"X": [x], "Scale": ins[1:2], "Bias": ins[2:3], "Mean": [mean],
                                    "Variance": ins[4:5]},
                     {"Y": outs[:1], "MeanOut": [mean], "VarianceOut": ins[4:5], "SavedMean": [saved_mean],
                      "SavedVariance": [saved_var]}, {
            "momentum": _f(p["momentum"]), "epsilon": _f(p["epsilon"]), "data_layout": _s(p["data_layout"]),
            "is_test": _b(True), "use_global_stats": _b(p["use_global_stats"]),
            "trainable_statistics": _b(p["trainable_statistics"])})]

    def layer_norm(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        x = op.operands[0]
        axis = int(p["begin_norm_axis"])
        lead = _shape(x)[:axis]
        rows = -1 if any(d < 0 for d in lead) else math.prod(lead)
        mean = names.extra_var(f"{outs[0]}.mean", [rows], _dtype(x))
        var = names.extra_var(f"{outs[0]}.variance", [rows], _dtype(x))
        return [_Out("layer_norm", {"X": ins[:1], "Scale": ins[1:2], "Bias": ins[2:3]},
                     {"Y": outs[:1], "Mean": [mean], "Variance": [var]},
                     {"begin_norm_axis": _i(axis), "epsilon": _f(p["epsilon"])})]

    def dropout(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        if len(op.operands) > 1 or not p["is_test"]:
            return []  # a training-mode dropout: not an inference operator (reported)
        return [_Out("dropout", {"X": ins[:1]}, {"Out": outs[:1]}, {
            "dropout_prob": _f(p["dropout_prob"]), "is_test": _b(True),
            "dropout_implementation": _s(p["dropout_implementation"]), "seed": _i(p["seed"]),
            "fix_seed": _b(False)})]

    def concat(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out("concat", {"X": ins}, {"Out": outs[:1]}, {"axis": _i(p["axis"])})]

    def sum_(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out("sum", {"X": ins}, {"Out": outs[:1]}, {})]

    def split(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out("split", {"X": ins[:1]}, {"Out": outs}, {
            "num": _i(p["num"]), "sections": _ints(p["sections"]), "axis": _i(p["axis"])})]

    def slice_(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        axes = list(p["axes"])
        return [_Out("slice", {"Input": ins[:1]}, {"Out": outs[:1]}, {
            "axes": _ints(axes), "starts": _ints(p["starts"]), "ends": _ints(p["ends"]),
            "decrease_axis": _ints([]), "infer_flags": _ints([1] * len(axes))})]

    def strided_slice(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str],
                      names: _Names) -> list[_Out]:
        axes = list(p["axes"])
        return [_Out("strided_slice", {"Input": ins[:1]}, {"Out": outs[:1]}, {
            "axes": _ints(axes), "starts": _ints(p["starts"]), "ends": _ints(p["ends"]),
            "strides": _ints(p["strides"]), "decrease_axis": _ints([]), "infer_flags": _ints([1] * len(axes))})]

    def fill_constant(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str],
                      names: _Names) -> list[_Out]:
        value = p["value"]
        return [_Out("fill_constant", {}, {"Out": outs[:1]}, {
            "shape": _longs(p["shape"]), "value": _f(value), "str_value": _s(repr(float(value))),
            "dtype": _i(_var_type(p["dtype"])), "force_cpu": _b(False)})]

    def assign_value(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str],
                     names: _Names) -> list[_Out]:
        dtype = p["dtype"]
        values = list(p["values"])
        key, conv = {"float32": ("fp32_values", _floats), "int32": ("int32_values", _ints),
                     "int64": ("int64_values", _longs), "bool": ("bool_values", _ints),
                     "float64": ("fp64_values", lambda v: (pdesc.ATTR_FLOAT64S, [float(x) for x in v]))
                     }.get(dtype, ("", _ints))
        if not key:
            return []
        return [_Out("assign_value", {}, {"Out": outs[:1]}, {
            "shape": _ints(p["shape"]), "dtype": _i(_var_type(dtype)), key: conv(values)})]

    def lookup_table(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str],
                     names: _Names) -> list[_Out]:
        pad = p.get("padding_idx")
        return [_Out("lookup_table_v2", {"Ids": ins[:1], "W": ins[1:2]}, {"Out": outs[:1]}, {
            "padding_idx": (pdesc.ATTR_LONG, -1 if pad is None else int(pad)),
            "is_sparse": _b(False), "is_distributed": _b(False), "remote_prefetch": _b(False)})]

    def arg_max(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out("arg_max", {"X": ins[:1]}, {"Out": outs[:1]}, {
            "axis": (pdesc.ATTR_LONG, int(p["axis"])), "keepdims": _b(p["keepdim"]), "flatten": _b(p["flatten"]),
            "dtype": _i(_var_type(p["dtype"]))})]

    def top_k(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out("top_k_v2", {"X": ins[:1]}, {"Out": outs[:1], "Indices": outs[1:2]}, {
            "k": _i(p["k"]), "axis": _i(p["axis"]), "largest": _b(p["largest"]), "sorted": _b(p["sorted"])})]

    def where(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out("where", {"Condition": ins[:1], "X": ins[1:2], "Y": ins[2:3]}, {"Out": outs[:1]}, {})]

    def gather(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        return [_Out("gather", {"X": ins[:1], "Index": ins[1:2]}, {"Out": outs[:1]}, {"axis": _i(p["axis"])})]

    def fill_any_like(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str],
                      names: _Names) -> list[_Out]:
        return [_Out("fill_any_like", {"X": ins[:1]}, {"Out": outs[:1]}, {
            "value": _f(p["value"]), "dtype": _i(_var_type(_dtype(op.results[0])))})]

    def rnn(op: Operation, p: dict[str, Any], ins: list[str], outs: list[str], names: _Names) -> list[_Out]:
        from pullback.dialects.pd.rnn import rnn_layout

        lay = rnn_layout(p)
        s, w = 1 + lay.states, 1 + lay.states + lay.weight_count
        # Paddle declares the reserve and the dropout state as opaque uint8 buffers.
        names.retype[outs[s]] = ([], "uint8")
        names.retype[outs[s + 1]] = ([], "uint8")
        return [_Out("rnn", {"Input": ins[:1], "PreState": ins[1:s], "WeightList": ins[s:w],
                             "SequenceLength": ins[w:w + 1]},
                     {"Out": outs[:1], "State": outs[1:s], "Reserve": [outs[s]], "DropoutState": [outs[s + 1]]}, {
            "mode": _s(p["mode"]), "input_size": _i(p["input_size"]), "hidden_size": _i(p["hidden_size"]),
            "num_layers": _i(p["num_layers"]), "is_bidirec": _b(p["is_bidirec"]),
            "dropout_prob": _f(p["dropout_prob"]), "is_test": _b(True), "seed": _i(p["seed"])})]

    t.update({
        "pd.rnn": rnn, "pd.fill_any_like": fill_any_like, "pd.cast": cast, "pd.clip": clip, "pd.matmul": matmul, "pd.conv2d": conv2d,
        "pd.conv2d_transpose": conv2d_transpose, "pd.pool2d": pool2d, "pd.batch_norm": batch_norm,
        "pd.layer_norm": layer_norm, "pd.dropout": dropout, "pd.concat": concat, "pd.sum": sum_,
        "pd.split": split, "pd.slice": slice_, "pd.strided_slice": strided_slice,
        "pd.fill_constant": fill_constant, "pd.assign_value": assign_value, "pd.lookup_table": lookup_table,
        "pd.arg_max": arg_max, "pd.top_k": top_k, "pd.where": where, "pd.gather": gather,
    })
    return t


EXPORTERS: dict[str, Exporter] = _table()
"""`pd` op name -> what writes it as Paddle operators."""


def _op_desc(out: _Out) -> dict[str, Any]:
    attrs = dict(_COMMON_ATTRS)
    attrs.update(out.attrs)
    return {
        "type": out.type,
        "inputs": [{"parameter": k, "arguments": v} for k, v in sorted(out.inputs.items())],
        "outputs": [{"parameter": k, "arguments": v} for k, v in sorted(out.outputs.items())],
        "attrs": [{"name": k, "type": t, _FIELD.get(t, "float64s"): v} for k, (t, v) in sorted(attrs.items())],
    }


def _var_desc(name: str, shape: Sequence[int], dtype: str, persistable: bool = False) -> dict[str, Any]:
    var: dict[str, Any] = {"name": name, "type": {"type": pdesc.DENSE_TENSOR, "dense_tensor": {
        "tensor": {"data_type": _var_type(dtype), "dims": list(shape)}, "legacy_lod_level": 0}}}
    if persistable:
        var["persistable"] = True
    return var


def export_program(program: Any, feed_names: Sequence[str], fetch_names: Sequence[str]) -> bytes:
    """The `ProgramDesc` bytes of an inference Program (its block 0: feeds,
    parameters and forward ops); `NotExportable` lists the ops with no Paddle
    operator."""
    from pullback.dialects import pd
    from pullback.dialects.pd.base import value_name

    block = program.module.body.block
    missing: dict[str, int] = {}
    for op in block.ops:
        if isinstance(op, (pd.DataOp, pd.ParameterOp)):
            continue
        if (op.name not in EXPORTERS or op.regions or (isinstance(op, pd.DropoutOp) and len(op.operands) > 1)
                or imaginary_constant(op)):
            missing[op.name] = missing.get(op.name, 0) + 1
    if missing:
        raise NotExportable(", ".join(f"{k}" + (f" x{n}" if n > 1 else "") for k, n in sorted(missing.items())))
    names = _Names()
    vars_: list[dict[str, Any]] = []
    ops: list[dict[str, Any]] = []

    def name_of(v: SSAValue) -> str:
        if v not in names.of:
            base = value_name(v) or "tmp_export"
            names.of[v] = names.fresh(base)
            vars_.append(_var_desc(names.of[v], _shape(v), _dtype(v), isinstance(v.owner, pd.ParameterOp)))
        return names.of[v]

    for op in block.ops:
        if isinstance(op, (pd.DataOp, pd.ParameterOp)):
            name_of(op.results[0])
    # Feed ops in reverse column order, as Paddle's `prepend_feed_ops` leaves them
    # (its `GetFeedTargetNames` reads them back to front).
    for col, n in reversed(list(enumerate(feed_names))):
        feed_value = next(v for v in names.of if names.of[v] == n)
        ops.append(_op_desc(_Out("feed", {"X": ["feed"]}, {"Out": [names.of[feed_value]]}, {"col": _i(col)})))
    for op in block.ops:
        if isinstance(op, (pd.DataOp, pd.ParameterOp)):
            continue
        ins = [name_of(v) for v in op.operands]
        outs = [name_of(r) for r in op.results]
        props = op.py_props() if isinstance(op, pd.PdOp) else {}
        for out in EXPORTERS[op.name](op, props, ins, outs, names):
            ops.append(_op_desc(out))
    by_name = {n: v for v, n in names.of.items()}
    for col, n in enumerate(fetch_names):
        if n not in by_name:
            raise NotExportable(f"fetch target '{n}' is not a value of the program")
        ops.append(_op_desc(_Out("fetch", {"X": [n]}, {"Out": ["fetch"]}, {"col": _i(col)})))
    for var in vars_:
        if var["name"] in names.retype:
            var.update(_var_desc(var["name"], *names.retype[var["name"]]))
    vars_.extend(_var_desc(n, s, d) for n, s, d in names.extra)
    vars_.append({"name": "feed", "type": {"type": pdesc.FEED_MINIBATCH}, "persistable": True})
    vars_.append({"name": "fetch", "type": {"type": pdesc.FETCH_LIST}, "persistable": True})
    used_types = sorted({o["type"] for o in ops})
    prog = {
        "blocks": [{"idx": 0, "parent_idx": -1, "vars": vars_, "ops": ops}],
        "version": {"version": PROGRAM_VERSION},
        "op_version_map": {"pair": [{"op_name": t, "op_version": {"version": OP_VERSIONS[t]}}
                                    for t in used_types if t in OP_VERSIONS]},
    }
    return pdesc.serialize_program(prog)


__all__ = ["EXPORTERS", "NotExportable", "export_program", "imaginary_constant"]
