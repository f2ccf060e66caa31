/* SPDX-License-Identifier: Apache-2.0
 * The progress line of `replay`: drawn on a terminal (a pseudo-terminal
 * here) once a run passes a second, in colour unless NO_COLOR is set, and
 * erased at the end; never with --quiet, never into a pipe. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define AGENTCAP AC_BIN_DIR "/cli/agentcap"
/* 3,993 calls: seconds of replay, past the first second even unloaded */
#define LONG_TRACE AC_SRC_DIR "/traces/data/mooncake/synthetic_trace.jsonl.gz"

/* Run `agentcap replay LONG_TRACE --json /dev/null [extra]` with standard
 * error on a pseudo-terminal and standard output on /dev/null; what the
 * terminal received (free it). */
static char *run_on_pty(const char *extra, bool no_color)
{
	int master;
	pid_t pid = forkpty(&master, NULL, NULL, NULL);
	assert_true(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		/* draw from the first call on: the test must not depend on
		 * how long this machine takes for the trace */
		setenv("AGENTCAP_PROGRESS_AFTER", "0", 1);
		if (no_color)
			setenv("NO_COLOR", "1", 1);
		else
			unsetenv("NO_COLOR");
		execl(AGENTCAP, AGENTCAP, "replay", LONG_TRACE, "--json", "/dev/null", extra,
		      (char *)NULL);
		_exit(127);
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	for (;;) {
		if (len + 4096 > cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		ssize_t n = read(master, buf + len, 4096);
		if (n > 0)
			len += (size_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else
			break; /* EIO: the child closed its side */
	}
	buf[len] = '\0';
	close(master);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 1))
		fail_msg("replay on a terminal: status %d, output: %.500s", st, buf);
	return buf;
}

static void test_progress_on_terminal(void **state)
{
	(void)state;
	char *out = run_on_pty(NULL, false);
	/* drawn in place, with how far and how fast, in colour */
	if (!strstr(out, "\r\033[Kagentcap replay: simulated ") || !strstr(out, " of 3993 calls (") ||
	    !strstr(out, " calls/s") || !strstr(out, "\033[1m"))
		fail_msg("no progress line on the terminal: %.800s", out);
	/* and erased at the end: after the last drawing, the line is cleared
	 * before anything else is written */
	char *last = out, *next;
	while ((next = strstr(last + 1, "\r\033[Kagentcap replay: simulated ")))
		last = next;
	char *eol = strstr(last + 4, "\r\033[K");
	assert_non_null(eol);
	assert_null(memchr(last, '\n', (size_t)(eol - last)));
	free(out);

	out = run_on_pty(NULL, true);
	if (!strstr(out, " calls/s") || strstr(out, "\033[1m") || strstr(out, "\033[0m"))
		fail_msg("NO_COLOR: progress missing or coloured: %.800s", out);
	free(out);

	out = run_on_pty("--quiet", false);
	if (strstr(out, "calls/s") || strstr(out, "simulated"))
		fail_msg("--quiet on a terminal still drew progress: %.800s", out);
	free(out);
}

static void test_no_progress_in_pipe(void **state)
{
	(void)state;
	/* even asked to draw at once, a pipe gets no progress */
	setenv("AGENTCAP_PROGRESS_AFTER", "0", 1);
	struct cli_out r = cli_run("replay " LONG_TRACE " --json /dev/null");
	unsetenv("AGENTCAP_PROGRESS_AFTER");
	if (r.status != 0 && r.status != 1)
		fail_msg("replay: status %d, stderr: %s", r.status, r.err);
	if (strstr(r.err, "calls/s") || strchr(r.err, '\r') || strchr(r.err, '\033'))
		fail_msg("progress written into a pipe: %.800s", r.err);
	/* the report itself is unchanged */
	assert_non_null(strstr(r.out, "Successful requests:"));
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_progress_on_terminal),
		cmocka_unit_test(test_no_progress_in_pipe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
