/* SPDX-License-Identifier: Apache-2.0
 * synth_bench: benchmark workloads shaped like `vllm bench serve` with its
 * random dataset, so a simulated deployment can be set beside published
 * benchmark numbers.
 *
 * Prompt i is [shared prefix (shared_prefix_len tokens, the same content for
 * every prompt)] + [input_len tokens of content unique to the prompt], so
 * the only cache sharing is the prefix, as with vLLM's random token ids.
 * Lengths: `fixed` uses input_len and output_len exactly; `random` draws
 * each uniformly from the integers in [floor(len * (1 - r)),
 * ceil(len * (1 + r))] (r = range_ratio, 0 <= r < 1; at least 1 token).
 *
 * Arrivals, one of:
 *  - request_rate R (requests/s; infinity = all at t = 0): open-loop
 *    one-call sessions; the first at t = 0, then gaps drawn from a gamma
 *    distribution with shape = burstiness and mean 1/R (burstiness 1 is a
 *    Poisson process; below 1 is burstier), as vLLM does.
 *  - max_concurrency C: C closed-loop clients starting at t = 0, each
 *    sending its share of the prompts back to back (gap 0): prompt i goes to
 *    client i mod C.  Replay issues a client's next prompt when its previous
 *    one completes, so exactly C requests are in flight until the clients
 *    run out.  (vLLM's client hands the next prompt to whichever slot frees
 *    first; the static split differs only in which prompt runs where.)
 *
 * Same options and seed, same sessions.  Lengths are drawn in prompt order
 * first, so a prompt's lengths do not depend on the arrival mode.
 */
#ifndef TRACES_SYNTH_BENCH_H
#define TRACES_SYNTH_BENCH_H

#include <stdbool.h>
#include <stdint.h>

struct diag;
struct trace_session;
struct synth_bench;

#define SYNTH_BENCH_MAX_PROMPTS 10000000
#define SYNTH_BENCH_MAX_LEN 100000000

enum synth_bench_kind { SYNTH_BENCH_RANDOM, SYNTH_BENCH_FIXED };

struct synth_bench_opts {
	enum synth_bench_kind kind;
	int64_t input_len;         /* 1 .. SYNTH_BENCH_MAX_LEN */
	int64_t output_len;        /* 1 .. SYNTH_BENCH_MAX_LEN */
	double range_ratio;        /* random only: 0 <= r < 1 */
	int64_t num_prompts;       /* 1 .. SYNTH_BENCH_MAX_PROMPTS */
	double request_rate;       /* > 0 (INFINITY allowed); used when max_concurrency == 0 */
	double burstiness;         /* > 0; 1 = Poisson */
	int32_t max_concurrency;   /* 0: open loop at request_rate; else 1 .. 1000000 */
	int64_t shared_prefix_len; /* 0: none */
	uint64_t seed;
};

struct synth_bench_stats {
	int64_t requests;
	int64_t sessions;
	int64_t input_tokens;      /* prefix included */
	int64_t output_tokens;
	double last_arrival_s;     /* open loop: arrival of the last request */
};

/* Check options; DIAG_EINPUT naming the option and its expected range. */
int synth_bench_check(const struct synth_bench_opts *o, struct diag *d);

/* 0, DIAG_EINPUT (bad options) or DIAG_ENOMEM. */
int synth_bench_new(struct synth_bench **out, const struct synth_bench_opts *o, struct diag *d);

/* Next session in start order: 1 and a heap session (trace_session_free),
 * 0 at the end, or a negative DIAG code. */
int synth_bench_next(struct synth_bench *b, struct trace_session **out, struct diag *d);

const struct synth_bench_stats *synth_bench_stats(const struct synth_bench *b);

/* Accepts NULL. */
void synth_bench_free(struct synth_bench *b);

/* The whole workload into a canonical trace at `path`, all-or-nothing. */
int synth_bench_write(const struct synth_bench_opts *o, const char *path, bool gzip,
		      struct synth_bench_stats *stats, struct diag *d);

#endif
