"""Suite-wide pytest configuration."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

# Most tests check semantics, which the interpreter (the reference) decides; compiling
# every little test program with LLVM would only make the suite slow.  Tests of the
# native backends choose it explicitly (`Executor(place, backend="compiled")`), and
# tests of the default choice clear this variable.
os.environ.setdefault("PULLBACK_BACKEND", "interpreter")
# Likewise eager mode's background compiles of native kernels
# (frontend/eager_native.py): tests/unit/frontend/autograd/test_eager_native.py
# turns them on itself; `PULLBACK_EAGER_NATIVE=1 pytest ...` runs any eager test
# with them.
os.environ.setdefault("PULLBACK_EAGER_NATIVE", "0")


@pytest.fixture(autouse=True)
def _eager_compiles_settled() -> Iterator[None]:
    """A background compile of a native eager kernel ends within the test that
    started it: finishing later, it would store its code in another test's disk
    cache folder and take that test's CPU."""
    yield
    native = sys.modules.get("pullback.frontend.eager_native")
    if native is not None:
        native.wait(600)


@pytest.fixture(autouse=True)
def _mode_restored() -> Iterator[None]:
    """A test that switches static mode on (or off) and fails, or forgets to switch
    back, leaves the next test in its worker in the mode it found (Paddle's default
    is dynamic: tests written for it must not see another test's static mode)."""
    pullback = sys.modules.get("pullback")
    dynamic = pullback.in_dynamic_mode() if pullback is not None else True
    yield
    pullback = sys.modules.get("pullback")
    if pullback is not None and pullback.in_dynamic_mode() != dynamic:
        (pullback.disable_static if dynamic else pullback.enable_static)()


@pytest.fixture(autouse=True, scope="session")
def _private_compile_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The compiled backend's disk cache goes to a temporary folder of this session
    (never the user's `~/.cache/pullback`); subprocesses inherit the variable."""
    old = os.environ.get("PULLBACK_CACHE_DIR")
    os.environ["PULLBACK_CACHE_DIR"] = str(tmp_path_factory.mktemp("pullback-cache"))
    yield
    if old is None:
        os.environ.pop("PULLBACK_CACHE_DIR", None)
    else:
        os.environ["PULLBACK_CACHE_DIR"] = old


def pytest_make_parametrize_id(config: Any, val: object, argname: str) -> str | None:
    """Stable test ids for callables (a lambda's default id holds its address, which
    differs between pytest-xdist workers and breaks parallel collection)."""
    if callable(val) and hasattr(val, "__name__"):
        name = getattr(val, "name", None)  # pd op classes: their op name
        return name if isinstance(name, str) else val.__name__
    return None
