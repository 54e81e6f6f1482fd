"""Fixtures shared by the unit tests."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pullback.dialects import pd
from pullback.frontend import core, unique_name
from pullback.frontend.framework import Program, Variable, program_guard


def _register(name: str, path: Path) -> None:
    """Make the test helper module `path` importable as `name`: with
    `--import-mode=importlib` no test directory is on `sys.path`."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


# The GPU runtime's recording fake device and fake cuBLAS (`runtime/gpu/gpu_fakes.py`),
# used by the GPU tests of several directories: `import pullback_gpu_fakes`.
_register("pullback_gpu_fakes", Path(__file__).parent / "runtime" / "gpu" / "gpu_fakes.py")
# The complex-valued cases both complex test files compare with Paddle 3.3.1's values
# (`dtypes/complex_cases.py`, also read by its fixture script): `import pullback_complex_cases`.
_register("pullback_complex_cases", Path(__file__).parent / "dtypes" / "complex_cases.py")


@pytest.fixture
def static(request: pytest.FixtureRequest) -> Iterator[tuple[Program, Callable[..., Variable]]]:
    """Static mode with a fresh program and name generator; yields (program, feed),
    where `feed(name, shape, dtype=...)` adds a `pd.data` (default dtype: the test
    module's `FEED_DTYPE`, else float32)."""
    default_dtype = getattr(request.module, "FEED_DTYPE", "float32")
    core.enable_static()
    main = Program()
    with program_guard(main), unique_name.guard():

        def feed(name: str, shape: list[int], dtype: str = default_dtype) -> Variable:
            op = pd.DataOp.make(name, shape, dtype)
            main.global_block().append(op)
            return main.global_block().wrap(op.out)

        yield main, feed
    core.disable_static()


@pytest.fixture
def static_programs() -> Iterator[tuple[Program, Program]]:
    """Static mode with fresh main/start-up programs (made current), names and global
    scope; yields (main, startup) and restores the previous mode afterwards."""
    from pullback.runtime.scope import Scope, scope_guard

    was_dynamic = core.in_dynamic_mode()
    core.enable_static()
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard(), scope_guard(Scope()):
        yield main, startup
    core.disable_static() if was_dynamic else core.enable_static()


@pytest.fixture
def static_mode() -> Iterator[None]:
    """Static mode with fresh default programs (made current), names and global scope;
    `paddle.seed` undone and the previous mode restored afterwards."""
    from pullback.frontend.random import default_generator
    from pullback.runtime.scope import Scope, scope_guard

    state = default_generator().get_state()
    was_dynamic = core.in_dynamic_mode()
    core.enable_static()
    with program_guard(Program(), Program()), unique_name.guard(), scope_guard(Scope()):
        yield
    core.disable_static() if was_dynamic else core.enable_static()
    default_generator().set_state(state)


@pytest.fixture
def dynamic_mode() -> Iterator[None]:
    """Eager mode, fresh names, and `paddle.seed` undone afterwards."""
    from pullback.frontend.framework import default_main_program, default_startup_program
    from pullback.frontend.random import default_generator

    programs = [default_main_program(), default_startup_program()]
    seeds = [p.random_seed for p in programs]
    state = default_generator().get_state()
    core.disable_static()
    with unique_name.guard():
        yield
    core.disable_static()
    for p, s in zip(programs, seeds):
        p.random_seed = s
    default_generator().set_state(state)
