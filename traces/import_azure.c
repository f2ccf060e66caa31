/* SPDX-License-Identifier: Apache-2.0
 * import_azure: Azure LLM inference traces (Azure/AzurePublicDataset,
 * TIMESTAMP,ContextTokens,GeneratedTokens) to open-loop requests.
 *
 * Both timestamp styles are read: 2023's "2023-11-16 18:17:03.9799600"
 * (seven fractional digits, no zone: UTC) and 2024's
 * "2024-05-10 00:00:00.009930+00:00".  Each row is one request replayed open
 * loop at its time (the first row's time becomes t = 0); its prompt is one
 * segment unique to the row, since the trace says nothing of shared
 * prefixes.  Rows must come in time order, as the published files do; a row
 * earlier than the one before it is an error naming both times.
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/import_azure.h"

#include "base/diag.h"
#include "base/hash.h"
#include "traces/import_csv.h"
#include "traces/import_util.h"

#include <stdio.h>
#include <string.h>

struct azure_ctx {
	int64_t file_no;
};

static const char *const COL_T[] = {"TIMESTAMP", NULL};
static const char *const COL_IN[] = {"ContextTokens", NULL};
static const char *const COL_OUT[] = {"GeneratedTokens", NULL};

static int az_file(struct imp *m, void *vctx, const char *path)
{
	struct azure_ctx *c = vctx;
	int64_t file_no = c->file_no++;
	struct csvr r;
	int rc = csvr_open(&r, path, m->d);
	if (rc)
		return rc;
	long ct = -1, ci = -1, co = -1;
	rc = csvr_next(&r, m->d);
	if (rc == LINES_OK) {
		ct = csvr_find(&r, COL_T);
		ci = csvr_find(&r, COL_IN);
		co = csvr_find(&r, COL_OUT);
	}
	if (rc >= 0 && (rc != LINES_OK || ct < 0 || ci < 0 || co < 0)) {
		rc = diag_at(m->d, DIAG_EINPUT, path, r.l.line_no ? r.l.line_no : 1, 0,
			     "not an Azure LLM inference trace header (expected "
			     "TIMESTAMP,ContextTokens,GeneratedTokens)");
		csvr_close(&r);
		return rc;
	}
	if (rc < 0) {
		csvr_close(&r);
		return rc;
	}
	size_t need = (size_t)(ct > ci ? (ct > co ? ct : co) : (ci > co ? ci : co)) + 1;
	struct sb b;
	sb_init(&b, m);
	bool have_prev = false;
	int64_t prev_t = 0;
	char prev_ts[64] = "";
	while ((rc = csvr_next(&r, m->d)) > 0) {
		long line = r.l.line_no;
		m->st->records++;
		if (rc == LINES_TOO_LONG) {
			rc = imp_bad(m, path, line, 0, "line too long (expected TIMESTAMP,ContextTokens,"
				     "GeneratedTokens)");
		} else if (rc == CSVR_BAD) {
			rc = imp_bad(m, path, line, 0, "malformed CSV quoting (expected TIMESTAMP,"
				     "ContextTokens,GeneratedTokens)");
		} else if (csvr_nfields(&r) < need) {
			rc = imp_bad(m, path, line, 0, "%zu fields (expected at least %zu: TIMESTAMP,"
				     "ContextTokens,GeneratedTokens)", csvr_nfields(&r), need);
		} else {
			const char *ts = csvr_field(&r, (size_t)ct);
			int64_t t, in, out;
			if (!imp_parse_time(ts, &t))
				rc = imp_bad(m, path, line, csvr_col(&r, (size_t)ct), "bad TIMESTAMP '%.40s' "
					     "(expected 2023-11-16 18:17:03.9799600 or "
					     "2024-05-10 00:00:00.009930+00:00)", ts);
			else if (!csv_int(csvr_field(&r, (size_t)ci), TRACE_MAX_TOKENS, &in) || in < 1)
				rc = imp_bad(m, path, line, csvr_col(&r, (size_t)ci), "bad ContextTokens '%.40s' "
					     "(expected an integer 1..1000000000)", csvr_field(&r, (size_t)ci));
			else if (!csv_int(csvr_field(&r, (size_t)co), TRACE_MAX_TOKENS, &out))
				rc = imp_bad(m, path, line, csvr_col(&r, (size_t)co), "bad GeneratedTokens "
					     "'%.40s' (expected an integer 0..1000000000)",
					     csvr_field(&r, (size_t)co));
			else if (have_prev && t < prev_t)
				rc = imp_bad(m, path, line, csvr_col(&r, (size_t)ct), "TIMESTAMP %.40s is "
					     "before the previous row's %s (expected rows in time order)",
					     ts, prev_ts);
			else {
				have_prev = true;
				prev_t = t;
				snprintf(prev_ts, sizeof(prev_ts), "%.60s", ts);
				uint64_t id = trace_anon_session_id(line);
				if (file_no > 0)
					id = hash_combine(id, (uint64_t)file_no);
				sb_start(&b, path, id, imp_rel_s(m, t), line);
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

const struct imp_format imp_fmt_azure = {
	.name = "azure",
	.summary = "Azure LLM inference CSV, 2023 and 2024 timestamp styles",
	.flags = IMP_REQUEST_LEVEL | IMP_REBASE,
	.suffix = ".csv",
	.ctx_size = sizeof(struct azure_ctx),
	.begin = NULL,
	.file = az_file,
	.end = NULL,
	.release = NULL,
};
