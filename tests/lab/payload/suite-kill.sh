# Suite "kill": a peer killed mid-test. The survivor must end with a clear
# error within its timeout (--timeout 15), and a server must keep serving.
if ! fabcheck_has perf; then
  skip "kill: this build has no perf command"
else
devs="--device $LAB_DEV_B --server-device $LAB_DEV_A"
# 1. The server dies: the client ends with an error naming the peer.
fc_serve "$LAB_IP_A" 18601 /tmp/fc_serve_kill.log || fail "kill: server did not start"
t0=$(now_ms)
timeout 120 "$FABCHECK" perf run "$LAB_IP_A" --port 18601 --transport verbs $devs --test bw --op write \
  --size 65536 --duration 30 --timeout 15 --json >/tmp/fc_kill1.json 2>/tmp/fc_kill1.err &
cpid=$!
sleep 8  # past setup, which takes seconds under emulation
kill -9 "$SERVE_PID"
wait "$cpid"; rc=$?
t1=$(now_ms)
say "server killed: client exit $rc after $((t1 - t0)) ms: $(tail -2 /tmp/fc_kill1.err | tr '\n' ' ')"
result "kill.server_killed_client_exit_ms" "$((t1 - t0))"
if [ $rc != 0 ] && [ $rc != 124 ] && [ $((t1 - t0)) -lt 30000 ] && grep -qi "server\|peer" /tmp/fc_kill1.err /tmp/fc_kill1.json; then
  pass "server killed mid-test: client failed clearly in $((t1 - t0)) ms"
else
  fail "server killed mid-test: client exit $rc after $((t1 - t0)) ms"
fi
# 2. The client dies: the server logs the failure and serves the next client.
fc_serve "$LAB_IP_A" 18602 /tmp/fc_serve_kill2.log || fail "kill: server did not start"
timeout 120 "$FABCHECK" perf run "$LAB_IP_A" --port 18602 --transport verbs $devs --test bw --op send \
  --size 65536 --duration 30 --timeout 15 --json >/tmp/fc_kill2.json 2>/tmp/fc_kill2.err &
cpid=$!
sleep 8  # past setup, which takes seconds under emulation
kill -9 "$cpid"; wait "$cpid" 2>/dev/null
t0=$(now_ms)
if timeout 120 "$FABCHECK" perf run "$LAB_IP_A" --port 18602 --transport verbs $devs --test bw --op write \
     --size 4096 --iters 100 --timeout 15 --json >/tmp/fc_kill3.json 2>/tmp/fc_kill3.err; then
  pass "client killed mid-test: the server served the next client ($(( $(now_ms) - t0 )) ms)"
else
  fail "client killed mid-test: the next client failed: $(tail -2 /tmp/fc_kill3.err | tr '\n' ' ')"
fi
say "server log after the killed client: $(tail -3 /tmp/fc_serve_kill2.log | tr '\n' ' ')"
stop_pid "$SERVE_PID"
fi
