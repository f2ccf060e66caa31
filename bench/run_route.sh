#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Routing benchmark: what a cluster costs to simulate.  A synthetic team of
# ENGINEERS engineers over DAYS days (default 300 x 5, seed 1) is replayed on
# one replica and on 8 replicas behind each router policy given (default
# prefix_aware), one configuration per process so each peak RSS is its own;
# prints wall time, peak RSS, calls and events per second, and the hit rate
# and p95 TTFT each configuration gives.  Not part of ctest or CI.
#   Usage: bench/run_route.sh [BUILD_DIR] [ENGINEERS] [DAYS] [POLICY ...]
#   Extra replay settings: ROUTE_SETS="engine.block_size=256" bench/run_route.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-bench}"
engineers="${2:-300}"
days="${3:-5}"
shift $(( $# < 3 ? $# : 3 ))
policies=("${@:-prefix_aware}")
read -r -a sets <<<"${ROUTE_SETS:-}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" -j2 --target bench_replay agentcap >/dev/null
mkdir -p bench/out
team="bench/out/team-${engineers}x${days}.jsonl.gz"
[ -f "$team" ] || "$build/cli/agentcap" synth --engineers "$engineers" --days "$days" --seed 1 -o "$team"
run() {
	echo "== $*"
	"$build/bench/bench_replay" "$team" "${sets[@]}" "$@" |
		grep -E '^(calls|wall_s|cpu_s|calls_per_s|events_per_s|replicas|hit_rate|p95_ttft_ms|peak_rss_mib) '
}
run replicas=1
for p in "${policies[@]}"; do
	run replicas=8 router.policy="$p"
done
