#!/usr/bin/env bash
# One command for the side-by-side benchmark (see bench/README.md):
#   bash bench/compare.sh [--phil N] [--rdma NxM] [--threads T] [--only phil|rdma_cm] [--no-peers]
# Installs SPIN and Rumur from Debian packages if missing, builds qpcheck, then runs bench/compare.py.
set -euo pipefail
repo=${BUILD_WORKSPACE_DIRECTORY:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo"
need=()
command -v spin >/dev/null || need+=(spin)
command -v rumur >/dev/null || need+=(rumur)
command -v gcc >/dev/null || need+=(gcc)
if [ ${#need[@]} -gt 0 ]; then
  echo "bench: installing ${need[*]} (apt)"
  sudo_=""; [ "$(id -u)" = 0 ] || sudo_=sudo
  $sudo_ apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]; then bazel build //checker/cli:qpcheck 2>/dev/null; fi
exec python3 bench/compare.py --qpcheck "$repo/bazel-bin/checker/cli/qpcheck" --repo "$repo" "$@"
