#!/usr/bin/env bash
# tests/live/fault_check.py's verdicts on a recorded run, without the VM: seed 1 stress run 123, rdma_server /
# rdma_client on siw with no fault, where the server hung with the client's request unread in its socket (the siw
# accept backlog, docs/faults.md). As recorded (the server's TCP socket held 40 bytes: one MPA FPDU) the run is
# allowed: its logs conform to spec/16 with mpa_accept_backlog=UNTIL_NEXT_FRAME and the timed-out server's exit. The
# same run without that evidence (rx_queue 0) is a no-fault run that did not end by itself: a failure. And with the
# request still in the network (a hang on rxe) it is a failure too.
set -uo pipefail
qp=$PWD/checker/cli/qpcheck
fail() { echo "FAIL: $*"; exit 1; }
run_case() {  # NAME SED-EXPRESSION EXPECTED-EXIT EXPECTED-TEXT
  local d=$TEST_TMPDIR/$1
  mkdir -p "$d/logs"
  sed "$2" tests/live/testdata/accept_backlog.console >"$d/console"
  for s in server client; do
    cp "tests/conform/logs/fault_none_accept_backlog.siw.$s.jsonl" "$d/logs/1.$s.jsonl"
  done
  out=$(python3 tests/live/fault_check.py --qpcheck "$qp" --dir "$d" --threads 1 2>&1)
  rc=$?
  echo "--- $1 (exit $rc)"; echo "$out"
  [ "$rc" = "$3" ] || fail "$1: exit $rc, expected $3"
  grep -qF -- "$4" <<<"$out" || fail "$1: no '$4' in the output"
  grep -q '"backlog": ' "$d/summary.json" || fail "$1: summary.json has no backlog field"
}
run_case recorded 's/x//' 0 "siw    rdma_sc  none       CONFORMS/BACKLOG 1"
run_case no_unread_bytes 's/00000000:00000028$/00000000:00000000/' 1 \
  "a run without a fault did not connect or did not end by itself"
run_case on_rxe 's/^QPCHECK-FAULT-RUN 1 siw /QPCHECK-FAULT-RUN 1 rxe /' 1 \
  "a run without a fault did not connect or did not end by itself"
echo PASS
