"""A traced function as a compiled forward and backward: `ConcreteProgram`.

`paddle.jit.to_static` traces a Python function once per input signature into a
static `Program` (`frontend/jit/static_function.py`).  This module turns such a
program into what the eager engine can call as ONE op, `pd.run_program`:

* the *forward module*: the program with `pd.fetch`es of the function's outputs,
  of the forward values its backward reads and of the new values of state it
  updates (batch-norm running statistics);
* the *backward modules*: the `pd.backward` region that the `autodiff` pass fills
  for the outputs with respect to every float operand, cut out of the program into
  a module of its own whose feeds are the operands, the forward results and the
  output gradients; a module per set of wanted gradients is derived from it by
  dead-code elimination (so a frozen input costs nothing).

Both run on the executor's default backend (native code on the CPU), with the
parameters read from the eager Tensors themselves.  The eager engine records the
`pd.run_program` op like any other; its VJP rule emits `pd.run_program_grad`,
which runs the backward module, so `loss.backward()` puts the gradients on the
eager parameters and `optimizer.step()` updates them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import VerifyException

from pullback.dialects import pd
from pullback.dialects.pd.base import dtype_name, elem_of, is_inexact, shape_of, shapes_compatible, value_name
from pullback.frontend.framework import Program
from pullback.passes.autodiff import AutodiffError, differentiate

_keys = itertools.count()
_MISSING = object()


def _backend() -> Any:
    from pullback.runtime.executor import CPUPlace, default_backend, make_backend

    return make_backend(default_backend(CPUPlace()), CPUPlace())


class ConcreteProgram:
    """One traced signature of a function, compiled (see the module docstring).

    `inputs` are the program's feeds for the function's tensor arguments, in
    order; `params` the `pd.parameter` names of the eager Tensors it read
    (`captured`, same order); `outputs` the values it returns.  The operands of
    its `pd.run_program` are the argument tensors, then the captured ones."""

    def __init__(self, program: Program, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue],
                 params: Sequence[str], captured: Sequence[Any], where: str = "function") -> None:
        self.program = program
        self.where = where
        self.captured = list(captured)
        self.input_values = list(inputs)
        self.output_values = list(outputs)
        self.param_names = list(params)
        self.key = f"{where}#{next(_keys)}"
        self.n_inputs = len(inputs)
        self.out_struct: Any = None
        self.n_outputs = len(outputs)
        self._backend = _backend()
        self._compiled: dict[Any, Any] = {}
        self._grad_modules: dict[tuple[int, ...], tuple[ModuleOp, list[SSAValue], list[str]]] = {}
        self._build(inputs, outputs)
        pd.RUN_PROGRAMS[self.key] = self

    # -- Paddle's ConcreteProgram attributes ---------------------------------------

    @property
    def main_program(self) -> Program:
        """The traced forward Program."""
        return self.program

    @property
    def startup_program(self) -> Program:
        """An empty Program: parameters live in the eager Tensors."""
        return Program()

    @property
    def inputs(self) -> list[Any]:
        """The program's feed Variables (the function's tensor arguments)."""
        block = self.program.global_block()
        return [block.wrap(v) for v in self.input_values]

    @property
    def outputs(self) -> list[Any]:
        """The program's output Variables."""
        block = self.program.global_block()
        return [block.wrap(v) for v in self.output_values]

    @property
    def parameters(self) -> list[Any]:
        """The eager Tensors the program reads (parameters, buffers, constants)."""
        return [t for t in self.captured if not t.name.startswith("_jst.seed_")]

    # -- building ------------------------------------------------------------------

    def _build(self, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> None:
        mapping: dict[SSAValue, SSAValue] = {}
        module = self.program.module.clone(value_mapper=mapping)
        block = module.body.block
        params = {op.var_name.data: op.out for op in block.ops if isinstance(op, pd.ParameterOp)}
        operands = [mapping[v] for v in inputs] + [params[n] for n in self.param_names]
        self.operand_types: list[Attribute] = [v.type for v in operands]
        outs = [mapping[v] for v in outputs]
        # State the program overwrites (named like the persistable it updates).
        updates: dict[str, SSAValue] = {}
        for op in block.ops:
            if isinstance(op, (pd.ParameterOp, pd.DataOp)):
                continue
            for r in op.results:
                n = value_name(r)
                if n is not None and n in params:
                    updates[n] = r
        self.update_names = list(updates)
        # The backward with respect to every float operand, filled by autodiff.
        wrt = [v for v in operands if is_inexact(elem_of(v.type))]
        targets = [v for v in outs if is_inexact(elem_of(v.type))]
        seeds: list[SSAValue | None] = []
        seed_index: dict[SSAValue, int] = {}
        for k, v in enumerate(outs):
            if v in targets:
                d = pd.DataOp.make(f"__seed_{k}", [d if d >= 0 else -1 for d in shape_of(v.type)],
                                   dtype_name(elem_of(v.type)))
                block.add_op(d)
                seed_index[d.out] = k
                seeds.append(d.out)
        saved: list[SSAValue] = []
        region_module: ModuleOp | None = None
        grad_feeds: list[str] = []
        if wrt and targets:
            bw = pd.BackwardOp.make(targets, wrt, seeds)
            block.add_op(bw)
            try:
                bw = differentiate(bw)
            except AutodiffError as e:
                raise RuntimeError(f"paddle.jit.to_static: cannot differentiate {self.where}: {e}") from None
            region_module, saved, grad_feeds = self._cut_backward(bw, operands, outs, seed_index)
            wrt_pos = [operands.index(v) for v in bw.wrt]
            bw.detach()
            bw.erase()
            self._full_wrt = wrt_pos
        else:
            self._full_wrt = []
        for seed in seed_index:
            owner = seed.owner
            assert isinstance(owner, pd.DataOp)
            owner.detach()
            owner.erase()
        self.n_saved = len(saved)
        # Without gradients (no_grad, eval, frozen inputs) nothing needs saving.
        infer_map: dict[SSAValue, SSAValue] = {}
        infer = module.clone(value_mapper=infer_map)
        infer_fetches = [pd.FetchOp.create(operands=[infer_map[v]]) for v in [*outs, *updates.values()]]
        infer.body.block.add_ops(infer_fetches)
        self.inference = _Inference(self, infer, [f.x for f in infer_fetches])
        fetched = [*outs, *saved, *updates.values()]
        self.result_types_: list[Attribute] = [v.type for v in fetched]
        fetch_ops = [pd.FetchOp.create(operands=[v]) for v in fetched]
        block.add_ops(fetch_ops)
        self.forward_module = module
        self.forward_fetches = [f.x for f in fetch_ops]
        self.feed_names = [value_name(v) or f"__in_{i}" for i, v in enumerate(operands[: self.n_inputs])]
        self._full_backward = (region_module, grad_feeds)

    def _cut_backward(
        self, bw: pd.BackwardOp, operands: list[SSAValue], outs: list[SSAValue],
        seed_index: dict[SSAValue, int],
    ) -> tuple[ModuleOp, list[SSAValue], list[str]]:
        """The filled region of `bw` as a module of its own: a feed per outside value
        it reads, named after where the caller finds it (`__in_k`: operand k,
        `__out_k`: forward result k, `__seed_k`: gradient of output k); returns the
        module, the forward values to save and the feed names."""
        inner: set[SSAValue] = set()
        for op in bw.body.walk():
            inner.update(op.results)
            for r in op.regions:
                for b in r.blocks:
                    inner.update(b.args)
        inner.update(bw.body.block.args)
        outside: list[SSAValue] = []
        for op in bw.body.walk():
            for v in op.operands:
                if v not in inner and v not in outside:
                    outside.append(v)
        saved: list[SSAValue] = []
        names: list[str] = []
        for v in outside:
            if v in seed_index:
                names.append(f"__seed_{seed_index[v]}")
            elif v in operands:
                names.append(f"__in_{operands.index(v)}")
            elif v in outs:
                names.append(f"__out_{outs.index(v)}")
            else:
                names.append(f"__out_{len(outs) + len(saved)}")
                saved.append(v)
        mapping: dict[SSAValue, SSAValue] = {}
        module = ModuleOp([])
        block = module.body.block
        for v, n in zip(outside, names):
            d = pd.DataOp.make(n, [x if x >= 0 else -1 for x in shape_of(v.type)], dtype_name(elem_of(v.type)))
            block.add_op(d)
            mapping[v] = d.out
        region_ops = list(bw.body.block.ops)
        term = region_ops.pop()
        for op in region_ops:
            block.add_op(op.clone(value_mapper=mapping))
        block.add_ops([pd.FetchOp.create(operands=[mapping.get(v, v)]) for v in term.operands])
        return module, saved, names

    def _grad_module(self, wrt: tuple[int, ...]) -> tuple[ModuleOp, list[SSAValue], list[str]]:
        """The backward module computing the gradients of operands `wrt` only."""
        hit = self._grad_modules.get(wrt)
        if hit is not None:
            return hit
        full, _ = self._full_backward
        if full is None or any(i not in self._full_wrt for i in wrt):
            raise RuntimeError(f"paddle.jit.to_static: {self.where} has no gradient for operands {list(wrt)}")
        module = full.clone()
        block = module.body.block
        fetches = [op for op in block.ops if isinstance(op, pd.FetchOp)]
        keep = [fetches[self._full_wrt.index(i)] for i in wrt]
        for f in fetches:
            if f not in keep:
                f.detach()
                f.erase()
        ctx = Context()
        ctx.load_dialect(pd.PD)
        DeadCodeElimination().apply(ctx, module)
        for op in list(block.ops):
            if isinstance(op, pd.DataOp) and not any(True for _ in op.out.uses):
                op.detach()
                op.erase()
        feeds = [op.var_name.data for op in block.ops if isinstance(op, pd.DataOp)]
        entry = (module, [f.x for f in keep], feeds)
        self._grad_modules[wrt] = entry
        return entry

    # -- pd.run_program's ProgramFunction protocol ---------------------------------

    @property
    def grad_positions(self) -> list[int]:
        """The operands the outputs depend on differentiably."""
        return list(self._full_wrt)

    def result_types(self, operand_types: Sequence[Attribute]) -> list[Attribute]:
        """The forward results' types, after checking the operands fit the trace."""
        if len(operand_types) != len(self.operand_types):
            raise VerifyException(
                f"'pd.run_program': {self.where} takes {len(self.operand_types)} tensors, got {len(operand_types)}"
            )
        for i, (got, want) in enumerate(zip(operand_types, self.operand_types)):
            if not isinstance(got, TensorType) or elem_of(got) != elem_of(want) or not shapes_compatible(
                shape_of(got), shape_of(want)
            ):
                raise VerifyException(
                    f"'pd.run_program': input #{i} of {self.where} has type {got}, the traced program expects {want}"
                )
        return list(self.result_types_)

    def _scope(self, arrays: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
        scope = dict(zip(self.param_names, arrays[self.n_inputs:]))
        for n in self.update_names:
            # Native code updates state in place: never in the caller's array,
            # which recorded eager ops may have saved.
            scope[n] = np.array(scope[n], copy=True)
        return scope

    def _execute(self, module: ModuleOp, fetches: Sequence[SSAValue], feeds: dict[str, np.ndarray],
                 scope: dict[str, np.ndarray]) -> list[np.ndarray]:
        """Run `module` on the backend.  The native program is looked up once per
        feed signature and then called directly: the backend's own lookup walks
        the module on every call, which costs as much as a small step."""
        key = (id(module), tuple((n, a.dtype.str, a.ndim) for n, a in feeds.items()))
        compiled = self._compiled.get(key, _MISSING)
        if compiled is _MISSING:
            program_for = getattr(self._backend, "program_for", None)
            compiled = None if program_for is None else program_for(module, fetches, feeds)
            self._compiled[key] = compiled
        if compiled is None:
            return list(self._backend.run(module, feeds, scope, fetches))
        from pullback.runtime.native.program import execute

        return list(execute(compiled, feeds, scope))

    def run(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run the forward module: outputs, saved values, state updates."""
        feeds = dict(zip(self.feed_names, arrays[: self.n_inputs]))
        return self._execute(self.forward_module, self.forward_fetches, feeds, self._scope(arrays))

    def run_grad(self, wrt: Sequence[int], arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run the backward module for the operands `wrt` (see `ProgramFunction`)."""
        module, fetches, feeds = self._grad_module(tuple(wrt))
        n_ops, n_res = len(self.operand_types), len(self.result_types_)
        given: dict[str, np.ndarray] = {}
        for name in feeds:
            kind, k = name[2:].rsplit("_", 1)
            i = int(k)
            if kind == "in":
                given[name] = arrays[i]
            elif kind == "out":
                given[name] = arrays[n_ops + i]
            else:
                given[name] = arrays[n_ops + n_res + self._seed_position(i)]
        return self._execute(module, fetches, given, {})

    def _seed_position(self, output: int) -> int:
        """The position among the output gradients of output `output`'s gradient
        (every output gets one, zeros when nothing flowed into it)."""
        return output

    def release(self) -> None:
        """Forget the registration (ops naming this program stop verifying)."""
        pd.RUN_PROGRAMS.pop(self.key, None)
        pd.RUN_PROGRAMS.pop(self.inference.key, None)


class _Inference:
    """The forward of a `ConcreteProgram` without the values its backward reads:
    what `pd.run_program` calls when no operand needs a gradient.  Results: the
    outputs, then the state updates."""

    def __init__(self, owner: ConcreteProgram, module: ModuleOp, fetches: list[SSAValue]) -> None:
        self.owner = owner
        self.module = module
        self.fetches = fetches
        self.key = owner.key + "/inference"
        self.n_outputs = owner.n_outputs
        self.grad_positions: list[int] = []
        pd.RUN_PROGRAMS[self.key] = self

    def result_types(self, operand_types: Sequence[Attribute]) -> list[Attribute]:
        """The outputs' and updates' types (operands checked as the owner does)."""
        types = self.owner.result_types(operand_types)
        n_out, n_saved = self.owner.n_outputs, self.owner.n_saved
        return types[:n_out] + types[n_out + n_saved:]

    def run(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Outputs and state updates."""
        o = self.owner
        feeds = dict(zip(o.feed_names, arrays[: o.n_inputs]))
        return o._execute(self.module, self.fetches, feeds, o._scope(arrays))

    def run_grad(self, wrt: Sequence[int], arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Never called: the op is only used when nothing needs a gradient."""
        raise RuntimeError(f"paddle.jit.to_static: {self.owner.where} ran without gradients")


__all__ = ["ConcreteProgram"]
