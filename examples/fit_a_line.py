"""Fit-a-line: Paddle's linear-regression example, written against `import pullback as
paddle` exactly as it is written for Paddle (the `fluid` spelling of the seed docs).

    python -m pullback.examples.fit_a_line [--steps 100] [--lr 0.05] [--backend interpreter]

It builds the program (13 features -> `fc` of size 1 -> `square_error_cost` ->
`mean`), prints its `pd` IR, runs it forward once, then appends the backward part and
SGD updates with `minimize`, trains on synthetic data and prints the falling loss.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

import pullback as paddle

fluid = paddle.fluid


def synthetic_data(n: int = 256, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Features `x [n, 13]` and targets `y = x @ w + b + noise` of known `w`, `b`."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 13)).astype("float32")
    w = rng.uniform(-2.0, 2.0, size=(13, 1)).astype("float32")
    y = (x @ w + 0.5 + 0.01 * rng.normal(size=(n, 1))).astype("float32")
    return x, y


def build(
    main: paddle.static.Program, startup: paddle.static.Program
) -> tuple[paddle.static.Variable, paddle.static.Variable]:
    """The fit-a-line network, as in Paddle's `append_backward` docs; returns
    `(avg_loss, y_predict)`."""
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[13], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        y_predict = fluid.layers.fc(input=x, size=1, act=None)
        loss = fluid.layers.square_error_cost(input=y_predict, label=y)
        avg_loss = fluid.layers.mean(loss)
    return avg_loss, y_predict


def main(argv: Sequence[str] | None = None) -> list[float]:
    """Build, print, run and train; returns the loss after every training step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="SGD steps (default 100)")
    parser.add_argument("--lr", type=float, default=0.05, help="learning rate (default 0.05)")
    parser.add_argument("--backend", default=None, help="executor backend (default: interpreter)")
    args = parser.parse_args(argv)

    main_program, startup = fluid.Program(), fluid.Program()
    startup.random_seed = 90  # reproducible initial weights
    avg_loss, y_predict = build(main_program, startup)
    print("# forward program")
    print(main_program)

    exe = fluid.Executor(fluid.CPUPlace(), backend=args.backend)
    scope = fluid.Scope()
    x, y = synthetic_data()
    with fluid.scope_guard(scope):
        exe.run(startup)
        (pred,) = exe.run(main_program, feed={"x": x[:4], "y": y[:4]}, fetch_list=[y_predict])
        print("# forward run: first predictions", pred.ravel())

        with fluid.program_guard(main_program, startup):
            fluid.optimizer.SGD(learning_rate=args.lr).minimize(avg_loss)
        exe.run(startup)  # initializes the parameters again, with the optimizer's state
        print(f"# training with SGD(learning_rate={args.lr})")
        losses = []
        for step in range(args.steps):
            (loss,) = exe.run(main_program, feed={"x": x, "y": y}, fetch_list=[avg_loss])
            losses.append(float(loss))
            if step % max(1, args.steps // 10) == 0 or step == args.steps - 1:
                print(f"step {step:4d}  loss {float(loss):.6f}")
        (bias,) = exe.run(main_program, feed={"x": x, "y": y}, fetch_list=["fc_0.b_0"])
        print(f"# learned bias {bias.ravel()[0]:.3f} (true bias 0.5)")
    return losses


if __name__ == "__main__":
    main()
