"""Dtypes: one table (`dialects/pd/dtypes.py`), read the one Paddle way by every API
that takes a `dtype`, in eager mode and in static programs run by the Executor.

The expected dtypes are Paddle 3.3.1's (`paddle.zeros([2], dtype=float)` is float64,
`'int'` int64, `np.dtype('float32')` float32, ...), checked against it when these
tests were written.  Where one Paddle API checks `dtype` against a narrower list
first (its `to_tensor`, `empty` and `sum` refuse `float` and `'float'`;
`create_parameter` takes few spellings), pullback reads the spelling as every other
Paddle API does.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pullback as paddle
from pullback.dialects import pd
from pullback.dialects.pd.dtypes import DTYPE_TABLE, dtype_for_array, find_dtype, to_dtype

# ------------------------------------------------------------------ the table


def test_dtype_prints_like_paddle_and_equals_its_name():
    x = paddle.to_tensor([1.0, 2.0])
    assert str(x.dtype) == "paddle.float32" and repr(paddle.int64) == "paddle.int64"
    assert x.dtype == "float32" and x.dtype == paddle.float32 and f"{x.dtype}" == "float32"
    assert np.dtype(x.dtype) == np.float32
    assert paddle.cast(x, paddle.int64).dtype == "int64"
    assert "dtype=float32," in repr(x)


def test_static_dtype_objects_never_leak_into_ir():
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            v = paddle.static.data("v", [None, 2], paddle.float32)
            y = paddle.cast(v, paddle.float64)
        assert str(v.dtype) == "paddle.float32" and y.dtype == "float64"
        assert 'dtype = "float64"' in str(main) and "paddle." not in str(main)
    finally:
        paddle.disable_static()


def test_each_row_is_the_paddle_dtype_object():
    for d in DTYPE_TABLE:
        assert getattr(paddle, d.name) is d and isinstance(d, paddle.dtype)
        assert getattr(paddle.base.core.VarDesc.VarType, d.enum) is d
        assert pickle.loads(pickle.dumps(d)) is d and copy.deepcopy(d) is d
    assert [d.name for d in pd.DTYPES] == [
        "float32", "float64", "int32", "int64", "bool", "float16", "bfloat16", "uint8", "int8", "int16",
        "complex64", "complex128"]
    assert paddle.bool.elem == pd.i1 and paddle.float64.short == "f64" and paddle.int32.size == 4
    assert paddle.float32.numpy == np.float32 and paddle.bfloat16.numpy == np.uint16  # Paddle's bfloat16 bits
    assert paddle.complex64.supported and paddle.complex64.kind == "c" and paddle.complex128.short == "complex<f64>"
    assert not paddle.float8_e4m3fn.supported
    with pytest.raises(TypeError, match="float8_e4m3fn is not supported by pullback yet"):
        _ = paddle.float8_e4m3fn.elem


@pytest.mark.parametrize("spec, name", [
    ("float32", "float32"), (" Float32 ", "float32"), ("bool_", "bool"), ("uint16", "bfloat16"),
    ("float", "float64"), ("double", "float64"), ("int", "int64"), ("long", "int64"), ("half", "float16"),
    ("f4", "float32"), ("<i4", "int32"), (float, "float64"), (int, "int64"), (bool, "bool"),
    (complex, "complex128"), (np.float32, "float32"), (np.bool_, "bool"), (np.uint16, "bfloat16"),
    (np.dtype("int64"), "int64"), (paddle.float64, "float64"), ("float8_e4m3fn", "float8_e4m3fn"),
])
def test_find_reads_every_spelling_paddle_reads(spec: Any, name: str):
    assert find_dtype(spec) == name


@pytest.mark.parametrize("spec", [
    None, "xyz", "paddle.float32", "fp32", np.uint32, np.float128 if hasattr(np, "float128") else "x",
    str, object, 3, [("a", "f4")], paddle.to_tensor([1.0]),
])
def test_find_spells_no_dtype(spec: Any):
    assert find_dtype(spec) is None
    with pytest.raises(TypeError, match="myapi: invalid dtype"):
        to_dtype(spec, "myapi")


def test_errors_name_the_bad_value():
    with pytest.raises(TypeError, match=r"^cast: invalid dtype 'xyz': expected a Paddle dtype"):
        paddle.cast(paddle.to_tensor([1.0]), "xyz")
    with pytest.raises(TypeError, match=r"pass paddle.float32 or 'float32'"):
        paddle.zeros([2], dtype="paddle.float32")  # a printed dtype is no spelling (nor in Paddle)
    with pytest.raises(TypeError, match=r"^cast: unsupported dtype 'float8_e4m3fn': Paddle's float8_e4m3fn is "
                                        r"not supported by pullback yet \(it computes in float32, float64"):
        paddle.cast(paddle.to_tensor([1.0]), "float8_e4m3fn")


def test_array_data_keeps_its_dtype():
    """Data arrays (not `dtype=`) keep their dtype as in Paddle (uint16 is bfloat16's
    bits); a numpy dtype Paddle has no dtype for is none."""
    assert dtype_for_array(np.dtype(np.uint8)) == "uint8" and dtype_for_array(np.dtype(np.float16)) == "float16"
    assert dtype_for_array(np.dtype(np.uint16)) == "bfloat16"
    assert paddle.to_tensor(np.ones(2, np.uint8)).dtype == "uint8"
    assert dtype_for_array(np.dtype("U3")) is None and dtype_for_array(np.dtype(np.uint32)) is None


# ----------------------------------------------------- every API, both modes

SPELLINGS: list[tuple[str, Any, str]] = [
    # (id, spelling, Paddle 3.3.1's dtype)
    ("np.float32", np.float32, "float32"),
    ("np.dtype(float32)", np.dtype("float32"), "float32"),
    ("'float32'", "float32", "float32"),
    ("paddle.float32", paddle.float32, "float32"),
    ("'FLOAT32'", "FLOAT32", "float32"),
    ("float", float, "float64"),
    ("'float'", "float", "float64"),
    ("'double'", "double", "float64"),
    ("np.float64", np.float64, "float64"),
    ("int", int, "int64"),
    ("'int'", "int", "int64"),
    ("'int64'", "int64", "int64"),
    ("np.int32", np.int32, "int32"),
    ("paddle.int32", paddle.int32, "int32"),
    ("bool", bool, "bool"),
    ("np.bool_", np.bool_, "bool"),
    ("'bool'", "bool", "bool"),
    ("paddle.bool", paddle.bool, "bool"),
]

ANY, NUMERIC, FLOAT, INT = ("float", "int", "bool"), ("float", "int"), ("float",), ("int",)
KIND = {"float32": "float", "float64": "float", "int32": "int", "int64": "int", "bool": "bool"}


def _apis(x: Any, xi: Any) -> dict[str, tuple[tuple[str, ...], Callable[[Any], Any]]]:
    """API -> (the dtype kinds Paddle takes there, a call with the dtype); x float32
    and xi int64 tensors/variables of shape [2, 3]."""
    return {
        "cast": (ANY, lambda d: paddle.cast(x, d)),
        "astype": (ANY, lambda d: x.astype(d)),
        "zeros": (ANY, lambda d: paddle.zeros([2], dtype=d)),
        "ones": (ANY, lambda d: paddle.ones([2], dtype=d)),
        "full": (ANY, lambda d: paddle.full([2], 1, dtype=d)),
        "empty": (ANY, lambda d: paddle.empty([2], dtype=d)),
        "zeros_like": (ANY, lambda d: paddle.zeros_like(x, dtype=d)),
        "ones_like": (ANY, lambda d: paddle.ones_like(x, dtype=d)),
        "full_like": (NUMERIC, lambda d: paddle.full_like(x, 2, dtype=d)),
        "arange": (NUMERIC, lambda d: paddle.arange(0, 3, 1, dtype=d)),
        "linspace": (NUMERIC, lambda d: paddle.linspace(0, 1, 3, dtype=d)),
        "eye": (NUMERIC, lambda d: paddle.eye(2, dtype=d)),
        "rand": (FLOAT, lambda d: paddle.rand([2], dtype=d)),
        "randn": (FLOAT, lambda d: paddle.randn([2], dtype=d)),
        "uniform": (FLOAT, lambda d: paddle.uniform([2], dtype=d)),
        "randint": (INT, lambda d: paddle.randint(0, 5, [2], dtype=d)),
        "randperm": (INT, lambda d: paddle.randperm(4, dtype=d)),
        "sum": (ANY, lambda d: paddle.sum(xi, dtype=d)),
        "cumsum": (NUMERIC, lambda d: paddle.cumsum(x, dtype=d)),
        "prod": (FLOAT, lambda d: paddle.prod(x, dtype=d)),
        "create_parameter": (FLOAT, lambda d: paddle.create_parameter([2], dtype=d)),
        "argmax": (INT, lambda d: paddle.argmax(x, dtype=d)),
    }


def _feeds() -> dict[str, np.ndarray]:
    return {"x": np.arange(6, dtype=np.float32).reshape(2, 3) / 6, "xi": np.ones([2, 3], np.int64)}


@pytest.mark.parametrize("spelling, want", [s[1:] for s in SPELLINGS], ids=[s[0] for s in SPELLINGS])
def test_eager_apis_read_dtype_as_paddle(dynamic_mode: None, spelling: Any, want: str):
    feeds = _feeds()
    apis = _apis(paddle.to_tensor(feeds["x"]), paddle.to_tensor(feeds["xi"]))
    apis["to_tensor"] = (ANY, lambda d: paddle.to_tensor([1, 0], dtype=d))
    apis["Tensor.astype"] = (ANY, lambda d: paddle.to_tensor([1.5]).astype(d))
    wrong = {}
    for api, (kinds, call) in apis.items():
        if KIND[want] not in kinds:
            continue
        out = call(spelling)
        if not (out.dtype == want and out.dtype is getattr(paddle, want) and out.numpy().dtype == want):
            wrong[api] = f"{out.dtype} (array {out.numpy().dtype})"
    assert not wrong, f"want {want}"


@pytest.mark.parametrize("spelling, want", [s[1:] for s in SPELLINGS], ids=[s[0] for s in SPELLINGS])
def test_static_apis_read_dtype_as_paddle(static_programs: Any, spelling: Any, want: str):
    main, startup = static_programs
    apis = _apis(paddle.static.data("x", [2, 3], "float32"), paddle.static.data("xi", [2, 3], "int64"))
    apis["static.data"] = (ANY, lambda d: paddle.static.data("d", [2], dtype=d))
    apis["fluid.data"] = (ANY, lambda d: paddle.fluid.data("fd", [2], dtype=d))
    apis["create_global_var"] = (ANY, lambda d: paddle.static.create_global_var([2], 1, d, persistable=True))
    outs = {api: call(spelling) for api, (kinds, call) in apis.items() if KIND[want] in kinds}
    wrong = {api: str(v.dtype) for api, v in outs.items() if not (v.dtype == want and v.dtype is getattr(paddle, want))}
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    feeds = {**_feeds(), "d": np.ones([2], want), "fd": np.ones([2], want)}
    got = exe.run(main, feed=feeds, fetch_list=list(outs.values()))
    wrong |= {api: f"run gives {a.dtype}" for api, a in zip(outs, got) if a.dtype != want}
    assert not wrong, f"want {want}"


def test_default_dtypes_are_paddles(dynamic_mode: None):
    xi = paddle.to_tensor(np.ones([2], np.int32))
    got = {
        "zeros": paddle.zeros([2]), "full": paddle.full([2], 1), "arange": paddle.arange(0, 3),
        "arange(float)": paddle.arange(0.0, 3.0), "linspace": paddle.linspace(0, 1, 3), "eye": paddle.eye(2),
        "rand": paddle.rand([2]), "randint": paddle.randint(0, 3, [2]), "randperm": paddle.randperm(3),
        "to_tensor(int)": paddle.to_tensor([1, 2]), "to_tensor(float)": paddle.to_tensor([1.5]),
        "to_tensor(bool)": paddle.to_tensor([True]), "to_tensor(float64 array)": paddle.to_tensor(np.ones(2)),
        "sum(int32)": paddle.sum(xi), "zeros_like(int32)": paddle.zeros_like(xi),
        "argmax": paddle.argmax(paddle.to_tensor([1.0, 2.0])),
    }
    want = {
        "zeros": "float32", "full": "float32", "arange": "int64", "arange(float)": "float32", "linspace": "float32",
        "eye": "float32", "rand": "float32", "randint": "int64", "randperm": "int64", "to_tensor(int)": "int64",
        "to_tensor(float)": "float32", "to_tensor(bool)": "bool", "to_tensor(float64 array)": "float64",
        "sum(int32)": "int64", "zeros_like(int32)": "int32", "argmax": "int64",
    }
    assert {k: str(v.dtype.name) for k, v in got.items()} == want


@pytest.mark.parametrize(
    "data, dtype, want",
    [
        (1.5, None, "float32"),
        ([1, 2], None, "int64"),
        ([True, False], None, "bool"),
        (np.ones(2, np.float64), None, "float64"),
        (np.ones(2, np.int32), None, "int32"),
        ([1, 2], "float64", "float64"),
        ([1, 2], np.float32, "float32"),
        ([1.0], paddle.float64, "float64"),
        ([1.0], float, "float64"),  # Python's float is float64, as everywhere in Paddle
    ],
)
def test_to_tensor_dtypes(dynamic_mode: None, data: Any, dtype: Any, want: str):
    t = paddle.to_tensor(data, dtype=dtype)
    assert t.dtype == want and t.numpy().dtype == np.dtype(want)


def test_dtype_accepts_numpy_spellings(static_programs: Any):
    assert paddle.static.data("a", [2], np.float64).dtype == "float64"
    assert paddle.static.data("b", [2], np.dtype("int32")).dtype == "int32"
    assert paddle.static.data("c", [2], paddle.int64).dtype == "int64"


NOT_YET = [("paddle.float8_e5m2", paddle.float8_e5m2), ("'float8_e4m3fn'", "float8_e4m3fn")]


@pytest.mark.parametrize("spelling", [s[1] for s in NOT_YET], ids=[s[0] for s in NOT_YET])
def test_dtypes_not_supported_yet_say_so(dynamic_mode: None, spelling: Any):
    x = paddle.to_tensor([1.0])
    calls: list[Callable[[], Any]] = [
        lambda: paddle.cast(x, spelling), lambda: x.astype(spelling), lambda: paddle.zeros([2], dtype=spelling),
        lambda: paddle.to_tensor([1.0], dtype=spelling), lambda: paddle.sum(x, dtype=spelling),
        lambda: paddle.create_parameter([2], dtype=spelling), lambda: paddle.static.InputSpec([2], spelling),
        lambda: paddle.nn.Linear(2, 2).to(dtype=spelling),
    ]
    for call in calls:
        with pytest.raises(TypeError, match="is not supported by pullback yet"):
            call()
    paddle.enable_static()
    try:
        with paddle.static.program_guard(paddle.static.Program()):
            with pytest.raises(TypeError, match=r"^paddle.static.data: unsupported dtype .* not supported by pullback yet"):
                paddle.static.data("v", [2], dtype=spelling)
            with pytest.raises(TypeError, match="not supported by pullback yet"):
                paddle.static.default_main_program().global_block().create_var(name="w", shape=[2], dtype=spelling)
    finally:
        paddle.disable_static()


def test_cast_of_none_is_an_error(dynamic_mode: None):
    """(Paddle's cast reads None through numpy, as float64: an accident pullback
    does not copy.)"""
    with pytest.raises(TypeError, match="cast: invalid dtype None"):
        paddle.cast(paddle.to_tensor([1]), None)
