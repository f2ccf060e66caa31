/* SPDX-License-Identifier: Apache-2.0
 * Tests of the host tier's write-through mode (kv_tiers.mode write_through,
 * LMCache's store on prefill) against the eviction-aware mode, driven with
 * a linear step-time model (a + b x new tokens ns) whose answers are
 * computed by hand: which chunks are stored, what the store costs a step
 * when it is synchronous, and how an asynchronous store holds the host link
 * so that a load queued behind it waits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/hash.h"
#include "sim/kvcache.h"
#include "sim/kvtier.h"
#include "sim/replica.h"
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

/* ---- a linear perf model: a + b*new_tokens ns a step ---- */
struct lin {
	double a, b;
};

static double lin_step(const void *ctx, const struct perf_batch *pb)
{
	const struct lin *l = ctx;
	return l->a + l->b * (double)pb->new_tokens;
}

static double lin_run(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	const struct lin *l = ctx;
	return (double)k * (l->a + l->b * (double)b0->new_tokens);
}

/* ---- a sink keeping each request's record ---- */
#define MAXREC 64
struct col {
	struct res_request rec[MAXREC];
	int n;
};

static void col_req(void *ctx, const struct res_request *r)
{
	struct col *c = ctx;
	assert_true(c->n < MAXREC);
	c->rec[c->n++] = *r;
}

static const struct res_request *rec_of(const struct col *c, uint64_t session)
{
	for (int i = 0; i < c->n; i++)
		if (c->rec[i].session == session)
			return &c->rec[i];
	fail_msg("no record of session %llu", (unsigned long long)session);
	return NULL;
}

struct harness {
	struct sim s;
	struct lin perf;
	struct col col;
	struct diag d;
};

static struct engine_config cfg_of(int64_t budget, int64_t kv_blocks)
{
	struct engine_config cfg = {
		.max_num_seqs = 256,
		.max_num_batched_tokens = budget,
		.block_size = 16,
		.gpu_memory_utilization = 0.9,
		.enable_chunked_prefill = true,
		.enable_prefix_caching = true,
		.kv_cache_tokens = 16 * kv_blocks,
		.max_model_len = 1 << 20,
	};
	return cfg;
}

/* A replica with a host tier of 1,000 blocks at 1,000 ns a block (either
 * way over the link), 100 bytes a block. */
static struct harness *h_new(const struct engine_config *cfg, enum sim_tier_mode mode,
			     int64_t chunk_blocks, bool unfull, bool async)
{
	struct harness *h = calloc(1, sizeof(*h));
	assert_non_null(h);
	h->perf.a = 1000;
	h->perf.b = 1;
	diag_init(&h->d);
	struct sim_perf p = {.ctx = &h->perf, .step_ns = lin_step, .decode_run_ns = lin_run};
	struct res_sink sink = {.ctx = &h->col, .request = col_req};
	assert_int_equal(sim_init(&h->s, cfg, 1, p, sink, NULL, NULL, &h->d), 0);
	struct sim_tiers_config tc = {.n = 1, .shared_by = 1,
				      .tier = {{.blocks = 1000, .ns_per_block = 1000}},
				      .mode = mode, .chunk_blocks = chunk_blocks,
				      .save_unfull_chunk = unfull, .async_store = async,
				      .bytes_per_block = 100};
	assert_int_equal(sim_set_tiers(&h->s, &tc, &h->d), 0);
	return h;
}

static void h_free(struct harness *h)
{
	sim_release(&h->s);
	free(h);
}

/* A call of `prompt` tokens whose first `shared` come from content pfx,
 * the rest unique to session uniq; chained hashes, one a full block. */
static void h_submit(struct harness *h, int64_t t_ns, int64_t prompt, int64_t out, int64_t shared,
		     uint64_t uniq, uint64_t pfx)
{
	uint64_t hs[512];
	int64_t bs = h->s.cfg.block_size, n = (prompt + out) / bs, x = 1;
	assert_true(n <= 512);
	for (int64_t j = 0; j < n; j++) {
		x = (int64_t)hash_combine((uint64_t)x, (j + 1) * bs <= shared ? pfx : uniq);
		hs[j] = (uint64_t)x;
	}
	struct sim_call c = {.session = uniq, .prompt_tokens = prompt, .output_tokens = out,
			     .block_hashes = hs, .n_hashes = n};
	assert_int_equal(sim_submit(&h->s, &c, t_ns, &h->d), 0);
}

static void h_run(struct harness *h)
{
	int rc;
	while ((rc = sim_step(&h->s, &h->d)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(sim_check_end(&h->s, &h->d), 0);
	assert_true(kvtier_check(&h->s.tiers[0]));
}

/* One prompt of 1,000 tokens (62 full blocks; 256-token chunks of 16
 * blocks: 3 full chunks, 48 blocks, and a partial one of 14), prefilled in
 * steps of `budget` tokens.  Each step stores the chunks it completes; the
 * partial chunk only with save_unfull_chunk (LMCache's default is not to).
 * Returns the sim's counts through *st and the host's blocks. */
static int64_t stored_after(int64_t budget, bool unfull, struct sim_stats *st)
{
	struct engine_config cfg = cfg_of(budget, 1000);
	struct harness *h = h_new(&cfg, SIM_TIER_WRITE_THROUGH, 16, unfull, true);
	h_submit(h, 0, 1000, 1, 0, 1, 0);
	h_run(h);
	*st = sim_get_stats(&h->s);
	int64_t held = h->s.tiers[0].len;
	assert_int_equal(h->s.tiers[0].stored, st->tier_stored_blocks);
	h_free(h);
	return held;
}

static void test_write_through_stores_each_chunk(void **state)
{
	(void)state;
	/* the whole prompt in one step, in steps of 512 (2 chunks, then the
	 * third), and of 300 (a chunk a step: 300, 600, 900, then 1,000) */
	static const int64_t budgets[] = {2048, 512, 300};
	for (size_t i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
		struct sim_stats st;
		assert_int_equal(stored_after(budgets[i], false, &st), 48);
		assert_int_equal(st.tier_stored_blocks, 48);
		assert_int_equal(st.tier_stored_chunks, 3);
		assert_true(st.tier_stored_bytes == 4800.0);
		assert_true(st.tier_store_ns == 48000.0);
		assert_true(st.tier_store_stall_ns == 0.0); /* async */
		/* with the partial chunk: 62 blocks, 4 chunks */
		assert_int_equal(stored_after(budgets[i], true, &st), 62);
		assert_int_equal(st.tier_stored_chunks, 4);
		assert_true(st.tier_store_ns == 62000.0);
	}
}

/* A prompt of 512 tokens (32 blocks, 2 chunks) in one step of 1,000 + 512
 * ns: a synchronous store adds its 32 blocks x 1,000 ns to the step, an
 * asynchronous one nothing; evict mode stores nothing. */
static void test_sync_store_lengthens_step(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_of(2048, 1000);
	int64_t ttft[3];
	for (int v = 0; v < 3; v++) {
		struct harness *h = h_new(&cfg, v == 0 ? SIM_TIER_EVICT : SIM_TIER_WRITE_THROUGH, 16,
					  false, v == 2);
		h_submit(h, 0, 512, 1, 0, 1, 0);
		h_run(h);
		const struct res_request *r = rec_of(&h->col, 1);
		ttft[v] = r->first_token_ns - r->arrival_ns;
		struct sim_stats st = sim_get_stats(&h->s);
		assert_int_equal(st.tier_stored_blocks, v == 0 ? 0 : 32);
		assert_true(st.tier_store_stall_ns == (v == 1 ? 32000.0 : 0.0));
		h_free(h);
	}
	assert_int_equal(ttft[0], 1512);
	assert_int_equal(ttft[1], 1512 + 32 * 1000);
	assert_int_equal(ttft[2], 1512);
}

/* A GPU cache of 24 blocks; chunks of one block.  A (160 tokens, 10
 * blocks) is stored at its prefill; C (383 unique tokens) evicts A's blocks
 * from the GPU, which copies nothing (the host has them), and stores its 23
 * blocks after its step (1,000 + 383 ns), holding the link for 23,000 ns.
 * B extends A's 160 tokens by 40: 10 blocks load from the host.  Arriving
 * 1 ns after C's step, B's load waits the other 22,999 ns of C's store;
 * arriving later it waits nothing (TTFT 10 x 1,000 + 1,000 + 40 ns). */
static void test_async_store_delays_load(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_of(2048, 24);
	const int64_t c_end = 1000000000LL + 1383;
	for (int late = 0; late < 2; late++) {
		struct harness *h = h_new(&cfg, SIM_TIER_WRITE_THROUGH, 1, false, true);
		h_submit(h, 0, 160, 1, 160, 1, 0xAB);
		h_submit(h, 1000000000LL, 383, 1, 0, 2, 0xCD);
		h_submit(h, late ? 2000000000LL : c_end + 1, 200, 1, 160, 3, 0xAB);
		h_run(h);
		const struct res_request *c = rec_of(&h->col, 2), *b = rec_of(&h->col, 3);
		assert_int_equal(c->first_token_ns, c_end); /* C's step is not lengthened */
		assert_int_equal(b->tier_cached_tokens[0], 160);
		assert_int_equal(b->first_token_ns - b->arrival_ns, (late ? 0 : 22999) + 11040);
		struct sim_stats st = sim_get_stats(&h->s);
		assert_true(st.tier_load_wait_ns == (late ? 0.0 : 22999.0));
		assert_int_equal(st.tier_loaded_blocks, 10);
		/* A's 10, C's 23, B's 2 new ones; evictions brought none */
		assert_true(h->s.replicas[0].kv.evictions > 0);
		assert_int_equal(st.tier_stored_blocks, 10 + 23 + 2);
		assert_int_equal(h->s.tiers[0].stored, st.tier_stored_blocks);
		h_free(h);
	}
}

/* Write-through keeps a block in both caches at once: after A's prefill
 * its blocks are in the GPU cache and the host tier, and A' (the same
 * prompt) hits the GPU copy, loading nothing and storing nothing new. */
static void test_write_through_overlap(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_of(2048, 1000);
	struct harness *h = h_new(&cfg, SIM_TIER_WRITE_THROUGH, 16, false, true);
	h_submit(h, 0, 512, 1, 512, 1, 0xAB);
	h_submit(h, 1000000, 512, 1, 512, 2, 0xAB);
	h_run(h);
	const struct res_request *a2 = rec_of(&h->col, 2);
	assert_int_equal(a2->cached_prompt_tokens, 496); /* all but the last block */
	assert_int_equal(a2->tier_cached_tokens[0], 0);
	struct sim_stats st = sim_get_stats(&h->s);
	assert_int_equal(st.tier_stored_blocks, 32);
	assert_int_equal(st.tier_loaded_blocks, 0);
	/* the host holds A's 32 blocks while the GPU served 31 of them */
	assert_int_equal(h->s.tiers[0].len, 32);
	h_free(h);
}

/* Evict mode with the write-through fields set is today's behaviour: the
 * case of test_tier_hit_after_eviction (test_sim.c) gives its TTFT of
 * 11,040 ns, blocks reach the host only by eviction, and nothing is stored
 * as computed. */
static void test_evict_mode_unchanged(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_of(2048, 24);
	struct harness *h = h_new(&cfg, SIM_TIER_EVICT, 16, true, false);
	h_submit(h, 0, 160, 1, 160, 1, 0xAB);
	h_submit(h, 1000000000LL, 383, 1, 0, 2, 0xCD);
	h_submit(h, 2000000000LL, 200, 1, 160, 3, 0xAB);
	h_run(h);
	const struct res_request *b = rec_of(&h->col, 3);
	assert_int_equal(b->tier_cached_tokens[0], 160);
	assert_int_equal(b->first_token_ns - b->arrival_ns, 11040);
	struct sim_stats st = sim_get_stats(&h->s);
	assert_int_equal(st.tier_stored_blocks, 0);
	assert_true(st.tier_store_ns == 0.0 && st.tier_load_wait_ns == 0.0);
	assert_true(h->s.tiers[0].stored > 0); /* demoted on eviction */
	h_free(h);
}

/* The figures a broken write-through would change, each pinned by one
 * number: storing every block as computed instead of whole chunks stores
 * 62 blocks of the 1,000-token prompt, not 48 (and, in steps of 300 tokens,
 * 18 after the first step, not 16); dropping the bandwidth charge leaves a
 * synchronous step at 1,512 ns instead of 33,512; charging a chunk instead
 * of its blocks gives 2,000 ns, not 32,000. */
static void test_write_through_mutations(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_of(300, 1000);
	struct harness *h = h_new(&cfg, SIM_TIER_WRITE_THROUGH, 16, false, false);
	h_submit(h, 0, 1000, 1, 0, 1, 0);
	/* events up to the scheduling of step 1, whose stores come at once */
	while (h->s.tiers[0].len == 0)
		assert_int_equal(sim_step(&h->s, &h->d), 1);
	assert_int_equal(h->s.stats.steps, 0);
	assert_int_equal(h->s.tiers[0].len, 16); /* chunk 0 only */
	assert_true(h->s.stats.tier_store_stall_ns == 16000.0);
	h_run(h);
	assert_int_equal(h->s.stats.tier_stored_blocks, 48);
	h_free(h);

	cfg = cfg_of(2048, 1000);
	h = h_new(&cfg, SIM_TIER_WRITE_THROUGH, 16, false, false);
	h_submit(h, 0, 512, 1, 0, 1, 0);
	h_run(h);
	const struct res_request *r = rec_of(&h->col, 1);
	assert_int_equal(r->first_token_ns - r->arrival_ns, 33512);
	h_free(h);
}

/* Bad write-through settings are refused by name. */
static void test_write_through_bad_chunk(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_of(2048, 1000);
	struct harness *h = calloc(1, sizeof(*h));
	assert_non_null(h);
	diag_init(&h->d);
	h->perf.a = 1;
	struct sim_perf p = {.ctx = &h->perf, .step_ns = lin_step, .decode_run_ns = lin_run};
	struct res_sink sink = {.ctx = &h->col, .request = col_req};
	assert_int_equal(sim_init(&h->s, &cfg, 1, p, sink, NULL, NULL, &h->d), 0);
	struct sim_tiers_config tc = {.n = 1, .shared_by = 1,
				      .tier = {{.blocks = 10, .ns_per_block = 1}},
				      .mode = SIM_TIER_WRITE_THROUGH, .chunk_blocks = 0};
	assert_int_equal(sim_set_tiers(&h->s, &tc, &h->d), DIAG_EINPUT);
	assert_non_null(strstr(h->d.msg, "write-through chunks of 0 blocks"));
	h_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_through_stores_each_chunk),
		cmocka_unit_test(test_sync_store_lengthens_step),
		cmocka_unit_test(test_async_store_delays_load),
		cmocka_unit_test(test_write_through_overlap),
		cmocka_unit_test(test_evict_mode_unchanged),
		cmocka_unit_test(test_write_through_mutations),
		cmocka_unit_test(test_write_through_bad_chunk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
