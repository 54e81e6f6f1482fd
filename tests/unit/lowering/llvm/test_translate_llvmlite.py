"""The CPU emitter (lowering/llvm/cpu.py), the compiled backend's one route from
loop-level IR to LLVM IR, against the interpreter on a spread of programs: an MLP and a CNN training step, control flow with gradients,
several batch sizes through one compiled program, run-time range checks, integer
ops and reductions; plus hand-written loop-level IR for the forms the lowering does
not emit today (strided views, switches, branches between blocks) and the error for
an op the translator does not know."""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.benchmarks.bench_cpu import cnn_train
from pullback.benchmarks.programs import mlp_train
from pullback.dialects import pd
from pullback.dialects.pd.base import value_name
from pullback.lowering.abi import LoweringError
from pullback.lowering.llvm.cpu import translate_module
from pullback.runtime.native.backend import CompiledBackend
from pullback.runtime.native.compiler import compile_program
from pullback.runtime.native.jit import Jit
from pullback.runtime.native.program import execute
from pullback.runtime.interpreter import IndexOutOfRange, run_module
from xdsl.context import Context
from xdsl.dialects import arith, builtin, cf, func, llvm, memref, scf
from xdsl.parser import Parser

pytestmark = pytest.mark.filterwarnings("error:compiled backend")


def _close(a: Any, b: Any, what: str) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, what
    if a.dtype.kind in "iub":
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        tol = dict(rtol=1e-4, atol=1e-5) if a.dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(a, b, **tol, err_msg=what)


def _routes_agree(module: Any, fetch: Sequence[Any], feeds: Sequence[dict[str, np.ndarray]],
                  scope: dict[str, np.ndarray]) -> None:
    """Compile `module`; for each feed dict, the compiled program and the interpreter
    fetch the same values and update the same parameters (each run from its own
    copy of `scope`)."""
    prog = compile_program(module, fetch)
    # The interpreter leaves the scope alone: a parameter's new value is the last
    # value the program names after it (what the executor stores back).
    updated = {value_name(v): v for op in module.body.block.ops if not isinstance(op, pd.ParameterOp)
               for v in op.results if value_name(v) in scope}
    for f in feeds:
        s = {k: np.array(v, copy=True) for k, v in scope.items()}
        got = [np.array(o, copy=True) for o in execute(prog, f, s)]
        env = run_module(module, f, {k: np.array(v, copy=True) for k, v in scope.items()})
        for i, (a, v) in enumerate(zip(got, fetch)):
            _close(a, env[v], f"fetch {i}")
        for k, v in updated.items():
            _close(s[k], env[v], f"parameter {k}")


def test_mlp_training_step_agrees() -> None:
    built = mlp_train((12, 16, 5), 0.1)
    rng = np.random.default_rng(0)
    feeds = [{"x": rng.standard_normal((n, 12)).astype(np.float32),
              "label": rng.integers(0, 5, (n, 1)).astype(np.int64)} for n in (3, 8)]
    _routes_agree(built.module, built.fetch, feeds, built.scope)


def test_conv_training_step_agrees() -> None:
    built = cnn_train(batch_shape=(1, 8, 8), channels=(2, 3), classes=3)
    rng = np.random.default_rng(1)
    feeds = [{"img": rng.standard_normal((2, 1, 8, 8)).astype(np.float32),
              "label": rng.integers(0, 3, (2, 1)).astype(np.int64)}]
    _routes_agree(built.module, built.fetch, feeds, built.scope)


@pytest.fixture
def static_mode() -> Any:
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        yield main
    paddle.disable_static()


def _executors_agree(main: Any, feeds: Sequence[dict[str, np.ndarray]], fetch: list[Any],
                     monkeypatch: pytest.MonkeyPatch) -> list[list[np.ndarray]]:
    """Run a static program on the compiled backend and on the interpreter (fresh
    executors: nothing is shared)."""
    outs = []
    for f in feeds:
        want = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter").run(main, feed=f, fetch_list=fetch)
        got = paddle.static.Executor(paddle.CPUPlace(), backend="compiled").run(main, feed=f, fetch_list=fetch)
        for i, (a, b) in enumerate(zip(got, want)):
            _close(a, b, f"fetch {i}")
        outs.append(want)
    return outs


def test_control_flow_with_gradients_agrees(static_mode: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    x = paddle.static.data("x", [-1, 3], "float64")
    p = paddle.static.data("p", [1], "bool")
    x.stop_gradient = False
    i0 = paddle.full([1], 0, "int64")

    def body(i: Any, acc: Any) -> list[Any]:
        return [i + 1, paddle.static.nn.cond(p, lambda: acc * 1.5 + paddle.sin(acc), lambda: acc - 0.25)]

    _, y = paddle.static.nn.while_loop(lambda i, acc: i < 3, body, [i0, x])
    loss = paddle.sum(y * y)
    (dx,) = paddle.static.gradients([loss], [x])
    rng = np.random.default_rng(2)
    feeds = [{"x": rng.standard_normal((n, 3)), "p": np.array([pv])} for n, pv in ((2, True), (4, False))]
    _executors_agree(static_mode, feeds, [loss, dx], monkeypatch)


def test_dynamic_batch_int_ops_and_reductions_agree(static_mode: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    x = paddle.static.data("x", [-1, 4], "float32")
    k = paddle.static.data("k", [-1, 4], "int64")
    three = paddle.full([1], 3, "int64")
    q = paddle.maximum(k, three) * k
    r = paddle.minimum(k - three, k * k)
    mixed = paddle.cast(q * 2 - r, "float32") + x
    fetch = [
        q, r, paddle.cast(k > 1, "int32"), paddle.max(mixed, axis=1), paddle.sum(mixed, axis=0),
        paddle.erf(x) + paddle.tan(x) + paddle.round(x * 3.0),
        paddle.argmax(mixed, axis=1), paddle.nn.functional.softmax(mixed, axis=-1), paddle.mean(paddle.exp(x)),
    ]
    rng = np.random.default_rng(3)
    feeds = [{"x": rng.standard_normal((n, 4)).astype(np.float32),
              "k": rng.integers(-7, 8, (n, 4)).astype(np.int64)} for n in (1, 5)]
    _executors_agree(static_mode, feeds, fetch, monkeypatch)


def test_range_checks_report_the_same_as_the_interpreter(static_mode: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    table = paddle.static.data("table", [5, 2], "float32")
    ids = paddle.static.data("ids", [-1], "int64")
    out = paddle.gather(table, ids)
    tab = np.arange(10, dtype=np.float32).reshape(5, 2)
    _executors_agree(static_mode, [{"table": tab, "ids": np.array([4, 0, 2])}], [out], monkeypatch)
    bad = {"table": tab, "ids": np.array([1, 5])}
    with pytest.raises(IndexOutOfRange) as want:
        paddle.static.Executor(paddle.CPUPlace(), backend="interpreter").run(static_mode, feed=bad, fetch_list=[out])
    with pytest.raises(IndexOutOfRange) as got:
        paddle.static.Executor(paddle.CPUPlace(), backend="compiled").run(static_mode, feed=bad, fetch_list=[out])
    assert str(got.value) == str(want.value)


def test_backend_reports_the_translation_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULLBACK_CACHE", "0")  # a real compile, whose phases we read
    built = mlp_train((4, 3), 0.1)
    prog = CompiledBackend().program_for(
        built.module, built.fetch, {"x": np.ones((2, 4), np.float32), "label": np.zeros((2, 1), np.int64)}
    )
    assert prog is not None and prog.times is not None
    names = [n for n, _ in prog.times.phases]
    assert "translate-to-llvmlite" in names


# ------------------------------------------------------------ hand-written IR


def _parse(text: str) -> builtin.ModuleOp:
    ctx = Context(allow_unregistered=False)
    for d in (builtin.Builtin, func.Func, arith.Arith, memref.MemRef, scf.Scf, cf.Cf, llvm.LLVM):
        ctx.load_dialect(d)
    return Parser(ctx, text).parse_module()


_ENGINES: list[Any] = []
"""Engines of the handwritten modules, kept for the session (their code is called)."""


def _jit(module: builtin.ModuleOp, symbol: str) -> Callable[..., Any]:
    """JIT the translated module (an MCJIT engine of its own, for the backend's target)
    and return `symbol`'s address."""
    jit = Jit.get()
    ir = str(translate_module(module, "handwritten"))
    mod = jit.llvm.parse_assembly(ir)
    mod.verify()
    engine = jit.llvm.create_mcjit_compiler(mod, jit._target_machine())
    engine.finalize_object()
    _ENGINES.append(engine)
    return engine.get_function_address(symbol)


_GENERAL = """
func.func @strided_sum(%m: memref<4x6xf64>, %out: memref<1xf64>, %sel: index) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %v = memref.subview %m[1, 1] [2, 3] [1, 2] : memref<4x6xf64> to memref<2x3xf64, strided<[6, 2], offset: 7>>
  %s = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %zero) -> (f64) {
    %t = scf.for %j = %c0 to %c3 step %c1 iter_args(%b = %a) -> (f64) {
      %e = memref.load %v[%i, %j] : memref<2x3xf64, strided<[6, 2], offset: 7>>
      %n = arith.addf %b, %e : f64
      scf.yield %n : f64
    }
    scf.yield %t : f64
  }
  %w = scf.index_switch %sel -> f64
  case 1 {
    %d = arith.mulf %s, %s : f64
    scf.yield %d : f64
  }
  default {
    scf.yield %s : f64
  }
  cf.br ^bb1(%w : f64)
^bb1(%r: f64):
  %neg = arith.cmpf olt, %r, %zero : f64
  cf.cond_br %neg, ^bb2, ^bb3(%r : f64)
^bb2:
  %p = arith.negf %r : f64
  cf.br ^bb3(%p : f64)
^bb3(%q: f64):
  memref.store %q, %out[%c0] : memref<1xf64>
  func.return
}
"""


@pytest.mark.parametrize("sel", [0, 1])
def test_strided_views_switches_and_branches(sel: int) -> None:
    addr = _jit(_parse(_GENERAL.replace("strided_sum", f"strided_sum{sel}")), f"_pullback_packed_strided_sum{sel}")
    m = -np.arange(24, dtype=np.float64).reshape(4, 6)
    out = np.zeros(1)
    slots = np.array([m.ctypes.data, out.ctypes.data, sel], dtype=np.int64)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(addr)(slots.ctypes.data)
    s = m[1:3, 1:7:2].sum()
    assert out[0] == abs(s * s if sel == 1 else s)


def test_an_unknown_op_is_named() -> None:
    module = _parse("""
func.func @f(%a: memref<4xf32>, %b: memref<4xf32>) {
  "memref.copy"(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
""")
    with pytest.raises(LoweringError, match="cannot translate 'memref.copy'"):
        translate_module(module)


def test_an_unknown_dynamic_size_is_an_error_not_a_guess() -> None:
    module = _parse("""
func.func @f(%a: memref<?x4xf32>, %i: index) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%i, %c0] : memref<?x4xf32>
  %d = memref.dim %a, %c0 : memref<?x4xf32>
  func.return %x : f32
}
""")
    with pytest.raises(LoweringError, match="memref.dim"):
        translate_module(module)


_LINALG = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#shift = affine_map<(d0, d1) -> (d0, d1 + 1)>
#pick = affine_map<(d0, d1) -> ((d0 * 7 + 2) floordiv 4, (d1 + 4) mod 3)>
func.func @fanout(%a: memref<4x4xf32>, %sq: memref<4x3xf32>, %rows: memref<4xf32>, %q: memref<2x3xf32>) attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%rows : memref<4xf32>)
  linalg.generic {indexing_maps = [#shift, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x4xf32>) outs(%sq, %rows : memref<4x3xf32>, memref<4xf32>) {
  ^bb0(%x: f32, %s: f32, %acc: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %y = arith.mulf %x, %fi : f32
    %n = arith.addf %acc, %y : f32
    linalg.yield %y, %n : f32, f32
  }
  linalg.generic {indexing_maps = [#pick, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sq : memref<4x3xf32>) outs(%q : memref<2x3xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  func.return
}
"""


def test_multi_output_generics_fill_index_and_affine_maps() -> None:
    """What the fusion planner emits (several outputs, a reduction into one of them)
    and affine index maps (`floordiv`, `mod`, offsets) translate as loop nests."""
    ctx = Context(allow_unregistered=False)
    from xdsl.dialects import linalg

    for d in (builtin.Builtin, func.Func, arith.Arith, memref.MemRef, linalg.Linalg):
        ctx.load_dialect(d)
    addr = _jit(Parser(ctx, _LINALG).parse_module(), "_pullback_packed_fanout")
    a = np.arange(16, dtype=np.float32).reshape(4, 4) - 5
    sq, rows, q = np.zeros((4, 3), np.float32), np.full(4, 7, np.float32), np.zeros((2, 3), np.float32)
    slots = np.array([a.ctypes.data, sq.ctypes.data, rows.ctypes.data, q.ctypes.data], dtype=np.int64)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(addr)(slots.ctypes.data)
    want_sq = a[:, 1:] * np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(sq, want_sq)
    np.testing.assert_array_equal(rows, want_sq.sum(axis=1))
    # q[i, j] = sq[(7i + 2) // 4, (j + 4) % 3]
    np.testing.assert_array_equal(q, want_sq[[0, 2]][:, [1, 2, 0]])


def _chain_generic(name: str, depth: int) -> str:
    """A 1-D `linalg.generic` whose body is `depth` dependent `x = x * x + 1` steps."""
    steps, x = [], "%x"
    for i in range(depth):
        steps.append(f"    %m{i} = arith.mulf {x}, {x} : f32\n    %a{i} = arith.addf %m{i}, %one : f32")
        x = f"%a{i}"
    body = "\n".join(steps)
    return f"""
func.func @{name}(%in: memref<64xf32>, %out: memref<64xf32>) {{
  %one = arith.constant 1.0 : f32
  linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}}
      ins(%in : memref<64xf32>) outs(%out : memref<64xf32>) {{
  ^bb0(%x: f32, %o: f32):
{body}
    linalg.yield {x} : f32
  }}
  func.return
}}
"""


def test_deep_loop_bodies_ask_llvm_to_interleave_and_short_ones_do_not() -> None:
    """A loop whose body is one long dependency chain (latency-bound: the next
    iteration cannot overlap it) gets `llvm.loop.interleave.count`, a fresh
    self-referential loop ID per loop, which LLVM parses and verifies; a short body
    is left to LLVM's cost model."""
    import llvmlite.binding as llvm_binding

    from pullback.lowering.llvm import loops as tr

    from xdsl.dialects import linalg

    ctx = Context(allow_unregistered=False)
    for d in (builtin.Builtin, func.Func, arith.Arith, memref.MemRef, linalg.Linalg):
        ctx.load_dialect(d)
    deep = tr.INTERLEAVE_MIN_DEPTH // 2 + 1  # two ops a step
    text = _chain_generic("deep", deep) + _chain_generic("deep2", deep) + _chain_generic("short", 3)
    module = Parser(ctx, text).parse_module()
    fns = {op.sym_name.data: op for op in module.body.block.ops if isinstance(op, func.FuncOp)}
    generic_blocks = {k: next(o for o in f.walk() if o.name == "linalg.generic").regions[0].block
                      for k, f in fns.items()}
    assert tr.chain_depth(generic_blocks["deep"]) == 2 * deep >= tr.INTERLEAVE_MIN_DEPTH
    assert tr.chain_depth(generic_blocks["short"]) == 6
    text = str(translate_module(module, "interleave"))
    latches = {name: [ln for ln in text.split(f'define void @"{name}"')[1].split("\n}")[0].splitlines()
                      if "!llvm.loop" in ln] for name in fns}
    assert len(latches["deep"]) == len(latches["deep2"]) == 1 and not latches["short"]
    ids = {ln.rsplit("!", 1)[1] for name in ("deep", "deep2") for ln in latches[name]}
    assert len(ids) == 2  # one loop ID per loop
    for i in ids:
        assert f"!{i} = !{{ !{i}, " in text  # self-referential
    assert f'!"llvm.loop.interleave.count", i32 {tr.INTERLEAVE_COUNT}' in text
    llvm_binding.initialize_native_target()
    llvm_binding.initialize_native_asmprinter()
    llvm_binding.parse_assembly(text).verify()


_FOLD = """
func.func @fold(%x: memref<2x3x4x5xf32>, %s: memref<3xf32>, %y: memref<3x2x4x5xf32>, %z: memref<2x3x4x5xf32>)
    attributes {llvm.emit_c_interface} {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>,
                                   affine_map<(n, c, h, w) -> (c, n, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : memref<2x3x4x5xf32>, memref<3xf32>) outs(%y : memref<3x2x4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x3x4x5xf32>) outs(%z : memref<2x3x4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = arith.addf %a, %a : f32
    linalg.yield %e : f32
  }
  func.return
}
func.func @indexed(%x: memref<4x5xf32>, %y: memref<4x5xf32>) attributes {llvm.emit_c_interface} {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x5xf32>) outs(%y : memref<4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f32
    %r = arith.addf %a, %jf : f32
    linalg.yield %r : f32
  }
  func.return
}
"""


def test_contiguous_loop_dimensions_fold_into_one_loop() -> None:
    """`translate-to-llvmlite` folds adjacent loop dimensions that every operand
    indexes contiguously (or ignores) into one loop: an elementwise op over NCHW is
    one loop; with a channel-major output (`c, n, h, w`) and a per-channel operand
    only `h, w` fold (three loops); a dimension the body reads with `linalg.index`
    keeps its loop.  The results are the unfolded nest's."""
    from xdsl.dialects import linalg

    ctx = Context(allow_unregistered=False)
    for d in (builtin.Builtin, func.Func, arith.Arith, memref.MemRef, linalg.Linalg):
        ctx.load_dialect(d)
    module = Parser(ctx, _FOLD).parse_module()
    text = str(translate_module(module, "fold"))
    bodies = {name: text.split(f'define void @"{name}"')[1].split("\n}")[0] for name in ("fold", "indexed")}
    loops = {k: len(re.findall(r"^linalg\.header[.\d]*:", v, re.M)) for k, v in bodies.items()}
    assert loops == {"fold": 3 + 1, "indexed": 2}  # (n, c, h*w) and (n*c*h*w); (i, j)
    bounds = re.findall(r'icmp slt i64 %"[^"]+", (\d+)', bodies["fold"])
    assert sorted(map(int, bounds)) == [2, 3, 20, 120]  # the folded loops run h*w and n*c*h*w
    addr = _jit(Parser(ctx, _FOLD.replace("@fold", "@fold2").replace("@indexed", "@indexed2")).parse_module(),
                "_pullback_packed_fold2")
    rng = np.random.default_rng(0)
    x, s = rng.standard_normal((2, 3, 4, 5)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    y, z = np.zeros((3, 2, 4, 5), np.float32), np.zeros((2, 3, 4, 5), np.float32)
    slots = np.array([x.ctypes.data, s.ctypes.data, y.ctypes.data, z.ctypes.data], dtype=np.int64)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(addr)(slots.ctypes.data)
    np.testing.assert_array_equal(y, (x * s[None, :, None, None]).transpose(1, 0, 2, 3))
    np.testing.assert_array_equal(z, x + x)
