# Entry point of the lab payload, run by /init with the kernel command line.
#   fc.layout=one            one VM: rxe0 on veth0 (10.0.0.1), rxe1 on veth1 (10.0.0.2)
#   fc.layout=two fc.role=server|client fc.self=IP fc.peer=IP
#                            two VMs joined by a UDP socket network, one rxe0 each
#   fc.suites=a,b,c          suites to run (payload/suite-<name>.sh), in order
#   fc.suite_timeout=420     seconds a suite may take before it fails as hung (above the
#                            two-VM server's 400 s wait for its client)
#   fc.mtu=9000              netdev MTU (rxe active MTU: 1500 -> 1024, 9000 -> 4096; 4096
#                            carries a 64 KiB message in 16 packets instead of 64)
# Exit status: 0 all passed, 1 something failed, 2 the lab itself could not start.
. /payload/lib.sh

layout=$(param layout one)
suites=$(param suites devices)
mtu=$(param mtu 9000)
echo 1 >/proc/sys/kernel/printk_ratelimit 2>/dev/null
# rxe hands a whole burst of packets to the veth at once (128 writes of 64 KiB
# are 2048 packets at MTU 4096, 8192 at 1024); the default backlog of 1000
# drops most of them, and the retransmissions that follow make every
# bandwidth run (perftest's too) slow and erratic. A switch port buffers them.
echo 262144 >/proc/sys/net/core/netdev_max_backlog
$IP link set lo up

setup_one() {
  $IP link add veth0 type veth peer name veth1 || return 1
  $IP link set veth0 mtu "$mtu" && $IP link set veth1 mtu "$mtu"
  $IP addr add 10.0.0.1/32 dev veth0 && $IP addr add 10.0.0.2/32 dev veth1 || return 1
  $IP link set veth0 up && $IP link set veth1 up || return 1
  for c in all default veth0 veth1; do
    echo 1 >/proc/sys/net/ipv4/conf/$c/accept_local
    echo 0 >/proc/sys/net/ipv4/conf/$c/rp_filter
  done
  # Traffic between two local addresses would go through lo, where rxe drops
  # it: look up the local table after two policy rules that send each
  # direction out of the veth that owns the source address.
  $IP rule add pref 1000 lookup local && $IP rule del pref 0 || return 1
  $IP rule add pref 10 iif lo from 10.0.0.2 to 10.0.0.1 lookup 101
  $IP route add 10.0.0.1 dev veth1 table 101
  $IP rule add pref 11 iif lo from 10.0.0.1 to 10.0.0.2 lookup 102
  $IP route add 10.0.0.2 dev veth0 table 102
  mac0=$(cat /sys/class/net/veth0/address)
  mac1=$(cat /sys/class/net/veth1/address)
  $IP neigh add 10.0.0.1 lladdr "$mac0" dev veth1 nud permanent
  $IP neigh add 10.0.0.2 lladdr "$mac1" dev veth0 nud permanent
  $RDMA link add rxe0 type rxe netdev veth0 || return 1
  $RDMA link add rxe1 type rxe netdev veth1 || return 1
  LAB_DEV_A=rxe0 LAB_IP_A=10.0.0.1 LAB_DEV_B=rxe1 LAB_IP_B=10.0.0.2
}

setup_two() {
  self=$(param self 10.0.1.1)
  dev=$(ls /sys/class/net | grep -v -e '^lo$' -e '^sit' | head -1)
  [ -n "$dev" ] || { say "no virtio NIC in this VM"; return 1; }
  $IP link set "$dev" mtu "$mtu" && $IP addr add "$self/24" dev "$dev" && $IP link set "$dev" up || return 1
  $RDMA link add rxe0 type rxe netdev "$dev" || return 1
  LAB_DEV_A=rxe0 LAB_IP_A=$self LAB_IP_B=$(param peer 10.0.1.2) LAB_NETDEV=$dev
}

case "$layout" in
  one) setup_one ;;
  two) setup_two ;;
  *) say "unknown fc.layout=$layout"; false ;;
esac || { say "network setup for layout $layout failed"; exit 2; }

# rxe ports go ACTIVE when their netdev has carrier; wait for it (bounded).
for i in $(seq 1 50); do
  n=$(cat /sys/class/infiniband/*/ports/1/state 2>/dev/null | grep -c ACTIVE)
  [ "$n" -ge 1 ] && { [ "$layout" = two ] || [ "$n" -ge 2 ]; } && break
  sleep 0.1
done
say "layout $layout up after $(awk '{print $1}' /proc/uptime) s of uptime: $(cat /sys/class/infiniband/*/ports/1/state | tr '\n' ' ')"
export LAB_DEV_A LAB_IP_A LAB_DEV_B LAB_IP_B LAB_NETDEV layout

# Each suite runs in a subshell under a watchdog: a command that hangs fails
# its suite after fc.suite_timeout seconds, with the processes still running
# and the kernel's last words as evidence, instead of stalling the VM until the
# host's timeout with nothing said. The run stops there: what a hung suite
# leaves behind (servers, qdiscs, MTUs) would only mislead the next suites.
suite_timeout=$(param suite_timeout 420)
hung_evidence() {
  say "processes still running:"
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [ "$pid" -gt 1 ] 2>/dev/null || continue
    cmd=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)
    [ -n "$cmd" ] || continue
    echo "  $pid $(cat "$d/wchan" 2>/dev/null) $cmd"
  done
  say "kernel log, last lines:"
  dmesg 2>/dev/null | tail -20 | sed 's/^/  /'
}
for suite in $(echo "$suites" | tr ',' ' '); do
  if [ ! -f "/payload/suite-$suite.sh" ]; then fail "suite $suite does not exist"; continue; fi
  say "=== suite $suite ($(awk '{print $1}' /proc/uptime) s)"
  rm -f /tmp/suite.counts
  ( LAB_FAILS=0 LAB_SKIPS=0; . "/payload/suite-$suite.sh"; echo "$LAB_FAILS $LAB_SKIPS" >/tmp/suite.counts ) &
  suite_pid=$!
  waited=0
  while kill -0 "$suite_pid" 2>/dev/null && [ "$waited" -lt "$suite_timeout" ]; do
    sleep 1; waited=$((waited + 1))
  done
  if kill -0 "$suite_pid" 2>/dev/null; then
    fail "suite $suite did not finish within $suite_timeout s (fc.suite_timeout): a command in it hangs"
    hung_evidence
    break
  fi
  wait "$suite_pid"
  if [ -f /tmp/suite.counts ]; then
    read -r f s </tmp/suite.counts
    LAB_FAILS=$((LAB_FAILS + f)) LAB_SKIPS=$((LAB_SKIPS + s))
  else
    fail "suite $suite ended without reaching its end (a command in it exited the shell)"
  fi
done
say "=== done at $(awk '{print $1}' /proc/uptime) s: $LAB_FAILS failed, $LAB_SKIPS skipped"
[ "$LAB_FAILS" -eq 0 ]
