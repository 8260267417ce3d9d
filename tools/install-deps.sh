#!/usr/bin/env bash
# Installs the Debian 12 packages qpcheck needs to build and test. Idempotent; needs root (or sudo).
set -euo pipefail
# libxml2-utils (xmllint), python3-jsonschema and chromium: gate_test validates the JUnit/SARIF reports against their
# schemas and renders the message sequence chart in headless Chromium; groff-base: app_test renders the man page.
pkgs=(bazel-bootstrap bazel-rules-java g++ libcli11-dev doctest-dev libibverbs-dev librdmacm-dev
      nlohmann-json3-dev libfmt-dev libz3-dev libopenmpi-dev openmpi-bin libxml2-utils python3 python3-jsonschema chromium groff-base)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
