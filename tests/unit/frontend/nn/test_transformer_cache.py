"""Incremental decoding with `MultiHeadAttention.Cache` / `StaticCache` and the
`gen_cache` methods (frontend/transformer.py): step-by-step decoding equals full causal
decoding, and every output matches real Paddle 3.3.1 for the same weights
(`data/transformer_cache_reference.npz`, written by `gen_transformer_cache_reference.py`
from the shared `transformer_cache_cases.py`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core

HERE = Path(__file__).resolve().parent
REF = np.load(HERE / "data" / "transformer_cache_reference.npz")

_spec = importlib.util.spec_from_file_location("transformer_cache_cases", HERE / "transformer_cache_cases.py")
assert _spec is not None and _spec.loader is not None
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_cache_case_matches_paddle(name: str) -> None:
    got = cases.CASES[name](paddle)
    for key, value in got.items():
        np.testing.assert_allclose(value, REF[f"{name}/{key}"], rtol=1e-5, atol=2e-6, err_msg=f"{name}/{key}")


def test_incremental_decoding_equals_full_causal_decoding() -> None:
    got = cases.decoder(paddle)
    np.testing.assert_allclose(got["incremental"], got["full"], rtol=1e-5, atol=2e-6)
    assert list(got["cache_lengths"]) == [1, 2, 3, 4]


def test_cache_types_and_shapes() -> None:
    m = paddle.nn.MultiHeadAttention(8, 2)
    x = paddle.randn([3, 5, 8])
    empty = m.gen_cache(x)
    assert type(empty) is paddle.nn.MultiHeadAttention.Cache and empty._fields == ("k", "v")
    assert empty.k.shape == [3, 2, 0, 4]
    static = m.gen_cache(x, x, type=m.StaticCache)
    assert isinstance(static, paddle.nn.MultiHeadAttention.StaticCache) and static.v.shape == [3, 2, 5, 4]
    out, grown = m(x, cache=empty)  # no need_weights: (out, cache)
    assert out.shape == [3, 5, 8] and grown.k.shape == [3, 2, 5, 4]
    dec = paddle.nn.TransformerDecoder(paddle.nn.TransformerDecoderLayer(8, 2, 16), 3)
    zipped = dec.gen_cache(x, do_zip=True)
    assert len(zipped) == 2 and all(isinstance(c, m.Cache) for c in zipped[0])
    assert all(isinstance(c, m.StaticCache) for c in zipped[1])


def test_gradients_through_a_cached_step_match_finite_differences() -> None:
    """One decoding step over a prefilled `Cache(k, v)` (prefix-tuning style): the
    gradients with respect to the query and the cached keys/values equal float64
    finite differences."""
    from pullback.testing import check_eager_grad

    m = paddle.nn.MultiHeadAttention(4, 2)
    for p in m.parameters():
        p._data = p._data.astype(np.float64)
    rng = np.random.default_rng(3)

    def step(x: Any, k: Any, v: Any) -> Any:
        out, _ = m(x, cache=m.gen_cache(k, v))
        return out

    check_eager_grad(step, [rng.normal(size=(2, 1, 4)), rng.normal(size=(2, 2, 3, 2)), rng.normal(size=(2, 2, 3, 2))])
