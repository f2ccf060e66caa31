/* SPDX-License-Identifier: Apache-2.0
 * compare --summary, the answer the quick start prints: the recommendation
 * with its latency and costs, the seats and the API, the break-even team,
 * what moves the answer and what is assumed, within 40 lines; the page
 * beside it; and the option refused where it has no meaning. */
#include <setjmp.h>
#include <stdbool.h>
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

#define SCRATCH AC_BIN_DIR "/tests/cli/scratch_summary"

static int lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_summary(void **state)
{
	(void)state;
	mkdir(SCRATCH, 0755);
	unlink(SCRATCH "/page.html");
	struct cli_out r = cli_run("compare --engineers 4 --profile default --hardware "
				   "rtx-pro-6000,h100-sxm --summary --html " SCRATCH "/page.html");
	assert_int_equal(r.status, 0);
	if (lines(r.out) > 40)
		fail_msg("the summary has %d lines (expected at most 40):\n%s", lines(r.out), r.out);
	static const char *const want[] = {
		"agentcap compare: 4 engineers on llama-3.1-8b (bf16); objectives ",
		"\nSelf-hosted, cheapest: ", ", P95 TTFT ", " per accepted task\n",
		"\nseats claude-team-premium ", "\nAPI claude-sonnet-5-5 ", "\nAnswer: ",
		"\nBreak-even with the API: ", "\nEvery option (USD a month / per accepted task):\n",
		"  rtx-pro-6000 purchase", "  h100-sxm elastic",
		"\nWhat moves the answer (one input moved at a time, the sensitivity table):\n",
		"\nAssumed: llama-3.1-8b's acceptance equal to the traced model's",
		"\nDetails: the same command without --summary",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(r.out, want[i]))
			fail_msg("no '%s' in the summary:\n%s", want[i], r.out);
	/* none of the details: no size table, no list of every figure */
	assert_null(strstr(r.out, "Search path"));
	assert_null(strstr(r.out, "Every figure used"));
	cli_out_free(&r);
	struct stat st;
	assert_int_equal(stat(SCRATCH "/page.html", &st), 0);
	assert_true(st.st_size > 10000);
	/* the page states the objectives each option was sized against */
	size_t len;
	char *page = cli_slurp(SCRATCH "/page.html", &len);
	assert_non_null(page);
	assert_non_null(strstr(page, "ttft_p95=2000ms,tpot_p50=50ms"));
	free(page);
	/* the same run without it has the details */
	r = cli_run("compare --engineers 4 --profile default --hardware rtx-pro-6000,h100-sxm");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Every figure used"));
	assert_true(lines(r.out) > 40);
	cli_out_free(&r);
}

/* A winner the price catalogue has no price for is said so, not taken
 * for a search that found nothing. */
static void test_summary_unpriced(void **state)
{
	(void)state;
	struct cli_out r = cli_run("compare --engineers 2 --profile default --hardware a30 --summary");
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, "\nSelf-hosted: a30 meets the objectives with ") ||
	    !strstr(r.out, "but has no price (not priced: a30 purchase, a30 dedicated, a30 elastic)"))
		fail_msg("%s", r.out);
	cli_out_free(&r);
}

/* A winner with no power figure (the M5 Ultra Mac Studio: no measured
 * power, no TDP) is not priced to buy, said with the reason, and neither
 * size nor compare aborts after the search (they exited 2). */
static void test_unpowered_winner(void **state)
{
	(void)state;
	static const char *const cmd[] = {"size", "compare"};
	for (int i = 0; i < 2; i++) {
		char args[512];
		snprintf(args, sizeof(args), "%s --engineers 1 --days 1 --profile default --hardware "
			 "mac-studio-m5-ultra-256gb,h100-sxm --slo ttft_p95=120s,tpot_p50=500ms",
			 cmd[i]);
		struct cli_out r = cli_run(args);
		if (r.status != 0 ||
		    !strstr(r.out, "mac-studio-m5-ultra-256gb purchase (cost: hardware "
				   "mac-studio-m5-ultra-256gb has no measured power and no TDP"))
			fail_msg("%s: exit %d\n%s%s", args, r.status, r.out, r.err);
		cli_out_free(&r);
	}
}

/* The quick start's main job is the team comparison, as the issue asked
 * (it once replayed an hour of Mooncake chat traffic and compared
 * Llama-3.1-8B for 10 engineers): quickstart.sh runs `compare --summary`
 * with a page, on a team of at least 20 engineers, a current model of the
 * catalogue that is not Llama-3.1-8B, and three hardware options or more,
 * and nothing before it replays.  test_summary runs the same kind of
 * command and holds its output to 40 lines. */
static void test_quickstart_main_job(void **state)
{
	(void)state;
	char *sh = cli_slurp(AC_SRC_DIR "/quickstart.sh", NULL);
	assert_non_null(sh);
	const char *job = strstr(sh, "\n./build/cli/agentcap compare ");
	assert_non_null(job);
	for (const char *c = sh; c < job; c = strchr(c, '\n') + 1) {
		if (c[0] != '#' && strstr(c, "agentcap ") && strstr(c, "agentcap ") < strchr(c, '\n'))
			fail_msg("quickstart.sh runs agentcap before its main job: %.80s", c);
	}
	const char *end = strstr(job, "|| status");
	assert_non_null(end);
	char cmd[1024];
	size_t n = (size_t)(end - job) < sizeof(cmd) - 1 ? (size_t)(end - job) : sizeof(cmd) - 1;
	memcpy(cmd, job, n);
	cmd[n] = '\0';
	assert_non_null(strstr(cmd, " --summary"));
	assert_non_null(strstr(cmd, " --html "));
	assert_null(strstr(cmd, "llama-3.1-8b"));
	const char *e = strstr(cmd, "--engineers ");
	assert_non_null(e);
	assert_true(atoi(e + strlen("--engineers ")) >= 20);
	const char *m = strstr(cmd, "--model ");
	assert_non_null(m);
	char model[64];
	assert_int_equal(sscanf(m + strlen("--model "), "%63s", model), 1);
	char args[128];
	snprintf(args, sizeof(args), "catalog --json - ");
	struct cli_out r = cli_run(args);
	assert_int_equal(r.status, 0);
	char quoted[80];
	snprintf(quoted, sizeof(quoted), "\"%s\"", model);
	if (!strstr(r.out, quoted))
		fail_msg("quickstart.sh's model %s is not in the catalogue", model);
	cli_out_free(&r);
	const char *h = strstr(cmd, "--hardware ");
	assert_non_null(h);
	int options = 1;
	for (h += strlen("--hardware "); *h && *h != ' '; h++)
		options += *h == ',';
	assert_true(options >= 3);
	free(sh);
}

static void test_summary_refused(void **state)
{
	(void)state;
	struct cli_out r = cli_run("size --engineers 4 --profile default --summary");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--summary is compare's, for one team size"));
	cli_out_free(&r);
	r = cli_run("compare --engineers 4,8 --profile default --summary");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--summary is compare's, for one team size"));
	cli_out_free(&r);
}

/* The full table names the cheapest option by its label (it once said
 * "Cheapest (row number above)", making the reader count rows), in the
 * base case and in each column of the sensitivity table. */
static void test_cheapest_named(void **state)
{
	(void)state;
	struct cli_out r = cli_run("compare --engineers 4 --profile default --hardware "
				   "rtx-pro-6000,h100-sxm");
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "row number"));
	const char *c = strstr(r.out, "\nCheapest per accepted task: ");
	assert_non_null(c);
	c += strlen("\nCheapest per accepted task: ");
	if (strncmp(c, "seats ", 6) != 0 && strncmp(c, "API ", 4) != 0 &&
	    strncmp(c, "rtx-pro-6000 ", 13) != 0 && strncmp(c, "h100-sxm ", 9) != 0)
		fail_msg("the cheapest option is not named by its row's label: %.80s", c);
	const char *col = strstr(r.out, "Cheapest per accepted task in each column:\n  price-20%  ");
	assert_non_null(col);
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_summary_unpriced),
		cmocka_unit_test(test_unpowered_winner),
		cmocka_unit_test(test_summary_refused),
		cmocka_unit_test(test_quickstart_main_job),
		cmocka_unit_test(test_cheapest_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
