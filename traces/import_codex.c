/* SPDX-License-Identifier: Apache-2.0
 * import_codex: Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/
 * rollout-*.jsonl) to canonical sessions, one session per file.
 *
 * A call is one event_msg token_count record with info.last_token_usage (a
 * record whose cumulative total equals the previous one is a repeat and is
 * dropped).  Codex's input_tokens already include cached_input_tokens, so
 * prompt = input_tokens and reused prefix = cached_input_tokens.  The call's
 * request time is the last input record (a user message or a tool output)
 * before its first output record (reasoning, assistant message, tool call);
 * its completion is the token_count record; gap = request - previous
 * completion.  A tool output whose text says "Process exited with code N"
 * with N != 0 (or whose metadata says so) marks the call that asked for it
 * as failed.  Each event_msg user_message starts a task.
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/import_codex.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/map.h"
#include "traces/import_util.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED_KEY 0x63782d6b65792d31ULL /* "cx-key-1" */

struct xcall {
	int64_t t_req, t_done;   /* ns since 1970 */
	int64_t input, cached, output;
	uint64_t task;
	bool has_tool, fail;
	long line;
};

struct codex_ctx {
	struct vec calls;     /* struct xcall of the current file */
	struct map tool;      /* hash(call_id) -> call index + 1, or 0 for a pending call */
	struct vec pending;   /* uint64_t: call_id hashes asked for by the call being generated */
	struct map used;      /* session ids written, to keep a repeated id distinct */
};

static int codex_begin(struct imp *m, void *vctx)
{
	(void)m;
	struct codex_ctx *c = vctx;
	vec_init(&c->calls, sizeof(struct xcall), VEC_NO_LIMIT);
	vec_init(&c->pending, sizeof(uint64_t), VEC_NO_LIMIT);
	map_init(&c->tool);
	map_init(&c->used);
	return 0;
}

static void codex_release(void *vctx)
{
	struct codex_ctx *c = vctx;
	vec_release(&c->calls);
	vec_release(&c->pending);
	map_release(&c->tool);
	map_release(&c->used);
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

static bool is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

/* Did a tool output report failure? */
static bool output_failed(const cJSON *payload)
{
	const cJSON *out = cJSON_GetObjectItemCaseSensitive(payload, "output");
	if (cJSON_IsObject(out)) {
		const cJSON *ok = cJSON_GetObjectItemCaseSensitive(out, "success");
		if (cJSON_IsFalse(ok))
			return true;
		out = cJSON_GetObjectItemCaseSensitive(out, "content");
	}
	if (!cJSON_IsString(out) || !out->valuestring)
		return false;
	const char *s = out->valuestring;
	cJSON *inner = s[0] == '{' ? cJSON_Parse(s) : NULL;
	if (inner) {
		const cJSON *code = imp_json_path(inner, "metadata", "exit_code", NULL);
		bool failed = cJSON_IsNumber(code) && code->valuedouble != 0;
		cJSON_Delete(inner);
		return failed;
	}
	const char *p = strstr(s, "Process exited with code ");
	if (!p)
		return false;
	long code = strtol(p + strlen("Process exited with code "), NULL, 10);
	return code != 0;
}

struct scan {
	int64_t last_input_t;
	bool have_input;
	int64_t req_t;          /* request time of the call being generated */
	bool have_req;
	bool have_prev_total;
	int64_t prev_total[3];
	uint64_t task;
	int64_t n_prompts;
	char sid[128];
	char model[96];
};

static int token_count(struct imp *m, struct codex_ctx *c, struct scan *sc, const cJSON *payload,
		       int64_t t, const char *path, long line, const char *s, size_t n)
{
	const cJSON *info = imp_json_path(payload, "info", NULL);
	if (!info)
		return 0; /* rate-limit only update */
	const cJSON *last = imp_json_path(info, "last_token_usage", NULL);
	const cJSON *total = imp_json_path(info, "total_token_usage", NULL);
	if (!cJSON_IsObject(last))
		return imp_bad(m, path, line, imp_col(s, n, "info"), "token_count without "
			       "info.last_token_usage (expected the usage of the call just made)");
	int64_t in, cached = 0, out;
	const cJSON *v;
	if (!imp_json_int(cJSON_GetObjectItemCaseSensitive(last, "input_tokens"), TRACE_MAX_TOKENS, &in))
		return imp_bad(m, path, line, imp_col(s, n, "input_tokens"), "bad last_token_usage."
			       "input_tokens (expected an integer 0..1000000000)");
	if (!imp_json_int(cJSON_GetObjectItemCaseSensitive(last, "output_tokens"), TRACE_MAX_TOKENS, &out))
		return imp_bad(m, path, line, imp_col(s, n, "output_tokens"), "bad last_token_usage."
			       "output_tokens (expected an integer 0..1000000000)");
	if ((v = cJSON_GetObjectItemCaseSensitive(last, "cached_input_tokens")) && !cJSON_IsNull(v) &&
	    !imp_json_int(v, TRACE_MAX_TOKENS, &cached))
		return imp_bad(m, path, line, imp_col(s, n, "cached_input_tokens"), "bad last_token_usage."
			       "cached_input_tokens (expected an integer 0..1000000000)");
	if (cached > in)
		return imp_bad(m, path, line, imp_col(s, n, "cached_input_tokens"), "cached_input_tokens "
			       "%lld exceed input_tokens %lld (expected the cached part of the input)",
			       (long long)cached, (long long)in);
	if (in < 1)
		return imp_bad(m, path, line, imp_col(s, n, "input_tokens"), "input_tokens 0 "
			       "(expected a prompt of at least one token)");
	if (cJSON_IsObject(total)) {
		int64_t tt[3] = {-1, -1, -1};
		imp_json_int(cJSON_GetObjectItemCaseSensitive(total, "input_tokens"), INT64_MAX / 4, &tt[0]);
		imp_json_int(cJSON_GetObjectItemCaseSensitive(total, "output_tokens"), INT64_MAX / 4, &tt[1]);
		imp_json_int(cJSON_GetObjectItemCaseSensitive(total, "cached_input_tokens"), INT64_MAX / 4, &tt[2]);
		bool same = sc->have_prev_total && memcmp(tt, sc->prev_total, sizeof(tt)) == 0;
		memcpy(sc->prev_total, tt, sizeof(tt));
		sc->have_prev_total = true;
		if (same)
			return 0; /* the same report again */
	}
	int rc = imp_check_calls(m, c->calls.len, path, line, path, 1); /* a file is a session */
	if (rc != 0)
		return rc;
	struct xcall *x = vec_push(&c->calls);
	if (!x)
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	x->t_req = sc->have_req ? sc->req_t : sc->have_input ? sc->last_input_t : t;
	if (x->t_req > t)
		x->t_req = t;
	x->t_done = t;
	x->input = in;
	x->cached = cached;
	x->output = out;
	x->task = sc->task;
	x->line = line;
	x->has_tool = c->pending.len > 0;
	for (size_t i = 0; i < c->pending.len; i++)
		if (map_put(&c->tool, VEC_AT(&c->pending, uint64_t, i), c->calls.len) != 0)
			return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	vec_clear(&c->pending);
	sc->have_req = false;
	return 0;
}

static void mark_request(struct scan *sc, int64_t t)
{
	if (!sc->have_req) {
		sc->req_t = sc->have_input ? sc->last_input_t : t;
		sc->have_req = true;
	}
}

static int record(struct imp *m, struct codex_ctx *c, struct scan *sc, const cJSON *root,
		  const char *path, long line, const char *s, size_t n)
{
	const char *type = str_of(root, "type");
	const cJSON *payload = cJSON_GetObjectItemCaseSensitive(root, "payload");
	if (!type || !cJSON_IsObject(payload))
		return 0; /* not a record of the current rollout layout: ignored */
	const char *ts = str_of(root, "timestamp");
	int64_t t;
	if (!ts || !imp_parse_time(ts, &t))
		return imp_bad(m, path, line, imp_col(s, n, "timestamp"), "bad or missing 'timestamp' "
			       "(expected an ISO 8601 time such as 2026-03-21T10:05:59.326Z)");
	const char *pt = str_of(payload, "type");
	if (is(type, "session_meta")) {
		const char *id = str_of(payload, "id");
		if (id && !sc->sid[0])
			snprintf(sc->sid, sizeof(sc->sid), "%s", id);
		return 0;
	}
	if (is(type, "turn_context")) {
		const char *model = str_of(payload, "model");
		if (model && !sc->model[0])
			snprintf(sc->model, sizeof(sc->model), "%s", model);
		return 0;
	}
	if (is(type, "event_msg")) {
		if (is(pt, "token_count"))
			return token_count(m, c, sc, payload, t, path, line, s, n);
		if (is(pt, "user_message")) {
			char k[48];
			snprintf(k, sizeof(k), "task-%lld", (long long)sc->n_prompts++);
			sc->task = imp_id2(m, sc->sid[0] ? sc->sid : path, k);
			sc->last_input_t = t;
			sc->have_input = true;
		} else if (is(pt, "agent_message") || is(pt, "agent_reasoning")) {
			mark_request(sc, t);
		}
		return 0;
	}
	if (!is(type, "response_item"))
		return 0;
	if (is(pt, "function_call_output") || is(pt, "custom_tool_call_output")) {
		const char *cid = str_of(payload, "call_id");
		uint64_t *ci = cid ? map_get(&c->tool, hash_str(cid, SEED_KEY)) : NULL;
		if (ci && *ci && output_failed(payload))
			VEC_AT(&c->calls, struct xcall, *ci - 1).fail = true;
		sc->last_input_t = t;
		sc->have_input = true;
	} else if (is(pt, "message")) {
		const char *role = str_of(payload, "role");
		if (is(role, "assistant")) {
			mark_request(sc, t);
		} else if (is(role, "user")) {
			sc->last_input_t = t;
			sc->have_input = true;
		}
	} else if (is(pt, "function_call") || is(pt, "custom_tool_call") || is(pt, "local_shell_call") ||
		   is(pt, "web_search_call")) {
		mark_request(sc, t);
		const char *cid = str_of(payload, "call_id");
		uint64_t *slot = vec_push(&c->pending);
		if (!slot)
			return diag_set(m->d, DIAG_ENOMEM, "out of memory");
		*slot = cid ? hash_str(cid, SEED_KEY) : hash_combine(SEED_KEY, (uint64_t)line);
	} else if (is(pt, "reasoning")) {
		mark_request(sc, t);
	}
	return 0;
}

/* One file's reading state for the record callback. */
struct codex_pass {
	struct codex_ctx *c;
	struct scan *sc;
};

static int codex_record(struct imp *m, void *vctx, cJSON *root, const char *path, long line,
			const char *s, size_t n)
{
	struct codex_pass *p = vctx;
	return record(m, p->c, p->sc, root, path, line, s, n);
}

static int codex_file(struct imp *m, void *vctx, const char *path)
{
	struct codex_ctx *c = vctx;
	vec_clear(&c->calls);
	vec_clear(&c->pending);
	map_release(&c->tool);
	map_init(&c->tool);
	struct scan sc;
	memset(&sc, 0, sizeof(sc));
	struct codex_pass pass = {.c = c, .sc = &sc};
	int rc = imp_json_lines(m, path, "record", codex_record, &pass);
	if (rc < 0)
		return rc;
	if (c->calls.len == 0)
		return 0;
	const struct xcall *x = c->calls.data;
	struct sb b;
	sb_init(&b, m);
	/* The same session id in two files (a copied rollout): keep both. */
	uint64_t id = imp_id(m, sc.sid[0] ? sc.sid : path);
	for (uint64_t k = 1; map_get(&c->used, id); k++)
		id = hash_combine(id, k);
	if (map_put(&c->used, id, 1) != 0) {
		sb_release(&b);
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	}
	sb_start(&b, path, id, imp_rel_s(m, x[0].t_req), x[0].line);
	rc = 0;
	for (size_t i = 0; i < c->calls.len && rc == 0; i++) {
		struct sb_call k = {
			.prompt_tokens = x[i].input,
			.reused_tokens = x[i].cached,
			.output_tokens = x[i].output,
			.gap_s = i ? imp_span_s(x[i - 1].t_done, x[i].t_req) : 0,
			.task = x[i].task,
			.tool = x[i].fail ? TRACE_TOOL_FAIL : x[i].has_tool ? TRACE_TOOL_OK : TRACE_TOOL_NONE,
			.shared_prefix = imp_shared_content("codex", sc.model),
		};
		rc = sb_add_usage(&b, &k);
	}
	if (rc == 0)
		rc = sb_emit(&b);
	sb_release(&b);
	return rc;
}

const struct imp_format imp_fmt_codex = {
	.name = "codex",
	.summary = "Codex CLI rollouts (~/.codex/sessions; folders or rollout-*.jsonl)",
	.flags = IMP_FOLDERS | IMP_REBASE,
	.suffix = ".jsonl",
	.ctx_size = sizeof(struct codex_ctx),
	.begin = codex_begin,
	.file = codex_file,
	.end = NULL,
	.release = codex_release,
};
