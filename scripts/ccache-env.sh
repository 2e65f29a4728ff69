# shellcheck shell=bash
# Sourced by the build scripts (build.sh, sanitize.sh, fuzz.sh, test.sh) from
# the repository root: every build goes through ccache when it is installed,
# with settings that let a fresh clone in another folder hit the cache that an
# earlier clone filled (docs/testing.md, "Compiler cache"):
# - paths under the repository root are hashed relative to it (base dir), and
#   the working directory is not hashed; the debug info's paths are mapped to
#   "." (CMakeLists.txt: FABCHECK_RELATIVE_PATHS), so the objects do not differ;
# - precompiled headers are cached (pch_defines, time_macros).
# The cache lives outside the tree: CCACHE_DIR, or ccache's own default
# (~/.cache/ccache, or cache_dir in its configuration).
# Sets FABCHECK_CCACHE to the CMake arguments that enable it (empty without).
FABCHECK_CCACHE=()
if command -v ccache >/dev/null && [ "${FABCHECK_NO_CCACHE:-0}" != 1 ]; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  export CCACHE_NOHASHDIR=1
  export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
  FABCHECK_CCACHE=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DFABCHECK_RELATIVE_PATHS=ON)
fi
