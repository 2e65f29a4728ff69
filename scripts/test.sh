#!/usr/bin/env bash
# The test command: installs the Debian packages, builds from scratch and runs
# every test (unit, netns end-to-end as root, the soft-RoCE lab when possible,
# packaging), then the threaded suites under TSan and the unit and netns tests
# under ASan + UBSan (scripts/sanitize.sh), and every fuzz target briefly
# (scripts/fuzz.sh). Tests that need root, hardware or qemu skip with a printed
# reason. Arguments are passed to each ctest run of the normal build.
#
# Each stage is timed (wall and CPU seconds of everything it ran) and a table
# of the stages is printed at the end, also when a stage fails: the first
# failing stage stops the run, the later ones are listed as not run, and the
# exit status is the failing stage's. Each stage has a share of the budget
# (docs/testing.md): 45 minutes on a fresh 2-core machine with an empty
# compiler cache (FABCHECK_BUDGET=cold, the default, what CI is), 15 minutes
# after a one-file change (FABCHECK_BUDGET=warm). A stage over its share
# prints an OVERRUN line; an overrun does not fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
export BUILD_DIR="${BUILD_DIR:-build-test}"

budget_kind="${FABCHECK_BUDGET:-cold}"
case "$budget_kind" in
  cold) budget_total=2700 ;;
  warm) budget_total=900 ;;
  *) echo "test.sh: FABCHECK_BUDGET must be cold or warm, not '$budget_kind'" >&2; exit 64 ;;
esac
# Each stage's share of the budget, in seconds: "name cold warm". The builds
# take most of a cold run and little of a warm one (ccache); the tests, the
# lab and the fuzz runs cost the same every time. The lab (docs/lab.md: one VM
# 138-197 s, two VMs 231 s) and the packaging (docs/packaging.md: 279 s cold,
# 306 s warm) alone are most of the warm budget.
stage_budgets="
install 30 5
build 660 45
unit 200 100
netns 120 60
lab 450 330
package 280 200
tsan-build 150 10
tsan-tests 60 30
asan-build 330 20
asan-tests 150 60
fuzz-build 200 5
fuzz-run 70 35
"
budget_of() {
  awk -v s="$1" -v k="$budget_kind" '$1 == s {print (k == "cold") ? $2 : $3}' <<<"$stage_budgets"
}

clk_tck=$(getconf CLK_TCK)
# CPU time of this shell's waited-for children (and theirs), in clock ticks.
children_cpu_ticks() {
  local stat
  stat=$(</proc/$$/stat)
  stat=${stat##*) }  # the fields after the command name
  # shellcheck disable=SC2086
  set -- $stat
  echo $(( ${14} + ${15} ))  # cutime + cstime (fields 16 and 17 of stat)
}

names=() walls=() cpus=() results=()
run_start=$(date +%s.%N)
failed_rc=0

# stage NAME COMMAND...: runs COMMAND unless an earlier stage failed.
stage() {
  local name="$1"
  shift
  if [ "$failed_rc" != 0 ]; then
    names+=("$name") walls+=("-") cpus+=("-") results+=("not run")
    return 0
  fi
  echo "=== stage $name: $*"
  local t0 c0 t1 c1 rc=0
  t0=$(date +%s.%N)
  c0=$(children_cpu_ticks)
  "$@" || rc=$?
  t1=$(date +%s.%N)
  c1=$(children_cpu_ticks)
  local wall cpu
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", b - a}')
  cpu=$(awk -v a="$c0" -v b="$c1" -v h="$clk_tck" 'BEGIN {printf "%.0f", (b - a) / h}')
  names+=("$name") walls+=("$wall") cpus+=("$cpu")
  if [ "$rc" = 0 ]; then results+=("ok"); else results+=("FAILED ($rc)"); failed_rc=$rc; fi
  echo "=== stage $name: ${results[-1]}, ${wall} s wall, ${cpu} s CPU"
}

print_table() {
  local total_wall total_cpu i budget
  total_wall=$(awk -v a="$run_start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.0f", b - a}')
  total_cpu=0
  echo
  echo "=== test.sh stages ($budget_kind budget: $budget_total s; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg))"
  printf '%-12s %8s %8s %8s  %s\n' stage wall_s cpu_s budget_s result
  for i in "${!names[@]}"; do
    budget=$(budget_of "${names[$i]}")
    printf '%-12s %8s %8s %8s  %s\n' "${names[$i]}" "${walls[$i]}" "${cpus[$i]}" "${budget:--}" "${results[$i]}"
    [ "${cpus[$i]}" != "-" ] && total_cpu=$((total_cpu + cpus[i]))
  done
  printf '%-12s %8s %8s %8s  %s\n' total "$total_wall" "$total_cpu" "$budget_total" \
    "$([ "$failed_rc" = 0 ] && echo ok || echo "FAILED ($failed_rc)")"
  for i in "${!names[@]}"; do
    budget=$(budget_of "${names[$i]}")
    if [ -n "$budget" ] && [ "${walls[$i]}" != "-" ] && [ "${walls[$i]}" -gt "$budget" ]; then
      echo "OVERRUN: stage ${names[$i]} took ${walls[$i]} s wall, its $budget_kind share is $budget s"
    fi
  done
  if [ "$total_wall" -gt "$budget_total" ]; then
    echo "OVERRUN: the run took $total_wall s wall, the $budget_kind budget is $budget_total s"
  fi
}

# From scratch, except the Debian packages the packaging tests download
# (BUILD_DIR/image-cache): a clean checkout (CI) downloads them once per run.
# Debug info is line tables only (-g1: backtraces, gdb's lines; the packages
# are stripped anyway): full -g doubles the compile time at -O2 with the
# variable tracking no test reads. Unity batches (FABCHECK_UNITY=ON, the
# default; docs/testing.md) compile the heavy headers' templates once per 16
# files; files that clash in a batch are compiled on their own, with a
# warning (scripts/unity-build.sh).
clean_build_dir() {
  if [ -d "$BUILD_DIR" ]; then
    find "$BUILD_DIR" -mindepth 1 -maxdepth 1 ! -name image-cache -exec rm -rf {} +
  fi
  ./scripts/build.sh -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DFABCHECK_UNITY="${FABCHECK_UNITY:-ON}"
}
# ctest_group LABEL-REGEX [ctest arguments]: the normal build's tests of
# those labels (ctest -L), as one ctest run.
ctest_group() {
  local labels="$1"
  shift
  (cd "$BUILD_DIR" && ctest --output-on-failure --timeout 900 -j "$(nproc)" -L "$labels" "$@")
}
# Every test carries one of the labels below (fabcheck_test defaults to
# "unit"); one without would run in none of the groups, so it fails the run.
check_labels() {
  local unlabelled
  unlabelled=$(cd "$BUILD_DIR" && ctest -N -LE '^(unit|netns|lab|package)$' | awk '/^Total Tests:/ {print $3}')
  if [ "${unlabelled:-0}" != 0 ]; then
    echo "test.sh: $unlabelled tests carry none of the labels unit, netns, lab, package; they would not run:" >&2
    (cd "$BUILD_DIR" && ctest -N -LE '^(unit|netns|lab|package)$') >&2
    return 1
  fi
  echo "test.sh: $(cd "$BUILD_DIR" && ctest -N | awk '/^Total Tests:/ {print $3}') tests in the normal build"
}

trap 'print_table' EXIT
stage install ./scripts/install-deps.sh
stage build clean_build_dir
stage labels check_labels
stage unit ctest_group '^unit$' "$@"
stage netns ctest_group '^netns$' "$@"
stage lab ctest_group '^lab$' "$@"
stage package ctest_group '^package$' "$@"
# The sanitizer stages (scripts/sanitize.sh; FABCHECK_SANITIZERS=0 skips
# them): the threaded suites (HTTP service, agent server, sweep coordinator,
# rendezvous, exporter) under TSan, then every unit and netns test under
# ASan + UBSan. A data race, a memory error, a leak or undefined behaviour
# fails the run.
if [ "${FABCHECK_SANITIZERS:-1}" != 0 ]; then
  stage tsan-build env SANITIZE_DIR="$BUILD_DIR/tsan" SANITIZE_STEP=build ./scripts/sanitize.sh tsan
  stage tsan-tests env SANITIZE_DIR="$BUILD_DIR/tsan" SANITIZE_STEP=test ./scripts/sanitize.sh tsan
  stage asan-build env SANITIZE_DIR="$BUILD_DIR/asan" SANITIZE_STEP=build ./scripts/sanitize.sh asan
  stage asan-tests env SANITIZE_DIR="$BUILD_DIR/asan" SANITIZE_STEP=test ./scripts/sanitize.sh asan
fi
# The fuzz stage: each libFuzzer target of fuzz/ for a few seconds on every
# change (clang build included; FABCHECK_FUZZ=0 skips it, bench/fuzz.sh is the
# long run). A target that does not build fails the build stage; the run
# stage still runs those that built, and fails too.
if [ "${FABCHECK_FUZZ:-1}" != 0 ]; then
  fuzz_dir="${FUZZ_DIR:-build-fuzz-test}"
  stage fuzz-build env FUZZ_DIR="$fuzz_dir" ./scripts/fuzz.sh build
  if [ "$failed_rc" != 0 ] && [ "${results[-1]}" != "not run" ]; then
    failed_build_rc=$failed_rc
    failed_rc=0
    stage fuzz-run env FUZZ_DIR="$fuzz_dir" FUZZ_PREBUILT=1 ./scripts/fuzz.sh ci "${FABCHECK_FUZZ_SECONDS:-10}"
    failed_rc=$failed_build_rc
  else
    stage fuzz-run env FUZZ_DIR="$fuzz_dir" FUZZ_PREBUILT=1 ./scripts/fuzz.sh ci "${FABCHECK_FUZZ_SECONDS:-10}"
  fi
fi
exit "$failed_rc"
