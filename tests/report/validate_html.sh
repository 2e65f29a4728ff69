#!/usr/bin/env bash
# Validates the go-live HTML with html-validate (npm). The package is installed
# once into the build tree (NPM_DIR) and reused; without npm or a reachable
# registry the test is skipped with the reason (exit 77).
set -uo pipefail
fabcheck=$1 bundle=$2 baseline=$3 npm_dir=$4 config=$5
version=9.7.1
bin="$npm_dir/node_modules/.bin/html-validate"
if [ ! -x "$bin" ]; then
  if ! command -v npm >/dev/null; then
    echo "SKIP: npm is not installed (apt-get install npm) to fetch html-validate"
    exit 77
  fi
  mkdir -p "$npm_dir"
  if ! timeout 180 npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error "html-validate@$version" \
      >"$npm_dir/install.log" 2>&1; then
    echo "SKIP: npm could not install html-validate@$version (registry unreachable?):"
    tail -5 "$npm_dir/install.log"
    exit 77
  fi
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$fabcheck" report "$bundle" --baseline "$baseline" -o "$out/report.html"
rc=$?
if [ "$rc" -ne 2 ]; then
  echo "fabcheck report exited $rc (the example is a no-go: want 2)"
  exit 1
fi
"$fabcheck" report /nonexistent-bundle -o "$out/none.html" 2>/dev/null && { echo "a missing bundle must fail"; exit 1; }
start=$(date +%s%N)
"$bin" --config "$config" "$out/report.html" || exit 1
echo "html-validate $("$bin" --version) passed on report.html ($(stat -c %s "$out/report.html") bytes) in $(( ($(date +%s%N) - start) / 1000000 )) ms"
