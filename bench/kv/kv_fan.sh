#!/usr/bin/env bash
# fabcheck kv fan-in and fan-out (--agents) on loopback: MEMBERS agents on
# 127.0.0.1; fan-in, every member but the first writes into the first at
# once; fan-out, the first writes into every other one at once. Each transfer
# measures its L3 bandwidth first, all at the same time, so the aggregate
# ratio (sum of kv GB/s over sum of L3 GB/s) compares like with like. REPS
# runs of each; the median ratio is kept. One machine: every transfer shares
# its cores, so the figures say how the pattern scales, not what a fabric does.
#
# usage: bench/kv/kv_fan.sh [path/to/fabcheck]
#   env: MEMBERS=3 REPS=3 DUR=2 (seconds of kv and of L3) TOKENS=2048 PAGE=16 (tokens: 64 KiB pages of Llama-3-8B)
set -euo pipefail

FC=${1:-$(dirname "$0")/../../build/src/app/fabcheck}
MEMBERS=${MEMBERS:-3}
REPS=${REPS:-3}
DUR=${DUR:-2}
TOKENS=${TOKENS:-2048}
PAGE=${PAGE:-16}
BASE=${BASE:-19710}
PIDS=()

command -v jq >/dev/null || apt-get install -y jq >/dev/null
[ -x "$FC" ] || { echo "fabcheck binary not found at $FC (build it, or pass its path)" >&2; exit 3; }
cleanup() { for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done; true; }
trap cleanup EXIT
median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

agents=""
for i in $(seq 0 $((MEMBERS - 1))); do
  "$FC" agent --listen "127.0.0.1:$((BASE + i))" --perf-port "$((BASE + 100 + i))" --name "m$i" >/dev/null 2>&1 &
  PIDS+=($!)
  agents+="${agents:+,}127.0.0.1:$((BASE + i))"
done
sleep 1
echo "fabcheck kv --agents: $MEMBERS members on loopback, Llama-3-8B, $TOKENS-token prompts, $PAGE-token pages, ${DUR} s; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in fan-in fan-out; do
  flag=""
  flag="--direction $mode"
  ratios=() kvs=() l3s=()
  for _ in $(seq "$REPS"); do
    j=$("$FC" kv run --agents "$agents" $flag --model Llama-3-8B --tokens "$TOKENS" --page "$PAGE" --warmup 1 \
      --duration "${DUR}s" --l3-duration "$DUR" --json 2>/dev/null || true)
    ratios+=("$(jq '.ratio_to_l3 // 0' <<<"$j")")
    kvs+=("$(jq '.gbytes_per_s // 0' <<<"$j")")
    l3s+=("$(jq '.l3_gbytes_per_s // 0' <<<"$j")")
  done
  printf '%-8s %d transfers at once: kv %6.3f GB/s in all, L3 %6.3f GB/s in all, ratio %.3f (runs: %s)\n' "$mode" \
    $((MEMBERS - 1)) "$(printf '%s\n' "${kvs[@]}" | median)" "$(printf '%s\n' "${l3s[@]}" | median)" \
    "$(printf '%s\n' "${ratios[@]}" | median)" "${ratios[*]}"
done
