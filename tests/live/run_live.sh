#!/usr/bin/env bash
# The live replay job: builds a small qemu VM (TCG; KVM does not work on these machines) with Debian's pinned kernel
# linux-image-6.1.0-57-amd64, rdma_rxe, siw built out of tree from linux-source-6.1, busybox, qpcheck and the traces
# listed in tests/live/traces.txt; the VM replays each trace on its device and prints the results on the serial
# console; this script parses them and fails when a device's verdict differs from the one the list requires.
#
# Exit: 0 every verdict as required; 1 a verdict differs or the VM failed; 77 SKIP (the VM cannot be built here:
# no root, no qemu and no network to the Debian registry): the reason is printed, never a silent pass.
# Environment: QPCHECK_VM_CACHE (default /var/cache/qpcheck-vm) keeps the downloaded .debs, the kernel, the modules
# and siw.ko between runs; QPCHECK_VM_TIMEOUT (s, default 1200) bounds the VM; QPCHECK_TIMEOUT_MS each replay wait;
# QPCHECK_LIVE_LIST another trace list; QPCHECK_LIVE_LOG=FILE keeps the serial console.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
skip() { echo "live: SKIP: $*"; echo "live: wall time $(elapsed) s"; exit 77; }
die() { echo "live: FAIL: $*"; echo "live: wall time $(elapsed) s"; exit 1; }

KVER=6.1.0-57-amd64
CACHE=${QPCHECK_VM_CACHE:-/var/cache/qpcheck-vm}
VM_TIMEOUT=${QPCHECK_VM_TIMEOUT:-1200}
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
[ -z "$SUDO" ] || sudo -n true 2>/dev/null || skip "needs root (or passwordless sudo) to install packages"

# 1. Packages (apt, Debian 12). Only what is missing; no recommends (qemu would pull a desktop).
pkgs=(qemu-system-x86 busybox-static zstd cpio jq iproute2 ibverbs-providers libibverbs1 librdmacm1 kmod
      "linux-headers-$KVER" make gcc binutils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "live: installing ${missing[*]}"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      "${missing[@]}"; } >"${TMPDIR:-/tmp}/qpcheck-live-apt.log" 2>&1 ||
    skip "apt-get install ${missing[*]} failed (no network to the Debian registry?): $(tail -n 2 "${TMPDIR:-/tmp}/qpcheck-live-apt.log" | tr '\n' ' ')"
fi
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed"
$SUDO mkdir -p "$CACHE/debs" && $SUDO chown "$(id -u)" "$CACHE" "$CACHE/debs" || skip "cannot create cache $CACHE"

# 2. The pinned kernel and its source (cached .debs: 71 MB + 139 MB).
cd "$CACHE/debs"
ls linux-image-"$KVER"_*.deb >/dev/null 2>&1 || apt-get download -qq "linux-image-$KVER" >/dev/null 2>&1 ||
  skip "apt-get download linux-image-$KVER failed (no network to the Debian registry?)"
ls linux-source-6.1_*.deb >/dev/null 2>&1 || apt-get download -qq linux-source-6.1 >/dev/null 2>&1 ||
  skip "apt-get download linux-source-6.1 failed (no network to the Debian registry?)"
kdir="$CACHE/$KVER"
if [ ! -f "$kdir/vmlinux" ] || [ ! -f "$kdir/siw.ko" ]; then
  echo "live: preparing kernel $KVER (vmlinux, modules, siw.ko) in $kdir"
  rm -rf "$kdir" && mkdir -p "$kdir/src" || die "cannot write $kdir"
  dpkg-deb -x linux-image-"$KVER"_*.deb "$kdir/root" || die "unpacking linux-image failed"
  dpkg-deb --fsys-tarfile linux-source-6.1_*.deb | tar -xO ./usr/src/linux-source-6.1.tar.xz |
    tar -xJ -C "$kdir/src" linux-source-6.1/drivers/infiniband/sw/siw linux-source-6.1/scripts/extract-vmlinux ||
    die "unpacking linux-source-6.1 failed"
  src="$kdir/src/linux-source-6.1"
  make -s -C "/lib/modules/$KVER/build" M="$src/drivers/infiniband/sw/siw" CONFIG_RDMA_SIW=m modules \
    >"$kdir/siw-build.log" 2>&1 || die "building siw.ko failed: $(tail -n 5 "$kdir/siw-build.log")"
  cp "$src/drivers/infiniband/sw/siw/siw.ko" "$kdir/siw.ko"
  sh "$src/scripts/extract-vmlinux" "$kdir/root/boot/vmlinuz-$KVER" >"$kdir/vmlinux.tmp" || die "extract-vmlinux failed"
  mv "$kdir/vmlinux.tmp" "$kdir/vmlinux"
fi
cd "$repo"
echo "live: kernel ready after $(elapsed) s"

# 3. qpcheck and the traces (tests/live/traces.txt).
bazel build //checker/cli:qpcheck >/dev/null 2>&1 || die "bazel build //checker/cli:qpcheck failed"
qp="$repo/bazel-bin/checker/cli/qpcheck"
work=$(mktemp -d "${TMPDIR:-/tmp}/qpcheck-live.XXXXXX")
trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root"/{bin,sbin,usr/bin,etc/libibverbs.d,modules,traces,proc,sys,dev,tmp,lib64,usr/lib/x86_64-linux-gnu/libibverbs}
: >"$root/traces/list"
declare -A expect device
names=()
while read -r name spec params dev exp edit; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  args=()
  if [ "$params" != "-" ]; then IFS=, read -ra ps <<<"$params"; for p in "${ps[@]}"; do args+=(--param "$p"); done; fi
  "$qp" verify "spec/$spec.qpspec" "${args[@]}" --witness --trace-out "$work/$name.json" >/dev/null 2>"$work/err"
  rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || die "qpcheck verify spec/$spec.qpspec ${args[*]} exited $rc: $(head -n 3 "$work/err")"
  if [ "$edit" != "-" ]; then
    jq -f "tests/live/$edit" "$work/$name.json" >"$root/traces/$name.json" || die "jq -f tests/live/$edit failed"
  else
    cp "$work/$name.json" "$root/traces/$name.json"
  fi
  echo "$name $dev $exp" >>"$root/traces/list"
  expect[$name]=$exp; device[$name]=$dev; names+=("$name")
done < "${QPCHECK_LIVE_LIST:-tests/live/traces.txt}"

# 4. The initramfs: busybox, qpcheck and rdma with their libraries, the rxe and siw providers, the modules.
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$qp" "$root/qpcheck" && strip "$root/qpcheck" 2>/dev/null
cp "$(command -v rdma)" "$root/usr/bin/rdma"
for drv in rxe siw; do
  cp /etc/libibverbs.d/$drv.driver "$root/etc/libibverbs.d/"
  cp /usr/lib/x86_64-linux-gnu/libibverbs/lib$drv-rdmav*.so "$root/usr/lib/x86_64-linux-gnu/libibverbs/"
done
for bin in "$root/qpcheck" "$root/usr/bin/rdma" "$root"/usr/lib/x86_64-linux-gnu/libibverbs/*.so; do
  ldd "$bin" | awk '/=> \//{print $3} /^\t\/lib64/{print $1}'
done | sort -u | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"
done
cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
gcc_s=$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/{print $NF; exit}')
[ -n "$gcc_s" ] && mkdir -p "$root$(dirname "$gcc_s")" && cp -L "$gcc_s" "$root$gcc_s"
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
mods="$kdir/root/lib/modules/$KVER/kernel"
for m in fs/configfs/configfs net/ipv4/udp_tunnel net/ipv6/ip6_udp_tunnel crypto/crc32_generic crypto/crc32c_generic \
         lib/libcrc32c drivers/infiniband/core/ib_core drivers/infiniband/core/ib_uverbs drivers/infiniband/core/ib_cm \
         drivers/infiniband/core/iw_cm drivers/infiniband/core/rdma_cm drivers/infiniband/core/rdma_ucm \
         drivers/infiniband/sw/rxe/rdma_rxe drivers/net/dummy; do
  cp "$mods/$m.ko" "$root/modules/" || die "module $m.ko missing from linux-image-$KVER"
done
cp "$kdir/siw.ko" "$root/modules/"
sed -e "s/\${QPCHECK_TIMEOUT_MS:-10000}/${QPCHECK_TIMEOUT_MS:-10000}/" \
    -e "s/\${QPCHECK_ATTEMPTS:-3}/${QPCHECK_ATTEMPTS:-3}/" tests/live/guest_init.sh >"$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | zstd -q -3 -T0 -o "$work/initramfs.zst") || die "building the initramfs failed"
echo "live: initramfs $(du -k "$work/initramfs.zst" | cut -f1) KiB, ${#names[@]} traces, after $(elapsed) s"

# 5. Boot, replay, power off.
vm_start=$(date +%s)
console="$work/console.log"
timeout "$VM_TIMEOUT" qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -nographic -no-reboot -nic none \
  -kernel "$kdir/vmlinux" -initrd "$work/initramfs.zst" \
  -append "console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init" </dev/null >"$console" 2>&1
qrc=$?
vm_secs=$(( $(date +%s) - vm_start ))
tr -d '\r' <"$console" >"$console.txt"
if [ -n "${QPCHECK_LIVE_LOG:-}" ]; then cp "$console.txt" "$QPCHECK_LIVE_LOG"; fi
grep -q "QPCHECK-VM done" "$console.txt" || { tail -n 40 "$console.txt"; die "the VM did not finish (qemu exit $qrc after $vm_secs s)"; }
grep "QPCHECK-VM" "$console.txt"

# 6. Verdicts: the device's beside the required one, with what it did at the deciding step.
verdict_of() { case "$1" in 10) echo REPRODUCED;; 11) echo NOT_REPRODUCED;; 12) echo DIVERGED;; 6) echo ENVIRONMENT;;
                 *) echo "EXIT_$1";; esac; }
bad=0
printf '%-20s %-6s %-24s %-15s %-3s %s\n' trace device required device-did try "deciding step (model | device)"
for name in "${names[@]}"; do
  # the last attempt decides; earlier ones are listed under it
  last=$(grep -c "^QPCHECK-END $name " "$console.txt")
  block=$(awk -v n="$name" -v k="attempt=$last" '$1=="QPCHECK-BEGIN" && $2==n && $4==k {on=1; next}
                                                 $1=="QPCHECK-END" && $2==n && $5==k {print; on=0} on' "$console.txt")
  rc=$(grep -o 'QPCHECK-END .* rc=[0-9]*' <<<"$block" | sed 's/.*rc=//')
  got=$(verdict_of "${rc:-none}")
  decide=$(grep -E '^(REPRODUCED|NOT REPRODUCED|DIVERGED) at step' <<<"$block" | head -n 1)
  [ -n "$decide" ] || decide=$(grep -E '^(REPRODUCED|NOT REPRODUCED|DIVERGED):' <<<"$block" | head -n 1)
  mark=""
  case "|${expect[$name]}|" in *"|$got|"*) ;; *) mark="  <-- FAIL"; bad=1;; esac
  printf '%-20s %-6s %-24s %-15s %-3s %s%s\n' "$name" "${device[$name]}" "${expect[$name]}" "$got" "$last" "$decide" "$mark"
  if [ "$last" -gt 1 ]; then
    awk -v n="$name" -v k="attempt=$last" '$1=="QPCHECK-BEGIN" && $2==n && $4!=k {on=1} on && /^(DIVERGED|NOT REPRODUCED|REPRODUCED)/ {print "      earlier " $4 ": " $0; on=0}' "$console.txt"
  fi
done
for env in unknown_device no_permission; do
  line=$(grep "QPCHECK-ENV $env" "$console.txt")
  echo "$line"
  grep -q "rc=6 " <<<"$line" || { echo "live: $env should exit 6 (environment)"; bad=1; }
done
echo "live: full console: set QPCHECK_LIVE_LOG=FILE to keep it; replay reports:"
awk '/^QPCHECK-BEGIN/{on=1} on{print "  " $0} /^QPCHECK-END/{on=0}' "$console.txt"
echo "live: VM boot+replay+poweroff $vm_secs s; wall time $(elapsed) s"
[ "$bad" = 0 ] || { echo "live: FAIL: a device verdict differs from tests/live/traces.txt"; exit 1; }
echo "live: PASS"
