/* SPDX-License-Identifier: Apache-2.0
 * bench_kvruns: what one call costs the KV cache itself, block-level
 * (sim/kvcache) against run-level (sim/kvruns), as the prompt grows at a
 * fixed prefix reuse.
 *
 *     bench_kvruns [--calls N] [--sessions S] [--reuse F] [--repeats R] [--lengths L1,L2,...]
 *
 * For each prompt length L (default 8K to 256K tokens, doubling; 16-token
 * blocks), S sessions (default 4) take turns issuing N calls in all
 * (default 1000): the first F*L tokens of a call (default F = 0.95) are its
 * session's context, the rest new in every call.  A call is what a replica
 * asks of the cache for one request: match the prompt's chain (with the
 * free blocks a take would take and their oldest stamp), take the hit,
 * allocate the new blocks, enter them, release everything tail first.  The
 * cache holds 1.25 x S x L tokens, so live contexts stay and old calls' new
 * blocks are evicted.  Calls run in batches whose chains (each its own
 * array, as a replica's requests each hold theirs) are made, and then
 * pushed out of the caches, before the batch's clock starts, so every call
 * meets its chain cold at every length; the clock is the process's CPU time, so time the
 * machine gives to other processes is not counted.  Each length runs R
 * times (default 3) and the least time counts.  Prints, per length: the hit
 * rate and evictions (the same for both, or the bench fails), ns per call
 * for each, each one's ratio to its own at the shortest length, and the
 * speed-up.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/hash.h"
#include "sim/kvcache.h"
#include "sim/kvruns.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BLOCK_TOKENS = 16, MAX_LENGTHS = 32 };

/* More than this machine's caches: read before each batch so that every
 * call meets its chain cold, at every length (in a replay, a request's
 * hashes were written long before it is admitted). */
#define FLUSH_BYTES ((size_t)64 << 20)

/* CPU time of this (single-threaded) process: on a shared machine the wall
 * clock measures the neighbours too. */
static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

struct result {
	int64_t hit_blocks, evictions;
	double ns;
	unsigned flush_sum; /* keeps the flushing reads */
};

struct setup {
	int64_t n, base, sessions, calls, total;
	uint64_t **contexts; /* per session: its context's hashes */
	uint64_t *batch;     /* batch_calls chains of n hashes */
	int64_t batch_calls;
	unsigned char *flush; /* FLUSH_BYTES read between batches */
};

/* Call c's chain into h[0..n): its session's context, then new blocks. */
static void call_chain(const struct setup *st, uint64_t *h, int64_t c)
{
	int64_t s = c % st->sessions;
	memcpy(h, st->contexts[s], (size_t)st->base * sizeof(*h));
	uint64_t x = st->base > 0 ? h[st->base - 1] : 0x5eed ^ (uint64_t)s;
	for (int64_t j = st->base; j < st->n; j++) {
		x = hash_combine(x, ((uint64_t)c << 32) ^ (uint64_t)j ^ ((uint64_t)s << 48));
		h[j] = x;
	}
}

struct cache {
	bool runs;
	struct kvcache kv;
	int32_t *ids;
	struct kvr kr;
	struct kvr_req req;
};

/* One call's cache work; the hit blocks, -1 on failure. */
static int64_t one_call(struct cache *k, const uint64_t *h, int64_t n)
{
	int64_t hit, evictable = 0;
	uint64_t oldest = UINT64_MAX;
	if (k->runs) {
		kvr_match(&k->kr, h, n, &hit, &evictable, &oldest);
		if (kvr_take(&k->kr, &k->req, h, hit) != 0 || kvr_alloc(&k->kr, &k->req, n - hit) != 0 ||
		    kvr_register(&k->kr, &k->req, h, n) != 0 || kvr_put(&k->kr, &k->req) != 0)
			return -1;
		return hit;
	}
	hit = kvcache_match(&k->kv, h, n, k->ids);
	for (int64_t j = 0; j < hit; j++)
		if (kvcache_ref(&k->kv, k->ids[j]) == 0) {
			evictable++;
			if (kvcache_stamp(&k->kv, k->ids[j]) < oldest)
				oldest = kvcache_stamp(&k->kv, k->ids[j]);
		}
	for (int64_t j = 0; j < hit; j++)
		kvcache_take(&k->kv, k->ids[j]);
	for (int64_t j = hit; j < n; j++)
		if ((k->ids[j] = kvcache_alloc(&k->kv)) < 0)
			return -1;
	for (int64_t j = hit; j < n; j++)
		kvcache_register(&k->kv, k->ids[j], h[j]);
	for (int64_t j = n - 1; j >= 0; j--)
		kvcache_put(&k->kv, k->ids[j]);
	(void)evictable;
	(void)oldest;
	return hit;
}

static int run(const struct setup *st, bool runs, struct result *res)
{
	struct cache k = {.runs = runs};
	int rc = -1;
	memset(res, 0, sizeof(*res));
	if (runs) {
		if (kvr_init(&k.kr, BLOCK_TOKENS, st->total, true) != 0)
			return -1;
		kvr_req_init(&k.req);
	} else {
		k.ids = malloc((size_t)st->n * sizeof(*k.ids));
		if (!k.ids || kvcache_init(&k.kv, BLOCK_TOKENS, st->total, true) != 0)
			goto out;
	}
	for (int64_t c0 = 0; c0 < st->calls; c0 += st->batch_calls) {
		int64_t nb = st->calls - c0 < st->batch_calls ? st->calls - c0 : st->batch_calls;
		for (int64_t i = 0; i < nb; i++)
			call_chain(st, st->batch + i * st->n, c0 + i);
		unsigned sum = 0;
		for (size_t i = 0; i < FLUSH_BYTES; i += 64)
			sum += st->flush[i];
		res->flush_sum += sum;
		double t0 = cpu_ns();
		for (int64_t i = 0; i < nb; i++) {
			int64_t hit = one_call(&k, st->batch + i * st->n, st->n);
			if (hit < 0)
				goto out;
			res->hit_blocks += hit;
		}
		res->ns += cpu_ns() - t0;
	}
	res->evictions = runs ? k.kr.evictions : k.kv.evictions;
	rc = 0;
out:
	if (runs) {
		kvr_req_release(&k.req);
		kvr_release(&k.kr);
	} else {
		kvcache_release(&k.kv);
		free(k.ids);
	}
	return rc;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_kvruns [--calls N] [--sessions S] [--reuse F] [--repeats R] [--lengths L1,L2,...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	int64_t calls = 1000, sessions = 4, repeats = 3;
	double reuse = 0.95;
	int64_t lengths[MAX_LENGTHS];
	int n_len = 0;
	for (int64_t l = 8192; l <= 262144; l *= 2)
		lengths[n_len++] = l;
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			return usage();
		if (!strcmp(argv[i], "--calls"))
			calls = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--sessions"))
			sessions = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--repeats"))
			repeats = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--reuse"))
			reuse = atof(argv[++i]);
		else if (!strcmp(argv[i], "--lengths")) {
			n_len = 0;
			for (char *p = argv[++i]; *p && n_len < MAX_LENGTHS;) {
				char *end;
				lengths[n_len++] = strtoll(p, &end, 10);
				if (end == p)
					return usage();
				p = *end == ',' ? end + 1 : end;
			}
		} else
			return usage();
	}
	if (calls < 1 || sessions < 1 || repeats < 1 || !(reuse >= 0.0 && reuse < 1.0) || n_len == 0)
		return usage();
	printf("bench_kvruns: %lld calls, %lld sessions, %.0f%% reuse, %d-token blocks, cache 1.25 x sessions x prompt,\n"
	       "CPU ns per call, least of %lld runs\n",
	       (long long)calls, (long long)sessions, 100.0 * reuse, BLOCK_TOKENS, (long long)repeats);
	printf("%10s %8s %8s %10s %12s %11s %9s %10s %8s\n", "prompt_tok", "blocks", "hit_rate", "evictions",
	       "kvcache_ns", "kvruns_ns", "kvcache_x", "kvruns_x", "speedup");
	double first_a = 0, first_b = 0;
	for (int li = 0; li < n_len; li++) {
		struct setup st = {.n = lengths[li] / BLOCK_TOKENS, .sessions = sessions, .calls = calls};
		if (st.n < 2)
			return usage();
		st.base = (int64_t)(reuse * (double)st.n);
		st.total = (st.n * sessions * 5 + 3) / 4;
		/* the sessions' contexts, chained as every call's */
		st.contexts = calloc((size_t)sessions, sizeof(*st.contexts));
		st.batch_calls = ((int64_t)16 << 20) / (st.n * (int64_t)sizeof(uint64_t));
		st.batch_calls = st.batch_calls < 1 ? 1 : st.batch_calls;
		st.batch = malloc((size_t)(st.batch_calls * st.n) * sizeof(uint64_t));
		st.flush = malloc(FLUSH_BYTES);
		if (!st.contexts || !st.batch || !st.flush)
			return 3;
		for (size_t i = 0; i < FLUSH_BYTES; i++)
			st.flush[i] = (unsigned char)i;
		for (int64_t s = 0; s < sessions; s++) {
			if (!(st.contexts[s] = malloc((size_t)st.n * sizeof(uint64_t))))
				return 3;
			uint64_t x = 0x5eed ^ (uint64_t)s;
			for (int64_t j = 0; j < st.base; j++)
				st.contexts[s][j] = x = hash_combine(x, (uint64_t)j ^ ((uint64_t)s << 48));
		}
		struct result a = {0}, b = {0}, ra, rb;
		for (int64_t k = 0; k < repeats; k++) {
			if (run(&st, false, &ra) != 0 || run(&st, true, &rb) != 0)
				return 3;
			if (k == 0 || ra.ns < a.ns)
				a = ra;
			if (k == 0 || rb.ns < b.ns)
				b = rb;
		}
		for (int64_t s = 0; s < sessions; s++)
			free(st.contexts[s]);
		free(st.contexts);
		free(st.batch);
		free(st.flush);
		if (a.hit_blocks != b.hit_blocks || a.evictions != b.evictions) {
			fprintf(stderr, "bench_kvruns: the caches disagree at %lld tokens\n", (long long)lengths[li]);
			return 3;
		}
		double na = a.ns / (double)calls, nb = b.ns / (double)calls;
		if (li == 0) {
			first_a = na;
			first_b = nb;
		}
		printf("%10lld %8lld %8.4f %10lld %12.0f %11.0f %9.2f %10.2f %8.1f\n", (long long)lengths[li],
		       (long long)st.n, (double)a.hit_blocks / (double)(st.n * calls), (long long)a.evictions, na, nb,
		       na / first_a, nb / first_b, na / nb);
	}
	return 0;
}
