/* SPDX-License-Identifier: Apache-2.0
 * html and svgplot without the command line: a result drawn twice gives the
 * same bytes; input text is escaped; axes end whatever the numbers (values
 * so large or so close that adding a tick's step does not move it); a value
 * that is not finite is left out of a line and shown as "-" in a bar;
 * input errors name the file, the key and what was expected; every string
 * of the input reaches the page escaped (the compare page's currency too),
 * bytes that are not UTF-8 or not allowed in XML as U+FFFD; and a label cut
 * to fit is cut between characters, never inside one; a line longer than
 * a chart can show is drawn from fewer points, its extremes kept; and a
 * result too large to draw is an input error. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/diag.h"
#include "base/utf8.h"
#include "reports/html.h"
#include "reports/svgplot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct page {
	char *text;
	size_t len;
	FILE *fp;
};

static void page_open(struct page *p)
{
	p->text = NULL;
	p->len = 0;
	p->fp = open_memstream(&p->text, &p->len);
	assert_non_null(p->fp);
}

static void page_close(struct page *p)
{
	assert_int_equal(fclose(p->fp), 0);
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *at = strstr(s, what); at; at = strstr(at + 1, what))
		n++;
	return n;
}

static void test_axes_end(void **state)
{
	(void)state;
	static const double X[][2] = {{1e300, 1e300 * (1 + 4e-16)}, {-1e-320, 1e-320},
				      {5.0, 5.0}, {0.0, 0.0}, {-3.0, 7.0}};
	for (size_t i = 0; i < sizeof(X) / sizeof(X[0]); i++) {
		double y[2] = {1.0, 2.0};
		struct svgplot_series s = {.name = "s", .x = X[i], .y = y, .n = 2};
		struct svgplot_chart c = {.id = "c", .title = "t", .x_label = "x (s)", .y_label = "y",
					  .caption = "c"};
		struct page p;
		page_open(&p);
		svgplot_lines(p.fp, &c, &s, 1);
		page_close(&p);
		/* at most 21 ticks per axis, each a grid line and a label */
		assert_true(count(p.text, "class=\"tick\"") <= 42);
		assert_non_null(strstr(p.text, "</figure>"));
		free(p.text);
	}
}

static void test_not_finite(void **state)
{
	(void)state;
	double x[3] = {1.0, NAN, 3.0}, y[3] = {1.0, 2.0, INFINITY};
	struct svgplot_series s = {.name = "s", .x = x, .y = y, .n = 3};
	struct svgplot_chart c = {.id = "c", .title = "<t&>", .x_label = "x", .y_label = "y",
				  .caption = "c"};
	struct page p;
	page_open(&p);
	svgplot_lines(p.fp, &c, &s, 1);
	struct svgplot_bar bars[2] = {{"a", 2.0, NULL}, {"b'", NAN, NULL}};
	svgplot_bars(p.fp, &c, bars, 2);
	page_close(&p);
	assert_null(strstr(p.text, "nan"));
	assert_null(strstr(p.text, "inf"));
	assert_non_null(strstr(p.text, "&lt;t&amp;&gt;"));
	assert_non_null(strstr(p.text, "b&#39;"));
	assert_int_equal(count(p.text, "<rect class=\"bar\""), 1);
	assert_non_null(strstr(p.text, ">-</text>"));
	free(p.text);
}

static const char STATS[] =
	"{\"schema_version\": 1, \"schema\": \"agentcap-stats\", \"agentcap_version\": \"9\", "
	"\"trace\": \"a<b>.jsonl\", \"trace_format\": \"agentcap-trace v1\", \"calls\": 3, "
	"\"sessions\": 1, \"engineers\": 1, \"tasks\": 1, \"first_t_s\": 0, \"last_t_s\": 7200, "
	"\"prefix_hit_rate_unbounded\": 0.5, \"cache_curve\": [{\"cache_tokens\": 1000, "
	"\"hit_rate\": 0.25}, {\"cache_tokens\": 2000, \"hit_rate\": 0.5}]}";

static void test_render(void **state)
{
	(void)state;
	struct page a, b;
	struct diag d;
	diag_init(&d);
	page_open(&a);
	assert_int_equal(html_render(a.fp, STATS, strlen(STATS), "s.json", &d), 0);
	page_close(&a);
	page_open(&b);
	assert_int_equal(html_render(b.fp, STATS, strlen(STATS), "s.json", &d), 0);
	page_close(&b);
	assert_string_equal(a.text, b.text);
	assert_non_null(strstr(a.text, "a&lt;b&gt;.jsonl"));
	assert_non_null(strstr(a.text, "<figure id=\"cache-curve\">"));
	assert_non_null(strstr(a.text, "over 2.0 h"));
	free(a.text);
	free(b.text);

	/* a key the page needs, missing or of another type */
	char *bad = strdup(STATS);
	memcpy(strstr(bad, "\"cache_curve\""), "\"cache_cur_e\"", 13);
	page_open(&a);
	assert_int_equal(html_render(a.fp, bad, strlen(bad), "s.json", &d), DIAG_EINPUT);
	page_close(&a);
	assert_string_equal(d.msg, "s.json: the stats result has no array 'cache_curve' (expected "
				   "the JSON that agentcap stats --json writes)");
	free(a.text);
	free(bad);
}

/* Offset of the first byte of s that is not well-formed UTF-8 or is a
 * character XML 1.0 does not allow (C0 controls but tab, newline and
 * return; U+FFFE, U+FFFF); strlen(s) when there is none. */
static size_t bad_xml_char(const char *s)
{
	size_t n = strlen(s);
	for (size_t at = 0; at < n;) {
		uint32_t cp;
		size_t k = utf8_decode(s + at, n - at, &cp);
		if (k == 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xfffe ||
		    cp == 0xffff)
			return at;
		at += k;
	}
	return n;
}

/* svgplot_escape: markup characters as entities; bytes that are not UTF-8
 * and control characters (which XML forbids or a reader cannot see) as
 * U+FFFD; tab, newline and return kept in text, as character references
 * in an attribute (where a parser would turn them into spaces). */
static void test_escape(void **state)
{
	(void)state;
	struct page p;
	page_open(&p);
	svgplot_escape(p.fp, "<a href=\"x\">&'\x1b[2J\x01\t\n\x7f caf\xc3\xa9 \xe6\x97\xa5 \xc3 \xff"
			     "\xed\xa0\x80 \xef\xbf\xbe|");
	fputs("||", p.fp);
	svgplot_escape_attr(p.fp, "a\"b\t\n\rc<");
	page_close(&p);
	assert_string_equal(p.text, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;\xef\xbf\xbd[2J"
				    "\xef\xbf\xbd\t\n\xef\xbf\xbd caf\xc3\xa9 \xe6\x97\xa5 \xef\xbf\xbd "
				    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd|"
				    "||a&quot;b&#9;&#10;&#13;c&lt;");
	assert_int_equal(bad_xml_char(p.text), strlen(p.text));
	free(p.text);
}

/* A compare result with hostile strings in every field the page reads,
 * the currency among them. */
static const char COMPARE[] =
	"{\"schema\": \"agentcap-compare\", \"version\": 1, \"currency\": "
	"\"<svg/onload=alert(1)>\", \"engineers\": 2, \"api\": \"<script>alert(2)</script>\", "
	"\"seats\": \"\\\"'&\", \"run\": {\"scenario_name\": \"<script>\", \"scenario_path\": "
	"\"\\u001b[2J\", \"trace\": \"a&b\", \"model_id\": \"'\\\"\", \"seed\": 1, "
	"\"agentcap_version\": \"<b>\"}, \"rows\": [{\"option\": \"purchase\", \"hardware\": "
	"\"<script>x</script>\", \"deployment\": \"<svg/onload=alert(3)>\", \"gpus\": 8, "
	"\"usd_per_month\": 1000, \"usd_per_engineer_month\": 500, \"usd_per_1m_output_tokens\": 3, "
	"\"usd_per_accepted_task\": 2, \"gpu_busy_fraction\": 0.5, "
	"\"breakeven_gpu_busy_fraction\": 0.4}, {\"option\": \"api\", \"usd_per_accepted_task\": 3}, "
	"{\"option\": \"seats\", \"usd_per_accepted_task\": 4}]}";

static void test_hostile_compare(void **state)
{
	(void)state;
	struct page p;
	struct diag d;
	diag_init(&d);
	page_open(&p);
	int rc = html_render(p.fp, COMPARE, strlen(COMPARE), "c.json", &d);
	page_close(&p);
	if (rc != 0)
		fail_msg("html_render: %s", d.msg);
	assert_null(strstr(p.text, "<svg/onload"));
	assert_null(strstr(p.text, "<script"));
	assert_null(strstr(p.text, "\x1b"));
	assert_non_null(strstr(p.text, "All figures in &lt;svg/onload=alert(1)&gt;."));
	assert_non_null(strstr(p.text, "per accepted task (&lt;svg/onload=alert(1)&gt;)"));
	assert_non_null(strstr(p.text, "&lt;script&gt;x&lt;/script&gt; purchase (&lt;svg/onload="));
	assert_int_equal(bad_xml_char(p.text), strlen(p.text));
	free(p.text);
}

/* Text of n copies of unit. */
static char *repeat(const char *unit, size_t n)
{
	size_t k = strlen(unit);
	char *s = malloc(k * n + 1);
	assert_non_null(s);
	for (size_t i = 0; i < n; i++)
		memcpy(s + i * k, unit, k);
	s[k * n] = '\0';
	return s;
}

/* Labels longer than their room (a fact of the page's top table, a bar of
 * the compare chart, the currency, a what-if row, the what-if chart's
 * title) are cut between characters and end in an ellipsis; the page stays
 * UTF-8. */
static void test_long_labels(void **state)
{
	(void)state;
	static const char *const UNITS[] = {"\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "a\xf0\x9f\x98\x80",
					    "&<"};
	for (size_t u = 0; u < sizeof(UNITS) / sizeof(UNITS[0]); u++) {
		char *long_text = repeat(UNITS[u], 400);
		char *json;
		/* stats: the trace path, a fact of 512 bytes at most */
		assert_true(asprintf(&json, "{\"schema_version\": 1, \"schema\": \"agentcap-stats\", "
				     "\"agentcap_version\": \"9\", \"trace\": \"%s\", \"trace_format\": "
				     "\"t\", \"calls\": 3, \"sessions\": 1, \"engineers\": 1, \"tasks\": 1, "
				     "\"first_t_s\": 0, \"last_t_s\": 1, \"prefix_hit_rate_unbounded\": "
				     "0.5, \"cache_curve\": []}", long_text) > 0);
		struct page p;
		struct diag d;
		diag_init(&d);
		page_open(&p);
		assert_int_equal(html_render(p.fp, json, strlen(json), "s.json", &d), 0);
		page_close(&p);
		assert_int_equal(bad_xml_char(p.text), strlen(p.text));
		/* no half character (the escape would have made it U+FFFD) */
		assert_null(strstr(p.text, UTF8_REPLACEMENT));
		assert_non_null(strstr(p.text, "\xe2\x80\xa6</td>")); /* the fact ends in "…" */
		free(p.text);
		free(json);
		/* compare: the hardware of a bar and the currency */
		assert_true(asprintf(&json, "{\"schema\": \"agentcap-compare\", \"version\": 1, "
				     "\"currency\": \"%s\", \"engineers\": 2, \"run\": {}, \"rows\": "
				     "[{\"option\": \"purchase\", \"hardware\": \"%s\", \"deployment\": "
				     "\"1 x TP8\", \"usd_per_accepted_task\": 2, \"gpu_busy_fraction\": "
				     "0.5}]}", long_text, long_text) > 0);
		page_open(&p);
		assert_int_equal(html_render(p.fp, json, strlen(json), "c.json", &d), 0);
		page_close(&p);
		assert_int_equal(bad_xml_char(p.text), strlen(p.text));
		assert_null(strstr(p.text, UTF8_REPLACEMENT));
		assert_non_null(strstr(p.text, "\xe2\x80\xa6</td>"));
		assert_non_null(strstr(p.text, "\xe2\x80\xa6</text>"));
		free(p.text);
		free(json);
		/* whatif: a row's key and the variants, in the chart's title */
		assert_true(asprintf(&json, "{\"schema\": \"agentcap-whatif\", \"version\": 1, \"seed\": "
				     "1, \"run\": {}, \"whatif\": \"w\", \"variants\": [\"%s\", \"b\"], "
				     "\"charts\": [{\"ttft_cdf\": {\"ms\": [1], \"pct\": [1]}, \"tpot_cdf\": "
				     "{\"ms\": [1], \"pct\": [1]}, \"e2el_cdf\": {\"ms\": [1], \"pct\": [1]}},"
				     " {\"ttft_cdf\": {\"ms\": [1], \"pct\": [1]}, \"tpot_cdf\": {\"ms\": "
				     "[1], \"pct\": [1]}, \"e2el_cdf\": {\"ms\": [1], \"pct\": [1]}}], "
				     "\"rows\": [{\"key\": \"%s\", \"hardware\": \"%s\", \"unit\": \"ms\", "
				     "\"a\": 1, \"b\": 2}]}", long_text, long_text, long_text) > 0);
		page_open(&p);
		assert_int_equal(html_render(p.fp, json, strlen(json), "w.json", &d), 0);
		page_close(&p);
		assert_int_equal(bad_xml_char(p.text), strlen(p.text));
		assert_null(strstr(p.text, UTF8_REPLACEMENT));
		assert_non_null(strstr(p.text, "\xe2\x80\xa6</title>"));
		assert_non_null(strstr(p.text, "\xe2\x80\xa6 (ms)</th>"));
		free(p.text);
		free(json);
		free(long_text);
	}
}
/* The text of the <figure id="ID"> ... </figure> of page, or NULL. */
static char *figure_of(const char *page, const char *id)
{
	char open[96];
	snprintf(open, sizeof(open), "<figure id=\"%s\">", id);
	const char *a = strstr(page, open), *b = a ? strstr(a, "</figure>") : NULL;
	return b ? strndup(a, (size_t)(b - a)) : NULL;
}

/* A what-if result whose CDFs hold n points each: x = i, y = 50 but at two
 * indices, where it is -500 and 1000. */
static char *whatif_of(size_t n)
{
	char *s = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&s, &len);
	assert_non_null(fp);
	fputs("{\"schema\": \"agentcap-whatif\", \"version\": 1, \"seed\": 1, \"run\": {}, "
	      "\"whatif\": \"w\", \"variants\": [\"a\", \"b\"], \"rows\": [], \"charts\": [", fp);
	for (int v = 0; v < 2; v++) {
		fputs(v ? ", {" : "{", fp);
		static const char *const KEYS[] = {"ttft_cdf", "tpot_cdf", "e2el_cdf"};
		for (int k = 0; k < 3; k++) {
			fprintf(fp, "%s\"%s\": {\"ms\": [", k ? ", " : "", KEYS[k]);
			for (size_t i = 0; i < n; i++)
				fprintf(fp, "%s%zu", i ? ", " : "", i + 1); /* > 0: a log axis drops 0 */
			fputs("], \"pct\": [", fp);
			for (size_t i = 0; i < n; i++)
				fprintf(fp, "%s%g", i ? ", " : "",
					i == n / 3 ? -500.0 : i == n / 2 + 7 ? 1000.0 : 50.0);
			fputs("]}", fp);
		}
		fputc('}', fp);
	}
	fputs("]}", fp);
	assert_int_equal(fclose(fp), 0);
	return s;
}

/* Points of the first polyline of f. */
static size_t polyline_points(const char *f)
{
	const char *p = strstr(f, "points=\"");
	assert_non_null(p);
	size_t n = 1;
	for (p += 8; *p != '"'; p++)
		n += *p == ' ';
	return n;
}

/* A line of more points than a chart can show is drawn from at most 2048
 * of them, its lowest and highest kept (the axes reach both); one of fewer
 * is drawn whole. */
static void test_long_series(void **state)
{
	(void)state;
	static const size_t N[] = {1000, 200000};
	for (size_t k = 0; k < 2; k++) {
		char *json = whatif_of(N[k]);
		struct page p;
		struct diag d;
		diag_init(&d);
		page_open(&p);
		int rc = html_render(p.fp, json, strlen(json), "w.json", &d);
		page_close(&p);
		if (rc != 0)
			fail_msg("html_render: %s", d.msg);
		char *f = figure_of(p.text, "ttft-cdf");
		assert_non_null(f);
		size_t pts = polyline_points(f);
		if (N[k] <= 2048)
			assert_int_equal(pts, N[k]);
		else
			assert_true(pts <= 2048 && pts >= 1024);
		assert_non_null(strstr(f, ">1000</text>")); /* the y axis reaches the peak */
		assert_non_null(strstr(f, ">-500</text>")); /* and the dip */
		assert_true(p.len < 200000);
		free(f);
		free(p.text);
		free(json);
	}
}

/* A result with more values than a page draws, besides its arrays of
 * numbers, is an input error before anything is parsed. */
static void test_too_many_values(void **state)
{
	(void)state;
	char *s = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&s, &len);
	assert_non_null(fp);
	fputs("{\"schema\": \"agentcap-stats\", \"schema_version\": 1, \"x\": [", fp);
	for (size_t i = 0; i < ((size_t)1 << 19); i++)
		fputs(i ? ", 0, \"\"" : "0, \"\"", fp);
	fputs("]}", fp);
	assert_int_equal(fclose(fp), 0);
	struct page p;
	struct diag d;
	diag_init(&d);
	page_open(&p);
	assert_int_equal(html_render(p.fp, s, len, "big.json", &d), DIAG_EINPUT);
	page_close(&p);
	assert_string_equal(d.msg, "big.json: more than 1048576 JSON values besides arrays of "
				   "numbers, more than a page draws (expected the JSON result of "
				   "agentcap replay, stats, size, compare or whatif --json, which holds "
				   "a few thousand)");
	assert_int_equal(p.len, 0);
	free(p.text);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_axes_end),
		cmocka_unit_test(test_not_finite),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_hostile_compare),
		cmocka_unit_test(test_long_labels),
		cmocka_unit_test(test_long_series),
		cmocka_unit_test(test_too_many_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
