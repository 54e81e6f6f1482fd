"""Paddle's binary tensor serialization (`SerializeToStream` of a DenseTensor).

One tensor is, little-endian:

* `uint32` version (0);
* `uint64` LoD level count, then per level a `uint64` byte size and that many
  bytes of `size_t` offsets (inference parameters have none);
* `uint32` tensor version (0), `int32` size of a `VarType.TensorDesc` message,
  the message (data type, dims);
* the raw data, `numel * itemsize` bytes, C order.

`<prefix>.pdiparams` (`save_combine`) is such tensors back to back with no names:
the persistable variables of the program, sorted by name.  A single tensor is what
`paddle.save(tensor, path, use_binary_format=True)` writes.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

import numpy as np

from pullback.frontend.formats import wire
from pullback.frontend.formats.program_desc import DTYPE_VAR_TYPES, TENSOR_DESC, VAR_TYPE_DTYPES

MAX_TENSOR_DESC = 1 << 16


class TensorStreamError(ValueError):
    """Bytes that are not (or not entirely) serialized tensors; the message says
    what is wrong, the caller names the file."""


def read_tensor(data: bytes, pos: int = 0) -> tuple[np.ndarray, int]:
    """The tensor serialized at `pos` and the position after it."""

    def need(n: int, what: str) -> None:
        if pos + n > len(data):
            raise TensorStreamError(f"truncated: it ends inside {what} at byte {pos} "
                                    f"(needs {n} more bytes, has {len(data) - pos})")

    need(4, "a tensor's version")
    (version,) = struct.unpack_from("<I", data, pos)
    if version != 0:
        raise TensorStreamError(f"tensor version {version} at byte {pos} (only version 0 exists)")
    pos += 4
    need(8, "the LoD level count")
    (levels,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    if levels > 16:
        raise TensorStreamError(f"{levels} LoD levels at byte {pos - 8}: not a tensor stream")
    for _ in range(levels):
        need(8, "a LoD level's size")
        (size,) = struct.unpack_from("<Q", data, pos)
        pos += 8
        need(size, "a LoD level")
        pos += size
    need(4, "the tensor description's version")
    (tversion,) = struct.unpack_from("<I", data, pos)
    if tversion != 0:
        raise TensorStreamError(f"tensor description version {tversion} at byte {pos} (only 0 exists)")
    pos += 4
    need(4, "the tensor description's size")
    (desc_size,) = struct.unpack_from("<i", data, pos)
    pos += 4
    if desc_size <= 0 or desc_size > MAX_TENSOR_DESC:
        raise TensorStreamError(f"tensor description of {desc_size} bytes at byte {pos - 4}: not a tensor stream")
    need(desc_size, "the tensor description")
    try:
        desc = wire.decode(data, TENSOR_DESC, pos, pos + desc_size)
    except wire.WireError as e:
        raise TensorStreamError(f"damaged tensor description at byte {pos}: {e}") from None
    pos += desc_size
    code = desc.get("data_type")
    dtype_name = VAR_TYPE_DTYPES.get(code if isinstance(code, int) else -1)
    if dtype_name is None or dtype_name == "bfloat16":
        raise TensorStreamError(f"tensor data type {code} is not supported")
    dims = [int(d) for d in desc.get("dims", [])]
    if any(d < 0 for d in dims):
        raise TensorStreamError(f"tensor with negative dims {dims}")
    dtype = np.dtype(dtype_name).newbyteorder("<")
    nbytes = math.prod(dims) * dtype.itemsize
    need(nbytes, f"the data of a {dtype_name} tensor of shape {dims}")
    arr = np.frombuffer(data, dtype=dtype, count=nbytes // dtype.itemsize, offset=pos).reshape(dims)
    return arr.astype(dtype.newbyteorder("="), copy=True), pos + nbytes


def read_tensors(data: bytes, count: int | None = None) -> list[np.ndarray]:
    """All tensors of a combined stream (exactly `count` if given: bytes left over
    or missing tensors are an error)."""
    out: list[np.ndarray] = []
    pos = 0
    while pos < len(data) and (count is None or len(out) < count):
        arr, pos = read_tensor(data, pos)
        out.append(arr)
    if count is not None and len(out) < count:
        raise TensorStreamError(f"holds {len(out)} tensors, the model has {count} parameters")
    if pos != len(data):
        raise TensorStreamError(f"{len(data) - pos} bytes are left after {len(out)} tensors "
                                "(the file has more parameters than the model)")
    return out


def write_tensor(arr: np.ndarray) -> bytes:
    """One tensor in Paddle's serialization (no LoD)."""
    a = np.ascontiguousarray(arr)
    name = a.dtype.name if a.dtype != np.bool_ else "bool"
    code = DTYPE_VAR_TYPES.get(name)
    if code is None:
        raise TypeError(f"no Paddle tensor data type for numpy dtype {a.dtype}")
    desc = wire.encode({"data_type": code, "dims": list(a.shape)}, TENSOR_DESC)
    head = struct.pack("<IQI", 0, 0, 0) + struct.pack("<i", len(desc)) + desc
    return head + a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()


def write_tensors(arrays: Sequence[np.ndarray]) -> bytes:
    """A combined stream (`save_combine`): the tensors back to back."""
    return b"".join(write_tensor(a) for a in arrays)


def looks_like_tensor(data: bytes) -> bool:
    """Whether `data` starts like a serialized tensor: a small version (0 is the
    only one; `read_tensor` names others) and a short LoD."""
    return (len(data) >= 12 and struct.unpack_from("<I", data, 0)[0] < 256
            and struct.unpack_from("<Q", data, 4)[0] <= 16)


__all__ = ["TensorStreamError", "looks_like_tensor", "read_tensor", "read_tensors", "write_tensor", "write_tensors"]
