"""Makes `data/paddle_dtype_facts.json`: dtype behaviour read off real PaddlePaddle 3.3.1
(eager, CPU), which `test_dtype_facts.py` checks pullback against.  Run with a Paddle
install (not a dependency of pullback):

    python tests/unit/dtypes/paddle_dtype_facts.py
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import paddle  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def _name(t: object) -> str:
    return str(t).replace("paddle.", "")


CREATIONS = {
    "to_tensor(1.0)": lambda: paddle.to_tensor(1.0), "to_tensor([1.5])": lambda: paddle.to_tensor([1.5]),
    "to_tensor(float64 array)": lambda: paddle.to_tensor(np.array([1.5])), "ones": lambda: paddle.ones([1]),
    "full": lambda: paddle.full([1], 1.0), "zeros": lambda: paddle.zeros([1]), "rand": lambda: paddle.rand([1]),
    "randn": lambda: paddle.randn([1]), "Linear.weight": lambda: paddle.nn.Linear(2, 2).weight,
    "arange(3)": lambda: paddle.arange(3), "arange(0.,3.)": lambda: paddle.arange(0.0, 3.0),
    "eye": lambda: paddle.eye(2), "linspace": lambda: paddle.linspace(0, 1, 3), "empty": lambda: paddle.empty([1]),
    "int tensor + 1.5": lambda: paddle.to_tensor([1]) + 1.5,
}


def facts() -> dict[str, object]:
    out: dict[str, object] = {}
    add: dict[str, str | None] = {}
    for a in DTYPES:
        for b in DTYPES:
            try:
                add[f"{a}+{b}"] = _name((paddle.ones([2], dtype=a) + paddle.ones([2], dtype=b)).dtype)
            except Exception:  # noqa: BLE001
                add[f"{a}+{b}"] = None
    out["tensor_plus_tensor"] = add
    scal: dict[str, str | None] = {}
    for a in DTYPES:
        x = paddle.ones([2], dtype=a)
        for label, fn in (("+1", lambda t: t + 1), ("+1.5", lambda t: t + 1.5), ("/2", lambda t: t / 2),
                          ("*1.5", lambda t: t * 1.5)):
            try:
                scal[f"{a}{label}"] = _name(fn(x).dtype)
            except Exception:  # noqa: BLE001
                scal[f"{a}{label}"] = None
    out["tensor_op_scalar"] = scal
    out["to_tensor_of_array"] = {
        dt: _name(paddle.to_tensor(np.array([1, 2], dt)).dtype)
        for dt in ("uint8", "int8", "int16", "int32", "int64", "float16", "uint16", "float32", "float64", "bool")
    }
    src = [-3.7, 300.0, 0.5, -0.5, 127.9, 255.5]
    out["cast_from_float32"] = {
        dt: paddle.to_tensor(src, dtype="float32").astype(dt).numpy().tolist() for dt in ("uint8", "int8", "int16")
    }
    a = paddle.to_tensor([200, 3, 250, 7], dtype="uint8")
    b = paddle.to_tensor([7, 2, 10, 200], dtype="uint8")
    ops = {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "floordiv": lambda: a // b,
        "mod": lambda: a % b, "gt": lambda: a > b, "max": lambda: paddle.maximum(a, b),
        "min": lambda: paddle.minimum(a, b), "to_float32": lambda: a.astype("float32"),
        "to_int8": lambda: a.astype("int8"),
    }
    u8: dict[str, object] = {}
    for k, fn in ops.items():
        try:
            u8[k] = fn().numpy().tolist()
        except Exception:  # noqa: BLE001 - Paddle's CPU has no uint8 kernel of some ops
            u8[k] = None
    out["uint8_ops"] = u8
    v = paddle.to_tensor([1.0, 1.00390625, 1.01171875, 3.4e38, -2.5e-3, 65519.0, 70000.0], dtype="float32")
    out["bfloat16_bits"] = v.astype("bfloat16").numpy().tolist()
    out["float16_values"] = v.astype("float16").numpy().astype("float64").tolist()
    defaults = {}
    for d in ("float16", "bfloat16", "float64", "int32"):
        try:
            paddle.set_default_dtype(d)
            defaults[d] = _name(paddle.get_default_dtype())
        except Exception:  # noqa: BLE001
            defaults[d] = None
    out["set_default_dtype"] = defaults
    made = {}
    for d in ("float64", "float32"):
        paddle.set_default_dtype(d)
        made[d] = {k: _name(fn().dtype) for k, fn in CREATIONS.items()}
    paddle.set_default_dtype("float32")
    out["created_under_default"] = made
    out["amp_white_list"] = {d: {lv: sorted(v) for lv, v in t.items()} for d, t in paddle.amp.white_list().items()}
    out["amp_black_list"] = {d: {lv: sorted(v) for lv, v in t.items()} for d, t in paddle.amp.black_list().items()}
    sc = paddle.amp.GradScaler()
    out["grad_scaler_defaults"] = {
        "init_loss_scaling": 2.0**16, "incr_ratio": 2.0, "decr_ratio": 0.5, "incr_every_n_steps": 2000,
        "decr_every_n_nan_or_inf": 1, "enabled_on_cpu": sc.is_enable(),
    }
    out["amp_is_supported_on_cpu"] = [paddle.amp.is_float16_supported(), paddle.amp.is_bfloat16_supported()]
    return out


if __name__ == "__main__":
    path = os.path.join(os.path.dirname(__file__), "data", "paddle_dtype_facts.json")
    with open(path, "w") as f:
        json.dump(facts(), f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", path)
