/* SPDX-License-Identifier: Apache-2.0
 * reader: streaming reader for canonical and Mooncake JSON Lines traces
 * (see reader.h; the format is specified in docs/trace-format.md).
 *
 * Layers, bottom up:
 *   - a line splitter over zlib's gzread (which reads plain files as they
 *     are), with a hard line limit: an over-long line is discarded up to its
 *     newline, never buffered whole;
 *   - a JSON position locator (jl_*) that finds where a key's value or an
 *     array element starts in the raw text, so semantic errors carry a
 *     column; it runs only on text cJSON has already accepted;
 *   - per-line parsers (canonical, Mooncake) that fill `pend`, the one line
 *     of look-ahead, and check it against the session being assembled while
 *     the line's text is still at hand;
 *   - session assembly into reusable vectors, packed into one heap block by
 *     trace_session_clone when the session is complete.
 * Invariants: at most one session is being assembled (have_cur); `pend`
 * holds a line already validated against it (have_pend); the ids of
 * sessions already returned are in `closed` (named sessions only).
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/reader.h"

#include "base/outkind.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/map.h"
#include "base/vec.h"
#include "traces/jsontext.h"
#include "traces/trace.h"

#include <cjson/cJSON.h>
#include <zlib.h>

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK ((size_t)256 << 10)
#define NAME_MAX_SHOWN 40
#define SNIP_MAX 32
/* Content of the one segment of a Mooncake line without hash_ids. */
#define SEED_MOONCAKE_LINE 0x7472632d6d6f6f6eULL /* "trc-moon" */

/* Line-reader results besides 0 (end) and negative codes. */
enum { LINE_OK = 1, LINE_TOO_LONG = 2 };

struct pend {
	bool named;           /* the line has a `session` */
	bool open_loop;
	bool later;           /* continues the session being assembled */
	uint64_t session;
	uint64_t engineer;
	uint64_t parent;
	uint64_t team;
	double t_s;           /* start time, for a session's first call */
	long line;
	struct trace_call call; /* segs live in trace_reader.pend_segs */
};

struct cur {
	bool named;
	bool open_loop;
	uint64_t id;
	uint64_t engineer;
	uint64_t parent;
	uint64_t team;
	double t_s;
	long line;
};

struct trace_reader {
	char *path;
	gzFile gz;
	bool gzip;
	enum trace_format fmt;
	struct trace_reader_limits lim;
	bool skip_bad;
	long skipped;
	char first_skipped[DIAG_MSG_MAX];

	/* Line splitter: unconsumed bytes are buf[pos..len); buf[len] is
	 * writable, so the last line can always be NUL-terminated. */
	char *buf;
	size_t pos, len, cap;
	bool eof;
	long line_no;
	bool held;            /* the first line, read by open, is still to be parsed */
	char *held_line;
	size_t held_len;

	int64_t block_tokens_hint;
	char *source;

	/* Ordering state. */
	bool have_start;
	double last_start_s;  /* start of the most recently started session */
	bool have_ms;
	double last_ms;       /* Mooncake: previous accepted timestamp */
	struct map closed;

	/* Assembly. */
	bool have_cur;
	struct cur cur;
	struct vec calls;     /* struct trace_call, segs unset */
	struct vec seg_off;   /* size_t: first segment of each call in segs */
	struct vec segs;      /* struct trace_seg */

	bool have_pend;
	struct pend pend;
	struct vec pend_segs; /* struct trace_seg */
	bool keep_text;       /* keep segment text (trace_reader_set_keep_text) */
	struct vec pend_text; /* char *, owned: one per pend_segs entry when keep_text */
	struct vec texts;     /* char *, owned: one per segs entry when keep_text */

	int failed;
	char fail_msg[DIAG_MSG_MAX];
};

/* ---- Line splitter ------------------------------------------------------ */

static int read_error(struct trace_reader *r, struct diag *d)
{
	int errnum = Z_OK;
	const char *msg = gzerror(r->gz, &errnum);
	if (errnum == Z_ERRNO)
		return diag_set(d, DIAG_EIO, "%s: read failed: %s", r->path, strerror(errno));
	if (errnum == Z_MEM_ERROR)
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory decompressing", r->path);
	/* zlib prefixes its message with the name it was opened with. */
	size_t plen = strlen(r->path);
	if (msg && strncmp(msg, r->path, plen) == 0 && strncmp(msg + plen, ": ", 2) == 0)
		msg += plen + 2;
	else if (msg && strncmp(msg, "<fd:", 4) == 0 && strstr(msg, ">: "))
		msg = strstr(msg, ">: ") + 3;
	return diag_set(d, DIAG_EINPUT, "%s: corrupt gzip stream (%s) after %ld lines",
			r->path, msg && *msg ? msg : "data error", r->line_no);
}

/* After gzread reported the end: a gzip stream that ended early leaves
 * Z_BUF_ERROR behind instead of failing the read. */
static int check_end(struct trace_reader *r, struct diag *d)
{
	int errnum = Z_OK;
	gzerror(r->gz, &errnum);
	if (errnum == Z_BUF_ERROR)
		return diag_set(d, DIAG_EINPUT,
				"%s: truncated gzip stream (unexpected end of file) after %ld lines",
				r->path, r->line_no);
	if (errnum != Z_OK)
		return read_error(r, d);
	return 0;
}

static int fill(struct trace_reader *r, struct diag *d)
{
	if (r->cap - r->len < READ_CHUNK + 1) {
		size_t want = r->len + READ_CHUNK + 1;
		size_t cap = r->cap ? r->cap : READ_CHUNK + 1;
		while (cap < want)
			cap *= 2;
		char *p = realloc(r->buf, cap);
		if (!p)
			return diag_set(d, DIAG_ENOMEM, "%s: out of memory reading line %ld",
					r->path, r->line_no + 1);
		r->buf = p;
		r->cap = cap;
	}
	size_t room = r->cap - r->len - 1;
	if (room > (size_t)1 << 30)
		room = (size_t)1 << 30;
	int n = gzread(r->gz, r->buf + r->len, (unsigned)room);
	if (r->len == 0 && r->line_no == 0 && n >= 0)
		r->gzip = !gzdirect(r->gz);
	if (n < 0)
		return read_error(r, d);
	if (n == 0) {
		r->eof = true;
		return check_end(r, d);
	}
	r->len += (size_t)n;
	return 0;
}

/* Next line, NUL-terminated in place without its newline (and without a
 * trailing CR).  LINE_OK with *line and *len valid until the next call,
 * LINE_TOO_LONG (the line was discarded), 0 at the end, or an error. */
static int read_line(struct trace_reader *r, char **line, size_t *len, struct diag *d)
{
	size_t scan = r->pos;
	bool discarding = false;
	size_t discarded = 0;
	for (;;) {
		char *nl = r->len > scan ? memchr(r->buf + scan, '\n', r->len - scan) : NULL;
		if (nl) {
			size_t end = (size_t)(nl - r->buf);
			size_t n = end - r->pos;
			r->line_no++;
			if (discarding || n > r->lim.max_line_bytes) {
				r->pos = end + 1;
				return LINE_TOO_LONG;
			}
			*line = r->buf + r->pos;
			*nl = '\0';
			if (n > 0 && (*line)[n - 1] == '\r')
				(*line)[--n] = '\0';
			*len = n;
			r->pos = end + 1;
			return LINE_OK;
		}
		if (r->eof) {
			if (discarding) {
				r->line_no++;
				r->pos = r->len;
				return LINE_TOO_LONG;
			}
			if (r->pos == r->len)
				return 0;
			size_t n = r->len - r->pos;
			r->line_no++;
			*line = r->buf + r->pos;
			r->buf[r->len] = '\0';
			if (n > 0 && (*line)[n - 1] == '\r')
				(*line)[--n] = '\0';
			*len = n;
			r->pos = r->len;
			if (n > r->lim.max_line_bytes)
				return LINE_TOO_LONG;
			return LINE_OK;
		}
		if (discarding) {
			if ((discarded += r->len) > TRACE_READER_MAX_DISCARD_BYTES)
				return diag_at(d, DIAG_EINPUT, r->path, r->line_no + 1, 0,
					       "no end of line within %zu bytes (expected one JSON "
					       "object per line; a line this long cannot be skipped)",
					       (size_t)TRACE_READER_MAX_DISCARD_BYTES);
			r->pos = r->len = 0;
		} else {
			if (r->pos > 0) {
				memmove(r->buf, r->buf + r->pos, r->len - r->pos);
				r->len -= r->pos;
				r->pos = 0;
			}
			if (r->len > r->lim.max_line_bytes) {
				/* stopping at the line: it is an error, and a stream
				 * without newlines (/dev/zero) would never end */
				if (!r->skip_bad) {
					r->line_no++;
					r->pos = r->len = 0;
					return LINE_TOO_LONG;
				}
				discarding = true;
				discarded = r->len;
				r->pos = r->len = 0;
			}
		}
		scan = r->len;
		int rc = fill(r, d);
		if (rc < 0)
			return rc;
	}
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/* ---- JSON position locator (text already accepted by cJSON) ------------- */

static bool jl_isws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static size_t jl_ws(const char *s, size_t n, size_t i)
{
	while (i < n && jl_isws(s[i]))
		i++;
	return i;
}

/* i at an opening quote; index after the closing quote. */
static size_t jl_str_end(const char *s, size_t n, size_t i)
{
	i++;
	while (i < n && s[i] != '"')
		i += s[i] == '\\' ? 2 : 1;
	return i < n ? i + 1 : n;
}

/* Index after the value starting at i. */
static size_t jl_skip(const char *s, size_t n, size_t i)
{
	if (i >= n)
		return n;
	if (s[i] == '"')
		return jl_str_end(s, n, i);
	if (s[i] == '{' || s[i] == '[') {
		int depth = 0;
		while (i < n) {
			char ch = s[i];
			if (ch == '"') {
				i = jl_str_end(s, n, i);
				continue;
			}
			if (ch == '{' || ch == '[')
				depth++;
			else if ((ch == '}' || ch == ']') && --depth == 0)
				return i + 1;
			i++;
		}
		return n;
	}
	while (i < n && s[i] != ',' && s[i] != ']' && s[i] != '}' && !jl_isws(s[i]))
		i++;
	return i;
}

/* Offset of the value of top-level key `key`, or -1. */
static long jl_key(const char *s, size_t n, const char *key)
{
	size_t klen = strlen(key);
	size_t i = jl_ws(s, n, 0);
	if (i >= n || s[i] != '{')
		return -1;
	i++;
	for (;;) {
		i = jl_ws(s, n, i);
		if (i >= n || s[i] != '"')
			return -1;
		size_t e = jl_str_end(s, n, i);
		bool match = e - i == klen + 2 && memcmp(s + i + 1, key, klen) == 0;
		i = jl_ws(s, n, e);
		if (i >= n || s[i] != ':')
			return -1;
		i = jl_ws(s, n, i + 1);
		if (match)
			return (long)i;
		i = jl_ws(s, n, jl_skip(s, n, i));
		if (i >= n || s[i] != ',')
			return -1;
		i++;
	}
}

/* Offset of element k of the array at `at`; `at` itself if not found. */
static long jl_elem(const char *s, size_t n, long at, size_t k)
{
	if (at < 0 || (size_t)at >= n || s[at] != '[')
		return at;
	size_t i = jl_ws(s, n, (size_t)at + 1);
	for (size_t j = 0; j < k; j++) {
		i = jl_ws(s, n, jl_skip(s, n, i));
		if (i >= n || s[i] != ',')
			return at;
		i = jl_ws(s, n, i + 1);
	}
	return (long)i;
}

/* Printable copy of at most `max` bytes of s[0..n), "..." if cut. */
static void shown(char *out, size_t outsz, const char *s, size_t n, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < n && i < max && k + 1 < outsz; i++) {
		unsigned char ch = (unsigned char)s[i];
		out[k++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
	}
	if (n > max && k + 4 < outsz) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

/* ---- Per-line context and error helpers --------------------------------- */

/* A line's top-level keys, hashed once: a line is asked for some thirty
 * keys, most of them absent, and a lookup by hash skips the string
 * compares a scan of the object would make for each. */
#define LCTX_KEYS 48

struct lctx {
	struct trace_reader *r;
	const char *s;
	size_t n;
	cJSON *root;
	struct diag *d;
	char name[NAME_MAX_SHOWN + 8]; /* session id as shown in messages */
	int nkeys;                     /* -1: more than LCTX_KEYS (scan the
					  object); 0 with !indexed: not built */
	bool indexed;
	uint32_t khash[LCTX_KEYS];
	const cJSON *knode[LCTX_KEYS];
};

static uint32_t key_hash(const char *k)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 16777619u;
	return h;
}

/* The member `key` of the line's object (the first of that name), as
 * cJSON_GetObjectItemCaseSensitive finds it. */
static const cJSON *line_member(struct lctx *c, const char *key)
{
	if (!c->indexed) {
		c->indexed = true;
		c->nkeys = 0;
		for (const cJSON *it = c->root ? c->root->child : NULL; it; it = it->next) {
			if (c->nkeys == LCTX_KEYS || !it->string) {
				c->nkeys = -1;
				break;
			}
			c->khash[c->nkeys] = key_hash(it->string);
			c->knode[c->nkeys++] = it;
		}
	}
	if (c->nkeys < 0)
		return cJSON_GetObjectItemCaseSensitive(c->root, key);
	uint32_t h = key_hash(key);
	for (int i = 0; i < c->nkeys; i++)
		if (c->khash[i] == h && strcmp(c->knode[i]->string, key) == 0)
			return c->knode[i];
	return NULL;
}

__attribute__((format(printf, 3, 4)))
static int lerr(const struct lctx *c, long at, const char *fmt, ...)
{
	char msg[DIAG_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	long col = at < 0 ? 1 : at + 1;
	return diag_at(c->d, DIAG_EINPUT, c->r->path, c->r->line_no, col, "%s", msg);
}

static long at_key(const struct lctx *c, const char *key)
{
	return jl_key(c->s, c->n, key);
}

/* The raw text of the value at `at`, shortened for a message. */
static void snip(const struct lctx *c, long at, char *out, size_t outsz)
{
	if (at < 0 || (size_t)at >= c->n) {
		out[0] = '\0';
		return;
	}
	size_t end = jl_skip(c->s, c->n, (size_t)at);
	shown(out, outsz, c->s + at, end - (size_t)at, SNIP_MAX);
}

static int bad_at(const struct lctx *c, long at, const char *what, const char *expected)
{
	char tok[SNIP_MAX + 8];
	snip(c, at, tok, sizeof(tok));
	return lerr(c, at, "bad %s '%s' (expected %s)", what, tok, expected);
}

static int bad_key(const struct lctx *c, const char *key, const char *expected)
{
	char what[64];
	snprintf(what, sizeof(what), "'%s' value", key);
	return bad_at(c, at_key(c, key), what, expected);
}

static int missing(const struct lctx *c, const char *key, const char *expected)
{
	return lerr(c, -1, "missing '%s' (expected %s)", key, expected);
}

/* Value of `key`; NULL when absent or null. */
static const cJSON *opt(struct lctx *c, const char *key)
{
	const cJSON *v = line_member(c, key);
	return v && !cJSON_IsNull(v) ? v : NULL;
}

static bool as_int(const cJSON *v, int64_t lo, int64_t hi, int64_t *out)
{
	if (!cJSON_IsNumber(v))
		return false;
	double x = v->valuedouble;
	if (!(x >= (double)lo && x <= (double)hi) || x != floor(x))
		return false;
	*out = (int64_t)x;
	return true;
}

static bool as_time(const cJSON *v, double max, double *out)
{
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= max))
		return false;
	*out = v->valuedouble;
	return true;
}

/* An id: a non-empty string, or an integer (hashed as its decimal text). */
static bool as_id(const cJSON *v, uint64_t *out, char *name, size_t namesz)
{
	char num[32];
	const char *text;
	if (cJSON_IsString(v) && v->valuestring && v->valuestring[0]) {
		text = v->valuestring;
	} else {
		int64_t i;
		if (!as_int(v, -TRACE_MAX_INT_ID, TRACE_MAX_INT_ID, &i))
			return false;
		snprintf(num, sizeof(num), "%lld", (long long)i);
		text = num;
	}
	*out = trace_id_hash(text);
	if (name)
		shown(name, namesz, text, strlen(text), NAME_MAX_SHOWN);
	return true;
}

static int parse_json(struct lctx *c)
{
	size_t pos;
	switch (jsontext_parse(c->s, c->n, &c->root, &pos)) {
	case JSONTEXT_OK:
		break;
	case JSONTEXT_NUL:
		return lerr(c, (long)pos, c->s[pos] ? "NUL character (\\u0000) in a string (expected "
			    "text without NUL: ids and texts would be cut short at it)"
			    : "NUL byte in line (expected JSON text)");
	case JSONTEXT_UTF8:
		return lerr(c, (long)pos, "invalid UTF-8 (byte 0x%02x) (expected UTF-8 JSON text)",
			    (unsigned char)c->s[pos]);
	case JSONTEXT_NOMEM:
		return diag_set(c->d, DIAG_ENOMEM, "%s:%ld: out of memory parsing a line of %zu bytes",
				c->r->path, c->r->line_no, c->n);
	case JSONTEXT_SYNTAX: {
		if (pos >= c->n || blank(c->s + pos, c->n - pos))
			return lerr(c, (long)c->n, "invalid JSON: unexpected end of line "
				    "(expected one JSON object per line)");
		char tok[SNIP_MAX + 8];
		shown(tok, sizeof(tok), c->s + pos, c->n - pos, 16);
		return lerr(c, (long)pos, "invalid JSON at '%s' (expected one JSON object per line)", tok);
	}
	}
	if (!cJSON_IsObject(c->root)) {
		char tok[SNIP_MAX + 8];
		size_t at = jl_ws(c->s, c->n, 0);
		shown(tok, sizeof(tok), c->s + at, c->n - at, 16);
		int rc = lerr(c, (long)at, "line is not an object '%s' (expected one JSON object per line)", tok);
		cJSON_Delete(c->root);
		c->root = NULL;
		return rc;
	}
	return 0;
}

/* ---- Canonical lines ---------------------------------------------------- */

/* Free the strings of a vec of owned char * and empty it. */
static void texts_clear(struct vec *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(VEC_AT(v, char *, i));
	vec_clear(v);
}

#define EXP_SEG "[content_id, tokens] or [content_id, tokens, {\"text\": ...}]"
#define EXP_TOKENS "an integer 1..1000000000"

/* Offset of element j of segment k of `prompt` (for messages only: O(line)). */
static long seg_elem(const struct lctx *c, size_t k, size_t j)
{
	return jl_elem(c->s, c->n, jl_elem(c->s, c->n, at_key(c, "prompt"), k), j);
}

/* Parse `prompt` into r->pend_segs; sum of tokens in *total. */
static int canon_prompt(struct lctx *c, const cJSON *prompt, int64_t *total)
{
	struct trace_reader *r = c->r;
	if (!cJSON_IsArray(prompt))
		return bad_key(c, "prompt", "an array of " EXP_SEG " segments");
	size_t k = 0;
	*total = 0;
	for (const cJSON *seg = prompt->child; seg; seg = seg->next, k++) {
		if (k >= r->lim.max_segs_per_call)
			return lerr(c, at_key(c, "prompt"), "prompt has more than %zu segments (the limit per call)",
				    r->lim.max_segs_per_call);
		char what[64];
		int size = cJSON_IsArray(seg) ? cJSON_GetArraySize(seg) : 0;
		if (size != 2 && size != 3) {
			snprintf(what, sizeof(what), "segment prompt[%zu]", k);
			return bad_at(c, jl_elem(c->s, c->n, at_key(c, "prompt"), k), what, EXP_SEG);
		}
		const cJSON *id = seg->child;
		const cJSON *tok = id->next;
		const cJSON *ann = tok->next;
		int64_t tokens;
		if (!as_int(tok, 1, TRACE_MAX_TOKENS, &tokens)) {
			snprintf(what, sizeof(what), "token count in prompt[%zu]", k);
			return bad_at(c, seg_elem(c, k, 1), what, EXP_TOKENS);
		}
		uint64_t content;
		int64_t iid;
		if (cJSON_IsString(id) && id->valuestring && id->valuestring[0]) {
			content = trace_content_str(id->valuestring, tokens);
		} else if (as_int(id, -TRACE_MAX_INT_ID, TRACE_MAX_INT_ID, &iid)) {
			content = trace_content_int(iid, tokens);
		} else {
			snprintf(what, sizeof(what), "content id in prompt[%zu]", k);
			return bad_at(c, seg_elem(c, k, 0), what,
				      "a non-empty string or an integer within +-2^53");
		}
		if (ann) {
			const cJSON *text = cJSON_GetObjectItemCaseSensitive(ann, "text");
			if (!cJSON_IsObject(ann) || (text && !cJSON_IsString(text) && !cJSON_IsNull(text))) {
				snprintf(what, sizeof(what), "annotation in prompt[%zu]", k);
				return bad_at(c, seg_elem(c, k, 2), what,
					      "an object like {\"text\": \"...\"}");
			}
		}
		if (r->keep_text) {
			const cJSON *text = ann ? cJSON_GetObjectItemCaseSensitive(ann, "text") : NULL;
			char *copy = cJSON_IsString(text) ? strdup(text->valuestring) : NULL;
			char **slot = (copy || !cJSON_IsString(text)) ? vec_push(&r->pend_text) : NULL;
			if (!slot) {
				free(copy);
				return diag_set(c->d, DIAG_ENOMEM, "%s:%ld: out of memory", r->path,
						r->line_no);
			}
			*slot = copy;
		}
		struct trace_seg *out = vec_push(&r->pend_segs);
		if (!out)
			return diag_set(c->d, DIAG_ENOMEM, "%s:%ld: out of memory", r->path, r->line_no);
		out->content = content;
		out->tokens = tokens;
		*total += tokens; /* <= 2^20 * 10^9 < 2^63 */
	}
	return 0;
}

static bool seq_seen(const struct vec *calls, int64_t seq)
{
	size_t lo = 0, hi = calls->len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (VEC_AT(calls, struct trace_call, mid).seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < calls->len && VEC_AT(calls, struct trace_call, lo).seq == seq;
}

#define EXP_GAP "'gap': seconds from the previous call's completion"
#define EXP_T "'t': the absolute start time in seconds"

static int canon_line(struct lctx *c, struct pend *p)
{
	struct trace_reader *r = c->r;
	memset(p, 0, sizeof(*p));
	p->line = r->line_no;
	p->call.retry_of = -1;

	const cJSON *v;
	if ((v = opt(c, "format")) && cJSON_IsString(v) && strcmp(v->valuestring, "agentcap-trace") == 0)
		return lerr(c, at_key(c, "format"), "second header line (expected one header, "
			    "on line 1; merge traces with the writer instead of concatenating them)");

	/* Identity. */
	if ((v = opt(c, "session"))) {
		if (!as_id(v, &p->session, c->name, sizeof(c->name)))
			return bad_key(c, "session", "a non-empty string or an integer");
		p->named = true;
	} else {
		p->session = trace_anon_session_id(r->line_no);
		snprintf(c->name, sizeof(c->name), "line %ld", r->line_no);
	}
	if ((v = opt(c, "engineer")) && !as_id(v, &p->engineer, NULL, 0))
		return bad_key(c, "engineer", "a non-empty string or an integer");
	if ((v = opt(c, "parent_session")) && !as_id(v, &p->parent, NULL, 0))
		return bad_key(c, "parent_session", "a non-empty string or an integer");
	if ((v = opt(c, "team")) && !as_id(v, &p->team, NULL, 0))
		return bad_key(c, "team", "a non-empty string or an integer");
	if ((v = opt(c, "task")) && !as_id(v, &p->call.task, NULL, 0))
		return bad_key(c, "task", "a non-empty string or an integer");

	/* Plain fields. */
	bool has_t = false, has_gap = false, has_seq = false, extends = false;
	double t = 0, gap = 0;
	int64_t seq = 0, out_tokens = 0, retry = -1;
	if ((v = opt(c, "t"))) {
		if (!as_time(v, TRACE_MAX_SECONDS, &t))
			return bad_key(c, "t", "a number of seconds 0..1e9");
		has_t = true;
	}
	if ((v = opt(c, "gap"))) {
		if (!as_time(v, TRACE_MAX_SECONDS, &gap))
			return bad_key(c, "gap", "a number of seconds 0..1e9");
		has_gap = true;
	}
	if ((v = opt(c, "seq"))) {
		if (!as_int(v, 0, TRACE_MAX_INT_ID, &seq))
			return bad_key(c, "seq", "an integer >= 0");
		has_seq = true;
	}
	if ((v = opt(c, "extends"))) {
		if (!cJSON_IsBool(v))
			return bad_key(c, "extends", "true or false");
		extends = cJSON_IsTrue(v);
	}
	if (!(v = opt(c, "output_tokens")))
		return missing(c, "output_tokens", "an integer >= 0");
	if (!as_int(v, 0, TRACE_MAX_TOKENS, &out_tokens))
		return bad_key(c, "output_tokens", "an integer 0..1000000000");
	p->call.output_tokens = out_tokens ? out_tokens : 1;
	if ((v = opt(c, "tool"))) {
		if (cJSON_IsString(v) && strcmp(v->valuestring, "ok") == 0)
			p->call.tool = TRACE_TOOL_OK;
		else if (cJSON_IsString(v) && strcmp(v->valuestring, "fail") == 0)
			p->call.tool = TRACE_TOOL_FAIL;
		else
			return bad_key(c, "tool", "\"ok\" or \"fail\"");
	}
	if ((v = opt(c, "retry_of")) && !as_int(v, 0, TRACE_MAX_INT_ID, &retry))
		return bad_key(c, "retry_of", "the seq of an earlier call of the session");
	bool open_loop = !p->named;
	if ((v = opt(c, "open_loop"))) {
		if (!cJSON_IsBool(v))
			return bad_key(c, "open_loop", "true or false");
		if (cJSON_IsFalse(v) && !p->named)
			return bad_key(c, "open_loop", "true or no key: a call without 'session' is open loop");
		open_loop = cJSON_IsTrue(v);
	}
	if ((v = opt(c, "kind"))) {
		int kind = cJSON_IsString(v) ? out_kind_parse(v->valuestring) : -1;
		if (kind < 0)
			return bad_key(c, "kind", "\"code\", \"structured\", \"prose\" or \"unknown\"");
		p->call.kind = kind;
	}
	if ((v = opt(c, "priority"))) {
		int64_t pv = -1;
		const char *pn = cJSON_IsString(v) ? v->valuestring : "";
		if (strcmp(pn, "main") == 0)
			p->call.prio = TRACE_PRIO_MAIN;
		else if (strcmp(pn, "subagent") == 0)
			p->call.prio = TRACE_PRIO_SUBAGENT;
		else if (strcmp(pn, "batch") == 0)
			p->call.prio = TRACE_PRIO_BATCH;
		else if (as_int(v, 0, TRACE_PRIO_MAX, &pv)) {
			p->call.prio = TRACE_PRIO_VALUE;
			p->call.prio_value = (int32_t)pv;
		} else
			return bad_key(c, "priority", "an integer 0..15, \"main\", \"subagent\" or \"batch\"");
	}
	if ((v = opt(c, "accepted"))) {
		if (!cJSON_IsBool(v))
			return bad_key(c, "accepted", "true, false or null");
		p->call.accepted = cJSON_IsTrue(v) ? TRACE_ACCEPT_TRUE : TRACE_ACCEPT_FALSE;
	}

	vec_clear(&r->pend_segs);
	texts_clear(&r->pend_text);
	int64_t own = 0;
	if ((v = opt(c, "prompt"))) {
		int rc = canon_prompt(c, v, &own);
		if (rc)
			return rc;
	} else if (!extends) {
		return missing(c, "prompt", "an array of " EXP_SEG " segments");
	}

	bool later = p->named && r->have_cur && r->cur.named && p->session == r->cur.id;
	if (later) {
		const struct trace_call *prev =
			&VEC_AT(&r->calls, struct trace_call, r->calls.len - 1);
		if (r->cur.open_loop || open_loop)
			return lerr(c, -1, "second call of open-loop session '%s' (expected one call "
				    "per open-loop session)", c->name);
		if (has_t)
			return lerr(c, at_key(c, "t"), "'t' on a later call of session '%s' (expected %s)",
				    c->name, EXP_GAP);
		if (!has_gap)
			return lerr(c, -1, "missing 'gap' on a later call of session '%s' (expected %s)",
				    c->name, EXP_GAP);
		if (!has_seq)
			seq = prev->seq + 1;
		else if (seq <= prev->seq)
			return lerr(c, at_key(c, "seq"), "seq %lld is not after the previous call's seq %lld "
				    "in session '%s' (expected strictly increasing seq)",
				    (long long)seq, (long long)prev->seq, c->name);
		if (opt(c, "engineer") && p->engineer != r->cur.engineer)
			return lerr(c, at_key(c, "engineer"), "'engineer' differs from the first call of "
				    "session '%s' (expected the same engineer or none)", c->name);
		if (opt(c, "parent_session") && p->parent != r->cur.parent)
			return lerr(c, at_key(c, "parent_session"), "'parent_session' differs from the "
				    "first call of session '%s' (expected the same parent or none)", c->name);
		if (opt(c, "team") && p->team != r->cur.team)
			return lerr(c, at_key(c, "team"), "'team' differs from the first call of "
				    "session '%s' (expected the same team or none)", c->name);
		if (retry >= 0 && !seq_seen(&r->calls, retry))
			return lerr(c, at_key(c, "retry_of"), "retry_of %lld names no earlier call of "
				    "session '%s' (expected the seq of an earlier call)",
				    (long long)retry, c->name);
		if (r->calls.len >= r->lim.max_calls_per_session)
			return lerr(c, -1, "session '%s' has more than %zu calls (the limit per session)",
				    c->name, r->lim.max_calls_per_session);
		if (r->pend_segs.len > r->lim.max_segs_per_session - r->segs.len)
			return lerr(c, at_key(c, "prompt"), "session '%s' has more than %zu prompt "
				    "segments (the limit per session)", c->name, r->lim.max_segs_per_session);
		if (!extends && own < 1)
			return lerr(c, at_key(c, "prompt"), "empty prompt (expected at least one segment)");
		int64_t inherited = extends ? prev->prompt_tokens + prev->output_tokens : 0;
		if (inherited + own > TRACE_MAX_PROMPT_TOKENS)
			return lerr(c, at_key(c, "prompt"), "prompt of %lld tokens is over the limit "
				    "(expected at most 2^40 tokens)", (long long)(inherited + own));
		p->later = true;
		p->call.prompt_tokens = inherited + own;
		p->call.gap_s = gap;
		p->t_s = r->cur.t_s;
		p->engineer = r->cur.engineer;
		p->parent = r->cur.parent;
		p->team = r->cur.team;
	} else {
		char who[NAME_MAX_SHOWN + 48];
		if (p->named)
			snprintf(who, sizeof(who), "the first call of session '%s'", c->name);
		else
			snprintf(who, sizeof(who), "a call without 'session'");
		if (p->named && map_get(&r->closed, p->session))
			return lerr(c, at_key(c, "session"), "session '%s' reappears after another "
				    "session: calls of a session must be contiguous", c->name);
		if (has_gap)
			return lerr(c, at_key(c, "gap"), "'gap' on %s (expected %s)", who, EXP_T);
		if (!has_t)
			return lerr(c, -1, "missing 't' on %s (expected %s)", who, EXP_T);
		if (extends)
			return lerr(c, at_key(c, "extends"), "'extends' on %s (expected false: "
				    "there is no previous call to extend)", who);
		if (retry >= 0)
			return lerr(c, at_key(c, "retry_of"), "retry_of %lld names no earlier call of "
				    "session '%s' (expected the seq of an earlier call)",
				    (long long)retry, c->name);
		if (r->have_start && t < r->last_start_s)
			return lerr(c, at_key(c, "t"), "session '%s' starts at t=%g before the previous "
				    "session's t=%g: sort sessions by start time", c->name, t, r->last_start_s);
		if (own > TRACE_MAX_PROMPT_TOKENS)
			return lerr(c, at_key(c, "prompt"), "prompt of %lld tokens is over the limit "
				    "(expected at most 2^40 tokens)", (long long)own);
		if (own < 1)
			return lerr(c, at_key(c, "prompt"), "empty prompt (expected at least one segment)");
		if (r->pend_segs.len > r->lim.max_segs_per_session)
			return lerr(c, at_key(c, "prompt"), "session '%s' has more than %zu prompt "
				    "segments (the limit per session)", c->name, r->lim.max_segs_per_session);
		p->call.prompt_tokens = own;
		p->t_s = t;
	}
	p->open_loop = open_loop;
	p->call.seq = seq;
	p->call.extends_prev = extends;
	p->call.retry_of = retry;
	return 0;
}

/* ---- Mooncake lines ----------------------------------------------------- */

static int mooncake_line(struct lctx *c, struct pend *p)
{
	struct trace_reader *r = c->r;
	const int64_t B = TRACE_MOONCAKE_BLOCK_TOKENS;
	memset(p, 0, sizeof(*p));
	p->line = r->line_no;
	p->call.retry_of = -1;

	const cJSON *v;
	double ms;
	int64_t in_len, out_len;
	if (!(v = opt(c, "timestamp")))
		return missing(c, "timestamp", "milliseconds 0..1e12");
	if (!as_time(v, TRACE_MAX_SECONDS * 1000, &ms))
		return bad_key(c, "timestamp", "milliseconds 0..1e12");
	if (!(v = opt(c, "input_length")))
		return missing(c, "input_length", "an integer >= 1");
	if (!as_int(v, 1, TRACE_MAX_PROMPT_TOKENS, &in_len))
		return bad_key(c, "input_length", "an integer 1..2^40");
	if (!(v = opt(c, "output_length")))
		return missing(c, "output_length", "an integer >= 0");
	if (!as_int(v, 0, TRACE_MAX_TOKENS, &out_len))
		return bad_key(c, "output_length", "an integer 0..1000000000");

	vec_clear(&r->pend_segs);
	const cJSON *ids = opt(c, "hash_ids");
	if (ids && !cJSON_IsArray(ids))
		return bad_key(c, "hash_ids", "an array of integer block ids");
	size_t n = 0;
	for (const cJSON *e = ids ? ids->child : NULL; e; e = e->next)
		n++;
	if (n > r->lim.max_segs_per_call)
		return lerr(c, at_key(c, "hash_ids"), "%zu hash_ids are more than the limit of %zu per call",
			    n, r->lim.max_segs_per_call);
	if (n > 0 && !(B * ((int64_t)n - 1) < in_len && in_len <= B * (int64_t)n))
		return lerr(c, at_key(c, "input_length"), "input_length %lld does not fit %zu hash_ids "
			    "of %lld-token blocks (expected %lld..%lld)", (long long)in_len, n,
			    (long long)B, (long long)(B * ((int64_t)n - 1) + 1), (long long)(B * (int64_t)n));
	if (n == 0 && in_len > TRACE_MAX_TOKENS)
		return bad_key(c, "input_length", "at most 1000000000 tokens without hash_ids");
	if (r->have_ms && ms < r->last_ms)
		return lerr(c, at_key(c, "timestamp"), "timestamp %.17g ms is before the previous "
			    "line's %.17g ms (expected non-decreasing timestamps)", ms, r->last_ms);
	if (vec_reserve(&r->pend_segs, n ? n : 1) != 0)
		return diag_set(c->d, DIAG_ENOMEM, "%s:%ld: out of memory", r->path, r->line_no);
	size_t k = 0;
	for (const cJSON *e = ids ? ids->child : NULL; e; e = e->next, k++) {
		int64_t id;
		if (!as_int(e, -TRACE_MAX_INT_ID, TRACE_MAX_INT_ID, &id)) {
			char what[48];
			snprintf(what, sizeof(what), "hash_ids[%zu]", k);
			return bad_at(c, jl_elem(c->s, c->n, at_key(c, "hash_ids"), k), what,
				      "an integer within +-2^53");
		}
		int64_t tokens = k + 1 < n ? B : in_len - B * ((int64_t)n - 1);
		struct trace_seg *s = vec_push(&r->pend_segs);
		s->content = trace_content_int(id, tokens);
		s->tokens = tokens;
	}
	if (n == 0) {
		struct trace_seg *s = vec_push(&r->pend_segs);
		s->content = hash_combine(hash_combine(SEED_MOONCAKE_LINE, (uint64_t)r->line_no),
					  (uint64_t)in_len);
		s->tokens = in_len;
	}
	p->session = trace_anon_session_id(r->line_no);
	p->open_loop = true;
	p->t_s = ms / 1000.0;
	p->call.prompt_tokens = in_len;
	p->call.output_tokens = out_len ? out_len : 1;
	r->last_ms = ms;
	r->have_ms = true;
	return 0;
}

/* ---- Header and format detection ---------------------------------------- */

#define EXP_HEADER "{\"format\":\"agentcap-trace\",\"version\":1} on line 1"

static int parse_header(struct lctx *c)
{
	struct trace_reader *r = c->r;
	const cJSON *v = opt(c, "format");
	int64_t i;
	if (!v)
		return lerr(c, -1, "missing header (expected " EXP_HEADER ")");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, "agentcap-trace") != 0)
		return bad_key(c, "format", "\"agentcap-trace\"");
	if (!(v = opt(c, "version")))
		return missing(c, "version", "1");
	if (!as_int(v, 1, 1, &i))
		return bad_key(c, "version", "1: this reader knows version 1 only");
	if ((v = opt(c, "block_tokens_hint"))) {
		if (!as_int(v, 1, (int64_t)1 << 24, &i))
			return bad_key(c, "block_tokens_hint", "an integer 1..16777216");
		r->block_tokens_hint = i;
	}
	if ((v = opt(c, "source"))) {
		if (!cJSON_IsString(v))
			return bad_key(c, "source", "a string");
		r->source = strdup(v->valuestring);
		if (!r->source)
			return diag_set(c->d, DIAG_ENOMEM, "%s: out of memory", r->path);
	}
	return 0;
}

static int set_mooncake(struct trace_reader *r, struct diag *d)
{
	r->fmt = TRACE_FMT_MOONCAKE;
	r->block_tokens_hint = TRACE_MOONCAKE_BLOCK_TOKENS;
	r->source = strdup("mooncake");
	if (!r->source)
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", r->path);
	return 0;
}

static int detect(struct trace_reader *r, enum trace_format fmt, struct diag *d)
{
	char *line = NULL;
	size_t len = 0;
	int rc;
	do
		rc = read_line(r, &line, &len, d);
	while (rc == LINE_OK && blank(line, len));
	if (rc < 0)
		return rc;
	if (rc == LINE_TOO_LONG)
		return diag_at(d, DIAG_EINPUT, r->path, r->line_no, 0,
			       "line longer than the %zu-byte limit (expected a JSON object)",
			       r->lim.max_line_bytes);
	if (rc == 0) {
		if (fmt == TRACE_FMT_MOONCAKE)
			return set_mooncake(r, d);
		return diag_set(d, DIAG_EINPUT, "%s: empty file (expected %s)", r->path,
				fmt == TRACE_FMT_CANONICAL ? "the header " EXP_HEADER
				: "a canonical agentcap trace or Mooncake JSON lines");
	}
	if (fmt == TRACE_FMT_MOONCAKE) {
		r->held = true;
		r->held_line = line;
		r->held_len = len;
		return set_mooncake(r, d);
	}
	struct lctx c = { .r = r, .s = line, .n = len, .d = d };
	rc = parse_json(&c);
	if (rc)
		return rc;
	if (fmt == TRACE_FMT_AUTO) {
		if (opt(&c, "format"))
			fmt = TRACE_FMT_CANONICAL;
		else if (opt(&c, "hash_ids") || opt(&c, "input_length"))
			fmt = TRACE_FMT_MOONCAKE;
		else if (opt(&c, "sessionId") || opt(&c, "parentUuid") || opt(&c, "isSidechain"))
			rc = lerr(&c, 0, "this is a Claude Code session log, not a trace (run "
				  "'agentcap import claude-code %s -o trace.jsonl.gz' first, then use "
				  "trace.jsonl.gz; docs/importers.md)", r->path);
		else if (opt(&c, "payload") && opt(&c, "timestamp"))
			rc = lerr(&c, 0, "this looks like a Codex CLI rollout, not a trace (run "
				  "'agentcap import codex %s -o trace.jsonl.gz' first; "
				  "docs/importers.md)", r->path);
		else
			rc = lerr(&c, 0, "cannot tell the trace format (expected the canonical header "
				  "{\"format\":\"agentcap-trace\",\"version\":1} or a Mooncake line with "
				  "\"hash_ids\" and \"input_length\"; other logs go through agentcap "
				  "import)");
	}
	if (rc == 0 && fmt == TRACE_FMT_CANONICAL) {
		r->fmt = TRACE_FMT_CANONICAL;
		rc = parse_header(&c);
	} else if (rc == 0) {
		r->held = true;
		r->held_line = line;
		r->held_len = len;
		rc = set_mooncake(r, d);
	}
	cJSON_Delete(c.root);
	return rc;
}

/* ---- Session assembly --------------------------------------------------- */

/* Read lines until one parses into r->pend: 1, 0 at the end, or an error. */
static int fetch(struct trace_reader *r, struct diag *d)
{
	for (;;) {
		char *line = NULL;
		size_t len = 0;
		int rc;
		if (r->held) {
			line = r->held_line;
			len = r->held_len;
			rc = LINE_OK;
			r->held = false;
		} else {
			rc = read_line(r, &line, &len, d);
		}
		if (rc <= 0)
			return rc;
		struct diag ld;
		diag_init(&ld);
		if (rc == LINE_TOO_LONG) {
			diag_at(&ld, DIAG_EINPUT, r->path, r->line_no, 0,
				"line longer than the %zu-byte limit (expected one JSON object per line)",
				r->lim.max_line_bytes);
		} else if (blank(line, len)) {
			continue;
		} else {
			struct lctx c = { .r = r, .s = line, .n = len, .d = &ld };
			if (parse_json(&c) == 0) {
				if (r->fmt == TRACE_FMT_MOONCAKE)
					mooncake_line(&c, &r->pend);
				else
					canon_line(&c, &r->pend);
				cJSON_Delete(c.root);
			}
		}
		if (ld.code == DIAG_OK) {
			r->have_pend = true;
			return 1;
		}
		if (ld.code == DIAG_EINPUT && r->skip_bad) {
			if (r->skipped++ == 0)
				snprintf(r->first_skipped, sizeof(r->first_skipped), "%s", ld.msg);
			continue;
		}
		return diag_set(d, ld.code, "%s", ld.msg);
	}
}

/* Move the look-ahead line into the session being assembled. */
static int take_pend(struct trace_reader *r, struct diag *d)
{
	struct trace_call *c = vec_push(&r->calls);
	size_t *off = vec_push(&r->seg_off);
	if (!c || !off || vec_append(&r->segs, r->pend_segs.data, r->pend_segs.len) != 0 ||
	    (r->pend_text.len && vec_append(&r->texts, r->pend_text.data, r->pend_text.len) != 0))
		return diag_set(d, DIAG_ENOMEM, "%s:%ld: out of memory assembling a session",
				r->path, r->pend.line);
	vec_clear(&r->pend_text); /* the strings now belong to r->texts */
	*c = r->pend.call;
	c->line = r->pend.line;
	c->segs = NULL;
	c->n_segs = r->pend_segs.len;
	*off = r->segs.len - r->pend_segs.len;
	r->have_pend = false;
	return 0;
}

static int finish(struct trace_reader *r, struct trace_session **out, struct diag *d)
{
	struct trace_call *calls = r->calls.data;
	struct trace_seg *segs = r->segs.data;
	/* texts run parallel to segs only if every segment pushed one */
	bool text = r->keep_text && r->texts.len == r->segs.len;
	char **tx = r->texts.data;
	for (size_t i = 0; i < r->calls.len; i++) {
		calls[i].segs = calls[i].n_segs ? segs + VEC_AT(&r->seg_off, size_t, i) : NULL;
		calls[i].seg_text = text && calls[i].n_segs ? tx + VEC_AT(&r->seg_off, size_t, i) : NULL;
	}
	struct trace_session view = {
		.id = r->cur.id,
		.engineer = r->cur.engineer,
		.parent = r->cur.parent,
		.team = r->cur.team,
		.t_s = r->cur.t_s,
		.calls = calls,
		.n_calls = r->calls.len,
		.line = r->cur.line,
		.open_loop = r->cur.open_loop,
	};
	assert(trace_session_check(&view));
	if (trace_session_clone(out, &view) != 0 ||
	    (r->cur.named && map_put(&r->closed, r->cur.id, 1) != 0)) {
		trace_session_free(*out);
		*out = NULL;
		return diag_set(d, DIAG_ENOMEM, "%s:%ld: out of memory returning a session",
				r->path, r->cur.line);
	}
	r->have_cur = false;
	vec_clear(&r->calls);
	vec_clear(&r->seg_off);
	vec_clear(&r->segs);
	texts_clear(&r->texts);
	return 0;
}

static int assemble(struct trace_reader *r, struct trace_session **out, struct diag *d)
{
	int rc;
	if (!r->have_pend && (rc = fetch(r, d)) <= 0)
		return rc;
	r->have_cur = true;
	r->cur.named = r->pend.named;
	r->cur.open_loop = r->pend.open_loop;
	r->cur.id = r->pend.session;
	r->cur.engineer = r->pend.engineer;
	r->cur.parent = r->pend.parent;
	r->cur.team = r->pend.team;
	r->cur.t_s = r->pend.t_s;
	r->cur.line = r->pend.line;
	r->have_start = true;
	r->last_start_s = r->pend.t_s;
	vec_clear(&r->calls);
	vec_clear(&r->seg_off);
	vec_clear(&r->segs);
	texts_clear(&r->texts);
	if ((rc = take_pend(r, d)) < 0)
		return rc;
	while ((rc = fetch(r, d)) == 1 && r->pend.later)
		if ((rc = take_pend(r, d)) < 0)
			return rc;
	if (rc < 0)
		return rc;
	if ((rc = finish(r, out, d)) < 0)
		return rc;
	return 1;
}

/* ---- Public interface --------------------------------------------------- */

int trace_reader_open(struct trace_reader **out, const char *path,
		      enum trace_format fmt, struct diag *d)
{
	*out = NULL;
	struct trace_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", path);
	r->lim.max_line_bytes = TRACE_READER_MAX_LINE_BYTES;
	r->lim.max_segs_per_call = TRACE_READER_MAX_SEGS_PER_CALL;
	r->lim.max_calls_per_session = TRACE_READER_MAX_CALLS_PER_SESSION;
	r->lim.max_segs_per_session = TRACE_READER_MAX_SEGS_PER_SESSION;
	r->fmt = fmt;
	map_init(&r->closed);
	vec_init(&r->calls, sizeof(struct trace_call), VEC_NO_LIMIT);
	vec_init(&r->seg_off, sizeof(size_t), VEC_NO_LIMIT);
	vec_init(&r->segs, sizeof(struct trace_seg), VEC_NO_LIMIT);
	vec_init(&r->pend_segs, sizeof(struct trace_seg), VEC_NO_LIMIT);
	vec_init(&r->pend_text, sizeof(char *), VEC_NO_LIMIT);
	vec_init(&r->texts, sizeof(char *), VEC_NO_LIMIT);
	r->path = strdup(path);
	if (!r->path) {
		trace_reader_free(r);
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", path);
	}
	errno = 0;
	if (strcmp(path, "-") == 0) {
		int fd = dup(0);
		r->gz = fd >= 0 ? gzdopen(fd, "rb") : NULL;
		if (!r->gz && fd >= 0)
			close(fd);
	} else {
		r->gz = gzopen(path, "rb");
	}
	if (!r->gz) {
		int rc = diag_set(d, errno ? DIAG_EIO : DIAG_ENOMEM, "%s: cannot open: %s", path,
				  errno ? strerror(errno) : "out of memory");
		trace_reader_free(r);
		return rc;
	}
	gzbuffer(r->gz, 128u << 10);
	int rc = detect(r, fmt, d);
	if (rc) {
		trace_reader_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int trace_reader_next(struct trace_reader *r, struct trace_session **out, struct diag *d)
{
	*out = NULL;
	if (r->failed)
		return diag_set(d, r->failed, "%s", r->fail_msg);
	struct diag ld;
	diag_init(&ld);
	int rc = assemble(r, out, &ld);
	if (rc < 0) {
		r->failed = rc;
		snprintf(r->fail_msg, sizeof(r->fail_msg), "%s", ld.msg);
		return diag_set(d, rc, "%s", ld.msg);
	}
	return rc;
}

void trace_reader_set_skip_bad(struct trace_reader *r, bool skip_bad)
{
	r->skip_bad = skip_bad;
}

long trace_reader_skipped(const struct trace_reader *r)
{
	return r->skipped;
}

const char *trace_reader_first_skipped(const struct trace_reader *r)
{
	return r->skipped ? r->first_skipped : NULL;
}

void trace_reader_set_limits(struct trace_reader *r, const struct trace_reader_limits *lim)
{
	if (lim->max_line_bytes)
		r->lim.max_line_bytes = lim->max_line_bytes;
	if (lim->max_segs_per_call)
		r->lim.max_segs_per_call = lim->max_segs_per_call;
	if (lim->max_calls_per_session)
		r->lim.max_calls_per_session = lim->max_calls_per_session;
	if (lim->max_segs_per_session)
		r->lim.max_segs_per_session = lim->max_segs_per_session;
}

enum trace_format trace_reader_format(const struct trace_reader *r)
{
	return r->fmt;
}

bool trace_reader_gzip(const struct trace_reader *r)
{
	return r->gzip;
}

int64_t trace_reader_block_tokens_hint(const struct trace_reader *r)
{
	return r->block_tokens_hint;
}

const char *trace_reader_source(const struct trace_reader *r)
{
	return r->source;
}

const char *trace_reader_path(const struct trace_reader *r)
{
	return r->path;
}

long trace_reader_line(const struct trace_reader *r)
{
	return r->line_no;
}

void trace_reader_set_keep_text(struct trace_reader *r, bool keep_text)
{
	r->keep_text = keep_text;
}

void trace_reader_free(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->gz)
		gzclose(r->gz);
	free(r->buf);
	free(r->path);
	free(r->source);
	map_release(&r->closed);
	vec_release(&r->calls);
	vec_release(&r->seg_off);
	vec_release(&r->segs);
	vec_release(&r->pend_segs);
	texts_clear(&r->pend_text);
	vec_release(&r->pend_text);
	texts_clear(&r->texts);
	vec_release(&r->texts);
	free(r);
}
