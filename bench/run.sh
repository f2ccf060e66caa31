#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Replay benchmark: the bundled Mooncake conversation trace, then a synthetic
# closed-loop trace of one million calls.  Prints wall time, calls/s, events/s
# and peak RSS for each; then the simulator's CPU cost per call against prompt
# length (8K..256K tokens at 95% reuse).  Usage: bench/run.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-bench}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_replay bench_prefix >/dev/null
mkdir -p bench/out
echo "== Mooncake conversation trace (open loop, 12,031 requests)"
"$build/bench/bench_replay" traces/data/mooncake/conversation_trace.jsonl.gz
synth=bench/out/synth-1m.jsonl.gz
[ -f "$synth" ] || python3 bench/gen_sessions.py --calls 1000000 -o "$synth"
echo "== synthetic closed-loop sessions (1,000,000 calls)"
"$build/bench/bench_replay" "$synth"
echo "== cost per call against prompt length (95% prefix reuse)"
"$build/bench/bench_prefix"
