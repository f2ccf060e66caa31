#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hostile and huge inputs under a memory cap: each probe runs agentcap under
# `ulimit -v` and a timeout, and checks its exit status, its message and its
# peak RSS (GNU time).  Inputs are generated in a temporary folder (about
# 850 MB at most, removed at the end).  Run before a release, or after a change
# to a reader, an importer, stats or report; see docs/testing.md.
#
#   scripts/probe-limits.sh [BUILD_DIR]      (default: build)
#
# Exit status 0 when every probe passes, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
agentcap_probe_deps
set +e # deps.sh sets -e; a probe's non-zero exit is data here
build="${1:-build}"
A="$(pwd)/$build/cli/agentcap"
[ -x "$A" ] || { echo "probe-limits: no $A (build it first)" >&2; exit 2; }

dir="$(mktemp -d /tmp/agentcap-probe-XXXXXX)"
trap 'rm -rf "$dir"' EXIT
fails=0
HDR='{"format":"agentcap-trace","version":1}'

# probe NAME CAP_MB TIMEOUT_S WANT_STATUS MAX_RSS_MB PATTERN -- COMMAND...
# PATTERN is an extended regex the standard error must match ('' for none).
probe() {
  local name="$1" cap_mb="$2" secs="$3" want="$4" max_rss="$5" pat="$6"
  shift 7
  local err="$dir/stderr" rss="$dir/rss"
  ( ulimit -v $((cap_mb * 1024)); exec timeout "$secs" /usr/bin/time -f '%M' -o "$rss" "$@" ) \
    >/dev/null 2>"$err"
  local st=$?
  local peak_kb
  peak_kb="$(tail -n 1 "$rss" 2>/dev/null || echo 0)"
  [[ "$peak_kb" =~ ^[0-9]+$ ]] || peak_kb=0
  local peak=$((peak_kb / 1024)) why=""
  [ "$st" -eq 124 ] && why="timed out after ${secs} s"
  [ -z "$why" ] && [ "$st" -ne "$want" ] && why="exit status $st, expected $want"
  [ -z "$why" ] && [ "$peak" -gt "$max_rss" ] && why="peak RSS $peak MB, expected at most $max_rss MB"
  if [ -z "$why" ] && [ -n "$pat" ] && ! grep -Eq "$pat" "$err"; then
    why="message does not match /$pat/"
  fi
  if [ -z "$why" ]; then
    printf 'ok    %-52s exit %d, peak RSS %4d MB (cap %d MB)\n' "$name" "$st" "$peak" "$cap_mb"
  else
    printf 'FAIL  %-52s %s\n' "$name" "$why"
    sed 's/^/        /' "$err" | head -n 3
    fails=$((fails + 1))
  fi
}

echo "== generating inputs in $dir"
# gzip bombs: 512 MiB of NUL bytes (one endless line) and of newlines (blank lines)
head -c 512M /dev/zero | gzip -1 >"$dir/bomb-nul.gz"
head -c 512M /dev/zero | tr '\0' '\n' | gzip -1 >"$dir/bomb-nl.gz"
# a valid 48 MB line (an unknown key holding a long string) and a 70 MB one
# (past the 64 MiB line limit)
big_line() { # FILE BYTES
  { echo "$HDR"
    printf '{"session":"a","t":0,"prompt":[["x",16]],"output_tokens":1,"junk":"'
    head -c "$2" /dev/zero | tr '\0' 'x'
    echo '"}'; } >"$1"
}
big_line "$dir/line48m.jsonl" $((48 * 1024 * 1024))
big_line "$dir/line70m.jsonl" $((70 * 1024 * 1024))
# a valid line of 4 million small numbers: 8 MB of text, 256 MB as parsed JSON
{ echo "$HDR"
  printf '{"session":"a","t":0,"prompt":[["x",16]],"output_tokens":1,"junk":['
  awk 'BEGIN { for (i = 0; i < 4194304; i++) printf(i ? ",1" : "1") }'
  echo ']}'; } >"$dir/items.jsonl"
# huge token counts: a 1e9-token segment; t 1e9 followed by twelve gaps of 1e9
{ echo "$HDR"
  echo '{"session":"a","t":0,"prompt":[["x",1000000000]],"output_tokens":1}'; } >"$dir/tokens.jsonl"
{ echo "$HDR"
  echo '{"session":"s","t":1e9,"prompt":[["a",10]],"output_tokens":1}'
  for i in $(seq 12); do
    echo "{\"session\":\"s\",\"gap\":1e9,\"extends\":true,\"prompt\":[[\"b$i\",10]],\"output_tokens\":1}"
  done; } >"$dir/horizon.jsonl"
# long sessions: one canonical session of 200,000 extends calls; one Claude
# Code session of 1,100,000 calls (past the 2^20 limit); 2,000,000 Mooncake
# requests to stream through the importer
awk -v hdr="$HDR" 'BEGIN { print hdr
  print "{\"session\":\"s\",\"t\":0,\"prompt\":[[\"p0\",300]],\"output_tokens\":100}"
  for (i = 1; i < 200000; i++)
    printf("{\"session\":\"s\",\"gap\":1,\"extends\":true,\"prompt\":[[\"p%d\",300]],\"output_tokens\":100}\n", i) }' \
  >"$dir/long.jsonl"
awk 'BEGIN { for (i = 0; i < 1100000; i++)
    printf("{\"type\":\"assistant\",\"sessionId\":\"s\",\"timestamp\":\"2026-01-01T00:00:%02d.%06dZ\",\"message\":{\"id\":\"m%d\",\"model\":\"m\",\"usage\":{\"input_tokens\":%d,\"output_tokens\":5}}}\n", int(i / 1000000) % 60, i % 1000000, i, 10 + i) }' \
  >"$dir/claude-long.jsonl"
awk 'BEGIN { for (i = 0; i < 2000000; i++)
    printf("{\"timestamp\": %d, \"input_length\": 600, \"output_length\": 20, \"hash_ids\": [1, %d]}\n", i, i + 2) }' \
  >"$dir/mooncake-2m.jsonl"
# segment text for the PCRE2 rules of `whatif cache-bust`: one call whose one
# segment carries the text read from standard input
text_seg() { # FILE
  { echo "$HDR"
    printf '{"session":"s","t":0,"prompt":[["p",16,{"text":"'
    cat
    echo '"}]],"output_tokens":1}'; } >"$1"
}
head -c 200000 /dev/zero | tr '\0' x | text_seg "$dir/text-x200k.jsonl"
head -c 2000000 /dev/zero | tr '\0' x | text_seg "$dir/text-x2m.jsonl"
{ head -c 40 /dev/zero | tr '\0' a; printf b; } | text_seg "$dir/text-nested.jsonl"
awk 'BEGIN { s = "BEGIN"; for (i = 0; length(s) < 17000; i++) s = s " word" i; printf("%s", s) }' \
  | text_seg "$dir/text-words17k.jsonl"
# calibrate: 6.7 KB of SGLang bench_serving lines, two runs appended over and
# over as --output-file does (each run is simulated once a fit evaluation, not
# once a line); an llama-bench result with an impossible avg_ts
sg_run() { # MAX_CONCURRENCY COMPLETED THROUGHPUT TTFT_MS TPOT_MS
  printf '{"backend": "sglang", "dataset_name": "random", "request_rate": "inf", '
  printf '"max_concurrency": %s, "random_input_len": 1024, "random_output_len": 1024, ' "$1"
  printf '"completed": %d, "total_input_tokens": %d, "total_output_tokens": %d, ' "$2" \
    $(($2 * 1024)) $(($2 * 1024))
  printf '"output_throughput": %s, "median_ttft_ms": %s, "median_tpot_ms": %s}\n' "$3" "$4" "$5"
}
for i in $(seq 11); do
  sg_run 32 320 2900.0 95.0 10.5
  sg_run null 500 9000.0 9000.0 30.0
done >"$dir/sglang-6k.jsonl"
echo '[{"gpu_info": "NVIDIA GeForce RTX 4090", "model_type": "llama 8B Q4_K - Medium",
  "n_prompt": 512, "n_gen": 0, "avg_ts": 1e-300}]' >"$dir/lb-tiny.json"

# a replay result of 250 MB: the small run's result with a time series of
# 3,450,000 samples (report.interval_s=1 over 40 days) put in; one of
# 300 MiB (sparse: no disk used); and 20 MB holding 8 million small values
# outside any array of numbers (what no result holds)
"$A" replay tests/fixtures/traces/session_good.jsonl --quiet --json "$dir/replay-small.json" \
  >/dev/null 2>&1
{ head -c -2 "$dir/replay-small.json"
  awk -v n=3450000 'function arr(name, kind,   i) {
      printf(",\n\"%s\": [", name)
      for (i = 1; i <= n; i++) {
        if (kind == 0) printf(i > 1 ? ", %d" : "%d", i)
        else if (kind == 1) printf(i > 1 ? ", %d" : "%d", i % 7)
        else printf(i > 1 ? ", %.16g" : "%.16g", (i % 1000) / 1000.0 + 1e-9 * i)
      }
      printf("]")
    }
    BEGIN { printf(",\n\"timeseries\": {\"interval_s\": 1, \"samples\": %d", n)
      arr("t_s", 0)
      split("replicas_up replicas_starting replicas_draining replicas_down arrivals completions " \
            "failed router_queue waiting running batch_tokens kv_blocks_used", k, " ")
      for (j = 1; j <= 12; j++) arr(k[j], 1)
      arr("kv_use", 2); arr("busy_fraction", 2)
      printf(", \"per_replica\": []}\n}\n") }'; } >"$dir/replay250m.json"
{ printf '{"schema": "agentcap-replay", "schema_version": 1}'; } >"$dir/replay300m.json"
truncate -s 300M "$dir/replay300m.json"
{ printf '{"schema": "agentcap-replay", "schema_version": 1, "x": ['
  awk 'BEGIN { for (i = 0; i < 4000000; i++) printf(i ? ",0,\"\"" : "0,\"\"") }'
  echo ']}'; } >"$dir/values8m.json"

echo "== probes (cap = ulimit -v; RSS = peak resident set)"
probe "gzip bomb of NULs: stats" 1024 120 2 200 'line longer than' -- "$A" stats "$dir/bomb-nul.gz"
probe "gzip bomb of NULs: replay" 1024 120 2 200 'line longer than' -- "$A" replay "$dir/bomb-nul.gz"
probe "gzip bomb of NULs: import mooncake" 1024 120 2 200 'line longer than' -- \
  "$A" import mooncake "$dir/bomb-nul.gz" -o "$dir/out.jsonl"
probe "gzip bomb of blank lines: stats" 1024 300 2 200 '' -- "$A" stats "$dir/bomb-nl.gz"
probe "valid 48 MB line: stats" 1024 120 0 400 '' -- "$A" stats "$dir/line48m.jsonl"
probe "valid 48 MB line, 112 MB cap: out of memory, exit 2" 112 120 2 200 'out of memory' -- \
  "$A" stats "$dir/line48m.jsonl"
probe "valid 48 MB line, 112 MB cap, --skip-bad: still 2" 112 120 2 200 'out of memory' -- \
  "$A" stats --skip-bad "$dir/line48m.jsonl"
probe "valid 8 MB line of 4M numbers, 160 MB cap" 160 120 2 200 'out of memory parsing a line' -- \
  "$A" stats --skip-bad "$dir/items.jsonl"
probe "70 MB line: refused without buffering" 1024 120 2 100 'line longer than' -- \
  "$A" stats "$dir/line70m.jsonl"
probe "1e9-token segment: stats" 1024 60 2 100 'more than 33554432 blocks' -- \
  "$A" stats "$dir/tokens.jsonl"
probe "1e9-token segment: stats --no-curve" 1024 60 0 100 '' -- \
  "$A" stats --no-curve "$dir/tokens.jsonl"
probe "1e9-token segment: replay compacts it, flat memory" 1024 60 0 200 '' -- \
  "$A" replay "$dir/tokens.jsonl"
probe "t 1e9 + twelve gaps of 1e9: replay" 1024 60 2 200 'replay horizon' -- \
  "$A" replay "$dir/horizon.jsonl"
probe "one session of 200,000 extends calls: stats" 1024 300 0 400 '' -- \
  "$A" stats "$dir/long.jsonl"
probe "claude-code session of 1.1M calls: refused" 1024 600 2 600 'more than 1048576 calls' -- \
  "$A" import claude-code "$dir/claude-long.jsonl" -o "$dir/out.jsonl"
probe "2M Mooncake requests streamed by import" 256 600 0 100 '' -- \
  "$A" import mooncake "$dir/mooncake-2m.jsonl" -o "$dir/out.jsonl.gz"
probe "cache-bust --pattern x on a 200K-character segment" 1024 20 0 100 '' -- \
  "$A" whatif cache-bust "$dir/text-x200k.jsonl" --pattern 'x'
probe "cache-bust --pattern '(a+)+\$' on a...ab: match limit" 1024 20 2 100 \
  "rule 'pattern' \\(pattern '.*', from --pattern\\) hit the match limit of [0-9]+" -- \
  "$A" whatif cache-bust "$dir/text-nested.jsonl" --pattern '(a+)+$'
probe "cache-bust --pattern 'BEGIN(?: word\\d+)*' on 17 KB of words" 1024 20 0 100 '' -- \
  "$A" whatif cache-bust "$dir/text-words17k.jsonl" --pattern 'BEGIN(?: word\d+)*'
probe "cache-bust --pin 'y*' (empty matches) on 2M characters" 1024 60 2 100 \
  'more than 1048576 pieces' -- \
  "$A" whatif cache-bust "$dir/text-x2m.jsonl" --pattern 'y*' --pin
probe "6.7 KB of SGLang runs repeated: calibrate in seconds" 1024 10 0 200 '' -- \
  "$A" calibrate "$dir/sglang-6k.jsonl" --hardware h100-sxm --model llama-3.1-8b \
  -o "$dir/cal.json" --quiet
probe "llama-bench avg_ts 1e-300: calibrate refuses it" 1024 10 2 100 \
  'lb-tiny\.json:1: result 1: avg_ts 1e-300 is not a plausible measurement \(expected tokens/s' -- \
  "$A" calibrate "$dir/lb-tiny.json" --model llama-3-8b -o "$dir/cal-tiny.json"

# hostile inputs, second round: a team, a grid, a cluster
# and a fault rate too large, refused before the work; an endless stream
"$A" synth --engineers 3 --days 1 --seed 1 -o "$dir/team3.jsonl.gz" 2>/dev/null
awk -v t="$dir/team3.jsonl.gz" 'BEGIN { printf("{\"traces\": [\"%s\"], \"seeds\": [1], \"grid\": {\"engine.max_num_seqs\": [", t);
    for (i = 1; i <= 1001; i++) printf("%s%d", i > 1 ? "," : "", i);
    printf("], \"engine.block_size\": [");
    for (i = 1; i <= 1000; i++) printf("%s%d", i > 1 ? "," : "", i);
    printf("]}}\n") }' >"$dir/grid-big.json"
pools16="pools=[$(for i in $(seq 16); do printf '%s{"replicas":4096}' "$([ "$i" -gt 1 ] && echo ,)"; done)]"
probe "size --engineers 1000000: refused before generating" 4096 20 2 100 'needs about' -- \
  "$A" size --engineers 1000000 --profile default
probe "sweep grid of 1,001,000 cells: refused before resolving" 1024 20 2 200 \
  'more than 1000000 combinations' -- "$A" sweep "$dir/grid-big.json" -o "$dir/rows.jsonl"
probe "16 pools x 4096 replicas: refused, not 2.6 GB" 1024 20 2 100 '65536 replicas in all' -- \
  "$A" replay "$dir/team3.jsonl.gz" --set "$pools16"
probe "faults.mtbf_h 1 ns: refused" 1024 20 2 100 'faults.mtbf_h: expected 0 \(off\)' -- \
  "$A" replay "$dir/team3.jsonl.gz" --set replicas=2 --set faults.mtbf_h=2.8e-13
probe "faults.mtbf_h at its floor: bounded memory" 1024 300 1 400 '' -- \
  "$A" replay "$dir/team3.jsonl.gz" --set replicas=64 --set faults.mtbf_h=0.05 --set faults.repair_h=0.01
probe "stats /dev/zero: ends at the line limit" 1024 60 2 200 'line longer than' -- \
  "$A" stats /dev/zero
probe "replay result of 250 MB: report, about its size in memory" 1024 300 0 400 '' -- \
  "$A" report "$dir/replay250m.json" -o "$dir/replay250m.html"
probe "replay result of 300 MiB: report refuses it unread" 256 60 2 50 \
  'more than the 268435456 \(256 MiB\) report draws from' -- \
  "$A" report "$dir/replay300m.json" -o "$dir/replay300m.html"
probe "8M values outside arrays of numbers: report refuses" 512 120 2 150 \
  'more than 1048576 JSON values' -- "$A" report "$dir/values8m.json" -o "$dir/values8m.html"

if [ "$fails" -ne 0 ]; then
  echo "probe-limits: $fails probe(s) failed"
  exit 1
fi
echo "probe-limits: all probes passed"
