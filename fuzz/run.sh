#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run every libFuzzer target of BUILD_DIR for SECONDS each (default 15) on its
# seed corpus in fuzz/corpus/, with ASan + UBSan, and fail if any target finds
# a crash, a leak, a sanitizer error or a timeout.  New inputs go to a fresh
# temporary folder, never into the repository; crashing inputs are kept in
# BUILD_DIR/fuzz-artifacts/.  The importer target runs once per format.
#   fuzz/run.sh BUILD_DIR [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build="$1"
secs="${2:-15}"
bin="$build/fuzz"
art="$build/fuzz-artifacts"
mkdir -p "$art"
work="$(mktemp -d "${TMPDIR:-/tmp}/agentcap-fuzz-run.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

passed=0
failed=0
run() { # target corpus-dir label
  local target="$1" corpus="$2" label="$3"
  mkdir -p "$work/$label"
  if "$bin/$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
       -artifact_prefix="$art/$label-" "$work/$label" "$corpus" >"$work/$label.log" 2>&1; then
    echo "fuzz $label: ok ($(grep -o 'Done [0-9]* runs' "$work/$label.log" || echo '?'))"
    passed=$((passed + 1))
  else
    echo "fuzz $label: FAILED"
    grep -E -A30 'ERROR|runtime error|deadly signal|Test unit written' "$work/$label.log" | head -60 || true
    failed=$((failed + 1))
  fi
}

for t in trace_reader trace_mooncake trace_gzip scenario; do
  run "fuzz_$t" "fuzz/corpus/$t" "$t"
done
if [ -x "$bin/fuzz_import" ]; then
  for dir in fuzz/corpus/import/*/; do
    fmt="$(basename "$dir")"
    run fuzz_import "$dir" "import-$fmt"
  done
else
  echo "fuzz import: not built (traces/import.c is not part of ac_traces)"
fi
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
