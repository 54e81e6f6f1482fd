"""The public backward API: `paddle.autograd.backward`, `paddle.grad`,
`Tensor.backward`, and the hooks run after a backward call.

These check their arguments the way Paddle does (same assertions and messages, so
ported Paddle tests see the same errors), then call `engine.run_backward`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from pullback.frontend.autograd.engine import run_backward
from pullback.frontend.autograd.graph import cut_key
from pullback.frontend.eager import Tensor

_POST_BACKWARD_HOOKS: list[Callable[[], None]] = []
_FINAL_HOOKS: list[Callable[[], None]] = []


def _check_tensors(xs: Any, what: str) -> list[Tensor]:
    """`xs` (a Tensor or a non-empty list of them) as a list, Paddle's assertions."""
    assert xs is not None, f"{what} should not be None"
    if isinstance(xs, (list, tuple)):
        assert len(xs) > 0, f"{what} cannot be empty"
        for x in xs:
            assert isinstance(x, Tensor), f"Elements of {what} must be paddle.Tensor"
        return list(xs)
    assert isinstance(xs, Tensor), f"{what} must be Tensor or list of Tensor"
    return [xs]


def _check_seeds(seeds: Any, n: int, what: str, message: str, length_message: str) -> list[Tensor | None]:
    """The seeds of `n` targets as a list (None entries: ones), Paddle's assertions."""
    if seeds is None:
        return [None] * n
    if not isinstance(seeds, (list, tuple)):
        seeds = [seeds]
    for s in seeds:
        assert s is None or isinstance(s, Tensor), message
    if len(seeds) == 0:
        return [None] * n
    assert len(seeds) == n, length_message
    return list(seeds)


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool = False,
    *,
    dump_backward_graph_path: str | os.PathLike[str] | None = None,
) -> None:
    """`paddle.autograd.backward`: accumulate the gradients of `tensors` into the
    `.grad` of every leaf they depend on.

    `grad_tensors` seed the tensors (None, or None entries: ones); `retain_graph=False`
    frees the saved forward values once used; `dump_backward_graph_path` names a
    directory receiving the backward and forward graphs as DOT and the call stacks
    of the recorded ops.
    """
    tensors = _check_tensors(tensors, "tensors")
    assert len({id(t) for t in tensors}) == len(tensors), (
        "The argument 'tensors' of paddle.autograd.backward contains duplicate paddle.Tensor object."
    )
    seeds = _check_seeds(
        grad_tensors,
        len(tensors),
        "grad_tensors",
        "The argument 'grad_tensors' of paddle.autograd.backward is invalid, it can be "
        "'None', 'paddle.Tensor' or 'list[None/paddle.Tensor]'.",
        "The length of grad_tensors must be equal to tensors",
    )
    assert isinstance(retain_graph, bool), "retain_graph must be True or False"
    dump_dir = None
    if dump_backward_graph_path is not None:
        from pullback.frontend import eager_dump

        dump_dir = eager_dump.prepare_dir(dump_backward_graph_path)
    run_backward(tensors, seeds, None, retain_graph, False, dump_dir=dump_dir)
    for hook in list(_POST_BACKWARD_HOOKS):
        hook()
    final, _FINAL_HOOKS[:] = list(_FINAL_HOOKS), []
    for hook in final:
        hook()


def add_backward_final_hook(hook: Callable[[], None]) -> None:
    """Paddle's `core.eager._add_backward_final_hook`: call `hook()` once, at the
    end of the next `backward` (Paddle clears these hooks after running them)."""
    if not callable(hook):
        raise TypeError(f"_add_backward_final_hook: the hook must be callable, got {type(hook).__name__}")
    _FINAL_HOOKS.append(hook)


def has_post_backward_hooks() -> bool:
    """True while a hook of `register_post_backward_hook` is registered (a
    `paddle.DataParallel` lives): code that replaces `backward` must run it."""
    return bool(_POST_BACKWARD_HOOKS)


def register_post_backward_hook(hook: Callable[[], None]) -> Callable[[], None]:
    """Call `hook()` after every `backward` has accumulated its gradients (how
    `paddle.DataParallel` all-reduces them); returns a function removing the hook."""
    _POST_BACKWARD_HOOKS.append(hook)

    def remove() -> None:
        if hook in _POST_BACKWARD_HOOKS:
            _POST_BACKWARD_HOOKS.remove(hook)

    return remove


def tensor_backward(
    self: Tensor,
    grad_tensor: Tensor | None = None,
    retain_graph: bool = False,
    *,
    dump_backward_graph_path: str | os.PathLike[str] | None = None,
) -> None:
    """`Tensor.backward`: accumulate the gradients of this tensor into the leaves'
    `.grad` (`paddle.autograd.backward([self], [grad_tensor], retain_graph)`;
    `grad_tensor` defaults to ones, and a `[1]` one is accepted for a 0-d tensor).
    Attached to Tensor by `frontend/install.py` (eager cannot import this module)."""
    if grad_tensor is not None and not isinstance(grad_tensor, Tensor):
        raise TypeError(
            f"Tensor.backward: grad_tensor must be a Tensor or None, got {type(grad_tensor).__name__}"
        )
    backward([self], None if grad_tensor is None else [grad_tensor], retain_graph,
             dump_backward_graph_path=dump_backward_graph_path)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool = False,
    no_grad_vars: Tensor | Sequence[Tensor] | None = None,
) -> list[Tensor | None]:
    """`paddle.grad`: the gradients of `outputs` with respect to `inputs`, returned
    as a list (leaves' `.grad` is left alone).

    `grad_outputs` seed the outputs (None entries: ones).  `create_graph=True` records
    the gradient computation so its results can be differentiated again;
    `retain_graph` defaults to `create_graph`.  An input the outputs do not depend on
    raises ValueError unless `allow_unused=True` (then its gradient is None).
    `no_grad_vars` are treated as constants.
    """
    outs = _check_tensors(outputs, "outputs")
    ins = _check_tensors(inputs, "inputs")
    seeds = _check_seeds(
        grad_outputs,
        len(outs),
        "grad_outputs",
        "grad_outputs must be None, a Variable or a list containing None or Variables",
        "The length of grad_outputs must be equal to outputs",
    )
    if no_grad_vars is None:
        cut_list: list[Tensor] = []
    elif isinstance(no_grad_vars, Tensor):
        cut_list = [no_grad_vars]
    elif isinstance(no_grad_vars, (list, tuple, set)):
        cut_list = list(no_grad_vars)
        for v in cut_list:
            assert isinstance(v, Tensor), "no_grad_vars can only contains Tensor"
    else:
        raise AssertionError("no_grad_vars must be None, Tensor or list/tuple/set of Tensors")
    if retain_graph is None:
        retain_graph = create_graph
    assert isinstance(create_graph, bool), "create_graph must be True or False"
    assert isinstance(retain_graph, bool), "retain_graph must be None, True or False"
    assert isinstance(allow_unused, bool), "allow_unused must be True or False"
    assert isinstance(only_inputs, bool), "only_inputs must be True or False"
    assert only_inputs, "only_inputs=False is not supported yet"
    cut = frozenset(cut_key(v) for v in cut_list)
    result = run_backward(
        outs, seeds, ins, retain_graph, create_graph, cut, allow_unused,
        seed_name="grad_outputs", target_name="outputs",
    )
    assert result is not None
    out: list[Tensor | None] = []
    for r in result:
        if r is None:
            out.append(None)
        elif isinstance(r, Tensor):
            # With create_graph the results take part in further differentiation:
            # Paddle gives them stop_gradient=False even when they are constants.
            out.append(r if r._node is not None else Tensor._new(r._data, None, 0, False))
        else:
            out.append(Tensor._new(r, None, 0, True))
    return out
