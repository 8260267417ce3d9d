#!/usr/bin/env bash
# Sourced by bench/compare.sh and bench/liveness_compare.sh: install_tools TAG COMMAND... installs, with apt, the
# Debian package of each COMMAND that is not on PATH (each of them is also its package's name: spin, rumur, gcc),
# as root or through sudo, and says so under TAG.
install_tools() {
  local tag=$1 need=() c sudo_=""
  shift
  for c in "$@"; do command -v "$c" >/dev/null || need+=("$c"); done
  [ ${#need[@]} -gt 0 ] || return 0
  echo "$tag: installing ${need[*]} (apt)"
  [ "$(id -u)" = 0 ] || sudo_=sudo
  $sudo_ apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}" >/dev/null
}
