"""What a lowered program looks like from outside: its flattened op order and its ABI.

The runtimes (`runtime/native/`, `runtime/gpu/backend.py`) and the run-time
shape checks (`lowering/shapes.py`) read these; they depend only on the dialect, not
on any lowering rule, so importing them never loads the lowering.

* `Program`: a `pd` module flattened into straight-line order (`pd.backward` bodies
  spliced in place), with the readers of every value.  Control-flow ops (`pd.if`,
  `pd.while`) stay single entries: their regions are programs of their own
  (`Program.of_block`), and a value their regions capture counts as read by them.
* `Abi`: the calling convention of the entry function `convert-pd-to-linalg`
  builds, recorded on it as the `pullback.abi` attribute (`abi_of` reads it back).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, SSAValue
from xdsl.traits import IsTerminator

from pullback.dialects import pd
from pullback.dialects.pd.base import PdOp, shape_of


PACKED_PREFIX = "_pullback_packed_"
"""An entry `f`'s packed wrapper is `void _pullback_packed_f(ptr slots)`: it calls `f`
with its i-th argument read from the i-th 8-byte slot (what the runtime calls)."""


class LoweringError(Exception):
    """The program cannot be lowered to native code; the message names the op."""


class GpuLoweringError(LoweringError):
    """A construct the GPU path cannot lower; the message names it."""


# --------------------------------------------------------------------------- ABI


@dataclass
class Abi:
    """The calling convention of a lowered program.

    Arguments of the entry function, in order: `dims` (one `index` per dynamic
    dimension of a feed, as `(feed position, axis)`), then `feeds`, `params` and
    `outputs` as memrefs.  Outputs are the fetched values in fetch order, then
    persistables written by the program that it never reads with `pd.parameter`.
    When `checks` is not empty a last argument, `memref<3xi64>` zeroed by the
    caller, receives the first failed range check: `[code, value, limit]`, code
    `k` naming `checks[k - 1]` (`[op name, what]`).
    """

    feeds: list[tuple[str, TensorType]] = field(default_factory=list)
    params: list[tuple[str, TensorType]] = field(default_factory=list)
    outputs: list[tuple[str, TensorType]] = field(default_factory=list)
    dims: list[tuple[int, int]] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    """Names of the persistables the program updates (params or new outputs)."""
    fetches: list[list[object]] = field(default_factory=list)
    """Where each fetched value is found: `["out", i]` (output buffer i) or
    `["param", name]` (a parameter updated in place)."""
    checks: list[list[str]] = field(default_factory=list)
    """Run-time range checks, `[op name, what]` (`what`: `id` or `label`)."""
    commit: bool = False
    """The entry has a commit point (`LowererBase.commit_point`): it takes the status
    buffer even without range checks (status 0 -1: an interrupted run abandoned)."""

    def to_json(self) -> str:
        """Serialize (stored as the entry function's `pullback.abi` attribute)."""

        def types(items: list[tuple[str, TensorType]]) -> list[list[object]]:
            return [[n, _type_str(t)] for n, t in items]

        return json.dumps(
            {
                "feeds": types(self.feeds),
                "params": types(self.params),
                "outputs": types(self.outputs),
                "dims": self.dims,
                "writes": self.writes,
                "fetches": self.fetches,
                "checks": self.checks,
                "commit": self.commit,
            }
        )


def _type_str(t: TensorType) -> list[object]:
    return [list(shape_of(t)), str(t.get_element_type())]


def abi_of(module: ModuleOp, entry: str = "main") -> dict[str, Any]:
    """The ABI recorded on a lowered module's entry function, as plain JSON data."""
    for op in module.walk():
        sym = op.properties.get("sym_name")
        if isinstance(sym, StringAttr) and sym.data == entry:
            attr = op.attributes.get("pullback.abi")
            if isinstance(attr, StringAttr):
                return json.loads(attr.data)
    raise LoweringError(f"no lowered entry function '@{entry}' with an ABI")


# ---------------------------------------------------------------------- program

FlatOp = PdOp | pd.IfOp | pd.WhileOp
"""An entry of a flattened program: a `pd` op, or a region op kept whole."""

CAPTURE = -1
"""The operand position recorded in `Program.uses` for a value a region op's
regions read (it is no operand of the op itself)."""


@dataclass
class Program:
    """A `pd` module flattened into straight-line order.

    `pd.backward` bodies are spliced in place; their results alias the values their
    `pd.yield` returns (`resolve`).  `uses[v]` lists `(op, operand index)` readers.
    """

    ops: list[FlatOp]
    fetches: list[SSAValue]
    alias: dict[SSAValue, SSAValue]
    pos: dict[FlatOp, int] = field(default_factory=dict)
    uses: dict[SSAValue, list[tuple[FlatOp, int]]] = field(default_factory=dict)

    @staticmethod
    def of(
        module: ModuleOp, extra_fetches: Sequence[SSAValue] = (), use_fetch_ops: bool = True
    ) -> Program:
        """Flatten `module`.  Outputs are its `pd.fetch` operands (unless not
        `use_fetch_ops`) followed by `extra_fetches`."""
        prog = Program([], [], {})
        prog._flatten(module.body.block)
        if not use_fetch_ops:
            prog.fetches.clear()
        prog.fetches.extend(extra_fetches)
        prog._index()
        return prog

    @staticmethod
    def of_block(block: Block, alias: dict[SSAValue, SSAValue]) -> Program:
        """The program of one region's block (a `pd.if` branch, a `pd.while` region):
        its ops but the terminator, whose operands are the outputs.  `alias` is the
        enclosing program's (regions read outer values)."""
        prog = Program([], [], alias)
        term = block.last_op
        if term is not None and term.has_trait(IsTerminator):
            prog.fetches.extend(term.operands)
        prog._flatten(block)
        for op in prog.ops:
            # Feeds, parameters and persistable updates are bound and written back
            # by the entry function only.
            if isinstance(op, (pd.DataOp, pd.ParameterOp)) or op.WRITES_PERSISTABLE:
                raise LoweringError(
                    f"cannot lower '{op.name}' inside a control-flow region to native code "
                    "(feeds, parameters and persistable updates belong at the top level)"
                )
        prog._index()
        return prog

    def _index(self) -> None:
        self.fetches = [self.resolve(v) for v in self.fetches]
        for i, op in enumerate(self.ops):
            self.pos[op] = i
            for j, v in enumerate(op.operands):
                self.uses.setdefault(self.resolve(v), []).append((op, j))
            if isinstance(op, (pd.IfOp, pd.WhileOp)):
                for v in pd.captured_values(op):
                    self.uses.setdefault(self.resolve(v), []).append((op, CAPTURE))

    def _flatten(self, block: Block) -> None:
        for op in block.ops:
            if isinstance(op, pd.BackwardOp):
                if not op.is_filled:
                    raise LoweringError(
                        "'pd.backward' has an empty region: run the autodiff pass first"
                    )
                self._flatten(op.body.block)
                term = op.body.block.last_op
                assert isinstance(term, pd.YieldOp)
                for res, val in zip(op.grads, term.values):
                    self.alias[res] = val
            elif isinstance(op, (pd.YieldOp, pd.ConditionOp)):
                continue
            elif isinstance(op, pd.FetchOp):
                self.fetches.append(op.x)
            elif isinstance(op, (PdOp, pd.IfOp, pd.WhileOp)):
                self.ops.append(op)
            else:
                raise LoweringError(f"cannot lower '{op.name}': it is not a pd op")

    def views_of(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """`values` and every value lowered as a view of their buffers (ops declared
        `VIEW`, transitively): reading one of them reads the same memory."""
        out, todo = [], list(values)
        while todo:
            v = todo.pop()
            out.append(v)
            todo += [u.results[0] for u, i in self.uses.get(v, []) if u.VIEW and i == 0]
        return out

    def resolve(self, v: SSAValue) -> SSAValue:
        """The value `v` stands for (backward results are their yielded values)."""
        while v in self.alias:
            v = self.alias[v]
        return v


def output_values(
    prog: Program, abi: Mapping[str, Any], fetches: Sequence[SSAValue]
) -> list[SSAValue]:
    """The `pd` value behind each output buffer of `abi` (as `abi_of` returns it), in
    ABI order: what the runtime plans output shapes for."""
    outs: dict[int, SSAValue] = {}
    for v, (kind, ref) in zip(fetches, abi["fetches"]):
        if kind == "out":
            outs[ref] = prog.resolve(v)
    return [outs[i] for i in range(len(outs))]


__all__ = ["CAPTURE", "PACKED_PREFIX", "Abi", "FlatOp", "GpuLoweringError", "LoweringError", "Program", "abi_of", "output_values"]
