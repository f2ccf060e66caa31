/* SPDX-License-Identifier: Apache-2.0
 * bench_prefix: what one call costs the simulator as its prompt grows at a
 * fixed prefix reuse.
 *
 *     bench_prefix [--calls N] [--sessions S] [--reuse F] [--lengths L1,L2,...]
 *
 * For each prompt length L (default 8K to 256K tokens, doubling), S agent
 * sessions (default 8) each issue N/S calls (default N = 400) of L prompt
 * tokens and 64 output tokens, one every 100 simulated seconds: the first
 * F*L tokens (default F = 0.95) are the session's context, the same in every
 * call, and the rest is new in each call, so after a session's first call
 * a fraction F of every prompt is a prefix-cache hit.  One replica with a
 * KV cache of 1.25 x S x L tokens (no eviction of live contexts) and a
 * linear step-time model (the model's speed is not what is measured).
 * Hashes are made before the clock starts; the clock covers sim_submit
 * (which copies a call's block hashes) and the event loop to the end.
 * Calls stream in as a replay's do (each is submitted when the simulation
 * reaches its arrival), so only the calls in flight are held.
 * Prints, per length: calls, the measured hit rate (each session's first
 * call is cold, so it is a little under F), CPU ns per call, calls per CPU
 * second, the ratio of ns per call to the shortest length's, and the part
 * of ns per call spent in sim_submit (copying the call's block hashes).
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
};

static void on_request(void *ctx, const struct res_request *r)
{
	struct tally *t = ctx;
	t->calls++;
	t->prompt += r->prompt_tokens;
	t->cached += r->cached_prompt_tokens;
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

/* One length: 0 and the figures in *ns_per_call and *hit, or an error. */
static int run_length(int64_t len, int64_t calls, int64_t sessions, double reuse, double *ns_per_call,
		      double *submit_ns, double *hit, struct diag *d)
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
	uint64_t *hs = malloc((size_t)(per * sessions * n_blocks) * sizeof(*hs));
	if (!hs)
		return diag_set(d, DIAG_ENOMEM, "out of memory for %lld hashes",
				(long long)(per * sessions * n_blocks));
	for (int64_t s = 0; s < sessions; s++)
		for (int64_t k = 0; k < per; k++) {
			uint64_t *h = hs + (s * per + k) * n_blocks, x = 1;
			for (int64_t j = 0; j < n_blocks; j++) {
				x = hash_combine(x, j < shared ? 1000 + (uint64_t)s
							       : hash_combine((uint64_t)s, (uint64_t)k));
				h[j] = x;
			}
		}
	struct tally t = {0};
	struct sim_perf perf = {.ctx = NULL, .step_ns = lin_step, .decode_run_ns = lin_run};
	struct res_sink sink = {.ctx = &t, .request = on_request, .itl_run = on_itl, .busy = on_busy};
	struct sim s;
	double t0 = now_s(), in_submit = 0;
	int rc = sim_init(&s, &cfg, 1, perf, sink, NULL, NULL, d);
	/* calls stream in as a replay streams its trace: each is submitted
	 * when the simulation reaches its arrival, so only the calls in flight
	 * are held (call j is session j % S's (j / S)-th) */
	for (int64_t j = 0; rc == 0 && j < per * sessions;) {
		int64_t k = j / sessions, i = j % sessions;
		int64_t at = k * 100000000000LL + i * 1000000LL;
		if (sim_next_time(&s) < at) {
			rc = sim_step(&s, d) < 0 ? d->code : 0;
			continue;
		}
		struct sim_call c = {.session = (uint64_t)i + 1, .seq = k, .prompt_tokens = len,
				     .output_tokens = out, .block_hashes = hs + (i * per + k) * n_blocks,
				     .n_hashes = n_blocks};
		double a = now_s();
		rc = sim_submit(&s, &c, at, d);
		in_submit += now_s() - a;
		j++;
	}
	while (rc == 0 && (rc = sim_step(&s, d)) == 1)
		rc = 0;
	if (rc == 0)
		rc = sim_check_end(&s, d);
	double dt = now_s() - t0;
	sim_release(&s);
	free(hs);
	if (rc != 0)
		return rc;
	*ns_per_call = dt * 1e9 / (double)t.calls;
	*submit_ns = in_submit * 1e9 / (double)t.calls;
	*hit = t.prompt ? (double)t.cached / (double)t.prompt : 0.0;
	return 0;
}

int main(int argc, char **argv)
{
	int64_t calls = 400, sessions = 8;
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
	if (sessions < 1 || calls < sessions || !(reuse >= 0 && reuse < 1)) {
		fprintf(stderr, "bench_prefix: need 1 <= sessions <= calls and 0 <= reuse < 1\n");
		return 2;
	}
	struct diag d;
	diag_init(&d);
	printf("%10s %7s %8s %12s %10s %8s %10s\n", "prompt", "calls", "hit", "ns_per_call", "calls_per_s",
	       "vs_first", "submit_ns");
	double first = 0;
	for (int i = 0; i < n_lens; i++) {
		double ns = 0, sub = 0, hit = 0;
		if (lens[i] < 16 || run_length(lens[i], calls, sessions, reuse, &ns, &sub, &hit, &d) != 0) {
			fprintf(stderr, "bench_prefix: %s\n", d.msg[0] ? d.msg : "bad length");
			return 3;
		}
		if (i == 0)
			first = ns;
		printf("%10lld %7lld %8.4f %12.0f %10.0f %8.2f %10.0f\n", (long long)lens[i],
		       (long long)(calls / sessions * sessions), hit, ns, 1e9 / ns, ns / first, sub);
		fflush(stdout);
	}
	return 0;
}
