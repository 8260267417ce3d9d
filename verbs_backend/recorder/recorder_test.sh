#!/usr/bin/env bash
# The recorder loaded into a real process (probe.cc): the program prints the same with and without it, and the log
# has the header, one record per recorded call with its errno, and a trailer that counts them (docs/record-log.md).
set -euo pipefail
so=$(realpath verbs_backend/recorder/libqpcheck_recorder.so)
probe=verbs_backend/recorder/probe
tmp=${TEST_TMPDIR:-$(mktemp -d)}
"$probe" >"$tmp/plain.out" 2>&1
LD_PRELOAD=$so QPCHECK_RECORD="$tmp/run.%p.jsonl" "$probe" >"$tmp/rec.out" 2>"$tmp/rec.err"
diff -u "$tmp/plain.out" "$tmp/rec.out" || { echo "FAIL: the recorder changed the program's results"; exit 1; }
logs=("$tmp"/run.*.jsonl)
[ "${#logs[@]}" = 1 ] && [ -f "${logs[0]}" ] || { echo "FAIL: expected one log, got: ${logs[*]}"; exit 1; }
log=${logs[0]}
cat "$log"
python3 - "$log" "$tmp/plain.out" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
recs = [json.loads(l) for l in lines]
head, body, tail = recs[0], recs[1:-1], recs[-1]
assert head["qpcheck_record"] == 1 and head["clock"] == "CLOCK_MONOTONIC" and head["argv"][0].endswith("probe"), head
assert tail == {"end": True, "records": len(body), "lost": 0, "empty_polls": 0}, tail
assert [r["seq"] for r in body] == list(range(1, len(body) + 1))
calls = [r["call"] for r in body]
out = open(sys.argv[2]).read()
ret, err = map(int, re.search(r"rdma_create_id: (-?\d+) errno=(\d+)", out).groups())
ch = re.search(r"rdma_create_event_channel: (\w+) errno=(\d+)", out).groups()
assert calls[0] == "rdma_create_event_channel" and (body[0]["channel"] is None) == (ch[0] == "NULL"), body[0]
assert body[0].get("errno", 0) == int(ch[1]), body[0]
c = [r for r in body if r["call"] == "rdma_create_id" and "inside" not in r]
assert c[0]["ret"] == ret and c[0].get("errno", 0) == err and c[0]["ps"] == "RDMA_PS_TCP", c
ret2, err2 = map(int, re.search(r"rdma_create_id\(UDP\): (-?\d+) errno=(\d+)", out).groups())
u = [r for r in body if r["call"] == "rdma_create_id" and r["ps"] == "RDMA_PS_UDP" and "inside" not in r]
assert len(u) == 1 and u[0]["ret"] == ret2 and u[0].get("errno", 0) == err2, u
if ret2:
    assert u[0]["errno"] > 0 and u[0]["id"] is None, u
for r in body:
    assert isinstance(r["t"], int) and isinstance(r["tid"], int), r
    # only librdmacm's own probe in rdma_create_event_channel is nested
    assert r.get("inside", "rdma_create_event_channel") == "rdma_create_event_channel", r
print("recorder_test: %d records, as the program saw them" % len(body))
PY
# a log that cannot be opened: said on stderr, the program's results unchanged
LD_PRELOAD=$so QPCHECK_RECORD=/nonexistent/dir/x.jsonl "$probe" >"$tmp/bad.out" 2>"$tmp/bad.err"
diff -u "$tmp/plain.out" "$tmp/bad.out" || { echo "FAIL: a failed log changed the program's results"; exit 1; }
grep -q "qpcheck recorder: cannot open the call log '/nonexistent/dir/x.jsonl'" "$tmp/bad.err" ||
  { echo "FAIL: no message for the log that cannot be opened"; cat "$tmp/bad.err"; exit 1; }
[ "$(grep -c 'cannot open' "$tmp/bad.err")" = 1 ] || { echo "FAIL: the message is repeated"; exit 1; }
echo PASS
