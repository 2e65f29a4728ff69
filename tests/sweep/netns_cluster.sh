#!/bin/sh
# A cluster of network-namespace hosts behind one bridge, for the sweep's
# end-to-end test. Everything is named $FCSW_PREFIX* (default fcsw-; the test
# uses fcsw<its pid>- so two runs at once never touch each other) and lives in
# namespaces this script creates (the bridge too, in ${PREFIX}sw), so the
# host's own network is never touched.
#
#   netns_cluster.sh up N     hosts ${PREFIX}h0..h{N-1} at 10.77.0.1..N/24, MTU 9000,
#                             and a coordinator ${PREFIX}c at 10.77.0.100
#   netns_cluster.sh down     kills what runs in ${PREFIX}* namespaces, deletes them
#
# "up" cleans up after itself when any step fails (trap), and starts by
# removing leftovers: its own prefix's, and those of earlier runs whose test
# process is gone (fcsw<pid>- with no such pid: killed before its teardown).
set -eu
PREFIX=${FCSW_PREFIX:-fcsw-}

delete_ns() {
  # Only processes inside our own namespaces: the agents a test started.
  for pid in $(ip netns pids "$1" 2>/dev/null || true); do kill -9 "$pid" 2>/dev/null || true; done
  ip netns del "$1" 2>/dev/null || true
}

down() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${PREFIX}" || true); do
    delete_ns "$ns"
  done
}

reap() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^fcsw[0-9]+-' || true); do
    owner=$(echo "$ns" | sed -E 's/^fcsw([0-9]+)-.*/\1/')
    if ! kill -0 "$owner" 2>/dev/null; then delete_ns "$ns"; fi
  done
}

host() {  # host NAMESPACE ADDRESS PORTNAME
  ip netns add "$1"
  ip -n "$1" link set lo up
  ip link add eth0 netns "$1" mtu 9000 type veth peer name "$3" netns ${PREFIX}sw mtu 9000
  ip -n "$1" addr add "$2/24" dev eth0
  ip -n "$1" link set eth0 up
  ip -n ${PREFIX}sw link set "$3" master br0 up
}

up() {
  n=$1
  reap
  down
  trap 'echo "netns_cluster: setup failed, cleaning up" >&2; down' EXIT
  ip netns add ${PREFIX}sw
  ip -n ${PREFIX}sw link set lo up
  ip -n ${PREFIX}sw link add br0 type bridge
  ip -n ${PREFIX}sw link set br0 mtu 9000 up
  i=0
  while [ "$i" -lt "$n" ]; do
    host ${PREFIX}h$i 10.77.0.$((i + 1)) p$i
    i=$((i + 1))
  done
  host ${PREFIX}c 10.77.0.100 pc
  trap - EXIT
}

case "${1:-}" in
  up) up "${2:?usage: $0 up N}" ;;
  down) down ;;
  *) echo "usage: $0 up N | down" >&2; exit 64 ;;
esac
