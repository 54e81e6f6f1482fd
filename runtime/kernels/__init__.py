"""numpy kernels of the reference interpreter, one module per op family."""

from pullback.dialects.pd import FAMILIES, family_modules


def load_all() -> None:
    """Import every family module so that their `@kernel` registrations run."""
    family_modules(__name__)


__all__ = ["FAMILIES", "load_all"]
