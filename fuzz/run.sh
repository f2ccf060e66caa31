#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run every libFuzzer target of BUILD_DIR for SECONDS each (default 15) on its
# seed corpus in fuzz/corpus/, with ASan + UBSan, and fail if any target finds
# a crash, a leak, a sanitizer error or a timeout.  New inputs go to a fresh
# temporary folder, never into the repository; crashing inputs are kept in
# BUILD_DIR/fuzz-artifacts/.  The importer target runs once per format.
# Every harness in fuzz/ (a fuzz_*.c with LLVMFuzzerTestOneInput) must have
# been built: a missing target is a failure, not a skip.
#   fuzz/run.sh BUILD_DIR [SECONDS]
#   fuzz/run.sh BUILD_DIR release
# "release" is the long run made before each release (docs/testing.md):
# AGENTCAP_FUZZ_RELEASE_SECONDS per target (default 600, forty times what CI
# gives), and the inputs found are kept in BUILD_DIR/fuzz-corpus/, so each
# long run starts where the previous one stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: fuzz/run.sh BUILD_DIR [SECONDS | release]" >&2
  exit 2
fi
build="$1"
secs="${2:-15}"
keep=""
if [ "$secs" = release ]; then
  secs="${AGENTCAP_FUZZ_RELEASE_SECONDS:-600}"
  keep="$build/fuzz-corpus"
fi
case "$secs" in
  '' | *[!0-9]* | 0)
    echo "fuzz/run.sh: '$secs': expected a whole number of seconds per target, or 'release'" >&2
    exit 2 ;;
esac
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
  local found="${keep:-$work}/$label"
  mkdir -p "$found"
  if "$bin/$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
       -artifact_prefix="$art/$label-" "$found" "$corpus" >"$work/$label.log" 2>&1; then
    echo "fuzz $label: ok ($(grep -o 'Done [0-9]* runs' "$work/$label.log" || echo '?'))"
    passed=$((passed + 1))
  else
    echo "fuzz $label: FAILED"
    grep -E -A30 'ERROR|runtime error|deadly signal|Test unit written' "$work/$label.log" | head -60 || true
    failed=$((failed + 1))
  fi
}

for src in $(grep -l '^int LLVMFuzzerTestOneInput(' fuzz/fuzz_*.c); do
  target="$(basename "$src" .c)"
  t="${target#fuzz_}"
  if [ ! -x "$bin/$target" ]; then
    echo "fuzz $t: FAILED ($bin/$target was not built)"
    failed=$((failed + 1))
  elif [ "$t" = import ]; then
    for dir in fuzz/corpus/import/*/; do
      fmt="$(basename "$dir")"
      run fuzz_import "$dir" "import-$fmt"
    done
  else
    run "$target" "fuzz/corpus/$t" "$t"
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
