"""Legacy Paddle operators translated one by one: a `ProgramDesc` written here
(feed -> op -> fetch, with Paddle 3.3.1's slots and attributes) loads with
`paddle.jit.load` and computes what the operator computes in Paddle (numpy
references, or pullback's own API where the semantics are those of the API).

The whole models of `test_paddle_models.py` cover what Paddle itself wrote; these
cover the attribute conventions of operators those models do not use (`mul`'s
`x_num_col_dims`, `elementwise_*`'s `axis`, `flatten2`, `slice`'s
`decrease_axis`, `reduce_all`, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pullback as paddle
from pullback.frontend.formats import program_desc as pdesc
from pullback.frontend.formats.importer import UnsupportedOpsError
from pullback.frontend.formats.tensor_stream import write_tensors

RNG = np.random.default_rng(11)
F32 = np.float32


def _var(name: str, arr: np.ndarray, persistable: bool, batch_dynamic: bool) -> dict[str, Any]:
    dims = list(arr.shape)
    if batch_dynamic and dims:
        dims[0] = -1
    return {"name": name, "type": {"type": pdesc.DENSE_TENSOR, "dense_tensor": {
        "tensor": {"data_type": pdesc.DTYPE_VAR_TYPES[arr.dtype.name], "dims": dims}}},
        "persistable": persistable}


def _op(type_: str, inputs: dict[str, list[str]], outputs: dict[str, list[str]], **attrs: Any) -> dict[str, Any]:
    return {"type": type_, "inputs": [{"parameter": k, "arguments": v} for k, v in inputs.items()],
            "outputs": [{"parameter": k, "arguments": v} for k, v in outputs.items()],
            "attrs": [pdesc.make_attr(k, v) for k, v in attrs.items()]}


def run(tmp_path: Path, ops: list[dict[str, Any]], feeds: dict[str, np.ndarray], fetches: list[str],
        params: dict[str, np.ndarray] | None = None, batch_dynamic: bool = False) -> list[np.ndarray]:
    params = params or {}
    vars_ = [_var(n, a, False, batch_dynamic) for n, a in feeds.items()]
    vars_ += [_var(n, a, True, False) for n, a in params.items()]
    body = [_op("feed", {"X": ["feed"]}, {"Out": [n]}, col=i) for i, n in enumerate(feeds)]
    body += ops
    body += [_op("fetch", {"X": [n]}, {"Out": ["fetch"]}, col=i) for i, n in enumerate(fetches)]
    prog = {"blocks": [{"idx": 0, "parent_idx": -1, "vars": vars_, "ops": body}], "version": {"version": 3003001}}
    prefix = tmp_path / "m"
    (tmp_path / "m.pdmodel").write_bytes(pdesc.serialize_program(prog))
    (tmp_path / "m.pdiparams").write_bytes(write_tensors([params[n] for n in sorted(params)]))
    layer = paddle.jit.load(str(prefix))
    outs = layer(*[paddle.to_tensor(a) for a in feeds.values()])
    outs = outs if isinstance(outs, list) else [outs]
    return [o.numpy() for o in outs]


def test_elementwise_axis_aligns_y(dynamic_mode, tmp_path):
    x = RNG.standard_normal((2, 3, 4, 5)).astype(F32)
    y = RNG.standard_normal((3, 4)).astype(F32)
    (got,) = run(tmp_path, [_op("elementwise_add", {"X": ["x"], "Y": ["y"]}, {"Out": ["z"]}, axis=1)],
                 {"x": x, "y": y}, ["z"])
    np.testing.assert_allclose(got, x + y[None, :, :, None], rtol=1e-6)
    (got,) = run(tmp_path, [_op("elementwise_mul", {"X": ["x"], "Y": ["y"]}, {"Out": ["z"]}, axis=-1)],
                 {"x": x, "y": x[0, 0]}, ["z"])
    np.testing.assert_allclose(got, x * x[0, 0], rtol=1e-6)


def test_mul_flattens_by_num_col_dims(dynamic_mode, tmp_path):
    x = RNG.standard_normal((2, 3, 4)).astype(F32)
    w = RNG.standard_normal((4, 5)).astype(F32)
    (got,) = run(tmp_path, [_op("mul", {"X": ["x"], "Y": ["w"]}, {"Out": ["z"]}, x_num_col_dims=2, y_num_col_dims=1)],
                 {"x": x}, ["z"], {"w": w})
    np.testing.assert_allclose(got, x @ w, rtol=1e-5)
    (got,) = run(tmp_path, [_op("mul", {"X": ["x"], "Y": ["w2"]}, {"Out": ["z"]}, x_num_col_dims=1, y_num_col_dims=1)],
                 {"x": x}, ["z"], {"w2": RNG.standard_normal((12, 5)).astype(F32)})
    assert got.shape == (2, 5)


def test_matmul_v1_alpha_and_transpose(dynamic_mode, tmp_path):
    x = RNG.standard_normal((3, 4)).astype(F32)
    y = RNG.standard_normal((5, 4)).astype(F32)
    (got,) = run(tmp_path, [_op("matmul", {"X": ["x"], "Y": ["y"]}, {"Out": ["z"]}, transpose_X=False,
                                transpose_Y=True, alpha=0.5)], {"x": x, "y": y}, ["z"])
    np.testing.assert_allclose(got, 0.5 * x @ y.T, rtol=1e-5)


def test_shape_ops(dynamic_mode, tmp_path):
    x = RNG.standard_normal((2, 3, 4, 5)).astype(F32)
    ops = [
        _op("flatten2", {"X": ["x"]}, {"Out": ["f"], "XShape": ["fx"]}, axis=2),
        _op("reshape2", {"X": ["x"]}, {"Out": ["r"], "XShape": ["rx"]}, shape=[0, -1, 5]),
        _op("transpose2", {"X": ["x"]}, {"Out": ["t"], "XShape": ["tx"]}, axis=[0, 2, 1, 3]),
        _op("unsqueeze2", {"X": ["x"]}, {"Out": ["u"], "XShape": ["ux"]}, axes=[0]),
        _op("squeeze2", {"X": ["u"]}, {"Out": ["s"], "XShape": ["sx"]}, axes=[0]),
        _op("slice", {"Input": ["x"]}, {"Out": ["sl"]}, axes=[1, 3], starts=[1, 0], ends=[2, 10],
            decrease_axis=[1], infer_flags=[1, 1]),
        _op("split", {"X": ["x"]}, {"Out": ["p0", "p1"]}, num=0, sections=[1, 2], axis=1),
        _op("concat", {"X": ["p1", "p0"]}, {"Out": ["c"]}, axis=1),
        _op("stack", {"X": ["x", "x"]}, {"Y": ["st"]}, axis=0),
    ]
    f, r, t, s, sl, p0, c, st = run(tmp_path, ops, {"x": x}, ["f", "r", "t", "s", "sl", "p0", "c", "st"])
    np.testing.assert_array_equal(f, x.reshape(6, 20))
    np.testing.assert_array_equal(r, x.reshape(2, 12, 5))
    np.testing.assert_array_equal(t, x.transpose(0, 2, 1, 3))
    np.testing.assert_array_equal(s, x)
    np.testing.assert_array_equal(sl, x[:, 1, :, :])
    np.testing.assert_array_equal(p0, x[:, :1])
    np.testing.assert_array_equal(c, np.concatenate([x[:, 1:], x[:, :1]], axis=1))
    np.testing.assert_array_equal(st, np.stack([x, x]))


def test_reductions_cast_and_constants(dynamic_mode, tmp_path):
    x = RNG.standard_normal((3, 4)).astype(F32)
    ops = [
        _op("reduce_sum", {"X": ["x"]}, {"Out": ["all"]}, dim=[], keep_dim=False, reduce_all=True),
        _op("reduce_max", {"X": ["x"]}, {"Out": ["mx"]}, dim=[1], keep_dim=True, reduce_all=False),
        _op("reduce_mean", {"X": ["x"]}, {"Out": ["mn"]}, dim=[0], keep_dim=False, reduce_all=False),
        _op("cast", {"X": ["x"]}, {"Out": ["d"]}, in_dtype=5, out_dtype=6),
        _op("fill_constant", {}, {"Out": ["k"]}, shape=[1], value=2.5, dtype=5, str_value=""),
        _op("elementwise_mul", {"X": ["x"], "Y": ["k"]}, {"Out": ["xk"]}, axis=-1),
        _op("arg_max", {"X": ["x"]}, {"Out": ["am"]}, axis=1, keepdims=False, flatten=False, dtype=3),
        _op("top_k_v2", {"X": ["x"]}, {"Out": ["tv"], "Indices": ["ti"]}, k=2, axis=-1, largest=True, sorted=True),
    ]
    all_, mx, mn, d, xk, am, tv, ti = run(tmp_path, ops, {"x": x}, ["all", "mx", "mn", "d", "xk", "am", "tv", "ti"])
    np.testing.assert_allclose(all_, x.sum(), rtol=1e-5)
    np.testing.assert_array_equal(mx, x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(mn, x.mean(axis=0), rtol=1e-6)
    assert d.dtype == np.float64
    np.testing.assert_allclose(xk, 2.5 * x, rtol=1e-6)
    np.testing.assert_array_equal(am, x.argmax(axis=1))
    np.testing.assert_array_equal(tv, -np.sort(-x, axis=-1)[:, :2])
    np.testing.assert_array_equal(ti, np.argsort(-x, axis=-1)[:, :2])


def test_activations(dynamic_mode, tmp_path):
    x = (RNG.standard_normal((4, 6)) * 4).astype(F32)
    names = ["relu6", "leaky_relu", "hard_swish", "hard_sigmoid", "swish", "log_softmax", "brelu", "elu"]
    ops = [
        _op("relu6", {"X": ["x"]}, {"Out": ["relu6"]}, threshold=6.0),
        _op("leaky_relu", {"X": ["x"]}, {"Out": ["leaky_relu"]}, alpha=0.1),
        _op("hard_swish", {"X": ["x"]}, {"Out": ["hard_swish"]}, threshold=6.0, scale=6.0, offset=3.0),
        _op("hard_sigmoid", {"X": ["x"]}, {"Out": ["hard_sigmoid"]}, slope=0.2, offset=0.5),
        _op("swish", {"X": ["x"]}, {"Out": ["swish"]}, beta=1.0),
        _op("log_softmax", {"X": ["x"]}, {"Out": ["log_softmax"]}, axis=-1),
        _op("brelu", {"X": ["x"]}, {"Out": ["brelu"]}, t_min=-1.0, t_max=2.0),
        _op("elu", {"X": ["x"]}, {"Out": ["elu"]}, alpha=1.0),
    ]
    got = dict(zip(names, run(tmp_path, ops, {"x": x}, names)))
    sig = 1 / (1 + np.exp(-x))
    want = {
        "relu6": np.clip(x, 0, 6), "leaky_relu": np.where(x > 0, x, 0.1 * x),
        "hard_swish": x * np.clip(x + 3, 0, 6) / 6, "hard_sigmoid": np.clip(0.2 * x + 0.5, 0, 1),
        "swish": x * sig, "log_softmax": x - np.log(np.exp(x).sum(-1, keepdims=True)),
        "brelu": np.clip(x, -1, 2), "elu": np.where(x > 0, x, np.expm1(x)),
    }
    for k in names:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_pools_embedding_and_gather(dynamic_mode, tmp_path):
    x = RNG.standard_normal((2, 3, 6, 6)).astype(F32)
    w = RNG.standard_normal((10, 4)).astype(F32)
    ids = np.array([[1, 2], [9, 0]], dtype=np.int64)
    ops = [
        _op("pool2d", {"X": ["x"]}, {"Out": ["g"]}, pooling_type="avg", ksize=[1, 1], global_pooling=True,
            strides=[1, 1], paddings=[0, 0], adaptive=False, ceil_mode=False, exclusive=True),
        _op("pool2d", {"X": ["x"]}, {"Out": ["a"]}, pooling_type="max", ksize=[2, 3], global_pooling=False,
            strides=[1, 1], paddings=[0, 0], adaptive=True, ceil_mode=False, exclusive=True),
        _op("pool2d", {"X": ["x"]}, {"Out": ["p"]}, pooling_type="avg", ksize=[3, 3], global_pooling=False,
            strides=[2, 2], paddings=[1, 1], adaptive=False, ceil_mode=False, exclusive=False),
        _op("lookup_table_v2", {"Ids": ["ids"], "W": ["w"]}, {"Out": ["e"]}, padding_idx=-1),
        _op("gather", {"X": ["w"], "Index": ["i1"]}, {"Out": ["ga"]}, axis=0),
    ]
    i1 = np.array([3, 1], dtype=np.int64)
    g, a, p, e, ga = run(tmp_path, ops, {"x": x, "ids": ids, "i1": i1}, ["g", "a", "p", "e", "ga"], {"w": w})
    np.testing.assert_allclose(g, x.mean(axis=(2, 3), keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(a, x.reshape(2, 3, 2, 3, 3, 2).max(axis=(3, 5)))
    xt = paddle.to_tensor(x)
    want = paddle.nn.functional.avg_pool2d(xt, 3, 2, 1, exclusive=False).numpy()
    np.testing.assert_allclose(p, want, rtol=1e-6)
    np.testing.assert_array_equal(e, w[ids])
    np.testing.assert_array_equal(ga, w[i1])


def test_dropout_implementations(dynamic_mode, tmp_path):
    x = RNG.standard_normal((3, 4)).astype(F32)
    ops = [
        _op("dropout", {"X": ["x"]}, {"Out": ["up"]}, dropout_prob=0.3, is_test=True,
            dropout_implementation="upscale_in_train"),
        _op("dropout", {"X": ["x"]}, {"Out": ["down"]}, dropout_prob=0.3, is_test=True,
            dropout_implementation="downgrade_in_infer"),
    ]
    up, down = run(tmp_path, ops, {"x": x}, ["up", "down"])
    np.testing.assert_array_equal(up, x)
    np.testing.assert_allclose(down, 0.7 * x, rtol=1e-6)


def test_dynamic_batch_feeds(dynamic_mode, tmp_path):
    x = RNG.standard_normal((5, 3)).astype(F32)
    w = RNG.standard_normal((3, 2)).astype(F32)
    ops = [_op("matmul_v2", {"X": ["x"], "Y": ["w"]}, {"Out": ["z"]}, trans_x=False, trans_y=False)]
    (got,) = run(tmp_path, ops, {"x": x}, ["z"], {"w": w}, batch_dynamic=True)
    np.testing.assert_allclose(got, x @ w, rtol=1e-5)


def test_run_time_shapes_and_unknown_ops_are_reported(dynamic_mode, tmp_path):
    x = RNG.standard_normal((2, 3)).astype(F32)
    ops = [_op("shape", {"Input": ["x"]}, {"Out": ["s"]}),
           _op("reshape2", {"X": ["x"], "ShapeTensor": ["s"]}, {"Out": ["r"]}, shape=[]),
           _op("my_custom_op", {"X": ["r"]}, {"Out": ["y"]}),
           _op("my_custom_op", {"X": ["y"]}, {"Out": ["z"]})]
    with pytest.raises(UnsupportedOpsError, match=r"1 operator type\(s\).*: my_custom_op x2$"):
        run(tmp_path, ops, {"x": x}, ["z"])
    # `shape` is followed symbolically (into fill_constant's sizes), not into a reshape.
    with pytest.raises(ValueError, match="cannot translate op 'reshape2': input 'ShapeTensor'"):
        run(tmp_path, ops[:2], {"x": x}, ["r"])
    ops = [_op("fill_constant", {}, {"Out": ["s"]}, shape=[2], value=3.0, dtype=3, str_value=""),
           _op("reshape2", {"X": ["x"], "ShapeTensor": ["s"]}, {"Out": ["r"]}, shape=[])]
    with pytest.raises(ValueError, match="cannot translate op 'reshape2': input 'ShapeTensor'"):
        run(tmp_path, ops, {"x": x}, ["r"])


def test_run_time_sizes_of_fill_constant(dynamic_mode, tmp_path):
    """What Paddle writes for an RNN's zero initial states: `shape` of a feed, its
    batch sliced out and stacked with constants (`ShapeTensorList`) or the whole
    shape (`ShapeTensor`), as a `fill_constant`'s sizes."""
    x = RNG.standard_normal((2, 3, 4)).astype(F32)

    def const(name: str, value: int) -> dict[str, Any]:
        return _op("fill_constant", {}, {"Out": [name]}, shape=[], value=float(value), dtype=2, str_value=str(value))

    ops = [_op("shape", {"Input": ["x"]}, {"Out": ["s"]}),
           _op("slice", {"Input": ["s"]}, {"Out": ["b"]}, axes=[0], starts=[0], ends=[1], decrease_axis=[0],
               infer_flags=[1]),
           _op("slice", {"Input": ["s"]}, {"Out": ["t"]}, axes=[0], starts=[1], ends=[2], decrease_axis=[0],
               infer_flags=[1]),
           const("c5", 5),
           _op("fill_constant", {"ShapeTensorList": ["t", "b", "c5"]}, {"Out": ["z"]}, shape=[3, -1, 5],
               value=1.5, dtype=5, str_value="1.5"),
           _op("fill_constant", {"ShapeTensor": ["s"]}, {"Out": ["w"]}, shape=[-1, 3, 4], value=0.0, dtype=5,
               str_value="0.0")]
    z, w = run(tmp_path, ops, {"x": x}, ["z", "w"], batch_dynamic=True)
    np.testing.assert_array_equal(z, np.full((3, 2, 5), 1.5, F32))
    np.testing.assert_array_equal(w, np.zeros((2, 3, 4), F32))
    layer = paddle.jit.load(str(tmp_path / "m"))
    assert layer(paddle.zeros([7, 3, 4]))[0].shape == [3, 7, 5]  # the batch of this call
