#!/usr/bin/env bash
# One command for the side-by-side benchmark (see bench/README.md):
#   bash bench/compare.sh [--phil N] [--rdma NxM] [--threads T] [--only phil|rdma_cm] [--no-peers]
# Installs SPIN and Rumur from Debian packages if missing, builds qpcheck, then runs bench/compare.py.
set -euo pipefail
repo=${BUILD_WORKSPACE_DIRECTORY:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo"
# shellcheck source=bench/install_tools.sh
source bench/install_tools.sh
install_tools bench spin rumur gcc
if [ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]; then bazel build //checker/cli:qpcheck 2>/dev/null; fi
exec python3 bench/compare.py --qpcheck "$repo/bazel-bin/checker/cli/qpcheck" --repo "$repo" "$@"
