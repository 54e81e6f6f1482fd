"""The latest value of each Paddle name in one xDSL block, kept up to date cheaply.

`Block.var(name)` / `has_var(name)` are called once per op by builders and by
`append_backward` callbacks (error clipping looks up every gradient's variable).
Rebuilding a name table after each appended op, or scanning the block backwards for
each lookup, makes building a program quadratic in its length.  A `NameIndex`
instead keeps, per name, the values that carried it in block order, and updates
itself from what changed since the last lookup:

- ops appended since: it remembers the last op it indexed and walks on from there;
- renames (gradient accumulation's `@RENAME@` names, recompute's clones, a
  `Variable.name = ...`): `pd.watch_renames` tells it of each renamed op of its block;
- a value that lost its name or left the block is dropped when a lookup meets it.

Anything else (ops inserted in the middle of the block, the last indexed op
removed) needs `invalidate()` or is detected, and costs one rebuild.  So a program
built by appending, renaming and removing costs O(1) amortized per lookup.
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import result_names, value_name


class NameIndex:
    """Name -> latest value among the results of `block`'s top-level ops."""

    def __init__(self, block: Block) -> None:
        self.block = block
        self._holders: dict[str, list[SSAValue]] = {}
        """Per name, the values that carried it when indexed, in block order."""
        self._order: dict[Operation, int] = {}
        self._last: Operation | None = None
        self._renamed: list[Operation] = []
        self._valid = False
        pd.watch_renames(block, self)

    def invalidate(self) -> None:
        """Forget everything: the next lookup rebuilds from the block's ops."""
        self._valid = False

    def renamed(self, op: Operation) -> None:
        """`op` of this block got other names (called by `pd.set_result_names`)."""
        self._renamed.append(op)

    def lookup(self, name: str) -> SSAValue | None:
        """The latest value called `name` in the block, or None."""
        self._catch_up()
        holders = self._holders.get(name)
        while holders:
            v = holders[-1]
            owner = v.owner
            if isinstance(owner, Operation) and owner.parent is self.block and value_name(v) == name:
                return v
            holders.pop()  # renamed away or removed; a rename back re-adds it
        return None

    # -- internal ------------------------------------------------------------------

    def _catch_up(self) -> None:
        last = self._last
        if not self._valid or (last is not None and last.parent is not self.block):
            self._rebuild()
            return
        self._index_from(self.block.first_op if last is None else last.next_op)
        renamed, self._renamed = self._renamed, []
        for op in renamed:
            at = self._order.get(op)
            if at is None or op.parent is not self.block:
                continue  # not indexed yet (done above with its new names) or gone
            for v, n in zip(op.results, result_names(op)):
                if n is not None:
                    self._insert(n, v, at)

    def _insert(self, name: str, v: SSAValue, at: int) -> None:
        holders = self._holders.setdefault(name, [])
        if v in holders:
            return
        i = len(holders)
        while i > 0 and self._order.get(holders[i - 1].owner, -1) > at:  # type: ignore[arg-type]
            i -= 1  # an earlier op renamed: keep block order (lists are short)
        holders.insert(i, v)

    def _rebuild(self) -> None:
        self._holders = {}
        self._order = {}
        self._last = None
        self._renamed = []
        self._valid = True
        self._index_from(self.block.first_op)

    def _index_from(self, op: Operation | None) -> None:
        holders = self._holders
        order = self._order
        while op is not None:
            order[op] = len(order)
            for v in op.results:
                n = value_name(v)
                if n is not None:
                    holders.setdefault(n, []).append(v)
            self._last = op
            op = op.next_op


__all__ = ["NameIndex"]
