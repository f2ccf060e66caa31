/* SPDX-License-Identifier: Apache-2.0
 * --html on replay, stats, size, compare and whatif, and `agentcap report`:
 * each page is well-formed XML (xmllint, a strict parser), fetches nothing,
 * has what was run at its top, and holds every chart of its kind, drawn;
 * `report` on the saved JSON gives the page --html gave, byte for byte; a
 * file that is not a result, or one past the size report draws from, is
 * refused (exit 2, naming it and what was expected) with nothing written; markup, quotes, ampersands and control
 * characters in every string of a result reach the page escaped; and every page renders in headless
 * Chromium to a PNG without a console message, every chart's SVG present
 * and drawn in the DOM the browser built.  Chromium and xmllint are
 * installed by scripts/deps.sh; when they are missing the test fails, it
 * does not skip.  The pages are made once (group setup) and Chromium starts
 * once per page. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACE AC_SRC_DIR "/traces/data/mooncake/synthetic_trace.jsonl.gz"
#define SMALL AC_SRC_DIR "/tests/fixtures/traces/session_good.jsonl"
#define HEAD200 AC_SRC_DIR "/tests/fixtures/traces/mooncake_head200.jsonl"
#define TEAM "--engineers 2 --profile default --hardware h100-sxm,l40s"

/* One page of each kind: the command that makes it, its charts. */
static const struct page {
	const char *name;
	const char *cmd;     /* --json and --html are appended */
	const char *charts[10];
} PAGES[] = {
	{"replay", "replay " TRACE " --set report.interval_s=60 --cost",
	 {"ttft-cdf", "tpot-cdf", "e2e-cdf", "arrivals", "hit-rate-time", "ts-queue", "ts-batch",
	  "ts-kv", "ts-replicas"}},
	{"stats", "stats " HEAD200, {"cache-curve"}},
	{"size", "size " TEAM, {"size-candidates"}},
	{"compare", "compare " TEAM, {"cost-per-task", "cost-vs-utilisation"}},
	{"compare-range", "compare --engineers 1,2 --profile default --hardware h100-sxm,l40s",
	 {"cost-by-team-size"}},
	{"whatif", "whatif max-output " HEAD200 " --tokens 20",
	 {"ttft-cdf", "tpot-cdf", "e2e-cdf", "whatif-diff"}},
};
#define N_PAGES (sizeof(PAGES) / sizeof(PAGES[0]))

struct pages {
	char dir[64];
	char *text[N_PAGES];
};

static char *path_of(const struct pages *p, const char *name, const char *ext)
{
	char *s;
	assert_true(asprintf(&s, "%s/%s.%s", p->dir, name, ext) > 0);
	return s;
}

static int make_pages(void **state)
{
	struct pages *p = calloc(1, sizeof(*p));
	strcpy(p->dir, "/tmp/agentcap-html-XXXXXX");
	if (!mkdtemp(p->dir))
		return -1;
	for (size_t i = 0; i < N_PAGES; i++) {
		char *json = path_of(p, PAGES[i].name, "json"), *html = path_of(p, PAGES[i].name, "html");
		char cmd[1024];
		snprintf(cmd, sizeof(cmd), "%s --quiet --json %s --html %s", PAGES[i].cmd, json, html);
		struct cli_out o = cli_run(cmd);
		if (o.status != 0 && o.status != 1) {
			fprintf(stderr, "agentcap %s: exit %d, stderr: %s\n", cmd, o.status, o.err);
			return -1;
		}
		cli_out_free(&o);
		p->text[i] = cli_slurp(html, NULL);
		free(json);
		free(html);
		if (!p->text[i])
			return -1;
	}
	*state = p;
	return 0;
}

static int drop_pages(void **state)
{
	struct pages *p = *state;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p->dir);
	int rc = system(cmd);
	for (size_t i = 0; i < N_PAGES; i++)
		free(p->text[i]);
	free(p);
	return rc == 0 ? 0 : -1;
}

/* The text of the <figure id="ID"> ... </figure>, or NULL. */
static char *figure(const char *html, const char *id)
{
	char open[96];
	snprintf(open, sizeof(open), "<figure id=\"%s\">", id);
	const char *a = strstr(html, open), *b = a ? strstr(a, "</figure>") : NULL;
	return b ? strndup(a, (size_t)(b - a)) : NULL;
}

/* Something drawn from data: a line of at least two points, a dot, or a
 * bar of some width. */
static int drawn(const char *f)
{
	const char *pts = strstr(f, "points=\"");
	if (pts) {
		const char *comma = strchr(pts + 8, ',');
		const char *space = comma ? strchr(comma, ' ') : NULL;
		const char *quote = strchr(pts + 8, '"');
		if (space && quote && space < quote)
			return 1;
	}
	return strstr(f, "<circle cx=") != NULL || strstr(f, "<rect class=\"bar\"") != NULL;
}

/* Each chart of page k: an <svg> with a title, axis labels, a caption, and
 * something drawn. */
static void check_charts(const char *html, size_t k)
{
	for (size_t i = 0; PAGES[k].charts[i]; i++) {
		char *f = figure(html, PAGES[k].charts[i]);
		if (!f)
			fail_msg("%s: chart %s missing", PAGES[k].name, PAGES[k].charts[i]);
		if (!strstr(f, "<svg ") || !strstr(f, "class=\"title\"") ||
		    !strstr(f, "class=\"label\"") || !strstr(f, "<figcaption>") || !drawn(f))
			fail_msg("%s: chart %s empty or incomplete: %.400s", PAGES[k].name,
				 PAGES[k].charts[i], f);
		free(f);
	}
}

static void test_pages(void **state)
{
	struct pages *p = *state;
	for (size_t k = 0; k < N_PAGES; k++) {
		const char *t = p->text[k];
		char *html = path_of(p, PAGES[k].name, "html");
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "xmllint --noout --nonet '%s'", html);
		if (system(cmd) != 0)
			fail_msg("%s: not well-formed", PAGES[k].name);
		free(html);
		/* self-contained: nothing to fetch, nothing to run */
		assert_null(strstr(t, "<script"));
		assert_null(strstr(t, " src="));
		assert_null(strstr(t, "<link"));
		assert_null(strstr(t, "url("));
		/* what was run is at the top, before the first chart */
		const char *chart = strstr(t, "<figure");
		assert_non_null(chart);
		static const char *const top[] = {"Scenario", "Trace", "Seed", "agentcap version"};
		for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
			const char *at = strstr(t, top[i]);
			if (!at || at > chart)
				fail_msg("%s: '%s' not at the top of the page", PAGES[k].name, top[i]);
		}
		check_charts(t, k);
	}
}

/* `report` on each saved JSON writes the bytes --html wrote. */
static void test_report_same_bytes(void **state)
{
	struct pages *p = *state;
	for (size_t k = 0; k < N_PAGES; k++) {
		char *json = path_of(p, PAGES[k].name, "json");
		char *again = path_of(p, PAGES[k].name, "again.html");
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "report %s -o %s", json, again);
		struct cli_out o = cli_run(cmd);
		if (o.status != 0)
			fail_msg("agentcap %s: exit %d: %s", cmd, o.status, o.err);
		cli_out_free(&o);
		char *text = cli_slurp(again, NULL);
		assert_non_null(text);
		if (strcmp(text, p->text[k]) != 0)
			fail_msg("%s: report gave other bytes than --html", PAGES[k].name);
		free(text);
		free(json);
		free(again);
	}
}

/* The replay page: objectives drawn, escaping, determinism. */
static void test_replay_page(void **state)
{
	struct pages *p = *state;
	char *html = path_of(p, "slo", "html");
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "replay " SMALL " --quiet --set slo.ttft_ms=50 --set "
		 "slo.tpot_ms=10 --set 'name=<a&b \"c\">' --html %s", html);
	struct cli_out o = cli_run(cmd);
	assert_true(o.status == 0 || o.status == 1);
	cli_out_free(&o);
	char *t = cli_slurp(html, NULL);
	assert_non_null(t);
	assert_non_null(strstr(t, "session_good.jsonl"));
	assert_non_null(strstr(t, "&lt;a&amp;b &quot;c&quot;&gt;"));
	char *f = figure(t, "ttft-cdf");
	assert_non_null(f);
	assert_non_null(strstr(f, "TTFT objective"));
	free(f);
	snprintf(cmd, sizeof(cmd), "xmllint --noout --nonet '%s'", html);
	assert_int_equal(system(cmd), 0);
	/* deterministic: a second run writes the same bytes */
	o = cli_run(strstr(cmd, "xmllint") ? (snprintf(cmd, sizeof(cmd), "replay " SMALL " --quiet "
						       "--set slo.ttft_ms=50 --set slo.tpot_ms=10 --set "
						       "'name=<a&b \"c\">' --html -"), cmd) : cmd);
	assert_int_equal(o.status == 0 || o.status == 1, 1);
	assert_string_equal(o.out, t);
	cli_out_free(&o);
	free(t);
	free(html);
}

/* Not JSON, not a result, a result without what the page needs, no file:
 * exit 2 naming the file and what was expected, and nothing written (a
 * page already at the output path stays as it was). */
static void test_report_refuses(void **state)
{
	struct pages *p = *state;
	static const struct {
		const char *name;
		const char *text;   /* NULL: no such file */
		const char *says;
	} BAD[] = {
		{"notjson.json", "{\"schema\": \"agentcap-size\",\n  \"version\": 1,\n  oops}\n",
		 "notjson.json:3:"},
		{"truncated.json", "{\"schema\": \"agentcap-size\", \"options\": [",
		 "truncated.json:1:"},
		{"trailing.json", "{\"schema\": \"agentcap-stats\"} {}\n", "trailing.json:1:30: text after"},
		{"unknown.json", "{\"schema\": \"something-else\", \"version\": 1}\n",
		 "unknown.json: not an agentcap result (expected a JSON object whose \"schema\" is"},
		{"array.json", "[1, 2]\n", "array.json: not an agentcap result"},
		{"nocharts.json", "{\"schema_version\": 1, \"schema\": \"agentcap-replay\", \"run\": {},"
		 " \"warnings\": [], \"completed\": 1, \"failed\": 0, \"duration_s\": 1, "
		 "\"slo_attainment\": 1, \"prefix_cache_hit_rate\": 0}\n",
		 "nocharts.json: the replay result has no object 'charts' (expected the JSON that "
		 "agentcap replay --json writes)"},
		{"v2.json", "{\"schema\": \"agentcap-size\", \"version\": 2}\n",
		 "v2.json: size result of schema version 2 (expected 1"},
		{"missing.json", NULL, "missing.json: cannot open"},
	};
	char *out = path_of(p, "kept", "html");
	FILE *fp = fopen(out, "w");
	assert_non_null(fp);
	fputs("previous page\n", fp);
	assert_int_equal(fclose(fp), 0);
	char *fresh = path_of(p, "fresh", "html");
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		char *in;
		assert_true(asprintf(&in, "%s/%s", p->dir, BAD[i].name) > 0);
		if (BAD[i].text) {
			fp = fopen(in, "w");
			assert_non_null(fp);
			fputs(BAD[i].text, fp);
			assert_int_equal(fclose(fp), 0);
		}
		for (int k = 0; k < 2; k++) {
			char cmd[512];
			snprintf(cmd, sizeof(cmd), "report %s -o %s", in, k ? fresh : out);
			struct cli_out o = cli_run(cmd);
			if (o.status != 2 || !strstr(o.err, BAD[i].says))
				fail_msg("agentcap %s: exit %d, stderr '%s' (expected 2 and '%s')", cmd,
					 o.status, o.err, BAD[i].says);
			assert_string_equal(o.out, "");
			cli_out_free(&o);
		}
		char *kept = cli_slurp(out, NULL);
		assert_string_equal(kept, "previous page\n");
		free(kept);
		struct stat sb;
		assert_int_not_equal(stat(fresh, &sb), 0);
		free(in);
	}
	/* a result past the size report draws from (a sparse file: no disk
	 * used), refused before it is read */
	char *huge = path_of(p, "huge", "json");
	FILE *hf = fopen(huge, "w");
	assert_non_null(hf);
	fputs("{\"schema\": \"agentcap-replay\"", hf);
	assert_int_equal(fclose(hf), 0);
	assert_int_equal(truncate(huge, (off_t)300 << 20), 0);
	char hcmd[512];
	snprintf(hcmd, sizeof(hcmd), "report %s -o %s", huge, fresh);
	struct cli_out ho = cli_run(hcmd);
	char hwant[512];
	snprintf(hwant, sizeof(hwant), "agentcap: %s: 314572800 bytes, more than the 268435456 "
		 "(256 MiB) report draws from (expected a JSON result of agentcap; one this large is "
		 "a replay's time series sampled far more often than a page can show: write it again "
		 "with a longer report.interval_s)\n", huge);
	assert_int_equal(ho.status, 2);
	assert_string_equal(ho.err, hwant);
	assert_string_equal(ho.out, "");
	cli_out_free(&ho);
	struct stat hsb;
	assert_int_not_equal(stat(fresh, &hsb), 0);
	unlink(huge);
	free(huge);
	/* and no temporary file beside them */
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q tmp", p->dir);
	assert_int_not_equal(system(cmd), 0);
	/* usage */
	struct cli_out o = cli_run("report");
	assert_int_equal(o.status, 2);
	cli_out_free(&o);
	free(out);
	free(fresh);
}

/* A replay result with a "timeseries" gets its charts of queue depth,
 * batch size, KV use and replicas over time (the replay page above has them
 * from a run with report.interval_s); one without gets none; a section of
 * known values is drawn to scale. */
static void test_report_timeseries(void **state)
{
	struct pages *p = *state;
	/* a run without report.interval_s has no series to draw */
	char *plain = path_of(p, "plain", "html");
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "replay " SMALL " --quiet --html %s", plain);
	struct cli_out o = cli_run(cmd);
	assert_true(o.status == 0 || o.status == 1);
	cli_out_free(&o);
	char *pt = cli_slurp(plain, NULL);
	assert_non_null(pt);
	assert_null(strstr(pt, "<figure id=\"ts-"));
	free(pt);
	free(plain);
	char *json = path_of(p, "replay", "json");
	char *text = cli_slurp(json, NULL);
	assert_non_null(text);
	cJSON *doc = cJSON_Parse(text);
	assert_non_null(doc);
	cJSON_DeleteItemFromObjectCaseSensitive(doc, "timeseries");
	cJSON *ts = cJSON_AddObjectToObject(doc, "timeseries");
	static const double t[] = {60, 120, 180, 240};
	static const double q[] = {0, 3, 7, 2}, up[] = {1, 2, 2, 1}, kv[] = {0.1, 0.5, 0.9, 0.4};
	cJSON_AddItemToObject(ts, "t_s", cJSON_CreateDoubleArray(t, 4));
	cJSON_AddItemToObject(ts, "router_queue", cJSON_CreateDoubleArray(q, 4));
	cJSON_AddItemToObject(ts, "waiting", cJSON_CreateDoubleArray(q, 4));
	cJSON_AddItemToObject(ts, "running", cJSON_CreateDoubleArray(q, 4));
	cJSON_AddItemToObject(ts, "kv_use", cJSON_CreateDoubleArray(kv, 4));
	cJSON_AddItemToObject(ts, "replicas_up", cJSON_CreateDoubleArray(up, 4));
	cJSON_AddItemToObject(ts, "replicas_starting", cJSON_CreateDoubleArray(q, 4));
	char *out = cJSON_Print(doc);
	cJSON_Delete(doc);
	char *in = path_of(p, "with-ts", "json"), *html = path_of(p, "with-ts", "html");
	FILE *fp = fopen(in, "w");
	assert_non_null(fp);
	fputs(out, fp);
	assert_int_equal(fclose(fp), 0);
	snprintf(cmd, sizeof(cmd), "report %s -o %s", in, html);
	o = cli_run(cmd);
	if (o.status != 0)
		fail_msg("agentcap %s: exit %d: %s", cmd, o.status, o.err);
	cli_out_free(&o);
	char *page = cli_slurp(html, NULL);
	static const char *const ids[] = {"ts-queue", "ts-batch", "ts-kv", "ts-replicas"};
	for (size_t i = 0; i < 4; i++) {
		char *f = figure(page, ids[i]);
		if (!f || !drawn(f) || !strstr(f, "<figcaption>") || !strstr(f, "class=\"label\""))
			fail_msg("chart %s missing or empty", ids[i]);
		free(f);
	}
	/* KV use is drawn in %: the y axis reaches 100, not 1 */
	char *f = figure(page, "ts-kv");
	assert_non_null(strstr(f, ">100</text>"));
	free(f);
	snprintf(cmd, sizeof(cmd), "xmllint --noout --nonet '%s'", html);
	assert_int_equal(system(cmd), 0);
	free(page);
	free(in);
	free(html);
	free(out);
	free(text);
	free(json);
}

/* Every string of v but the top level's "schema", with HOSTILE after it. */
static void poison(cJSON *v, int depth)
{
	static const char HOSTILE[] = "<script>alert(1)</script><svg/onload=alert(1)>\"'&amp;&"
				      "]]>\x1b[2J\x01 \xff";
	for (cJSON *e = v->child; e; e = e->next) {
		if (cJSON_IsString(e) && !(depth == 0 && e->string && strcmp(e->string, "schema") == 0)) {
			char *s;
			assert_true(asprintf(&s, "%s%s", e->valuestring, HOSTILE) > 0);
			assert_non_null(cJSON_SetValuestring(e, s));
			free(s);
		}
		poison(e, depth + 1);
	}
}

/* `report` on each kind of result with markup, quotes, ampersands, control
 * characters and a byte that is not UTF-8 after every string: the page
 * holds no element or attribute made of them, and is well-formed. */
static void test_report_hostile_strings(void **state)
{
	struct pages *p = *state;
	for (size_t k = 0; k < N_PAGES; k++) {
		char *json = path_of(p, PAGES[k].name, "json");
		char *text = cli_slurp(json, NULL);
		assert_non_null(text);
		cJSON *doc = cJSON_Parse(text);
		assert_non_null(doc);
		poison(doc, 0);
		char *bad = cJSON_Print(doc);
		cJSON_Delete(doc);
		char *in = path_of(p, "hostile", "json"), *html = path_of(p, "hostile", "html");
		FILE *fp = fopen(in, "w");
		assert_non_null(fp);
		fputs(bad, fp);
		assert_int_equal(fclose(fp), 0);
		char cmd[512];
		snprintf(cmd, sizeof(cmd), "report %s -o %s", in, html);
		struct cli_out o = cli_run(cmd);
		if (o.status != 0)
			fail_msg("%s: agentcap %s: exit %d: %s", PAGES[k].name, cmd, o.status, o.err);
		cli_out_free(&o);
		char *page = cli_slurp(html, NULL);
		assert_non_null(page);
		if (strstr(page, "<script") || strstr(page, "<svg/onload") || strchr(page, '\x1b'))
			fail_msg("%s: input markup or control bytes in the page", PAGES[k].name);
		if (!strstr(page, "&lt;script&gt;alert(1)&lt;/script&gt;&lt;svg/onload=alert(1)&gt;"
				  "&quot;&#39;&amp;amp;&amp;]]&gt;"))
			fail_msg("%s: the strings of the result are not on the page, escaped",
				 PAGES[k].name);
		snprintf(cmd, sizeof(cmd), "xmllint --noout --nonet '%s'", html);
		if (system(cmd) != 0)
			fail_msg("%s: not well-formed", PAGES[k].name);
		free(page);
		free(bad);
		free(text);
		free(json);
		free(in);
		free(html);
	}
}

static void test_pages_in_chromium(void **state)
{
	struct pages *p = *state;
	if (system("command -v chromium >/dev/null 2>&1") != 0)
		fail_msg("chromium is not installed (scripts/deps.sh installs it)");
	for (size_t k = 0; k < N_PAGES; k++) {
		char *html = path_of(p, PAGES[k].name, "html"), *png = path_of(p, PAGES[k].name, "png");
		char *dom = path_of(p, PAGES[k].name, "dom"), *err = path_of(p, PAGES[k].name, "err");
		char cmd[2048];
		/* a fresh profile, no network, console messages on stderr; one start
		 * both draws the PNG and dumps the DOM */
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && timeout 120 chromium --headless --no-sandbox --disable-gpu "
			 "--no-first-run --user-data-dir='%s/profile' --enable-logging=stderr --v=0 "
			 "--window-size=1000,3000 --screenshot='%s' --dump-dom 'file://%s' >'%s' 2>'%s'",
			 p->dir, p->dir, png, html, dom, err);
		int st = system(cmd);
		char *e = cli_slurp(err, NULL);
		if (st != 0)
			fail_msg("%s: chromium failed (status %d): %.2000s", PAGES[k].name, st, e ? e : "");
		/* no console message of any level: a page without scripts has none
		 * unless something failed to load or parse */
		if (e && strstr(e, ":CONSOLE"))
			fail_msg("%s: console messages: %.2000s", PAGES[k].name, strstr(e, ":CONSOLE"));
		free(e);
		struct stat sb;
		assert_int_equal(stat(png, &sb), 0);
		assert_true(sb.st_size > 10000); /* a page of charts, not a blank one */
		char *img = cli_slurp(png, NULL);
		assert_memory_equal(img, "\x89PNG\r\n\x1a\n", 8);
		free(img);
		/* the DOM the browser built still holds every chart, drawn */
		char *d = cli_slurp(dom, NULL);
		assert_non_null(d);
		check_charts(d, k);
		free(d);
		free(html);
		free(png);
		free(dom);
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pages),
		cmocka_unit_test(test_report_same_bytes),
		cmocka_unit_test(test_replay_page),
		cmocka_unit_test(test_report_refuses),
		cmocka_unit_test(test_report_timeseries),
		cmocka_unit_test(test_report_hostile_strings),
		cmocka_unit_test(test_pages_in_chromium),
	};
	return cmocka_run_group_tests(tests, make_pages, drop_pages);
}
