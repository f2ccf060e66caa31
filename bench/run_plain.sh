#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cost of a replay of a plain request list, against a baseline build.
#
#   bench/run_plain.sh [BUILD_DIR] [BASELINE]
#
# BUILD_DIR (default build) holds the agentcap to measure; BASELINE is
# another build directory, or a commit (default 7ffcb83, the last commit
# before the set-up of a replay grew with pools, tiers, backends and the
# lifecycle), which is then checked out in a temporary worktree and built
# (Release).  Both builds replay, in the same run and interleaved, two plain
# lists of 10,000 requests in the shape of Vidur's synthetic traces (lengths
# uniform around 2,048 prompt and 512 output tokens, Poisson arrivals at 2
# and 8 requests/s; `agentcap synth --workload random`), with Llama-2-70B on
# 2 x A100 SXM 80GB, five times each; the script prints the median CPU time
# (user + system) of each, and the wall time of a 10-call list on each
# build (the fixed cost of one replay: catalogue, scenario, set-up).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
base="${2:-7ffcb83}"
new="$build/cli/agentcap"
[ -x "$new" ] || { echo "run_plain: no $new (build it first)" >&2; exit 2; }
tmp="$(mktemp -d)"
cleanup() {
  if [ -n "${worktree:-}" ]; then git worktree remove --force "$worktree" >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
if [ -d "$base" ]; then
  old="$base/cli/agentcap"
else
  worktree="$tmp/baseline"
  git worktree add --detach "$worktree" "$base" >/dev/null 2>&1
  cmake -S "$worktree" -B "$worktree/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$worktree/build" -j"$(nproc)" --target agentcap >/dev/null
  old="$worktree/build/cli/agentcap"
fi
[ -x "$old" ] || { echo "run_plain: no baseline $old" >&2; exit 2; }

for q in 2 8; do
  "$new" synth --workload random --input-len 2048 --output-len 512 --range-ratio 0.9 \
    --num-prompts 10000 --request-rate "$q" --seed 1 -o "$tmp/plain$q.jsonl" 2>/dev/null
done
"$new" synth --workload fixed --input-len 1000 --output-len 100 --num-prompts 10 \
  --request-rate 1 --seed 1 -o "$tmp/ten.jsonl" 2>/dev/null
# the engine's step budget, batch and KV cache pinned: a later build may
# take other defaults for the GPU (vLLM's by GPU memory) and size the KV
# cache otherwise (7ffcb83 left 4,633 tokens here, the start-up memory
# model 32,140), and the two builds must simulate the same engine for their
# CPU times to compare
scen=(--set model=llama-2-70b --set hardware=a100-sxm-80gb --set tensor_parallel_size=2
      --set engine.max_num_batched_tokens=8192 --set engine.max_num_seqs=1024
      --set engine.kv_cache_tokens=32768 --quiet)

# CPU seconds (user + system) of one replay
cpu() {
  local TIMEFORMAT='%U %S' t
  # exit 1 (objectives missed) is a finished replay; 2 and up are not
  "$1" replay "$2" "${scen[@]}" >/dev/null 2>&1 || [ $? -eq 1 ] ||
    { echo "run_plain: $1 replay $2 failed" >&2; exit 2; }
  t=$( { time "$1" replay "$2" "${scen[@]}" >/dev/null 2>&1 || true; } 2>&1 )
  awk '{printf "%.3f\n", $1 + $2}' <<<"$t"
}
# wall milliseconds of one replay
wall_ms() {
  local TIMEFORMAT='%R' t
  t=$( { time "$1" replay "$2" "${scen[@]}" >/dev/null 2>&1 || true; } 2>&1 )
  awk '{printf "%.1f\n", $1 * 1000}' <<<"$t"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

echo "baseline: $old"
echo "measured: $new"
for q in 2 8; do
  : >"$tmp/old$q"; : >"$tmp/new$q"
  for _ in 1 2 3 4 5; do
    cpu "$old" "$tmp/plain$q.jsonl" >>"$tmp/old$q"
    cpu "$new" "$tmp/plain$q.jsonl" >>"$tmp/new$q"
  done
  o=$(median <"$tmp/old$q"); n=$(median <"$tmp/new$q")
  printf 'plain list, 10000 requests at %s req/s: cpu_s baseline %s, measured %s (%s x)\n' \
    "$q" "$o" "$n" "$(awk -v a="$n" -v b="$o" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')"
done
: >"$tmp/tenold"; : >"$tmp/tennew"
for _ in 1 2 3 4 5; do
  wall_ms "$old" "$tmp/ten.jsonl" >>"$tmp/tenold"
  wall_ms "$new" "$tmp/ten.jsonl" >>"$tmp/tennew"
done
printf '10-call list: wall_ms baseline %s, measured %s\n' "$(median <"$tmp/tenold")" \
  "$(median <"$tmp/tennew")"
