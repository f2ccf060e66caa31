/* SPDX-License-Identifier: Apache-2.0
 * testutil: helpers shared by the traces/ tests (see testutil.h). */
#define _POSIX_C_SOURCE 200809L
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "traces/reader.h"
#include "traces/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* cmocka's assertions, not assert(): they also check in builds with NDEBUG. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

void testutil_fixture(char *out, size_t outsz, const char *name)
{
	snprintf(out, outsz, "%s/tests/fixtures/traces/%s", AC_SRC_DIR, name);
}

void testutil_scratch(char *out, size_t outsz, const char *name)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/tests/traces/scratch", AC_BIN_DIR);
	int rc = mkdir(dir, 0777);
	if (rc != 0 && errno != EEXIST)
		fail_msg("cannot create %s: %s", dir, strerror(errno));
	snprintf(out, outsz, "%s/%s", dir, name);
}

void testutil_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

void testutil_write_str(const char *path, const char *text)
{
	testutil_write(path, text, strlen(text));
}

bool testutil_session_equal(const struct trace_session *a, const struct trace_session *b,
		      bool with_line)
{
	if (a->id != b->id || a->engineer != b->engineer || a->parent != b->parent ||
	    a->t_s != b->t_s || a->n_calls != b->n_calls || a->open_loop != b->open_loop ||
	    (with_line && a->line != b->line))
		return false;
	for (size_t i = 0; i < a->n_calls; i++) {
		const struct trace_call *x = &a->calls[i], *y = &b->calls[i];
		if (x->seq != y->seq || x->task != y->task || x->gap_s != y->gap_s ||
		    x->extends_prev != y->extends_prev || x->n_segs != y->n_segs ||
		    x->prompt_tokens != y->prompt_tokens || x->output_tokens != y->output_tokens ||
		    x->tool != y->tool || x->retry_of != y->retry_of || x->accepted != y->accepted)
			return false;
		for (size_t k = 0; k < x->n_segs; k++)
			if (x->segs[k].content != y->segs[k].content ||
			    x->segs[k].tokens != y->segs[k].tokens)
				return false;
	}
	return true;
}

int testutil_read_all(const char *path, struct trace_session ***out, size_t *n, char *msg,
		size_t msgsz)
{
	struct diag d;
	diag_init(&d);
	struct trace_reader *r = NULL;
	*out = NULL;
	*n = 0;
	int rc = trace_reader_open(&r, path, TRACE_FMT_AUTO, &d);
	size_t cap = 0;
	while (rc == 0) {
		struct trace_session *s = NULL;
		int got = trace_reader_next(r, &s, &d);
		if (got <= 0) {
			rc = got;
			break;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			*out = realloc(*out, cap * sizeof(**out));
			assert_non_null(*out);
		}
		(*out)[(*n)++] = s;
	}
	trace_reader_free(r);
	if (msg)
		snprintf(msg, msgsz, "%s", d.msg);
	return rc;
}

void testutil_free_all(struct trace_session **s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		trace_session_free(s[i]);
	free(s);
}
