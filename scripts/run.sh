#!/usr/bin/env bash
# The main job: installs the Debian packages, builds fabcheck and inspects this
# machine. Where the machine has no RDMA device it also shows the bundled
# example capture of a GPU node, so there is always something real to read.
# It ends in a go-live run: as root, a few network-namespace hosts with agents
# and `fabcheck ladder --rungs L1-L3` over them (TCP here: the verdict says why
# RDMA was not testable), and the bundled example bundle rendered by
# `fabcheck report` into report.html.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh

# The build: a fresh machine compiles for about ten minutes. One line per tenth
# of the work (and at least one a minute) says how far it is; the full compiler
# output goes to a log, whose end is shown if the build fails.
build_dir="${BUILD_DIR:-build}"
mkdir -p "$build_dir"
build_log="$build_dir/build.log"
echo "== Building fabcheck (full output: $build_log) =="
build_progress() {
  local start=$SECONDS last_step=-1 last_time=$SECONDS line done total pct step
  while IFS= read -r line; do
    printf '%s\n' "$line" >>"$build_log"
    [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]] || continue
    done=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
    pct=$((done * 100 / total)) step=$((done * 10 / total))
    if [ "$step" -ne "$last_step" ] || [ $((SECONDS - last_time)) -ge 60 ] || [ "$done" -eq "$total" ]; then
      printf '  build: %3d%%  %4d/%d steps  %dm%02ds\n' "$pct" "$done" "$total" \
        $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60))
      last_step=$step last_time=$SECONDS
    fi
  done
}
: >"$build_log"
set +e
BUILD_DIR="$build_dir" ./scripts/build.sh 2>&1 | build_progress
build_rc=${PIPESTATUS[0]}
set -e
if [ "$build_rc" -ne 0 ]; then
  echo "build failed (exit $build_rc); the end of $build_log:" >&2
  tail -n 40 "$build_log" >&2
  exit "$build_rc"
fi
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

# ---- The go-live run -------------------------------------------------------
out_dir="${OUT_DIR:-${BUILD_DIR:-build}/golive}"
rm -rf "$out_dir"
mkdir -p "$out_dir"
golive_summary=()

ladder_demo() {
  prefix=fcrun- hosts=4 script=tests/sweep/netns_cluster.sh demo_pids=()
  # The script deletes every namespace of its prefix and kills what runs in them.
  stop_demo() {
    for p in "${demo_pids[@]:-}"; do [ -n "$p" ] && { kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; }; done
    demo_pids=()
    FCSW_PREFIX=$prefix "$script" down >/dev/null 2>&1 || true
  }
  trap stop_demo EXIT
  if ! FCSW_PREFIX=$prefix "$script" up $hosts >/dev/null 2>&1; then
    echo "(cannot create network namespaces here; skipping the ladder run)"
    golive_summary+=("  ladder       not run: network namespaces could not be created")
    return
  fi
  agents=""
  # Agents beyond loopback need a token (or --insecure-no-token): one for the demo.
  token_file="$out_dir/token"
  (umask 077 && od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$token_file")
  for i in $(seq 0 $((hosts - 1))); do
    ip netns exec ${prefix}h$i "$bin" agent --listen 10.77.0.$((i + 1)):18521 --name host$i \
      --data-iface eth0 --token-file "$token_file" >"$out_dir/agent$i.log" 2>&1 &
    demo_pids+=($!)
    agents+="${agents:+,}10.77.0.$((i + 1))"
  done
  for i in $(seq 0 $((hosts - 1))); do
    for _ in $(seq 1 100); do grep -q serving "$out_dir/agent$i.log" && break; sleep 0.1; done
  done
  rc=0
  echo "(4 agents up; the ladder takes about 15 s; progress in $out_dir/ladder.progress)"
  ip netns exec ${prefix}c "$bin" ladder --agents "$agents" --token-file "$token_file" --rungs L1-L3 \
    --transport tcp --parallel 1 \
    --duration 0.5s --lat-duration 0.2s -o "$out_dir/ladder.tar.gz" >"$out_dir/ladder.txt" \
    2>"$out_dir/ladder.progress" || rc=$?
  cat "$out_dir/ladder.txt"
  golive_summary+=("  ladder       $(head -1 "$out_dir/ladder.txt" | sed 's/^fabcheck ladder: //') (exit $rc)")
  golive_summary+=("               bundle: $out_dir/ladder.tar.gz, verdict: $out_dir/ladder.txt")
  stop_demo
  trap - EXIT
}

echo
echo "== Go-live: fabcheck ladder L1-L3 over $( [ "$(id -u)" = 0 ] && echo "4 network-namespace hosts" || echo "network-namespace hosts (needs root)") =="
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null; then
  ladder_demo
else
  echo "(not root: the namespace hosts need root; run as root to see the ladder)"
  golive_summary+=("  ladder       not run: needs root for network namespaces")
fi

echo
echo "== Go-live report of the example bundle =="
# The 8-member example with planted faults, compared with its earlier run.
example_bundle=tests/data/bundles/example-8
example_baseline=tests/data/bundles/example-8-baseline
if "$bin" report --help >/dev/null 2>&1 && [ -d "$example_bundle" ] && [ -d "$example_baseline" ]; then
  rc=0
  "$bin" report "$example_bundle" --baseline "$example_baseline" --format html -o "$out_dir/report.html" || rc=$?
  "$bin" report "$example_bundle" --baseline "$example_baseline" --format md -o "$out_dir/report.md" >/dev/null 2>&1 || true
  [ -f "$out_dir/report.md" ] && head -40 "$out_dir/report.md"
  golive_summary+=("  report       $out_dir/report.html (from $example_bundle, exit $rc)")
else
  echo "(\`fabcheck report\` or the example bundle under tests/data/bundles/ is not in this version yet)"
  golive_summary+=("  report       not rendered: \`fabcheck report\` / example bundle not in this version")
fi

echo
echo "== Go-live summary =="
printf '%s\n' "${golive_summary[@]}"
