#!/bin/sh
# Two "leaves" (a bridge each, in namespaces ${PREFIX}l0 and ${PREFIX}l1)
# joined by one "spine" path (a veth between the bridges), four hosts on each,
# for the topology-aware sweep's end-to-end test. Everything is named
# $S16_PREFIX* (default s16-; the test uses s16<its pid>-) and lives in
# namespaces this script creates, so the host's own network is never touched.
#
#   netns_leaves.sh up      hosts ${PREFIX}h0..h3 on l0, h4..h7 on l1 at 10.78.0.1..8/24,
#                           MTU 9000, a coordinator ${PREFIX}c on l0 at 10.78.0.100
#   netns_leaves.sh down    kills what runs in ${PREFIX}* namespaces, deletes them
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

leaf() {
  ip netns add "${PREFIX}$1"
  ip -n "${PREFIX}$1" link set lo up
  ip -n "${PREFIX}$1" link add br0 type bridge
  ip -n "${PREFIX}$1" link set br0 mtu 9000 up
}

host() {  # host NAME ADDRESS LEAF
  ip netns add "${PREFIX}$1"
  ip -n "${PREFIX}$1" link set lo up
  ip link add eth0 netns "${PREFIX}$1" mtu 9000 type veth peer name "p$1" netns "${PREFIX}$3" mtu 9000
  ip -n "${PREFIX}$1" addr add "$2/24" dev eth0
  ip -n "${PREFIX}$1" link set eth0 up
  ip -n "${PREFIX}$3" link set "p$1" master br0 up
}

up() {
  reap
  down
  trap 'echo "netns_leaves: setup failed, cleaning up" >&2; down' EXIT
  leaf l0
  leaf l1
  # The spine path: one veth whose ends are ports of the two bridges.
  ip link add up0 netns "${PREFIX}l0" mtu 9000 type veth peer name up1 netns "${PREFIX}l1" mtu 9000
  ip -n "${PREFIX}l0" link set up0 master br0 up
  ip -n "${PREFIX}l1" link set up1 master br0 up
  i=0
  while [ "$i" -lt 8 ]; do
    host "h$i" "10.78.0.$((i + 1))" "l$((i / 4))"
    i=$((i + 1))
  done
  host c 10.78.0.100 l0
  trap - EXIT
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up | down" >&2; exit 64 ;;
esac
