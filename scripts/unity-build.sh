#!/usr/bin/env bash
# Builds a tree configured with FABCHECK_UNITY=ON (scripts/build.sh,
# sanitize.sh): cmake --build DIR [TARGETS...].
#
# A unity batch compiles up to 16 files of one target as one; two files that
# define the same name in their anonymous namespaces (or a macro one of them
# leaks) do not compile together although each compiles alone. When batches
# fail, the files named in their errors are compiled on their own
# (FABCHECK_UNITY_SKIP, a CMake list kept in DIR's cache) and the build runs
# again, at most five times (then file by file, FABCHECK_UNITY=OFF); a file
# that fails on its own too is a compile error, and fails the build. Files listed in cmake/unity-skip.txt are known
# to clash and always compiled on their own.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$1"
shift
targets=()
[ $# -gt 0 ] && targets=(--target "$@")
log="$dir/unity-build.log"
root="$PWD"
for attempt in 1 2 3 4 5 6; do
  if [ "$attempt" = 6 ]; then
    echo "unity-build: WARNING: batches still clash after five rounds; building file by file" >&2
    cmake "$dir" -DFABCHECK_UNITY=OFF >/dev/null
    exec cmake --build "$dir" -j "${JOBS:-$(nproc)}" "${targets[@]}"
  fi
  # -k 0: every failing batch in one pass.
  if cmake --build "$dir" -j "${JOBS:-$(nproc)}" "${targets[@]}" -- -k 0 2>&1 | tee "$log"; then
    exit 0
  fi
  # The files a failed batch's errors and notes are in (line N of
  # unity_K_cxx.cxx includes one source).
  mapfile -t clashing < <(grep -o '[^ ]*/Unity/unity_[0-9]*_cxx\.cxx:[0-9]*' "$log" | sort -u |
    while IFS=: read -r unity line; do
      [[ "$unity" = /* ]] || unity="$dir/$unity"  # ccache's base dir makes paths relative to DIR
      sed -n "${line}p" "$unity" | sed -n 's/^#include "\(.*\)"$/\1/p'
    done | sed "s|^$root/||" | sort -u)
  if [ ${#clashing[@]} -eq 0 ]; then
    exit 1  # not a unity batch: a compile or link error
  fi
  previous=$(sed -n 's/^FABCHECK_UNITY_SKIP:[A-Z]*=//p' "$dir/CMakeCache.txt")
  skip=$( (tr ';' '\n' <<<"$previous"; printf '%s\n' "${clashing[@]}") | awk 'NF && !seen[$0]++' | paste -sd';')
  if [ "$skip" = "$previous" ]; then
    exit 1  # the same files again: they fail on their own
  fi
  echo "unity-build: WARNING: these files clash with another file of their target in a unity batch and are" \
       "now compiled on their own (rename the clashing names, or list them in cmake/unity-skip.txt): ${clashing[*]}" >&2
  cmake "$dir" -DFABCHECK_UNITY_SKIP="$skip" >/dev/null
done
