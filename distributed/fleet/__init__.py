"""`paddle.distributed.fleet` for collective (data-parallel) training:
`fleet.init(is_collective=True)`, `fleet.distributed_optimizer(opt, strategy)` and,
in eager mode, `fleet.distributed_model(model)`.

In static mode `distributed_optimizer(opt).minimize(loss)` appends the backward and
the updates as `opt.minimize` does and attaches the `data-parallel` pass to the main
program (loss gradient scaled by 1/nranks, gradients all-reduced in buckets of
`strategy.fuse_grad_size_in_MB`) and to the start-up program (parameters broadcast
from rank 0).  The executor applies the pass to the program it runs; the program
as printed stays the one the user built, `fleet.main_program_with_collectives()`
shows the rewritten one.  With `strategy.recompute` (and
`strategy.recompute_configs = {"checkpoints": [...]}`) the backward is built by the
`recompute` pass, as `RecomputeOptimizer` builds it.  `fleet.utils.recompute` is the
eager form.
"""

from __future__ import annotations

from typing import Any

from pullback.runtime.process_group import (
    get_rank,
    get_world_size,
    init_parallel_env,
    is_initialized,
)
from pullback.distributed.parallel import DataParallel
from pullback.distributed.fleet import utils  # noqa: F401 - `fleet.utils.recompute`
from pullback.frontend import core
from pullback.frontend.framework import Program, default_startup_program


class DistributedStrategy:
    """The options of collective training that pullback honours (others are kept,
    as Paddle keeps them, but change nothing): fusion of the gradient all-reduces
    into buckets (`fuse_all_reduce_ops`, `fuse_grad_size_in_MB`) and recomputation
    between checkpoints (`recompute`, `recompute_configs["checkpoints"]`)."""

    def __init__(self) -> None:
        self.fuse_all_reduce_ops = True
        self.fuse_grad_size_in_MB = 32
        self.amp = False
        self.recompute = False
        self.recompute_configs: dict[str, Any] = {"checkpoints": [], "enable_offload": False, "checkpoint_shape": []}
        self.gradient_merge = False
        self.sharding = False
        self.without_graph_optimization = True
        self.find_unused_parameters = False
        self.hybrid_configs: dict[str, Any] = {}

    def __repr__(self) -> str:
        return (
            f"DistributedStrategy(fuse_all_reduce_ops={self.fuse_all_reduce_ops}, "
            f"fuse_grad_size_in_MB={self.fuse_grad_size_in_MB})"
        )


_state: dict[str, Any] = {"strategy": None, "initialized": False}


def init(role_maker: Any = None, is_collective: bool = False, strategy: DistributedStrategy | None = None,
         log_level: Any = "INFO") -> None:
    """Start collective training (the communicator) with `strategy`."""
    if not is_collective and role_maker is None:
        raise ValueError(
            "fleet.init: only collective training is supported; call fleet.init(is_collective=True)"
        )
    if strategy is not None and not isinstance(strategy, DistributedStrategy):
        raise TypeError(f"fleet.init: strategy must be a DistributedStrategy, got {type(strategy).__name__}")
    if not is_initialized():
        init_parallel_env()
    _state["strategy"] = strategy or DistributedStrategy()
    _state["initialized"] = True


def _require_init(fn: str) -> None:
    if not _state["initialized"]:
        raise RuntimeError(f"fleet.{fn}: call fleet.init(is_collective=True) first")


def worker_index() -> int:
    """This rank."""
    return get_rank()


def worker_num() -> int:
    """The number of ranks."""
    return get_world_size()


def is_first_worker() -> bool:
    """True on rank 0."""
    return get_rank() == 0


def barrier_worker() -> None:
    """Wait for every rank."""
    from pullback.runtime.communicator import world

    world().barrier()


def distributed_model(model: Any) -> Any:
    """The model wrapped for eager data-parallel training (`paddle.DataParallel`)."""
    _require_init("distributed_model")
    strategy = _state["strategy"]
    return DataParallel(model, find_unused_parameters=strategy.find_unused_parameters)


class _DistributedOptimizer:
    """An optimizer whose `minimize` makes the static program data-parallel; every
    other attribute is the wrapped optimizer's."""

    def __init__(self, optimizer: Any, strategy: DistributedStrategy) -> None:
        self.inner_opt = optimizer
        self.user_defined_strategy = strategy

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner_opt, name)

    def minimize(self, loss: Any, startup_program: Program | None = None,
                 parameters: Any = None, no_grad_set: Any = None) -> Any:
        """`opt.minimize(loss)`, then the data-parallel rewrite of both programs
        (static mode); in eager mode, the optimizer's own `minimize`."""
        strategy = self.user_defined_strategy
        if strategy.recompute and not core.in_dynamic_mode():
            from pullback.frontend.recompute import RecomputeOptimizer

            configs = strategy.recompute_configs
            if not isinstance(configs, dict) or not isinstance(configs.get("checkpoints", []), (list, tuple)):
                raise TypeError(
                    "DistributedStrategy.recompute_configs must be a dict whose 'checkpoints' is a "
                    f"list of Variables or names, got {configs!r}"
                )
            opt = RecomputeOptimizer(self.inner_opt)
            opt._set_checkpoints(list(configs.get("checkpoints", [])))
            opt._set_enable_offload(bool(configs.get("enable_offload", False)))
            result = opt.minimize(loss, startup_program, parameters, no_grad_set)
        else:
            result = self.inner_opt.minimize(loss, startup_program, parameters, no_grad_set)
        if core.in_dynamic_mode():
            return result
        from pullback.passes.data_parallel import DataParallelPass

        fuse = int(strategy.fuse_grad_size_in_MB) if strategy.fuse_all_reduce_ops else 0
        nranks = get_world_size()
        main = loss.block.program
        startup = startup_program or default_startup_program()
        main.passes.append(DataParallelPass(nranks=nranks, fuse_mb=fuse, broadcast=False))
        main._bump()
        startup.passes.append(DataParallelPass(nranks=nranks, broadcast=True))
        startup._bump()
        return result


def distributed_optimizer(optimizer: Any, strategy: DistributedStrategy | None = None) -> Any:
    """`optimizer` made data-parallel (see the module docstring)."""
    _require_init("distributed_optimizer")
    if strategy is not None:
        _state["strategy"] = strategy
    return _DistributedOptimizer(optimizer, _state["strategy"])


def main_program_with_collectives(program: Program) -> str:
    """The program as the executor runs it with its passes applied (collectives
    shown), as IR text."""
    from pullback.dialects import pd
    from xdsl.context import Context

    module = program.module.clone()
    ctx = Context()
    ctx.load_dialect(pd.PD)
    for p in program.passes:
        p.apply(ctx, module)
    return str(module)


__all__ = [
    "DistributedStrategy",
    "barrier_worker",
    "distributed_model",
    "distributed_optimizer",
    "init",
    "is_first_worker",
    "main_program_with_collectives",
    "worker_index",
    "worker_num",
]

from pullback.namespaces import adopt_real  # noqa: E402 - names of Paddle's module it lacks

adopt_real(__name__)
