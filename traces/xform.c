/* SPDX-License-Identifier: Apache-2.0
 * xform: streaming what-if transforms of sessions (see xform.h). */
#include "traces/xform.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/vec.h"
#include "traces/trace.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SEED_INJECT 0x696e6a656374ULL  /* "inject" */
#define SEED_COPY 0x636f7079ULL        /* "copy" */
#define SEED_CONC 0x636f6e63ULL        /* "conc" */

void xform_opts_init(struct xform_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->think_scale = 1;
	o->arrival_scale = 1;
	o->concurrency = 1;
}

bool xform_active(const struct xform_opts *o)
{
	return (o->rules && rules_count(o->rules) > 0) || o->inject_at != XFORM_NONE ||
	       o->no_retry || o->max_output > 0 || o->think_scale != 1 || o->arrival_scale != 1 ||
	       o->concurrency != 1;
}

bool xform_needs_text(const struct xform_opts *o)
{
	return o->rules && rules_count(o->rules) > 0;
}

static const char *const WHERE[] = {"none", "start", "after-system", "before-last-turn"};

const char *xform_where_name(enum xform_where w)
{
	return (int)w >= 0 && (int)w < 4 ? WHERE[w] : "?";
}

bool xform_where_parse(const char *s, enum xform_where *out)
{
	for (int i = 1; i < 4; i++)
		if (strcmp(s, WHERE[i]) == 0) {
			*out = (enum xform_where)i;
			return true;
		}
	return false;
}

/* Cap outputs and restate prompt_tokens along the extends chains. */
static void cap_outputs(const struct xform_opts *o, struct trace_session *s, struct xform_stats *st)
{
	int64_t prev_prompt = 0, prev_out = 0;
	for (size_t i = 0; i < s->n_calls; i++) {
		struct trace_call *c = &s->calls[i];
		if (c->output_tokens > o->max_output) {
			c->output_tokens = o->max_output;
			st->outputs_capped++;
		}
		int64_t own = 0;
		for (size_t k = 0; k < c->n_segs; k++)
			own += c->segs[k].tokens;
		c->prompt_tokens = (c->extends_prev ? prev_prompt + prev_out : 0) + own;
		prev_prompt = c->prompt_tokens;
		prev_out = c->output_tokens;
	}
}

/* Where the injected segment goes in the expanded prompt of call c. */
static size_t inject_pos(enum xform_where w, const struct trace_call *c, size_t len)
{
	switch (w) {
	case XFORM_START:
		return 0;
	case XFORM_AFTER_SYSTEM:
		return len > 0 ? 1 : 0;
	case XFORM_BEFORE_LAST_TURN:
		if (c->extends_prev && c->n_segs > 0 && c->n_segs <= len)
			return len - c->n_segs;
		return len > 0 ? len - 1 : 0;
	default:
		return len;
	}
}

/* Restate every call's prompt in full, dropping retries and injecting the
 * volatile segment as asked; replaces *s. */
static int rebuild(const struct xform_opts *o, struct trace_session **sp, struct xform_stats *st,
		   struct diag *d)
{
	struct trace_session *s = *sp;
	struct vec calls, segs, off, full;
	vec_init(&calls, sizeof(struct trace_call), VEC_NO_LIMIT);
	vec_init(&segs, sizeof(struct trace_seg), VEC_NO_LIMIT);
	vec_init(&off, sizeof(size_t), VEC_NO_LIMIT);
	vec_init(&full, sizeof(struct trace_seg), VEC_NO_LIMIT);
	int rc = 0;
	double carry_gap = 0;
	for (size_t i = 0; i < s->n_calls && rc == 0; i++) {
		const struct trace_call *c = &s->calls[i];
		if (o->no_retry && c->retry_of >= 0) {
			carry_gap += c->gap_s;
			st->retries_dropped++;
			continue;
		}
		vec_clear(&full);
		if (trace_session_prompt(s, i, &full) != 0) {
			rc = DIAG_ENOMEM;
			break;
		}
		struct trace_call nc = *c;
		nc.extends_prev = false;
		nc.retry_of = -1;
		nc.seg_text = NULL;
		nc.gap_s = calls.len ? c->gap_s + carry_gap : 0;
		if (nc.gap_s > TRACE_MAX_SECONDS)
			nc.gap_s = TRACE_MAX_SECONDS;
		carry_gap = 0;
		size_t at = inject_pos(o->inject_at, c, full.len);
		size_t *po = vec_push(&off);
		if (!po || vec_append(&segs, full.data, at) != 0) {
			rc = DIAG_ENOMEM;
			break;
		}
		*po = segs.len - at;
		nc.n_segs = full.len;
		if (o->inject_at != XFORM_NONE && o->inject_tokens > 0) {
			struct trace_seg v = {
				hash_combine(hash_combine(hash_combine(SEED_INJECT, s->id), (uint64_t)c->seq),
					     (uint64_t)o->inject_tokens),
				o->inject_tokens};
			if (vec_append(&segs, &v, 1) != 0) {
				rc = DIAG_ENOMEM;
				break;
			}
			nc.n_segs++;
			nc.prompt_tokens += o->inject_tokens;
			st->calls_injected++;
		}
		if (vec_append(&segs, (struct trace_seg *)full.data + at, full.len - at) != 0 ||
		    vec_append(&calls, &nc, 1) != 0)
			rc = DIAG_ENOMEM;
	}
	struct trace_session *out = NULL;
	if (rc == 0) {
		struct trace_call *cv = calls.data;
		for (size_t i = 0; i < calls.len; i++)
			cv[i].segs = cv[i].n_segs ? (struct trace_seg *)segs.data + VEC_AT(&off, size_t, i)
						  : NULL;
		struct trace_session view = *s;
		view.calls = cv;
		view.n_calls = calls.len;
		rc = trace_session_clone(&out, &view);
	}
	vec_release(&calls);
	vec_release(&segs);
	vec_release(&off);
	vec_release(&full);
	if (rc != 0)
		return diag_set(d, DIAG_ENOMEM, "out of memory transforming a session");
	trace_session_free(s);
	*sp = out;
	return 0;
}

/* Copies of a subagent session under concurrency F. */
static int copies_of(const struct xform_opts *o, const struct trace_session *s)
{
	if (o->concurrency == 1 || !s->parent)
		return 1;
	double whole = floor(o->concurrency), frac = o->concurrency - whole;
	double u = (double)(hash_combine(SEED_CONC, s->id) >> 11) * 0x1.0p-53;
	return (int)whole + (u < frac ? 1 : 0);
}

int xform_apply(const struct xform_opts *o, struct trace_session **sp, struct xform_stats *st,
		struct diag *d)
{
	struct trace_session *s = *sp;
	int n = copies_of(o, s);
	if (n == 0) {
		st->subagents_dropped++;
		trace_session_free(s);
		*sp = NULL;
		return 0;
	}
	st->subagents_added += n - 1;
	int rc;
	if (o->rules && (rc = rules_apply(o->rules, s, &st->rules, d)) != 0)
		return rc;
	if (o->max_output > 0)
		cap_outputs(o, s, st);
	bool retries = false;
	for (size_t i = 0; o->no_retry && i < s->n_calls; i++)
		retries = retries || s->calls[i].retry_of >= 0;
	if ((o->inject_at != XFORM_NONE && o->inject_tokens > 0) || retries) {
		if ((rc = rebuild(o, sp, st, d)) != 0)
			return rc;
		s = *sp;
	}
	if (o->think_scale != 1)
		for (size_t i = 1; i < s->n_calls; i++) {
			double g = s->calls[i].gap_s * o->think_scale;
			s->calls[i].gap_s = g > TRACE_MAX_SECONDS ? TRACE_MAX_SECONDS : g;
		}
	if (o->arrival_scale != 1) {
		assert(o->arrival_scale > 0);
		double t = s->t_s * o->arrival_scale;
		s->t_s = t > TRACE_MAX_SECONDS ? TRACE_MAX_SECONDS : t;
	}
	return n;
}

int xform_copy(struct trace_session **out, const struct trace_session *s, int k, struct diag *d)
{
	if (trace_session_clone(out, s) != 0)
		return diag_set(d, DIAG_ENOMEM, "out of memory copying a session");
	(*out)->id = hash_combine(hash_combine(SEED_COPY, s->id), (uint64_t)k);
	return 0;
}
