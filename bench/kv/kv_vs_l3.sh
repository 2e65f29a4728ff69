#!/usr/bin/env bash
# fabcheck kv against the rung below, in the same run: the KV-cache transfer
# (Llama-3-70B, TOKENS-token prompts, per-layer scattered page writes + one
# notification per layer) beside the same pair's L3 TCP bandwidth at the page
# size with as many streams as requests in flight. Each `kv run` measures
# both, so every ratio comes from one run; REPS runs alternate and the median
# ratio is kept. On loopback and between two network namespaces (veth).
# Goals (docs/kv.md): ratio >= 0.9 at pages of 256 KiB and more, >= 0.7 at 16-64 KiB.
#
# usage: bench/kv/kv_vs_l3.sh [path/to/fabcheck]     (root, for the namespaces)
#   env: DUR=3 (seconds of kv and of L3 per run), REPS=3, INFLIGHT=1, TOKENS=2048 (640 MiB per request: several
#        requests per run on a slow link; 8192 is 2.5 GiB), PAGES="4 16 64 256" (tokens;
#        Llama-3-70B at tp 1 holds 4 KiB per token and layer: 16 KiB .. 1 MiB pages), ENVS="loopback netns"
set -euo pipefail

FC=${1:-$(dirname "$0")/../../build/src/app/fabcheck}
DUR=${DUR:-3}
REPS=${REPS:-3}
INFLIGHT=${INFLIGHT:-1}
TOKENS=${TOKENS:-2048}
PAGES=${PAGES:-4 16 64 256}
ENVS=${ENVS:-loopback netns}
NS_A=kv18-bench-a
NS_B=kv18-bench-b
PIDS=()

command -v jq >/dev/null || apt-get install -y jq >/dev/null
[ -x "$FC" ] || { echo "fabcheck binary not found at $FC (build it, or pass its path)" >&2; exit 3; }

cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  ip netns del $NS_A 2>/dev/null || true
  ip netns del $NS_B 2>/dev/null || true
}
trap cleanup EXIT

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# run_env NAME CLIENT_PREFIX SERVER_PREFIX ADDR
run_env() {
  local name=$1 cpre=$2 spre=$3 addr=$4
  $spre "$FC" perf serve --bind "$addr" --port 18630 >/dev/null 2>&1 & PIDS+=($!)
  sleep 1
  for page in $PAGES; do
    local ratios=() kvs=() l3s=() cpu_kv=() cpu_l3=() p99=()
    for _ in $(seq "$REPS"); do
      local j
      j=$($cpre "$FC" kv run "$addr" --port 18630 --model Llama-3-70B --tokens "$TOKENS" --page "$page" \
        --inflight "$INFLIGHT" --warmup 1 --duration "${DUR}s" --l3-duration "$DUR" --json 2>/dev/null || true)
      ratios+=("$(jq '.ratio_to_l3 // 0' <<<"$j")")
      kvs+=("$(jq '.kv.gbytes_per_s // 0' <<<"$j")")
      l3s+=("$(jq '.l3.gbytes_per_s // 0' <<<"$j")")
      cpu_kv+=("$(jq '(.kv.cpu_s_per_gb_client // 0) + (.kv.cpu_s_per_gb_server // 0)' <<<"$j")")
      cpu_l3+=("$(jq '(.l3.cpu_s_per_gb_client // 0) + (.l3.cpu_s_per_gb_server // 0)' <<<"$j")")
      p99+=("$(jq '.kv.request.p99_ms // 0' <<<"$j")")
    done
    local bytes=$((page * 4096)) goal=0.7
    [ "$bytes" -ge 262144 ] && goal=0.9
    printf '%-9s page %5d KiB x%d: kv %6.3f GB/s  L3 %6.3f GB/s  ratio %.3f (goal >= %s)  CPU s/GB kv %.2f L3 %.2f  request p99 %.1f ms\n' \
      "$name" $((bytes / 1024)) "$INFLIGHT" \
      "$(printf '%s\n' "${kvs[@]}" | median)" "$(printf '%s\n' "${l3s[@]}" | median)" \
      "$(printf '%s\n' "${ratios[@]}" | median)" "$goal" \
      "$(printf '%s\n' "${cpu_kv[@]}" | median)" "$(printf '%s\n' "${cpu_l3[@]}" | median)" \
      "$(printf '%s\n' "${p99[@]}" | median)"
  done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  PIDS=()
}

for env in $ENVS; do
  case $env in
    loopback) run_env loopback "" "" 127.0.0.1 ;;
    netns)
      ip netns add $NS_A && ip netns add $NS_B
      ip link add kv18ba netns $NS_A type veth peer name kv18bb netns $NS_B
      ip -n $NS_A addr add 10.219.7.1/24 dev kv18ba && ip -n $NS_B addr add 10.219.7.2/24 dev kv18bb
      ip -n $NS_A link set kv18ba up && ip -n $NS_B link set kv18bb up
      ip -n $NS_A link set lo up && ip -n $NS_B link set lo up
      run_env netns "ip netns exec $NS_A" "ip netns exec $NS_B" 10.219.7.2
      ;;
  esac
done
