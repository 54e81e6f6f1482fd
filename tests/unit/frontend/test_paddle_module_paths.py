"""Every public module path of Paddle 3.3.1 imports under `pullback`, and its names are
pullback's objects or say that pullback does not support them (issue 29, part 1).

The list of paths and names is `frontend/api/paddle_modules.json`, written once from
a real PaddlePaddle 3.3.1 by `tools/paddle_modules.py`; `pullback.namespaces`
serves it.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import pullback as paddle
from pullback.namespaces import NotSupportedError, NotSupportedImportError, paddle_table

ROOT = Path(__file__).resolve().parents[3]

KNOWN_DISTINCT = {
    frozenset({"mod", "remainder", "floor_mod"}),
    frozenset({"mod_", "remainder_", "floor_mod_"}),
    frozenset({"inverse", "inv"}),
    frozenset({"transpose", "swapaxes", "swapdims"}),
}
"""Names that are one object in Paddle and distinct functions of the same behaviour in
pullback: its op registry names each exported function by its `__name__`."""


def _module(rel: str):
    return importlib.import_module(f"pullback.{rel}" if rel else "pullback")


@pytest.fixture(scope="module")
def resolved():
    """Every module path imported and every name looked up: rel -> name -> object or
    the NotSupportedError raised."""
    out: dict[str, dict[str, object]] = {}
    for rel, names in sorted(paddle_table().modules.items()):
        mod = _module(rel)
        got: dict[str, object] = {}
        for name in names:
            try:
                got[name] = getattr(mod, name)
            except NotSupportedError as e:
                got[name] = e
        out[rel] = got
    return out


def test_the_table_is_paddle_3_3_1_and_complete():
    table = paddle_table()
    assert table.version == "3.3.1"
    assert len(table.modules) > 1000
    for rel in ["jit.api", "autograd.py_layer", "nn.layer.transformer", "nn.layer.norm",
                "tensor.creation", "base.framework", "framework", "static.nn.control_flow",
                "sparse", "distribution.normal"]:
        assert rel in table.modules, rel


def test_every_module_path_imports(resolved):
    for rel in paddle_table().modules:
        name = f"pullback.{rel}" if rel else "pullback"
        assert importlib.import_module(name) is sys.modules[name]


def test_every_name_is_an_object_or_not_supported(resolved):
    """The message names the path (one of them, for a module pullback serves under
    two: `paddle.callbacks` is `paddle.hapi.callbacks`)."""
    for names in resolved.values():
        for name, value in names.items():
            if isinstance(value, NotSupportedError):
                assert re.match(rf"`paddle(\.[\w.]+)?\.{name}` is not supported by pullback; ", str(value)), str(value)


def test_names_of_one_paddle_object_are_one_pullback_object(resolved):
    table = paddle_table()
    groups: dict[int, dict[str, object]] = defaultdict(dict)
    for rel, names in resolved.items():
        for name, value in names.items():
            entry = table.modules[rel][name]
            if isinstance(entry, int) and not isinstance(value, NotSupportedError):
                groups[entry][f"{rel}.{name}" if rel else name] = value
    for places in groups.values():
        if len({id(v) for v in places.values()}) > 1:
            names = frozenset(p.rsplit(".", 1)[-1] for p in places)
            assert names in KNOWN_DISTINCT, f"one object in Paddle, several in pullback: {places}"


OWN_NAMES = {("distributed.launch", "main")}
"""Names pullback's own modules define where Paddle has a child module: `python -m
pullback.distributed.launch` runs `main()`."""


def test_module_entries_are_the_modules(resolved):
    table = paddle_table()
    for rel, names in table.modules.items():
        for name, entry in names.items():
            if isinstance(entry, str) and (rel, name) not in OWN_NAMES:
                assert resolved[rel][name] is _module(entry[len("paddle."):]), (rel, name)


def test_real_modules_for_paddle_paths_answer_paddle_names():
    """pullback's real modules standing for Paddle paths (`pullback.distributed`) fall
    back to Paddle's table like the aliases: each ends with `adopt_real(__name__)`."""
    table = paddle_table()
    for path in (ROOT / "distributed").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        rel = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if rel in table.modules:
            mod = importlib.import_module(f"pullback.{rel}")
            assert rel in mod.__dict__.get("__paddle_paths__", ()), f"pullback.{rel} lacks adopt_real"


# ------------------------------------------------------------------ the names Paddle code imports


def test_defining_modules_hold_the_top_level_objects():
    from pullback.autograd.py_layer import PyLayer, PyLayerContext
    from pullback.base.framework import Program, default_main_program
    from pullback.jit.api import load, save, to_static
    from pullback.nn.layer.norm import BatchNorm2D, LayerNorm
    from pullback.nn.layer.transformer import TransformerEncoderLayer
    from pullback.static.nn.control_flow import cond, while_loop
    from pullback.tensor.creation import fill_constant, full

    assert to_static is paddle.jit.to_static and save is paddle.jit.save and load is paddle.jit.load
    assert PyLayer is paddle.autograd.PyLayer and PyLayerContext is paddle.autograd.PyLayerContext
    assert TransformerEncoderLayer is paddle.nn.TransformerEncoderLayer
    assert BatchNorm2D is paddle.nn.BatchNorm2D and LayerNorm is paddle.nn.LayerNorm
    assert full is paddle.full and fill_constant is paddle.tensor.fill_constant
    assert cond is paddle.static.nn.cond and while_loop is paddle.static.nn.while_loop
    assert Program is paddle.static.Program and default_main_program is paddle.static.default_main_program
    assert paddle.framework.in_dynamic_mode is paddle.in_dynamic_mode
    assert paddle.nn.layer.norm.BatchNorm2D is paddle.nn.BatchNorm2D
    assert paddle.base.enable_dygraph is paddle.disable_static


def test_fill_constant_from_paddle_tensor():
    x = paddle.tensor.fill_constant([2, 3], "float32", 1.5)
    np.testing.assert_array_equal(x.numpy(), np.full([2, 3], 1.5, np.float32))


def test_jit_is_a_package():
    import pullback.jit.api

    assert pullback.jit.api.to_static is paddle.jit.to_static
    assert paddle.jit.api is pullback.jit.api


def test_eager_tensor_is_a_base_framework_variable():
    """Paddle's `VariableMetaClass`: an eager Tensor is a Variable in dygraph mode, a
    static Variable in static mode."""
    Variable = paddle.base.framework.Variable
    assert Variable is paddle.static.Variable
    t = paddle.to_tensor([1.0])
    assert isinstance(t, Variable) and not isinstance(np.ones(1), Variable)
    weight = paddle.nn.Linear(2, 2).weight
    assert isinstance(weight, paddle.base.framework.Parameter) and isinstance(weight, Variable)
    assert not isinstance(t, paddle.base.framework.Parameter)
    paddle.enable_static()
    try:
        with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
            x = paddle.static.data("x", [None, 2], "float32")
            paddle.static.nn.fc(x, 3)
            param = paddle.static.default_main_program().all_parameters()[0]
            assert isinstance(x, Variable) and not isinstance(t, Variable)
            assert isinstance(param, paddle.static.Parameter) and not isinstance(x, paddle.static.Parameter)
    finally:
        paddle.disable_static()


# ------------------------------------------------------------------ what pullback does not have


def test_a_name_pullback_lacks_says_so():
    with pytest.raises(NotSupportedError, match=r"^`paddle.sparse.sparse_coo_tensor` is not supported by pullback"):
        paddle.sparse.sparse_coo_tensor  # noqa: B018
    with pytest.raises(NotImplementedError, match="is not supported by pullback"):
        paddle.sparse.sparse_coo_tensor  # noqa: B018
    assert not hasattr(paddle.sparse, "sparse_coo_tensor")
    assert getattr(paddle.sparse, "sparse_coo_tensor", None) is None


def test_from_import_of_a_name_pullback_lacks_says_so():
    with pytest.raises(NotSupportedImportError, match=r"`paddle.sparse.sparse_coo_tensor` is not supported by pullback"):
        from pullback.sparse import sparse_coo_tensor  # noqa: F401
    with pytest.raises(ImportError, match="is not supported by pullback"):
        from pullback.jit.api import sot_mode_guard  # noqa: F401


def test_root_names_pullback_lacks_say_so():
    with pytest.raises(NotSupportedError, match=r"^`paddle.cartesian_prod` is not supported by pullback"):
        paddle.cartesian_prod  # noqa: B018
    with pytest.raises(AttributeError) as info:  # not Paddle's either: a plain AttributeError
        paddle.no_such_function  # noqa: B018
    assert not isinstance(info.value, NotSupportedError)


def test_child_modules_do_not_hide_names_of_the_same_name():
    """`paddle.batch` is a function and `paddle.batch` a module; importing the module
    leaves the function in place, as in Paddle."""
    import pullback.batch  # noqa: F401
    import pullback.tensor.einsum  # noqa: F401

    assert callable(paddle.batch) and paddle.batch is paddle.frontend.api.paddle.batch
    assert paddle.tensor.einsum is paddle.einsum


def test_import_pullback_does_not_read_the_table():
    """`import pullback` stays as cheap as before (the table is read when a Paddle
    path or name is first looked up, with the frontend: ~10 ms of its ~1 s)."""
    code = (
        "import pullback, pullback.namespaces as ns\n"
        "import pullback.dialects.pd, pullback.runtime.places\n"
        "assert ns.paddle_table.cache_info().currsize == 0\n"
        "import pullback.jit.api\n"
        "assert ns.paddle_table.cache_info().currsize == 1\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_module_dir_and_star_import():
    mod = importlib.import_module("pullback.nn.layer.norm")
    assert "BatchNorm2D" in dir(mod)
    assert "BatchNorm2D" in mod.__all__ and "in_pir_mode" not in mod.__all__
    ns: dict[str, object] = {}
    exec("from pullback.nn.layer.norm import *", ns)
    assert ns["LayerNorm"] is paddle.nn.LayerNorm
