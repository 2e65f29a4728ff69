#!/usr/bin/env bash
# Builds fabcheck and its tests with sanitizers and runs the tests under them:
#
#   scripts/sanitize.sh asan   ASan + UBSan (gcc): the unit and netns tests
#   scripts/sanitize.sh tsan   TSan (gcc): the tests of the threaded parts (the
#                              HTTP service, the agent, the perf server, the
#                              sweep coordinator, the rendezvous, the exporter)
#
# A finding fails the run. Suppressions live in scripts/sanitizers/, each with
# the reason it is not a fabcheck bug. Build dirs: build-asan, build-tsan
# (SANITIZE_DIR overrides). SANITIZE_STEP=build only builds, SANITIZE_STEP=test
# only runs the tests of an earlier build (test.sh times them apart).
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-asan}"
shift || true
supp="$PWD/scripts/sanitizers"
case "$mode" in
  asan)
    flags="address,undefined"
    dir="${SANITIZE_DIR:-build-asan}"
    labels="unit|netns"
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
    ;;
  tsan)
    flags="thread"
    dir="${SANITIZE_DIR:-build-tsan}"
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
    ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan [ctest arguments]" >&2
    exit 64
    ;;
esac

# TSan covers the suites of the threaded code only: its 5-15x slowdown on
# every other test buys nothing there.
tsan_targets=(net_test control_test agent_test sweep_test coll_test telemetry_serving_test)
step="${SANITIZE_STEP:-all}"
case "$step" in all | build | test) ;; *) echo "sanitize: SANITIZE_STEP must be all, build or test" >&2; exit 64 ;; esac
. scripts/ccache-env.sh
# ASan at -O0 compiles a third faster than at -O1 (the build is most of this
# stage's time; the tests wait on sockets more than they compute). TSan
# needs -O1 to run at a usable speed.
opt="-O0 -g1"
[ "$mode" = tsan ] && opt="-O1 -g1"
# Unity batches (CMakeLists.txt: FABCHECK_UNITY) compile the heavy headers'
# templates once per 16 files; FABCHECK_UNITY=OFF builds file by file.
unity="${FABCHECK_UNITY:-ON}"
if [ "$step" != test ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="$opt" \
    -DFABCHECK_SANITIZE="$flags" -DFABCHECK_UNITY="$unity" "${FABCHECK_CCACHE[@]}" >/dev/null
fi
built=()
if [ "$mode" = tsan ]; then
  # Read whole: grep -q would stop early and, under pipefail, fail the pipe.
  targets_known=$(cmake --build "$dir" --target help)
  for t in "${tsan_targets[@]}"; do
    if grep -q "^$t:" <<<"$targets_known"; then built+=("$t"); fi
  done
fi
if [ "$step" != test ]; then
  start=$(date +%s)
  if [ "$mode" = tsan ]; then
    target_args=("${built[@]}")
  else
    target_args=()
  fi
  if [ "$unity" = ON ]; then
    ./scripts/unity-build.sh "$dir" "${target_args[@]}"  # recovers from batches whose files clash
  elif [ ${#target_args[@]} -gt 0 ]; then
    cmake --build "$dir" -j "${JOBS:-$(nproc)}" --target "${target_args[@]}"
  else
    cmake --build "$dir" -j "${JOBS:-$(nproc)}"
  fi
  echo "sanitize $mode: built in $(( $(date +%s) - start )) s"
  [ "$step" = build ] && exit 0
fi
start=$(date +%s)
if [ "$mode" = tsan ]; then
  # The built suites' executables, each on its own (ctest would also list the
  # suites not built here, and the script tests that need the binary).
  failed=()
  for t in "${built[@]}"; do
    exe=$(find "$dir/tests" -name "$t" -type f -perm -u+x | head -1)
    echo "sanitize tsan: $t"
    "$exe" --gtest_brief=1 "$@" || failed+=("$t")
  done
  echo "sanitize tsan: tests ran in $(( $(date +%s) - start )) s"
  if [ ${#failed[@]} -gt 0 ]; then
    echo "sanitize tsan: FAILED: ${failed[*]}" >&2
    exit 1
  fi
  exit 0
fi
cd "$dir"
# Executables not built here are listed by ctest as <target>_NOT_BUILT.
ctest --output-on-failure --timeout 900 -j "$(nproc)" -L "$labels" -E '_NOT_BUILT$' "$@"
echo "sanitize $mode: tests ran in $(( $(date +%s) - start )) s"
