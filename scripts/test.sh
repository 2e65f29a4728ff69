#!/usr/bin/env bash
# The test command: installs the Debian packages, builds from scratch and runs
# every test (unit, netns end-to-end as root, the soft-RoCE lab when possible).
# Tests that need root, hardware or qemu skip with a printed reason.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export BUILD_DIR="${BUILD_DIR:-build-test}"
rm -rf "$BUILD_DIR"
./scripts/build.sh
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
