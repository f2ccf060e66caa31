/* SPDX-License-Identifier: Apache-2.0
 * bench_prefix: what one call costs the simulator as its prompt grows at a
 * fixed prefix reuse.
 *
 *     bench_prefix [--calls N] [--sessions S] [--reuse F] [--lengths L1,L2,...]
 *
 * For each prompt length L (default 8K to 256K tokens, doubling), S agent
 * sessions (default 8) each issue N/S calls (default N = 800) of L prompt
 * tokens and 64 output tokens, one every 100 simulated seconds: the first
 * F*L tokens (default F = 0.95) are the session's context, the same in every
 * call, and the rest is new in each call, so after a session's first call
 * a fraction F of every prompt is a prefix-cache hit.  One replica with a
 * KV cache of 1.25 x S x L tokens (no eviction of live contexts) and a
 * linear step-time model (the model's speed is not what is measured).
 *
 * Each session's first call fills the cache with its context (L/8192
 * prefill chunks, a cost that grows with L by nature); those S cold calls
 * run first, off the clock, and are reported apart.  The clock then covers
 * the other calls, at reuse F: sim_submit and the event loop, not the
 * making of the hashes.  Calls stream in as a replay's do: each is
 * submitted when the simulation reaches its arrival, its hashes in its
 * session's buffer, lent to the simulator (sim_call.borrow_hashes) until
 * the call is done, as replay lends a session's.
 * Prints, per length: warm calls, their hit rate, CPU ns per call, calls per
 * CPU second, the ratio of ns per call to the shortest length's, the part
 * of ns per call spent in sim_submit, events per call and CPU ns per event
 * (the simulator's cost is meant to follow its events, and a longer prompt
 * at equal reuse has more new tokens, so more prefill chunks), and the cold
 * calls' CPU ns each.  The first length runs once more beforehand, not
 * shown, so that its figure does not carry the process's first touches of
 * fresh memory.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/diag.h"
#include "base/hash.h"
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU time of this (single-threaded) process: on a shared machine the wall
 * clock measures the neighbours too. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 5 ms per step plus 20 ns per new token: prefill chunks and decode runs
 * of realistic shape, no model behind them. */
static double lin_step(const void *ctx, const struct perf_batch *pb)
{
	(void)ctx;
	return 5e6 + 20.0 * (double)pb->new_tokens;
}

static double lin_run(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	return (double)k * lin_step(ctx, b0);
}

struct tally {
	int64_t calls, prompt, cached;
	bool *busy; /* per session: a call in flight */
};

static void on_request(void *ctx, const struct res_request *r)
{
	struct tally *t = ctx;
	t->calls++;
	t->prompt += r->prompt_tokens;
	t->cached += r->cached_prompt_tokens;
	t->busy[r->session - 1] = false;
}

static void on_itl(void *ctx, const struct res_itl_run *r)
{
	(void)ctx;
	(void)r;
}

static void on_busy(void *ctx, const struct res_busy *b)
{
	(void)ctx;
	(void)b;
}

struct figures {
	int64_t calls;                  /* warm calls timed */
	double ns_per_call, submit_ns, hit, events_per_call, ns_per_event, cold_ns;
};

/* Run the simulation until its clock reaches `until` (INT64_MAX: to the
 * end); CPU seconds spent added to *spent. */
static int run_until(struct sim *s, int64_t until, double *spent, struct diag *d)
{
	double a = now_s();
	int rc = 0;
	while (rc == 0 && sim_next_time(s) < until)
		rc = sim_step(s, d) < 0 ? d->code : 0;
	*spent += now_s() - a;
	return rc;
}

/* Session i's call k: its hashes into h (the session's buffer, free again
 * once its last call is done). */
static void make_hashes(uint64_t *h, int64_t n_blocks, int64_t shared, int64_t i, int64_t k)
{
	uint64_t x = 1;
	for (int64_t j = 0; j < n_blocks; j++) {
		x = hash_combine(x, j < shared ? 1000 + (uint64_t)i : hash_combine((uint64_t)i, (uint64_t)k));
		h[j] = x;
	}
}

/* One length: 0 and its figures, or an error. */
static int run_length(int64_t len, int64_t calls, int64_t sessions, double reuse, struct figures *f,
		      struct diag *d)
{
	const int64_t bs = 16, out = 64;
	struct engine_config cfg = {
		.max_num_seqs = 256,
		.max_num_batched_tokens = 8192,
		.block_size = bs,
		.gpu_memory_utilization = 0.9,
		.enable_chunked_prefill = true,
		.enable_prefix_caching = true,
		.kv_cache_tokens = (sessions * len * 5 / 4 / bs + 64) * bs,
		.max_model_len = len + out,
	};
	int64_t per = calls / sessions;
	int64_t n_blocks = len / bs;
	int64_t shared = (int64_t)(reuse * (double)len) / bs; /* context blocks */
	uint64_t *hs = malloc((size_t)(sessions * n_blocks) * sizeof(*hs));
	bool *busy = calloc((size_t)sessions, sizeof(*busy));
	if (!hs || !busy) {
		free(hs);
		free(busy);
		return diag_set(d, DIAG_ENOMEM, "out of memory for %lld hashes",
				(long long)(sessions * n_blocks));
	}
	struct tally t = {.busy = busy};
	struct sim_perf perf = {.ctx = NULL, .step_ns = lin_step, .decode_run_ns = lin_run};
	struct res_sink sink = {.ctx = &t, .request = on_request, .itl_run = on_itl, .busy = on_busy};
	struct sim s;
	double cold = 0, warm = 0, in_submit = 0;
	int rc = sim_init(&s, &cfg, 1, perf, sink, NULL, NULL, d);
	struct sim_stats st0 = {0};
	struct tally t0 = {0};
	/* call j is session j % S's (j / S)-th; the first S are the cold ones */
	for (int64_t j = 0; rc == 0 && j < per * sessions; j++) {
		int64_t k = j / sessions, i = j % sessions;
		int64_t at = k * 100000000000LL + i * 1000000LL;
		double *clock = k == 0 ? &cold : &warm;
		if (j == sessions) { /* the cold calls end before the warm ones start */
			if ((rc = run_until(&s, at, &cold, d)) != 0)
				break;
			st0 = sim_get_stats(&s);
			t0 = t;
		}
		if ((rc = run_until(&s, at, clock, d)) != 0)
			break;
		if (busy[i]) {
			rc = diag_set(d, DIAG_EINTERNAL, "session %lld's call %lld still in flight after 100 s",
				      (long long)i, (long long)k - 1);
			break;
		}
		uint64_t *h = hs + i * n_blocks;
		make_hashes(h, n_blocks, shared, i, k);
		struct sim_call c = {.session = (uint64_t)i + 1, .seq = k, .prompt_tokens = len,
				     .output_tokens = out, .block_hashes = h, .n_hashes = n_blocks,
				     .borrow_hashes = true};
		busy[i] = true;
		double a = now_s();
		rc = sim_submit(&s, &c, at, d);
		double b = now_s() - a;
		*clock += b;
		if (k > 0)
			in_submit += b;
	}
	if (rc == 0)
		rc = run_until(&s, INT64_MAX, &warm, d);
	if (rc == 0)
		rc = sim_check_end(&s, d);
	struct sim_stats st = sim_get_stats(&s);
	sim_release(&s);
	free(hs);
	free(busy);
	if (rc != 0)
		return rc;
	int64_t n = t.calls - t0.calls;
	if (n < 1)
		return diag_set(d, DIAG_EINPUT, "no warm calls (need calls >= 2 x sessions)");
	f->calls = n;
	f->ns_per_call = warm * 1e9 / (double)n;
	f->submit_ns = in_submit * 1e9 / (double)n;
	f->hit = (double)(t.cached - t0.cached) / (double)(t.prompt - t0.prompt);
	f->events_per_call = (double)(st.events - st0.events) / (double)n;
	f->ns_per_event = warm * 1e9 / (double)(st.events - st0.events);
	f->cold_ns = cold * 1e9 / (double)t0.calls;
	return 0;
}

int main(int argc, char **argv)
{
	int64_t calls = 800, sessions = 8;
	double reuse = 0.95;
	int64_t lens[16] = {8192, 16384, 32768, 65536, 131072, 262144};
	int n_lens = 6;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
			calls = atoll(argv[++i]);
		} else if (strcmp(argv[i], "--sessions") == 0 && i + 1 < argc) {
			sessions = atoll(argv[++i]);
		} else if (strcmp(argv[i], "--reuse") == 0 && i + 1 < argc) {
			reuse = atof(argv[++i]);
		} else if (strcmp(argv[i], "--lengths") == 0 && i + 1 < argc) {
			n_lens = 0;
			for (char *p = argv[++i]; *p && n_lens < 16;) {
				lens[n_lens++] = strtoll(p, &p, 10);
				if (*p == ',')
					p++;
			}
		} else {
			fprintf(stderr, "usage: bench_prefix [--calls N] [--sessions S] [--reuse F] "
					"[--lengths L1,L2,...]\n");
			return 2;
		}
	}
	if (sessions < 1 || calls < 2 * sessions || !(reuse >= 0 && reuse < 1)) {
		fprintf(stderr, "bench_prefix: need 1 <= sessions, calls >= 2 x sessions and 0 <= reuse < 1\n");
		return 2;
	}
	struct diag d;
	diag_init(&d);
	printf("%10s %7s %8s %12s %10s %8s %10s %11s %12s %12s\n", "prompt", "calls", "hit",
	       "ns_per_call", "calls_per_s", "vs_first", "submit_ns", "events_call", "ns_per_event",
	       "cold_ns_call");
	double first = 0;
	/* one run of the first length, not shown, so that it does not also pay
	 * the process's first touches of its heap */
	for (int i = -1; i < n_lens; i++) {
		struct figures f = {0};
		int64_t len = lens[i < 0 ? 0 : i];
		if (len < 16 || run_length(len, calls, sessions, reuse, &f, &d) != 0) {
			fprintf(stderr, "bench_prefix: %s\n", d.msg[0] ? d.msg : "bad length");
			return 3;
		}
		if (i < 0)
			continue;
		if (i == 0)
			first = f.ns_per_call;
		printf("%10lld %7lld %8.4f %12.0f %10.0f %8.2f %10.0f %11.2f %12.0f %12.0f\n",
		       (long long)len, (long long)f.calls, f.hit, f.ns_per_call, 1e9 / f.ns_per_call,
		       f.ns_per_call / first, f.submit_ns, f.events_per_call, f.ns_per_event, f.cold_ns);
		fflush(stdout);
	}
	return 0;
}
