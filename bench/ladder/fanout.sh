#!/usr/bin/env bash
# The ladder's L1/L2 fan-out to N agents on this machine (loopback ports),
# against the peer approach in the same run: the same node checks run the way
# people run them without `ladder`, `fabcheck doctor --json` and
# `fabcheck inventory --json` once per node, N at a time 16-wide (xargs -P,
# what pdsh/clush would do without the ssh), with no cross-node comparison.
#
# Goal (issue 14): the fan-out to 256 agents in under 5 s. Prints both wall
# times and their ratio.
#
# usage: bench/ladder/fanout.sh [path/to/fabcheck] [agents]
#   env: SNAPSHOT=1 to include each member's snapshot in the bundle (default 0:
#        the fan-out itself; the snapshot is an extra ~100 KiB per member),
#        BASE_PORT=21000, REPS=3 (the median is kept)
set -euo pipefail

FC=${1:-$(dirname "$0")/../../build/src/app/fabcheck}
N=${2:-256}
BASE_PORT=${BASE_PORT:-21000}
REPS=${REPS:-3}
SNAPSHOT=${SNAPSHOT:-0}
[ -x "$FC" ] || { echo "fabcheck binary not found at $FC (build it, or pass its path)" >&2; exit 3; }
WORK=$(mktemp -d /tmp/fcld-bench-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# Agents: N processes on 127.0.0.1, each with its own control, echo and perf port.
: >"$WORK/agents.txt"
for i in $(seq 0 $((N - 1))); do
  port=$((BASE_PORT + i))
  "$FC" agent --listen 127.0.0.1:$port --perf-port 0 --name "node$i" >"$WORK/agent$i.log" 2>&1 &
  PIDS+=($!)
  echo "127.0.0.1:$port" >>"$WORK/agents.txt"
done
for i in $(seq 0 $((N - 1))); do
  for _ in $(seq 1 200); do grep -q serving "$WORK/agent$i.log" && break; sleep 0.05; done
  grep -q serving "$WORK/agent$i.log" || { echo "agent $i did not start:" >&2; cat "$WORK/agent$i.log" >&2; exit 3; }
done
echo "$N agents up (RSS of one: $(ps -o rss= -p "${PIDS[0]}") KiB)"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
now() { date +%s.%N; }

snap=(--no-snapshot)
[ "$SNAPSHOT" = 1 ] && snap=()
ladder_times=()
peer_times=()
for rep in $(seq 1 "$REPS"); do
  rm -rf "$WORK/bundle$rep"
  t0=$(now)
  rc=0
  "$FC" ladder --agents-file "$WORK/agents.txt" --rungs L1L2.node,L1L2.cluster "${snap[@]}" --quiet \
    -o "$WORK/bundle$rep" >"$WORK/ladder$rep.txt" || rc=$?
  t1=$(now)
  [ "$rc" -le 2 ] || { echo "ladder failed (exit $rc):" >&2; cat "$WORK/ladder$rep.txt" >&2; exit 3; }
  ladder_times+=("$(echo "$t1 - $t0" | bc)")

  # The peer approach: the same two checks per node, 16 at a time, no comparison across nodes.
  t0=$(now)
  seq 1 "$N" | xargs -P 16 -I{} sh -c "'$FC' doctor --json >/dev/null 2>&1; '$FC' inventory --json >/dev/null 2>&1" || true
  t1=$(now)
  peer_times+=("$(echo "$t1 - $t0" | bc)")
done
members=$(python3 -c "import json;m=json.load(open('$WORK/bundle1/manifest.json'));print(len(m['members']), sum(1 for x in m['members'] if x['reachable']))")
lt=$(printf '%s\n' "${ladder_times[@]}" | median)
pt=$(printf '%s\n' "${peer_times[@]}" | median)
echo "members in the bundle (all, reachable): $members"
python3 -c "
import json
m = json.load(open('$WORK/bundle1/manifest.json'))
print('run 1: ' + ', '.join('%s %.2f s' % (r['id'], r['end_unix'] - r['start_unix']) for r in m['rungs'] if r['verdict'] != 'not_run'),
      '(each rung includes its counter samples before and after); whole ladder %.2f s' % (m['end_unix'] - m['start_unix']))
"
echo "ladder L1L2.node+L1L2.cluster over $N agents: ${lt} s (runs: ${ladder_times[*]})"
echo "peer: doctor+inventory per node, xargs -P16:  ${pt} s (runs: ${peer_times[*]})"
echo "ratio ladder/peer: $(echo "scale=2; $lt / $pt" | bc)"
if (( $(echo "$lt < 5" | bc) )); then echo "PASS: under 5 s"; else echo "FAIL: 5 s or more"; exit 1; fi
