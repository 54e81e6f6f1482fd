"""`paddle.geometric` (the `geometric` op family): values and gradients against real
Paddle 3.3.1 (`paddle_fixtures.npz`, written by `make_paddle_fixtures.py`), gradients
against float64 finite differences, the compiled `pd.send_recv` against the
interpreter, static programs, the host-only graph utilities and bad input."""

from __future__ import annotations

import ast
import os
import warnings

import numpy as np
import pytest

import pullback as paddle
from pullback.runtime.interpreter import IndexOutOfRange
from pullback.testing import check_eager_grad

G = paddle.geometric
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = np.load(os.path.join(HERE, "paddle_fixtures.npz"))
CASES = sorted({k.split("/")[0] for k in FIXTURES.files})


def _call(name: str, tensors: dict[str, object]) -> object:
    kw = ast.literal_eval(str(FIXTURES[f"{name}/call"]))
    fn = getattr(G, kw.pop("fn"))
    if "data" in tensors:
        return fn(tensors["data"], tensors["ids"])
    if "y" in tensors:
        return fn(tensors["x"], tensors["y"], tensors["src"], tensors["dst"], **kw)
    return fn(tensors["x"], tensors["src"], tensors["dst"], **kw)


# ------------------------------------------------------------- against Paddle


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_match_paddle(name: str) -> None:
    """Forward values and the gradients of `sum(out * w)` equal Paddle's, ties in
    max/min included (every tied message gets the whole gradient)."""
    inputs = {k.split("/")[-1]: FIXTURES[k] for k in FIXTURES.files if k.startswith(f"{name}/in/")}
    t = {k: paddle.to_tensor(v, stop_gradient=v.dtype.kind != "f") for k, v in inputs.items()}
    out = _call(name, t)
    np.testing.assert_allclose(out.numpy(), FIXTURES[f"{name}/out"], rtol=1e-12, atol=1e-12)
    (out * paddle.to_tensor(FIXTURES[f"{name}/w"])).sum().backward()
    for k, v in t.items():
        if not v.stop_gradient:
            np.testing.assert_allclose(v.grad.numpy(), FIXTURES[f"{name}/grad_{k}"],
                                       rtol=1e-10, atol=1e-12, err_msg=f"{name}: d{k}")


# ------------------------------------------------------------ finite differences

RNG = np.random.default_rng(3)
SRC = paddle.to_tensor(np.array([0, 1, 2, 3, 0, 2, 1]))
DST = paddle.to_tensor(np.array([1, 0, 1, 2, 2, 0, 1], "int32"))
X = RNG.standard_normal((4, 3))  # continuous values: no ties, FD is valid for max/min
Y = RNG.uniform(0.5, 1.5, (7, 2, 1))


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min"])
def test_send_u_recv_gradient_matches_finite_differences(reduce: str) -> None:
    check_eager_grad(lambda x: G.send_u_recv(x, SRC, DST, reduce, out_size=4), [X], order=2)


@pytest.mark.parametrize("message", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_send_ue_recv_gradient_with_broadcast_features(message: str, reduce: str) -> None:
    """x `[4, 3]` against y `[7, 2, 1]`: the message is `[7, 2, 3]`."""
    check_eager_grad(lambda x, y: G.send_ue_recv(x, y, SRC, DST, message, reduce), [X, Y])


@pytest.mark.parametrize("message", ["add", "mul", "div"])
def test_send_uv_gradient(message: str) -> None:
    check_eager_grad(lambda x, y: G.send_uv(x, y, SRC, DST, message), [X, RNG.uniform(0.5, 2, (4, 1))])


@pytest.mark.parametrize("pool", ["sum", "mean", "max", "min"])
def test_segment_gradient_matches_finite_differences(pool: str) -> None:
    ids = paddle.to_tensor(np.array([0, 0, 2, 2, 2]))
    fn = getattr(G, f"segment_{pool}")
    check_eager_grad(lambda d: fn(d, ids), [RNG.standard_normal((5, 2))], order=2)


# ------------------------------------------------ compiled against interpreter


def _compiled() -> object:
    """The compiled backend, refusing to fall back to the interpreter (the suite's
    default backend is the interpreter, tests/conftest.py)."""
    os.environ["PULLBACK_COMPILED_FALLBACK"] = "0"
    try:
        return paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
    finally:
        del os.environ["PULLBACK_COMPILED_FALLBACK"]


def _program(dtype: str) -> tuple[object, list[object]]:
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [-1, 3], dtype)
        y = paddle.static.data("y", [-1, 1], dtype)
        s = paddle.static.data("s", [-1], "int64")
        d = paddle.static.data("d", [-1], "int32")
        x.stop_gradient = y.stop_gradient = False
        outs = [G.send_u_recv(x, s, d, r) for r in ("sum", "mean", "max", "min")]
        if dtype == "float64":  # (every message op once: one compile, kept to one dtype)
            outs += [G.send_ue_recv(x, y, s, d, m, r, out_size=6)
                     for m, r in (("add", "sum"), ("sub", "max"), ("mul", "mean"), ("div", "min"))]
            outs.append(G.send_uv(x, y, s, d, "mul"))
        loss = paddle.add_n([(o * o).sum() for o in outs])
        grads = paddle.static.gradients([loss], [x, y])
    return main, [*outs, *(g for g in grads if g is not None)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_compiled_send_recv_agrees_with_the_interpreter(dtype: str, static_mode: None) -> None:
    """One program with every reduction (float64: and every message op), and the
    gradients, compiled without fallback, against the interpreter, at two edge and
    node counts."""
    main, fetch = _program(dtype)
    compiled = _compiled()
    interp = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=2e-5, atol=2e-6)
    for n, e in ((5, 7), (3, 11)):
        rng = np.random.default_rng(n)
        feed = {"x": rng.standard_normal((n, 3)).astype(dtype),
                "y": rng.uniform(0.5, 2, (e, 1)).astype(dtype),
                "s": rng.integers(0, n, e), "d": rng.integers(0, n, e).astype("int32")}
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an interpreter fallback warns
            got = compiled.run(main, feed=feed, fetch_list=fetch)
        want = interp.run(main, feed=feed, fetch_list=fetch)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, **tol)


def test_compiled_send_u_recv_of_integers_truncates_the_mean(static_mode: None) -> None:
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [2, 2], "int32")
        i = paddle.static.data("i", [2], "int64")
        outs = [G.send_u_recv(x, i, paddle.full([2], 1, "int64"), r) for r in ("mean", "max", "min")]
    feed = {"x": np.array([[1, 2], [-4, 4]], "int32"), "i": np.array([0, 1])}
    got = _compiled().run(main, feed=feed, fetch_list=outs)
    want = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter").run(main, feed=feed, fetch_list=outs)
    # Paddle: (1 + -4) / 2 truncates to -1 (C++ division), (2 + 4) / 2 = 3.
    np.testing.assert_array_equal(got[0], [[0, 0], [-1, 3]])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("pool", ["sum", "mean", "max", "min"])
def test_compiled_segment_pool_agrees_with_the_interpreter(pool: str, static_mode: None) -> None:
    """A segment pool inside a compiled program (its rows read from the ids at run
    time) with its gradient; a bad id raises the interpreter's error."""
    x = paddle.static.data("x", [-1, 3], "float64")
    i = paddle.static.data("i", [-1], "int64")
    x.stop_gradient = False
    o = getattr(G, f"segment_{pool}")(x, i)
    loss = (o * o).sum()
    (gx,) = paddle.static.gradients([loss], [x])
    compiled = _compiled()
    interp = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    main = paddle.static.default_main_program()
    for ids in ([0, 0, 2, 2, 2, 4], [1, 1, 1]):
        feed = {"x": np.random.default_rng(len(ids)).standard_normal((len(ids), 3)), "i": np.array(ids)}
        got = compiled.run(main, feed=feed, fetch_list=[loss, gx])
        want = interp.run(main, feed=feed, fetch_list=[loss, gx])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    feed = {"x": np.ones((3, 3)), "i": np.array([0, 5, 2])}
    for exe in (compiled, interp):
        with pytest.raises(IndexOutOfRange, match=r"'pd.segment_pool': segment_ids 5 is out of range \[0, 3\)"):
            exe.run(main, feed=feed, fetch_list=[loss, gx])


def test_fetched_segment_pool_runs_on_the_interpreter_saying_why(static_mode: None) -> None:
    """Its rows are known only from the ids: the caller of compiled code cannot
    allocate it, so a program fetching it falls back, with the reason."""
    x = paddle.static.data("x", [-1, 2], "float32")
    i = paddle.static.data("i", [-1], "int32")
    out = G.segment_max(x, i)
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
    feed = {"x": np.array([[1, 5], [3, 2], [0, 0]], "float32"), "i": np.array([0, 0, 2], "int32")}
    with pytest.warns(UserWarning, match="data was read"):
        (got,) = exe.run(paddle.static.default_main_program(), feed=feed, fetch_list=[out])
    np.testing.assert_array_equal(got, [[3, 5], [0, 0], [0, 0]])


def test_static_shapes_follow_paddle(static_mode: None) -> None:
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [-1, 3], "float32")
        i = paddle.static.data("i", [-1], "int64")
        assert list(G.send_u_recv(x, i, i).shape) == [-1, 3]
        assert list(G.send_u_recv(x, i, i, out_size=7).shape) == [7, 3]
        assert list(G.segment_sum(x, i).shape) == [-1, 3]
        with pytest.raises(TypeError, match="out_size must be an int in a static program"):
            G.send_u_recv(x, i, i, out_size=paddle.static.data("n", [1], "int64"))
        s = G.segment_mean(x, i)
    feed = {"x": np.ones((3, 3), "float32"), "i": np.array([0, 0, 2])}
    (got,) = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter").run(
        main, feed=feed, fetch_list=[s])
    np.testing.assert_array_equal(got, [[1, 1, 1], [0, 0, 0], [1, 1, 1]])


# -------------------------------------------------------------- API and errors


def test_out_size_and_one_dimensional_inputs_follow_paddle() -> None:
    x = paddle.to_tensor([1.0, 2.0, 3.0])
    src, dst = paddle.to_tensor([0, 1, 2, 0]), paddle.to_tensor([1, 2, 1, 0])
    assert G.send_u_recv(x, src, dst).shape == [3]
    assert G.send_u_recv(x, src, dst, out_size=0).shape == [3]  # <= 0: as many rows as x
    assert G.send_u_recv(x, src, dst, out_size=paddle.to_tensor(5)).shape == [5]
    # 1-D x and y are [n, 1] for send_ue_recv and send_uv (Paddle's reshape_lhs_rhs)
    out = G.send_ue_recv(x, paddle.to_tensor([1.0, 2, 3, 4]), src, dst)
    np.testing.assert_array_equal(out.numpy(), [[5.0], [8.0], [4.0]])
    assert G.send_uv(x, x, src, dst).shape == [4, 1]


def test_incubate_aliases_and_submodules() -> None:
    x = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    i = paddle.to_tensor([0, 1])
    j = paddle.to_tensor([1, 1])
    np.testing.assert_array_equal(paddle.incubate.graph_send_recv(x, i, j, pool_type="max").numpy(),
                                  [[0, 0], [3, 4]])
    assert paddle.incubate.segment_sum is G.segment_sum
    from pullback.geometric.message_passing import send_u_recv
    from pullback.geometric.math import segment_max

    assert send_u_recv is G.send_u_recv and segment_max is G.segment_max
    with pytest.raises(ValueError, match="pool_type should be"):
        paddle.incubate.graph_send_recv(x, i, j, pool_type="prod")


def test_bad_input_raises_clear_errors() -> None:
    x = paddle.to_tensor(np.ones((3, 2), "float32"))
    i = paddle.to_tensor([0, 1])
    with pytest.raises(IndexOutOfRange, match="dst_index 7 is out of range"):
        G.send_u_recv(x, i, paddle.to_tensor([1, 7]))
    with pytest.raises(IndexOutOfRange, match="src_index -1 is out of range"):
        G.send_u_recv(x, paddle.to_tensor([-1, 0]), i)
    with pytest.raises(IndexOutOfRange, match="dst_index 2 is out of range"):
        G.send_u_recv(x, i, paddle.to_tensor([0, 2]), out_size=2)
    with pytest.raises(ValueError, match="src_index has 2 entries but dst_index has 3"):
        G.send_u_recv(x, i, paddle.to_tensor([0, 1, 1]))
    with pytest.raises(ValueError, match="reduce_op should be"):
        G.send_u_recv(x, i, i, reduce_op="prod")
    with pytest.raises(ValueError, match="message_op should be"):
        G.send_ue_recv(x, x, i, i, message_op="pow")
    with pytest.raises(TypeError, match="'src_index' must be int32 or int64"):
        G.send_u_recv(x, paddle.to_tensor([0.0, 1.0]), i)
    with pytest.raises(TypeError, match="'x' must be one of"):
        G.send_u_recv(paddle.to_tensor([True, False]), i, i)
    with pytest.raises(ValueError, match="y has 3 entries but src_index has 2"):
        G.send_ue_recv(x, paddle.to_tensor(np.ones((3, 2), "float32")), i, i)
    with pytest.raises(ValueError, match="same element type|dtype"):
        G.send_ue_recv(x, paddle.to_tensor(np.ones((2, 2))), i, i)
    with pytest.raises(ValueError, match="segment ids must be sorted"):
        G.segment_sum(x, paddle.to_tensor([1, 0, 1]))
    with pytest.raises(IndexOutOfRange, match=r"segment_ids -1 is out of range \[0, 2\)"):
        G.segment_sum(x, paddle.to_tensor([-1, 0, 1]))
    with pytest.raises(ValueError, match="segment_ids has 2 entries"):
        G.segment_mean(x, i)
    with pytest.raises(TypeError, match="'segment_ids' must be int32 or int64"):
        G.segment_max(x, paddle.to_tensor([0.0, 0.0, 1.0]))


def test_compiled_out_of_range_index_raises_the_interpreters_error(static_mode: None) -> None:
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [-1, 2], "float32")
        s = paddle.static.data("s", [-1], "int64")
        d = paddle.static.data("d", [-1], "int64")
        out = G.send_u_recv(x, s, d, "max")
    feed = {"x": np.ones((3, 2), "float32"), "s": np.array([0, 1]), "d": np.array([1, 3])}
    for exe in (_compiled(), paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")):
        with pytest.raises(IndexOutOfRange, match=r"'pd.send_recv': dst_index 3 is out of range \[0, 3\)"):
            exe.run(main, feed=feed, fetch_list=[out])


# ------------------------------------------------------- host-only utilities


def test_reindex_graph_matches_paddle() -> None:
    """Paddle 3.3.1's outputs for its documented example (and the heterogeneous one)."""
    x = paddle.to_tensor([0, 1, 2])
    neighbors = paddle.to_tensor([8, 9, 0, 4, 7, 6, 7])
    count = paddle.to_tensor([2, 3, 2], dtype="int32")
    src, dst, nodes = G.reindex_graph(x, neighbors, count)
    assert src.numpy().tolist() == [3, 4, 0, 5, 6, 7, 6]
    assert dst.numpy().tolist() == [0, 0, 1, 1, 1, 2, 2]
    assert nodes.numpy().tolist() == [0, 1, 2, 8, 9, 4, 7, 6]
    src, dst, nodes = G.reindex_heter_graph(
        x, [neighbors, paddle.to_tensor([0, 2, 3, 5, 1])],
        [count, paddle.to_tensor([1, 3, 1], dtype="int32")])
    assert src.numpy().tolist() == [3, 4, 0, 5, 6, 7, 6, 0, 2, 8, 9, 1]
    assert dst.numpy().tolist() == [0, 0, 1, 1, 1, 2, 2, 0, 1, 1, 1, 2]
    assert nodes.numpy().tolist() == [0, 1, 2, 8, 9, 4, 7, 6, 3, 5]
    with pytest.raises(ValueError, match="counts add up to 6"):
        G.reindex_graph(x, neighbors, paddle.to_tensor([2, 2, 2], dtype="int32"))


ROW = np.array([3, 7, 0, 9, 1, 4, 2, 9, 3, 9, 1, 9, 7])
COLPTR = np.array([0, 2, 4, 5, 6, 7, 9, 11, 11, 13, 13])


def _neighbors(v: int) -> list[int]:
    return ROW[COLPTR[v]:COLPTR[v + 1]].tolist()


def test_sample_neighbors_all_and_some() -> None:
    row, colptr = paddle.to_tensor(ROW), paddle.to_tensor(COLPTR)
    nodes = [0, 8, 1, 6]
    out, count = G.sample_neighbors(row, colptr, paddle.to_tensor(nodes))
    assert out.numpy().tolist() == sum((_neighbors(v) for v in nodes), [])
    assert count.numpy().tolist() == [2, 2, 2, 2]
    paddle.seed(5)
    out, count, eids = G.sample_neighbors(row, colptr, paddle.to_tensor(nodes), sample_size=1,
                                          eids=paddle.arange(13), return_eids=True)
    assert count.numpy().tolist() == [1, 1, 1, 1]
    for v, u, e in zip(nodes, out.numpy().tolist(), eids.numpy().tolist()):
        assert u in _neighbors(v) and COLPTR[v] <= e < COLPTR[v + 1] and ROW[e] == u
    with pytest.raises(ValueError, match="`eids` should not be None"):
        G.sample_neighbors(row, colptr, paddle.to_tensor(nodes), return_eids=True)
    with pytest.raises(IndexOutOfRange, match="input_nodes 10 is out of range"):
        G.sample_neighbors(row, colptr, paddle.to_tensor([10]))


def test_weighted_sample_neighbors_skips_zero_weights() -> None:
    row, colptr = paddle.to_tensor(ROW), paddle.to_tensor(COLPTR)
    weight = np.ones(13, "float32")
    weight[[0, 2, 9]] = 0.0  # node 0 keeps edge 1, node 1 edge 3, node 6 edge 10
    nodes = paddle.to_tensor([0, 1, 6, 7])
    out, count = G.weighted_sample_neighbors(row, colptr, paddle.to_tensor(weight), nodes, sample_size=1)
    assert count.numpy().tolist() == [1, 1, 1, 0]
    assert out.numpy().tolist() == [ROW[1], ROW[3], ROW[10]]
    with pytest.raises(TypeError, match="'edge_weight' must be float32 or float64"):
        G.weighted_sample_neighbors(row, colptr, row, nodes)


def test_gpu_lowering_refuses_max_and_min_combines_and_segments() -> None:
    """The load-max-store combine is sequential on the CPU only, and a segment
    pool's rows are read by host code: the GPU pipeline names the op instead."""
    from xdsl.dialects.builtin import ModuleOp

    from pullback.dialects import pd
    from pullback.lowering.abi import LoweringError
    from pullback.lowering.gpu.pipeline import lower_to_gpu

    x = pd.DataOp.make("x", [4, 2])
    i = pd.DataOp.make("i", [3], dtype="int64")
    op = pd.SendRecvOp.make(x.out, i.out, i.out, reduce_op="max")
    module = ModuleOp([x, i, op, pd.FetchOp.create(operands=[op.results[0]])])
    with pytest.raises(LoweringError, match="'pd.send_recv' with reduce_op 'max' to the GPU"):
        lower_to_gpu(module)
    x, i = pd.DataOp.make("x", [3, 2]), pd.DataOp.make("i", [3], dtype="int64")
    seg = pd.SegmentPoolOp.make(x.out, i.out)
    module = ModuleOp([x, i, seg, pd.FetchOp.create(operands=[seg.results[0]])])
    with pytest.raises(LoweringError, match="'pd.segment_pool' to the GPU"):
        lower_to_gpu(module)


def test_host_only_utilities_in_a_static_program(static_mode: None) -> None:
    """Sampling then reindexing, as a GNN data pipeline does, in one static program
    (the interpreter runs it: the ops are HOST_ONLY)."""
    row = paddle.static.data("row", [13], "int64")
    colptr = paddle.static.data("colptr", [11], "int64")
    nodes = paddle.static.data("nodes", [-1], "int64")
    neighbors, count = G.sample_neighbors(row, colptr, nodes)
    src, dst, out_nodes = G.reindex_graph(nodes, neighbors, count)
    assert list(src.shape) == [-1] and list(count.shape) == [-1]
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    got = exe.run(feed={"row": ROW, "colptr": COLPTR, "nodes": np.array([0, 8, 1])},
                  fetch_list=[neighbors, count, src, dst, out_nodes])
    assert got[0].tolist() == [3, 7, 9, 7, 0, 9] and got[1].tolist() == [2, 2, 2]
    assert got[2].tolist() == [3, 4, 5, 4, 0, 5] and got[3].tolist() == [0, 0, 1, 1, 2, 2]
    assert got[4].tolist() == [0, 8, 1, 3, 7, 9]
