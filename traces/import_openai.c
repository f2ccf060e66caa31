/* SPDX-License-Identifier: Apache-2.0
 * import_openai: gateway logs of OpenAI chat-completion requests (JSON
 * lines; each a request body with a timestamp) to canonical sessions.  This
 * is the one text-bearing importer: a prompt is one segment per message
 * (plus one for the tool definitions), whose content is a hash of the
 * message and whose token count is estimated from its text.
 *
 * Estimate (docs/importers.md): a message costs 4 tokens of chat template
 * plus ceil(characters / 4) for its text (content text parts, tool call
 * names and arguments); an image part costs 85 tokens; the tool definitions
 * cost ceil(characters of their JSON / 4).  Output tokens come from
 * response.usage.completion_tokens, else are estimated from the response's
 * message, else from the assistant message the session's next request
 * replays, else are unknown (written as 1, counted in `estimated`).
 *
 * Requests with a session key (session_id, conversation_id or
 * metadata.session_id) are buffered per session and ordered by time; one
 * whose messages repeat the previous request's messages plus an assistant
 * message extends it.  Requests without a key are open-loop one-call
 * sessions.  Text is kept in the output only with keep_text.
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/import_openai.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/map.h"
#include "traces/import_util.h"
#include "traces/reader.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKENS_PER_MESSAGE 4
#define TOKENS_PER_IMAGE 85

struct omsg {
	uint64_t content;
	int64_t tokens;
	char role;            /* 's'ystem, 'u'ser, 'a'ssistant, 't'ool, '?' */
	bool tool_calls;
	char *text;           /* keep_text only */
};

struct oreq {
	size_t sess;
	int64_t t, dur;       /* ns: clock time, latency */
	int64_t out;          /* -1: unknown */
	bool out_tool_calls;  /* the response asked for tools */
	size_t m0, nm;        /* messages in ctx.msgs */
	struct omsg tools;    /* tokens 0: none */
	uint64_t engineer;
	long line;
	size_t order;
	const char *path;
};

struct osess {
	uint64_t id;
	char *key;            /* raw session key, for task ids */
	size_t n_reqs;        /* requests so far: the session limit is checked while reading */
	long line;            /* where it began */
	const char *path;     /* owned by ctx.paths */
};

struct openai_ctx {
	int64_t file_no;
	struct map sess_of;
	struct vec sess;      /* struct osess */
	struct vec reqs;      /* struct oreq */
	struct vec msgs;      /* struct omsg */
	struct vec paths;     /* char * */
	struct vec text;      /* char scratch */
};

static int oa_begin(struct imp *m, void *vctx)
{
	(void)m;
	struct openai_ctx *c = vctx;
	map_init(&c->sess_of);
	vec_init(&c->sess, sizeof(struct osess), VEC_NO_LIMIT);
	vec_init(&c->reqs, sizeof(struct oreq), VEC_NO_LIMIT);
	vec_init(&c->msgs, sizeof(struct omsg), VEC_NO_LIMIT);
	vec_init(&c->paths, sizeof(char *), VEC_NO_LIMIT);
	vec_init(&c->text, 1, VEC_NO_LIMIT);
	return 0;
}

static void oa_release(void *vctx)
{
	struct openai_ctx *c = vctx;
	map_release(&c->sess_of);
	for (size_t i = 0; i < c->sess.len; i++)
		free(VEC_AT(&c->sess, struct osess, i).key);
	vec_release(&c->sess);
	for (size_t i = 0; i < c->reqs.len; i++)
		free(VEC_AT(&c->reqs, struct oreq, i).tools.text);
	vec_release(&c->reqs);
	for (size_t i = 0; i < c->msgs.len; i++)
		free(VEC_AT(&c->msgs, struct omsg, i).text);
	vec_release(&c->msgs);
	for (size_t i = 0; i < c->paths.len; i++)
		free(VEC_AT(&c->paths, char *, i));
	vec_release(&c->paths);
	vec_release(&c->text);
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring && v->valuestring[0] ? v->valuestring : NULL;
}

/* Characters (code points) of UTF-8 text. */
static int64_t chars(const char *s, size_t n)
{
	int64_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += ((unsigned char)s[i] & 0xc0) != 0x80;
	return k;
}

static int64_t est(int64_t nchars)
{
	return (nchars + 3) / 4;
}

static int add_text(struct vec *v, const char *s)
{
	size_t n = strlen(s);
	if (vec_reserve(v, v->len + n + 1) != 0)
		return DIAG_ENOMEM;
	memcpy((char *)v->data + v->len, s, n + 1);
	v->len += n;
	return 0;
}

/* Text and token estimate of one message (or response message). */
static int message(struct imp *m, struct openai_ctx *c, const cJSON *msg, struct omsg *out)
{
	memset(out, 0, sizeof(*out));
	vec_clear(&c->text);
	if (vec_reserve(&c->text, 1) != 0)
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	((char *)c->text.data)[0] = '\0';
	int64_t extra = 0;
	int rc = 0;
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
	if (cJSON_IsString(content)) {
		rc = add_text(&c->text, content->valuestring);
	} else if (cJSON_IsArray(content)) {
		const cJSON *part;
		cJSON_ArrayForEach(part, content) {
			const char *t = str_of(part, "text");
			const char *type = str_of(part, "type");
			if (t)
				rc |= add_text(&c->text, t);
			else if (type && strstr(type, "image"))
				extra += TOKENS_PER_IMAGE;
		}
	}
	const cJSON *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
	const cJSON *call;
	cJSON_ArrayForEach(call, (cJSON_IsArray(calls) ? calls : NULL)) {
		const cJSON *fn = cJSON_GetObjectItemCaseSensitive(call, "function");
		const char *name = str_of(fn, "name"), *args = str_of(fn, "arguments");
		out->tool_calls = true;
		if (name)
			rc |= add_text(&c->text, name);
		if (args)
			rc |= add_text(&c->text, args);
	}
	if (rc)
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	const char *role = str_of(msg, "role");
	out->role = !role ? '?' : strcmp(role, "system") == 0 || strcmp(role, "developer") == 0 ? 's'
		: strcmp(role, "user") == 0 ? 'u' : strcmp(role, "assistant") == 0 ? 'a'
		: strcmp(role, "tool") == 0 || strcmp(role, "function") == 0 ? 't' : '?';
	out->tokens = TOKENS_PER_MESSAGE + est(chars(c->text.data, c->text.len)) + extra;
	char *json = cJSON_PrintUnformatted(msg);
	if (!json)
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	out->content = imp_text_content(m, "openai-message", json, strlen(json));
	cJSON_free(json);
	if (m->keep_text && !(out->text = strdup(c->text.data)))
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	return 0;
}

static bool time_of(const cJSON *v, int64_t *out)
{
	if (cJSON_IsString(v))
		return imp_parse_time(v->valuestring, out);
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || !(v->valuedouble < 1e13))
		return false;
	double s = v->valuedouble > 1e11 ? v->valuedouble / 1000 : v->valuedouble; /* ms or s */
	*out = llround(s * 1e9);
	return true;
}

static const cJSON *first_of(const cJSON *o, const char *const *keys)
{
	for (; *keys; keys++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, *keys);
		if (v && !cJSON_IsNull(v))
			return v;
	}
	return NULL;
}

static const char *const K_TIME[] = {"timestamp", "time", "ts", "created_at", "start_time", NULL};
static const char *const K_BODY[] = {"request", "body", NULL};
static const char *const K_SESS[] = {"session_id", "session", "conversation_id", NULL};
static const char *const K_USER[] = {"user", "user_id", NULL};

/* Session index for key (creating it); SIZE_MAX on out of memory. */
static size_t session_index(struct imp *m, struct openai_ctx *c, const char *key)
{
	uint64_t id = imp_id(m, key);
	uint64_t *at = map_get(&c->sess_of, id);
	if (at)
		return *at - 1;
	char *copy = strdup(key);
	struct osess *s = copy ? vec_push(&c->sess) : NULL;
	if (!s || map_put(&c->sess_of, id, c->sess.len) != 0) {
		free(copy);
		if (s)
			c->sess.len--;
		return SIZE_MAX;
	}
	s->id = id;
	s->key = copy;
	return c->sess.len - 1;
}

static int request(struct imp *m, struct openai_ctx *c, const cJSON *root, const char *path,
		   long line, const char *s, size_t n)
{
	const cJSON *body = first_of(root, K_BODY);
	if (!cJSON_IsObject(body))
		body = root;
	const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(body, "messages");
	if (!cJSON_IsArray(msgs) || cJSON_GetArraySize(msgs) == 0)
		return imp_bad(m, path, line, imp_col(s, n, "messages"), "no 'messages' (expected a "
			       "chat-completion request body with a non-empty messages array)");
	int64_t t;
	const cJSON *tv = first_of(root, K_TIME);
	if (!tv || !time_of(tv, &t))
		return imp_bad(m, path, line, tv ? imp_col(s, n, "timestamp") : 0, "bad or missing "
			       "timestamp (expected 'timestamp': an ISO 8601 time or epoch seconds)");
	struct oreq r = {.t = t, .out = -1, .line = line, .path = path, .order = c->reqs.len};
	const cJSON *dv = cJSON_GetObjectItemCaseSensitive(root, "duration_ms");
	if (!dv)
		dv = cJSON_GetObjectItemCaseSensitive(root, "latency_ms");
	if (cJSON_IsNumber(dv) && dv->valuedouble >= 0 && dv->valuedouble < 1e12)
		r.dur = llround(dv->valuedouble * 1e6);
	const cJSON *resp = cJSON_GetObjectItemCaseSensitive(root, "response");
	int64_t ct;
	if (imp_json_int(imp_json_path(resp, "usage", "completion_tokens", NULL), TRACE_MAX_TOKENS, &ct))
		r.out = ct;
	const cJSON *choices = imp_json_path(resp, "choices", NULL);
	const cJSON *rmsg = cJSON_IsArray(choices) ? imp_json_path(cJSON_GetArrayItem(choices, 0),
								  "message", NULL) : NULL;
	if (cJSON_IsObject(rmsg)) {
		struct omsg om;
		int rc = message(m, c, rmsg, &om);
		free(om.text);
		if (rc)
			return rc;
		r.out_tool_calls = om.tool_calls;
		if (r.out < 0) {
			r.out = om.tokens - TOKENS_PER_MESSAGE;
			m->st->estimated++;
		}
	}
	const char *user = NULL;
	const cJSON *uv = first_of(root, K_USER);
	if (cJSON_IsString(uv))
		user = uv->valuestring;
	else if (str_of(body, "user"))
		user = str_of(body, "user");
	r.engineer = imp_id(m, user);
	const char *key = NULL;
	const cJSON *kv = first_of(root, K_SESS);
	if (cJSON_IsString(kv) && kv->valuestring[0])
		key = kv->valuestring;
	else if (str_of(imp_json_path(body, "metadata", NULL), "session_id"))
		key = str_of(imp_json_path(body, "metadata", NULL), "session_id");
	const cJSON *tools = cJSON_GetObjectItemCaseSensitive(body, "tools");
	if (cJSON_IsArray(tools) && cJSON_GetArraySize(tools) > 0) {
		char *json = cJSON_PrintUnformatted(tools);
		if (!json)
			return diag_set(m->d, DIAG_ENOMEM, "out of memory");
		size_t jl = strlen(json);
		r.tools.content = imp_text_content(m, "openai-tools", json, jl);
		r.tools.tokens = est(chars(json, jl));
		r.tools.role = 's';
		if (m->keep_text)
			r.tools.text = strdup(json);
		cJSON_free(json);
		if (m->keep_text && !r.tools.text)
			return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	}
	r.m0 = c->msgs.len;
	const cJSON *e;
	cJSON_ArrayForEach(e, msgs) {
		struct omsg *om = vec_push(&c->msgs);
		if (!om) {
			free(r.tools.text);
			return diag_set(m->d, DIAG_ENOMEM, "out of memory");
		}
		int rc = cJSON_IsObject(e) ? message(m, c, e, om) : 0;
		if (!cJSON_IsObject(e)) {
			c->msgs.len--;
			free(r.tools.text);
			return imp_bad(m, path, line, imp_col(s, n, "messages"), "messages[%zu] is not "
				       "an object (expected {\"role\": ..., \"content\": ...})", r.nm);
		}
		if (rc) {
			free(r.tools.text);
			return rc;
		}
		r.nm++;
	}
	if (!key) {
		r.sess = SIZE_MAX; /* open loop */
	} else if ((r.sess = session_index(m, c, key)) == SIZE_MAX) {
		free(r.tools.text);
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	} else {
		struct osess *os = &VEC_AT(&c->sess, struct osess, r.sess);
		if (os->n_reqs == 0) {
			os->line = line;
			os->path = path;
		}
		int rc = imp_check_calls(m, os->n_reqs, path, line, os->path, os->line);
		if (rc != 0) {
			free(r.tools.text);
			return rc;
		}
		os->n_reqs++;
	}
	struct oreq *slot = vec_push(&c->reqs);
	if (!slot) {
		free(r.tools.text);
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	}
	*slot = r;
	return 0;
}

static int oa_record(struct imp *m, void *vctx, cJSON *root, const char *path, long line,
		     const char *s, size_t n)
{
	struct openai_ctx *c = vctx;
	size_t before = c->msgs.len;
	int rc = request(m, c, root, path, line, s, n);
	if (rc > 0) {
		/* skipped: drop the messages a half-read request left */
		for (size_t i = before; i < c->msgs.len; i++)
			free(VEC_AT(&c->msgs, struct omsg, i).text);
		c->msgs.len = before;
	}
	return rc;
}

static int oa_file(struct imp *m, void *vctx, const char *path)
{
	struct openai_ctx *c = vctx;
	c->file_no++;
	const char *keep;
	int rc = imp_keep_path(m, &c->paths, path, &keep);
	return rc ? rc : imp_json_lines(m, keep, "request", oa_record, c);
}

static int cmp_req(const void *a, const void *b)
{
	const struct oreq *x = a, *y = b;
	if (x->sess != y->sess)
		return x->sess < y->sess ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Does request q replay request p's messages plus an assistant message? */
static bool extends(const struct openai_ctx *c, const struct oreq *p, const struct oreq *q)
{
	if (q->nm <= p->nm || q->tools.content != p->tools.content ||
	    q->tools.tokens != p->tools.tokens)
		return false;
	const struct omsg *mp = (const struct omsg *)c->msgs.data + p->m0;
	const struct omsg *mq = (const struct omsg *)c->msgs.data + q->m0;
	for (size_t i = 0; i < p->nm; i++)
		if (mp[i].content != mq[i].content)
			return false;
	return mq[p->nm].role == 'a';
}

static int add_request(struct imp *m, struct openai_ctx *c, struct sb *b, struct vec *segs,
		       struct vec *texts, const struct oreq *q, const struct oreq *prev,
		       const struct oreq *next, uint64_t task)
{
	const struct omsg *msgs = c->msgs.data;
	bool ext = prev && extends(c, prev, q);
	int64_t out = q->out;
	bool tool_calls = q->out_tool_calls;
	if (next && extends(c, q, next)) {
		const struct omsg *a = &msgs[next->m0 + q->nm];
		tool_calls |= a->tool_calls;
		if (out < 0) {
			out = a->tokens - TOKENS_PER_MESSAGE;
			m->st->estimated++;
		}
	}
	if (out < 0) {
		out = 1;
		m->st->estimated++;
	}
	vec_clear(segs);
	vec_clear(texts);
	size_t from = ext ? prev->nm + 1 : 0;
	if (!ext && q->tools.tokens > 0) {
		struct trace_seg *sg = vec_push(segs);
		char **tx = vec_push(texts);
		if (!sg || !tx)
			return diag_set(m->d, DIAG_ENOMEM, "out of memory");
		*sg = (struct trace_seg){.content = q->tools.content, .tokens = q->tools.tokens};
		*tx = q->tools.text;
	}
	for (size_t i = from; i < q->nm; i++) {
		const struct omsg *om = &msgs[q->m0 + i];
		struct trace_seg *sg = vec_push(segs);
		char **tx = vec_push(texts);
		if (!sg || !tx)
			return diag_set(m->d, DIAG_ENOMEM, "out of memory");
		*sg = (struct trace_seg){.content = om->content, .tokens = om->tokens};
		*tx = om->text;
	}
	struct sb_call k = {
		.output_tokens = out,
		.gap_s = prev ? imp_span_s(prev->t + prev->dur, q->t) : 0,
		.task = task,
		.tool = tool_calls ? TRACE_TOOL_OK : TRACE_TOOL_NONE,
	};
	return sb_add_segs(b, &k, segs->data, m->keep_text ? texts->data : NULL, segs->len, ext);
}

static int oa_end(struct imp *m, void *vctx)
{
	struct openai_ctx *c = vctx;
	struct oreq *reqs = c->reqs.data;
	size_t n = c->reqs.len;
	if (n)
		qsort(reqs, n, sizeof(*reqs), cmp_req);
	struct sb b;
	sb_init(&b, m);
	struct vec segs, texts;
	vec_init(&segs, sizeof(struct trace_seg), TRACE_READER_MAX_SEGS_PER_CALL);
	vec_init(&texts, sizeof(char *), VEC_NO_LIMIT);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0;) {
		const struct oreq *q = &reqs[i];
		if (q->sess == SIZE_MAX) {
			/* Open loop: one call, id from the line (and the file's place). */
			uint64_t id = trace_anon_session_id(q->line);
			for (size_t f = 0; f < c->paths.len; f++)
				if (VEC_AT(&c->paths, char *, f) == q->path && f > 0)
					id = hash_combine(id, (uint64_t)f);
			sb_start(&b, q->path, id, imp_rel_s(m, q->t), q->line);
			b.open_loop = true;
			b.engineer = q->engineer;
			rc = add_request(m, c, &b, &segs, &texts, q, NULL, NULL, 0);
			if (rc == 0)
				rc = sb_emit(&b);
			i++;
			continue;
		}
		const struct osess *s = &VEC_AT(&c->sess, struct osess, q->sess);
		sb_start(&b, q->path, s->id, imp_rel_s(m, q->t), q->line);
		b.engineer = q->engineer;
		uint64_t task = 0;
		int64_t n_tasks = 0;
		size_t j = i;
		for (; j < n && reqs[j].sess == q->sess && rc == 0; j++) {
			const struct oreq *r = &reqs[j];
			const struct oreq *prev = j > i ? &reqs[j - 1] : NULL;
			const struct oreq *next = j + 1 < n && reqs[j + 1].sess == q->sess ? &reqs[j + 1] : NULL;
			const struct omsg *last = (const struct omsg *)c->msgs.data + r->m0 + r->nm - 1;
			if (j == i || last->role == 'u') {
				char key[32];
				snprintf(key, sizeof(key), "task-%lld", (long long)n_tasks++);
				task = imp_id2(m, s->key, key);
			}
			rc = add_request(m, c, &b, &segs, &texts, r, prev, next, task);
		}
		if (rc == 0)
			rc = sb_emit(&b);
		i = j;
	}
	vec_release(&segs);
	vec_release(&texts);
	sb_release(&b);
	return rc;
}

const struct imp_format imp_fmt_openai = {
	.name = "openai-log",
	.summary = "gateway logs of chat-completion request bodies (text-bearing)",
	.flags = IMP_REBASE,
	.suffix = ".jsonl",
	.ctx_size = sizeof(struct openai_ctx),
	.begin = oa_begin,
	.file = oa_file,
	.end = oa_end,
	.release = oa_release,
};
