#!/usr/bin/env bash
# The long fuzz run: every libFuzzer target of fuzz/ for an hour (or $1 seconds),
# as many at once as there are cores, then executions, exec/s, coverage
# (edges "cov", features "ft") and findings per target. Goal: 0 crashes,
# leaks and timeouts over >= 10 million executions per target.
#   bench/fuzz.sh            # 3600 s per target
#   bench/fuzz.sh 600        # ten minutes each
# The corpus grows in build-fuzz/corpus/ across runs; findings land in
# build-fuzz/findings/<target>/ with the command that replays them.
set -euo pipefail
cd "$(dirname "$0")/.."
exec ./scripts/fuzz.sh bench "${1:-3600}"
