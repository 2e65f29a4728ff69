#!/usr/bin/env bash
# Builds the OCI image from BUILD_DIR (scripts/build-image.sh) and checks it as
# a user would get it: the archive is read by skopeo (as container engines
# read it), unpacked by umoci, and run by chroot as the image's user:
# `fabcheck version`, `inventory --sysroot` of a bundled capture (same output
# as the build tree's binary), `k8s lint` of the manifests it ships and of the
# set pinned to its digest; podman load (where installed) names it and keeps
# its digest. Every ELF in it must resolve its libraries; no
# compiler, header or -dev package; compressed size under 120 MB.
# Exit 77 (ctest: skipped) with the reason when a tool or root is missing.
set -euo pipefail
build_dir="$(cd "${1:?usage: check-image.sh BUILD_DIR}" && pwd)"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root (mmdebstrap's root mode and chroot)"
for tool in mmdebstrap umoci skopeo chroot python3; do
  command -v "$tool" >/dev/null || skip "$tool not installed (./scripts/install-deps.sh installs it)"
done
binary="$build_dir/src/app/fabcheck"
[ -x "$binary" ] || fail "$binary not built"

out="$(mktemp -d "$build_dir/check-image.XXXXXX")"
runroot=""
trap 'rm -rf "$out" ${runroot:+"$runroot"}' EXIT
t0=$SECONDS
"$repo/scripts/build-image.sh" --build-dir "$build_dir" --out "$out/image" | tee "$out/build.txt"
build_s=$((SECONDS - t0))
version="$("$binary" version | awk '{print $2}')"
archive="$out/image/fabcheck-$version.oci.tar"
[ -s "$archive" ] || fail "no archive $archive"
digest="$(cat "$archive.digest")"
[[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]] || fail "digest file holds '$digest'"
ref="$(cat "$archive.ref")"
[ "$ref" = "localhost/fabcheck:$version@$digest" ] || fail "ref file holds '$ref'"
(cd "$out/image" && sha256sum -c --quiet "$(basename "$archive").sha256") || fail "sha256 of the archive does not match"

# The archive as a container engine reads it; its manifest digest is the one printed.
skopeo inspect --raw "oci-archive:$archive" >"$out/manifest.json"
seen="sha256:$(sha256sum "$out/manifest.json" | awk '{print $1}')"
[ "$seen" = "$digest" ] || fail "skopeo reads manifest $seen, the build printed $digest"
skopeo copy --quiet "oci-archive:$archive" "oci:$out/layout:check"
umoci unpack --image "$out/layout:check" "$out/bundle" >/dev/null
rootfs="$out/bundle/rootfs"
python3 - "$out/bundle/config.json" <<'EOF' || fail "runtime config"
import json, sys
c = json.load(open(sys.argv[1]))["process"]
assert c["user"]["uid"] == 10001 and c["user"]["gid"] == 10001, c["user"]
assert c["args"][0] == "/usr/bin/fabcheck", c["args"]
print("config: user %d:%d, entrypoint %s" % (c["user"]["uid"], c["user"]["gid"], " ".join(c["args"])))
EOF

# Small, and nothing to build with.
size_mb=$(( $(stat -c %s "$archive") / 1000000 ))
[ "$size_mb" -lt 120 ] || fail "image is $size_mb MB, the goal is under 120 MB"
headers="$(find "$rootfs/usr/include" "$rootfs/usr/local/include" -mindepth 1 2>/dev/null | head -3)"
[ -z "$headers" ] || fail "headers in the image: $headers"
for cc in gcc cc c++ g++ clang ld as make cmake; do
  [ ! -e "$rootfs/usr/bin/$cc" ] || fail "/usr/bin/$cc is in the image"
done
dev="$(chroot "$rootfs" dpkg-query -W -f '${Package}\n' | grep -- '-dev$' || true)"
[ -z "$dev" ] || fail "development packages in the image: $dev"
for provider in mlx5 rxe; do
  [ -e "$rootfs/etc/libibverbs.d/$provider.driver" ] || fail "verbs provider $provider missing (ibverbs-providers)"
done
for tool in ib_write_bw ib_read_lat ibv_devinfo ibv_devices; do
  [ -x "$rootfs/usr/bin/$tool" ] || fail "$tool missing (perftest, ibverbs-utils)"
done

# Every ELF resolves its libraries with the image's own loader and libraries.
python3 - "$rootfs" >"$out/elves" <<'EOF'
import os, sys
root = sys.argv[1]
for top in ("usr", "etc", "opt"):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    print(p[len(root):])
EOF
elves=$(wc -l <"$out/elves")
[ "$elves" -gt 50 ] || fail "only $elves ELF files found in the image"
cp "$out/elves" "$rootfs/tmp/elves"
chroot "$rootfs" /bin/sh -c '
  bad=0
  while read -r f; do
    r=$(/lib64/ld-linux-x86-64.so.2 --list "$f" 2>&1) || true
    case "$r" in *"not found"*|*"error while loading shared libraries"*)
      echo "unresolved: $f: $(echo "$r" | grep "not found\|error while loading" | tr -s " \t" " ")"; bad=1 ;; esac
  done </tmp/elves
  exit $bad' || fail "ELF files with unresolved libraries (above)"
echo "elf: $elves ELF files, every library resolved"

# Run it as the image's user.
run() { chroot --userspec=10001:10001 "$rootfs" /usr/bin/fabcheck "$@"; }
[ "$(run version)" = "fabcheck $version" ] || fail "fabcheck version in the image: '$(run version)'"
capture="$repo/tests/data/captures/dgx-h100-example.tar.gz"
cp "$capture" "$rootfs/tmp/capture.tar.gz"
set +e
run inventory --sysroot /tmp/capture.tar.gz --json >"$out/inv-image.json"; rc_image=$?
"$binary" inventory --sysroot "$capture" --json >"$out/inv-build.json"; rc_build=$?
set -e
[ "$rc_image" = "$rc_build" ] || fail "inventory exit code $rc_image in the image, $rc_build from the build tree"
python3 - "$out/inv-image.json" "$out/inv-build.json" <<'EOF' || fail "inventory in the image differs from the build tree's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
def strip(d):
    # Where the capture was read from differs (/tmp in the image); all else must match.
    if isinstance(d, dict):
        return {k: strip(v) for k, v in d.items() if k not in ("sysroot", "source", "path")}
    if isinstance(d, list):
        return [strip(x) for x in d]
    return d
assert a.get("schema", "").startswith("fabcheck.inventory/"), a.get("schema")
assert strip(a) == strip(b), "outputs differ"
assert len(a["rdma_devices"]) > 0 and len(a["gpus"]) > 0, "the capture shows no RDMA device or GPU"
print("inventory: schema %s, %d RDMA devices, %d GPUs, same as the build tree" % (a["schema"], len(a["rdma_devices"]), len(a["gpus"])))
EOF
# The shipped set names the image by tag (its digest is set at deploy time, by
# the build's kustomization.yaml or `k8s render --image`): k8s.image.unpinned
# warnings (exit 1) are expected there; anything else fails.
rc=0
run k8s lint /usr/share/fabcheck/kubernetes >"$out/lint.txt" || rc=$?
if [ "$rc" != 0 ] && { [ "$rc" != 1 ] || [ -n "$(grep -E '^ +(warning|error) ' "$out/lint.txt" | grep -v 'k8s.image.unpinned' || true)" ]; }; then
  cat "$out/lint.txt"; fail "k8s lint of /usr/share/fabcheck/kubernetes in the image (exit $rc)"
fi
tail -1 "$out/lint.txt"
# The shipped set pinned to this image's digest (what kubectl apply -k of the
# build's kustomization does), and a rendered set with --image: both clean.
mkdir -p "$rootfs/tmp/pinned"
for f in "$rootfs"/usr/share/fabcheck/kubernetes/*.yaml; do
  sed "s#image: localhost/fabcheck:$version#image: localhost/fabcheck@$digest#" "$f" >"$rootfs/tmp/pinned/$(basename "$f")"
done
grep -q "image: localhost/fabcheck@$digest" "$rootfs/tmp/pinned/agent-daemonset.yaml" || fail "deploy/kubernetes/agent-daemonset.yaml does not use localhost/fabcheck:$version"
run k8s lint /tmp/pinned >"$out/lint.txt" || { cat "$out/lint.txt"; fail "k8s lint of the pinned deploy set"; }
run k8s render --cluster-profile /usr/share/fabcheck/kubernetes/render-examples/sriov-roce/profile.yaml --image "$ref" \
  >"$rootfs/tmp/rendered.yaml" 2>"$out/render.err" || { cat "$out/render.err"; fail "k8s render --image in the image"; }
[ "$(grep -c "image: $ref" "$rootfs/tmp/rendered.yaml")" -ge 2 ] || fail "rendered manifests do not carry --image $ref"
! grep -q "not pinned" "$out/render.err" || fail "render warned about a pinned image: $(cat "$out/render.err")"
run k8s lint /tmp/rendered.yaml >"$out/lint.txt" || { cat "$out/lint.txt"; fail "k8s lint of the rendered set"; }
grep -q "localhost/fabcheck" "$out/image/kustomization.yaml" && grep -q "digest: $digest" "$out/image/kustomization.yaml" ||
  fail "kustomization.yaml does not pin $digest"
# podman, where installed: the archive loads under its name with the same
# digest. (It ran above through chroot: podman run needs setrlimit and
# namespaces a sandboxed test machine may refuse.)
if command -v podman >/dev/null; then
  runroot="$(mktemp -d /tmp/fabcheck-podman.XXXXXX)"   # podman wants a short run root
  storage=(--root "$out/podman-storage" --runroot "$runroot" --storage-driver vfs)
  podman "${storage[@]}" load -q -i "$archive" >"$out/podman.txt" 2>&1 || { cat "$out/podman.txt"; fail "podman load"; }
  loaded="$(podman "${storage[@]}" image inspect "localhost/fabcheck:$version" --format '{{.Digest}}')" ||
    fail "podman load did not name the image localhost/fabcheck:$version: $(cat "$out/podman.txt")"
  [ "$loaded" = "$digest" ] || fail "podman sees digest $loaded, the build printed $digest"
  echo "podman: loaded as localhost/fabcheck:$version, digest $loaded"
else
  echo "note: podman not installed: the image was checked through skopeo, umoci and chroot only"
fi
echo "PASS: image $archive: $size_mb MB compressed ($(du -sm "$rootfs" | awk '{print $1}') MB unpacked), digest $digest, built in ${build_s}s, checked in $((SECONDS - t0 - build_s))s"
