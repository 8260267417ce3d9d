#!/bin/sh
# /init of the live-replay VM (tests/live/run_live.sh builds the initramfs). Loads the RDMA stack, creates rxe0 on
# dummy0 and siw0 on dummy1, replays every trace in /traces/list, prints each result on the serial console between
# QPCHECK-BEGIN / QPCHECK-END lines, checks two environment errors, and powers off.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp
echo "QPCHECK-VM kernel $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"
# Module order measured in ../shared/notes/live-verbs-vm.md; crc32c-intel fails under TCG, the generic ones suffice.
for m in configfs udp_tunnel ip6_udp_tunnel crc32_generic crc32c_generic libcrc32c ib_core ib_uverbs ib_cm iw_cm \
         rdma_cm rdma_ucm rdma_rxe siw; do
  insmod /modules/$m.ko 2>/tmp/insmod.err || echo "QPCHECK-VM insmod $m failed: $(cat /tmp/insmod.err)"
done
insmod /modules/dummy.ko numdummies=2 || echo "QPCHECK-VM insmod dummy failed"
mount -t configfs configfs /sys/kernel/config 2>/dev/null
ip link set lo up
ip addr add 10.11.0.1/24 dev dummy0 && ip link set dummy0 up
ip addr add 10.12.0.1/24 dev dummy1 && ip link set dummy1 up
rdma link add rxe0 type rxe netdev dummy0 || echo "QPCHECK-VM rdma link add rxe0 failed"
rdma link add siw0 type siw netdev dummy1 || echo "QPCHECK-VM rdma link add siw0 failed"
echo "QPCHECK-VM devices: $(ls /sys/class/infiniband | tr '\n' ' ')up $(cut -d' ' -f1 /proc/uptime) s"
# Each trace runs up to ATTEMPTS times while its verdict differs from the required one (siw's CONNECT_ERROR race,
# rdma-semantics.md "iWARP (siw)"); every attempt is printed, the host reports how many it took.
verdict() { case "$1" in 10) echo REPRODUCED;; 11) echo NOT_REPRODUCED;; 12) echo DIVERGED;; 6) echo ENVIRONMENT;;
              *) echo "EXIT_$1";; esac; }
while read -r name device expect; do
  attempt=1
  while :; do
    echo "QPCHECK-BEGIN $name $device attempt=$attempt"
    /qpcheck replay "/traces/$name.json" --device "$device" --timeout-ms "${QPCHECK_TIMEOUT_MS:-10000}"
    rc=$?
    echo "QPCHECK-END $name $device rc=$rc attempt=$attempt"
    case "|$expect|" in *"|$(verdict $rc)|"*) break;; esac
    [ "$attempt" -lt "${QPCHECK_ATTEMPTS:-3}" ] || break
    attempt=$((attempt + 1))
  done
done < /traces/list
# Environment errors against the real stack: an unknown device, and a user without access to /dev/infiniband.
first=$(head -n 1 /traces/list | cut -d' ' -f1)
/qpcheck replay "/traces/$first.json" --device nosuchdev0 >/dev/null 2>/tmp/env.err
echo "QPCHECK-ENV unknown_device rc=$? $(head -n 1 /tmp/env.err)"
# The kernel creates /dev/infiniband/* with mode 0666; a site that restricts them (udev rules) looks like this:
chmod 600 /dev/infiniband/*
su -s /bin/sh nobody -c "/qpcheck replay /traces/$first.json --device rxe0" >/dev/null 2>/tmp/env.err
echo "QPCHECK-ENV no_permission rc=$? $(head -n 1 /tmp/env.err)"
echo "QPCHECK-VM done, up $(cut -d' ' -f1 /proc/uptime) s"
poweroff -f
