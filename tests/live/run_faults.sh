#!/usr/bin/env bash
# The fault suite (docs/faults.md): our ULP (verbs_backend/ulp/ulp_resilient), rping and rdma_server/rdma_client
# recorded on rxe and siw in the live VM while a fault is injected inside the guest (netem loss, delay, reordering,
# duplication on the wire; a link down and up; the address removed; the RDMA device removed; a process SIGKILLed at
# a chosen call; a CQ sized too small), every run drawn from a seed (tests/live/fault_plan.py) and checked with
# `qpcheck conform` against its program's spec with the fault's parameters turned on. Required: each run CONFORMS, or
# is a PREFIX (a killed program), or (rping) VIOLATES at its rdma_destroy_id as every rping run does; anything else
# is a failure of the suite, listed with its event.
#
#   tests/live/run_faults.sh [--runs N] [--seed S] [--only IDS] [--keep DIR] [--recheck DIR]
#     --runs N      runs per device (default 40, what .ci/run runs; QPCHECK_FAULT_LONG=1 makes it 300)
#     --seed S      the plan's seed (default 1): the same seed, the same runs
#     --only IDS    only these runs of the plan (comma-separated run numbers, e.g. 25,26,27): a run found failing in a
#                   long run is reproduced alone, with the runs before it that may have left state behind
#     --keep DIR    keep the plan, the console, every run's logs and reports, verify.json and summary.json there
#     --recheck DIR no VM: check again what an earlier --keep DIR holds (after a change to a spec or the library)
# Before the runs are checked, the ULP's spec is verified under each fault configuration they used (every property
# must hold; a search that runs out of its time limit, 60 s or QPCHECK_FAULT_LONG=1's 3600 s, is reported
# INCONCLUSIVE).
#
# Exit: 0 every run as required; 1 a run is not, a program crashed, or the VM failed; 77 SKIP (the VM cannot be built
# here), with the reason. Environment: QPCHECK_VM_CACHE as for run_live.sh; QPCHECK_VM_TIMEOUT (s, default 90 + 30
# per run).
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
skip() { echo "faults: SKIP: $*"; echo "faults: wall time $(elapsed) s"; exit 77; }
die() { echo "faults: FAIL: $*"; echo "faults: wall time $(elapsed) s"; exit 1; }
# shellcheck source=tests/live/vm_lib.sh
source tests/live/vm_lib.sh

runs=40 seed=1 keep="" recheck="" only="" verify_limit=60
[ "${QPCHECK_FAULT_LONG:-0}" = 1 ] && runs=300 verify_limit=3600
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --recheck) recheck=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "faults: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[0-9]+$ ]] && ((runs >= 1 && runs <= 10000)) || { echo "faults: --runs $runs: expected 1..10000" >&2; exit 2; }
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "faults: --seed $seed: expected a number" >&2; exit 2; }
[[ -z "$only" || "$only" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "faults: --only $only: expected run numbers, e.g. 25,26,27" >&2; exit 2; }
if [ -n "$recheck" ]; then
  [ -f "$recheck/console" ] || { echo "faults: --recheck $recheck: no console there (written by --keep)" >&2; exit 2; }
  bazel build //checker/cli:qpcheck >/dev/null 2>&1 || die "bazel build //checker/cli:qpcheck failed"
  python3 tests/live/fault_check.py --qpcheck "$repo/bazel-bin/checker/cli/qpcheck" --dir "$recheck" \
    --verify-limit "$verify_limit"
  prc=$?
  echo "faults: wall time $(elapsed) s"
  [ "$prc" = 0 ] && { echo "faults: PASS"; exit 0; }
  echo "faults: FAIL: a check is not as required (above)"; exit 1
fi

vm_packages iproute2
vm_kernel
targets=(//checker/cli:qpcheck //verbs_backend/recorder:libqpcheck_recorder.so //verbs_backend/ulp:ulp_resilient)
bazel build "${targets[@]}" >/dev/null 2>&1 || die "bazel build ${targets[*]} failed"
qp="$repo/bazel-bin/checker/cli/qpcheck"
work=$(mktemp -d "${TMPDIR:-/tmp}/qpcheck-faults.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=${keep:-$work/out}
mkdir -p "$out/logs" || die "cannot write $out"
python3 tests/live/fault_plan.py --runs "$runs" --seed "$seed" >"$out/plan" || die "fault_plan.py failed"
if [ -n "$only" ]; then
  awk -v ids=",$only," '$1 == "RUN" && index(ids, "," $2 ",")' "$out/plan" >"$out/plan.only"
  mv "$out/plan.only" "$out/plan"
fi
total=$(grep -c '^RUN ' "$out/plan")
[ "$total" -gt 0 ] || { echo "faults: --only $only: no such run in the plan of --runs $runs --seed $seed" >&2; exit 2; }

VM_EXTRA_MODULES=(drivers/net/veth net/sched/sch_netem)
vm_root "$work"
vm_add "$repo/bazel-bin/verbs_backend/recorder/libqpcheck_recorder.so" /lib/libqpcheck_recorder.so
vm_add "$repo/bazel-bin/verbs_backend/ulp/ulp_resilient" /bin/ulp_resilient
# iproute2's ip and tc (busybox's have no veth, rules or netem), where the payload calls them by path
vm_add "$(command -v ip)" /usr/local/sbin/ip
vm_add "$(command -v tc)" /usr/local/sbin/tc
for pkg in rdmacm-utils; do
  deb=$(ls "$VM_CACHE"/debs/${pkg}_*.deb 2>/dev/null | head -n 1)
  if [ -z "$deb" ]; then
    (cd "$VM_CACHE/debs" && apt-get download -qq "$pkg" >/dev/null 2>&1)
    deb=$(ls "$VM_CACHE"/debs/${pkg}_*.deb 2>/dev/null | head -n 1)
  fi
  [ -n "$deb" ] || skip "$pkg could not be fetched (no network to the Debian registry?)"
  mkdir -p "$work/utils" && dpkg-deb -x "$deb" "$work/utils"
done
for b in rping rdma_server rdma_client; do vm_add "$work/utils/usr/bin/$b" "/bin/$b"; done
cp tests/live/fault_net.sh "$vm_root/fault_net.sh"
cp "$out/plan" "$vm_root/plan"
cp tests/live/faults_payload.sh "$vm_root/payload"
echo "faults: $total runs ($runs per device, seed $seed) in the VM"
vm_boot "${QPCHECK_VM_TIMEOUT:-$((90 + 30 * total))}" "$work/vm"
qrc=$?
cp "$work/vm.out" "$out/console" 2>/dev/null
cp "$work/vm.console" "$out/kernel.console" 2>/dev/null
grep -q "QPCHECK-VM done" "$work/vm.out" ||
  { tail -n 30 "$work/vm.console" "$work/vm.out"; die "the VM did not finish (qemu exit $qrc)"; }
awk -v dir="$out/logs" '$1=="QPCHECK-LOG-BEGIN" {f=dir "/" $2 ".jsonl"; printf "" > f; on=1; next}
                        $1=="QPCHECK-LOG-END" {on=0; close(f); next}
                        on {print > f}' "$work/vm.out"

# The ULP's spec under each fault configuration, then each run through conform (tests/live/fault_check.py).
python3 tests/live/fault_check.py --qpcheck "$qp" --dir "$out" --verify-limit "$verify_limit"
prc=$?
echo "faults: wall time $(elapsed) s"
[ "$prc" = 0 ] || { echo "faults: FAIL: a check is not as required (above)"; exit 1; }
echo "faults: PASS"
