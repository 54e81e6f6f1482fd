#!/usr/bin/env bash
# The GPU check of issue 31 in two commands (docs/gpu.md, "Running the GPU check").
#
#   bash tools/gpu_check.sh prepare   # on a machine with PyPI: the wheels the GPU
#                                     # machine lacks (xDSL, llvmlite 0.50) -> .whl/
#   bash tools/gpu_check.sh run       # on the GPU machine, nothing fetched: about 8 min
#
# `run` installs .whl/*.whl into /tmp/pullback-site, makes this checkout importable as
# `pullback`, says which driver and which cuBLAS it finds (the GPU machine's
# nvidia-cublas wheel, or PULLBACK_LIBCUBLAS) and whether the driver has CUDA graphs,
# runs the graph tests first (stream capture of replayed steps, cuBLAS products
# inside the graph, asynchronous feed uploads through page-locked staging: a real
# capture and the MLP trained with graphs on, off and interpreted), then the other
# GPU tests, then `bench_gpu` (MLP with graphs on and off, copy bandwidth,
# elementwise chain with graphs on and off, ResNet-18; torch CUDA as the peer) and
# prints the figures.  Logs and bench_gpu.json go to $OUT (the device
# tool's folder) or ./gpu-check-out.  Each stage has its own time limit, so a hang
# in one still leaves the others' output.  Without a GPU every stage says why it
# skipped and the script exits 0.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PYTHON:-python3}
MODE=${1:-run}

# Versions the GPU machine must run: the ones pyproject.toml pins (xDSL) and the
# llvmlite the NVPTX facts were checked with (docs/gpu.md), and xDSL's own needs.
WHEELS=(xdsl==0.74.0 immutabledict==4.2.1 ordered-set==4.1.0 llvmlite==0.50.0)

case "$MODE" in
prepare)
  # .whl/ ignores itself (no shared git metadata touched, worktrees included): the
  # device tool then sends it only when `carry` names it.
  mkdir -p "$ROOT/.whl"
  printf '*\n' >"$ROOT/.whl/.gitignore"
  # The GPU machine runs CPython 3.12 on x86-64 (.library/device/KINDS.md).
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$ROOT/.whl" "${WHEELS[@]}" || exit 1
  # llvmlite's wheel (60 MB, zip) would take the device tool's 64 MiB transfer alone:
  # repacked with xz -1 it is 48 MB (a minute; -6 gives 37 MB in several).
  for whl in "$ROOT"/.whl/llvmlite-*.whl; do
    [ -e "$whl" ] || continue
    tmp=$(mktemp -d)
    "$PY" -m zipfile -e "$whl" "$tmp" || exit 1
    tar -C "$tmp" -cf - . | xz -1 -T2 >"$ROOT/.whl/llvmlite.tar.xz" || exit 1
    rm -rf "$tmp" "$whl"
  done
  du -sh "$ROOT/.whl"
  # What travels: the tracked and untracked-not-ignored files, and the carried .whl.
  total=$( (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | xargs -0 cat 2>/dev/null | wc -c) )
  total=$((total + $(cat "$ROOT"/.whl/* | wc -c)))
  echo "transfer: $((total / 1048576)) MiB of the device tool's 64"
  [ "$total" -lt $((64 * 1048576)) ] || { echo "too large to carry" >&2; exit 1; }
  echo "prepared: run 'bash tools/gpu_check.sh run' on the GPU machine, carrying .whl"
  exit 0
  ;;
run) ;;
*)
  echo "usage: $0 prepare|run" >&2
  exit 2
  ;;
esac

OUTDIR=${OUT:-$ROOT/gpu-check-out}
mkdir -p "$OUTDIR"
SITE=/tmp/pullback-site
PKG=/tmp/pullback-pkg
mkdir -p "$PKG"
ln -sfn "$ROOT" "$PKG/pullback"
if ls "$ROOT"/.whl/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
    "$ROOT"/.whl/*.whl || exit 1
fi
if [ -e "$ROOT/.whl/llvmlite.tar.xz" ]; then
  "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="tar")' \
    "$ROOT/.whl/llvmlite.tar.xz" "$SITE" || exit 1
fi
export PYTHONPATH="$PKG:$SITE${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
cd "$ROOT" || exit 1

echo "== environment"
command -v nvidia-smi >/dev/null && nvidia-smi -L
"$PY" - <<'EOF'
import llvmlite, numpy, xdsl.dialects  # noqa: F401
import importlib.metadata as md
import pullback
from pullback.runtime.gpu import cublas, cuda
print("pullback", pullback.__file__)
print("python", __import__("sys").version.split()[0], "| llvmlite", md.version("llvmlite"),
      "| xdsl", md.version("xdsl"), "| numpy", numpy.__version__)
print("CUDA driver:", cuda.unavailable_reason(0) or f"ok, version {cuda.driver_version()}")
print("cuBLAS:", cublas.unavailable_reason() or cublas.library_path())
print("CUDA graphs + async uploads:", "supported" if cuda.graphs_supported() else "not supported by this driver")
EOF

echo "== GPU graph tests (capture, staged asynchronous uploads)"
timeout 60 "$PY" -m pytest tests/unit/runtime/gpu/test_gpu_graph.py -p no:cacheprovider -q -rs -W error::RuntimeWarning \
  2>&1 | tee "$OUTDIR/gpu_graph_tests.log" | tail -20
graph_rc=${PIPESTATUS[0]}

echo "== GPU tests"
timeout 170 "$PY" -m pytest tests/unit/runtime/gpu tests/unit/lowering/gpu -p no:cacheprovider -q -rs \
  --ignore tests/unit/runtime/gpu/test_gpu_graph.py --durations=5 2>&1 | tee "$OUTDIR/gpu_tests.log" | tail -40
tests_rc=${PIPESTATUS[0]}

echo "== GPU benchmark"
timeout 320 "$PY" -m pullback.benchmarks.bench_gpu --json "$OUTDIR/bench_gpu.json" 2>&1 | tee "$OUTDIR/bench_gpu.log"
bench_rc=${PIPESTATUS[0]}

echo "== done: graph tests rc=$graph_rc, tests rc=$tests_rc, bench rc=$bench_rc; logs in $OUTDIR"
for rc in "$graph_rc" "$tests_rc"; do
  [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ] && exit "$rc"
done
exit "$bench_rc"
