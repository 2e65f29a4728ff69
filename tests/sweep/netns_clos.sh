#!/bin/sh
# A routed two-tier Clos in network namespaces with four leaves, for judging
# the localiser on real packets (tests/sweep/netns_clos_test.cc and
# bench/sweep/clos_rates.sh): four leaf routers with two hosts each, two spine
# routers, every leaf linked to every spine, the leaves spreading flows over
# both spines by ECMP on the 5-tuple, as a RoCE fabric's switches do. With
# four leaves every uplink carries flows from and to several leaves, so one
# uplink (and its direction) can be told from the others.
# Every namespace and every interface is named loc*: namespaces
# ${LOC_PREFIX}l0.. (default loc-; the test uses loc<its pid>-), interfaces
# locs<j> (leaf to spine j), locl<i> (spine to leaf i), loch<k> (leaf port of
# host k), loceth0 (the host's), locbr0 (the leaf's bridge). Everything lives
# in namespaces this script creates, so the host's own network is never touched.
#
#   netns_clos.sh up     leaf routers l0..l3 (gateways 10.81.<i+1>.254), spines s0, s1;
#                        hosts h0..h7, two per leaf, h<k> on leaf k/2 at 10.81.<k/2+1>.<k+1>;
#                        a coordinator c on l0 at 10.81.1.100. Link leaf i - spine j:
#                        10.81.<100+10i+j>.1 on the leaf, .2 on the spine (the address the
#                        spine answers TTL probes from). MTU 9000.
#   netns_clos.sh shape none|oneway|twoway
#                        every host sends at most HOST_RATE (200mbit); oneway: the uplink
#                        leaf-0~spine-1 at BAD_RATE (20mbit) from leaf-0 to spine-1 only (tbf on
#                        the leaf's end); twoway: leaf-2~spine-0 at BAD_RATE both ways; none: no
#                        uplink shaped (the control)
#   netns_clos.sh agents BINARY DIR
#                        writes DIR/token (mode 600) and DIR/fabric.yaml (each spine's router
#                        addresses), starts one agent per host (logs DIR/agent<k>.log), waits
#                        until each serves
#   netns_clos.sh sweep BINARY DIR OUT
#                        one `sweep --strategy adaptive --topology` from the coordinator's
#                        namespace; OUT.json and OUT.txt; exits with the sweep's code
#   netns_clos.sh down   kills what runs in ${LOC_PREFIX}* namespaces, deletes them
#
# Why the rates: veth forwarding costs CPU, and on a shared 2-core machine a
# loaded moment can halve a host's throughput. Hosts are held at 200 Mbit/s,
# far below what the namespaces forward unloaded (several Gbit/s), and a bad
# uplink at 20 Mbit/s, a tenth of that, so a flow through it is slow next to
# its test's other flows whatever the load does to them.
set -eu
PREFIX=${LOC_PREFIX:-loc-}
LEAVES=4
SPINES=2

delete_ns() {
  for pid in $(ip netns pids "$1" 2>/dev/null || true); do kill -9 "$pid" 2>/dev/null || true; done
  ip netns del "$1" 2>/dev/null || true
}

down() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${PREFIX}" || true); do delete_ns "$ns"; done
}

reap() {  # leftovers of runs whose process is gone (loc<pid>-*)
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^loc[0-9]+-' || true); do
    owner=$(echo "$ns" | sed -E 's/^loc([0-9]+)-.*/\1/')
    if ! kill -0 "$owner" 2>/dev/null; then delete_ns "$ns"; fi
  done
}

router() {  # router NAME: forwarding, and TTL-expired answers not rate-limited
  ip netns add "${PREFIX}$1"
  ip -n "${PREFIX}$1" link set lo up
  ip netns exec "${PREFIX}$1" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.icmp_ratelimit=0 \
    net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
}

leaf() {  # leaf INDEX
  router "l$1"
  # ECMP on the 5-tuple computed from the headers, as a switch does (policy 3,
  # fields 0x37: addresses, protocol, ports). Policy 1 would reuse the hash the
  # sending socket left on the packet (it survives veth), which differs
  # between two sockets of one 5-tuple.
  ip netns exec "${PREFIX}l$1" sysctl -qw net.ipv4.fib_multipath_hash_policy=3 \
    net.ipv4.fib_multipath_hash_fields=0x0037
  ip -n "${PREFIX}l$1" link add locbr0 type bridge
  ip -n "${PREFIX}l$1" link set locbr0 mtu 9000 up
  ip -n "${PREFIX}l$1" addr add "10.81.$(($1 + 1)).254/24" dev locbr0
}

link() {  # link LEAF SPINE
  net="10.81.$((100 + 10 * $1 + $2))"
  ip link add "locs$2" netns "${PREFIX}l$1" mtu 9000 type veth peer name "locl$1" netns "${PREFIX}s$2" mtu 9000
  ip -n "${PREFIX}l$1" addr add "$net.1/24" dev "locs$2"
  ip -n "${PREFIX}s$2" addr add "$net.2/24" dev "locl$1"
  ip -n "${PREFIX}l$1" link set "locs$2" up
  ip -n "${PREFIX}s$2" link set "locl$1" up
  ip -n "${PREFIX}s$2" route add "10.81.$(($1 + 1)).0/24" via "$net.1"
}

host() {  # host NAME ADDRESS LEAF PORT
  ip netns add "${PREFIX}$1"
  ip -n "${PREFIX}$1" link set lo up
  ip link add loceth0 netns "${PREFIX}$1" mtu 9000 type veth peer name "$4" netns "${PREFIX}l$3" mtu 9000
  ip -n "${PREFIX}$1" addr add "$2/24" dev loceth0
  ip -n "${PREFIX}$1" link set loceth0 up
  ip -n "${PREFIX}$1" route add default via "10.81.$(($3 + 1)).254"
  ip -n "${PREFIX}l$3" link set "$4" master locbr0 up
}

up() {
  reap
  down
  trap 'echo "netns_clos: setup failed, cleaning up" >&2; down' EXIT
  l=0
  while [ "$l" -lt "$LEAVES" ]; do leaf "$l"; l=$((l + 1)); done
  s=0
  while [ "$s" -lt "$SPINES" ]; do router "s$s"; s=$((s + 1)); done
  l=0
  while [ "$l" -lt "$LEAVES" ]; do
    s=0
    while [ "$s" -lt "$SPINES" ]; do link "$l" "$s"; s=$((s + 1)); done
    l=$((l + 1))
  done
  # Each leaf reaches every other leaf's hosts over both spines (ECMP).
  l=0
  while [ "$l" -lt "$LEAVES" ]; do
    o=0
    while [ "$o" -lt "$LEAVES" ]; do
      if [ "$o" -ne "$l" ]; then
        ip -n "${PREFIX}l$l" route add "10.81.$((o + 1)).0/24" \
          nexthop via "10.81.$((100 + 10 * l)).2" dev locs0 nexthop via "10.81.$((101 + 10 * l)).2" dev locs1
      fi
      o=$((o + 1))
    done
    l=$((l + 1))
  done
  k=0
  while [ "$k" -lt $((2 * LEAVES)) ]; do
    host "h$k" "10.81.$((k / 2 + 1)).$((k + 1))" "$((k / 2))" "loch$k"
    k=$((k + 1))
  done
  host c 10.81.1.100 0 loch100
  trap - EXIT
}

HOST_RATE=${HOST_RATE:-200mbit}
BAD_RATE=${BAD_RATE:-20mbit}

qdisc() {  # qdisc NS DEV RATE: tbf on DEV's egress (burst above the 9000-byte MTU)
  ip netns exec "${PREFIX}$1" tc qdisc replace dev "$2" root tbf rate "$3" burst 64kb latency 50ms
}

unshape() {  # every uplink back to no qdisc
  l=0
  while [ "$l" -lt "$LEAVES" ]; do
    s=0
    while [ "$s" -lt "$SPINES" ]; do
      ip netns exec "${PREFIX}l$l" tc qdisc del dev "locs$s" root 2>/dev/null || true
      ip netns exec "${PREFIX}s$s" tc qdisc del dev "locl$l" root 2>/dev/null || true
      s=$((s + 1))
    done
    l=$((l + 1))
  done
}

shape() {
  k=0
  while [ "$k" -lt $((2 * LEAVES)) ]; do qdisc "h$k" loceth0 "$HOST_RATE"; k=$((k + 1)); done
  unshape
  case "$1" in
    none) ;;
    oneway) qdisc l0 locs1 "$BAD_RATE" ;;
    twoway) qdisc l2 locs0 "$BAD_RATE"; qdisc s0 locl2 "$BAD_RATE" ;;
    *) echo "shape: none, oneway or twoway" >&2; exit 64 ;;
  esac
}

addr() { echo "10.81.$(($1 / 2 + 1)).$(($1 + 1))"; }

agents() {  # agents BINARY DIR
  mkdir -p "$2"
  (umask 077; echo "loc-clos-token" > "$2/token")
  chmod 600 "$2/token"
  {
    echo "schema: fabcheck.fabric/v1"
    echo "spines:"
    printf '  - [{name: spine-0, addresses: [10.81.100.2, 10.81.110.2, 10.81.120.2, 10.81.130.2]},\n'
    printf '     {name: spine-1, addresses: [10.81.101.2, 10.81.111.2, 10.81.121.2, 10.81.131.2]}]\n'
    echo "members:"
    k=0
    while [ "$k" -lt $((2 * LEAVES)) ]; do
      echo "  - {name: gpu, address: $(addr $k), leaf: leaf-$((k / 2))}"
      k=$((k + 1))
    done
  } > "$2/fabric.yaml"
  k=0
  while [ "$k" -lt $((2 * LEAVES)) ]; do
    ip netns exec "${PREFIX}h$k" "$1" agent --listen "$(addr $k):18521" --name gpu --data-iface loceth0 \
      --token-file "$2/token" > "$2/agent$k.log" 2>&1 &
    k=$((k + 1))
  done
  k=0
  while [ "$k" -lt $((2 * LEAVES)) ]; do
    tries=0
    until grep -q serving "$2/agent$k.log" 2>/dev/null; do
      tries=$((tries + 1))
      if [ "$tries" -gt 200 ]; then echo "agent h$k did not start: $(cat "$2/agent$k.log")" >&2; exit 3; fi
      sleep 0.1
    done
    k=$((k + 1))
  done
}

sweep() {  # sweep BINARY DIR OUT
  list=""
  k=0
  while [ "$k" -lt $((2 * LEAVES)) ]; do list="$list${list:+,}$(addr $k)"; k=$((k + 1)); done
  rc=0
  timeout 300 ip netns exec "${PREFIX}c" "$1" sweep --agents "$list" --strategy adaptive --topology "$2/fabric.yaml" \
    --duration 0.5s --lat-duration 0.1s --bw-size 64K --token-file "$2/token" --parallel 2 --quiet \
    --output "$3.json" > "$3.txt" 2>&1 || rc=$?
  return "$rc"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  shape) shape "${2:-}" ;;
  agents) agents "$2" "$3" ;;
  sweep) sweep "$2" "$3" "$4" ;;
  *) echo "usage: $0 up | down | shape none|oneway|twoway | agents BINARY DIR | sweep BINARY DIR OUT" >&2; exit 64 ;;
esac
