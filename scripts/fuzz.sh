#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (ASan + UBSan) and runs them.
#
#   scripts/fuzz.sh ci [SECONDS]     each target for SECONDS (default 10), all in
#                                    parallel; fails on any crash, leak or timeout
#   scripts/fuzz.sh bench [SECONDS]  each target for SECONDS (default 3600), then a
#                                    table of executions, coverage and findings
#   scripts/fuzz.sh build            only build
#
# Seed corpora come from the test data (NCCL logs, manifests, captures,
# profiles, PCI config space) and from fuzz/seeds/; what a run learns goes to
# $FUZZ_DIR/corpus/<target> (default build-fuzz/), and a crashing input to
# $FUZZ_DIR/findings/<target>/ with the command that replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-ci}"
seconds="${2:-}"
fuzz_dir="${FUZZ_DIR:-build-fuzz}"
cxx="${FUZZ_CXX:-clang++-14}"

if ! command -v "$cxx" >/dev/null; then
  echo "fuzz: $cxx not found (apt-get install clang-14 libfuzzer-14-dev)" >&2
  exit 1
fi
if [ ! -e /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a ] &&
   ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz: libFuzzer not found (apt-get install libfuzzer-14-dev)" >&2
  exit 1
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$fuzz_dir" -G Ninja -DFABCHECK_FUZZ=ON -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
  "${launcher[@]}" >/dev/null
start=$(date +%s)
# -k 0: a target that does not build (a parser changed its API, or code clang
# 14 rejects) must not keep the others from running; it is reported below.
build_ok=1
cmake --build "$fuzz_dir" --target fuzzers -j "${JOBS:-$(nproc)}" -- -k 0 >"$fuzz_dir/build.log" 2>&1 || build_ok=0
echo "fuzz: built in $(( $(date +%s) - start )) s"
if [ "$build_ok" = 0 ]; then
  grep -E 'error|FAILED' "$fuzz_dir/build.log" | head -20 >&2
  echo "fuzz: some targets did not build (full log: $fuzz_dir/build.log)" >&2
fi
[ "$mode" = build ] && exit $(( 1 - build_ok ))

all_targets=(units pci_config profile nccl_log k8s_lint k8s_config capture perf_protocol control_api prometheus
             counter_samples)
targets=()
unbuilt=()
for t in "${all_targets[@]}"; do
  # After a failed build, each target on its own: those that build still run.
  if [ "$build_ok" = 1 ] || cmake --build "$fuzz_dir" --target "${t}_fuzzer" -j "${JOBS:-$(nproc)}" \
       >>"$fuzz_dir/build.log" 2>&1; then
    targets+=("$t")
  else
    unbuilt+=("$t")
  fi
done
[ ${#unbuilt[@]} -gt 0 ] && echo "fuzz: NOT RUN (did not build, see $fuzz_dir/build.log): ${unbuilt[*]}" >&2
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: NOT RUN: no target built (see $fuzz_dir/build.log)" >&2
  [ "$mode" = ci ] && exit 0  # reported, as a test that cannot build here is; findings fail the stage
  exit 1
fi
seeds_for() {
  case "$1" in
    nccl_log) echo tests/data/nccl-logs ;;
    k8s_lint) echo tests/k8s/manifests deploy/kubernetes ;;
    k8s_config) echo deploy/kubernetes/render-examples profiles ;;
    profile) echo profiles ;;
    capture) echo tests/data/captures ;;
    pci_config) echo tests/data/pci ;;
    counter_samples) echo tests/data/bundles/example-8/members/dgx-07/counters ;;
  esac
  [ -d "fuzz/seeds/$1" ] && echo "fuzz/seeds/$1"
  [ -d "fuzz/regressions/$1" ] && echo "fuzz/regressions/$1"
  return 0
}

# One flat seed folder per target (libFuzzer does not recurse into folders).
prepare() {
  local t="$1" seed="$fuzz_dir/seeds/$1"
  rm -rf "$seed"
  mkdir -p "$seed" "$fuzz_dir/corpus/$t" "$fuzz_dir/findings/$t"
  for d in $(seeds_for "$t"); do
    find "$d" -type f ! -name '*.md' -size -1024k | while read -r f; do cp "$f" "$seed/$(echo "$f" | tr '/' '_')"; done
  done
}

run_one() {
  local t="$1" secs="$2" log="$fuzz_dir/findings/$1/run.log"
  local seed_arg=()
  [ "$mode" = ci ] && seed_arg=(-seed=1)  # the same mutations on every CI run
  # A private TMPDIR: the capture target unpacks there, and anything left
  # behind after the run is a leak of the unpacking code.
  local tmp="$fuzz_dir/tmp/$t"
  rm -rf "$tmp" && mkdir -p "$tmp"
  set +e
  TMPDIR="$tmp" ASAN_OPTIONS="detect_leaks=$leaks:allocator_may_return_null=1" UBSAN_OPTIONS=print_stacktrace=1 \
    "$fuzz_dir/fuzz/${t}_fuzzer" "${seed_arg[@]}" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=262144 \
    -print_final_stats=1 -artifact_prefix="$fuzz_dir/findings/$t/" \
    "$fuzz_dir/corpus/$t" "$fuzz_dir/seeds/$t" >"$log" 2>&1
  local rc=$?
  set -e
  local left
  left=$(find "$tmp" -mindepth 1 -maxdepth 1 | head -3)
  if [ -n "$left" ]; then
    echo "fuzz: $t left files in its TMPDIR: $left" >>"$log"
    rc=1
  fi
  return $rc
}

for t in "${targets[@]}"; do prepare "$t"; done
# LeakSanitizer stops the process with ptrace; where that is not allowed (some
# containers) it aborts every run, so leaks are then left out, with a notice.
leaks=1
if "$fuzz_dir/fuzz/units_fuzzer" -runs=1 2>&1 | grep -q 'LeakSanitizer has encountered a fatal error'; then
  echo "fuzz: LeakSanitizer cannot run here (ptrace not allowed): leak detection is off" >&2
  leaks=0
fi
secs="${seconds:-$([ "$mode" = bench ] && echo 3600 || echo 10)}"
jobs="${FUZZ_JOBS:-$(nproc)}"
echo "fuzz: ${#targets[@]} targets, $secs s each, $jobs at a time"
export -f run_one
export fuzz_dir mode leaks
failed=0
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c "run_one {} $secs && echo 'fuzz: {} ok' || { echo 'fuzz: {} FAILED (see $fuzz_dir/findings/{}/run.log)'; exit 1; }" || failed=1

printf '%-14s %12s %10s %8s %8s %s\n' target executions exec/s cov ft findings
for t in "${targets[@]}"; do
  log="$fuzz_dir/findings/$t/run.log"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{print $2}' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | awk '{print $2}' | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  found=$(find "$fuzz_dir/findings/$t" -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' | wc -l)
  printf '%-14s %12s %10s %8s %8s %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$found"
  if [ "$found" -gt 0 ]; then
    for f in $(find "$fuzz_dir/findings/$t" -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*'); do
      echo "  replay: $fuzz_dir/fuzz/${t}_fuzzer $f"
    done
    grep -m1 -A12 'ERROR: \|runtime error' "$log" | sed 's/^/  /' || true
  fi
done
# A target that stopped building while the others build is a regression in
# the code under test (its sources changed under it): fail the stage.
if [ ${#unbuilt[@]} -gt 0 ]; then
  echo "fuzz: FAILED: did not build: ${unbuilt[*]} (see $fuzz_dir/build.log)"
  failed=1
fi
exit $failed
