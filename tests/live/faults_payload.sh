#!/bin/sh
# /payload of the fault suite (tests/live/run_faults.sh, docs/faults.md): sets up the two-wire network
# (tests/live/fault_net.sh), then runs every line of /plan (tests/live/fault_plan.py): a program's server and client
# under the LD_PRELOAD recorder, on one device pair, with one fault injected. For each run it prints
#   QPCHECK-FAULT-RUN <the plan line>
#   QPCHECK-FAULT-EVENT <ms since the client started> <what was done>     (each injection and undo)
#   QPCHECK-FAULT-RESULT ID client=RC server=RC
#   the programs' output, indented, and each call log between QPCHECK-LOG-BEGIN ID.SIDE / QPCHECK-LOG-END ID.SIDE
#   QPCHECK-FAULT-KERNEL ID <line>                                        (a kernel BUG/WARNING the run caused)
#   QPCHECK-FAULT-DIAG ID DEV: COUNTER=N ...  (a program the 30 s timeout ended: what the IB CM of each of the run's
#                                        devices sent and received during the run, so that a hang can be told apart
#                                        from a lost CM message afterwards)
# and ends with "QPCHECK-VM done".
. /fault_net.sh
so=/lib/libqpcheck_recorder.so
net_setup
echo "QPCHECK-FAULT-NET $(rdma link | tr '\n' ';')"
now_ms() { awk '{printf "%d", $1 * 1000}' /proc/uptime; }
dmesg_lines=$(dmesg | wc -l)

# cm_counts DEVICE... : the IB CM's per-port MAD counters (/sys/class/infiniband/DEV/ports/1/cm_{tx,rx}_*/*: REQ,
# REP, RTU, REJ, DREQ, DREP, ... sent, resent, received, received twice), one "DEV GROUP/NAME VALUE" line each.
cm_counts() {
  for d in "$@"; do
    for f in /sys/class/infiniband/$d/ports/1/cm_*/*; do
      [ -f "$f" ] && echo "$d ${f#/sys/class/infiniband/$d/ports/1/} $(cat "$f" 2>/dev/null)"
    done
  done
}
# cm_diag ID DEVICE... : what the CM sent and received during the run (the counters now minus those at its start,
# /tmp/f.cm0), the non-zero ones, one line per device.
cm_diag() {
  id=$1; shift
  cm_counts "$@" | awk -v id="$id" 'NR == FNR {base[$1 " " $2] = $3; next}
    {d = $3 - base[$1 " " $2]; if (d != 0) line[$1] = line[$1] " " $2 "=" d; devs[$1] = 1}
    END {for (k in devs) print "QPCHECK-FAULT-DIAG " id " " k ":" (line[k] == "" ? " none" : line[k])}' /tmp/f.cm0 -
  # the wire under it: the devices' packet counters, the veths' link counters, the neighbours and routes between the
  # two addresses (a CM message can be lost below the CM: a wrong MAC, no route)
  for d in "$@"; do
    for i in 0 1 2 3 4 5 6 7; do
      g=$(cat /sys/class/infiniband/$d/ports/1/gids/$i 2>/dev/null)
      case $g in ""|0000:0000:0000:0000:0000:0000:0000:0000) continue ;; esac
      echo "QPCHECK-FAULT-DIAG $id $d gid $i $g $(cat /sys/class/infiniband/$d/ports/1/gid_attrs/ndevs/$i 2>/dev/null)"
    done
    echo "QPCHECK-FAULT-DIAG $id $d state $(cat /sys/class/infiniband/$d/ports/1/state 2>/dev/null)"
    for f in /sys/class/infiniband/$d/ports/1/hw_counters/*; do
      v=$(cat "$f" 2>/dev/null); [ -n "$v" ] && [ "$v" != 0 ] && echo "QPCHECK-FAULT-DIAG $id $d ${f##*/}=$v"
    done
  done
  [ -f /tmp/f.tcp ] && sed "s/^/QPCHECK-FAULT-DIAG $id /" /tmp/f.tcp
  $IP -s link show 2>&1 | sed "s/^/QPCHECK-FAULT-DIAG $id link: /"
  $IP neigh show 2>&1 | sed "s/^/QPCHECK-FAULT-DIAG $id neigh: /"
  for a in "$saddr $caddr" "$caddr $saddr"; do
    set -- $a
    echo "QPCHECK-FAULT-DIAG $id route from $1 to $2: $($IP route get "$2" from "$1" 2>&1 | head -n 1)"
  done
}

# tcp_watch PID PORT : if PID still runs 27 s after it started (3 s before the 30 s timeout ends it), the TCP sockets
# of the run's port into /tmp/f.tcp, once (iWARP runs over TCP); it returns as soon as PID ends. rx_queue > 0 on a connected socket whose program
# waits for a completion means the data arrived and the provider never read it (a lost data_ready), tx_queue > 0
# that it was never acknowledged.
tcp_watch() {
  i=0
  while kill -0 "$1" 2>/dev/null && [ $i -lt 108 ]; do sleep 0.25; i=$((i + 1)); done
  kill -0 "$1" 2>/dev/null || return 0
  awk -v port="$(printf '%04X' "$2")" 'FNR > 1 && (index($2, ":" port) || index($3, ":" port)) {
      print "tcp: local " $2 " remote " $3 " st " $4 " tx_queue:rx_queue " $5}' /proc/net/tcp /proc/net/tcp6 \
    >/tmp/f.tcp 2>/dev/null
}

# run_one ID DEVICE PROGRAM FAULT SIDE AT_MS DURATION_MS ARG PORT GAP_MS
run_one() {
  id=$1 dev=$2 prog=$3 fault=$4 side=$5 at=$6 dur=$7 arg=$8 port=$9
  shift 9
  gap=$1
  if [ "$dev" = rxe ]; then
    saddr=10.11.0.2 caddr=10.11.0.1 snet=vethA1 cnet=vethA0 sdev=rxe1 cdev=rxe0
  else
    saddr=10.12.0.2 caddr=10.12.0.1 snet=vethB1 cnet=vethB0 sdev=siw1 cdev=siw0
  fi
  if [ "$side" = server ]; then vnet=$snet vdev=$sdev vaddr=$saddr; else vnet=$cnet vdev=$cdev vaddr=$caddr; fi
  kind=rxe
  [ "$dev" = siw ] && kind=siw
  rm -f /tmp/f.server.jsonl /tmp/f.client.jsonl /tmp/f.server.out /tmp/f.client.out /tmp/f.events /tmp/f.tcp
  cm_counts "$sdev" "$cdev" >/tmp/f.cm0
  case $fault in
    loss) netem="loss ${arg}%" ;;
    delay) netem="delay ${arg}ms $((arg / 4 + 1))ms" ;;
    reorder) netem="delay 10ms reorder ${arg}% 50%" ;;
    duplicate) netem="duplicate ${arg}%" ;;
    *) netem="" ;;
  esac
  if [ -n "$netem" ]; then
    $TC qdisc add dev $snet root netem $netem
    $TC qdisc add dev $cnet root netem $netem
    echo "0 netem $netem on $snet and $cnet" >>/tmp/f.events
  fi
  skill="" ckill=""
  if [ "$fault" = kill ]; then
    if [ "$side" = server ]; then skill=$arg; else ckill=$arg; fi
    echo "0 QPCHECK_RECORD_KILL_AT=$arg for the $side" >>/tmp/f.events
  fi
  cqe=8
  [ "$fault" = smallcq ] && cqe=$arg
  case $prog in
    ulp)
      scmd="/bin/ulp_resilient -s $saddr $port --wait-ms 2500"
      ccmd="/bin/ulp_resilient -c $saddr $port --src $caddr --wait-ms 2500 --gap-ms $gap --cqe $cqe" ;;
    rping)
      scmd="/bin/rping -s -a $saddr -p $port -C 1"
      ccmd="/bin/rping -c -a $saddr -I $caddr -p $port -C 1" ;;
    rdma_sc)
      scmd="/bin/rdma_server -s $saddr -p $port"
      ccmd="/bin/rdma_client -s $saddr -p $port" ;;
  esac
  QPCHECK_RECORD_KILL_AT=$skill LD_PRELOAD=$so QPCHECK_RECORD=/tmp/f.server.jsonl timeout 30 $scmd >/tmp/f.server.out 2>&1 &
  spid=$!
  tcp_watch $spid "$port" &
  wpid=$!
  # the client starts once the server listens or has died (ulp says when it listens; rping and rdma_server say
  # nothing: a second)
  i=0
  if [ "$prog" = ulp ]; then
    while ! grep -q "listening" /tmp/f.server.out 2>/dev/null && kill -0 $spid 2>/dev/null && [ $i -lt 50 ]; do
      sleep 0.1; i=$((i + 1))
    done
  else
    sleep 1
  fi
  t0=$(now_ms)
  (
    ev() { echo "$(( $(now_ms) - t0 )) $*" >>/tmp/f.events; }
    case $fault in
      linkdown)
        sleep "$(awk "BEGIN{print $at/1000}")"; $IP link set $vnet down; ev "link $vnet down"
        sleep "$(awk "BEGIN{print $dur/1000}")"; $IP link set $vnet up; ev "link $vnet up" ;;
      addrdel)
        sleep "$(awk "BEGIN{print $at/1000}")"; $IP addr del $vaddr/32 dev $vnet; ev "address $vaddr removed from $vnet"
        sleep "$(awk "BEGIN{print $dur/1000}")"; $IP addr add $vaddr/32 dev $vnet; ev "address $vaddr back on $vnet" ;;
      devremove)
        sleep "$(awk "BEGIN{print $at/1000}")"; ev "rdma link delete $vdev"
        rdma link delete $vdev; ev "rdma link delete $vdev returned $?" ;;
    esac
  ) &
  fpid=$!
  QPCHECK_RECORD_KILL_AT=$ckill LD_PRELOAD=$so QPCHECK_RECORD=/tmp/f.client.jsonl timeout 30 $ccmd >/tmp/f.client.out 2>&1
  crc=$?
  wait $spid
  src=$?
  wait $fpid
  wait $wpid
  [ -f /tmp/f.events ] && sed "s/^/QPCHECK-FAULT-EVENT $id /" /tmp/f.events
  echo "QPCHECK-FAULT-RESULT $id client=$crc server=$src"
  case " $crc $src " in *" 124 "*|*" 143 "*) cm_diag "$id" "$sdev" "$cdev" ;; esac
  sed 's/^/  client: /' /tmp/f.client.out | head -n 40
  sed 's/^/  server: /' /tmp/f.server.out | head -n 40
  for s in server client; do
    echo "QPCHECK-LOG-BEGIN $id.$s"
    cat /tmp/f.$s.jsonl 2>/dev/null
    echo "QPCHECK-LOG-END $id.$s"
  done
  case "$dev $fault" in "rxe devremove"|"rxe linkdown") net_restore renew ;; *) net_restore ;; esac
  n=$(dmesg | wc -l)
  if [ "$n" -gt "$dmesg_lines" ]; then
    dmesg | tail -n $((n - dmesg_lines)) | grep -E "BUG|WARNING|Oops|general protection" | sed "s/^/QPCHECK-FAULT-KERNEL $id /"
    dmesg_lines=$n
  fi
}

while read -r tag id dev prog fault side at dur arg port gap; do
  [ "$tag" = RUN ] || continue
  echo "QPCHECK-FAULT-RUN $id $dev $prog $fault $side $at $dur $arg $port $gap"
  run_one "$id" "$dev" "$prog" "$fault" "$side" "$at" "$dur" "$arg" "$port" "$gap"
done </plan
echo "QPCHECK-VM done"
