/* SPDX-License-Identifier: Apache-2.0
 * import_mooncake: Mooncake request traces (timestamp, input_length,
 * output_length, hash_ids of 512-token blocks) to the canonical format.
 *
 * The trace reader already reads Mooncake lines (docs/trace-format.md,
 * section 11); this importer streams its sessions into the writer, so the
 * output replays exactly like the Mooncake file itself: same session ids
 * (from line numbers), same segment contents, same block hashes.  With more
 * than one input file the session ids of the second and later files are
 * combined with the file's position, so they stay distinct.
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/import_mooncake.h"

#include "base/diag.h"
#include "base/hash.h"
#include "traces/import_util.h"
#include "traces/reader.h"
#include "traces/writer.h"

#include <stdio.h>
#include <string.h>

struct mooncake_ctx {
	int64_t file_no;
};

static int mc_begin(struct imp *m, void *vctx)
{
	(void)vctx;
	trace_writer_set_block_tokens_hint(m->w, TRACE_MOONCAKE_BLOCK_TOKENS);
	return 0;
}

static int mc_file(struct imp *m, void *vctx, const char *path)
{
	struct mooncake_ctx *c = vctx;
	int64_t file_no = c->file_no++;
	struct trace_reader *r = NULL;
	int rc = trace_reader_open(&r, path, TRACE_FMT_MOONCAKE, m->d);
	if (rc)
		return rc;
	trace_reader_set_skip_bad(r, m->skip_bad);
	struct trace_session *s;
	while ((rc = trace_reader_next(r, &s, m->d)) == 1) {
		if (file_no > 0)
			s->id = hash_combine(s->id, (uint64_t)file_no);
		rc = imp_emit(m, path, s);
		trace_session_free(s);
		if (rc)
			break;
	}
	long skipped = trace_reader_skipped(r);
	if (skipped && m->st->skipped == 0)
		snprintf(m->st->first_skipped, sizeof(m->st->first_skipped), "%s",
			 trace_reader_first_skipped(r));
	m->st->skipped += skipped;
	/* Every line but blank ones is a record; the reader counts lines. */
	m->st->records += trace_reader_line(r);
	trace_reader_free(r);
	return rc < 0 ? rc : 0;
}

const struct imp_format imp_fmt_mooncake = {
	.name = "mooncake",
	.summary = "Mooncake request traces (timestamp, input_length, hash_ids, ...)",
	.flags = IMP_REQUEST_LEVEL,
	.suffix = ".jsonl",
	.ctx_size = sizeof(struct mooncake_ctx),
	.begin = mc_begin,
	.file = mc_file,
	.end = NULL,
	.release = NULL,
};
