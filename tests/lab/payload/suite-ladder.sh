# Suite "ladder" (two-VM layout, after "two"): `fabcheck agent` on both VMs,
# the client VM runs `fabcheck ladder` over them, and L3 must run over verbs
# between the two rxe devices and count as RDMA: every pair "verbs", rdma
# true, and the rung's verdict pass. Soft-RoCE between emulated VMs carries
# 20-60 Mb/s on a port that says 2.5 Gb/s (virtio), depending on the host's
# load, so the pass line is lowered to 0.1% (--pass-fraction 0.001): the
# suite proves the path, not the figure (at 1%, 25 Mb/s, a direction at
# 22 Mb/s failed a run on a busy host). One direction takes ~27 s here (TCG,
# a 23 ms link): --test-timeout.
if ! fabcheck_has ladder; then
  skip "ladder: this build has no ladder command"
else
role=$(param role server)
AGENT_PORT=18521
# An agent beyond loopback needs a token; both VMs write the same one (the
# lab's private link only).
(umask 077 && printf 'fabcheck-lab-token-0001\n' >/tmp/lab.token)
"$FABCHECK" agent --listen "$LAB_IP_A:$AGENT_PORT" --data-addr "$LAB_IP_A" --token-file /tmp/lab.token \
  >/tmp/agent.log 2>&1 &
AGENT_PID=$!
agent_up() {  # IP
  for i in $(seq 1 100); do
    # (busybox wget -q crashes: its output goes to /dev/null instead)
    timeout 3 wget -O - "http://$1:$AGENT_PORT/v1/health" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}
if ! agent_up "$LAB_IP_A"; then
  fail "ladder: this VM's agent did not answer: $(tail -3 /tmp/agent.log | tr '\n' ' ')"
elif [ "$role" = server ]; then
  say "agent up; waiting for the client's ladder"
  timeout 300 nc -l -p 18701 >/tmp/ladder-done 2>&1
  say "client says: $(cat /tmp/ladder-done)"
  say "this VM's agent log: $(tail -5 /tmp/agent.log | tr '\n' ' ')"
else
  if ! agent_up "$LAB_IP_B"; then
    fail "ladder: the server VM's agent did not answer at $LAB_IP_B:$AGENT_PORT"
  else
    timeout 400 "$FABCHECK" ladder --agents "$LAB_IP_A:$AGENT_PORT,$LAB_IP_B:$AGENT_PORT" --token-file /tmp/lab.token \
      --rungs L2.path,L3 \
      --pass-fraction 0.001 --test-timeout 120s --bw-size 64K --no-snapshot --out /tmp/ladder-bundle --json \
      >/tmp/ladder.json 2>/tmp/ladder.err
    rc=$?
    say "ladder exit $rc: $(tail -2 /tmp/ladder.err | tr '\n' ' ')"
    # Rungs in ladder order: 0 L1L2.node, 1 L1L2.cluster, 2 L2.path, 3 L3, 4 L4.
    l3=$(jget /tmp/ladder.json rungs.3.id)
    verdict=$(jget /tmp/ladder.json rungs.3.verdict)
    reason=$(jget /tmp/ladder.json rungs.3.reason)
    say "L3: $verdict: $reason"
    n_pairs=0 n_verbs=0
    for i in 0 1; do
      t=$(jget /tmp/ladder.json "rungs.3.pairs.$i.transport")
      [ -n "$t" ] || { say "pair $i: no transport: $(jget /tmp/ladder.json "rungs.3.pairs.$i.reason")"; continue; }
      n_pairs=$((n_pairs + 1))
      rdma=$(jget /tmp/ladder.json "rungs.3.pairs.$i.rdma")
      bw=$(jget /tmp/ladder.json "rungs.3.pairs.$i.bw_gbps")
      say "pair $i: $(jget /tmp/ladder.json "rungs.3.pairs.$i.a") -> $(jget /tmp/ladder.json "rungs.3.pairs.$i.b") $t rdma=$rdma $bw Gb/s"
      [ "$t" = verbs ] && [ "$rdma" = true ] && n_verbs=$((n_verbs + 1))
      result "ladder.l3.pair$i.bw_gbps" "$bw"
    done
    [ "$l3" = L3 ] && [ "$n_pairs" = 2 ] && [ "$n_verbs" = 2 ] &&
      pass "ladder L3 ran both directions over verbs, counted as RDMA" ||
      fail "ladder L3: $n_verbs of $n_pairs direction(s) over verbs (rung '$l3'); $(tail -2 /tmp/ladder.err | tr '\n' ' ')"
    [ "$verdict" = pass ] && pass "ladder L3 verdict pass over soft-RoCE" || fail "ladder L3 verdict '$verdict': $reason"
    path=$(jget /tmp/ladder.json rungs.2.verdict)
    [ "$path" = pass ] && pass "ladder L2.path pass between the VMs" || fail "ladder L2.path verdict '$path': $(jget /tmp/ladder.json rungs.2.reason)"
    [ -f /tmp/ladder-bundle/manifest.json ] && pass "ladder wrote its bundle" || fail "ladder wrote no bundle"
  fi
  [ "$LAB_FAILS" = 0 ] || say "this VM's agent log: $(tail -5 /tmp/agent.log | tr '\n' ' ')"
  echo "done $LAB_FAILS" | timeout 10 nc "$LAB_IP_B" 18701 || say "could not tell the server the ladder is done"
fi
stop_pid "$AGENT_PID"
fi
