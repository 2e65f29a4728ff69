#!/usr/bin/env bash
# Reading a 100 MB / 1 M-line NCCL log: fabcheck nccl-log and fabcheck
# diagnose against grep -c (what users run on such a log) in the same run.
# Reports wall seconds, max RSS and the ratio to grep. Target: under 2 s,
# bounded memory.
#   bench/diagnose/log_bench.sh [build/src/app/fabcheck] [lines]
set -euo pipefail
bin="${1:-build/src/app/fabcheck}"
lines="${2:-1000000}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
python3 "$(dirname "$0")/gen_log.py" "$dir/job.log" "$lines"
size=$(stat -c %s "$dir/job.log")
echo "log: $lines lines, $((size / 1000000)) MB"
measure() {  # label command...
  local label="$1"; shift
  local best=999 rss=0
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$dir/time" "$@" > /dev/null 2>&1 || true
    read -r s kb < <(tail -1 "$dir/time")  # "Command exited with non-zero status" may come first
    best=$(python3 -c "print(min($best, $s))")
    rss=$kb
  done
  printf "%-28s %6.2f s  max RSS %6d MB\n" "$label" "$best" "$((rss / 1024))"
  echo "$best" > "$dir/$label.s"
}
measure grep grep -c "NCCL WARN" "$dir/job.log"
measure nccl-log "$bin" nccl-log "$dir/job.log"
measure diagnose "$bin" diagnose "$dir/job.log"
g=$(cat "$dir/grep.s")
for t in nccl-log diagnose; do
  python3 -c "print('%-10s %.1fx grep -c' % ('$t', $(cat "$dir/$t.s") / max($g, 0.01)))"
done
