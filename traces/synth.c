/* SPDX-License-Identifier: Apache-2.0
 * synth: the synthetic team generator (see synth.h and docs/synth-profile.md).
 *
 * Structure: a heap of engineers keyed by the start time of each one's next
 * session.  An engineer whose current day is used up generates its next
 * active day (all root and subagent sessions of it, sorted by start), so the
 * merged stream comes out in start order.  A session is assembled in a
 * builder (growable arrays of calls and segments) and copied into one heap
 * block with trace_session_clone when finished.
 *
 * Randomness: one gsl_rng_mt19937, reseeded from (seed, engineer, day) at
 * the start of each engineer-day and from (seed, engineer) for an
 * engineer's fixed traits, so adding engineers or days never changes what
 * the others do (an engineer's day also sees a task re-attempt carried over
 * from their previous day).  Every draw goes through a GSL distribution.
 *
 * Invariants kept by construction: a session's first call does not extend;
 * every extends call appends at least one segment; a call's prompt plus its
 * output stays below the context window (compaction happens first); every
 * call but a compaction has a tool outcome.
 */
#include "traces/synth.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/vec.h"
#include "traces/synth_profile.h"
#include "traces/trace.h"
#include "traces/writer.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_S 86400.0
#define NAME_MAX_LEN 128

/* Seeds that separate the random streams and the content-id families. */
#define SEED_TRAITS 0x7a1b5e11c0ffee01ULL
#define SEED_DAY 0x5eed0fda75eed0f1ULL
#define SEED_REPOS 0x4e905eed4e905eedULL
#define SEED_BRIEF 0xb41efb41efb41ef1ULL

/* A session under construction.  ctx is the full context after the last
 * call (its prompt, extends chain expanded, then its output), which a
 * compaction or a cache-bust rebuilds from; the context starts with a base
 * of `base_len` segments (harness, repository context, environment) whose
 * last one, the environment, is the volatile one a cache-bust changes. */
struct builder {
	struct vec calls;   /* struct trace_call; segs set when finished */
	struct vec segs;    /* struct trace_seg, all calls' segments */
	struct vec segoff;  /* size_t: first segment of each call */
	struct vec ctx;     /* struct trace_seg */
	size_t base_len;
	char name[NAME_MAX_LEN];
	uint64_t id, parent;
	double t_s;         /* start of the first call */
	double end_s;       /* nominal end of the last call */
	int64_t prompt_tokens, last_out;
	uint64_t uniq;      /* counter for this session's unique contents */
	int32_t subagents;  /* spawned so far */
};

/* A rejected task that the engineer tries again in a later session. */
struct redo {
	bool have;
	char task_name[NAME_MAX_LEN];
	uint64_t brief_content;
	int64_t brief_tokens;
	double steps_intrinsic;
	int32_t repo;
	int32_t attempt;
};

struct eng {
	int32_t idx;
	uint64_t id;
	int32_t zone, arch, home_repo;
	double day_start_h, day_length_h;
	double base_s;          /* trace time of local midnight of the engineer's day 0 */
	int32_t next_day;
	double last_start_s;
	struct vec day;         /* struct trace_session *: the current day, sorted */
	size_t head;
	struct redo redo;
};

struct synth_team {
	struct synth_profile p;
	struct synth_team_opts o;
	gsl_rng *rng;
	gsl_ran_discrete_t *pick_zone, *pick_arch;
	double p_first_fail;
	int64_t step_cap;       /* most tokens one step appends (synth_profile_step_cap) */
	uint64_t sys_content, tools_content;
	uint64_t *repo_content;
	int64_t *repo_tokens;
	struct eng *eng;
	int32_t *heap;          /* engineer indices, min-heap on (next start, index) */
	int32_t heap_len;
	struct builder root, sub;
	struct vec pend;        /* struct trace_seg: segments the next call appends */
	struct vec fresh;       /* struct trace_seg: scratch for a rebuilt prompt */
	struct synth_team_stats st;
	int err;
};

/* ---- distributions ------------------------------------------------------ */

static double draw(gsl_rng *r, const struct synth_dist *x, double scale)
{
	double v = 0;
	switch (x->kind) {
	case SYNTH_DIST_FIXED:
		v = x->p1;
		break;
	case SYNTH_DIST_UNIFORM:
		v = x->p1 < x->p2 ? gsl_ran_flat(r, x->p1, x->p2) : x->p1;
		break;
	case SYNTH_DIST_NORMAL:
		v = x->p1 + (x->p2 > 0 ? gsl_ran_gaussian(r, x->p2) : 0);
		break;
	case SYNTH_DIST_LOGNORMAL:
		v = gsl_ran_lognormal(r, log(x->p1), x->p2);
		break;
	case SYNTH_DIST_GAMMA:
		v = gsl_ran_gamma(r, x->p2, x->p1 / x->p2);
		break;
	case SYNTH_DIST_EXPONENTIAL:
		v = gsl_ran_exponential(r, x->p1);
		break;
	case SYNTH_DIST_GEOMETRIC:
		v = x->p1 > 1 ? (double)gsl_ran_geometric(r, 1.0 / x->p1) : 1;
		break;
	case SYNTH_DIST_POISSON:
		v = (double)gsl_ran_poisson(r, x->p1);
		break;
	}
	v *= scale;
	if (!(v >= x->min))
		v = x->min;
	if (v > x->max)
		v = x->max;
	return v;
}

static int64_t draw_count(gsl_rng *r, const struct synth_dist *x, double scale)
{
	int64_t n = llround(draw(r, x, scale));
	return n < 1 ? 1 : n;
}

static bool coin(gsl_rng *r, double p)
{
	return p > 0 && gsl_ran_bernoulli(r, p) == 1;
}

static void reseed(gsl_rng *r, uint64_t seed, uint64_t a, uint64_t b, uint64_t family)
{
	uint64_t h = hash_combine(hash_combine(hash_combine(family, seed), a), b);
	gsl_rng_set(r, (unsigned long)(h ^ (h >> 32)));
}

double synth_first_failure_probability(const struct synth_profile *p)
{
	/* A step's attempt j >= 2 happens with probability p1 q^(j-2) and fails
	 * with q; per step, failures = p1 S(M) and calls = 1 + p1 S(M-1), with
	 * S(k) = 1 + q + ... + q^(k-1).  Solve failures / calls = f for p1. */
	double f = p->failure_rate, q = p->retry_failure_probability;
	double s_m = 0, s_m1 = 0, qk = 1;
	for (int k = 0; k < p->max_attempts; k++) {
		s_m += qk;
		if (k < p->max_attempts - 1)
			s_m1 += qk;
		qk *= q;
	}
	double den = s_m - f * s_m1;
	return den > 0 ? f / den : 2.0;
}

/* ---- building one session ---------------------------------------------- */

/* Ids are short ("synth/e12/d3/s4/t1/r1"); NAME_MAX_LEN leaves ample room. */
__attribute__((format(printf, 2, 3)))
static void name_fmt(char out[NAME_MAX_LEN], const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, NAME_MAX_LEN, fmt, ap);
	va_end(ap);
	assert(n > 0 && n < NAME_MAX_LEN);
	(void)n;
}

static void builder_init(struct builder *b)
{
	memset(b, 0, sizeof(*b));
	vec_init(&b->calls, sizeof(struct trace_call), 1u << 20);
	vec_init(&b->segs, sizeof(struct trace_seg), 1u << 24);
	vec_init(&b->segoff, sizeof(size_t), 1u << 20);
	vec_init(&b->ctx, sizeof(struct trace_seg), 1u << 24);
}

static void builder_release(struct builder *b)
{
	vec_release(&b->calls);
	vec_release(&b->segs);
	vec_release(&b->segoff);
	vec_release(&b->ctx);
}

static void builder_start(struct builder *b, const char *name, uint64_t parent, double t_s)
{
	vec_clear(&b->calls);
	vec_clear(&b->segs);
	vec_clear(&b->segoff);
	vec_clear(&b->ctx);
	b->base_len = 0;
	name_fmt(b->name, "%s", name);
	b->id = trace_id_hash(name);
	b->parent = parent;
	b->t_s = t_s;
	b->end_s = t_s;
	b->prompt_tokens = 0;
	b->last_out = 0;
	b->uniq = 0;
	b->subagents = 0;
}

static uint64_t uniq_content(struct builder *b)
{
	return hash_combine(b->id, ++b->uniq);
}

static int push_seg(struct vec *v, uint64_t content, int64_t tokens)
{
	struct trace_seg *s = vec_push(v);
	if (!s)
		return DIAG_ENOMEM;
	s->content = content;
	s->tokens = tokens;
	return 0;
}

/* The output kind of call seq of session id: drawn by the profile's shares
 * from a hash of the two, not from the team's random stream, so that a
 * profile with kinds makes the same trace as one without, kinds aside. */
static int32_t kind_of(const struct synth_profile *p, uint64_t id, int64_t seq)
{
	double u = (double)(hash_mix64(id ^ (0xD6E8FEB86659FD93ULL * (uint64_t)(seq + 1))) >> 11) *
		   0x1.0p-53;
	double acc = 0;
	for (int k = OUT_KIND_CODE; k < OUT_KINDS; k++) {
		acc += p->kind_share[k];
		if (u < acc)
			return k;
	}
	return OUT_KIND_UNKNOWN;
}

/* Append one call with segments segs[0..n) to the builder. */
static int add_call(struct synth_team *t, struct builder *b, bool extends, const struct trace_seg *segs,
		    size_t n, int64_t out, enum trace_tool tool, int64_t retry_of, uint64_t task,
		    double gap_s, int64_t *seq)
{
	size_t *off = vec_push(&b->segoff);
	struct trace_call *c = off ? vec_push(&b->calls) : NULL;
	if (!c || vec_append(&b->segs, segs, n) != 0)
		return DIAG_ENOMEM;
	*off = b->segs.len - n;
	int64_t own = 0;
	for (size_t i = 0; i < n; i++)
		own += segs[i].tokens;
	c->seq = (int64_t)b->calls.len - 1;
	c->task = task;
	c->gap_s = c->seq == 0 ? 0 : gap_s;
	c->extends_prev = extends;
	c->n_segs = n;
	c->prompt_tokens = extends ? b->prompt_tokens + b->last_out + own : own;
	c->output_tokens = out;
	c->tool = tool;
	c->retry_of = retry_of;
	c->accepted = TRACE_ACCEPT_UNKNOWN;
	c->kind = kind_of(&t->p, b->id, c->seq);
	if (!extends)
		vec_clear(&b->ctx);
	if (vec_append(&b->ctx, segs, n) != 0 ||
	    push_seg(&b->ctx, trace_output_content(b->id, c->seq), out) != 0)
		return DIAG_ENOMEM;
	double start = c->seq == 0 ? b->t_s : b->end_s + gap_s;
	b->end_s = start + (double)out / t->p.decode_tokens_per_s;
	b->prompt_tokens = c->prompt_tokens;
	b->last_out = out;
	t->st.calls++;
	t->st.prompt_tokens += c->prompt_tokens;
	t->st.output_tokens += out;
	if (tool == TRACE_TOOL_FAIL)
		t->st.tool_failures++;
	if (retry_of >= 0)
		t->st.retries++;
	*seq = c->seq;
	return 0;
}

/* Start t->pend with the base of a fresh session: the harness shared by the
 * team, the repository context (repo_tokens 0: none) and the session's
 * environment block (working directory, date, status: volatile). */
static int pend_base(struct synth_team *t, struct builder *b, uint64_t repo_content,
		     int64_t repo_tokens)
{
	vec_clear(&t->pend);
	int rc = push_seg(&t->pend, t->sys_content, t->p.system_prompt_tokens);
	if (rc == 0 && t->p.tool_definitions_tokens > 0)
		rc = push_seg(&t->pend, t->tools_content, t->p.tool_definitions_tokens);
	if (rc == 0 && repo_tokens > 0)
		rc = push_seg(&t->pend, repo_content, repo_tokens);
	if (rc == 0)
		rc = push_seg(&t->pend, uniq_content(b), t->p.volatile_tokens);
	b->base_len = t->pend.len;
	return rc;
}

/* Append to `fresh` the most recent whole segments of ctx[from..to) that
 * fit in `budget` tokens, in their original order. */
static int keep_recent(struct vec *fresh, const struct vec *ctx, size_t from, size_t to,
		       int64_t budget)
{
	const struct trace_seg *c = ctx->data;
	size_t first = to;
	while (first > from && c[first - 1].tokens <= budget) {
		budget -= c[first - 1].tokens;
		first--;
	}
	return vec_append(fresh, c + first, to - first);
}

/* Issue the next call of b: it appends t->pend.  The first call of a session
 * takes t->pend as its whole prompt.  A call that would pass the compaction
 * threshold is preceded by a compaction call (the agent asks for a summary)
 * and starts afresh from the session's base, the summary (the compaction
 * call's output, now at a new position) and the most recent context kept
 * verbatim (harness.kept_tokens: files read again, recent messages).
 * Otherwise, with cache.bust_probability, the environment block changes:
 * the prompt keeps every segment but that one, and everything after it must
 * be computed again although it is not new. */
static int issue(struct synth_team *t, struct builder *b, int64_t out, enum trace_tool tool,
		 int64_t retry_of, uint64_t task, double gap_s, int64_t *seq)
{
	const struct synth_profile *p = &t->p;
	const struct trace_seg *pend = t->pend.data;
	size_t npend = t->pend.len;
	if (b->calls.len == 0)
		return add_call(t, b, false, pend, npend, out, tool, retry_of, task, 0, seq);
	int64_t add = 0;
	for (size_t i = 0; i < npend; i++)
		add += pend[i].tokens;
	int64_t next = b->prompt_tokens + b->last_out + add;
	int64_t limit = synth_profile_compact_threshold(p);
	struct vec *fresh = &t->fresh;
	vec_clear(fresh);
	int rc = 0;
	assert(b->base_len >= 1 && b->base_len <= b->ctx.len);
	if (next + out > limit) {
		struct trace_seg req = {uniq_content(b), p->compact_request_tokens};
		int64_t summary = llround(draw(t->rng, &p->summary_tokens, 1.0));
		int64_t kept = llround(draw(t->rng, &p->kept_tokens, 1.0));
		size_t history_end = b->ctx.len;
		int64_t cseq;
		rc = add_call(t, b, true, &req, 1, summary, TRACE_TOOL_NONE, -1, task, gap_s, &cseq);
		t->st.compactions++;
		int64_t base = 0;
		for (size_t i = 0; i < b->base_len; i++)
			base += VEC_AT(&b->ctx, struct trace_seg, i).tokens;
		if (kept > limit - base - summary - add - out)
			kept = limit - base - summary - add - out;
		if (rc == 0)
			rc = vec_append(fresh, b->ctx.data, b->base_len);
		if (rc == 0)
			rc = push_seg(fresh, trace_output_content(b->id, cseq), summary);
		if (rc == 0 && kept > 0)
			rc = keep_recent(fresh, &b->ctx, b->base_len, history_end, kept);
		gap_s = 0; /* the harness continues as soon as the summary is back */
	} else if (coin(t->rng, p->bust_probability)) {
		rc = vec_append(fresh, b->ctx.data, b->ctx.len);
		if (rc == 0)
			VEC_AT(fresh, struct trace_seg, b->base_len - 1).content = uniq_content(b);
		t->st.busts++;
	} else {
		return add_call(t, b, true, pend, npend, out, tool, retry_of, task, gap_s, seq);
	}
	if (rc == 0)
		rc = vec_append(fresh, pend, npend);
	if (rc == 0)
		rc = add_call(t, b, false, fresh->data, fresh->len, out, tool, retry_of, task, gap_s, seq);
	return rc;
}

/* The harness's timestamp line for a call nominally starting at t_s. */
static void header_text(char *buf, size_t n, double t_s)
{
	double day = floor(t_s / DAY_S), in = t_s - day * DAY_S;
	int h = (int)(in / 3600), m = (int)((in - h * 3600.0) / 60);
	snprintf(buf, n, "Date: day %lld, %02d:%02d:%06.3f", (long long)day, h, m,
		 in - h * 3600.0 - m * 60.0);
}

/* A copy of `src` in which every call restates its prompt in full behind a
 * timestamp header segment that carries its text (harness.timestamp_header_tokens). */
static int with_header(struct synth_team *t, const struct trace_session *src,
		       struct trace_session **out)
{
	int64_t k = t->p.timestamp_header_tokens;
	size_t n = src->n_calls;
	struct vec full, segs, off;
	vec_init(&full, sizeof(struct trace_seg), VEC_NO_LIMIT);
	vec_init(&segs, sizeof(struct trace_seg), VEC_NO_LIMIT);
	vec_init(&off, sizeof(size_t), VEC_NO_LIMIT);
	struct trace_call *calls = calloc(n, sizeof(*calls));
	char *texts = calloc(n, 64);
	int rc = calls && texts ? 0 : DIAG_ENOMEM;
	double start = src->t_s, end = src->t_s;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct trace_call *c = &src->calls[i];
		start = i == 0 ? src->t_s : end + c->gap_s;
		end = start + (double)c->output_tokens / t->p.decode_tokens_per_s;
		char *text = texts + 64 * i;
		header_text(text, 64, start);
		struct trace_seg h = {trace_content_str(text, k), k};
		size_t *po = vec_push(&off);
		vec_clear(&full);
		if (!po || trace_session_prompt(src, i, &full) != 0 || vec_append(&segs, &h, 1) != 0 ||
		    vec_append(&segs, full.data, full.len) != 0) {
			rc = DIAG_ENOMEM;
			break;
		}
		*po = segs.len - full.len - 1;
		calls[i] = *c;
		calls[i].extends_prev = false;
		calls[i].n_segs = full.len + 1;
		calls[i].prompt_tokens = c->prompt_tokens + k;
	}
	char **seg_text = rc == 0 ? calloc(segs.len ? segs.len : 1, sizeof(char *)) : NULL;
	if (rc == 0 && !seg_text)
		rc = DIAG_ENOMEM;
	if (rc == 0) {
		for (size_t i = 0; i < n; i++) {
			size_t o = VEC_AT(&off, size_t, i);
			calls[i].segs = (struct trace_seg *)segs.data + o;
			calls[i].seg_text = seg_text + o;
			seg_text[o] = texts + 64 * i;
		}
		struct trace_session tmp = *src;
		tmp.calls = calls;
		if (trace_session_clone(out, &tmp) != 0)
			rc = DIAG_ENOMEM;
		else
			t->st.prompt_tokens += k * (int64_t)n;
	}
	free(seg_text);
	free(texts);
	free(calls);
	vec_release(&full);
	vec_release(&segs);
	vec_release(&off);
	return rc;
}

/* Copy the builder into one heap session and add it to the engineer's day. */
static int finish(struct synth_team *t, struct builder *b, struct eng *e)
{
	struct trace_call *calls = b->calls.data;
	const size_t *off = b->segoff.data;
	for (size_t i = 0; i < b->calls.len; i++)
		calls[i].segs = (struct trace_seg *)b->segs.data + off[i];
	struct trace_session tmp = {.id = b->id, .engineer = e->id, .parent = b->parent,
				    .t_s = b->t_s, .calls = calls, .n_calls = b->calls.len};
	struct trace_session *s = NULL;
	struct trace_session **slot = vec_push(&e->day);
	if (!slot || (t->p.timestamp_header_tokens > 0 ? with_header(t, &tmp, &s)
						       : trace_session_clone(&s, &tmp)) != 0) {
		if (slot)
			e->day.len--;
		return DIAG_ENOMEM;
	}
	assert(trace_session_check(s));
	*slot = s;
	t->st.sessions++;
	if (b->parent)
		t->st.subagent_sessions++;
	return 0;
}

/* ---- tasks, steps, subagents ------------------------------------------- */

static int set_pend_one(struct synth_team *t, uint64_t content, int64_t tokens)
{
	vec_clear(&t->pend);
	return push_seg(&t->pend, content, tokens);
}

/* Tokens a step appends, scaled by the archetype and capped so that no
 * prompt passes the context window. */
static int64_t tokens_scaled(struct synth_team *t, const struct synth_dist *x, double scale)
{
	int64_t n = draw_count(t->rng, x, scale);
	return n < t->step_cap ? n : t->step_cap;
}

static int run_steps(struct synth_team *t, struct eng *e, struct builder *b, int64_t steps,
		     uint64_t task, double gap_s, bool may_spawn, bool *failed_out);

/* Steps of a task spent reading (exploration) before it edits and tests. */
static int64_t explore_steps(struct synth_team *t)
{
	return llround(draw(t->rng, &t->p.explore_steps, 1.0));
}

/* Spawn subagents at the end of b's last call; they run side by side and
 * their results come back to the parent when the slowest is done.  Leaves
 * the results in t->pend and returns the wait through *wait_s. */
static int spawn(struct synth_team *t, struct eng *e, struct builder *b, uint64_t task,
		 double *wait_s)
{
	const struct synth_profile *p = &t->p;
	const struct synth_archetype *a = &p->archetypes[e->arch];
	int64_t k = draw_count(t->rng, &p->subagents_parallel, 1.0);
	double at = b->end_s, wait = 0;
	struct vec results;
	vec_init(&results, sizeof(struct trace_seg), VEC_NO_LIMIT);
	int rc = 0;
	for (int64_t j = 0; j < k && rc == 0; j++) {
		struct builder *s = &t->sub;
		char name[NAME_MAX_LEN];
		name_fmt(name, "%s/a%d", b->name, (int)b->subagents++);
		builder_start(s, name, b->id, at);
		rc = pend_base(t, s, 0, 0);
		if (rc == 0)
			rc = push_seg(&t->pend, uniq_content(s),
				      tokens_scaled(t, &p->subagent_brief_tokens, a->token_scale));
		bool failed;
		int64_t steps = draw_count(t->rng, &p->subagent_steps, a->steps_scale);
		if (rc == 0)
			rc = run_steps(t, e, s, steps, task, 0, false, &failed);
		if (rc == 0)
			rc = finish(t, s, e);
		if (s->end_s - at > wait)
			wait = s->end_s - at;
		/* all results together are one step's worth at most */
		int64_t result = tokens_scaled(t, &p->subagent_result_tokens, a->token_scale);
		if (result > t->step_cap / k)
			result = t->step_cap / k;
		if (rc == 0)
			rc = push_seg(&results, uniq_content(b), result);
	}
	vec_clear(&t->pend);
	if (rc == 0)
		rc = vec_append(&t->pend, results.data, results.len);
	vec_release(&results);
	*wait_s = wait;
	return rc;
}

/* Run `steps` steps of one task in b.  t->pend holds what the first call
 * appends (or its whole prompt, for a session's first call) and gap_s the
 * time before it.  The first steps explore (their tools return file reads
 * and searches, step.explore_tool_output_tokens), the rest edit and test
 * (step.tool_output_tokens).  *failed_out: the last step still failed after
 * its retries. */
static int run_steps(struct synth_team *t, struct eng *e, struct builder *b, int64_t steps,
		     uint64_t task, double gap_s, bool may_spawn, bool *failed_out)
{
	const struct synth_profile *p = &t->p;
	const struct synth_archetype *a = &p->archetypes[e->arch];
	int64_t explore = explore_steps(t);
	bool failed = false;
	for (int64_t s = 0; s < steps; s++) {
		int64_t first_seq = -1;
		for (int attempt = 1;; attempt++) {
			int64_t out = draw_count(t->rng, &p->output_tokens, 1.0);
			failed = coin(t->rng, attempt == 1 ? t->p_first_fail : p->retry_failure_probability);
			int64_t seq;
			int rc = issue(t, b, out, failed ? TRACE_TOOL_FAIL : TRACE_TOOL_OK,
				       attempt > 1 ? first_seq : -1, task, gap_s, &seq);
			if (rc)
				return rc;
			if (attempt == 1)
				first_seq = seq;
			gap_s = draw(t->rng, &p->tool_gap_s, 1.0);
			if (!failed || attempt >= p->max_attempts)
				break;
			if ((rc = set_pend_one(t, uniq_content(b),
					       tokens_scaled(t, &p->error_tokens, a->token_scale))))
				return rc;
		}
		if (s == steps - 1)
			break;
		int rc;
		if (may_spawn && !failed && coin(t->rng, p->spawn_probability)) {
			double wait;
			rc = spawn(t, e, b, task, &wait);
			gap_s = wait;
		} else {
			const struct synth_dist *x = failed	     ? &p->error_tokens
						     : s < explore ? &p->explore_tool_output_tokens
								   : &p->tool_output_tokens;
			rc = set_pend_one(t, uniq_content(b), tokens_scaled(t, x, a->token_scale));
		}
		if (rc)
			return rc;
	}
	*failed_out = failed;
	return 0;
}

/* One root session of engineer e starting at t_s; returns its nominal end
 * through *end_s. */
static int gen_session(struct synth_team *t, struct eng *e, int32_t day, int32_t k, double t_s,
		       double *end_s)
{
	const struct synth_profile *p = &t->p;
	const struct synth_archetype *a = &p->archetypes[e->arch];
	struct builder *b = &t->root;
	char name[NAME_MAX_LEN];
	name_fmt(name, "synth/e%d/d%d/s%d", (int)e->idx, (int)day, (int)k);
	builder_start(b, name, 0, t_s);
	struct redo redo = e->redo;
	e->redo.have = false;
	int32_t repo = redo.have ? redo.repo
		       : coin(t->rng, p->home_repo_probability)
			       ? e->home_repo
			       : (int32_t)gsl_rng_uniform_int(t->rng, (unsigned long)p->repos);
	int64_t n_tasks = draw_count(t->rng, &p->tasks_per_session, 1.0);
	int rc = 0;
	for (int64_t i = 0; i < n_tasks && rc == 0; i++) {
		struct redo task;
		if (i == 0 && redo.have) {
			task = redo;
			task.attempt++;
			t->st.reattempts++;
		} else {
			memset(&task, 0, sizeof(task));
			name_fmt(task.task_name, "%s/t%d", name, (int)i);
			task.brief_content = hash_combine(SEED_BRIEF, trace_id_hash(task.task_name));
			task.brief_tokens = tokens_scaled(t, &p->brief_tokens, a->token_scale);
			task.steps_intrinsic = draw(t->rng, &p->steps_per_task, a->steps_scale);
			task.repo = repo;
		}
		char run_name[NAME_MAX_LEN];
		if (task.attempt > 0)
			name_fmt(run_name, "%s/r%d", task.task_name, (int)task.attempt);
		else
			name_fmt(run_name, "%s", task.task_name);
		uint64_t task_id = trace_id_hash(run_name);
		double spread = p->run_spread_sigma > 0 ? gsl_ran_lognormal(t->rng, 0, p->run_spread_sigma) : 1;
		int64_t steps = llround(task.steps_intrinsic * spread);
		if (steps < 1)
			steps = 1;
		double gap = 0;
		if (i == 0) {
			rc = pend_base(t, b, t->repo_content[repo], t->repo_tokens[repo]);
		} else {
			vec_clear(&t->pend);
			gap = draw(t->rng, &p->user_gap_s, 1.0);
		}
		if (rc == 0)
			rc = push_seg(&t->pend, task.brief_content, task.brief_tokens);
		bool failed = false;
		if (rc == 0)
			rc = run_steps(t, e, b, steps, task_id, gap, true, &failed);
		if (rc)
			break;
		bool accepted = !failed && coin(t->rng, p->accept_probability);
		struct trace_call *last = (struct trace_call *)b->calls.data + b->calls.len - 1;
		last->accepted = accepted ? TRACE_ACCEPT_TRUE : TRACE_ACCEPT_FALSE;
		t->st.tasks++;
		t->st.tasks_accepted += accepted;
		if (!accepted && !e->redo.have && coin(t->rng, p->reattempt_probability)) {
			e->redo = task;
			e->redo.have = true;
		}
	}
	if (rc == 0)
		rc = finish(t, b, e);
	*end_s = b->end_s;
	return rc;
}

/* ---- engineers and days -------------------------------------------------- */

static int cmp_start(const void *x, const void *y)
{
	const struct trace_session *a = *(struct trace_session *const *)x;
	const struct trace_session *b = *(struct trace_session *const *)y;
	if (a->t_s != b->t_s)
		return a->t_s < b->t_s ? -1 : 1;
	/* equal starts: creation order, kept in `line` while sorting */
	return (a->line > b->line) - (a->line < b->line);
}

/* Generate e's next active day; 1 if it has sessions, 0 if no days remain. */
static int gen_day(struct synth_team *t, struct eng *e, struct diag *d)
{
	const struct synth_profile *p = &t->p;
	const struct synth_archetype *a = &p->archetypes[e->arch];
	for (size_t i = e->head; i < e->day.len; i++)
		trace_session_free(VEC_AT(&e->day, struct trace_session *, i));
	vec_clear(&e->day);
	e->head = 0;
	while (e->next_day < t->o.days) {
		int32_t day = e->next_day++;
		reseed(t->rng, t->o.seed, (uint64_t)e->idx, (uint64_t)day, SEED_DAY);
		if (!coin(t->rng, p->active_day_probability))
			continue;
		double start_h = e->day_start_h + draw(t->rng, &p->day_jitter_h, 1.0);
		double ws = e->base_s + day * DAY_S + start_h * 3600.0;
		if (ws < 0)
			ws = 0;
		if (ws < e->last_start_s)
			ws = e->last_start_s;
		double we = ws + e->day_length_h * 3600.0;
		double ts = ws + draw(t->rng, &p->first_session_delay_s, 1.0);
		for (int32_t k = 0; ts < we; k++) {
			double end;
			int rc = gen_session(t, e, day, k, ts, &end);
			if (rc)
				return diag_set(d, rc, "out of memory generating engineer %d day %d",
						(int)e->idx, (int)day);
			ts = end + draw(t->rng, &p->break_s, a->break_scale);
		}
		if (e->day.len == 0)
			continue;
		struct trace_session **ss = e->day.data;
		for (size_t i = 0; i < e->day.len; i++)
			ss[i]->line = (long)i;
		qsort(ss, e->day.len, sizeof(*ss), cmp_start);
		for (size_t i = 0; i < e->day.len; i++)
			ss[i]->line = 0;
		e->last_start_s = ss[e->day.len - 1]->t_s;
		t->st.engineer_days++;
		return 1;
	}
	return 0;
}

static double head_start(const struct synth_team *t, int32_t i)
{
	const struct eng *e = &t->eng[i];
	return VEC_AT(&e->day, struct trace_session *, e->head)->t_s;
}

static bool heap_less(const struct synth_team *t, int32_t a, int32_t b)
{
	double ta = head_start(t, a), tb = head_start(t, b);
	return ta < tb || (ta == tb && a < b);
}

static void heap_down(struct synth_team *t, int32_t i)
{
	for (;;) {
		int32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < t->heap_len && heap_less(t, t->heap[l], t->heap[m]))
			m = l;
		if (r < t->heap_len && heap_less(t, t->heap[r], t->heap[m]))
			m = r;
		if (m == i)
			return;
		int32_t x = t->heap[i];
		t->heap[i] = t->heap[m];
		t->heap[m] = x;
		i = m;
	}
}

static void heap_up(struct synth_team *t, int32_t i)
{
	while (i > 0) {
		int32_t up = (i - 1) / 2;
		if (!heap_less(t, t->heap[i], t->heap[up]))
			return;
		int32_t x = t->heap[i];
		t->heap[i] = t->heap[up];
		t->heap[up] = x;
		i = up;
	}
}

static void init_engineer(struct synth_team *t, struct eng *e, int32_t idx)
{
	const struct synth_profile *p = &t->p;
	e->idx = idx;
	char name[32];
	snprintf(name, sizeof(name), "synth/e%d", (int)idx);
	e->id = trace_id_hash(name);
	reseed(t->rng, t->o.seed, (uint64_t)idx, 0, SEED_TRAITS);
	e->zone = (int32_t)gsl_ran_discrete(t->rng, t->pick_zone);
	e->arch = (int32_t)gsl_ran_discrete(t->rng, t->pick_arch);
	e->home_repo = (int32_t)gsl_rng_uniform_int(t->rng, (unsigned long)p->repos);
	e->day_start_h = draw(t->rng, &p->day_start_local_h, 1.0);
	e->day_length_h = draw(t->rng, &p->day_length_h, 1.0);
	/* Day 0 is the first local day whose earliest possible window start is
	 * at or after t = 0 (00:00 UTC). */
	double offset_h = p->zones[e->zone].utc_offset_h;
	e->base_s = -offset_h * 3600.0;
	if (e->base_s + (e->day_start_h + p->day_jitter_h.min) * 3600.0 < 0)
		e->base_s += DAY_S;
	vec_init(&e->day, sizeof(struct trace_session *), VEC_NO_LIMIT);
}

int synth_team_new(struct synth_team **out, const struct synth_profile *p,
		   const struct synth_team_opts *o, struct diag *d)
{
	*out = NULL;
	if (o->engineers < 1 || o->engineers > SYNTH_MAX_ENGINEERS)
		return diag_set(d, DIAG_EINPUT, "engineers %d out of range (expected 1..%d)",
				(int)o->engineers, SYNTH_MAX_ENGINEERS);
	if (o->days < 1 || o->days > SYNTH_MAX_DAYS)
		return diag_set(d, DIAG_EINPUT, "days %d out of range (expected 1..%d)", (int)o->days,
				SYNTH_MAX_DAYS);
	assert(synth_profile_check(p));
	double p1 = synth_first_failure_probability(p);
	if (p1 > 1)
		return diag_set(d, DIAG_EINPUT, "%s: tools.failure_rate %g cannot be reached with "
				"retry_failure_probability %g and max_attempts %d (expected a lower rate "
				"or fewer retries)", p->source, p->failure_rate,
				p->retry_failure_probability, (int)p->max_attempts);
	struct synth_team *t = calloc(1, sizeof(*t));
	if (!t)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	t->p = *p;
	t->o = *o;
	t->p_first_fail = p1;
	t->step_cap = synth_profile_step_cap(p);
	builder_init(&t->root);
	builder_init(&t->sub);
	vec_init(&t->pend, sizeof(struct trace_seg), VEC_NO_LIMIT);
	vec_init(&t->fresh, sizeof(struct trace_seg), VEC_NO_LIMIT);
	t->rng = gsl_rng_alloc(gsl_rng_mt19937);
	double wz[SYNTH_MAX_ZONES], wa[SYNTH_MAX_ARCHETYPES];
	for (int i = 0; i < p->n_zones; i++)
		wz[i] = p->zones[i].weight;
	for (int i = 0; i < p->n_archetypes; i++)
		wa[i] = p->archetypes[i].weight;
	t->pick_zone = gsl_ran_discrete_preproc((size_t)p->n_zones, wz);
	t->pick_arch = gsl_ran_discrete_preproc((size_t)p->n_archetypes, wa);
	t->repo_content = calloc((size_t)p->repos, sizeof(*t->repo_content));
	t->repo_tokens = calloc((size_t)p->repos, sizeof(*t->repo_tokens));
	t->eng = calloc((size_t)o->engineers, sizeof(*t->eng));
	t->heap = calloc((size_t)o->engineers, sizeof(*t->heap));
	if (!t->rng || !t->pick_zone || !t->pick_arch || !t->repo_content || !t->repo_tokens ||
	    !t->eng || !t->heap) {
		synth_team_free(t);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	t->sys_content = trace_content_str("synth/harness/system-prompt", p->system_prompt_tokens);
	t->tools_content = trace_content_str("synth/harness/tool-definitions", p->tool_definitions_tokens);
	reseed(t->rng, o->seed, 0, 0, SEED_REPOS);
	for (int32_t r = 0; r < p->repos; r++) {
		char name[48];
		t->repo_tokens[r] = draw_count(t->rng, &p->repo_context_tokens, 1.0);
		snprintf(name, sizeof(name), "synth/repo/%d/context", (int)r);
		t->repo_content[r] = trace_content_str(name, t->repo_tokens[r]);
	}
	for (int32_t i = 0; i < o->engineers; i++)
		init_engineer(t, &t->eng[i], i);
	for (int32_t i = 0; i < o->engineers; i++) {
		int got = gen_day(t, &t->eng[i], d);
		if (got < 0) {
			synth_team_free(t);
			return got;
		}
		if (got) {
			t->heap[t->heap_len++] = i;
			heap_up(t, t->heap_len - 1);
		}
	}
	*out = t;
	return 0;
}

int synth_team_next(struct synth_team *t, struct trace_session **out, struct diag *d)
{
	*out = NULL;
	if (t->err)
		return diag_set(d, t->err, "synthetic team generator failed earlier");
	if (t->heap_len == 0)
		return 0;
	int32_t i = t->heap[0];
	struct eng *e = &t->eng[i];
	struct trace_session *s = VEC_AT(&e->day, struct trace_session *, e->head);
	e->head++;
	if (e->head == e->day.len) {
		int got = gen_day(t, e, d);
		if (got < 0) {
			trace_session_free(s);
			t->err = got;
			return got;
		}
		if (!got) {
			t->heap[0] = t->heap[--t->heap_len];
		}
	}
	if (t->heap_len > 0)
		heap_down(t, 0);
	t->st.last_start_s = s->t_s;
	*out = s;
	return 1;
}

const struct synth_team_stats *synth_team_stats(const struct synth_team *t)
{
	return &t->st;
}

void synth_team_free(struct synth_team *t)
{
	if (!t)
		return;
	if (t->eng) {
		for (int32_t i = 0; i < t->o.engineers; i++) {
			struct eng *e = &t->eng[i];
			for (size_t k = e->head; k < e->day.len; k++)
				trace_session_free(VEC_AT(&e->day, struct trace_session *, k));
			vec_release(&e->day);
		}
	}
	free(t->eng);
	free(t->heap);
	free(t->repo_content);
	free(t->repo_tokens);
	if (t->pick_zone)
		gsl_ran_discrete_free(t->pick_zone);
	if (t->pick_arch)
		gsl_ran_discrete_free(t->pick_arch);
	if (t->rng)
		gsl_rng_free(t->rng);
	builder_release(&t->root);
	builder_release(&t->sub);
	vec_release(&t->pend);
	vec_release(&t->fresh);
	free(t);
}

static int team_source(void *ctx, struct trace_session **out, struct diag *d)
{
	return synth_team_next(ctx, out, d);
}

int synth_team_write(const struct synth_profile *p, const struct synth_team_opts *o,
		     const char *path, bool gzip, struct synth_team_stats *stats, struct diag *d)
{
	struct synth_team *t = NULL;
	int rc = synth_team_new(&t, p, o, d);
	if (rc)
		return rc;
	char source[256];
	snprintf(source, sizeof(source), "agentcap synth: profile %s, %d engineers, %d days, seed %llu",
		 p->name, (int)o->engineers, (int)o->days, (unsigned long long)o->seed);
	rc = trace_writer_drain(path, gzip, source, team_source, t, d);
	if (stats)
		*stats = t->st;
	synth_team_free(t);
	return rc;
}
