# shellcheck shell=sh
# The fault suite's network inside the live VM (sourced by tests/live/faults_payload.sh): two hosts' worth of RDMA
# devices on one kernel. Each pair of veth ends is a wire: vethA0 (10.11.0.1, rxe0) <-> vethA1 (10.11.0.2, rxe1),
# vethB0 (10.12.0.1, siw0) <-> vethB1 (10.12.0.2, siw1). Traffic between the two addresses of a pair is forced over
# the wire instead of the loopback (policy routing: for locally sent packets, and for route checks bound to the
# device, a table with the peer's address on this end; the local table after them; accept_local for the packets
# that arrive from an address of this host), so netem, a link down and a removed address act on real packets: rxe
# sends RoCE v2 over UDP 4791 through vethA0 (not its loopback shortcut, which needs the same MAC at both ends) and
# siw's TCP goes through vethB0. cma's validate_net_dev (cma_ib_id_from_event) checks the route from the passive
# device back to the active address with the device as oif: the `oif` rules give it the wire too. Measured: rping
# over both pairs, netem loss on vethA0/vethA1 seen in tc's counters.
IP=/usr/local/sbin/ip
TC=/usr/local/sbin/tc

# The wires, their addresses and routes, and the four RDMA devices (once per boot).
net_setup() {
  insmod /modules/veth.ko
  insmod /modules/sch_netem.ko
  rdma link delete rxe0 2>/dev/null
  rdma link delete siw0 2>/dev/null
  $IP link add vethA0 type veth peer name vethA1
  $IP link add vethB0 type veth peer name vethB1
  sysctl -qw net.ipv4.conf.all.accept_local=1 net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
  for d in vethA0 vethA1 vethB0 vethB1; do
    sysctl -qw net.ipv4.conf.$d.accept_local=1 net.ipv4.conf.$d.rp_filter=0 net.ipv4.conf.$d.arp_ignore=1
  done
  $IP rule add pref 1000 lookup local
  $IP rule del pref 0
  net_restore
}

# Idempotent: every link up, every address on its end, every route and rule there, no qdisc, every RDMA device
# present. Run after each fault (a link down flushes the routes through it; removing an address removes the routes
# that use it as source). `net_restore renew` first deletes both rxe devices and reloads rdma_rxe, so that they are
# made anew: after a run that took an rxe link down or removed an rxe device. Measured: an rxe device added again
# after a removal under a running program, whose link then went down and up, received nothing more (rcvd_pkts flat
# while the veth counted the packets): every later run over the pair failed to connect (runs 13-43 of seed 3).
# Renewing right after the removal did not prevent it; renewing after the link down mended it (rdma-semantics.md
# "Faults").
net_restore() {
  if [ "${1:-}" = renew ]; then
    rdma link delete rxe0 2>/dev/null
    rdma link delete rxe1 2>/dev/null
    rmmod rdma_rxe 2>/dev/null
    insmod /modules/rdma_rxe.ko
  fi
  for d in vethA0 vethA1 vethB0 vethB1; do $TC qdisc del dev $d root 2>/dev/null; done
  for d in vethA0 vethA1 vethB0 vethB1; do $IP link set $d up; done
  $IP addr replace 10.11.0.1/32 dev vethA0
  $IP addr replace 10.11.0.2/32 dev vethA1
  $IP addr replace 10.12.0.1/32 dev vethB0
  $IP addr replace 10.12.0.2/32 dev vethB1
  t=100
  for p in "10.11.0.2 vethA0 10.11.0.1" "10.11.0.1 vethA1 10.11.0.2" "10.12.0.2 vethB0 10.12.0.1" "10.12.0.1 vethB1 10.12.0.2"; do
    set -- $p
    $IP rule del pref $t 2>/dev/null
    $IP rule del pref $((t + 10)) 2>/dev/null
    $IP rule add pref $t to $1 iif lo lookup $t
    $IP rule add pref $((t + 10)) to $1 oif $2 lookup $t
    $IP route replace $1 dev $2 src $3 table $t
    t=$((t + 1))
  done
  for l in "rxe0 rxe vethA0" "rxe1 rxe vethA1" "siw0 siw vethB0" "siw1 siw vethB1"; do
    set -- $l
    [ -d /sys/class/infiniband/$1 ] || rdma link add $1 type $2 netdev $3 2>/dev/null
  done
  # the devices come up (port ACTIVE) a moment after the link
  i=0
  while [ $i -lt 50 ]; do
    ok=1
    for d in rxe0 rxe1 siw0 siw1; do
      grep -q ACTIVE /sys/class/infiniband/$d/ports/1/state 2>/dev/null || ok=0
    done
    [ $ok = 1 ] && break
    sleep 0.1
    i=$((i + 1))
  done
}
