"""Makes `data/paddle_complex_facts.json`: complex64/complex128 behaviour read off real
PaddlePaddle 3.3.1 (eager, CPU), which `test_complex_dtypes.py` checks pullback
against.  Run with a Paddle install (not a dependency of pullback):

    python tests/unit/dtypes/paddle_complex_facts.py
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import paddle  # noqa: E402

OTHERS = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def _name(t: object) -> str:
    return str(t).replace("paddle.", "")


def _try(f: object) -> str | None:
    try:
        return _name(f().dtype)  # type: ignore[operator]
    except Exception:  # noqa: BLE001 - a refusal is a fact too
        return None


def facts() -> dict[str, object]:
    add = {f"{a}+{b}": _try(lambda a=a, b=b: paddle.ones([2], a) + paddle.ones([2], b))
           for a in ("complex64", "complex128") for b in OTHERS}
    scalars = {f"{a}+{s!r}": _try(lambda a=a, s=s: paddle.ones([2], a) + s)
               for a in ("complex64", "complex128", "float32", "float64", "int64") for s in (1, 1.5, 1j)}
    z = np.array([1 + 2j, -3 + 0.5j])
    creations = {
        "to_tensor(1+2j)": _name(paddle.to_tensor(1 + 2j).dtype),
        "to_tensor([1+2j])": _name(paddle.to_tensor([1 + 2j]).dtype),
        "to_tensor(complex128 array)": _name(paddle.to_tensor(z).dtype),
        "to_tensor(complex64 array)": _name(paddle.to_tensor(z.astype(np.complex64)).dtype),
        "to_tensor(float array, dtype=complex64)": _name(paddle.to_tensor(np.array([1.5]), dtype="complex64").dtype),
    }
    c = paddle.to_tensor(z)
    values = {
        "astype float32": paddle.to_tensor(z).astype("float32").numpy().tolist(),
        "astype int64": paddle.to_tensor(z).astype("int64").numpy().tolist(),
        "cast float64->complex128": [[v.real, v.imag] for v in paddle.cast(paddle.to_tensor([1.5, -2.0]), "complex128").numpy()],
    }
    results = {
        "abs": _name(paddle.abs(c).dtype), "real": _name(paddle.real(c).dtype), "angle": _name(paddle.angle(c).dtype),
        "abs complex64": _name(paddle.abs(c.astype("complex64")).dtype),
        "as_real shape": list(paddle.as_real(c).shape), "is_complex": bool(paddle.is_complex(c)),
        "mean": _name(c.mean().dtype), "sum": _name(c.sum().dtype),
    }
    return {"paddle": paddle.__version__, "add": add, "scalars": scalars, "creations": creations,
            "values": values, "results": results}


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "paddle_complex_facts.json")
    with open(out, "w") as f:
        json.dump(facts(), f, indent=1, sort_keys=True)
    print(f"wrote {out}")
