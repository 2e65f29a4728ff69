# Suite "faults": netem loss on the veth pair and an MTU drop mid-run. The
# perf run must show the damage, and the rxe retry/sequence counters must
# grow. Emulation alone fires some retransmits, so the test compares against
# a clean run of the same shape and uses generous margins, never zero.
#   fc.loss=1%  fc.fault_iters=300
if ! fabcheck_has perf; then
  skip "faults: this build has no perf command"
else
loss=$(param loss 1%)
fiters=$(param fault_iters 300)
devs="--device $LAB_DEV_B --server-device $LAB_DEV_A"
# Requester (client rxe1) and responder (server rxe0) counters.
snap() {
  echo "$(hwc "$LAB_DEV_B" completer_retry_err) $(hwc "$LAB_DEV_B" rcvd_seq_err) $(hwc "$LAB_DEV_A" out_of_seq_request) $(hwc "$LAB_DEV_A" duplicate_request)"
}
delta() {  # BEFORE AFTER -> "retry seq oos dup" deltas
  echo "$1 $2" | awk '{print $5-$1, $6-$2, $7-$3, $8-$4}'
}
fc_serve "$LAB_IP_A" "$FC_PORT" /tmp/fc_serve_faults.log || fail "faults: server did not start"

b=$(snap); fc_perf clean $devs --test bw --op write --size 65536 --iters "$fiters"; rc_clean=$?; a=$(snap)
clean=$(delta "$b" "$a"); clean_bw=$(jget /tmp/fc_clean.json results.0.bw.avg_gbps)
say "clean run: $clean_bw Gb/s, counter deltas (retry seq oos dup): $clean"
[ $rc_clean = 0 ] || fail "faults: clean run failed: $(fc_err clean)"

$TC qdisc add dev veth0 root netem loss "$loss"
$TC qdisc add dev veth1 root netem loss "$loss"
retry_metric=fabcheck_rdma_hw_completer_retry_err_total
eb=$(exp_counter "$LAB_DEV_B" $retry_metric)
b=$(snap); fc_perf loss $devs --test bw --op write --size 65536 --iters "$fiters"; rc_loss=$?; a=$(snap)
ea=$(exp_counter "$LAB_DEV_B" $retry_metric)
$TC qdisc del dev veth0 root; $TC qdisc del dev veth1 root
lossd=$(delta "$b" "$a"); loss_bw=$(jget /tmp/fc_loss.json results.0.bw.avg_gbps)
say "netem loss $loss: $loss_bw Gb/s, counter deltas (retry seq oos dup): $lossd"
result "faults.clean_bw" "$clean_bw"
result "faults.loss_bw" "$loss_bw"
result "faults.loss_counters" "$(echo "$lossd" | tr ' ' '/')"
result "faults.clean_counters" "$(echo "$clean" | tr ' ' '/')"
if [ $rc_loss = 0 ]; then
  # How much 1% loss costs varies from boot to boot under emulation (a third
  # to four fifths of the clean figure): the retry counters below are the
  # evidence; here the damage only has to show.
  awk -v l="$loss_bw" -v c="$clean_bw" 'BEGIN { exit !(l < c) }' &&
    pass "loss shows in bandwidth ($loss_bw < $clean_bw Gb/s)" || fail "loss did not lower bandwidth ($loss_bw vs $clean_bw)"
else
  # Heavy loss may exhaust the retries: then the run must say so.
  grep -qi "retry\|peer" /tmp/fc_loss.err /tmp/fc_loss.json && pass "loss ended the run with a clear error: $(fc_err loss)" ||
    fail "loss run failed without a clear error: $(fc_err loss)"
fi
# Requester: retries + sequence errors must exceed 10 and twice the clean
# run's. Responder: out-of-sequence requests, the counter loss drives
# (duplicate_request also fires on the timer retransmits emulation causes in a
# clean run, so it is reported but not asserted on).
set -- $clean; cr=$(($1 + $2)); co=$3
set -- $lossd; lr=$(($1 + $2)); lo=$3
[ $lr -gt 10 ] && [ $lr -gt $((2 * cr)) ] && pass "requester retry/seq counters grew: +$lr (clean +$cr)" ||
  fail "requester retry/seq counters: +$lr under loss vs +$cr clean"
[ $lo -gt 10 ] && [ $lo -gt $((2 * co)) ] && pass "responder out_of_seq_request grew: +$lo (clean +$co)" ||
  fail "responder out_of_seq_request: +$lo under loss vs +$co clean"
# The exporter serves the same growth (its scrape and the sysfs read above
# bracket the same run, with no traffic in between).
set -- $lossd
if [ -n "$eb" ] && [ -n "$ea" ]; then
  ed=$(awk -v a="$ea" -v b="$eb" 'BEGIN {printf "%d", a - b}')
  [ "$ed" -gt 10 ] && [ $((ed - $1)) -le 5 ] && [ $(($1 - ed)) -le 5 ] &&
    pass "exporter: $retry_metric{device=\"$LAB_DEV_B\"} grew by $ed (sysfs +$1)" ||
    fail "exporter: $retry_metric grew by $ed, sysfs by $1"
else
  fail "exporter: no $retry_metric for $LAB_DEV_B in a scrape (before '$eb', after '$ea')"
fi

# MTU mismatch mid-run, as a switch port with a smaller MTU than the hosts
# causes it: both netdevs at 9000 (path MTU 4096), then every IP packet above
# 1500 bytes arriving at the server's veth is dropped. Neither netdev changes
# and the client's transmit still succeeds, so neither side can see it; only
# the retries show it. (Dropping at the sender's egress instead makes rxe's
# transmit fail, and the 6.1 guest kernel's rxe then retries in a loop that
# never yields: a soft lockup.)
$IP link set veth0 mtu 9000; $IP link set veth1 mtu 9000; sleep 0.5
b=$(snap)
t0=$(now_ms)
FC_TIMEOUT=15 fc_perf mtudrop $devs --test bw --op write --size 65536 --duration 8 &
pid=$!
sleep 3
$TC qdisc add dev veth0 clsact &&
  $TC filter add dev veth0 ingress basic match 'meta(pkt_len gt 1500)' action drop ||
  fail "MTU mismatch: could not install the oversize-packet filter on veth0"
wait $pid; rc=$?
t1=$(now_ms); a=$(snap)
$TC qdisc del dev veth0 clsact 2>/dev/null
$IP link set veth0 mtu "$mtu"; $IP link set veth1 mtu "$mtu"
d=$(delta "$b" "$a")
say "MTU drop mid-run: exit $rc after $((t1 - t0)) ms, counters (retry seq oos dup): $d; $(fc_err mtudrop)"
result "faults.mtu_drop_counters" "$(echo "$d" | tr ' ' '/')"
result "faults.mtu_drop_ms" "$((t1 - t0))"
if [ $rc != 0 ] && grep -qi "retry" /tmp/fc_mtudrop.err /tmp/fc_mtudrop.json; then
  pass "MTU mismatch mid-run: the run failed naming the retries ($(fc_err mtudrop))"
else
  fail "MTU mismatch mid-run: exit $rc, $(fc_err mtudrop)"
fi
set -- $d
[ "$1" -gt 0 ] && pass "MTU mismatch: completer_retry_err grew (+$1)" || fail "MTU mismatch: completer_retry_err did not grow"
stop_pid "$SERVE_PID"
fi
