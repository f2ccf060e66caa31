/* SPDX-License-Identifier: Apache-2.0
 * import_weka: the WEKA / SemiAnalysis Claude Code traces that AIPerf and
 * GuideLLM replay (kv-cache-tester format) to canonical sessions.
 *
 * A file holds one trace object {id, block_size, hash_id_scope, requests},
 * or JSON lines of such objects.  A request ({t, type "n"|"s", in, out,
 * hash_ids, think_time, api_time, stop, input_types}) is one call; its prompt
 * is one segment per hash id, block_size tokens each but the last, which has
 * the rest of `in` (the Mooncake rule, so the sharing of chained hash ids is
 * kept).  A {type "subagent"} entry is a session of its own whose parent is
 * the enclosing conversation; its requests' t are taken as relative to the
 * marker when the first one is earlier than the marker, else as absolute.
 * gap = think_time when recorded, else t - (previous t + previous api_time).
 * "local" hash ids are scoped to the trace (contents combined with the trace
 * id); "global" ones are shared by every trace.  A request whose input
 * includes a user's text (input_types without "tool_result", or, without
 * input_types, one following a request that did not stop for tool_use)
 * starts a task.
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/import_weka.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/map.h"
#include "traces/import_util.h"
#include "traces/jsontext.h"
#include "traces/reader.h"
#include "traces/writer.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NESTING 8

struct weka_ctx {
	bool hinted;
	struct vec segs;      /* struct trace_seg scratch */
	struct map seen;      /* imp_id(trace id) -> times seen */
};

struct wtrace {
	struct imp *m;
	struct weka_ctx *c;
	const char *path;
	long line;            /* line of the trace object */
	const char *tid;      /* trace id */
	int64_t block;
	bool global;
	uint64_t scope;       /* content salt of a "local" trace */
	int64_t n_sub;        /* subagents seen, for unique ids */
};

static int wk_begin(struct imp *m, void *vctx)
{
	(void)m;
	struct weka_ctx *c = vctx;
	vec_init(&c->segs, sizeof(struct trace_seg), TRACE_READER_MAX_SEGS_PER_CALL);
	map_init(&c->seen);
	return 0;
}

static void wk_release(void *vctx)
{
	struct weka_ctx *c = vctx;
	vec_release(&c->segs);
	map_release(&c->seen);
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

static bool num_of(const cJSON *o, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= TRACE_MAX_SECONDS))
		return false;
	*out = v->valuedouble;
	return true;
}

static bool has_type(const cJSON *arr, const char *type)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, (cJSON_IsArray(arr) ? arr : NULL))
		if (cJSON_IsString(e) && strcmp(e->valuestring, type) == 0)
			return true;
	return false;
}

/* Fill c->segs with the prompt of request q; 0, 1 (bad, skipped) or error. */
static int prompt_of(struct wtrace *w, const cJSON *q, const char *where, int64_t in)
{
	struct imp *m = w->m;
	vec_clear(&w->c->segs);
	const cJSON *ids = cJSON_GetObjectItemCaseSensitive(q, "hash_ids");
	if (ids && !cJSON_IsArray(ids) && !cJSON_IsNull(ids))
		return imp_bad(m, w->path, w->line, 0, "%s.hash_ids is not an array (expected "
			       "integer block ids)", where);
	size_t n = (size_t)cJSON_GetArraySize(cJSON_IsArray(ids) ? ids : NULL);
	const int64_t B = w->block;
	if (n > 0 && !(B * ((int64_t)n - 1) < in && in <= B * (int64_t)n))
		return imp_bad(m, w->path, w->line, 0, "%s: in=%lld does not fit %zu hash_ids of "
			       "%lld-token blocks (expected %lld..%lld)", where, (long long)in, n,
			       (long long)B, (long long)(B * ((int64_t)n - 1) + 1),
			       (long long)(B * (int64_t)n));
	size_t k = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, (n ? ids : NULL)) {
		int64_t id;
		if (!imp_json_int(e, TRACE_MAX_INT_ID, &id))
			return imp_bad(m, w->path, w->line, 0, "%s.hash_ids[%zu] is not an integer "
				       "(expected 0..2^53)", where, k);
		int64_t tokens = k + 1 < n ? B : in - B * ((int64_t)n - 1);
		struct trace_seg *s = vec_push(&w->c->segs);
		if (!s && w->c->segs.len < w->c->segs.max_len)
			return diag_set(m->d, DIAG_ENOMEM, "out of memory");
		if (!s)
			return imp_bad(m, w->path, w->line, 0, "%s: more than %zu hash_ids (the "
				       "limit per call)", where, (size_t)TRACE_READER_MAX_SEGS_PER_CALL);
		s->content = trace_content_int(id, tokens);
		if (!w->global)
			s->content = hash_combine(s->content, w->scope);
		s->tokens = tokens;
		k++;
	}
	return 0;
}

struct walk {
	uint64_t id, parent;
	double offset;        /* add to a request's t to get trace time */
};

static int session(struct wtrace *w, const cJSON *reqs, const struct walk *wk, int depth,
		   const char *where);

/* A subagent entry at index k of a requests list: its own session. */
static int subagent(struct wtrace *w, const cJSON *e, const struct walk *outer, int depth,
		    const char *where)
{
	struct imp *m = w->m;
	double t0;
	if (!num_of(e, "t", &t0))
		return imp_bad(m, w->path, w->line, 0, "%s: subagent without a valid 't' (expected "
			       "seconds 0..1e9)", where);
	const cJSON *inner = cJSON_GetObjectItemCaseSensitive(e, "requests");
	if (!cJSON_IsArray(inner))
		return imp_bad(m, w->path, w->line, 0, "%s: subagent without 'requests' (expected "
			       "an array of requests)", where);
	if (depth >= MAX_NESTING)
		return imp_bad(m, w->path, w->line, 0, "%s: subagents nested deeper than %d "
			       "(expected a shallower tree)", where, MAX_NESTING);
	double first = -1;
	const cJSON *q;
	cJSON_ArrayForEach(q, inner) {
		double t;
		if (num_of(q, "t", &t)) {
			first = t;
			break;
		}
	}
	const char *agent = str_of(e, "agent_id");
	char sub[96];
	snprintf(sub, sizeof(sub), "%s#%lld", agent ? agent : "subagent", (long long)w->n_sub++);
	struct walk wk = {
		.id = imp_id2(m, w->tid, sub),
		.parent = outer->id,
		/* Relative inner times (raw kv-cache-tester) start before the marker. */
		.offset = first >= 0 && first + 1e-9 < t0 ? outer->offset + t0 : outer->offset,
	};
	char inner_where[96];
	snprintf(inner_where, sizeof(inner_where), "%.60s.requests", where);
	return session(w, inner, &wk, depth + 1, inner_where);
}

static int session(struct wtrace *w, const cJSON *reqs, const struct walk *wk, int depth,
		   const char *where)
{
	struct imp *m = w->m;
	struct sb b;
	sb_init(&b, m);
	sb_start(&b, w->path, wk->id, 0, w->line);
	b.parent = wk->parent;
	int rc = 0;
	size_t k = 0;
	double prev_t = 0, prev_api = 0;
	bool have_api = false;
	const char *prev_stop = NULL;
	uint64_t task = 0;
	int64_t n_tasks = 0;
	const cJSON *q;
	cJSON_ArrayForEach(q, reqs) {
		char at[128];
		snprintf(at, sizeof(at), "%.80s[%zu]", where, k++);
		const char *type = str_of(q, "type");
		m->st->records++;
		if (type && strcmp(type, "subagent") == 0) {
			rc = subagent(w, q, wk, depth, at);
			if (rc < 0)
				break;
			rc = 0;
			continue;
		}
		double t, think = 0, api = 0;
		int64_t in, out;
		if (!cJSON_IsObject(q) || !type || (strcmp(type, "n") != 0 && strcmp(type, "s") != 0)) {
			rc = imp_bad(m, w->path, w->line, 0, "%s: bad 'type' (expected \"n\", \"s\" or "
				     "\"subagent\")", at);
		} else if (!num_of(q, "t", &t)) {
			rc = imp_bad(m, w->path, w->line, 0, "%s: bad or missing 't' (expected seconds "
				     "0..1e9 from the conversation start)", at);
		} else if (!imp_json_int(cJSON_GetObjectItemCaseSensitive(q, "in"), TRACE_MAX_PROMPT_TOKENS, &in) ||
			   in < 1) {
			rc = imp_bad(m, w->path, w->line, 0, "%s: bad or missing 'in' (expected input "
				     "tokens >= 1)", at);
		} else if (!imp_json_int(cJSON_GetObjectItemCaseSensitive(q, "out"), TRACE_MAX_TOKENS, &out)) {
			rc = imp_bad(m, w->path, w->line, 0, "%s: bad or missing 'out' (expected output "
				     "tokens 0..1000000000)", at);
		} else if ((rc = prompt_of(w, q, at, in)) == 0) {
			bool has_think = num_of(q, "think_time", &think);
			bool this_api = num_of(q, "api_time", &api);
			const cJSON *types = cJSON_GetObjectItemCaseSensitive(q, "input_types");
			bool user = cJSON_IsArray(types) && cJSON_GetArraySize(types) > 0
				? !has_type(types, "tool_result")
				: !(prev_stop && strcmp(prev_stop, "tool_use") == 0);
			if (sb_calls(&b) == 0 || user) {
				char key[160];
				snprintf(key, sizeof(key), "%016llx/task-%lld", (unsigned long long)wk->id,
					 (long long)n_tasks++);
				task = imp_id2(m, w->tid, key);
			}
			double gap = 0;
			if (sb_calls(&b) > 0)
				gap = has_think ? think : t - prev_t - (have_api ? prev_api : 0);
			else
				b.t_s = wk->offset + t;
			const char *stop = str_of(q, "stop");
			struct sb_call call = {
				.output_tokens = out, .gap_s = gap, .task = task,
				.tool = stop && strcmp(stop, "tool_use") == 0 ? TRACE_TOOL_OK : TRACE_TOOL_NONE,
			};
			struct weka_ctx *c = w->c;
			if (c->segs.len) {
				rc = sb_add_segs(&b, &call, c->segs.data, NULL, c->segs.len, false);
			} else {
				call.prompt_tokens = in;
				rc = sb_add_usage(&b, &call); /* no hash ids: a prompt of its own */
			}
			prev_t = t;
			prev_api = api;
			have_api = this_api;
			prev_stop = stop;
		}
		if (rc < 0)
			break;
		rc = 0;
	}
	if (rc == 0)
		rc = sb_emit(&b);
	sb_release(&b);
	return rc;
}

static int trace_obj(struct imp *m, struct weka_ctx *c, const cJSON *root, const char *path,
		     long line)
{
	const char *tid = str_of(root, "id");
	const cJSON *reqs = cJSON_GetObjectItemCaseSensitive(root, "requests");
	const cJSON *bs = cJSON_GetObjectItemCaseSensitive(root, "block_size");
	int64_t block = 0;
	if (!tid || !tid[0])
		return imp_bad(m, path, line, 0, "trace without 'id' (expected the trace's id string)");
	if (!cJSON_IsArray(reqs))
		return imp_bad(m, path, line, 0, "trace without 'requests' (expected an array of "
			       "requests)");
	if (!imp_json_int(bs, 1 << 24, &block) || block < 1)
		return imp_bad(m, path, line, 0, "bad or missing 'block_size' (expected tokens per "
			       "hash id, 1..16777216)");
	const char *scope = str_of(root, "hash_id_scope");
	if (scope && strcmp(scope, "local") != 0 && strcmp(scope, "global") != 0)
		return imp_bad(m, path, line, 0, "bad 'hash_id_scope' '%.40s' (expected \"local\" or "
			       "\"global\")", scope);
	if (!c->hinted) {
		trace_writer_set_block_tokens_hint(m->w, block);
		c->hinted = true;
	}
	/* A trace id seen before (the same trace in two files) gets a suffix,
	 * so every session id stays distinct. */
	uint64_t *seen = map_get(&c->seen, imp_id(m, tid));
	uint64_t times = seen ? *seen : 0;
	if (map_put(&c->seen, imp_id(m, tid), times + 1) != 0)
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	char key[320];
	if (times) {
		snprintf(key, sizeof(key), "%.256s#%llu#%016llx", tid, (unsigned long long)times,
			 (unsigned long long)imp_id(m, tid));
		tid = key;
	}
	struct wtrace w = {
		.m = m, .c = c, .path = path, .line = line, .tid = tid, .block = block,
		.global = scope && strcmp(scope, "global") == 0,
		.scope = imp_id2(m, "weka-scope", tid),
	};
	struct walk wk = {.id = imp_id(m, tid)};
	return session(&w, reqs, &wk, 0, "requests");
}

static int wk_file(struct imp *m, void *vctx, const char *path)
{
	struct weka_ctx *c = vctx;
	char *text;
	size_t len;
	int rc = imp_slurp(path, &text, &len, m->d);
	if (rc)
		return rc;
	cJSON *whole = NULL;
	size_t at;
	/* not one value (more after the first): JSON lines, parsed below */
	enum jsontext_rc jr = jsontext_parse(text, len, &whole, &at);
	if (jr == JSONTEXT_NOMEM) {
		free(text);
		return diag_set(m->d, DIAG_ENOMEM, "%s: out of memory parsing %zu bytes of JSON",
				path, len);
	}
	if (jr == JSONTEXT_NUL || jr == JSONTEXT_UTF8) {
		long line = 1, col = 1;
		for (size_t i = 0; i < at; i++, col++)
			if (text[i] == '\n') {
				line++;
				col = 0;
			}
		unsigned char byte = (unsigned char)text[at];
		free(text);
		rc = jr == JSONTEXT_NUL
			? imp_bad(m, path, line, col, "NUL character in the text (expected JSON "
				  "text without NUL: ids would be cut short at it)")
			: imp_bad(m, path, line, col, "invalid UTF-8 (byte 0x%02x) (expected UTF-8 "
				  "JSON text)", byte);
		return rc < 0 ? rc : 0;
	}
	if (cJSON_IsObject(whole)) {
		rc = trace_obj(m, c, whole, path, 1);
		cJSON_Delete(whole);
		free(text);
		return rc < 0 ? rc : 0;
	}
	cJSON_Delete(whole);
	/* JSON lines, one trace per line. */
	long line = 0;
	char *s = text;
	while (s < text + len) {
		char *nl = memchr(s, '\n', (size_t)(text + len - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(text + len - s);
		line++;
		if (n && s[n - 1] == '\r')
			n--;
		s[n] = '\0'; /* imp_json_line parses up to a terminating NUL */
		if (!lines_blank(s, n)) {
			cJSON *root;
			rc = imp_json_line(m, path, line, s, n, &root);
			if (rc == 0) {
				rc = trace_obj(m, c, root, path, line);
				cJSON_Delete(root);
			}
			if (rc < 0)
				break;
		}
		s = nl ? nl + 1 : text + len;
	}
	free(text);
	return rc < 0 ? rc : 0;
}

const struct imp_format imp_fmt_weka = {
	.name = "weka",
	.summary = "WEKA/SemiAnalysis Claude Code traces (JSON, JSON lines, folders)",
	.flags = IMP_FOLDERS,
	.suffix = ".json",
	.ctx_size = sizeof(struct weka_ctx),
	.begin = wk_begin,
	.file = wk_file,
	.end = NULL,
	.release = wk_release,
};
