# Suite "two": the two-VM layout, one rxe0 per VM on a virtio NIC joined by a
# UDP socket network: real two-node RoCE. The server VM runs perftest servers
# in sequence and `fabcheck perf serve`; the client VM runs the same tests
# against them, including the rdma_cm path (perftest -R, fabcheck --cm).
#   fc.size=65536 fc.iters=500 fc.lat_iters=500 fc.cm_iters=100
role=$(param role server)
size=$(param size 65536)
iters=$(param iters 500)
lat_iters=$(param lat_iters 500)
# rdma_cm between the emulated VMs moves 4-6 Mb/s: 500 messages of 64 KiB
# took about 60 s, the perf control channel's --timeout, and a run on a busy
# host timed out. Both tools' --cm runs send fewer (the suite proves the
# rdma_cm path and its validation, not the figure).
cm_iters=$(param cm_iters 100)
gid=$(ipv4_gid_index rxe0)
PT_TESTS="ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_write_bw_cm"
pt_args() {  # TOOL -> its options (same on both sides)
  case $1 in
    ib_write_lat) echo "-s 2 -n $lat_iters -F" ;;
    *_cm) echo "-s $size -n $cm_iters --report_gbits -F -R" ;;
    *) echo "-s $size -n $iters --report_gbits -F" ;;
  esac
}
if [ "$role" = server ]; then
  have_fabcheck && { fc_serve "$LAB_IP_A" "$FC_PORT" /tmp/fc_serve.log || fail "fabcheck perf serve did not start"; }
  for t in $PT_TESTS; do
    timeout 120 "/usr/bin/${t%_cm}" -d rxe0 -x "$gid" $(pt_args "$t") >"/tmp/$t.server.log" 2>&1 ||
      fail "perftest server $t: $(tail -2 /tmp/$t.server.log | tr '\n' ' ')"
  done
  say "perftest servers done; waiting for the client's end"
  timeout 400 nc -l -p 18700 >/tmp/client-done 2>&1
  say "client says: $(cat /tmp/client-done)"
  [ -f /tmp/fc_serve.log ] && say "fabcheck perf serve log: $(tail -5 /tmp/fc_serve.log | tr '\n' ' ')"
  [ -n "${SERVE_PID:-}" ] && stop_pid "$SERVE_PID"
else
  for i in $(seq 1 100); do ping -c 1 -W 1 "$LAB_IP_B" >/dev/null 2>&1 && break; sleep 0.2; done
  for t in $PT_TESTS; do
    ok=0
    for try in $(seq 1 30); do
      timeout 120 "/usr/bin/${t%_cm}" -d rxe0 -x "$gid" $(pt_args "$t") "$LAB_IP_B" >"/tmp/$t.log" 2>&1 && { ok=1; break; }
      grep -q "Couldn't connect\|Unable to\|Failed to" "/tmp/$t.log" || break
      sleep 0.5
    done
    if [ $ok = 1 ]; then
      case $t in
        ib_write_lat) v=$(perftest_field "/tmp/$t.log" 2 5); result "perftest.write_lat.2.typical" "$v" ;;
        ib_write_bw_cm) v=$(perftest_field "/tmp/$t.log" "$size" 4); result "perftest.write_bw_cm.$size" "$v" ;;
        *) v=$(perftest_field "/tmp/$t.log" "$size" 4); n=${t#ib_}; result "perftest.$n.$size" "$v" ;;
      esac
      pass "two-VM perftest $t: $v"
    else
      fail "two-VM perftest $t: $(tail -2 /tmp/$t.log | tr '\n' ' ')"
    fi
  done
  if fabcheck_has perf; then
    two_perf() {  # NAME ARGS...
      name=$1; shift
      timeout 180 "$FABCHECK" perf run "$LAB_IP_B" --port "$FC_PORT" --transport verbs --timeout 60 --json "$@" \
        >"/tmp/fc_$name.json" 2>"/tmp/fc_$name.err"
    }
    for op in write read send; do
      if two_perf "${op}_bw" --test bw --op $op --size "$size" --iters "$iters"; then
        v=$(jget "/tmp/fc_${op}_bw.json" results.0.bw.avg_gbps); result "fabcheck.${op}_bw.$size" "$v"
        pass "two-VM fabcheck $op bw: $v Gb/s (server device $(jget /tmp/fc_${op}_bw.json server_endpoint.device), chosen automatically)"
      else
        fail "two-VM fabcheck $op bw: $(fc_err "${op}_bw")"
      fi
    done
    if two_perf write_lat --test lat --op write --size 2 --iters "$lat_iters"; then
      v=$(jget /tmp/fc_write_lat.json results.0.lat.median_us); result "fabcheck.write_lat.2.typical" "$v"
      pass "two-VM fabcheck write lat: $v us"
    else
      fail "two-VM fabcheck write lat: $(fc_err write_lat)"
    fi
    if two_perf write_bw_cm --test bw --op write --size "$size" --iters "$cm_iters" --cm --validate; then
      v=$(jget /tmp/fc_write_bw_cm.json results.0.bw.avg_gbps); result "fabcheck.write_bw_cm.$size" "$v"
      cm=$(jget /tmp/fc_write_bw_cm.json settings.use_cm)
      [ "$cm" = true ] && pass "two-VM fabcheck --cm write bw: $v Gb/s, validated" || fail "--cm run does not report use_cm"
    else
      fail "two-VM fabcheck --cm: $(fc_err write_bw_cm)"
    fi
    if two_perf send_lat_cm --test lat --op send --size 2 --iters 200 --cm; then
      pass "two-VM fabcheck --cm send lat"
    else
      fail "two-VM fabcheck --cm send lat: $(fc_err send_lat_cm)"
    fi
  else
    skip "two-VM fabcheck: this build has no perf command"
  fi
  echo "done $LAB_FAILS" | timeout 10 nc "$LAB_IP_B" 18700 || say "could not tell the server we are done"
fi
