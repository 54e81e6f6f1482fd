"""A restricted unpickler: checkpoints are data, never code.

A pickle names the functions and classes it needs (`GLOBAL`/`STACK_GLOBAL`) and
the unpickler calls them; a hostile file names `os.system` or `builtins.exec`.
`safe_load` resolves names through a fixed table instead of importing them, and
the table holds only what checkpoints contain:

* numpy arrays and scalars: `numpy.ndarray`, `numpy.dtype`, numpy's
  `_reconstruct` and `scalar` (under `numpy.core.multiarray`, as numpy 1.x files
  spell them, and `numpy._core.multiarray`, as numpy 2.x files do), its
  `_frombuffer` (protocol 5, `numpy(._)core.numeric`), and numpy's scalar types
  (`numpy.float32`, ...);
* Python values: `dict`, `list`, `tuple`, `set`, `frozenset`, `bytearray`,
  `complex`, `int`, `float`, `bool`, `str`, `bytes`, `slice` (as `builtins` or,
  in protocol-2 files, `__builtin__`), `collections.OrderedDict`, and
  `_codecs.encode` for the latin-1 text protocol 2 stores bytes as;
* Paddle's own spellings: Paddle 3.3.1's `paddle.save` writes a Tensor as the
  tuple `(name, ndarray)` (plain data) and a `DenseTensor` (a static-mode scope
  value) as `eval('data', {'data': ndarray})`.  That one call is answered by a
  stand-in that accepts exactly this form and returns the array: no expression
  is evaluated.

Anything else raises `UnsafeFileError` naming the module, the name and the file,
before it is imported or called.  Persistent ids and out-of-band buffers are
refused too.  (Real Paddle's `paddle.load`, `static.load` and
`load_program_state` use the unrestricted `pickle.load`; its `jit.load` and
`load_inference_model` read binary formats, apart from `jit.save`'s optional
`.pdiparams.info` pickle.)
"""

from __future__ import annotations

import collections
import io
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np

from pullback.frontend.formats.errors import FileFormatError, UnsafeFileError, describe

try:  # numpy >= 2
    from numpy._core import multiarray as _multiarray
except ImportError:  # pragma: no cover - numpy 1.26
    from numpy.core import multiarray as _multiarray  # type: ignore[no-redef]


def _reconstruct(subtype: Any, shape: Any, dtype: Any) -> Any:
    """numpy's `_reconstruct` for plain ndarrays only (the array pickles make)."""
    if subtype is not np.ndarray:
        raise pickle.UnpicklingError(f"_reconstruct of {subtype!r} (only numpy.ndarray is loaded)")
    return _multiarray._reconstruct(subtype, shape, dtype)


def _frombuffer(buf: Any, dtype: Any, shape: Any, order: Any) -> np.ndarray:
    """numpy's `_frombuffer` (protocol-5 pickles of arrays): an array copied from
    bytes, never of object dtype."""
    dt = np.dtype(dtype)
    if dt.hasobject or not isinstance(buf, (bytes, bytearray, memoryview)):
        raise pickle.UnpicklingError("_frombuffer is loaded only for plain bytes of a non-object dtype")
    return np.frombuffer(buf, dtype=dt).reshape(shape, order=order).copy(order="K")


def _latin1_encode(text: Any, encoding: Any = "utf-8", *rest: Any) -> bytes:
    """`_codecs.encode` as protocol-2 pickles use it for bytes (latin-1 text)."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1") or rest:
        raise pickle.UnpicklingError("_codecs.encode is loaded only for latin-1 bytes")
    return text.encode("latin1")


def _paddle_dense_tensor(expression: Any, namespace: Any = None, *rest: Any) -> Any:
    """What Paddle's pickle of a DenseTensor asks `eval` for: `eval('data', {'data':
    array})` is the array.  Any other expression is refused; nothing is evaluated."""
    if (expression == "data" and not rest and isinstance(namespace, dict)
            and isinstance(namespace.get("data"), np.ndarray)):
        return namespace["data"]
    raise UnsafeFileError("it calls builtins.eval (only Paddle's eval('data', {'data': array}) form is loaded)")


_NUMPY_SCALARS = (
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "longdouble", "complex64", "complex128", "clongdouble",
    "str_", "bytes_",
)

_BUILTINS: dict[str, Callable[..., Any]] = {
    "dict": dict, "list": list, "tuple": tuple, "set": set, "frozenset": frozenset,
    "bytearray": bytearray, "complex": complex, "int": int, "float": float, "bool": bool,
    "str": str, "bytes": bytes, "slice": slice, "eval": _paddle_dense_tensor,
}


def _allowed() -> dict[tuple[str, str], Any]:
    table: dict[tuple[str, str], Any] = {}
    for module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        table[(module, "_reconstruct")] = _reconstruct
        table[(module, "scalar")] = _multiarray.scalar
    for module in ("numpy.core.numeric", "numpy._core.numeric"):
        table[(module, "_frombuffer")] = _frombuffer
    table[("numpy", "ndarray")] = np.ndarray
    table[("numpy", "dtype")] = np.dtype
    for name in _NUMPY_SCALARS:
        if hasattr(np, name):
            table[("numpy", name)] = getattr(np, name)
    for module in ("builtins", "__builtin__"):
        for name, fn in _BUILTINS.items():
            table[(module, name)] = fn
    table[("collections", "OrderedDict")] = collections.OrderedDict
    table[("_codecs", "encode")] = _latin1_encode
    return table


ALLOWED: dict[tuple[str, str], Any] = _allowed()
"""`(module, name)` -> what a pickle gets for it: everything `safe_load` resolves."""


class SafeUnpickler(pickle.Unpickler):
    """`pickle.Unpickler` resolving globals through `ALLOWED` only."""

    def __init__(self, file: Any, source: Any, api: str, encoding: str = "latin1") -> None:
        super().__init__(file, encoding=encoding)
        self._source = source
        self._api = api

    def find_class(self, module: str, name: str) -> Any:
        found = ALLOWED.get((module, name))
        if found is None:
            raise UnsafeFileError(
                f"{self._api}: refusing to load {describe(self._source)}: the file asks for "
                f"'{name}' of module '{module}', which is not data. pullback loads only numpy "
                "arrays and dtypes, dicts, lists, tuples, numbers, strings and bytes from pickled "
                "files, and never imports or runs anything a file names"
            )
        return found

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafeFileError(
            f"{self._api}: refusing to load {describe(self._source)}: it holds a persistent id "
            f"({type(pid).__name__}), which only the program that wrote it can resolve"
        )


def looks_like_pickle(data: bytes) -> bool:
    """Pickles of protocol 2 and later start with PROTO (0x80) and the protocol
    number (one newer than this Python reads still counts: `safe_load` says so)."""
    return len(data) >= 2 and data[0] == 0x80 and 2 <= data[1] < 0x10


def safe_load(data: bytes | Any, source: Any, api: str, encoding: str = "latin1") -> Any:
    """Unpickle `data` (bytes or a binary file object) through `SafeUnpickler`
    (`encoding`: how Python 2 `str` objects load, as for `pickle.load`).

    Errors name `source` (a path or buffer) and `api`: `UnsafeFileError` for a
    refused name, `FileFormatError` for an empty, truncated or damaged pickle."""
    where = describe(source)
    if isinstance(data, (bytes, bytearray, memoryview)):
        if len(data) == 0:
            raise FileFormatError(f"{api}: {where} is empty (0 bytes)")
        if data[0] == 0x80 and len(data) > 1 and data[1] > pickle.HIGHEST_PROTOCOL:
            raise FileFormatError(
                f"{api}: {where} is a pickle of protocol {data[1]}, newer than this Python reads "
                f"(up to {pickle.HIGHEST_PROTOCOL})"
            )
        stream: Any = io.BytesIO(bytes(data))
    else:
        stream = data
    try:
        return SafeUnpickler(stream, source, api, encoding).load()
    except UnsafeFileError as e:
        if str(e).startswith(api):
            raise
        raise UnsafeFileError(f"{api}: refusing to load {where}: {e}") from None
    except EOFError:
        raise FileFormatError(f"{api}: {where} is truncated: the pickle ends before its STOP mark") from None
    except pickle.UnpicklingError as e:
        if "truncated" in str(e):
            raise FileFormatError(f"{api}: {where} is truncated: the pickle ends inside a value") from None
        raise FileFormatError(f"{api}: {where} is not a readable pickle (UnpicklingError: {e})") from None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError,
            OverflowError, MemoryError, UnicodeDecodeError) as e:
        raise FileFormatError(f"{api}: {where} is not a readable pickle ({type(e).__name__}: {e})") from None


__all__ = ["ALLOWED", "SafeUnpickler", "looks_like_pickle", "safe_load"]
