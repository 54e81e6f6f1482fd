"""Saving and loading: `paddle.save` / `paddle.load`, `paddle.static.save` / `load`,
`load_program_state` / `set_program_state`, `save_inference_model` /
`load_inference_model`.

Formats (files written by one run load in another):

* `paddle.save(obj, path)` pickles as Paddle 2.x does: a state dict (a dict of
  Tensors, e.g. `layer.state_dict()` to `.pdparams`, `opt.state_dict()` to `.pdopt`)
  becomes `{key: ndarray, ..., "StructuredToParameterName@@": {key: tensor name}}`;
  other objects (a Tensor, nested lists/tuples/dicts) are pickled with each Tensor
  stored as `(name, ndarray)`.  A `Program` is written as its `pd` IR text.
  `paddle.load` turns them back into Tensors (or arrays with `return_numpy=True`).
* Static programs: `<prefix>.pdparams` (parameters, including non-trainable ones such
  as batch-norm statistics) and `<prefix>.pdopt` (optimizer state: persistables only
  optimizer updates read) are pickled `{name: ndarray}` dicts; `<prefix>.pdmodel` is
  the program's IR text.
* Inference models: `<prefix>.pdmodel` is the forward program pruned to what the
  fetch targets need from the feeds, with `is_test` set on the ops that have it,
  written as Paddle's legacy `ProgramDesc` protobuf (`formats/exporter.py`: real
  Paddle loads it) or, with `model_format='pullback'` or for ops Paddle has no
  operator for, as `pd` IR text whose module attributes list the feed and fetch
  names; `<prefix>.pdiparams` holds its parameters in Paddle's binary combined
  format (sorted by name).

Reading is also Paddle's formats (`frontend/formats`): a `.pdmodel` in Paddle's
legacy `ProgramDesc` protobuf or a PIR `<prefix>.json`, with the binary combined
`.pdiparams`, load through `load_inference_model` and `jit.load` (translated op by
op into a `pd` Program); `paddle.load` reads Paddle's pickles and binary tensors.

Nothing is loaded that can run code: every pickle goes through
`formats.safe_pickle` (numpy arrays, dtypes and Python containers, numbers and
strings only), and a file that is empty, truncated, of another format or version,
or does not fit the model raises a `FileFormatError` (a ValueError) naming it.
"""

from __future__ import annotations

import io
import os
import pickle
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pullback.dialects import pd
from pullback.dialects.bfloat16 import host_cast
from pullback.dialects.pd.base import value_name
from pullback.frontend.formats import safe_pickle, tensor_stream
from pullback.frontend.formats.errors import FileFormatError, describe
from pullback.frontend.framework import Program, Variable, default_main_program
from pullback.runtime.scope import global_scope
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue

NAME_TABLE = "StructuredToParameterName@@"
FEED_ATTR = "pullback.feed_names"
FETCH_ATTR = "pullback.fetch_names"
_IR_MAGIC = b"builtin.module"

# ----------------------------------------------------------------------- helpers


def _is_tensor(x: Any) -> bool:
    from pullback.frontend.eager import Tensor

    return isinstance(x, Tensor)


def _open(path: Any, mode: str) -> Any:
    """A file object for a path or an in-memory buffer (BytesIO)."""
    if isinstance(path, (io.BytesIO, io.BufferedIOBase)):
        return _Unclosed(path)
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"only supports saving objects to file and `BytesIO`, but got {type(path)}")  # noqa: TRY004 - Paddle's error
    return open(path, mode)


class _Unclosed:
    """A buffer used in a `with` that must stay open afterwards."""

    def __init__(self, buf: Any) -> None:
        self.buf = buf

    def __enter__(self) -> Any:
        return self.buf

    def __exit__(self, *exc: object) -> None:
        pass


def _ensure_dir(path: Any) -> None:
    if isinstance(path, (str, os.PathLike)):
        path = os.fspath(path)
        if os.path.basename(path) == "":
            raise ValueError(
                "The input path MUST be format of dirname/filename [dirname\\filename in Windows "
                f"system], but received filename is empty string: {path!r}"
            )
        d = os.path.dirname(path)
        if d:
            os.makedirs(d, exist_ok=True)


def _check_protocol(protocol: Any) -> int:
    if not isinstance(protocol, int) or isinstance(protocol, bool):
        raise ValueError(f"The 'protocol' MUST be `int`, but received {type(protocol)}")  # noqa: TRY004 - Paddle's error
    if protocol < 2 or protocol > 4:
        raise ValueError(f"Expected 1<'protocol'<5, but received protocol={protocol}")
    return protocol


def _is_state_dict(obj: Any) -> bool:
    """A dict of Tensors (values may also be plain values or dicts of non-Tensors,
    as optimizer state dicts hold a learning-rate scheduler's state)."""
    if not isinstance(obj, dict) or not obj:
        return False
    has_tensor = False
    for v in obj.values():
        if _is_tensor(v):
            has_tensor = True
        elif isinstance(v, dict):
            if any(_is_tensor(x) for x in v.values()):
                return False
        elif isinstance(v, (list, tuple, set)):
            return False
    return has_tensor


def _encode(obj: Any) -> Any:
    """Tensors as `(name, ndarray)` tuples at any depth (Paddle's pickling)."""
    if _is_tensor(obj):
        return (obj.name, np.array(obj.numpy()))
    from pullback.frontend.nn_layers import Layer

    if isinstance(obj, Layer):
        raise ValueError("paddle do not support saving `paddle.nn.Layer` object.")  # noqa: TRY004 - Paddle's error
    if isinstance(obj, dict):
        return type(obj)((k, _encode(v)) for k, v in obj.items())
    if isinstance(obj, list):
        return [_encode(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_encode(v) for v in obj)
    if isinstance(obj, set):
        return {_encode(v) for v in obj}
    return obj


def _is_encoded_tensor(x: Any) -> bool:
    return (isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str)
            and isinstance(x[1], np.ndarray))


def _contains(obj: Any, pred: Any) -> bool:
    if pred(obj):
        return True
    if isinstance(obj, dict):
        return any(_contains(v, pred) for v in obj.values())
    if isinstance(obj, (list, tuple, set)):
        return any(_contains(v, pred) for v in obj)
    return False


def _decode(obj: Any, pred: Any, convert: Any) -> Any:
    if pred(obj):
        return convert(obj)
    if isinstance(obj, dict):
        return type(obj)((k, _decode(v, pred, convert)) for k, v in obj.items())
    if isinstance(obj, list):
        return [_decode(v, pred, convert) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_decode(v, pred, convert) for v in obj)
    return obj


def _as_tensor(arr: np.ndarray, name: str | None, return_numpy: bool) -> Any:
    if return_numpy:
        return arr
    from pullback.frontend.eager import to_tensor

    t = to_tensor(arr)
    if name:
        t.name = name
    return t


# ------------------------------------------------------------- programs as text


def program_to_text(program: Program) -> str:
    """The program's module as `pd` IR text (generic form: every op round-trips)."""
    return program.to_string(generic=True)


def program_from_text(text: str | bytes, source: Any = None, api: str = "program_from_text") -> Program:
    """A Program from `pd` IR text (as `program_to_text` or `pullback-opt` write).
    Text that does not parse or verify raises `FileFormatError` naming `source`."""
    from pullback.dialects.pd import PD, restore_name_hints
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import ParseError, VerifyException

    where = describe(source) if source is not None else "the text"
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        ctx = Context()
        ctx.load_dialect(Builtin)
        ctx.load_dialect(PD)
        module = Parser(ctx, text).parse_module()
        for op in module.walk():
            restore_name_hints(op)
        module.verify()
    except UnicodeDecodeError:
        raise FileFormatError(f"{api}: {where} is not UTF-8 text") from None
    except (ParseError, VerifyException) as e:
        lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
        # xDSL's message: `<file>:line:col`, the line, a caret, then the reason.
        reason = lines[-1] if lines else type(e).__name__
        at = f" at {lines[0].split(':', 1)[-1]}" if len(lines) > 1 and lines[0].count(":") >= 2 else ""
        raise FileFormatError(
            f"{api}: {where} is pullback IR text that does not parse or verify (written by another "
            f"version, or damaged){at}: {reason}"
        ) from None
    prog = Program()
    prog.module = module
    prog._bump()
    return prog


# -------------------------------------------------------------- paddle.save/load


def save(obj: Any, path: Any, protocol: int = 4, **configs: Any) -> None:
    """`paddle.save`: write a state dict, a Tensor, a nested structure of Tensors and
    Python values, or a Program to `path` (a file name or a BytesIO)."""
    unknown = set(configs) - {"use_binary_format", "pickle_protocol"}
    if unknown:
        raise ValueError(f"The additional config ({min(unknown)}) of `paddle.save` is not supported.")
    if configs.get("pickle_protocol") is not None:
        protocol = configs["pickle_protocol"]
    protocol = _check_protocol(protocol)
    _ensure_dir(path)
    if isinstance(obj, Program):
        with _open(path, "wb") as f:
            f.write(program_to_text(obj).encode("utf-8"))
        return
    if _is_state_dict(obj):
        saved: dict[str, Any] = {}
        names: dict[str, str] = {}
        for key, value in obj.items():
            if _is_tensor(value):
                saved[key] = np.array(value.numpy())
                names[key] = value.name
            else:
                saved[key] = value
        saved[NAME_TABLE] = names
        payload: Any = saved
    else:
        if isinstance(obj, dict) and not obj:
            warnings.warn("The input state dict is empty, no need to save.", stacklevel=2)
        payload = _encode(obj)
    with _open(path, "wb") as f:
        pickle.dump(payload, f, protocol=protocol)


def load(path: Any, **configs: Any) -> Any:
    """`paddle.load`: read what `paddle.save` (or `paddle.static.save`) wrote, or
    what Paddle's own `paddle.save` wrote (its pickles, its binary tensors, its
    program files), or the state dict of an inference model given its path prefix.
    Arrays come back as Tensors unless `return_numpy=True`; `keep_name_table=True`
    keeps a state dict's `StructuredToParameterName@@` entry.  Pickles are read
    with `formats.safe_pickle`: a file naming anything but data is refused."""
    api = "paddle.load"
    unknown = set(configs) - {"model_filename", "params_filename", "keep_name_table", "return_numpy"}
    if unknown:
        raise ValueError(f"The additional config ({min(unknown)}) of `paddle.load` is not supported.")
    return_numpy = bool(configs.get("return_numpy", False))
    if isinstance(path, (str, os.PathLike)) and not os.path.isfile(path):
        path = os.fspath(path)
        model = _model_file(path, configs.get("model_filename"))
        if model is not None:
            _, _, _, params = read_inference_files(model, _params_file(path, configs), api)
            return {k: _as_tensor(v, k, return_numpy) for k, v in params.items()}
        hint = ""
        if os.path.exists(path + ".pdparams") or os.path.exists(path + ".pdopt"):
            hint = (" please specify the full file name, not just the file name prefix. For "
                    "example, it should be written as `paddle.load('model.pdparams')` instead of "
                    "`paddle.load('model')`.")
        raise ValueError(f"The ``path`` ({path}) to load model not exists.{hint}")
    with _open(path, "rb") as f:
        data = f.read()
    kind = sniff(data)
    if kind == "empty":
        raise FileFormatError(f"{api}: {describe(path)} is empty (0 bytes)")
    if kind == "pd_ir":
        return program_from_text(data, path, api)
    if kind in ("program_desc", "pir_json"):
        return _paddle_program(data, kind, path, api)[0]
    if kind == "tensor":
        try:
            arr, end = tensor_stream.read_tensor(data)
        except tensor_stream.TensorStreamError as e:
            raise FileFormatError(f"{api}: {describe(path)} is a damaged Paddle tensor file: {e}") from None
        if end != len(data):
            raise FileFormatError(f"{api}: {describe(path)} holds more than one tensor ({len(data) - end} bytes "
                                  "follow the first): a combined parameter file needs its model "
                                  "(paddle.static.load_inference_model or paddle.jit.load)")
        return _as_tensor(arr, None, return_numpy)
    if kind != "pickle":
        try:
            result = safe_pickle.safe_load(data, path, api)
        except FileFormatError:
            raise FileFormatError(
                f"{api}: can not parse the file {describe(path)}: it is not a pickle, a Paddle tensor, "
                f"a Paddle program or pullback IR text (it starts with {bytes(data[:8])!r})"
            ) from None
    else:
        result = safe_pickle.safe_load(data, path, api)
    if isinstance(result, dict):
        result = _pack_big_params(result)
    if isinstance(result, dict) and NAME_TABLE in result:
        for key, name in result[NAME_TABLE].items():
            if isinstance(result.get(key), np.ndarray):
                result[key] = _as_tensor(result[key], name, return_numpy)
        if not configs.get("keep_name_table"):
            del result[NAME_TABLE]
        return result
    if _contains(result, _is_encoded_tensor):
        return _decode(result, _is_encoded_tensor, lambda t: _as_tensor(t[1], t[0], return_numpy))
    return _decode(result, lambda x: isinstance(x, np.ndarray), lambda a: _as_tensor(a, None, return_numpy))


BIG_PARAM_INFO = "UnpackBigParamInfor@@"  # (Paddle's spelling)


def _pack_big_params(obj: dict[Any, Any]) -> dict[Any, Any]:
    """Paddle's protocol-2/3 pickles split arrays over 4 GB into slices listed under
    `UnpackBigParamInfor@@`: join them back (Paddle's `_pack_loaded_dict`)."""
    info = obj.get(BIG_PARAM_INFO)
    if not isinstance(info, dict):
        return obj
    for key, value in info.items():
        slices = [obj[part] for part in value["slices"]]
        obj[key] = np.concatenate(slices).reshape(value["OriginShape"])
        for part in value["slices"]:
            obj.pop(part, None)
    del obj[BIG_PARAM_INFO]
    return obj


def sniff(data: bytes) -> str:
    """What a file holds, from its first bytes: 'empty', 'pickle' (protocol 2-5),
    'tensor' (Paddle's binary tensor serialization), 'pd_ir' (pullback IR text),
    'pir_json', 'program_desc' (a legacy protobuf program) or 'unknown'."""
    if not data:
        return "empty"
    if safe_pickle.looks_like_pickle(data):
        return "pickle"
    if tensor_stream.looks_like_tensor(data):
        return "tensor"
    head = data[:4096].lstrip()
    if head.startswith(_IR_MAGIC) or head.startswith(b'"builtin.module"'):
        return "pd_ir"
    if head.startswith(b"{") and b'"base_code"' in data[:4096]:
        return "pir_json"
    if data[:1] == b"\x0a":  # field 1 (blocks), length-delimited: a ProgramDesc (or a damaged one)
        return "program_desc"
    return "unknown"


def _paddle_program(data: bytes, kind: str, source: Any, api: str) -> tuple[Program, list[str], list[str], list[str]]:
    """A Paddle program file translated: Program, feed names, fetch names, and the
    names of its persistables in the order a combined `.pdiparams` stores them."""
    import json

    from pullback.frontend.formats import importer

    where = describe(source)
    if kind == "pir_json":
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise FileFormatError(f"{api}: {where} is not valid JSON: truncated or damaged ({e})") from None
        prog = importer.read_pir_json(doc, where, api)
    else:
        prog = importer.read_program_desc(data, where, api)
    program, feeds, fetches = importer.translate(prog, where, api)
    program.module.attributes[FEED_ATTR] = ArrayAttr([StringAttr(n) for n in feeds])
    program.module.attributes[FETCH_ATTR] = ArrayAttr([StringAttr(n) for n in fetches])
    _test_mode(program.module)
    return program, feeds, fetches, sorted(prog.parameters)


def _model_file(prefix: str, model_filename: Any = None) -> str | None:
    """The model file of an inference model `prefix`: `<prefix>.pdmodel` (pullback
    IR text or a Paddle ProgramDesc) or `<prefix>.json` (Paddle 3's PIR program),
    whichever exists; with `model_filename`, that file itself, or as Paddle reads
    it, `<prefix>/<model_filename>[.pdmodel]` (`prefix` a directory)."""
    if model_filename:
        name = os.fspath(model_filename)
        for candidate in (name, os.path.join(prefix, name + ".pdmodel"), os.path.join(prefix, name)):
            if os.path.isfile(candidate):
                return candidate
        return None
    for suffix in (".pdmodel", ".json"):
        if os.path.isfile(prefix + suffix):
            return prefix + suffix
    return None


def _params_file(prefix: str, kwargs: Mapping[str, Any], suffix: str = ".pdiparams") -> str:
    """The parameter file of an inference model `prefix`: `<prefix>.pdiparams`;
    with `params_filename`, that file itself or `<prefix>/<params_filename>
    [.pdiparams]`; with only a `model_filename` (Paddle 1.x), the directory
    `prefix`, holding one file per parameter."""
    name = kwargs.get("params_filename")
    if name:
        name = os.fspath(name)
        for candidate in (name, os.path.join(prefix, name + ".pdiparams"), os.path.join(prefix, name)):
            if os.path.isfile(candidate):
                return candidate
        return name
    if kwargs.get("model_filename") and os.path.isdir(prefix):
        return prefix
    return prefix + suffix


def _read_separate_params(directory: str, names: Sequence[str], api: str) -> dict[str, np.ndarray]:
    """Paddle 1.x's uncombined parameters: one tensor file per variable, named
    after it, in `directory`."""
    out: dict[str, np.ndarray] = {}
    for name in names:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            raise FileFormatError(f"{api}: there is no parameter file {describe(path)} for the model's "
                                  f"parameter '{name}' (and no combined parameter file)")
        with open(path, "rb") as f:
            raw = f.read()
        try:
            arr, end = tensor_stream.read_tensor(raw)
        except tensor_stream.TensorStreamError as e:
            raise FileFormatError(f"{api}: {describe(path)} is not a Paddle tensor file: {e}") from None
        if end != len(raw):
            raise FileFormatError(f"{api}: {describe(path)} holds more than one tensor")
        out[name] = arr
    return out


def _read_params(params_file: str | None, order: Sequence[str], model_file: str, api: str
                 ) -> dict[str, np.ndarray]:
    """The parameters `order` names (sorted) from a combined tensor stream, a
    directory of per-parameter files or a pickled dict (earlier pullback)."""
    if params_file is not None and os.path.isdir(params_file):
        return _read_separate_params(params_file, order, api)
    if params_file is None or not os.path.isfile(params_file):
        raise FileFormatError(f"{api}: the model {describe(model_file)} has {len(order)} parameters, and "
                              f"there is no parameter file {describe(params_file or '')}")
    with open(params_file, "rb") as f:
        raw = f.read()
    kind = sniff(raw)
    if kind == "tensor":
        try:
            arrays = tensor_stream.read_tensors(raw, len(order))
        except tensor_stream.TensorStreamError as e:
            raise FileFormatError(f"{api}: {describe(params_file)} does not fit the model "
                                  f"{describe(model_file)}: {e}") from None
        return dict(zip(order, arrays))
    if kind == "pickle":
        loaded = safe_pickle.safe_load(raw, params_file, api)
        if not isinstance(loaded, dict):
            raise FileFormatError(f"{api}: {describe(params_file)} is not a parameter file (a pickled "
                                  f"{type(loaded).__name__}, not a dict)")
        params = {str(k): np.asarray(v) for k, v in loaded.items()}
        missing = [n for n in order if n not in params]
        if missing:
            raise FileFormatError(f"{api}: {describe(params_file)} lacks parameters {missing} of the model "
                                  f"{describe(model_file)}: it belongs to another model")
        return params
    what = "is empty (0 bytes)" if kind == "empty" else f"is not a parameter file (it starts with {raw[:8]!r})"
    raise FileFormatError(f"{api}: {describe(params_file)} {what}")


def read_inference_files(model_file: str, params_file: str | None, api: str
                         ) -> tuple[Program, list[str], list[str], dict[str, np.ndarray]]:
    """An inference model from disk: `(program, feed names, fetch names, {parameter:
    array})`.  The model is pullback IR text, a Paddle `ProgramDesc` or a PIR json
    program; the parameters are Paddle's combined binary stream (sorted by name),
    a directory of one tensor file per parameter (Paddle 1.x), or, for pullback IR
    models of earlier versions, a pickled dict.  Every mismatch between the two
    files raises `FileFormatError` naming them."""
    with open(model_file, "rb") as f:
        data = f.read()
    kind = sniff(data)
    if kind == "pd_ir":
        program = program_from_text(data, model_file, api)
        attrs = program.module.attributes
        if FEED_ATTR not in attrs or FETCH_ATTR not in attrs:
            raise FileFormatError(f"{api}: {describe(model_file)} is not an inference model (no feed/fetch names)")
        feeds = [a.data for a in attrs[FEED_ATTR].data]  # type: ignore[attr-defined]
        fetches = [a.data for a in attrs[FETCH_ATTR].data]  # type: ignore[attr-defined]
        order = sorted(persistable_names(program))
    elif kind in ("program_desc", "pir_json"):
        program, feeds, fetches, order = _paddle_program(data, kind, model_file, api)
    else:
        what = {"empty": "is empty (0 bytes)", "pickle": "is a pickle, not a model",
                "tensor": "is a tensor file, not a model"}.get(kind, f"is not a model file (it starts with {data[:8]!r})")
        raise FileFormatError(f"{api}: {describe(model_file)} {what}")
    params = _read_params(params_file, order, model_file, api) if order else {}
    shapes = _param_shapes(program)
    for name in order:
        want = shapes.get(name)
        if want is not None and list(params[name].shape) != want[0]:
            raise FileFormatError(
                f"{api}: {describe(params_file)} does not fit the model {describe(model_file)}: parameter "
                f"'{name}' has shape {list(params[name].shape)} in the file and {want[0]} in the model "
                "(the two files belong to different models)"
            )
    return program, feeds, fetches, params


# ------------------------------------------------------------------ static side


def _optimizer_state_names(program: Program) -> set[str]:
    """Persistables that only optimizer updates read, and not as the parameter they
    update: accumulators such as moments and velocities (Paddle's `.pdopt`)."""
    opt_ops = tuple(pd.OPTIMIZER_OPS)
    out = set()
    for op in program.module.body.block.ops:
        if not isinstance(op, pd.ParameterOp):
            continue
        uses = list(op.out.uses)
        if uses and all(isinstance(u.operation, opt_ops) and u.index != 0 for u in uses):
            out.add(op.var_name.data)
    return out


def persistable_names(program: Program) -> list[str]:
    """Every persistable (`pd.parameter`) of the program, in order, once."""
    seen: dict[str, None] = {}
    for op in program.module.body.block.ops:
        if isinstance(op, pd.ParameterOp):
            seen.setdefault(op.var_name.data, None)
    return list(seen)


def _scope_value(scope: Mapping[str, np.ndarray], name: str, api: str) -> np.ndarray:
    if name not in scope:
        raise RuntimeError(
            f"{api}: variable '{name}' has no value in the scope: run the startup program first"
        )
    return np.array(scope[name])


def _require_program(api: str, program: Any) -> Program:
    if not isinstance(program, Program):
        raise TypeError(f"{api}: program must be a Program, got {type(program).__name__}")
    return program


def static_save(program: Program, model_path: str, protocol: int = 4) -> None:
    """`paddle.static.save`: the program's parameters to `<model_path>.pdparams`, its
    optimizer state to `<model_path>.pdopt` and the program to `<model_path>.pdmodel`."""
    api = "paddle.static.save"
    program = _require_program(api, program)
    protocol = _check_protocol(protocol)
    base = os.path.basename(model_path)
    if base == "":
        raise ValueError("The input model_path MUST be format of dirname/filename [dirname\\filename in "
                         f"Windows system], but received model_path is empty string: {model_path!r}")
    _ensure_dir(model_path)
    scope = global_scope()
    opt = _optimizer_state_names(program)
    names = persistable_names(program)
    params = {n: _scope_value(scope, n, api) for n in names if n not in opt}
    opt_state = {n: _scope_value(scope, n, api) for n in names if n in opt}
    with open(model_path + ".pdparams", "wb") as f:
        pickle.dump(params, f, protocol=protocol)
    with open(model_path + ".pdopt", "wb") as f:
        pickle.dump(opt_state, f, protocol=protocol)
    with open(model_path + ".pdmodel", "wb") as f:
        f.write(program_to_text(program).encode("utf-8"))


def _read_state(model_path: str, api: str) -> dict[str, np.ndarray]:
    """The `{name: array}` of `<model_path>.pdparams` and `.pdopt` (either may be
    absent; one must exist).  `model_path` may name the `.pdparams` file itself."""
    for suffix in (".pdparams", ".pdopt", ".pdmodel"):
        model_path = model_path.removesuffix(suffix)
    state: dict[str, np.ndarray] = {}
    found = False
    for suffix in (".pdparams", ".pdopt"):
        p = model_path + suffix
        if os.path.exists(p):
            found = True
            with open(p, "rb") as f:
                data = safe_pickle.safe_load(f.read(), p, api)
            if not isinstance(data, dict):
                raise FileFormatError(f"{api}: {describe(p)} is not a state file (a pickled "
                                      f"{type(data).__name__}, not a dict of arrays)")
            data = _pack_big_params(data)
            data.pop(NAME_TABLE, None)
            state.update({k: np.asarray(v.numpy() if _is_tensor(v) else v) for k, v in data.items()})
    if not found:
        raise ValueError(f"{api}: Parameter file [{model_path}.pdparams] not exists")
    return state


def static_load(program: Program, model_path: str, executor: Any = None,
                var_list: Sequence[Any] | None = None) -> None:
    """`paddle.static.load`: set the program's persistables in the scope from the
    files `paddle.static.save` wrote; a missing variable or a shape mismatch raises."""
    api = "paddle.static.load"
    program = _require_program(api, program)
    state = _read_state(model_path, api)
    wanted = persistable_names(program) if var_list is None else [
        v if isinstance(v, str) else v.name for v in var_list]
    _set_state(program, state, wanted, api, strict=True)


def load_program_state(model_path: str, var_list: Sequence[Any] | None = None) -> dict[str, np.ndarray]:
    """`paddle.static.load_program_state`: `{name: ndarray}` from the saved files
    (restricted to `var_list` when given)."""
    api = "paddle.static.load_program_state"
    state = _read_state(model_path, api)
    if var_list is not None:
        names = [v if isinstance(v, str) else v.name for v in var_list]
        missing = [n for n in names if n not in state]
        if missing:
            raise ValueError(f"{api}: variables {missing} are not in the saved state")
        state = {n: state[n] for n in names}
    return state


def set_program_state(program: Program, state_dict: Mapping[str, Any]) -> None:
    """`paddle.static.set_program_state`: store the values of `state_dict` for the
    program's persistables in the scope (unused entries warn; shapes must match)."""
    api = "paddle.static.set_program_state"
    program = _require_program(api, program)
    _set_state(program, dict(state_dict), persistable_names(program), api, strict=False)


def _param_shapes(program: Program) -> dict[str, tuple[list[int], str]]:
    out = {}
    for op in program.module.body.block.ops:
        if isinstance(op, pd.ParameterOp):
            t = op.out.type
            out[op.var_name.data] = (list(pd.shape_of(t)), pd.dtype_name(pd.elem_of(t)))
    return out


def _set_state(program: Program, state: dict[str, Any], names: Sequence[str], api: str,
               strict: bool) -> None:
    shapes = _param_shapes(program)
    scope = global_scope()
    used = set()
    for name in names:
        if name not in state:
            if strict:
                raise RuntimeError(f"{api}: variable '{name}' is not in the saved state")
            continue
        value = state[name]
        arr = np.asarray(value.numpy() if _is_tensor(value) else value)
        if name in shapes:
            shape, dtype = shapes[name]
            if list(arr.shape) != shape:
                raise RuntimeError(
                    f"{api}: variable '{name}' has shape {shape} in the program, but the "
                    f"saved value has shape {list(arr.shape)}"
                )
            arr = host_cast(arr, pd.DTYPE_BY_NAME[f"{dtype}"].numpy)  # (bfloat16: uint16 bits)
        scope[name] = np.array(arr)
        used.add(name)
    unused = [k for k in state if k not in used]
    if unused and not strict:
        warnings.warn(f"{api}: these variables are not used in the program: {unused}", stacklevel=3)


# ----------------------------------------------------------------- inference


def _test_mode(module: ModuleOp) -> None:
    """Inference behaviour: `is_test` set on every op that declares it."""
    for op in module.walk():
        if isinstance(op, pd.PdOp) and "is_test" in type(op).prop_specs():
            op.properties["is_test"] = pd.bool_attr(True)


def _values(program: Program, items: Any, api: str, what: str) -> list[SSAValue]:
    items = list(items) if isinstance(items, (list, tuple)) else [items]
    if not items:
        raise ValueError(f"{api}: {what} must not be empty")
    out = []
    for v in items:
        if not isinstance(v, Variable):
            raise TypeError(f"{api}: {what} must be Variables, got {type(v).__name__}")
        value = v.value if v.block.program is program else program._lookup(v.name)
        if value is None:
            raise ValueError(f"{api}: variable '{v.name}' is not in the program")
        out.append(value)
    return out


def inference_program(program: Program, feed_vars: Any, fetch_vars: Any,
                      api: str = "inference") -> Program:
    """The forward part of `program` that `fetch_vars` need from `feed_vars`, in test
    mode, as a new Program (feeds first, fetch names recorded on the module)."""
    feeds = _values(program, feed_vars, api, "feed_vars")
    fetches = _values(program, fetch_vars, api, "fetch_vars")
    for v in feeds:
        if not isinstance(v.owner, pd.DataOp):
            raise ValueError(f"{api}: feed variable '{value_name(v)}' is not a data variable")  # noqa: TRY004
    needed: set[Operation] = set()
    stack = [v.owner for v in fetches if isinstance(v.owner, Operation)]
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        if isinstance(op, (pd.BackwardOp, pd.FetchOp)) or op.parent_block() is not program.module.body.block:
            raise ValueError(f"{api}: fetch targets must be forward values, not '{op.name}' results")
        needed.add(op)
        stack.extend(o.owner for o in op.operands if isinstance(o.owner, Operation))
    fed = {v.owner for v in feeds}
    unfed = [op.var_name.data for op in needed if isinstance(op, pd.DataOp) and op not in fed]
    if unfed:
        raise ValueError(f"{api}: the fetch targets need data variables {unfed} that are not in feed_vars")
    mapping: dict[SSAValue, SSAValue] = {}
    kept = [op.clone(value_mapper=mapping) for op in program.module.body.block.ops if op in needed]
    module = ModuleOp(kept)
    fetch_names = []
    for i, v in enumerate(fetches):
        name = value_name(v) or f"fetch_{i}"
        if value_name(v) is None:
            pd.set_value_name(mapping[v], name)
        fetch_names.append(name)
    module.attributes[FEED_ATTR] = ArrayAttr([StringAttr(value_name(v) or "") for v in feeds])
    module.attributes[FETCH_ATTR] = ArrayAttr([StringAttr(n) for n in fetch_names])
    _test_mode(module)
    out = Program()
    out.module = module
    out.random_seed = program.random_seed
    out._bump()
    return out


def normalize_program(program: Program, feed_vars: Any, fetch_vars: Any, **kwargs: Any) -> Program:
    """`paddle.static.normalize_program`: the pruned inference program (see
    `inference_program`)."""
    return inference_program(program, feed_vars, fetch_vars, "paddle.static.normalize_program")


MODEL_FORMATS = ("paddle", "pullback")


def write_inference_files(path_prefix: str, infer: Program, params: Mapping[str, np.ndarray], api: str,
                          model_format: Any = None) -> str:
    """Write an inference Program (as `inference_program` makes it) and its
    parameters: `<prefix>.pdmodel` as Paddle's legacy ProgramDesc
    (`model_format='paddle'`, the default) and `<prefix>.json` as Paddle 3's PIR
    program (what Paddle 3 reads by default; skipped with a warning for ops it has
    no form for here), or `<prefix>.pdmodel` as pullback's IR text
    (`'pullback'`); `<prefix>.pdiparams` as Paddle's combined tensor stream
    (sorted by name).  A program with ops Paddle has no operator for is written as
    IR text with a warning (an error if 'paddle' was asked for explicitly).
    Returns the format written."""
    from pullback.frontend.formats.exporter import NotExportable, export_program

    fmt = "paddle" if model_format is None else model_format
    if fmt not in MODEL_FORMATS:
        raise ValueError(f"{api}: model_format must be one of {MODEL_FORMATS}, got {model_format!r}")
    attrs = infer.module.attributes
    feeds = [a.data for a in attrs[FEED_ATTR].data]  # type: ignore[attr-defined]
    fetches = [a.data for a in attrs[FETCH_ATTR].data]  # type: ignore[attr-defined]
    model: bytes | None = None
    if fmt == "paddle":
        try:
            model = export_program(infer, feeds, fetches)
        except NotExportable as e:
            if model_format == "paddle":
                raise ValueError(f"{api}: the program cannot be written in Paddle's format: {e} have no "
                                 "Paddle operator (model_format='pullback' writes pullback IR text)") from None
            warnings.warn(f"{api}: {e} have no Paddle operator: '{path_prefix}.pdmodel' is written as pullback "
                          "IR text, which only pullback reads", stacklevel=3)
            fmt = "pullback"
    pir: bytes | None = None
    if model is None:
        model = program_to_text(infer).encode("utf-8")
    else:
        from pullback.frontend.formats.pir_writer import export_pir_json

        try:
            pir = export_pir_json(infer, feeds, fetches)
        except NotExportable as e:
            warnings.warn(f"{api}: {e} have no PIR form here: '{path_prefix}.json' (what Paddle 3 reads by "
                          f"default) is not written; Paddle reads '{path_prefix}.pdmodel' with "
                          "FLAGS_enable_pir_api=0", stacklevel=3)
    _ensure_dir(path_prefix)
    with open(path_prefix + ".pdmodel", "wb") as f:
        f.write(model)
    if pir is not None:
        with open(path_prefix + ".json", "wb") as f:
            f.write(pir)
    elif os.path.exists(path_prefix + ".json"):
        os.remove(path_prefix + ".json")  # a stale program of an earlier save
    with open(path_prefix + ".pdiparams", "wb") as f:
        f.write(tensor_stream.write_tensors([np.asarray(params[n]) for n in sorted(params)]))
    return fmt


def save_inference_model(path_prefix: str, feed_vars: Any, fetch_vars: Any, executor: Any,
                         program: Program | None = None, **kwargs: Any) -> None:
    """`paddle.static.save_inference_model`: the pruned test-mode forward program to
    `<path_prefix>.pdmodel` (Paddle's ProgramDesc, which real Paddle loads; or
    pullback IR text with `model_format='pullback'`) and its parameters to
    `<path_prefix>.pdiparams` (Paddle's binary format)."""
    api = "paddle.static.save_inference_model"
    if not isinstance(path_prefix, str) or not path_prefix or os.path.basename(path_prefix) == "":
        raise ValueError(f"{api}: path_prefix must be 'dirname/filename_prefix', got {path_prefix!r}")
    program = default_main_program() if program is None else _require_program(api, program)
    infer = inference_program(program, feed_vars, fetch_vars, api)
    scope = global_scope()
    params = {n: _scope_value(scope, n, api) for n in persistable_names(infer)}
    write_inference_files(path_prefix, infer, params, api, kwargs.get("model_format"))


def load_inference_model(path_prefix: str, executor: Any, **kwargs: Any) -> list[Any]:
    """`paddle.static.load_inference_model`: `[program, feed_target_names,
    fetch_targets]`, with the parameters stored in the global scope.  Reads
    pullback's files and Paddle's (`<prefix>.pdmodel` as a legacy ProgramDesc, or
    `<prefix>.json` as a PIR program, with the binary `<prefix>.pdiparams`)."""
    api = "paddle.static.load_inference_model"
    model_file = _model_file(path_prefix, kwargs.get("model_filename"))
    params_file = _params_file(path_prefix, kwargs)
    if model_file is None:
        wanted = kwargs.get("model_filename") or f"{path_prefix}.pdmodel' or '{path_prefix}.json"
        raise ValueError(f"{api}: there is no model file '{wanted}'")
    program, feed_names, fetch_names, params = read_inference_files(model_file, params_file, api)
    _set_state(program, params, persistable_names(program), api, strict=True)
    block = program.global_block()
    fetch_targets = [block.var(n) for n in fetch_names]
    return [program, feed_names, fetch_targets]


__all__ = [
    "load",
    "load_inference_model",
    "load_program_state",
    "normalize_program",
    "program_from_text",
    "program_to_text",
    "read_inference_files",
    "write_inference_files",
    "save",
    "save_inference_model",
    "set_program_state",
    "sniff",
    "static_load",
    "static_save",
]
