"""The `pd` dialect: Paddle's operators as tensor-level xDSL ops.

One dialect, defined across a few modules by op family (as xDSL's `linalg` is):
`program` (feeds, parameters, fetch, constants, initializers, the backward region),
`control` (`pd.if`, `pd.while` and the stacks their gradients use), `elementwise`,
`reduction`, `loss`, `shape`, `nn`, `optimizer`, `creation`, `indexing`, `linalg`
(LAPACK decompositions and solves), `distributed` (collectives between ranks) and
`rnn` (the fused recurrent layers).
"""

from xdsl.ir import Dialect

from .base import *  # noqa: F403
from .distributed import *  # noqa: F403
from .distributed import DISTRIBUTED_OPS
from .creation import *  # noqa: F403
from .creation import CREATION_OPS
from .control import *  # noqa: F403
from .control import CONTROL_OPS
from .elementwise import *  # noqa: F403
from .elementwise import ELEMENTWISE_OPS
from .indexing import *  # noqa: F403
from .indexing import INDEXING_OPS
from .linalg import *  # noqa: F403
from .linalg import LINALG_OPS
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
from .rnn import *  # noqa: F403
from .rnn import RNN_OPS
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
    *CREATION_OPS,
    *INDEXING_OPS,
    *LINALG_OPS,
    *CONTROL_OPS,
    *RNN_OPS,
]

PD = Dialect("pd", ALL_OPS, [])
"""The `pd` dialect object, as registered with xDSL contexts."""
