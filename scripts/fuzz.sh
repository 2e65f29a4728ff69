#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (ASan + UBSan) and runs them.
#
#   scripts/fuzz.sh ci [SECONDS]     each target for SECONDS (default 10), all in
#                                    parallel; fails on any crash, leak or timeout
#   scripts/fuzz.sh bench [SECONDS]  each target for SECONDS (default 3600), then a
#                                    table of executions, coverage and findings
#   scripts/fuzz.sh build            only build
#
# FUZZ_TARGETS="nccl_log capture" runs only those targets.
# FUZZ_WORKERS="nccl_log=12 units=4" runs that many processes of a target on
# its one corpus (the others get 1), all at once: how the long run spreads a
# many-core machine over the targets that need it. FUZZ_PREBUILT=1 runs the
# fuzzers already in $FUZZ_DIR/fuzz (built elsewhere, e.g. carried to a
# machine without clang) instead of building them.
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

all_targets=(units pci_config profile nccl_log k8s_lint k8s_config capture perf_protocol control_api prometheus
             counter_samples)
# FUZZ_TARGETS="nccl_log capture" runs only those.
if [ -n "${FUZZ_TARGETS:-}" ]; then
  for t in $FUZZ_TARGETS; do
    [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "fuzz: FUZZ_TARGETS: no target '$t' (targets: ${all_targets[*]})" >&2; exit 64; }
  done
  read -r -a all_targets <<<"$FUZZ_TARGETS"
fi
targets=()
unbuilt=()
if [ "${FUZZ_PREBUILT:-0}" = 1 ]; then
  for t in "${all_targets[@]}"; do
    if [ -x "$fuzz_dir/fuzz/${t}_fuzzer" ]; then targets+=("$t"); else unbuilt+=("$t"); fi
  done
  build_ok=1
else
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz: $cxx not found (apt-get install clang-14 libfuzzer-14-dev)" >&2
  exit 1
fi
if [ ! -e /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a ] &&
   ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz: libFuzzer not found (apt-get install libfuzzer-14-dev)" >&2
  exit 1
fi

. scripts/ccache-env.sh
cmake -S . -B "$fuzz_dir" -G Ninja -DFABCHECK_FUZZ=ON -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
  "${FABCHECK_CCACHE[@]}" >/dev/null
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

for t in "${all_targets[@]}"; do
  # After a failed build, each target on its own: those that build still run.
  if [ "$build_ok" = 1 ] || cmake --build "$fuzz_dir" --target "${t}_fuzzer" -j "${JOBS:-$(nproc)}" \
       >>"$fuzz_dir/build.log" 2>&1; then
    targets+=("$t")
  else
    unbuilt+=("$t")
  fi
done
fi
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
  # Mutations of compressed bytes mostly test zlib's checks; the tar inside
  # (headers, names, links, sizes) is what the unpacker must survive, so the
  # capture target also starts from the plain tar of each seed (SysRoot
  # detects the compression from the bytes, not the name).
  if [ "$t" = capture ]; then
    for f in "$seed"/*.tar.gz; do [ -e "$f" ] && gzip -dc "$f" >"${f%.gz}"; done
  fi
  return 0
}

# The longest input a target is given. A sysfs attribute and a PCI config
# space are at most a page (4 KiB). The line parsers and the YAML readers see
# every construct within a few KiB; what only long inputs do (a 1 GB line,
# quadratic work, endless streams, deep nesting) is bounded by the
# hostile-input tests, and long inputs would cut the executions a run reaches
# tenfold.
max_len_for() {
  case "$1" in
    units | pci_config | nccl_log) echo 4096 ;;
    k8s_lint | k8s_config | profile) echo 16384 ;;
    *) echo 65536 ;;
  esac
}

# Where the targets' TMPDIRs live: a RAM-backed folder when there is one (the
# capture target unpacks every input; on ext4 that costs 8x more in inode
# allocation than the unpacking itself).
tmp_base="${FUZZ_TMP:-}"
if [ -z "$tmp_base" ]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then tmp_base="/dev/shm/fabcheck-fuzz-$$"; else tmp_base="$fuzz_dir/tmp"; fi
fi

# run_one TARGET[:WORKER] SECONDS
run_one() {
  local t="${1%%:*}" worker="${1#*:}" secs="$2"
  [ "$worker" = "$1" ] && worker=0
  local log="$fuzz_dir/findings/$t/run.log"
  [ "$worker" != 0 ] && log="$log.$worker"
  local seed_arg=()
  [ "$mode" = ci ] && seed_arg=(-seed=$((1 + worker)))  # the same mutations on every CI run
  # A private TMPDIR: the capture target unpacks there, and anything left
  # behind after the run is a leak of the unpacking code.
  local tmp="$tmp_base/$t.$worker"
  rm -rf "$tmp" && mkdir -p "$tmp"
  set +e
  # malloc_context_size=2: two frames, not thirty, are recorded at each
  # allocation and free. The stacks only decorate a report (where a freed block
  # was allocated), and the replay line printed for a finding runs without
  # this and shows them whole; recording them was a fifth of the time of the
  # allocation-heavy targets. Not fewer than 2: LeakSanitizer takes a block
  # whose caller frame is unknown for reachable, so 0 or 1 hides every leak.
  TMPDIR="$tmp" ASAN_OPTIONS="detect_leaks=$leaks:allocator_may_return_null=1:malloc_context_size=2" \
    UBSAN_OPTIONS=print_stacktrace=1 \
    "$fuzz_dir/fuzz/${t}_fuzzer" "${seed_arg[@]}" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
    -max_len="$(max_len_for "$t")" \
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
  rm -rf "$tmp"
  return $rc
}

for t in "${targets[@]}"; do prepare "$t"; rm -f "$fuzz_dir/findings/$t"/run.log*; done
# LeakSanitizer stops the process with ptrace; where that is not allowed (some
# containers) it aborts every run, so leaks are then left out, with a notice.
leaks=1
if "$fuzz_dir/fuzz/units_fuzzer" -runs=1 2>&1 | grep -q 'LeakSanitizer has encountered a fatal error'; then
  echo "fuzz: LeakSanitizer cannot run here (ptrace not allowed): leak detection is off" >&2
  leaks=0
fi
secs="${seconds:-$([ "$mode" = bench ] && echo 3600 || echo 10)}"
workers_of() {
  local w
  for w in ${FUZZ_WORKERS:-}; do
    [ "${w%%=*}" = "$1" ] && { echo "${w#*=}"; return; }
  done
  echo 1
}
runs=()
for t in "${targets[@]}"; do
  n=$(workers_of "$t")
  case "$n" in ''|*[!0-9]*|0) echo "fuzz: FUZZ_WORKERS: '$t=$n' is not a count of processes" >&2; exit 64 ;; esac
  for ((k = 0; k < n; k++)); do runs+=("$t:$k"); done
done
jobs="${FUZZ_JOBS:-$(nproc)}"
# Workers of one target share its corpus and must run at the same time.
[ -n "${FUZZ_WORKERS:-}" ] && [ "${#runs[@]}" -gt "$jobs" ] && jobs=${#runs[@]}
echo "fuzz: ${#targets[@]} targets in ${#runs[@]} processes, $secs s each, $jobs at a time"
export -f run_one max_len_for
export fuzz_dir mode leaks tmp_base
failed=0
printf '%s\n' "${runs[@]}" | xargs -P "$jobs" -I{} bash -c "run_one {} $secs && echo 'fuzz: {} ok' || { echo 'fuzz: {} FAILED (see $fuzz_dir/findings/)'; exit 1; }" || failed=1
rmdir "$tmp_base" 2>/dev/null || true

# Executions and exec/s add up over a target's workers; coverage is the
# largest any of them reached on the shared corpus.
printf '%-16s %8s %12s %10s %8s %8s %s\n' target workers executions exec/s cov ft findings
for t in "${targets[@]}"; do
  logs=("$fuzz_dir/findings/$t"/run.log*)
  execs=$(cat "${logs[@]}" | grep -o 'stat::number_of_executed_units: *[0-9]*' | awk '{s += $2} END {if (NR) print s}')
  rate=$(cat "${logs[@]}" | grep -o 'stat::average_exec_per_sec: *[0-9]*' | awk '{s += $2} END {if (NR) print s}')
  cov=$(cat "${logs[@]}" | grep -o 'cov: [0-9]*' | awk '$2 > m {m = $2} END {if (NR) print m}')
  ft=$(cat "${logs[@]}" | grep -o 'ft: [0-9]*' | awk '$2 > m {m = $2} END {if (NR) print m}')
  found=$(find "$fuzz_dir/findings/$t" -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' | wc -l)
  printf '%-16s %8s %12s %10s %8s %8s %s\n' "$t" "${#logs[@]}" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$found"
  if [ "$found" -gt 0 ]; then
    for f in $(find "$fuzz_dir/findings/$t" -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*'); do
      echo "  replay: $fuzz_dir/fuzz/${t}_fuzzer $f"
    done
    cat "${logs[@]}" | grep -m1 -A12 'ERROR: \|runtime error' | sed 's/^/  /' || true
  fi
done
# A target that stopped building while the others build is a regression in
# the code under test (its sources changed under it): fail the stage.
if [ ${#unbuilt[@]} -gt 0 ]; then
  echo "fuzz: FAILED: did not build: ${unbuilt[*]} (see $fuzz_dir/build.log)"
  failed=1
fi
exit $failed
