/* SPDX-License-Identifier: Apache-2.0
 * KV links for prefill/decode disaggregation (models/kvlink.h): the
 * shipped table, its checks, and a transfer's time by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "models/kvlink.h"

/* within 1 ns */
#define assert_ns(got, want) assert_true(fabs((got) - (want)) <= 1.0)

static void test_shipped(void **state)
{
	(void)state;
	struct kvlink_table t;
	struct diag d;
	diag_init(&d);
	assert_int_equal(kvlink_load(&t, NULL, &d), 0);
	char ids[128];
	kvlink_ids(&t, ids, sizeof(ids));
	assert_string_equal(ids, "nvlink, infiniband, roce, ethernet");
	const struct kv_link *nv = kvlink_find(&t, "nvlink");
	assert_non_null(nv);
	assert_true(nv->gbs == 450 && nv->per_gpu && nv->per_transfer_us == 29);
	assert_false(kvlink_find(&t, "ethernet")->per_gpu);
	assert_null(kvlink_find(&t, "pcie"));
}

/* Llama-3.1-70B (80 layers, 8 KV heads of 128, bf16: 327,680 bytes of KV a
 * token) with a 100,000-token prompt from a TP4 prefill replica to a TP4
 * decode replica over InfiniBand NDR, one port a GPU: 32.768 GB over four
 * 50 GB/s ports is 163.84 ms; block-wise, 6,250 blocks of 16 tokens at
 * 29 us each add 181.25 ms; buffered, one transfer adds 29 us.  Over one
 * shared 100 GbE port the wire alone takes 2,621.44 ms. */
static void test_transfer_by_hand(void **state)
{
	(void)state;
	struct kvlink_table t;
	struct diag d;
	diag_init(&d);
	assert_int_equal(kvlink_load(&t, NULL, &d), 0);
	double bytes = 100000.0 * 80 * 2 * 8 * 128 * 2;
	assert_true(bytes == 32768000000.0);
	struct kv_transfer x = { .bytes = bytes, .pieces = 6250, .gpus = 4 };
	double whole, exposed;
	kvlink_time(kvlink_find(&t, "infiniband"), &x, &whole, &exposed);
	assert_ns(whole, 163.84e6 + 181.25e6);
	assert_true(exposed == whole);
	x.pieces = 1;
	kvlink_time(kvlink_find(&t, "infiniband"), &x, &whole, &exposed);
	assert_ns(whole, 163.84e6 + 29e3);
	kvlink_time(kvlink_find(&t, "ethernet"), &x, &whole, &exposed);
	assert_ns(whole, 2621.44e6 + 29e3);
	/* layer-wise: a 2 s prefill of 80 layers hides all but the last
	 * layer's share of a 163.869 ms transfer; a 100 ms one does not */
	x = (struct kv_transfer){ .bytes = bytes, .pieces = 1, .gpus = 4, .layers = 80,
				  .layerwise = true, .prefill_ns = 2e9 };
	kvlink_time(kvlink_find(&t, "infiniband"), &x, &whole, &exposed);
	assert_ns(exposed, whole / 80);
	x.prefill_ns = 100e6;
	kvlink_time(kvlink_find(&t, "infiniband"), &x, &whole, &exposed);
	assert_ns(exposed, whole - 100e6 * 79 / 80);
}

static void test_bad_tables(void **state)
{
	(void)state;
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "[", "k.json: invalid JSON (expected a KV-link table: an object with \"links\")" },
		{ "{\"schema_version\": 2, \"links\": []}", "k.json: schema_version: expected 1" },
		{ "{\"schema_version\": 1, \"links\": []}",
		  "k.json: links: expected an array of 1 to 16 links" },
		{ "{\"schema_version\": 1, \"links\": [{\"id\": \"x\", \"per_gpu\": true, \"gbs\": "
		  "{\"value\": 10, \"unit\": \"Gb/s\", \"source\": \"s\", \"date\": \"2026-01\"}}]}",
		  "k.json: links[0].gbs: expected a sourced figure {\"value\" >= 0.001, \"unit\": "
		  "\"GB/s\", \"source\", \"date\"}" },
		{ "{\"schema_version\": 1, \"links\": [{\"id\": \"x\", \"gbs\": 1}]}",
		  "k.json: links[0]: expected \"per_gpu\": true or false" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kvlink_table t;
		struct diag d;
		diag_init(&d);
		int rc = kvlink_parse(&t, "k.json", cases[i].text, strlen(cases[i].text), &d);
		if (rc != DIAG_EINPUT || strcmp(d.msg, cases[i].msg) != 0)
			fail_msg("case %zu: rc %d, '%s' (expected '%s')", i, rc, d.msg, cases[i].msg);
		assert_int_equal(t.n, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped),
		cmocka_unit_test(test_transfer_by_hand),
		cmocka_unit_test(test_bad_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
