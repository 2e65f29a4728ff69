#!/bin/bash
# The README's "A bare-metal cluster" first run, followed step by step over
# network-namespace hosts: one token for every node, an agent per node started
# as fabcheck-agent.service starts it (packaging/systemd, packaging/etc/agent.conf),
# the ladder from another host with --profile, and the report of its bundle.
#   first_run_netns_test.sh FABCHECK_BINARY SOURCE_DIR
# Needs root and ip(8); exits 77 with the reason otherwise (ctest: skipped).
set -u
bin=$1 src=$2
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and ip(8) for network namespaces"; exit 77
fi
export FCSW_PREFIX=${FABCHECK_NETNS_PREFIX:-fcsw$$-}
cluster=$src/tests/sweep/netns_cluster.sh
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  "$cluster" down >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -n 20 "$f"; done; exit 1; }
"$cluster" up 3 >/dev/null 2>&1 || { echo "SKIP: cannot create network namespaces here"; exit 77; }

# README: sudo sh -c 'umask 077; openssl rand -hex 32 >/etc/fabcheck/agent.token'  (here: $work/agent.token)
sh -c "umask 077; openssl rand -hex 32 >$work/agent.token" || fail "openssl rand"
token=$work/agent.token
# README: FABCHECK_AGENT_ARGS=--data-iface ib0 ... ; the unit's ExecStart with agent.conf's values.
. "$src/packaging/etc/agent.conf"
FABCHECK_AGENT_ARGS="--data-iface eth0"
agents=""
for i in 0 1 2; do
  addr=10.77.0.$((i + 1))
  listen=${FABCHECK_AGENT_LISTEN/0.0.0.0/$addr}
  # shellcheck disable=SC2086  # the unit expands $FABCHECK_AGENT_ARGS into words too
  ip netns exec "${FCSW_PREFIX}h$i" "$bin" agent --listen="$listen" --perf-port="$FABCHECK_AGENT_PERF_PORT" \
    --token-file="$token" --name "node$((i + 1))" $FABCHECK_AGENT_ARGS >"$work/agent$i.log" 2>&1 &
  pids+=($!)
  agents+="${agents:+,}$addr"
done
for i in 0 1 2; do
  for _ in $(seq 1 100); do grep -q serving "$work/agent$i.log" && break; sleep 0.1; done
  grep -q serving "$work/agent$i.log" || fail "agent $i did not start"
done

# README: fabcheck ladder --agents node1,... --token-file ... --profile .../dgx-h100-ib.yaml -o golive.tar.gz
rc=0
ip netns exec "${FCSW_PREFIX}c" timeout 300 "$bin" ladder --agents "$agents" --token-file "$token" \
  --profile "$src/profiles/dgx-h100-ib.yaml" -o "$work/golive.tar.gz" >"$work/ladder.log" 2>&1 || rc=$?
# These hosts have no GPU, no RDMA NIC: the DGX profile fails L1 (no-go, exit 2),
# and the bundle says so.
[ "$rc" = 2 ] || fail "ladder exit $rc, expected 2 (no-go against the DGX profile)"
[ -s "$work/golive.tar.gz" ] || fail "no bundle"
grep -q "L1" "$work/ladder.log" || fail "the verdict names no rung"
# README: fabcheck report golive.tar.gz -o golive.html
rc=0
"$bin" report "$work/golive.tar.gz" -o "$work/golive.html" >"$work/report.log" 2>&1 || rc=$?
[ "$rc" -le 2 ] || fail "report exit $rc"
grep -q "<html" "$work/golive.html" || fail "no HTML report"
# A wrong token is refused by every agent: the ladder cannot run (exit 3, or no-go naming the members).
echo "not-the-token-0000" >"$work/wrong.token"; chmod 600 "$work/wrong.token"
rc=0
ip netns exec "${FCSW_PREFIX}c" timeout 120 "$bin" ladder --agents "$agents" --token-file "$work/wrong.token" \
  --rungs L1 >"$work/wrong.log" 2>&1 || rc=$?
[ "$rc" -ge 2 ] || fail "a wrong token passed (exit $rc)"
echo "PASS: agents as the unit starts them, ladder with a profile (exit 2 as expected), report"
