"""A structural check of relocatable object files before LLVM reads them.

LLVM's object-file reader trusts its input: llvmlite's `ObjectFileRef.from_data` on
bytes that are not an object file returns a null handle, and the next use of it
crashes the process (SIGSEGV, measured with llvmlite 0.50 / LLVM 22).  The disk
cache (`native/disk_cache.py`) therefore checks every stored object file here
before linking it: an ELF64 relocatable file for this machine whose section
headers, symbol tables and relocation tables all point inside the file.

What this cannot catch: well-formed object code that is wrong (it computes the
wrong thing or jumps somewhere bad).  The cache's checksum, its key and program
checks, and its first-call guard cover that (`disk_cache.py`'s docstring); nothing
can prove machine code correct short of running it.  On hosts whose objects are
not ELF (macOS's Mach-O, Windows' COFF) only the magic number is checked.
"""

from __future__ import annotations

import platform
import struct

import numpy as np

_ELF_MACHINES = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183, "ppc64le": 21, "ppc64": 21,
                 "riscv64": 243, "s390x": 22, "loongarch64": 258}
"""`e_machine` by `platform.machine()` (hosts not listed skip the machine check)."""

_SHT_SYMTAB, _SHT_STRTAB, _SHT_RELA, _SHT_NOBITS, _SHT_REL = 2, 3, 4, 8, 9
_SHN_LORESERVE = 0xFF00
_MACHO_MAGICS = (b"\xcf\xfa\xed\xfe", b"\xfe\xed\xfa\xcf")
"""Mach-O 64, both byte orders."""
_COFF_MACHINES = (b"\x64\x86", b"\x64\xaa")
"""COFF's machine field: x86-64, ARM64."""


class BadObject(ValueError):
    """The bytes are not an object file LLVM can safely read (message says why)."""


def check_object(data: bytes) -> None:
    """Raise `BadObject` unless `data` is a well-formed relocatable object file for
    this host (see the module docstring for what "well-formed" covers)."""
    if data[:4] != b"\x7fELF":
        system = platform.system()
        if (system == "Darwin" and data[:4] in _MACHO_MAGICS) or (system == "Windows" and data[:2] in _COFF_MACHINES):
            return
        raise BadObject("not an ELF object file")
    _check_elf(data)


def _check_elf(data: bytes) -> None:
    n = len(data)
    if n < 64:
        raise BadObject("truncated ELF header")
    if data[4] != 2 or data[6] != 1:
        raise BadObject("not a 64-bit ELF file (version 1)")
    if data[5] not in (1, 2):
        raise BadObject("unknown ELF byte order")
    e = "<" if data[5] == 1 else ">"
    (e_type, e_machine, _version, _entry, _phoff, shoff, _flags, ehsize, _phentsize, _phnum, shentsize, shnum,
     shstrndx) = struct.unpack_from(e + "HHIQQQIHHHHHH", data, 16)
    if e_type != 1:
        raise BadObject(f"ELF type {e_type}, not a relocatable object (1)")
    want = _ELF_MACHINES.get(platform.machine().lower())
    if want is not None and e_machine != want:
        raise BadObject(f"ELF machine {e_machine}, not this host's ({want})")
    if ehsize != 64 or shentsize != 64 or shnum == 0:
        raise BadObject("bad ELF header sizes")
    if shoff + shnum * 64 > n or shstrndx >= shnum:
        raise BadObject("section headers outside the file")
    sections = [struct.unpack_from(e + "IIQQQQIIQQ", data, shoff + 64 * i) for i in range(shnum)]
    for i, (_name, typ, _fl, _addr, off, size, link, _info, _align, _entsize) in enumerate(sections):
        if typ != _SHT_NOBITS and off + size > n:
            raise BadObject(f"section {i} lies outside the file")
        if link >= shnum:
            raise BadObject(f"section {i} links to section {link} of {shnum}")
    if sections[shstrndx][1] != _SHT_STRTAB:
        raise BadObject("the section-name table is not a string table")
    names_size = sections[shstrndx][5]
    if any(s[0] >= names_size for s in sections[1:]):
        raise BadObject("a section name lies outside the name table")
    symbols: dict[int, int] = {}
    for i, (_name, typ, _fl, _addr, off, size, link, _info, _align, entsize) in enumerate(sections):
        if typ == _SHT_SYMTAB:
            if entsize != 24 or size % 24:
                raise BadObject(f"symbol table {i} has entries of {entsize} bytes")
            if sections[link][1] != _SHT_STRTAB:
                raise BadObject(f"symbol table {i} names no string table")
            table = np.frombuffer(data, np.dtype([("name", e + "u4"), ("info", "u1"), ("other", "u1"),
                                                  ("shndx", e + "u2"), ("value", e + "u8"), ("size", e + "u8")]),
                                  count=size // 24, offset=off)
            if table.size and int(table["name"].max()) >= sections[link][5]:
                raise BadObject(f"a symbol of table {i} is named outside its string table")
            shndx = table["shndx"]
            if np.any((shndx >= shnum) & (shndx < _SHN_LORESERVE)):
                raise BadObject(f"a symbol of table {i} lies in no section")
            symbols[i] = int(table.size)
    for i, (_name, typ, _fl, _addr, off, size, link, info, _align, entsize) in enumerate(sections):
        if typ in (_SHT_RELA, _SHT_REL):
            width = 24 if typ == _SHT_RELA else 16
            if entsize != width or size % width:
                raise BadObject(f"relocation table {i} has entries of {entsize} bytes")
            if link not in symbols or info >= shnum:
                raise BadObject(f"relocation table {i} refers to no symbol table or section")
            target = sections[info]
            fields = [("offset", e + "u8"), ("info", e + "u8")] + ([("addend", e + "i8")] if width == 24 else [])
            table = np.frombuffer(data, np.dtype(fields), count=size // width, offset=off)
            if table.size:
                if int((table["info"] >> np.uint64(32)).max()) >= symbols[link]:
                    raise BadObject(f"relocation table {i} names a symbol past its table")
                if target[1] != _SHT_NOBITS and int(table["offset"].max()) >= target[5]:
                    raise BadObject(f"relocation table {i} patches past the end of its section")


__all__ = ["BadObject", "check_object"]
