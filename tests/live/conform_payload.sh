#!/bin/sh
# /payload of the live conformance job (tests/live/run_conform.sh): runs each build of verbs_backend/ulp on each
# device, server and client as two processes with the LD_PRELOAD recorder, and prints each call log between
# QPCHECK-LOG-BEGIN NAME / QPCHECK-LOG-END NAME lines; ends with "QPCHECK-VM done".
so=/lib/libqpcheck_recorder.so
mkdir -p /tmp/logs
port=7471  # a port of its own per run (siw refused a connection to a port its previous run had just closed)
for dev in rxe0:10.11.0.1 siw0:10.12.0.1; do
  name=${dev%%:*}; addr=${dev#*:}
  for build in ulp_recv_before_connect ulp_recv_after_established; do
    run=$build.$name
    port=$((port + 1))
    echo "QPCHECK-RUN $run port $port"
    rm -f /tmp/server.out /tmp/client.out  # the wait below must not see the previous run's "listening"
    LD_PRELOAD=$so QPCHECK_RECORD=/tmp/logs/$run.server.jsonl timeout 30 /bin/$build -s "$addr" $port >/tmp/server.out 2>&1 &
    spid=$!
    # the client starts once the server listens
    i=0
    while ! grep -q "listening" /tmp/server.out 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    LD_PRELOAD=$so QPCHECK_RECORD=/tmp/logs/$run.client.jsonl timeout 30 /bin/$build -c "$addr" $port >/tmp/client.out 2>&1
    crc=$?
    wait $spid
    src=$?
    echo "QPCHECK-RESULT $run client=$crc server=$src"
    sed 's/^/  client: /' /tmp/client.out
    sed 's/^/  server: /' /tmp/server.out
    for side in server client; do
      echo "QPCHECK-LOG-BEGIN $run.$side"
      cat /tmp/logs/$run.$side.jsonl 2>/dev/null
      echo "QPCHECK-LOG-END $run.$side"
    done
  done
done
# rdma-core's examples (rdmacm-utils), when the job put them in: recorded on both devices, checked against spec/15_rping
# and spec/16_rdma_server_client by run_conform.sh
record_pair() {  # NAME SERVER-COMMAND... -- CLIENT-COMMAND...
  run=$1; shift
  scmd=""; while [ "$1" != "--" ]; do scmd="$scmd $1"; shift; done; shift
  rm -f /tmp/logs/$run.*.jsonl
  echo "QPCHECK-RUN $run"
  LD_PRELOAD=$so QPCHECK_RECORD=/tmp/logs/$run.server.jsonl timeout 30 $scmd >/tmp/server.out 2>&1 &
  spid=$!
  sleep 1
  LD_PRELOAD=$so QPCHECK_RECORD=/tmp/logs/$run.client.jsonl timeout 30 "$@" >/tmp/client.out 2>&1
  crc=$?
  wait $spid
  echo "QPCHECK-EXAMPLE $run client=$crc server=$?" | tee -a /tmp/examples.out
  sed 's/^/  client: /' /tmp/client.out | head -n 5
  sed 's/^/  server: /' /tmp/server.out | head -n 5
  for side in server client; do
    echo "QPCHECK-LOG-BEGIN $run.$side"
    cat /tmp/logs/$run.$side.jsonl 2>/dev/null
    echo "QPCHECK-LOG-END $run.$side"
  done
}
if [ -x /bin/rping ]; then
  port=7600
  for dev in rxe0:10.11.0.1 siw0:10.12.0.1; do
    name=${dev%%:*}; addr=${dev#*:}
    port=$((port + 1))
    # Up to three attempts each: under TCG the client (started 1 s after the server) can reach the port before the
    # server listens (seen: rping -c exit 255 on rxe0 once in a CI run); each attempt gets a new port, and
    # run_conform.sh reads the last attempt's logs and requires one attempt with both exit codes 0.
    for attempt in 1 2 3; do
      port=$((port + 1))
      record_pair rping.$name /bin/rping -s -a $addr -p $port -C 1 -- /bin/rping -c -a $addr -p $port -C 1
      grep -q "^QPCHECK-EXAMPLE rping.$name client=0 server=0" /tmp/examples.out && break
    done
    for attempt in 1 2 3; do
      port=$((port + 1))
      record_pair rdma_server_client.$name /bin/rdma_server -s $addr -p $port -- /bin/rdma_client -s $addr -p $port
      grep -q "^QPCHECK-EXAMPLE rdma_server_client.$name client=0 server=0" /tmp/examples.out && break
    done
  done
fi
# ibv_rc_pingpong (plain verbs, RoCE: a GID index is needed; rxe0's IPv4 GID is the first that works)
if [ -x /bin/ibv_rc_pingpong ]; then
  for g in 1 0 2 3; do
    record_pair rc_pingpong.rxe0 /bin/ibv_rc_pingpong -d rxe0 -g $g -r 1 -n 1 -p $((18515 + g)) -- \
      /bin/ibv_rc_pingpong -d rxe0 -g $g -r 1 -n 1 -p $((18515 + g)) 10.11.0.1
    grep -q "^QPCHECK-EXAMPLE rc_pingpong.rxe0 client=0 server=0" /tmp/examples.out && break
  done
fi
echo "QPCHECK-VM done"
