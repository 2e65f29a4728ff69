#!/bin/sh
# How often the adaptive sweep names what is wrong on real packets: the
# four-leaf Clos of tests/sweep/netns_clos.sh, RUNS sweeps per fabric state
# (oneway: leaf-0 -> spine-1 shaped; twoway: leaf-2 ~ spine-0 both ways;
# control: nothing), one sweep at a time, real agents. Run by hand as root
# (minutes per sweep state; not in CI, which runs one sweep of each):
#
#   bench/sweep/clos_rates.sh build/src/app/fabcheck 20 [OUTDIR]
#
# A sweep counts as right when:
#   oneway   uplink leaf-0~spine-1 is named with direction leaf-0->spine-1
#   twoway   uplink leaf-2~spine-0 is named with direction both
#   control  nothing is named and the exit code is 0
# and, separately, when no host (node, NIC, cable, MTU) is blamed and nothing
# else is named. Prints one line per sweep and the rates.
set -eu
BINARY=$(realpath "${1:?usage: clos_rates.sh BINARY RUNS [OUTDIR]}")
RUNS=${2:-20}
OUT=$(realpath -m "${3:-/tmp/loc-clos-rates}")
HERE=$(dirname "$0")
SCRIPT=$(realpath "$HERE/../../tests/sweep/netns_clos.sh")
export LOC_PREFIX="loc$$-"
mkdir -p "$OUT"
trap 'sh "$SCRIPT" down' EXIT INT TERM
sh "$SCRIPT" up
sh "$SCRIPT" agents "$BINARY" "$OUT"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for state in oneway twoway none; do
  sh "$SCRIPT" shape "$state"
  i=1
  while [ "$i" -le "$RUNS" ]; do
    rc=0
    sh "$SCRIPT" sweep "$BINARY" "$OUT" "$OUT/$state-$i" || rc=$?
    python3 - "$state" "$OUT/$state-$i.json" "$rc" <<'PY'
import json, sys
state, path, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{state} {path}: no result ({e}), exit {rc}")
    sys.exit(0)
els = r["verdict"].get("elements", [])
want = {"oneway": ("leaf-0~spine-1", "leaf-0->spine-1"), "twoway": ("leaf-2~spine-0", "both")}.get(state)
if want:
    right = any(e["element"] == want[0] and e.get("direction") == want[1] and e["kind"] == "uplink" for e in els)
    extra = [e for e in els if e["element"] != want[0]]
else:
    right = not els and rc == 0
    extra = els
host = [e for e in els if e["kind"] in ("node", "nic", "cable", "mtu")]
named = ", ".join(f"{e['kind']} {e['element']} ({e.get('direction', '')})" for e in els) or "nothing"
print(f"RESULT {state} right={int(right)} host={int(bool(host))} extra={len(extra)} exit={rc} "
      f"rounds={r['rounds_completed']} retests={len(r.get('retests', []))} elapsed={r['elapsed_s']:.0f}s: {named}")
PY
    i=$((i + 1))
  done
done | tee "$OUT/results.txt"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
for state in oneway twoway none; do
  n=$(grep -c "^RESULT $state " "$OUT/results.txt" || true)
  right=$(grep -c "^RESULT $state right=1" "$OUT/results.txt" || true)
  host=$(grep -c "^RESULT $state .*host=1" "$OUT/results.txt" || true)
  extra=$(grep "^RESULT $state " "$OUT/results.txt" | grep -vc "extra=0" || true)
  echo "$state: right $right/$n, a host blamed in $host, something else named in $extra"
done
