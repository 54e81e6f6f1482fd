"""Shrinking a failing case and reporting it.

`shrink` deletes steps (with every step that used their values, and inputs nobody
reads any more: `without`), cuts steps (a step's result fed as an input holding its
value, so the steps before it that only it read fall away: `cut`) and deletes loss
terms, while the case still fails with an error of the same kind.  `reproducer`
gives the result in words: the error, the minimal program's IR, its feeds and the
command that replays the seed.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from .case import Case, Input, Item, Step, cast_input, resolve
from .check import build_static, check_case


def without(case: Case, drop_items: set[int], drop_terms: frozenset[int] | set[int] = frozenset()) -> Case | None:
    """The case with items `drop_items` removed, and every step that used one of
    their values; None when no loss term is left."""
    dead_items = set(drop_items)
    dead_values: set[int] = set()
    for k, it in enumerate(case.items):
        if isinstance(it, Step) and any(a in dead_values for a in it.args):
            dead_items.add(k)
        if k in dead_items:
            dead_values.update(v for v, (i, _) in enumerate(case.producers) if i == k)
    # Inputs nobody reads any more go too (unless a loss term reads them).
    terms = [t for t in case.terms if t not in dead_values and t not in drop_terms]
    used = {a for k, it in enumerate(case.items) if isinstance(it, Step) and k not in dead_items for a in it.args}
    for k, it in enumerate(case.items):
        if isinstance(it, Input):
            v = next(v for v, (i, _) in enumerate(case.producers) if i == k)
            if v not in used and v not in terms:
                dead_items.add(k)
    if not terms:
        return None
    keep = [k for k in range(len(case.items)) if k not in dead_items]
    new_index = {old: new for new, old in enumerate(keep)}
    value_map: dict[int, int] = {}
    producers: list[tuple[int, int]] = []
    for v, (i, r) in enumerate(case.producers):
        if i in new_index:
            value_map[v] = len(producers)
            producers.append((new_index[i], r))
    items: list[Item] = []
    for k in keep:
        it = case.items[k]
        items.append(replace(it, args=tuple(value_map[a] for a in it.args)) if isinstance(it, Step) else it)
    return Case(case.seed, case.dtype, items, producers, [value_map[t] for t in terms],
                {value_map[t]: case.projections[t] for t in terms})


def cut(case: Case, k: int) -> Case | None:
    """The case with step k's (single) result fed as an input holding its value:
    the steps only it read become dead weight that deletion removes."""
    it = case.items[k]
    if not isinstance(it, Step) or sum(1 for i, _ in case.producers if i == k) != 1:
        return None
    from pullback.frontend.eager import template_for

    arrays: list[np.ndarray] = []
    value: np.ndarray | None = None
    with np.errstate(all="ignore"):
        for i, item in enumerate(case.items[:k + 1]):
            if isinstance(item, Input):
                arrays.append(item.array)
                continue
            ins = [arrays[a] for a in item.args]
            outs = template_for(item.op, ins, resolve(item.props, "float64")).run(ins)
            if i == k:
                value = outs[0]
            arrays.extend(outs)
    assert value is not None
    items = list(case.items)
    items[k] = Input(np.asarray(value), grad=value.dtype.kind == "f")
    return replace(case, items=items)


def failure(case: Case, **kw: Any) -> str | None:
    """`check_case`'s error as `'Kind: message'`, or None when the case passes."""
    try:
        check_case(case, **kw)
    except Exception as e:  # noqa: BLE001 - any failure counts; the report shows it
        return f"{type(e).__name__}: {e}"
    return None


def shrink(case: Case, first: str, budget_s: float = 60.0) -> Case:
    """The smallest case found (deleting steps, then loss terms) that still fails
    with an error of the same kind as `first`."""
    kind = first.split(":", 1)[0]
    t_end = time.monotonic() + budget_s
    changed = True
    while changed and time.monotonic() < t_end:
        changed = False
        for k in reversed(range(len(case.items))):
            if k >= len(case.items) or time.monotonic() > t_end:
                continue
            for cand in (without(case, {k}), cut(case, k)):
                if cand is None:
                    continue
                err = failure(cand)
                if err is not None and err.split(":", 1)[0] == kind:
                    case, changed = cand, True
                    break
        for t in list(case.terms):
            if len(case.terms) > 1 and time.monotonic() < t_end:
                smaller = without(case, set(), {t})
                err = None if smaller is None else failure(smaller)
                if smaller is not None and err is not None and err.split(":", 1)[0] == kind:
                    case, changed = smaller, True
    return case


def reproducer(case: Case, error: str) -> str:
    """A failing case in words: the error, the IR, the feeds, how to replay it."""
    lines = [f"fuzz seed {case.seed} ({case.dtype}): {error}",
             f"minimal program ({len(case.steps())} ops):"]
    try:
        st = build_static(case)
        lines.append(str(st.module))
    except Exception as e:  # noqa: BLE001 - the report must come out whatever failed
        lines.append(f"(the static program does not build: {e})")
        lines += [f"  {s.op.name}{list(s.args)} {s.props}" for s in case.steps()]
    with np.printoptions(precision=17, threshold=200):
        for k, it in enumerate(case.items):
            if isinstance(it, Input):
                lines.append(f"in{k} = np.{np.asarray(cast_input(it.array, case.dtype))!r}")
    lines.append(f"replay: python -m pullback.testing.fuzz --seed {case.seed}")
    return "\n".join(lines)


__all__ = ["cut", "failure", "reproducer", "shrink", "without"]
