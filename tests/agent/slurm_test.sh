#!/bin/bash
# The README's Slurm first run with srun's environment:
#  1. deploy/slurm/fabcheck-ladder.sbatch, run as sbatch runs it, with a
#     stand-in srun that starts one rank per "node" with SLURM_PROCID,
#     SLURM_NTASKS and SLURM_STEP_NODELIST set as srun sets them: the ranks
#     find rank 0 from the node list (no --coordinator) and the script leaves
#     the bundle and the report in the submit directory. In a network
#     namespace of its own, so the default rendezvous port is free.
#  2. deploy/slurm/fabcheck-healthcheck.sh with a stand-in scontrol: doctor's
#     exit 2 drains the node with the failing check as the reason; 0, 1 and 3
#     keep it.
#   slurm_test.sh FABCHECK_BINARY SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d)
ns=""
cleanup() {
  [ -n "$ns" ] && { for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done; ip netns del "$ns" 2>/dev/null; }
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work"/*.log "$work"/submit/*.out; do [ -f "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }; done; exit 1; }
mkdir -p "$work/bin" "$work/submit"
ln -s "$(readlink -f "$bin")" "$work/bin/fabcheck"

# ---- 2. the health check (no root needed) ----
cat >"$work/bin/scontrol" <<'STUB'
#!/bin/sh
echo "$@" >>"$SCONTROL_LOG"
STUB
chmod +x "$work/bin/scontrol"
export SCONTROL_LOG=$work/scontrol.log
check() {  # check FABCHECK_BIN CONTEXT -> the script's exit code
  local rc=0
  env PATH="$work/bin:$PATH" SLURMD_NODENAME=gpu07 FABCHECK_BIN="$1" SLURM_SCRIPT_CONTEXT="$2" \
    FABCHECK_PROFILE="$src/profiles/dgx-h100-ib.yaml" \
    FABCHECK_ARGS="--sysroot $src/tests/data/captures/h200-1gpu.tar.gz" \
    "$src/deploy/slurm/fabcheck-healthcheck.sh" >>"$work/health.log" 2>&1 || rc=$?
  return $rc
}
# The 1-GPU VM capture against the 8-GPU DGX profile: doctor fails (exit 2).
real_rc=0
"$bin" doctor --only L1,L2 --profile "$src/profiles/dgx-h100-ib.yaml" \
  --sysroot "$src/tests/data/captures/h200-1gpu.tar.gz" >"$work/doctor.log" 2>&1 || real_rc=$?
[ "$real_rc" = 2 ] || fail "doctor on the capture against the DGX profile exited $real_rc, expected 2"
: >"$SCONTROL_LOG"
check fabcheck epilog_slurmd || fail "the epilog exited non-zero"
grep -q "update NodeName=gpu07 State=DRAIN Reason=fabcheck doctor: " "$SCONTROL_LOG" || fail "no drain: $(cat "$SCONTROL_LOG")"
: >"$SCONTROL_LOG"
rc=0; check fabcheck prolog_slurmd || rc=$?
[ "$rc" = 1 ] || fail "a prolog that drained its node exited $rc, expected 1 (the job is requeued)"
for code in 0 1 3; do
  printf '#!/bin/sh\nexit %s\n' "$code" >"$work/bin/fake-$code"; chmod +x "$work/bin/fake-$code"
  : >"$SCONTROL_LOG"
  check "$work/bin/fake-$code" epilog_slurmd || fail "doctor exit $code: the check failed"
  [ ! -s "$SCONTROL_LOG" ] || fail "doctor exit $code drained the node: $(cat "$SCONTROL_LOG")"
done
echo "health check: exit 2 drains (reason: $(sed 's/.*Reason=//' <<<"$(grep -h DRAIN "$work/scontrol.log" 2>/dev/null | head -1)"))"

# ---- 1. the sbatch script under a stand-in srun ----
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "SKIP (the sbatch part): needs root and ip(8) for a network namespace"; exit 77
fi
ns=${FABCHECK_NETNS_PREFIX:-fcsw$$-}slurm
ip netns add "$ns" || { echo "SKIP: cannot create a network namespace"; exit 77; }
ip -n "$ns" link set lo up
cat >"$work/bin/srun" <<'STUB'
#!/bin/bash
# One task per node of SLURM_JOB_NODELIST's count, as srun --ntasks-per-node=1 starts them.
while [ "${1:-}" != "" ] && [ "${1#-}" != "$1" ]; do shift; done
pids=() rc=0
for ((i = 0; i < SLURM_NNODES; i++)); do
  SLURM_PROCID=$i SLURM_NTASKS=$SLURM_NNODES SLURM_STEP_NODELIST=$SLURM_JOB_NODELIST SLURM_STEPID=0 "$@" \
    >"$SRUN_LOG.$i" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { r=$?; [ "$r" -gt "$rc" ] && rc=$r; }; done
cat "$SRUN_LOG.0"
exit "$rc"
STUB
chmod +x "$work/bin/srun"
sh -c "umask 077; openssl rand -hex 32 >$work/token"
rc=0
( cd "$work/submit" && ip netns exec "$ns" env PATH="$work/bin:$PATH" SRUN_LOG="$work/rank.log" \
    SLURM_JOB_ID=4242 SLURM_NNODES=2 SLURM_JOB_NODELIST=localhost SLURM_SUBMIT_DIR="$work/submit" \
    FABCHECK_TOKEN_FILE="$work/token" FABCHECK_DATA_IFACE=lo FABCHECK_RUNGS=L1 \
    timeout 300 bash "$src/deploy/slurm/fabcheck-ladder.sbatch" >"$work/sbatch.log" 2>&1 ) || rc=$?
[ -s "$work/submit/fabcheck-ladder-4242.tar.gz" ] || fail "no bundle (sbatch exit $rc)"
[ -s "$work/submit/fabcheck-ladder-4242.html" ] || fail "no report"
[ "$rc" -le 2 ] || fail "the ladder could not run (exit $rc)"
grep -q "rendezvous at localhost:18522" "$work/rank.log.0" "$work/sbatch.log" 2>/dev/null ||
  grep -q "2 members\|members: 2\|2/2" "$work/sbatch.log" || fail "rank 0 did not coordinate both ranks"
echo "PASS: sbatch script with srun's environment (exit $rc), bundle and report; health check drains on exit 2"
