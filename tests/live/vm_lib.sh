# shellcheck shell=bash
# The live VM, as functions sourced by tests/live/run_live.sh (the replay job) and tests/live/vm.sh (run any commands
# in the same VM). A qemu VM under TCG (KVM does not work on these machines) with Debian's pinned kernel
# linux-image-6.1.0-57-amd64, rdma_rxe, siw built out of tree from linux-source-6.1 with RFC 6581 peer-to-peer mode
# made a writable module parameter (/sys/module/siw/parameters/peer_to_peer), busybox, and whatever binaries the
# caller adds (their shared libraries follow). The guest (tests/live/guest_setup.sh) loads the RDMA stack, creates
# rxe0 on dummy0 (10.11.0.1) and siw0 on dummy1 (10.12.0.1), then runs /payload; its output goes to a second serial
# port (ttyS1), kept apart from the kernel's console (ttyS0).
#
# Callers set `repo` (the repository root) and define skip() and die() (exit 77 and 1 with a reason) first.
# Environment: QPCHECK_VM_CACHE (default /var/cache/qpcheck-vm) keeps the downloaded .debs, the kernel, its modules
# and the siw builds between runs; it may be shared by several users at once: nothing in it is deleted, each build
# goes to a fresh name under a lock and is renamed into place.

VM_KVER=6.1.0-57-amd64
VM_CACHE=${QPCHECK_VM_CACHE:-/var/cache/qpcheck-vm}
# The siw build: bump when the patch changes, so that old and new builds coexist in the cache.
VM_SIW_BUILD=siw-p2p-param-v1

vm_sudo() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

# 1. Packages (apt, Debian 12): only what is missing, no recommends (qemu would pull a desktop).
vm_packages() {
  [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null || skip "needs root (or passwordless sudo) to install packages"
  local pkgs=(qemu-system-x86 busybox-static zstd cpio jq iproute2 ibverbs-providers libibverbs1 librdmacm1 kmod
              "linux-headers-$VM_KVER" make gcc binutils "$@")
  local missing=() p
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "live: installing ${missing[*]}"
    { vm_sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive vm_sudo apt-get install -y -qq \
        --no-install-recommends "${missing[@]}"; } >"${TMPDIR:-/tmp}/qpcheck-live-apt.log" 2>&1 ||
      skip "apt-get install ${missing[*]} failed (no network to the Debian registry?): $(tail -n 2 "${TMPDIR:-/tmp}/qpcheck-live-apt.log" | tr '\n' ' ')"
  fi
  command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed"
}

# 2. The pinned kernel (vmlinux, modules) and siw.ko, cached. Sets vm_kdir and vm_siw (the siw.ko to load).
vm_kernel() {
  vm_sudo mkdir -p "$VM_CACHE/debs" && vm_sudo chown "$(id -u)" "$VM_CACHE" "$VM_CACHE/debs" ||
    skip "cannot create cache $VM_CACHE"
  (
    cd "$VM_CACHE/debs" || exit 1
    flock 9
    ls linux-image-"$VM_KVER"_*.deb >/dev/null 2>&1 || apt-get download -qq "linux-image-$VM_KVER" >/dev/null 2>&1 ||
      exit 2
    ls linux-source-6.1_*.deb >/dev/null 2>&1 || apt-get download -qq linux-source-6.1 >/dev/null 2>&1 || exit 3
  ) 9>"$VM_CACHE/debs.lock"
  case $? in
    0) ;;
    2) skip "apt-get download linux-image-$VM_KVER failed (no network to the Debian registry?)" ;;
    3) skip "apt-get download linux-source-6.1 failed (no network to the Debian registry?)" ;;
    *) die "cannot use $VM_CACHE/debs" ;;
  esac
  vm_kdir="$VM_CACHE/$VM_KVER"
  vm_siw="$vm_kdir/$VM_SIW_BUILD/siw.ko"
  [ -f "$vm_kdir/vmlinux" ] && [ -d "$vm_kdir/root/lib/modules" ] && [ -f "$vm_siw" ] && return 0
  echo "live: preparing kernel $VM_KVER (vmlinux, modules, $VM_SIW_BUILD/siw.ko) in $vm_kdir"
  mkdir -p "$vm_kdir" || die "cannot write $vm_kdir"
  (
    flock 9
    set -e
    if [ ! -f "$vm_kdir/vmlinux" ] || [ ! -d "$vm_kdir/root/lib/modules" ]; then
      tmp=$(mktemp -d "$vm_kdir/.root.XXXXXX")
      dpkg-deb -x "$VM_CACHE"/debs/linux-image-"$VM_KVER"_*.deb "$tmp/root"
      if [ ! -d "$vm_kdir/root/lib/modules" ]; then rm -rf "$vm_kdir/root"; mv "$tmp/root" "$vm_kdir/root"; fi
      rm -rf "$tmp"
    fi
    if [ ! -f "$vm_siw" ] || [ ! -f "$vm_kdir/vmlinux" ]; then
      src=$(mktemp -d "$vm_kdir/.src.XXXXXX")
      dpkg-deb --fsys-tarfile "$VM_CACHE"/debs/linux-source-6.1_*.deb | tar -xO ./usr/src/linux-source-6.1.tar.xz |
        tar -xJ -C "$src" linux-source-6.1/drivers/infiniband/sw/siw linux-source-6.1/scripts/extract-vmlinux
      s="$src/linux-source-6.1"
      if [ ! -f "$vm_kdir/vmlinux" ]; then
        sh "$s/scripts/extract-vmlinux" "$vm_kdir/root/boot/vmlinuz-$VM_KVER" >"$vm_kdir/vmlinux.tmp.$$"
        mv "$vm_kdir/vmlinux.tmp.$$" "$vm_kdir/vmlinux"
      fi
      vm_patch_siw "$s/drivers/infiniband/sw/siw"
      make -s -C "/lib/modules/$VM_KVER/build" M="$s/drivers/infiniband/sw/siw" CONFIG_RDMA_SIW=m modules \
        >"$vm_kdir/$VM_SIW_BUILD.log" 2>&1
      mkdir -p "$vm_kdir/$VM_SIW_BUILD.tmp.$$"
      cp "$s/drivers/infiniband/sw/siw/siw.ko" "$vm_kdir/$VM_SIW_BUILD.tmp.$$/siw.ko"
      rm -rf "$vm_kdir/$VM_SIW_BUILD"
      mv "$vm_kdir/$VM_SIW_BUILD.tmp.$$" "$vm_kdir/$VM_SIW_BUILD"
      rm -rf "$src"
    fi
  ) 9>"$vm_kdir/.build.lock" || die "preparing the kernel or building siw.ko failed: $(tail -n 5 "$vm_kdir/$VM_SIW_BUILD.log" 2>/dev/null)"
}

# siw 6.1 compiles RFC 6581 peer-to-peer mode off (siw_main.c `const bool peer_to_peer;`, siw.h `extern const bool
# peer_to_peer;`); siw_connect reads it once per connection (siw_cm.c: `bool p2p_mode = peer_to_peer`). The patch
# makes it a module parameter writable at run time, default off as upstream, so each replay can choose.
vm_patch_siw() {
  local d=$1
  grep -q '^const bool peer_to_peer;$' "$d/siw_main.c" && grep -q '^extern const bool peer_to_peer;$' "$d/siw.h" ||
    { echo "siw source does not have the expected peer_to_peer declarations" >&2; return 1; }
  sed -i 's/^const bool peer_to_peer;$/bool peer_to_peer;\nmodule_param(peer_to_peer, bool, 0644);\nMODULE_PARM_DESC(peer_to_peer, "RFC 6581 MPA peer-to-peer mode for new connections (qpcheck live build)");/' \
    "$d/siw_main.c"
  sed -i 's/^extern const bool peer_to_peer;$/extern bool peer_to_peer;/' "$d/siw.h"
}

# 3. The guest's root: busybox, the rdma tool, the rxe and siw providers with their libraries, the modules, siw.ko,
# /init (guest_setup.sh then /payload). Sets vm_root (inside $1, a scratch directory removed by the caller).
vm_root() {
  local work=$1
  vm_root="$work/root"
  mkdir -p "$vm_root"/{bin,sbin,usr/bin,etc/libibverbs.d,modules,proc,sys,dev,tmp,lib64,usr/lib/x86_64-linux-gnu/libibverbs}
  cp /bin/busybox "$vm_root/bin/busybox"
  ln -s busybox "$vm_root/bin/sh"
  cp "$(command -v rdma)" "$vm_root/usr/bin/rdma"
  local drv
  for drv in rxe siw; do
    cp /etc/libibverbs.d/$drv.driver "$vm_root/etc/libibverbs.d/"
    cp /usr/lib/x86_64-linux-gnu/libibverbs/lib$drv-rdmav*.so "$vm_root/usr/lib/x86_64-linux-gnu/libibverbs/"
  done
  vm_libs "$vm_root/usr/bin/rdma" "$vm_root"/usr/lib/x86_64-linux-gnu/libibverbs/*.so
  cp -L /lib64/ld-linux-x86-64.so.2 "$vm_root/lib64/"
  local gcc_s
  gcc_s=$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/{print $NF; exit}')
  [ -n "$gcc_s" ] && mkdir -p "$vm_root$(dirname "$gcc_s")" && cp -L "$gcc_s" "$vm_root$gcc_s"
  printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$vm_root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$vm_root/etc/group"
  local mods="$vm_kdir/root/lib/modules/$VM_KVER/kernel" m
  for m in fs/configfs/configfs net/ipv4/udp_tunnel net/ipv6/ip6_udp_tunnel crypto/crc32_generic \
           crypto/crc32c_generic lib/libcrc32c drivers/infiniband/core/ib_core drivers/infiniband/core/ib_uverbs \
           drivers/infiniband/core/ib_cm drivers/infiniband/core/iw_cm drivers/infiniband/core/rdma_cm \
           drivers/infiniband/core/rdma_ucm drivers/infiniband/sw/rxe/rdma_rxe drivers/net/dummy; do
    cp "$mods/$m.ko" "$vm_root/modules/" || die "module $m.ko missing from linux-image-$VM_KVER"
  done
  cp "$vm_siw" "$vm_root/modules/siw.ko"
  # Modules a job needs beyond the RDMA stack (VM_EXTRA_MODULES: paths under kernel/, without .ko), loaded by its
  # payload: the fault suite's veth and sch_netem.
  for m in ${VM_EXTRA_MODULES[@]+"${VM_EXTRA_MODULES[@]}"}; do
    cp "$mods/$m.ko" "$vm_root/modules/" || die "module $m.ko missing from linux-image-$VM_KVER"
  done
  cp "$repo/tests/live/guest_setup.sh" "$vm_root/init"
  chmod +x "$vm_root/init"
}

# Copies the shared libraries of the given binaries into the root.
vm_libs() {
  local bin
  for bin in "$@"; do
    ldd "$bin" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib64/{print $1}'
  done | sort -u | while read -r lib; do
    [ -f "$vm_root$lib" ] || { mkdir -p "$vm_root$(dirname "$lib")" && cp -L "$lib" "$vm_root$lib"; }
  done
}

# Adds a file (a binary's libraries follow) at DEST (absolute, inside the guest).
vm_add() {
  local src=$1 dest=$2
  mkdir -p "$vm_root$(dirname "$dest")"
  cp -L "$src" "$vm_root$dest" || die "cannot copy $src"
  if [ -x "$src" ] && head -c 4 "$src" | grep -q ELF; then vm_libs "$src"; fi
}

# 4. Boots the VM: packs the root (with $vm_root/payload, a shell script the caller wrote), runs qemu for at most
# $1 seconds, leaves the kernel console in $2.console and the payload's output in $2.out (carriage returns removed).
# A guest that prints nothing on the payload's port for QPCHECK_VM_STALL seconds (default 240; the payload prints a
# heartbeat every 60 s while a replay runs) is stopped: a kernel that died under it (siw's iw_cm BUG() with a spinlock
# held stops both CPUs) would otherwise keep the job for the whole bound.
# Returns qemu's exit status (124: timed out, 125: stalled).
vm_boot() {
  local secs=$1 out=$2 stall=${QPCHECK_VM_STALL:-240}
  chmod +x "$vm_root/payload"
  (cd "$vm_root" && find . | cpio -o -H newc --quiet | zstd -q -3 -T0 -f -o "$out.initramfs.zst") ||
    die "building the initramfs failed"
  : >"$out.raw"
  # The kernel console (ttyS0) goes to a file of its own: under -nographic it shared qemu's stdio with the monitor
  # and the guest's kernel messages (an oops, a panic) were lost.
  timeout "$secs" qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -display none -no-reboot -nic none \
    -kernel "$vm_kdir/vmlinux" -initrd "$out.initramfs.zst" -serial file:"$out.console.raw" \
    -chardev file,id=payload,path="$out.raw" -device isa-serial,chardev=payload,index=1 \
    -append "console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init" </dev/null >"$out.qemu" 2>&1 &
  local pid=$! size=-1 quiet=0 rc
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    local now
    now=$(stat -c %s "$out.raw" 2>/dev/null || echo 0)
    if [ "$now" = "$size" ]; then quiet=$((quiet + 5)); else quiet=0; size=$now; fi
    if [ "$quiet" -ge "$stall" ]; then
      echo "live: the guest printed nothing for $stall s: stopping it"
      pkill -TERM -P "$pid" 2>/dev/null; kill -TERM "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      tr -d '\r' <"$out.console.raw" >"$out.console"
      tr -d '\r' <"$out.raw" >"$out.out" 2>/dev/null || : >"$out.out"
      return 125
    fi
  done
  wait "$pid"
  rc=$?
  tr -d '\r' <"$out.console.raw" >"$out.console"
  tr -d '\r' <"$out.raw" >"$out.out" 2>/dev/null || : >"$out.out"
  return $rc
}
