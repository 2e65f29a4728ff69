#!/bin/bash
# A node health check for Slurm's Prolog or Epilog (slurm.conf), or for
# HealthCheckProgram: `fabcheck doctor` on this node; a failing check (exit
# code 2) drains the node with the first failing finding as the reason, so no
# further job lands on a node with a downgraded link or a missing NIC.
#
#   install -m 0755 /usr/share/fabcheck/slurm/fabcheck-healthcheck.sh /etc/slurm/
#   # slurm.conf:
#   Epilog=/etc/slurm/fabcheck-healthcheck.sh
#   # or Prolog=... : then a failing node also hands the job back (Slurm requeues it)
#
# Settings (environment; in slurm.conf's Prolog/Epilog environment, or a
# /etc/default/fabcheck-healthcheck file holding NAME=value lines):
#   FABCHECK_PROFILE   hardware profile (e.g. /usr/share/fabcheck/profiles/dgx-h100-ib.yaml)
#   FABCHECK_ONLY      check groups and IDs (default L1,L2: links, PCIe, MTU and GIDs; fast, no traffic)
#   FABCHECK_ARGS      more doctor options (e.g. --sysroot for a test)
# Exit codes of doctor: 0 pass and 1 warnings keep the node; 2 drains it;
# 3 (doctor could not run) is logged and keeps the node: a broken health check
# must not drain a cluster. This script exits 0 except in a prolog whose node
# it drained (then 1, so Slurm requeues the job elsewhere).
set -uo pipefail
[ -r /etc/default/fabcheck-healthcheck ] && . /etc/default/fabcheck-healthcheck
fabcheck=${FABCHECK_BIN:-fabcheck}
node=${SLURMD_NODENAME:-$(hostname -s)}
args=(doctor --only "${FABCHECK_ONLY:-L1,L2}")
[ -n "${FABCHECK_PROFILE:-}" ] && args+=(--profile "$FABCHECK_PROFILE")
# shellcheck disable=SC2206  # FABCHECK_ARGS is a list of words by design
[ -n "${FABCHECK_ARGS:-}" ] && args+=($FABCHECK_ARGS)

report=$(timeout 120 "$fabcheck" "${args[@]}" 2>&1)
rc=$?
log() { logger -t fabcheck-healthcheck -- "$*" 2>/dev/null || true; echo "fabcheck-healthcheck: $*" >&2; }
case "$rc" in
  0 | 1) exit 0 ;;
  2)
    # The first failing finding names the check: "FAIL  L1  ib.port.rate  mlx5_0 port 1 ...".
    reason=$(printf '%s\n' "$report" | grep -m1 -E '^ *(FAIL|fail)\b' | tr -s ' ' | cut -c1-120)
    reason="fabcheck doctor: ${reason:-a check failed}"
    log "$node: $reason; draining"
    scontrol update NodeName="$node" State=DRAIN Reason="$reason" || log "$node: scontrol could not drain it"
    # In a prolog, a non-zero exit also hands the job back to the queue.
    [ -n "${SLURM_SCRIPT_CONTEXT:-}" ] && [ "${SLURM_SCRIPT_CONTEXT}" = prolog_slurmd ] && exit 1
    exit 0
    ;;
  *)
    log "$node: doctor could not run (exit $rc); the node is kept: $(printf '%s' "$report" | tail -n 1)"
    exit 0
    ;;
esac
