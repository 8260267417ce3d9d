#!/usr/bin/env bash
# The live replay job: boots the live VM (tests/live/vm_lib.sh: Linux 6.1.0-57 under qemu TCG, rxe0 and siw0, siw
# with a writable peer_to_peer parameter) with qpcheck and the traces listed in tests/live/traces.txt; the VM replays
# each trace on its device (tests/live/replay_payload.sh) and prints the results; this script parses them and fails
# when a device's verdict differs from the one the list requires.
#
# Exit: 0 every verdict as required; 1 a verdict differs or the VM failed; 77 SKIP (the VM cannot be built here:
# no root, no qemu and no network to the Debian registry): the reason is printed, never a silent pass.
# Environment: QPCHECK_VM_CACHE (default /var/cache/qpcheck-vm) keeps the downloaded .debs, the kernel, the modules
# and siw.ko between runs; QPCHECK_VM_TIMEOUT (s, default 1200) bounds the VM; QPCHECK_TIMEOUT_MS each replay wait;
# QPCHECK_LIVE_LIST another trace list; QPCHECK_LIVE_LONG=1 also runs the rows marked `long` (real CM timeouts of
# tens of seconds; .ci/run does not set it); QPCHECK_LIVE_ONLY=REGEX runs only the rows whose name matches;
# QPCHECK_LIVE_LOG=FILE keeps the guest's output.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
skip() { echo "live: SKIP: $*"; echo "live: wall time $(elapsed) s"; exit 77; }
die() { echo "live: FAIL: $*"; echo "live: wall time $(elapsed) s"; exit 1; }
# shellcheck source=tests/live/vm_lib.sh
source tests/live/vm_lib.sh

VM_TIMEOUT=${QPCHECK_VM_TIMEOUT:-1200}
vm_packages
vm_kernel
echo "live: kernel ready after $(elapsed) s"

# qpcheck and the traces (tests/live/traces.txt).
bazel build //checker/cli:qpcheck >/dev/null 2>&1 || die "bazel build //checker/cli:qpcheck failed"
qp="$repo/bazel-bin/checker/cli/qpcheck"
work=$(mktemp -d "${TMPDIR:-/tmp}/qpcheck-live.XXXXXX")
trap 'rm -rf "$work"' EXIT
vm_root "$work"
mkdir -p "$vm_root/traces"
: >"$vm_root/traces/list"
declare -A expect device
names=()
while read -r name spec params dev setup exp edit; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  if [[ ",$setup," == *,long,* ]]; then
    [ "${QPCHECK_LIVE_LONG:-0}" = 1 ] || continue
    setup=$(sed -E 's/(^|,)long(,|$)/\1/; s/,$//; s/^$/-/' <<<"$setup")
  fi
  [[ -z "${QPCHECK_LIVE_ONLY:-}" || "$name" =~ $QPCHECK_LIVE_ONLY ]] || continue
  if [[ "$spec" == walk:* ]]; then
    # walk:N:SPEC: N schedules drawn from SPEC (qpcheck walk, random walks with seed 1..N), rows NAME-1 ... NAME-k
    IFS=: read -r _ count wspec <<<"$spec"
    args=()
    if [ "$params" != "-" ]; then IFS=, read -ra ps <<<"$params"; for p in "${ps[@]}"; do args+=(--param "$p"); done; fi
    file="spec/$wspec.qpspec"
    [[ "$wspec" != */* ]] || file="tests/live/$wspec.qpspec"
    rm -rf "$work/walk-$name"
    "$qp" walk "$file" "${args[@]}" --count "$count" --out "$work/walk-$name" >/dev/null 2>"$work/err" ||
      die "qpcheck walk $file ${args[*]} failed: $(head -n 3 "$work/err")"
    for w in "$work/walk-$name"/walk-*.json; do
      k=$(basename "$w" .json); k=${k#walk-}; k=$((10#$k))
      cp "$w" "$vm_root/traces/$name-$k.json"
      echo "$name-$k $dev $setup $exp" >>"$vm_root/traces/list"
      expect[$name-$k]=$exp; device[$name-$k]=$dev; names+=("$name-$k")
    done
    continue
  fi
  if [[ "$spec" == trace:* ]]; then
    # a hand-written trace file (tests/live/traces/), replayed as it is
    cp "tests/live/${spec#trace:}" "$work/$name.json" || die "no trace file tests/live/${spec#trace:}"
  else
    args=()
    if [ "$params" != "-" ]; then IFS=, read -ra ps <<<"$params"; for p in "${ps[@]}"; do args+=(--param "$p"); done; fi
    # a shipped spec (spec/NAME), a replay probe of tests/live/specs (specs/NAME) or a corpus model (corpus/NAME)
    file="spec/$spec.qpspec"
    [[ "$spec" != */* ]] || file="tests/live/$spec.qpspec"
    [[ "$spec" != corpus/* ]] || file="tests/$spec.qpspec"
    "$qp" verify "$file" "${args[@]}" --witness --trace-out "$work/$name.json" >/dev/null 2>"$work/err"
    rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 1 ] || die "qpcheck verify $file ${args[*]} exited $rc: $(head -n 3 "$work/err")"
  fi
  if [ "$edit" != "-" ]; then
    jq -f "tests/live/$edit" "$work/$name.json" >"$vm_root/traces/$name.json" || die "jq -f tests/live/$edit failed"
  else
    cp "$work/$name.json" "$vm_root/traces/$name.json"
  fi
  echo "$name $dev $setup $exp" >>"$vm_root/traces/list"
  expect[$name]=$exp; device[$name]=$dev; names+=("$name")
done < "${QPCHECK_LIVE_LIST:-tests/live/traces.txt}"
((${#names[@]})) || die "no trace selected"
# qpcheck hands each replay over to qpcheck-full beside it (checker/cli/backends.h): both go in, as installed.
vm_add "$qp" /bin/qpcheck
vm_add "$qp-full" /bin/qpcheck-full
strip "$vm_root/bin/qpcheck" "$vm_root/bin/qpcheck-full" 2>/dev/null
{
  echo "export QPCHECK_TIMEOUT_MS=${QPCHECK_TIMEOUT_MS:-10000} QPCHECK_ATTEMPTS=${QPCHECK_ATTEMPTS:-3}"
  cat tests/live/replay_payload.sh
} >"$vm_root/payload"
echo "live: ${#names[@]} traces, after $(elapsed) s"

# Boot, replay, power off.
vm_start=$(date +%s)
vm_boot "$VM_TIMEOUT" "$work/vm"
qrc=$?
vm_secs=$(( $(date +%s) - vm_start ))
console="$work/vm.out"
if [ -n "${QPCHECK_LIVE_LOG:-}" ]; then cat "$console" "$work/vm.console" >"$QPCHECK_LIVE_LOG"; fi
if ! grep -q "QPCHECK-VM done" "$console"; then
  tail -n 40 "$work/vm.console" "$console"
  running=$(awk '$1=="QPCHECK-BEGIN" {n=$2 " on " $3 " (" $4 ")"} $1=="QPCHECK-END" {n=""} END {print n}' "$console")
  panic=$(grep -m1 -oE "(BUG: .*|Kernel panic - .*)" "$work/vm.console" 2>/dev/null)
  die "the VM did not finish (qemu exit $qrc after $vm_secs s)${running:+; it was replaying $running}${panic:+; the guest kernel: $panic}"
fi
grep -E "^QPCHECK-(VM|HANG|WEDGED)" "$console"

# Verdicts: the device's beside the required one, with what it did at the deciding step.
verdict_of() { case "$1" in 10) echo REPRODUCED;; 11) echo NOT_REPRODUCED;; 12) echo DIVERGED;; 6) echo ENVIRONMENT;;
                 wedged) echo WEDGED;; *) echo "EXIT_$1";; esac; }
bad=0
printf '%-24s %-6s %-24s %-15s %-3s %s\n' trace device required device-did try "deciding step (model | device)"
for name in "${names[@]}"; do
  # the last attempt decides; earlier ones are listed under it
  last=$(grep -c "^QPCHECK-END $name " "$console")
  block=$(awk -v n="$name" -v k="attempt=$last" '$1=="QPCHECK-BEGIN" && $2==n && $4==k {on=1; next}
                                                 $1=="QPCHECK-END" && $2==n && $5==k {print; on=0} on' "$console")
  rc=$(grep -o 'QPCHECK-END .* rc=[^ ]*' <<<"$block" | sed 's/.*rc=//')
  got=$(verdict_of "${rc:-none}")
  decide=$(grep -E '^(REPRODUCED|NOT REPRODUCED|DIVERGED) at step' <<<"$block" | head -n 1)
  [ -n "$decide" ] || decide=$(grep -E '^(REPRODUCED|NOT REPRODUCED|DIVERGED):' <<<"$block" | head -n 1)
  mark=""
  step=$(sed -n 's/^[A-Z ]* at step \([0-9]*\).*/\1/p' <<<"$decide")
  case "|${expect[$name]}|" in *"|$got|"*|*"|$got@$step|"*) ;; *) mark="  <-- FAIL"; bad=1;; esac
  ! grep -q "^QPCHECK-HANG" <<<"$block" || mark="$mark  (the replay process hung after its verdict and was killed)"
  printf '%-24s %-6s %-24s %-15s %-3s %s%s\n' "$name" "${device[$name]}" "${expect[$name]}" "$got" "$last" "$decide" "$mark"
  if [ "$last" -gt 1 ]; then
    awk -v n="$name" -v k="attempt=$last" '$1=="QPCHECK-BEGIN" && $2==n && $4!=k {on=1} on && /^(DIVERGED|NOT REPRODUCED|REPRODUCED)/ {print "      earlier " $4 ": " $0; on=0}' "$console"
  fi
done
for env in unknown_device no_permission; do
  line=$(grep "QPCHECK-ENV $env" "$console")
  echo "$line"
  grep -q "rc=6 " <<<"$line" || { echo "live: $env should exit 6 (environment)"; bad=1; }
done
echo "live: full output: set QPCHECK_LIVE_LOG=FILE to keep it; replay reports:"
awk '/^QPCHECK-BEGIN/{on=1} on && !/^QPCHECK-ALIVE/{print "  " $0} /^QPCHECK-END/{on=0}' "$console"
echo "live: VM boot+replay+poweroff $vm_secs s; wall time $(elapsed) s"
[ "$bad" = 0 ] || { echo "live: FAIL: a device verdict differs from tests/live/traces.txt"; exit 1; }
echo "live: PASS"
