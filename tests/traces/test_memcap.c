/* SPDX-License-Identifier: Apache-2.0
 * test_memcap: running out of memory is not bad input.  A valid line that
 * cJSON cannot hold under a memory cap (RLIMIT_AS, in a child process) must
 * come back as DIAG_ENOMEM from the reader and from an importer, with and
 * without skip_bad, never as "invalid JSON" and never skipped.  Not built
 * under AddressSanitizer (NOT_UNDER_SANITIZERS in CMakeLists.txt), whose
 * shadow memory does not live under an address-space cap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/diag.h"
#include "traces/import.h"
#include "traces/reader.h"
#include "traces/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define AC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AC_ASAN 1
#endif
#endif

#ifndef AC_ASAN
#define JUNK_ITEMS (4 << 20) /* "1," each: an 8 MiB line, ~256 MiB as cJSON items */

/* A canonical trace or a Claude Code log whose second record carries an
 * unknown key holding JUNK_ITEMS numbers: valid, and ignored once parsed. */
static void write_big(const char *path, bool claude)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	if (claude)
		fputs("{\"type\":\"assistant\",\"sessionId\":\"s\",\"timestamp\":\"2026-01-01T00:00:00Z\","
		      "\"message\":{\"id\":\"a\",\"model\":\"m\",\"usage\":{\"input_tokens\":10,"
		      "\"output_tokens\":5}},\"junk\":[", f);
	else
		fputs("{\"format\":\"agentcap-trace\",\"version\":1}\n"
		      "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",16]],\"output_tokens\":1,\"junk\":[", f);
	for (int i = 0; i < JUNK_ITEMS; i++)
		fputs(i ? ",1" : "1", f);
	fputs("]}\n", f);
	fclose(f);
}

static long vm_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0;
	if (f) {
		if (fscanf(f, "%ld", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * sysconf(_SC_PAGESIZE);
}

static int read_all(const char *path, bool skip_bad, struct diag *d)
{
	struct trace_reader *r = NULL;
	int rc = trace_reader_open(&r, path, TRACE_FMT_AUTO, d);
	if (rc)
		return rc;
	trace_reader_set_skip_bad(r, skip_bad);
	struct trace_session *s;
	while ((rc = trace_reader_next(r, &s, d)) == 1)
		trace_session_free(s);
	trace_reader_free(r);
	return rc;
}

/* In a child under a cap of what it uses now + 96 MiB: the 8 MiB line fits
 * in the line buffer, its quarter of a gigabyte of cJSON items does not.  Exit
 * status: 0 all as expected, otherwise the step that went wrong. */
static int child(const char *trace, const char *log, const char *out)
{
	struct rlimit rl;
	rl.rlim_cur = rl.rlim_max = (rlim_t)(vm_bytes() + (96L << 20));
	if (setrlimit(RLIMIT_AS, &rl) != 0)
		return 10;
	for (int skip = 0; skip < 2; skip++) {
		struct diag d;
		diag_init(&d);
		int rc = read_all(trace, skip, &d);
		if (rc != DIAG_ENOMEM || !strstr(d.msg, ":2: out of memory parsing a line of")) {
			fprintf(stderr, "reader (skip_bad %d): rc %d: %s\n", skip, rc, d.msg);
			return 20 + skip;
		}
		struct import_opts o = {.skip_bad = skip};
		diag_init(&d);
		const char *paths[1] = {log};
		rc = import_files("claude-code", paths, 1, &o, out, NULL, &d);
		if (rc != DIAG_ENOMEM || !strstr(d.msg, ":1: out of memory parsing a line of")) {
			fprintf(stderr, "import (skip_bad %d): rc %d: %s\n", skip, rc, d.msg);
			return 30 + skip;
		}
		if (access(out, F_OK) == 0)
			return 40;
	}
	return 0;
}

#endif

static void test_oom_is_not_bad_input(void **state)
{
	(void)state;
#ifdef AC_ASAN
	fail_msg("test_memcap cannot run under AddressSanitizer; CMakeLists.txt leaves it out there");
#else
	char dir[] = "/tmp/agentcap-memcap-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char trace[256], log[256], out[256];
	snprintf(trace, sizeof(trace), "%s/big.jsonl", dir);
	snprintf(log, sizeof(log), "%s/big-claude.jsonl", dir);
	snprintf(out, sizeof(out), "%s/out.jsonl", dir);
	write_big(trace, false);
	write_big(log, true);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child(trace, log, out));
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* without the cap (and after the child, whose memory it must not
	 * inherit) the same line reads: it is valid */
	struct diag d;
	diag_init(&d);
	assert_int_equal(read_all(trace, false, &d), 0);
	remove(trace);
	remove(log);
	remove(out);
	rmdir(dir);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom_is_not_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
