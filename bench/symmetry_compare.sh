#!/usr/bin/env bash
# Symmetry reduction, measured (see bench/README.md):
#   bash bench/symmetry_compare.sh [--rdma 3,4,5] [--srq 2,3,4] [--repeat K] [--unreduced-max N] [--peers-max N] [--no-peers]
# Installs Rumur from Debian packages if missing, builds qpcheck, then runs bench/symmetry_compare.py.
set -euo pipefail
repo=${BUILD_WORKSPACE_DIRECTORY:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo"
# shellcheck source=bench/install_tools.sh
source bench/install_tools.sh
install_tools bench rumur gcc
if [ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]; then bazel build //checker/cli:qpcheck 2>/dev/null; fi
exec python3 bench/symmetry_compare.py --qpcheck "$repo/bazel-bin/checker/cli/qpcheck" --repo "$repo" "$@"
