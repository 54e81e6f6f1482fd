"""Memref types and views (`memref.reinterpret_cast`) built cheaply.  The lowering
makes a view for every reshape, every outlined segment's argument and every parallel
chunk's rows, and xDSL's `ReinterpretCastOp.from_dynamic` spent most of its 250 us
per op building the three static-index arrays, which repeat from view to view; a
`MemRefType` took 200 us to check its shape (ResNet-18's step makes 800), and the
same few types recur.  Attributes are immutable, so both are shared (the index
arrays through `build.dense_array`).  The op itself
is built by `make` (lowering/build.py), skipping IRDL's argument checking.

The small questions asked of a buffer (its element type, its static shape, the
allocation a view looks into) are answered here too."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, TensorType, i64
from xdsl.ir import Attribute, SSAValue

from pullback.lowering.build import dense_array, make, segment_sizes


@functools.lru_cache(maxsize=4096)
def _memref_type(elem: Attribute, shape: tuple[int, ...]) -> MemRefType[Attribute]:
    return MemRefType(elem, shape)


def memref_type(elem: Attribute, shape: Sequence[int]) -> MemRefType[Attribute]:
    """`MemRefType(elem, shape)` (identity layout), made once per element type and shape."""
    return _memref_type(elem, tuple(shape))


def reinterpret_cast(
    source: SSAValue,
    offsets: Sequence[SSAValue | int],
    sizes: Sequence[SSAValue | int],
    strides: Sequence[SSAValue | int],
    result_type: Attribute,
) -> memref.ReinterpretCastOp:
    """`memref.ReinterpretCastOp.from_dynamic` (an int is a static index, a value a
    dynamic one), with its static-index arrays shared between views."""
    lists: list[tuple[tuple[int, ...], list[SSAValue]]] = []
    for xs in (offsets, sizes, strides):
        static = tuple(x if isinstance(x, int) else DYNAMIC_INDEX for x in xs)
        lists.append((static, [x for x in xs if not isinstance(x, int)]))
    (so, do), (ss, ds), (st, dt) = lists
    # The IRDL constructor's properties, in its order: the static lists, then the
    # segment sizes of (source, offsets, sizes, strides).
    props = {
        "static_offsets": dense_array(i64, so),
        "static_sizes": dense_array(i64, ss),
        "static_strides": dense_array(i64, st),
        "operandSegmentSizes": segment_sizes(1, len(do), len(ds), len(dt)),
    }
    return make(memref.ReinterpretCastOp, [source, *do, *ds, *dt], (result_type,), props)


def elem_of_buffer(mem: SSAValue | Attribute) -> Attribute:
    """The element type of a memref or tensor value (or type)."""
    t = mem.type if isinstance(mem, SSAValue) else mem
    if isinstance(t, (MemRefType, TensorType)):
        return t.get_element_type()
    return t


def buffer_shape(mem: SSAValue) -> tuple[int, ...]:
    """The static shape of a memref value (DYN for `?`)."""
    t = mem.type
    assert isinstance(t, MemRefType)
    return tuple(t.get_shape())


def root_buffer(mem: SSAValue) -> SSAValue:
    """The allocation (or argument, or region boundary value) a buffer views, through
    reinterpret casts: what is freed, and what liveness is tracked on."""
    while isinstance(mem.owner, memref.ReinterpretCastOp):
        mem = mem.owner.source
    return mem


__all__ = ["buffer_shape", "elem_of_buffer", "memref_type", "reinterpret_cast", "root_buffer"]
