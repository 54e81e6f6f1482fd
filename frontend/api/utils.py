"""`paddle.utils`: `paddle.utils.unique_name` (`generate`, `guard`, `switch`),
`run_check()`, and the nested-structure helpers `flatten`, `pack_sequence_as` and
`map_structure` (Paddle's: dict values in the order of their sorted keys)."""

from __future__ import annotations

from typing import Any

from pullback.frontend import unique_name

__path__: list[str] = []  # `paddle.utils.unique_name` comes from the alias finder

__all__ = ["flatten", "map_structure", "pack_sequence_as", "run_check", "unique_name"]


def _is_sequence(x: object) -> bool:
    return isinstance(x, (list, tuple, dict))


def _leaves(nest: object) -> list:
    if isinstance(nest, dict):
        return [v for k in sorted(nest) for v in _leaves(nest[k])]
    if isinstance(nest, (list, tuple)):
        return [v for x in nest for v in _leaves(x)]
    return [nest]


def flatten(nest: object) -> list:
    """The leaves of a nested list/tuple/dict (dict values by sorted key); a leaf
    alone gives `[leaf]`."""
    return _leaves(nest)


def _pack(structure: object, flat: list, index: int) -> tuple[object, int]:
    if isinstance(structure, dict):
        values = {}
        for k in sorted(structure):
            values[k], index = _pack(structure[k], flat, index)
        return type(structure)((k, values[k]) for k in structure), index
    if isinstance(structure, (list, tuple)):
        items: list[Any] = []
        for x in structure:
            item, index = _pack(x, flat, index)
            items.append(item)
        if isinstance(structure, tuple) and hasattr(structure, "_fields"):
            return type(structure)(*items), index
        return type(structure)(items), index
    return flat[index], index + 1


def pack_sequence_as(structure: object, flat_sequence: object) -> object:
    """`flat_sequence` (a list, or a nest that is flattened) in the shape of
    `structure`."""
    flat = _leaves(flat_sequence) if _is_sequence(flat_sequence) else [flat_sequence]
    if not _is_sequence(structure):
        if len(flat) != 1:
            raise ValueError(f"Structure is a scalar but len(flat_sequence) == {len(flat)} > 1")
        return flat[0]
    n = len(_leaves(structure))
    if n != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {n} elements, but flat_sequence had {len(flat)}")
    return _pack(structure, flat, 0)[0]


def map_structure(func: object, *structure: object) -> object:
    """`func` applied to the leaves of the structures (all of the same shape), in
    the shape of the first."""
    flats = [_leaves(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*xs) for xs in zip(*flats)])  # type: ignore[operator]


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
