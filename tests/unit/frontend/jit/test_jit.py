"""paddle.jit: to_static (traced programs run as one eager op, compiled forward and
backward, gradients on the eager parameters), its cache per input signature,
state write-back, control-flow errors, enable_to_static/not_to_static, and
jit.save -> jit.load in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.frontend.jit.static_function import Dy2StaticError
from pullback.static import InputSpec
from pullback.testing import fd_grad

RNG = np.random.default_rng(7)
F = paddle.nn.functional


class MLP(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = paddle.nn.Linear(6, 16)
        self.fc2 = paddle.nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.tanh(self.fc1(x)))


def _mlp(seed: int = 5) -> MLP:
    paddle.seed(seed)
    return MLP()


DATA = [(RNG.standard_normal((8, 6)).astype("float32"), RNG.integers(0, 3, (8, 1)).astype("int64"))
        for _ in range(4)]


def _train(model, steps=DATA):
    opt = paddle.optimizer.Adam(0.05, parameters=model.parameters())
    losses = []
    for x, y in steps:
        loss = F.cross_entropy(model(paddle.to_tensor(x)), paddle.to_tensor(y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


def test_to_static_trains_like_eager(dynamic_mode):
    eager = _train(_mlp())
    model = paddle.jit.to_static(_mlp(), input_spec=[InputSpec([None, 6], "float32", "x")])
    static = _train(model)
    np.testing.assert_allclose(static, eager, rtol=1e-5, atol=1e-6)
    assert eager[-1] < eager[0]
    # One traced program served every step (the batch dimension is dynamic).
    assert len(model.forward._cache) == 1
    out = model(paddle.to_tensor(DATA[0][0][:3]))
    assert out.shape == [3, 3] and out._node.tpl.op.name == "pd.run_program"


def test_to_static_matches_the_static_api(dynamic_mode):
    """The same model and steps written with paddle.static (SGD)."""
    init = _mlp()
    weights = [p.numpy() for p in init.parameters()]
    model = paddle.jit.to_static(init)
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    dyn = []
    for x, y in DATA:
        loss = F.cross_entropy(model(paddle.to_tensor(x)), paddle.to_tensor(y))
        loss.backward()
        opt.step()
        opt.clear_grad()
        dyn.append(float(loss))

    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, 6], "float32")
            y = paddle.static.data("y", [None, 1], "int64")
            ps = [paddle.static.create_parameter(list(w.shape), "float32", name=f"p{i}")
                  for i, w in enumerate(weights)]
            h = F.tanh(paddle.matmul(x, ps[0]) + ps[1])
            loss = F.cross_entropy(paddle.matmul(h, ps[2]) + ps[3], y)
            paddle.optimizer.SGD(0.1).minimize(loss)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        scope = paddle.static.global_scope()
        for i, w in enumerate(weights):
            scope[f"p{i}"] = w.copy()
        stat = [float(exe.run(main, {"x": a, "y": b}, [loss])[0]) for a, b in DATA]
    finally:
        paddle.disable_static()
    np.testing.assert_allclose(dyn, stat, rtol=1e-5, atol=1e-6)


def test_gradients_match_eager_and_finite_differences(dynamic_mode):
    w0 = RNG.standard_normal((3, 2))

    def f(x, w):
        return (paddle.matmul(x, w).exp() * x.sum(axis=1, keepdim=True)).mean(), x * 2.0

    g = paddle.jit.to_static(f)
    xv = RNG.standard_normal((4, 3))

    def grads(fn):
        x = paddle.to_tensor(xv, stop_gradient=False)
        w = paddle.to_tensor(w0, stop_gradient=False)
        s, t = fn(x, w)
        (s + t.sum()).backward()
        return float(s), x.grad.numpy(), w.grad.numpy()

    s1, gx1, gw1 = grads(g)
    s0, gx0, gw0 = grads(f)
    np.testing.assert_allclose([s1], [s0], rtol=1e-12)
    np.testing.assert_allclose(gx1, gx0, rtol=1e-10)
    np.testing.assert_allclose(gw1, gw0, rtol=1e-10)
    # float64 central differences of the traced function's first output in w.
    num = fd_grad(lambda w: float(g(paddle.to_tensor(xv), paddle.to_tensor(w))[0]), w0)
    np.testing.assert_allclose(gw1, num, rtol=1e-5, atol=1e-7)


def test_frozen_inputs_get_no_gradient_and_cost_none(dynamic_mode):
    model = paddle.jit.to_static(_mlp())
    model.fc1.weight.stop_gradient = True
    x = paddle.to_tensor(DATA[0][0])
    model(x).sum().backward()
    assert model.fc1.weight.grad is None and model.fc2.weight.grad is not None
    concrete = model.forward.concrete_program
    # The backward module for the wanted gradients only (no gradient of x or fc1.w).
    (wrt,) = concrete._grad_modules
    assert 0 not in wrt and len(wrt) == 3


def test_compiled_matches_interpreter(dynamic_mode, monkeypatch):
    x = paddle.to_tensor(DATA[1][0])
    outs = []
    for backend in ("compiled", "interpreter"):
        monkeypatch.setenv("PULLBACK_BACKEND", backend)
        model = paddle.jit.to_static(_mlp())
        y = model(x)
        y.mean().backward()
        outs.append((y.numpy(), model.fc1.weight.grad.numpy()))
        assert type(model.forward.concrete_program._backend).__name__.lower().startswith(backend[:6])
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-5, atol=1e-6)


def test_batch_norm_statistics_written_back(dynamic_mode):
    def net():
        paddle.seed(2)
        return paddle.nn.Sequential(paddle.nn.Conv2D(2, 3, 3), paddle.nn.BatchNorm2D(3), paddle.nn.ReLU())

    x = paddle.to_tensor(RNG.standard_normal((4, 2, 5, 5)).astype("float32"))
    eager, static = net(), paddle.jit.to_static(net())
    for m in (eager, static):
        m(x).mean().backward()
    np.testing.assert_allclose(static[1]._mean.numpy(), eager[1]._mean.numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(static[1]._variance.numpy(), eager[1]._variance.numpy(), rtol=1e-5)
    np.testing.assert_allclose(static[0].weight.grad.numpy(), eager[0].weight.grad.numpy(), rtol=1e-4, atol=1e-6)
    assert static[1]._mean.numpy().any()
    static.eval()
    eager.eval()
    np.testing.assert_allclose(static(x).numpy(), eager(x).numpy(), rtol=1e-5, atol=1e-6)
    assert len(static.forward._cache) == 2  # training and eval traces


def test_method_decorator_and_python_values(dynamic_mode):
    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(2, 2)

        @paddle.jit.to_static
        def forward(self, x, times=2, scale=None):
            for _ in range(times):  # Python values: unrolled
                x = self.fc(x)
            return x * scale if scale is not None else x

    net = Net()
    x = paddle.to_tensor(RNG.standard_normal((3, 2)).astype("float32"))
    a = net(x, 1).numpy()
    np.testing.assert_allclose(a, net.fc(x).numpy(), rtol=1e-6)
    b = net(x, 2, 3.0).numpy()
    np.testing.assert_allclose(b, net.fc(net.fc(x)).numpy() * 3.0, rtol=1e-5)
    assert len(Net.forward.__get__(net)._cache) == 2


def test_unconverted_tensor_condition_names_the_line(dynamic_mode):
    @paddle.jit.to_static
    def f(x):
        return x if x.mean() > 0 else -x  # a conditional expression is not converted

    with pytest.raises(Dy2StaticError, match=r"test_jit\.py:\d+: .*paddle.static.nn.cond"):
        f(paddle.to_tensor([1.0, 2.0]))
    paddle.jit.enable_to_static(False)
    try:
        np.testing.assert_allclose(f(paddle.to_tensor([-1.0])).numpy(), [1.0])
    finally:
        paddle.jit.enable_to_static(True)
    with pytest.raises(TypeError, match="bool"):
        paddle.jit.enable_to_static(1)


def _branchy(x, w, limit=3):
    y = paddle.matmul(x, w)
    if y.mean() > 0:
        z = y * 2.0
    else:
        z = -y
    i = paddle.zeros([1], "int64")
    s = z
    while i < limit:
        s = s + z * 0.5
        i = i + 1
    if s.sum() > 0 and not s.mean() > 1e6:
        return s.tanh()
    return s * 0.5


@pytest.mark.filterwarnings("ignore:compiled backend")
def test_tensor_if_and_while_are_converted(dynamic_mode):
    g = paddle.jit.to_static(_branchy)
    for sign in (1.0, -1.0):
        xv = RNG.standard_normal((2, 3)) * 0.1 + sign
        wv = np.abs(RNG.standard_normal((3, 2)))
        results = []
        for fn in (g, _branchy):
            x = paddle.to_tensor(xv, stop_gradient=False)
            w = paddle.to_tensor(wv, stop_gradient=False)
            out = fn(x, w)
            (out * out).sum().backward()
            results.append((out.numpy(), x.grad.numpy(), w.grad.numpy()))
        for a, b in zip(*results):
            np.testing.assert_allclose(a, b, rtol=1e-10)
    # One traced program for both signs: the branches are in the graph.
    assert len(g._cache) == 1
    names = [op.name for op in g.concrete_program.program.module.walk()]
    assert "pd.if" in names and "pd.while" in names


@pytest.mark.filterwarnings("ignore:compiled backend")
def test_for_range_over_a_tensor_bound(dynamic_mode):
    def f(x, n):
        s = x
        for _ in range(n):
            s = s * 1.5 + 1.0
        acc = 0
        for j in range(5, 0, -2):  # a Python range: unrolled, negative step kept
            acc = acc + j
        return s * acc

    g = paddle.jit.to_static(f)
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    for n in (3, 1):
        out = g(x, paddle.to_tensor([n], dtype="int64"))
        out.sum().backward()
        got = x.grad.numpy()
        x.clear_grad(set_to_zero=False)
        want = f(x, n)
        want.sum().backward()
        np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-6)
        np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-6)
        x.clear_grad(set_to_zero=False)
    assert len(g._cache) == 1


def test_python_conditions_stay_python(dynamic_mode):
    @paddle.jit.to_static
    def f(x, flag=True, n=2):
        if flag:
            x = x + 1.0
        k = 0
        while k < n:
            x = x * 2.0
            k += 1
        return x

    np.testing.assert_allclose(f(paddle.to_tensor([1.0])).numpy(), [8.0])
    np.testing.assert_allclose(f(paddle.to_tensor([1.0]), False, 1).numpy(), [2.0])
    names = {op.name for op in f.concrete_program.program.module.walk()}
    assert "pd.if" not in names and "pd.while" not in names


def test_branch_only_variable_is_a_clear_error(dynamic_mode):
    @paddle.jit.to_static
    def f(x):
        if x.sum() > 0:
            y = x * 2.0
        return y

    with pytest.raises(Dy2StaticError, match=r"test_jit\.py:\d+: 'y' is a tensor in one branch.*false branch"):
        f(paddle.to_tensor([1.0]))


def test_not_to_static_runs_python(dynamic_mode):
    @paddle.jit.not_to_static
    def f(x):
        return x if x.mean() > 0 else -x

    g = paddle.jit.to_static(f)
    np.testing.assert_allclose(g(paddle.to_tensor([-2.0])).numpy(), [2.0])


def test_input_spec_mismatch_is_clear(dynamic_mode):
    model = paddle.jit.to_static(_mlp(), input_spec=[InputSpec([None, 6], "float32")])
    with pytest.raises(ValueError, match=r"shape \[2, 5\].*input_spec shape \[-1, 6\]"):
        model(paddle.to_tensor(np.zeros((2, 5), "float32")))
    with pytest.raises(TypeError, match="input_spec"):
        paddle.jit.to_static(_mlp(), input_spec=InputSpec([None, 6]))


def test_double_grad_is_an_error(dynamic_mode):
    g = paddle.jit.to_static(lambda x: (x * x).sum())
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    (dx,) = paddle.grad(g(x), x, create_graph=True)
    np.testing.assert_allclose(dx.numpy(), [2.0, 4.0])
    with pytest.raises(RuntimeError, match="second derivatives"):
        dx.sum().backward()


def test_save_load_in_a_fresh_process(dynamic_mode, tmp_path):
    paddle.seed(4)
    model = paddle.nn.Sequential(paddle.nn.Conv2D(1, 2, 3, padding=1), paddle.nn.BatchNorm2D(2),
                                 paddle.nn.ReLU(), paddle.nn.Flatten(), paddle.nn.Linear(2 * 16, 3))
    x = RNG.standard_normal((5, 1, 4, 4)).astype("float32")
    model(paddle.to_tensor(x))  # moves the running statistics
    model.eval()
    path = str(tmp_path / "m" / "inference")
    paddle.jit.save(model, path, input_spec=[InputSpec([None, 1, 4, 4], "float32", "image")])
    assert os.path.exists(path + ".pdmodel") and os.path.exists(path + ".pdiparams")
    np.save(tmp_path / "x.npy", x)
    want = model(paddle.to_tensor(x)).numpy()
    script = (
        "import numpy as np, pullback as paddle, sys\n"
        f"m = paddle.jit.load({path!r})\n"
        f"x = np.load({str(tmp_path / 'x.npy')!r})\n"
        "print(type(m).__name__)\n"
        f"np.save({str(tmp_path / 'y.npy')!r}, m(paddle.to_tensor(x)).numpy())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "TranslatedLayer" in out.stdout
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), want, rtol=1e-5, atol=1e-6)


def test_saved_training_dropout_needs_no_seed(dynamic_mode, tmp_path):
    paddle.seed(1)
    model = paddle.nn.Sequential(paddle.nn.Linear(6, 4), paddle.nn.Dropout(0.5))
    spec = [InputSpec([None, 6], "float32")]
    path = str(tmp_path / "drop")
    paddle.jit.save(model, path, input_spec=spec)  # traced in training mode
    loaded = paddle.jit.load(path)
    assert [p.shape for p in loaded.parameters()] == [[6, 4], [4]]
    x = paddle.to_tensor(DATA[0][0])
    model.eval()
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)


def test_loaded_layer_fine_tunes(dynamic_mode, tmp_path):
    model = _mlp()
    path = str(tmp_path / "mlp")
    paddle.jit.save(model, path, input_spec=[InputSpec([None, 6], "float32")])
    loaded = paddle.jit.load(path)
    x = paddle.to_tensor(DATA[0][0])
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    assert len(loaded.parameters()) == 4
    losses = _train(loaded)
    assert losses[-1] < losses[0]
    with pytest.raises(ValueError, match="not exists"):
        paddle.jit.load(str(tmp_path / "missing"))


def test_save_needs_shapes(dynamic_mode, tmp_path):
    with pytest.raises(ValueError, match="input_spec"):
        paddle.jit.save(_mlp(), str(tmp_path / "m"))


def test_run_program_op_text_round_trips_without_its_program():
    """The op's IR prints and parses even where its program is not loaded."""
    from pullback.frontend.serialization import program_from_text

    text = (
        'builtin.module {\n  %x = pd.data "x" : tensor<2xf32>\n'
        '  %y = pd.run_program %x {program = "gone#0"} : (tensor<2xf32>) -> tensor<2xf32>\n}\n'
    )
    prog = program_from_text(text)
    op = [o for o in prog.module.walk() if isinstance(o, pd.RunProgramOp)][0]
    assert op.prop("program") == "gone#0"
    with pytest.raises(Exception, match="not loaded"):
        pd.RunProgramOp.make(op.operands[0], program="gone#0")


def test_no_grad_runs_the_forward_without_saved_values(dynamic_mode, monkeypatch):
    model = paddle.jit.to_static(_mlp())
    x = paddle.to_tensor(DATA[0][0])
    want = model(x).numpy()
    concrete = model.forward.concrete_program
    assert concrete.n_saved > 0 and len(concrete.inference.fetches) == 1
    calls = []
    run = type(concrete.inference).run
    monkeypatch.setattr(type(concrete.inference), "run", lambda self, a: calls.append(1) or run(self, a))
    with paddle.no_grad():
        y = model(x)
    assert y.stop_gradient and calls == [1]
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)


def test_dropout_draws_a_new_mask_per_call_like_eager(dynamic_mode):
    def run(static: bool) -> list[np.ndarray]:
        paddle.seed(9)
        net = paddle.nn.Sequential(paddle.nn.Linear(6, 8), paddle.nn.Dropout(0.5), paddle.nn.Linear(8, 2))
        if static:
            net = paddle.jit.to_static(net)
        outs = []
        for _ in range(2):
            y = net(paddle.to_tensor(DATA[0][0]))
            y.sum().backward()
            outs += [y.numpy(), net[0].weight.grad.numpy()]
            net.clear_gradients()
        return outs

    eager, static = run(False), run(True)
    for a, b in zip(eager, static):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert not np.allclose(static[0], static[2])  # two calls, two masks


def test_numpy_arguments_are_inputs(dynamic_mode):
    f = paddle.jit.to_static(lambda x, a: (x * a, 3))
    y, k = f(paddle.to_tensor([1.0, 2.0]), np.array([2.0, 3.0], np.float32))
    np.testing.assert_allclose(y.numpy(), [2.0, 6.0])
    assert k == 3
    y, _ = f(paddle.to_tensor([1.0, 2.0]), np.array([4.0, 5.0], np.float32))
    np.testing.assert_allclose(y.numpy(), [4.0, 10.0])
    assert len(f._cache) == 1


def test_concrete_program_and_code(dynamic_mode):
    model = paddle.jit.to_static(_mlp(), input_spec=[InputSpec([None, 6], "float32", "x")])
    concrete = model.forward.concrete_program
    assert [v.name for v in concrete.inputs] == ["x"] and concrete.inputs[0].shape == [-1, 6]
    assert len(concrete.outputs) == 1 and concrete.outputs[0].shape == [-1, 3]
    assert [p.name for p in concrete.parameters] == [p.name for p in model.parameters()]
    assert concrete.main_program is concrete.program
    g = paddle.jit.to_static(_branchy)
    assert "__jst.convert_ifelse" in g.code and "__jst.convert_while" in g.code
    paddle.jit.set_code_level(100)
    paddle.jit.set_verbosity(3)


def test_static_function_inputs_and_outputs(dynamic_mode):
    """`StaticFunction.inputs`/`.outputs`, as Paddle 3.3.1 gives them: for this Net,
    inputs `[x: [-1, 3] float32]`, outputs `[[-1, 2] float32, [] float32]`; for a
    plain function, a ValueError before any call, then the traced tensors only."""

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(3, 2)

        @paddle.jit.to_static(input_spec=[InputSpec([None, 3], "float32", "x")])
        def forward(self, x):
            return self.fc(x), paddle.mean(x)

    net = Net()  # (the StaticFunction holds its instance weakly, as Paddle does)
    sf = net.forward
    assert [(v.name, v.shape, str(v.dtype)) for v in sf.inputs] == [("x", [-1, 3], "paddle.float32")]
    assert [(v.shape, str(v.dtype)) for v in sf.outputs] == [([-1, 2], "paddle.float32"), ([], "paddle.float32")]

    @paddle.jit.to_static
    def f(a, b, n=2):
        return a * b + n

    with pytest.raises(ValueError, match="input_spec"):
        _ = f.inputs
    f(paddle.ones([2]), paddle.ones([2]))
    assert [v.shape for v in f.inputs] == [[2], [2]] and [v.shape for v in f.outputs] == [[2]]


@pytest.mark.filterwarnings("ignore:compiled backend")
def test_sublayer_control_flow_is_converted(dynamic_mode):
    class Gate(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(3, 3)

        def forward(self, x):
            y = self.fc(x)
            if y.sum() > 0:
                y = y * 2.0
            return y

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.gate = Gate()

        def forward(self, x):
            return self.gate(x).mean()

    net = Net()
    static = paddle.jit.to_static(net)
    for sign in (1.0, -1.0):
        x = paddle.to_tensor(np.full((2, 3), sign, "float32"))
        eager = net.forward.dygraph_function(x)
        np.testing.assert_allclose(static(x).numpy(), eager.numpy(), rtol=1e-6)
    assert len(static.forward._cache) == 1


def test_unused_inputs_get_no_gradient_and_feeds_are_named(dynamic_mode):
    @paddle.jit.to_static
    def f(x, scale, ys, unused):
        return x * scale + ys[1]

    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    unused = paddle.to_tensor([5.0], stop_gradient=False)
    ys = [paddle.to_tensor([0.0, 0.0]), paddle.to_tensor([1.0, 1.0], stop_gradient=False)]
    out = f(x, 3.0, ys, unused)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(ys[1].grad.numpy(), [1.0, 1.0])
    assert unused.grad is None
    assert [v.name for v in f.concrete_program.inputs] == ["x", "ys_0", "ys_1", "unused"]


def test_parameters_created_in_forward_are_a_clear_error(dynamic_mode):
    class Lazy(paddle.nn.Layer):
        def forward(self, x):
            return paddle.nn.Linear(2, 2)(x)

    with pytest.raises(Dy2StaticError, match="creates parameters.*__init__"):
        paddle.jit.to_static(Lazy())(paddle.ones([1, 2]))


def test_save_a_plain_function(dynamic_mode, tmp_path):
    w = paddle.to_tensor(np.arange(6, dtype="float32").reshape(3, 2))

    def f(x):
        return paddle.matmul(x, w) + 1.0

    path = str(tmp_path / "fn")
    paddle.jit.save(f, path, input_spec=[InputSpec([None, 3], "float32", "x")])
    loaded = paddle.jit.load(path)
    x = np.ones((4, 3), "float32")
    np.testing.assert_allclose(loaded(paddle.to_tensor(x)).numpy(), x @ w.numpy() + 1.0)


def test_programs_are_released_with_their_function(dynamic_mode):
    import gc

    f = paddle.jit.to_static(lambda x: x * 2.0)
    f(paddle.to_tensor([1.0]))
    key = f.concrete_program.key
    assert key in pd.RUN_PROGRAMS
    del f
    gc.collect()
    assert key not in pd.RUN_PROGRAMS and key + "/inference" not in pd.RUN_PROGRAMS


def test_bound_methods_do_not_keep_layers_alive(dynamic_mode):
    import gc
    import weakref

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(2, 2)

        @paddle.jit.to_static
        def forward(self, x):
            return self.fc(x)

    net = Net()
    net(paddle.ones([1, 2]))
    key = Net.forward.__get__(net).concrete_program.key
    ref = weakref.ref(net)
    del net
    gc.collect()
    assert ref() is None and key not in pd.RUN_PROGRAMS
