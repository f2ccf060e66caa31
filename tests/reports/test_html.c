/* SPDX-License-Identifier: Apache-2.0
 * html and svgplot without the command line: a result drawn twice gives the
 * same bytes; input text is escaped; axes end whatever the numbers (values
 * so large or so close that adding a tick's step does not move it); a value
 * that is not finite is left out of a line and shown as "-" in a bar; and
 * input errors name the file, the key and what was expected. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/diag.h"
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
	struct svgplot_bar bars[2] = {{"a", 2.0}, {"b'", NAN}};
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_axes_end),
		cmocka_unit_test(test_not_finite),
		cmocka_unit_test(test_render),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
