"""Python's cyclic garbage collector paused while a pass builds IR.

A pass or a compile allocates tens of thousands of xDSL objects that all stay alive
as IR.  Each allocation burst sets off collections, and the full ones traverse the
whole heap, the program being built included: the more IR exists, the costlier each
collection, so a long program pays more than linearly (20-30% of `autodiff` on long
chains; 40% of `recompute`'s search, which clones the module per candidate; a tenth
of a ResNet-18 compile, benchmarks/RESULTS.md).  Cycles left behind are collected
afterwards as usual.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """The cyclic collector off for the body, back on after (unless it was off).

    What the body allocated is then moved straight to the oldest generation
    (`gc.freeze()` then `gc.unfreeze()`: no traversal) instead of being traversed as
    young objects by the next collection, which would happen at once and cost a
    pass over everything the body built (14% of `append_backward` on 5,000 ops):
    the IR is long-lived.  The cycles it left (pruned ops) wait for the next full
    collection instead."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


__all__ = ["cyclic_gc_paused"]
