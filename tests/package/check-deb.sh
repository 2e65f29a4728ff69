#!/usr/bin/env bash
# Builds the Debian package from BUILD_DIR (scripts/build-deb.sh) and checks
# it: contents, Depends from dpkg-shlibdeps, lintian, `systemd-analyze verify`
# of its units, installation into a clean Debian 12 root (mmdebstrap, then
# apt-get install ./fabcheck_*.deb there) where it runs, purge; and that the
# agent and the exporter run the way the units start them: a non-root user,
# no capability at all, no new privileges.
# Exit 77 (ctest: skipped) with the reason when a tool or root is missing.
set -euo pipefail
build_dir="$(cd "${1:?usage: check-deb.sh BUILD_DIR}" && pwd)"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root (mmdebstrap's root mode, chroot, setpriv)"
for tool in cpack help2man lintian mmdebstrap dpkg-deb systemd-analyze setpriv curl python3; do
  command -v "$tool" >/dev/null || skip "$tool not installed (./scripts/install-deps.sh installs it)"
done
binary="$build_dir/src/app/fabcheck"
[ -x "$binary" ] || fail "$binary not built"
version="$("$binary" version | awk '{print $2}')"

out="$(mktemp -d "$build_dir/check-deb.XXXXXX")"
agent_pid=""
cleanup() {
  [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null
  rm -rf "$out"
}
trap cleanup EXIT
t0=$SECONDS
"$repo/scripts/build-deb.sh" --build-dir "$build_dir"
deb_s=$((SECONDS - t0))
deb="$(ls "$build_dir"/package/fabcheck_"$version"_*.deb)"

# Contents.
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's#^\./#/#' >"$out/files"
for f in /usr/bin/fabcheck /usr/share/man/man1/fabcheck.1.gz /usr/share/doc/fabcheck/copyright \
         /usr/share/doc/fabcheck/changelog.gz /usr/share/doc/fabcheck/README.md /usr/share/doc/fabcheck/docs/exporter.md \
         /usr/share/fabcheck/prometheus/fabcheck-rules.yaml /usr/share/fabcheck/grafana/fabcheck-rdma-dashboard.json \
         /usr/share/fabcheck/kubernetes/agent-daemonset.yaml /usr/share/fabcheck/profiles/ \
         /usr/share/fabcheck/kv-models/llama-3-70b.json \
         /lib/systemd/system/fabcheck-agent.service /lib/systemd/system/fabcheck-exporter.service \
         /etc/fabcheck/agent.conf /etc/fabcheck/exporter.conf; do
  grep -qxF "$f" "$out/files" || fail "$f is not in the package"
done
! grep -q '^/usr/lib/.*\.a$\|^/usr/include' "$out/files" || fail "static libraries or headers in the package"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -qx /etc/fabcheck/agent.conf || fail "agent.conf is not a conffile"
depends="$(dpkg-deb -f "$deb" Depends)"
computed="$("$repo/scripts/runtime-deps.sh" --depends "$binary")"
[ "$depends" = "$computed" ] || fail "Depends '$depends' is not what dpkg-shlibdeps computes: '$computed'"
for lib in libibverbs1 librdmacm1 libc6; do
  [[ "$depends" == *"$lib "* ]] || fail "Depends lacks $lib: $depends"
done
# (Read whole first: with pipefail, grep -q leaving early fails zcat with SIGPIPE once the page is long.)
zcat "$build_dir/package/fabcheck.1.gz" >"$out/man.txt" 2>/dev/null || fail "the man page is not a gzip file"
grep -q 'fabcheck k8s lint' "$out/man.txt" || fail "the man page lacks the commands' help"
echo "contents: $(wc -l <"$out/files") entries; Depends: $depends"

# lintian: no error, no warning (the shipped overrides say why each override is right).
lintian --fail-on error,warning --display-info "$deb" | tee "$out/lintian.txt" || fail "lintian (above)"
echo "lintian: $(grep -c '^[EW]:' "$out/lintian.txt" || true) errors or warnings, $(grep -c '^I:' "$out/lintian.txt" || true) notes"

# A clean Debian 12 root with apt (and systemd, as on a node), the package installed the way users do;
# its units verified there.
cache="$build_dir/image-cache/debs"
mkdir -p "$cache"
cp "$deb" "$out/"
t1=$SECONDS
mmdebstrap --variant=apt --format=directory --quiet \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --skip=essential/unlink \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
  --setup-hook="sync-in $cache /var/cache/apt/archives/" \
  --customize-hook="copy-in $out/$(basename "$deb") /tmp" \
  --customize-hook="chroot \"\$1\" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /tmp/$(basename "$deb") systemd" \
  --customize-hook="sync-out /var/cache/apt/archives $cache" \
  --customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
  bookworm "$out/root" \
  "deb http://deb.debian.org/debian bookworm main" "deb http://deb.debian.org/debian bookworm-updates main" \
  "deb http://deb.debian.org/debian-security bookworm-security main" </dev/null >"$out/mmdebstrap.log" 2>&1 ||
  { tail -30 "$out/mmdebstrap.log"; fail "mmdebstrap + apt-get install ./$(basename "$deb")"; }
rm -f "$cache/lock"; rm -rf "$cache/partial"
install_s=$((SECONDS - t1))
root="$out/root"
[ "$(chroot "$root" fabcheck version)" = "fabcheck $version" ] || fail "fabcheck version in the clean root"
cp "$repo/tests/data/captures/dgx-h100-example.tar.gz" "$root/tmp/"
chroot "$root" fabcheck inventory --sysroot /tmp/dgx-h100-example.tar.gz >"$out/inv.txt" || [ $? -le 2 ] ||
  fail "fabcheck inventory in the clean root"
# The shipped manifests name the image by tag (the digest is set at deploy
# time): k8s.image.unpinned warnings (exit 1) are expected, anything else fails.
rc=0
chroot "$root" fabcheck k8s lint /usr/share/fabcheck/kubernetes >"$out/lint.txt" || rc=$?
if [ "$rc" != 0 ] && { [ "$rc" != 1 ] || [ -n "$(grep -E '^ +(warning|error) ' "$out/lint.txt" | grep -v 'k8s.image.unpinned' || true)" ]; }; then
  cat "$out/lint.txt"; fail "k8s lint of /usr/share/fabcheck/kubernetes (exit $rc)"
fi
chroot "$root" fabcheck doctor --help >/dev/null || fail "fabcheck doctor --help in the clean root"
chroot "$root" fabcheck kv size --model /usr/share/fabcheck/kv-models/llama-3-70b.json --json | grep -q '"page_bytes": 65536' ||
  fail "fabcheck kv size on the installed Llama-3-70B preset"
systemd-analyze verify --root="$root" --man=no fabcheck-agent.service fabcheck-exporter.service 2>&1 | tee "$out/verify.txt"
[ ! -s "$out/verify.txt" ] || fail "systemd-analyze verify complained (above)"
# The man page is checked here rather than by verify's man lookup (no man-db in the root).
[ -s "$root/usr/share/man/man1/fabcheck.1.gz" ] || fail "man page not installed"
chroot "$root" dpkg --purge fabcheck >/dev/null
[ ! -e "$root/usr/bin/fabcheck" ] && [ ! -e "$root/etc/fabcheck" ] || fail "purge left files behind"
echo "clean root: installed with apt-get, ran version/inventory/k8s lint, units verified, purged (${install_s}s)"

# The units' least privilege, exercised: as an unprivileged user with an empty
# capability bounding set and no_new_privs, as systemd starts them
# (DynamicUser, CapabilityBoundingSet=, NoNewPrivileges=yes).
unpriv=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs)
"${unpriv[@]}" "$binary" exporter --once --kubelet-socket=none >"$out/metrics.txt" 2>"$out/exporter.err" ||
  { cat "$out/exporter.err"; fail "the exporter as nobody without capabilities"; }
grep -q '^fabcheck_exporter_' "$out/metrics.txt" || fail "no exporter metrics as nobody"
echo "exporter: one scrape as nobody, no capabilities: $(grep -c '^fabcheck_' "$out/metrics.txt") samples"
token="$out/token"
python3 -c 'import secrets; print(secrets.token_hex(32))' >"$token"
chown 65534:65534 "$token"; chmod 0400 "$token"
chmod 0755 "$out"
port=$((20000 + RANDOM % 20000))
"${unpriv[@]}" "$binary" agent --listen "127.0.0.1:$port" --perf-port 0 --token-file "$token" 2>"$out/agent.err" &
agent_pid=$!
for _ in $(seq 50); do curl -sf -m 2 "http://127.0.0.1:$port/v1/health" >/dev/null && break; sleep 0.2; done
curl -sf -m 5 "http://127.0.0.1:$port/v1/health" >/dev/null || { cat "$out/agent.err"; fail "agent as nobody: no health answer"; }
curl -sf -m 10 -H "Authorization: Bearer $(cat "$token")" "http://127.0.0.1:$port/v1/inventory" >"$out/inventory.json" ||
  { cat "$out/agent.err"; fail "agent as nobody: /v1/inventory with the token"; }
capeff="$(awk '/^CapEff/{print $2}' /proc/"$agent_pid"/status)"
[ "$capeff" = "0000000000000000" ] || fail "the agent runs with capabilities $capeff"
kill "$agent_pid"; wait "$agent_pid" 2>/dev/null || true; agent_pid=""
echo "agent: served health and inventory as nobody, CapEff $capeff"
echo "PASS: $deb ($(du -k "$deb" | awk '{print $1}') KiB), package built in ${deb_s}s, clean-root install ${install_s}s"
