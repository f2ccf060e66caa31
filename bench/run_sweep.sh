#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sweep benchmark: a 200-cell `agentcap sweep` (a synthetic team of
# ENGINEERS engineers over one day, 40 deployments x 5 seeds) run with
# --jobs 1, with --jobs 2 and, when Open MPI is installed, on 2 MPI ranks;
# prints each run's wall and CPU time, cells per second, the speed-up over
# --jobs 1, and whether the three outputs are byte-identical.  Not part of
# ctest or CI.
#   Usage: bench/run_sweep.sh [BUILD_DIR] [ENGINEERS]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-bench}"
engineers="${2:-2}"
mpi=OFF
command -v mpirun >/dev/null && command -v mpicc >/dev/null && mpi=ON
# a new build folder is a Release build; an existing one keeps its type
type=()
[ -f "$build/CMakeCache.txt" ] || type=(-DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF)
cmake -S . -B "$build" "${type[@]}" -DAGENTCAP_MPI="$mpi" >/dev/null
cmake --build "$build" -j2 --target agentcap >/dev/null
A="$build/cli/agentcap"
out=bench/out/sweep
mkdir -p "$out"
team="$out/team-${engineers}x1.jsonl.gz"
[ -f "$team" ] || "$A" synth --engineers "$engineers" --days 1 --seed 1 -o "$team" --quiet
cat >"$out/grid.json" <<JSON
{
  "traces": ["$(basename "$team")"],
  "seeds": [1, 2, 3, 4, 5],
  "grid": {
    "replicas": [1, 2, 4, 8],
    "engine.max_num_seqs": [16, 32, 64, 128, 256],
    "engine.max_num_batched_tokens": [2048, 8192]
  }
}
JSON
# Run one sweep (the command line after NAME) and print its figures; the
# rows go to $out/NAME.jsonl.  CPU time is this shell's children's, which
# includes mpirun's ranks.
cpu_now() { awk -v t="$(getconf CLK_TCK)" '{printf "%.3f", ($16 + $17) / t}' /proc/$$/stat; }
run() {
	local name="$1"
	shift
	rm -f "$out/$name.jsonl"
	local t0 c0 t1 c1
	t0=$(date +%s.%N)
	c0=$(cpu_now)
	"$@" -o "$out/$name.jsonl" --quiet
	t1=$(date +%s.%N)
	c1=$(cpu_now)
	awk -v n="$name" -v c="$(wc -l <"$out/$name.jsonl")" -v t0="$t0" -v t1="$t1" -v c0="$c0" \
		-v c1="$c1" -v base="${base:-0}" 'BEGIN {
		w = t1 - t0
		printf "%-8s cells %d  wall_s %.2f  cpu_s %.2f  cells_per_s %.2f", n, c, w, c1 - c0, c / w
		if (base > 0) printf "  speedup_vs_jobs1 %.2f", base / w
		printf "\n" }'
	last_wall=$(awk -v t0="$t0" -v t1="$t1" 'BEGIN {printf "%.3f", t1 - t0}')
}
echo "== 200-cell sweep: a team of $engineers engineers x 1 day, 40 deployments x 5 seeds;" \
	"$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg);" \
	"$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt") build"
base=0
run jobs1 "$A" sweep "$out/grid.json" --jobs 1
base=$last_wall
run jobs2 "$A" sweep "$out/grid.json" --jobs 2
same="jobs2"
if [ "$mpi" = ON ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	run mpi2 mpirun -n 2 --oversubscribe "$A" sweep "$out/grid.json"
	same="jobs2 mpi2"
else
	echo "mpi2     (skipped: no Open MPI; apt-get install openmpi-bin libopenmpi-dev)"
fi
for s in $same; do
	if cmp -s "$out/jobs1.jsonl" "$out/$s.jsonl"; then
		echo "rows $s identical to jobs1: yes"
	else
		echo "rows $s identical to jobs1: NO"
		exit 1
	fi
done
