"""The project's differential fuzzer: random well-typed `pd` programs, every backend
against every other and against float64 finite differences.

A *case* is a seeded random program: float inputs (some with a dynamic batch
dimension, some 0-d, some trainable parameters), integer ids and labels, and a
chain of steps, each one op of the dialect with random options, whose operands are
drawn from every value made so far (fan-out) with broadcasting shapes.  Its loss is
`sum_k reduce_sum(v_k * P_k)` over the unused float values and a random share of the
others (fixed random projections `P_k`).  `check_case` then runs

* the static program (with its `pd.backward` filled by the `autodiff` pass) on the
  reference interpreter and on the compiled backend (LLVM), comparing every value,
  its shape (0-d stays 0-d) and dtype, and every gradient;
* the gradients against central finite differences of the loss in float64, element
  by element, skipping elements where the one-sided differences disagree (a kink:
  relu at 0, a max tie, a floor step);
* the same program in eager mode (Tensors, `paddle.grad`) against the interpreter.

Every op of the dialect is either fuzzed (`SPECS`, keyed by op class: the function
that draws its operands and options), built by the fuzzer itself (`BUILT`), or
excluded with a reason (`EXCLUDED`); `uncovered()` names any other op, and a unit
test fails on it, so a new op cannot escape.  What a spec can read from its op
class it does: which ops a generic spec covers (the dialect's base classes), each
operand's input domain (`DOMAIN`), integer inputs (`INT_INPUT`), boolean options
and defaults; every draw is checked against the op's declared operands and
properties.

A failing case is shrunk by deleting steps (and the steps that used them) and loss
terms while it still fails, and reported with its IR, its feeds and the command
that replays it (`python -m pullback.testing.fuzz --seed N`).

The modules, by concern:

* `case`: the data (`Case` of `Input`s and `Step`s, `Stats`);
* `gen`: what specs draw with (`Gen`, value predicates, `Draw` of a domain);
* `specs/`: the coverage table and one module of specs per op family;
* `generate`: `generate(seed)`, `case_from` (hand-written cases);
* `check`: `build_static`, `check_case`, `Mismatch`;
* `shrink`: `shrink`, `reproducer`;
* `cli`: `run` and the command line (`__main__`).
"""

from .case import FLOAT, Case, Input, Item, Stats, Step
from .check import Mismatch, Static, build_static, check_case
from .cli import main, run, seed_range, start_seed
from .gen import Draw, Gen, Rejected, Spec, Val
from .generate import SpecError, case_from, check_draw, generate
from .shrink import reproducer, shrink
from .specs import BUILT, EXCLUDED, SPECS, uncovered

__all__ = [
    "BUILT",
    "EXCLUDED",
    "FLOAT",
    "SPECS",
    "Case",
    "Draw",
    "Gen",
    "Input",
    "Item",
    "Mismatch",
    "Rejected",
    "Spec",
    "SpecError",
    "Static",
    "Stats",
    "Step",
    "Val",
    "build_static",
    "case_from",
    "check_case",
    "check_draw",
    "generate",
    "main",
    "reproducer",
    "run",
    "seed_range",
    "shrink",
    "start_seed",
    "uncovered",
]
