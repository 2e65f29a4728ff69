# Helpers for the lab payload (busybox sh inside the VM).
#
# Busybox's shell prefers its own applets over files in PATH, and its `ip`
# cannot create veths or talk RDMA netlink: always call the real tools by path.
IP=/bin/ip
TC=/sbin/tc
RDMA=/usr/bin/rdma
FABCHECK=/opt/fabcheck/bin/fabcheck

LAB_FAILS=0
LAB_SKIPS=0

say() { echo "lab: $*"; }
# A machine-readable line the host collects: "LAB-RESULT key value".
result() { echo "LAB-RESULT $1 $2"; }
pass() { echo "LAB-PASS $*"; }
fail() { echo "LAB-FAIL $*"; LAB_FAILS=$((LAB_FAILS + 1)); }
skip() { echo "LAB-SKIP $*"; LAB_SKIPS=$((LAB_SKIPS + 1)); }

# The value of fc.NAME=VALUE on the kernel command line, or $2.
param() {
  for word in $(cat /proc/cmdline); do
    case "$word" in "fc.$1="*) echo "${word#fc.$1=}"; return ;; esac
  done
  echo "$2"
}

# A monotonic clock in milliseconds (for "ended within its timeout" checks).
now_ms() { awk '{printf "%d\n", $1 * 1000}' /proc/uptime; }

# hw counter of an rxe port: hwc rxe0 completer_retry_err
hwc() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0; }

# The same counter as the exporter serves it (one `--once` scrape of the live
# node): exp_counter rxe1 fabcheck_rdma_hw_completer_retry_err_total
exp_counter() {  # DEV METRIC
  "$FABCHECK" exporter --once --ethtool off --kubelet-socket none 2>/dev/null |
    awk -v d="device=\"$1\"" -v m="$2{" 'index($0, m) == 1 && index($0, d) {print $NF; exit}'
}

have_fabcheck() { [ -x "$FABCHECK" ] && "$FABCHECK" version >/dev/null 2>&1; }
# Whether the fabcheck binary has a given subcommand.
fabcheck_has() { have_fabcheck && "$FABCHECK" --help 2>&1 | grep -qE "^  *$1( |$)"; }

# Field of perftest's result line. BW tests print
#   #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]
# and latency tests
#   #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
# The result line is the first one that starts with the size.
perftest_field() {  # FILE SIZE COLUMN
  awk -v s="$2" -v c="$3" '$1 == s && NF >= 5 {print $c; exit}' "$1"
}

# Kills a background process by PID and reaps it, ignoring "no such process".
stop_pid() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; true; }

# Index of the RoCE v2 GID holding an IPv4 address on DEV's port 1 (what
# NCCL's auto-selection picks), computed independently of fabcheck.
ipv4_gid_index() {  # DEV
  for f in /sys/class/infiniband/$1/ports/1/gids/*; do
    i=${f##*/}
    case "$(cat "$f")" in 0000:0000:0000:0000:0000:ffff:*) ;; *) continue ;; esac
    [ "$(cat /sys/class/infiniband/$1/ports/1/gid_attrs/types/$i 2>/dev/null)" = "RoCE v2" ] && { echo "$i"; return; }
  done
  echo -1
}

# Runs a perftest pair on the one-VM layout: server on device A, client on B.
#   pt_pair LOGNAME TOOL [ARGS...]    (output of the client in /tmp/LOGNAME.log)
pt_pair() {
  name=$1; tool=$2; shift 2
  gid_a=$(ipv4_gid_index "$LAB_DEV_A"); gid_b=$(ipv4_gid_index "$LAB_DEV_B")
  timeout 120 "/usr/bin/$tool" -d "$LAB_DEV_A" -x "$gid_a" "$@" >"/tmp/$name.server.log" 2>&1 &
  spid=$!
  sleep 0.3
  rc=1
  for try in 1 2 3 4 5 6 7 8 9 10; do
    timeout 120 "/usr/bin/$tool" -d "$LAB_DEV_B" -x "$gid_b" "$@" "$LAB_IP_A" >"/tmp/$name.log" 2>&1 && { rc=0; break; }
    grep -q "Couldn't connect" "/tmp/$name.log" || break  # the server was not listening yet
    sleep 0.3
  done
  wait "$spid" 2>/dev/null
  return $rc
}

# A value from fabcheck's pretty-printed JSON by dotted path, array elements
# by index: jget FILE results.0.bw.avg_gbps   (busybox has no jq).
jget() {
  awk -v want="$2" '
    BEGIN { depth = 0 }
    {
      line = $0; sub(/^[ \t]+/, "", line); sub(/,$/, "", line)
      key = ""; rest = line
      if (line ~ /^"[^"]*": /) { i = index(line, "\": "); key = substr(line, 2, i - 2); rest = substr(line, i + 3) }
      if (rest == "{" || rest == "[") {
        if (key == "") { pos[depth]++; key = pos[depth] }
        depth++; stack[depth] = key; pos[depth] = -1; next
      }
      if (rest == "}" || rest == "]") { depth--; next }
      if (key == "" || rest == "{}" || rest == "[]") next
      p = ""; for (j = 2; j <= depth; j++) p = p stack[j] "."
      if (p key == want) { gsub(/^"|"$/, "", rest); print rest; exit }
    }' "$1"
}

# fabcheck perf against the server of the one-VM layout (rxe1 -> rxe0).
#   fc_perf NAME [perf run options...]   JSON in /tmp/fc_NAME.json, stderr in /tmp/fc_NAME.err
FC_PORT=18600
fc_perf() {
  name=$1; shift
  timeout 180 "$FABCHECK" perf run "$LAB_IP_A" --port "$FC_PORT" --transport verbs --timeout "${FC_TIMEOUT:-60}" --json "$@" \
    >"/tmp/fc_$name.json" 2>"/tmp/fc_$name.err"
}
fc_err() { tail -3 "/tmp/fc_$1.err" | tr '\n' ' '; }

# Starts `fabcheck perf serve` on ADDR:PORT in the background; sets SERVE_PID.
fc_serve() {  # ADDR PORT LOG
  "$FABCHECK" perf serve --bind "$1" --port "$2" --timeout 60 >"$3" 2>&1 &
  SERVE_PID=$!
  for i in $(seq 1 50); do
    netstat -ltn 2>/dev/null | grep -q ":$2 " && return 0
    sleep 0.1
  done
  say "fabcheck perf serve did not listen on $1:$2: $(tail -3 "$3")"
  return 1
}
