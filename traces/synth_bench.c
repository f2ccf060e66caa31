/* SPDX-License-Identifier: Apache-2.0
 * synth_bench: vllm-bench-serve-like workloads (see synth_bench.h).
 *
 * All prompt lengths are drawn up front (8 bytes per prompt, at most
 * SYNTH_BENCH_MAX_PROMPTS prompts); arrivals are drawn as sessions are
 * produced.  Open loop yields one one-call session per prompt; fixed
 * concurrency yields one session per client, each holding its prompts.
 */
#include "traces/synth_bench.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/vec.h"
#include "traces/trace.h"
#include "traces/writer.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED_BENCH 0xbe4c85e7be4c85e7ULL
#define SEED_UNIQUE 0x0417be4c0417be4cULL
#define MAX_CLIENTS 1000000
#define MAX_CALLS_PER_CLIENT (1 << 20)

struct synth_bench {
	struct synth_bench_opts o;
	gsl_rng *rng;
	int32_t *in_tokens, *out_tokens;
	int64_t next;             /* next prompt (open loop) or client (concurrency) */
	double t_s;               /* arrival of the next open-loop prompt */
	uint64_t prefix_content;
	struct vec calls, segs;   /* scratch for one session */
	struct synth_bench_stats st;
};

int synth_bench_check(const struct synth_bench_opts *o, struct diag *d)
{
	if (o->input_len < 1 || o->input_len > SYNTH_BENCH_MAX_LEN)
		return diag_set(d, DIAG_EINPUT, "--input-len %lld out of range (expected 1..%d)",
				(long long)o->input_len, SYNTH_BENCH_MAX_LEN);
	if (o->output_len < 1 || o->output_len > SYNTH_BENCH_MAX_LEN)
		return diag_set(d, DIAG_EINPUT, "--output-len %lld out of range (expected 1..%d)",
				(long long)o->output_len, SYNTH_BENCH_MAX_LEN);
	if (o->kind == SYNTH_BENCH_FIXED && o->range_ratio != 0)
		return diag_set(d, DIAG_EINPUT, "--range-ratio applies to the random workload only "
				"(expected no --range-ratio with --workload fixed)");
	if (!(o->range_ratio >= 0 && o->range_ratio < 1))
		return diag_set(d, DIAG_EINPUT, "--range-ratio %g out of range (expected 0 <= r < 1)",
				o->range_ratio);
	if (o->num_prompts < 1 || o->num_prompts > SYNTH_BENCH_MAX_PROMPTS)
		return diag_set(d, DIAG_EINPUT, "--num-prompts %lld out of range (expected 1..%d)",
				(long long)o->num_prompts, SYNTH_BENCH_MAX_PROMPTS);
	if (o->shared_prefix_len < 0 || o->shared_prefix_len > SYNTH_BENCH_MAX_LEN)
		return diag_set(d, DIAG_EINPUT, "--shared-prefix %lld out of range (expected 0..%d)",
				(long long)o->shared_prefix_len, SYNTH_BENCH_MAX_LEN);
	if (o->max_concurrency < 0 || o->max_concurrency > MAX_CLIENTS)
		return diag_set(d, DIAG_EINPUT, "--max-concurrency %d out of range (expected 1..%d)",
				(int)o->max_concurrency, MAX_CLIENTS);
	if (o->max_concurrency > 0) {
		int64_t per = (o->num_prompts + o->max_concurrency - 1) / o->max_concurrency;
		if (per > MAX_CALLS_PER_CLIENT)
			return diag_set(d, DIAG_EINPUT, "%lld prompts per client at --max-concurrency %d "
					"(expected at most %d: raise the concurrency)", (long long)per,
					(int)o->max_concurrency, MAX_CALLS_PER_CLIENT);
		return 0;
	}
	if (!(o->request_rate > 0))
		return diag_set(d, DIAG_EINPUT, "--request-rate %g out of range (expected > 0 or inf)",
				o->request_rate);
	if (!(o->burstiness > 0) || !isfinite(o->burstiness))
		return diag_set(d, DIAG_EINPUT, "--burstiness %g out of range (expected > 0)",
				o->burstiness);
	return 0;
}

static int32_t draw_len(gsl_rng *r, const struct synth_bench_opts *o, int64_t len)
{
	if (o->kind == SYNTH_BENCH_FIXED || o->range_ratio == 0)
		return (int32_t)len;
	int64_t lo = (int64_t)floor((double)len * (1 - o->range_ratio));
	int64_t hi = (int64_t)ceil((double)len * (1 + o->range_ratio));
	if (lo < 1)
		lo = 1;
	if (hi > SYNTH_BENCH_MAX_LEN)
		hi = SYNTH_BENCH_MAX_LEN;
	return (int32_t)(lo + (int64_t)gsl_rng_uniform_int(r, (unsigned long)(hi - lo + 1)));
}

int synth_bench_new(struct synth_bench **out, const struct synth_bench_opts *o, struct diag *d)
{
	*out = NULL;
	int rc = synth_bench_check(o, d);
	if (rc)
		return rc;
	struct synth_bench *b = calloc(1, sizeof(*b));
	if (!b)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	b->o = *o;
	b->rng = gsl_rng_alloc(gsl_rng_mt19937);
	b->in_tokens = malloc((size_t)o->num_prompts * sizeof(*b->in_tokens));
	b->out_tokens = malloc((size_t)o->num_prompts * sizeof(*b->out_tokens));
	vec_init(&b->calls, sizeof(struct trace_call), MAX_CALLS_PER_CLIENT);
	vec_init(&b->segs, sizeof(struct trace_seg), 2 * (size_t)MAX_CALLS_PER_CLIENT);
	if (!b->rng || !b->in_tokens || !b->out_tokens) {
		synth_bench_free(b);
		return diag_set(d, DIAG_ENOMEM, "out of memory for %lld prompts",
				(long long)o->num_prompts);
	}
	uint64_t h = hash_combine(SEED_BENCH, o->seed);
	gsl_rng_set(b->rng, (unsigned long)(h ^ (h >> 32)));
	for (int64_t i = 0; i < o->num_prompts; i++) {
		b->in_tokens[i] = draw_len(b->rng, o, o->input_len);
		b->out_tokens[i] = draw_len(b->rng, o, o->output_len);
	}
	if (o->shared_prefix_len > 0)
		b->prefix_content = trace_content_str("bench/shared-prefix", o->shared_prefix_len);
	*out = b;
	return 0;
}

/* Append prompt i as one call (gap 0, no extends) to the scratch session. */
static int add_prompt(struct synth_bench *b, int64_t i)
{
	struct trace_call *c = vec_push(&b->calls);
	struct trace_seg *s = c ? vec_push(&b->segs) : NULL;
	if (!s)
		return DIAG_ENOMEM;
	c->seq = (int64_t)b->calls.len - 1;
	c->retry_of = -1;
	c->output_tokens = b->out_tokens[i];
	c->prompt_tokens = b->in_tokens[i] + b->o.shared_prefix_len;
	if (b->o.shared_prefix_len > 0) {
		s->content = b->prefix_content;
		s->tokens = b->o.shared_prefix_len;
		if (!(s = vec_push(&b->segs)))
			return DIAG_ENOMEM;
	}
	s->content = hash_combine(hash_combine(SEED_UNIQUE, b->o.seed), (uint64_t)i);
	s->tokens = b->in_tokens[i];
	c->n_segs = b->o.shared_prefix_len > 0 ? 2 : 1;
	b->st.requests++;
	b->st.input_tokens += c->prompt_tokens;
	b->st.output_tokens += c->output_tokens;
	return 0;
}

int synth_bench_next(struct synth_bench *b, struct trace_session **out, struct diag *d)
{
	*out = NULL;
	const struct synth_bench_opts *o = &b->o;
	bool open_loop = o->max_concurrency == 0;
	int64_t n_sessions = open_loop ? o->num_prompts
			   : (o->num_prompts < o->max_concurrency ? o->num_prompts : o->max_concurrency);
	if (b->next >= n_sessions)
		return 0;
	vec_clear(&b->calls);
	vec_clear(&b->segs);
	char name[48];
	struct trace_session s = {.open_loop = open_loop};
	int rc = 0;
	if (open_loop) {
		snprintf(name, sizeof(name), "bench/r%lld", (long long)b->next);
		s.t_s = b->t_s;
		rc = add_prompt(b, b->next);
		b->st.last_arrival_s = b->t_s;
		if (isfinite(o->request_rate))
			b->t_s += gsl_ran_gamma(b->rng, o->burstiness,
						1.0 / (o->request_rate * o->burstiness));
	} else {
		snprintf(name, sizeof(name), "bench/c%lld", (long long)b->next);
		for (int64_t i = b->next; i < o->num_prompts && rc == 0; i += o->max_concurrency)
			rc = add_prompt(b, i);
	}
	if (rc)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	s.id = trace_id_hash(name);
	s.calls = b->calls.data;
	s.n_calls = b->calls.len;
	struct trace_seg *segs = b->segs.data;
	for (size_t i = 0, k = 0; i < s.n_calls; i++) {
		s.calls[i].segs = segs + k;
		k += s.calls[i].n_segs;
	}
	if (trace_session_clone(out, &s) != 0)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	b->next++;
	b->st.sessions++;
	return 1;
}

const struct synth_bench_stats *synth_bench_stats(const struct synth_bench *b)
{
	return &b->st;
}

void synth_bench_free(struct synth_bench *b)
{
	if (!b)
		return;
	if (b->rng)
		gsl_rng_free(b->rng);
	free(b->in_tokens);
	free(b->out_tokens);
	vec_release(&b->calls);
	vec_release(&b->segs);
	free(b);
}

static int bench_source(void *ctx, struct trace_session **out, struct diag *d)
{
	return synth_bench_next(ctx, out, d);
}

int synth_bench_write(const struct synth_bench_opts *o, const char *path, bool gzip,
		      struct synth_bench_stats *stats, struct diag *d)
{
	struct synth_bench *b = NULL;
	int rc = synth_bench_new(&b, o, d);
	if (rc)
		return rc;
	char source[256];
	snprintf(source, sizeof(source), "agentcap synth --workload %s: %lld prompts, %s, seed %llu",
		 o->kind == SYNTH_BENCH_FIXED ? "fixed" : "random", (long long)o->num_prompts,
		 o->max_concurrency ? "fixed concurrency" : "open loop", (unsigned long long)o->seed);
	rc = trace_writer_drain(path, gzip, source, bench_source, b, d);
	if (stats)
		*stats = b->st;
	synth_bench_free(b);
	return rc;
}
