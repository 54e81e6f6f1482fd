"""`paddle.set_flags` / `paddle.get_flags`: Paddle's global FLAGS.

pullback accepts the flags Paddle programs and tests commonly set and keeps their
values, so code that sets them runs unchanged; an unknown flag is an error naming
it, as in Paddle.  None of them changes what pullback computes: the behaviours they
select in Paddle are pullback's only behaviour (gradients are summed in a fixed
order, as `FLAGS_sort_sum_gradient` asks; memory is freed by Python; there is no
cuDNN to make deterministic) or concern machinery pullback does not have (PIR,
allocators, oneDNN).

One flag is pullback's own: `FLAGS_pullback_compile_notice` (default True) -- False
silences the stderr notice of a compile slower than a second (as the environment
variable `PULLBACK_COMPILE_NOTICE=0` does), for quiet runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_DEFAULTS: dict[str, Any] = {
    "FLAGS_allocator_strategy": "auto_growth",
    "FLAGS_benchmark": False,
    "FLAGS_call_stack_level": 1,
    "FLAGS_check_nan_inf": False,
    "FLAGS_check_nan_inf_level": 0,
    "FLAGS_conv_workspace_size_limit": 512,
    "FLAGS_cudnn_batchnorm_spatial_persistent": False,
    "FLAGS_cudnn_deterministic": False,
    "FLAGS_cudnn_exhaustive_search": False,
    "FLAGS_eager_delete_tensor_gb": 0.0,
    "FLAGS_embedding_deterministic": 0,
    "FLAGS_enable_api_kernel_fallback": True,
    "FLAGS_enable_eager_mode": True,
    "FLAGS_enable_pir_api": False,
    "FLAGS_enable_pir_in_executor": False,
    "FLAGS_fast_eager_deletion_mode": True,
    "FLAGS_fraction_of_cpu_memory_to_use": 1.0,
    "FLAGS_fraction_of_gpu_memory_to_use": 0.92,
    "FLAGS_gpu_memory_limit_mb": 0,
    "FLAGS_initial_cpu_memory_in_mb": 500,
    "FLAGS_max_inplace_grad_add": 0,
    "FLAGS_memory_fraction_of_eager_deletion": 1.0,
    "FLAGS_new_executor_use_inplace": False,
    "FLAGS_paddle_num_threads": 1,
    "FLAGS_prim_all": False,
    "FLAGS_prim_backward": False,
    "FLAGS_prim_enabled": False,
    "FLAGS_prim_forward": False,
    "FLAGS_print_sub_graph_dir": "",
    "FLAGS_pullback_compile_notice": True,
    "FLAGS_retain_grad_for_all_tensor": False,
    "FLAGS_set_to_1d": False,
    "FLAGS_sort_sum_gradient": False,
    "FLAGS_tensor_operants_mode": "eager",
    "FLAGS_use_autotune": False,
    "FLAGS_use_cuda_managed_memory": False,
    "FLAGS_use_mkldnn": False,
    "FLAGS_use_stride_kernel": True,
    "FLAGS_use_system_allocator": False,
}
"""The known flags and their defaults."""

_values: dict[str, Any] = dict(_DEFAULTS)


def _check_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"a flag name must be a str, got {type(name).__name__}")
    if name not in _values:
        raise ValueError(
            f"Flag {name} cannot set its value through this function (pullback does not "
            "know it; see pullback.frontend.flags for the flags it accepts)"
        )
    return name


def set_flags(flags: dict[str, Any]) -> None:
    """`paddle.set_flags({'FLAGS_name': value, ...})`; ValueError for an unknown flag,
    TypeError for a value of the wrong type."""
    if not isinstance(flags, dict):
        raise TypeError(f"flags in set_flags should be a dict, got {type(flags).__name__}")
    for name, value in flags.items():
        _check_name(name)
        default = _DEFAULTS[name]
        ok = isinstance(value, str) if isinstance(default, str) else isinstance(value, (bool, int, float))
        if not ok:
            raise TypeError(f"{name} expects a {type(default).__name__}, got {value!r}")
        _values[name] = type(default)(value) if not isinstance(default, str) else value
        if name == "FLAGS_pullback_compile_notice":
            from pullback.runtime.native import settings

            settings.set_compile_notice(bool(value))


def get_flags(flags: str | Iterable[str]) -> dict[str, Any]:
    """`paddle.get_flags('FLAGS_name')` or a list of names: `{name: value}`."""
    names = [flags] if isinstance(flags, str) else list(flags)
    if not names and not isinstance(flags, (list, tuple)):
        raise TypeError("flags in get_flags should be a str or a list/tuple of str")
    return {_check_name(n): _values[n] for n in names}


def flag(name: str) -> Any:
    """The current value of a flag (for pullback's own modules)."""
    return _values[_check_name(name)]


__all__ = ["flag", "get_flags", "set_flags"]
