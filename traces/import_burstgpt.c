/* SPDX-License-Identifier: Apache-2.0
 * import_burstgpt: BurstGPT traces (HPMLL/BurstGPT: Timestamp,Model,
 * Request tokens,Response tokens,Total tokens,Log Type) to canonical calls.
 *
 * Timestamp is seconds from the start of the trace.  A row whose Response
 * tokens are 0 is a failed request: it still arrives and is prefilled, so it
 * is kept (output written as 1 token) and counted in failed_requests.  A file
 * without a session column is a stream of open-loop requests in time order
 * (checked).  A file with one ("Session ID", "SessionID", "Conversation ID")
 * is buffered: rows of a session become one closed-loop session in time
 * order; a later request whose Request tokens reach the previous request +
 * response extends it (the conversation history is resent), otherwise its
 * prompt is new; the gap is the time since the previous request plus its
 * "Elapsed time" when that column exists (else since the previous request).
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/import_burstgpt.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/map.h"
#include "traces/import_csv.h"
#include "traces/import_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct brow {
	size_t sess;
	double t, elapsed;
	int64_t in, out;
	long line;
	size_t order;
	const char *path;
};

struct burst_ctx {
	int64_t file_no;
	struct map sess_of;   /* session id hash -> index + 1 */
	struct vec ids;       /* uint64_t session id per index */
	struct vec rows;      /* struct brow (files with sessions) */
	struct vec paths;     /* char * */
};

static const char *const COL_T[] = {"Timestamp", NULL};
static const char *const COL_IN[] = {"Request tokens", NULL};
static const char *const COL_OUT[] = {"Response tokens", NULL};
static const char *const COL_SESS[] = {"Session ID", "Conversation ID", NULL};
static const char *const COL_ELAPSED[] = {"Elapsed time", NULL};

static int bg_begin(struct imp *m, void *vctx)
{
	(void)m;
	struct burst_ctx *c = vctx;
	map_init(&c->sess_of);
	vec_init(&c->ids, sizeof(uint64_t), VEC_NO_LIMIT);
	vec_init(&c->rows, sizeof(struct brow), VEC_NO_LIMIT);
	vec_init(&c->paths, sizeof(char *), VEC_NO_LIMIT);
	return 0;
}

static void bg_release(void *vctx)
{
	struct burst_ctx *c = vctx;
	map_release(&c->sess_of);
	vec_release(&c->ids);
	vec_release(&c->rows);
	for (size_t i = 0; i < c->paths.len; i++)
		free(VEC_AT(&c->paths, char *, i));
	vec_release(&c->paths);
}

static int bg_file(struct imp *m, void *vctx, const char *path)
{
	struct burst_ctx *c = vctx;
	int64_t file_no = c->file_no++;
	char *keep = strdup(path);
	char **pslot = keep ? vec_push(&c->paths) : NULL;
	if (!pslot) {
		free(keep);
		return diag_set(m->d, DIAG_ENOMEM, "out of memory");
	}
	*pslot = keep;
	struct csvr r;
	int rc = csvr_open(&r, path, m->d);
	if (rc)
		return rc;
	long ct = -1, ci = -1, co = -1, cs = -1, ce = -1;
	rc = csvr_next(&r, m->d);
	if (rc == LINES_OK) {
		ct = csvr_find(&r, COL_T);
		ci = csvr_find(&r, COL_IN);
		co = csvr_find(&r, COL_OUT);
		cs = csvr_find(&r, COL_SESS);
		ce = csvr_find(&r, COL_ELAPSED);
	}
	if (rc >= 0 && (rc != LINES_OK || ct < 0 || ci < 0 || co < 0)) {
		rc = diag_at(m->d, DIAG_EINPUT, path, r.l.line_no ? r.l.line_no : 1, 0,
			     "not a BurstGPT header (expected Timestamp,Model,Request tokens,"
			     "Response tokens,Total tokens,Log Type)");
		csvr_close(&r);
		return rc;
	}
	if (rc < 0) {
		csvr_close(&r);
		return rc;
	}
	if (cs >= 0)
		m->stream = false; /* sessions: buffer, nothing was written yet */
	long maxc = ct;
	const long cols[] = {ci, co, cs, ce};
	for (size_t i = 0; i < 4; i++)
		maxc = cols[i] > maxc ? cols[i] : maxc;
	struct sb b;
	sb_init(&b, m);
	bool have_prev = false;
	double prev_t = 0;
	while ((rc = csvr_next(&r, m->d)) > 0) {
		long line = r.l.line_no;
		m->st->records++;
		double t, elapsed = 0;
		int64_t in, out;
		if (rc == LINES_TOO_LONG) {
			rc = imp_bad(m, keep, line, 0, "line too long (expected a BurstGPT row)");
		} else if (rc == CSVR_BAD) {
			rc = imp_bad(m, keep, line, 0, "malformed CSV quoting (expected a BurstGPT row)");
		} else if (csvr_nfields(&r) <= (size_t)maxc) {
			rc = imp_bad(m, keep, line, 0, "%zu fields (expected %ld as in the header)",
				     csvr_nfields(&r), maxc + 1);
		} else if (!csv_seconds(csvr_field(&r, (size_t)ct), &t) || t > TRACE_MAX_SECONDS) {
			rc = imp_bad(m, keep, line, csvr_col(&r, (size_t)ct), "bad Timestamp '%.40s' "
				     "(expected seconds 0..1e9 from the start of the trace)",
				     csvr_field(&r, (size_t)ct));
		} else if (!csv_int(csvr_field(&r, (size_t)ci), TRACE_MAX_TOKENS, &in)) {
			rc = imp_bad(m, keep, line, csvr_col(&r, (size_t)ci), "bad Request tokens '%.40s' "
				     "(expected an integer 0..1000000000)", csvr_field(&r, (size_t)ci));
		} else if (!csv_int(csvr_field(&r, (size_t)co), TRACE_MAX_TOKENS, &out)) {
			rc = imp_bad(m, keep, line, csvr_col(&r, (size_t)co), "bad Response tokens "
				     "'%.40s' (expected an integer 0..1000000000)", csvr_field(&r, (size_t)co));
		} else if (ce >= 0 && csvr_field(&r, (size_t)ce)[0] &&
			   !csv_seconds(csvr_field(&r, (size_t)ce), &elapsed)) {
			rc = imp_bad(m, keep, line, csvr_col(&r, (size_t)ce), "bad Elapsed time '%.40s' "
				     "(expected seconds >= 0)", csvr_field(&r, (size_t)ce));
		} else if (cs < 0 && have_prev && t < prev_t) {
			rc = imp_bad(m, keep, line, csvr_col(&r, (size_t)ct), "Timestamp %.17g is before "
				     "the previous row's %.17g (expected rows in time order)", t, prev_t);
		} else {
			rc = 0;
			have_prev = true;
			prev_t = t;
			m->st->failed_requests += out == 0;
			if (in < 1)
				in = 1; /* a prompt is at least one token */
			const char *sid = cs >= 0 ? csvr_field(&r, (size_t)cs) : "";
			if (sid[0]) {
				uint64_t id = imp_id(m, sid);
				uint64_t *at = map_get(&c->sess_of, id);
				struct brow *row = vec_push(&c->rows);
				uint64_t *idslot = at ? NULL : vec_push(&c->ids);
				if (!row || (!at && (!idslot || map_put(&c->sess_of, id, c->ids.len) != 0))) {
					rc = diag_set(m->d, DIAG_ENOMEM, "out of memory");
				} else {
					if (idslot)
						*idslot = id;
					*row = (struct brow){.sess = at ? *at - 1 : c->ids.len - 1, .t = t,
							     .elapsed = elapsed, .in = in, .out = out,
							     .line = line, .order = c->rows.len - 1,
							     .path = keep};
				}
			} else {
				uint64_t id = trace_anon_session_id(line);
				if (file_no > 0)
					id = hash_combine(id, (uint64_t)file_no);
				sb_start(&b, keep, id, t, line);
				b.open_loop = true;
				struct sb_call k = {.prompt_tokens = in, .output_tokens = out};
				rc = sb_add_usage(&b, &k);
				if (rc == 0)
					rc = sb_emit(&b);
			}
		}
		if (rc < 0)
			break;
	}
	sb_release(&b);
	csvr_close(&r);
	return rc < 0 ? rc : 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct brow *x = a, *y = b;
	if (x->sess != y->sess)
		return x->sess < y->sess ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int bg_end(struct imp *m, void *vctx)
{
	struct burst_ctx *c = vctx;
	struct brow *rows = c->rows.data;
	size_t n = c->rows.len;
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_row);
	struct sb b;
	sb_init(&b, m);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0;) {
		sb_start(&b, rows[i].path, VEC_AT(&c->ids, uint64_t, rows[i].sess), rows[i].t,
			 rows[i].line);
		size_t j = i;
		for (; j < n && rows[j].sess == rows[i].sess && rc == 0; j++) {
			const struct brow *p = j > i ? &rows[j - 1] : NULL;
			/* Resent history: reuse it all, else nothing. */
			int64_t reuse = p && rows[j].in >= b.hist_tokens ? b.hist_tokens : 0;
			struct sb_call k = {
				.prompt_tokens = rows[j].in,
				.reused_tokens = reuse,
				.output_tokens = rows[j].out,
				.gap_s = p ? rows[j].t - (p->t + p->elapsed) : 0,
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

const struct imp_format imp_fmt_burstgpt = {
	.name = "burstgpt",
	.summary = "BurstGPT CSV, with or without Session ID and Elapsed time",
	.flags = IMP_REQUEST_LEVEL,
	.suffix = ".csv",
	.ctx_size = sizeof(struct burst_ctx),
	.begin = bg_begin,
	.file = bg_file,
	.end = bg_end,
	.release = bg_release,
};
