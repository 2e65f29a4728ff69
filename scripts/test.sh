#!/usr/bin/env bash
# The test command: installs the Debian packages, builds from scratch and runs
# every test (unit, netns end-to-end as root, the soft-RoCE lab when possible),
# then the threaded suites under TSan and the unit and netns tests under ASan +
# UBSan (scripts/sanitize.sh), and every fuzz target briefly (scripts/fuzz.sh).
# Tests that need root, hardware or qemu skip with a printed reason.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export BUILD_DIR="${BUILD_DIR:-build-test}"
# From scratch, except the Debian packages the packaging tests download
# (BUILD_DIR/image-cache): a clean checkout (CI) downloads them once per run.
if [ -d "$BUILD_DIR" ]; then
  find "$BUILD_DIR" -mindepth 1 -maxdepth 1 ! -name image-cache -exec rm -rf {} +
fi
./scripts/build.sh
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
cd ..
# The sanitizer stage (scripts/sanitize.sh; FABCHECK_SANITIZERS=0 skips it):
# the threaded suites (HTTP service, agent server, sweep coordinator,
# rendezvous, exporter) under TSan, then every unit and netns test under ASan +
# UBSan. A data race, a memory error, a leak or undefined behaviour fails the run.
if [ "${FABCHECK_SANITIZERS:-1}" != 0 ]; then
  SANITIZE_DIR="$BUILD_DIR/tsan" ./scripts/sanitize.sh tsan
  SANITIZE_DIR="$BUILD_DIR/asan" ./scripts/sanitize.sh asan
fi
# The fuzz stage: each libFuzzer target of fuzz/ for a few seconds on every
# change (clang build included; FABCHECK_FUZZ=0 skips it, bench/fuzz.sh is the
# long run).
if [ "${FABCHECK_FUZZ:-1}" != 0 ]; then
  FUZZ_DIR="${FUZZ_DIR:-build-fuzz-test}" ./scripts/fuzz.sh ci "${FABCHECK_FUZZ_SECONDS:-10}"
fi
