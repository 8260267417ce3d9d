#!/usr/bin/env bash
# Runs commands in the live VM (the one tests/live/run_live.sh replays in: Linux 6.1.0-57 under qemu TCG, rxe0 on
# dummy0 10.11.0.1, siw0 on dummy1 10.12.0.1, siw with a writable peer_to_peer parameter) and prints their output.
#
#   tests/live/vm.sh [options] SCRIPT        SCRIPT: a busybox sh script run as root in the guest
#   tests/live/vm.sh [options] -c 'COMMANDS'
#
#   --put SRC[:DEST]  copy a file into the guest (DEST default /bin/BASENAME); an ELF binary brings its libraries.
#                     Repeatable. A probe in C: gcc -o probe probe.c -libverbs -lrdmacm (libibverbs-dev,
#                     librdmacm-dev), then --put probe
#   --module PATH     load a module of the pinned kernel beyond the RDMA stack (a path under kernel/, without .ko,
#                     e.g. drivers/net/veth); repeatable. The fault suite's network: --module drivers/net/veth
#                     --module net/sched/sch_netem --put tests/live/fault_net.sh:/fault_net.sh
#   --qpcheck         build //checker/cli:qpcheck and put it at /bin/qpcheck (and qpcheck-full beside it)
#   --tools           install ibverbs-utils and rdmacm-utils and put ibv_devinfo, ibv_rc_pingpong, ibv_srq_pingpong,
#                     rping, ucmatose, rdma_server, rdma_client into /bin
#   --timeout S       bound the VM's run (default 600 s)
#   --console FILE    keep the kernel console (dmesg as it scrolled) in FILE
#
# Inside the guest: /proc, /sys, /dev, debugfs (/sys/kernel/debug; `echo 'module siw +p' >
# /sys/kernel/debug/dynamic_debug/control` turns on siw's debug messages, `dmesg` shows them), /tmp.
# `echo 1 > /sys/module/siw/parameters/peer_to_peer` makes new siw connections request RFC 6581 peer-to-peer mode.
# Exit: the script's exit status; 125 the VM did not finish (the console's tail is printed on stderr); 77 SKIP (no
# root, no qemu, no network to the Debian registry). The first run downloads ~210 MB and builds siw.ko (~2 min);
# later runs boot in ~5 s (cache: QPCHECK_VM_CACHE, default /var/cache/qpcheck-vm).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
skip() { echo "vm: SKIP: $*" >&2; exit 77; }
die() { echo "vm: FAIL: $*" >&2; exit 125; }
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
# shellcheck source=tests/live/vm_lib.sh
source "$here/vm_lib.sh"

puts=() qpcheck=0 tools=0 secs=600 console="" script="" command=""
VM_EXTRA_MODULES=()
while (($#)); do
  case $1 in
    --put) puts+=("$2"); shift 2 ;;
    --module) VM_EXTRA_MODULES+=("$2"); shift 2 ;;
    --qpcheck) qpcheck=1; shift ;;
    --tools) tools=1; shift ;;
    --timeout) secs=$2; shift 2 ;;
    --console) console=$2; shift 2 ;;
    -c) command=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "vm: unknown option $1" >&2; usage ;;
    *) script=$1; shift ;;
  esac
done
[ -n "$script" ] || [ -n "$command" ] || usage
[ -z "$script" ] || [ -f "$script" ] || { echo "vm: no script $script" >&2; exit 2; }

extra=()
((tools)) && extra=(ibverbs-utils rdmacm-utils)
vm_packages "${extra[@]}" >&2
vm_kernel >&2
work=$(mktemp -d "${TMPDIR:-/tmp}/qpcheck-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
vm_root "$work"
if ((qpcheck)); then
  (cd "$repo" && bazel build //checker/cli:qpcheck >"$work/bazel.log" 2>&1) ||
    die "bazel build //checker/cli:qpcheck failed: $(tail -n 5 "$work/bazel.log")"
  vm_add "$repo/bazel-bin/checker/cli/qpcheck" /bin/qpcheck
  vm_add "$repo/bazel-bin/checker/cli/qpcheck-full" /bin/qpcheck-full  # replay runs in it (checker/cli/backends.h)
fi
if ((tools)); then
  for t in ibv_devinfo ibv_rc_pingpong ibv_srq_pingpong rping ucmatose rdma_server rdma_client; do
    p=$(command -v "$t") && vm_add "$p" "/bin/$t"
  done
fi
for p in "${puts[@]}"; do
  src=${p%%:*}; dest=${p#*:}
  [ "$dest" != "$p" ] || dest=/bin/$(basename "$src")
  vm_add "$src" "$dest"
done
if [ -n "$script" ]; then cp "$script" "$vm_root/payload"; else printf '%s\n' "$command" >"$vm_root/payload"; fi
QPCHECK_VM_STALL=${QPCHECK_VM_STALL:-$secs} vm_boot "$secs" "$work/vm"
qrc=$?
[ -z "$console" ] || cp "$work/vm.console" "$console"
rc=$(sed -n 's/^QPCHECK-PAYLOAD rc=\([0-9]*\).*/\1/p' "$work/vm.out" | tail -n 1)
grep -v '^QPCHECK-PAYLOAD rc=' "$work/vm.out"
if [ -z "$rc" ]; then
  tail -n 30 "$work/vm.console" >&2
  die "the VM did not finish (qemu exit $qrc; timeout $secs s)"
fi
exit "$rc"
