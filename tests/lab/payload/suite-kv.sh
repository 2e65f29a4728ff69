# Suite "kv": `fabcheck kv run --transport verbs` on the live rxe devices of
# the one-VM layout (client rxe1 -> server rxe0), beside perftest's
# ib_write_bw at the page size in the same boot, so the host prints the
# kv/perftest ratio next to the kv/L3 ratio fabcheck measures itself.
# Then: GPU memory refused with the reason (no CUDA here), an active-MTU
# mismatch found before the transfer, and the server killed mid-transfer.
#   fc.size=65536 (the page size) fc.kv_requests=6 fc.kv_reps=1
if ! fabcheck_has kv; then
  skip "kv: this build has no kv command"
else
page=$(param size 65536)
requests=$(param kv_requests 6)
# 8 layers of 8 KV heads x 128, bf16: 4 KiB per token and layer, so a page of
# $page bytes holds page/4096 tokens; 32 pages per layer (16 MiB per request
# at 64 KiB pages: a few requests fit the emulated link's ~0.3 Gb/s).
tokens_per_page=$((page / 4096))
[ "$tokens_per_page" -ge 1 ] || tokens_per_page=1
shape="--layers 8 --kv-heads 8 --head-dim 128 --dtype bf16 --page $tokens_per_page --tokens $((tokens_per_page * 32))"
devs="--device $LAB_DEV_B --server-device $LAB_DEV_A"
KV_PORT=18610
fc_kv() {  # NAME [kv run options...]   JSON in /tmp/kv_NAME.json, stderr in /tmp/kv_NAME.err; sets KV_RC
  name=$1; shift
  timeout 240 "$FABCHECK" kv run "$LAB_IP_A" --port "$KV_PORT" --transport verbs $devs $shape --timeout 30 --json \
    "$@" >"/tmp/kv_$name.json" 2>"/tmp/kv_$name.err"
  KV_RC=$?
}
if fc_serve "$LAB_IP_A" "$KV_PORT" /tmp/kv_serve.log; then

# 1. perftest at the page size, then fabcheck kv (its own L3 run first), back
# to back, fc.kv_reps times: the host is shared and noisy, so each rep's
# ratios are from one moment, and the host prints the median.
reps=$(param kv_reps 1)
rep=1
while [ "$rep" -le "$reps" ]; do
  tag=$page
  [ "$reps" -gt 1 ] && tag="$page.rep$rep"
  if pt_pair pt_kv_write_bw ib_write_bw -s "$page" -n 500 --report_gbits -F; then
    bw=$(perftest_field /tmp/pt_kv_write_bw.log "$page" 4)
    say "perftest ib_write_bw $page B (the kv page): $bw Gb/s"
    result "perftest.kv_write_bw.$tag" "$bw"
  else
    fail "perftest ib_write_bw at the kv page size: $(tail -2 /tmp/pt_kv_write_bw.log | tr '\n' ' ')"
  fi
  fc_kv run --requests "$requests" --warmup 1 --l3-duration 3
  if { [ "$KV_RC" = 0 ] || [ "$KV_RC" = 1 ]; } && [ -z "$(jget /tmp/kv_run.json ratio_to_l3)" ]; then
    # Its L3 run failed (rxe under emulation on a loaded host can stall past
    # the retry limit): that is the rung below failing, not the transfer.
    # Once more, saying so; a second failure fails the check below.
    say "kv: the L3 run beside the transfer failed ($(jget /tmp/kv_run.json l3.error)); running the rep once more"
    fc_kv run --requests "$requests" --warmup 1 --l3-duration 3
  fi
  if [ "$KV_RC" = 0 ] || [ "$KV_RC" = 1 ]; then
    gbps=$(jget /tmp/kv_run.json kv.gbps)
    l3=$(jget /tmp/kv_run.json l3.gbps)
    ratio=$(jget /tmp/kv_run.json ratio_to_l3)
    got=$(jget /tmp/kv_run.json kv.requests)
    pages=$(jget /tmp/kv_run.json kv.pages)
    notes=$(jget /tmp/kv_run.json kv.notifications)
    p99=$(jget /tmp/kv_run.json kv.request.p99_ms)
    cpu_c=$(jget /tmp/kv_run.json kv.cpu_s_per_gb_client)
    cpu_s=$(jget /tmp/kv_run.json kv.cpu_s_per_gb_server)
    say "fabcheck kv verbs $page B pages: $gbps Gb/s, L3 write $l3 Gb/s, kv/L3 $ratio, request p99 $p99 ms, CPU s/GB client $cpu_c server $cpu_s"
    result "fabcheck.kv_write_bw.$tag" "$gbps"
    result "kv.l3_write_bw.$tag" "$l3"
    result "kv.ratio_to_l3.$tag" "$ratio"
    tr=$(jget /tmp/kv_run.json transport)
    [ "$tr" = verbs ] && pass "kv over verbs: transport $tr" || fail "kv over verbs: transport reported '$tr'"
    want_pages=$((requests * 8 * 32))
    [ "$got" = "$requests" ] && [ "$pages" = "$want_pages" ] && [ "$notes" = $((requests * 8)) ] &&
      pass "kv over verbs: $got requests, $pages page writes, $notes layer notifications" ||
      fail "kv over verbs: requests '$got' pages '$pages' notifications '$notes' (want $requests, $want_pages, $((requests * 8)))"
    awk -v r="$ratio" 'BEGIN { exit !(r > 0) }' && pass "kv over verbs: ratio to L3 $ratio" ||
      fail "kv over verbs: no ratio to L3 ('$ratio'): the L3 run: '$(jget /tmp/kv_run.json l3.error)'"
  else
    fail "kv over verbs (exit $KV_RC): $(tail -3 /tmp/kv_run.err | tr '\n' ' ')"
  fi
  rep=$((rep + 1))
done

# 2. GPU memory: the same registration path as perf's (dma-buf, then peer
# memory), refused here with the reason, before anything moves.
fc_kv cuda --mem cuda:0 --requests 1 --no-l3
if [ "$KV_RC" != 0 ] && grep -qi "cuda" "/tmp/kv_cuda.err"; then
  pass "kv --mem cuda:0 refused with the reason: $(grep -i -m1 cuda /tmp/kv_cuda.err | cut -c1-160)"
else
  fail "kv --mem cuda:0 (exit $KV_RC): $(tail -2 /tmp/kv_cuda.err | tr '\n' ' ')"
fi

# 3. Active MTU 4096 on one end, 1024 on the other: a finding before the transfer.
$IP link set veth0 mtu 9000
$IP link set veth1 mtu 1500
sleep 0.5
fc_kv mtu --requests 1 --warmup 0 --no-l3
mtu_finding=$(grep -c '"kv.mtu-mismatch"' /tmp/kv_mtu.json)
if [ "$KV_RC" = 2 ] && [ "$mtu_finding" -ge 1 ] && grep -q "kv.mtu-mismatch" /tmp/kv_mtu.err; then
  pass "kv: active MTU 1024 vs 4096 reported before the transfer (kv.mtu-mismatch, exit 2)"
else
  fail "kv: MTU mismatch not reported (exit $KV_RC, findings $mtu_finding): $(tail -2 /tmp/kv_mtu.err | tr '\n' ' ')"
fi
$IP link set veth0 mtu "$(param mtu 9000)"
$IP link set veth1 mtu "$(param mtu 9000)"
sleep 0.5
stop_pid "$SERVE_PID"
else
  fail "kv: fabcheck perf serve did not start"
fi

# 4. The decode side killed mid-transfer: a clear error within the timeout.
KV_PORT=18611
if fc_serve "$LAB_IP_A" "$KV_PORT" /tmp/kv_serve_kill.log; then
  t0=$(now_ms)
  timeout 120 "$FABCHECK" kv run "$LAB_IP_A" --port "$KV_PORT" --transport verbs $devs $shape --duration 60 --no-l3 \
    --timeout 15 --json >/tmp/kv_kill.json 2>/tmp/kv_kill.err &
  cpid=$!
  sleep 8  # past setup, which takes seconds under emulation
  kill -9 "$SERVE_PID"
  wait "$cpid"; rc=$?
  t1=$(now_ms)
  say "kv server killed: client exit $rc after $((t1 - t0)) ms: $(tail -1 /tmp/kv_kill.err | cut -c1-240)"
  result "kv.server_killed_client_exit_ms" "$((t1 - t0))"
  if [ "$rc" = 2 ] && [ $((t1 - t0)) -lt 40000 ] && grep -q "kv" /tmp/kv_kill.err && grep -qi "server\|peer" /tmp/kv_kill.err; then
    pass "kv: server killed mid-transfer, client failed clearly in $((t1 - t0)) ms"
  else
    fail "kv: server killed mid-transfer: client exit $rc after $((t1 - t0)) ms"
  fi
else
  fail "kv: fabcheck perf serve did not start"
fi
fi
