/* SPDX-License-Identifier: Apache-2.0
 * Pages a person would forward (issue 37, item 2): every kind of page, made
 * by agentcap from small fixtures, is laid out by headless Chromium at a
 * laptop's width (1366x900) and a phone's (390x844), with a checker
 * (tests/fixtures/html/check.js) injected into a copy: no two text boxes
 * overlap, no chart text leaves its chart, the page is no wider than the
 * window, and every chart has a title and axis labels with units.  The
 * checker writes its verdict into the DOM, which Chromium dumps and this
 * test reads.  Then each reported defect, on the page made from the same
 * JSON: compare's "+ API" rows, its sensitivity table, operator cost and
 * dated sources, its colours, break-even labels crowded together; whatif's
 * row labels, counts, an outlier change, objectives and deployments; size's
 * hardware and early-stopped candidates; stats's log axis; replay's --cost.
 * Chromium comes from the Debian package chromium (scripts/deps.sh); when
 * it is missing the test fails, it does not skip. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD200 AC_SRC_DIR "/tests/fixtures/traces/mooncake_head200.jsonl"
#define CHECK_JS AC_SRC_DIR "/tests/fixtures/html/check.js"
#define SLO "ttft_p95=2s,tpot_p50=50ms"

static const struct kind {
	const char *name;
	const char *cmd; /* NULL: made from another page's JSON by the test */
} KINDS[] = {
	{"replay", "replay " HEAD200 " --cost --set report.interval_s=60 --set slo.ttft_ms=2000"},
	{"stats", "stats " HEAD200},
	{"size", "size --engineers 2 --profile default --hardware h100-sxm,l40s"},
	{"compare", "compare --engineers 2 --profile default --hardware h100-sxm,rtx-pro-6000 "
		    "--scenario " AC_SRC_DIR "/scenarios/h100-plus-sonnet.json"},
	{"compare-range", "compare --engineers 1,2 --profile default --hardware h100-sxm,l40s"},
	{"whatif", "whatif max-output " HEAD200 " --tokens 20 --slo " SLO
		   " --hardware h100-sxm,l40s"},
	{"compare-crowded", NULL},
	{"whatif-outlier", NULL},
	/* disaggregated: candidates labelled 1P+1D x TP1, a launch per pool */
	{"size-pd", "size --engineers 2 --profile default --hardware h100-sxm,l40s "
		    "--set 'pools=[{\"name\":\"prefill\"},{\"name\":\"decode\"}]' "
		    "--set disaggregation.prefill_pool=prefill "
		    "--set disaggregation.decode_pool=decode"},
};
#define N_KINDS (sizeof(KINDS) / sizeof(KINDS[0]))
enum { REPLAY, STATS, SIZE, COMPARE, RANGE, WHATIF, CROWDED, OUTLIER, SIZE_PD };

struct pages {
	char dir[64];
	char *html[N_KINDS];
	cJSON *json[N_KINDS];
};

static char *path_of(const struct pages *p, const char *name, const char *ext)
{
	char *s;
	assert_true(asprintf(&s, "%s/%s.%s", p->dir, name, ext) > 0);
	return s;
}

static int write_text(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	if (!fp)
		return -1;
	fputs(text, fp);
	return fclose(fp);
}

/* The page of doc, by `agentcap report`, as page name. */
static int report(struct pages *p, size_t k, cJSON *doc)
{
	char *json = path_of(p, KINDS[k].name, "json"), *html = path_of(p, KINDS[k].name, "html");
	char *text = cJSON_Print(doc);
	int rc = write_text(json, text);
	free(text);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "report %s -o %s", json, html);
	struct cli_out o = cli_run(cmd);
	if (rc != 0 || o.status != 0) {
		fprintf(stderr, "agentcap %s: exit %d: %s\n", cmd, o.status, o.err);
		rc = -1;
	}
	cli_out_free(&o);
	p->html[k] = cli_slurp(html, NULL);
	p->json[k] = doc;
	free(json);
	free(html);
	return rc == 0 && p->html[k] ? 0 : -1;
}

static int make_pages(void **state)
{
	struct pages *p = calloc(1, sizeof(*p));
	strcpy(p->dir, "/tmp/agentcap-pages-XXXXXX");
	if (!mkdtemp(p->dir))
		return -1;
	*state = p;
	for (size_t k = 0; k < N_KINDS; k++) {
		if (!KINDS[k].cmd)
			continue;
		char *json = path_of(p, KINDS[k].name, "json"), *html = path_of(p, KINDS[k].name, "html");
		char cmd[1024];
		snprintf(cmd, sizeof(cmd), "%s --quiet --json %s --html %s", KINDS[k].cmd, json, html);
		struct cli_out o = cli_run(cmd);
		if (o.status != 0 && o.status != 1) {
			fprintf(stderr, "agentcap %s: exit %d, stderr: %s\n", cmd, o.status, o.err);
			cli_out_free(&o);
			free(json);
			free(html);
			return -1;
		}
		cli_out_free(&o);
		p->html[k] = cli_slurp(html, NULL);
		char *text = cli_slurp(json, NULL);
		p->json[k] = text ? cJSON_Parse(text) : NULL;
		free(text);
		free(json);
		free(html);
		if (!p->html[k] || !p->json[k])
			return -1;
	}
	/* compare with three break-even utilisations a point apart: their
	 * labels would stack into one another */
	cJSON *crowded = cJSON_Duplicate(p->json[COMPARE], 1);
	cJSON *row;
	double be = 0.30;
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(crowded, "rows")) {
		const char *opt = cJSON_GetObjectItemCaseSensitive(row, "option")->valuestring;
		if (strcmp(opt, "api") == 0 || strcmp(opt, "seats") == 0 ||
		    cJSON_GetObjectItemCaseSensitive(row, "hybrid"))
			continue;
		cJSON_ReplaceItemInObjectCaseSensitive(row, "breakeven_gpu_busy_fraction",
						       cJSON_CreateNumber(be));
		be += 0.01;
	}
	if (report(p, CROWDED, crowded) != 0)
		return -1;
	/* whatif with one figure up from 1 to 2913.438 (+291243.8%) */
	cJSON *outlier = cJSON_Duplicate(p->json[WHATIF], 1);
	cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(outlier, "rows"), 5);
	cJSON_ReplaceItemInObjectCaseSensitive(first, "a", cJSON_CreateNumber(1.0));
	cJSON_ReplaceItemInObjectCaseSensitive(first, "b", cJSON_CreateNumber(2913.438));
	return report(p, OUTLIER, outlier);
}

static int drop_pages(void **state)
{
	struct pages *p = *state;
	if (!p)
		return 0;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p->dir);
	int rc = system(cmd);
	for (size_t k = 0; k < N_KINDS; k++) {
		free(p->html[k]);
		cJSON_Delete(p->json[k]);
	}
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

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *at = strstr(s, what); at; at = strstr(at + 1, what))
		n++;
	return n;
}

/* ---- the browser -------------------------------------------------------- */

static void test_pages_in_chromium(void **state)
{
	struct pages *p = *state;
	if (system("command -v chromium >/dev/null 2>&1") != 0)
		fail_msg("chromium is not installed: install the Debian package 'chromium' "
			 "(scripts/deps.sh does)");
	char *js = cli_slurp(CHECK_JS, NULL);
	assert_non_null(js);
	static const int SIZES[][2] = {{1366, 900}, {390, 844}};
	for (size_t k = 0; k < N_KINDS; k++) {
		/* the page with the checker at the end of its body */
		const char *end = strstr(p->html[k], "</body>");
		assert_non_null(end);
		char *checked;
		assert_true(asprintf(&checked, "%.*s<script>%s</script>%s", (int)(end - p->html[k]),
				     p->html[k], js, end) > 0);
		char *page = path_of(p, KINDS[k].name, "checked.html");
		assert_int_equal(write_text(page, checked), 0);
		free(checked);
		for (size_t w = 0; w < 2; w++) {
			char *dom = path_of(p, KINDS[k].name, "dom"), *err = path_of(p, KINDS[k].name, "err");
			char cmd[2048];
			snprintf(cmd, sizeof(cmd),
				 "timeout 60 chromium --headless=new --no-sandbox --disable-gpu "
				 "--hide-scrollbars --no-first-run --user-data-dir='%s/profile' "
				 "--window-size=%d,%d --dump-dom 'file://%s' >'%s' 2>'%s'",
				 p->dir, SIZES[w][0], SIZES[w][1], page, dom, err);
			int st = system(cmd);
			char *d = cli_slurp(dom, NULL);
			if (st != 0 || !d) {
				char *e = cli_slurp(err, NULL);
				fail_msg("%s at %d px: chromium failed (status %d): %.2000s",
					 KINDS[k].name, SIZES[w][0], st, e ? e : "");
			}
			/* the last one: the checker's own text names it too */
			const char *v = NULL;
			for (const char *at = strstr(d, "<pre id=\"verdict\">"); at;
			     at = strstr(at + 1, "<pre id=\"verdict\">"))
				v = at;
			if (!v)
				fail_msg("%s at %d px: no verdict in the DOM (the checker did not run)",
					 KINDS[k].name, SIZES[w][0]);
			v += strlen("<pre id=\"verdict\">");
			if (strncmp(v, "OK ", 3) != 0)
				fail_msg("%s at %d px:\n%.3000s", KINDS[k].name, SIZES[w][0], v);
			free(d);
			free(dom);
			free(err);
		}
		free(page);
	}
	free(js);
}

/* ---- compare ------------------------------------------------------------ */

/* Each local plus cloud row keeps "+ API" in the table and on the bars,
 * so one box plus the API does not read as the box alone. */
static void test_compare_spill_rows_say_api(void **state)
{
	struct pages *p = *state;
	const char *t = p->html[COMPARE];
	char *bars = figure(t, "cost-per-task");
	assert_non_null(bars);
	int hybrid = 0;
	const cJSON *row;
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(p->json[COMPARE], "rows")) {
		if (!cJSON_GetObjectItemCaseSensitive(row, "hybrid"))
			continue;
		char want[192];
		snprintf(want, sizeof(want), "%s %s + API (%s)",
			 cJSON_GetObjectItemCaseSensitive(row, "hardware")->valuestring,
			 cJSON_GetObjectItemCaseSensitive(row, "option")->valuestring,
			 cJSON_GetObjectItemCaseSensitive(row, "deployment")->valuestring);
		if (!strstr(t, want) || !strstr(bars, want))
			fail_msg("compare: the row '%s' lost its name", want);
		hybrid++;
	}
	assert_true(hybrid > 0);
	free(bars);
}

/* The sensitivity table, operator cost, objectives, and every assumption
 * with its source and the source's date. */
static void test_compare_carries_its_basis(void **state)
{
	struct pages *p = *state;
	const char *t = p->html[COMPARE];
	static const char *const SECTIONS[] = {"<h2>Sensitivity</h2>", "<h2>Operator cost</h2>",
					       "<h2>Assumptions and sources</h2>",
					       "Latency objectives", "Prices as of"};
	for (size_t i = 0; i < sizeof(SECTIONS) / sizeof(SECTIONS[0]); i++)
		if (!strstr(t, SECTIONS[i]))
			fail_msg("compare: no '%s'", SECTIONS[i]);
	const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p->json[COMPARE],
									       "rows"), 0);
	/* a sensitivity figure of the first row, as the table prints it */
	char want[64];
	snprintf(want, sizeof(want), "<td class=\"n\">%.2f</td>",
		 cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
			row, "sensitivity_usd_per_accepted_task"), "operator_high")->valuedouble);
	assert_non_null(strstr(strstr(t, "<h2>Sensitivity</h2>"), want));
	/* every source of the first row, and each dated one with its date */
	const cJSON *a;
	int dated = 0;
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(row, "assumptions")) {
		const char *src = cJSON_GetObjectItemCaseSensitive(a, "source")->valuestring;
		const char *d = strstr(src, "2025-");
		if (!d)
			continue;
		char date[16];
		snprintf(date, sizeof(date), "<td>%.*s", (int)strspn(d, "0123456789-"), d);
		if (date[strlen(date) - 1] == '-')
			date[strlen(date) - 1] = '\0';
		if (!strstr(strstr(t, "Assumptions and sources"), date))
			fail_msg("compare: no date column '%s' for '%.80s'", date, src);
		dated++;
	}
	assert_true(dated > 0);
}

/* The colours of the polylines of a figure, all distinct. */
static void test_compare_colours_differ(void **state)
{
	struct pages *p = *state;
	char *f = figure(p->html[COMPARE], "cost-vs-utilisation");
	assert_non_null(f);
	char seen[16][8];
	int n = 0;
	for (const char *at = strstr(f, "<polyline"); at; at = strstr(at + 1, "<polyline")) {
		const char *c = strstr(at, "stroke=\"#");
		assert_non_null(c);
		char colour[8];
		memcpy(colour, c + 8, 7);
		colour[7] = '\0';
		for (int i = 0; i < n; i++)
			if (strcmp(seen[i], colour) == 0)
				fail_msg("compare: colour %s drawn twice", colour);
		assert_true(n < 16);
		strcpy(seen[n++], colour);
	}
	assert_true(n >= 2);
	free(f);
}

/* Break-even labels a point apart are stacked or dropped, never drawn on
 * one another (the browser check lays them out; here, each label drawn
 * sits at its own place). */
static void test_compare_breakeven_labels_apart(void **state)
{
	struct pages *p = *state;
	char *f = figure(p->html[CROWDED], "cost-vs-utilisation");
	assert_non_null(f);
	assert_true(count(f, "<line class=\"marker\"") >= 3);
	double xy[16][2];
	int n = 0;
	for (const char *at = strstr(f, "<text class=\"marker\" x=\""); at && n < 16;
	     at = strstr(at + 1, "<text class=\"marker\" x=\"")) {
		assert_int_equal(sscanf(at, "<text class=\"marker\" x=\"%lf\" y=\"%lf\"", &xy[n][0],
					&xy[n][1]), 2);
		for (int i = 0; i < n; i++)
			if (fabs(xy[i][0] - xy[n][0]) < 60 && fabs(xy[i][1] - xy[n][1]) < 12)
				fail_msg("compare: two marker labels at (%g, %g) and (%g, %g)", xy[i][0],
					 xy[i][1], xy[n][0], xy[n][1]);
		n++;
	}
	assert_true(n >= 2);
	free(f);
}

/* ---- whatif ------------------------------------------------------------- */

static void test_whatif_rows_read_as_labels(void **state)
{
	struct pages *p = *state;
	const char *t = p->html[WHATIF];
	const cJSON *row;
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(p->json[WHATIF], "rows")) {
		const char *key = cJSON_GetObjectItemCaseSensitive(row, "key")->valuestring;
		char raw[96];
		snprintf(raw, sizeof(raw), ">%s", key);
		if (strchr(key, '_') && strstr(t, raw))
			fail_msg("whatif: a row reads as its key '%s'", key);
	}
	assert_non_null(strstr(t, "<th>Elastic rental, h100-sxm (USD/month)</th>"));
	assert_non_null(strstr(t, "<th>GPUs needed, h100-sxm (GPUs)</th>"));
	/* counts print whole: the completed calls as the JSON has them */
	const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p->json[WHATIF], "rows"), 0);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "key")->valuestring, "completed");
	char want[128];
	snprintf(want, sizeof(want), "<th>Calls completed (calls)</th><td class=\"n\">%.0f</td>",
		 cJSON_GetObjectItemCaseSensitive(c, "a")->valuedouble);
	assert_non_null(strstr(t, want));
	const char *gpus = strstr(t, "<th>GPUs needed, h100-sxm (GPUs)</th>");
	const char *eol = strchr(gpus, '\n');
	char *line = strndup(gpus, (size_t)(eol - gpus));
	assert_null(strstr(line, ".00<"));
	free(line);
}

/* One change of +291243.8% next to changes of tens of %: a log axis, the
 * value printed, and no bar more than ten times the median width. */
static void test_whatif_outlier_does_not_dwarf(void **state)
{
	struct pages *p = *state;
	char *f = figure(p->html[OUTLIER], "whatif-diff");
	assert_non_null(f);
	assert_non_null(strstr(f, "+291243.8%"));
	assert_non_null(strstr(f, "log scale"));
	double w[64];
	int n = 0;
	for (const char *at = strstr(f, "<rect class=\"bar\""); at && n < 64;
	     at = strstr(at + 1, "<rect class=\"bar\"")) {
		const char *ws = strstr(at, "width=\"");
		w[n++] = strtod(ws + 7, NULL);
	}
	assert_true(n >= 3);
	double max = 0, big = 0;
	int big_n = 0;
	for (int i = 0; i < n; i++) {
		max = fmax(max, w[i]);
		if (w[i] > 1.0) {
			big += w[i];
			big_n++;
		}
	}
	/* the bars that moved (wider than a hairline) average more than a
	 * tenth of the widest */
	assert_true(big_n >= 2);
	if (!(big / big_n > max / 10.0))
		fail_msg("whatif: the outlier dwarfs the rest (widest %g, mean %g)", max, big / big_n);
	free(f);
	/* without the outlier the axis stays linear */
	f = figure(p->html[WHATIF], "whatif-diff");
	assert_null(strstr(f, "log scale"));
	free(f);
}

static void test_whatif_objectives_and_deployments(void **state)
{
	struct pages *p = *state;
	const char *t = p->html[WHATIF];
	char *f = figure(t, "ttft-cdf");
	assert_non_null(strstr(f, "P95 TTFT objective 2000 ms"));
	assert_non_null(strstr(f, "95% of calls"));
	free(f);
	f = figure(t, "tpot-cdf");
	assert_non_null(strstr(f, "P50 TPOT objective 50 ms"));
	free(f);
	f = figure(t, "whatif-size");
	assert_non_null(f);
	const cJSON *o, *v;
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(p->json[WHATIF], "size"), "options")) {
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(o, "variants")) {
			const cJSON *dep = cJSON_GetObjectItemCaseSensitive(v, "deployment");
			const char *want = cJSON_IsString(dep) ? dep->valuestring : "none found";
			if (!strstr(f, want))
				fail_msg("whatif: deployment '%s' not on the chart", want);
		}
	}
	free(f);
}

/* ---- size, stats, replay ------------------------------------------------ */

static void test_size_dots_say_hardware(void **state)
{
	struct pages *p = *state;
	char *f = figure(p->html[SIZE], "size-candidates");
	assert_non_null(f);
	const cJSON *o, *e;
	int drawn = 0, early = 0;
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(p->json[SIZE], "options")) {
		char want[96];
		snprintf(want, sizeof(want), ">%s: met<",
			 cJSON_GetObjectItemCaseSensitive(o, "hardware")->valuestring);
		if (!strstr(f, want))
			fail_msg("size: no legend item '%s'", want);
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "path")) {
			const cJSON *vd;
			bool stopped = false;
			cJSON_ArrayForEach(vd, cJSON_GetObjectItemCaseSensitive(e, "verdicts"))
				stopped = stopped || (strcmp(vd->valuestring, "met") != 0 &&
						      strcmp(vd->valuestring, "ran") != 0);
			early += stopped;
			drawn += !stopped;
		}
	}
	/* a dot per candidate replayed to the end, none for one stopped early */
	int dots = 0;
	for (const char *g = strstr(f, "<g class=\"series\">"); g; g = strstr(g + 1, "<g class=\"series\">")) {
		const char *end = strstr(g, "</g>");
		for (const char *c = strstr(g, "<circle"); c && c < end; c = strstr(c + 1, "<circle"))
			dots++;
	}
	assert_int_equal(dots, drawn);
	assert_true(early > 0); /* the fixture has some: l40s at TP1 misses early */
	assert_int_equal(count(p->html[SIZE], "stopped early: not measured"), early);
	free(f);
}

/* A disaggregated size page labels its candidates by split and gives each
 * winner a launch command per pool. */
static void test_size_pd_labels(void **state)
{
	struct pages *p = *state;
	assert_non_null(strstr(p->html[SIZE_PD], "1P+1D x TP"));
	assert_non_null(strstr(p->html[SIZE_PD], ", pool prefill: "));
	assert_non_null(strstr(p->html[SIZE_PD], ", pool decode: "));
	const cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p->json[SIZE_PD],
									       "options"), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "launch")), 2);
}

static void test_stats_log_axis(void **state)
{
	struct pages *p = *state;
	double lo = INFINITY, hi = 0;
	const cJSON *pt;
	cJSON_ArrayForEach(pt, cJSON_GetObjectItemCaseSensitive(p->json[STATS], "cache_curve")) {
		double v = cJSON_GetObjectItemCaseSensitive(pt, "cache_tokens")->valuedouble;
		if (v > 0) {
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
	}
	assert_true(hi / lo >= 10); /* the fixture spans a decade and more */
	char *f = figure(p->html[STATS], "cache-curve");
	assert_non_null(strstr(f, "log scale"));
	free(f);
}

static void test_replay_shows_cost(void **state)
{
	struct pages *p = *state;
	const char *t = p->html[REPLAY];
	const cJSON *opt = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(p->json[REPLAY], "cost"), "options"), 0);
	assert_non_null(opt);
	assert_non_null(strstr(t, "<h2>Cost (USD)</h2>"));
	char want[64];
	snprintf(want, sizeof(want), "<td class=\"n\">%.2f</td>",
		 cJSON_GetObjectItemCaseSensitive(opt, "usd_per_month")->valuedouble);
	assert_non_null(strstr(t, want));
	char *f = figure(t, "replay-cost");
	assert_non_null(f);
	snprintf(want, sizeof(want), "%.2f per accepted task",
		 cJSON_GetObjectItemCaseSensitive(opt, "usd_per_accepted_task")->valuedouble);
	assert_non_null(strstr(f, want));
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare_spill_rows_say_api),
		cmocka_unit_test(test_compare_carries_its_basis),
		cmocka_unit_test(test_compare_colours_differ),
		cmocka_unit_test(test_compare_breakeven_labels_apart),
		cmocka_unit_test(test_whatif_rows_read_as_labels),
		cmocka_unit_test(test_whatif_outlier_does_not_dwarf),
		cmocka_unit_test(test_whatif_objectives_and_deployments),
		cmocka_unit_test(test_size_dots_say_hardware),
		cmocka_unit_test(test_size_pd_labels),
		cmocka_unit_test(test_stats_log_axis),
		cmocka_unit_test(test_replay_shows_cost),
		cmocka_unit_test(test_pages_in_chromium),
	};
	return cmocka_run_group_tests(tests, make_pages, drop_pages);
}
