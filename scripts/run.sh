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

# Inventory exits 1 when some files were unreadable (listed at the end of its
# report); that is a finding to read, not a failed run.
inventory() {
  local rc=0
  "$bin" inventory "$@" || rc=$?
  if [ "$rc" -gt 1 ]; then exit "$rc"; fi
}

echo
echo "== This machine =="
inventory

if [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
  example=tests/data/captures/dgx-h100-example.tar.gz
  echo
  echo "== No RDMA device here: the bundled example capture of a GPU node ($example) =="
  inventory --matrix --sysroot "$example"
  if [ -f tests/data/captures/h200-1gpu.tar.gz ]; then
    echo
    echo "== A real capture: one H200 GPU virtual machine (tests/data/captures/h200-1gpu.tar.gz) =="
    inventory --matrix --sysroot tests/data/captures/h200-1gpu.tar.gz
  fi
fi

# One line per inventory read above, so the end of the run says what was found.
summarize() {
  local label=$1; shift
  "$bin" inventory --json "$@" 2>/dev/null | python3 -c '
import json, sys
inv = json.load(sys.stdin)
ports = [p for d in inv["rdma_devices"] for p in d["ports"]]
active = sum(p["state"] == "ACTIVE" for p in ports)
rails = inv["topology"]["rails"]
near = sum(r["distance"] in ("PIX", "PXB") for r in rails)
print("  %-12s ports %2d/%-2d ACTIVE  GPUs %d  NICs %2d  rails PIX/PXB %d/%d  bad %d"
      % (sys.argv[1], active, len(ports), len(inv["gpus"]), len(inv["nics"]), near, len(rails), len(inv["warnings"])))
' "$label" || true
}
echo
echo "== Summary =="
summarize "this machine"
if [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
  summarize "DGX example" --sysroot tests/data/captures/dgx-h100-example.tar.gz
  if [ -f tests/data/captures/h200-1gpu.tar.gz ]; then
    summarize "H200 capture" --sysroot tests/data/captures/h200-1gpu.tar.gz
  fi
fi
