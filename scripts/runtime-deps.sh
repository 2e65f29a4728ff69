#!/usr/bin/env bash
# Prints the Debian packages that hold the shared libraries an ELF binary links,
# one per line, as dpkg-shlibdeps computes them (the same computation that
# fills the .deb's Depends). The image build installs exactly these.
#   scripts/runtime-deps.sh build/src/app/fabcheck
#   scripts/runtime-deps.sh --depends build/src/app/fabcheck   # the Depends line, with versions
set -euo pipefail
mode=names
if [ "${1:-}" = "--depends" ]; then mode=depends; shift; fi
if [ $# -lt 1 ]; then
  echo "usage: $0 [--depends] ELF..." >&2
  exit 64
fi
command -v dpkg-shlibdeps >/dev/null || { echo "runtime-deps: dpkg-shlibdeps not found (apt-get install dpkg-dev)" >&2; exit 3; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debian/fabcheck/usr/bin"
# dpkg-shlibdeps wants a debian/control and binaries inside the package tree.
printf 'Source: fabcheck\n\nPackage: fabcheck\nArchitecture: any\n' >"$work/debian/control"
bins=()
for f in "$@"; do
  [ -r "$f" ] || { echo "runtime-deps: cannot read $f" >&2; exit 3; }
  cp "$f" "$work/debian/fabcheck/usr/bin/"
  bins+=("debian/fabcheck/usr/bin/$(basename "$f")")
done
line="$(cd "$work" && dpkg-shlibdeps -O "${bins[@]}" 2>"$work/err")" || { cat "$work/err" >&2; exit 3; }
depends="${line#shlibs:Depends=}"
if [ "$mode" = depends ]; then
  echo "$depends"
  exit 0
fi
# "libc6 (>= 2.34), liba1 | libb1, ..." -> the first package of each alternative.
tr ',' '\n' <<<"$depends" | sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' | awk 'NF' | sort -u
