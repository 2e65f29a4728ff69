# Suite "fabcheck": `fabcheck perf` over verbs on the live rxe devices of the
# one-VM layout (client rxe1 -> server rxe0), with the same sizes and
# iterations as suite "perftest" so the host prints fabcheck/perftest ratios.
#   fc.size=65536 fc.iters=500 fc.lat_iters=500
if ! fabcheck_has perf; then
  skip "fabcheck perf: this build has no perf command"
else
size=$(param size 65536)
iters=$(param iters 500)
lat_iters=$(param lat_iters 500)
devs="--device $LAB_DEV_B --server-device $LAB_DEV_A"
if fc_serve "$LAB_IP_A" "$FC_PORT" /tmp/fc_serve.log; then

# Bandwidth, the four operations; the first three beside perftest's.
for op in write read send write_imm; do
  if fc_perf "${op}_bw" $devs --test bw --op "$op" --size "$size" --iters "$iters"; then
    bw=$(jget "/tmp/fc_${op}_bw.json" results.0.bw.avg_gbps)
    say "fabcheck perf verbs $op bw $size B: $bw Gb/s"
    result "fabcheck.${op}_bw.$size" "$bw"
    pass "fabcheck perf --op $op bw"
  else
    fail "fabcheck perf --op $op bw: $(fc_err "${op}_bw")"
  fi
done

# GID auto-selection (no --gid-index given above): the IPv4 RoCE v2 GID on
# each side, checked against sysfs independently.
want_c=$(ipv4_gid_index "$LAB_DEV_B"); want_s=$(ipv4_gid_index "$LAB_DEV_A")
got_c=$(jget /tmp/fc_write_bw.json client.gid_index); got_s=$(jget /tmp/fc_write_bw.json server_endpoint.gid_index)
if [ "$got_c" = "$want_c" ] && [ "$got_s" = "$want_s" ]; then
  pass "GID auto-selection: client index $got_c, server index $got_s (IPv4 RoCE v2)"
else
  fail "GID auto-selection: client $got_c (want $want_c), server $got_s (want $want_s)"
fi
peak=$(jget /tmp/fc_write_bw.json results.0.bw.peak_gbps); avg=$(jget /tmp/fc_write_bw.json results.0.bw.avg_gbps)
awk -v p="$peak" -v a="$avg" 'BEGIN { exit !(p + 0 > a + 0) }' &&
  pass "peak bandwidth measured: best 10 ms $peak > average $avg Gb/s" || fail "peak bandwidth '$peak' (average '$avg')"
numa=$(jget /tmp/fc_write_bw.json client.numa_policy)
[ "$numa" = auto ] && pass "NUMA policy reported: $numa" || fail "NUMA policy reported as '$numa'"
reg=$(jget /tmp/fc_write_bw.json client.registration)
[ "$reg" = host ] && pass "registration reported: $reg" || fail "registration reported as '$reg', want host"

# Latency: write (the perftest comparison), read, send.
for op in write read send; do
  if fc_perf "${op}_lat" $devs --test lat --op "$op" --size 2 --iters "$lat_iters"; then
    typ=$(jget "/tmp/fc_${op}_lat.json" results.0.lat.median_us)
    p99=$(jget "/tmp/fc_${op}_lat.json" results.0.lat.p99_us)
    say "fabcheck perf verbs $op lat 2 B: typical $typ us, p99 $p99 us"
    result "fabcheck.${op}_lat.2.typical" "$typ"
    result "fabcheck.${op}_lat.2.p99" "$p99"
    pass "fabcheck perf --op $op lat"
  else
    fail "fabcheck perf --op $op lat: $(fc_err "${op}_lat")"
  fi
done

# Latency by duration: calibrated, then a count both sides agreed on.
if fc_perf lat_duration $devs --test lat --op send --size 2 --duration 2; then
  n=$(jget /tmp/fc_lat_duration.json results.0.iterations)
  [ "${n:-0}" -gt 2 ] && pass "latency --duration 2: $n round trips" || fail "latency --duration 2: iterations '$n'"
else
  fail "latency --duration: $(fc_err lat_duration)"
fi

# A size sweep, several QPs, bidirectional, validation.
if fc_perf sweep $devs --test bw --op write --sizes 2:64K --iters 100; then
  n=$(grep -c '"bytes":' /tmp/fc_sweep.json)
  last=$(jget /tmp/fc_sweep.json results.15.bytes)
  [ "$last" = 65536 ] && pass "size sweep 2..64K: 16 sizes" || fail "size sweep: last size '$last', $n sizes"
else
  fail "size sweep: $(fc_err sweep)"
fi
if fc_perf qps $devs --test bw --op write --size "$size" --iters 200 --qps 4; then
  streams=$(jget /tmp/fc_qps.json settings.streams)
  bw=$(jget /tmp/fc_qps.json results.0.bw.avg_gbps)
  result "fabcheck.write_bw_4qp.$size" "$bw"
  [ "$streams" = 4 ] && pass "4 QPs: $bw Gb/s" || fail "4 QPs: settings.streams=$streams"
else
  fail "4 QPs: $(fc_err qps)"
fi
for op in write send; do
  if fc_perf "bidir_$op" $devs --test bw --op $op --bidir --size "$size" --iters 300; then
    tx=$(jget "/tmp/fc_bidir_$op.json" results.0.bw_tx.avg_gbps); rx=$(jget "/tmp/fc_bidir_$op.json" results.0.bw_rx.avg_gbps)
    sum=$(jget "/tmp/fc_bidir_$op.json" results.0.bw.avg_gbps)
    say "bidirectional $op: tx $tx + rx $rx = $sum Gb/s"
    result "fabcheck.bidir_${op}_bw.$size" "$sum"
    awk -v a="$tx" -v b="$rx" 'BEGIN { exit !(a > 0 && b > 0) }' && pass "bidirectional $op" ||
      fail "bidirectional $op: a direction is zero (tx $tx rx $rx)"
  else
    fail "bidirectional $op: $(fc_err "bidir_$op")"
  fi
done
for op in write read send write_imm; do
  if fc_perf "validate_$op" $devs --test bw --op $op --size 4096 --iters 200 --validate; then
    errs=$(jget "/tmp/fc_validate_$op.json" results.0.validate_errors)
    [ "$errs" = 0 ] && pass "--validate $op: 0 errors" || fail "--validate $op: $errs errors"
  else
    fail "--validate $op: $(fc_err "validate_$op")"
  fi
done
if fc_perf validate_lat $devs --test lat --op send --size 4096 --iters 100 --validate; then
  pass "--validate send lat"
else
  fail "--validate send lat: $(fc_err validate_lat)"
fi

# Negotiated MTU: veth0 9000 (rxe0 active 4096), veth1 1500 (rxe1 1024).
$IP link set veth0 mtu 9000
$IP link set veth1 mtu 1500
sleep 0.5
if fc_perf mtu $devs --test bw --op write --size 8192 --iters 100; then
  cm=$(jget /tmp/fc_mtu.json client.mtu); sm=$(jget /tmp/fc_mtu.json server_endpoint.mtu)
  [ "$cm" = 1024 ] && [ "$sm" = 1024 ] && pass "negotiated MTU 1024 (active 4096 vs 1024)" ||
    fail "negotiated MTU: client $cm server $sm, want 1024"
else
  fail "MTU negotiation run: $(fc_err mtu)"
fi
if fc_perf mtu4096 $devs --test bw --op write --size 8192 --iters 100 --mtu 4096; then
  fail "--mtu 4096 over a 1024 path was accepted"
else
  grep -q "above what the path carries" /tmp/fc_mtu4096.err /tmp/fc_mtu4096.json &&
    pass "--mtu 4096 over a 1024 path refused with the reason" || fail "--mtu 4096 refused without the reason: $(fc_err mtu4096)"
fi
$IP link set veth0 mtu "$mtu"
$IP link set veth1 mtu "$mtu"
sleep 0.5

stop_pid "$SERVE_PID"
else
  fail "fabcheck perf serve did not start"
fi
fi
