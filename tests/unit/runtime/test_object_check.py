"""The structural check of object files before LLVM reads them
(`runtime/native/object_check.py`): LLVM's reader crashes the process on bytes that
are not an object file, so the disk cache checks every stored one first."""

from __future__ import annotations

import platform
import struct

import pytest

from pullback.lowering.phase_times import PhaseTimes
from pullback.runtime.native.jit import Jit
from pullback.runtime.native.object_check import BadObject, check_object

pytestmark = pytest.mark.skipif(platform.system() != "Linux", reason="ELF objects only")

IR = """
define i64 @"f"(i64 %".1") {
entry:
  %".2" = add i64 %".1", 1
  ret i64 %".2"
}
"""


@pytest.fixture(scope="module")
def obj() -> bytes:
    (o,) = Jit.get().emit(IR, PhaseTimes(), split=False)
    return o


def test_an_object_llvm_emitted_passes(obj: bytes) -> None:
    check_object(obj)


def test_truncated_or_foreign_bytes_are_refused(obj: bytes) -> None:
    for bad in (b"", b"not an object", obj[:63], obj[: len(obj) // 2], b"\x7fBAD" + obj[4:]):
        with pytest.raises(BadObject):
            check_object(bad)


def test_headers_pointing_outside_the_file_are_refused(obj: bytes) -> None:
    shoff = struct.unpack_from("<Q", obj, 40)[0]

    def patched(at: int, fmt: str, value: int) -> bytes:
        data = bytearray(obj)
        struct.pack_into(fmt, data, at, value)
        return bytes(data)

    for bad, why in [
        (patched(16, "<H", 2), "relocatable"),  # an executable, not an object
        (patched(18, "<H", 40), "machine"),  # ARM
        (patched(40, "<Q", len(obj)), "outside the file"),  # section headers past the end
        (patched(60, "<H", 4000), "outside the file"),  # too many sections
        (patched(62, "<H", 4000), "outside the file"),  # no name table
    ]:
        with pytest.raises(BadObject, match=why):
            check_object(bad)
    n = struct.unpack_from("<H", obj, 60)[0]
    for i in range(1, n):  # any section's offset past the end
        at = shoff + 64 * i
        if struct.unpack_from("<I", obj, at + 4)[0] != 8:  # (not NOBITS)
            with pytest.raises(BadObject):
                check_object(patched(at + 24, "<Q", len(obj) + 1))
