/* SPDX-License-Identifier: Apache-2.0
 * replay: closed-loop session driver over a streaming trace (see replay.h). */
#include "replay/replay.h"

#include "base/hash.h"
#include "base/vec.h"
#include "traces/prompt.h"
#include "traces/trace.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rsess {
	struct trace_session *ts;
	size_t next;            /* index of the call to issue next */
	bool open_loop;
	struct tchain chain;    /* block hashes of the context so far */
	struct vec hashes;      /* uint64_t per full block of prompt + output */
	struct vec ctx;         /* struct trace_seg: the context as replayed
				   (prompt + output so far, after compaction) */
	int64_t ctx_tokens;
	int64_t recorded_tokens; /* the same as the trace has it */
	bool chain_stale;       /* chain/hashes describe a truncated prompt, not ctx */
	int64_t start_ns;
	/* the task in progress */
	uint64_t task;
	int64_t task_start_ns;
	int32_t task_calls;
	int32_t calls_done;
	int32_t team;           /* the simulator's team (replay_groups) */
	struct rsess *prev, *next_live; /* every live session, for cleanup */
};

struct replay {
	struct sim sim;
	struct res_sink sink;
	struct replay_stats *st;
	int64_t block_size;
	int64_t max_model_len;
	int64_t compact_at;         /* where the harness compacts (<= max_model_len) */
	enum context_policy policy;
	const struct xform_opts *xf;
	struct trace_session *copy_of; /* a session still to be replayed again */
	int copies_left, copy_k;
	struct vec scratch;         /* struct trace_seg: a rebuilt prompt */
	int64_t in_flight;
	struct rsess *live;
	int err;
	struct diag *d;
	const char *path;       /* the trace, for messages */
	/* early verdict (replay.h); early == NULL: off */
	const struct replay_early *early;
	int64_t miss[SLO_MAX_OBJECTIVES];   /* completed calls over each limit */
	int64_t budget[SLO_MAX_OBJECTIVES]; /* misses that settle the objective */
	int64_t window_ns, next_sample_ns;
	int64_t last_waiting;
	int32_t growth_run, growth_windows;
	int64_t finished;                   /* calls completed or rejected */
	bool stop;
	const struct replay_groups *groups; /* NULL: class 0, team 0 */
};

static const char *const VERDICT_NAMES[] = {"ran", "failed", "slo", "queue"};

const char *replay_verdict_name(enum replay_verdict v)
{
	return (int)v >= 0 && (int)v < 4 ? VERDICT_NAMES[v] : "?";
}

static void early_stop(struct replay *rp, enum replay_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void early_stop(struct replay *rp, enum replay_verdict v, const char *fmt, ...)
{
	if (rp->stop)
		return;
	rp->stop = true;
	rp->st->verdict = v;
	rp->st->verdict_ns = rp->sim.now_ns;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rp->st->verdict_why, sizeof(rp->st->verdict_why), fmt, ap);
	va_end(ap);
}

/* A finished call against the objectives. */
static void early_done(struct replay *rp, const struct res_request *r)
{
	rp->finished++;
	if (r->status != RES_COMPLETED) {
		rp->st->verdict_share = 1;
		early_stop(rp, REPLAY_STOPPED_FAILED, "a call was rejected: %s",
			   r->reason ? r->reason : "?");
		return;
	}
	const struct slo *slo = rp->early->slo;
	if (!slo || rp->early->total_calls <= 0)
		return;
	for (int i = 0; i < slo->n; i++) {
		const struct slo_objective *o = &slo->obj[i];
		if (slo_request_ms(o->metric, r) > o->limit_ms && ++rp->miss[i] >= rp->budget[i]) {
			char k[16];
			rp->st->verdict_share = (double)rp->miss[i] / (double)rp->finished;
			early_stop(rp, REPLAY_STOPPED_SLO,
				   "%s over %g ms in %lld of %lld calls (the percentile is over "
				   "its limit from %lld on)", slo_key(o, k, sizeof(k)), o->limit_ms,
				   (long long)rp->miss[i], (long long)rp->early->total_calls,
				   (long long)rp->budget[i]);
			return;
		}
	}
}

/* The state at simulated time t_ns (a sample every window_ns). */
static void early_sample(struct replay *rp, int64_t t_ns)
{
	struct sim_backlog b;
	sim_backlog(&rp->sim, INT64_MIN, &b);
	if (b.waiting > rp->last_waiting && ++rp->growth_run >= rp->growth_windows) {
		rp->st->verdict_share = (double)b.waiting / (double)(b.waiting + rp->finished);
		early_stop(rp, REPLAY_STOPPED_QUEUE,
			   "the waiting queue grew at each of %d samples %g s apart, to %lld calls",
			   rp->growth_run, (double)rp->window_ns / 1e9, (long long)b.waiting);
		return;
	}
	if (b.waiting <= rp->last_waiting)
		rp->growth_run = 0;
	rp->last_waiting = b.waiting;
	const struct slo *slo = rp->early->slo;
	if (!slo || rp->early->total_calls <= 0)
		return;
	for (int i = 0; i < slo->n; i++) {
		const struct slo_objective *o = &slo->obj[i];
		if (o->metric == SLO_TPOT)
			continue; /* not settled before the call ends */
		int64_t limit_ns = (int64_t)ceil(o->limit_ms * 1e6);
		if (t_ns - limit_ns <= 0)
			continue;
		sim_backlog(&rp->sim, t_ns - limit_ns, &b);
		int64_t late = o->metric == SLO_TTFT ? b.no_token_before : b.arrived_before;
		if (rp->miss[i] + late >= rp->budget[i]) {
			char k[16];
			rp->st->verdict_share =
				(double)(rp->miss[i] + late) / (double)(rp->finished + late);
			early_stop(rp, REPLAY_STOPPED_SLO,
				   "%s over %g ms in %lld of %lld calls, %lld of them still waiting "
				   "(the percentile is over its limit from %lld on)",
				   slo_key(o, k, sizeof(k)), o->limit_ms, (long long)(rp->miss[i] + late),
				   (long long)rp->early->total_calls, (long long)late,
				   (long long)rp->budget[i]);
			return;
		}
	}
}

/* Samples due before the next thing happens at t_ns. */
static void early_tick(struct replay *rp, int64_t t_ns)
{
	while (!rp->stop && t_ns != INT64_MAX && rp->next_sample_ns <= t_ns) {
		early_sample(rp, rp->next_sample_ns);
		rp->next_sample_ns += rp->window_ns;
	}
}

static int64_t sec_to_ns(double s)
{
	return (int64_t)llround(s * 1e9);
}

static void rsess_free(struct replay *rp, struct rsess *rs)
{
	if (!rs)
		return;
	if (rs->prev)
		rs->prev->next_live = rs->next_live;
	else
		rp->live = rs->next_live;
	if (rs->next_live)
		rs->next_live->prev = rs->prev;
	vec_release(&rs->hashes);
	vec_release(&rs->ctx);
	trace_session_free(rs->ts);
	free(rs);
}

static const char *const POLICY_NAMES[] = {"compact", "truncate", "reject"};

const char *context_policy_name(enum context_policy p)
{
	return (int)p >= 0 && (int)p < 3 ? POLICY_NAMES[p] : "?";
}

bool context_policy_parse(const char *s, enum context_policy *out)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(s, POLICY_NAMES[i]) == 0) {
			*out = (enum context_policy)i;
			return true;
		}
	return false;
}

/* Append to `out` the segments of ctx covering tokens [from, to).  A piece
 * that starts inside a segment gets a content id of its own (a chain would
 * otherwise hash its tokens as the segment's first ones); a piece that starts
 * where its segment does keeps the id, so its full blocks still match. */
static int ctx_slice(struct vec *out, const struct vec *ctx, int64_t from, int64_t to)
{
	int64_t pos = 0;
	for (size_t i = 0; i < ctx->len && pos < to; i++) {
		struct trace_seg g = VEC_AT(ctx, struct trace_seg, i);
		int64_t a = pos > from ? pos : from, b = pos + g.tokens < to ? pos + g.tokens : to;
		pos += g.tokens;
		if (b <= a)
			continue;
		struct trace_seg piece = {g.content, b - a};
		if (a > pos - g.tokens)
			piece.content = hash_combine(g.content, (uint64_t)(a - (pos - g.tokens)));
		if (vec_append(out, &piece, 1) != 0)
			return DIAG_ENOMEM;
	}
	return 0;
}

/* Hash a whole segment list into rs->chain and rs->hashes. */
static int chain_rebuild(struct replay *rp, struct rsess *rs, const struct vec *segs)
{
	tchain_init(&rs->chain, rp->block_size);
	vec_clear(&rs->hashes);
	for (size_t i = 0; i < segs->len; i++) {
		const struct trace_seg *g = &VEC_AT(segs, struct trace_seg, i);
		if (tchain_feed(&rs->chain, g->content, g->tokens, &rs->hashes) != 0)
			return DIAG_ENOMEM;
	}
	return 0;
}

/* The harness compacts rs->ctx (see replay.h): head, a summary, the tail.
 * 1 if it did, 0 if the context is too short to shrink, or an error. */
static int compact(struct replay *rp, struct rsess *rs, int64_t seq)
{
	double m = (double)rp->compact_at;
	int64_t head = llround(REPLAY_COMPACT_HEAD * m), tail = llround(REPLAY_COMPACT_TAIL * m);
	int64_t summary = llround(REPLAY_COMPACT_SUMMARY * m);
	if (summary < 1)
		summary = 1;
	if (head + summary + tail >= rs->ctx_tokens)
		return 0; /* nothing to drop: the call stays as long as it is */
	struct vec *fresh = &rp->scratch;
	vec_clear(fresh);
	struct trace_seg sum = {hash_combine(trace_output_content(rs->ts->id, seq), 0xc0), summary};
	int rc = ctx_slice(fresh, &rs->ctx, 0, head);
	if (rc == 0)
		rc = vec_append(fresh, &sum, 1);
	if (rc == 0)
		rc = ctx_slice(fresh, &rs->ctx, rs->ctx_tokens - tail, rs->ctx_tokens);
	if (rc != 0)
		return diag_set(rp->d, DIAG_ENOMEM, "out of memory for a compacted context");
	vec_clear(&rs->ctx);
	if (vec_append(&rs->ctx, fresh->data, fresh->len) != 0)
		return diag_set(rp->d, DIAG_ENOMEM, "out of memory for a compacted context");
	rs->ctx_tokens = head + summary + tail;
	rp->st->calls_compacted++;
	if (chain_rebuild(rp, rs, &rs->ctx) != 0)
		return diag_set(rp->d, DIAG_ENOMEM, "out of memory for block hashes");
	rs->chain_stale = false;
	return 1;
}

/* Issue call rs->next at time t_ns: extend the replayed context by its
 * prompt (restarting it unless the call extends the previous one), apply the
 * context policy, extend the block-hash chain by the prompt and then by the
 * output, and hand it to the simulator. */
static int issue(struct replay *rp, struct rsess *rs, int64_t t_ns)
{
	const struct trace_call *c = &rs->ts->calls[rs->next];
	if (!c->extends_prev) {
		vec_clear(&rs->ctx);
		rs->ctx_tokens = 0;
		rs->recorded_tokens = 0;
		tchain_init(&rs->chain, rp->block_size);
		vec_clear(&rs->hashes);
		rs->chain_stale = false;
	}
	if (vec_append(&rs->ctx, c->segs, c->n_segs) != 0)
		return diag_set(rp->d, DIAG_ENOMEM, "out of memory for a session context");
	int64_t added = 0;
	for (size_t i = 0; i < c->n_segs; i++)
		added += c->segs[i].tokens;
	rs->ctx_tokens += added;
	rs->recorded_tokens += added;
	int64_t out = c->output_tokens, m = rp->max_model_len, h = rp->compact_at;
	/* Decided from token counts before any hashing: a prompt past
	 * max_model_len is compacted or truncated (which hash what they keep
	 * afresh) or rejected on arrival, so its own segments, possibly 10^9
	 * tokens, are never hashed whole. */
	bool too_long = rs->ctx_tokens >= m || rs->ctx_tokens + out > m;
	bool harness_limit = rs->ctx_tokens >= h || rs->ctx_tokens + out > h;
	bool hashed = !too_long;
	if (hashed && rs->chain_stale) { /* the last prompt was truncated: hash ctx afresh */
		if (chain_rebuild(rp, rs, &rs->ctx) != 0)
			return diag_set(rp->d, DIAG_ENOMEM, "out of memory for block hashes");
		rs->chain_stale = false;
	} else if (hashed) {
		for (size_t i = 0; i < c->n_segs; i++)
			if (tchain_feed(&rs->chain, c->segs[i].content, c->segs[i].tokens, &rs->hashes) != 0)
				return diag_set(rp->d, DIAG_ENOMEM, "out of memory for block hashes");
	}
	if (rs->recorded_tokens != c->prompt_tokens)
		return diag_set(rp->d, DIAG_EINTERNAL,
				"session at line %ld call %lld: %lld prompt tokens but segments add to %lld",
				rs->ts->line, (long long)c->seq, (long long)c->prompt_tokens,
				(long long)rs->recorded_tokens);
	int rc = 0;
	if (rp->policy == CONTEXT_COMPACT && (too_long || harness_limit) &&
	    (rc = compact(rp, rs, c->seq)) != 0) {
		if (rc < 0)
			return rc;
		hashed = true; /* compact hashed the compacted context */
		too_long = rs->ctx_tokens >= m || rs->ctx_tokens + out > m;
		if (too_long)
			rp->st->calls_too_long++;
	} else if (rp->policy == CONTEXT_TRUNCATE && too_long && m - out >= 1) {
		struct vec *cut = &rp->scratch;
		vec_clear(cut);
		if (ctx_slice(cut, &rs->ctx, rs->ctx_tokens - (m - out), rs->ctx_tokens) != 0 ||
		    chain_rebuild(rp, rs, cut) != 0)
			return diag_set(rp->d, DIAG_ENOMEM, "out of memory for a truncated prompt");
		rs->chain_stale = true;
		hashed = true;
		rp->st->calls_truncated++;
	} else if (too_long) {
		rp->st->calls_too_long++;
	}
	/* not hashed: the call is rejected on arrival and ends its session */
	int64_t prompt = rs->chain_stale ? m - out : rs->ctx_tokens;
	uint64_t oc = trace_output_content(rs->ts->id, c->seq);
	if (hashed && tchain_feed(&rs->chain, oc, out, &rs->hashes) != 0)
		return diag_set(rp->d, DIAG_ENOMEM, "out of memory for block hashes");
	struct trace_seg oseg = {oc, out};
	if (vec_append(&rs->ctx, &oseg, 1) != 0)
		return diag_set(rp->d, DIAG_ENOMEM, "out of memory for a session context");
	rs->ctx_tokens += out;
	rs->recorded_tokens += out;
	if (c->task != rs->task || rs->task_calls == 0) {
		rs->task = c->task;
		rs->task_start_ns = t_ns;
		rs->task_calls = 0;
	}
	rs->task_calls++;
	int32_t prio = 0;
	const struct replay_groups *g = rp->groups;
	if (g) {
		switch (c->prio) {
		case TRACE_PRIO_VALUE:
			prio = c->prio_value;
			break;
		case TRACE_PRIO_MAIN:
			prio = g->class_main;
			break;
		case TRACE_PRIO_SUBAGENT:
			prio = g->class_subagent;
			break;
		case TRACE_PRIO_BATCH:
			prio = g->class_batch;
			break;
		case TRACE_PRIO_NONE:
			prio = rs->ts->parent ? g->class_subagent : g->class_main;
			break;
		}
	}
	struct sim_call sc = {
		.prio = prio,
		.team = rs->team,
		.session = rs->open_loop ? 0 : rs->ts->id,
		.parent = rs->open_loop ? 0 : rs->ts->parent,
		.task = c->task,
		.seq = c->seq,
		.prompt_tokens = prompt,
		.output_tokens = out,
		.block_hashes = rs->hashes.data,
		.n_hashes = hashed ? (int64_t)rs->hashes.len : 0,
		.kind = c->kind,
		.borrow_hashes = true, /* rs->hashes changes only once the call is done */
		/* a later call follows its tool call: the agent comes back */
		.resumes = !rs->open_loop && rs->next + 1 < rs->ts->n_calls,
		.user = rs,
	};
	rs->next++;
	return sim_submit(&rp->sim, &sc, t_ns, rp->d);
}

static void span_out(struct replay *rp, void (*fn)(void *, const struct res_span *), uint64_t id,
		     int64_t start, int64_t end, int32_t calls, enum trace_accept acc)
{
	if (!fn)
		return;
	struct res_span sp = {.id = id, .start_ns = start, .end_ns = end, .calls = calls,
			      .accepted_known = acc != TRACE_ACCEPT_UNKNOWN,
			      .accepted = acc == TRACE_ACCEPT_TRUE};
	fn(rp->sink.ctx, &sp);
}

static int past_horizon(struct replay *rp, const struct rsess *rs, const struct trace_call *c,
			double t_s)
{
	return diag_at(rp->d, DIAG_EINPUT, rp->path, c->line ? c->line : rs->ts->line, 0,
		       "call seq %lld of the session from line %ld would start at %.6g s of simulated "
		       "time, past the replay horizon of 2^62 ns (%.6g s, about 146 years) (expected a "
		       "start time plus gaps and service times that stay within it)",
		       (long long)c->seq, rs->ts->line, t_s, (double)REPLAY_HORIZON_NS / 1e9);
}

/* The simulator finished (or rejected) call rs->next - 1 of a session. */
static void on_done(void *ctx, const struct res_request *r, void *user)
{
	struct replay *rp = ctx;
	struct rsess *rs = user;
	const struct trace_session *ts = rs->ts;
	const struct trace_call *c = &ts->calls[rs->next - 1];
	rs->calls_done++;
	if (rp->early)
		early_done(rp, r);
	bool last_of_task = rs->next == ts->n_calls || ts->calls[rs->next].task != c->task;
	bool ok = r->status == RES_COMPLETED;
	/* a task is a root session's run of one task id; a subagent's run is
	 * part of its parent's task (the definition stats and synth use) */
	if (!rs->open_loop && !ts->parent && (last_of_task || !ok))
		span_out(rp, rp->sink.task, c->task, rs->task_start_ns, r->done_ns, rs->task_calls,
			 ok ? c->accepted : TRACE_ACCEPT_FALSE);
	if (ok && rs->next < ts->n_calls) {
		const struct trace_call *n = &ts->calls[rs->next];
		int64_t gap_ns = sec_to_ns(n->gap_s); /* <= 1e18: gap is at most 1e9 s */
		int rc = r->done_ns > REPLAY_HORIZON_NS - gap_ns
			? past_horizon(rp, rs, n, (double)r->done_ns / 1e9 + n->gap_s)
			: issue(rp, rs, r->done_ns + gap_ns);
		if (rc != 0 && !rp->err)
			rp->err = rc;
		return;
	}
	/* The session ends: all calls done, or one was rejected and the agent
	 * cannot continue; report what was never issued. */
	for (size_t i = rs->next; i < ts->n_calls; i++) {
		const struct trace_call *rest = &ts->calls[i];
		struct res_request rej = {
			.session = ts->id, .task = rest->task, .seq = rest->seq, .replica = -1,
			.status = RES_REJECTED,
			.reason = "session abandoned after an earlier call was rejected",
			.arrival_ns = r->done_ns, .dispatched_ns = r->done_ns,
			.scheduled_ns = r->done_ns, .first_token_ns = r->done_ns, .done_ns = r->done_ns,
			.prompt_tokens = rest->prompt_tokens, .output_tokens = rest->output_tokens,
			.kind = rest->kind,
		};
		if (rp->sink.request)
			rp->sink.request(rp->sink.ctx, &rej);
		rp->st->abandoned_calls++;
	}
	if (!rs->open_loop)
		span_out(rp, rp->sink.session, ts->id, rs->start_ns, r->done_ns,
			 rs->calls_done, TRACE_ACCEPT_UNKNOWN);
	rp->in_flight--;
	rsess_free(rp, rs);
}

/* Next session from the trace, or from the resampled team when scaling,
 * through the what-if transforms when there are any. */
static int next_session(struct replay *rp, struct trace_reader *tr, struct scale *sc,
			struct trace_session **out, struct diag *d)
{
	if (rp->copies_left > 0) {
		rp->copies_left--;
		return xform_copy(out, rp->copy_of, ++rp->copy_k, d);
	}
	trace_session_free(rp->copy_of);
	rp->copy_of = NULL;
	for (;;) {
		int rc = sc ? scale_next(sc, out, d) : trace_reader_next(tr, out, d);
		if (rc <= 0 || !rp->xf)
			return rc > 0 ? 0 : rc;
		int n = xform_apply(rp->xf, out, &rp->st->xform, d);
		if (n < 0) {
			trace_session_free(*out);
			*out = NULL;
			return n;
		}
		if (n == 0)
			continue; /* dropped (fewer subagents) */
		if (n > 1) {
			if (trace_session_clone(&rp->copy_of, *out) != 0)
				return diag_set(d, DIAG_ENOMEM, "out of memory copying a session");
			rp->copies_left = n - 1;
			rp->copy_k = 0;
		}
		return 0;
	}
}

/* The simulator's team of session ts (replay_groups), adding a team the
 * trace names for the first time.  -1 when the trace brings more teams
 * than the simulator keeps apart.  O(named teams + members + teams). */
static int32_t session_team(struct replay *rp, const struct trace_session *ts)
{
	const struct replay_groups *g = rp->groups;
	if (!g)
		return 0;
	struct replay_stats *st = rp->st;
	if (st->n_teams == 0)
		st->n_teams = 1 + g->n_names;
	if (ts->team) {
		for (int32_t k = 0; k < g->n_names; k++)
			if (g->name_ids[k] == ts->team)
				return 1 + k;
		for (int32_t k = 1 + g->n_names; k < st->n_teams; k++)
			if (st->team_ids[k] == ts->team)
				return k;
		if (st->n_teams == SIM_MAX_TEAMS)
			return -1;
		st->team_ids[st->n_teams] = ts->team;
		return st->n_teams++;
	}
	for (int32_t k = 0; ts->engineer && k < g->n_members; k++)
		if (g->member[k] == ts->engineer)
			return 1 + g->member_team[k];
	return 0;
}

static int start_session(struct replay *rp, struct trace_session *ts)
{
	int32_t team = session_team(rp, ts);
	if (team < 0) {
		long line = ts->line;
		trace_session_free(ts);
		return diag_set(rp->d, DIAG_EINPUT, "%s:%ld: team: more than %d teams (the trace's "
				"and the scenario's together; expected at most %d)", rp->path, line,
				SIM_MAX_TEAMS - 1, SIM_MAX_TEAMS - 1);
	}
	struct rsess *rs = calloc(1, sizeof(*rs));
	if (!rs) {
		trace_session_free(ts);
		return diag_set(rp->d, DIAG_ENOMEM, "out of memory for a session");
	}
	rs->ts = ts;
	rs->team = team;
	rs->next_live = rp->live;
	if (rp->live)
		rp->live->prev = rs;
	rp->live = rs;
	rs->open_loop = ts->open_loop;
	vec_init(&rs->hashes, sizeof(uint64_t), VEC_NO_LIMIT);
	vec_init(&rs->ctx, sizeof(struct trace_seg), VEC_NO_LIMIT);
	rs->start_ns = sec_to_ns(ts->t_s);
	rp->st->sessions++;
	rp->st->calls += (int64_t)ts->n_calls;
	if (++rp->in_flight > rp->st->peak_sessions_in_flight)
		rp->st->peak_sessions_in_flight = rp->in_flight;
	return issue(rp, rs, rs->start_ns);
}

/* What the harness sends for a call of prompt + output tokens under the
 * context policy at max_model_len m: the prompt (at most m - output), or -1
 * when the call is rejected as too long (policy reject). */
static int64_t scan_prompt(enum context_policy policy, int64_t prompt, int64_t output, int64_t m)
{
	if (prompt < m && prompt + output <= m)
		return prompt;
	if (policy == CONTEXT_REJECT)
		return -1;
	/* compacted or cut: at most max_model_len from here on */
	return m - output >= 1 ? m - output : 1;
}

/* Count a rejection's reason in out. */
static void scan_reason(struct replay_scan *out, const char *why)
{
	out->rejected++;
	if (strstr(why, "KV blocks"))
		out->over_kv++;
	else if (!strstr(why, "max_model_len"))
		out->over_budget++;
}

int replay_scan_pools(const struct replay_opts *o, const struct engine_config *cfgs, int32_t n,
		      int64_t context_tokens, struct replay_scan *each, struct replay_scan *all,
		      struct diag *d)
{
	memset(all, 0, sizeof(*all));
	memset(each, 0, (size_t)n * sizeof(*each));
	int64_t m = 0;
	for (int32_t p = 0; p < n; p++)
		if (cfgs[p].max_model_len > m)
			m = cfgs[p].max_model_len;
	struct trace_reader *tr = NULL;
	int rc = trace_reader_open(&tr, o->trace_path, o->format, d);
	if (rc != 0)
		return rc;
	trace_reader_set_skip_bad(tr, o->skip_bad);
	for (;;) {
		struct trace_session *ts = NULL;
		rc = trace_reader_next(tr, &ts, d);
		if (rc <= 0)
			break;
		for (size_t i = 0; i < ts->n_calls; i++) {
			const struct trace_call *c = &ts->calls[i];
			int64_t total = c->prompt_tokens + c->output_tokens;
			for (int32_t p = -1; p < n; p++) {
				struct replay_scan *out = p < 0 ? all : &each[p];
				out->calls++;
				if (c->prompt_tokens > out->longest_prompt)
					out->longest_prompt = c->prompt_tokens;
				if (total > out->longest_call)
					out->longest_call = total;
				if (context_tokens > 0 && total > context_tokens)
					out->over_context++;
				int64_t mm = p < 0 ? m : cfgs[p].max_model_len;
				if (c->prompt_tokens >= mm || total > mm)
					out->over_max_model_len++;
			}
			int64_t prompt = scan_prompt(o->context_policy, c->prompt_tokens,
						     c->output_tokens, m);
			if (prompt < 0) {
				all->rejected++;
				for (int32_t p = 0; p < n; p++)
					each[p].rejected++;
				continue;
			}
			const char *first = NULL;
			bool served = false;
			for (int32_t p = 0; p < n; p++) {
				const struct engine_config *cfg = &cfgs[p];
				const char *why = sim_reject_reason(
					cfg, cfg->kv_cache_tokens / cfg->block_size, prompt, c->output_tokens);
				if (p == 0)
					first = why;
				if (why)
					scan_reason(&each[p], why);
				else
					served = true;
			}
			if (!served)
				scan_reason(all, first);
		}
		trace_session_free(ts);
	}
	trace_reader_free(tr);
	return rc < 0 ? rc : 0;
}

int replay_trace_days(const struct replay_opts *o, int64_t *days, int64_t *named,
		      struct diag *d)
{
	*days = 0;
	*named = 0;
	struct trace_reader *tr = NULL;
	int rc = trace_reader_open(&tr, o->trace_path, o->format, d);
	if (rc != 0)
		return rc;
	trace_reader_set_skip_bad(tr, o->skip_bad);
	struct scale_opts so = {.engineers = 1, .seed = o->scale.seed};
	struct scale *sc = NULL;
	rc = scale_open(&sc, tr, &so, d);
	if (rc == 0) {
		struct scale_info in;
		scale_get_info(sc, &in);
		*days = in.source_days;
		*named = in.named_engineers;
	}
	scale_free(sc);
	trace_reader_free(tr);
	return rc;
}

int replay_month_days(const struct replay_opts *o, const struct replay_stats *st, int64_t *days,
		      int64_t *engineers, struct diag *d)
{
	if (o->scale.engineers > 0) {
		*days = st->scale.days;
		*engineers = st->scale.engineers;
		return 0;
	}
	int rc = replay_trace_days(o, days, engineers, d);
	if (rc == 0 && *engineers == 0)
		*days = 0;
	return rc;
}

int replay_count(const struct replay_opts *o, int64_t *calls, struct diag *d)
{
	*calls = 0;
	struct trace_reader *tr = NULL;
	int rc = trace_reader_open(&tr, o->trace_path, o->format, d);
	if (rc != 0)
		return rc;
	trace_reader_set_skip_bad(tr, o->skip_bad);
	if (o->xform && xform_needs_text(o->xform))
		trace_reader_set_keep_text(tr, true);
	struct scale *sc = NULL;
	if (o->scale.engineers > 0 && (rc = scale_open(&sc, tr, &o->scale, d)) != 0) {
		trace_reader_free(tr);
		return rc;
	}
	struct replay_stats st;
	struct replay rp;
	memset(&st, 0, sizeof(st));
	memset(&rp, 0, sizeof(rp));
	rp.st = &st;
	rp.xf = o->xform && xform_active(o->xform) ? o->xform : NULL;
	for (;;) {
		struct trace_session *ts = NULL;
		rc = next_session(&rp, tr, sc, &ts, d);
		if (rc != 0 || !ts)
			break;
		*calls += (int64_t)ts->n_calls;
		trace_session_free(ts);
	}
	trace_session_free(rp.copy_of);
	scale_free(sc);
	trace_reader_free(tr);
	return rc;
}

int replay_scan(const struct replay_opts *o, const struct engine_config *cfg,
		int64_t context_tokens, struct replay_scan *out, struct diag *d)
{
	struct replay_scan all;
	int rc = replay_scan_pools(o, cfg, 1, context_tokens, out, &all, d);
	*out = all;
	return rc;
}

int replay_run(const struct replay_opts *o, const struct engine_config *cfg, struct sim_perf perf,
	       struct res_sink sink, struct replay_stats *st, struct diag *d)
{
	memset(st, 0, sizeof(*st));
	struct trace_reader *tr = NULL;
	int rc = trace_reader_open(&tr, o->trace_path, o->format, d);
	if (rc != 0)
		return rc;
	trace_reader_set_skip_bad(tr, o->skip_bad);
	if (o->xform && xform_needs_text(o->xform))
		trace_reader_set_keep_text(tr, true);
	snprintf(st->trace_format, sizeof(st->trace_format), "%s",
		 trace_reader_format(tr) == TRACE_FMT_MOONCAKE ? "mooncake" : "agentcap-trace v1");
	st->gzip = trace_reader_gzip(tr);
	struct scale *sc = NULL;
	if (o->scale.engineers > 0 && (rc = scale_open(&sc, tr, &o->scale, d)) != 0) {
		trace_reader_free(tr);
		return rc;
	}

	struct replay *rp = calloc(1, sizeof(*rp));
	if (!rp) {
		scale_free(sc);
		trace_reader_free(tr);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	rp->sink = sink;
	rp->st = st;
	rp->d = d;
	rp->path = o->trace_path;
	rp->block_size = o->n_pools > 0 ? o->pools[0].cfg.block_size : cfg->block_size;
	rp->max_model_len = o->n_pools > 0 ? 0 : cfg->max_model_len;
	for (int32_t p = 0; p < o->n_pools; p++)
		if (o->pools[p].cfg.max_model_len > rp->max_model_len)
			rp->max_model_len = o->pools[p].cfg.max_model_len;
	if (o->as_recorded) /* no limit a recorded call could reach */
		rp->max_model_len = REPLAY_HORIZON_NS;
	rp->compact_at = o->compact_at > 0 && o->compact_at < rp->max_model_len ? o->compact_at
										 : rp->max_model_len;
	rp->policy = o->context_policy;
	rp->groups = o->groups;
	rp->xf = o->xform && xform_active(o->xform) ? o->xform : NULL;
	vec_init(&rp->scratch, sizeof(struct trace_seg), VEC_NO_LIMIT);
	rc = o->n_pools > 0
		     ? sim_init_pools(&rp->sim, o->pools, o->n_pools, sink, on_done, rp, d)
		     : sim_init(&rp->sim, cfg, o->replicas > 0 ? o->replicas : 1, perf, sink, on_done,
				rp, d);
	if (rc == 0 && o->router)
		rc = sim_set_router(&rp->sim, o->router, d);
	if (rc == 0 && o->pd && o->n_pools > 0)
		rc = sim_set_pd(&rp->sim, o->pd, d);
	if (rc == 0 && o->tiers)
		rc = sim_set_tiers(&rp->sim, o->tiers, d);
	if (rc == 0 && o->hybrid)
		rc = sim_set_hybrid(&rp->sim, o->hybrid, d);
	if (rc == 0 && o->elastic)
		rc = sim_set_elastic(&rp->sim, o->elastic, d);
	if (rc == 0 && o->series_interval_ns > 0)
		rc = sim_set_series(&rp->sim, o->series_interval_ns, d);
	rp->sim.single_step = o->single_step;
	if (o->early) {
		rp->early = o->early;
		const struct slo *slo = o->early->slo;
		for (int i = 0; slo && i < slo->n; i++)
			rp->budget[i] = slo_miss_budget(slo->obj[i].percentile, o->early->total_calls);
		double w = o->early->window_s > 0 ? o->early->window_s : REPLAY_EARLY_WINDOW_S;
		rp->window_ns = sec_to_ns(w) > 0 ? sec_to_ns(w) : 1;
		rp->next_sample_ns = INT64_MIN; /* set at the first arrival */
		rp->growth_windows = o->early->growth_windows > 0 ? o->early->growth_windows
								 : REPLAY_EARLY_GROWTH;
	}

	struct trace_session *next = NULL;
	if (rc == 0)
		rc = next_session(rp, tr, sc, &next, d);
	while (rc == 0 && !rp->stop) {
		int64_t t_sess = next ? sec_to_ns(next->t_s) : INT64_MAX;
		int64_t t_ev = sim_next_time(&rp->sim);
		if (next && t_sess < rp->sim.now_ns)
			t_sess = rp->sim.now_ns; /* cannot happen for sorted input */
		if (rp->early) {
			int64_t t = t_sess < t_ev ? t_sess : t_ev;
			if (rp->next_sample_ns == INT64_MIN && t != INT64_MAX)
				rp->next_sample_ns = t + rp->window_ns;
			early_tick(rp, t);
			if (rp->stop)
				break;
		}
		if (next && t_sess <= t_ev) {
			struct trace_session *ts = next;
			next = NULL;
			rc = start_session(rp, ts);
			if (rc == 0)
				rc = next_session(rp, tr, sc, &next, d);
			continue;
		}
		if (t_ev == INT64_MAX)
			break;
		int got = sim_step(&rp->sim, d);
		if (got < 0)
			rc = got;
		else if (rp->err)
			rc = rp->err;
	}
	if (rc == 0)
		sim_series_flush(&rp->sim);
	st->skipped_lines = trace_reader_skipped(tr);
	st->sim = sim_get_stats(&rp->sim);
	st->pd = rp->sim.pd_stats;
	st->router = rp->sim.router.stats;
	for (int32_t i = 0; o->routed && i < rp->sim.n_replicas; i++)
		o->routed[i] = rp->sim.router.sent[i];
	st->elastic = sim_elastic_stats(&rp->sim);
	if (rc == 0 && !rp->stop)
		rc = sim_check_end(&rp->sim, d);
	if (rc == 0 && !rp->stop && rp->in_flight != 0)
		rc = diag_set(d, DIAG_EINTERNAL, "invariant: %lld sessions never finished",
			      (long long)rp->in_flight);
	trace_session_free(next);
	trace_session_free(rp->copy_of);
	sim_release(&rp->sim);
	while (rp->live) /* only after an error */
		rsess_free(rp, rp->live);
	vec_release(&rp->scratch);
	free(rp);
	if (sc)
		scale_get_info(sc, &st->scale);
	scale_free(sc);
	trace_reader_free(tr);
	return rc;
}
