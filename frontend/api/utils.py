"""`paddle.utils`: `paddle.utils.unique_name` (`generate`, `guard`, `switch`) and
`run_check()`."""

from __future__ import annotations

from pullback.frontend import unique_name

__path__: list[str] = []  # `paddle.utils.unique_name` comes from the alias finder

__all__ = ["run_check", "unique_name"]


def run_check() -> None:
    """Check the installation as Paddle's `run_check` does: train a small linear
    layer for one step in dygraph mode and in a static program (on the CPU), then
    print that it works."""
    import numpy as np

    import pullback as paddle
    from pullback.frontend import core

    print("Running verify PaddlePaddle program ... ")
    was_static = not core.in_dynamic_mode()
    x = np.ones((2, 2), np.float32)
    core.disable_static()
    try:
        layer = paddle.nn.Linear(2, 4)
        opt = paddle.optimizer.SGD(learning_rate=1e-3, parameters=layer.parameters())
        loss = paddle.mean(layer(paddle.to_tensor(x)))
        loss.backward()
        opt.step()
        core.enable_static()
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), unique_name.guard():
            inp = paddle.static.data("inp", [-1, 2], "float32")
            out = paddle.mean(paddle.static.nn.fc(inp, 4))
            paddle.optimizer.SGD(learning_rate=1e-3).minimize(out)
        exe = paddle.static.Executor(paddle.CPUPlace())
        scope = paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            exe.run(startup)
            exe.run(main, feed={"inp": x}, fetch_list=[out])
    finally:
        core.enable_static() if was_static else core.disable_static()
    print("PaddlePaddle works well on 1 CPU.")
    print(
        "PaddlePaddle is installed successfully! Let's start deep learning with "
        "PaddlePaddle now."
    )
