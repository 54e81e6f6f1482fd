"""The latest value of each Paddle name in one xDSL block, kept up to date cheaply.

`Block.var(name)` / `has_var(name)` are called once per op by builders and by
`append_backward` callbacks (error clipping looks up every gradient's variable).
Rebuilding a name table after each appended op, or scanning the block backwards for
each lookup, makes building a program quadratic in its length.  A `NameIndex`
instead remembers the last op it has seen and, on a lookup, indexes only the ops
appended since, so a program built by appending costs O(1) amortized per lookup.

What it cannot see incrementally makes it rebuild (O(block) once, then incremental
again): an explicit `invalidate()` (ops inserted in the middle or removed, which
the builder reports), the last indexed op no longer being in the block, a hit whose
value no longer carries the name or left the block, and any rename of an already
named value anywhere (`pd.rename_count()`).  Renames are rare (gradient
accumulation's `@RENAME@` names, `Variable.name = ...`), so these rebuilds cost
O(renames x block) at worst, and only when lookups interleave with them.
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import value_name


class NameIndex:
    """Name -> latest value among the results of `block`'s top-level ops."""

    def __init__(self, block: Block) -> None:
        self.block = block
        self._table: dict[str, SSAValue] = {}
        self._last: Operation | None = None
        self._renames = -1  # never built

    def invalidate(self) -> None:
        """Forget everything: the next lookup rebuilds from the block's ops."""
        self._renames = -1

    def lookup(self, name: str) -> SSAValue | None:
        """The latest value called `name` in the block, or None."""
        self._catch_up()
        v = self._table.get(name)
        if v is not None and (value_name(v) != name or not self._holds(v)):
            self._rebuild()
            v = self._table.get(name)
        return v

    # -- internal ------------------------------------------------------------------

    def _holds(self, v: SSAValue) -> bool:
        owner = v.owner
        return isinstance(owner, Operation) and owner.parent is self.block

    def _catch_up(self) -> None:
        last = self._last
        if self._renames != pd.rename_count() or (last is not None and last.parent is not self.block):
            self._rebuild()
            return
        op = self.block.first_op if last is None else last.next_op
        self._index_from(op)

    def _rebuild(self) -> None:
        self._table = {}
        self._last = None
        self._renames = pd.rename_count()
        self._index_from(self.block.first_op)

    def _index_from(self, op: Operation | None) -> None:
        table = self._table
        while op is not None:
            for v in op.results:
                n = value_name(v)
                if n is not None:
                    table[n] = v
            self._last = op
            op = op.next_op


__all__ = ["NameIndex"]
