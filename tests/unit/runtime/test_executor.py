"""Executor, Scope and places: Paddle's `Executor.run` contract.

Feeds are checked before anything runs (each error: its type and a message
fragment naming the variable and what was expected); fetches resolve Variables and
names (gradient names included); startup programs initialize the scope; persistable
updates are written back; backends are chosen by name, and CPUPlace runs native code
by default and trains as the interpreter does.  (Places: test_places.py.)
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import pullback as paddle
import pullback.nn.functional as F
from pullback.runtime import executor as executor_mod
from pullback.runtime.scope import LoDTensor, Scope


@pytest.fixture(autouse=True)
def programs(static_programs):
    """Fresh static programs, names and scope (`conftest.static_programs`)."""
    return static_programs


@pytest.fixture
def linear(programs):
    """`mean(square_error_cost(fc(x, 1), y))` with initialized parameters."""
    main, startup = programs
    x = paddle.static.data("x", [None, 3], "float32")
    y = paddle.static.data("y", [None, 1], "float32")
    pred = paddle.static.nn.fc(x, 1)
    loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    return exe, main, x, y, pred, loss


def _batch(n: int = 4) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "x": rng.normal(size=(n, 3)).astype(np.float32),
        "y": rng.normal(size=(n, 1)).astype(np.float32),
    }


# --------------------------------------------------------------------------- running


def test_run_returns_fetches_as_numpy_and_matches_the_formula(linear):
    exe, main, x, y, pred, loss = linear
    feed = _batch()
    scope = paddle.static.global_scope()
    got_pred, got_loss = exe.run(main, feed=feed, fetch_list=[pred, loss])
    want = feed["x"] @ scope["fc_0.w_0"] + scope["fc_0.b_0"]
    assert isinstance(got_pred, np.ndarray) and got_pred.shape == (4, 1)
    np.testing.assert_allclose(got_pred, want, rtol=1e-6)
    np.testing.assert_allclose(got_loss, np.mean((want - feed["y"]) ** 2), rtol=1e-6)


def test_default_program_fetch_by_name_and_single_item(linear):
    exe, main, *_ = linear
    feed = _batch()
    a = exe.run(feed=feed, fetch_list=["fc_0.tmp_1"])[0]  # default_main_program()
    b = exe.run(main, feed=feed, fetch_list="fc_0.tmp_1")[0]
    np.testing.assert_array_equal(a, b)


def test_fetch_gradient_by_name_resolves_latest_definition(linear):
    exe, main, x, y, pred, loss = linear
    paddle.static.append_backward(loss)
    feed = _batch()
    scope = paddle.static.global_scope()
    gw, gb = exe.run(main, feed=feed, fetch_list=["fc_0.w_0@GRAD", "fc_0.b_0@GRAD"])
    resid = feed["x"] @ scope["fc_0.w_0"] + scope["fc_0.b_0"] - feed["y"]
    np.testing.assert_allclose(gw, 2 * feed["x"].T @ resid / 4, rtol=1e-5)
    np.testing.assert_allclose(gb, 2 * resid.sum(0) / 4, rtol=1e-5)


def test_fetch_a_variable_of_a_clone_by_name(linear):
    exe, main, x, y, pred, loss = linear
    test_program = main.clone(for_test=True)
    (a,) = exe.run(test_program, feed=_batch(), fetch_list=[loss])
    (b,) = exe.run(main, feed=_batch(), fetch_list=[loss])
    np.testing.assert_array_equal(a, b)


def test_return_numpy_false_gives_lod_tensors(linear):
    exe, main, *_ , loss = linear
    (t,) = exe.run(main, feed=_batch(), fetch_list=[loss], return_numpy=False)
    assert isinstance(t, LoDTensor) and t.shape() == []
    assert np.array(t).dtype == np.float32


def test_fetched_parameter_is_a_copy(linear):
    exe, main, *_ = linear
    (w,) = exe.run(main, feed=_batch(), fetch_list=["fc_0.w_0"])
    w[...] = 100.0
    assert not np.any(paddle.static.global_scope()["fc_0.w_0"] == 100.0)


def test_unused_data_need_not_be_fed_unless_fetched(programs):
    main, _ = programs
    a = paddle.static.data("a", [2], "float32")
    paddle.static.data("unused", [2], "float32")
    exe = paddle.static.Executor()
    (out,) = exe.run(main, feed={"a": np.ones(2, np.float32)}, fetch_list=[a * 2.0])
    np.testing.assert_array_equal(out, [2.0, 2.0])
    with pytest.raises(ValueError, match="feed 'unused' is missing"):
        exe.run(main, feed={"a": np.ones(2, np.float32)}, fetch_list=["unused"])


def test_lists_are_converted_to_the_feed_dtype(programs):
    main, _ = programs
    a = paddle.static.data("a", [None, 2], "float32")
    ids = paddle.static.data("ids", [2], "int64")
    out = paddle.static.Executor().run(main, feed={"a": [[1, 2]], "ids": [3, 4]}, fetch_list=[a, ids])
    assert out[0].dtype == np.float32 and out[1].dtype == np.int64


# ---------------------------------------------------------------------- feed errors


@pytest.mark.parametrize(
    "feed, fragment",
    [
        ({"x": np.ones((4, 3), np.float32)}, "feed 'y' is missing: the program reads data variable 'y' (shape [-1, 1], float32)"),
        ({**_batch(), "z": np.ones(1)}, "feed 'z' is not a data variable of the program (its data variables: x, y)"),
        ({**_batch(), "x": np.ones(3, np.float32)}, "The fed variable 'x' should have dimensions = 2, shape = [-1, 3], but received fed shape [3]"),
        ({**_batch(), "x": np.ones((4, 5), np.float32)}, "The fed variable 'x' should have dimensions = 2, shape = [-1, 3], but received fed shape [4, 5]"),
        ({**_batch(), "x": np.ones((4, 3))}, "The data type of fed variable 'x' must be float32, but received float64"),
        ({**_batch(), "x": np.ones((4, 3), np.int32)}, "The data type of fed variable 'x' must be float32, but received int32"),
        ({**_batch(), "x": [["a", "b", "c"]]}, "The fed value of 'x' cannot be converted to a float32 array"),
    ],
)
def test_bad_feeds_raise_value_error_before_running(linear, feed, fragment):
    exe, main, *_ = linear
    before = dict(paddle.static.global_scope())
    with pytest.raises(ValueError) as e:
        exe.run(main, feed=feed, fetch_list=["mean_0.tmp_0"])
    assert fragment in str(e.value)
    assert all(before[k] is v for k, v in paddle.static.global_scope().items())


def test_feed_must_be_a_dict(linear):
    exe, main, _x, _y, _pred, loss = linear
    with pytest.raises(TypeError, match="feed must be a dict"):
        exe.run(main, feed=[_batch(), _batch()])
    with pytest.raises(TypeError, match="feed must be a dict"):
        exe.run(main, feed=3)
    # One place's feed in a list (what `DataLoader(feed_list=...)` yields), as Paddle.
    (listed,) = exe.run(main, feed=[_batch()], fetch_list=[loss])
    (plain,) = exe.run(main, feed=_batch(), fetch_list=[loss])
    np.testing.assert_allclose(listed, plain)


def test_unknown_fetch_name_and_bad_fetch_type(linear):
    exe, main, *_ = linear
    with pytest.raises(ValueError, match="fetch variable 'nope' is not in the program"):
        exe.run(main, feed=_batch(), fetch_list=["nope"])
    with pytest.raises(TypeError, match="fetch_list items must be Variables or names"):
        exe.run(main, feed=_batch(), fetch_list=[3])


def test_uninitialized_parameters_are_named(programs):
    main, _ = programs
    x = paddle.static.data("x", [None, 3])
    paddle.static.nn.fc(x, 2)
    with pytest.raises(RuntimeError, match="'fc_0.w_0', 'fc_0.b_0' not initialized .* run the startup program"):
        paddle.static.Executor().run(main, feed={"x": np.ones((1, 3), np.float32)})


def test_program_must_be_a_program():
    with pytest.raises(TypeError, match="program must be a Program"):
        paddle.static.Executor().run("main")


# -------------------------------------------------------------- scope and write-back


def test_startup_initializes_scope_and_paddle_tensor_api(linear):
    scope = paddle.static.global_scope()
    assert sorted(scope) == ["fc_0.b_0", "fc_0.w_0"]
    t = scope.find_var("fc_0.w_0").get_tensor()
    assert t.shape() == [3, 1] and np.array(t).dtype == np.float32
    t.set(np.full((3, 1), 2.0, np.float32), paddle.CPUPlace())
    np.testing.assert_array_equal(scope["fc_0.w_0"], np.full((3, 1), 2.0))
    assert scope.find_var("missing") is None
    v = scope.var("fresh")
    assert not v.is_initialized() and scope.find_var("fresh") is not None and "fresh" not in scope


def test_startup_into_an_explicit_scope_leaves_global_alone(programs):
    main, startup = programs
    paddle.static.nn.fc(paddle.static.data("x", [None, 3]), 2)
    mine = Scope()
    paddle.static.Executor().run(startup, scope=mine)
    assert sorted(mine) == ["fc_0.b_0", "fc_0.w_0"] and len(paddle.static.global_scope()) == 0
    (out,) = paddle.static.Executor().run(
        main, feed={"x": np.ones((1, 3), np.float32)}, fetch_list=["fc_0.tmp_1"], scope=mine
    )
    np.testing.assert_allclose(out, np.ones((1, 3)) @ mine["fc_0.w_0"] + mine["fc_0.b_0"], rtol=1e-6)


def test_scope_guard_switches_global_scope():
    inner = Scope()
    outer = paddle.static.global_scope()
    with paddle.static.scope_guard(inner):
        assert paddle.static.global_scope() is inner
    assert paddle.static.global_scope() is outer
    with pytest.raises(TypeError, match="expected a Scope"):
        with paddle.static.scope_guard({}):
            pass


def test_sgd_updates_are_written_back_to_the_scope(linear):
    exe, main, x, y, pred, loss = linear
    paddle.optimizer.SGD(learning_rate=0.1).minimize(loss)
    exe.run(paddle.static.default_startup_program())  # the learning-rate variable minimize added
    scope = paddle.static.global_scope()
    w0, b0 = scope["fc_0.w_0"].copy(), scope["fc_0.b_0"].copy()
    feed = _batch()
    exe.run(main, feed=feed, fetch_list=[loss])
    resid = feed["x"] @ w0 + b0 - feed["y"]
    np.testing.assert_allclose(scope["fc_0.w_0"], w0 - 0.1 * 2 * feed["x"].T @ resid / 4, rtol=1e-5)
    np.testing.assert_allclose(scope["fc_0.b_0"], b0 - 0.1 * 2 * resid.sum(0) / 4, rtol=1e-5)
    assert scope["fc_0.w_0"].dtype == np.float32


def test_repeated_runs_reuse_the_prepared_program(linear):
    exe, main, *_ , loss = linear
    exe.run(main, feed=_batch(), fetch_list=[loss])
    (first,) = exe._cache[main].values()
    exe.run(main, feed=_batch(), fetch_list=[loss])
    assert list(exe._cache[main].values()) == [first]
    paddle.static.nn.fc(paddle.static.data("z", [None, 2]), 1)  # the program changes
    exe.run(paddle.static.default_startup_program())
    exe.run(main, feed={**_batch(), "z": np.ones((1, 2), np.float32)}, fetch_list=[loss])
    assert list(exe._cache[main].values()) != [first]


# ------------------------------------------------------------------------ backends


def test_unknown_backend_is_rejected():
    with pytest.raises(ValueError, match="unknown executor backend 'tpu'"):
        paddle.static.Executor(paddle.CPUPlace(), backend="tpu")
    with pytest.raises(TypeError, match="place must be CPUPlace"):
        paddle.static.Executor("cpu")


def test_backend_seam_receives_module_feeds_scope_and_fetches(linear, monkeypatch):
    exe, main, x, y, pred, loss = linear
    seen = {}

    class Recording(executor_mod.InterpreterBackend):
        def run(self, module, feeds, scope, fetches):
            seen.update(module=module, feeds=set(feeds), fetches=list(fetches))
            return super().run(module, feeds, scope, fetches)

    fake = types.ModuleType("fake_backend")
    fake.make_backend = Recording  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_backend", fake)
    monkeypatch.setitem(executor_mod.BACKEND_MODULES, "recording", "fake_backend")
    exe2 = paddle.static.Executor(paddle.CPUPlace(), backend="recording")
    (got,) = exe2.run(main, feed=_batch(), fetch_list=[loss])
    np.testing.assert_array_equal(got, exe.run(main, feed=_batch(), fetch_list=[loss])[0])
    assert seen["feeds"] == {"x", "y"} and len(seen["fetches"]) == 1
    assert seen["module"] is not main.module  # backends get a prepared clone
    assert seen["fetches"][0].owner.parent is seen["module"].body.block


def test_backend_from_environment(monkeypatch):
    monkeypatch.setenv("PULLBACK_BACKEND", "nonexistent")
    with pytest.raises(ValueError, match="unknown executor backend 'nonexistent'"):
        paddle.static.Executor(paddle.CPUPlace())


# ----------------------------------------------------- the default backend: compiled


@pytest.fixture
def no_backend_override(monkeypatch):
    monkeypatch.delenv("PULLBACK_BACKEND", raising=False)


def _fit_a_line_losses(backend: str | None, steps: int = 30) -> list[float]:
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 3
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        pred = paddle.static.nn.fc(x, size=1)
        loss = paddle.mean(F.square_error_cost(input=pred, label=y))
        paddle.optimizer.SGD(learning_rate=0.05).minimize(loss)
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
        exe.run(startup)
        rng = np.random.default_rng(0)
        w = rng.standard_normal((13, 1)).astype("float32")
        out = []
        for _ in range(steps):
            xs = rng.standard_normal((16, 13)).astype("float32")
            (l,) = exe.run(main, feed={"x": xs, "y": xs @ w}, fetch_list=[loss])
            out.append(float(l))
    paddle.disable_static()
    return out


def test_cpu_default_is_compiled(no_backend_override):
    exe = paddle.static.Executor(paddle.CPUPlace())
    assert exe.backend_name == "compiled"


def test_default_training_matches_the_interpreter(no_backend_override):
    compiled = _fit_a_line_losses(None)
    reference = _fit_a_line_losses("interpreter")
    np.testing.assert_allclose(compiled, reference, rtol=2e-4, atol=1e-6)
    assert compiled[-1] < 0.1 * compiled[0]


def test_compile_ahead_compiles_what_run_runs_without_running(programs, monkeypatch) -> None:
    """`Executor.compile` (used by a dynamic Model's compiled step, on a thread of
    its own): native code for the feeds' dtypes and ranks, nothing run, nothing
    written; `run` then finds it compiled.  The interpreter compiles nothing."""
    x = paddle.static.data("x", [None, 3], "float32")
    y = paddle.static.nn.fc(x, 2)
    loss = paddle.mean(y)
    paddle.optimizer.SGD(0.1).minimize(loss)
    main, startup = programs
    monkeypatch.setenv("PULLBACK_BACKEND", "compiled")
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = Scope()
    exe.run(startup, scope=scope)
    before = {n: scope[n].copy() for n in scope}
    assert exe.compile(main, {"x": np.zeros((1, 3), "float32")}, [loss]) is True
    compiles = exe.backend.compiles
    for n, v in before.items():
        np.testing.assert_array_equal(scope[n], v)  # nothing ran
    exe.run(main, feed={"x": np.ones((5, 3), "float32")}, fetch_list=[loss], scope=scope)
    assert exe.backend.compiles == compiles  # run found it compiled (another batch size too)
    monkeypatch.setenv("PULLBACK_BACKEND", "interpreter")
    assert paddle.static.Executor(paddle.CPUPlace()).compile(main, {"x": np.zeros((1, 3), "float32")}, [loss]) is False
    with pytest.raises(ValueError, match="x"):
        exe.compile(main, {"x": np.zeros((1, 4), "float32")}, [loss])  # feeds are checked as run checks them
