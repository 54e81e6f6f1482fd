"""`python -m pullback.lowering.gpu`: `pullback-opt` with the GPU passes and the `ptx`
target registered, for use until the main driver lists them (the lit tests of
`tests/filecheck/lowering/gpu` run through it).  Same arguments as `pullback-opt`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pullback.lowering.gpu import GPU_PASSES, GPU_TARGETS
from pullback.tools.pullback_opt import PullbackOptMain, _describe_setup_error, run_guarded


class GpuOptMain(PullbackOptMain):
    """`PullbackOptMain` plus `GPU_PASSES` and `GPU_TARGETS`."""

    def register_all_passes(self) -> None:
        """pullback-opt's passes, then the GPU ones (existing names win)."""
        super().register_all_passes()
        for name, factory in GPU_PASSES.items():
            self.available_passes.setdefault(name, factory)

    def register_all_targets(self) -> None:
        """xDSL's targets plus `ptx`."""
        super().register_all_targets()
        for name, factory in GPU_TARGETS.items():
            self.available_targets.setdefault(name, factory)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point (see the module docstring)."""
    driver: GpuOptMain | None = None

    def setup() -> None:
        nonlocal driver
        driver = GpuOptMain(args=argv)

    run_guarded(setup, _describe_setup_error)
    assert driver is not None
    run_guarded(driver.run, driver.describe)


if __name__ == "__main__":
    main()
