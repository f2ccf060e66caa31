/* SPDX-License-Identifier: Apache-2.0
 * import_claude: Claude Code session logs (~/.claude/projects/<project>/
 * <session>.jsonl, and subagent logs beside them) to canonical sessions.
 *
 * One LLM call per distinct message.id: an assistant message is logged as
 * several records (thinking, text, each tool_use) that repeat its usage, so
 * the first record opens the call and later ones only move its completion
 * time and add its tool calls.  The request time of a call is the time of the
 * last user record (a prompt or tool results) logged before it; its
 * completion is its last record; gap = request - previous completion.
 * Sidechain records (subagents) form sessions of their own, keyed by agentId
 * or by the root of their parentUuid chain, with the main session as parent.
 * Records are collected over all files first (a session's subagents may live
 * in other files), then each session's calls are sorted by time and built.
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/import_claude.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/map.h"
#include "traces/import_util.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED_KEY 0x636c2d6b65792d31ULL /* "cl-key-1" */

struct ccall {
	uint64_t session;     /* index into ctx.sess */
	int64_t t_req, t_first, t_last;    /* ns since 1970 */
	int64_t input, creation, read, output;
	uint64_t task;
	uint64_t shared;      /* content of the cross-session prefix (model) */
	bool has_tool, fail;
	long line;
	size_t order;
	const char *path;     /* owned by ctx.paths */
};

struct csess {
	uint64_t id, parent;
	int64_t last_input_t;
	bool have_input;
	uint64_t task;
	long line;
	const char *path;
	size_t n_calls;       /* calls collected so far: checked while reading */
};

struct claude_ctx {
	struct map msg;       /* hash(message.id) -> call index + 1 */
	struct map tool;      /* hash(tool_use id) -> call index + 1 */
	struct map sess_of;   /* session id hash -> sess index + 1 */
	struct map root;      /* hash(uuid) of sidechain records -> root uuid hash */
	struct vec calls;     /* struct ccall */
	struct vec sess;      /* struct csess */
	struct vec paths;     /* char *: file names, for messages */
};

static uint64_t key_hash(const char *s)
{
	return hash_str(s, SEED_KEY);
}

static int claude_begin(struct imp *m, void *vctx)
{
	(void)m;
	struct claude_ctx *c = vctx;
	map_init(&c->msg);
	map_init(&c->tool);
	map_init(&c->sess_of);
	map_init(&c->root);
	vec_init(&c->calls, sizeof(struct ccall), VEC_NO_LIMIT);
	vec_init(&c->sess, sizeof(struct csess), VEC_NO_LIMIT);
	vec_init(&c->paths, sizeof(char *), VEC_NO_LIMIT);
	return 0;
}

static void claude_release(void *vctx)
{
	struct claude_ctx *c = vctx;
	map_release(&c->msg);
	map_release(&c->tool);
	map_release(&c->sess_of);
	map_release(&c->root);
	vec_release(&c->calls);
	vec_release(&c->sess);
	for (size_t i = 0; i < c->paths.len; i++)
		free(VEC_AT(&c->paths, char *, i));
	vec_release(&c->paths);
}

static const char *str_of(const cJSON *root, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
	return cJSON_IsString(v) && v->valuestring && v->valuestring[0] ? v->valuestring : NULL;
}

static bool true_of(const cJSON *root, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, key));
}

struct rec {
	struct imp *m;
	struct claude_ctx *c;
	const char *path;
	long line;
	const char *s;
	size_t n;
};

static int bad(const struct rec *r, const char *key, const char *what)
{
	return imp_bad(r->m, r->path, r->line, key ? imp_col(r->s, r->n, key) : 0, "%s", what);
}

/* The session a user/assistant record belongs to; NULL on a bad record
 * (*rc set: 1 skipped, or an error). */
static struct csess *session_of(const struct rec *r, const cJSON *root, int *rc)
{
	const char *sid = str_of(root, "sessionId");
	if (!sid) {
		*rc = bad(r, "sessionId", "record without 'sessionId' (expected the session's id string)");
		return NULL;
	}
	uint64_t id = 0, parent = 0;
	if (true_of(root, "isSidechain")) {
		const char *agent = str_of(root, "agentId");
		const char *uuid = str_of(root, "uuid");
		const char *up = str_of(root, "parentUuid");
		char sub[40];
		if (agent) {
			id = imp_id2(r->m, sid, agent);
		} else {
			/* Older logs: the chain's root uuid names the subagent. */
			uint64_t self = uuid ? key_hash(uuid) : 0;
			uint64_t *pr = up ? map_get(&r->c->root, key_hash(up)) : NULL;
			uint64_t rootk = pr ? *pr : self;
			if (uuid && map_put(&r->c->root, self, rootk) != 0) {
				*rc = diag_set(r->m->d, DIAG_ENOMEM, "out of memory");
				return NULL;
			}
			snprintf(sub, sizeof(sub), "chain-%016llx", (unsigned long long)rootk);
			id = imp_id2(r->m, sid, sub);
		}
		parent = imp_id(r->m, sid);
	} else {
		id = imp_id(r->m, sid);
	}
	uint64_t *at = map_get(&r->c->sess_of, id);
	if (at)
		return &VEC_AT(&r->c->sess, struct csess, *at - 1);
	struct csess *s = vec_push(&r->c->sess);
	if (!s || map_put(&r->c->sess_of, id, r->c->sess.len) != 0) {
		*rc = diag_set(r->m->d, DIAG_ENOMEM, "out of memory");
		return NULL;
	}
	s->id = id;
	s->parent = parent;
	s->line = r->line;
	s->path = r->path;
	return s;
}

static bool genuine_prompt(const cJSON *root, const cJSON *content)
{
	if (true_of(root, "isMeta") || true_of(root, "isCompactSummary"))
		return false;
	const char *text = NULL;
	if (cJSON_IsString(content)) {
		text = content->valuestring;
	} else if (cJSON_IsArray(content)) {
		const cJSON *b;
		cJSON_ArrayForEach(b, content) {
			const char *type = str_of(b, "type");
			if (type && strcmp(type, "tool_result") == 0)
				return false;
			if (type && strcmp(type, "text") == 0 && !text)
				text = str_of(b, "text");
		}
	}
	if (!text)
		return false;
	/* Slash-command bookkeeping is not a prompt to the model. */
	return strncmp(text, "<local-command-", 15) != 0 && strncmp(text, "<command-", 9) != 0;
}

static int user_record(const struct rec *r, const cJSON *root, int64_t t)
{
	int rc = 0;
	struct csess *s = session_of(r, root, &rc);
	if (!s)
		return rc;
	const cJSON *content = imp_json_path(root, "message", "content", NULL);
	if (cJSON_IsArray(content)) {
		const cJSON *b;
		cJSON_ArrayForEach(b, content) {
			const char *type = str_of(b, "type");
			if (!type || strcmp(type, "tool_result") != 0 || !true_of(b, "is_error"))
				continue;
			const char *tid = str_of(b, "tool_use_id");
			uint64_t *ci = tid ? map_get(&r->c->tool, key_hash(tid)) : NULL;
			if (ci)
				VEC_AT(&r->c->calls, struct ccall, *ci - 1).fail = true;
		}
	}
	if (genuine_prompt(root, content)) {
		const char *uuid = str_of(root, "uuid");
		char num[32];
		snprintf(num, sizeof(num), "line-%ld", r->line);
		s->task = imp_id2(r->m, str_of(root, "sessionId"), uuid ? uuid : num);
	}
	s->last_input_t = t;
	s->have_input = true;
	return 0;
}

static bool usage_int(const cJSON *usage, const char *key, bool required, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(usage, key);
	*out = 0;
	if (!v || cJSON_IsNull(v))
		return !required;
	return imp_json_int(v, TRACE_MAX_TOKENS, out);
}

static int assistant_record(const struct rec *r, const cJSON *root, int64_t t)
{
	const cJSON *msg = imp_json_path(root, "message", NULL);
	const char *model = msg ? str_of(msg, "model") : NULL;
	if (model && strcmp(model, "<synthetic>") == 0)
		return 0; /* a locally made error message, not an LLM call */
	const char *mid = msg ? str_of(msg, "id") : NULL;
	if (!mid)
		return bad(r, "message", "assistant record without message.id (expected the API "
			   "message id that groups its records)");
	const cJSON *usage = imp_json_path(msg, "usage", NULL);
	int64_t in, cc, cr, out;
	if (!cJSON_IsObject(usage))
		return bad(r, "message", "assistant record without message.usage (expected "
			   "{\"input_tokens\": ..., \"output_tokens\": ...})");
	if (!usage_int(usage, "input_tokens", true, &in))
		return bad(r, "input_tokens", "bad message.usage.input_tokens (expected an integer 0..1000000000)");
	if (!usage_int(usage, "output_tokens", true, &out))
		return bad(r, "output_tokens", "bad message.usage.output_tokens (expected an integer 0..1000000000)");
	if (!usage_int(usage, "cache_creation_input_tokens", false, &cc))
		return bad(r, "cache_creation_input_tokens", "bad message.usage.cache_creation_input_tokens "
			   "(expected an integer 0..1000000000)");
	if (!usage_int(usage, "cache_read_input_tokens", false, &cr))
		return bad(r, "cache_read_input_tokens", "bad message.usage.cache_read_input_tokens "
			   "(expected an integer 0..1000000000)");
	int rc = 0;
	struct csess *s = session_of(r, root, &rc);
	if (!s)
		return rc;
	struct claude_ctx *c = r->c;
	uint64_t mk = key_hash(mid);
	uint64_t *at = map_get(&c->msg, mk);
	struct ccall *call;
	if (at) {
		call = &VEC_AT(&c->calls, struct ccall, *at - 1);
		if (t > call->t_last)
			call->t_last = t;
		/* Split records repeat the usage; some versions grow it. */
		call->input = in > call->input ? in : call->input;
		call->creation = cc > call->creation ? cc : call->creation;
		call->read = cr > call->read ? cr : call->read;
		call->output = out > call->output ? out : call->output;
	} else {
		/* the session limit is checked as records arrive, so a session of
		 * millions of calls is refused before it is all in memory */
		rc = imp_check_calls(r->m, s->n_calls, r->path, r->line, s->path, s->line);
		if (rc != 0)
			return rc;
		call = vec_push(&c->calls);
		if (!call || map_put(&c->msg, mk, c->calls.len) != 0)
			return diag_set(r->m->d, DIAG_ENOMEM, "out of memory");
		s->n_calls++;
		call->session = (uint64_t)(s - (struct csess *)c->sess.data);
		call->t_first = call->t_last = t;
		call->t_req = s->have_input ? s->last_input_t : t;
		if (call->t_req > t)
			call->t_req = t;
		call->input = in;
		call->creation = cc;
		call->read = cr;
		call->output = out;
		call->task = s->task;
		call->shared = imp_shared_content("claude-code", model);
		call->line = r->line;
		call->order = c->calls.len - 1;
		call->path = r->path;
	}
	size_t idx = (size_t)(call - (struct ccall *)c->calls.data);
	const cJSON *content = imp_json_path(msg, "content", NULL);
	const cJSON *b;
	cJSON_ArrayForEach(b, (cJSON_IsArray(content) ? content : NULL)) {
		const char *type = str_of(b, "type");
		if (!type || strcmp(type, "tool_use") != 0)
			continue;
		call->has_tool = true;
		const char *tid = str_of(b, "id");
		if (tid && map_put(&c->tool, key_hash(tid), idx + 1) != 0)
			return diag_set(r->m->d, DIAG_ENOMEM, "out of memory");
	}
	return 0;
}

static int claude_record(struct imp *m, void *vctx, cJSON *root, const char *path, long line,
			 const char *s, size_t n)
{
	struct rec r = {.m = m, .c = vctx, .path = path, .line = line, .s = s, .n = n};
	const char *type = str_of(root, "type");
	bool user = type && strcmp(type, "user") == 0;
	bool asst = type && strcmp(type, "assistant") == 0;
	if (!user && !asst)
		return 0;
	const char *ts = str_of(root, "timestamp");
	int64_t t;
	if (!ts || !imp_parse_time(ts, &t))
		return bad(&r, "timestamp", "bad or missing 'timestamp' (expected an ISO 8601 "
			   "time such as 2026-06-01T05:40:20.151Z)");
	return user ? user_record(&r, root, t) : assistant_record(&r, root, t);
}

static int claude_file(struct imp *m, void *vctx, const char *path)
{
	struct claude_ctx *c = vctx;
	const char *keep;
	int rc = imp_keep_path(m, &c->paths, path, &keep);
	return rc ? rc : imp_json_lines(m, keep, "record", claude_record, c);
}

static int cmp_call(const void *a, const void *b)
{
	const struct ccall *x = a, *y = b;
	if (x->session != y->session)
		return x->session < y->session ? -1 : 1;
	if (x->t_first != y->t_first)
		return x->t_first < y->t_first ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int claude_end(struct imp *m, void *vctx)
{
	struct claude_ctx *c = vctx;
	struct ccall *calls = c->calls.data;
	size_t n = c->calls.len;
	if (n)
		qsort(calls, n, sizeof(*calls), cmp_call);
	struct sb b;
	sb_init(&b, m);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0;) {
		const struct csess *s = &VEC_AT(&c->sess, struct csess, calls[i].session);
		sb_start(&b, calls[i].path, s->id, imp_rel_s(m, calls[i].t_req), calls[i].line);
		b.parent = s->parent;
		size_t j = i;
		for (; j < n && calls[j].session == calls[i].session && rc == 0; j++) {
			const struct ccall *k = &calls[j];
			struct sb_call sc = {
				.prompt_tokens = k->input + k->creation + k->read,
				.reused_tokens = k->read,
				.output_tokens = k->output,
				.gap_s = j > i ? imp_span_s(calls[j - 1].t_last, k->t_req) : 0,
				.task = k->task,
				.tool = k->fail ? TRACE_TOOL_FAIL : k->has_tool ? TRACE_TOOL_OK : TRACE_TOOL_NONE,
				.shared_prefix = k->shared,
			};
			if (sc.prompt_tokens < 1) {
				rc = imp_bad(m, k->path, k->line, 0, "assistant message with no input "
					     "tokens (expected input + cache tokens >= 1)");
				rc = rc > 0 ? 0 : rc;
				continue;
			}
			if (sb_calls(&b) == 0) {
				b.t_s = imp_rel_s(m, k->t_req);
				b.line = k->line;
				b.path = k->path;
			}
			rc = sb_add_usage(&b, &sc);
		}
		if (rc == 0)
			rc = sb_emit(&b);
		i = j;
	}
	sb_release(&b);
	return rc;
}

const struct imp_format imp_fmt_claude = {
	.name = "claude-code",
	.summary = "Claude Code session logs (~/.claude/projects; folders or *.jsonl)",
	.flags = IMP_FOLDERS | IMP_REBASE,
	.suffix = ".jsonl",
	.ctx_size = sizeof(struct claude_ctx),
	.begin = claude_begin,
	.file = claude_file,
	.end = claude_end,
	.release = claude_release,
};
