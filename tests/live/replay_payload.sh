#!/bin/sh
# /payload of the live replay job (tests/live/run_live.sh; the VM is set up by guest_setup.sh). Replays every trace in
# /traces/list ("NAME DEVICE SETUP EXPECT"), each result between QPCHECK-BEGIN / QPCHECK-END lines, checks two
# environment errors, and ends with "QPCHECK-VM done".
# SETUP is - or comma-separated MODULE.PARAM=VALUE module parameters (siw.peer_to_peer=1) written to
# /sys/module/MODULE/parameters/PARAM for that trace only and restored after it, and timeout_ms=N, that trace's
# --timeout-ms (default QPCHECK_TIMEOUT_MS).
verdict() { case "$1" in 10) echo REPRODUCED;; 11) echo NOT_REPRODUCED;; 12) echo DIVERGED;; 6) echo ENVIRONMENT;;
              *) echo "EXIT_$1";; esac; }
# Writes each MODULE.PARAM=VALUE of $1; with $2 = save, remembers the old values in /tmp/restore first.
apply() {
  : >/tmp/restore.new
  for kv in $(echo "$1" | tr ',' ' '); do
    [ "$kv" = - ] && continue
    case $kv in timeout_ms=*) continue;; esac
    mp=${kv%%=*}; value=${kv#*=}
    f=/sys/module/${mp%%.*}/parameters/${mp#*.}
    [ "$2" = save ] && echo "${mp}=$(cat "$f")" >>/tmp/restore.new
    echo "$value" >"$f" || echo "QPCHECK-VM cannot set $mp=$value"
  done
  [ "$2" = save ] && mv /tmp/restore.new /tmp/restore
}
# Each trace runs up to ATTEMPTS times while its verdict differs from the required one (siw's CONNECT_ERROR race,
# rdma-semantics.md "iWARP (siw)"); every attempt is printed, the host reports how many it took.
while read -r name device setup expect; do
  apply "$setup" save
  timeout_ms=${QPCHECK_TIMEOUT_MS:-10000}
  for kv in $(echo "$setup" | tr ',' ' '); do case $kv in timeout_ms=*) timeout_ms=${kv#timeout_ms=};; esac; done
  attempt=1
  while :; do
    echo "QPCHECK-BEGIN $name $device attempt=$attempt"
    # Bounded: a replay whose process does not exit is killed; its verdict is the one it printed, and the host
    # reports the hang beside it. A process the kernel keeps in uninterruptible sleep cannot be killed (seen with
    # siw in peer-to-peer mode: iw_cm's BUG() in cm_close_handler, iwcm.c:969, leaves the cm_id's teardown waiting
    # forever): the guest prints its kernel stack and the kernel's last messages as QPCHECK-WEDGED and replays
    # nothing more on that device, so the host names the trace instead of waiting for the VM's bound.
    bound=$((timeout_ms / 1000 * 6 + 60))
    if [ -n "$(eval echo \${wedged_$device:-})" ]; then
      echo "QPCHECK-WEDGED $name $device: not replayed, $(eval echo \$wedged_$device) wedged the device"
      rc=wedged
    else
      /bin/qpcheck replay "/traces/$name.json" --device "$device" --timeout-ms "$timeout_ms" >/tmp/replay.out 2>&1 &
      pid=$!
      waited=0
      while [ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" != Z ] && [ -e /proc/$pid ] && [ "$waited" -lt "$bound" ]; do
        sleep 1; waited=$((waited + 1))
        # a heartbeat for the host's stall watchdog (vm_lib.sh vm_boot), which stops a VM that says nothing
        [ $((waited % 60)) != 0 ] || echo "QPCHECK-ALIVE $name $waited s"
      done
      state=$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)
      if [ -n "$state" ] && [ "$state" != Z ]; then
        kill -KILL "$pid" 2>/dev/null
        sleep 5
        state=$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)
      fi
      if [ -n "$state" ] && [ "$state" != Z ]; then
        cat /tmp/replay.out
        echo "QPCHECK-WEDGED $name $device: qpcheck is in state $state $((waited + 5)) s after its start, SIGKILL did not end it; kernel stack:"
        sed 's/^/  /' /proc/$pid/stack 2>/dev/null
        echo "  last kernel messages:"
        dmesg 2>/dev/null | tail -n 30 | sed 's/^/  /'
        eval "wedged_$device=$name"
        rc=wedged
      else
        wait "$pid"
        rc=$?
        cat /tmp/replay.out
        if [ "$rc" = 137 ]; then
          case $(grep -E '^(REPRODUCED|NOT REPRODUCED|DIVERGED)' /tmp/replay.out | head -n 1) in
            REPRODUCED*) rc=10;; "NOT REPRODUCED"*) rc=11;; DIVERGED*) rc=12;; *) rc=137;;
          esac
          echo "QPCHECK-HANG $name $device: qpcheck did not exit within $bound s (killed); verdict as printed: rc=$rc"
        fi
      fi
    fi
    echo "QPCHECK-END $name $device rc=$rc attempt=$attempt"
    # EXPECT alternatives: a verdict, or VERDICT@STEP (that verdict, decided at that step)
    step=$(grep -E '^(REPRODUCED|NOT REPRODUCED|DIVERGED) at step [0-9]+' /tmp/replay.out 2>/dev/null | head -n 1 |
           sed 's/.* at step \([0-9]*\).*/\1/')
    case "|$expect|" in *"|$(verdict $rc)|"*|*"|$(verdict $rc)@$step|"*) break;; esac
    [ "$rc" != wedged ] || break
    [ "$attempt" -lt "${QPCHECK_ATTEMPTS:-3}" ] || break
    attempt=$((attempt + 1))
  done
  apply "$(tr '\n' ',' </tmp/restore)" keep
done < /traces/list
# Environment errors against the real stack: an unknown device, and a user without access to /dev/infiniband.
first=$(head -n 1 /traces/list | cut -d' ' -f1)
/bin/qpcheck replay "/traces/$first.json" --device nosuchdev0 >/dev/null 2>/tmp/env.err
echo "QPCHECK-ENV unknown_device rc=$? $(head -n 1 /tmp/env.err)"
# The kernel creates /dev/infiniband/* with mode 0666; a site that restricts them (udev rules) looks like this:
chmod 600 /dev/infiniband/*
su -s /bin/sh nobody -c "/bin/qpcheck replay /traces/$first.json --device rxe0" >/dev/null 2>/tmp/env.err
echo "QPCHECK-ENV no_permission rc=$? $(head -n 1 /tmp/env.err)"
chmod 666 /dev/infiniband/*
echo "QPCHECK-VM done, up $(cut -d' ' -f1 /proc/uptime) s"
