"""The protobuf wire format, by hand: enough to read and write Paddle's
`framework.proto` messages without a protobuf dependency.

A message is a sequence of fields `(key, value)` with `key = number << 3 | wire
type`: 0 a varint (ints, bools, enums; negative int32/int64 as 10-byte two's
complement), 1 eight bytes (double), 2 a length-prefixed run (strings, bytes,
sub-messages, packed repeated numbers), 5 four bytes (float).  A `Schema` maps
field numbers to `(name, kind, repeated)`, where kind is a scalar kind or a
sub-message's schema; decoded messages are plain dicts (repeated fields are
lists; absent fields absent).  Unknown fields are skipped, as protobuf does.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any, Union

Kind = Union[str, "Schema"]
Schema = Mapping[int, tuple[str, Kind, bool]]
"""field number -> (name, kind, repeated); kind is one of `VARINT_KINDS`,
'float', 'double', 'string', 'bytes' or a sub-message's Schema."""

VARINT_KINDS = ("int32", "int64", "uint32", "uint64", "bool", "enum")


class WireError(ValueError):
    """Bytes that are not a well-formed message of the expected schema."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at `pos` and the position after it."""
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise WireError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise WireError("varint longer than 10 bytes")


def _signed(value: int, kind: str) -> int:
    """Signed kinds store negatives as the 64-bit two's complement."""
    if kind in ("int32", "int64", "enum") and value >= 1 << 63:
        value -= 1 << 64
    return value


def _scalar(kind: str, wire: int, data: bytes, pos: int) -> tuple[Any, int]:
    if kind in VARINT_KINDS:
        if wire != 0:
            raise WireError(f"{kind} field with wire type {wire}")
        raw, pos = read_varint(data, pos)
        value: Any = _signed(raw, kind)
        return (bool(value) if kind == "bool" else value), pos
    if kind == "float":
        if wire != 5 or pos + 4 > len(data):
            raise WireError("bad float field")
        return struct.unpack_from("<f", data, pos)[0], pos + 4
    if kind == "double":
        if wire != 1 or pos + 8 > len(data):
            raise WireError("bad double field")
        return struct.unpack_from("<d", data, pos)[0], pos + 8
    raise WireError(f"unknown scalar kind {kind}")


def _skip(wire: int, data: bytes, pos: int) -> int:
    if wire == 0:
        return read_varint(data, pos)[1]
    if wire == 1:
        pos += 8
    elif wire == 5:
        pos += 4
    elif wire == 2:
        n, pos = read_varint(data, pos)
        pos += n
    else:
        raise WireError(f"unsupported wire type {wire}")
    if pos > len(data):
        raise WireError("truncated field")
    return pos


def decode(data: bytes, schema: Schema, start: int = 0, end: int | None = None) -> dict[str, Any]:
    """The message in `data[start:end]` as a dict (see the module doc)."""
    end = len(data) if end is None else end
    out: dict[str, Any] = {}
    pos = start
    while pos < end:
        key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        field = schema.get(number)
        if field is None:
            pos = _skip(wire, data, pos)
            continue
        name, kind, repeated = field
        if not isinstance(kind, str) or kind in ("string", "bytes"):
            if wire != 2:
                raise WireError(f"field '{name}' with wire type {wire}, expected 2")
            n, pos = read_varint(data, pos)
            if pos + n > end:
                raise WireError(f"field '{name}' runs past the end ({n} bytes)")
            if isinstance(kind, str):
                raw = data[pos : pos + n]
                if kind == "string":
                    try:
                        value: Any = raw.decode("utf-8")
                    except UnicodeDecodeError:
                        raise WireError(f"field '{name}' is not UTF-8 text") from None
                else:
                    value = bytes(raw)
            else:
                value = decode(data, kind, pos, pos + n)
            pos += n
        elif wire == 2 and repeated:  # packed numbers
            n, pos = read_varint(data, pos)
            stop = pos + n
            if stop > end:
                raise WireError(f"packed field '{name}' runs past the end")
            values = out.setdefault(name, [])
            item_wire = 0 if kind in VARINT_KINDS else (5 if kind == "float" else 1)
            while pos < stop:
                item, pos = _scalar(kind, item_wire, data, pos)
                values.append(item)
            continue
        else:
            value, pos = _scalar(kind, wire, data, pos)
        if pos > end:
            raise WireError(f"field '{name}' runs past the end")
        if repeated:
            out.setdefault(name, []).append(value)
        else:
            out[name] = value
    if pos != end:
        raise WireError("message runs past its end")
    return out


def write_varint(value: int) -> bytes:
    """The varint of `value` (negative: 10-byte two's complement)."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _encode_scalar(kind: str, value: Any) -> tuple[int, bytes]:
    if kind in VARINT_KINDS:
        return 0, write_varint(int(value))
    if kind == "float":
        return 5, struct.pack("<f", float(value))
    if kind == "double":
        return 1, struct.pack("<d", float(value))
    raise WireError(f"unknown scalar kind {kind}")


def encode(message: Mapping[str, Any], schema: Schema) -> bytes:
    """A dict (as `decode` returns) as message bytes, fields in number order,
    repeated numbers unpacked (as proto2 writes them)."""
    out = bytearray()
    for number in sorted(schema):
        name, kind, repeated = schema[number]
        if name not in message or message[name] is None:
            continue
        values = message[name] if repeated else [message[name]]
        for value in values:
            if not isinstance(kind, str):
                body = encode(value, kind)
                out += write_varint(number << 3 | 2) + write_varint(len(body)) + body
            elif kind in ("string", "bytes"):
                body = value.encode("utf-8") if isinstance(value, str) else bytes(value)
                out += write_varint(number << 3 | 2) + write_varint(len(body)) + body
            else:
                wire, body = _encode_scalar(kind, value)
                out += write_varint(number << 3 | wire) + body
    return bytes(out)


__all__ = ["Schema", "WireError", "decode", "encode", "read_varint", "write_varint"]
