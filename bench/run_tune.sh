#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tuning benchmark: what `agentcap size --tune` costs.  A synthetic team of
# ENGINEERS engineers (default 40, one day, seed 1) under a poor step budget
# (engine.max_num_batched_tokens=512 unless TUNE_SETS says otherwise) is
# sized over three hardware options (h100-sxm, l40s, rtx-pro-6000), first
# by size alone and then with --tune; prints the wall and CPU time
# (user + system, every thread's) of each, the load average before each
# run, and per option the GPUs without and with tuning and the size
# searches, replays and simulator events the tuning ran.  Not part of ctest.
#   Usage: bench/run_tune.sh [BUILD_DIR] [ENGINEERS] [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-dev}"
engineers="${2:-40}"
jobs="${3:-2}"
read -r -a extra <<<"${TUNE_SETS:-engine.max_num_batched_tokens=512}"
sets=()
for s in "${extra[@]}"; do sets+=(--set "$s"); done
cmake --build "$build" -j1 --target agentcap >/dev/null
mkdir -p bench/out
args=(size --engineers "$engineers" --profile default --hardware h100-sxm,l40s,rtx-pro-6000
      --jobs "$jobs" "${sets[@]}")
run() {
	local name="$1"
	shift
	echo "== $name: agentcap ${args[*]} $*"
	echo "load_average_before $(cut -d' ' -f1-3 /proc/loadavg)"
	/usr/bin/time -f "wall_s %e
cpu_s %U+%S" -o "bench/out/tune-$name.time" \
		"$build/cli/agentcap" "${args[@]}" "$@" --json "bench/out/tune-$name.json" \
		>"bench/out/tune-$name.txt" || true
	cat "bench/out/tune-$name.time"
}
run size
run tune --tune
python3 - bench/out/tune-tune.json <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for o in doc["tune"]["options"]:
    if "error" in o:
        print(o["hardware"], "error", o["error"])
        continue
    print("%-14s gpus %s -> %s  searches %d  passes %d  replays %d  events %d%s" % (
        o["hardware"], o["scenario"]["gpus"], o["tuned"]["gpus"], o["searches"], o["passes"],
        o["replays"], o["events"], "  (budget spent)" if o["budget_spent"] else ""))
    print("  tuned: " + " ".join(o["sets"]))
PY
