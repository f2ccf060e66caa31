/* SPDX-License-Identifier: Apache-2.0
 * writer: canonical agentcap-trace v1 output (see writer.h and
 * docs/trace-format.md).
 *
 * Each session is formatted into one reusable buffer and handed to the output
 * in one write, plain through the outfile's FILE or compressed through a zlib
 * stream opened on a duplicate of its descriptor (so closing the gzip stream
 * leaves the outfile free to commit or abort).  The header goes out with the
 * first session or at close, so a block size hint can still be set after
 * open.  Times are written with the fewest digits that read back to the same
 * double.
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/writer.h"

#include "base/diag.h"
#include "base/map.h"
#include "base/outfile.h"
#include "base/outkind.h"
#include "base/vec.h"
#include "traces/trace.h"

#include <zlib.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct trace_writer {
	struct outfile of;
	gzFile gz;               /* NULL when writing plain text */
	char *path;              /* for messages */
	char *source;            /* NULL if none */
	int64_t block_tokens_hint;
	bool header_done;
	bool have_start;
	double last_start_s;
	struct map ids;          /* ids of the sessions written */
	struct vec buf;          /* char: text not yet written */
	int failed;              /* sticky I/O or memory failure */
	char fail_msg[DIAG_MSG_MAX];
};

__attribute__((format(printf, 2, 3)))
static int put(struct trace_writer *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || vec_reserve(&w->buf, w->buf.len + (size_t)n + 1) != 0)
		return DIAG_ENOMEM;
	va_start(ap, fmt);
	vsnprintf((char *)w->buf.data + w->buf.len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	w->buf.len += (size_t)n;
	return 0;
}

/* A JSON string literal; bytes >= 0x80 pass through (UTF-8 in, UTF-8 out). */
static int put_str(struct trace_writer *w, const char *s)
{
	int rc = put(w, "\"");
	for (; *s && rc == 0; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			rc = put(w, "\\%c", ch);
		else if (ch < 0x20)
			rc = put(w, "\\u%04x", ch);
		else
			rc = put(w, "%c", ch);
	}
	return rc ? rc : put(w, "\"");
}

static int put_seconds(struct trace_writer *w, const char *key, double x)
{
	char num[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(num, sizeof(num), "%.*g", prec, x);
		if (strtod(num, NULL) == x)
			break;
	}
	return put(w, ",\"%s\":%s", key, num);
}

static int put_hex(struct trace_writer *w, const char *key, uint64_t v)
{
	return put(w, ",\"%s\":\"#%016" PRIx64 "\"", key, v);
}

static int fail(struct trace_writer *w, struct diag *d, int code, const char *what)
{
	if (!w->failed) {
		w->failed = code;
		if (code == DIAG_ENOMEM)
			snprintf(w->fail_msg, sizeof(w->fail_msg), "%s: out of memory %s", w->path, what);
		else
			snprintf(w->fail_msg, sizeof(w->fail_msg), "%s: %s failed: %s", w->path, what,
				 errno ? strerror(errno) : "error inside the gzip stream");
	}
	return diag_set(d, w->failed, "%s", w->fail_msg);
}

static int flush_buf(struct trace_writer *w, struct diag *d)
{
	const char *p = w->buf.data;
	size_t left = w->buf.len;
	errno = 0;
	while (left > 0) {
		size_t n = left > (1u << 30) ? (1u << 30) : left;
		bool ok = w->gz ? gzwrite(w->gz, p, (unsigned)n) == (int)n
				: fwrite(p, 1, n, w->of.fp) == n;
		if (!ok)
			return fail(w, d, DIAG_EIO, "write");
		p += n;
		left -= n;
	}
	vec_clear(&w->buf);
	return 0;
}

static int put_header(struct trace_writer *w)
{
	int rc = put(w, "{\"format\":\"agentcap-trace\",\"version\":1");
	if (rc == 0 && w->block_tokens_hint > 0)
		rc = put(w, ",\"block_tokens_hint\":%" PRId64, w->block_tokens_hint);
	if (rc == 0 && w->source) {
		rc = put(w, ",\"source\":");
		if (rc == 0)
			rc = put_str(w, w->source);
	}
	if (rc == 0)
		rc = put(w, "}\n");
	w->header_done = rc == 0;
	return rc;
}

static int put_call(struct trace_writer *w, const struct trace_session *s, size_t i)
{
	const struct trace_call *c = &s->calls[i];
	int rc = put(w, "{\"session\":\"#%016" PRIx64 "\",\"seq\":%" PRId64, s->id, c->seq);
	if (rc == 0)
		rc = i == 0 ? put_seconds(w, "t", s->t_s) : put_seconds(w, "gap", c->gap_s);
	if (rc == 0 && i == 0 && s->engineer)
		rc = put_hex(w, "engineer", s->engineer);
	if (rc == 0 && i == 0 && s->parent)
		rc = put_hex(w, "parent_session", s->parent);
	if (rc == 0 && i == 0 && s->team)
		rc = put_hex(w, "team", s->team);
	if (rc == 0 && c->task)
		rc = put_hex(w, "task", c->task);
	if (rc == 0 && s->open_loop)
		rc = put(w, ",\"open_loop\":true");
	if (rc == 0 && c->extends_prev)
		rc = put(w, ",\"extends\":true");
	if (rc == 0)
		rc = put(w, ",\"prompt\":[");
	for (size_t k = 0; k < c->n_segs && rc == 0; k++) {
		rc = put(w, "%s[\"#%016" PRIx64 "\",%" PRId64, k ? "," : "",
			 c->segs[k].content, c->segs[k].tokens);
		if (rc == 0 && c->seg_text && c->seg_text[k]) {
			rc = put(w, ",{\"text\":");
			if (rc == 0)
				rc = put_str(w, c->seg_text[k]);
			if (rc == 0)
				rc = put(w, "}");
		}
		if (rc == 0)
			rc = put(w, "]");
	}
	if (rc == 0)
		rc = put(w, "],\"output_tokens\":%" PRId64, c->output_tokens);
	if (rc == 0 && c->tool != TRACE_TOOL_NONE)
		rc = put(w, ",\"tool\":\"%s\"", c->tool == TRACE_TOOL_OK ? "ok" : "fail");
	if (rc == 0 && c->retry_of >= 0)
		rc = put(w, ",\"retry_of\":%" PRId64, c->retry_of);
	if (rc == 0 && c->kind > OUT_KIND_UNKNOWN && c->kind < OUT_KINDS)
		rc = put(w, ",\"kind\":\"%s\"", out_kind_name(c->kind));
	if (rc == 0 && c->prio == TRACE_PRIO_VALUE)
		rc = put(w, ",\"priority\":%d", (int)c->prio_value);
	else if (rc == 0 && c->prio != TRACE_PRIO_NONE)
		rc = put(w, ",\"priority\":\"%s\"", c->prio == TRACE_PRIO_MAIN ? "main"
				: c->prio == TRACE_PRIO_SUBAGENT ? "subagent" : "batch");
	if (rc == 0 && c->accepted != TRACE_ACCEPT_UNKNOWN)
		rc = put(w, ",\"accepted\":%s", c->accepted == TRACE_ACCEPT_TRUE ? "true" : "false");
	if (rc == 0)
		rc = put(w, "}\n");
	return rc;
}

int trace_writer_open(struct trace_writer **out, const char *path, bool gzip,
		      const char *source, struct diag *d)
{
	*out = NULL;
	struct trace_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", path);
	map_init(&w->ids);
	vec_init(&w->buf, 1, VEC_NO_LIMIT);
	w->path = strdup(strcmp(path, "-") == 0 ? "standard output" : path);
	w->source = source ? strdup(source) : NULL;
	if (!w->path || (source && !w->source)) {
		free(w->path);
		free(w->source);
		free(w);
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", path);
	}
	int rc = outfile_open(&w->of, path, d);
	if (rc) {
		map_release(&w->ids);
		free(w->path);
		free(w->source);
		free(w);
		return rc;
	}
	if (gzip) {
		int fd = dup(fileno(w->of.fp));
		w->gz = fd >= 0 ? gzdopen(fd, "wb6") : NULL;
		if (!w->gz) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			trace_writer_abort(w);
			return diag_set(d, DIAG_EIO, "%s: cannot start gzip stream: %s", path,
					e ? strerror(e) : "out of memory");
		}
	}
	*out = w;
	return 0;
}

void trace_writer_set_block_tokens_hint(struct trace_writer *w, int64_t tokens)
{
	if (!w->header_done)
		w->block_tokens_hint = tokens;
}

int trace_writer_session(struct trace_writer *w, const struct trace_session *s, struct diag *d)
{
	if (w->failed)
		return diag_set(d, w->failed, "%s", w->fail_msg);
	if (!trace_session_check(s))
		return diag_set(d, DIAG_EINPUT, "%s: session #%016" PRIx64 " (from line %ld) breaks the "
				"trace rules (expected seq increasing, tokens in range, prompt_tokens "
				"matching its segments and extends chain)", w->path, s->id, s->line);
	if (w->have_start && s->t_s < w->last_start_s)
		return diag_set(d, DIAG_EINPUT, "%s: session #%016" PRIx64 " starts at t=%g before the "
				"previous session's t=%g: write sessions in start-time order",
				w->path, s->id, s->t_s, w->last_start_s);
	/* Sessions of several calls are remembered to refuse a second writing
	 * (it would split them); open-loop requests are not, so that streaming
	 * millions of them (a Mooncake or Azure import) keeps memory flat.
	 * Their ids come from line and file numbers, unique by construction. */
	if (!s->open_loop && map_get(&w->ids, s->id))
		return diag_set(d, DIAG_EINPUT, "%s: session #%016" PRIx64 " written twice "
				"(expected each session once, all its calls together)", w->path, s->id);
	if (!s->open_loop && map_put(&w->ids, s->id, 1) != 0)
		return fail(w, d, DIAG_ENOMEM, "writing a session");
	w->have_start = true;
	w->last_start_s = s->t_s;
	int rc = w->header_done ? 0 : put_header(w);
	for (size_t i = 0; i < s->n_calls && rc == 0; i++)
		rc = put_call(w, s, i);
	if (rc)
		return fail(w, d, DIAG_ENOMEM, "formatting a session");
	return flush_buf(w, d);
}

static void writer_free(struct trace_writer *w)
{
	map_release(&w->ids);
	vec_release(&w->buf);
	free(w->path);
	free(w->source);
	free(w);
}

int trace_writer_close(struct trace_writer *w, struct diag *d)
{
	int rc = 0;
	if (w->failed) {
		rc = diag_set(d, w->failed, "%s", w->fail_msg);
		trace_writer_abort(w);
		return rc;
	}
	if (!w->header_done && put_header(w) != 0)
		rc = fail(w, d, DIAG_ENOMEM, "writing the header");
	if (rc == 0)
		rc = flush_buf(w, d);
	if (rc == 0 && w->gz) {
		errno = 0;
		int zrc = gzclose(w->gz);
		w->gz = NULL;
		if (zrc != Z_OK)
			rc = fail(w, d, DIAG_EIO, "finishing the gzip stream");
	}
	if (rc) {
		trace_writer_abort(w);
		return rc;
	}
	rc = outfile_commit(&w->of, d);
	writer_free(w);
	return rc;
}

void trace_writer_abort(struct trace_writer *w)
{
	if (!w)
		return;
	if (w->gz)
		gzclose(w->gz);
	w->gz = NULL;
	outfile_abort(&w->of);
	writer_free(w);
}

int trace_writer_drain(const char *path, bool gzip, const char *source, trace_source_fn next,
		       void *ctx, struct diag *d)
{
	struct trace_writer *w = NULL;
	int rc = trace_writer_open(&w, path, gzip, source, d);
	while (rc == 0) {
		struct trace_session *s = NULL;
		int got = next(ctx, &s, d);
		if (got <= 0) {
			rc = got;
			break;
		}
		rc = trace_writer_session(w, s, d);
		trace_session_free(s);
	}
	if (rc == 0)
		return trace_writer_close(w, d);
	trace_writer_abort(w);
	return rc;
}
