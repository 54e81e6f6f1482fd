"""Write `paddle_fixtures.npz`: outputs and gradients of `paddle.geometric` computed
by real PaddlePaddle 3.3.1 on fixed inputs, read by `test_geometric_ops.py`.

Run with Paddle's interpreter (not pullback's):
    /work/venv-paddle/bin/python tests/unit/ops/geometric/make_paddle_fixtures.py

Each case records its inputs, the forward output and the gradients of
`sum(out * w)` (`w` a fixed weight shaped like the output) with respect to every
float input, as float64.  Inputs hold ties on purpose (max/min gradient
conventions)."""

from __future__ import annotations

import os

import numpy as np
import paddle
import paddle.geometric as G

HERE = os.path.dirname(os.path.abspath(__file__))


def cases() -> list[tuple[str, dict[str, np.ndarray], dict[str, object]]]:
    """`(name, inputs, call)` of every case; `call` names the function and its
    keyword arguments."""
    rng = np.random.default_rng(29)
    # Integer-valued features: ties between messages occur (max/min gradients).
    x = rng.integers(-3, 4, (5, 3)).astype("float64")
    src = np.array([0, 1, 2, 3, 4, 0, 1, 2, 0], "int64")
    dst = np.array([1, 2, 1, 0, 1, 3, 3, 1, 1], "int64")  # row 4 receives nothing
    y = rng.integers(1, 4, (9, 3)).astype("float64")
    y1 = rng.integers(1, 4, (9,)).astype("float64")
    out = []
    for r in ("sum", "mean", "max", "min"):
        out.append((f"u_recv_{r}", {"x": x, "src": src, "dst": dst},
                    {"fn": "send_u_recv", "reduce_op": r}))
        out.append((f"u_recv_{r}_out7", {"x": x, "src": src, "dst": dst},
                    {"fn": "send_u_recv", "reduce_op": r, "out_size": 7}))
        for m in ("add", "sub", "mul", "div"):
            out.append((f"ue_recv_{m}_{r}", {"x": x, "y": y, "src": src, "dst": dst},
                        {"fn": "send_ue_recv", "message_op": m, "reduce_op": r}))
        out.append((f"ue_recv_mul_{r}_y1d", {"x": x, "y": y1, "src": src, "dst": dst},
                    {"fn": "send_ue_recv", "message_op": "mul", "reduce_op": r}))
    for m in ("add", "sub", "mul", "div"):
        out.append((f"uv_{m}", {"x": x, "y": x + 4.0, "src": src, "dst": dst},
                    {"fn": "send_uv", "message_op": m}))
    data = rng.integers(-2, 3, (7, 2)).astype("float64")
    ids = np.array([0, 0, 1, 1, 1, 3, 3], "int64")  # segment 2 is empty
    for r in ("sum", "mean", "max", "min"):
        out.append((f"segment_{r}", {"data": data, "ids": ids}, {"fn": f"segment_{r}"}))
    return out


def run(inputs: dict[str, np.ndarray], call: dict[str, object]) -> dict[str, np.ndarray]:
    kw = dict(call)
    fn = getattr(G, kw.pop("fn"))
    t = {k: paddle.to_tensor(v, stop_gradient=v.dtype.kind != "f") for k, v in inputs.items()}
    if "data" in t:
        o = fn(t["data"], t["ids"])
    elif "y" in t:
        o = fn(t["x"], t["y"], t["src"], t["dst"], **kw)
    else:
        o = fn(t["x"], t["src"], t["dst"], **kw)
    w = np.cos(np.arange(np.prod(o.shape))).reshape(o.shape)
    (o * paddle.to_tensor(w)).sum().backward()
    res = {"out": o.numpy(), "w": w}
    for k, v in t.items():
        if not v.stop_gradient:
            res[f"grad_{k}"] = v.grad.numpy()
    return res


def main() -> None:
    arrays: dict[str, np.ndarray] = {}
    for name, inputs, call in cases():
        for k, v in inputs.items():
            arrays[f"{name}/in/{k}"] = v
        for k, v in run(inputs, call).items():
            arrays[f"{name}/{k}"] = v
        arrays[f"{name}/call"] = np.array(repr(call))
    np.savez_compressed(os.path.join(HERE, "paddle_fixtures.npz"), **arrays)
    print(f"wrote {len(arrays)} arrays, paddle {paddle.__version__}")


if __name__ == "__main__":
    main()
