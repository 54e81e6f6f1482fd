"""Entry point of the ranks `paddle.distributed.spawn` starts:
`python -m mpi4py -m pullback.distributed.spawn_worker PAYLOAD` (a module of its
own, so that running it does not re-execute a module the package imports)."""

from __future__ import annotations

import sys

from pullback.distributed.spawn import run_payload

if __name__ == "__main__":
    run_payload(sys.argv[1])
