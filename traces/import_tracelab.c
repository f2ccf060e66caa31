/* SPDX-License-Identifier: Apache-2.0
 * import_tracelab: TraceLab's normalised round traces (one JSON object per
 * LLM call, the shape of its public 357K-call dataset) to canonical sessions.
 *
 * A row gives input_tokens_total = prefix_tokens + newly_append_tokens, so
 * prompt = input_tokens_total and reused prefix = prefix_tokens.  Rows are
 * grouped by session_id and ordered by round_index.  Timing comes from the
 * row's timing_events: the request time is the last input event (user_message
 * or tool_result), the completion the last other event (reasoning, text,
 * tool_call, usage_report); gap = request - previous completion.  tools[]
 * gives the tool outcome (any is_error: fail); a row with a user_message
 * event starts a task.
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/import_tracelab.h"

#include "base/diag.h"
#include "base/map.h"
#include "traces/import_util.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct trow {
	size_t sess;          /* index into ctx.sess */
	int64_t round;
	int64_t total, prefix, output;
	int64_t t_req, t_done;   /* ns since 1970 */
	bool has_t;
	bool has_tool, fail, user;
	uint64_t task_key;    /* id of the row (for the task it starts) */
	uint64_t shared;
	long line;
	size_t order;
	const char *path;
};

struct tsess {
	uint64_t id;
	size_t n_rows;        /* rows so far: the session limit is checked while reading */
	long line;            /* where it began */
	const char *path;     /* owned by ctx.paths */
};

struct tracelab_ctx {
	struct map sess_of;   /* session id hash -> index + 1 */
	struct vec sess;      /* struct tsess */
	struct vec rows;      /* struct trow */
	struct vec paths;     /* char * */
};

static int tl_begin(struct imp *m, void *vctx)
{
	(void)m;
	struct tracelab_ctx *c = vctx;
	map_init(&c->sess_of);
	vec_init(&c->sess, sizeof(struct tsess), VEC_NO_LIMIT);
	vec_init(&c->rows, sizeof(struct trow), VEC_NO_LIMIT);
	vec_init(&c->paths, sizeof(char *), VEC_NO_LIMIT);
	return 0;
}

static void tl_release(void *vctx)
{
	struct tracelab_ctx *c = vctx;
	map_release(&c->sess_of);
	vec_release(&c->sess);
	vec_release(&c->rows);
	for (size_t i = 0; i < c->paths.len; i++)
		free(VEC_AT(&c->paths, char *, i));
	vec_release(&c->paths);
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring && v->valuestring[0] ? v->valuestring : NULL;
}

static bool is_input(const char *type)
{
	return type && (strcmp(type, "user_message") == 0 || strcmp(type, "tool_result") == 0);
}

/* One row; 0, 1 (skipped) or an error. */
static int row(struct imp *m, struct tracelab_ctx *c, const cJSON *root, const char *path,
	       long line, const char *s, size_t n)
{
#define BAD(key, ...) imp_bad(m, path, line, imp_col(s, n, key), __VA_ARGS__)
	const char *sid = str_of(root, "session_id");
	if (!sid)
		return BAD("session_id", "missing 'session_id' (expected the session's id string)");
	int64_t round = 0, prefix = 0, newly = 0, total = 0, output = 0;
	const cJSON *v;
	if ((v = imp_json_path(root, "round_index", NULL)) && !imp_json_int(v, INT64_MAX / 4, &round))
		return BAD("round_index", "bad 'round_index' (expected an integer >= 0)");
	if (!(v = imp_json_path(root, "prefix_tokens", NULL)))
		prefix = 0;
	else if (!imp_json_int(v, TRACE_MAX_TOKENS, &prefix))
		return BAD("prefix_tokens", "bad 'prefix_tokens' (expected an integer 0..1000000000)");
	bool has_newly = (v = imp_json_path(root, "newly_append_tokens", NULL)) != NULL;
	if (has_newly && !imp_json_int(v, TRACE_MAX_TOKENS, &newly))
		return BAD("newly_append_tokens", "bad 'newly_append_tokens' (expected an integer 0..1000000000)");
	if ((v = imp_json_path(root, "input_tokens_total", NULL))) {
		if (!imp_json_int(v, 2 * TRACE_MAX_TOKENS, &total))
			return BAD("input_tokens_total", "bad 'input_tokens_total' (expected an integer 1..2000000000)");
		if (has_newly && total != prefix + newly)
			return BAD("input_tokens_total", "input_tokens_total %lld is not prefix_tokens + "
				   "newly_append_tokens = %lld (expected the two parts to add up)",
				   (long long)total, (long long)(prefix + newly));
	} else if (has_newly) {
		total = prefix + newly;
	} else {
		return BAD("input_tokens_total", "missing 'input_tokens_total' (expected the prompt "
			   "size, prefix_tokens + newly_append_tokens)");
	}
	if (total < 1 || prefix > total)
		return BAD("input_tokens_total", "prompt of %lld tokens with a %lld-token prefix "
			   "(expected 1 or more tokens, prefix at most the prompt)",
			   (long long)total, (long long)prefix);
	if ((v = imp_json_path(root, "output_tokens", NULL)) && !imp_json_int(v, TRACE_MAX_TOKENS, &output))
		return BAD("output_tokens", "bad 'output_tokens' (expected an integer 0..1000000000)");

	struct trow r = {.round = round, .total = total, .prefix = prefix, .output = output,
			 .line = line, .path = path};
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "timing_events");
	if (ev && !cJSON_IsArray(ev) && !cJSON_IsNull(ev))
		return BAD("timing_events", "bad 'timing_events' (expected an array of events)");
	bool have_in = false, have_out = false;
	int64_t first_t = 0;
	const cJSON *e;
	size_t k = 0;
	cJSON_ArrayForEach(e, (cJSON_IsArray(ev) ? ev : NULL)) {
		const char *type = str_of(e, "event_type");
		const char *ts = str_of(e, "timestamp");
		int64_t t;
		if (!ts || !imp_parse_time(ts, &t))
			return BAD("timing_events", "timing_events[%zu] without a valid 'timestamp' "
				   "(expected an ISO 8601 time)", k);
		if (k++ == 0 || t < first_t)
			first_t = t;
		if (is_input(type)) {
			if (!have_in || t > r.t_req)
				r.t_req = t;
			have_in = true;
			r.user |= strcmp(type, "user_message") == 0;
		} else {
			if (!have_out || t > r.t_done)
				r.t_done = t;
			have_out = true;
		}
	}
	r.has_t = k > 0;
	if (!have_in)
		r.t_req = first_t;
	if (!have_out || r.t_done < r.t_req)
		r.t_done = r.t_req;
	const char *fi = str_of(root, "first_input_event_type");
	if (fi && strcmp(fi, "user_message") == 0)
		r.user = true;
	const cJSON *tools = cJSON_GetObjectItemCaseSensitive(root, "tools");
	cJSON_ArrayForEach(e, (cJSON_IsArray(tools) ? tools : NULL)) {
		r.has_tool = true;
		r.fail |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "is_error"));
	}
	const char *rid = str_of(root, "round_id");
	char num[32];
	snprintf(num, sizeof(num), "round-%lld", (long long)round);
	r.task_key = imp_id2(m, sid, rid ? rid : num);
	char agent[64];
	const char *prov = str_of(root, "provider");
	snprintf(agent, sizeof(agent), "tracelab:%s", prov ? prov : "");
	r.shared = imp_shared_content(agent, str_of(root, "model"));

	uint64_t id = imp_id(m, sid);
	uint64_t *at = map_get(&c->sess_of, id);
	if (at) {
		r.sess = *at - 1;
	} else {
		struct tsess *ts = vec_push(&c->sess);
		if (!ts || map_put(&c->sess_of, id, c->sess.len) != 0)
			return diag_set(m->d, DIAG_ENOMEM, "out of memory");
		ts->id = id;
		ts->line = line;
		ts->path = r.path;
		r.sess = c->sess.len - 1;
	}
	struct tsess *ts = &VEC_AT(&c->sess, struct tsess, r.sess);
	int rc = imp_check_calls(m, ts->n_rows, path, line, ts->path, ts->line);
	if (rc != 0)
		return rc;
	ts->n_rows++;
	r.order = c->rows.len;
	struct trow *slot = vec_push(&c->rows);
	if (!slot)
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	*slot = r;
	return 0;
#undef BAD
}

static int tl_record(struct imp *m, void *vctx, cJSON *root, const char *path, long line,
		     const char *s, size_t n)
{
	return row(m, vctx, root, path, line, s, n);
}

static int tl_file(struct imp *m, void *vctx, const char *path)
{
	struct tracelab_ctx *c = vctx;
	const char *keep;
	int rc = imp_keep_path(m, &c->paths, path, &keep);
	return rc ? rc : imp_json_lines(m, keep, "row", tl_record, c);
}

static int cmp_row(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	if (x->sess != y->sess)
		return x->sess < y->sess ? -1 : 1;
	if (x->round != y->round)
		return x->round < y->round ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int tl_end(struct imp *m, void *vctx)
{
	struct tracelab_ctx *c = vctx;
	struct trow *rows = c->rows.data;
	size_t n = c->rows.len;
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_row);
	/* A row without timing events takes the previous row's completion (a
	 * session's first row: the earliest time of the import). */
	int64_t min_t = 0;
	bool have_min = false;
	for (size_t i = 0; i < n; i++)
		if (rows[i].has_t && (!have_min || rows[i].t_req < min_t)) {
			min_t = rows[i].t_req;
			have_min = true;
		}
	for (size_t i = 0; i < n; i++)
		if (!rows[i].has_t)
			rows[i].t_req = rows[i].t_done =
				i > 0 && rows[i - 1].sess == rows[i].sess ? rows[i - 1].t_done : min_t;
	struct sb b;
	sb_init(&b, m);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0;) {
		const struct tsess *s = &VEC_AT(&c->sess, struct tsess, rows[i].sess);
		sb_start(&b, rows[i].path, s->id, imp_rel_s(m, rows[i].t_req), rows[i].line);
		uint64_t task = 0;
		size_t j = i;
		for (; j < n && rows[j].sess == rows[i].sess && rc == 0; j++) {
			const struct trow *r = &rows[j];
			if (r->user || j == i)
				task = r->task_key;
			struct sb_call k = {
				.prompt_tokens = r->total,
				.reused_tokens = r->prefix,
				.output_tokens = r->output,
				.gap_s = j > i ? imp_span_s(rows[j - 1].t_done, r->t_req) : 0,
				.task = task,
				.tool = r->fail ? TRACE_TOOL_FAIL : r->has_tool ? TRACE_TOOL_OK : TRACE_TOOL_NONE,
				.shared_prefix = r->shared,
			};
			rc = sb_add_usage(&b, &k);
		}
		if (rc == 0)
			rc = sb_emit(&b);
		i = j;
	}
	sb_release(&b);
	return rc;
}

const struct imp_format imp_fmt_tracelab = {
	.name = "tracelab",
	.summary = "TraceLab normalised rounds (round_trace.jsonl, one call a line)",
	.flags = IMP_FOLDERS | IMP_REBASE,
	.suffix = ".jsonl",
	.ctx_size = sizeof(struct tracelab_ctx),
	.begin = tl_begin,
	.file = tl_file,
	.end = tl_end,
	.release = tl_release,
};
