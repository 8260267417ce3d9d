#!/bin/sh
# /init of the live VM (tests/live/vm_lib.sh builds the initramfs). Loads the RDMA stack, creates rxe0 on dummy0
# (10.11.0.1/24) and siw0 on dummy1 (10.12.0.1/24), then runs /payload with its output on the second serial port
# (/dev/ttyS1; the kernel's console is ttyS0), prints "QPCHECK-PAYLOAD rc=N" there, and powers off.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /tmp
out=/dev/ttyS1
stty -F $out raw -echo 2>/dev/null
echo "QPCHECK-VM kernel $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s" >$out
# Module order measured in ../shared/notes/live-verbs-vm.md; crc32c-intel fails under TCG, the generic ones suffice.
for m in configfs udp_tunnel ip6_udp_tunnel crc32_generic crc32c_generic libcrc32c ib_core ib_uverbs ib_cm iw_cm \
         rdma_cm rdma_ucm rdma_rxe siw; do
  insmod /modules/$m.ko 2>/tmp/insmod.err || echo "QPCHECK-VM insmod $m failed: $(cat /tmp/insmod.err)" >$out
done
insmod /modules/dummy.ko numdummies=2 || echo "QPCHECK-VM insmod dummy failed" >$out
mount -t configfs configfs /sys/kernel/config 2>/dev/null
ip link set lo up
ip addr add 10.11.0.1/24 dev dummy0 && ip link set dummy0 up
ip addr add 10.12.0.1/24 dev dummy1 && ip link set dummy1 up
rdma link add rxe0 type rxe netdev dummy0 || echo "QPCHECK-VM rdma link add rxe0 failed" >$out
rdma link add siw0 type siw netdev dummy1 || echo "QPCHECK-VM rdma link add siw0 failed" >$out
echo "QPCHECK-VM devices: $(ls /sys/class/infiniband | tr '\n' ' ')up $(cut -d' ' -f1 /proc/uptime) s" >$out
cd /
/bin/sh /payload >$out 2>&1 </dev/null
echo "QPCHECK-PAYLOAD rc=$? up $(cut -d' ' -f1 /proc/uptime) s" >$out
sync
poweroff -f
