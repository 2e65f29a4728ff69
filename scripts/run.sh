#!/usr/bin/env bash
# The main job: installs the Debian packages, builds fabcheck and inspects this
# machine. Where the machine has no RDMA device it also shows the bundled
# example capture of a GPU node, so there is always something real to read.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
BUILD_DIR="${BUILD_DIR:-build}" ./scripts/build.sh >/dev/null
bin="${BUILD_DIR:-build}/src/app/fabcheck"
"$bin" version
