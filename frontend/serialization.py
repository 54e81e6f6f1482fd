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
  as `pd` IR text whose module attributes list the feed and fetch names;
  `<prefix>.pdiparams` holds its parameters as above.

These are pullback's formats: Paddle's own protobuf `.pdmodel` and binary tensor
files are not read or written.
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


def program_from_text(text: str | bytes) -> Program:
    """A Program from `pd` IR text (as `program_to_text` or `pullback-opt` write)."""
    from pullback.dialects.pd import PD, restore_name_hints
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser

    if isinstance(text, bytes):
        text = text.decode("utf-8")
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(PD)
    module = Parser(ctx, text).parse_module()
    for op in module.walk():
        restore_name_hints(op)
    module.verify()
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
    """`paddle.load`: read what `paddle.save` (or `paddle.static.save`) wrote.
    Arrays come back as Tensors unless `return_numpy=True`; `keep_name_table=True`
    keeps a state dict's `StructuredToParameterName@@` entry."""
    unknown = set(configs) - {"model_filename", "params_filename", "keep_name_table", "return_numpy"}
    if unknown:
        raise ValueError(f"The additional config ({min(unknown)}) of `paddle.load` is not supported.")
    return_numpy = bool(configs.get("return_numpy", False))
    if isinstance(path, (str, os.PathLike)) and not os.path.isfile(path):
        path = os.fspath(path)
        hint = ""
        if os.path.exists(path + ".pdparams") or os.path.exists(path + ".pdopt"):
            hint = (" please specify the full file name, not just the file name prefix. For "
                    "example, it should be written as `paddle.load('model.pdparams')` instead of "
                    "`paddle.load('model')`.")
        raise ValueError(f"The ``path`` ({path}) to load model not exists.{hint}")
    with _open(path, "rb") as f:
        data = f.read()
    if data.lstrip().startswith(_IR_MAGIC) or data.lstrip().startswith(b'"builtin.module"'):
        return program_from_text(data)
    try:
        result = pickle.loads(data, encoding="latin1")
    except Exception as e:  # noqa: BLE001 - any unpickling failure means "not ours"
        raise ValueError(f"`paddle.load` can not parse the file:{path} ({e})") from None
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
                data = pickle.load(f, encoding="latin1")
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


def save_inference_model(path_prefix: str, feed_vars: Any, fetch_vars: Any, executor: Any,
                         program: Program | None = None, **kwargs: Any) -> None:
    """`paddle.static.save_inference_model`: the pruned test-mode forward program to
    `<path_prefix>.pdmodel` (IR text) and its parameters to `<path_prefix>.pdiparams`."""
    api = "paddle.static.save_inference_model"
    if not isinstance(path_prefix, str) or not path_prefix or os.path.basename(path_prefix) == "":
        raise ValueError(f"{api}: path_prefix must be 'dirname/filename_prefix', got {path_prefix!r}")
    program = default_main_program() if program is None else _require_program(api, program)
    infer = inference_program(program, feed_vars, fetch_vars, api)
    _ensure_dir(path_prefix)
    scope = global_scope()
    params = {n: _scope_value(scope, n, api) for n in persistable_names(infer)}
    with open(path_prefix + ".pdmodel", "wb") as f:
        f.write(program_to_text(infer).encode("utf-8"))
    with open(path_prefix + ".pdiparams", "wb") as f:
        pickle.dump(params, f, protocol=4)


def load_inference_model(path_prefix: str, executor: Any, **kwargs: Any) -> list[Any]:
    """`paddle.static.load_inference_model`: `[program, feed_target_names,
    fetch_targets]`, with the parameters stored in the global scope."""
    api = "paddle.static.load_inference_model"
    model_file = kwargs.get("model_filename") or path_prefix + ".pdmodel"
    params_file = kwargs.get("params_filename") or path_prefix + ".pdiparams"
    if not os.path.exists(model_file):
        raise ValueError(f"{api}: there is no model file '{model_file}'")
    with open(model_file, "rb") as f:
        program = program_from_text(f.read())
    attrs = program.module.attributes
    if FEED_ATTR not in attrs or FETCH_ATTR not in attrs:
        raise ValueError(f"{api}: '{model_file}' is not an inference model (no feed/fetch names)")
    feed_names = [a.data for a in attrs[FEED_ATTR].data]  # type: ignore[attr-defined]
    fetch_names = [a.data for a in attrs[FETCH_ATTR].data]  # type: ignore[attr-defined]
    if persistable_names(program):
        if not os.path.exists(params_file):
            raise ValueError(f"{api}: there is no parameter file '{params_file}'")
        with open(params_file, "rb") as f:
            params = pickle.load(f)
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
    "save",
    "save_inference_model",
    "set_program_state",
    "static_load",
    "static_save",
]
