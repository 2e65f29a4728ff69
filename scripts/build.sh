#!/usr/bin/env bash
# Configures and builds fabcheck and its tests into BUILD_DIR (default: build),
# through ccache when it is installed (scripts/ccache-env.sh). Arguments go to
# cmake's configure step (test.sh passes -DFABCHECK_UNITY=ON: unity batches).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
. scripts/ccache-env.sh
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "${FABCHECK_CCACHE[@]}" "$@" >/dev/null
if grep -q '^FABCHECK_UNITY:BOOL=ON' "$build_dir/CMakeCache.txt"; then
  ./scripts/unity-build.sh "$build_dir"  # recovers from batches whose files clash
else
  cmake --build "$build_dir" -j "${JOBS:-$(nproc)}"
fi
