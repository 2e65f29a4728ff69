#!/usr/bin/env bash
# Builds the fabcheck OCI image from Debian packages, without any container
# registry: a minimal Debian 12 root file system (mmdebstrap) with exactly the
# run-time libraries the fabcheck binary links (computed by dpkg-shlibdeps),
# the verbs providers (mlx5, rxe, ...), perftest and ibverbs-utils, then the
# binary of the build tree and /usr/share/fabcheck, assembled with umoci.
#
#   ./scripts/build.sh && sudo ./scripts/build-image.sh
#
# Writes, in BUILD_DIR/image/:
#   fabcheck-VERSION.oci.tar          the image (oci-archive), named localhost/fabcheck:VERSION
#   fabcheck-VERSION.oci.tar.digest   its manifest digest, what an image reference pins
#   fabcheck-VERSION.oci.tar.sha256   sha256sum of the archive file
#   fabcheck-VERSION.oci.tar.ref      localhost/fabcheck:VERSION@sha256:... (for --image and kustomize)
#   kustomization.yaml                deploy/kubernetes with the image pinned to that digest
# The Debian packages downloaded are kept in BUILD_DIR/image-cache/debs for the
# next run. Needs root (or unprivileged user namespaces for mmdebstrap's unshare mode).
set -euo pipefail
umask 022
cd "$(dirname "$0")/.."
repo="$(pwd)"

usage() {
  cat <<'EOF'
usage: scripts/build-image.sh [--build-dir DIR] [--out DIR] [--name NAME] [--mirror URL] [--keep-rootfs]
  --build-dir DIR  build tree whose src/app/fabcheck goes into the image (default: $BUILD_DIR or build)
  --out DIR        where the archive and its digest go (default: BUILD_DIR/image)
  --name NAME      image name inside the archive (default: localhost/fabcheck)
  --mirror URL     Debian mirror (default: http://deb.debian.org/debian; security updates from
                   http://deb.debian.org/debian-security unless --mirror is given)
  --keep-rootfs    keep the Debian root file system in OUT/rootfs (for inspection)
EOF
}

build_dir="${BUILD_DIR:-build}"
out=""
name="localhost/fabcheck"
mirror=""
keep_rootfs=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --name) name="$2"; shift 2 ;;
    --mirror) mirror="$2"; shift 2 ;;
    --keep-rootfs) keep_rootfs=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build-image: unknown argument '$1'" >&2; usage >&2; exit 64 ;;
  esac
done
build_dir_abs="$(cd "$build_dir" 2>/dev/null && pwd)" || { echo "build-image: no build tree '$build_dir' (run ./scripts/build.sh first)" >&2; exit 3; }
build_dir="$build_dir_abs"
out="${out:-$build_dir/image}"
binary="$build_dir/src/app/fabcheck"
[ -x "$binary" ] || { echo "build-image: $binary not built (run ./scripts/build.sh, or cmake --build $build_dir --target fabcheck)" >&2; exit 3; }
for tool in mmdebstrap umoci dpkg-shlibdeps strip python3; do
  command -v "$tool" >/dev/null || { echo "build-image: $tool not found (apt-get install mmdebstrap umoci dpkg-dev binutils python3)" >&2; exit 3; }
done

start=$SECONDS
step() { echo "build-image: [$((SECONDS - start))s] $*" >&2; }

version="$("$binary" version | awk '{print $2}')"
[ -n "$version" ] || { echo "build-image: '$binary version' printed no version" >&2; exit 3; }
archive="$out/fabcheck-$version.oci.tar"
mkdir -p "$out"
cache="$build_dir/image-cache/debs"
mkdir -p "$cache"
work="$(mktemp -d "$out/.work.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The binary without its debug information: the build keeps the debug copy.
mkdir -p "$work/stage/usr/bin"
strip --strip-unneeded -o "$work/stage/usr/bin/fabcheck" "$binary"
mapfile -t libs < <(scripts/runtime-deps.sh "$work/stage/usr/bin/fabcheck")
[ ${#libs[@]} -gt 0 ] || { echo "build-image: dpkg-shlibdeps found no libraries for $binary" >&2; exit 3; }
# Verbs providers: libibverbs loads them at run time (mlx5, rxe, ...), so no
# ELF dependency names them. perftest and ibverbs-utils run beside fabcheck.
# (The rdma-core package itself holds host daemons and udev rules, not needed
# in a container.)
extra=(ibverbs-providers perftest ibverbs-utils)
step "version $version; Debian packages: ${libs[*]} ${extra[*]}"

if [ -n "$mirror" ]; then
  sources=("deb $mirror bookworm main" "deb $mirror bookworm-updates main")
else
  sources=("deb http://deb.debian.org/debian bookworm main" "deb http://deb.debian.org/debian bookworm-updates main"
           "deb http://deb.debian.org/debian-security bookworm-security main")
fi
include="$(IFS=,; echo "${libs[*]},${extra[*]}")"
step "mmdebstrap: Debian 12 (essential + run-time libraries), package cache $cache ($(find "$cache" -name '*.deb' | wc -l) .deb)"
# Documentation, man pages and locales are left out; copyright files stay.
# dpkg skips fsync while building (a throw-away tree until it is packed).
mmdebstrap --variant=essential --format=directory \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --include="$include" \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/lintian/*' \
  --skip=essential/unlink \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives/ "$1"/etc/dpkg/dpkg.cfg.d' \
  --setup-hook='echo force-unsafe-io >"$1"/etc/dpkg/dpkg.cfg.d/00unsafe-io' \
  --setup-hook="sync-in $cache /var/cache/apt/archives/" \
  --customize-hook="sync-out /var/cache/apt/archives $cache" \
  --customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb "$1"/etc/dpkg/dpkg.cfg.d/00unsafe-io' \
  --customize-hook='echo "fabcheck:x:10001:10001:fabcheck:/nonexistent:/usr/sbin/nologin" >>"$1/etc/passwd"' \
  --customize-hook='echo "fabcheck:x:10001:" >>"$1/etc/group"' \
  bookworm "$work/rootfs" "${sources[@]}" </dev/null >"$work/mmdebstrap.log" 2>&1 ||
  { tail -40 "$work/mmdebstrap.log" >&2; echo "build-image: mmdebstrap failed (log above)" >&2; exit 3; }
rm -f "$cache/lock"
rm -rf "$cache/partial"

# The fabcheck layer: binary, profiles, deploy files, docs.
mkdir -p "$work/stage/usr/share/fabcheck" "$work/stage/usr/share/doc/fabcheck"
cp -r profiles "$work/stage/usr/share/fabcheck/profiles"
cp -r deploy/kubernetes deploy/prometheus deploy/grafana "$work/stage/usr/share/fabcheck/"
cp README.md "$work/stage/usr/share/doc/fabcheck/"
cp packaging/copyright "$work/stage/usr/share/doc/fabcheck/copyright"

step "umoci: two layers (Debian base, fabcheck)"
layout="$work/oci"
tag="$version"
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci insert --image "$layout:$tag" --history.created_by "mmdebstrap bookworm: ${libs[*]} ${extra[*]}" \
  "$work/rootfs" /
umoci insert --image "$layout:$tag" --history.created_by "fabcheck $version: /usr/bin/fabcheck, /usr/share/fabcheck" \
  "$work/stage" /
umoci config --image "$layout:$tag" \
  --config.entrypoint /usr/bin/fabcheck --config.cmd --help \
  --config.user 10001:10001 --config.workingdir / \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.label "org.opencontainers.image.title=fabcheck" \
  --config.label "org.opencontainers.image.version=$version" \
  --config.label "org.opencontainers.image.base.name=debian:bookworm" \
  --config.label "org.opencontainers.image.description=RDMA fabric checks for GPU clusters: agent, exporter, perf, doctor, k8s lint" \
  --history.created_by "fabcheck: entrypoint /usr/bin/fabcheck, user 10001"
umoci gc --layout "$layout"

# Name the image with a full reference, so podman load and ctr import give it
# the name localhost/fabcheck:VERSION (umoci's tags cannot hold '/').
digest="$(python3 - "$layout/index.json" "$name:$version" <<'EOF'
import json, sys
path, ref = sys.argv[1], sys.argv[2]
index = json.load(open(path))
if len(index["manifests"]) != 1:
    sys.exit("build-image: expected one manifest in index.json, found %d" % len(index["manifests"]))
m = index["manifests"][0]
m.setdefault("annotations", {})
m["annotations"]["org.opencontainers.image.ref.name"] = ref
m["annotations"]["io.containerd.image.name"] = ref
json.dump(index, open(path, "w"))
print(m["digest"])
EOF
)"
rm -f "$archive"
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$layout" -cf "$archive.partial" .
mv "$archive.partial" "$archive"
echo "$digest" >"$archive.digest"
(cd "$out" && sha256sum "$(basename "$archive")" >"$(basename "$archive").sha256")
echo "$name:$version@$digest" >"$archive.ref"

# deploy/kubernetes with the image pinned: kubectl apply -k BUILD_DIR/image
rel="$(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$repo/deploy/kubernetes" "$out")"
cat >"$out/kustomization.yaml" <<EOF
# Written by scripts/build-image.sh: deploy/kubernetes with the image it built.
# kubectl apply -k $out   (after loading the image on the nodes, or pushing it:
# then set newName to the registry's name).
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $rel
images:
  - name: localhost/fabcheck
    newName: $name
    digest: $digest
EOF

if [ "$keep_rootfs" = 1 ]; then
  rm -rf "$out/rootfs"
  mv "$work/rootfs" "$out/rootfs"
fi
size_mb="$(du -m "$archive" | awk '{print $1}')"
step "done: $archive ($size_mb MB, layers gzip-compressed)"
echo "image:  $archive"
echo "size:   $size_mb MB"
echo "digest: $digest"
echo "ref:    $name:$version@$digest"
