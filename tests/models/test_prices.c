/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/prices: the embedded price catalogue loads, holds every
 * row of the shared prices.csv with source, date and currency, converts
 * only at its stated rate and names real hardware ids; lookups and the
 * median rule; and every kind of bad row gives the exact message, with the
 * line and column of the offending value (table-driven: one textual edit of
 * the shipped file -> the message expected).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/catalog.h"
#include "models/prices.h"

static struct prices *load_embedded(void)
{
	struct diag d;
	diag_init(&d);
	struct prices *p = NULL;
	if (prices_load(&p, NULL, &d))
		fail_msg("embedded prices: %s", d.msg);
	assert_true(prices_check(p));
	return p;
}

static void test_embedded(void **state)
{
	(void)state;
	struct prices *p = load_embedded();
	/* 115 rows of prices.csv plus eight from field-notes.md, the cache
	 * writes of five Anthropic models from their rows' notes, the HGX H100
	 * server, the field notes' RTX PRO 6000 card and workstation and upper
	 * operator time, and the three per-system operator rows */
	assert_int_equal(p->row_count, 140);
	size_t per_kind[PRICE_KIND_COUNT] = {0};
	for (size_t i = 0; i < p->row_count; i++) {
		const struct price_row *r = &p->rows[i];
		assert_true(r->source[0] && r->date[0] && r->currency[0]);
		per_kind[r->kind]++;
		if (strcmp(r->currency, "EUR") == 0)
			assert_true(fabs(r->usd - r->amount * 1.068) < 1e-9);
		else
			assert_true(r->usd == r->amount);
	}
	assert_int_equal(per_kind[PRICE_SEAT], 24);
	assert_int_equal(per_kind[PRICE_OVERAGE], 2);
	assert_int_equal(per_kind[PRICE_API_INPUT], 15);
	assert_int_equal(per_kind[PRICE_API_CACHED_INPUT], 14);
	assert_int_equal(per_kind[PRICE_API_OUTPUT], 15);
	assert_int_equal(per_kind[PRICE_GPU_HOUR], 27);
	assert_int_equal(per_kind[PRICE_DEDICATED_MONTH], 4);
	assert_int_equal(per_kind[PRICE_PURCHASE], 16);
	assert_int_equal(per_kind[PRICE_ELECTRICITY], 7);
	assert_int_equal(per_kind[PRICE_PUE], 1);
	assert_int_equal(per_kind[PRICE_OPERATOR_MONTH], 2);
	assert_int_equal(per_kind[PRICE_OPERATOR_SYSTEM_MONTH], 3);
	assert_int_equal(per_kind[PRICE_API_CACHE_WRITE_5M], 5);
	assert_int_equal(per_kind[PRICE_API_CACHE_WRITE_1H], 5);
	assert_int_equal(p->rate_count, 1);
	assert_string_equal(p->rates[0].currency, "EUR");

	const struct price_row *r = prices_find(p, PRICE_SEAT, "claude-team-premium");
	assert_non_null(r);
	assert_true(r->amount == 150 && r->min_seats == 5);
	assert_true(r->line > 8);
	r = prices_find(p, PRICE_API_OUTPUT, "Claude Opus 5-5"); /* lookups as catalog's */
	assert_non_null(r);
	assert_true(r->usd == 20);
	assert_null(prices_find(p, PRICE_API_OUTPUT, "claude-team-premium"));

	/* median of the H100 rental rows: twelve rows, 1.52 ... 10.08 -> 2.69 */
	const struct price_row *rows[16];
	assert_int_equal(prices_for_hardware(p, PRICE_GPU_HOUR, "h100-sxm", rows, 16), 12);
	r = prices_median_for_hardware(p, PRICE_GPU_HOUR, "h100-sxm");
	assert_non_null(r);
	assert_string_equal(r->id, "runpod-h100-sxm");
	/* of them, the on-demand ones: 2.00 2.49 2.50 2.69 2.79 2.99 4.29
	 * 10.08 -> 2.79; the spot floor, the reservation, the capacity block
	 * and the index are out */
	size_t n = 0;
	r = prices_median_gpu_hour(p, "h100-sxm", PRICE_ON_DEMAND, &n);
	assert_int_equal(n, 8);
	assert_string_equal(r->id, "runpod-h100-sxm-8x");
	/* H200 on demand: 2.25 2.60 3.50 4.54 7.91 -> 3.50 (the p5en spot
	 * price and the capacity block are out) */
	r = prices_median_gpu_hour(p, "h200", PRICE_ON_DEMAND, &n);
	assert_int_equal(n, 5);
	assert_string_equal(r->id, "mercatus-h200");
	r = prices_median_gpu_hour(p, "h100-sxm", PRICE_SPOT, &n);
	assert_int_equal(n, 1);
	assert_string_equal(r->id, "vast-ai-h100-spot");
	assert_int_equal(prices_find(p, PRICE_GPU_HOUR, "lambda-h100-sxm-8x-reserved")->tariff,
			 PRICE_RESERVED);
	assert_int_equal(prices_find(p, PRICE_GPU_HOUR, "aws-p5-h100-capacity-block")->tariff,
			 PRICE_CAPACITY_BLOCK);
	assert_int_equal(prices_find(p, PRICE_GPU_HOUR, "semianalysis-h100-index")->tariff,
			 PRICE_TARIFF_UNSTATED);
	assert_null(prices_median_gpu_hour(p, "rtx-3090", PRICE_ON_DEMAND, &n));
	assert_int_equal(n, 0);
	assert_string_equal(price_tariff_name(PRICE_CAPACITY_BLOCK), "capacity_block");
	/* the shipped file states the tariff of every GPU-hour row, as its
	 * source says (absent would mean on-demand) */
	size_t len = 0;
	const char *text = prices_embedded(&len);
	size_t gpu_rows = 0, stated = 0;
	for (const char *s = strstr(text, "\"kind\": \"gpu_hour\""); s;
	     s = strstr(s + 1, "\"kind\": \"gpu_hour\"")) {
		const char *eol = strchr(s, '\n');
		const char *t = strstr(s, "\"tariff\": ");
		gpu_rows++;
		stated += t && (!eol || t < eol);
	}
	assert_int_equal(gpu_rows, per_kind[PRICE_GPU_HOUR]);
	assert_int_equal(stated, gpu_rows);
	/* a row without the key is on-demand */
	struct prices *q = NULL;
	struct diag dd;
	diag_init(&dd);
	static const char one[] = "{\"schema_version\": 1, \"prices\": [{\"id\": \"x\", \"kind\": "
		"\"gpu_hour\", \"item\": \"i\", \"provider\": \"p\", \"price\": 2, \"unit\": "
		"\"per GPU-hour\", \"currency\": \"USD\", \"date\": \"d\", \"source\": \"s\"}]}";
	assert_int_equal(prices_parse(&q, "one.json", one, strlen(one), &dd), 0);
	assert_int_equal(q->rows[0].tariff, PRICE_ON_DEMAND);
	prices_free(q);
	/* two purchase rows: the higher middle (street, not used) */
	r = prices_median_for_hardware(p, PRICE_PURCHASE, "h100-sxm");
	assert_string_equal(r->id, "h100-sxm-street");
	assert_null(prices_median_for_hardware(p, PRICE_PURCHASE, "rtx-3090"));

	/* every hardware id a row names is in the hardware catalogue */
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	assert_int_equal(prices_check_hardware(p, cat, &d), 0);
	catalog_free(cat);
	prices_free(p);
}

/* The field notes' hourly rents (Rental and purchase economics), each
 * dated and sourced to them, in the currency published, with its tariff;
 * prices.csv has no row for these providers. */
static void test_field_notes_rents(void **state)
{
	(void)state;
	struct prices *p = load_embedded();
	static const struct {
		const char *id, *currency, *hardware;
		double amount;
		enum price_tariff tariff;
	} want[] = {
		{"gmi-cloud-h100", "USD", "h100-sxm", 2.00, PRICE_ON_DEMAND},
		{"gmi-cloud-h200", "USD", "h200", 2.60, PRICE_ON_DEMAND},
		{"ovhcloud-h100", "EUR", "h100-sxm", 2.80, PRICE_ON_DEMAND},
		{"lambda-h100-sxm", "USD", "h100-sxm", 4.29, PRICE_ON_DEMAND},
		{"aws-p5en-h200-on-demand", "USD", "h200", 7.91, PRICE_ON_DEMAND},
		{"aws-p5en-h200-spot", "USD", "h200", 3.37, PRICE_SPOT},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct price_row *r = prices_find(p, PRICE_GPU_HOUR, want[i].id);
		if (!r)
			fail_msg("no gpu_hour row '%s'", want[i].id);
		assert_true(r->amount == want[i].amount);
		assert_string_equal(r->currency, want[i].currency);
		assert_string_equal(r->hardware, want[i].hardware);
		assert_int_equal(r->tariff, want[i].tariff);
		assert_string_equal(r->date, "2026-08");
		assert_non_null(strstr(r->source, "field-notes.md, Rental and purchase economics"));
		assert_non_null(r->note);
	}
	/* OVHcloud's EUR 2.80 at the file's rate is the $2.99 it quotes */
	assert_true(fabs(prices_find(p, PRICE_GPU_HOUR, "ovhcloud-h100")->usd - 2.99) < 0.001);
	/* the p5en node is sold whole: 8 x $7.91 = $63.28, the $63.30 quoted */
	assert_non_null(strstr(prices_find(p, PRICE_GPU_HOUR, "aws-p5en-h200-on-demand")->note,
			       "8-GPU node only"));
	prices_free(p);
}

/* Every shipped purchase row says what it buys; a bare GPU names the system
 * it goes in, and its host's share is that system's price less its GPUs
 * (by hand: the HGX H100 server $300,000 - 8 x $30,000 street H100 = $60,000,
 * $7,500 a GPU; the field notes' RTX PRO 6000 workstation EUR 16,000 - the
 * EUR 14,000 card = EUR 2,000 = $2,136; the EUR 4,200 RTX 5090 box - the
 * $2,699 card = $1,786.60).  The operator rows: $5,000 and $15,000 a
 * deployment-month, and a loaded engineer ($185,000 x 44.40 / 31.25 / 12 =
 * $21,904 a month) over 100, 200 and 50 8-GPU nodes. */
static void test_scope_hosts_and_operator_rows(void **state)
{
	(void)state;
	struct prices *p = load_embedded();
	size_t purchase = 0;
	for (size_t i = 0; i < p->row_count; i++) {
		const struct price_row *r = &p->rows[i];
		if (r->kind != PRICE_PURCHASE) {
			assert_int_equal(r->scope, PRICE_SCOPE_UNSTATED);
			continue;
		}
		purchase++;
		if (r->scope == PRICE_SCOPE_UNSTATED)
			fail_msg("purchase row '%s' states no scope", r->id);
	}
	assert_int_equal(purchase, 16);
	static const struct {
		const char *id;
		enum price_scope scope;
		const char *host;
		double share;
	} want[] = {
		{"h100-sxm-street", PRICE_SCOPE_GPUS, "hgx-h100-8-itct", 7500},
		{"h100-sxm-used", PRICE_SCOPE_GPUS, "hgx-h100-8-itct", 7500},
		{"h200-street", PRICE_SCOPE_GPUS, "hgx-h100-8-itct", 7500},
		{"b200-street", PRICE_SCOPE_GPUS, NULL, 0},
		{"rtx-pro-6000-2026", PRICE_SCOPE_GPUS, "ws-rtx-pro-6000-field-notes", 2000 * 1.068},
		{"rtx-pro-6000-field-notes", PRICE_SCOPE_GPUS, "ws-rtx-pro-6000-field-notes",
		 2000 * 1.068},
		{"rtx-5090-street", PRICE_SCOPE_GPUS, "ws-rtx-5090-nl", 4200 * 1.068 - 2699},
		{"hgx-h100-8-itct", PRICE_SCOPE_SERVER, NULL, 0},
		{"gb200-nvl72-rack", PRICE_SCOPE_SERVER, NULL, 0},
		{"dgx-spark-2026", PRICE_SCOPE_COMPLETE, NULL, 0},
		{"mac-studio-m3-ultra-96gb", PRICE_SCOPE_COMPLETE, NULL, 0},
		{"ws-rtx-pro-6000-field-notes", PRICE_SCOPE_COMPLETE, NULL, 0},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct price_row *r = prices_find(p, PRICE_PURCHASE, want[i].id);
		if (!r)
			fail_msg("no purchase row '%s'", want[i].id);
		assert_int_equal(r->scope, want[i].scope);
		double share = -1;
		const struct price_row *g = NULL;
		const struct price_row *h = prices_host_of(p, r, &share, &g);
		if (!want[i].host) {
			assert_null(h);
			assert_true(share == 0);
			continue;
		}
		assert_non_null(h);
		assert_string_equal(h->id, want[i].host);
		assert_non_null(g);
		assert_true(fabs(share - want[i].share) < 1e-9);
	}
	const struct price_row *s = prices_find(p, PRICE_PURCHASE, "hgx-h100-8-itct");
	assert_true(s->usd == 300000 && s->gpus == 8);
	assert_string_equal(s->hardware, "hgx-h100-8");
	assert_string_equal(s->date, "2025-12-28");
	assert_non_null(strstr(s->source, "itctshop.com/gpu-cluster-design-guide"));
	assert_string_equal(price_scope_name(PRICE_SCOPE_GPUS), "gpus");

	const struct price_row *o = prices_find(p, PRICE_OPERATOR_MONTH, "field-notes-loaded");
	assert_true(o->usd == 5000);
	o = prices_find(p, PRICE_OPERATOR_MONTH, "field-notes-loaded-high");
	assert_true(o->usd == 15000);
	assert_string_equal(o->date, "2026-08");
	static const struct {
		const char *id;
		double nodes;
	} sys[] = {
		{"gpu-cluster-engineer-100-nodes", 100},
		{"gpu-cluster-engineer-200-nodes", 200},
		{"gpu-cluster-engineer-50-nodes", 50},
	};
	for (size_t i = 0; i < 3; i++) {
		o = prices_find(p, PRICE_OPERATOR_SYSTEM_MONTH, sys[i].id);
		assert_non_null(o);
		assert_true(fabs(o->usd - 185000.0 * 44.40 / 31.25 / 12 / sys[i].nodes) < 1e-9);
		assert_int_equal(o->gpus, 8);
		assert_string_equal(o->date, "2026-06");
		assert_non_null(strstr(o->source, "aie-blog.pages.dev/ai-infrastructure-scale-guide"));
		assert_non_null(strstr(o->source, "bls.gov/ecec"));
	}
	prices_free(p);
}

/* The shipped file equals the copy built in. */
static void test_file_matches_embedded(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	struct prices *p = NULL;
	assert_int_equal(prices_load(&p, AC_SRC_DIR "/models/catalog/prices.json", &d), 0);
	struct prices *e = load_embedded();
	assert_int_equal(p->row_count, e->row_count);
	for (size_t i = 0; i < p->row_count; i++) {
		assert_string_equal(p->rows[i].id, e->rows[i].id);
		assert_true(p->rows[i].usd == e->rows[i].usd);
	}
	prices_free(e);
	prices_free(p);
	diag_init(&d);
	assert_int_equal(prices_load(&p, AC_SRC_DIR "/no/such/prices.json", &d), DIAG_EINPUT);
	assert_null(p);
}

struct bad_case {
	const char *from;    /* first occurrence replaced ... */
	const char *to;      /* ... by this */
	const char *at;      /* the message points at the first occurrence of this
				in the edited text (NULL: line and column given) */
	const char *msg;     /* after "prices.json:LINE:COL: " */
};

static const struct bad_case BAD[] = {
	/* long-prompt tiers and off-peak hours (API rows only, one model's
	 * rows alike) */
	{ "\"price\": 25,", "\"price\": 25, \"tiers\": [{\"prompt_over\": 1, \"price\": 2}],",
	  "\"tiers\"", "prices[0] 'claude-team-standard-annual': tiers given for kind seat (expected it only "
	  "on API rows)" },
	{ "{\"prompt_over\": 128000, \"price\": 3}", "{\"prompt_over\": 20000, \"price\": 3}",
	  "[{\"prompt_over\": 32000, \"price\": 1.8}", "prices[77] 'qwen3-coder-plus': tiers[1] is not {\"prompt_over\": tokens, \"price\": "
	  "amount} (expected prompt_over an integer above 32000 and at most 1e9, ascending, and "
	  "price a number > 0 and at most 1e+09)" },
	{ "{\"prompt_over\": 100000, \"price\": 2.5}", "{\"prompt_over\": 120000, \"price\": 2.5}",
	  "[{\"prompt_over\": 120000", "prices[38] 'claude-haiku-5-5': API model 'claude-haiku-5-5': this row's tiers differ "
	  "from its api_input row's on line 45 (expected every row of one model to give the same "
	  "prompt sizes, or the same peak days and hours)" },
	{ "\"peak_hours_utc\": [[1, 4], [6, 10]]", "\"peak_hours_utc\": [[1, 4], [10, 6]]",
	  "{\"price\": 0.66", "prices[69] 'deepseek-v4-pro-peak': off_peak.peak_hours_utc[1] is not [from, to) "
	  "(expected {\"price\": amount, \"peak_days\": \"mon-fri\", \"peak_hours_utc\": [[1, "
	  "4], [6, 10]]}: the rate outside the peak hours, the days that have them (a day or a "
	  "range of mon tue wed thu fri sat sun) and the peak hours as [from, to) in whole hours "
	  "0-24 UTC)" },
	{ "{\"price\": 0.66,", "{\"price\": 1.5,", "{\"price\": 1.5", "prices[69] 'deepseek-v4-pro-peak': off_peak.price 1.5 is not below the row's price "
	  "1.32 (expected the rate outside the peak hours to be the lower one)" },
	{ "\"peak_days\": \"mon-fri\"", "\"peak_days\": \"weekdays\"", "{\"price\": 0.66", "prices[69] 'deepseek-v4-pro-peak': off_peak is not what it should be (expected "
	  "{\"price\": amount, \"peak_days\": \"mon-fri\", \"peak_hours_utc\": [[1, 4], [6, "
	  "10]]}: the rate outside the peak hours, the days that have them (a day or a range of "
	  "mon tue wed thu fri sat sun) and the peak hours as [from, to) in whole hours 0-24 UTC)" },
	{ "\"price\": 25,", "\"price\": \"25\",", "\"25\"",
	  "prices[0] 'claude-team-standard-annual': price is a string (expected a number > 0 and "
	  "at most 1e+09)" },
	{ "\"price\": 25,", "\"price\": -25,", "-25",
	  "prices[0] 'claude-team-standard-annual': price is not positive (expected a number > 0 "
	  "and at most 1e+09)" },
	/* a price that passed loading used to fail only after the whole replay */
	{ "\"price\": 25,", "\"price\": 1e308,", "1e308",
	  "prices[0] 'claude-team-standard-annual': price is too large (expected a number > 0 "
	  "and at most 1e+09)" },
	{ "\"price\": 25,", "", "{\"id\": \"claude-team-standard-annual\"",
	  "prices[0] 'claude-team-standard-annual': missing key 'price' (expected a number > 0)" },
	{ "\"kind\": \"seat\"", "\"kind\": \"seats\"", "\"seats\"",
	  "prices[0] 'claude-team-standard-annual': unknown kind 'seats' (expected seat, overage, "
	  "api_input, api_cached_input, api_output, api_cache_write_5m, api_cache_write_1h, gpu_hour, dedicated_month, purchase, "
	  "electricity, pue, operator_month or operator_system_month)" },
	{ "\"unit\": \"per user per month\"", "\"unit\": \"per seat per year\"",
	  "\"per seat per year\"",
	  "prices[0] 'claude-team-standard-annual': unit 'per seat per year' does not fit kind seat "
	  "(expected \"per user per month\")" },
	{ "\"currency\": \"USD\"", "\"currency\": \"GBP\"", "\"GBP\"",
	  "prices[0] 'claude-team-standard-annual': currency 'GBP' has no exchange rate (expected "
	  "USD or a currency listed in exchange_rates)" },
	{ "\"provider\": \"Anthropic\"", "\"provder\": \"Anthropic\"", "\"provder\"",
	  "prices[0] 'claude-team-standard-annual': unknown key 'provder' (expected one of id, kind, "
	  "item, provider, price, unit, currency, date, source, note, hardware, gpus, tariff, "
	  "scope, host, gpu_row, min_seats, included_usage_usd, overage_at_api_list, tiers, "
	  "off_peak, memory_gb, csv_line)" },
	{ "\"date\": \"n.d. (stored copy; current in 2026)\"", "\"date\": \"\"", "\"\", \"source\"",
	  "prices[0] 'claude-team-standard-annual': date is an empty or too long string (expected "
	  "a non-empty string of at most 4096 characters)" },
	{ "\"id\": \"claude-team-standard-monthly\"", "\"id\": \"claude-team-standard-annual\"",
	  "\"claude-team-standard-annual\", \"kind\": \"seat\", \"item\": \"Claude Team Standard "
	  "seat (monthly",
	  "prices[1] 'claude-team-standard-annual': a second seat row with id "
	  "'claude-team-standard-annual' (expected ids unique per kind; the first is on line 9)" },
	{ "\"id\": \"claude-pro\"", "\"id\": \"Claude Pro\"", "\"Claude Pro\"",
	  "prices[4]: id 'Claude Pro' is not an id (expected 1-63 characters of a-z 0-9 - .)" },
	{ "\"gpus\": 8", "\"gpus\": 8.5", "8.5",
	  "prices[103] 'lambda-hgx-h100-8-reserved': gpus is 8.5 (expected an integer from 1 "
	  "to 4096)" },
	{ "\"min_seats\": 5,", "\"min_seats\": 5, \"gpus\": 2,", "\"gpus\": 2",
	  "prices[0] 'claude-team-standard-annual': gpus given for kind seat (expected it only on "
	  "purchase, dedicated_month and operator_system_month rows)" },
	/* a tariff says how a GPU-hour is sold, and only a GPU-hour */
	{ "\"tariff\": \"spot\"", "\"tariff\": \"preemptible\"", "\"preemptible\"",
	  "prices[83] 'vast-ai-h100-spot': tariff is not a tariff (expected on_demand, spot, "
	  "reserved, capacity_block or unstated)" },
	{ "\"min_seats\": 5,", "\"min_seats\": 5, \"tariff\": \"spot\",", "\"tariff\": \"spot\"",
	  "prices[0] 'claude-team-standard-annual': tariff given for kind seat (expected it only on "
	  "gpu_hour rows)" },
	{ "\"kind\": \"api_output\"", "\"kind\": \"api_outputs\"", "\"api_outputs\"",
	  "prices[28] 'claude-opus-5-5': unknown kind 'api_outputs' (expected seat, overage, "
	  "api_input, api_cached_input, api_output, api_cache_write_5m, api_cache_write_1h, gpu_hour, dedicated_month, purchase, "
	  "electricity, pue, operator_month or operator_system_month)" },
	{ "{\"id\": \"claude-opus-5-5\", \"kind\": \"api_input\"",
	  "{\"id\": \"claude-opus-5-6\", \"kind\": \"api_input\"", "\"claude-opus-5-6\"",
	  "prices[26] 'claude-opus-5-6': API model 'claude-opus-5-6' has no api_output row (expected "
	  "api_input and api_output rows for every API model)" },
	/* terminal escapes and other control characters, as JSON escapes or raw
	 * bytes, in any string the catalogue keeps or names in a message */
	{ "\"note\": \"min 5 seats; US", "\"note\": \"\\u001b[2Jmin 5 seats; US",
	  "\"\\u001b[2Jmin",
	  "prices[0] 'claude-team-standard-annual': note holds control character U+001B at byte 1 "
	  "(expected printable UTF-8 text: no control characters, which would act on the terminal "
	  "that prints it)" },
	{ "\"source\": \"https://support.claude.com/it/articles/9267289-come-viene-calcolato-il-mio-"
	  "conto-del-piano-team\", \"note\": \"min 5 seats; US",
	  "\"source\": \"https://x\x1b]0;owned\x07\", \"note\": \"min 5 seats; US",
	  "\"https://x\x1b",
	  "prices[0] 'claude-team-standard-annual': source holds control character U+001B at byte "
	  "10 (expected printable UTF-8 text: no control characters, which would act on the "
	  "terminal that prints it)" },
	{ "\"id\": \"claude-pro\"", "\"id\": \"claude-pro\\u001b[2J\"", "\"claude-pro\\u001b",
	  "prices[4]: id holds control character U+001B at byte 11 (expected printable UTF-8 text: "
	  "no control characters, which would act on the terminal that prints it)" },
	{ "\"currency\": \"USD\"", "\"currency\": \"US\\u009bD\"", "\"US\\u009b",
	  "prices[0] 'claude-team-standard-annual': currency holds control character U+009B at "
	  "byte 3 (expected printable UTF-8 text: no control characters, which would act on the "
	  "terminal that prints it)" },
	{ "\"item\": \"Claude Team Standard seat (annual billing)\"",
	  "\"item\": \"Claude Team\tStandard seat (annual billing)\"", "\"Claude Team\t",
	  "prices[0] 'claude-team-standard-annual': item holds control character U+0009 at byte 12 "
	  "(expected printable UTF-8 text: no control characters, which would act on the terminal "
	  "that prints it)" },
	{ "\"provider\": \"Anthropic\"", "\"provider\": \"Anthr\xffopic\"", "\"Anthr\xff",
	  "prices[0] 'claude-team-standard-annual': provider holds byte 0xff at byte 6, not UTF-8 "
	  "(expected printable UTF-8 text: no control characters, which would act on the terminal "
	  "that prints it)" },
	{ "\"provider\": \"Anthropic\"", "\"provider\\u001b[2J\": \"Anthropic\"",
	  "\"provider\\u001b",
	  "prices[0] 'claude-team-standard-annual': a key holds control character U+001B at byte 9 "
	  "(expected one of id, kind, item, provider, price, unit, currency, date, source, note, "
	  "hardware, gpus, tariff, scope, host, gpu_row, min_seats, included_usage_usd, "
	  "overage_at_api_list, tiers, off_peak, memory_gb, csv_line)" },
	{ "\"date\": \"2026-08\", \"source\": \"field-notes.md",
	  "\"date\": \"2026-08\", \"source\": \"field-notes.md\x7f", "\"field-notes.md\x7f",
	  "exchange_rates[0]: source holds control character U+007F at byte 15 (expected printable "
	  "UTF-8 text: no control characters, which would act on the terminal that prints it)" },
	{ "\"schema_version\": 1", "\"schema_version\": 1, \"x\\u001b[2J\": 0", "\"x\\u001b",
	  "a key holds control character U+001B at byte 2 (expected schema_version, description, "
	  "provenance, exchange_rates, prices)" },
	{ "\"usd_per_unit\": 1.068", "\"usd_per_unit\": 0", "{\"currency\": \"EUR\"",
	  "exchange_rates[0]: expected {\"currency\": a three-letter code other than USD, "
	  "\"usd_per_unit\": a number in [1e-06, 1e+06], \"date\", \"source\": non-empty strings}" },
	{ "\"schema_version\": 1", "\"schema_version\": 2", "2,",
	  "schema_version is not 1 (expected 1)" },
	{ "\"prices\": [", "\"rows\": [", "\"rows\"",
	  "unknown key 'rows' (expected schema_version, description, provenance, exchange_rates, "
	  "prices)" },
	/* a purchase row says what it buys; a bare GPU names a system row whose
	 * GPUs are priced, and that system costs more than its GPUs */
	{ "\"scope\": \"gpus\", \"host\": \"hgx-h100-8-itct\", \"csv_line\": 96",
	  "\"scope\": \"card\", \"host\": \"hgx-h100-8-itct\", \"csv_line\": 96", "\"card\"",
	  "prices[104] 'h100-sxm-street': scope is not a scope (expected complete, server or gpus)" },
	{ "\"min_seats\": 5,", "\"min_seats\": 5, \"scope\": \"complete\",", "\"scope\"",
	  "prices[0] 'claude-team-standard-annual': scope given for kind seat (expected it only on "
	  "purchase rows)" },
	{ "\"scope\": \"complete\", \"csv_line\": 105",
	  "\"scope\": \"complete\", \"host\": \"ws-rtx-5090-nl\", \"csv_line\": 105",
	  "\"host\": \"ws-rtx-5090-nl\", \"csv_line\": 105",
	  "prices[113] 'dgx-spark-launch': host given on a row that is not of scope gpus (expected "
	  "it only on purchase rows of bare GPUs or cards)" },
	{ "\"host\": \"hgx-h100-8-itct\", \"csv_line\": 96",
	  "\"host\": \"hgx-h100-8\", \"csv_line\": 96", "\"hgx-h100-8\", \"csv_line\"",
	  "prices[104] 'h100-sxm-street': host 'hgx-h100-8' is no purchase row (expected the id of a "
	  "purchase row of scope server or complete with a gpu_row)" },
	{ "\"gpus\": 8, \"scope\": \"server\", \"gpu_row\": \"h100-sxm-street\"}",
	  "\"gpus\": 8, \"scope\": \"server\", \"gpu_row\": \"dgx-spark-2026\"}",
	  "\"dgx-spark-2026\"}",
	  "prices[133] 'hgx-h100-8-itct': gpu_row 'dgx-spark-2026' is not of scope gpus (expected "
	  "the id of a purchase row of scope gpus)" },
	{ "\"price\": 300000,", "\"price\": 200000,", "\"h100-sxm-street\"}",
	  "prices[133] 'hgx-h100-8-itct': 8 x gpu_row 'h100-sxm-street' (USD 30000) is not less "
	  "than this row's USD 200000 (expected the system to cost more than its GPUs)" },
	{ "\"price\": 219.04,", "\"price\": 219.04, \"scope\": \"server\",", "\"scope\"",
	  "prices[137] 'gpu-cluster-engineer-100-nodes': scope given for kind "
	  "operator_system_month (expected it only on purchase rows)" },
	{ "\"price\": 25,", "\"price\": 25,,", ",,", NULL /* invalid JSON: checked below */ },
};

static void test_bad_rows(void **state)
{
	(void)state;
	size_t len = 0;
	const char *orig = prices_embedded(&len);
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		const struct bad_case *c = &BAD[i];
		const char *hit = strstr(orig, c->from);
		assert_non_null(hit);
		size_t head = (size_t)(hit - orig), fl = strlen(c->from), tl = strlen(c->to);
		char *text = malloc(len - fl + tl + 1);
		assert_non_null(text);
		memcpy(text, orig, head);
		memcpy(text + head, c->to, tl);
		memcpy(text + head + tl, hit + fl, len - head - fl + 1);
		struct diag d;
		diag_init(&d);
		struct prices *p = NULL;
		int rc = prices_parse(&p, "prices.json", text, strlen(text), &d);
		if (rc != DIAG_EINPUT)
			fail_msg("case %zu: rc %d, %s", i, rc, d.msg);
		assert_null(p);
		if (c->msg) {
			/* the place: the first occurrence of `at` from a little
			 * before the edit (a missing key points at its row's '{') */
			const char *at = strstr(text + (head > 300 ? head - 300 : 0), c->at);
			assert_non_null(at);
			long line = 1, col = 1;
			for (const char *s = text; s < at; s++) {
				if (*s == '\n') {
					line++;
					col = 1;
				} else {
					col++;
				}
			}
			char want[2048];
			snprintf(want, sizeof(want), "prices.json:%ld:%ld: %s", line, col, c->msg);
			if (strcmp(d.msg, want) != 0)
				fail_msg("case %zu:\n got  %s\n want %s", i, d.msg, want);
		} else {
			assert_non_null(strstr(d.msg, "invalid JSON"));
			assert_true(strncmp(d.msg, "prices.json:9:", 14) == 0);
		}
		free(text);
	}
}

static void test_unknown_hardware(void **state)
{
	(void)state;
	size_t len = 0;
	const char *orig = prices_embedded(&len);
	const char *from = "\"hardware\": \"l40s\"";
	const char *hit = strstr(orig, from);
	assert_non_null(hit);
	char *text = strdup(orig);
	assert_non_null(text);
	memcpy(text + (hit - orig), "\"hardware\": \"l41s\"", strlen(from));
	struct diag d;
	diag_init(&d);
	struct prices *p = NULL;
	assert_int_equal(prices_parse(&p, "prices.json", text, len, &d), 0);
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	assert_int_equal(prices_check_hardware(p, cat, &d), DIAG_EINPUT);
	long line = 1;
	for (const char *s = text; s < text + (hit - orig); s++)
		line += *s == '\n';
	char want[256];
	snprintf(want, sizeof(want), "prices.json:%ld: gpu_hour 'runpod-l40s': hardware 'l41s' is "
		 "not a hardware id of the catalogue (expected an id listed by agentcap catalog)",
		 line);
	assert_string_equal(d.msg, want);
	catalog_free(cat);
	prices_free(p);
	free(text);
}

static void test_listing(void **state)
{
	(void)state;
	struct prices *p = load_embedded();
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	assert_int_equal(prices_write_table(p, cat, f, &d), 0);
	fclose(f);
	assert_non_null(strstr(buf, "seat (24)"));
	assert_non_null(strstr(buf, "1 EUR = 1.068 USD"));
	const char *none = strstr(buf, "hardware without any price");
	assert_non_null(none);
	assert_non_null(strstr(none, "rtx-3090"));
	assert_null(strstr(none, " h100-sxm "));
	assert_null(strstr(none, "ws-rtx-pro-6000")); /* priced in hardware.json */
	free(buf);
	catalog_free(cat);
	prices_free(p);
}

/* A price of one configuration is no price of another: the base Mac Studio
 * M3 Ultra (96 GB, $3,999) named as the catalogue's apple-m3-ultra-80c,
 * which simulates the 512 GB machine, is refused with both figures. */
static void test_memory_of_the_price(void **state)
{
	(void)state;
	size_t len = 0;
	const char *orig = prices_embedded(&len);
	const char *from = "\"memory_gb\": 96, \"gpus\": 1,";
	const char *hit = strstr(orig, from);
	assert_non_null(hit);
	const char *to = "\"memory_gb\": 96, \"hardware\": \"apple-m3-ultra-80c\", \"gpus\": 1,";
	size_t head = (size_t)(hit - orig), fl = strlen(from), tl = strlen(to);
	char *text = malloc(len - fl + tl + 1);
	assert_non_null(text);
	memcpy(text, orig, head);
	memcpy(text + head, to, tl);
	memcpy(text + head + tl, hit + fl, len - head - fl + 1);
	struct diag d;
	diag_init(&d);
	struct prices *p = NULL;
	assert_int_equal(prices_parse(&p, "prices.json", text, strlen(text), &d), 0);
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	assert_int_equal(prices_check_hardware(p, cat, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "purchase 'mac-studio-m3-ultra-96gb': memory_gb 96 is not "
				      "hardware 'apple-m3-ultra-80c''s 512 GB"));
	catalog_free(cat);
	prices_free(p);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embedded),
		cmocka_unit_test(test_field_notes_rents),
		cmocka_unit_test(test_scope_hosts_and_operator_rows),
		cmocka_unit_test(test_file_matches_embedded),
		cmocka_unit_test(test_bad_rows),
		cmocka_unit_test(test_unknown_hardware),
		cmocka_unit_test(test_memory_of_the_price),
		cmocka_unit_test(test_listing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
