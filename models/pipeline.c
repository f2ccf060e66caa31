/* SPDX-License-Identifier: Apache-2.0
 * pipeline: micro-batches in flight across pipeline stages (see pipeline.h).
 *
 * Every quantity of a cycle is a function of the round trip R alone: the
 * busiest stage's M s is affine in R (the hand-offs, the host and the
 * lm-head do not move with the context), M host is constant.  So the cycle
 * is g(R) = max(R, a R + c, H), convex and piecewise affine in R, and R grows
 * monotonically over a decode run (longer contexts never make a step
 * shorter).  A run's sum cuts the steps where R crosses g's breakpoints
 * (binary search over the step index) and sums each piece as
 * alpha x (sum of R, perf_decode_run_ns: exact) + beta x steps.
 */
#include "models/pipeline.h"

#include <assert.h>
#include <math.h>

/* g(R) = max(R, a R + c, h) of one micro-batch's shape. */
struct cycle_fn {
	struct perf_model rt;  /* pm with its host in series: R */
	struct perf_batch b0;  /* the micro-batch's step (of a run: its first) */
	int m;                 /* micro-batches in flight */
	double a, c, h;
	double host, handoff, head;
};

static void cycle_fn_init(struct cycle_fn *f, const struct perf_model *pm, int m,
			  const struct perf_batch *b)
{
	assert(b->spec_seqs == 0);
	int p = pm->pp;
	f->m = m < 1 ? 1 : m > p ? p : m;
	f->b0 = *b;
	/* a micro-batch's next step is prepared only after its previous output
	 * returns: its own host work is in series with its GPU work (the
	 * overlap an engine gets comes from the other micro-batches, the
	 * M host term) */
	f->rt = *pm;
	f->rt.floors.host_overlap = false;
	f->host = pm->floors.host_ns;
	f->handoff = pm->ns_pp_fixed + pm->ns_pp_per_token * (double)b->new_tokens;
	f->head = fmax(pm->ns_per_seq * (double)b->seqs, pm->ns_lm_head);
	/* M s = M ((R - host - handoff - head) / P + head) = a R + c */
	f->a = (double)f->m / (double)p;
	f->c = (double)f->m * f->head - f->a * (f->host + f->handoff + f->head);
	f->h = (double)f->m * f->host;
}

/* The micro-batch's step i of a decode run (every sequence i tokens on). */
static struct perf_batch advanced(const struct cycle_fn *f, int64_t i)
{
	struct perf_batch b = f->b0;
	b.attn_pairs += i * b.seqs;
	b.kv_read_tokens += i * b.seqs;
	return b;
}

static double round_ns(const struct cycle_fn *f, int64_t i)
{
	struct perf_batch b = advanced(f, i);
	return perf_step_ns(&f->rt, &b);
}

/* Which of g's three pieces is largest at r: 0 (R), 1 (a R + c), 2 (h). */
static int piece_at(const struct cycle_fn *f, double r)
{
	double v[3] = { r, f->a * r + f->c, f->h };
	int best = 0;
	for (int i = 1; i < 3; i++)
		if (v[i] > v[best])
			best = i;
	return best;
}

static double g_of(const struct cycle_fn *f, double r)
{
	return fmax(fmax(r, f->a * r + f->c), f->h);
}

double pipeline_batch_ns(const struct perf_model *pm, int m, const struct perf_batch *b)
{
	if (b->new_tokens <= 0)
		return 0;
	struct cycle_fn f;
	cycle_fn_init(&f, pm, m, b);
	return g_of(&f, round_ns(&f, 0));
}

void pipeline_decode_step(const struct perf_model *pm, int32_t seqs, int64_t context,
			  struct pipeline_step *out)
{
	if (seqs < 1)
		seqs = 1;
	int m = seqs < pm->pp ? (int)seqs : pm->pp;
	int32_t b = (int32_t)((seqs + m - 1) / m);
	struct perf_batch pb = perf_decode_batch(b, context);
	struct cycle_fn f;
	cycle_fn_init(&f, pm, m, &pb);
	double r = round_ns(&f, 0);
	double c = g_of(&f, r);
	double s = (r - f.host - f.handoff - f.head) / pm->pp + f.head;
	*out = (struct pipeline_step){
		.stages = pm->pp,
		.micro_batches = f.m,
		.micro_seqs = b,
		.round_ns = r,
		.stage_ns = s,
		.host_ns = f.host,
		.handoff_ns = f.handoff,
		.head_ns = f.head,
		.cycle_ns = c,
		.tok_s = c > 0 ? (double)seqs / (c * 1e-9) : 0,
		.tok_s_per_seq = c > 0 ? 1e9 / c : 0,
		.bubble = c > 0 ? fmax(0, 1 - f.m * (r - f.host - f.handoff) / (pm->pp * c)) : 0,
	};
}

/* The first step index in [lo, hi] whose R is >= r (hi when none). */
static int64_t first_at_least(const struct cycle_fn *f, int64_t lo, int64_t hi, double r)
{
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (round_ns(f, mid) >= r)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static double run_sum(const struct cycle_fn *f, int64_t k)
{
	/* g's breakpoints in R, ascending */
	double br[3];
	int nb = 0;
	if (f->a < 1)
		br[nb++] = f->c / (1 - f->a);
	br[nb++] = f->h;
	if (f->a > 0)
		br[nb++] = (f->h - f->c) / f->a;
	for (int i = 1; i < nb; i++)
		for (int j = i; j > 0 && br[j] < br[j - 1]; j--) {
			double t = br[j];
			br[j] = br[j - 1];
			br[j - 1] = t;
		}
	/* step-index cuts where R reaches each breakpoint */
	int64_t cut[5];
	int nc = 0;
	cut[nc++] = 0;
	for (int i = 0; i < nb; i++) {
		if (!isfinite(br[i]))
			continue;
		int64_t j = first_at_least(f, cut[nc - 1], k, br[i]);
		if (j > cut[nc - 1] && j < k)
			cut[nc++] = j;
	}
	cut[nc++] = k;
	double sum = 0;
	for (int i = 0; i + 1 < nc; i++) {
		int64_t lo = cut[i], n = cut[i + 1] - lo;
		if (n <= 0)
			continue;
		/* R lies between two breakpoints over the whole piece: one
		 * affine piece of g applies; take it where R is largest, as the
		 * first step may sit on the breakpoint below */
		double r_hi = round_ns(f, lo + n - 1);
		struct perf_batch b = advanced(f, lo);
		switch (piece_at(f, r_hi)) {
		case 0:
			sum += perf_decode_run_ns(&f->rt, &b, n);
			break;
		case 1:
			sum += f->a * perf_decode_run_ns(&f->rt, &b, n) + f->c * (double)n;
			break;
		default:
			sum += f->h * (double)n;
			break;
		}
	}
	return sum;
}

double pipeline_batch_run_ns(const struct perf_model *pm, int m, const struct perf_batch *b0,
			     int64_t k)
{
	if (k <= 0 || b0->new_tokens <= 0)
		return 0;
	struct cycle_fn f;
	cycle_fn_init(&f, pm, m, b0);
	return run_sum(&f, k);
}

double pipeline_decode_run_ns(const struct perf_model *pm, int32_t seqs, int64_t context,
			      int64_t k)
{
	if (k <= 0 || seqs < 1)
		return 0;
	int m = seqs < pm->pp ? (int)seqs : pm->pp;
	struct perf_batch b = perf_decode_batch((int32_t)((seqs + m - 1) / m), context);
	return pipeline_batch_run_ns(pm, m, &b, k);
}
