#!/usr/bin/env bash
# Liveness verdicts of qpcheck and SPIN side by side on bench/liveness/ (issue 19; bench/liveness/README.md):
#   bash bench/liveness_compare.sh [--only rnr_livelock|toggle|phil_starvation] [--phil N,...] [--repeat K]
# Installs SPIN and gcc from Debian packages if missing, builds qpcheck (incremental; set QPCHECK=PATH
# to use another binary), then runs bench/liveness_compare.py. Exit 1: a disagreement; 2: both tools
# agree on a verdict other than the expected one.
set -euo pipefail
repo=${BUILD_WORKSPACE_DIRECTORY:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo"
# shellcheck source=bench/install_tools.sh
source bench/install_tools.sh
install_tools liveness spin gcc
qpcheck=${QPCHECK:-$repo/bazel-bin/checker/cli/qpcheck}
if [ -z "${QPCHECK:-}" ] && [ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]; then
  bazel build //checker/cli:qpcheck 2>/dev/null
fi
exec python3 bench/liveness_compare.py --qpcheck "$qpcheck" --repo "$repo" "$@"
