/* SPDX-License-Identifier: Apache-2.0
 * metrics: res_sink that aggregates a run into vllm-bench-serve style metrics
 * (see metrics.h and docs/metrics.md).
 *
 * Invariants: `reasons` is sorted by strcmp on the (truncated) reason and
 * every reason string is owned here; ttft_ms/e2el_ms hold one value per
 * completed request and tpot_ms one per completed request with more than one
 * output token; itl_m2_ns2 is the sum of squared deviations of all ITLs
 * about their mean itl_sum_ns / itl_count.
 */
#include "reports/metrics.h"

#include "base/diag.h"
#include "base/vec.h"
#include "reports/loghist.h"

#include <assert.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* One call as the peak window needs it. */
struct metrics_call {
	int64_t arrival_ns;
	int64_t tokens;         /* prompt + output */
	double ttft_ms;         /* completed calls */
	double tpot_ms;         /* completed calls with output > 1 */
	double e2el_ms;         /* completed calls */
	uint32_t prompt_tokens; /* completed calls (saturated) */
	uint32_t cached_tokens; /* of those, prefix-cache hits (saturated) */
	uint8_t completed;
	uint8_t has_tpot;
	uint8_t good;
	uint8_t prio;           /* res_request.prio */
	uint8_t team;           /* res_request.team */
};

struct metrics {
	struct vec calls;       /* struct metrics_call per request */
	struct vec ttft_ms;     /* double per completed request */
	struct vec tpot_ms;     /* double per completed request with output > 1 */
	struct vec e2el_ms;     /* double per completed request */
	struct vec session_s;   /* makespan per session */
	struct vec task_s;      /* makespan per task */
	struct vec reasons;     /* struct metrics_reason, sorted by reason */

	struct loghist itl_hist_ns;
	int64_t itl_count;
	double itl_sum_ns;
	double itl_m2_ns2;

	int64_t completed;
	int64_t failed;
	bool have_requests;
	int64_t first_arrival_ns;
	int64_t last_end_ns;

	int64_t prompt_tokens;
	int64_t output_tokens;
	int64_t cached_prompt_tokens;
	int64_t computed_prefill_tokens;
	int64_t inflight_miss_tokens;
	int64_t tier_cached_tokens[RES_MAX_TIERS];
	int64_t preemptions;

	int64_t busy_ns;
	double busy_seq_ns;      /* sum of seqs x step time */
	double busy_kv_block_ns; /* sum of mean KV blocks held x step time */
	double flops;
	double bytes;
	int32_t max_seqs;
	int64_t max_kv_blocks;
	struct res_capacity cap;
	int32_t max_replica;     /* -1 until a busy record arrives */
	int32_t replicas_set;    /* 0: derive from max_replica */

	double slo_ttft_ms;      /* 0: no objective */
	double slo_tpot_ms;
	int64_t good;            /* completed requests within every objective */
	int64_t calls_outage;    /* calls flagged `outage` (completed or failed) */
	int64_t good_outage;

	int64_t kind_calls[OUT_KINDS];    /* completed, output > 1 */
	double kind_tpot_ms[OUT_KINDS];   /* sum of their TPOTs */
	int64_t kind_tokens[OUT_KINDS];   /* their output tokens after the first */
	double kind_decode_ns[OUT_KINDS]; /* their first to last token times */

	int64_t session_calls;
	int64_t tasks_accepted;
	int64_t tasks_accept_known;

	bool groups;             /* metrics_set_groups */

	struct diag err;         /* first error met by a sink callback */
};

struct metrics *metrics_new(void)
{
	struct metrics *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	vec_init(&m->calls, sizeof(struct metrics_call), METRICS_MAX_RECORDS);
	vec_init(&m->ttft_ms, sizeof(double), METRICS_MAX_RECORDS);
	vec_init(&m->tpot_ms, sizeof(double), METRICS_MAX_RECORDS);
	vec_init(&m->e2el_ms, sizeof(double), METRICS_MAX_RECORDS);
	vec_init(&m->session_s, sizeof(double), METRICS_MAX_RECORDS);
	vec_init(&m->task_s, sizeof(double), METRICS_MAX_RECORDS);
	vec_init(&m->reasons, sizeof(struct metrics_reason), METRICS_MAX_REASONS);
	loghist_init(&m->itl_hist_ns);
	m->max_replica = -1;
	diag_init(&m->err);
	return m;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->reasons.len; i++) {
		struct metrics_reason *r = vec_at(&m->reasons, i);
		free((char *)r->reason); /* owned: allocated in metrics_count_reason */
	}
	vec_release(&m->reasons);
	vec_release(&m->calls);
	vec_release(&m->ttft_ms);
	vec_release(&m->tpot_ms);
	vec_release(&m->e2el_ms);
	vec_release(&m->session_s);
	vec_release(&m->task_s);
	loghist_release(&m->itl_hist_ns);
	free(m);
}

void metrics_set_replicas(struct metrics *m, int32_t replicas)
{
	m->replicas_set = replicas > 0 ? replicas : 0;
}

void metrics_set_groups(struct metrics *m, bool on)
{
	m->groups = on;
}

void metrics_set_slo(struct metrics *m, double ttft_ms, double tpot_ms)
{
	m->slo_ttft_ms = ttft_ms > 0.0 ? ttft_ms : 0.0;
	m->slo_tpot_ms = tpot_ms > 0.0 ? tpot_ms : 0.0;
}

void metrics_set_capacity(struct metrics *m, const struct res_capacity *c)
{
	m->cap = *c;
}

void metrics_set_max_records(struct metrics *m, size_t max_records)
{
	m->calls.max_len = max_records;
	m->ttft_ms.max_len = max_records;
	m->tpot_ms.max_len = max_records;
	m->e2el_ms.max_len = max_records;
	m->session_s.max_len = max_records;
	m->task_s.max_len = max_records;
}

static void metrics_push(struct metrics *m, struct vec *v, double x, const char *what)
{
	/* Checked here too: vec_push lets len pass a max_len below its first
	 * allocation (8 elements). */
	if (v->len >= v->max_len) {
		diag_set(&m->err, DIAG_ENOMEM, "metrics: more than %zu %s (the limit)",
			 v->max_len, what);
		return;
	}
	double *slot = vec_push(v);
	if (!slot) {
		diag_set(&m->err, DIAG_ENOMEM, "metrics: out of memory after %zu %s",
			 v->len, what);
		return;
	}
	*slot = x;
}

static void metrics_push_call(struct metrics *m, const struct metrics_call *c)
{
	if (m->calls.len >= m->calls.max_len) {
		diag_set(&m->err, DIAG_ENOMEM, "metrics: more than %zu calls (the limit)",
			 m->calls.max_len);
		return;
	}
	struct metrics_call *slot = vec_push(&m->calls);
	if (!slot) {
		diag_set(&m->err, DIAG_ENOMEM, "metrics: out of memory after %zu calls",
			 m->calls.len);
		return;
	}
	*slot = *c;
}

static void metrics_count_reason(struct metrics *m, const char *reason)
{
	char key[METRICS_REASON_MAX_LEN + 1];
	size_t n = strlen(reason);
	if (n > METRICS_REASON_MAX_LEN)
		n = METRICS_REASON_MAX_LEN;
	memcpy(key, reason, n);
	key[n] = '\0';

	size_t lo = 0, hi = m->reasons.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct metrics_reason *r = vec_at(&m->reasons, mid);
		int c = strcmp(r->reason, key);
		if (c == 0) {
			((struct metrics_reason *)vec_at(&m->reasons, mid))->count++;
			return;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	char *copy = m->reasons.len < METRICS_MAX_REASONS ? malloc(n + 1) : NULL;
	if (!copy || !vec_push(&m->reasons)) {
		free(copy);
		diag_set(&m->err, DIAG_ENOMEM,
			 "metrics: cannot record rejection reason '%s' (%zu distinct reasons, limit %d)",
			 key, m->reasons.len, METRICS_MAX_REASONS);
		return;
	}
	memcpy(copy, key, n + 1);
	struct metrics_reason *base = m->reasons.data;
	memmove(base + lo + 1, base + lo, (m->reasons.len - 1 - lo) * sizeof(*base));
	base[lo].reason = copy;
	base[lo].count = 1;
}

static void metrics_on_request(void *ctx, const struct res_request *r)
{
	struct metrics *m = ctx;
	int64_t end_ns;
	if (r->status == RES_COMPLETED)
		end_ns = r->done_ns;
	else if (r->status == RES_REJECTED)
		end_ns = r->done_ns > r->arrival_ns ? r->done_ns : r->arrival_ns;
	else {
		diag_set(&m->err, DIAG_EINPUT, "metrics: request with unknown status %d",
			 (int)r->status);
		return;
	}
	if (!m->have_requests || r->arrival_ns < m->first_arrival_ns)
		m->first_arrival_ns = r->arrival_ns;
	if (!m->have_requests || end_ns > m->last_end_ns)
		m->last_end_ns = end_ns;
	m->have_requests = true;

	struct metrics_call call = {.arrival_ns = r->arrival_ns,
				    .tokens = r->prompt_tokens + r->output_tokens,
				    .prio = (uint8_t)(r->prio >= 0 && r->prio < METRICS_MAX_CLASSES ? r->prio : 0),
				    .team = (uint8_t)(r->team >= 0 && r->team < METRICS_MAX_TEAMS ? r->team : 0)};
	m->calls_outage += r->outage;
	if (r->status == RES_REJECTED) {
		m->failed++;
		metrics_count_reason(m, r->reason ? r->reason : "unspecified");
		metrics_push_call(m, &call);
		return;
	}
	m->completed++;
	m->prompt_tokens += r->prompt_tokens;
	m->output_tokens += r->output_tokens;
	m->cached_prompt_tokens += r->cached_prompt_tokens;
	m->computed_prefill_tokens += r->computed_prefill_tokens;
	m->inflight_miss_tokens += r->inflight_miss_tokens;
	for (int t = 0; t < RES_MAX_TIERS; t++)
		m->tier_cached_tokens[t] += r->tier_cached_tokens[t];
	m->preemptions += r->preemptions;
	double ttft_ms = (double)(r->first_token_ns - r->arrival_ns) / 1e6;
	double tpot_ms = r->output_tokens > 1 ? (double)(r->done_ns - r->first_token_ns) / 1e6 /
							(double)(r->output_tokens - 1)
					      : 0.0;
	bool good = (m->slo_ttft_ms == 0.0 || ttft_ms <= m->slo_ttft_ms) &&
		    (m->slo_tpot_ms == 0.0 || tpot_ms <= m->slo_tpot_ms);
	if (good)
		m->good++;
	if (good && r->outage)
		m->good_outage++;
	call.prompt_tokens = r->prompt_tokens > UINT32_MAX ? UINT32_MAX : (uint32_t)r->prompt_tokens;
	call.cached_tokens = r->cached_prompt_tokens > UINT32_MAX ? UINT32_MAX
							   : (uint32_t)r->cached_prompt_tokens;
	metrics_push(m, &m->ttft_ms, ttft_ms, "completed requests");
	metrics_push(m, &m->e2el_ms, (double)(r->done_ns - r->arrival_ns) / 1e6,
		     "completed requests");
	if (r->output_tokens > 1) {
		metrics_push(m, &m->tpot_ms, tpot_ms, "completed requests");
		int k = r->kind > 0 && r->kind < OUT_KINDS ? r->kind : 0;
		m->kind_calls[k]++;
		m->kind_tpot_ms[k] += tpot_ms;
		m->kind_tokens[k] += r->output_tokens - 1;
		m->kind_decode_ns[k] += (double)(r->done_ns - r->first_token_ns);
	}
	call.completed = 1;
	call.good = good;
	call.e2el_ms = (double)(r->done_ns - r->arrival_ns) / 1e6;
	call.ttft_ms = ttft_ms;
	call.tpot_ms = tpot_ms;
	call.has_tpot = r->output_tokens > 1;
	metrics_push_call(m, &call);
}

/* A run is `seqs` copies of the arithmetic sequence first .. last of `steps`
 * terms.  Its mean is total/steps; the squared deviations of k terms spaced
 * b apart sum to b^2 k (k^2-1)/12, i.e. (last-first)^2 k (k+1) / (12 (k-1)).
 * Runs are merged with the pairwise update of Chan et al., which keeps the
 * sum of squares centred and so free of the cancellation that summing raw
 * squares would suffer when the spread is small against the mean. */
static void metrics_on_itl_run(void *ctx, const struct res_itl_run *r)
{
	struct metrics *m = ctx;
	if (!isfinite(r->first_ns) || !isfinite(r->last_ns) || !isfinite(r->total_ns) ||
	    r->first_ns < 0.0 || r->last_ns < 0.0 || r->total_ns < 0.0 ||
	    r->steps < 0 || r->seqs < 0) {
		diag_set(&m->err, DIAG_EINPUT,
			 "metrics: malformed ITL run (first %g ns, last %g ns, total %g ns, %lld steps, %d seqs)",
			 r->first_ns, r->last_ns, r->total_ns, (long long)r->steps, (int)r->seqs);
		return;
	}
	if (r->steps == 0 || r->seqs == 0)
		return;
	if (r->steps > INT64_MAX / r->seqs || m->itl_count > INT64_MAX - r->steps * r->seqs) {
		diag_set(&m->err, DIAG_ENOMEM, "metrics: inter-token latency count overflows");
		return;
	}
	int64_t nb_i = r->steps * r->seqs;
	double k = (double)r->steps;
	double nb = (double)nb_i;
	double mean_b = r->total_ns / k;
	double m2_b = 0.0;
	if (r->steps > 1) {
		double d = r->last_ns - r->first_ns;
		m2_b = (double)r->seqs * d * d * k * (k + 1.0) / (12.0 * (k - 1.0));
	}
	int rc = loghist_add(&m->itl_hist_ns, r->first_ns, r->last_ns, nb);
	if (rc != 0) {
		diag_set(&m->err, rc, "metrics: out of memory for the ITL histogram");
		return;
	}
	if (m->itl_count == 0) {
		m->itl_m2_ns2 = m2_b;
	} else {
		double na = (double)m->itl_count;
		double delta = mean_b - m->itl_sum_ns / na;
		m->itl_m2_ns2 += m2_b + delta * delta * (na * nb / (na + nb));
	}
	m->itl_sum_ns += r->total_ns * (double)r->seqs;
	m->itl_count += nb_i;
}

static void metrics_on_busy(void *ctx, const struct res_busy *b)
{
	struct metrics *m = ctx;
	if (b->replica < 0 || b->end_ns < b->start_ns) {
		diag_set(&m->err, DIAG_EINPUT,
			 "metrics: malformed busy record (replica %d, %lld .. %lld ns)",
			 (int)b->replica, (long long)b->start_ns, (long long)b->end_ns);
		return;
	}
	int64_t ns = b->end_ns - b->start_ns;
	m->busy_ns += ns;
	m->busy_seq_ns += (double)b->seqs * (double)ns;
	m->busy_kv_block_ns += 0.5 * (double)(b->kv_blocks_start + b->kv_blocks_end) * (double)ns;
	if (isfinite(b->flops) && b->flops > 0)
		m->flops += b->flops;
	if (isfinite(b->bytes) && b->bytes > 0)
		m->bytes += b->bytes;
	if (b->seqs > m->max_seqs)
		m->max_seqs = b->seqs;
	if (b->kv_blocks_end > m->max_kv_blocks)
		m->max_kv_blocks = b->kv_blocks_end;
	if (b->kv_blocks_start > m->max_kv_blocks)
		m->max_kv_blocks = b->kv_blocks_start;
	if (b->replica > m->max_replica)
		m->max_replica = b->replica;
}

static void metrics_on_session(void *ctx, const struct res_span *s)
{
	struct metrics *m = ctx;
	m->session_calls += s->calls;
	metrics_push(m, &m->session_s, (double)(s->end_ns - s->start_ns) / 1e9, "sessions");
}

static void metrics_on_task(void *ctx, const struct res_span *t)
{
	struct metrics *m = ctx;
	if (t->accepted_known) {
		m->tasks_accept_known++;
		if (t->accepted)
			m->tasks_accepted++;
	}
	metrics_push(m, &m->task_s, (double)(t->end_ns - t->start_ns) / 1e9, "tasks");
}

struct res_sink metrics_sink(struct metrics *m)
{
	struct res_sink s = {
		.ctx = m,
		.request = metrics_on_request,
		.itl_run = metrics_on_itl_run,
		.busy = metrics_on_busy,
		.session = metrics_on_session,
		.task = metrics_on_task,
	};
	return s;
}

void metrics_stats_of(double *x, size_t n, struct metrics_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	gsl_sort(x, 1, n);
	out->mean = gsl_stats_mean(x, 1, n);
	/* Population deviation (divides by n), as numpy.std does by default. */
	out->std = gsl_stats_sd_with_fixed_mean(x, 1, n, out->mean);
	/* GSL interpolates at (n-1)*f like numpy's default "linear" method. */
	out->median = gsl_stats_quantile_from_sorted_data(x, 1, n, 0.50);
	out->p90 = gsl_stats_quantile_from_sorted_data(x, 1, n, 0.90);
	out->p95 = gsl_stats_quantile_from_sorted_data(x, 1, n, 0.95);
	out->p99 = gsl_stats_quantile_from_sorted_data(x, 1, n, 0.99);
}

bool metrics_check(const struct metrics *m)
{
	/* After a recorded error the counts may run ahead of the arrays. */
	bool exact = m->err.code == DIAG_OK;
	if (exact && (m->ttft_ms.len != (size_t)m->completed || m->e2el_ms.len != m->ttft_ms.len ||
		      m->tpot_ms.len > m->ttft_ms.len ||
		      m->calls.len != (size_t)(m->completed + m->failed)))
		return false;
	int64_t failed = 0;
	for (size_t i = 0; i < m->reasons.len; i++) {
		const struct metrics_reason *r = vec_at(&m->reasons, i);
		if (r->count <= 0 || strlen(r->reason) > METRICS_REASON_MAX_LEN)
			return false;
		if (i > 0 && strcmp(((const struct metrics_reason *)vec_at(&m->reasons, i - 1))->reason,
				    r->reason) >= 0)
			return false;
		failed += r->count;
	}
	if (exact && failed != m->failed)
		return false;
	if (!loghist_check(&m->itl_hist_ns))
		return false;
	return fabs(m->itl_hist_ns.total - (double)m->itl_count) <= 1e-9 * (double)m->itl_count;
}

/* Statistics of a kept array, computed on a copy so m stays untouched. */
static void metrics_stats_copy(const struct vec *v, double *scratch, struct metrics_stats *out)
{
	if (v->len)
		memcpy(scratch, v->data, v->len * sizeof(double));
	metrics_stats_of(scratch, v->len, out);
}

static int call_cmp(const void *pa, const void *pb)
{
	const struct metrics_call *a = pa, *b = pb;
	if (a->arrival_ns != b->arrival_ns)
		return a->arrival_ns < b->arrival_ns ? -1 : 1;
	/* the rest only makes the order total, so qsort's result is unique */
	if (a->tokens != b->tokens)
		return a->tokens < b->tokens ? -1 : 1;
	if (a->completed != b->completed)
		return a->completed < b->completed ? -1 : 1;
	if (a->ttft_ms != b->ttft_ms)
		return a->ttft_ms < b->ttft_ms ? -1 : 1;
	if (a->tpot_ms != b->tpot_ms)
		return a->tpot_ms < b->tpot_ms ? -1 : 1;
	return 0;
}

/* The peak window of the summary (see metrics.h): calls sorted by arrival,
 * a window [a_i, a_i + W) slid over every arrival with two cursors, the
 * first window with the most tokens kept.  `scratch` holds at least one
 * double per completed call.  O(n log n); 0 or DIAG_ENOMEM. */
static int metrics_peak_window(const struct metrics *m, double *scratch,
			       struct metrics_summary *out)
{
	size_t n = m->calls.len;
	if (n == 0)
		return 0;
	struct metrics_call *c = malloc(n * sizeof(*c));
	if (!c)
		return DIAG_ENOMEM;
	memcpy(c, m->calls.data, n * sizeof(*c));
	qsort(c, n, sizeof(*c), call_cmp);
	const int64_t w = (int64_t)(METRICS_PEAK_WINDOW_S * 1e9);
	size_t best_lo = 0, best_hi = n, hi = 0;
	int64_t best = -1, sum = 0;
	for (size_t lo = 0; lo < n; lo++) {
		while (hi < n && c[hi].arrival_ns - c[lo].arrival_ns < w)
			sum += c[hi++].tokens;
		if (sum > best) {
			best = sum;
			best_lo = lo;
			best_hi = hi;
		}
		sum -= c[lo].tokens;
	}
	int64_t span = c[n - 1].arrival_ns - c[0].arrival_ns;
	out->peak_window_s = span < w ? (double)(out->duration_s) : METRICS_PEAK_WINDOW_S;
	out->peak_offset_s = (double)(c[best_lo].arrival_ns - c[0].arrival_ns) / 1e9;
	out->peak_tokens = best;
	int64_t good = 0;
	size_t nt = 0;
	for (size_t i = best_lo; i < best_hi; i++) {
		out->peak_calls++;
		if (c[i].completed) {
			out->peak_completed++;
			good += c[i].good;
			scratch[nt++] = c[i].ttft_ms;
		} else {
			out->peak_failed++;
		}
	}
	metrics_stats_of(scratch, nt, &out->peak_ttft_ms);
	nt = 0;
	for (size_t i = best_lo; i < best_hi; i++)
		if (c[i].completed && c[i].has_tpot)
			scratch[nt++] = c[i].tpot_ms;
	metrics_stats_of(scratch, nt, &out->peak_tpot_ms);
	out->peak_slo_attainment = (double)good / (double)out->peak_calls;
	free(c);
	return 0;
}

/* The calls of one group (by_team: team == id, else prio == id) into g,
 * using scratch (room for every call). */
static void group_stats(const struct metrics *m, bool by_team, int32_t id, double *scratch,
			struct metrics_group *g)
{
	const struct metrics_call *c = m->calls.data;
	size_t n = m->calls.len;
	g->id = id;
	size_t k = 0;
	for (int pass = 0; pass < 3; pass++) {
		k = 0;
		for (size_t i = 0; i < n; i++) {
			if ((by_team ? c[i].team : c[i].prio) != id)
				continue;
			if (pass == 0 && !c[i].completed)
				g->failed++;
			if (!c[i].completed || (pass == 1 && !c[i].has_tpot))
				continue;
			scratch[k++] = pass == 0 ? c[i].ttft_ms : pass == 1 ? c[i].tpot_ms : c[i].e2el_ms;
		}
		if (pass == 0)
			g->completed = (int64_t)k;
		metrics_stats_of(scratch, k, pass == 0 ? &g->ttft_ms
					    : pass == 1 ? &g->tpot_ms : &g->e2el_ms);
	}
}

/* by_class and by_team: the groups that had calls.  DIAG_ENOMEM. */
static int summarize_groups(const struct metrics *m, struct metrics_summary *out)
{
	const struct metrics_call *c = m->calls.data;
	size_t n = m->calls.len;
	bool cls[METRICS_MAX_CLASSES] = {false}, team[METRICS_MAX_TEAMS] = {false};
	for (size_t i = 0; i < n; i++) {
		cls[c[i].prio] = true;
		team[c[i].team] = true;
	}
	double *scratch = malloc((n ? n : 1) * sizeof(*scratch));
	if (!scratch)
		return DIAG_ENOMEM;
	for (int32_t k = 0; k < METRICS_MAX_CLASSES; k++)
		if (cls[k])
			group_stats(m, false, k, scratch, &out->by_class[out->n_classes++]);
	for (int32_t k = 0; k < METRICS_MAX_TEAMS; k++)
		if (team[k])
			group_stats(m, true, k, scratch, &out->by_team[out->n_teams++]);
	free(scratch);
	return 0;
}

int metrics_summarize(const struct metrics *m, struct metrics_summary *out, struct diag *d)
{
	memset(out, 0, sizeof(*out));
	if (m->err.code != DIAG_OK)
		return diag_set(d, m->err.code, "%s", m->err.msg);
	assert(metrics_check(m));
	if (m->groups && summarize_groups(m, out) != 0)
		return diag_set(d, DIAG_ENOMEM, "out of memory for the latencies by class and team");
	for (int k = 0; k < OUT_KINDS; k++) {
		struct metrics_kind *bk = &out->by_kind[k];
		bk->calls = m->kind_calls[k];
		bk->tpot_ms_mean = bk->calls ? m->kind_tpot_ms[k] / (double)bk->calls : 0;
		bk->decode_tok_s = m->kind_decode_ns[k] > 0
					   ? (double)m->kind_tokens[k] / (m->kind_decode_ns[k] / 1e9)
					   : 0;
	}

	size_t most = m->ttft_ms.len;
	const struct vec *kept[] = {&m->tpot_ms, &m->e2el_ms, &m->session_s, &m->task_s};
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (kept[i]->len > most)
			most = kept[i]->len;
	double *scratch = NULL;
	if (most) {
		scratch = malloc(most * sizeof(double));
		if (!scratch)
			return diag_set(d, DIAG_ENOMEM,
					"metrics: out of memory sorting %zu values", most);
	}

	out->completed = m->completed;
	out->failed = m->failed;
	out->failed_reasons = m->reasons.data;
	out->n_failed_reasons = m->reasons.len;

	int64_t duration_ns = m->have_requests ? m->last_end_ns - m->first_arrival_ns : 0;
	out->duration_s = (double)duration_ns / 1e9;
	if (out->duration_s > 0.0) {
		out->request_throughput = (double)m->completed / out->duration_s;
		out->output_throughput = (double)m->output_tokens / out->duration_s;
		out->total_token_throughput =
			(double)(m->prompt_tokens + m->output_tokens) / out->duration_s;
		out->request_goodput = (double)m->good / out->duration_s;
	}
	out->good_requests = m->good;
	out->calls_outage = m->calls_outage;
	out->good_outage = m->good_outage;
	if (m->completed + m->failed > 0)
		out->slo_attainment = (double)m->good / (double)(m->completed + m->failed);

	metrics_stats_copy(&m->ttft_ms, scratch, &out->ttft_ms);
	metrics_stats_copy(&m->tpot_ms, scratch, &out->tpot_ms);
	metrics_stats_copy(&m->e2el_ms, scratch, &out->e2el_ms);

	out->itl_count = m->itl_count;
	if (m->itl_count > 0) {
		double n = (double)m->itl_count;
		const struct loghist *h = &m->itl_hist_ns;
		out->itl_ms.mean = m->itl_sum_ns / n / 1e6;
		out->itl_ms.std = sqrt(m->itl_m2_ns2 / n) / 1e6;
		out->itl_ms.median = loghist_percentile(h, 50.0) / 1e6;
		out->itl_ms.p90 = loghist_percentile(h, 90.0) / 1e6;
		out->itl_ms.p95 = loghist_percentile(h, 95.0) / 1e6;
		out->itl_ms.p99 = loghist_percentile(h, 99.0) / 1e6;
	}

	out->prompt_tokens = m->prompt_tokens;
	out->output_tokens = m->output_tokens;
	out->cached_prompt_tokens = m->cached_prompt_tokens;
	out->computed_prefill_tokens = m->computed_prefill_tokens;
	out->inflight_miss_tokens = m->inflight_miss_tokens;
	for (int t = 0; t < RES_MAX_TIERS; t++)
		out->tier_cached_tokens[t] = m->tier_cached_tokens[t];
	if (m->prompt_tokens > 0)
		out->prefix_cache_hit_rate =
			(double)m->cached_prompt_tokens / (double)m->prompt_tokens;
	out->preemptions = m->preemptions;

	out->replicas = m->replicas_set > 0 ? m->replicas_set : m->max_replica + 1;
	if (duration_ns > 0 && out->replicas > 0)
		out->gpu_busy_fraction =
			(double)m->busy_ns / ((double)duration_ns * (double)out->replicas);

	double run_ns = (double)duration_ns * (double)(out->replicas > 0 ? out->replicas : 1);
	double busy_ns = (double)m->busy_ns;
	if (m->cap.peak_flops > 0 && run_ns > 0) {
		out->compute_fraction = m->flops / (run_ns * 1e-9 * m->cap.peak_flops);
		if (busy_ns > 0)
			out->compute_fraction_busy = m->flops / (busy_ns * 1e-9 * m->cap.peak_flops);
	}
	if (m->cap.peak_bytes_per_s > 0 && run_ns > 0) {
		out->bandwidth_fraction = m->bytes / (run_ns * 1e-9 * m->cap.peak_bytes_per_s);
		if (busy_ns > 0)
			out->bandwidth_fraction_busy =
				m->bytes / (busy_ns * 1e-9 * m->cap.peak_bytes_per_s);
	}
	if (busy_ns > 0) {
		out->batch_seqs_mean = m->busy_seq_ns / busy_ns;
		if (m->cap.kv_blocks > 0)
			out->kv_use_mean = m->busy_kv_block_ns / busy_ns / (double)m->cap.kv_blocks;
	}
	if (m->cap.max_num_seqs > 0)
		out->batch_occupancy = out->batch_seqs_mean / (double)m->cap.max_num_seqs;
	out->batch_seqs_max = m->max_seqs;
	if (m->cap.kv_blocks > 0)
		out->kv_use_peak = (double)m->max_kv_blocks / (double)m->cap.kv_blocks;
	if (metrics_peak_window(m, scratch, out) != 0) {
		free(scratch);
		return diag_set(d, DIAG_ENOMEM, "metrics: out of memory sorting %zu calls",
				m->calls.len);
	}

	out->sessions = (int64_t)m->session_s.len;
	if (out->sessions > 0)
		out->session_calls_mean = (double)m->session_calls / (double)out->sessions;
	metrics_stats_copy(&m->session_s, scratch, &out->session_makespan_s);
	out->tasks = (int64_t)m->task_s.len;
	out->tasks_accepted = m->tasks_accepted;
	out->tasks_accept_known = m->tasks_accept_known;
	metrics_stats_copy(&m->task_s, scratch, &out->task_makespan_s);

	free(scratch);
	return 0;
}

double *metrics_series_sorted(const struct metrics *m, enum metrics_series which, size_t *n)
{
	const struct vec *v = which == METRICS_TTFT_MS ? &m->ttft_ms :
			      which == METRICS_TPOT_MS ? &m->tpot_ms : &m->e2el_ms;
	*n = 0;
	if (v->len == 0)
		return NULL;
	double *x = malloc(v->len * sizeof(*x));
	if (!x) {
		*n = SIZE_MAX;
		return NULL;
	}
	memcpy(x, v->data, v->len * sizeof(*x));
	gsl_sort(x, 1, v->len);
	*n = v->len;
	return x;
}

double *metrics_arrivals_per_bin(const struct metrics *m, double bin_s, size_t *n)
{
	*n = 0;
	if (!m->have_requests || m->calls.len == 0 || !(bin_s > 0.0))
		return NULL;
	int64_t bin_ns = (int64_t)(bin_s * 1e9);
	if (bin_ns < 1)
		bin_ns = 1;
	int64_t last = 0;
	for (size_t i = 0; i < m->calls.len; i++) {
		const struct metrics_call *c = vec_at(&m->calls, i);
		if (c->arrival_ns - m->first_arrival_ns > last)
			last = c->arrival_ns - m->first_arrival_ns;
	}
	size_t bins = (size_t)(last / bin_ns) + 1;
	double *counts = calloc(bins, sizeof(*counts));
	if (!counts) {
		*n = SIZE_MAX;
		return NULL;
	}
	for (size_t i = 0; i < m->calls.len; i++) {
		const struct metrics_call *c = vec_at(&m->calls, i);
		counts[(size_t)((c->arrival_ns - m->first_arrival_ns) / bin_ns)] += 1.0;
	}
	*n = bins;
	return counts;
}

double *metrics_hit_rate_per_bin(const struct metrics *m, double bin_s, size_t *n)
{
	double *counts = metrics_arrivals_per_bin(m, bin_s, n);
	if (!counts)
		return NULL;
	double *cached = calloc(*n, sizeof(*cached));
	if (!cached) {
		free(counts);
		*n = SIZE_MAX;
		return NULL;
	}
	int64_t bin_ns = (int64_t)(bin_s * 1e9);
	if (bin_ns < 1)
		bin_ns = 1;
	/* counts becomes the prompt tokens of each bin */
	memset(counts, 0, *n * sizeof(*counts));
	for (size_t i = 0; i < m->calls.len; i++) {
		const struct metrics_call *c = vec_at(&m->calls, i);
		size_t b = (size_t)((c->arrival_ns - m->first_arrival_ns) / bin_ns);
		counts[b] += (double)c->prompt_tokens;
		cached[b] += (double)c->cached_tokens;
	}
	for (size_t b = 0; b < *n; b++)
		counts[b] = counts[b] > 0.0 ? cached[b] / counts[b] : NAN;
	free(cached);
	return counts;
}
