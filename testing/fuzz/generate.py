"""Program generation: `generate(seed)` draws a seeded random case from the specs,
`case_from` writes one by hand (the regression cases of the fuzzer's findings).

Each step is drawn by its op's spec, checked against the op class (as many
operands as it declares, only declared properties: `check_draw`), run on the
interpreter's kernels (through the eager templates) to get its values, and typed by
the op's own typing rule on placeholders of the operands' declared types, so that a
result's declared shape (`?` included) is the op's, not the fuzzer's.  A step whose
spec rejects the values at hand, whose typing fails, or whose results are not
finite or exceed 1e6 is dropped (and counted in `Stats.rejected`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import Block, SSAValue
from xdsl.irdl import OptOperandDef, VarOperandDef
from xdsl.utils.exceptions import VerifyException

from pullback.dialects import pd

from .case import Case, Input, Stats, Step, dtype_of, resolve
from .gen import Gen, Rejected, Val
from .specs import SPECS


class SpecError(Exception):
    """A spec drew operands or properties its op does not declare (a fuzzer bug,
    never taken for a rejection)."""


def operand_arity(op: type[pd.PdOp]) -> tuple[int, int | None]:
    """How many operands the op class declares: (at least, at most or None)."""
    least, most = 0, 0
    variadic = False
    irdl = op.get_irdl_definition()
    assert irdl is not None, op
    for _, d in irdl.operands:
        if isinstance(d, OptOperandDef):
            most += 1
        elif isinstance(d, VarOperandDef):
            variadic = True
        else:
            least += 1
            most += 1
    return least, None if variadic else most


def check_draw(op: type[pd.PdOp], args: Sequence[int], props: dict[str, Any]) -> None:
    """Raise SpecError unless a spec's draw fits the op class's declaration."""
    least, most = operand_arity(op)
    if len(args) < least or (most is not None and len(args) > most):
        raise SpecError(f"{op.name}: the spec drew {len(args)} operands; the op takes "
                        f"{least}{'+' if most is None else '' if most == least else f' to {most}'}")
    unknown = sorted(set(props) - set(op.prop_specs()))
    if unknown:
        raise SpecError(f"{op.name}: the spec drew undeclared properties {unknown}")


def _placeholders(decls: Sequence[tuple[tuple[int | None, ...], str]]) -> list[SSAValue]:
    types = [pd.tensor(shape, pd.dtype_from_name(dt)) for shape, dt in decls]
    return list(Block(arg_types=types).args)


def generate(seed: int, n_steps: int | None = None, stats: Stats | None = None,
             ops: Sequence[type[pd.PdOp]] | None = None) -> Case:
    """The random program of `seed` (deterministic), its steps drawn from `ops`
    (default: every op of `SPECS`)."""
    from pullback.frontend.eager import template_for

    g = Gen(seed, "float64")
    g.case.dtype = "float32" if g.coin(0.25) else "float64"
    for _ in range(g.randint(1, 2)):
        shape = g.shape()
        g.add_input(g.floats(shape), dynamic=None, param=bool(shape) and g.coin(0.2))
    ops = sorted(ops or SPECS, key=lambda t: t.name)
    target = n_steps if n_steps is not None else g.randint(3, 10)
    made, tries = 0, 0
    while made < target and tries < 10 * target:
        tries += 1
        op = g.choice(ops)
        mark = (len(g.case.items), len(g.case.producers), len(g.vals))
        try:
            args, props = SPECS[op](g)
            check_draw(op, args, props)
            arrays = [g.val(a).array for a in args]
            with np.errstate(all="ignore"):
                tpl = template_for(op, arrays, resolve(props, "float64"))
                outs = tpl.run(arrays)
            decls = [(g.val(a).decl, dtype_of(g.val(a).array, "float64")) for a in args]
            dyn_op = op.make(*_placeholders(decls), **resolve(props, "float64"))
        except (Rejected, ValueError, VerifyException, IndexError, TypeError) as e:
            if stats is not None:
                stats.rejected[f"{op.name}: {type(e).__name__}: {str(e)[:120]}"] += 1
            del g.case.items[mark[0]:], g.case.producers[mark[1]:], g.vals[mark[2]:]
            continue
        if any(o.dtype.kind == "f" and (not np.all(np.isfinite(o)) or np.any(np.abs(o) > 1e6)) for o in outs):
            if stats is not None:
                stats.rejected[f"{op.name}: values out of range"] += 1
            del g.case.items[mark[0]:], g.case.producers[mark[1]:], g.vals[mark[2]:]
            continue
        g.case.items.append(Step(op, tuple(args), props))
        g.consumed.update(args)
        for r, (o, res) in enumerate(zip(outs, dyn_op.results)):
            g.case.producers.append((len(g.case.items) - 1, r))
            decl = tuple(None if d == pd.DYN else d for d in pd.shape_of(res.type))
            g.vals.append(Val(np.asarray(o), decl))
        made += 1
    # Float results of the case's type (not pd.accuracy's fixed float32).
    floats = [i for i, v in enumerate(g.vals) if v.array.dtype == np.float64 and v.array.size > 0]
    terms = [i for i in floats if i not in g.consumed or g.coin(0.3)]
    g.case.terms = terms or floats[-1:]
    g.case.projections = {t: g.rng.standard_normal(g.vals[t].array.shape) for t in g.case.terms}
    return g.case


def case_from(inputs: Sequence[np.ndarray], steps: Sequence[tuple[type[pd.PdOp], Sequence[int], dict[str, Any]]],
              terms: Sequence[int] | None = None, dtype: str = "float64", seed: int = 0,
              dynamic: Sequence[int] = ()) -> Case:
    """A hand-written case (a regression test of a fuzzer finding): `inputs` are
    values 0.., each step's results are numbered after them; the loss projects
    `terms` (default: the last value) with seeded random projections; the inputs
    numbered in `dynamic` declare dimension 0 dynamic."""
    from pullback.frontend.eager import template_for

    rng = np.random.default_rng(seed)
    case = Case(seed, dtype)
    arrays: list[np.ndarray] = []
    for k, a in enumerate(inputs):
        case.items.append(Input(np.asarray(a), dynamic=k in dynamic, grad=np.asarray(a).dtype.kind == "f"))
        case.producers.append((len(case.items) - 1, 0))
        arrays.append(np.asarray(a))
    for op, args, props in steps:
        check_draw(op, args, dict(props))
        outs = template_for(op, [arrays[a] for a in args], resolve(props, "float64")).run([arrays[a] for a in args])
        case.items.append(Step(op, tuple(args), dict(props)))
        for r, o in enumerate(outs):
            case.producers.append((len(case.items) - 1, r))
            arrays.append(o)
    case.terms = list(terms) if terms is not None else [len(arrays) - 1]
    case.projections = {t: rng.standard_normal(arrays[t].shape) for t in case.terms}
    return case


__all__ = ["SpecError", "case_from", "check_draw", "generate", "operand_arity"]
