"""The `pd` dialect: Paddle's operators as tensor-level xDSL ops.

One dialect, defined across a few modules by op family (as xDSL's `linalg` is):
`program` (feeds, parameters, fetch, constants, initializers, the backward region),
`elementwise`, `reduction`, `loss`, `shape`, `nn`, `optimizer` and `distributed`
(collectives between ranks).
"""

from xdsl.ir import Dialect

from .base import *  # noqa: F403
from .distributed import *  # noqa: F403
from .distributed import DISTRIBUTED_OPS
from .elementwise import *  # noqa: F403
from .elementwise import ELEMENTWISE_OPS
from .loss import *  # noqa: F403
from .loss import LOSS_OPS
from .nn import *  # noqa: F403
from .nn import NN_OPS
from .optimizer import *  # noqa: F403
from .optimizer import OPTIMIZER_OPS
from .program import *  # noqa: F403
from .program import PROGRAM_OPS
from .reduction import *  # noqa: F403
from .reduction import REDUCTION_OPS
from .shape import *  # noqa: F403
from .shape import SHAPE_OPS

ALL_OPS = [
    *PROGRAM_OPS,
    *ELEMENTWISE_OPS,
    *REDUCTION_OPS,
    *LOSS_OPS,
    *SHAPE_OPS,
    *NN_OPS,
    *OPTIMIZER_OPS,
    *DISTRIBUTED_OPS,
]

PD = Dialect("pd", ALL_OPS, [])
"""The `pd` dialect object, as registered with xDSL contexts."""
