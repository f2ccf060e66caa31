/* SPDX-License-Identifier: Apache-2.0
 * Tests of the event queue, the KV cache and the vLLM-style replica, driven
 * with a linear step-time model whose answers are easy to compute by hand.
 * The invariant checks (kvcache_check, sim_check_end, the per-request token
 * balance) are shown to fire on state corrupted on purpose; preemption's
 * tail-first release and front-of-queue requeue each have a direct test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/hash.h"
#include "models/catalog.h"
#include "models/memory.h"
#include "models/perf_model.h"
#include "sim/evq.h"
#include "sim/kvcache.h"
#include "sim/kvruns.h"
#include "sim/kvtier.h"
#include "sim/replica.h"
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a linear perf model: a + b*new_tokens + c*kv_read_tokens ns ---- */
struct lin {
	double a, b, c;
	int64_t max_new_tokens; /* largest batch seen (mutable test probe) */
};

static double lin_step(const void *ctx, const struct perf_batch *pb)
{
	struct lin *l = (struct lin *)ctx;
	if (pb->new_tokens > l->max_new_tokens)
		l->max_new_tokens = pb->new_tokens;
	return l->a + l->b * (double)pb->new_tokens + l->c * (double)pb->kv_read_tokens;
}

static double lin_run(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	const struct lin *l = ctx;
	double kk = (double)k;
	return kk * (l->a + l->b * (double)b0->new_tokens + l->c * (double)b0->kv_read_tokens) +
	       l->c * (double)b0->seqs * kk * (kk - 1) / 2;
}

/* Work of a step linear in its counts, so a decode run's work is exactly
 * the sum of its steps': FLOPs 1000 per new token + 1 per attention pair,
 * bytes 1e6 per step + 2 per KV token read. */
static void lin_work(const void *ctx, const struct perf_batch *b0, int64_t k, double *flops,
		     double *bytes)
{
	(void)ctx;
	double kk = k < 1 ? 1.0 : (double)k;
	double grow = (double)b0->seqs * kk * (kk - 1) / 2; /* pairs and KV added over the run */
	*flops = kk * (1000.0 * (double)b0->new_tokens + (double)b0->attn_pairs) + grow;
	*bytes = kk * (1e6 + 2.0 * (double)b0->kv_read_tokens) + 2.0 * grow;
}

/* ---- a collecting sink ---- */
#define MAXREC 4096
struct col {
	struct res_request rec[MAXREC];
	int n;
	int64_t itl_samples;
	double itl_sum_ns;
	double flops, bytes;     /* busy records */
	int64_t seq_steps;       /* sum of seqs x steps */
	int64_t max_kv_blocks;
};

static void col_req(void *ctx, const struct res_request *r)
{
	struct col *c = ctx;
	assert_true(c->n < MAXREC);
	c->rec[c->n++] = *r;
}

static void col_itl(void *ctx, const struct res_itl_run *r)
{
	struct col *c = ctx;
	c->itl_samples += r->steps * r->seqs;
	c->itl_sum_ns += r->total_ns * r->seqs;
}

static void col_busy(void *ctx, const struct res_busy *b)
{
	struct col *c = ctx;
	c->flops += b->flops;
	c->bytes += b->bytes;
	c->seq_steps += (int64_t)b->seqs * b->steps;
	if (b->kv_blocks_end > c->max_kv_blocks)
		c->max_kv_blocks = b->kv_blocks_end;
	if (b->kv_blocks_start > c->max_kv_blocks)
		c->max_kv_blocks = b->kv_blocks_start;
}

static struct engine_config cfg_default(void)
{
	struct engine_config cfg = {
		.max_num_seqs = 256,
		.max_num_batched_tokens = 2048,
		.block_size = 16,
		.gpu_memory_utilization = 0.9,
		.enable_chunked_prefill = true,
		.enable_prefix_caching = true,
		.kv_cache_tokens = 1 << 20,
		.max_model_len = 1 << 20,
	};
	return cfg;
}

/* Block hashes for a prompt made of `shared` tokens of content A followed by
 * a unique tail, plus the output; simple chained hashes per block. */
static int64_t make_hashes(uint64_t *out, int64_t shared, int64_t total, int64_t bs, uint64_t uniq,
			   uint64_t pfx)
{
	uint64_t h = 1;
	int64_t n = total / bs;
	for (int64_t j = 0; j < n; j++) {
		bool in_shared = (j + 1) * bs <= shared;
		h = hash_combine(h, in_shared ? pfx : uniq);
		out[j] = h;
	}
	return n;
}

struct harness {
	struct sim s;
	struct lin perf;
	struct col col;
	struct diag d;
};

static void h_init_n(struct harness *h, const struct engine_config *cfg, int32_t replicas, double a,
		     double b, double c);

static void h_init(struct harness *h, const struct engine_config *cfg, double a, double b, double c)
{
	h_init_n(h, cfg, 1, a, b, c);
}

static void h_init_n(struct harness *h, const struct engine_config *cfg, int32_t replicas, double a,
		     double b, double c)
{
	memset(h, 0, sizeof(*h));
	h->perf.a = a;
	h->perf.b = b;
	h->perf.c = c;
	diag_init(&h->d);
	struct sim_perf p = {.ctx = &h->perf, .step_ns = lin_step, .decode_run_ns = lin_run,
			     .work = lin_work};
	struct res_sink sink = {.ctx = &h->col, .request = col_req, .itl_run = col_itl,
				.busy = col_busy};
	assert_int_equal(sim_init(&h->s, cfg, replicas, p, sink, NULL, NULL, &h->d), 0);
}

static void h_submit_pfx(struct harness *h, int64_t t_ns, int64_t prompt, int64_t out, int64_t shared,
			 uint64_t uniq, uint64_t pfx)
{
	const int64_t cap = 1 << 16;
	uint64_t *hs = malloc(cap * sizeof(*hs));
	int64_t n = make_hashes(hs, shared, prompt + out, h->s.cfg.block_size, uniq, pfx);
	/* every other call "resumes" (its session comes back after a tool call):
	 * only KV retention reads it */
	struct sim_call c = {.session = uniq, .seq = 0, .prompt_tokens = prompt, .output_tokens = out,
			     .block_hashes = hs, .n_hashes = n, .resumes = (uniq & 1) == 0};
	assert_int_equal(sim_submit(&h->s, &c, t_ns, &h->d), 0);
	free(hs);
}

static void h_submit(struct harness *h, int64_t t_ns, int64_t prompt, int64_t out, int64_t shared, uint64_t uniq)
{
	h_submit_pfx(h, t_ns, prompt, out, shared, uniq, 0xAAAA);
}

static void h_run(struct harness *h)
{
	int rc;
	while ((rc = sim_step(&h->s, &h->d)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(sim_check_end(&h->s, &h->d), 0);
}

/* ---- evq ---- */
static void test_evq_order(void **state)
{
	(void)state;
	struct evq q;
	evq_init(&q);
	struct event e = {0};
	int64_t times[] = {50, 10, 10, 30, 10, 50, 0};
	int32_t prios[] = {0, 2, 1, 0, 1, 0, 5};
	for (int i = 0; i < 7; i++) {
		e.t_ns = times[i];
		e.prio = prios[i];
		e.arg = i;
		assert_int_equal(evq_push(&q, &e), 0);
		assert_true(evq_check(&q));
	}
	int64_t want[] = {6, 2, 4, 1, 3, 0, 5};
	for (int i = 0; i < 7; i++) {
		assert_true(evq_pop(&q, &e));
		assert_int_equal(e.arg, want[i]);
	}
	assert_false(evq_pop(&q, &e));
	evq_release(&q);
}

/* ---- kvcache ---- */

/* The limit the message states ("1 to 2^31-1 blocks") is the limit applied:
 * exactly 2^31-1 blocks is accepted (nothing is allocated until used). */
static void test_kv_block_limit(void **state)
{
	(void)state;
	struct kvcache kv;
	assert_int_equal(kvcache_init(&kv, 16, INT32_MAX, true), 0);
	assert_true(kvcache_alloc(&kv) >= 0);
	kvcache_release(&kv);
	assert_int_equal(kvcache_init(&kv, 16, (int64_t)INT32_MAX + 1, true), DIAG_EINPUT);
	kvcache_release(&kv);
	assert_int_equal(kvcache_init(&kv, 16, 0, true), DIAG_EINPUT);
	kvcache_release(&kv);
}

static void test_kv_lru_tail_first(void **state)
{
	(void)state;
	struct kvcache kv;
	assert_int_equal(kvcache_init(&kv, 16, 4, true), 0);
	int32_t b[4];
	for (int i = 0; i < 4; i++) {
		b[i] = kvcache_alloc(&kv);
		assert_true(b[i] >= 0);
		assert_int_equal(kvcache_register(&kv, b[i], 100 + i), 0);
	}
	assert_int_equal(kvcache_alloc(&kv), -1);
	/* free tail first, as a finished request does */
	for (int i = 3; i >= 0; i--)
		kvcache_put(&kv, b[i]);
	assert_true(kvcache_check(&kv));
	uint64_t hs[4] = {100, 101, 102, 103};
	assert_int_equal(kvcache_match(&kv, hs, 4, NULL), 4);
	/* one allocation evicts the tail block (hash 103), the head survives */
	assert_true(kvcache_alloc(&kv) >= 0);
	assert_int_equal(kvcache_match(&kv, hs, 4, NULL), 3);
	assert_int_equal(kv.evictions, 1);
	/* a hit takes a free cached block out of the LRU queue */
	int32_t got = -1;
	assert_int_equal(kvcache_match(&kv, hs, 1, &got), 1);
	assert_int_equal(got, b[0]);
	kvcache_take(&kv, got);
	assert_int_equal(kvcache_available(&kv), 2);
	/* next evictions: 102 then 101, never the block in use */
	assert_true(kvcache_alloc(&kv) >= 0);
	assert_int_equal(kvcache_match(&kv, hs, 4, NULL), 2);
	assert_true(kvcache_alloc(&kv) >= 0);
	assert_int_equal(kvcache_match(&kv, hs, 4, NULL), 1);
	assert_int_equal(kvcache_alloc(&kv), -1);
	assert_true(kvcache_check(&kv));
	kvcache_release(&kv);
}

/* Two blocks with one hash (two requests computed the same content): both
 * are entered, a hit takes the first, and evicting it leaves the other
 * servable; the hash goes only with its last block. */
static void test_kv_duplicates_stay_servable(void **state)
{
	(void)state;
	struct kvcache kv;
	assert_int_equal(kvcache_init(&kv, 16, 3, true), 0);
	int32_t a = kvcache_alloc(&kv), b = kvcache_alloc(&kv), c = kvcache_alloc(&kv);
	assert_int_equal(kvcache_register(&kv, a, 42), 0);
	assert_int_equal(kvcache_register(&kv, b, 42), 0);
	assert_int_equal(kv.duplicates, 1);
	assert_true(kvcache_check(&kv));
	kvcache_put(&kv, a); /* a is older in the free queue than b */
	kvcache_put(&kv, b);
	kvcache_put(&kv, c);
	uint64_t h = 42;
	int32_t got = -1;
	assert_int_equal(kvcache_match(&kv, &h, 1, &got), 1);
	assert_int_equal(got, a);
	/* the queue holds a, b, c: the next allocation evicts a, and b serves */
	assert_int_equal(kvcache_alloc(&kv), a);
	assert_true(kvcache_check(&kv));
	assert_int_equal(kvcache_match(&kv, &h, 1, &got), 1);
	assert_int_equal(got, b);
	assert_int_equal(kvcache_alloc(&kv), b);
	assert_int_equal(kvcache_match(&kv, &h, 1, NULL), 0);
	assert_int_equal(kv.evictions, 2);
	assert_true(kvcache_check(&kv));
	kvcache_release(&kv);
}

static void test_kv_no_prefix_caching(void **state)
{
	(void)state;
	struct kvcache kv;
	assert_int_equal(kvcache_init(&kv, 16, 4, false), 0);
	int32_t b = kvcache_alloc(&kv);
	assert_int_equal(kvcache_register(&kv, b, 7), 0);
	kvcache_put(&kv, b);
	uint64_t h = 7;
	assert_int_equal(kvcache_match(&kv, &h, 1, NULL), 0);
	kvcache_release(&kv);
}

/* ---- replica ---- */

/* One request alone: TTFT is its prefill steps, then one step per token. */
static void test_single_request_timing(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_default();
	struct harness *h = malloc(sizeof(*h));
	h_init(h, &cfg, 1000, 10, 0);
	h_submit(h, 0, 1000, 100, 0, 1);
	h_run(h);
	assert_int_equal(h->col.n, 1);
	struct res_request *r = &h->col.rec[0];
	assert_int_equal(r->status, RES_COMPLETED);
	assert_int_equal(r->first_token_ns, 1000 + 10 * 1000);
	assert_int_equal(r->done_ns, 11000 + 99 * 1010);
	assert_int_equal(r->computed_prefill_tokens, 1000);
	assert_int_equal(h->col.itl_samples, 99);
	/* the 99 decode steps went by as one event */
	assert_true(h->s.stats.step_events <= 3);
	assert_int_equal(h->s.stats.steps, 100);
	sim_release(&h->s);
	free(h);
}

/* Chunked prefill never puts more than max_num_batched_tokens in a step. */
static void test_chunked_prefill_budget(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_default();
	cfg.max_num_batched_tokens = 512;
	struct harness *h = malloc(sizeof(*h));
	h_init(h, &cfg, 1000, 1, 0);
	h_submit(h, 0, 2000, 4, 0, 1);
	h_submit(h, 0, 700, 4, 0, 2);
	h_run(h);
	assert_int_equal(h->col.n, 2);
	assert_true(h->perf.max_new_tokens <= 512);
	/* 2000 prompt tokens need ceil(2000/512) = 4 chunks: TTFT of 4 steps */
	assert_int_equal(h->col.rec[0].first_token_ns, 3 * (1000 + 512) + (1000 + 464 + 48));
	sim_release(&h->s);
	free(h);

	/* Without chunking, a prompt above the budget is rejected with a reason. */
	cfg.enable_chunked_prefill = false;
	h = malloc(sizeof(*h));
	h_init(h, &cfg, 1000, 1, 0);
	h_submit(h, 0, 2000, 4, 0, 1);
	h_run(h);
	assert_int_equal(h->col.rec[0].status, RES_REJECTED);
	assert_non_null(strstr(h->col.rec[0].reason, "max_num_batched_tokens"));
	sim_release(&h->s);
	free(h);
}

/* A second request with the same prefix, arriving later, hits the cache
 * across sessions; with prefix caching off it does not. */
static void test_prefix_sharing(void **state)
{
	(void)state;
	for (int on = 0; on <= 1; on++) {
		struct engine_config cfg = cfg_default();
		cfg.enable_prefix_caching = on;
		struct harness *h = malloc(sizeof(*h));
		h_init(h, &cfg, 1000, 1, 0);
		h_submit(h, 0, 1000, 10, 800, 1);
		h_submit(h, 1000000000, 1000, 10, 800, 2);
		h_run(h);
		assert_int_equal(h->col.rec[0].cached_prompt_tokens, 0);
		assert_int_equal(h->col.rec[1].cached_prompt_tokens, on ? 800 : 0);
		assert_int_equal(h->col.rec[1].computed_prefill_tokens, on ? 200 : 1000);
		sim_release(&h->s);
		free(h);
	}
}

/* Blocks enter the prefix table when the step computing them is scheduled:
 * two requests with a common prefix arriving together share it in the same
 * step (vLLM's allocate_slots caches them at once).  When the first needs
 * several chunks, the second, admitted beside its first chunk, hits that
 * chunk and misses the rest only because it is still to be computed. */
static void test_inflight_miss(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_default();
	struct harness *h = malloc(sizeof(*h));
	h_init(h, &cfg, 1000, 1, 0);
	h_submit(h, 0, 1000, 10, 800, 1);
	h_submit(h, 0, 1000, 10, 800, 2);
	h_run(h);
	assert_int_equal(h->col.rec[1].cached_prompt_tokens, 800);
	assert_int_equal(h->col.rec[1].inflight_miss_tokens, 0);
	assert_int_equal(h->col.rec[1].computed_prefill_tokens, 200);
	sim_release(&h->s);
	free(h);

	cfg.max_num_batched_tokens = 1024;
	h = malloc(sizeof(*h));
	h_init(h, &cfg, 1000, 1, 0);
	h_submit(h, 0, 3000, 10, 2400, 1); /* chunks of 1024: 64 blocks cached per step */
	h_submit(h, 0, 1000, 10, 800, 2);  /* wait: shares 800 of them */
	h_submit(h, 0, 2600, 10, 2400, 3);
	h_run(h);
	/* request 3 is admitted in step 3 beside request 1's last chunk: by then
	 * 2048 + 352 of the shared 2400 tokens are scheduled, so all of them hit */
	for (int i = 0; i < h->col.n; i++)
		if (h->col.rec[i].session == 3)
			assert_int_equal(h->col.rec[i].cached_prompt_tokens +
					 h->col.rec[i].inflight_miss_tokens, 2400);
	sim_release(&h->s);
	free(h);
}

/* With a small cache, old prefixes are evicted least recently used first,
 * and within a freed prefix its tail goes before its head. */
static void test_lru_eviction_across_requests(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_default();
	cfg.kv_cache_tokens = 16 * 100; /* 100 blocks */
	struct harness *h = malloc(sizeof(*h));
	h_init(h, &cfg, 1000, 1, 0);
	const int64_t sec = 1000000000;
	/* each call: 40 blocks of a shared prefix + 1 unique block = 41 blocks */
	h_submit_pfx(h, 0 * sec, 656, 1, 640, 1, 0x1111); /* A: prefix P1 */
	h_submit_pfx(h, 1 * sec, 656, 1, 640, 2, 0x2222); /* B: prefix P2 */
	h_submit_pfx(h, 2 * sec, 656, 1, 640, 3, 0x3333); /* C: P3, evicts 23 blocks:
							      P1's tail, oldest */
	h_submit_pfx(h, 3 * sec, 656, 1, 640, 4, 0x1111); /* D: P1 again: 18 blocks left */
	h_submit_pfx(h, 4 * sec, 656, 1, 640, 5, 0x3333); /* E: P3, newest: all 40 */
	h_run(h);
	assert_int_equal(h->col.n, 5);
	assert_int_equal(h->col.rec[2].cached_prompt_tokens, 0);
	assert_int_equal(h->col.rec[3].cached_prompt_tokens, 18 * 16);
	assert_int_equal(h->col.rec[4].cached_prompt_tokens, 40 * 16);
	assert_true(sim_get_stats(&h->s).kv_evictions >= 23);
	sim_release(&h->s);
	free(h);
}

/* A KV cache far smaller than the load forces preemptions; everything still
 * completes and the invariants hold. */
static void test_preemption_completes(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_default();
	cfg.kv_cache_tokens = 16 * 64; /* 1024 tokens */
	struct harness *h = malloc(sizeof(*h));
	h_init(h, &cfg, 1000, 1, 1);
	for (int i = 0; i < 20; i++)
		h_submit(h, i * 1000, 200, 300, 0, 100 + i);
	h_run(h);
	assert_int_equal(h->col.n, 20);
	int64_t pre = 0;
	for (int i = 0; i < 20; i++) {
		assert_int_equal(h->col.rec[i].status, RES_COMPLETED);
		pre += h->col.rec[i].preemptions;
	}
	assert_true(pre > 0);
	assert_int_equal(pre, h->s.stats.preemptions);
	/* every gap between two tokens of a request is one ITL sample, across
	 * preemptions too */
	assert_int_equal(h->col.itl_samples, 20 * (300 - 1));
	sim_release(&h->s);
	free(h);
}

/* A call's hashes lent to the simulator (sim_call.borrow_hashes) are read
 * only until its done callback: here the callback scribbles over them and
 * frees them, so a later read shows up under AddressSanitizer and, in any
 * build, as records that differ from the same workload's with copied
 * hashes.  Shared prefixes, evictions and preemptions on two replicas
 * behind the prefix-aware router exercise every reader. */
static void free_lent(void *ctx, const struct res_request *r, void *user)
{
	(void)ctx;
	(void)r;
	uint64_t *h = user;
	for (int j = 0; j < 64; j++)
		h[j] = 0xdeadbeefULL + (uint64_t)j;
	free(h);
}

static void run_lent(struct harness *h, bool borrow)
{
	struct engine_config cfg = cfg_default();
	cfg.kv_cache_tokens = 16 * 96;
	cfg.max_num_batched_tokens = 256;
	memset(h, 0, sizeof(*h));
	h->perf.a = 1000;
	h->perf.b = 1;
	h->perf.c = 1;
	diag_init(&h->d);
	struct sim_perf p = {.ctx = &h->perf, .step_ns = lin_step, .decode_run_ns = lin_run,
			     .work = lin_work};
	struct res_sink sink = {.ctx = &h->col, .request = col_req, .itl_run = col_itl,
				.busy = col_busy};
	assert_int_equal(sim_init(&h->s, &cfg, 2, p, sink, borrow ? free_lent : NULL, NULL, &h->d), 0);
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_PREFIX_AWARE;
	assert_int_equal(sim_set_router(&h->s, &rc, &h->d), 0);
	uint64_t *kept[40] = {0};
	for (int i = 0; i < 40; i++) {
		uint64_t *hs = malloc(64 * sizeof(*hs));
		assert_non_null(hs);
		int64_t prompt = 300 + 40 * (i % 7), out = 100 + 30 * (i % 5);
		int64_t n = make_hashes(hs, 16 * (4 + i % 9), prompt + out, 16, 500 + (uint64_t)i,
					0x1000 + (uint64_t)(i % 3));
		struct sim_call c = {.session = 1 + (uint64_t)(i % 6), .seq = i, .prompt_tokens = prompt,
				     .output_tokens = out, .block_hashes = hs, .n_hashes = n,
				     .borrow_hashes = borrow, .user = hs};
		assert_int_equal(sim_submit(&h->s, &c, (int64_t)(i % 10) * 100000 + (i / 10) * 50000000, &h->d), 0);
		if (!borrow) { /* copied: the caller may scribble at once */
			for (int64_t j = 0; j < n; j++)
				hs[j] = 0xdeadbeefULL + (uint64_t)j;
			kept[i] = hs;
		}
	}
	h_run(h);
	for (int i = 0; i < 40; i++)
		free(kept[i]);
}

static void test_borrowed_hashes(void **state)
{
	(void)state;
	struct harness *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	assert_non_null(a);
	assert_non_null(b);
	run_lent(a, false);
	run_lent(b, true);
	assert_int_equal(a->col.n, 40);
	assert_int_equal(b->col.n, 40);
	int64_t cached = 0, pre = 0;
	for (int i = 0; i < 40; i++) {
		const struct res_request *x = &a->col.rec[i], *y = &b->col.rec[i];
		assert_int_equal(x->seq, y->seq);
		assert_int_equal(x->replica, y->replica);
		assert_int_equal(x->status, y->status);
		assert_int_equal(x->first_token_ns, y->first_token_ns);
		assert_int_equal(x->done_ns, y->done_ns);
		assert_int_equal(x->cached_prompt_tokens, y->cached_prompt_tokens);
		assert_int_equal(x->computed_prefill_tokens, y->computed_prefill_tokens);
		assert_int_equal(x->preemptions, y->preemptions);
		cached += x->cached_prompt_tokens;
		pre += x->preemptions;
	}
	assert_true(cached > 0);
	assert_true(pre > 0);
	assert_true(sim_get_stats(&a->s).kv_evictions > 0);
	sim_release(&a->s);
	sim_release(&b->s);
	free(a);
	free(b);
}

static void test_reject_too_large(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_default();
	cfg.kv_cache_tokens = 16 * 10;
	struct harness *h = malloc(sizeof(*h));
	h_init(h, &cfg, 1000, 1, 0);
	h_submit(h, 0, 1000, 10, 0, 1);
	h_submit(h, 0, 100, 10, 0, 2);
	h_run(h);
	assert_int_equal(h->col.n, 2);
	assert_int_equal(h->col.rec[0].status, RES_REJECTED);
	assert_non_null(strstr(h->col.rec[0].reason, "KV blocks"));
	assert_int_equal(h->col.rec[1].status, RES_COMPLETED);
	sim_release(&h->s);
	free(h);
}

/* Long prompts under KV pressure: admitting a request when only its first
 * chunk fits lets it prefill part-way, run the cache dry and be preempted,
 * over and over; admitting it only when its whole prompt fits (vLLM's
 * scheduler_reserve_full_isl) waits instead.  The two diverge by orders of
 * magnitude in preemptions, and decoding requests see the thrash in TPOT. */
static void test_whole_prompt_admission(void **state)
{
	(void)state;
	int64_t pre[2];
	double tpot[2];
	for (int full = 0; full <= 1; full++) {
		struct engine_config cfg = cfg_default();
		cfg.kv_cache_tokens = 16 * 8000; /* 128,000 tokens: four prompts at most */
		cfg.max_num_batched_tokens = 8192;
		cfg.enable_prefix_caching = false; /* as in the report behind PR #37307 */
		cfg.reserve_full_prompt = full;
		struct harness *h = malloc(sizeof(*h));
		h_init(h, &cfg, 20000, 20, 1);
		uint64_t x = 777;
		for (int i = 0; i < 24; i++) {
			x = hash_mix64(x);
			int64_t prompt = 24000 + (int64_t)(x % 12000);
			h_submit(h, i * 1000000LL, prompt, 300 + (int64_t)((x >> 20) % 300), 0, 500 + i);
		}
		h_run(h);
		pre[full] = h->s.stats.preemptions;
		double sum = 0;
		for (int i = 0; i < h->col.n; i++) {
			const struct res_request *r = &h->col.rec[i];
			assert_int_equal(r->status, RES_COMPLETED);
			sum += (double)(r->done_ns - r->first_token_ns) / (double)(r->output_tokens - 1);
		}
		tpot[full] = sum / h->col.n;
		sim_release(&h->s);
		free(h);
	}
	printf("preemptions: first chunk %lld, whole prompt %lld; mean TPOT %.0f vs %.0f ns\n",
	       (long long)pre[0], (long long)pre[1], tpot[0], tpot[1]);
	/* two orders of magnitude in preemptions, a fifth or more off TPOT */
	assert_true(pre[0] >= 100 * (pre[1] > 0 ? pre[1] : 1));
	assert_true(tpot[1] < 0.8 * tpot[0]);
}

/* A model with sliding-window or linear-attention layers keeps per running
 * sequence a window and a state besides its context: they come out of the
 * same pool, so fewer sequences run at once, and a call whose context and
 * state exceed the cache is rejected. */
static void test_sequence_state_reserved(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_default();
	cfg.kv_cache_tokens = 16 * 100;
	cfg.seq_state_tokens = 16 * 50; /* 50 blocks per running sequence */
	assert_int_equal(sim_state_blocks(&cfg), 50);
	/* a window group holds at most a chunk plus the window before it */
	cfg.sliding_window_tokens = 128;
	cfg.window_group_blocks = 1;
	assert_int_equal(sim_window_peak_blocks(&cfg, 480), 30);
	assert_int_equal(sim_window_peak_blocks(&cfg, 100000), (127 + 2048 + 15) / 16 + 1);
	cfg.sliding_window_tokens = cfg.window_group_blocks = 0;
	assert_int_equal(sim_window_peak_blocks(&cfg, 480), 0);
	struct harness *h = malloc(sizeof(*h));
	h_init(h, &cfg, 1000, 1, 0);
	h_submit(h, 0, 470, 10, 0, 1);   /* 30 blocks + 50 */
	h_submit(h, 0, 470, 10, 0, 2);   /* waits for the first */
	h_submit(h, 0, 800, 10, 0, 3);   /* 51 blocks + 50 > 100: never fits */
	h_run(h);
	assert_int_equal(h->col.n, 3);
	const struct res_request *a = NULL, *b = NULL, *c = NULL;
	for (int i = 0; i < 3; i++) {
		const struct res_request *r = &h->col.rec[i];
		if (r->session == 1)
			a = r;
		else if (r->session == 2)
			b = r;
		else
			c = r;
	}
	assert_int_equal(c->status, RES_REJECTED);
	assert_int_equal(a->status, RES_COMPLETED);
	assert_int_equal(b->status, RES_COMPLETED);
	assert_true(b->first_token_ns > a->done_ns);
	assert_int_equal(a->preemptions + b->preemptions, 0);
	sim_release(&h->s);
	free(h);
}

static void h_run_until(struct harness *h, int64_t t_ns)
{
	while (sim_next_time(&h->s) <= t_ns)
		assert_int_equal(sim_step(&h->s, &h->d), 1);
}

static const struct res_request *rec_of(const struct col *c, uint64_t session)
{
	for (int i = 0; i < c->n; i++)
		if (c->rec[i].session == session)
			return &c->rec[i];
	fail();
	return NULL;
}

/* A sliding-window group serves a prefix only while it holds the blocks of
 * the window just before the prefix's end (worked by hand).  Block size 16,
 * window 33: a hit needs the 2 window blocks before it.  A cache of 24
 * blocks; A (160 + 17 tokens, 11 positions) holds 22.  Its window blocks
 * 0..7 leave the window at its first decode step (skipped = (160 - 32) / 16
 * = 8) and join the free queue then; at its end the window group frees 10,
 * 9, 8 and the full group 10..0, so the queue is w7..w0 w10 w9 w8 f10..f0.
 * C (unique, 80 or 96 tokens) takes the 2 untouched blocks and then 8 or 10
 * from the queue head.  B extends A's 176 tokens: its full-attention match
 * is all 11 blocks either way, but after 8 evictions w9 and w10 survive and
 * B hits 176 tokens, after 10 they are gone (and no 2 contiguous window
 * blocks are left anywhere) and B hits nothing.  A full-attention model in
 * the same cache keeps the whole hit. */
static void test_window_hit_by_hand(void **state)
{
	(void)state;
	const int64_t want_cached[3] = {176, 0, 176};
	for (int v = 0; v < 3; v++) {
		struct engine_config cfg = cfg_default();
		cfg.kv_cache_tokens = 16 * 24;
		cfg.sliding_window_tokens = v < 2 ? 33 : 0;
		cfg.window_group_blocks = v < 2 ? 1 : 0;
		struct harness *h = malloc(sizeof(*h));
		h_init(h, &cfg, 1000, 1, 0);
		h_submit_pfx(h, 0, 160, 17, 176, 1, 0xAB);
		h_submit_pfx(h, 1000000000LL, v == 0 ? 80 : 96, 1, 0, 2, 0xCD);
		h_submit_pfx(h, 2000000000LL, 184, 1, 176, 3, 0xAB);
		h_run_until(h, 1500000000LL);
		uint64_t hs[16];
		int64_t n = make_hashes(hs, 176, 185, 16, 3, 0xAB);
		assert_int_equal(replica_match_len(&h->s.replicas[0], hs, n), 11);
		assert_true(replica_kv_check(&h->s.replicas[0]));
		assert_int_equal(replica_kv_evictions(&h->s.replicas[0]), v == 0 ? 8 : v == 1 ? 10 : 0);
		h_run(h);
		assert_int_equal(h->col.n, 3);
		const struct res_request *b = rec_of(&h->col, 3);
		assert_int_equal(b->status, RES_COMPLETED);
		assert_int_equal(b->cached_prompt_tokens, want_cached[v]);
		assert_int_equal(b->computed_prefill_tokens, 184 - want_cached[v]);
		sim_release(&h->s);
		free(h);
	}
}

/* gpt-oss-120b on an H100: its window groups are sized from the catalogue
 * (window 128, one window group per full group).  A session's first call
 * (4,000 + 200 tokens) fills the cache; while it idles, other work of 2,400
 * tokens evicts the window blocks it freed (they were freed first) and a few
 * of its full-attention blocks.  Its next call still matches 226 blocks of
 * full attention, but no 8 contiguous window blocks before any of them: no
 * hit, as vLLM would give.  With lighter pressure (800 tokens) only window
 * blocks that already left the window are evicted and the hit is whole. */
static void test_window_hit_gpt_oss(void **state)
{
	(void)state;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct mem_opts mo;
	mem_opts_init(&mo);
	mo.hardware = "h100-sxm";
	mo.model = "gpt-oss-120b";
	mo.weight_format = "mxfp4";
	struct mem_plan plan;
	if (mem_plan_opts(&plan, cat, &mo, &d) != 0) {
		mo.weight_format = NULL;
		diag_init(&d);
		assert_int_equal(mem_plan_opts(&plan, cat, &mo, &d), 0);
	}
	catalog_free(cat);
	for (int v = 0; v < 2; v++) {
		struct engine_config cfg = cfg_default();
		sim_engine_hybrid(&cfg, &plan);
		assert_int_equal(cfg.sliding_window_tokens, 128);
		assert_int_equal(cfg.window_group_blocks, 1);
		assert_int_equal(cfg.seq_state_tokens, 0);
		cfg.kv_cache_tokens = 16 * 526; /* the first call's 263 positions, twice */
		struct harness *h = malloc(sizeof(*h));
		h_init(h, &cfg, 1000, 1, 0);
		h_submit_pfx(h, 0, 4000, 200, 4200, 1, 0xAB);
		h_submit_pfx(h, 1000000000LL, v == 0 ? 2400 : 800, 1, 0, 2, 0xCD);
		h_submit_pfx(h, 2000000000LL, 4700, 10, 4200, 3, 0xAB);
		h_run_until(h, 1500000000LL);
		uint64_t *hs = malloc(400 * sizeof(*hs));
		int64_t n = make_hashes(hs, 4200, 4710, 16, 3, 0xAB);
		int64_t full = kvcache_match(&h->s.replicas[0].kv, hs, n, NULL);
		free(hs);
		h_run(h);
		const struct res_request *b = rec_of(&h->col, 3);
		assert_int_equal(b->status, RES_COMPLETED);
		if (v == 0) {
			assert_int_equal(full, 226);
			assert_int_equal(b->cached_prompt_tokens, 0);
		} else {
			assert_int_equal(full, 262);
			assert_int_equal(b->cached_prompt_tokens, 262 * 16);
		}
		sim_release(&h->s);
		free(h);
	}
}

/* A tier of 3 blocks over one of 2: least recent first out, a loaded block
 * becomes the most recent, a block is held once; kvtier_check catches a
 * broken link. */
static void test_kvtier_lru(void **state)
{
	(void)state;
	struct kvtier lo, hi;
	assert_int_equal(kvtier_init(&lo, 2, 5.0, NULL), 0);
	assert_int_equal(kvtier_init(&hi, 3, 1.0, &lo), 0);
	for (uint64_t h = 1; h <= 4; h++)
		kvtier_put(&hi, h);
	assert_false(kvtier_has(&hi, 1));
	assert_true(kvtier_has(&lo, 1));
	kvtier_load(&hi, 2);        /* 2 is now the most recent: 3, 4, 2 */
	kvtier_put(&hi, 4);         /* already held: 3, 2, 4 */
	kvtier_put(&hi, 5);         /* 3 goes down: 2, 4, 5; lo: 1, 3 */
	assert_false(kvtier_has(&hi, 3));
	assert_true(kvtier_has(&hi, 2) && kvtier_has(&hi, 4) && kvtier_has(&hi, 5));
	assert_true(kvtier_has(&lo, 3) && kvtier_has(&lo, 1));
	kvtier_put(&hi, 6);         /* 2 goes down and pushes 1 out of lo */
	assert_true(kvtier_has(&lo, 2) && !kvtier_has(&lo, 1));
	assert_int_equal(hi.evicted, 3);
	assert_int_equal(lo.evicted, 1);
	assert_int_equal(hi.loaded, 1);
	assert_true(kvtier_check(&hi) && kvtier_check(&lo));
	hi.prev[hi.mru] = hi.mru; /* a broken link */
	assert_false(kvtier_check(&hi));
	kvtier_release(&hi);
	kvtier_release(&lo);
}

/* A host tier below the GPU cache (kv_tiers): a session whose tool wait
 * outlasts its blocks' GPU residency gets them back from the tier instead
 * of recomputing them.  A cache of 24 blocks: A (160 tokens, 10 blocks)
 * finishes, then C (383 unique tokens, 24 blocks: the 14 never used, then
 * A's 10) evicts all of A's blocks, which the GPU demotes to the tier.  B extends A's 160 tokens by 40: no GPU
 * hit, 10 blocks from the tier, loaded at 1,000 ns a block before its step
 * computes the 40 new tokens (1,000 + 40 ns): TTFT 11,040 ns.  Without the
 * tier B computes all 200 tokens (1,200 ns). */
static void test_tier_hit_after_eviction(void **state)
{
	(void)state;
	for (int v = 0; v < 2; v++) {
		struct engine_config cfg = cfg_default();
		cfg.kv_cache_tokens = 16 * 24;
		struct harness *h = malloc(sizeof(*h));
		h_init(h, &cfg, 1000, 1, 0);
		if (v == 1) {
			struct sim_tiers_config tc = {.n = 1, .shared_by = 1,
						      .tier = {{.blocks = 100, .ns_per_block = 1000}}};
			assert_int_equal(sim_set_tiers(&h->s, &tc, &h->d), 0);
		}
		h_submit_pfx(h, 0, 160, 1, 160, 1, 0xAB);
		h_submit_pfx(h, 1000000000LL, 383, 1, 0, 2, 0xCD);
		h_submit_pfx(h, 2000000000LL, 200, 1, 160, 3, 0xAB);
		h_run(h);
		const struct res_request *b = rec_of(&h->col, 3);
		assert_int_equal(b->status, RES_COMPLETED);
		if (v == 0) {
			assert_int_equal(b->cached_prompt_tokens, 0);
			assert_int_equal(b->first_token_ns - b->arrival_ns, 1200);
		} else {
			assert_int_equal(b->cached_prompt_tokens, 160);
			assert_int_equal(b->tier_cached_tokens[0], 160);
			assert_int_equal(b->tier_cached_tokens[1], 0);
			assert_int_equal(b->computed_prefill_tokens, 40);
			assert_int_equal(b->first_token_ns - b->arrival_ns, 11040);
			struct sim_stats st = sim_get_stats(&h->s);
			assert_int_equal(st.tier_loaded_blocks, 10);
			assert_true(kvtier_check(&h->s.tiers[0]));
			assert_int_equal(h->s.tiers[0].loaded, 10);
		}
		sim_release(&h->s);
		free(h);
	}
}

/* A tier with room for 4 blocks passes its least recent ones to a second
 * tier below it (a disk or remote store), from which they load at that
 * tier's cost; and a tier shared by two replicas serves one replica's
 * demoted blocks to the other (round-robin routing sends A and B to
 * different replicas), where private tiers cannot. */
static void test_tier_chain_and_sharing(void **state)
{
	(void)state;
	/* the chain: host 4 blocks at 1,000 ns, disk 100 blocks at 5,000 ns */
	struct engine_config cfg = cfg_default();
	cfg.kv_cache_tokens = 16 * 24;
	struct harness *h = malloc(sizeof(*h));
	h_init(h, &cfg, 1000, 1, 0);
	struct sim_tiers_config tc = {.n = 2, .shared_by = 1,
				      .tier = {{.blocks = 4, .ns_per_block = 1000},
					       {.blocks = 100, .ns_per_block = 5000}}};
	assert_int_equal(sim_set_tiers(&h->s, &tc, &h->d), 0);
	h_submit_pfx(h, 0, 160, 1, 160, 1, 0xAB);
	h_submit_pfx(h, 1000000000LL, 383, 1, 0, 2, 0xCD);
	h_submit_pfx(h, 2000000000LL, 200, 1, 160, 3, 0xAB);
	h_run(h);
	const struct res_request *b = rec_of(&h->col, 3);
	/* A's 10 blocks were evicted in queue order (its tail first), so the
	 * host keeps the last 4 evicted (its first 4 blocks) and the disk the
	 * other 6; C's own blocks were never evicted */
	assert_int_equal(b->cached_prompt_tokens, 160);
	assert_int_equal(b->tier_cached_tokens[0], 4 * 16);
	assert_int_equal(b->tier_cached_tokens[1], 6 * 16);
	assert_int_equal(b->first_token_ns - b->arrival_ns, 1000 + 40 + 4 * 1000 + 6 * 5000);
	assert_true(kvtier_check(&h->s.tiers[0]) && kvtier_check(&h->s.tiers[1]));
	sim_release(&h->s);
	free(h);

	for (int shared = 0; shared < 2; shared++) {
		cfg = cfg_default();
		cfg.kv_cache_tokens = 16 * 24;
		h = malloc(sizeof(*h));
		h_init_n(h, &cfg, 2, 1000, 1, 0);
		struct router_config rr;
		router_config_default(&rr);
		rr.policy = ROUTER_ROUND_ROBIN;
		assert_int_equal(sim_set_router(&h->s, &rr, &h->d), 0);
		struct sim_tiers_config t2 = {.n = 1, .shared_by = shared ? 2 : 1,
					      .tier = {{.blocks = 100, .ns_per_block = 1000}}};
		assert_int_equal(sim_set_tiers(&h->s, &t2, &h->d), 0);
		h_submit_pfx(h, 0, 160, 1, 160, 1, 0xAB);           /* replica 0 */
		h_submit_pfx(h, 1000000000LL, 64, 1, 0, 2, 0xCD);   /* replica 1 */
		h_submit_pfx(h, 2000000000LL, 383, 1, 0, 4, 0xEF); /* replica 0: evicts A */
		h_submit_pfx(h, 3000000000LL, 200, 1, 160, 3, 0xAB); /* replica 1 */
		h_run(h);
		b = rec_of(&h->col, 3);
		assert_int_equal(b->replica, 1);
		assert_int_equal(b->tier_cached_tokens[0], shared ? 160 : 0);
		assert_int_equal(b->cached_prompt_tokens, shared ? 160 : 0);
		sim_release(&h->s);
		free(h);
	}
}

/* Coalesced decode runs give the same answers as stepping one by one.
 * Workload 0: mixed lengths, half sharing one prefix, a small cache.
 * Workload 1: families of prefixes of many lengths arriving in bursts under
 * a small token budget, with first-chunk admission: one family's chain mixes
 * blocks entered by different requests at different times, some in use and
 * some free, and decode runs evict inside the cached chain of a blocked
 * waiting head (the runs it cuts are counted). */
static void submit_workload(struct harness *h, int w)
{
	uint64_t x = 12345 + (uint64_t)w;
	for (int i = 0; i < 200; i++) {
		x = hash_mix64(x);
		if (w == 0) {
			int64_t prompt = 50 + (int64_t)(x % 900);
			int64_t out = 1 + (int64_t)((x >> 20) % 400);
			int64_t shared = (x >> 40) % 2 ? 256 : 0;
			h_submit(h, i * 200000LL, prompt, out, shared, 1000 + i);
		} else {
			int64_t shared = 64 * (1 + (int64_t)((x >> 8) % 24));
			int64_t prompt = shared + 16 + (int64_t)(x % 300);
			int64_t out = 1 + (int64_t)((x >> 20) % 300);
			uint64_t family = 0xF00 + (x >> 40) % 3;
			int64_t t = (i / 8) * 3000000LL + (i % 8) * 1000LL; /* bursts of 8 */
			h_submit_pfx(h, t, prompt, out, shared, 1000 + (uint64_t)i, family);
		}
	}
}

/* The free queue's contents from its head, one hash per block (0 for a
 * block without one), from whichever form the replica's cache takes. */
static int64_t queue_hashes(const struct replica *rep, uint64_t *out)
{
	int64_t n = 0;
	if (rep->runs) {
		for (const struct kvr_seg *s = rep->kr.qhead; s; s = s->qnext) {
			if (!s->node) {
				for (int64_t i = 0; i < s->len; i++)
					out[n++] = 0;
				continue;
			}
			/* a free layer's last position has its oldest stamp */
			for (int64_t p = s->node->hi - 1; p >= s->node->lo; p--)
				out[n++] = kvr_node_hash(s->node, p);
		}
		return n;
	}
	const struct kvcache *kv = &rep->kv;
	for (int32_t b = kv->head; b >= 0; b = kv->blk[b].next)
		out[n++] = kv->blk[b].hashed ? kv->blk[b].hash : 0;
	return n;
}

/* With KV retention, decode runs still equal single steps: a run ends
 * before the next retained block expires, and allocations take the LRU
 * queue, then the retained one, in both.  The time to live (2 ms) falls
 * inside the workload's bursts, so blocks expire while calls run. */
static void test_retention_runs_match_single_steps(void **state)
{
	(void)state;
	struct col *res[2];
	for (int mode = 0; mode < 2; mode++) {
		struct engine_config cfg = cfg_default();
		cfg.kv_cache_tokens = 16 * 200;
		cfg.max_num_seqs = 8;
		cfg.max_num_batched_tokens = 512;
		cfg.reserve_full_prompt = false;
		cfg.kv_retain_ttl_ns = 2000000;
		cfg.kv_retain_max_fraction = 0.5;
		struct harness *h = malloc(sizeof(*h));
		h_init(h, &cfg, 5000, 3, 1);
		h->s.single_step = mode == 1;
		assert_true(h->s.replicas[0].retain && !h->s.replicas[0].runs);
		submit_workload(h, 1);
		h_run(h);
		assert_true(kvcache_check(&h->s.replicas[0].kv));
		struct sim_stats st = sim_get_stats(&h->s);
		if (mode == 0) {
			printf("retention: peak %lld blocks, hits %lld, avoided %lld, forced %lld, "
			       "capped %lld, evictions %lld\n", (long long)st.retain_peak_blocks,
			       (long long)st.retain_hit_blocks, (long long)st.retain_avoided,
			       (long long)st.retain_forced, (long long)st.retain_capped,
			       (long long)st.kv_evictions);
			assert_true(st.retain_hit_blocks > 0);
			assert_true(st.retain_avoided > 0);
			assert_true(st.retain_peak_blocks <= 100);
			assert_true(st.retain_mean_blocks > 0);
		}
		res[mode] = malloc(sizeof(struct col));
		*res[mode] = h->col;
		sim_release(&h->s);
		free(h);
	}
	assert_int_equal(res[0]->n, res[1]->n);
	for (int i = 0; i < res[0]->n; i++) {
		const struct res_request *a = &res[0]->rec[i], *b = &res[1]->rec[i];
		assert_int_equal(a->session, b->session);
		assert_int_equal(a->cached_prompt_tokens, b->cached_prompt_tokens);
		assert_int_equal(a->preemptions, b->preemptions);
		assert_int_equal(a->done_ns, b->done_ns);
		assert_int_equal(a->first_token_ns, b->first_token_ns);
	}
	free(res[0]);
	free(res[1]);
}

/* Decode runs equal single steps, and the cache in runs of blocks equals
 * the block-by-block cache (mode 2) on the same workloads: the same records,
 * the same free queue.  Workloads 4 and 5 write the host tier through, the
 * stores overlapping compute (4) or lengthening the step (5). */
static void test_runs_match_single_steps(void **state)
{
	(void)state;
	uint64_t *queue[3] = {malloc(400 * sizeof(uint64_t)), malloc(400 * sizeof(uint64_t)),
			      malloc(400 * sizeof(uint64_t))};
	for (int w = 0; w < 6; w++) {
		int64_t qlen[3];
		struct col *res[3];
		int64_t events[3];
		for (int mode = 0; mode < 3; mode++) {
			struct engine_config cfg = cfg_default();
			cfg.kv_cache_tokens = 16 * 200;
			cfg.max_num_seqs = 8;
			if (w >= 1) {
				cfg.max_num_batched_tokens = 512;
				cfg.reserve_full_prompt = false;
			}
			if (w == 2) { /* two sliding-window groups of window 40 */
				cfg.kv_cache_tokens = 16 * 400;
				cfg.sliding_window_tokens = 40;
				cfg.window_group_blocks = 2;
			}
			struct harness *h = malloc(sizeof(*h));
			/* integer step times, so both modes add the same integers and
			 * any difference is a scheduling difference, not rounding */
			h_init(h, &cfg, 5000, 3, 1);
			h->s.single_step = mode == 1;
			if (w >= 3) { /* host and disk tiers, blocks coming back from both */
				struct sim_tiers_config tc = {
					.n = 2, .shared_by = 1,
					.tier = {{.blocks = 60, .ns_per_block = 700},
						 {.blocks = 200, .ns_per_block = 3000}},
					.mode = w >= 4 ? SIM_TIER_WRITE_THROUGH : SIM_TIER_EVICT,
					.chunk_blocks = 2, .async_store = w == 4, .bytes_per_block = 1};
				assert_int_equal(sim_set_tiers(&h->s, &tc, &h->d), 0);
			}
			if (mode == 2) /* block by block */
				h->s.replicas[0].runs = false;
			/* full attention without tiers keeps its cache in runs */
			assert_true(h->s.replicas[0].runs == (mode < 2 && w < 2));
			submit_workload(h, w >= 2 ? 1 : w);
			h_run(h);
			res[mode] = malloc(sizeof(struct col));
			*res[mode] = h->col;
			/* the free queue ends in the same order of contents (block ids
			 * may differ) */
			qlen[mode] = queue_hashes(&h->s.replicas[0], queue[mode]);
			assert_true(qlen[mode] > 0);
			events[mode] = h->s.stats.step_events;
			if (mode == 0) {
				/* the workload exercises what the equivalence is about */
				struct sim_stats st = sim_get_stats(&h->s);
				printf("workload %d: runs cut by arrivals %lld, for the waiting head %lld, "
				       "preemptions %lld, evictions %lld, duplicate blocks %lld\n", w,
				       (long long)st.truncated_runs, (long long)st.head_cut_runs,
				       (long long)st.preemptions, (long long)st.kv_evictions,
				       (long long)replica_kv_duplicates(&h->s.replicas[0]));
				assert_true(st.truncated_runs > 0);
				assert_true(st.head_cut_runs > 0);
				assert_true(st.preemptions > 0);
				assert_true(st.kv_evictions > 0);
				if (w == 0) /* outputs written into a shared prefix's blocks */
					assert_true(replica_kv_duplicates(&h->s.replicas[0]) > 0);
				if (w >= 3)
					assert_true(st.tier_loaded_blocks > 0 && h->s.tiers[1].loaded > 0);
				if (w >= 4)
					assert_true(st.tier_stored_blocks > 0);
				if (w == 4)
					assert_true(st.tier_load_wait_ns > 0);
			}
			sim_release(&h->s);
			free(h);
		}
		assert_int_equal(qlen[0], qlen[1]);
		for (int64_t i = 0; i < qlen[0]; i++)
			assert_true(queue[0][i] == queue[1][i]);
		assert_int_equal(res[0]->n, res[1]->n);
		for (int i = 0; i < res[0]->n; i++) {
			const struct res_request *a = &res[0]->rec[i], *b = &res[1]->rec[i];
			assert_int_equal(a->session, b->session);
			assert_int_equal(a->cached_prompt_tokens, b->cached_prompt_tokens);
			assert_int_equal(a->preemptions, b->preemptions);
			assert_int_equal(a->done_ns, b->done_ns);
			assert_int_equal(a->first_token_ns, b->first_token_ns);
			assert_int_equal(a->computed_prefill_tokens, b->computed_prefill_tokens);
		}
		assert_int_equal(res[0]->itl_samples, res[1]->itl_samples);
		int64_t gaps = 0;
		for (int i = 0; i < res[0]->n; i++)
			gaps += res[0]->rec[i].output_tokens - 1;
		assert_int_equal(res[0]->itl_samples, gaps);
		/* the mean ITL agrees too (runs sum their step times exactly) */
		assert_true(fabs(res[0]->itl_sum_ns - res[1]->itl_sum_ns) <= 1e-6 * res[1]->itl_sum_ns);
		assert_true(events[0] * 3 < events[1]);
		/* busy records carry the same work, batch sizes and KV peak either way */
		assert_true(res[1]->flops > 0 && res[1]->bytes > 0);
		assert_true(fabs(res[0]->flops - res[1]->flops) <= 1e-9 * res[1]->flops);
		assert_true(fabs(res[0]->bytes - res[1]->bytes) <= 1e-9 * res[1]->bytes);
		assert_int_equal(res[0]->seq_steps, res[1]->seq_steps);
		/* (a run's busy record has its start and end, and window blocks
		 * freed inside it can put the peak between them) */
		if (w < 2)
			assert_int_equal(res[0]->max_kv_blocks, res[1]->max_kv_blocks);
		assert_true(res[0]->max_kv_blocks <= res[1]->max_kv_blocks);
		assert_true(res[1]->max_kv_blocks > 0 && res[1]->max_kv_blocks <= (w < 2 ? 200 : 400));
		/* runs of blocks and single blocks: everything the same */
		assert_int_equal(qlen[0], qlen[2]);
		for (int64_t i = 0; i < qlen[0]; i++)
			assert_true(queue[0][i] == queue[2][i]);
		assert_int_equal(res[0]->n, res[2]->n);
		for (int i = 0; i < res[0]->n; i++) {
			const struct res_request *a = &res[0]->rec[i], *b = &res[2]->rec[i];
			assert_int_equal(a->session, b->session);
			assert_int_equal(a->cached_prompt_tokens, b->cached_prompt_tokens);
			assert_int_equal(a->inflight_miss_tokens, b->inflight_miss_tokens);
			assert_int_equal(a->preemptions, b->preemptions);
			assert_int_equal(a->done_ns, b->done_ns);
			assert_int_equal(a->first_token_ns, b->first_token_ns);
			assert_int_equal(a->computed_prefill_tokens, b->computed_prefill_tokens);
		}
		assert_int_equal(events[0], events[2]);
		assert_int_equal(res[0]->itl_samples, res[2]->itl_samples);
		assert_true(res[0]->itl_sum_ns == res[2]->itl_sum_ns);
		assert_int_equal(res[0]->max_kv_blocks, res[2]->max_kv_blocks);
		for (int m = 0; m < 3; m++)
			free(res[m]);
	}
	for (int m = 0; m < 3; m++)
		free(queue[m]);
}


/* ---- invariant checks fire on broken state ---- */

/* A cache of 8 blocks: 0..3 hashed 100..103, blocks 1 and 3 released (in
 * that order, so the free queue is 1, 3), 0 and 2 in use. */
static void kv_sample(struct kvcache *kv)
{
	assert_int_equal(kvcache_init(kv, 16, 8, true), 0);
	for (int i = 0; i < 4; i++) {
		int32_t b = kvcache_alloc(kv);
		assert_int_equal(b, i);
		assert_int_equal(kvcache_register(kv, b, 100 + (uint64_t)i), 0);
	}
	kvcache_put(kv, 1);
	kvcache_put(kv, 3);
	assert_int_equal(kv->free_len, 2);
	assert_int_equal(kv->head, 1);
	assert_int_equal(kv->tail, 3);
	assert_true(kvcache_check(kv));
}

/* The bucket whose chain holds block b of kv_sample's cache (hash h). */
static size_t kv_bucket_of(const struct kvcache *kv, uint64_t h)
{
	for (int32_t b = 0; b < kv->touched; b++)
		if (kv->blk[b].hash == h)
			for (size_t i = 0; i < ((size_t)1 << kv->bucket_bits); i++)
				for (int32_t x = kv->bucket[i]; x >= 0; x = kv->blk[x].hnext)
					if (x == b)
						return i;
	fail_msg("hash %llu not chained", (unsigned long long)h);
	return 0;
}

static void kv_unchain(struct kvcache *kv, int32_t b)
{
	struct kvblock *k = &kv->blk[b];
	if (k->hprev >= 0)
		kv->blk[k->hprev].hnext = k->hnext;
	else
		kv->bucket[kv_bucket_of(kv, k->hash)] = k->hnext;
	if (k->hnext >= 0)
		kv->blk[k->hnext].hprev = k->hprev;
}

static void test_kv_check_catches_corruption(void **state)
{
	(void)state;
	enum { FREE_IN_USE, LEN, LINK, LOST, NEG_REF, TABLE_WRONG, HASH_WRONG, HASH_GONE, N_CASES };
	static const char *const what[N_CASES] = {
		"a queued block with a reference", "free_len off by one", "a broken prev link",
		"a released block missing from the queue", "a negative reference count",
		"a table entry naming another block", "a block's hash changed",
		"a hashed block missing from the table",
	};
	for (int c = 0; c < N_CASES; c++) {
		struct kvcache kv;
		kv_sample(&kv);
		switch (c) {
		case FREE_IN_USE: kv.blk[3].ref = 1; break;
		case LEN: kv.free_len++; break;
		case LINK: kv.blk[3].prev = -1; break;
		case LOST: kv.blk[0].ref = 0; break; /* dropped to zero without queueing */
		case NEG_REF: kv.blk[2].ref = -1; break;
		case TABLE_WRONG: /* block 2 (hash 102) heads the chain of hash 100 */
			kv.bucket[kv_bucket_of(&kv, 100)] = 2;
			break;
		case HASH_WRONG: kv.blk[2].hash = 999; break;
		case HASH_GONE: /* block 1 (hash 101) cut out of its chain */
			kv_unchain(&kv, 1);
			break;
		}
		if (kvcache_check(&kv))
			fail_msg("kvcache_check missed %s", what[c]);
		kvcache_release(&kv);
	}
}

/* Five calls that share a prefix, run to the end (the checks hold). */
static struct harness *finished_run(void)
{
	struct engine_config cfg = cfg_default();
	cfg.kv_cache_tokens = 16 * 64;
	struct harness *h = malloc(sizeof(*h));
	assert_non_null(h);
	h_init(h, &cfg, 1000, 1, 0);
	for (int i = 0; i < 5; i++)
		h_submit(h, i * 1000000LL, 200, 20, 128, 10 + (uint64_t)i);
	h_run(h);
	assert_int_equal(h->col.n, 5);
	return h;
}

static void test_check_end_catches_corruption(void **state)
{
	(void)state;
	enum { LEAK, PENDING, QUEUE, TOKENS, CALLS, EVENT, WORK, N_CASES };
	static const char *const want[N_CASES] = {
		"invariant: replica 0 leaked 1 KV blocks",
		"invariant: replica 0 has 1 requests with prompt blocks in flight",
		"invariant: replica 0 KV cache structure broken",
		"tokens scheduled but",
		"calls submitted but",
		"events still queued",
		"invariant: replica 0 still has work",
	};
	for (int c = 0; c < N_CASES; c++) {
		struct harness *h = finished_run();
		struct replica *rep = &h->s.replicas[0];
		struct kvcache *kv = &rep->kv;
		struct kvr *kr = &rep->kr;
		struct event e = {.t_ns = h->s.now_ns, .kind = EV_SCHEDULE};
		switch (c) {
		case LEAK:
			if (rep->runs)
				kr->touched++; /* a block handed out and never returned */
			else
				assert_true(kvcache_alloc(kv) >= 0);
			break;
		case PENDING: rep->n_pend = 1; break;
		case QUEUE:
			if (rep->runs) {
				assert_true(kr->qhead && kr->qhead != kr->qtail);
				kr->qtail->stamp = 0; /* the queue's stamps no longer increase */
			} else {
				assert_true(kv->free_len >= 2);
				kv->blk[kv->tail].prev = -1; /* the queue's tail loses its back link */
			}
			break;
		case TOKENS: h->s.tokens_applied--; break;
		case CALLS: h->s.stats.completed--; break;
		case EVENT: assert_int_equal(evq_push(&h->s.q, &e), 0); break;
		case WORK: h->s.replicas[0].busy = true; break;
		}
		diag_init(&h->d);
		assert_int_equal(sim_check_end(&h->s, &h->d), DIAG_EINTERNAL);
		if (!strstr(h->d.msg, want[c]))
			fail_msg("corruption %d: sim_check_end said '%s', expected '%s'", c, h->d.msg,
				 want[c]);
		if (c == WORK)
			h->s.replicas[0].busy = false;
		sim_release(&h->s);
		free(h);
	}
}

/* A request whose KV accounting does not add up (KV obtained minus KV
 * dropped must be prompt + output - 1 when it finishes) stops the run with
 * an internal error. */
static void test_token_balance_catches_corruption(void **state)
{
	(void)state;
	for (int delta = -1; delta <= 1; delta += 2) {
		struct engine_config cfg = cfg_default();
		struct harness *h = malloc(sizeof(*h));
		assert_non_null(h);
		h_init(h, &cfg, 1000, 1, 0);
		h_submit(h, 0, 100, 10, 0, 1);
		struct replica *rep = &h->s.replicas[0];
		int rc;
		while ((rc = sim_step(&h->s, &h->d)) == 1 && rep->n_running == 0)
			;
		assert_int_equal(rc, 1);
		assert_int_equal(rep->n_running, 1);
		rep->running[0]->kv_obtained += delta;
		while ((rc = sim_step(&h->s, &h->d)) == 1)
			;
		assert_int_equal(rc, DIAG_EINTERNAL);
		assert_non_null(strstr(h->d.msg, "internal error in the simulator"));
		sim_release(&h->s);
		free(h);
	}
}

/* ---- preemption ---- */

/* Two requests outgrow a 12-block cache.  The later one, B, is preempted
 * (the most recently admitted goes) and releases its blocks tail first, so
 * the blocks A takes next are B's tail and B's head stays cached: when B is
 * admitted again it recomputes less than its prompt.  Released head first,
 * A would take B's first block and B would recompute everything.  Both
 * forms of the cache: in runs of blocks, and block by block (the form a
 * replica with sliding windows or KV tiers keeps). */
static void test_preemption_releases_tail_first(void **state)
{
	(void)state;
	for (int blockwise = 0; blockwise < 2; blockwise++) {
		struct engine_config cfg = cfg_default();
		cfg.kv_cache_tokens = 16 * 12;
		struct harness *h = malloc(sizeof(*h));
		assert_non_null(h);
		h_init(h, &cfg, 1000, 1, 0);
		assert_true(h->s.replicas[0].runs);
		if (blockwise)
			h->s.replicas[0].runs = false;
		h_submit_pfx(h, 0, 96, 40, 0, 1, 0x1111);       /* A: 6 prompt blocks, 9 in all */
		h_submit_pfx(h, 1, 64, 40, 0, 2, 0x2222);       /* B: 4 prompt blocks */
		h_run(h);
		assert_int_equal(h->col.n, 2);
		const struct res_request *a = NULL, *b = NULL;
		for (int i = 0; i < 2; i++) {
			if (h->col.rec[i].session == 1)
				a = &h->col.rec[i];
			else
				b = &h->col.rec[i];
		}
		assert_non_null(a);
		assert_non_null(b);
		assert_int_equal(a->preemptions, 0);
		assert_int_equal(b->preemptions, 1);
		assert_int_equal(a->computed_prefill_tokens, 96);
		int64_t recomputed = b->computed_prefill_tokens - b->prompt_tokens;
		printf("%s: B recomputed %lld tokens after its preemption\n",
		       blockwise ? "block by block" : "in runs", (long long)recomputed);
		assert_true(recomputed > 0);
		assert_true(recomputed < b->prompt_tokens);
		sim_release(&h->s);
		free(h);
	}
}

/* A preempted request goes back to the front of the waiting queue: C,
 * which arrived later and waited for a sequence slot, is not admitted
 * ahead of it.  Requeued at the back, C (small) would start while A still
 * runs, since it fits where B does not. */
static void test_preemption_requeues_at_front(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_default();
	cfg.kv_cache_tokens = 16 * 12;
	cfg.max_num_seqs = 2;
	struct harness *h = malloc(sizeof(*h));
	assert_non_null(h);
	h_init(h, &cfg, 1000, 1, 0);
	h_submit_pfx(h, 0, 96, 70, 0, 1, 0x1111);       /* A */
	h_submit_pfx(h, 1, 64, 40, 0, 2, 0x2222);       /* B, preempted */
	h_submit_pfx(h, 2, 16, 4, 0, 3, 0x3333);        /* C, waits for a slot */
	h_run(h);
	assert_int_equal(h->col.n, 3);
	const struct res_request *r[4] = {NULL};
	for (int i = 0; i < 3; i++)
		r[h->col.rec[i].session] = &h->col.rec[i];
	assert_int_equal(r[1]->preemptions, 0);
	assert_int_equal(r[2]->preemptions, 1);
	assert_int_equal(r[3]->preemptions, 0);
	/* C starts only once A is done and B, ahead of it, is back */
	assert_true(r[3]->first_token_ns > r[1]->done_ns);
	sim_release(&h->s);
	free(h);
}

/* The production work callback counts a decode run as the sum of its
 * steps' breakdowns (exact for a model without sliding-window layers). */
static void test_model_work_of_runs(void **state)
{
	(void)state;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct perf_model pm;
	assert_int_equal(perf_model_init(&pm, cat, "h100-sxm", "llama-3.1-8b", "bf16", "bf16", 1, &d), 0);
	struct sim_perf p = sim_perf_from_model(&pm);
	assert_non_null(p.work);
	struct perf_batch b0 = perf_decode_batch(12, 3000);
	const int64_t k = 57;
	double flops = 0, bytes = 0;
	for (int64_t i = 0; i < k; i++) {
		struct perf_batch bi = b0;
		bi.attn_pairs += i * b0.seqs;
		bi.kv_read_tokens += i * b0.seqs;
		struct perf_breakdown br;
		perf_step_breakdown(&pm, &bi, &br);
		flops += br.flops;
		bytes += br.bytes;
	}
	double rf, rb;
	p.work(p.ctx, &b0, k, &rf, &rb);
	assert_true(fabs(rf - flops) <= 1e-9 * flops);
	assert_true(fabs(rb - bytes) <= 1e-9 * bytes);
	/* a single step (k = 0) is its breakdown */
	struct perf_breakdown one;
	perf_step_breakdown(&pm, &b0, &one);
	p.work(p.ctx, &b0, 0, &rf, &rb);
	assert_true(rf == one.flops && rb == one.bytes);
	catalog_free(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evq_order),
		cmocka_unit_test(test_kv_block_limit),
		cmocka_unit_test(test_kv_lru_tail_first),
		cmocka_unit_test(test_kv_duplicates_stay_servable),
		cmocka_unit_test(test_kv_no_prefix_caching),
		cmocka_unit_test(test_single_request_timing),
		cmocka_unit_test(test_chunked_prefill_budget),
		cmocka_unit_test(test_prefix_sharing),
		cmocka_unit_test(test_inflight_miss),
		cmocka_unit_test(test_lru_eviction_across_requests),
		cmocka_unit_test(test_preemption_completes),
		cmocka_unit_test(test_borrowed_hashes),
		cmocka_unit_test(test_reject_too_large),
		cmocka_unit_test(test_whole_prompt_admission),
		cmocka_unit_test(test_sequence_state_reserved),
		cmocka_unit_test(test_window_hit_by_hand),
		cmocka_unit_test(test_window_hit_gpt_oss),
		cmocka_unit_test(test_kvtier_lru),
		cmocka_unit_test(test_tier_hit_after_eviction),
		cmocka_unit_test(test_tier_chain_and_sharing),
		cmocka_unit_test(test_runs_match_single_steps),
		cmocka_unit_test(test_retention_runs_match_single_steps),
		cmocka_unit_test(test_kv_check_catches_corruption),
		cmocka_unit_test(test_check_end_catches_corruption),
		cmocka_unit_test(test_token_balance_catches_corruption),
		cmocka_unit_test(test_preemption_releases_tail_first),
		cmocka_unit_test(test_preemption_requeues_at_front),

		cmocka_unit_test(test_model_work_of_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
