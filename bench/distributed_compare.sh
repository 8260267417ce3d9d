#!/usr/bin/env bash
# The distributed search beside the threaded one (see bench/README.md):
#   bash bench/distributed_compare.sh [--np 1,2,4] [--rdma NxM] [--repeat K]
# Builds qpcheck, then runs bench/distributed_compare.py (mpirun from Debian's openmpi-bin: tools/install-deps.sh).
set -euo pipefail
repo=${BUILD_WORKSPACE_DIRECTORY:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo"
if [ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]; then bazel build //checker/cli:qpcheck 2>/dev/null; fi
exec python3 bench/distributed_compare.py --qpcheck "$repo/bazel-bin/checker/cli/qpcheck" --repo "$repo" "$@"
