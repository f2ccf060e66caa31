/* SPDX-License-Identifier: Apache-2.0
 * import_util: shared machinery of the importers (see import_util.h):
 * record errors, a gzip-aware line reader, timestamps, salted ids, the
 * session builder with the prefix rule, and the start-time-ordered sink.
 *
 * The prefix rule (docs/importers.md, "Prefix reuse"): the builder keeps, per
 * session, the segments of the last call's whole prompt followed by its
 * output segment ("hist").  A call that reuses at least all of hist extends
 * the previous call; one that reuses less gets explicit segments: hist cut at
 * the reused length (a cut segment keeps its content, so the blocks inside
 * the reused part hash as before) and one new unique segment for the rest.
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/import_util.h"

#include "base/diag.h"
#include "base/hash.h"
#include "traces/jsontext.h"
#include "traces/reader.h"
#include "traces/rules.h"
#include "traces/writer.h"

#include <cjson/cJSON.h>
#include <zlib.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_CHUNK ((size_t)256 << 10)
#define SEED_UNIQUE  0x696d702d756e6971ULL /* "imp-uniq" */
#define SEED_TEXT    0x696d702d74657874ULL /* "imp-text" */
#define SEED_SHARED  0x696d702d73686172ULL /* "imp-shar" */

/* ---- Errors ------------------------------------------------------------- */

int imp_bad(struct imp *m, const char *path, long line, long col, const char *fmt, ...)
{
	char msg[DIAG_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m->skip_bad) {
		if (m->st->skipped++ == 0) {
			struct diag tmp;
			diag_init(&tmp);
			diag_at(&tmp, DIAG_EINPUT, path, line, col, "%s", msg);
			snprintf(m->st->first_skipped, sizeof(m->st->first_skipped), "%s", tmp.msg);
		}
		return 1;
	}
	return diag_at(m->d, DIAG_EINPUT, path, line, col, "%s", msg);
}

int imp_check_calls(struct imp *m, size_t n_calls, const char *path, long line,
		    const char *sess_path, long sess_line)
{
	size_t max = m->o->max_calls_per_session ? m->o->max_calls_per_session
						 : TRACE_READER_MAX_CALLS_PER_SESSION;
	if (n_calls < max)
		return 0;
	return diag_at(m->d, DIAG_EINPUT, path, line, 0, "session from %s:%ld has more than %zu "
		       "calls (the limit of docs/trace-format.md; expected a shorter session)",
		       sess_path, sess_line, max);
}

long imp_col(const char *s, size_t n, const char *key)
{
	size_t klen = strlen(key);
	for (size_t i = 0; i + klen + 2 <= n; i++) {
		if (s[i] != '"' || memcmp(s + i + 1, key, klen) != 0 || s[i + klen + 1] != '"')
			continue;
		size_t j = i + klen + 2;
		while (j < n && (s[j] == ' ' || s[j] == '\t'))
			j++;
		if (j < n && s[j] == ':') {
			j++;
			while (j < n && (s[j] == ' ' || s[j] == '\t'))
				j++;
			return (long)j + 1;
		}
	}
	return 0;
}

/* ---- Lines -------------------------------------------------------------- */

int lines_open(struct lines *l, const char *path, struct diag *d)
{
	memset(l, 0, sizeof(*l));
	l->path = path;
	errno = 0;
	gzFile gz = gzopen(path, "rb");
	if (!gz)
		return diag_set(d, errno ? DIAG_EIO : DIAG_ENOMEM, "%s: cannot open: %s", path,
				errno ? strerror(errno) : "out of memory");
	gzbuffer(gz, 128u << 10);
	l->gz = gz;
	return 0;
}

void lines_close(struct lines *l)
{
	if (l->gz)
		gzclose((gzFile)l->gz);
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

bool lines_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static int gz_error(gzFile gz, const char *path, long lines, struct diag *d)
{
	int errnum = Z_OK;
	const char *msg = gzerror(gz, &errnum);
	if (errnum == Z_ERRNO)
		return diag_set(d, DIAG_EIO, "%s: read failed: %s", path, strerror(errno));
	if (errnum == Z_MEM_ERROR)
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory decompressing", path);
	if (errnum == Z_BUF_ERROR)
		return diag_set(d, DIAG_EINPUT,
				"%s: truncated gzip stream (unexpected end of file) after %ld lines",
				path, lines);
	if (msg && strstr(msg, ": "))
		msg = strstr(msg, ": ") + 2;
	return diag_set(d, DIAG_EINPUT, "%s: corrupt gzip stream (%s) after %ld lines", path,
			msg && *msg ? msg : "data error", lines);
}

static int lines_fill(struct lines *l, struct diag *d)
{
	if (l->cap - l->len < READ_CHUNK + 1) {
		size_t cap = l->cap ? l->cap : READ_CHUNK + 1;
		while (cap < l->len + READ_CHUNK + 1)
			cap *= 2;
		char *p = realloc(l->buf, cap);
		if (!p)
			return diag_set(d, DIAG_ENOMEM, "%s: out of memory reading line %ld", l->path,
					l->line_no + 1);
		l->buf = p;
		l->cap = cap;
	}
	size_t room = l->cap - l->len - 1;
	if (room > (size_t)1 << 30)
		room = (size_t)1 << 30;
	int n = gzread((gzFile)l->gz, l->buf + l->len, (unsigned)room);
	if (n < 0)
		return gz_error((gzFile)l->gz, l->path, l->line_no, d);
	if (n == 0) {
		l->eof = true;
		int errnum = Z_OK;
		gzerror((gzFile)l->gz, &errnum);
		if (errnum != Z_OK)
			return gz_error((gzFile)l->gz, l->path, l->line_no, d);
		return 0;
	}
	l->len += (size_t)n;
	return 0;
}

static void cut_line(struct lines *l, size_t start, size_t end, char **line, size_t *len)
{
	*line = l->buf + start;
	l->buf[end] = '\0';
	size_t n = end - start;
	if (n > 0 && (*line)[n - 1] == '\r')
		(*line)[--n] = '\0';
	*len = n;
}

/* Drop the rest of a line too long to keep, up to its newline. */
static int lines_skip_rest(struct lines *l, struct diag *d)
{
	size_t skipped = 0;
	for (;;) {
		char *nl = l->len > l->pos ? memchr(l->buf + l->pos, '\n', l->len - l->pos) : NULL;
		if (nl) {
			l->pos = (size_t)(nl - l->buf) + 1;
			l->rest_too_long = false;
			return 0;
		}
		skipped += l->len - l->pos;
		l->pos = l->len = 0;
		if (l->eof) {
			l->rest_too_long = false;
			return 0;
		}
		if (skipped > IMP_MAX_SKIP_BYTES)
			return diag_set(d, DIAG_EINPUT, "%s:%ld: no end of line within %zu bytes "
					"(expected one record per line; a line this long cannot be "
					"skipped)", l->path, l->line_no, IMP_MAX_SKIP_BYTES);
		int rc = lines_fill(l, d);
		if (rc < 0)
			return rc;
	}
}

int lines_next(struct lines *l, char **line, size_t *len, struct diag *d)
{
	if (l->rest_too_long) {
		int rc = lines_skip_rest(l, d);
		if (rc < 0)
			return rc;
	}
	size_t scan = l->pos;
	for (;;) {
		char *nl = l->len > scan ? memchr(l->buf + scan, '\n', l->len - scan) : NULL;
		if (nl) {
			size_t end = (size_t)(nl - l->buf);
			l->line_no++;
			size_t start = l->pos;
			l->pos = end + 1;
			if (end - start > IMP_MAX_LINE_BYTES)
				return LINES_TOO_LONG;
			cut_line(l, start, end, line, len);
			return LINES_OK;
		}
		if (l->eof) {
			if (l->pos == l->len)
				return 0;
			l->line_no++;
			size_t start = l->pos;
			l->pos = l->len;
			cut_line(l, start, l->len, line, len);
			return l->len - start > IMP_MAX_LINE_BYTES ? LINES_TOO_LONG : LINES_OK;
		}
		if (l->pos > 0) {
			memmove(l->buf, l->buf + l->pos, l->len - l->pos);
			l->len -= l->pos;
			l->pos = 0;
		}
		if (l->len > IMP_MAX_LINE_BYTES) {
			/* too long already: say so now, drop the rest on the next call */
			l->line_no++;
			l->pos = l->len = 0;
			l->rest_too_long = true;
			return LINES_TOO_LONG;
		}
		scan = l->len;
		int rc = lines_fill(l, d);
		if (rc < 0)
			return rc;
	}
}

int imp_slurp(const char *path, char **out, size_t *len, struct diag *d)
{
	*out = NULL;
	*len = 0;
	struct lines l;
	int rc = lines_open(&l, path, d);
	if (rc)
		return rc;
	while (!l.eof) {
		if ((rc = lines_fill(&l, d)) < 0)
			break;
		if (l.len > IMP_MAX_LINE_BYTES) {
			rc = diag_set(d, DIAG_EINPUT, "%s: file larger than the %zu-byte limit "
				      "(expected one JSON document of at most that size)", path,
				      IMP_MAX_LINE_BYTES);
			break;
		}
	}
	if (rc < 0) {
		lines_close(&l);
		return rc;
	}
	if (!l.buf && !(l.buf = malloc(1))) {
		lines_close(&l);
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", path);
	}
	l.buf[l.len] = '\0';
	*out = l.buf;
	*len = l.len;
	l.buf = NULL;
	lines_close(&l);
	return 0;
}

int imp_json_line(struct imp *m, const char *path, long line, const char *s, size_t n,
		  struct cJSON **root)
{
	*root = NULL;
	cJSON *r;
	size_t at;
	switch (jsontext_parse(s, n, &r, &at)) {
	case JSONTEXT_OK:
		break;
	case JSONTEXT_NUL:
		return imp_bad(m, path, line, (long)at + 1, s[at] ? "NUL character (\\u0000) in a "
			       "string (expected text without NUL: ids and texts would be cut short at it)"
			       : "NUL byte in line (expected JSON text)");
	case JSONTEXT_UTF8:
		return imp_bad(m, path, line, (long)at + 1, "invalid UTF-8 (byte 0x%02x) (expected "
			       "UTF-8 JSON text)", (unsigned char)s[at]);
	case JSONTEXT_NOMEM:
		return diag_set(m->d, DIAG_ENOMEM, "%s:%ld: out of memory parsing a line of %zu bytes",
				path, line, n);
	case JSONTEXT_SYNTAX: {
		if (at >= n || lines_blank(s + at, n - at))
			return imp_bad(m, path, line, (long)n + 1, "invalid JSON: unexpected end of "
				       "line (expected one JSON object per line)");
		char tok[24];
		size_t k = 0;
		for (size_t i = at; i < n && k < 16; i++)
			tok[k++] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
		tok[k] = '\0';
		return imp_bad(m, path, line, (long)at + 1, "invalid JSON at '%s' (expected one JSON "
			       "object per line)", tok);
	}
	}
	if (!cJSON_IsObject(r)) {
		cJSON_Delete(r);
		return imp_bad(m, path, line, 1, "line is not a JSON object (expected one JSON "
			       "object per line)");
	}
	*root = r;
	return 0;
}

int imp_json_lines(struct imp *m, const char *path, const char *what, imp_record_fn fn, void *ctx)
{
	struct lines l;
	int rc = lines_open(&l, path, m->d);
	if (rc)
		return rc;
	char *s;
	size_t n;
	while ((rc = lines_next(&l, &s, &n, m->d)) > 0) {
		if (rc == LINES_TOO_LONG) {
			m->st->records++;
			rc = imp_bad(m, path, l.line_no, 0, "line longer than %zu bytes (expected one "
				     "JSON %s per line)", IMP_MAX_LINE_BYTES, what);
			if (rc < 0)
				break;
			continue;
		}
		if (lines_blank(s, n))
			continue;
		m->st->records++;
		cJSON *root;
		rc = imp_json_line(m, path, l.line_no, s, n, &root);
		if (rc < 0)
			break;
		if (rc > 0)
			continue;
		rc = fn(m, ctx, root, path, l.line_no, s, n);
		cJSON_Delete(root);
		if (rc < 0)
			break;
	}
	lines_close(&l);
	return rc < 0 ? rc : 0;
}

int imp_keep_path(struct imp *m, struct vec *paths, const char *path, const char **kept)
{
	char *keep = strdup(path);
	char **slot = keep ? vec_push(paths) : NULL;
	if (!slot) {
		free(keep);
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	}
	*slot = keep;
	*kept = keep;
	return 0;
}

/* ---- Values ------------------------------------------------------------- */

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, int64_t mo, int64_t d)
{
	y -= mo <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static bool digits(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

bool imp_parse_time(const char *s, int64_t *ns)
{
	const char *p = s;
	int y, mo, d, h, mi, sec = 0;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d))
		return false;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return false;
	p++;
	if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi))
		return false;
	int64_t frac_ns = 0;
	if (*p == ':') {
		p++;
		if (!digits(&p, 2, &sec))
			return false;
		if (*p == '.' || *p == ',') {
			p++;
			int64_t scale = 100000000;
			if (*p < '0' || *p > '9')
				return false;
			while (*p >= '0' && *p <= '9') {
				frac_ns += (*p - '0') * scale;
				scale /= 10;
				p++;
			}
		}
	}
	static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 60)
		return false;
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo == 2 && d == 29 && !leap)
		return false; /* 2023-02-29 and 2024-02-30 are no dates */
	int off_min = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1, oh, om = 0;
		p++;
		if (!digits(&p, 2, &oh))
			return false;
		if (*p == ':')
			p++;
		if (*p && !digits(&p, 2, &om))
			return false;
		if (oh > 23 || om > 59)
			return false;
		off_min = sign * (oh * 60 + om);
	}
	if (*p)
		return false;
	if (y < 1970 || y > 2200)
		return false;
	int64_t days = days_from_civil(y, mo, d);
	int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec - (int64_t)off_min * 60;
	*ns = secs * 1000000000 + frac_ns;
	return true;
}

double imp_rel_s(struct imp *m, int64_t ns)
{
	if (!m->have_t0) {
		m->t0_ns = ns;
		m->have_t0 = true;
	}
	return (double)(ns - m->t0_ns) / 1e9;
}

bool imp_json_int(const struct cJSON *v, int64_t max, int64_t *out)
{
	if (!cJSON_IsNumber(v))
		return false;
	double x = v->valuedouble;
	if (!(x >= 0 && x <= (double)max) || x != floor(x))
		return false;
	*out = (int64_t)x;
	return true;
}

const struct cJSON *imp_json_path(const struct cJSON *root, ...)
{
	va_list ap;
	va_start(ap, root);
	const cJSON *v = root;
	const char *key;
	while (v && (key = va_arg(ap, const char *)))
		v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, key) : NULL;
	va_end(ap);
	return v && !cJSON_IsNull(v) ? v : NULL;
}

/* ---- Ids and contents --------------------------------------------------- */

static uint64_t id_of(struct imp *m, const char *a, const char *b)
{
	if (!a || !a[0])
		return 0;
	if (m->keep_text && !b)
		return trace_id_hash(a);
	vec_clear(&m->scratch);
	const char *salt = m->keep_text ? "" : m->salt;
	size_t ls = strlen(salt), la = strlen(a), lb = b ? strlen(b) : 0;
	if (vec_reserve(&m->scratch, ls + la + lb + 3) != 0) {
		/* Out of memory for the scratch string.  Any other id would
		 * differ from the one the same string gets elsewhere in this
		 * run, so the import fails instead (import_files checks). */
		m->oom = true;
		return 0;
	}
	char *p = m->scratch.data;
	size_t at = 0;
	if (ls) {
		memcpy(p, salt, ls);
		at = ls;
		p[at++] = ':';
	}
	memcpy(p + at, a, la);
	at += la;
	if (b) {
		p[at++] = '/';
		memcpy(p + at, b, lb);
		at += lb;
	}
	p[at] = '\0';
	return trace_id_hash(p);
}

uint64_t imp_id(struct imp *m, const char *id)
{
	return id_of(m, id, NULL);
}

uint64_t imp_id2(struct imp *m, const char *a, const char *b)
{
	return id_of(m, a, b ? b : "");
}

uint64_t imp_text_content(struct imp *m, const char *kind, const char *text, size_t len)
{
	uint64_t h = hash_str(kind, SEED_TEXT);
	if (!m->keep_text)
		h = hash_combine(h, hash_str(m->salt, SEED_TEXT));
	return hash_combine(h, hash_bytes(text, len, SEED_TEXT));
}

uint64_t imp_shared_content(const char *agent, const char *model)
{
	return hash_combine(hash_str(agent, SEED_SHARED), hash_str(model ? model : "", SEED_SHARED));
}

uint64_t imp_unique_content(uint64_t session, int64_t seq, int k)
{
	return hash_combine(hash_combine(hash_combine(SEED_UNIQUE, session), (uint64_t)seq),
			    (uint64_t)k);
}

/* ---- Session builder ---------------------------------------------------- */

void sb_init(struct sb *b, struct imp *m)
{
	memset(b, 0, sizeof(*b));
	b->m = m;
	vec_init(&b->calls, sizeof(struct trace_call), TRACE_READER_MAX_CALLS_PER_SESSION);
	vec_init(&b->seg_off, sizeof(size_t), VEC_NO_LIMIT);
	vec_init(&b->segs, sizeof(struct trace_seg), TRACE_READER_MAX_SEGS_PER_SESSION);
	vec_init(&b->texts, sizeof(char *), VEC_NO_LIMIT);
	vec_init(&b->hist, sizeof(struct trace_seg), VEC_NO_LIMIT);
}

static void free_texts(struct sb *b)
{
	for (size_t i = 0; i < b->texts.len; i++)
		free(VEC_AT(&b->texts, char *, i));
	vec_clear(&b->texts);
}

void sb_release(struct sb *b)
{
	free_texts(b);
	vec_release(&b->calls);
	vec_release(&b->seg_off);
	vec_release(&b->segs);
	vec_release(&b->texts);
	vec_release(&b->hist);
}

void sb_start(struct sb *b, const char *path, uint64_t id, double t_s, long line)
{
	free_texts(b);
	vec_clear(&b->calls);
	vec_clear(&b->seg_off);
	vec_clear(&b->segs);
	vec_clear(&b->hist);
	b->path = path;
	b->id = id;
	b->engineer = 0;
	b->parent = 0;
	b->t_s = t_s;
	b->line = line;
	b->open_loop = false;
	b->hist_tokens = 0;
	b->reused = 0;
}

size_t sb_calls(const struct sb *b)
{
	return b->calls.len;
}

struct trace_call *sb_call_at(struct sb *b, size_t i)
{
	return &VEC_AT(&b->calls, struct trace_call, i);
}

static int sb_limit(struct sb *b)
{
	return diag_at(b->m->d, DIAG_EINPUT, b->path, b->line, 0,
		       "session has more than %zu calls or %zu prompt segments (the limits of "
		       "docs/trace-format.md; expected a shorter session)",
		       (size_t)TRACE_READER_MAX_CALLS_PER_SESSION,
		       (size_t)TRACE_READER_MAX_SEGS_PER_SESSION);
}

static int push_seg(struct sb *b, uint64_t content, int64_t tokens, const char *text)
{
	struct trace_seg *s = vec_push(&b->segs);
	if (!s)
		return b->segs.len >= b->segs.max_len ? sb_limit(b)
						      : diag_set(b->m->d, DIAG_ENOMEM, "out of memory");
	s->content = content;
	s->tokens = tokens;
	if (b->m->keep_text) {
		char *copy = NULL;
		if (text && !(copy = strdup(text)))
			return diag_set(b->m->d, DIAG_ENOMEM, "out of memory");
		char **slot = vec_push(&b->texts);
		if (!slot) {
			free(copy);
			return diag_set(b->m->d, DIAG_ENOMEM, "out of memory");
		}
		*slot = copy;
	}
	return 0;
}

/* Open a new call whose segments start at the current end of b->segs. */
static struct trace_call *open_call(struct sb *b, const struct sb_call *c)
{
	bool first = b->calls.len == 0;
	int64_t prev_seq = first ? -1 : sb_call_at(b, b->calls.len - 1)->seq;
	if (!first && c->gap_s > TRACE_MAX_SECONDS) {
		diag_at(b->m->d, DIAG_EINPUT, b->path, b->line, 0, "session has a gap of %.17g s "
			"between two calls (expected at most 1e9 s)", c->gap_s);
		return NULL;
	}
	size_t *off = vec_push(&b->seg_off);
	struct trace_call *call = off ? vec_push(&b->calls) : NULL;
	if (!call) {
		if (off)
			b->seg_off.len--;
		if (b->calls.len >= b->calls.max_len)
			sb_limit(b);
		else
			diag_set(b->m->d, DIAG_ENOMEM, "out of memory");
		return NULL;
	}
	*off = b->segs.len;
	call->seq = prev_seq + 1;
	call->task = c->task;
	call->gap_s = first ? 0 : (c->gap_s > 0 ? c->gap_s : 0);
	call->output_tokens = c->output_tokens > 0 ? c->output_tokens : 1;
	if (call->output_tokens > TRACE_MAX_TOKENS)
		call->output_tokens = TRACE_MAX_TOKENS;
	call->tool = c->tool;
	call->retry_of = -1;
	call->accepted = TRACE_ACCEPT_UNKNOWN;
	return call;
}

/* After call `call` got its segments: update hist (its whole prompt, then
 * its output) and its prompt_tokens. */
static int close_call(struct sb *b, struct trace_call *call, size_t first_seg)
{
	const struct trace_seg *own = (const struct trace_seg *)b->segs.data + first_seg;
	size_t n_own = b->segs.len - first_seg;
	call->n_segs = n_own;
	if (n_own > TRACE_READER_MAX_SEGS_PER_CALL)
		return diag_at(b->m->d, DIAG_EINPUT, b->path, b->line, 0, "call %lld has %zu prompt "
			       "segments (expected at most %zu per call)", (long long)call->seq, n_own,
			       (size_t)TRACE_READER_MAX_SEGS_PER_CALL);
	int64_t own_tokens = 0;
	for (size_t k = 0; k < n_own; k++)
		own_tokens += own[k].tokens;
	if (call->extends_prev) {
		/* hist already is the previous prompt + output. */
		call->prompt_tokens = b->hist_tokens + own_tokens;
	} else {
		vec_clear(&b->hist);
		b->hist_tokens = 0;
		call->prompt_tokens = own_tokens;
	}
	if (call->prompt_tokens > TRACE_MAX_PROMPT_TOKENS || call->prompt_tokens < 1)
		return diag_at(b->m->d, DIAG_EINPUT, b->path, b->line, 0,
			       "prompt of %lld tokens (expected 1..2^40)",
			       (long long)call->prompt_tokens);
	if (vec_append(&b->hist, own, n_own) != 0)
		return diag_set(b->m->d, DIAG_ENOMEM, "out of memory");
	struct trace_seg *o = vec_push(&b->hist);
	if (!o)
		return diag_set(b->m->d, DIAG_ENOMEM, "out of memory");
	o->content = trace_output_content(b->id, call->seq);
	o->tokens = call->output_tokens;
	b->hist_tokens = call->prompt_tokens + call->output_tokens;
	return 0;
}

/* Split `tokens` new tokens into segments of at most TRACE_MAX_TOKENS. */
static int push_new(struct sb *b, int64_t seq, int64_t tokens)
{
	int k = 0;
	while (tokens > 0) {
		int64_t n = tokens > TRACE_MAX_TOKENS ? TRACE_MAX_TOKENS : tokens;
		int rc = push_seg(b, imp_unique_content(b->id, seq, k++), n, NULL);
		if (rc)
			return rc;
		tokens -= n;
	}
	return 0;
}

int sb_add_usage(struct sb *b, const struct sb_call *c)
{
	int64_t P = c->prompt_tokens;
	int64_t R = c->reused_tokens < 0 ? 0 : c->reused_tokens > P ? P : c->reused_tokens;
	struct trace_call *call = open_call(b, c);
	if (!call)
		return b->m->d->code ? b->m->d->code : DIAG_ENOMEM;
	size_t first = b->segs.len;
	int rc = 0;
	bool first_call = b->calls.len == 1;
	if (first_call) {
		if (R > 0 && c->shared_prefix)
			rc = push_seg(b, c->shared_prefix, R, NULL);
		else if (R > 0)
			rc = push_new(b, call->seq, R); /* reused from outside: unknown content */
		if (rc == 0)
			rc = push_new(b, call->seq, P - R);
	} else if (R >= b->hist_tokens) {
		call->extends_prev = true;
		rc = push_new(b, call->seq, P - b->hist_tokens);
	} else {
		/* Cut hist at R: copy segments while they fit, the last one
		 * shortened but with its content kept. */
		int64_t left = R;
		size_t hn = b->hist.len;
		for (size_t k = 0; k < hn && left > 0 && rc == 0; k++) {
			const struct trace_seg *h = &VEC_AT(&b->hist, struct trace_seg, k);
			int64_t t = h->tokens < left ? h->tokens : left;
			rc = push_seg(b, h->content, t, NULL);
			left -= t;
		}
		if (rc == 0)
			rc = push_new(b, call->seq, P - R);
	}
	/* Re-fetch: pushing segments never moves calls, but be explicit. */
	call = sb_call_at(b, b->calls.len - 1);
	if (rc == 0)
		rc = close_call(b, call, first);
	b->reused += R;
	return rc;
}

int sb_add_segs(struct sb *b, const struct sb_call *c, const struct trace_seg *segs,
		char *const *texts, size_t n, bool extends)
{
	struct trace_call *call = open_call(b, c);
	if (!call)
		return b->m->d->code ? b->m->d->code : DIAG_ENOMEM;
	call->extends_prev = extends && b->calls.len > 1;
	size_t first = b->segs.len;
	int rc = 0;
	for (size_t k = 0; k < n && rc == 0; k++)
		rc = push_seg(b, segs[k].content, segs[k].tokens, texts ? texts[k] : NULL);
	call = sb_call_at(b, b->calls.len - 1);
	if (rc == 0)
		rc = close_call(b, call, first);
	b->reused += c->reused_tokens;
	return rc;
}

#define SEED_PATH 0x656e672d70617468ULL /* "eng-path" */

uint64_t imp_engineer_of(struct imp *m, const char *path)
{
	if (!path || m->engineer_of.len == 0)
		return 0;
	const uint64_t *e = map_get(&m->engineer_of, hash_str(path, SEED_PATH));
	return e ? *e : 0;
}

int imp_name_engineer(struct imp *m, const char *path, const char *name, size_t name_len)
{
	char buf[256];
	if (name_len == 0 || name_len >= sizeof(buf))
		return diag_set(m->d, DIAG_EINPUT, "%s: engineer name of %zu bytes (expected 1 to %zu)",
				path, name_len, sizeof(buf) - 1);
	memcpy(buf, name, name_len);
	buf[name_len] = '\0';
	uint64_t id = imp_id(m, buf);
	if (map_put(&m->engineer_of, hash_str(path, SEED_PATH), id) != 0)
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	if (!map_get(&m->engineers, id)) {
		if (map_put(&m->engineers, id, 1) != 0)
			return diag_set(m->d, DIAG_ENOMEM, "out of memory");
		m->st->engineers++;
	}
	return 0;
}

int sb_emit(struct sb *b)
{
	if (b->calls.len == 0)
		return 0;
	struct trace_call *calls = b->calls.data;
	struct trace_seg *segs = b->segs.data;
	char **texts = b->m->keep_text ? b->texts.data : NULL;
	bool any_text = false;
	for (size_t i = 0; texts && i < b->texts.len; i++)
		any_text |= texts[i] != NULL;
	for (size_t i = 0; i < b->calls.len; i++) {
		size_t off = VEC_AT(&b->seg_off, size_t, i);
		calls[i].segs = calls[i].n_segs ? segs + off : NULL;
		calls[i].seg_text = any_text && calls[i].n_segs ? texts + off : NULL;
	}
	uint64_t engineer = b->engineer ? b->engineer : imp_engineer_of(b->m, b->path);
	struct trace_session view = {
		.id = b->id, .engineer = engineer, .parent = b->parent, .t_s = b->t_s,
		.calls = calls, .n_calls = b->calls.len, .line = b->line,
		.open_loop = b->open_loop,
	};
	b->m->st->reused_tokens += b->reused;
	int rc = imp_emit(b->m, b->path, &view);
	sb_start(b, b->path, 0, 0, 0);
	return rc;
}

/* ---- Sink --------------------------------------------------------------- */

int imp_write(struct imp *m, struct trace_session *s)
{
	struct import_stats *st = m->st;
	if (m->o->rules) {
		struct rules_stats rs = {0};
		int rc = rules_apply(m->o->rules, s, &rs, m->d);
		if (rc)
			return rc;
		st->rules_pinned += rs.segments_pinned;
		st->rules_volatile += rs.segments_volatile;
	}
	st->sessions++;
	uint64_t task = 0;
	for (size_t i = 0; i < s->n_calls; i++) {
		const struct trace_call *c = &s->calls[i];
		st->calls++;
		st->prompt_tokens += c->prompt_tokens;
		st->output_tokens += c->output_tokens;
		st->tool_fails += c->tool == TRACE_TOOL_FAIL;
		st->gap_s += c->gap_s;
		if (c->task && (i == 0 || c->task != task))
			st->tasks++;
		task = c->task;
	}
	return trace_writer_session(m->w, s, m->d);
}

int imp_emit(struct imp *m, const char *path, const struct trace_session *s)
{
	struct trace_session *copy = NULL;
	if (trace_session_clone(&copy, s) != 0)
		return diag_set(m->d, DIAG_ENOMEM, "out of memory keeping a session");
	m->emitted++;
	if (m->stream) {
		if (m->rebase) {
			if (!m->have_base) {
				m->base_t = copy->t_s;
				m->have_base = true;
			}
			copy->t_s -= m->base_t;
		}
		int rc = copy->t_s < 0 || copy->t_s > TRACE_MAX_SECONDS
			? diag_at(m->d, DIAG_EINPUT, path, copy->line, 0, "record starts %.17g s after "
				  "the first one (expected time-ordered input spanning at most 1e9 s)",
				  copy->t_s)
			: imp_write(m, copy);
		trace_session_free(copy);
		return rc;
	}
	/* consecutive sessions mostly come from one file: keep one copy of it */
	const char *kept = m->paths.len ? VEC_AT(&m->paths, char *, m->paths.len - 1) : NULL;
	if (!kept || strcmp(kept, path) != 0) {
		if (imp_keep_path(m, &m->paths, path, &kept) != 0) {
			trace_session_free(copy);
			return DIAG_ENOMEM;
		}
	}
	struct trace_session **slot = vec_push(&m->pend);
	const char **pslot = slot ? vec_push(&m->pend_path) : NULL;
	if (!pslot) {
		if (slot)
			m->pend.len--;
		trace_session_free(copy);
		return diag_set(m->d, DIAG_ENOMEM, "out of memory keeping a session");
	}
	*slot = copy;
	*pslot = kept;
	return 0;
}
