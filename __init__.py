"""pullback: a reverse-mode automatic-differentiation compiler for Paddle-style
programs, built on xDSL.

`import pullback as paddle` gives Paddle's API (`paddle.static`, `paddle.fluid`,
`paddle.nn.functional`, `paddle.optimizer`, ...).  Those namespaces load on first
use (see `pullback.namespaces`), so importing the package, as the `pullback-opt`
tool and xDSL's plugin discovery do, stays cheap.
"""

from pullback.namespaces import install as _install

__version__ = "0.1.0"

_install(__name__)
