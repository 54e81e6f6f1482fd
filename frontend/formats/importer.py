"""Paddle programs (legacy `ProgramDesc` or PIR json) as `pd` Programs.

A Paddle program is a list of ops reading and writing named variables.  The
importer replays it op by op through the frontend's own static builders
(`paddle.matmul`, `F.conv2d`, `F.batch_norm`, ...) inside a fresh Program, in
static mode, so the result is the Program those calls would have built:

* `feed` ops (legacy) or `pd_op.data` (PIR) become feeds (`pd.data`) in feed
  order; persistable dense tensors become `pd.parameter`s (trainable unless an op
  writes them, as batch-norm statistics are, or PIR marks them not trainable);
* every other op goes through its translator (`LEGACY_OPS`, `PIR_OPS`): Paddle's
  attributes become the builder's arguments, its outputs are named as Paddle
  named them;
* `fetch` ops give the fetch targets, in column order.

Before anything is built, every op type is checked: types without a translator,
and legacy ops whose recorded version (`op_version_map`) is newer than the one
translated here (Paddle 3.3.1's), are reported together in one
`UnsupportedOpsError`.

`legacy_ops()` and `pir_ops()` list the ops translated: the usual inference ops
(matmul/mul/fc parts, elementwise and comparison ops, activations, softmax,
conv2d/depthwise/transposed, pool2d, batch_norm, layer_norm, dropout, reshape,
transpose, flatten, squeeze/unsqueeze, concat, split, slice, reductions, cast,
fill_constant/full, embedding, stack, expand, top-k, where, gather, bilinear and
nearest interpolation, the fused recurrent `rnn` of `nn.LSTM`/`GRU`/`SimpleRNN`).
Shapes, axes and sizes must be constants of the file, with one exception: the
idiom Paddle writes for an RNN's zero initial states, a `shape` of a feed whose
entries are sliced out, stacked with constants and used as the shape of a
`fill_constant` / `full_with_tensor`, is followed symbolically (a size is "axis k
of tensor t") and built from `t` at run time.  Any other value computed at run
time (a `ShapeTensor` input, a shape feeding arithmetic) is reported by the op
that needs it.  Control flow (sub-blocks) is not translated.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pullback.frontend.formats import program_desc as pdesc
from pullback.frontend.formats.errors import FileFormatError

# ----------------------------------------------------------------- records


@dataclass
class OpRecord:
    """One Paddle op, format-neutral: slots hold variable names (PIR: operand and
    result positions `'0'`, `'1'`, ... holding `%<id>` names)."""

    type: str
    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]
    attrs: dict[str, Any]


@dataclass
class VarInfo:
    """A variable's declared shape (-1: unknown) and dtype."""

    shape: list[int]
    dtype: str
    persistable: bool = False
    trainable: bool = True


@dataclass
class PaddleProgram:
    """A Paddle program read from a file, before translation."""

    format: str  # "ProgramDesc" or "PIR json"
    ops: list[OpRecord]
    vars: dict[str, VarInfo]
    feeds: list[str]
    fetches: list[str]
    parameters: list[str]
    """Persistable variables the ops read, in the order the program declares them."""
    op_versions: dict[str, int] = field(default_factory=dict)


class UnsupportedOpsError(FileFormatError):
    """A program using ops pullback cannot translate (all of them are listed)."""


# ---------------------------------------------------------- legacy reading


def read_program_desc(data: bytes, source: str, api: str) -> PaddleProgram:
    """A legacy `ProgramDesc` file's block 0 as a `PaddleProgram`."""
    from pullback.frontend.formats.wire import WireError

    try:
        return _read_program_desc(pdesc.parse_program(data))
    except (WireError, KeyError, IndexError, TypeError) as e:
        why = str(e) if isinstance(e, WireError) else f"{type(e).__name__}: {e}"
        raise FileFormatError(f"{api}: {source} is not a Paddle program, or a truncated or damaged one "
                              f"(ProgramDesc: {why})") from None


def _read_program_desc(prog: dict[str, Any]) -> PaddleProgram:
    block = prog["blocks"][0]
    vars_: dict[str, VarInfo] = {}
    for v in block.get("vars", []):
        t = pdesc.var_tensor(v)
        if t is not None:
            vars_[v["name"]] = VarInfo(t[0], t[1], bool(v.get("persistable", False)))
    ops: list[OpRecord] = []
    feeds: dict[int, str] = {}
    fetches: dict[int, str] = {}
    for op in block.get("ops", []):
        ins, outs = pdesc.op_slots(op, "inputs"), pdesc.op_slots(op, "outputs")
        attrs = pdesc.op_attrs(op)
        if op["type"] == "feed":
            feeds[int(attrs.get("col", len(feeds)))] = outs["Out"][0]
        elif op["type"] == "fetch":
            fetches[int(attrs.get("col", len(fetches)))] = ins["X"][0]
        else:
            ops.append(OpRecord(op["type"], ins, outs, attrs))
    written = {n for op in ops for names in op.outputs.values() for n in names}
    read = [n for op in ops for names in op.inputs.values() for n in names]
    params = list(dict.fromkeys(n for n in read if n in vars_ and vars_[n].persistable))
    for n in params:
        if n in written:
            vars_[n].trainable = False
    versions = {p["op_name"]: int(p["op_version"]["version"])
                for p in prog.get("op_version_map", {}).get("pair", []) if "op_version" in p}
    return PaddleProgram("ProgramDesc", ops, vars_, [feeds[k] for k in sorted(feeds)],
                         [fetches[k] for k in sorted(fetches)], params, versions)


# -------------------------------------------------------------- PIR reading

PIR_VERSIONS = range(1, 5)
"""`base_code.version`s of PIR json files read here (Paddle 3.3.1 writes 4)."""

_PIR_DTYPES = {
    "t_f16": "float16", "t_f32": "float32", "t_f64": "float64", "t_bf16": "bfloat16",
    "t_i8": "int8", "t_ui8": "uint8", "t_i16": "int16", "t_i32": "int32", "t_i64": "int64",
    "t_bool": "bool", "t_c64": "complex64", "t_c128": "complex128",
}


def _pir_type(t: Any) -> VarInfo | None:
    if not isinstance(t, dict) or not str(t.get("#", "")).endswith("t_dtensor"):
        return None
    d = t.get("D", [])
    dtype = _PIR_DTYPES.get(str(d[0].get("#", "")).split(".", 1)[-1]) if d and isinstance(d[0], dict) else None
    if dtype is None or len(d) < 2:
        return None
    return VarInfo([int(x) for x in d[1]], dtype)


def _pir_attr(a: Any) -> Any:
    if not isinstance(a, dict) or "#" not in a:
        return a
    kind = str(a["#"]).split(".", 1)[-1]
    data = a.get("D")
    if kind == "a_array":
        return [_pir_attr(x) for x in data or []]
    if kind == "a_intarray":
        return [int(x) for x in data or []]
    if kind == "a_scalar" and isinstance(data, list) and len(data) == 2:
        return data[1]
    if kind in ("a_c64", "a_c128") and isinstance(data, list) and len(data) == 2:
        return complex(data[0], data[1])  # a complex constant's (real, imag)
    return data


def read_pir_json(doc: Any, source: str, api: str) -> PaddleProgram:
    """A PIR json program (`<prefix>.json`) as a `PaddleProgram`."""
    base = doc.get("base_code") if isinstance(doc, dict) else None
    if not isinstance(base, dict) or base.get("magic") != "pir":
        raise FileFormatError(f"{api}: {source} is JSON but not a Paddle PIR program (no base_code magic 'pir')")
    version = base.get("version")
    if version not in PIR_VERSIONS:
        raise FileFormatError(
            f"{api}: {source} is a PIR program of version {version}; pullback reads versions "
            f"{PIR_VERSIONS.start}-{PIR_VERSIONS.stop - 1} (Paddle 3.3.1 writes 4)"
        )
    try:
        regions = doc["program"]["regions"]
        block_ops = regions[0]["blocks"][0]["ops"]
    except (KeyError, IndexError, TypeError):
        raise FileFormatError(f"{api}: {source} is a PIR program without a top-level block") from None
    vars_: dict[str, VarInfo] = {}
    ops: list[OpRecord] = []
    feeds: list[str] = []
    fetches: dict[int, str] = {}
    params: list[str] = []

    def vname(i: Any) -> str:
        return f"%{int(i)}" if i else ""

    try:
        for op in block_ops:
            name = str(op["#"])
            if name == "p":  # builtin.parameter
                out = op["O"]
                info = _pir_type(out.get("TT"))
                attrs = op.get("A", [])
                pname = str(attrs[-1])
                if info is None:
                    raise FileFormatError(f"{api}: {source}: parameter '{pname}' is not a dense tensor")
                oa = op.get("OA", [])
                info.persistable = bool(oa[0]) if oa else True
                info.trainable = bool(oa[2]) if len(oa) > 2 else True
                vars_[pname] = info
                vars_[vname(out["%"])] = info
                if info.persistable:  # (an RNN's dropout state is not: not in `.pdiparams`)
                    params.append(pname)
                ops.append(OpRecord("builtin.parameter", {}, {"0": [vname(out["%"])]}, {"name": pname}))
                continue
            dialect, _, opname = name.partition(".")
            full = {"0": "builtin", "1": "pd_op"}.get(dialect, f"dialect{dialect}") + "." + opname
            attrs = {a["N"]: _pir_attr(a["AT"]) for a in op.get("A", []) if isinstance(a, dict)}
            ins = {str(k): [vname(v.get("%"))] for k, v in enumerate(op.get("I", []))}
            outs_list = op.get("O", [])
            outs_list = outs_list if isinstance(outs_list, list) else [outs_list]
            outs = {}
            for k, o in enumerate(outs_list):
                n = vname(o.get("%"))
                outs[str(k)] = [n]
                info = _pir_type(o.get("TT"))
                if info is not None and n:
                    vars_[n] = info
            if op.get("regions"):
                full += " (with regions)"
            if full in ("pd_op.data", "pd_op.feed"):
                full = "pd_op.data"
                feeds.append(outs["0"][0])
                attrs["_feed_name"] = attrs.get("name")
            elif full == "pd_op.fetch":
                fetches[int(attrs.get("col", len(fetches)))] = ins["0"][0]
                continue
            ops.append(OpRecord(full, ins, outs, attrs))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        if isinstance(e, FileFormatError):
            raise
        raise FileFormatError(f"{api}: {source} is a damaged PIR program ({type(e).__name__}: {e})") from None
    return PaddleProgram("PIR json", ops, vars_, feeds, [fetches[k] for k in sorted(fetches)], params)


# ------------------------------------------------------------ translation


class Ctx:
    """What translators use: the Variables of Paddle names, attribute access and
    constants (PIR's `full`/`full_int_array` values, used as attributes)."""

    def __init__(self, prog: PaddleProgram, api: str, source: str) -> None:
        self.prog = prog
        self.api = api
        self.source = source
        self.env: dict[str, Any] = {}
        self.consts: dict[str, np.ndarray] = {}
        self.lists: dict[str, list[str]] = {}
        self.sym: dict[str, tuple[list[Dim], bool]] = {}
        """Integer tensors known symbolically (a `shape` and what is sliced and
        stacked from it): the entries, and whether it is a scalar."""
        self.op: OpRecord | None = None

    # -- errors
    def fail(self, why: str) -> FileFormatError:
        op = self.op.type if self.op else "?"
        return FileFormatError(f"{self.api}: {self.source}: cannot translate op '{op}': {why}")

    # -- inputs
    def names(self, slot: str) -> list[str]:
        assert self.op is not None
        names = [n for n in self.op.inputs.get(slot, []) if n]
        out: list[str] = []
        for n in names:
            out.extend(self.lists.get(n, [n]))
        return out

    def has(self, slot: str) -> bool:
        return bool(self.names(slot))

    def var(self, name: str) -> Any:
        v = self.env.get(name)
        if v is None and name in self.consts:
            v = self.env[name] = _materialize(self.consts[name])
        if v is None and name in self.sym:
            raise self.fail(f"it reads '{name}', a shape computed at run time: pullback follows such a "
                            "value only into slice, stack and the shape of fill_constant/full_with_tensor")
        if v is None:
            raise self.fail(f"it reads '{name}', which no earlier op defines")
        return v

    def dims(self, name: str) -> tuple[list[Dim], bool] | None:
        """An integer tensor as sizes (static ints, or `(tensor name, axis)`) and
        whether it is a scalar: a constant or a symbolic shape; None otherwise."""
        if name in self.sym:
            return self.sym[name]
        if name in self.consts and name not in self.env:
            arr = self.consts[name]
            if arr.dtype.kind in "iu" and arr.ndim <= 1:
                return [int(x) for x in arr.reshape(-1)], arr.ndim == 0
        return None

    def put_dims(self, name: str, dims: list[Dim], scalar: bool) -> None:
        """Record an integer result: a constant when every size is static."""
        if all(isinstance(d, int) for d in dims):
            arr = np.array(dims, dtype=np.int64)
            self.consts[name] = arr.reshape(()) if scalar else arr
        else:
            self.sym[name] = (dims, scalar)

    def x(self, slot: str = "X") -> Any:
        names = self.names(slot)
        if not names:
            raise self.fail(f"input '{slot}' is missing")
        return self.var(names[0])

    def opt(self, slot: str) -> Any:
        names = self.names(slot)
        return self.var(names[0]) if names else None

    def xs(self, slot: str = "X") -> list[Any]:
        return [self.var(n) for n in self.names(slot)]

    def const(self, slot: str) -> np.ndarray:
        """A PIR operand that must be a constant (a `full`/`full_int_array` value)."""
        names = self.names(slot)
        if not names or names[0] not in self.consts:
            raise self.fail(f"operand {slot} must be a constant (a tensor computed at run time is not supported)")
        return self.consts[names[0]]

    def attr(self, name: str, default: Any = None) -> Any:
        assert self.op is not None
        return self.op.attrs.get(name, default)

    def no_tensor(self, *slots: str) -> None:
        """Legacy slots that hold a run-time tensor instead of the attribute."""
        for s in slots:
            if self.has(s):
                raise self.fail(f"input '{s}' (a value computed at run time instead of an attribute) is not supported")

    # -- outputs
    def out(self, slot: str, value: Any, index: int = 0) -> None:
        assert self.op is not None
        names = self.op.outputs.get(slot, [])
        if index < len(names) and names[index]:
            self.env[names[index]] = value

    def outs(self, slot: str, values: Sequence[Any]) -> None:
        assert self.op is not None
        names = self.op.outputs.get(slot, [])
        if len(names) == 1 and len(values) != 1:
            # A PIR vector result: `builtin.split` unpacks it.
            synthetic = [f"{names[0]}#{i}" for i in range(len(values))]
            for n, v in zip(synthetic, values):
                self.env[n] = v
            self.lists[names[0]] = synthetic
            return
        for i, v in enumerate(values):
            self.out(slot, v, i)


Dim = int | tuple[str, int]
"""A size: static, or `(name, axis)`, the size of axis `axis` of tensor `name` at run time."""


def _materialize(arr: np.ndarray) -> Any:
    import pullback as paddle

    if arr.size and arr.dtype.kind in "fiub" and bool((arr == arr.reshape(-1)[0]).all()):
        return paddle.full(list(arr.shape), arr.reshape(-1)[0].item(), str(arr.dtype))
    return paddle.assign(arr)


def _shape_dims(ctx: Ctx, name: str) -> list[Dim]:
    """`shape(name)`: its static sizes, `(name, axis)` for the dynamic ones."""
    return [int(d) if d >= 0 else (name, i) for i, d in enumerate(ctx.var(name).shape)]


def _slice_dims(ctx: Ctx, dims: list[Dim], axes: list[int], starts: list[int], ends: list[int],
                decrease: list[int]) -> tuple[list[Dim], bool]:
    """A slice of a 1-D size vector."""
    if axes != [0] or len(starts) != 1 or len(ends) != 1:
        raise ctx.fail(f"a slice of a shape along axes {axes}")
    part = dims[slice(starts[0], min(ends[0], len(dims)))]
    scalar = bool(decrease)
    if scalar and len(part) != 1:
        raise ctx.fail("a decreased slice of a shape that is not one element")
    return part, scalar


def _stack_dims(ctx: Ctx, names: list[str]) -> list[Dim] | None:
    """Scalars (constants or symbolic sizes) stacked into a size vector, or None
    when one of them is another tensor."""
    out: list[Dim] = []
    for n in names:
        d = ctx.dims(n)
        if d is None or len(d[0]) != 1:
            return None
        out.append(d[0][0])
    return out


def _full_dims(ctx: Ctx, dims: list[Dim], value: Any, dtype: str) -> Any:
    """`full(dims, value)` with sizes known only at run time: filled like their
    source tensor, its other axes sliced away, then the static sizes expanded in."""
    paddle = _api()
    if all(isinstance(d, int) for d in dims):
        return paddle.full([int(d) for d in dims], value, dtype)  # type: ignore[arg-type]
    refs = [d for d in dims if isinstance(d, tuple)]
    sources = {r[0] for r in refs}
    axes = [r[1] for r in refs]
    if len(sources) != 1 or len(set(axes)) != len(axes):
        raise ctx.fail("a shape whose run-time sizes come from more than one tensor (or repeat an axis)")
    src = ctx.var(refs[0][0])
    rank = len(src.shape)
    t = paddle.full_like(src, value, dtype)
    others = [i for i in range(rank) if i not in axes]
    if others:
        t = paddle.slice(t, others, [0] * len(others), [1] * len(others))
    if axes + others != list(range(rank)):
        t = paddle.transpose(t, axes + others)
    if others:
        t = paddle.squeeze(t, list(range(len(axes), rank)))
    static = [i for i, d in enumerate(dims) if isinstance(d, int)]
    if static:
        t = paddle.unsqueeze(t, static)
        t = paddle.expand(t, [d if isinstance(d, int) else -1 for d in dims])
    return t


def _rnn(ctx: Ctx, x: Any, states: list[Any], weights: list[Any], seq: Any) -> list[Any]:
    """Paddle's fused `rnn` as `pd.rnn` (the op `nn.LSTM`/`GRU`/`SimpleRNN` append)."""
    from pullback.dialects import pd
    from pullback.frontend.core import apply

    mode = str(ctx.attr("mode", "LSTM"))
    if mode not in pd.RNN_GATES:
        raise ctx.fail(f"mode '{mode}'")
    outs = apply(pd.RnnOp, [x, *states, *weights, *([seq] if seq is not None else [])], prefix="rnn",
                 mode=mode, input_size=int(ctx.attr("input_size")), hidden_size=int(ctx.attr("hidden_size")),
                 num_layers=int(ctx.attr("num_layers", 1)), is_bidirec=bool(ctx.attr("is_bidirec", False)),
                 dropout_prob=float(ctx.attr("dropout_prob", 0.0)), is_test=True, seed=int(ctx.attr("seed", 0)))
    return list(outs)


Translator = Callable[[Ctx], None]


def _api() -> Any:
    import pullback as paddle

    return paddle


def _F() -> Any:
    return _api().nn.functional


def _elementwise(ctx: Ctx, name: str) -> None:
    from pullback.frontend.ops import elementwise as ew

    fn = getattr(ew, name)
    ctx.out("Out", fn(ctx.x("X"), ctx.x("Y"), axis=int(ctx.attr("axis", -1))))


def _unary(api: str, module: str = "paddle") -> Translator:
    def tr(ctx: Ctx) -> None:
        fn = getattr(_api() if module == "paddle" else _F(), api)
        ctx.out("Out", fn(ctx.x("X")))

    return tr


def _pir_unary(api: str, module: str = "paddle") -> Translator:
    def tr(ctx: Ctx) -> None:
        fn = getattr(_api() if module == "paddle" else _F(), api)
        ctx.out("0", fn(ctx.x("0")))

    return tr


def _ints(v: Any) -> list[int]:
    if isinstance(v, np.ndarray):
        return [int(x) for x in v.reshape(-1)]
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v]
    return [int(v)]


def _conv_padding(paddings: Sequence[int], algorithm: str) -> Any:
    if algorithm in ("SAME", "VALID"):
        return algorithm
    p = list(paddings)
    if len(p) == 4 and p[0] == p[1] and p[2] == p[3]:
        return [p[0], p[2]]
    return p


def _conv(ctx: Ctx, x: Any, w: Any) -> Any:
    F = _F()
    return F.conv2d(x, w, None, stride=_ints(ctx.attr("strides", [1, 1])),
                    padding=_conv_padding(_ints(ctx.attr("paddings", [0, 0])), ctx.attr("padding_algorithm", "EXPLICIT")),
                    dilation=_ints(ctx.attr("dilations", [1, 1])), groups=int(ctx.attr("groups", 1)),
                    data_format=ctx.attr("data_format", "NCHW"))


def _conv_transpose(ctx: Ctx, x: Any, w: Any, output_size: Any) -> Any:
    F = _F()
    return F.conv2d_transpose(
        x, w, None, stride=_ints(ctx.attr("strides", [1, 1])),
        padding=_conv_padding(_ints(ctx.attr("paddings", [0, 0])), ctx.attr("padding_algorithm", "EXPLICIT")),
        output_padding=_ints(ctx.attr("output_padding", [])) or 0, groups=int(ctx.attr("groups", 1)),
        dilation=_ints(ctx.attr("dilations", [1, 1])), output_size=output_size or None,
        data_format=ctx.attr("data_format", "NCHW"))


def _pool(ctx: Ctx, x: Any, ksize: list[int]) -> Any:
    F = _F()
    kind = ctx.attr("pooling_type", "max")
    fmt = ctx.attr("data_format", "NCHW")
    if kind not in ("max", "avg"):
        raise ctx.fail(f"pooling_type '{kind}'")
    if ctx.attr("global_pooling", False):
        return (F.adaptive_max_pool2d(x, 1) if kind == "max"
                else F.adaptive_avg_pool2d(x, 1, data_format=fmt))
    if ctx.attr("adaptive", False):
        return (F.adaptive_max_pool2d(x, ksize) if kind == "max"
                else F.adaptive_avg_pool2d(x, ksize, data_format=fmt))
    padding = _conv_padding(_ints(ctx.attr("paddings", [0, 0])), ctx.attr("padding_algorithm", "EXPLICIT"))
    stride = _ints(ctx.attr("strides", ksize))
    if kind == "max":
        return F.max_pool2d(x, ksize, stride, padding, ceil_mode=bool(ctx.attr("ceil_mode", False)), data_format=fmt)
    return F.avg_pool2d(x, ksize, stride, padding, ceil_mode=bool(ctx.attr("ceil_mode", False)),
                        exclusive=bool(ctx.attr("exclusive", True)), data_format=fmt)


def _batch_norm(ctx: Ctx, x: Any, mean: Any, var: Any, scale: Any, bias: Any, fmt: str) -> Any:
    return _F().batch_norm(x, mean, var, scale, bias, training=False,
                           momentum=float(ctx.attr("momentum", 0.9)),
                           epsilon=float(ctx.attr("epsilon", 1e-5)), data_format=fmt)


def _layer_norm(ctx: Ctx, x: Any, scale: Any, bias: Any) -> Any:
    axis = int(ctx.attr("begin_norm_axis", 1))
    shape = list(x.shape)[axis:]
    if any(d < 0 for d in shape):
        raise ctx.fail(f"normalized dimensions {shape} must be static")
    # Scale and Bias stay 1-D ([prod(shape)]), as Paddle's layer_norm takes them.
    return _F().layer_norm(x, shape, scale, bias, epsilon=float(ctx.attr("epsilon", 1e-5)))


def _dropout(ctx: Ctx, x: Any, p: float, mode: str) -> Any:
    if not ctx.attr("is_test", True):
        raise ctx.fail("a training-mode dropout (is_test=False) is not an inference op")
    if mode == "downgrade_in_infer":
        return _api().scale(x, 1.0 - p)
    return x


def _reduce(ctx: Ctx, fn_name: str, x: Any, axis: Any, keepdim: bool) -> Any:
    paddle = _api()
    fn = getattr(paddle, fn_name)
    return fn(x, axis=axis, keepdim=keepdim)


def _slice(ctx: Ctx, x: Any, axes: list[int], starts: list[int], ends: list[int], decrease: list[int]) -> Any:
    paddle = _api()
    y = paddle.slice(x, axes, starts, ends)
    if decrease:
        y = paddle.squeeze(y, decrease) if len(y.shape) > len(decrease) else paddle.reshape(y, [])
    return y


def _mul(ctx: Ctx) -> None:
    paddle = _api()
    x, y = ctx.x("X"), ctx.x("Y")
    kx, ky = int(ctx.attr("x_num_col_dims", 1)), int(ctx.attr("y_num_col_dims", 1))
    xs, ys = list(x.shape), list(y.shape)
    if any(d < 0 for d in xs[kx:]) or any(d < 0 for d in ys):
        raise ctx.fail("mul needs static trailing dimensions")
    x2 = paddle.reshape(x, [*([0] * kx), math.prod(xs[kx:])]) if len(xs) != kx + 1 else x
    if kx > 1:
        x2 = paddle.flatten(x2, 0, kx - 1)
    y2 = paddle.reshape(y, [math.prod(ys[:ky]), math.prod(ys[ky:])]) if len(ys) != 2 else y
    out = paddle.matmul(x2, y2)
    if kx > 1 or len(ys) > ky + 1:
        out = paddle.reshape(out, [*xs[:kx], *ys[ky:]])
    ctx.out("Out", out)


def _matmul_v1(ctx: Ctx) -> None:
    paddle = _api()
    out = paddle.matmul(ctx.x("X"), ctx.x("Y"), bool(ctx.attr("transpose_X", False)),
                        bool(ctx.attr("transpose_Y", False)))
    alpha = float(ctx.attr("alpha", 1.0))
    ctx.out("Out", out if alpha == 1.0 else paddle.scale(out, alpha))


def _flatten2(ctx: Ctx) -> None:
    paddle = _api()
    x = ctx.x("X")
    axis = int(ctx.attr("axis", 1))
    nd = len(x.shape)
    if axis == 0:
        y = paddle.reshape(x, [1, -1])
    else:
        y = paddle.flatten(x, axis, nd - 1) if axis < nd - 1 else x
        y = paddle.flatten(y, 0, axis - 1) if axis > 1 else y
    ctx.out("Out", y)


_VAR_TYPE_NAMES = pdesc.VAR_TYPE_DTYPES


def _dtype_attr(v: Any) -> str:
    if isinstance(v, int):
        return _VAR_TYPE_NAMES[v]
    return str(v)


def _fill_constant(ctx: Ctx) -> None:
    ctx.no_tensor("ValueTensor")
    assert ctx.op is not None
    dtype = _dtype_attr(ctx.attr("dtype", 5))
    s = ctx.attr("str_value", "")
    value: Any = float(s) if s else ctx.attr("value", 0.0)
    if dtype.startswith(("int", "uint")) or dtype == "bool":
        value = int(value)
    dims: list[Dim] | None
    if ctx.has("ShapeTensorList"):
        dims = _stack_dims(ctx, ctx.names("ShapeTensorList"))
    elif ctx.has("ShapeTensor"):
        found = ctx.dims(ctx.names("ShapeTensor")[0])
        dims = found[0] if found is not None and not found[1] else None
    else:
        dims = [int(d) for d in _ints(ctx.attr("shape", []))]
    if dims is None:
        raise ctx.fail("a shape computed at run time (beyond sizes of a tensor) is not supported")
    out = ctx.op.outputs.get("Out", [""])[0]
    if all(isinstance(d, int) for d in dims):
        # A constant, built where something reads it (a scalar may only be a size).
        ctx.consts[out] = np.full([int(d) for d in dims], value, dtype=np.dtype(dtype))  # type: ignore[arg-type]
    else:
        ctx.out("Out", _full_dims(ctx, dims, value, dtype))


def _assign_value(ctx: Ctx, out_slot: str) -> None:
    dtype = _dtype_attr(ctx.attr("dtype", 5))
    for key in ("fp32_values", "int32_values", "int64_values", "bool_values", "fp64_values", "values"):
        vals = ctx.attr(key)
        if vals:
            break
    else:
        vals = []
    arr = np.array(vals, dtype=dtype).reshape(_ints(ctx.attr("shape", [len(vals)])))
    ctx.out(out_slot, _api().assign(arr))


def _interp(ctx: Ctx, x: Any, method: str) -> Any:
    fmt = ctx.attr("data_layout", ctx.attr("data_format", "NCHW"))
    oh, ow = int(ctx.attr("out_h", -1)), int(ctx.attr("out_w", -1))
    scale = ctx.attr("scale", [])
    size = [oh, ow] if oh > 0 and ow > 0 else None
    factor = None
    if size is None:
        sc = [float(s) for s in (scale if isinstance(scale, list) else [scale])]
        if not sc or sc[0] <= 0:
            raise ctx.fail("neither out_h/out_w nor scale is set")
        factor = sc if len(sc) > 1 else sc[0]
    return _F().interpolate(x, size=size, scale_factor=factor, mode=method,
                            align_corners=bool(ctx.attr("align_corners", False)),
                            align_mode=int(ctx.attr("align_mode", 1)), data_format=fmt)


def _legacy_table() -> dict[str, tuple[int, Translator]]:
    """Legacy op type -> (highest op version translated, translator)."""
    paddle_unary = [
        "exp", "log", "sqrt", "rsqrt", "abs", "square", "reciprocal", "floor", "ceil", "round", "sin",
        "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "erfinv",
        "lgamma", "digamma", "log1p", "expm1", "sign", "logical_not", "log2", "log10",
    ]
    t: dict[str, tuple[int, Translator]] = {name: (0, _unary(name)) for name in paddle_unary}
    t["round"] = (1, _unary("round"))  # (Paddle 3.3.1's op versions)
    t.update({name: (0, _unary(name, "F")) for name in ["relu", "silu", "mish", "softsign", "tanhshrink"]})

    def relu6(ctx: Ctx) -> None:
        ctx.out("Out", _api().clip(ctx.x(), 0.0, float(ctx.attr("threshold", 6.0))))

    def gelu(ctx: Ctx) -> None:
        ctx.out("Out", _F().gelu(ctx.x(), bool(ctx.attr("approximate", False))))

    def leaky_relu(ctx: Ctx) -> None:
        ctx.out("Out", _F().leaky_relu(ctx.x(), float(ctx.attr("alpha", 0.02))))

    def elu(ctx: Ctx) -> None:
        ctx.out("Out", _F().elu(ctx.x(), float(ctx.attr("alpha", 1.0))))

    def swish(ctx: Ctx) -> None:
        beta = float(ctx.attr("beta", 1.0))
        x = ctx.x()
        ctx.out("Out", _F().silu(x) if beta == 1.0 else x * _F().sigmoid(_api().scale(x, beta)))

    def hard_sigmoid(ctx: Ctx) -> None:
        ctx.out("Out", _F().hardsigmoid(ctx.x(), float(ctx.attr("slope", 0.2)), float(ctx.attr("offset", 0.5))))

    def hard_swish(ctx: Ctx) -> None:
        th, sc, off = (float(ctx.attr(k, d)) for k, d in (("threshold", 6.0), ("scale", 6.0), ("offset", 3.0)))
        x = ctx.x()
        if (th, sc, off) == (6.0, 6.0, 3.0):
            ctx.out("Out", _F().hardswish(x))
        else:
            ctx.out("Out", x * _api().clip(_api().scale(x, 1.0, off), 0.0, th) / sc)

    def brelu(ctx: Ctx) -> None:
        ctx.out("Out", _api().clip(ctx.x(), float(ctx.attr("t_min", 0.0)), float(ctx.attr("t_max", 24.0))))

    def softplus(ctx: Ctx) -> None:
        ctx.out("Out", _F().softplus(ctx.x(), float(ctx.attr("beta", 1.0)), float(ctx.attr("threshold", 20.0))))

    def softmax(ctx: Ctx) -> None:
        ctx.out("Out", _F().softmax(ctx.x(), int(ctx.attr("axis", -1))))

    def log_softmax(ctx: Ctx) -> None:
        ctx.out("Out", _F().log_softmax(ctx.x(), int(ctx.attr("axis", -1))))

    def scale(ctx: Ctx) -> None:
        ctx.no_tensor("ScaleTensor", "BiasTensor")
        ctx.out("Out", _api().scale(ctx.x(), float(ctx.attr("scale", 1.0)), float(ctx.attr("bias", 0.0)),
                                    bool(ctx.attr("bias_after_scale", True))))

    def clip(ctx: Ctx) -> None:
        ctx.no_tensor("Min", "Max")
        ctx.out("Out", _api().clip(ctx.x(), float(ctx.attr("min")), float(ctx.attr("max"))))

    def matmul_v2(ctx: Ctx) -> None:
        ctx.out("Out", _api().matmul(ctx.x("X"), ctx.x("Y"), bool(ctx.attr("trans_x", False)),
                                     bool(ctx.attr("trans_y", False))))

    def conv2d(ctx: Ctx) -> None:
        ctx.out("Output", _conv(ctx, ctx.x("Input"), ctx.x("Filter")))

    def conv2d_transpose(ctx: Ctx) -> None:
        ctx.out("Output", _conv_transpose(ctx, ctx.x("Input"), ctx.x("Filter"), _ints(ctx.attr("output_size", []))))

    def pool2d(ctx: Ctx) -> None:
        ctx.out("Out", _pool(ctx, ctx.x("X"), _ints(ctx.attr("ksize", [1, 1]))))

    def batch_norm(ctx: Ctx) -> None:
        ctx.out("Y", _batch_norm(ctx, ctx.x("X"), ctx.x("Mean"), ctx.x("Variance"), ctx.x("Scale"),
                                 ctx.x("Bias"), ctx.attr("data_layout", "NCHW")))

    def layer_norm(ctx: Ctx) -> None:
        ctx.out("Y", _layer_norm(ctx, ctx.x("X"), ctx.opt("Scale"), ctx.opt("Bias")))

    def dropout(ctx: Ctx) -> None:
        ctx.out("Out", _dropout(ctx, ctx.x("X"), float(ctx.attr("dropout_prob", 0.5)),
                                ctx.attr("dropout_implementation", "downgrade_in_infer")))

    def reshape(ctx: Ctx) -> None:
        ctx.no_tensor("Shape", "ShapeTensor")
        ctx.out("Out", _api().reshape(ctx.x(), _ints(ctx.attr("shape", []))))

    def transpose(ctx: Ctx) -> None:
        ctx.out("Out", _api().transpose(ctx.x(), _ints(ctx.attr("axis", []))))

    def flatten_range(ctx: Ctx) -> None:
        ctx.out("Out", _api().flatten(ctx.x(), int(ctx.attr("start_axis", 1)), int(ctx.attr("stop_axis", -1))))

    def squeeze(ctx: Ctx) -> None:
        axes = _ints(ctx.attr("axes", []))
        ctx.out("Out", _api().squeeze(ctx.x(), axes or None))

    def unsqueeze(ctx: Ctx) -> None:
        ctx.no_tensor("AxesTensor", "AxesTensorList")
        ctx.out("Out", _api().unsqueeze(ctx.x(), _ints(ctx.attr("axes", []))))

    def concat(ctx: Ctx) -> None:
        ctx.no_tensor("AxisTensor")
        ctx.out("Out", _api().concat(ctx.xs("X"), int(ctx.attr("axis", 0))))

    def split(ctx: Ctx) -> None:
        ctx.no_tensor("AxisTensor", "SectionsTensorList")
        sections = _ints(ctx.attr("sections", []))
        parts = _api().split(ctx.x(), sections or int(ctx.attr("num", 1)), int(ctx.attr("axis", 0)))
        ctx.outs("Out", parts)

    def slice_(ctx: Ctx) -> None:
        ctx.no_tensor("StartsTensor", "EndsTensor", "StartsTensorList", "EndsTensorList")
        args = (_ints(ctx.attr("axes", [])), _ints(ctx.attr("starts", [])), _ints(ctx.attr("ends", [])),
                _ints(ctx.attr("decrease_axis", [])))
        src = ctx.names("Input")[0] if ctx.has("Input") else ""
        if src in ctx.sym:
            assert ctx.op is not None
            ctx.put_dims(ctx.op.outputs["Out"][0], *_slice_dims(ctx, ctx.sym[src][0], *args))
            return
        ctx.out("Out", _slice(ctx, ctx.x("Input"), *args))

    def shape(ctx: Ctx) -> None:
        assert ctx.op is not None
        ctx.put_dims(ctx.op.outputs["Out"][0], _shape_dims(ctx, ctx.names("Input")[0]), False)

    def rnn(ctx: Ctx) -> None:
        outs = _rnn(ctx, ctx.x("Input"), ctx.xs("PreState"), ctx.xs("WeightList"), ctx.opt("SequenceLength"))
        n = len(ctx.names("PreState"))
        ctx.out("Out", outs[0])
        ctx.outs("State", outs[1:1 + n])
        ctx.out("Reserve", outs[1 + n])
        ctx.out("DropoutState", outs[2 + n])

    def strided_slice(ctx: Ctx) -> None:
        ctx.no_tensor("StartsTensor", "EndsTensor", "StridesTensor", "StartsTensorList", "EndsTensorList",
                      "StridesTensorList")
        paddle = _api()
        y = paddle.strided_slice(ctx.x("Input"), _ints(ctx.attr("axes", [])), _ints(ctx.attr("starts", [])),
                                 _ints(ctx.attr("ends", [])), _ints(ctx.attr("strides", [])))
        dec = _ints(ctx.attr("decrease_axis", []))
        ctx.out("Out", paddle.squeeze(y, dec) if dec else y)

    def reduce(fn_name: str) -> Translator:
        def tr(ctx: Ctx) -> None:
            axis = None if ctx.attr("reduce_all", False) else _ints(ctx.attr("dim", []))
            ctx.out("Out", _reduce(ctx, fn_name, ctx.x(), axis or None, bool(ctx.attr("keep_dim", False))))

        return tr

    def mean(ctx: Ctx) -> None:
        ctx.out("Out", _api().mean(ctx.x()))

    def cast(ctx: Ctx) -> None:
        ctx.out("Out", _api().cast(ctx.x(), _dtype_attr(ctx.attr("out_dtype", 5))))

    def assign(ctx: Ctx) -> None:
        ctx.out("Out", _api().assign(ctx.x()))

    def arg_max(ctx: Ctx) -> None:
        x = ctx.x()
        axis = None if ctx.attr("flatten", False) else int(ctx.attr("axis", -1))
        ctx.out("Out", _api().argmax(x, axis, bool(ctx.attr("keepdims", False)),
                                     _dtype_attr(ctx.attr("dtype", 3))))

    def lookup_table_v2(ctx: Ctx) -> None:
        pad = int(ctx.attr("padding_idx", -1))
        ctx.out("Out", _F().embedding(ctx.x("Ids"), ctx.x("W"), None if pad == -1 else pad))

    def stack(ctx: Ctx) -> None:
        dims = _stack_dims(ctx, ctx.names("X")) if int(ctx.attr("axis", 0)) == 0 else None
        if dims is not None and any(n in ctx.sym for n in ctx.names("X")):
            assert ctx.op is not None
            ctx.put_dims(ctx.op.outputs["Y"][0], dims, False)
            return
        ctx.out("Y", _api().stack(ctx.xs("X"), int(ctx.attr("axis", 0))))

    def expand_v2(ctx: Ctx) -> None:
        ctx.no_tensor("Shape", "expand_shapes_tensor")
        ctx.out("Out", _api().expand(ctx.x(), _ints(ctx.attr("shape", []))))

    def sum_(ctx: Ctx) -> None:
        ctx.out("Out", _api().add_n(ctx.xs("X")))

    def pow_(ctx: Ctx) -> None:
        ctx.no_tensor("FactorTensor")
        ctx.out("Out", _api().pow(ctx.x(), float(ctx.attr("factor", 1.0))))

    def top_k_v2(ctx: Ctx) -> None:
        ctx.no_tensor("K")
        vals, idx = _api().topk(ctx.x(), int(ctx.attr("k", 1)), int(ctx.attr("axis", -1)),
                                bool(ctx.attr("largest", True)), bool(ctx.attr("sorted", True)))
        ctx.out("Out", vals)
        ctx.out("Indices", idx)

    def where(ctx: Ctx) -> None:
        ctx.out("Out", _api().where(ctx.x("Condition"), ctx.x("X"), ctx.x("Y")))

    def compare(name: str) -> Translator:
        def tr(ctx: Ctx) -> None:
            ctx.out("Out", getattr(_api(), name)(ctx.x("X"), ctx.x("Y")))

        return tr

    def gather(ctx: Ctx) -> None:
        ctx.no_tensor("Axis")
        ctx.out("Out", _api().gather(ctx.x("X"), ctx.x("Index"), int(ctx.attr("axis", 0))))

    def fill_any_like(ctx: Ctx) -> None:
        code = int(ctx.attr("dtype", -1))
        x = ctx.x()
        ctx.out("Out", _api().full_like(x, float(ctx.attr("value", 0.0)), None if code < 0 else _dtype_attr(code)))

    def interp(method: str) -> Translator:
        def tr(ctx: Ctx) -> None:
            ctx.no_tensor("OutSize", "SizeTensor", "Scale")
            ctx.out("Out", _interp(ctx, ctx.x("X"), method))

        return tr

    t.update({
        "relu6": (0, relu6), "gelu": (0, gelu), "leaky_relu": (1, leaky_relu), "elu": (0, elu),
        "swish": (0, swish), "hard_sigmoid": (0, hard_sigmoid), "hard_swish": (0, hard_swish),
        "brelu": (0, brelu), "softplus": (1, softplus), "softmax": (0, softmax),
        "log_softmax": (0, log_softmax), "scale": (0, scale), "clip": (1, clip),
        "matmul_v2": (0, matmul_v2), "matmul": (1, _matmul_v1), "mul": (0, _mul),
        "conv2d": (1, conv2d), "depthwise_conv2d": (1, conv2d), "conv2d_transpose": (2, conv2d_transpose),
        "pool2d": (0, pool2d), "batch_norm": (0, batch_norm), "layer_norm": (0, layer_norm),
        "dropout": (0, dropout), "reshape2": (0, reshape), "reshape": (0, reshape),
        "transpose2": (0, transpose), "transpose": (0, transpose),
        "flatten_contiguous_range": (0, flatten_range), "flatten2": (0, _flatten2), "flatten": (0, _flatten2),
        "squeeze2": (0, squeeze), "squeeze": (0, squeeze), "unsqueeze2": (0, unsqueeze), "unsqueeze": (0, unsqueeze),
        "concat": (0, concat), "split": (0, split), "slice": (0, slice_), "strided_slice": (0, strided_slice),
        "shape": (0, shape), "rnn": (0, rnn),
        "reduce_sum": (0, reduce("sum")), "reduce_mean": (0, reduce("mean")), "reduce_max": (0, reduce("max")),
        "reduce_min": (0, reduce("min")), "reduce_prod": (0, reduce("prod")), "mean": (0, mean),
        "cast": (0, cast), "assign": (0, assign), "fill_constant": (2, _fill_constant),
        "assign_value": (1, lambda ctx: _assign_value(ctx, "Out")), "arg_max": (0, arg_max),
        "lookup_table_v2": (1, lookup_table_v2), "stack": (0, stack), "expand_v2": (0, expand_v2),
        "sum": (0, sum_), "pow": (0, pow_), "top_k_v2": (0, top_k_v2), "where": (0, where),
        "gather": (1, gather), "bilinear_interp_v2": (0, interp("bilinear")),
        "nearest_interp_v2": (0, interp("nearest")), "fill_any_like": (0, fill_any_like),
    })
    for name in ("equal", "not_equal", "greater_than", "greater_equal", "less_than", "less_equal"):
        t[name] = (1, compare(name))
    for op, fn in (("elementwise_add", "elementwise_add"), ("elementwise_sub", "elementwise_sub"),
                   ("elementwise_mul", "elementwise_mul"), ("elementwise_div", "elementwise_div"),
                   ("elementwise_pow", "elementwise_pow"), ("elementwise_max", "elementwise_max"),
                   ("elementwise_min", "elementwise_min")):
        t[op] = (1, (lambda f: lambda ctx: _elementwise(ctx, f))(fn))
    return t


def _pir_table() -> dict[str, Translator]:
    """PIR op name -> translator."""

    def const_value(ctx: Ctx) -> None:
        assert ctx.op is not None
        value = ctx.attr("value")
        dtype = str(ctx.attr("dtype", "float32"))
        if dtype.startswith("Undefined"):
            dtype = "float32"
        if ctx.op.type == "pd_op.full_int_array":
            arr = np.array(value, dtype=dtype)
        elif ctx.op.type == "pd_op.assign_value_":
            arr = np.array(ctx.attr("values", []), dtype=dtype).reshape(_ints(ctx.attr("shape", [])))
        else:
            arr = np.full(_ints(ctx.attr("shape", [1])), value, dtype=dtype)
        ctx.consts[ctx.op.outputs["0"][0]] = arr

    def combine(ctx: Ctx) -> None:
        assert ctx.op is not None
        ctx.lists[ctx.op.outputs["0"][0]] = [n for k in sorted(ctx.op.inputs, key=int) for n in ctx.names(k)]

    def split_vec(ctx: Ctx) -> None:
        assert ctx.op is not None
        items = ctx.names("0")
        for k, names in ctx.op.outputs.items():
            if names and names[0] and int(k) < len(items):
                src = items[int(k)]
                ctx.env[names[0]] = ctx.var(src)

    def binary(name: str) -> Translator:
        def tr(ctx: Ctx) -> None:
            ctx.out("0", getattr(_api(), name)(ctx.x("0"), ctx.x("1")))

        return tr

    def c_float(ctx: Ctx, slot: str, default: float) -> float:
        return float(ctx.const(slot).reshape(-1)[0]) if ctx.has(slot) else default

    t: dict[str, Translator] = {
        "builtin.combine": combine, "builtin.split": split_vec,
        "pd_op.full": const_value, "pd_op.full_int_array": const_value, "pd_op.assign_value_": const_value,
        # Paddle 3.3.1 writes a complex `full` as two real fulls and `complex`.
        "pd_op.complex": binary("complex"),
    }
    for name in ["exp", "log", "sqrt", "rsqrt", "abs", "square", "reciprocal", "floor", "ceil", "round", "sin",
                 "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "erfinv",
                 "lgamma", "digamma", "log1p", "expm1", "sign", "logical_not", "log2", "log10", "assign"]:
        t[f"pd_op.{name}"] = _pir_unary(name)
    for name in ["relu", "relu6", "silu", "mish", "softsign", "tanhshrink", "hardswish"]:
        t[f"pd_op.{name}"] = _pir_unary(name, "F")
    for name, fn in [("add", "add"), ("subtract", "subtract"), ("multiply", "multiply"), ("divide", "divide"),
                     ("maximum", "maximum"), ("minimum", "minimum"), ("elementwise_pow", "pow"),
                     ("remainder", "remainder"), ("floor_divide", "floor_divide"), ("equal", "equal"),
                     ("not_equal", "not_equal"), ("greater_than", "greater_than"),
                     ("greater_equal", "greater_equal"), ("less_than", "less_than"), ("less_equal", "less_equal")]:
        t[f"pd_op.{name}"] = binary(fn)

    def gelu(ctx: Ctx) -> None:
        ctx.out("0", _F().gelu(ctx.x("0"), bool(ctx.attr("approximate", False))))

    def leaky_relu(ctx: Ctx) -> None:
        ctx.out("0", _F().leaky_relu(ctx.x("0"), float(ctx.attr("negative_slope", 0.02))))

    def elu(ctx: Ctx) -> None:
        ctx.out("0", _F().elu(ctx.x("0"), float(ctx.attr("alpha", 1.0))))

    def hardsigmoid(ctx: Ctx) -> None:
        ctx.out("0", _F().hardsigmoid(ctx.x("0"), float(ctx.attr("slope", 0.2)), float(ctx.attr("offset", 0.5))))

    def hardtanh(ctx: Ctx) -> None:
        ctx.out("0", _api().clip(ctx.x("0"), float(ctx.attr("t_min", -1.0)), float(ctx.attr("t_max", 1.0))))

    def swish(ctx: Ctx) -> None:
        ctx.out("0", _F().silu(ctx.x("0")))

    def softplus(ctx: Ctx) -> None:
        ctx.out("0", _F().softplus(ctx.x("0"), float(ctx.attr("beta", 1.0)), float(ctx.attr("threshold", 20.0))))

    def softmax(ctx: Ctx) -> None:
        ctx.out("0", _F().softmax(ctx.x("0"), int(ctx.attr("axis", -1))))

    def log_softmax(ctx: Ctx) -> None:
        ctx.out("0", _F().log_softmax(ctx.x("0"), int(ctx.attr("axis", -1))))

    def scale(ctx: Ctx) -> None:
        ctx.out("0", _api().scale(ctx.x("0"), c_float(ctx, "1", 1.0), float(ctx.attr("bias", 0.0)),
                                  bool(ctx.attr("bias_after_scale", True))))

    def clip(ctx: Ctx) -> None:
        ctx.out("0", _api().clip(ctx.x("0"), c_float(ctx, "1", -3.4e38), c_float(ctx, "2", 3.4e38)))

    def matmul(ctx: Ctx) -> None:
        ctx.out("0", _api().matmul(ctx.x("0"), ctx.x("1"), bool(ctx.attr("transpose_x", False)),
                                   bool(ctx.attr("transpose_y", False))))

    def conv2d(ctx: Ctx) -> None:
        ctx.out("0", _conv(ctx, ctx.x("0"), ctx.x("1")))

    def conv2d_transpose(ctx: Ctx) -> None:
        size = _ints(ctx.const("2")) if ctx.has("2") else []
        ctx.out("0", _conv_transpose(ctx, ctx.x("0"), ctx.x("1"), size))

    def pool2d(ctx: Ctx) -> None:
        ctx.out("0", _pool(ctx, ctx.x("0"), _ints(ctx.const("1"))))

    def batch_norm(ctx: Ctx) -> None:
        ctx.out("0", _batch_norm(ctx, ctx.x("0"), ctx.x("1"), ctx.x("2"), ctx.opt("3"), ctx.opt("4"),
                                 ctx.attr("data_format", "NCHW")))

    def layer_norm(ctx: Ctx) -> None:
        ctx.out("0", _layer_norm(ctx, ctx.x("0"), ctx.opt("1"), ctx.opt("2")))

    def dropout(ctx: Ctx) -> None:
        ctx.out("0", _dropout(ctx, ctx.x("0"), c_float(ctx, "2", 0.5), ctx.attr("mode", "upscale_in_train")))

    def reshape(ctx: Ctx) -> None:
        ctx.out("0", _api().reshape(ctx.x("0"), _ints(ctx.const("1"))))

    def transpose(ctx: Ctx) -> None:
        ctx.out("0", _api().transpose(ctx.x("0"), _ints(ctx.attr("perm", []))))

    def flatten(ctx: Ctx) -> None:
        ctx.out("0", _api().flatten(ctx.x("0"), int(ctx.attr("start_axis", 1)), int(ctx.attr("stop_axis", -1))))

    def squeeze(ctx: Ctx) -> None:
        axes = _ints(ctx.const("1")) if ctx.has("1") else []
        ctx.out("0", _api().squeeze(ctx.x("0"), axes or None))

    def unsqueeze(ctx: Ctx) -> None:
        ctx.out("0", _api().unsqueeze(ctx.x("0"), _ints(ctx.const("1"))))

    def concat(ctx: Ctx) -> None:
        ctx.out("0", _api().concat(ctx.xs("0"), int(c_float(ctx, "1", 0))))

    def split(ctx: Ctx) -> None:
        parts = _api().split(ctx.x("0"), _ints(ctx.const("1")), int(c_float(ctx, "2", 0)))
        ctx.outs("0", parts)

    def split_with_num(ctx: Ctx) -> None:
        parts = _api().split(ctx.x("0"), int(ctx.attr("num", 1)), int(c_float(ctx, "1", 0)))
        ctx.outs("0", parts)

    def slice_(ctx: Ctx) -> None:
        args = (_ints(ctx.attr("axes", [])), _ints(ctx.const("1")), _ints(ctx.const("2")),
                _ints(ctx.attr("decrease_axis", [])))
        src = ctx.names("0")[0] if ctx.has("0") else ""
        if src in ctx.sym:
            assert ctx.op is not None
            ctx.put_dims(ctx.op.outputs["0"][0], *_slice_dims(ctx, ctx.sym[src][0], *args))
            return
        ctx.out("0", _slice(ctx, ctx.x("0"), *args))

    def shape(ctx: Ctx) -> None:
        assert ctx.op is not None
        ctx.put_dims(ctx.op.outputs["0"][0], _shape_dims(ctx, ctx.names("0")[0]), False)

    def full_with_tensor(ctx: Ctx) -> None:
        found = ctx.dims(ctx.names("1")[0]) if ctx.has("1") else None
        if found is None or found[1]:
            raise ctx.fail("operand 1 must be a shape: constant sizes, or sizes of a tensor")
        dtype = str(ctx.attr("dtype", "float32"))
        ctx.out("0", _full_dims(ctx, found[0], c_float(ctx, "0", 0.0), "float32" if dtype.startswith("Undefined")
                                else dtype))

    def rnn(ctx: Ctx) -> None:
        # Operands: x, pre_state (vector), weight_list (vector), sequence_length
        # (optional), dropout_state_in (not read in inference).
        outs = _rnn(ctx, ctx.x("0"), ctx.xs("1"), ctx.xs("2"), ctx.opt("3"))
        n = len(ctx.names("1"))
        ctx.out("0", outs[0])
        ctx.outs("2", outs[1:1 + n])
        ctx.out("3", outs[1 + n])
        ctx.out("1", outs[2 + n])

    def strided_slice(ctx: Ctx) -> None:
        ctx.out("0", _api().strided_slice(ctx.x("0"), _ints(ctx.attr("axes", [])), _ints(ctx.const("1")),
                                          _ints(ctx.const("2")), _ints(ctx.const("3"))))

    def reduce(fn_name: str) -> Translator:
        def tr(ctx: Ctx) -> None:
            axis = _ints(ctx.const("1")) if ctx.has("1") else []
            ctx.out("0", _reduce(ctx, fn_name, ctx.x("0"), axis or None, bool(ctx.attr("keepdim", False))))

        return tr

    def cast(ctx: Ctx) -> None:
        ctx.out("0", _api().cast(ctx.x("0"), str(ctx.attr("dtype"))))

    def argmax(ctx: Ctx) -> None:
        axis = None if ctx.attr("flatten", False) else int(c_float(ctx, "1", -1))
        ctx.out("0", _api().argmax(ctx.x("0"), axis, bool(ctx.attr("keepdims", False)),
                                   str(ctx.attr("dtype", "int64"))))

    def embedding(ctx: Ctx) -> None:
        pad = int(ctx.attr("padding_idx", -1))
        ctx.out("0", _F().embedding(ctx.x("0"), ctx.x("1"), None if pad == -1 else pad))

    def stack(ctx: Ctx) -> None:
        dims = _stack_dims(ctx, ctx.names("0")) if int(ctx.attr("axis", 0)) == 0 else None
        if dims is not None and any(n in ctx.sym for n in ctx.names("0")):
            assert ctx.op is not None
            ctx.put_dims(ctx.op.outputs["0"][0], dims, False)
            return
        ctx.out("0", _api().stack(ctx.xs("0"), int(ctx.attr("axis", 0))))

    def expand(ctx: Ctx) -> None:
        ctx.out("0", _api().expand(ctx.x("0"), _ints(ctx.const("1"))))

    def add_n(ctx: Ctx) -> None:
        ctx.out("0", _api().add_n(ctx.xs("0")))

    def pow_(ctx: Ctx) -> None:
        ctx.out("0", _api().pow(ctx.x("0"), float(ctx.attr("y", 1.0))))

    def topk(ctx: Ctx) -> None:
        k = int(c_float(ctx, "1", float(ctx.attr("k", 1))))
        vals, idx = _api().topk(ctx.x("0"), k, int(ctx.attr("axis", -1)), bool(ctx.attr("largest", True)),
                                bool(ctx.attr("sorted", True)))
        ctx.out("0", vals)
        ctx.out("1", idx)

    def where(ctx: Ctx) -> None:
        ctx.out("0", _api().where(ctx.x("0"), ctx.x("1"), ctx.x("2")))

    def gather(ctx: Ctx) -> None:
        ctx.out("0", _api().gather(ctx.x("0"), ctx.x("1"), int(c_float(ctx, "2", 0))))

    def interp(method: str) -> Translator:
        def tr(ctx: Ctx) -> None:
            for slot in ("1", "2", "3"):
                if ctx.has(slot):
                    raise ctx.fail("sizes computed at run time are not supported")
            ctx.out("0", _interp(ctx, ctx.x("0"), method))

        return tr

    def full_like(ctx: Ctx) -> None:
        dtype = str(ctx.attr("dtype", ""))
        ctx.out("0", _api().full_like(ctx.x("0"), c_float(ctx, "1", 0.0),
                                      None if not dtype or dtype.startswith("Undefined") else dtype))

    def tile(ctx: Ctx) -> None:
        ctx.out("0", _api().tile(ctx.x("0"), _ints(ctx.const("1"))))

    def data(ctx: Ctx) -> None:  # feeds are made before the ops run
        pass

    t.update({
        "pd_op.data": data, "pd_op.gelu": gelu, "pd_op.leaky_relu": leaky_relu, "pd_op.elu": elu,
        "pd_op.hardsigmoid": hardsigmoid, "pd_op.hardtanh": hardtanh, "pd_op.swish": swish,
        "pd_op.softplus": softplus, "pd_op.softmax": softmax, "pd_op.log_softmax": log_softmax,
        "pd_op.scale": scale, "pd_op.clip": clip, "pd_op.matmul": matmul, "pd_op.conv2d": conv2d,
        "pd_op.depthwise_conv2d": conv2d, "pd_op.conv2d_transpose": conv2d_transpose, "pd_op.pool2d": pool2d,
        "pd_op.batch_norm": batch_norm, "pd_op.batch_norm_": batch_norm, "pd_op.layer_norm": layer_norm,
        "pd_op.dropout": dropout, "pd_op.reshape": reshape, "pd_op.transpose": transpose,
        "pd_op.flatten": flatten, "pd_op.squeeze": squeeze, "pd_op.unsqueeze": unsqueeze,
        "pd_op.concat": concat, "pd_op.split": split, "pd_op.split_with_num": split_with_num,
        "pd_op.slice": slice_, "pd_op.strided_slice": strided_slice, "pd_op.sum": reduce("sum"),
        "pd_op.mean": reduce("mean"), "pd_op.max": reduce("max"), "pd_op.min": reduce("min"),
        "pd_op.prod": reduce("prod"), "pd_op.cast": cast, "pd_op.argmax": argmax, "pd_op.embedding": embedding,
        "pd_op.stack": stack, "pd_op.expand": expand, "pd_op.add_n": add_n, "pd_op.pow": pow_,
        "pd_op.topk": topk, "pd_op.where": where, "pd_op.gather": gather,
        "pd_op.bilinear_interp": interp("bilinear"), "pd_op.nearest_interp": interp("nearest"),
        "pd_op.tile": tile, "pd_op.full_like": full_like, "pd_op.shape": shape, "pd_op.shape64": shape,
        "pd_op.full_with_tensor": full_with_tensor, "pd_op.rnn": rnn,
    })
    return t


_TABLES: dict[str, Any] = {}


def legacy_ops() -> dict[str, tuple[int, Translator]]:
    """Legacy op type -> (highest op version translated, translator)."""
    if "legacy" not in _TABLES:
        _TABLES["legacy"] = _legacy_table()
    table: dict[str, tuple[int, Translator]] = _TABLES["legacy"]
    return table


def pir_ops() -> dict[str, Translator]:
    """PIR op name -> translator."""
    if "pir" not in _TABLES:
        _TABLES["pir"] = _pir_table()
    table: dict[str, Translator] = _TABLES["pir"]
    return table


def check_ops(prog: PaddleProgram, source: str, api: str) -> None:
    """All unsupported ops of `prog` at once, as one `UnsupportedOpsError`."""
    counts: dict[str, int] = {}
    problems: dict[str, str] = {}
    if prog.format == "ProgramDesc":
        table = legacy_ops()
        for op in prog.ops:
            entry = table.get(op.type)
            have = prog.op_versions.get(op.type)
            if entry is None:
                pass
            elif any(isinstance(v, tuple) and v and v[0] in ("block", "blocks") for v in op.attrs.values()):
                problems[op.type] = "sub-blocks"
            elif have is not None and have > entry[0]:
                problems[op.type] = f"op version {have}, pullback translates up to {entry[0]}"
            else:
                continue
            counts[op.type] = counts.get(op.type, 0) + 1
    else:
        ptable = pir_ops()
        for op in prog.ops:
            if op.type == "builtin.parameter":
                continue
            if op.type not in ptable:
                counts[op.type] = counts.get(op.type, 0) + 1
    if counts:
        items = []
        for name in sorted(counts):
            note = f" ({problems[name]})" if name in problems else ""
            times = f" x{counts[name]}" if counts[name] > 1 else ""
            items.append(f"{name}{times}{note}")
        raise UnsupportedOpsError(
            f"{api}: {source} uses {len(counts)} operator type(s) pullback cannot translate: "
            f"{', '.join(items)}"
        )


PREFIX = "imported_"
"""Names of the values the builders add besides Paddle's (which keep their names)."""


@contextlib.contextmanager
def _static_build(program: Any) -> Iterator[None]:
    from pullback.frontend import core, unique_name
    from pullback.frontend.framework import Program, program_guard

    class Prefixed(unique_name.UniqueNameGenerator):
        def __call__(self, key: str) -> str:
            n = self.ids[key]
            self.ids[key] += 1
            return f"{key}_{n}" if key.startswith(self.prefix) else f"{self.prefix}{key}_{n}"

    was_static = not core.in_dynamic_mode()
    core.enable_static()
    old_capture = core.set_capture(None)
    try:
        with program_guard(program, Program()), unique_name.guard(Prefixed(PREFIX)):
            yield
    finally:
        core.set_capture(old_capture)
        if not was_static:
            core.disable_static()


def translate(prog: PaddleProgram, source: str, api: str) -> tuple[Any, list[str], list[str]]:
    """The `pd` Program of `prog`, its feed names and its fetch names (the
    persistables are the Program's `pd.parameter`s, named as in the file)."""
    from pullback.dialects import pd
    from pullback.frontend.framework import Program

    check_ops(prog, source, api)
    if not prog.fetches:
        raise FileFormatError(f"{api}: {source} is a {prog.format} program without fetch ops: not an "
                              "inference model (save it with save_inference_model or jit.save)")
    program = Program()
    ctx = Ctx(prog, api, source)
    block = program.global_block()
    ir = block.ir
    claimed: set[int] = set()

    def name_new(names: Sequence[str], before: Any) -> None:
        """Give Paddle's names to the values the last translator created."""
        new_ops = set()
        op = ir.last_op
        while op is not None and op is not before:
            new_ops.add(op)
            op = op.prev_op
        for n in names:
            v = ctx.env.get(n)
            if v is None or not hasattr(v, "value") or n.startswith("%"):
                continue
            if v.value.owner in new_ops and id(v.value) not in claimed:
                pd.set_value_name(v.value, n)
                claimed.add(id(v.value))

    with _static_build(program):
        feed_names: list[str] = []
        for n in prog.feeds:
            info = prog.vars.get(n)
            if info is None:
                raise FileFormatError(f"{api}: {source}: feed '{n}' has no tensor declaration")
            feed_name = n
            if prog.format == "PIR json":
                feed_name = next((str(op.attrs.get("_feed_name")) for op in prog.ops
                                  if op.type == "pd_op.data" and op.outputs["0"][0] == n), n)
            dims = [None if d < 0 else int(d) for d in info.shape]
            op = block.append(pd.DataOp.make(feed_name, dims, info.dtype))
            ctx.env[n] = block.wrap(op.results[0])
            claimed.add(id(op.results[0]))
            feed_names.append(feed_name)
        for n in prog.parameters:
            info = prog.vars[n]
            if any(d < 0 for d in info.shape):
                raise FileFormatError(f"{api}: {source}: parameter '{n}' has a dynamic shape {info.shape}")
            op = block.append(pd.ParameterOp.make(n, info.shape, info.dtype, trainable=info.trainable))
            ctx.env[n] = block.wrap(op.results[0])
            claimed.add(id(op.results[0]))
        ltable = legacy_ops() if prog.format == "ProgramDesc" else None
        ptable = pir_ops() if prog.format != "ProgramDesc" else None
        for rec in prog.ops:
            if rec.type == "builtin.parameter":
                if rec.attrs["name"] in ctx.env:  # (not a non-persistable one, as an RNN's dropout state)
                    ctx.env[rec.outputs["0"][0]] = ctx.env[rec.attrs["name"]]
                continue
            ctx.op = rec
            before = ir.last_op
            fn = ltable[rec.type][1] if ltable is not None else ptable[rec.type]  # type: ignore[index]
            try:
                fn(ctx)
            except FileFormatError:
                raise
            except (ValueError, TypeError, KeyError, IndexError) as e:
                raise ctx.fail(f"{type(e).__name__}: {e}") from None
            name_new([n for names in rec.outputs.values() for n in names], before)
        fetch_names: list[str] = []
        for i, n in enumerate(prog.fetches):
            v = ctx.var(n)
            want = n if not n.startswith("%") else f"fetch_name_{i}"
            if want in fetch_names:
                want = f"{want}_{i}"
            if v.name != want:
                if isinstance(v.value.owner, (pd.DataOp, pd.ParameterOp)) or v.name in fetch_names:
                    v = _api().assign(v)  # a feed, a parameter or another fetch: keep its name
                pd.set_value_name(v.value, want)
            fetch_names.append(want)
    program._bump()
    return program, feed_names, fetch_names


__all__ = [
    "OpRecord", "PaddleProgram", "UnsupportedOpsError", "check_ops", "legacy_ops", "pir_ops",
    "read_pir_json", "read_program_desc", "translate",
]
