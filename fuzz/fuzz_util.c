/* SPDX-License-Identifier: Apache-2.0
 * fuzz_util: scratch files and the shared trace check (see fuzz_util.h). */
#include "fuzz/fuzz_util.h"

#include "base/diag.h"
#include "traces/stats.h"
#include "traces/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Set once, on first use (see the header).  The one piece of file-scope
 * state in the project, and deliberately so: libFuzzer calls the harness
 * entry point with no context argument, and each process needs one scratch
 * folder that outlives every input and is removed at exit. */
static char scratch_dir[256];

static void remove_scratch(void)
{
	static const char *const names[] = {"trace", "trace.gz", "scenario.json", "input.dat",
					    "out.jsonl", NULL};
	for (int i = 0; names[i]; i++)
		unlink(fuzz_path(names[i]));
	rmdir(scratch_dir);
}

const char *fuzz_path(const char *name)
{
	static char path[512];
	if (!scratch_dir[0]) {
		snprintf(scratch_dir, sizeof(scratch_dir), "/tmp/agentcap-fuzz-XXXXXX");
		if (!mkdtemp(scratch_dir))
			abort();
		atexit(remove_scratch);
	}
	snprintf(path, sizeof(path), "%s/%s", scratch_dir, name);
	return path;
}

const char *fuzz_write(const char *name, const uint8_t *data, size_t size)
{
	const char *path = fuzz_path(name);
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
	return path;
}

/* Tokens stats may hash per input: keeps every input fast however large the
 * token counts it declares (up to 2^40 per prompt). */
#define STATS_TOKEN_BUDGET ((int64_t)1 << 20)

int fuzz_read_trace(const char *path, enum trace_format fmt, bool skip_bad)
{
	struct diag d;
	diag_init(&d);
	struct trace_reader *r = NULL;
	int rc = trace_reader_open(&r, path, fmt, &d);
	if (rc != 0) {
		if (r || rc > 0 || !d.msg[0])
			abort();
		return rc;
	}
	trace_reader_set_skip_bad(r, skip_bad);
	struct stats *st = NULL;
	struct stats_opts o = {.block_size = 16, .decode_tokens_per_s = 50};
	if (stats_new(&st, &o, &d) != 0)
		abort();
	int64_t budget = STATS_TOKEN_BUDGET;
	struct trace_session *s = NULL;
	while ((rc = trace_reader_next(r, &s, &d)) == 1) {
		if (!trace_session_check(s))
			abort();
		int64_t tokens = 0;
		for (size_t i = 0; i < s->n_calls; i++)
			tokens += s->calls[i].prompt_tokens + s->calls[i].output_tokens;
		if (tokens > budget) {
			trace_session_free(s);
			continue;
		}
		budget -= tokens;
		if (stats_add(st, s, &d) != 0)
			abort();
	}
	if (rc == 0) {
		struct stats_summary sum;
		if (stats_finish(st, &sum, &d) != 0)
			abort();
		if (sum.hit_tokens_unbounded > sum.prompt_tokens ||
		    stats_hit_tokens_at(st, sum.distinct_blocks) != sum.hit_tokens_unbounded)
			abort();
	} else {
		/* an error sticks: the same code again, and no session */
		struct diag d2;
		diag_init(&d2);
		if (!d.msg[0] || trace_reader_next(r, &s, &d2) != rc || s)
			abort();
	}
	stats_free(st);
	trace_reader_free(r);
	return rc;
}
