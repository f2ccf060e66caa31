/* SPDX-License-Identifier: Apache-2.0
 * Hostile inputs, second round (the new commands under attack): each case
 * a small input that once gave a silent wrong answer, damaged a file,
 * never ended or ended with an internal error, and the answer it gets now.
 * Cases of one reader stay with that reader's tests (test_scenario: --set
 * values, keys given twice, cost and fault ranges; test_slo: objectives
 * given twice; test_prices: prices out of range; test_rules: the rule
 * limits); scripts/probe-limits.sh holds the cases that need a memory cap
 * or minutes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEAM "hostile_team3.jsonl.gz"
#define DIR "hostile_scratch"

static int setup(void **state)
{
	(void)state;
	struct cli_out r = cli_run("synth --engineers 3 --days 1 --seed 1 -o " TEAM);
	int rc = r.status;
	cli_out_free(&r);
	return rc != 0 || system("rm -rf " DIR " && mkdir -p " DIR) != 0;
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* agentcap ARGS exits `status` and its standard error holds `want`. */
static void expect(const char *args, int status, const char *want)
{
	struct cli_out r = cli_run(args);
	if (r.status != status || (want && !strstr(r.err, want)))
		fail_msg("agentcap %s: exit %d (expected %d), stderr: %s (expected '%s')", args,
			 r.status, status, r.err, want ? want : "");
	cli_out_free(&r);
}

static void write_grid(const char *path, const char *grid)
{
	write_file(path, grid, strlen(grid));
}

/* 2. A key given twice in a sweep grid is refused, not half-run. */
static void test_grid_key_twice(void **state)
{
	(void)state;
	write_grid(DIR "/twice.json", "{\"traces\": [\"../" TEAM "\"], \"seeds\": [1],\n"
		   " \"grid\": {\"replicas\": [1, 2], \"replicas\": [3, 4]}}\n");
	expect("sweep " DIR "/twice.json -o " DIR "/twice.jsonl", 2,
	       "grid.replicas: given twice (expected each key once)");
	write_grid(DIR "/twice2.json", "{\"traces\": [\"../" TEAM "\"], \"seeds\": [1],\n"
		   " \"cells\": [{\"replicas\": 1, \"replicas\": 2}]}\n");
	expect("sweep " DIR "/twice2.json -o " DIR "/twice2.jsonl", 2,
	       "cells[0].replicas: given twice");
	assert_int_not_equal(access(DIR "/twice.jsonl", F_OK), 0);
}

/* 4. A sliding-window model (gpt-oss-120b) whose long cached prompt comes
 * back under KV pressure is served (its window blocks are reserved as a
 * count, not compared with a position), and size prints every option. */
static void test_window_model_under_pressure(void **state)
{
	(void)state;
	expect("replay " TEAM " --quiet --set model=gpt-oss-120b --set weight_format=mxfp4 "
	       "--set engine.kv_cache_tokens=150000 --set slo.attainment=0", 0, NULL);
	struct cli_out r = cli_run("size --engineers 3 --trace " TEAM " --set model=gpt-oss-120b "
				   "--set weight_format=mxfp4 --set engine.kv_cache_tokens=150000 "
				   "--hardware h100-sxm,rtx-pro-6000 --jobs 1");
	if (r.status != 0 && r.status != 1)
		fail_msg("size: exit %d: %s", r.status, r.err);
	assert_non_null(strstr(r.out, "\nh100-sxm "));
	assert_non_null(strstr(r.out, "\nrtx-pro-6000 "));
	cli_out_free(&r);
}

/* 5. sweep -o refuses a file that is not this sweep's rows, whole, and
 * leaves it as it was: a note without a newline, a gzip file, a large
 * file of NUL bytes (read no further than one row's worth). */
static void test_sweep_output_not_rows(void **state)
{
	(void)state;
	write_grid(DIR "/g.json", "{\"traces\": [\"../" TEAM "\"], \"seeds\": [1], "
		   "\"grid\": {\"replicas\": [1]}}\n");
	const char note[] = "remember to size the GPUs";
	write_file(DIR "/note.txt", note, sizeof(note) - 1);
	expect("sweep " DIR "/g.json -o " DIR "/note.txt", 2, "not a sweep row");
	size_t len;
	char *back = cli_slurp(DIR "/note.txt", &len);
	assert_int_equal(len, sizeof(note) - 1);
	assert_memory_equal(back, note, len);
	free(back);
	/* a gzip trace: its bytes are no row either */
	assert_int_equal(system("cp " TEAM " " DIR "/copy.jsonl.gz"), 0);
	size_t before;
	char *gz = cli_slurp(DIR "/copy.jsonl.gz", &before);
	expect("sweep " DIR "/g.json -o " DIR "/copy.jsonl.gz", 2, "not a sweep row");
	char *after = cli_slurp(DIR "/copy.jsonl.gz", &len);
	assert_int_equal(len, before);
	assert_memory_equal(gz, after, len);
	free(gz);
	free(after);
	/* 1 GB of NULs, sparse: refused at its first line */
	int fd = open(DIR "/sparse.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)1 << 30), 0);
	close(fd);
	expect("sweep " DIR "/g.json -o " DIR "/sparse.bin", 2, "not a sweep row");
	struct stat st;
	assert_int_equal(stat(DIR "/sparse.bin", &st), 0);
	assert_true(st.st_size == (off_t)1 << 30);
	unlink(DIR "/sparse.bin");
	/* the rows of this sweep with a torn last row: the torn part goes */
	expect("sweep " DIR "/g.json -o " DIR "/rows.jsonl", 0, NULL);
	char *rows = cli_slurp(DIR "/rows.jsonl", &len);
	FILE *f = fopen(DIR "/rows.jsonl", "ab");
	assert_non_null(f);
	fputs("{\"cell\":0,\"ke", f);
	fclose(f);
	expect("sweep " DIR "/g.json -o " DIR "/rows.jsonl", 0, NULL);
	char *again = cli_slurp(DIR "/rows.jsonl", &before);
	assert_int_equal(before, len);
	assert_memory_equal(rows, again, len);
	free(rows);
	free(again);
}

/* 6. Two sweeps on one output: the second is refused while the first
 * holds it (the lock is taken here as a running sweep holds it). */
static void test_sweep_output_locked(void **state)
{
	(void)state;
	write_grid(DIR "/l.json", "{\"traces\": [\"../" TEAM "\"], \"seeds\": [1], "
		   "\"grid\": {\"replicas\": [1]}}\n");
	int fd = open(DIR "/locked.jsonl", O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	expect("sweep " DIR "/l.json -o " DIR "/locked.jsonl", 2, "another sweep is writing to it");
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 0);
	close(fd);
	expect("sweep " DIR "/l.json -o " DIR "/locked.jsonl", 0, NULL);
}

/* 7. One path for two outputs is refused before any work. */
static void test_one_path_two_outputs(void **state)
{
	(void)state;
	expect("replay " TEAM " --json " DIR "/a --html " DIR "/a --csv " DIR "/a", 2,
	       "--json and --csv both name '" DIR "/a'");
	expect("replay " TEAM " --json " DIR "/a --html ./" DIR "/a", 2, "both name");
	expect("replay " TEAM " --json - --csv -", 2, "--json and --csv both name '-'");
	write_grid(DIR "/o.json", "{\"traces\": [\"../" TEAM "\"], \"seeds\": [1], "
		   "\"grid\": {\"replicas\": [1]}}\n");
	expect("sweep " DIR "/o.json -o " DIR "/x --csv " DIR "/x", 2, "-o and --csv both name");
	expect("size --engineers 2 --profile default --json " DIR "/s --html " DIR "/s", 2,
	       "--json and --html both name");
	expect("whatif no-retry " TEAM " --json " DIR "/w --html " DIR "/w", 2, "both name");
	assert_int_not_equal(access(DIR "/a", F_OK), 0);
	assert_int_not_equal(access(DIR "/x", F_OK), 0);
}

/* 8. A price no deployment could have is refused when the file loads, so
 * replay --cost writes nothing before it. */
static void test_price_out_of_range(void **state)
{
	(void)state;
	size_t len;
	char *shipped = cli_slurp(AC_SRC_DIR "/models/catalog/prices.json", &len);
	assert_non_null(shipped);
	char *p = strstr(shipped, "\"price\": ");
	assert_non_null(p);
	char *text = malloc(len + 16);
	assert_non_null(text);
	size_t head = (size_t)(p - shipped) + 9;
	memcpy(text, shipped, head);
	char *end = p + 9;
	while (*end && *end != ',' && *end != '\n')
		end++;
	int n = sprintf(text + head, "1e308");
	strcpy(text + head + (size_t)n, end);
	write_file(DIR "/prices.json", text, strlen(text));
	free(text);
	free(shipped);
	expect("replay " TEAM " --cost --prices " DIR "/prices.json --json " DIR "/cost.json", 2,
	       "too large");
	assert_int_not_equal(access(DIR "/cost.json", F_OK), 0);
	expect("compare --engineers 2 --profile default --prices " DIR "/prices.json", 2,
	       "too large");
}

/* 13. A stream with no newline ends with the line-length error. */
static void test_endless_line(void **state)
{
	(void)state;
	expect("stats /dev/zero", 2, "line longer than the 67108864-byte limit");
	expect("replay /dev/zero", 2, "line longer than");
	expect("import claude-code /dev/zero -o " DIR "/z.jsonl", 2, "line longer than");
}

/* 14. A team that cannot fit is refused at once, with what it needs (a
 * year of a million engineers: no machine holds it). */
static void test_team_too_large(void **state)
{
	(void)state;
	expect("size --engineers 1000000 --days 365 --profile default", 2,
	       "a synthetic team of 1000000 engineers x 365 days needs about");
	expect("synth --engineers 1000000 --days 365 -o " DIR "/huge.jsonl.gz", 2, "needs about");
	assert_int_not_equal(access(DIR "/huge.jsonl.gz", F_OK), 0);
}

/* 15. Limits checked before the work they bound: a grid's cell count
 * before any cell is resolved; a cluster's replicas across its pools. */
/* A mistyped weight format is bad input for size and compare as for
 * replay: exit 2 before any replay, naming the formats the catalogue
 * knows, not "no shape fits the model's weights" after the search. */
static void test_format_typo(void **state)
{
	(void)state;
	static const char *const CMD[] = {
		"size --engineers 2 --profile default --format fp4 --hardware h100-sxm",
		"compare --engineers 2 --profile default --format fp4 --hardware h100-sxm",
		"size --engineers 2 --profile default --set kv_cache_dtype=fp7 --hardware h100-sxm",
	};
	for (size_t i = 0; i < sizeof(CMD) / sizeof(CMD[0]); i++) {
		struct cli_out r = cli_run(CMD[i]);
		assert_int_equal(r.status, 2);
		assert_string_equal(r.out, "");
		assert_non_null(strstr(r.err, "known: "));
		assert_non_null(strstr(r.err, "bf16"));
		cli_out_free(&r);
	}
}

/* replay --help names every family of scenario keys. */
static void test_replay_help_families(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay --help");
	assert_int_equal(r.status, 0);
	static const char *const FAM[] = {"pools", "backends", "kv_tiers", "autoscale", "faults",
					  "speculative", "router", "startup", "cost"};
	const char *sec = strstr(r.out, "SCENARIO FAMILIES");
	assert_non_null(sec);
	for (size_t i = 0; i < sizeof(FAM) / sizeof(FAM[0]); i++)
		if (!strstr(sec, FAM[i]))
			fail_msg("replay --help does not name %s", FAM[i]);
	cli_out_free(&r);
}

static void test_bounds_first(void **state)
{
	(void)state;
	char grid[16384];
	size_t at = (size_t)snprintf(grid, sizeof(grid), "{\"traces\": [\"../" TEAM "\"], "
				     "\"seeds\": [1], \"grid\": {\"engine.max_num_seqs\": [");
	for (int i = 1; i <= 1001; i++)
		at += (size_t)snprintf(grid + at, sizeof(grid) - at, "%s%d", i > 1 ? "," : "", i);
	at += (size_t)snprintf(grid + at, sizeof(grid) - at, "], \"engine.block_size\": [");
	for (int i = 1; i <= 1000; i++)
		at += (size_t)snprintf(grid + at, sizeof(grid) - at, "%s%d", i > 1 ? "," : "", i);
	snprintf(grid + at, sizeof(grid) - at, "]}}\n");
	write_grid(DIR "/big.json", grid);
	expect("sweep " DIR "/big.json -o " DIR "/big.jsonl", 2, "more than 1000000 combinations");
	char pools[1024];
	at = (size_t)snprintf(pools, sizeof(pools), "replay " TEAM " --set 'pools=[");
	for (int i = 0; i < 16; i++)
		at += (size_t)snprintf(pools + at, sizeof(pools) - at, "%s{\"replicas\":4096}",
				       i ? "," : "");
	snprintf(pools + at, sizeof(pools) - at, "]'");
	expect(pools, 2, "65536 replicas in all (expected at most 4096 across the pools)");
}

/* 17. A grid value too long to repeat in a row, a name too long, an
 * acceptance that would print 300 digits: refused with what was expected. */
static void test_small_limits(void **state)
{
	(void)state;
	static char grid[20000];
	size_t at = (size_t)snprintf(grid, sizeof(grid), "{\"traces\": [\"../" TEAM "\"], "
				     "\"seeds\": [1], \"grid\": {\"name\": [\"");
	for (int i = 0; i < 9000; i++)
		grid[at++] = 'n';
	snprintf(grid + at, sizeof(grid) - at, "\"]}}\n");
	write_grid(DIR "/long.json", grid);
	expect("sweep " DIR "/long.json -o " DIR "/long.jsonl", 2, "name: a value of 9002 bytes "
	       "(expected at most 8192");
	char set[6000];
	at = (size_t)snprintf(set, sizeof(set), "replay " TEAM " --set name=");
	for (int i = 0; i < 5000; i++)
		set[at++] = 'n';
	set[at] = '\0';
	expect(set, 2, "expected a string of 1 to 127 bytes");
	expect("compare --engineers 2 --profile default --acceptance 1e-300", 2,
	       "--acceptance '1e-300': expected a share in [0.001, 1]");
}

/* size never gives a single chip tensor parallelism: the Ryzen AI Max
 * machine is tried at TP1 only (it was recommended at "1 x TP2"). */
static void test_single_chip_never_tp(void **state)
{
	(void)state;
	struct cli_out r = cli_run("size --engineers 2 --profile default --hardware ryzen-ai-max-395");
	assert_true(r.status == 0 || r.status == 1);
	assert_null(strstr(r.out, "TP2"));
	assert_non_null(strstr(r.out, "x TP1"));
	cli_out_free(&r);
	/* a format the machine's engine cannot load is said as replay says
	 * it, not as weights that do not fit */
	r = cli_run("size --engineers 2 --profile default --hardware apple-m4-max-40c --format fp8");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "no shape runs: TP1/PP1: engine_profile 'llama.cpp' does not "
				      "load weight format 'fp8'"));
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grid_key_twice),
		cmocka_unit_test(test_window_model_under_pressure),
		cmocka_unit_test(test_sweep_output_not_rows),
		cmocka_unit_test(test_sweep_output_locked),
		cmocka_unit_test(test_one_path_two_outputs),
		cmocka_unit_test(test_price_out_of_range),
		cmocka_unit_test(test_endless_line),
		cmocka_unit_test(test_team_too_large),
		cmocka_unit_test(test_format_typo),
		cmocka_unit_test(test_replay_help_families),
		cmocka_unit_test(test_bounds_first),
		cmocka_unit_test(test_small_limits),
		cmocka_unit_test(test_single_chip_never_tp),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
