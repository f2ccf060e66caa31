/* SPDX-License-Identifier: Apache-2.0
 * `replay --html`: the page of a default-scenario run is well-formed XML
 * (xmllint, a strict parser), fetches nothing, and renders in headless
 * Chromium to a PNG without a console message, every chart's SVG present
 * and drawn.  Chromium and xmllint are installed by scripts/deps.sh; when
 * they are missing the test fails, it does not skip. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACE AC_SRC_DIR "/traces/data/mooncake/synthetic_trace.jsonl.gz"
#define SMALL AC_SRC_DIR "/tests/fixtures/traces/session_good.jsonl"

static const char *const CHARTS[] = {"ttft-cdf", "tpot-cdf", "e2e-cdf", "arrivals"};
#define N_CHARTS (sizeof(CHARTS) / sizeof(CHARTS[0]))

struct run {
	char dir[64];
	char html[128];
	char *text;
};

static void make_report(struct run *r, const char *args)
{
	strcpy(r->dir, "/tmp/agentcap-html-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->html, sizeof(r->html), "%s/report.html", r->dir);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "replay %s --quiet --html %s", args, r->html);
	struct cli_out o = cli_run(cmd);
	if (o.status != 0 && o.status != 1)
		fail_msg("agentcap %s: exit %d, stderr: %s", cmd, o.status, o.err);
	cli_out_free(&o);
	r->text = cli_slurp(r->html, NULL);
	assert_non_null(r->text);
}

static void drop(struct run *r)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
	assert_int_equal(system(cmd), 0);
	free(r->text);
}

/* The text of the <figure id="ID"> ... </figure>, or NULL. */
static char *figure(const char *html, const char *id)
{
	char open[96];
	snprintf(open, sizeof(open), "<figure id=\"%s\">", id);
	const char *a = strstr(html, open), *b = a ? strstr(a, "</figure>") : NULL;
	return b ? strndup(a, (size_t)(b - a)) : NULL;
}

/* Each chart: an <svg> with a title, axis labels, a caption, and a line of
 * at least two points. */
static void check_charts(const char *html)
{
	for (size_t i = 0; i < N_CHARTS; i++) {
		char *f = figure(html, CHARTS[i]);
		if (!f)
			fail_msg("chart %s missing", CHARTS[i]);
		const char *pts = strstr(f, "points=\"");
		if (!strstr(f, "<svg ") || !strstr(f, "class=\"title\"") ||
		    !strstr(f, "class=\"label\"") || !strstr(f, "<figcaption>") || !pts ||
		    !strchr(strchr(pts + 8, ',') ? strchr(pts + 8, ',') : pts + 8, ' '))
			fail_msg("chart %s empty or incomplete: %.400s", CHARTS[i], f);
		free(f);
	}
}

static void test_html_well_formed(void **state)
{
	(void)state;
	struct run r;
	make_report(&r, SMALL " --set slo.ttft_ms=50 --set slo.tpot_ms=10");
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "xmllint --noout --nonet '%s'", r.html);
	assert_int_equal(system(cmd), 0);
	/* self-contained: nothing to fetch, nothing to run */
	assert_null(strstr(r.text, "<script"));
	assert_null(strstr(r.text, " src="));
	assert_null(strstr(r.text, "<link"));
	assert_null(strstr(r.text, "url("));
	/* what was run is at the top, before the first chart */
	const char *chart = strstr(r.text, "<figure");
	assert_non_null(chart);
	static const char *const top[] = {"Scenario", "Trace", "Seed", "agentcap version",
					  "session_good.jsonl"};
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
		const char *at = strstr(r.text, top[i]);
		if (!at || at > chart)
			fail_msg("'%s' not at the top of the page", top[i]);
	}
	/* the SLOs are drawn on their charts */
	char *f = figure(r.text, "ttft-cdf");
	assert_non_null(strstr(f, "TTFT objective"));
	free(f);
	check_charts(r.text);
	/* deterministic: a second run writes the same bytes */
	struct run again;
	make_report(&again, SMALL " --set slo.ttft_ms=50 --set slo.tpot_ms=10");
	assert_string_equal(r.text, again.text);
	drop(&again);
	drop(&r);
}

/* A text that must not be taken for markup is escaped: a scenario name
 * with XML metacharacters still gives a well-formed page. */
static void test_html_escapes(void **state)
{
	(void)state;
	struct run r;
	make_report(&r, SMALL " --set 'name=<a&b \"c\">'");
	assert_non_null(strstr(r.text, "&lt;a&amp;b &quot;c&quot;&gt;"));
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "xmllint --noout --nonet '%s'", r.html);
	assert_int_equal(system(cmd), 0);
	drop(&r);
}

static void test_html_in_chromium(void **state)
{
	(void)state;
	if (system("command -v chromium >/dev/null 2>&1") != 0)
		fail_msg("chromium is not installed (scripts/deps.sh installs it)");
	struct run r;
	make_report(&r, TRACE);
	check_charts(r.text);
	char cmd[2048];
	/* a fresh profile, no network, console messages on stderr */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && timeout 120 chromium --headless --no-sandbox --disable-gpu "
		 "--no-first-run --user-data-dir='%s/profile' --enable-logging=stderr --v=0 "
		 "--window-size=1000,3000 --screenshot='%s/report.png' 'file://%s' >out.txt "
		 "2>err.txt && timeout 120 chromium --headless --no-sandbox --disable-gpu "
		 "--no-first-run --user-data-dir='%s/profile' --dump-dom 'file://%s' >dom.html "
		 "2>>err.txt", r.dir, r.dir, r.dir, r.html, r.dir, r.html);
	int st = system(cmd);
	char path[256];
	snprintf(path, sizeof(path), "%s/err.txt", r.dir);
	char *err = cli_slurp(path, NULL);
	if (st != 0)
		fail_msg("chromium failed (status %d): %.2000s", st, err ? err : "");
	/* no console message of any level: a page without scripts has none
	 * unless something failed to load or parse */
	if (err && strstr(err, ":CONSOLE"))
		fail_msg("console messages: %.2000s", strstr(err, ":CONSOLE"));
	free(err);
	snprintf(path, sizeof(path), "%s/report.png", r.dir);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_true(sb.st_size > 10000); /* a page of charts, not a blank one */
	char *png = cli_slurp(path, NULL);
	assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
	free(png);
	/* the DOM the browser built still holds every chart, drawn */
	snprintf(path, sizeof(path), "%s/dom.html", r.dir);
	char *dom = cli_slurp(path, NULL);
	assert_non_null(dom);
	check_charts(dom);
	free(dom);
	drop(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html_well_formed),
		cmocka_unit_test(test_html_escapes),
		cmocka_unit_test(test_html_in_chromium),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
