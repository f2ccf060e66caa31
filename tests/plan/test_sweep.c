/* SPDX-License-Identifier: Apache-2.0
 * test_sweep: `agentcap sweep` and plan/sweep.h.
 *   - --jobs 1 and --jobs 2 write byte-identical rows, in cell order, one
 *     per cell; the CSV has a line per row and the dotted columns;
 *   - a cell's figures are the ones `agentcap replay` prints for the same
 *     scenario, trace and seed;
 *   - a sweep stopped after n rows (the library's stop_after hook) resumes
 *     running only the other cells, and ends with the same file as a run
 *     that was never stopped, with 1 or 2 threads;
 *   - a torn last line (an interrupted write) is dropped and its cell run
 *     again; a file of another grid's rows (other seeds, or the same team
 *     resampled to other days) is refused and left as it was;
 *   - with "cost": true a row prices an accepted task as replay --cost
 *     does, null where the catalogue has no price;
 *   - a bad grid is an error at the grid's line and column, exit 2;
 *   - built with MPI (AC_MPIEXEC, as test_sweep_mpi): `mpirun -n 2` writes
 *     the rows of --jobs 1, byte for byte, and resumes a torn file as a
 *     run on threads does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "base/diag.h"
#include "base/pool.h"
#include "models/catalog.h"
#include "plan/sweep.h"
#include "tests/support/cli_run.h"

#ifdef AC_MPIEXEC
#define SCRATCH AC_BIN_DIR "/tests/plan/scratch_sweep_mpi" /* beside test_sweep's */
#else
#define SCRATCH AC_BIN_DIR "/tests/plan/scratch_sweep"
#endif
#define FIXT AC_SRC_DIR "/tests/fixtures/traces"
#define FIXR AC_SRC_DIR "/tests/fixtures/replay"
#define GRID SCRATCH "/grid.json"
#define CELLS 16

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

static int setup(void **state)
{
	(void)state;
	mkdir(AC_BIN_DIR "/tests", 0777);
	mkdir(AC_BIN_DIR "/tests/plan", 0777);
	mkdir(SCRATCH, 0777);
	/* 2 x 2 overrides x 2 traces x 2 seeds */
	write_file(GRID, "{\n"
			 "  \"traces\": [\"" FIXT "/mooncake_head200.jsonl\", \"" FIXR
			 "/two_sessions.jsonl\"],\n"
			 "  \"seeds\": [1, 2],\n"
			 "  \"grid\": {\n"
			 "    \"replicas\": [1, 2],\n"
			 "    \"engine.max_num_seqs\": [16, 64]\n"
			 "  }\n"
			 "}\n");
	return 0;
}

static char *run_sweep(const char *args, int want_status, char **err)
{
	struct cli_out r = cli_run(args);
	if (r.status != want_status)
		fail_msg("agentcap %s: status %d (expected %d): %s", args, r.status, want_status,
			 r.err);
	char *out = r.out;
	r.out = NULL;
	if (err) {
		*err = r.err;
		r.err = NULL;
	}
	cli_out_free(&r);
	return out;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The full output of one uninterrupted run, --jobs 1 (free it). */
static char *full_rows(void)
{
	unlink(SCRATCH "/full.jsonl");
	free(run_sweep("sweep " GRID " -o " SCRATCH "/full.jsonl --jobs 1 --quiet", 0, NULL));
	char *full = cli_slurp(SCRATCH "/full.jsonl", NULL);
	assert_non_null(full);
	return full;
}

static void test_jobs_identical(void **state)
{
	(void)state;
	char *full = full_rows();
	assert_int_equal(count_lines(full), CELLS);
	unlink(SCRATCH "/j2.jsonl");
	char *err = NULL;
	free(run_sweep("sweep " GRID " -o " SCRATCH "/j2.jsonl --jobs 2 --csv " SCRATCH "/j2.csv",
		       0, &err));
	assert_non_null(strstr(err, "16 cells: 0 already in"));
	assert_non_null(strstr(err, "16 replayed, 16 rows written"));
	free(err);
	char *j2 = cli_slurp(SCRATCH "/j2.jsonl", NULL);
	assert_non_null(j2);
	assert_string_equal(j2, full);
	/* rows in cell order, each with its key */
	const char *p = full;
	for (int i = 0; i < CELLS; i++) {
		char want[32];
		snprintf(want, sizeof(want), "{\"cell\":%d,\"key\":\"", i);
		assert_memory_equal(p, want, strlen(want));
		p = strchr(p, '\n') + 1;
	}
	/* the same rows on standard output */
	char *out = run_sweep("sweep " GRID " --jobs 2 --quiet", 0, NULL);
	assert_string_equal(out, full);
	free(out);
	char *csv = cli_slurp(SCRATCH "/j2.csv", NULL);
	assert_non_null(csv);
	assert_int_equal(count_lines(csv), CELLS + 1);
	assert_non_null(strstr(csv, "\"set.replicas\",\"set.engine.max_num_seqs\""));
	assert_non_null(strstr(csv, "\"ttft_ms.p95\""));
	free(csv);
	free(j2);
	free(full);
}

/* Cell 15 (replicas 2, max_num_seqs 64, two_sessions, seed 2) against
 * agentcap replay of the same. */
static void test_cell_is_a_replay(void **state)
{
	(void)state;
	char *full = full_rows();
	const char *line = full;
	for (int i = 0; i < 15; i++)
		line = strchr(line, '\n') + 1;
	cJSON *row = cJSON_Parse(line);
	assert_non_null(row);
	assert_int_equal(cJSON_GetObjectItem(row, "cell")->valueint, 15);
	char *out = run_sweep("replay " FIXR "/two_sessions.jsonl --set replicas=2 "
			      "--set engine.max_num_seqs=64 --seed 2 --json -", 0, NULL);
	cJSON *rep = cJSON_Parse(out);
	assert_non_null(rep);
	static const char *const PAIRS[][3] = {
		{"ttft_ms", "p95", "p95_ttft_ms"}, {"ttft_ms", "p50", "median_ttft_ms"},
		{"tpot_ms", "p99", "p99_tpot_ms"}, {"e2el_ms", "p90", "p90_e2el_ms"},
		{NULL, "gpu_busy_fraction", "gpu_busy_fraction"},
		{NULL, "prefix_cache_hit_rate", "prefix_cache_hit_rate"},
		{NULL, "request_goodput", "request_goodput"}, {NULL, "completed", "completed"},
	};
	for (size_t i = 0; i < sizeof(PAIRS) / sizeof(PAIRS[0]); i++) {
		const cJSON *o = PAIRS[i][0] ? cJSON_GetObjectItem(row, PAIRS[i][0]) : row;
		const cJSON *a = cJSON_GetObjectItem(o, PAIRS[i][1]);
		const cJSON *b = cJSON_GetObjectItem(rep, PAIRS[i][2]);
		assert_non_null(a);
		assert_non_null(b);
		if (a->valuedouble != b->valuedouble)
			fail_msg("%s: sweep %.17g, replay %.17g", PAIRS[i][2], a->valuedouble,
				 b->valuedouble);
	}
	assert_string_equal(cJSON_GetObjectItem(row, "answer")->valuestring,
			    cJSON_GetObjectItem(rep, "answer")->valuestring);
	cJSON_Delete(rep);
	cJSON_Delete(row);
	free(out);
	free(full);
}

/* A cell with a host KV tier is the replay with that tier: the tokens it
 * loads from the tier and the hit rate agree with `replay --json`, and a
 * cell without the tier reports no tier figures (rows as before).  The
 * tier is written through (the default), so it holds the GPU's blocks too:
 * 64 GB, twice this GPU cache, served no hit on this team; 128 GB does. */
static void test_tier_cell_is_a_replay(void **state)
{
	(void)state;
	free(run_sweep("synth --engineers 2 --days 1 --seed 1 -o " SCRATCH "/two.jsonl --quiet", 0,
		       NULL));
	write_file(SCRATCH "/tiers.json",
		   "{\n \"traces\": [\"" SCRATCH "/two.jsonl\"],\n"
		   " \"set\": {\"engine.kv_cache_tokens\": 262144},\n"
		   " \"grid\": {\"kv_tiers.host_gb\": [0, 128]}\n}\n");
	unlink(SCRATCH "/tiers.jsonl");
	free(run_sweep("sweep " SCRATCH "/tiers.json -o " SCRATCH "/tiers.jsonl --quiet", 0, NULL));
	char *rows = cli_slurp(SCRATCH "/tiers.jsonl", NULL);
	assert_non_null(rows);
	assert_int_equal(count_lines(rows), 2);
	cJSON *off = cJSON_Parse(rows);
	cJSON *on = cJSON_Parse(strchr(rows, '\n') + 1);
	assert_non_null(off);
	assert_non_null(on);
	assert_null(cJSON_GetObjectItem(off, "tier_cached_tokens"));
	const cJSON *tc = cJSON_GetObjectItem(on, "tier_cached_tokens");
	assert_non_null(tc);
	char *out = run_sweep("replay " SCRATCH "/two.jsonl --set engine.kv_cache_tokens=262144 "
			      "--set kv_tiers.host_gb=128 --json -", 0, NULL);
	cJSON *rep = cJSON_Parse(out);
	assert_non_null(rep);
	double host = cJSON_GetObjectItem(tc, "host")->valuedouble;
	assert_true(host > 0); /* the tier served part of the hits */
	assert_true(cJSON_GetObjectItem(rep, "cached_tokens_host")->valuedouble == host);
	double hit_on = cJSON_GetObjectItem(on, "prefix_cache_hit_rate")->valuedouble;
	assert_true(cJSON_GetObjectItem(rep, "prefix_cache_hit_rate")->valuedouble == hit_on);
	assert_true(hit_on > cJSON_GetObjectItem(off, "prefix_cache_hit_rate")->valuedouble);
	cJSON_Delete(rep);
	cJSON_Delete(on);
	cJSON_Delete(off);
	free(out);
	free(rows);
}

/* Stop after n rows through the library, then resume; the cells run each
 * time are counted. */
static void stop_and_resume(int32_t jobs, int64_t n, const char *full)
{
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	const char *path = SCRATCH "/resume.jsonl";
	unlink(path);
	struct pool *pool = NULL;
	assert_int_equal(pool_new(&pool, jobs, &d), 0);
	for (int pass = 0; pass < 2; pass++) {
		struct sweep *sw = NULL;
		if (sweep_load(&sw, GRID, cat, &d) != 0)
			fail_msg("%s", d.msg);
		assert_int_equal(sweep_cells(sw), CELLS);
		struct sweep_out out;
		if (sweep_out_open(&out, path, sw, &d) != 0)
			fail_msg("%s", d.msg);
		assert_int_equal(out.kept, pass ? n : 0);
		assert_int_equal(out.torn, 0);
		struct sweep_opts o = {.pool = pool, .out = &out, .stop_after = pass ? 0 : n};
		struct sweep_stats st;
		if (sweep_run(sw, &o, &st, &d) != 0)
			fail_msg("%s", d.msg);
		assert_int_equal(sweep_out_close(&out, &d), 0);
		if (pass == 0) {
			assert_int_equal(st.written, n);
			assert_int_equal(st.skipped, 0);
			/* one thread stops right there; with two, cells after the
			 * n-th may have run while a slower one held the order back
			 * (their rows were not written, so they run again) */
			if (jobs == 1)
				assert_int_equal(st.run, n);
			else
				assert_true(st.run >= n && st.run <= CELLS);
			assert_int_equal(sweep_done(sw), (size_t)n);
			char *part = cli_slurp(path, NULL);
			assert_non_null(part);
			assert_int_equal(count_lines(part), n);
			free(part);
		} else {
			/* only the cells not in the file ran */
			assert_int_equal(st.skipped, n);
			assert_int_equal(st.run, CELLS - n);
			assert_int_equal(st.written, CELLS - n);
			assert_int_equal(sweep_done(sw), CELLS);
		}
		sweep_free(sw);
	}
	char *got = cli_slurp(path, NULL);
	assert_non_null(got);
	assert_string_equal(got, full);
	free(got);
	pool_free(pool);
	catalog_free(cat);
}

static void test_resume(void **state)
{
	(void)state;
	char *full = full_rows();
	stop_and_resume(1, 5, full);
	stop_and_resume(2, 9, full);
	free(full);
}

static void test_torn_line(void **state)
{
	(void)state;
	char *full = full_rows();
	/* 6 whole rows and half of the seventh, as a killed run leaves them */
	const char *p = full;
	for (int i = 0; i < 6; i++)
		p = strchr(p, '\n') + 1;
	size_t cut = (size_t)(p - full) + (size_t)(strchr(p, '\n') - p) / 2;
	FILE *fp = fopen(SCRATCH "/torn.jsonl", "w");
	assert_non_null(fp);
	fwrite(full, 1, cut, fp);
	assert_int_equal(fclose(fp), 0);
	char *err = NULL;
	free(run_sweep("sweep " GRID " -o " SCRATCH "/torn.jsonl --jobs 2", 0, &err));
	assert_non_null(strstr(err, "16 cells: 6 already in"));
	assert_non_null(strstr(err, "(a torn last line dropped), 10 replayed, 10 rows written"));
	free(err);
	char *got = cli_slurp(SCRATCH "/torn.jsonl", NULL);
	assert_string_equal(got, full);
	free(got);
	/* nothing left to do: nothing runs, nothing is written */
	free(run_sweep("sweep " GRID " -o " SCRATCH "/torn.jsonl --jobs 2", 0, &err));
	assert_non_null(strstr(err, "16 already in"));
	assert_non_null(strstr(err, "0 replayed, 0 rows written"));
	free(err);
	got = cli_slurp(SCRATCH "/torn.jsonl", NULL);
	assert_string_equal(got, full);
	free(got);
	free(full);
}

static void test_foreign_rows(void **state)
{
	(void)state;
	/* the rows of a grid with other seeds are no cells of this one */
	write_file(SCRATCH "/other.json", "{\"traces\": [\"" FIXR "/two_sessions.jsonl\"], "
					  "\"seeds\": [7]}\n");
	unlink(SCRATCH "/other.jsonl");
	free(run_sweep("sweep " SCRATCH "/other.json -o " SCRATCH "/other.jsonl --quiet", 0, NULL));
	char *before = cli_slurp(SCRATCH "/other.jsonl", NULL);
	assert_non_null(before);
	char *err = NULL;
	free(run_sweep("sweep " GRID " -o " SCRATCH "/other.jsonl", 2, &err));
	assert_non_null(strstr(err, SCRATCH "/other.jsonl:1: a row of another sweep"));
	free(err);
	char *after = cli_slurp(SCRATCH "/other.jsonl", NULL);
	assert_string_equal(after, before);
	free(after);
	free(before);
	/* nor are the rows of the same team resampled to another number of days */
	write_file(SCRATCH "/days1.json", "{\"traces\": [\"" FIXR "/two_sessions.jsonl\"], "
					  "\"engineers\": 2, \"days\": 1}\n");
	write_file(SCRATCH "/days2.json", "{\"traces\": [\"" FIXR "/two_sessions.jsonl\"], "
					  "\"engineers\": 2, \"days\": 2}\n");
	unlink(SCRATCH "/days.jsonl");
	free(run_sweep("sweep " SCRATCH "/days1.json -o " SCRATCH "/days.jsonl --quiet", 0, NULL));
	before = cli_slurp(SCRATCH "/days.jsonl", NULL);
	assert_non_null(before);
	assert_non_null(strstr(before, "\"days\":1,"));
	free(run_sweep("sweep " SCRATCH "/days2.json -o " SCRATCH "/days.jsonl", 2, &err));
	assert_non_null(strstr(err, SCRATCH "/days.jsonl:1: a row of another sweep"));
	free(err);
	after = cli_slurp(SCRATCH "/days.jsonl", NULL);
	assert_string_equal(after, before);
	free(after);
	free(before);
	/* a line that is no row at all, not at the end: not torn, refused */
	write_file(SCRATCH "/junk.jsonl", "{\"cell\":0\n{}\n");
	free(run_sweep("sweep " GRID " -o " SCRATCH "/junk.jsonl", 2, &err));
	assert_non_null(strstr(err, SCRATCH "/junk.jsonl:1: not a sweep row"));
	free(err);
}

static void test_cost(void **state)
{
	(void)state;
	write_file(SCRATCH "/cost.json", "{\"traces\": [\"" FIXT "/session_good.jsonl\"], "
					 "\"cells\": [{\"hardware\": \"h100-sxm\"}, {\"hardware\": "
					 "\"l40s\", \"replicas\": 2}], \"cost\": true}\n");
	char *out = run_sweep("sweep " SCRATCH "/cost.json --quiet", 0, NULL);
	char *nl = strchr(out, '\n');
	assert_non_null(nl);
	cJSON *h100 = cJSON_Parse(out), *l40s = cJSON_Parse(nl + 1);
	assert_non_null(h100);
	assert_non_null(l40s);
	const cJSON *a = cJSON_GetObjectItem(h100, "usd_per_accepted_task");
	const cJSON *b = cJSON_GetObjectItem(l40s, "usd_per_accepted_task");
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(a, "purchase")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(b, "purchase"))); /* not on offer */
	double elastic = cJSON_GetObjectItem(b, "elastic")->valuedouble;
	assert_true(elastic > 0);
	/* replay --cost's table: "elastic ID  per-month  per-1M  per-task ..." */
	char *rep = run_sweep("replay " FIXT "/session_good.jsonl --set hardware=l40s --set replicas=2 "
			      "--cost", 0, NULL);
	const char *row = strstr(rep, "  elastic ");
	assert_non_null(row);
	char id[64];
	double month, mtok, task;
	assert_int_equal(sscanf(row, " elastic %63s %lf %lf %lf", id, &month, &mtok, &task), 4);
	char want[32], got[32];
	snprintf(want, sizeof(want), "%.4f", task);
	snprintf(got, sizeof(got), "%.4f", elastic);
	assert_string_equal(got, want);
	free(rep);
	cJSON_Delete(h100);
	cJSON_Delete(l40s);
	free(out);

	/* hardware with no power figure (the M5 Ultra Mac Studio) is not
	 * priced to buy, and the sweep goes on: its cost once aborted it */
	write_file(SCRATCH "/unpowered.json", "{\"traces\": [\"" FIXT "/session_good.jsonl\"], "
					      "\"cells\": [{\"hardware\": "
					      "\"mac-studio-m5-ultra-256gb\"}], \"cost\": true}\n");
	out = run_sweep("sweep " SCRATCH "/unpowered.json --quiet", 0, NULL);
	cJSON *mac = cJSON_Parse(out);
	assert_non_null(mac);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(mac, "usd_per_accepted_task"),
						    "purchase")));
	cJSON_Delete(mac);
	free(out);

	/* a team's month follows the scenario's calendar as replay --cost's
	 * does: 250 working days a year, not the 261 weekdays */
	write_file(SCRATCH "/cal.json", "{\"traces\": [\"" FIXT "/session_good.jsonl\"], "
					"\"engineers\": 2, \"days\": 1, \"set\": "
					"{\"cost.workdays_per_year\": 250}, \"cells\": "
					"[{\"hardware\": \"l40s\"}], \"cost\": true}\n");
	out = run_sweep("sweep " SCRATCH "/cal.json --quiet", 0, NULL);
	cJSON *cal = cJSON_Parse(out);
	assert_non_null(cal);
	elastic = cJSON_GetObjectItem(cJSON_GetObjectItem(cal, "usd_per_accepted_task"),
				      "elastic")->valuedouble;
	rep = run_sweep("replay " FIXT "/session_good.jsonl --set hardware=l40s --engineers 2 "
			"--days 1 --set cost.workdays_per_year=250 --cost", 0, NULL);
	row = strstr(rep, "  elastic ");
	assert_non_null(row);
	assert_int_equal(sscanf(row, " elastic %63s %lf %lf %lf", id, &month, &mtok, &task), 4);
	snprintf(want, sizeof(want), "%.4f", task);
	snprintf(got, sizeof(got), "%.4f", elastic);
	assert_string_equal(got, want);
	free(rep);
	rep = run_sweep("replay " FIXT "/session_good.jsonl --set hardware=l40s --engineers 2 "
			"--days 1 --cost", 0, NULL);
	row = strstr(rep, "  elastic ");
	assert_int_equal(sscanf(row, " elastic %63s %lf %lf %lf", id, &month, &mtok, &task), 4);
	snprintf(want, sizeof(want), "%.4f", task);
	assert_string_not_equal(got, want); /* the default calendar prices it otherwise */
	free(rep);
	cJSON_Delete(cal);
	free(out);
}

static void test_bad_grid(void **state)
{
	(void)state;
	static const struct {
		const char *text, *msg;
	} CASES[] = {
		{"{\n \"traces\": [\"" FIXR "/two_sessions.jsonl\"],\n \"grid\": {\"replicas\": [1,\n"
		 "  0]}\n}\n",
		 ":4:3: replicas: expected an integer"},
		{"{\n \"traces\": [\"" FIXR "/two_sessions.jsonl\"],\n \"grid\": {\n"
		 "  \"engine.max_num_seq\": [8]}\n}\n",
		 ":4:26: engine.max_num_seq: unknown key (expected one of: max_num_seqs"},
		{"{\n \"traces\": [\"" FIXR "/two_sessions.jsonl\"],\n \"cells\": [{\"replicas\": 1},\n"
		 "  {\"hardware\": \"no-such-gpu\"}]\n}\n",
		 ":4:16: the cell hardware=\"no-such-gpu\": "},
		{"{\n \"traces\": [\"" FIXR "/two_sessions.jsonl\"],\n \"grid\": {\"replicas\": [2, 2]}\n}\n",
		 ":3:27: cell 1 repeats cell 0"},
		{"{\n \"traces\": [\"" FIXR "/two_sessions.jsonl\"],\n  \"seed\": [1]\n}\n",
		 ":3:11: unknown key 'seed' (expected one of: scenario, set, traces, seeds"},
		{"{\n \"traces\": [\n  \"no/such/trace.jsonl\"]\n}\n",
		 ":3:3: cannot open 'no/such/trace.jsonl'"},
		{"{\n \"traces\": []\n}\n", ":2:12: traces: expected a list of 1..1024 trace files"},
		{"{\n \"traces\": [\"" SCRATCH "\"]\n}\n",
		 ":2:13: '" SCRATCH "' is not a regular file (expected a file: a sweep reads it once "
		 "per cell)"},
		{"{\n \"traces\": [\"" FIXR "/two_sessions.jsonl\"],\n \"seeds\": [1, -2]\n}\n",
		 ":3:15: seeds[1]: expected an integer 0..2^53"},
		{"{\n \"traces\": [\"" FIXR "/two_sessions.jsonl\"],\n \"grid\": {\"replicas\": [1,]}\n}\n",
		 ":3:26: malformed JSON at ']}'"},
		{"{\n \"traces\": [\"" FIXR "/two_sessions.jsonl\"],\n \"grid\": {\"replicas\": [1]},\n"
		 " \"cells\": [{}]\n}\n",
		 ":4:11: cells: a grid gives either 'grid'"},
		{"{\n \"traces\": [\"" FIXR "/two_sessions.jsonl\"],\n \"grid\": {\n"
		 "  \"kv_tiers.disk_gb\": [100]}\n}\n",
		 ":4:24: the cell kv_tiers.disk_gb=100: (built-in default): kv_tiers.disk_gb is set "
		 "without a host tier"},
	};
	for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
		write_file(SCRATCH "/bad.json", CASES[i].text);
		unlink(SCRATCH "/bad.jsonl");
		char *err = NULL;
		free(run_sweep("sweep " SCRATCH "/bad.json -o " SCRATCH "/bad.jsonl", 2, &err));
		char want[512];
		snprintf(want, sizeof(want), "agentcap: " SCRATCH "/bad.json%s", CASES[i].msg);
		if (!strstr(err, want))
			fail_msg("case %zu: got '%s', expected '%s'", i, err, want);
		free(err);
		/* nothing was written */
		struct stat st;
		assert_int_not_equal(stat(SCRATCH "/bad.jsonl", &st), 0);
	}
}

#ifdef AC_MPIEXEC
/* `mpirun -n ranks agentcap ARGS`, its status (stderr into *err). */
static int mpi_sweep(int ranks, const char *args, char **err)
{
	char cmd[4096], e[] = "/tmp/agentcap-test-err-XXXXXX";
	int fd = mkstemp(e);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s -n %d --oversubscribe %s/cli/agentcap %s 2>%s", AC_MPIEXEC,
		 ranks, AC_BIN_DIR, args, e);
	int st = system(cmd);
	*err = cli_slurp(e, NULL);
	unlink(e);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_mpi_identical(void **state)
{
	(void)state;
	char *full = full_rows();
	unlink(SCRATCH "/mpi.jsonl");
	char *err = NULL;
	int st = mpi_sweep(2, "sweep " GRID " -o " SCRATCH "/mpi.jsonl --csv " SCRATCH "/mpi.csv",
			   &err);
	if (st != 0)
		fail_msg("mpirun: status %d: %s", st, err);
	assert_non_null(strstr(err, "16 replayed across the ranks, 16 rows written"));
	free(err);
	char *got = cli_slurp(SCRATCH "/mpi.jsonl", NULL);
	assert_non_null(got);
	assert_string_equal(got, full);
	free(got);
	/* the CSV of threads and of ranks agree too */
	free(run_sweep("sweep " GRID " --quiet -o " SCRATCH "/full.jsonl --csv " SCRATCH
		       "/threads.csv", 0, NULL));
	char *a = cli_slurp(SCRATCH "/mpi.csv", NULL), *b = cli_slurp(SCRATCH "/threads.csv", NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);
	/* interrupted mid-row: 3 ranks finish the other 12 cells */
	const char *p = full;
	for (int i = 0; i < 4; i++)
		p = strchr(p, '\n') + 1;
	FILE *fp = fopen(SCRATCH "/mpi.jsonl", "w");
	assert_non_null(fp);
	fwrite(full, 1, (size_t)(p - full) + 10, fp);
	assert_int_equal(fclose(fp), 0);
	st = mpi_sweep(3, "sweep " GRID " -o " SCRATCH "/mpi.jsonl", &err);
	if (st != 0)
		fail_msg("mpirun: status %d: %s", st, err);
	assert_non_null(strstr(err, "16 cells: 4 already in"));
	assert_non_null(strstr(err, "12 replayed across the ranks, 12 rows written"));
	free(err);
	got = cli_slurp(SCRATCH "/mpi.jsonl", NULL);
	assert_string_equal(got, full);
	free(got);
	/* a bad grid: exit 2, the place named */
	write_file(SCRATCH "/bad.json", "{\n \"traces\": [\"" FIXR "/two_sessions.jsonl\"],\n"
					" \"grid\": {\"replicas\": [0]}\n}\n");
	st = mpi_sweep(2, "sweep " SCRATCH "/bad.json -o " SCRATCH "/bad.jsonl", &err);
	assert_int_not_equal(st, 0);
	assert_non_null(strstr(err, "bad.json:3:24: replicas: expected an integer"));
	free(err);
	free(full);
}

#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobs_identical),
		cmocka_unit_test(test_cell_is_a_replay),
		cmocka_unit_test(test_tier_cell_is_a_replay),
		cmocka_unit_test(test_resume),
		cmocka_unit_test(test_torn_line),
		cmocka_unit_test(test_foreign_rows),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_bad_grid),
#ifdef AC_MPIEXEC
		cmocka_unit_test(test_mpi_identical),
#endif
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
