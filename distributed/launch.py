"""`python -m pullback.distributed.launch`: start the ranks of a data-parallel job
with Paddle's launcher interface, through MPI's `mpiexec`.

    python -m pullback.distributed.launch --nproc_per_node 4 train.py --lr 0.1
    python -m pullback.distributed.launch --nproc_per_node 4 --ips host1,host2 train.py

With `--ips`, `--nproc_per_node` ranks start on each host (MPICH's `-hosts`;
`--hostfile FILE` passes an MPICH host file instead).  Each rank runs the script
under `python -m mpi4py`, so an exception that ends one rank aborts the whole job:
the other ranks stop with the failing rank's traceback on stderr instead of waiting
forever.  The exit status is the job's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence

from pullback.runtime.communicator import INSTALL_HINT, TIMEOUT_ENV


class LaunchError(RuntimeError):
    """The job cannot be started (MPI missing, bad arguments)."""


def find_mpiexec() -> str:
    """The `mpiexec` next to this Python (the mpich wheel's), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(here, os.X_OK):
        return here
    found = shutil.which("mpiexec")
    if found is None:
        raise LaunchError(f"mpiexec not found. {INSTALL_HINT}")
    return found


def check_mpi4py() -> None:
    """Raise LaunchError with the install hint when mpi4py is missing."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        raise LaunchError(INSTALL_HINT) from None


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Paddle's launcher options, then the script and its own arguments."""
    p = argparse.ArgumentParser(
        prog="python -m pullback.distributed.launch",
        description="Start a data-parallel job: N ranks per host through mpiexec.",
    )
    p.add_argument("--nproc_per_node", "--nnodes_per_proc", type=int, default=None,
                   help="ranks per host (default: 1)")
    p.add_argument("--ips", default=None, help="comma-separated hosts (default: this one)")
    p.add_argument("--hostfile", default=None, help="an MPICH host file (instead of --ips)")
    p.add_argument("--timeout", type=float, default=None,
                   help=f"seconds a collective may wait before the job is aborted ({TIMEOUT_ENV})")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: the mpich wheel's)")
    p.add_argument("--dry_run", action="store_true", help="print the command instead of running it")
    p.add_argument("training_script", help="the script every rank runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p.parse_args(list(argv))


def build_command(args: argparse.Namespace, mpiexec: str) -> list[str]:
    """The mpiexec command line starting every rank."""
    per_node = 1 if args.nproc_per_node is None else args.nproc_per_node
    if per_node < 1:
        raise LaunchError(f"--nproc_per_node must be >= 1, got {per_node}")
    hosts = [h for h in (args.ips or "").split(",") if h]
    if args.hostfile and hosts:
        raise LaunchError("give --ips or --hostfile, not both")
    cmd = [mpiexec]
    if args.hostfile:
        cmd += ["-f", args.hostfile, "-ppn", str(per_node)]
        total = None
    elif len(hosts) > 1:
        cmd += ["-hosts", ",".join(hosts), "-ppn", str(per_node)]
        total = per_node * len(hosts)
    else:
        total = per_node
    if total is not None:
        cmd += ["-n", str(total)]
    if args.timeout:
        cmd += ["-genv", TIMEOUT_ENV, str(args.timeout)]
    cmd += [sys.executable, "-m", "mpi4py", args.training_script, *args.training_script_args]
    return cmd


def main(argv: Sequence[str] | None = None) -> int:
    """Run the launcher; returns the job's exit status (2 when it cannot start)."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        check_mpi4py()
        cmd = build_command(args, args.mpiexec or find_mpiexec())
    except LaunchError as e:
        print(f"pullback.distributed.launch: error: {e}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    return subprocess.call(cmd)


from pullback.namespaces import adopt_real  # noqa: E402 - names of Paddle's module it lacks

adopt_real(__name__)

if __name__ == "__main__":
    sys.exit(main())
