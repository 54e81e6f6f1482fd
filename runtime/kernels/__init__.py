"""numpy kernels of the reference interpreter, one module per op family."""

import importlib

FAMILIES = [
    "program", "elementwise", "reduction", "loss", "shape", "nn", "optimizer", "creation",
    "indexing", "linalg", "control", "distributed", "rnn",
]


def load_all() -> None:
    """Import every family module so that their `@kernel` registrations run."""
    for fam in FAMILIES:
        try:
            importlib.import_module(f"pullback.runtime.kernels.{fam}")
        except ModuleNotFoundError as e:
            # A family without rules yet is fine; a broken import inside one is not.
            if e.name != f"pullback.runtime.kernels.{fam}":
                raise
