"""Paddle's legacy program file: a `ProgramDesc` message of `framework.proto`
(what `.pdmodel` files and `__model__` hold, and what Paddle 3.3.1 still writes
with `FLAGS_enable_pir_api=0`).

The schemas below are `framework.proto`'s field numbers (Paddle 3.3.1); messages
decode to dicts (`wire.decode`).  `VarType.Type` numbers and `AttrType` numbers
are Paddle's enums.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pullback.frontend.formats import wire
from pullback.frontend.formats.wire import Schema

# ------------------------------------------------------------------- enums

VAR_TYPE_DTYPES: dict[int, str] = {
    0: "bool", 1: "int16", 2: "int32", 3: "int64", 4: "float16", 5: "float32", 6: "float64",
    20: "uint8", 21: "int8", 22: "bfloat16", 23: "complex64", 24: "complex128",
}
"""`VarType.Type` data types -> Paddle dtype names."""
DTYPE_VAR_TYPES: dict[str, int] = {v: k for k, v in VAR_TYPE_DTYPES.items()}

DENSE_TENSOR = 7
FEED_MINIBATCH = 9
FETCH_LIST = 10

ATTR_INT, ATTR_FLOAT, ATTR_STRING, ATTR_INTS, ATTR_FLOATS, ATTR_STRINGS = 0, 1, 2, 3, 4, 5
ATTR_BOOLEAN, ATTR_BOOLEANS, ATTR_BLOCK, ATTR_LONG, ATTR_BLOCKS, ATTR_LONGS = 6, 7, 8, 9, 10, 11
ATTR_FLOAT64S, ATTR_VAR, ATTR_VARS, ATTR_FLOAT64, ATTR_SCALAR, ATTR_SCALARS = 12, 13, 14, 15, 16, 17

# ----------------------------------------------------------------- schemas

VERSION: Schema = {1: ("version", "int64", False)}
COMPLEX: Schema = {1: ("r", "double", False), 2: ("i", "double", False)}
SCALAR: Schema = {
    1: ("type", "enum", False), 2: ("b", "bool", False), 3: ("i", "int64", False),
    4: ("r", "double", False), 5: ("c", COMPLEX, False),
}
OP_ATTR: Schema = {
    1: ("name", "string", False), 2: ("type", "enum", False), 3: ("i", "int32", False),
    4: ("f", "float", False), 5: ("s", "string", False), 6: ("ints", "int32", True),
    7: ("floats", "float", True), 8: ("strings", "string", True), 10: ("b", "bool", False),
    11: ("bools", "bool", True), 12: ("block_idx", "int32", False), 13: ("l", "int64", False),
    14: ("blocks_idx", "int32", True), 15: ("longs", "int64", True),
    16: ("float64s", "double", True), 17: ("var_name", "string", False),
    18: ("vars_name", "string", True), 19: ("float64", "double", False),
    20: ("scalar", SCALAR, False), 21: ("scalars", SCALAR, True),
}
OP_VAR: Schema = {1: ("parameter", "string", False), 2: ("arguments", "string", True)}
OP_DESC: Schema = {
    3: ("type", "string", False), 1: ("inputs", OP_VAR, True), 2: ("outputs", OP_VAR, True),
    4: ("attrs", OP_ATTR, True), 5: ("is_target", "bool", False),
}
TENSOR_DESC: Schema = {1: ("data_type", "enum", False), 2: ("dims", "int64", True)}
DENSE_TENSOR_DESC: Schema = {1: ("tensor", TENSOR_DESC, False), 2: ("legacy_lod_level", "int32", False)}
VAR_TYPE: Schema = {
    1: ("type", "enum", False), 2: ("selected_rows", TENSOR_DESC, False),
    3: ("dense_tensor", DENSE_TENSOR_DESC, False), 4: ("tensor_array", DENSE_TENSOR_DESC, False),
    8: ("string", TENSOR_DESC, False), 9: ("strings", TENSOR_DESC, False),
}
VAR_ATTR: Schema = {
    1: ("name", "string", False), 2: ("type", "enum", False), 3: ("i", "int32", False),
    4: ("s", "string", False), 5: ("ints", "int32", True),
}
VAR_DESC: Schema = {
    1: ("name", "string", False), 2: ("type", VAR_TYPE, False), 3: ("persistable", "bool", False),
    4: ("need_check_feed", "bool", False), 5: ("is_parameter", "bool", False),
    6: ("stop_gradient", "bool", False), 7: ("attrs", VAR_ATTR, True),
}
BLOCK_DESC: Schema = {
    1: ("idx", "int32", False), 2: ("parent_idx", "int32", False), 3: ("vars", VAR_DESC, True),
    4: ("ops", OP_DESC, True), 5: ("forward_block_idx", "int32", False),
}
OP_VERSION: Schema = {1: ("version", "int32", False)}
OP_VERSION_PAIR: Schema = {1: ("op_name", "string", False), 2: ("op_version", OP_VERSION, False)}
OP_VERSION_MAP: Schema = {1: ("pair", OP_VERSION_PAIR, True)}
PROGRAM_DESC: Schema = {
    1: ("blocks", BLOCK_DESC, True), 4: ("version", VERSION, False),
    5: ("op_version_map", OP_VERSION_MAP, False),
}


def parse_program(data: bytes) -> dict[str, Any]:
    """A `ProgramDesc` from bytes; `wire.WireError` if they are not one (no blocks,
    an op without a type, a variable without a name)."""
    prog = wire.decode(data, PROGRAM_DESC)
    blocks = prog.get("blocks", [])
    if not blocks:
        raise wire.WireError("no blocks")
    for block in blocks:
        if "idx" not in block:
            raise wire.WireError("a block without an index")
        for op in block.get("ops", []):
            if not op.get("type"):
                raise wire.WireError("an op without a type")
        for var in block.get("vars", []):
            if not var.get("name") or "type" not in var:
                raise wire.WireError("a variable without a name or type")
    return prog


def serialize_program(prog: dict[str, Any]) -> bytes:
    """`parse_program`'s inverse."""
    return wire.encode(prog, PROGRAM_DESC)


def attr_value(attr: dict[str, Any]) -> Any:
    """The Python value of an `OpDesc.Attr` (lists for the plural types)."""
    t = attr.get("type", 0)
    if t == ATTR_INT:
        return attr.get("i", 0)
    if t == ATTR_FLOAT:
        return attr.get("f", 0.0)
    if t == ATTR_STRING:
        return attr.get("s", "")
    if t == ATTR_INTS:
        return list(attr.get("ints", []))
    if t == ATTR_FLOATS:
        return list(attr.get("floats", []))
    if t == ATTR_STRINGS:
        return list(attr.get("strings", []))
    if t == ATTR_BOOLEAN:
        return bool(attr.get("b", False))
    if t == ATTR_BOOLEANS:
        return list(attr.get("bools", []))
    if t == ATTR_BLOCK:
        return ("block", attr.get("block_idx", 0))
    if t == ATTR_LONG:
        return attr.get("l", 0)
    if t == ATTR_BLOCKS:
        return ("blocks", list(attr.get("blocks_idx", [])))
    if t == ATTR_LONGS:
        return list(attr.get("longs", []))
    if t == ATTR_FLOAT64S:
        return list(attr.get("float64s", []))
    if t == ATTR_VAR:
        return ("var", attr.get("var_name", ""))
    if t == ATTR_VARS:
        return ("vars", list(attr.get("vars_name", [])))
    if t == ATTR_FLOAT64:
        return attr.get("float64", 0.0)
    if t == ATTR_SCALAR:
        return scalar_value(attr.get("scalar", {}))
    if t == ATTR_SCALARS:
        return [scalar_value(s) for s in attr.get("scalars", [])]
    raise wire.WireError(f"attribute '{attr.get('name')}' has unknown type {t}")


def scalar_value(s: dict[str, Any]) -> Any:
    """A `Scalar` message as a Python bool/int/float/complex."""
    t = s.get("type", 0)
    if t == 1:
        return bool(s.get("b", False))
    if t == 2:
        return int(s.get("i", 0))
    if t == 3:
        return float(s.get("r", 0.0))
    if t == 4:
        c = s.get("c", {})
        return complex(c.get("r", 0.0), c.get("i", 0.0))
    return None


def make_attr(name: str, value: Any) -> dict[str, Any]:
    """An `OpDesc.Attr` for a Python value (bool, int, float, str or a list of one
    of them; ints beyond int32 become LONG(S))."""
    if isinstance(value, bool):
        return {"name": name, "type": ATTR_BOOLEAN, "b": value}
    if isinstance(value, (int, np.integer)):
        v = int(value)
        if -(1 << 31) <= v < 1 << 31:
            return {"name": name, "type": ATTR_INT, "i": v}
        return {"name": name, "type": ATTR_LONG, "l": v}
    if isinstance(value, (float, np.floating)):
        return {"name": name, "type": ATTR_FLOAT, "f": float(value)}
    if isinstance(value, str):
        return {"name": name, "type": ATTR_STRING, "s": value}
    if isinstance(value, (list, tuple)):
        items = list(value)
        if items and all(isinstance(v, bool) for v in items):
            return {"name": name, "type": ATTR_BOOLEANS, "bools": items}
        if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
            ints = [int(v) for v in items]
            if all(-(1 << 31) <= v < 1 << 31 for v in ints):
                return {"name": name, "type": ATTR_INTS, "ints": ints}
            return {"name": name, "type": ATTR_LONGS, "longs": ints}
        if all(isinstance(v, (int, float, np.integer, np.floating)) for v in items):
            return {"name": name, "type": ATTR_FLOATS, "floats": [float(v) for v in items]}
        if all(isinstance(v, str) for v in items):
            return {"name": name, "type": ATTR_STRINGS, "strings": items}
    raise TypeError(f"attribute '{name}': no ProgramDesc attribute type for {value!r}")


def op_attrs(op: dict[str, Any]) -> dict[str, Any]:
    """An `OpDesc`'s attributes by name."""
    return {a["name"]: attr_value(a) for a in op.get("attrs", [])}


def op_slots(op: dict[str, Any], key: str) -> dict[str, list[str]]:
    """An `OpDesc`'s input (`key='inputs'`) or output slots: slot -> variable names."""
    return {v["parameter"]: list(v.get("arguments", [])) for v in op.get(key, [])}


def var_tensor(var: dict[str, Any]) -> tuple[list[int], str] | None:
    """A dense-tensor variable's dims and dtype name; None for other variables."""
    vt = var.get("type", {})
    if vt.get("type") != DENSE_TENSOR or "dense_tensor" not in vt:
        return None
    desc = vt["dense_tensor"].get("tensor", {})
    dtype = VAR_TYPE_DTYPES.get(desc.get("data_type", 5))
    if dtype is None:
        return None
    return list(desc.get("dims", [])), dtype


__all__ = [
    "DTYPE_VAR_TYPES", "PROGRAM_DESC", "TENSOR_DESC", "VAR_TYPE_DTYPES", "attr_value", "make_attr",
    "op_attrs", "op_slots", "parse_program", "scalar_value", "serialize_program", "var_tensor",
]
