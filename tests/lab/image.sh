#!/usr/bin/env bash
# Builds the soft-RoCE lab VM image from Debian packages: a stock Debian 6.1
# kernel (the -amd64 flavour: -cloud has no RDMA_RXE), the rxe/uverbs/netem
# modules with their dependencies, and a user space unpacked with dpkg -x
# (rdma-core, perftest, iproute2, busybox). No debootstrap, no root filesystem
# image: everything lives in an initramfs.
#
#   tests/lab/image.sh CACHE_DIR     prints the image folder (vmlinuz, initrd.img)
#
# The image is cached in CACHE_DIR/image-<key>, where the key hashes the exact
# package versions and this script, so a mirror update or an edit rebuilds it and
# anything else reuses it (warm: well under a second). Downloaded .debs are kept
# in CACHE_DIR/debs. Recipe and pitfalls: docs/lab.md.
set -euo pipefail

cache=${1:?usage: image.sh CACHE_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$cache/debs"
cache=$(cd "$cache" && pwd)

log() { echo "lab-image: $*" >&2; }
die() { echo "lab-image: error: $*" >&2; exit 1; }
# Exit 77: the lab cannot get its ingredients here (lab.sh turns it into a skip).
unavailable() { echo "lab-image: unavailable: $*" >&2; exit 77; }

# The newest 6.1 ABI: old ABIs vanish from the mirror, so never pin N.
kernel_pkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' 2>/dev/null |
             awk '{print $1}' | sort -V | tail -1)
[[ -n $kernel_pkg ]] || unavailable "no linux-image-6.1.0-N-amd64-unsigned package in the apt lists (try: apt-get update)"
kver=${kernel_pkg#linux-image-}
kver=${kver%-unsigned}

# Guest user space: the tools, their providers, and every shared library they
# need (checked below with the guest's own loader).
guest_pkgs=(
  busybox-static
  libc6 libgcc-s1 libstdc++6 zlib1g
  libibverbs1 ibverbs-providers ibverbs-utils librdmacm1 rdmacm-utils libibumad3 perftest
  iproute2 libmnl0 libelf1 libbpf1 libcap2 libbsd0 libmd0 libtirpc3 libdb5.3 libxtables12
  libselinux1 libpcre2-8-0 libnl-3-200 libnl-route-3-200 libpci3 libudev1
  libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libcom-err2 libkeyutils1
)
# Modules the lab loads; their dependencies are resolved with modprobe.
# sch_ingress, cls_basic, em_meta and act_gact drop oversize frames on a
# link (the faults suite's MTU mismatch) without touching either netdev.
modules=(rdma_rxe ib_uverbs rdma_ucm ib_umad veth sch_netem sch_ingress cls_basic em_meta act_gact
         crc32_generic crc32_pclmul virtio_net virtio_pci)

# Versions as apt would download them now (one apt-cache call: each costs ~2 s).
all_pkgs=("$kernel_pkg" "${guest_pkgs[@]}")
versions=$(apt-cache show --no-all-versions "${all_pkgs[@]}" 2>/dev/null |
           awk '/^Package:/ {p=$2} /^Version:/ {print p "=" $2}')
manifest=""
for p in "${all_pkgs[@]}"; do
  v=$(awk -F= -v p="$p" '$1 == p {print $2; exit}' <<<"$versions")
  [[ -n $v ]] || unavailable "package $p is not available from apt (try: apt-get update)"
  manifest+="$p=$v"$'\n'
done
key=$( { printf '%s' "$manifest"; cat "$0" "$here/init"; } | sha256sum | cut -c1-16)
out="$cache/image-$key"
if [[ -f $out/initrd.img && -f $out/vmlinuz ]]; then
  log "cached image $out ($kernel_pkg)"
  echo "$out"
  exit 0
fi

start=$(date +%s.%N)
# Download what is missing. The file name carries the version (":" as %3a).
cd "$cache/debs"
missing=()
while IFS='=' read -r p v; do
  [[ -n $p ]] || continue
  ls "${p}_${v//:/%3a}_"*.deb >/dev/null 2>&1 || missing+=("$p=$v")
done <<<"$manifest"
if ((${#missing[@]})); then
  log "downloading ${#missing[@]} packages"
  # apt's sandbox user cannot write here; the warning it prints is harmless.
  apt-get download "${missing[@]}" >/dev/null 2>"$cache/debs/download.log" ||
    unavailable "apt-get download failed: $(tail -3 "$cache/debs/download.log")"
fi

work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
kdir=$work/kernel
root=$work/root
mkdir -p "$kdir" "$root"

deb_file() { ls "$cache/debs/${1}_${2//:/%3a}_"*.deb | head -1; }
while IFS='=' read -r p v; do
  [[ -n $p ]] || continue
  f=$(deb_file "$p" "$v")
  if [[ $p == "$kernel_pkg" ]]; then dpkg -x "$f" "$kdir"; else dpkg -x "$f" "$root"; fi
done <<<"$manifest"

# Modules: the package ships no modules.dep.
depmod -b "$kdir" "$kver"
mkdir -p "$root/lib/modules/$kver" "$root/etc/lab"
: >"$root/etc/lab/modules"
for m in "${modules[@]}"; do
  modprobe -d "$kdir" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
  rel=${ko#"$kdir"}
  mkdir -p "$root$(dirname "$rel")"
  cp "$ko" "$root$rel"
  echo "$rel" >>"$root/etc/lab/modules"  # load order: dependencies first
done
cp "$kdir/lib/modules/$kver/"modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$kver/" 2>/dev/null || true
depmod -b "$root" "$kver"
[[ -s $root/etc/lab/modules ]] || die "no modules collected from $kernel_pkg"

# Busybox for everything else, without shadowing the real tools (ip, tc, rdma).
bb=$root/bin/busybox
[[ -x $bb ]] || die "busybox-static did not unpack to /bin/busybox"
"$bb" --list-full | while read -r applet; do
  [[ -e $root/$applet || -L $root/$applet ]] && continue
  mkdir -p "$root/$(dirname "$applet")"
  ln -s /bin/busybox "$root/$applet"
done
mkdir -p "$root"/{proc,sys,dev,tmp,run,mnt,root,var/run,etc}
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
install -m 0755 "$here/init" "$root/init"
printf '%s' "$manifest" >"$root/etc/lab/packages"
echo "$kver" >"$root/etc/lab/kernel"

# The guest's loader cache, then prove every tool resolves all its libraries.
ldconfig -r "$root"
for bin in usr/bin/ibv_devinfo usr/bin/ib_write_bw usr/bin/ib_read_bw usr/bin/ib_send_bw usr/bin/ib_write_lat \
           usr/bin/rping bin/ip sbin/tc usr/bin/rdma; do
  [[ -e $root/$bin ]] || die "$bin is missing from the guest user space"
  if chroot "$root" /lib64/ld-linux-x86-64.so.2 --list "/$bin" 2>&1 | grep -q 'not found'; then
    die "/$bin has unresolved libraries in the guest: $(chroot "$root" /lib64/ld-linux-x86-64.so.2 --list "/$bin" | grep 'not found' | tr '\n' ' ')"
  fi
done

# The image: drop what the lab never reads to keep the initramfs small.
rm -rf "$root"/usr/share/{doc,man,locale,info,lintian,bug} "$root"/usr/lib/x86_64-linux-gnu/gconv
mkdir -p "$out.tmp"
cp "$kdir/boot/vmlinuz-$kver" "$out.tmp/vmlinuz"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp/initrd.img"
printf '%s' "$manifest" >"$out.tmp/packages"
rm -rf "$out" && mv "$out.tmp" "$out"
# Older images (other package versions) are dead weight: keep only this one.
find "$cache" -maxdepth 1 -name 'image-*' ! -name "image-$key" -exec rm -rf {} +
end=$(date +%s.%N)
log "built $out ($kernel_pkg, $(du -h "$out/initrd.img" | cut -f1) initrd) in $(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}') s"
echo "$out"
