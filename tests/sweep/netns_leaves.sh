#!/bin/sh
# A routed two-tier Clos in network namespaces, for the topology-aware sweep's
# end-to-end test: two leaf routers (a bridge for their hosts each) and two
# spine routers, every leaf linked to every spine, the leaves spreading flows
# over both spines by ECMP on the 5-tuple, as a RoCE fabric's switches do.
# Everything is named $S16_PREFIX* (default s16-; the test uses s16<its pid>-)
# and lives in namespaces this script creates, so the host's own network is
# never touched.
#
#   netns_leaves.sh up     leaf routers ${PREFIX}l0, l1 (gateways 10.78.1.254, 10.78.2.254);
#                          spines ${PREFIX}s0, s1; hosts ${PREFIX}h0..h3 on l0 at 10.78.1.1..4,
#                          h4..h7 on l1 at 10.78.2.5..8; a coordinator ${PREFIX}c on l0 at
#                          10.78.1.100. Link leaf i - spine j: 10.78.(10*(i+1)+j).1 on the
#                          leaf, .2 on the spine (the address the spine answers TTL probes
#                          from). MTU 9000. In leaf li the link to spine j is device sj, in
#                          spine sj the link to leaf i is device li.
#   netns_leaves.sh down   kills what runs in ${PREFIX}* namespaces, deletes them
set -eu
PREFIX=${S16_PREFIX:-s16-}

delete_ns() {
  for pid in $(ip netns pids "$1" 2>/dev/null || true); do kill -9 "$pid" 2>/dev/null || true; done
  ip netns del "$1" 2>/dev/null || true
}

down() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${PREFIX}" || true); do delete_ns "$ns"; done
}

reap() {  # leftovers of runs whose test process is gone
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^s16[0-9]+-' || true); do
    owner=$(echo "$ns" | sed -E 's/^s16([0-9]+)-.*/\1/')
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
  # fields: addresses, protocol, ports). Policy 1 would reuse the hash the
  # sending socket left on the packet (it survives veth), which differs
  # between two sockets of one 5-tuple.
  ip netns exec "${PREFIX}l$1" sysctl -qw net.ipv4.fib_multipath_hash_policy=3 \
    net.ipv4.fib_multipath_hash_fields=0x0037
  ip -n "${PREFIX}l$1" link add br0 type bridge
  ip -n "${PREFIX}l$1" link set br0 mtu 9000 up
  ip -n "${PREFIX}l$1" addr add "10.78.$(($1 + 1)).254/24" dev br0
}

link() {  # link LEAF SPINE
  net="10.78.$((10 * ($1 + 1) + $2))"
  ip link add "s$2" netns "${PREFIX}l$1" mtu 9000 type veth peer name "l$1" netns "${PREFIX}s$2" mtu 9000
  ip -n "${PREFIX}l$1" addr add "$net.1/24" dev "s$2"
  ip -n "${PREFIX}s$2" addr add "$net.2/24" dev "l$1"
  ip -n "${PREFIX}l$1" link set "s$2" up
  ip -n "${PREFIX}s$2" link set "l$1" up
  ip -n "${PREFIX}s$2" route add "10.78.$(($1 + 1)).0/24" via "$net.1"
}

host() {  # host NAME ADDRESS LEAF
  ip netns add "${PREFIX}$1"
  ip -n "${PREFIX}$1" link set lo up
  ip link add eth0 netns "${PREFIX}$1" mtu 9000 type veth peer name "p$1" netns "${PREFIX}l$3" mtu 9000
  ip -n "${PREFIX}$1" addr add "$2/24" dev eth0
  ip -n "${PREFIX}$1" link set eth0 up
  ip -n "${PREFIX}$1" route add default via "10.78.$(($3 + 1)).254"
  ip -n "${PREFIX}l$3" link set "p$1" master br0 up
}

up() {
  reap
  down
  trap 'echo "netns_leaves: setup failed, cleaning up" >&2; down' EXIT
  leaf 0
  leaf 1
  router s0
  router s1
  for l in 0 1; do
    for s in 0 1; do link "$l" "$s"; done
  done
  # Each leaf reaches the other's hosts over both spines (ECMP).
  ip -n "${PREFIX}l0" route add 10.78.2.0/24 nexthop via 10.78.10.2 dev s0 nexthop via 10.78.11.2 dev s1
  ip -n "${PREFIX}l1" route add 10.78.1.0/24 nexthop via 10.78.20.2 dev s0 nexthop via 10.78.21.2 dev s1
  i=0
  while [ "$i" -lt 8 ]; do
    host "h$i" "10.78.$((i / 4 + 1)).$((i + 1))" "$((i / 4))"
    i=$((i + 1))
  done
  host c 10.78.1.100 0
  trap - EXIT
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up | down" >&2; exit 64 ;;
esac
