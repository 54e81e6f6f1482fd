"""The differential fuzzer (`pullback.testing.fuzz`): every dialect op is fuzzed or
excluded with a reason, a bounded run finds nothing, an injected wrong gradient is
found and shrunk to one op, and the seeds of real bugs it found stay fixed.

`PULLBACK_FUZZ_SECONDS` sets the bounded run's length (default 60 s; 0 skips it).
Nightly runs use the command line: `python -m pullback.testing.fuzz --seconds 3600`.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from pullback.dialects import pd
from pullback.passes.vjp import VJP_RULES
from pullback.passes.vjp import load_all as load_vjp_rules
from pullback.testing import fuzz

FUZZ_SECONDS = float(os.environ.get("PULLBACK_FUZZ_SECONDS", "60"))


def test_every_dialect_op_is_fuzzed_built_or_excluded_with_a_reason() -> None:
    """A new op fails here until it gets a spec in `fuzz.SPECS` (or a reason in
    `fuzz.EXCLUDED`)."""
    assert not fuzz.uncovered(), f"ops the fuzzer neither draws nor excludes: {fuzz.uncovered()}"
    both = [t.name for t in fuzz.SPECS if t in fuzz.EXCLUDED or t in fuzz.BUILT]
    assert not both, f"ops both fuzzed and excluded: {both}"
    assert all(len(why) > 20 for why in fuzz.EXCLUDED.values())
    # Host-only ops have no native code to compare: each must be excluded.
    host = [t.name for t in pd.ALL_OPS if getattr(t, "HOST_ONLY", None) and t in fuzz.SPECS]
    assert not host, host


def test_generation_is_deterministic_and_well_typed() -> None:
    """A seed always gives the same program; programs have fan-out, broadcasting
    inputs of several ranks (0-d included) and dynamic batch dimensions."""
    a, b = fuzz.generate(7), fuzz.generate(7)
    assert [(s.op, s.args, s.props) for s in a.steps()] == [(s.op, s.args, s.props) for s in b.steps()]
    ranks, dynamic, fan_out = set(), 0, 0
    for seed in range(40):
        case = fuzz.generate(seed)
        fuzz.build_static(case).module.verify()
        inputs = [it for it in case.items if isinstance(it, fuzz.Input)]
        ranks |= {it.array.ndim for it in inputs}
        dynamic += sum(it.dynamic for it in inputs)
        uses = np.bincount([a for s in case.steps() for a in s.args], minlength=len(case.producers))
        fan_out += int((uses > 1).any())
    assert {0, 1, 2, 3, 4} <= ranks
    assert dynamic >= 5 and fan_out >= 5


def _values(case: fuzz.Case) -> list[np.ndarray]:
    """Every value of a case (float64), computed with the interpreter's kernels."""
    from pullback.frontend.eager import template_for

    arrays: list[np.ndarray] = []
    for it in case.items:
        if isinstance(it, fuzz.Input):
            arrays.append(it.array)
        else:
            ins = [arrays[a] for a in it.args]
            props = {k: "float64" if v == fuzz.FLOAT else v for k, v in it.props.items()}
            arrays.extend(template_for(it.op, ins, props).run(ins))
    return arrays


def test_specs_read_the_op_classes(monkeypatch) -> None:
    """The generic specs cover every op of their dialect base class; operands are
    drawn inside the domain their op declares (`DOMAIN`); a spec drawing what its op
    does not declare is a fuzzer bug (`SpecError`), not a rejected step."""
    generic = [op for op in pd.ELEMENTWISE_OPS if issubclass(op, (pd.ElementwiseUnaryOp, pd.ElementwiseBinaryOp))
               and not issubclass(op, pd.BitwiseOp)]
    assert all(op in fuzz.SPECS for op in generic)
    domain_ops = [op for op in fuzz.SPECS if getattr(op, "DOMAIN", None)]
    checked: set[str] = set()
    for seed in range(40):
        case = fuzz.generate(seed, n_steps=6, ops=domain_ops)
        values = _values(case)
        for st in case.steps():
            irdl = st.op.get_irdl_definition()
            assert irdl is not None
            for (name, _), a in zip(irdl.operands, st.args):
                if name in st.op.DOMAIN and values[a].dtype.kind == "f":
                    assert np.all(st.op.input_domain(name).contains(values[a])), (st.op.name, name, values[a])
                    checked.add(st.op.name)
    assert {"pd.log", "pd.log1p", "pd.asin", "pd.elementwise_div", "pd.cross_entropy"} <= checked, checked
    monkeypatch.setitem(fuzz.SPECS, pd.ReluOp, lambda g: ((g.float_val(),), {"alpha": 0.1}))
    with pytest.raises(fuzz.SpecError, match="undeclared properties"):
        fuzz.generate(0, n_steps=1, ops=[pd.ReluOp])


@pytest.mark.skipif(FUZZ_SECONDS <= 0, reason="PULLBACK_FUZZ_SECONDS=0 turns the bounded run off")
def test_bounded_fuzz_run_finds_nothing(capsys, record_property) -> None:
    """Random programs for FUZZ_SECONDS: compiled = interpreter = eager, gradients =
    float64 finite differences.  Each run starts from a fresh seed (fixed by
    `PULLBACK_FUZZ_SEED`); the seeds it checked are printed and recorded (the
    junit property `fuzz_seeds`), and a failure message holds the shrunk
    reproducers and the command that repeats the run."""
    start, fresh = fuzz.start_seed()
    stats = fuzz.run(seconds=FUZZ_SECONDS, start=start, shrink_s=30)
    seeds = fuzz.seed_range(stats)
    repeat = (f"PULLBACK_FUZZ_SEED={start} PULLBACK_FUZZ_SECONDS={FUZZ_SECONDS:g} "
              "python -m pytest tests/unit/testing/test_fuzz.py -k bounded_fuzz_run")
    record_property("fuzz_seeds", seeds)
    with capsys.disabled():
        print(f"\nfuzz: {stats.programs} programs, seeds {seeds} ({'fresh' if fresh else 'fixed'}); repeat: {repeat}")
    assert not stats.failures, (f"the fuzzer failed on seeds {seeds}; repeat the run: {repeat}\n\n"
                                + "\n\n".join(stats.failures))
    assert stats.programs >= 5 and stats.fd_checked > 0


def test_timed_runs_start_from_fresh_seeds_unless_one_is_set() -> None:
    """Issue 32: the suite's bounded run fuzzed seeds 0, 1, ... every time (it could
    only find what the first run found)."""
    drawn = {fuzz.start_seed({})[0] for _ in range(8)}
    assert len(drawn) > 1 and all(fuzz.start_seed({})[1] for _ in range(2))
    assert fuzz.start_seed({"PULLBACK_FUZZ_SEED": "123"}) == (123, False)
    assert fuzz.start_seed({"PULLBACK_FUZZ_START": "7"}) == (7, False)
    with pytest.raises(ValueError, match="PULLBACK_FUZZ_SEED"):
        fuzz.start_seed({"PULLBACK_FUZZ_SEED": "soon"})
    stats = fuzz.run(seeds=[5, 6], ops=[pd.TanhOp], eager=False)
    assert stats.seeds == [5, 6] and fuzz.seed_range(stats) == "5..6"


def test_a_wrong_gradient_is_found_and_shrunk_to_one_op(monkeypatch) -> None:
    """Inject a VJP bug (sin's derivative as sin instead of cos): the fuzzer reports
    it against finite differences, shrunk to the one op, with a replay command."""
    from pullback.frontend.autograd import plan_cache

    load_vjp_rules()
    # Eager backward plans are cached by graph shape, not by rule: keep the wrong
    # rule's plans out of the cache later tests use.
    monkeypatch.setattr(plan_cache, "_PLANS", {})

    def wrong(b, op, grads):  # type: ignore[no-untyped-def]
        return [b.mul(grads[0], b.emit(pd.SinOp, op.x))]

    monkeypatch.setitem(VJP_RULES, pd.SinOp, wrong)
    ops = [pd.SinOp, pd.ElementwiseAddOp, pd.ReduceSumOp]
    case = next(c for c in (fuzz.generate(s, n_steps=4, ops=ops) for s in range(50))
                if pd.SinOp in [st.op for st in c.steps()] and len(c.steps()) >= 3)
    with pytest.raises(fuzz.Mismatch, match="finite differences") as info:
        fuzz.check_case(case, eager=False)
    small = fuzz.shrink(case, f"Mismatch: {info.value}", budget_s=60)
    report = fuzz.reproducer(small, str(info.value))
    assert "pd.sin" in report and "minimal program (1 ops)" in report, report
    assert "replay: python -m pullback.testing.fuzz --seed" in report


def test_a_kernel_disagreeing_with_compiled_code_is_found(monkeypatch) -> None:
    """Inject an interpreter bug (tanh computing sinh): compiled vs interpreter."""
    from pullback.runtime.interpreter import KERNELS
    from pullback.runtime.kernels import load_all

    from pullback.frontend import eager
    from pullback.frontend.autograd import plan_cache

    load_all()
    # Eager templates and backward plans bind their kernels when made: give the
    # injected kernel caches of its own, so no later test meets a sinh "tanh".
    monkeypatch.setattr(eager, "_TEMPLATES", {})
    monkeypatch.setattr(plan_cache, "_PLANS", {})
    monkeypatch.setitem(KERNELS, pd.TanhOp, lambda op, x: np.sinh(x))
    case = fuzz.generate(0, n_steps=1, ops=[pd.TanhOp])
    with pytest.raises(fuzz.Mismatch, match="compiled vs interpreter: pd.tanh"):
        fuzz.check_case(case, eager=False)


# The fuzzer's findings, as it shrank them (fixed at the root; docs/testing.md).
R = np.random.default_rng(0)
FOUND = {
    "cumprod's gradient at an exact zero was NaN (Paddle's formula g*out/x)": fuzz.case_from(
        [R.standard_normal((1, 2, 4))],
        [(pd.ElementwiseSubOp, [0, 0], {}), (pd.CumprodOp, [1], {"axis": -2, "reverse": True})]),
    "reduce_prod's gradient at an exact zero was NaN": fuzz.case_from(
        [R.standard_normal((3, 2))],
        [(pd.ReluOp, [0], {}), (pd.ReduceProdOp, [1], {"axis": [0]})]),
    "softmax's gradient on a 0-d value raised numpy's AxisError (reduce over axis -1 of a 0-d)": fuzz.case_from(
        [np.array(-1.5)], [(pd.SoftmaxOp, [0], {}), (pd.LogSoftmaxOp, [0], {"axis": 0})], terms=[1, 2]),
    "max pooling over a window wholly in the padding raised numpy's zero-size error (compiled: -inf)": fuzz.case_from(
        [R.standard_normal((1, 2, 3, 2))],
        [(pd.Pool2DOp, [0], {"pooling_type": "max", "ksize": [1, 2], "paddings": [1, 0], "strides": [1, 2]}),
         (pd.Pool2DOp, [0], {"pooling_type": "avg", "ksize": [1, 2], "paddings": [1, 0], "strides": [1, 2],
                             "exclusive": False})], terms=[2]),
    "cross-entropy gradients refused a class dimension of dynamic size (NotImplementedError)": fuzz.case_from(
        [R.uniform(0.1, 1, (5,)), np.array([3])],
        [(pd.SoftmaxWithCrossEntropyOp, [0, 1], {}), (pd.CrossEntropyOp, [0, 1], {"ignore_index": 2})],
        terms=[3, 4], dynamic=[0]),
    # LLVM's SLP vectorizer aborted the process (an assertion, llvm/llvm-project#177124)
    # optimizing this program's code; runtime/native/settings.py keeps it off (SLP_VECTORIZE).
    "the compiled backend's LLVM aborted the process on a strided VALID conv2d program": fuzz.case_from(
        [R.standard_normal((1, 4)), R.standard_normal((1, 1, 3, 5)), R.standard_normal((2, 1, 1, 3))],
        [(pd.Conv2DOp, [1, 2], {"strides": [2, 2], "padding_algorithm": "VALID", "paddings": [1, 1, 1, 1]})],
        terms=[0, 3]),
}


@pytest.mark.parametrize("what", sorted(FOUND))
def test_findings_stay_fixed(what: str) -> None:
    fuzz.check_case(FOUND[what])


def test_command_line_lists_coverage_and_replays_a_seed(capsys) -> None:
    assert fuzz.main(["--coverage"]) == 0
    out = capsys.readouterr().out
    assert "pd.conv2d" in out and "fuzzed" in out and "collective" in out
    assert fuzz.main(["--seed", "3", "--no-eager"]) == 0
    assert "1 programs" in capsys.readouterr().out
