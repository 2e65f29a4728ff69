#!/usr/bin/env bash
# Builds the Debian package fabcheck_VERSION_ARCH.deb from the build tree with
# cpack -G DEB, reusing the binary already built there (nothing is compiled):
# installs the tree into a staging folder (cmake --install, stripped), adds the
# man page (help2man from every command's --help) and the changelog, and lets
# cpack compute Depends with dpkg-shlibdeps.
#
#   ./scripts/build.sh && ./scripts/build-deb.sh        # -> build/package/fabcheck_0.1.0_amd64.deb
#   sudo apt-get install ./build/package/fabcheck_*.deb
set -euo pipefail
umask 022
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    -h|--help) echo "usage: scripts/build-deb.sh [--build-dir DIR]   (default: \$BUILD_DIR or build)"; exit 0 ;;
    *) echo "build-deb: unknown argument '$1'" >&2; exit 64 ;;
  esac
done
build_dir_abs="$(cd "$build_dir" 2>/dev/null && pwd)" || { echo "build-deb: no build tree '$build_dir' (run ./scripts/build.sh first)" >&2; exit 3; }
build_dir="$build_dir_abs"
binary="$build_dir/src/app/fabcheck"
[ -x "$binary" ] || { echo "build-deb: $binary not built (run ./scripts/build.sh, or cmake --build $build_dir --target fabcheck)" >&2; exit 3; }
[ -f "$build_dir/CPackConfig.cmake" ] || { echo "build-deb: $build_dir/CPackConfig.cmake missing (re-run cmake on $build_dir)" >&2; exit 3; }
for tool in cpack help2man dpkg-shlibdeps gzip python3; do
  command -v "$tool" >/dev/null || { echo "build-deb: $tool not found (apt-get install cmake help2man dpkg-dev gzip python3)" >&2; exit 3; }
done

version="$("$binary" version | awk '{print $2}')"
out="$build_dir/package"
mkdir -p "$out"
# One date for the changelog and the man page: the last commit's, so two
# builds of one commit give the same files.
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
export SOURCE_DATE_EPOCH="$epoch"

echo "build-deb: man page (help2man)" >&2
scripts/make-manpage.py "$binary" "$version" "$out/fabcheck.1"
gzip -9n -f "$out/fabcheck.1"

maintainer="$(sed -n 's/^CPACK_PACKAGE_CONTACT:STRING=//p;s/^FABCHECK_PACKAGE_MAINTAINER:STRING=//p' "$build_dir/CMakeCache.txt" | head -1)"
cat >"$out/changelog" <<EOF
fabcheck ($version) unstable; urgency=medium

  * fabcheck $version, built from $(git rev-parse --short HEAD 2>/dev/null || echo "a source tree").
    The changes are in the project's history (git log).

 -- $maintainer  $(date -u -R -d "@$epoch")
EOF
gzip -9n -f "$out/changelog"

stage="$out/stage"
rm -rf "$stage"
echo "build-deb: staging (cmake --install --strip)" >&2
DESTDIR="$stage" cmake --install "$build_dir" --prefix /usr --strip >/dev/null
[ -x "$stage/usr/bin/fabcheck" ] || { echo "build-deb: cmake --install put no usr/bin/fabcheck into $stage" >&2; exit 3; }
# Debian policy: directories 0755, documentation and data 0644.
find "$stage" -type d -exec chmod 0755 {} +
find "$stage" -type f ! -path '*/usr/bin/*' -exec chmod 0644 {} +
# ...except the Slurm scripts, which sites run as they are (sbatch, Prolog/Epilog).
find "$stage/usr/share/fabcheck/slurm" -type f -exec chmod 0755 {} +

echo "build-deb: cpack -G DEB" >&2
rm -f "$out"/fabcheck_*.deb
(cd "$out" && cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$out" \
   -D CPACK_INSTALL_CMAKE_PROJECTS= -D "CPACK_INSTALLED_DIRECTORIES=$stage;/" \
   -D CPACK_PACKAGING_INSTALL_PREFIX=/ >"$out/cpack.log" 2>&1) || { cat "$out/cpack.log" >&2; exit 3; }
rm -rf "$out/_CPack_Packages"
deb="$(ls "$out"/fabcheck_*.deb)"
echo "deb:     $deb ($(du -k "$deb" | awk '{print $1}') KiB)"
echo "depends: $(dpkg-deb -f "$deb" Depends)"
