#!/usr/bin/env bash
# The live conformance job (docs/conform.md): boots the live VM (tests/live/vm_lib.sh: rxe0 and siw0), runs our ULP
# (verbs_backend/ulp) in both builds on both devices with the LD_PRELOAD call recorder, brings the call logs back and
# checks each run with `qpcheck conform`: each build against the spec of its own ordering (required: CONFORMS) and
# against the other ordering's spec (required: DEVIATES, at the event printed); and rdma-core's examples from
# rdmacm-utils on both devices: rdma_server/rdma_client against spec/16 (CONFORMS), rping against spec/15 (VIOLATES, at
# the server's rdma_destroy_id: rping destroys the cm_id before its QP, which rdma_destroy_id.3 forbids).
#
# Exit: 0 every verdict as required; 1 a verdict differs, a program failed, or the VM failed; 77 SKIP (the VM cannot
# be built here), with the reason. Environment: QPCHECK_VM_CACHE, QPCHECK_VM_TIMEOUT (s, default 600) as for
# run_live.sh; QPCHECK_CONFORM_LOGS=DIR keeps the recorded logs there.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
skip() { echo "conform-live: SKIP: $*"; echo "conform-live: wall time $(elapsed) s"; exit 77; }
die() { echo "conform-live: FAIL: $*"; echo "conform-live: wall time $(elapsed) s"; exit 1; }
# shellcheck source=tests/live/vm_lib.sh
source tests/live/vm_lib.sh

VM_TIMEOUT=${QPCHECK_VM_TIMEOUT:-600}
vm_packages
vm_kernel
targets=(//checker/cli:qpcheck //verbs_backend/recorder:libqpcheck_recorder.so
         //verbs_backend/ulp:ulp_recv_before_connect //verbs_backend/ulp:ulp_recv_after_established)
bazel build "${targets[@]}" >/dev/null 2>&1 || die "bazel build ${targets[*]} failed"
qp="$repo/bazel-bin/checker/cli/qpcheck"
work=$(mktemp -d "${TMPDIR:-/tmp}/qpcheck-conform.XXXXXX")
trap 'rm -rf "$work"' EXIT
vm_root "$work"
vm_add "$repo/bazel-bin/verbs_backend/recorder/libqpcheck_recorder.so" /lib/libqpcheck_recorder.so
for b in ulp_recv_before_connect ulp_recv_after_established; do vm_add "$repo/bazel-bin/verbs_backend/ulp/$b" "/bin/$b"; done
# rdma-core's own examples (Debian rdmacm-utils, fetched once into the VM cache): rping and rdma_server/rdma_client,
# recorded on both devices and checked against spec/15_rping and spec/16_rdma_server_client.
utils=""
for pkg in rdmacm-utils ibverbs-utils; do
  deb=$(ls "$VM_CACHE"/debs/${pkg}_*.deb 2>/dev/null | head -n 1)
  if [ -z "$deb" ]; then
    (cd "$VM_CACHE/debs" && apt-get download -qq "$pkg" >/dev/null 2>&1)
    deb=$(ls "$VM_CACHE"/debs/${pkg}_*.deb 2>/dev/null | head -n 1)
  fi
  [ -n "$deb" ] || { echo "conform-live: $pkg could not be fetched: rdma-core's examples are not recorded"; utils=""; break; }
  mkdir -p "$work/utils" && dpkg-deb -x "$deb" "$work/utils"
  utils=$work/utils
done
if [ -n "$utils" ]; then
  for b in rping rdma_server rdma_client ibv_rc_pingpong; do vm_add "$work/utils/usr/bin/$b" "/bin/$b"; done
fi
cp tests/live/conform_payload.sh "$vm_root/payload"
vm_boot "$VM_TIMEOUT" "$work/vm"
qrc=$?
console="$work/vm.out"
grep -q "QPCHECK-VM done" "$console" || { tail -n 30 "$work/vm.console" "$console"; die "the VM did not finish (qemu exit $qrc)"; }
logs=${QPCHECK_CONFORM_LOGS:-$work/logs}
mkdir -p "$logs"
awk -v dir="$logs" '$1=="QPCHECK-LOG-BEGIN" {f=dir "/" $2 ".jsonl"; printf "" > f; on=1; next}
                    $1=="QPCHECK-LOG-END" {on=0; close(f); next}
                    on {print > f}' "$console"
grep -E "^QPCHECK-(RESULT|EXAMPLE)|^  (client|server): ulp:" "$console"

bad=0
# check RUN SPEC REQUIRED PARAM...: one row; REQUIRED is the verdict and decides the exit code (docs/cli.md).
check() {
  local run=$1 spec=$2 required=$3; shift 3
  local code
  case $required in CONFORMS) code=20 ;; DEVIATES) code=21 ;; VIOLATES) code=23 ;; *) code=x ;; esac
  "$qp" conform "spec/$spec.qpspec" "$logs/$run.server.jsonl" "$logs/$run.client.jsonl" "$@" \
    --format json >"$work/report.json" 2>"$work/err"
  local rc=$?
  local verdict at obs mark=""
  verdict=$(jq -r .verdict "$work/report.json" 2>/dev/null)
  at=$(jq -r 'if .observed then "event \(.event): \(.observed.source | split("/") | last) \(.observed.call)" else "" end' \
       "$work/report.json" 2>/dev/null)
  { [ "$verdict" = "$required" ] && [ "$rc" = "$code" ]; } ||
    { mark="  <-- FAIL (exit $rc: $(head -c 300 "$work/err"))"; bad=1; }
  obs=$(jq -r '.stats.observations' "$work/report.json" 2>/dev/null)
  printf '%-40s %-40s %-10s %-10s %s (%s observations)%s\n' "$run" "$spec" "$required" "${verdict:-none}" "$at" \
    "$obs" "$mark"
  # A row not as required: its text report and both logs' records (prefixed "conform-live: detail", which the CI
  # summary shows), so that a run seen once is evidence even where the logs are not kept.
  if [ -n "$mark" ]; then
    { "$qp" conform "spec/$spec.qpspec" "$logs/$run.server.jsonl" "$logs/$run.client.jsonl" "$@" 2>&1 | head -n 40
      for side in server client; do
        echo "$run.$side.jsonl:"
        cut -c1-220 "$logs/$run.$side.jsonl" | tail -n 14
      done; } | sed 's/^/conform-live: detail | /'
  fi
}
printf '%-40s %-40s %-10s %-10s %s\n' run spec required verdict "at"
for dev in rxe0 siw0; do
  # siw: its transport, and its two socket-upcall races (lib/mpa.qpspec mpa_accept_backlog, lib/cm.qpspec
  # iw_peer_close), as the fault suite checks every siw run
  params=()
  [ "$dev" = siw0 ] &&
    params=(--param transport=IWARP --param mpa_accept_backlog=UNTIL_NEXT_FRAME --param iw_peer_close=RACES_DATA)
  for build in ulp_recv_before_connect ulp_recv_after_established; do
    run=$build.$dev
    grep -q "^QPCHECK-RESULT $run client=0 server=0" "$console" || { echo "conform-live: $run: the program failed"; bad=1; }
    for spec in 13_ulp_recv_before_connect 14_ulp_recv_after_established; do
      required=DEVIATES; [ "${spec#*_}" = "$build" ] && required=CONFORMS
      check "$run" "$spec" "$required" "${params[@]}"
    done
  done
  # rdma-core's examples: rdma_server/rdma_client conform to their spec; rping's server destroys its cm_id before
  # the QP (rdma_destroy_id.3 forbids it): VIOLATES at that rdma_destroy_id (spec/15_rping.qpspec).
  if [ -n "$utils" ]; then
    for row in rping:15_rping:VIOLATES rdma_server_client:16_rdma_server_client:CONFORMS; do
      IFS=: read -r ex spec required <<<"$row"
      run=$ex.$dev
      grep -q "^QPCHECK-EXAMPLE $run client=0 server=0" "$console" || { echo "conform-live: $run: the program failed"; bad=1; }
      check "$run" "$spec" "$required" "${params[@]}"
    done
    # ibv_rc_pingpong: plain verbs (no cm_id: --map names each log's QP); IB only (no iWARP mode, spec/17)
    if [ "$dev" = rxe0 ]; then
      run=rc_pingpong.$dev
      grep -q "^QPCHECK-EXAMPLE $run client=0 server=0" "$console" || { echo "conform-live: $run: the program failed"; bad=1; }
      check "$run" 17_rc_pingpong CONFORMS --map "$run.server.jsonl=PASSIVE" --map "$run.client.jsonl=ACTIVE"
    fi
  fi
done
for f in "$logs"/*.jsonl; do echo "  $(basename "$f"): $(($(wc -l <"$f") - 2)) records"; done
echo "conform-live: wall time $(elapsed) s"
[ "$bad" = 0 ] || { echo "conform-live: FAIL: a verdict differs from the required one"; exit 1; }
echo "conform-live: PASS"
