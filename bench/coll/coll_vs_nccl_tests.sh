#!/bin/bash
# fabcheck coll beside nccl-tests on the same GPUs, interleaved, N rounds:
# busbw ratios fabcheck / nccl-tests per size, out-of-place and in-place.
#
#   bench/coll/coll_vs_nccl_tests.sh FABCHECK NCCL_TESTS_BUILD_DIR [OP] [MIN:MAX] [ROUNDS] [NGPUS]
#   e.g. bench/coll/coll_vs_nccl_tests.sh build/src/app/fabcheck ~/nccl-tests/build all_gather 1G:8G 3 2
#
# Both tools: float, sum, x2 steps, 5 warm-up and 20 timed iterations, no
# data check (add CHECK=1 for --check / -c 1), one process driving NGPUS GPUs
# (-g NGPUS); PER_GPU=1 adds a fabcheck run with one process per GPU.
# Keep NCCL_NVLS_ENABLE=0 on machines without NVLink multicast.
set -euo pipefail
F=${1:?fabcheck binary}; B=${2:?nccl-tests build directory}
OP=${3:-all_gather}; SIZES=${4:-1G:8G}; ROUNDS=${5:-3}; NGPUS=${6:-2}
MIN=${SIZES%%:*}; MAX=${SIZES##*:}
C=0; FCHECK=(); [ "${CHECK:-0}" = 1 ] && C=1 && FCHECK=(--check)
W=$(mktemp -d /tmp/fabcheck-coll-bench-XXXXXX)
GPUS=$(seq -s, 0 $((NGPUS - 1)))
for round in $(seq 1 "$ROUNDS"); do
  NCCL_DEBUG=WARN "$B/${OP}_perf" -b "$MIN" -e "$MAX" -f 2 -g "$NGPUS" -w 5 -n 20 -c $C > "$W/nt.$round.txt"
  NCCL_DEBUG=WARN "$F" coll --op "$OP" --sizes "$SIZES" --gpus "$GPUS" --warmup 5 --iters 20 "${FCHECK[@]}" --json \
    --nccl-log-dir "$W/log.$round" > "$W/fc.$round.json" || true
  if [ "${PER_GPU:-0}" = 1 ]; then
    NCCL_DEBUG=WARN "$F" coll --op "$OP" --sizes "$SIZES" --nprocs "$NGPUS" --warmup 5 --iters 20 "${FCHECK[@]}" \
      --json --nccl-log-dir "$W/logp.$round" > "$W/pp.$round.json" || true
  fi
done
python3 - "$W" "$ROUNDS" "$OP" <<'PY'
import json, os, statistics, sys
w, rounds, op = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def nt(path):
    rows = {}
    for line in open(path):
        p = line.split()
        if len(p) >= 12 and p[0].isdigit():
            rows[int(p[0])] = (float(p[7]), float(p[11]))
    return rows
def fc(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return {}
    j = json.load(open(path))
    for o in j["results"]:
        if o["op"] == op:
            return {r["size"]: (r["out_of_place"]["busbw_gbps"], r["in_place"]["busbw_gbps"]) for r in o["rows"]}
    return {}
print(f"# {op}: busbw GB/s and fabcheck / nccl-tests, same machine, interleaved")
print("round      size  nt-oop  fc-oop  ratio   nt-ip   fc-ip  ratio   pp-oop  ratio")
ratios = []
for r in range(1, rounds + 1):
    a, b, c = nt(f"{w}/nt.{r}.txt"), fc(f"{w}/fc.{r}.json"), fc(f"{w}/pp.{r}.json")
    for s in sorted(a):
        t, f = a[s], b.get(s, (0.0, 0.0))
        p = c.get(s)
        ro, ri = f[0] / t[0] if t[0] else 0, f[1] / t[1] if t[1] else 0
        ratios += [ro, ri]
        pp = f"{p[0]:7.1f}  {p[0] / t[0]:.3f}" if p else ""
        print(f"{r:5} {s:>9} {t[0]:7.1f} {f[0]:7.1f}  {ro:.3f} {t[1]:7.1f} {f[1]:7.1f}  {ri:.3f}  {pp}")
if ratios:
    print(f"# ratios: median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}")
PY
echo "# raw outputs in $W"
