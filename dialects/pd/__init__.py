"""The `pd` dialect: Paddle's operators as tensor-level xDSL ops.

One dialect, defined across a few modules by op family (as xDSL's `linalg` is):
`program` (feeds, parameters, fetch, constants, initializers, the backward region),
`control` (`pd.if`, `pd.while` and the stacks their gradients use), `elementwise`,
`reduction`, `loss`, `shape`, `nn`, `optimizer`, `creation`, `indexing`, `linalg`
(LAPACK decompositions and solves), `distributed` (collectives between ranks),
`rnn` (the fused recurrent layers), `geometric` (graph message passing), `vision`
(detection ops, `paddle.vision.ops`), `complex` (parts, conjugate, argument of complex
tensors) and `fft` (`paddle.fft`'s three kernels).
"""

import importlib
from types import ModuleType

from xdsl.ir import Dialect, Operation

from .base import *  # noqa: F403
from .dtypes import *  # noqa: F403
from .distributed import *  # noqa: F403
from .creation import *  # noqa: F403
from .control import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .geometric import *  # noqa: F403
from .indexing import *  # noqa: F403
from .linalg import *  # noqa: F403
from .loss import *  # noqa: F403
from .nn import *  # noqa: F403
from .optimizer import *  # noqa: F403
from .program import *  # noqa: F403
from .reduction import *  # noqa: F403
from .rnn import *  # noqa: F403
from .shape import *  # noqa: F403
from .vision import *  # noqa: F403
from .complex import *  # noqa: F403
from .fft import *  # noqa: F403

FAMILIES: tuple[str, ...] = (
    "program", "elementwise", "reduction", "loss", "shape", "nn", "optimizer", "creation",
    "indexing", "linalg", "control", "distributed", "rnn", "geometric", "vision", "complex", "fft",
)
"""The op families, the one list of them: each is `dialects/pd/<family>.py` (defining
`<FAMILY>_OPS`), and each layer keeps its rules for a family in a module of the same
name (`runtime/kernels/`, `passes/vjp/`, `lowering/`), which `family_modules` loads."""


def family_modules(package: str) -> tuple[ModuleType, ...]:
    """Import `<package>.<family>` for every op family that has such a module (their
    registrations run on import), in `FAMILIES` order.  A family without a module in
    `package` is skipped; a module that fails to import raises."""
    found = []
    for fam in FAMILIES:
        try:
            found.append(importlib.import_module(f"{package}.{fam}"))
        except ModuleNotFoundError as e:
            if e.name != f"{package}.{fam}":
                raise
    return tuple(found)

ALL_OPS: list[type[Operation]] = [
    op for fam, mod in zip(FAMILIES, family_modules(__name__), strict=True) for op in getattr(mod, f"{fam.upper()}_OPS")
]
"""Every `pd` op, family by family."""

PD = Dialect("pd", ALL_OPS, [])
"""The `pd` dialect object, as registered with xDSL contexts."""
