"""Control flow and index arithmetic: `scf` loops and branches, `cf` branches
between blocks, and `affine.apply`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import llvmlite.ir as ir
from xdsl.dialects import affine, cf, scf
from xdsl.ir import Block, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from pullback.lowering.llvm.base import EmitterBase, Vals, handles
from pullback.lowering.llvm.scalar import rounded_div
from pullback.lowering.llvm.types import I64
from pullback.lowering.llvm.values import add, close_loop, mul, open_loop, ptr_of


class ControlHandlers(EmitterBase):
    """Handlers of control flow and affine index arithmetic."""

    @handles(scf.ForOp)
    def for_(self, op: scf.ForOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`scf.for` with loop-carried values (phis)."""
        loop = open_loop(b, vals[op.lb], vals[op.ub], "for", [ptr_of(vals[v]) for v in op.iter_args])
        inner = op.body.block
        vals[inner.args[0]] = loop.iv
        for a, phi in zip(inner.args[1:], loop.carried):
            vals[a] = self.rewrap(a.type, phi)
        nxt = self.block(inner, b, vals)
        close_loop(b, loop, vals[op.step], [ptr_of(v) for v in nxt])
        for r, phi in zip(op.results, loop.carried):
            vals[r] = self.rewrap(r.type, phi)

    @handles(scf.ParallelOp)
    def parallel(self, op: scf.ParallelOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`scf.parallel` (no reductions) as sequential loops, one per dimension."""
        if op.initVals:
            raise self.fail("scf.parallel with reductions")
        inner = op.body.block
        loops = []
        for k, (lo, hi, st) in enumerate(zip(op.lowerBound, op.upperBound, op.step)):
            loop = open_loop(b, vals[lo], vals[hi], "par")
            vals[inner.args[k]] = loop.iv
            loops.append((loop, vals[st]))
        self.block(inner, b, vals)
        for loop, st in reversed(loops):
            close_loop(b, loop, st)

    @handles(scf.IfOp)
    def if_(self, op: scf.IfOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`scf.if`; an `else` that is empty and yields nothing gets no block."""
        fn = b.function
        then = fn.append_basic_block("if.then")
        has_else = bool(op.false_region.blocks) and bool(list(op.false_region.block.ops))
        other = fn.append_basic_block("if.else") if has_else or op.output else None
        merge = fn.append_basic_block("if.end")
        b.cbranch(vals[op.cond], then, other or merge)
        regions = [(blk, region) for blk, region in ((then, op.true_region), (other, op.false_region)) if blk is not None]
        self.join_regions(regions, merge, op.output, b, vals)

    def join_regions(self, regions: list[tuple[ir.Block, Any]], merge: ir.Block,
                     results: Sequence[SSAValue], b: ir.IRBuilder, vals: Vals) -> None:
        """Translate each region into its block, branch to `merge`, and give `results`
        the yielded values through phis (`scf.if` and `scf.index_switch`)."""
        outs = []
        for blk, region in regions:
            b.position_at_end(blk)
            got = self.block(region.block, b, vals) if region.blocks else []
            outs.append((got, b.block))
            b.branch(merge)
        b.position_at_end(merge)
        for i, r in enumerate(results):
            phi = b.phi(self.llvm_type(r.type))
            for got, blk in outs:
                phi.add_incoming(ptr_of(got[i]), blk)
            vals[r] = self.rewrap(r.type, phi)

    @handles(scf.WhileOp)
    def while_(self, op: scf.WhileOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`scf.while`: the `before` region in the loop header, `after` in its body."""
        fn = b.function
        pre = b.block
        header = fn.append_basic_block("while.cond")
        body = fn.append_basic_block("while.body")
        exit_ = fn.append_basic_block("while.exit")
        b.branch(header)
        b.position_at_end(header)
        before = op.before_region.block
        phis = []
        for a, init in zip(before.args, op.arguments):
            x = ptr_of(vals[init])
            phi = b.phi(x.type)
            phi.add_incoming(x, pre)
            phis.append(phi)
            vals[a] = self.rewrap(a.type, phi)
        cond, *passed = self.block(before, b, vals)
        b.cbranch(cond, body, exit_)
        b.position_at_end(body)
        after = op.after_region.block
        for a, v in zip(after.args, passed):
            vals[a] = v
        nxt = self.block(after, b, vals)
        for phi, v in zip(phis, nxt):
            phi.add_incoming(ptr_of(v), b.block)
        b.branch(header)
        b.position_at_end(exit_)
        for r, v in zip(op.results, passed):
            vals[r] = v

    @handles(scf.IndexSwitchOp)
    def switch(self, op: scf.IndexSwitchOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`scf.index_switch` as LLVM's `switch`."""
        fn = b.function
        merge = fn.append_basic_block("switch.end")
        default = fn.append_basic_block("switch.default")
        sw = b.switch(vals[op.arg], default)
        regions = [(default, op.default_region)]
        for value, region in zip(op.cases.get_values(), op.case_regions):
            bb = fn.append_basic_block("switch.case")
            sw.add_case(ir.Constant(I64, value), bb)
            regions.append((bb, region))
        self.join_regions(regions, merge, op.output, b, vals)

    @handles(cf.BranchOp)
    def br(self, op: cf.BranchOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`cf.br`: block arguments through the target's phis."""
        self.pass_args(op.successor, op.arguments, b, vals)
        b.branch(self.bbs[op.successor])

    @handles(cf.ConditionalBranchOp)
    def cond_br(self, op: cf.ConditionalBranchOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`cf.cond_br`."""
        self.pass_args(op.then_block, op.then_arguments, b, vals)
        self.pass_args(op.else_block, op.else_arguments, b, vals)
        b.cbranch(vals[op.cond], self.bbs[op.then_block], self.bbs[op.else_block])

    def pass_args(self, target: Block, args: Sequence[SSAValue], b: ir.IRBuilder, vals: Vals) -> None:
        """Add this block's values as incoming to `target`'s argument phis."""
        for a, v in zip(target.args, args):
            ptr_of(vals[a]).add_incoming(ptr_of(vals[v]), b.block)

    # -- affine -------------------------------------------------------------------

    @handles(affine.ApplyOp)
    def affine_apply(self, op: affine.ApplyOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`affine.apply` of a map without symbols."""
        amap = op.map.data
        if amap.num_symbols:
            raise self.fail(f"affine.apply of {amap} with symbols")
        (vals[op.result],) = self.map_indices(b, amap, [vals[v] for v in op.mapOperands])

    def map_indices(self, b: ir.IRBuilder, amap: AffineMap, dims: Sequence[ir.Value]) -> list[ir.Value]:
        """The results of an affine map (without symbols) of the indices `dims`."""
        if amap.num_symbols:
            raise self.fail(f"affine map {amap} with symbols")
        return [self.affine_value(b, e, dims) for e in amap.results]

    def affine_value(self, b: ir.IRBuilder, expr: AffineExpr, dims: Sequence[ir.Value]) -> ir.Value:
        """An affine expression of the loop indices `dims` (`lower-affine`'s semantics:
        `floordiv`/`ceildiv` round toward minus/plus infinity, `mod` is never negative)."""
        if isinstance(expr, AffineDimExpr):
            return dims[expr.position]
        if isinstance(expr, AffineConstantExpr):
            return ir.Constant(I64, expr.value)
        if not isinstance(expr, AffineBinaryOpExpr):
            raise self.fail(f"affine expression {expr} (symbols are not supported)")
        lhs, rhs = self.affine_value(b, expr.lhs, dims), self.affine_value(b, expr.rhs, dims)
        if expr.kind == AffineBinaryOpKind.Add:
            return add(b, lhs, rhs)
        if expr.kind == AffineBinaryOpKind.Mul:
            return mul(b, lhs, rhs)
        if expr.kind == AffineBinaryOpKind.Mod:
            r = b.srem(lhs, rhs)
            return b.select(b.icmp_signed("<", r, ir.Constant(I64, 0)), b.add(r, rhs), r)
        return rounded_div(b, lhs, rhs, floor=expr.kind == AffineBinaryOpKind.FloorDiv)


__all__ = ["ControlHandlers"]
