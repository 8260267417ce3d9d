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
# rdma-core's examples (rdmacm-utils), when the job put them in: recorded on rxe0, not checked yet
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
  echo "QPCHECK-EXAMPLE $run client=$crc server=$?"
  sed 's/^/  client: /' /tmp/client.out | head -n 5
  sed 's/^/  server: /' /tmp/server.out | head -n 5
  for side in server client; do
    echo "QPCHECK-LOG-BEGIN $run.$side"
    cat /tmp/logs/$run.$side.jsonl 2>/dev/null
    echo "QPCHECK-LOG-END $run.$side"
  done
}
if [ -x /bin/rping ]; then
  record_pair rping.rxe0 /bin/rping -s -a 10.11.0.1 -p 7600 -C 1 -- /bin/rping -c -a 10.11.0.1 -p 7600 -C 1
  record_pair rdma_server_client.rxe0 /bin/rdma_server -s 10.11.0.1 -p 7601 -- /bin/rdma_client -s 10.11.0.1 -p 7601
fi
echo "QPCHECK-VM done"
