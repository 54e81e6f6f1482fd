"""`Layer.register_forward_pre_hook` / `register_forward_post_hook` (Paddle's
semantics: replacement inputs and outputs, `with_kwargs`, `always_call`, removal,
static mode), `register_state_dict_hook`, and `Layer.to`/`astype`/`float`."""

from __future__ import annotations

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core


@pytest.fixture(autouse=True)
def eager():
    core.disable_static()
    yield
    core.disable_static()


def test_pre_and_post_hooks_replace_inputs_and_outputs_in_order_and_can_be_removed():
    layer = paddle.nn.Linear(2, 3)
    calls = []

    def pre(lay, inputs):
        calls.append(("pre", lay is layer, type(inputs).__name__))
        return inputs[0] * 2  # a single value: becomes the 1-tuple of inputs

    def post(lay, inputs, output):
        calls.append(("post", float(inputs[0].numpy()[0, 0])))
        return output + 1

    h_pre = layer.register_forward_pre_hook(pre)
    h_post = layer.register_forward_post_hook(post)
    x = paddle.to_tensor(np.array([[1.0, -1.0]], np.float32))
    w, b = layer.weight.numpy(), layer.bias.numpy()
    np.testing.assert_allclose(layer(x).numpy(), (2 * x.numpy()) @ w + b + 1, rtol=1e-6)
    assert calls == [("pre", True, "tuple"), ("post", 2.0)]
    h_pre.remove()
    h_post.remove()
    np.testing.assert_allclose(layer(x).numpy(), x.numpy() @ w + b, rtol=1e-6)
    assert len(calls) == 2


def test_hooks_see_gradients_flow_through_replacements():
    layer = paddle.nn.Linear(2, 1)
    layer.register_forward_post_hook(lambda lay, inp, out: out * 3)
    x = paddle.to_tensor(np.ones((4, 2), np.float32))
    paddle.sum(layer(x)).backward()
    np.testing.assert_allclose(layer.bias.grad.numpy(), [12.0])


def test_with_kwargs_and_always_call():
    class Scale(paddle.nn.Layer):
        def forward(self, x, factor=1.0):
            if factor < 0:
                raise ValueError("negative factor")
            return x * factor

    layer = Scale()
    seen = []

    def pre(lay, args, kwargs):
        return args, {**kwargs, "factor": kwargs.get("factor", 1.0) * 10}

    layer.register_forward_pre_hook(pre, with_kwargs=True)
    layer.register_forward_post_hook(lambda lay, args, kwargs, out: seen.append(kwargs["factor"]),
                                     with_kwargs=True, always_call=True)
    x = paddle.ones([2])
    np.testing.assert_allclose(layer(x, factor=2.0).numpy(), [20.0, 20.0])
    assert seen == [20.0]
    with pytest.raises(ValueError, match="negative factor"):
        layer(x, factor=-1.0)
    assert seen == [20.0, -10.0]  # always_call ran although forward raised
    bad = Scale()
    bad.register_forward_pre_hook(lambda lay, args, kwargs: 3, with_kwargs=True)
    with pytest.raises(RuntimeError, match="tuple of \\(new_args, new_kwargs\\)"):
        bad(x)
    with pytest.raises(TypeError, match="the hook must be callable"):
        layer.register_forward_pre_hook(3)


def test_hooks_apply_in_static_programs():
    core.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        layer = paddle.nn.Linear(2, 2)
        layer.register_forward_post_hook(lambda lay, inp, out: paddle.nn.functional.relu(out) * 0 + 5)
        out = layer(paddle.static.data("a", [1, 2], "float32"))
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(start)
    (got,) = exe.run(main, feed={"a": np.ones((1, 2), np.float32)}, fetch_list=[out])
    np.testing.assert_array_equal(got, np.full((1, 2), 5.0, np.float32))


def test_state_dict_hooks_run_children_first_and_may_replace():
    model = paddle.nn.Sequential(paddle.nn.Linear(2, 2))
    order = []
    model[0].register_state_dict_hook(lambda d: order.append("child"))
    handle = model.register_state_dict_hook(lambda d: {k: v for k, v in d.items() if k.endswith("bias")})
    model.register_state_dict_hook(lambda d: order.append(sorted(d)))
    assert list(model.state_dict()) == ["0.bias"]
    assert order == ["child", ["0.bias"]]
    handle.remove()
    assert sorted(model.state_dict()) == ["0.bias", "0.weight"]


def test_to_astype_and_float_cast_floating_state():
    model = paddle.nn.Sequential(paddle.nn.Linear(2, 3), paddle.nn.BatchNorm1D(3))
    model.to(dtype="float64")
    assert {str(p.dtype) for p in model.parameters()} == {"paddle.float64"}
    assert model[1]._mean.dtype == "float64"
    assert model(paddle.ones([4, 2], dtype="float64")).dtype == "float64"
    model.float()
    assert {str(p.dtype) for p in model.parameters()} == {"paddle.float32"}
    model.astype("float64").float(excluded_layers=[paddle.nn.BatchNorm1D])
    assert model[0].weight.dtype == "float32" and model[1].weight.dtype == "float64"
    assert model.to("cpu") is model
    with pytest.raises(ValueError, match="Layer.to: this build runs on the CPU only"):
        model.to("gpu:0")
    with pytest.raises(ValueError, match="astype: dtype must be a floating type"):
        model.astype("int32")
