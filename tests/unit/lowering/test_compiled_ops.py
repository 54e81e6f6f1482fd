"""Every `pd` op runs natively: compiled results agree with the numpy interpreter for
the shape ops, convolutions, pooling, embedding, layer norm, dropout and batched or
vector matrix products, in float32 and float64, forward and backward, with one
compiled program serving several batch sizes; a small CNN trains natively; no op of
the dialect is left without a lowering (but the documented host-side ones).

Likewise the math ops, min/prod reductions and scans, ranges, eye, constants,
triangles, and every gather and scatter (no fallback, float32 within 2e-5); and,
built through the static API, batch_norm (values, gradients, running-statistics
updates), arg_max/arg_min/top_k and accuracy, and the composite frontend functions
in one program (a fallback warning is an error there).

One file for the native lowering of every op, by family section; an op's kernel,
typing rule and VJP rule are tested in tests/unit/ops/<family>/."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.ir import SSAValue

import pullback as paddle
from pullback.benchmarks.bench_cpu import cnn_train
from pullback.benchmarks.programs import ProgramBuilder
from pullback.dialects import pd
from pullback.dialects.pd.base import f64_attr, is_float
from pullback.frontend import unique_name
from pullback.frontend.framework import Program, program_guard
from pullback.lowering import conv_direct
from pullback.lowering.convert_pd_to_linalg import build_entry, lowering_gap
from pullback.lowering.convert_linalg_to_blas import ConvertLinalgToBlasPass
from pullback.lowering.pipeline import run_passes
from pullback.passes.autodiff import differentiate
from pullback.runtime.native.backend import CompiledBackend
from pullback.runtime.interpreter import IndexOutOfRange, run_module
from pullback.runtime.kernels.nn import dropout_keep
from pullback.testing import input_range

TOL = {
    "float32": dict(rtol=3e-4, atol=3e-5),
    "float64": dict(rtol=1e-10, atol=1e-12),
    "int64": dict(rtol=0, atol=0),
}
TIGHT = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-10, atol=1e-12)}
"""The tolerances of the math ops, scans, creation ops and gathers (no reassociated sums)."""
F = paddle.nn.functional
DTYPES = ["float32", "float64"]
BATCHES = (2, 5)

Build = Callable[[ProgramBuilder, str], tuple[list[SSAValue], list[SSAValue]]]
Feeds = Callable[[np.random.Generator, int, str], dict[str, np.ndarray]]


def with_backward(b: ProgramBuilder, inputs: Sequence[SSAValue], outs: Sequence[SSAValue]) -> list[SSAValue]:
    """The outputs, then the gradients of `sum(out**2)` over every float output with
    respect to every float input (filled by the autodiff pass)."""
    targets = [b.add(pd.SquareOp, o) for o in outs if is_float(pd.elem_of(o.type))]
    wrt = [v for v in inputs if is_float(pd.elem_of(v.type))]
    if not targets or not wrt:
        return list(outs)
    bw = pd.BackwardOp.make(targets, wrt)
    b.block.add_op(bw)
    return [*outs, *differentiate(bw).grads]


def agree(build: Build, feeds: Feeds, dtype: str, grad: bool = True,
          tol: dict[str, dict[str, float]] = TOL) -> list[np.ndarray]:
    """Compile once (no interpreter fallback), run every batch size of `BATCHES`,
    compare every fetched value with the interpreter (within `tol[dtype]`); returns
    the last outputs."""
    b = ProgramBuilder()
    inputs, outs = build(b, dtype)
    fetch = with_backward(b, inputs, outs) if grad else list(outs)
    backend = CompiledBackend(fallback=False)
    got: list[np.ndarray] = []
    for n in BATCHES:
        feed = feeds(np.random.default_rng(n), n, dtype)
        env = run_module(b.module, feed, {})
        got = backend.run(b.module, feed, {}, fetch)
        for v, g in zip(fetch, got):
            want = env[v]
            assert g.shape == want.shape and g.dtype == want.dtype, (v.owner, g.shape, want.shape)
            np.testing.assert_allclose(g, want, **tol[dtype], err_msg=f"{v.owner.name} (batch {n})")
    assert backend.compiles == 1
    return got


def normal(**shapes: Sequence[int]) -> Feeds:
    """Feeds of standard normal values; a leading -1 is the batch size."""

    def make(rng: np.random.Generator, n: int, dtype: str) -> dict[str, np.ndarray]:
        return {
            k: rng.standard_normal([n if d == -1 else d for d in s]).astype(dtype)
            for k, s in shapes.items()
        }

    return make


# ----------------------------------------------------------------- coverage


def test_no_pd_op_is_left_without_a_lowering() -> None:
    host_side = {t.name for t in pd.ALL_OPS if getattr(t, "HOST_ONLY", None)}
    assert host_side == {"pd.uniform_random", "pd.gaussian_random", "pd.randint", "pd.randperm",
                         "pd.bernoulli", "pd.nonzero",
                         "pd.truncated_gaussian_random",
                         # calls a separately compiled program (paddle.jit.to_static)
                         "pd.run_program", "pd.run_program_grad",
                         # Python callbacks (paddle.static.py_func, paddle.static.Print)
                         "pd.py_func", "pd.print",
                         # LAPACK through numpy.linalg (dialects/pd/linalg.py)
                         "pd.inverse", "pd.determinant", "pd.slogdet", "pd.cholesky", "pd.solve",
                         "pd.triangular_solve", "pd.qr", "pd.svd", "pd.eigh", "pd.eig", "pd.lu", "pd.lu_unpack",
                         # graph sampling and reindexing (dialects/pd/geometric.py)
                         "pd.reindex_graph", "pd.sample_neighbors",
                         "pd.weighted_sample_neighbors",
                         # complex numbers and their transforms (dialects/pd/complex.py, fft.py)
                         "pd.real", "pd.imag", "pd.conj", "pd.angle", "pd.complex", "pd.as_complex",
                         "pd.as_real", "pd.fft_c2c", "pd.fft_r2c", "pd.fft_c2r",
                         # detection ops after Paddle's CPU kernels (dialects/pd/vision.py)
                         *(t.name for t in pd.VISION_OPS)}
    gaps = {t.name: lowering_gap(t) for t in pd.ALL_OPS if lowering_gap(t) is not None}
    missing = set(gaps) - host_side
    assert not missing, f"pd ops without a native lowering: {sorted(missing)}"
    assert all("host interpreter" in gaps[n] for n in host_side)


# -------------------------------------------------------------------- shape ops


def _shape_program(b: ProgramBuilder, dtype: str) -> tuple[list[SSAValue], list[SSAValue]]:
    x = b.data("x", [-1, 3, 4], dtype)
    y = b.data("y", [-1, 6], dtype)
    row = b.data("row", [1, 6], dtype)
    outs = [
        b.add(pd.ReshapeOp, x, shape=[0, -1]),
        b.add(pd.ReshapeOp, x, shape=[-1, 4]),
        b.add(pd.ReshapeAsOp, b.add(pd.TanhOp, x), b.add(pd.ReshapeOp, x, shape=[0, 2, 6])),
        b.add(pd.TransposeOp, x, perm=[2, 0, 1]),
        b.add(pd.SliceOp, x, axes=[0, 2], starts=[1, -3], ends=[pd.SLICE_END, -1]),
        b.add(pd.SliceOp, y, axes=[1], starts=[2], ends=[5]),
        b.add(pd.PadOp, y, paddings=[1, 2, 0, 3], value=1.5),
        b.add(pd.ConcatOp, y, b.add(pd.TanhOp, y), axis=1),
        b.add(pd.ConcatOp, y, y, axis=0),
        b.add(pd.UnsqueezeOp, y, axes=[0, -1]),
        b.add(pd.SqueezeOp, b.add(pd.UnsqueezeOp, y, axes=[1]), axes=[1]),
        b.add(pd.ExpandOp, b.add(pd.UnsqueezeOp, y, axes=[1]), shape=[-1, 3, -1]),
        b.add(pd.ExpandAsOp, row, y),
    ]
    outs += list(b.op(pd.SplitOp.make(y, num=2, axis=1)).results)
    outs += list(b.op(pd.SplitOp.make(y, sections=[1, -1], axis=0)).results)
    outs += list(b.op(pd.SplitAsOp.make(b.add(pd.ConcatOp, y, y, axis=0), y, y, axis=0)).results)
    return [x, y, row], outs


@pytest.mark.parametrize("dtype", DTYPES)
def test_shape_ops_agree(dtype: str) -> None:
    agree(_shape_program, normal(x=[-1, 3, 4], y=[-1, 6], row=[1, 6]), dtype)


def test_shape_ops_on_integers_agree() -> None:
    def build(b: ProgramBuilder, dtype: str) -> tuple[list[SSAValue], list[SSAValue]]:
        ids = b.data("ids", [-1, 4], "int64")
        return [ids], [
            b.add(pd.TransposeOp, ids, perm=[1, 0]),
            b.add(pd.PadOp, ids, paddings=[0, 1, 2, 0], value=7.0),
            b.add(pd.ReshapeOp, ids, shape=[-1]),
        ]

    agree(build, lambda rng, n, _: {"ids": rng.integers(-9, 9, (n, 4))}, "int64", grad=False)


def test_views_do_not_copy_and_in_place_updates_wait_for_them() -> None:
    b = ProgramBuilder()
    w = b.param("w", [2, 3], "float32")
    flat = b.add(pd.ReshapeOp, w, shape=[-1])
    lr = b.param("learning_rate_0", [1], "float32")
    b.add(pd.SgdOp, w, b.add(pd.FillAnyLikeOp, w, value=1.0), lr, name="w")
    late = b.add(pd.ScaleOp, flat, scale=2.0)  # reads the old w through the view
    fn, _ = build_entry(b.module, [late], only_given_fetches=True)
    assert "memref.reinterpret_cast %w" in str(fn)
    scope = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "learning_rate_0": np.ones([1], np.float32)}
    (got,) = CompiledBackend().run(b.module, {}, scope, [late])
    np.testing.assert_array_equal(got, 2 * np.arange(6, dtype=np.float32))
    np.testing.assert_array_equal(scope["w"], np.arange(6, dtype=np.float32).reshape(2, 3) - 1)


def test_squeeze_of_a_dynamic_dimension_is_checked_before_running() -> None:
    b = ProgramBuilder()
    y = b.data("y", [-1, -1], "float32")
    sq = b.add(pd.SqueezeOp, y, axes=[1])
    backend = CompiledBackend()
    (out,) = backend.run(b.module, {"y": np.ones((3, 1), np.float32)}, {}, [sq])
    assert out.shape == (3,)
    with pytest.raises(ValueError, match="pd.squeeze.*compiled for"):
        backend.run(b.module, {"y": np.ones((3, 2), np.float32)}, {}, [sq])


# ---------------------------------------------------------------------- stacks


def _stack_program(b: ProgramBuilder, dtype: str) -> tuple[list[SSAValue], list[SSAValue]]:
    x = b.data("x", [-1, 3], dtype)
    y = b.data("y", [-1, 3], dtype)
    one = b.add(pd.FillConstantOp, shape=[], value=1.0, dtype="int64")
    zero = b.add(pd.FillConstantOp, shape=[1], value=0.0, dtype="int32")
    s = b.add(pd.StackPushOp, b.add(pd.StackPushOp, b.add(pd.StackCreateOp, x), x), b.add(pd.TanhOp, y))
    s3 = b.add(pd.StackPushOp, s, b.add(pd.ScaleOp, x, scale=3.0))
    pop = pd.StackPopOp.make(s3)
    b.op(pop)
    written = b.add(pd.StackWriteOp, pop.rest, zero, y)
    outs = [
        s3,  # entries counted from the pushes: a fetchable shape
        b.add(pd.StackReadOp, s3, one),
        pop.top,
        b.add(pd.ScaleOp, pop.rest, scale=2.0),
        written,
        b.add(pd.StackSizeOp, written),
    ]
    return [x, y], outs


@pytest.mark.parametrize("dtype", DTYPES)
def test_stack_ops_and_their_gradients_agree(dtype: str) -> None:
    agree(_stack_program, normal(x=[-1, 3], y=[-1, 3]), dtype)


def test_stack_index_out_of_range_is_reported_like_the_interpreter() -> None:
    b = ProgramBuilder()
    x = b.data("x", [2], "float32")
    i = b.data("i", [], "int64")
    s = b.add(pd.StackPushOp, b.add(pd.StackCreateOp, x), x)
    read = b.add(pd.StackReadOp, s, i)
    empty = pd.StackPopOp.make(b.add(pd.StackCreateOp, x))
    b.op(empty)
    backend = CompiledBackend(fallback=False)
    feed = {"x": np.ones(2, np.float32), "i": np.array(0)}
    np.testing.assert_array_equal(backend.run(b.module, feed, {}, [read])[0], np.ones(2, np.float32))
    for fetch, index, msg in ((read, 3, "index 3 is out of range [0, 1)"), (read, -1, "index -1 is out"),
                              (empty.top, 0, "'pd.stack_pop': index -1 is out of range [0, 0)")):
        feed["i"] = np.array(index)
        with pytest.raises(IndexOutOfRange, match=re.escape(msg)):
            run_module(b.module, feed, {})
        with pytest.raises(IndexOutOfRange, match=re.escape(msg)):
            backend.run(b.module, feed, {}, [fetch])


# ---------------------------------------------------------------- convolutions

_CONVS = [
    dict(),
    dict(paddings=[1, 1]),
    dict(paddings=[1, 2, 0, 1], strides=[2, 2]),
    dict(paddings=[2, 2], dilations=[2, 2], groups=2),
    dict(padding_algorithm="SAME", strides=[2, 1]),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_and_its_gradients_agree(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 4, 6, 5], dt)
        ws = [b.data(f"w{i}", [6, 4 // p.get("groups", 1), 3, 3], dt) for i, p in enumerate(_CONVS)]
        return [x, *ws], [b.add(pd.Conv2DOp, x, w, **p) for w, p in zip(ws, _CONVS)]

    shapes = {f"w{i}": [6, 4 // p.get("groups", 1), 3, 3] for i, p in enumerate(_CONVS)}
    agree(build, normal(x=[-1, 4, 6, 5], **shapes), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_transpose_agrees(dtype: str) -> None:
    props = [
        dict(strides=[2, 2], paddings=[1, 1], output_padding=[1, 1]),
        dict(strides=[2, 1], dilations=[2, 1], paddings=[0, 1, 2, 0], groups=2),
        # Unit strides (the direct path), pads past the filter's reach (the output
        # gradient cropped, not padded).
        dict(paddings=[3, 0], groups=2),
    ]

    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 4, 5, 4], dt)
        w = b.data("w", [4, 3, 3, 2], dt)
        return [x, w], [b.add(pd.Conv2DTransposeOp, x, w, **p) for p in props]

    agree(build, normal(x=[-1, 4, 5, 4], w=[4, 3, 3, 2]), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unit_stride_transpose_with_an_extra_output_row_agrees(dtype: str) -> None:
    # Forward only: the VJP of a unit-stride, dilated conv2d_transpose with
    # output_padding builds a conv2d_filter_grad whose window does not give the
    # extra row back (a verification error in passes/vjp/nn.py, reported).
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x, w = b.data("x", [-1, 4, 5, 4], dt), b.data("w", [4, 3, 3, 2], dt)
        y = b.add(pd.Conv2DTransposeOp, x, w, dilations=[2, 1], paddings=[1, 0], output_padding=[1, 0])
        assert conv_direct.choose(y.owner) == "direct"
        return [x, w], [y]

    agree(build, normal(x=[-1, 4, 5, 4], w=[4, 3, 3, 2]), dtype, grad=False)


@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_is_one_gemm_call_per_group_over_the_whole_batch(groups: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conv_direct, "STRATEGY", "gemm")  # (the cost rule lowers this one directly)
    b = ProgramBuilder()
    x = b.data("x", [-1, 4, 8, 8])
    y = b.add(pd.Conv2DOp, x, b.param("w", [4, 4 // groups, 3, 3]), paddings=[1, 1], groups=groups)
    fn, _ = build_entry(b.module, [y], only_given_fetches=True)
    assert 'library_call = "batch_gemm"' in str(fn)
    module = ModuleOp([fn])
    run_passes(module, [ConvertLinalgToBlasPass()])
    text = str(module)
    assert text.count("func.call @pullback_sgemm") == 1
    assert ("scf.for" in text) == (groups > 1)  # a loop over the groups only


def test_conv2d_needs_static_window_sizes() -> None:
    from pullback.runtime.native.compiler import NotCompilable

    b = ProgramBuilder()
    y = b.add(pd.Conv2DOp, b.data("x", [-1, 3, -1, 8]), b.param("w", [4, 3, 3, 3]))
    with pytest.raises(NotCompilable, match="'pd.conv2d'.*static"):
        CompiledBackend().run(b.module, {"x": np.ones((1, 3, 5, 8), np.float32)}, {"w": np.ones((4, 3, 3, 3), np.float32)}, [y])


# The direct loop nests (`lowering/conv_direct.py`) against the interpreter, forced
# and by the cost rule, on shapes covering each of its branches: rows >= 10 wide
# (direct), narrow rows with a small K (direct) or a large one (GEMM), a 1x1
# filter gradient (GEMM), 8-wide rows with a large K (direct, the filter gradient
# GEMM), rows computed in pairs or not, strided, dilated, grouped and padded
# windows, and the input gradients of stride-1 (direct) and strided (GEMM +
# col2im) convolutions.
_RULE_CASES = [
    # (input [C, H, W], filter [O, C/G, kh, kw], window)
    ([3, 12, 11], [4, 3, 3, 3], dict(paddings=[1, 1])),  # 11 wide: direct
    ([3, 5, 19], [5, 3, 1, 1], dict()),  # 1x1: direct forward, GEMM filter gradient; rows 24 wide
    ([4, 6, 5], [6, 2, 3, 3], dict(paddings=[2, 1, 0, 2], dilations=[2, 1], groups=2)),  # narrow, K 18: direct
    ([20, 6, 6], [4, 20, 3, 3], dict()),  # 4 wide, K 180: GEMM
    ([4, 9, 13], [6, 4, 3, 2], dict(paddings=[1, 1], strides=[2, 2])),  # strided: GEMM
    ([4, 9, 13], [6, 4, 3, 3], dict(padding_algorithm="SAME", strides=[2, 1])),  # rows strided only: direct
    ([70, 8, 8], [4, 70, 3, 3], dict(paddings=[1, 1])),  # 8 wide: direct, but the filter gradient (K 630) GEMM
]


def _rule_program(tag: str) -> Build:
    """The `_RULE_CASES` convolutions and their gradients, feeds named after `tag`:
    programs compiled under different strategies must differ in text, or they
    would share machine code (`conv_direct.STRATEGY` is not in the text)."""

    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        inputs, outs = [], []
        for i, (chw, filt, window) in enumerate(_RULE_CASES):
            x, w = b.data(f"x{i}_{tag}", [-1, *chw], dt), b.data(f"w{i}_{tag}", filt, dt)
            inputs += [x, w]
            outs.append(b.add(pd.Conv2DOp, x, w, **window))
        return inputs, outs

    return build


def _rule_feeds(tag: str) -> Feeds:
    return normal(**{k: s for i, (chw, filt, _) in enumerate(_RULE_CASES)
                     for k, s in ((f"x{i}_{tag}", [-1, *chw]), (f"w{i}_{tag}", filt))})


@pytest.mark.parametrize("strategy", ["direct", "gemm", None])
@pytest.mark.parametrize("dtype", DTYPES)
def test_direct_and_gemm_convolutions_agree_with_the_interpreter(
    strategy: str | None, dtype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conv_direct, "STRATEGY", strategy)
    tag = strategy or "rule"
    # Sums of up to 630 products of unit normals, and gradients of sum(y^2) up to
    # ~2e3: float32 results summed in another order than the interpreter's differ
    # by its rounding at that scale (1.8e-4 seen on a filter-gradient element of
    # 0.056 among ones of 1e3: 1e-7 of the scale).  float64 stays tight.
    tol = {**TOL, "float32": dict(rtol=3e-4, atol=1e-3)}
    agree(_rule_program(tag), _rule_feeds(tag), dtype, tol=tol)


def test_the_cost_rule_covers_both_paths_for_every_convolution_op() -> None:
    b = ProgramBuilder()
    inputs, outs = _rule_program("choice")(b, "float32")
    with_backward(b, inputs, outs)
    chosen: dict[str, list[str]] = {}
    for op in b.module.walk():
        if isinstance(op, (pd.Conv2DOp, pd.Conv2DFilterGradOp, pd.Conv2DTransposeOp)):
            chosen.setdefault(op.name, []).append(conv_direct.choose(op))
    assert chosen == {
        "pd.conv2d": ["direct", "direct", "direct", "gemm", "gemm", "direct", "direct"],
        # (the backward's ops come in reverse order of the forward's)
        "pd.conv2d_filter_grad": ["direct", "gemm", "direct", "gemm", "gemm", "direct", "gemm"][::-1],
        # Transposes need unit strides; the 20- and 70-channel cases' K is 4 * 9.
        "pd.conv2d_transpose": ["direct", "direct", "direct", "direct", "gemm", "gemm", "direct"][::-1],
    }


def test_small_channel_convolutions_lower_without_columns_or_blas() -> None:
    """LeNet's first layer: no im2col buffer, no GEMM, in any of the three ops."""
    b = ProgramBuilder()
    x, w = b.data("x", [-1, 1, 28, 28]), b.data("w", [6, 1, 5, 5])
    y = b.add(pd.Conv2DOp, x, w)
    fetch = with_backward(b, [x, w], [y])
    fn, _ = build_entry(b.module, fetch, only_given_fetches=True)
    text = str(fn)
    assert "library_call" not in text
    # (im2col's columns would be [C*kh*kw, N, OH, OW] = memref<1x5x5x?x24x24xf32>)
    assert "x24x24xf32>" not in text.replace("memref<?x6x24x24xf32>", "")


@pytest.mark.parametrize("strategy", ["direct", "gemm"])
def test_convolution_gradients_match_float64_finite_differences(
    strategy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """d/dx and d/dw of `sum(tanh(conv2d(x, w)) * r)`, compiled (filter gradient and
    transposed convolution on the forced path), against central differences of the
    compiled forward in float64."""
    monkeypatch.setattr(conv_direct, "STRATEGY", strategy)
    b = ProgramBuilder()
    x, w = b.data(f"x_{strategy}", [-1, 3, 7, 9], "float64"), b.data(f"w_{strategy}", [4, 3, 3, 2], "float64")
    r = b.data(f"r_{strategy}", [-1, 4, 7, 7], "float64")
    y = b.add(pd.Conv2DOp, x, w, paddings=[1, 1, 0, 1], dilations=[1, 3])
    z = b.add(pd.ElementwiseMulOp, b.add(pd.TanhOp, y), r)
    bw = pd.BackwardOp.make([z], [x, w])
    b.block.add_op(bw)
    dx, dw = differentiate(bw).grads
    rng = np.random.default_rng(7)
    feed = {f"x_{strategy}": rng.standard_normal((2, 3, 7, 9)), f"w_{strategy}": rng.standard_normal((4, 3, 3, 2)),
            f"r_{strategy}": rng.standard_normal((2, 4, 7, 7))}
    backend = CompiledBackend(fallback=False)
    gx, gw = backend.run(b.module, feed, {}, [dx, dw])

    def loss(name: str, at: tuple[int, ...], eps: float) -> float:
        moved = dict(feed)
        moved[name] = feed[name].copy()
        moved[name][at] += eps
        return float(backend.run(b.module, moved, {}, [z])[0].sum())

    eps = 1e-6
    for name, grad in ((f"x_{strategy}", gx), (f"w_{strategy}", gw)):
        for _ in range(8):
            at = tuple(int(rng.integers(0, d)) for d in grad.shape)
            numeric = (loss(name, at, eps) - loss(name, at, -eps)) / (2 * eps)
            np.testing.assert_allclose(grad[at], numeric, rtol=1e-6, atol=1e-8, err_msg=f"{name}{at}")


# --------------------------------------------------------------------- pooling

_POOLS = [
    dict(ksize=[2, 2], strides=[2, 2]),
    dict(ksize=[3, 3], strides=[2, 2], paddings=[1, 1], ceil_mode=True),
    dict(pooling_type="avg", ksize=[3, 3], strides=[2, 2], paddings=[1, 1]),
    dict(pooling_type="avg", ksize=[3, 2], strides=[1, 2], paddings=[1, 0], exclusive=False),
    dict(pooling_type="avg", ksize=[4, 3], adaptive=True),
    dict(ksize=[1, 1], global_pooling=True),
    # Windows tiling the 6x7 input exactly: dx is stored once, without a zero fill.
    dict(ksize=[2, 7], strides=[2, 7]),
    dict(pooling_type="avg", ksize=[3, 7], strides=[3, 7]),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_pool2d_and_its_gradient_agree(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 3, 6, 7], dt)
        return [x], [b.add(pd.Pool2DOp, x, **p) for p in _POOLS]

    agree(build, normal(x=[-1, 3, 6, 7]), dtype)


def test_max_pool_gradient_goes_to_the_first_maximum_and_to_nans() -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 1, 4, 4], dt)
        return [x], [b.add(pd.Pool2DOp, x, ksize=[2, 2], strides=[2, 2]),
                     b.add(pd.Pool2DOp, x, ksize=[3, 3], strides=[1, 1])]

    def feeds(rng: np.random.Generator, n: int, dt: str) -> dict[str, np.ndarray]:
        x = rng.integers(0, 2, (n, 1, 4, 4)).astype(dt)  # many ties
        x[0, 0, 1, 1] = np.nan
        x[-1, 0, 3, 2] = -np.inf
        return {"x": x}

    # The interpreter's gradient through NaN windows is NaN; compare the routing.
    b = ProgramBuilder()
    inputs, outs = build(b, "float64")
    g = b.data("g", [-1, 1, 2, 2], "float64")
    dx = b.add(pd.Pool2DGradOp, inputs[0], g, ksize=[2, 2], strides=[2, 2])
    g3 = b.data("g3", [-1, 1, 2, 2], "float64")
    dx3 = b.add(pd.Pool2DGradOp, inputs[0], g3, ksize=[3, 3], strides=[1, 1])
    backend = CompiledBackend()
    for n in BATCHES:
        feed = {**feeds(np.random.default_rng(n), n, "float64"),
                "g": np.ones((n, 1, 2, 2)), "g3": np.random.default_rng(9).random((n, 1, 2, 2))}
        env = run_module(b.module, feed, {})
        for v, got in zip([dx, dx3], backend.run(b.module, feed, {}, [dx, dx3])):
            np.testing.assert_array_equal(got, env[v])


# ------------------------------------------------------------------- embedding


@pytest.mark.parametrize("dtype", DTYPES)
def test_lookup_table_and_its_scatter_add_gradient_agree(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        ids = b.data("ids", [-1, 3], "int64")
        w = b.data("w", [10, 4], dt)
        return [ids, w], [
            b.add(pd.LookupTableOp, ids, w),
            b.add(pd.LookupTableOp, ids, w, padding_idx=-2),
            b.add(pd.LookupTableOp, b.add(pd.CastOp, ids, dtype="int32"), w, padding_idx=3),
        ]

    def feeds(rng: np.random.Generator, n: int, dt: str) -> dict[str, np.ndarray]:
        return {"ids": rng.integers(0, 10, (n, 3)), "w": rng.standard_normal((10, 4)).astype(dt)}

    agree(build, feeds, dtype)


def _raises_as_the_interpreter(b: ProgramBuilder, fetch: list[SSAValue], feeds: dict[str, np.ndarray],
                               scope: dict[str, np.ndarray], message: str) -> None:
    with pytest.raises(IndexOutOfRange) as want:
        run_module(b.module, feeds, dict(scope))
    with pytest.raises(IndexOutOfRange) as got:
        CompiledBackend(fallback=False).run(b.module, feeds, dict(scope), fetch)
    assert str(got.value) == str(want.value) == message
    assert isinstance(got.value, IndexError) and isinstance(got.value, ValueError)


def test_out_of_range_ids_raise_the_interpreters_error() -> None:
    """Compiled code checks ids and labels at run time and reports the first bad one
    in row-major order, as the interpreter raises it; in range, it agrees."""
    b = ProgramBuilder()
    ids = b.data("ids", [-1], "int64")
    fids = b.data("fids", [-1], "float32")
    emb = b.add(pd.LookupTableOp, ids, b.param("w", [3, 2]), padding_idx=1)
    grad = b.add(pd.LookupTableGradOp, ids, b.data("g", [-1, 2]), num_rows=3)
    computed = b.add(pd.LookupTableOp, b.add(pd.CastOp, fids, dtype="int64"), b.param("w", [3, 2]))
    hot = b.add(pd.OneHotOp, ids, depth=3)
    fetch = [emb, grad, computed, hot]
    scope = {"w": np.arange(6, dtype=np.float32).reshape(3, 2)}
    ok = {"ids": np.array([2, 1, 0]), "g": np.ones((3, 2), np.float32), "fids": np.array([0.0, 2.0, 1.0], np.float32)}
    env = run_module(b.module, ok, dict(scope))
    for v, g in zip(fetch, CompiledBackend(fallback=False).run(b.module, ok, dict(scope), fetch)):
        np.testing.assert_array_equal(g, env[v])
    _raises_as_the_interpreter(b, fetch, {**ok, "ids": np.array([2, -1, 3])}, scope,
                               "'pd.lookup_table': id -1 is out of range [0, 3)")
    _raises_as_the_interpreter(b, fetch, {**ok, "fids": np.array([0.0, 5.0, 1.0], np.float32)}, scope,
                               "'pd.lookup_table': id 5 is out of range [0, 3)")


def test_out_of_range_indices_of_gathers_and_scatters_raise_the_interpreters_error() -> None:
    """gather/index_select, index_add, take_along_axis, put_along_axis and scatter
    check their index at run time like embedding ids; in range, they agree."""
    b = ProgramBuilder()
    x = b.param("x", [4, 3])
    idx = b.data("idx", [-1], "int64")
    idx2 = b.data("idx2", [-1, 3], "int64")
    upd = b.data("upd", [-1, 3], "float32")
    fetch = [
        b.add(pd.GatherOp, x, idx, axis=0),
        b.add(pd.IndexAddOp, x, idx, upd, axis=0),
        b.add(pd.TakeAlongAxisOp, x, idx2, axis=0),
        b.add(pd.PutAlongAxisOp, x, idx2, upd, axis=0),
        b.add(pd.ScatterOp, x, idx, upd),
    ]
    scope = {"x": np.arange(12, dtype=np.float32).reshape(4, 3)}
    ok = {"idx": np.array([3, 0]), "idx2": np.array([[1, 2, 3], [0, 0, 1]]), "upd": np.ones((2, 3), np.float32)}
    env = run_module(b.module, ok, dict(scope))
    for v, g in zip(fetch, CompiledBackend(fallback=False).run(b.module, ok, dict(scope), fetch)):
        np.testing.assert_array_equal(g, env[v])
    _raises_as_the_interpreter(b, fetch, {**ok, "idx": np.array([1, 4])}, scope,
                               "'pd.gather': index 4 is out of range [0, 4)")
    _raises_as_the_interpreter(b, fetch, {**ok, "idx2": np.array([[1, 2, 3], [0, -2, 9]])}, scope,
                               "'pd.take_along_axis': index -2 is out of range [0, 4)")


def test_out_of_range_coordinates_of_gather_nd_and_scatter_nd_add_raise_per_column() -> None:
    """gather_nd/scatter_nd_add coordinates: column j in [0, x.shape[j]), checked
    column by column as the interpreter does."""
    b = ProgramBuilder()
    x = b.param("x", [4, 3])
    idx = b.data("idx", [-1, 2], "int64")
    upd = b.data("upd", [-1], "float32")
    fetch = [b.add(pd.GatherNdOp, x, idx), b.add(pd.ScatterNdAddOp, x, idx, upd)]
    scope = {"x": np.arange(12, dtype=np.float32).reshape(4, 3)}
    ok = {"idx": np.array([[3, 2], [0, 0]]), "upd": np.ones(2, np.float32)}
    env = run_module(b.module, ok, dict(scope))
    for v, g in zip(fetch, CompiledBackend(fallback=False).run(b.module, ok, dict(scope), fetch)):
        np.testing.assert_array_equal(g, env[v])
    # Row 0 is fine in column 0 (3 < 4) and out in column 1 (3 >= 3).
    _raises_as_the_interpreter(b, fetch, {**ok, "idx": np.array([[3, 3], [0, 0]])}, scope,
                               "'pd.gather_nd': index[..., 1] 3 is out of range [0, 3)")
    _raises_as_the_interpreter(b, fetch, {**ok, "idx": np.array([[0, 5], [4, 0]])}, scope,
                               "'pd.gather_nd': index[..., 0] 4 is out of range [0, 4)")


def test_out_of_range_labels_raise_and_ignore_index_is_exempt() -> None:
    b = ProgramBuilder()
    x = b.data("x", [-1, 4], "float64")
    label = b.data("label", [-1, 1], "int64")
    loss = b.op(pd.SoftmaxWithCrossEntropyOp.make(x, label, ignore_index=7)).results[1]
    probs = b.add(pd.SoftmaxOp, x)
    ce = b.add(pd.CrossEntropyOp, probs, label)
    fetch = [loss, ce]
    xs = np.random.default_rng(0).standard_normal((3, 4))
    _raises_as_the_interpreter(b, fetch, {"x": xs, "label": np.array([[1], [4], [0]])}, {},
                               "'pd.softmax_with_cross_entropy': label 4 is out of range [0, 4)")
    # 7 is softmax_with_cross_entropy's ignore_index, not cross_entropy's (-100).
    _raises_as_the_interpreter(b, fetch, {"x": xs, "label": np.array([[1], [7], [0]])}, {},
                               "'pd.cross_entropy': label 7 is out of range [0, 4)")


def test_a_failed_check_leaves_parameters_untouched() -> None:
    """The optimizer's in-place updates after a failed check are skipped, as the
    interpreter never reaches them."""
    import pullback as paddle
    import pullback.nn.functional as F

    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
            ids = paddle.static.data("ids", [None, 3], "int64")
            lab = paddle.static.data("lab", [None, 1], "int64")
            emb = paddle.static.nn.embedding(ids, size=[5, 4])
            logits = paddle.static.nn.fc(paddle.reshape(emb, [-1, 12]), 6)
            loss = paddle.mean(F.softmax_with_cross_entropy(logits, lab))
            paddle.optimizer.Momentum(0.1, momentum=0.9).minimize(loss)
        exe = paddle.static.Executor(paddle.CPUPlace())
        scope = paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            exe.run(startup)
            good = {"ids": np.array([[0, 1, 2], [3, 4, 0]]), "lab": np.array([[1], [5]])}
            exe.run(main, feed=good, fetch_list=[loss])
            names = [p.name for p in main.all_parameters()]
            before = {n: np.array(scope.find_var(n).get_tensor()).copy() for n in names}
            with pytest.raises(IndexError, match=r"'pd.softmax_with_cross_entropy': label 6 is out of range \[0, 6\)"):
                exe.run(main, feed={**good, "lab": np.array([[1], [6]])}, fetch_list=[loss])
            for n in names:
                np.testing.assert_array_equal(np.array(scope.find_var(n).get_tensor()), before[n], err_msg=n)
            exe.run(main, feed=good, fetch_list=[loss])  # and the program still runs
            assert not np.array_equal(np.array(scope.find_var(names[0]).get_tensor()), before[names[0]])
    finally:
        paddle.disable_static()


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_and_its_gradients_agree(dtype: str) -> None:
    """`pd.linear` on a dynamic batch of rows and on a 3-D input (rows of a batch)."""
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x, x3 = b.data("x", [-1, 4], dt), b.data("x3", [-1, 3, 4], dt)
        w, bias = b.data("w", [4, 5], dt), b.data("bias", [5], dt)
        h = b.add(pd.ExpOp, x)  # a producer the product reads from its buffer
        return [x, x3, w, bias], [b.add(pd.LinearOp, h, w, bias), b.add(pd.LinearOp, x3, w, bias)]

    agree(build, normal(x=[-1, 4], x3=[-1, 3, 4], w=[4, 5], bias=[5]), dtype)


# ------------------------------------------------------- layer norm, dropout


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_agrees(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 3, 4], dt)
        s12, b12, s4 = b.data("s12", [12], dt), b.data("b12", [12], dt), b.data("s4", [4], dt)
        h = b.add(pd.ExpOp, x)  # a fused producer
        return [x, s12, b12, s4], [
            b.add(pd.LayerNormOp, h),
            b.add(pd.LayerNormOp, x, s12, b12, epsilon=1e-3),
            b.add(pd.LayerNormOp, x, s4, begin_norm_axis=2),
        ]

    agree(build, normal(x=[-1, 3, 4], s12=[12], b12=[12], s4=[4]), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_agrees_and_its_mask_is_the_interpreters_bit_for_bit(dtype: str) -> None:
    variants = [
        dict(dropout_prob=0.3, seed=11),
        dict(dropout_prob=0.3, seed=2**64 - 5, dropout_implementation="upscale_in_train"),
        dict(dropout_prob=0.3, is_test=True),
        dict(dropout_prob=1.0, dropout_implementation="upscale_in_train"),
    ]

    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 5, 7], dt)
        h = b.add(pd.ElementwiseAddOp, b.add(pd.AbsOp, x), b.add(pd.FillAnyLikeOp, x, value=1.0))
        return [x], [b.add(pd.DropoutOp, h, **p) for p in variants]

    outs = agree(build, normal(x=[-1, 5, 7]), dtype)
    keep = dropout_keep(11, outs[0].shape, 0.3)
    np.testing.assert_array_equal(outs[0] != 0, keep)  # |x| + 1 is never 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_seed_operand_is_read_at_run_time(dtype: str) -> None:
    """The seed operand (eager mode's per-call seed) is a run-time input of the
    compiled code: one compile serves every seed, each mask the interpreter's."""

    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x, s64, s32 = b.data("x", [-1, 5], dt), b.data("s", [], "int64"), b.data("t", [1], "int32")
        return [x], [
            b.add(pd.DropoutOp, x, s64, dropout_prob=0.4, dropout_implementation="upscale_in_train"),
            b.add(pd.DropoutOp, x, s32, dropout_prob=0.3),
            b.add(pd.DropoutOp, x, s64, dropout_prob=0.3, is_test=True),
        ]

    def feeds(rng: np.random.Generator, n: int, dt: str) -> dict[str, np.ndarray]:
        return {"x": rng.standard_normal((n, 5)).astype(dt), "s": np.array(rng.integers(-2**62, 2**62)),
                "t": rng.integers(-2**31, 2**31 - 1, (1,)).astype(np.int32)}

    agree(build, feeds, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_float_attributes_beyond_the_dtype_lower_as_numpy_rounds_them(dtype: str) -> None:
    """`clip` with a bound left out stores +-DBL_MAX, which float32 cannot hold:
    every float attribute lowers for every dtype, rounded as numpy rounds it
    (to +-inf beyond the range, to a denormal or 0 below it)."""
    big = float(np.finfo(np.float64).max)

    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 4], dt)
        return [x], [
            b.add(pd.ClipOp, x, min=-big, max=0.5),
            b.add(pd.ClipOp, x, min=-0.5, max=big),
            b.add(pd.ClipOp, x, min=-big, max=big),
            b.add(pd.ScaleOp, x, scale=1e300, bias=-1e-320),
            b.add(pd.ScaleOp, x, scale=1e-50),
            b.add(pd.FillAnyLikeOp, x, value=1e39),
        ]

    with np.errstate(over="ignore"):  # the interpreter's own float32 rounding of 1e39
        outs = agree(build, normal(x=[-1, 4]), dtype, grad=False)
    if dtype == "float32":
        assert np.isinf(outs[5]).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_class_losses_along_any_axis_agree(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 3, 2, 4], dt)
        lab = b.data("lab", [-1, 1, 2, 4], "int64")
        lab2 = b.data("lab2", [-1, 3, 4], "int64")
        p = b.add(pd.SoftmaxOp, x, axis=1)
        return [x], [
            *b.op(pd.SoftmaxWithCrossEntropyOp.make(x, lab, axis=1)).results,
            b.op(pd.SoftmaxWithCrossEntropyOp.make(x, lab2, axis=-2, ignore_index=1)).results[1],
            b.add(pd.CrossEntropyOp, p, lab, axis=1),
            b.add(pd.LogSoftmaxOp, x, axis=-3),
        ]

    def feeds(rng: np.random.Generator, n: int, dt: str) -> dict[str, np.ndarray]:
        return {"x": rng.standard_normal((n, 3, 2, 4)).astype(dt), "lab": rng.integers(0, 3, (n, 1, 2, 4)),
                "lab2": rng.integers(0, 2, (n, 3, 4))}

    agree(build, feeds, dtype)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in f32 units in the last place (0 where both are NaN)."""
    def ordered(a: np.ndarray) -> np.ndarray:
        i = a.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    d = np.abs(ordered(got) - ordered(want))
    return np.where(np.isnan(got) & np.isnan(want), 0, d)


F32_ULP_BOUND = {"exp": 2, "log": 2, "tanh": 6, "sigmoid": 2}
"""The stated bounds of `math_polynomial_approximation` (sigmoid's where its result
is a normal float)."""


def test_f32_exp_log_tanh_sigmoid_are_within_their_ulp_bounds_of_libm_everywhere() -> None:
    """The vector polynomials behind f32 exp/log/tanh (and sigmoid's reduced-range
    exp) against float64 libm rounded to f32 (the bounds `math_polynomial_approximation`
    states): denormal inputs and results, +-0, +-inf, NaN, the overflow and underflow
    edges, every binade, and a dense grid over tanh's and sigmoid's curved part."""
    rng = np.random.default_rng(0)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.4e-45, 1e-40, 1.1754942e-38, 1.17549435e-38,
                         -1e-40, -1.0, 1.0, 88.72, 88.73, 89.0, -87.3, -87.4, -100.0, -103.2, -103.9, -104.0,
                         -110.0, 3.4e38, 0.0004, 0.00039999, -0.0004, 7.9988117, 8.0, -8.0, 20.0, -3.4e38], np.float32)
    grid = np.linspace(-12, 12, 200_001, dtype=np.float32)
    x = np.concatenate([specials, grid, rng.uniform(-110, 90, 20000).astype(np.float32),
                        np.exp(rng.uniform(np.log(1.4e-45), np.log(3.4e38), 20000)).astype(np.float32)])
    x = np.concatenate([x, -x])
    b = ProgramBuilder()
    v = b.data("x", [-1], "float32")
    outs = [b.add(pd.ExpOp, v), b.add(pd.LogOp, v), b.add(pd.TanhOp, v), b.add(pd.SigmoidOp, v)]
    got = CompiledBackend(fallback=False).run(b.module, {"x": x}, {}, outs)
    with np.errstate(all="ignore"):
        wide = x.astype(np.float64)
        want = [w.astype(np.float32) for w in (np.exp(wide), np.log(wide), np.tanh(wide), 1.0 / (1.0 + np.exp(-wide)))]
    for name, g, w in zip(("exp", "log", "tanh", "sigmoid"), got, want):
        u = _ulps(g, w)
        if name == "sigmoid":  # denormal results: see the module docstring
            u = np.where(np.abs(w) >= np.finfo(np.float32).tiny, u, 0)
        k = int(np.argmax(u))
        assert u.max() <= F32_ULP_BOUND[name], f"{name}({x[k]!r}) = {g[k]!r}, libm {w[k]!r}: {u[k]} ulp"
        signed = ~np.isnan(w[:4])  # +-0, +-inf keep libm's sign (a NaN's sign means nothing)
        np.testing.assert_array_equal(np.signbit(g[:4])[signed], np.signbit(w[:4])[signed], err_msg=name)
        assert np.isnan(g[4]) and np.isnan(g[len(x) // 2 + 4]), f"{name}(nan) = {g[4]!r}"
    tanh, sigmoid = got[2], got[3]
    real = ~np.isnan(x)
    assert np.all(np.abs(tanh[real]) <= 1) and np.all((sigmoid[real] >= 0) & (sigmoid[real] <= 1))
    np.testing.assert_array_equal(tanh[[2, 3]], [1.0, -1.0])  # +-inf
    np.testing.assert_array_equal(sigmoid[[2, 3]], [1.0, 0.0])
    tiny = np.abs(x) < 0.0004  # tanh(x) = x there, denormals and signed zeros included
    np.testing.assert_array_equal(tanh[tiny].view(np.int32), x[tiny].view(np.int32))


# --------------------------------------------------------------------- matmul


@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_and_vector_matmuls_agree_through_blas(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        a, m, v = b.data("a", [-1, 3, 4], dt), b.data("m", [4, 5], dt), b.data("v", [4], dt)
        c, one = b.data("c", [-1, 4, 5], dt), b.data("one", [1, 5, 4], dt)
        return [a, m, v, c, one], [
            b.add(pd.MatmulOp, a, m),
            b.add(pd.MatmulOp, a, c),
            b.add(pd.MatmulOp, a, one, transpose_y=True),
            b.add(pd.MatmulOp, v, m),
            b.add(pd.MatmulOp, a, v),
            b.add(pd.MatmulOp, v, c),
            b.add(pd.MatmulOp, c, a, transpose_x=True, transpose_y=True),
        ]

    agree(build, normal(a=[-1, 3, 4], m=[4, 5], v=[4], c=[-1, 4, 5], one=[1, 5, 4]), dtype)
    b = ProgramBuilder()
    _, outs = build(b, dtype)
    fn, _ = build_entry(b.module, outs, only_given_fetches=True)
    module = ModuleOp([fn])
    run_passes(module, [ConvertLinalgToBlasPass()])
    assert str(module).count("func.call @pullback_") == len(outs)


def test_second_derivatives_through_convolution_and_pooling_agree() -> None:
    b = ProgramBuilder()
    x, w = b.data("x", [-1, 2, 6, 6], "float64"), b.data("w", [3, 2, 3, 3], "float64")
    y = b.add(pd.Conv2DOp, x, w, paddings=[1, 1], strides=[2, 2])
    p = b.add(pd.Pool2DOp, b.add(pd.TanhOp, y), pooling_type="avg", ksize=[2, 2], strides=[1, 1])
    first = with_backward(b, [x, w], [p])
    # d/d(x, w) of |dL/dx|^2: conv2d_transpose and conv2d_filter_grad differentiated.
    second = with_backward(b, [x, w], [first[1]])
    fetch = first + second[1:]
    assert {"pd.conv2d_transpose", "pd.conv2d_filter_grad", "pd.pool2d_grad"} <= {
        op.name for op in b.module.walk()
    }
    backend = CompiledBackend()
    for n in BATCHES:
        rng = np.random.default_rng(n)
        feeds = {"x": rng.standard_normal((n, 2, 6, 6)), "w": rng.standard_normal((3, 2, 3, 3))}
        env = run_module(b.module, feeds, {})
        for v, got in zip(fetch, backend.run(b.module, feeds, {}, fetch)):
            np.testing.assert_allclose(got, env[v], **TOL["float64"], err_msg=v.owner.name)


# ------------------------------------------------------------------ CNN step


@pytest.mark.parametrize("dtype", DTYPES)
def test_cnn_training_step_runs_natively_and_matches_the_interpreter(dtype: str) -> None:
    built = cnn_train(batch_shape=(1, 8, 8), channels=(3, 4), lr=0.1, dtype=dtype)
    ops = {op.name for op in built.module.walk()}
    assert {"pd.conv2d", "pd.relu", "pd.pool2d", "pd.reshape", "pd.matmul", "pd.mean",
            "pd.softmax_with_cross_entropy", "pd.sgd", "pd.conv2d_filter_grad",
            "pd.pool2d_grad"} <= ops
    backend = CompiledBackend(fallback=False)
    scope_i = {k: v.copy() for k, v in built.scope.items()}
    scope_c = {k: v.copy() for k, v in built.scope.items()}
    updates = [op for op in built.module.body.block.ops if isinstance(op, pd.SgdOp)]
    rng = np.random.default_rng(4)
    for batch in (4, 1, 7):
        feeds = {"img": rng.standard_normal((batch, 1, 8, 8)).astype(dtype),
                 "label": rng.integers(0, 10, (batch, 1))}
        env = run_module(built.module, feeds, scope_i)
        (loss,) = backend.run(built.module, feeds, scope_c, built.fetch)
        np.testing.assert_allclose(loss, env[built.fetch[0]], **TOL[dtype])
        for op in updates:  # the executor writes updates back; emulate it for the oracle
            scope_i[pd.result_names(op)[0]] = env[op.results[0]]
        for name in scope_i:
            np.testing.assert_allclose(scope_c[name], scope_i[name], **TOL[dtype], err_msg=name)
    assert backend.compiles == 1


# ------------------------------------------------------------ integer division


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_division_truncates_toward_zero_like_paddle(dtype: str) -> None:
    b = ProgramBuilder()
    q = b.add(pd.ElementwiseDivOp, b.data("x", [-1], dtype), b.data("y", [-1], dtype))
    low = np.iinfo(dtype).min
    x = np.array([7, -7, 7, -7, 5, 0, low, low, 3], dtype)
    y = np.array([2, 2, -2, -2, 0, 0, -1, 1, 7], dtype)
    (got,) = CompiledBackend().run(b.module, {"x": x, "y": y}, {}, [q])
    # C++ semantics (Paddle's kernel); a zero divisor gives 0 and MIN / -1 wraps,
    # as the interpreter's numpy does, instead of trapping.
    np.testing.assert_array_equal(got, np.array([3, -3, -3, 3, 0, 0, low, low, 0], dtype))
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(got, run_module(b.module, {"x": x, "y": y}, {})[q])


# ------------------- math ops, scans, creation, triangles, gathers, scatters (TIGHT)

E = pd.STRIDED_END_NEG


U_RANGE = input_range(pd.AsinOp, pd.AcosOp, pd.Log1pOp)
"""Where the inputs of asin, acos and log1p are drawn from: (-0.9, 0.9)."""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_reductions_and_scans(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 4], dt)
        u = b.data("u", [-1, 4], dt)  # inside the domains of asin, acos and log1p
        ops = [pd.SinOp, pd.CosOp, pd.TanOp, pd.AtanOp, pd.SinhOp, pd.CoshOp, pd.Expm1Op,
               pd.FloorOp, pd.CeilOp, pd.RoundOp]
        outs = [b.add(c, x) for c in ops] + [b.add(c, u) for c in (pd.AsinOp, pd.AcosOp, pd.Log1pOp)]
        outs += [b.add(pd.ReduceMinOp, x, axis=[1]), b.add(pd.ReduceMinOp, x, axis=[0], keepdim=True),
                 b.add(pd.ReduceProdOp, x, axis=[1]), b.add(pd.CumsumOp, x, axis=1),
                 b.add(pd.CumsumOp, x, axis=0, reverse=True, exclusive=True),
                 b.add(pd.CumprodOp, x, axis=1), b.add(pd.CumprodOp, x, axis=1, exclusive=True, reverse=True)]
        return [x, u], outs

    def feeds(rng: np.random.Generator, n: int, dt: str) -> dict[str, np.ndarray]:
        x = rng.uniform(0.3, 1.4, (n, 4)) * np.where(rng.standard_normal((n, 4)) > 0, 1, -1)
        x[0, :2] = [2.5, -0.5]  # halves round away from zero
        return {"x": x.astype(dt), "u": rng.uniform(*U_RANGE, (n, 4)).astype(dt)}

    agree(build, feeds, dtype, tol=TIGHT)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_creation_and_triangles(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 3, 4], dt)
        r = b.add(pd.ArangeOp, start=0.5, end=4.5, step=1.0, dtype=dt)
        e = b.add(pd.EyeOp, num_rows=3, num_columns=4, dtype=dt)
        c = b.add(pd.AssignValueOp, shape=[3, 4], dtype=dt,
                  values=ArrayAttr([f64_attr(v) for v in np.linspace(-1, 1, 12)]))
        lin = b.add(pd.LinspaceOp, start=-1.0, stop=2.0, num=4, dtype=dt)
        ids = b.add(pd.ArangeOp, start=5.0, end=-1.0, step=-2.0, dtype="int64")
        outs = [b.add(pd.TrilTriuOp, x, diagonal=1), b.add(pd.TrilTriuOp, x, diagonal=-1, lower=False),
                b.add(pd.ElementwiseMulOp, x, b.add(pd.ElementwiseAddOp, e, c)),
                b.add(pd.ElementwiseAddOp, x, b.add(pd.ElementwiseMulOp, r, lin)), ids]
        return [x], outs

    agree(build, lambda rng, n, dt: {"x": rng.standard_normal((n, 3, 4)).astype(dt)}, dtype, tol=TIGHT)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gathers_and_scatters(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 4], dt)
        w = b.data("w", [3, 4], dt)
        i = b.data("i", [3], "int64")
        j = b.data("j", [-1, 2], "int64")
        nd = b.data("nd", [2, 2], "int64")
        u = b.data("u", [2], dt)
        v = b.data("v", [-1, 2], dt)
        s = b.data("s", [3, 2], dt)
        outs = [
            b.add(pd.GatherOp, x, i, axis=1), b.add(pd.GatherOp, w, i, axis=0),
            b.add(pd.GatherNdOp, w, nd), b.add(pd.TakeAlongAxisOp, x, j, axis=1),
            b.add(pd.IndexAddOp, w, i, b.add(pd.ScaleOp, w, scale=2.0), axis=0),
            b.add(pd.ScatterNdAddOp, w, nd, u),
            b.add(pd.ScatterOp, w, b.add(pd.SliceOp, i, axes=[0], starts=[0], ends=[2]),
                  b.add(pd.SliceOp, w, axes=[0], starts=[1], ends=[3]), overwrite=False),
            b.add(pd.PutAlongAxisOp, x, j, v, axis=1, reduce="add"),
            b.add(pd.PutAlongAxisOp, x, j, v, axis=1),
            b.add(pd.StridedSliceOp, x, axes=[1], starts=[-1], ends=[E], strides=[-2]),
            b.add(pd.StridedSliceOp, w, axes=[0, 1], starts=[0, 1], ends=[3, 4], strides=[2, 2]),
            b.add(pd.SetValueOp, w, s, axes=[1], starts=[3], ends=[E], strides=[-2]),
        ]
        return [x, w, i, j, nd, u, v, s], outs

    def feeds(rng: np.random.Generator, n: int, dt: str) -> dict[str, np.ndarray]:
        return {
            "x": rng.standard_normal((n, 4)).astype(dt), "w": rng.standard_normal((3, 4)).astype(dt),
            "i": np.array([2, 0, 2]), "j": np.stack([rng.permutation(4)[:2] for _ in range(n)]),
            "nd": np.array([[0, 1], [2, 3]]), "u": rng.standard_normal(2).astype(dt),
            "v": rng.standard_normal((n, 2)).astype(dt), "s": rng.standard_normal((3, 2)).astype(dt),
        }

    agree(build, feeds, dtype, tol=TIGHT)


# ------------------------------- through the static API: batch norm, searches, accuracy
# (`static_mode`: conftest.py)

RNG = np.random.default_rng(17)


def _run_both(main, startup, feed, fetches, scope_names=()):
    """Fetched values and scope entries after one run on each backend."""
    got = {}
    for backend in ("interpreter", "compiled"):
        scope = paddle.static.Scope()
        exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
        with paddle.static.scope_guard(scope), warnings.catch_warnings():
            warnings.simplefilter("error")  # no interpreter fallback
            if startup is not None:
                paddle.seed(0)
                exe.run(startup)
            outs = exe.run(main, feed=feed, fetch_list=fetches)
            outs += [np.array(scope[n]) for n in scope_names]
        got[backend] = outs
    return got["interpreter"], got["compiled"]


@pytest.mark.parametrize("shape,layout,mode,dtype", [
    ((4, 3, 5, 5), "NCHW", {}, "float32"),
    ((4, 3, 5, 5), "NCHW", {}, "float64"),
    ((4, 5, 5, 3), "NHWC", {}, "float32"),
    ((6, 3), "NCHW", {}, "float32"),
    ((4, 3, 5, 5), "NCHW", {"is_test": True}, "float32"),
    ((4, 3, 2, 2), "NCHW", {"use_global_stats": True}, "float64"),
    ((1, 3), "NCHW", {}, "float32"),  # one value per channel at run time: y = x
])
def test_batch_norm_and_its_gradient_agree(static_mode, shape, layout, mode, dtype):
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, *shape[1:]], dtype)
        x.stop_gradient = False
        y = paddle.static.nn.batch_norm(x * 2.0, data_layout=layout, momentum=0.7, **mode)
        loss = paddle.mean(y * y)
        (gx,) = paddle.static.gradients([loss], [x])
    xv = RNG.standard_normal(shape).astype(dtype)
    tol = 1e-4 if dtype == "float32" else 1e-10
    want, got = _run_both(main, startup, {"x": xv}, [y, gx], ["batch_norm_0.w_1", "batch_norm_0.w_2"])
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_batch_norm_training_step_updates_like_the_interpreter(static_mode):
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, 2, 6, 6], "float32")
        label = paddle.static.data("label", [-1, 1], "int64")
        h = paddle.static.nn.conv2d(x, 4, 3, padding=1, bias_attr=False)
        h = paddle.nn.functional.relu(paddle.static.nn.batch_norm(h))
        logits = paddle.static.nn.fc(paddle.flatten(h, 1), 3)
        loss = paddle.mean(paddle.nn.functional.cross_entropy(logits, label))
        paddle.optimizer.Momentum(0.1, momentum=0.9).minimize(loss)
    feed = {"x": RNG.standard_normal((5, 2, 6, 6)).astype(np.float32),
            "label": RNG.integers(0, 3, (5, 1))}
    names = ["batch_norm_0.w_0", "batch_norm_0.b_0", "batch_norm_0.w_1", "batch_norm_0.w_2", "conv2d_0.w_0"]
    want, got = _run_both(main, startup, feed, [loss], names)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5)


def test_searches_and_accuracy_agree(static_mode):
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        x = paddle.static.data("x", [-1, 7], "float32")
        z = paddle.static.data("z", [3, 4, 5], "float64")
        lab = paddle.static.data("l", [-1, 1], "int64")
        outs = [paddle.argmax(x, axis=1), paddle.argmin(x, axis=0, keepdim=True), paddle.argmax(x),
                paddle.argmin(z, axis=1, dtype="int32"), *paddle.topk(x, 3),
                *paddle.topk(z, 2, axis=1, largest=False), *paddle.topk(z, 5, axis=2),
                paddle.static.accuracy(x, lab), paddle.static.accuracy(x, lab, k=3)]
    xv = RNG.standard_normal((6, 7)).astype(np.float32)
    xv[1, 3] = xv[1, 5]  # a tie: the lower index first
    xv[2, 0] = np.nan  # argmax/argmin pick the first NaN; sorting puts NaNs last
    zv = np.round(RNG.standard_normal((3, 4, 5)), 1)  # many ties
    feed = {"x": xv, "z": zv, "l": RNG.integers(0, 7, (6, 1))}
    want, got = _run_both(main, None, feed, outs)
    for i, (w, g) in enumerate(zip(want, got)):
        assert w.dtype == g.dtype and w.shape == g.shape, i
        np.testing.assert_array_equal(g, w, err_msg=f"fetch #{i}")


def test_top_k_gradient_agrees(static_mode):
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        x = paddle.static.data("x", [-1, 6], "float32")
        x.stop_gradient = False
        v, _ = paddle.topk(x, 2)
        (gx,) = paddle.static.gradients([paddle.sum(v * v)], [x])
    want, got = _run_both(main, None, {"x": RNG.standard_normal((4, 6)).astype(np.float32)}, [gx])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert (np.count_nonzero(got[0], axis=1) == 2).all()


def test_one_channel_major_copy_serves_both_convolution_gradients(static_mode, monkeypatch):
    """A convolution's output gradient feeds its filter gradient and its input
    gradient, both of which read it channel-major on the GEMM path: the lowering
    makes that transposed copy (with the gradient's elementwise producers fused in)
    once, and both backends agree on every gradient."""
    monkeypatch.setattr(conv_direct, "STRATEGY", "gemm")  # (the cost rule lowers this one directly)
    from pullback.lowering.convert_pd_to_linalg import build_entry
    from pullback.runtime.executor import resolve_fetch
    from xdsl.dialects.linalg.ops import GenericOp

    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [2, 3, 6, 6], "float32")
        x.stop_gradient = False
        conv = paddle.nn.Conv2D(3, 4, 3, padding=1)
        y = paddle.nn.functional.relu(conv(x))
        loss = paddle.mean(y * y)
        grads = paddle.static.gradients([loss], [x, conv.weight])
    feed = {"x": RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)}
    interpreted, compiled = _run_both(main, startup, feed, [loss, *grads])
    for a, b in zip(interpreted, compiled):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)

    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    entry = exe._prepared(main, [resolve_fetch(main, g) for g in grads])
    fn, _ = build_entry(entry.module, list(entry.fetches), entry="step", only_given_fetches=True)
    swaps = [op for op in fn.walk() if isinstance(op, GenericOp)
             and any(str(m.data) == "(d0, d1, d2, d3) -> (d1, d0, d2, d3)" for m in op.indexing_maps.data)]
    assert len(swaps) == 1  # the output gradient, channel-major, once


# ------------------------------------------------ frontend composites in one program


def test_composites_compile_natively_and_match_the_interpreter():
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, 4], "float64")
            x.stop_gradient = False
            y = paddle.static.data("y", [None], "int64")
            q = paddle.static.data("q", [2, 3, 2, 2], "float64")
            q.stop_gradient = False
            acts = [F.mish(x), F.hardswish(x), F.selu(x), F.celu(x), F.softsign(x), F.tanhshrink(x),
                    F.relu6(x), F.hardsigmoid(x), F.glu(x), paddle.log2(paddle.abs(x) + 1.0),
                    paddle.rsqrt(paddle.abs(x) + 1.0), paddle.logsumexp(x, axis=1), paddle.var(x, axis=1),
                    paddle.norm(x, p=1, axis=1), paddle.einsum("ij,kj->ik", x, x),
                    paddle.cumsum(x, axis=1), paddle.sin(x), paddle.triu(x), x[:, ::-1],
                    paddle.gather(x, y, axis=1), paddle.roll(x, 1, 1), paddle.tile(x, [1, 2])]
            losses = [F.cross_entropy(x, y, label_smoothing=0.1), F.nll_loss(F.log_softmax(x), y),
                      F.cross_entropy(x, y, weight=paddle.abs(x[0]) + 0.5),
                      F.smooth_l1_loss(x, x * 0.3), F.kl_div(F.log_softmax(x), F.softmax(x)),
                      paddle.mean(F.scaled_dot_product_attention(q, q, q))]
            total = paddle.add_n([paddle.sum(a) for a in acts] + losses)
            grads = paddle.static.gradients([total], [x, q])
        rng = np.random.default_rng(0)
        feed = {"x": rng.standard_normal((3, 4)), "y": np.array([0, 3, 1]),
                "q": rng.standard_normal((2, 3, 2, 2))}
        fetch = [v.value for v in [*acts, *losses, *grads]]
        want = [run_module(main.module, feed, {})[v] for v in fetch]
        got = CompiledBackend(fallback=False).run(main.module, feed, {}, fetch)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)
    finally:
        paddle.disable_static()
