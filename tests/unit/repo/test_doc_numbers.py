"""Numbers the docs state about the code are the code's: each is read back from
the module that decides it (issue 27: the docs said full unrolling stopped at 4
while the code said 3, and counted 137 ops of a dialect that had 158)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pullback.dialects import pd
from pullback.runtime.native import settings
from pullback.testing.fuzz.specs import BUILT, EXCLUDED, SPECS

ROOT = Path(__file__).resolve().parents[3]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def _mentions(pattern: str) -> list[tuple[str, re.Match[str]]]:
    """Every match of `pattern` (whitespace in it matches any run of whitespace,
    line breaks included) in the docs and the README."""
    rx = re.compile(pattern.replace(" ", r"\s+"))
    return [(doc.name, m) for doc in DOCS for m in rx.finditer(doc.read_text(encoding="utf-8"))]


def test_the_full_unrolling_bound_the_docs_state_is_the_compilers() -> None:
    found = _mentions(r"full unrolling bounded to (?:trip counts of )?(\d+)")
    assert found, "no doc states the full-unrolling bound any more: drop this test or the claim"
    for doc, m in found:
        assert int(m.group(1)) == settings.FULL_UNROLL_MAX_COUNT, (
            f"{doc} says full unrolling stops at {m.group(1)}; "
            f"runtime/native/settings.py FULL_UNROLL_MAX_COUNT = {settings.FULL_UNROLL_MAX_COUNT}"
        )


def test_op_counts_in_the_docs_are_the_dialects() -> None:
    n = len(pd.ALL_OPS)
    found = _mentions(r"the dialect's (\d+) ops") + _mentions(r"(\d+) ops in the dialect")
    assert found, "no doc counts the dialect's ops any more: drop this test or the claim"
    for doc, m in found:
        assert int(m.group(1)) == n, f"{doc} counts {m.group(1)} ops; pd.ALL_OPS has {n}"


def test_the_fuzzer_coverage_the_docs_state_is_the_fuzzers() -> None:
    found = _mentions(r"\((\d+) of the dialect's (\d+) ops fuzzed, (\d+) built, (\d+) excluded\)")
    if not found:
        pytest.fail("docs/testing.md no longer states the fuzzer's coverage: drop this test or the claim")
    ops = list(pd.ALL_OPS)
    want = (sum(t in SPECS for t in ops), len(ops), sum(t in BUILT for t in ops), sum(t in EXCLUDED for t in ops))
    for doc, m in found:
        got = tuple(int(g) for g in m.groups())
        assert got == want, f"{doc} states fuzzed/all/built/excluded {got}; the fuzzer's tables give {want}"
