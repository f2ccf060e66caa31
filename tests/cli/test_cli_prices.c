/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of `agentcap catalog --prices`: the built-in price
 * catalogue as a table and as JSON, a user's price file, and a bad price
 * file (exit status 2, the message naming file:line:col and what was
 * expected, nothing written); a terminal escape in a price file's string
 * stops every command that loads it, before anything is printed, and never
 * reaches the terminal. */
#include <setjmp.h>
#include <stdbool.h>
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

#define SCRATCH AC_BIN_DIR "/tests/cli/scratch_prices"
#define PRICES AC_SRC_DIR "/models/catalog/prices.json"

static void test_prices_listing(void **state)
{
	(void)state;
	struct cli_out r = cli_run("catalog --prices");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "gpu_hour (27)"));
	assert_non_null(strstr(r.out, "mercatus-h100-sxm"));
	assert_non_null(strstr(r.out, "1 EUR = 1.068 USD"));
	assert_non_null(strstr(r.out, "hardware without any price"));
	assert_non_null(strstr(r.out, "host: hgx-h100-8-itct, USD 7500 per GPU = (USD 300000 - 8 x "
				      "h100-sxm-street USD 30000) / 8"));
	assert_non_null(strstr(r.out, "operator_system_month (3)"));
	cli_out_free(&r);

	r = cli_run("catalog --prices --json -");
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "prices")), 140);
	/* a bare GPU's row names its host and the host's share per GPU:
	 * ($300,000 - 8 x $30,000) / 8 */
	const cJSON *row;
	bool seen = false;
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(j, "prices")) {
		if (strcmp(cJSON_GetObjectItem(row, "id")->valuestring, "h100-sxm-street") != 0)
			continue;
		seen = true;
		assert_string_equal(cJSON_GetObjectItem(row, "scope")->valuestring, "gpus");
		assert_string_equal(cJSON_GetObjectItem(row, "host")->valuestring, "hgx-h100-8-itct");
		assert_true(cJSON_GetObjectItem(row, "host_share_usd_per_gpu")->valuedouble == 7500);
	}
	assert_true(seen);
	cJSON_Delete(j);
	/* the file given explicitly reads the same */
	struct cli_out f = cli_run("catalog --prices " PRICES " --json -");
	assert_int_equal(f.status, 0);
	assert_string_equal(f.out, r.out);
	cli_out_free(&f);
	cli_out_free(&r);

	r = cli_run("catalog --prices --sources");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
}

static void test_bad_price_file(void **state)
{
	(void)state;
	mkdir(SCRATCH, 0777);
	char *text = cli_slurp(PRICES, NULL);
	assert_non_null(text);
	char *hit = strstr(text, "\"price\": 150,");
	assert_non_null(hit);
	memcpy(hit, "\"price\":\"15\",", 13); /* the same length */
	long line = 1, col = 1;
	for (const char *s = text; s < hit + 8; s++) {
		if (*s == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	FILE *f = fopen(SCRATCH "/bad.json", "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(text);
	unlink(SCRATCH "/out.json");

	struct cli_out r = cli_run("catalog --prices " SCRATCH "/bad.json --json " SCRATCH "/out.json");
	assert_int_equal(r.status, 2);
	char want[512];
	snprintf(want, sizeof(want), "agentcap: " SCRATCH "/bad.json:%ld:%ld: prices[2] "
		 "'claude-team-premium': price is a string (expected a number > 0 and at most "
		 "1e+09)\n", line, col);
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	assert_int_equal(access(SCRATCH "/out.json", F_OK), -1); /* nothing written */
	cli_out_free(&r);

	r = cli_run("catalog --prices " SCRATCH "/no-such.json");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "no-such.json"));
	cli_out_free(&r);
}

#define FIX AC_SRC_DIR "/tests/fixtures"

static void test_replay_cost(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " FIX "/traces/session_good.jsonl --cost");
	assert_int_equal(r.status, 0);
	const char *cost = strstr(r.out, "Cost (USD; docs/cost.md)");
	assert_non_null(cost);
	assert_non_null(strstr(cost, "purchase h100-sxm"));
	assert_non_null(strstr(cost, "elastic runpod-h100-sxm-8x"));
	assert_non_null(strstr(cost, "busy_power"));
	assert_non_null(strstr(cost, "Energy: "));
	/* one date for the prices: the newest of those used (operator time,
	 * field notes 2026-08) */
	const char *as_of = strstr(cost, "  Prices as of 2026-08 (the newest date of the prices used");
	assert_non_null(as_of);
	assert_null(strstr(as_of + 4, "Prices as of"));
	cli_out_free(&r);
	/* the scenario's cost keys change the assumptions, sourced to it */
	r = cli_run("replay " FIX "/traces/session_good.jsonl --cost --set cost.operator_usd_month=0 "
		    "--set cost.acceptance_rate=0.6");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "+ operator 0.00\n"));
	assert_non_null(strstr(r.out, "0.6 share of tasks         scenario (built-in default): "
				      "cost.acceptance_rate"));
	cli_out_free(&r);
	/* one provider's row instead of the median, checked before the replay */
	r = cli_run("replay " FIX "/traces/session_good.jsonl --cost --set "
		    "cost.gpu_hour_row=vast-ai-h100-spot");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "elastic vast-ai-h100-spot"));
	assert_non_null(strstr(r.out, "chosen by cost.gpu_hour_row; tariff spot"));
	cli_out_free(&r);
	r = cli_run("replay " FIX "/traces/session_good.jsonl --cost --set "
		    "cost.gpu_hour_row=packet-ai-h200");
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "agentcap: cost.gpu_hour_row 'packet-ai-h200' prices h200, not "
			    "the deployment's h100-sxm (expected a gpu_hour row of h100-sxm)\n");
	cli_out_free(&r);
	/* a server rented by the month is priced by the month, never per hour
	 * (EUR 889 / 730 h is no hourly offer) */
	r = cli_run("replay " FIX "/traces/session_good.jsonl --cost --set hardware=hetzner-gex131");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "dedicated hetzner-gex131"));
	assert_null(strstr(r.out, "elastic"));
	cli_out_free(&r);
	/* off by default */
	r = cli_run("replay " FIX "/traces/session_good.jsonl");
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "Cost (USD"));
	cli_out_free(&r);
	/* a bad price file stops it before the replay */
	mkdir(SCRATCH, 0777);
	FILE *f = fopen(SCRATCH "/tiny.json", "w");
	assert_non_null(f);
	fputs("{\"schema_version\": 1, \"prices\": [\n  {\"id\": \"x\"}\n]}\n", f);
	fclose(f);
	r = cli_run("replay " FIX "/traces/session_good.jsonl --cost --prices " SCRATCH "/tiny.json");
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "agentcap: " SCRATCH "/tiny.json:2:3: prices[0] 'x': missing key "
			    "'kind' (expected a non-empty string)\n");
	cli_out_free(&r);
	r = cli_run("replay " FIX "/traces/session_good.jsonl --prices " SCRATCH "/tiny.json");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
}

/* The field notes' projections, from agentcap's own command: one year of
 * rent = price per hour x hours a day x 365 (GMI Cloud's H100 at $2.00:
 * $17,520 around the clock, $5,840 at 8 h, $2,920 at 4 h; OVHcloud's at
 * EUR 2.80: EUR 24,528 around the clock; a flat EUR 889 a month: EUR
 * 10,668 a year whatever the hours), and the rented 8xH100 node at
 * ~$16,000 a month all-in serving ~620 tok/s: 620 x 730 h x 3600 s =
 * 1.63B output tokens a month, $9.8 per 1M at 100%, $19.6 at 50%, $49 at
 * 20%, $196 at 5%. */
static void test_field_notes_projections(void **state)
{
	(void)state;
	struct cli_out r = cli_run("catalog --prices --rent gmi-cloud-h100 --hours-per-day 24,8,4 "
				   "--rent ovhcloud-h100 --rent hetzner-gex131");
	assert_int_equal(r.status, 0);
	const char *gmi = strstr(r.out, "  gmi-cloud-h100: H100 SXM5 80GB, GMI Cloud, USD 2 per "
					"GPU-hour (on_demand), 2026-08 (field-notes.md");
	assert_non_null(gmi);
	assert_non_null(strstr(gmi, "    hours/day       USD/year       USD/year\n"
				    "           24       17520.00       17520.00\n"
				    "            8        5840.00        5840.00\n"
				    "            4        2920.00        2920.00\n"));
	const char *ovh = strstr(r.out, "  ovhcloud-h100: H100 80GB, OVHcloud, EUR 2.8 per GPU-hour");
	assert_non_null(ovh);
	/* in the row's currency and in USD at the file's rate (x 1.068) */
	assert_non_null(strstr(ovh, "    hours/day       EUR/year       USD/year\n"
				    "           24       24528.00       26195.90\n"));
	const char *gex = strstr(r.out, "  hetzner-gex131: ");
	assert_non_null(gex);
	assert_non_null(strstr(gex, "a flat monthly rent: the hours a day change nothing\n"));
	assert_non_null(strstr(gex, "            4       10668.00       11393.42\n"));
	assert_non_null(strstr(r.out, "Exchange rate: 1 EUR = 1.068 USD (2026-08"));
	cli_out_free(&r);

	r = cli_run("catalog --prices --month-usd 16000 --tok-s 620");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "output tokens a month at 100% = 620 tok/s x 730 h x 3600 s = "
				      "1629360000 (1.63B)\n"));
	assert_non_null(strstr(r.out, "         100%           1629360000             9.82\n"
				      "          50%            814680000            19.64\n"
				      "          20%            325872000            49.10\n"
				      "           5%             81468000           196.40\n"));
	cli_out_free(&r);
	r = cli_run("catalog --prices --month-usd 16000 --tok-s 620 --utilisation 0.25");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "          25%            407340000            39.28\n"));
	cli_out_free(&r);

	/* wrong uses: exit 2, nothing on standard output */
	static const char *const BAD[] = {
		"catalog --prices --rent claude-pro",
		"catalog --rent gmi-cloud-h100",
		"catalog --prices --rent gmi-cloud-h100 --hours-per-day 25",
		"catalog --prices --rent gmi-cloud-h100 --hours-per-day 0",
		"catalog --prices --rent gmi-cloud-h100 --json",
		"catalog --prices --hours-per-day 8",
		"catalog --prices --tok-s 620",
		"catalog --prices --month-usd 16000 --tok-s 0",
		"catalog --prices --month-usd 16000 --tok-s 620 --utilisation 1.5",
	};
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		r = cli_run(BAD[i]);
		if (r.status != 2 || r.out[0] || !r.err[0])
			fail_msg("%s: status %d, out '%s'", BAD[i], r.status, r.out);
		cli_out_free(&r);
	}
	r = cli_run("catalog --prices --rent claude-pro");
	assert_string_equal(r.err, "agentcap: --rent 'claude-pro': no gpu_hour or dedicated_month "
			    "row of that id (expected an id listed by agentcap catalog --prices)\n");
	cli_out_free(&r);
}

/* A price file with ESC (a raw byte, as an editor or a tool would leave
 * it) in the source of the default seat row and in the note of a GPU row:
 * catalog --prices, compare, size and replay --cost all refuse it
 * (exit 2) naming the file, the row and the field, and print no ESC. */
static void test_escape_in_price_file(void **state)
{
	(void)state;
	mkdir(SCRATCH, 0777);
	char *text = cli_slurp(PRICES, NULL);
	assert_non_null(text);
	const char *src = "\"source\": \"https://support.claude.com/it/articles/9267289-come-viene-";
	char *hit = strstr(text, src);
	assert_non_null(hit);
	hit[strlen(src) - 1] = '\x1b'; /* "...-come-viene\x1b" */
	long line = 1, col = 1;
	for (const char *s = text; s < hit + 10; s++) {
		if (*s == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	FILE *f = fopen(SCRATCH "/esc.json", "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(text);
	char want[512];
	snprintf(want, sizeof(want), "agentcap: " SCRATCH "/esc.json:%ld:%ld: prices[0] "
		 "'claude-team-standard-annual': source holds control character U+001B at byte 58 "
		 "(expected printable UTF-8 text: no control characters, which would act on the "
		 "terminal that prints it)\n", line, col);
	static const char *const CMDS[] = {
		"catalog --prices " SCRATCH "/esc.json",
		"catalog --prices " SCRATCH "/esc.json --json -",
		"compare --engineers 2 --profile default --hardware h100-sxm --prices " SCRATCH
		"/esc.json",
		"size --engineers 2 --profile default --hardware h100-sxm --prices " SCRATCH
		"/esc.json",
		"replay " AC_SRC_DIR "/tests/fixtures/traces/session_good.jsonl --cost --prices " SCRATCH
		"/esc.json",
	};
	for (size_t i = 0; i < sizeof(CMDS) / sizeof(CMDS[0]); i++) {
		struct cli_out r = cli_run(CMDS[i]);
		if (r.status != 2 || strcmp(r.err, want) != 0)
			fail_msg("agentcap %s: exit %d, stderr '%s' (expected 2 and '%s')", CMDS[i],
				 r.status, r.err, want);
		assert_null(memchr(r.out, '\x1b', r.out_len));
		assert_null(strchr(r.err, '\x1b'));
		cli_out_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prices_listing),
		cmocka_unit_test(test_bad_price_file),
		cmocka_unit_test(test_replay_cost),
		cmocka_unit_test(test_field_notes_projections),
		cmocka_unit_test(test_escape_in_price_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
