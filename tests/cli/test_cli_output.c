/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of how every command writes: standard output on a full
 * device is an error with the reason, output paths are checked before the
 * work, a failed JSON still leaves the table on the screen, devices, FIFOs
 * and links are written through rather than replaced, and a signal during an
 * import leaves no temporary file. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FIX AC_SRC_DIR "/tests/fixtures"
#define TRACE FIX "/traces/session_good.jsonl"
#define MOONCAKE FIX "/traces/mooncake_head200.jsonl"
#define AGENTCAP AC_BIN_DIR "/cli/agentcap"

/* Run `agentcap ARGS >OUT`; the exit status, and stderr in *err (free it). */
static int run_to(const char *args, const char *out, char **err)
{
	char e[] = "/tmp/agentcap-test-err-XXXXXX";
	close(mkstemp(e));
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), AGENTCAP " %s >%s 2>%s", args, out, e);
	int st = system(cmd);
	*err = cli_slurp(e, NULL);
	unlink(e);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *tmpdir(void)
{
	char *dir = strdup("/tmp/agentcap-cli-out-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void rmtree(char *dir)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

/* Entries of dir whose name contains ".tmp." */
static int temps_in(const char *dir)
{
	DIR *dp = opendir(dir);
	int n = 0;
	for (struct dirent *e; dp && (e = readdir(dp));)
		n += strstr(e->d_name, ".tmp.") != NULL;
	if (dp)
		closedir(dp);
	return n;
}

/* `agentcap replay T > /dev/full` and the like: every command that prints
 * reports the refused write with its reason and does not exit 0. */
static void test_stdout_full(void **state)
{
	(void)state;
	static const char *const cmds[] = {
		"--help",
		"replay --help",
		"replay " TRACE,
		"replay " TRACE " --json -",
		"stats " TRACE,
		"stats " TRACE " --json -",
		"import mooncake " MOONCAKE " -o -",
		"synth --engineers 2 --days 1 -o -",
		"catalog",
		"catalog --json",
		"fit --hardware dgx-spark",
		"fit --hardware dgx-spark --json -",
		"predict --hardware h100-sxm --model llama-3.1-8b",
		"predict --hardware h100-sxm --model llama-3.1-8b --json -",
		"validate --quiet " AC_SRC_DIR "/models/calibration/measurements.csv",
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *err;
		int status = run_to(cmds[i], "/dev/full", &err);
		if (status != 2 || !strstr(err, "standard output: write failed"))
			fail_msg("agentcap %s > /dev/full: exit %d, stderr: %s", cmds[i], status, err);
		/* the reason is there; it may have been seen only at the end */
		if (!strstr(err, "No space left on device") && !strstr(err, "earlier write was refused"))
			fail_msg("agentcap %s > /dev/full: no reason in: %s", cmds[i], err);
		free(err);
	}
}

/* A stdout closed from the start is fine for a command that prints nothing
 * to it, an error for one that does. */
static void test_stdout_closed(void **state)
{
	(void)state;
	char *dir = tmpdir();
	char args[512], *err;
	snprintf(args, sizeof(args), "import mooncake " MOONCAKE " -o %s/o.jsonl", dir);
	assert_int_equal(run_to(args, "&-", &err), 0);
	free(err);
	assert_int_equal(run_to("stats " TRACE, "&-", &err), 2);
	assert_non_null(strstr(err, "standard output: write failed: Bad file descriptor"));
	free(err);
	rmtree(dir);
}

/* `replay big.gz --json /nonexist/x.json` fails before the work: with a
 * trace that does not exist either, the error is about the output. */
static void test_output_checked_first(void **state)
{
	(void)state;
	static const char *const cmds[] = {
		"replay /no/such/trace.jsonl --json /nonexist/x.json",
		"stats /no/such/trace.jsonl --json /nonexist/x.json",
		"import mooncake /no/such/trace.jsonl -o /nonexist/x.json",
		"synth --engineers 2 --days 1 --profile /no/such/profile.json -o /nonexist/x.json",
		"fit --hardware no-such-gpu --json /nonexist/x.json",
		"predict --hardware no-such-gpu --model llama-3.1-8b --json /nonexist/x.json",
		"validate /no/such/m.csv --json /nonexist/x.json",
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct cli_out r = cli_run(cmds[i]);
		if (r.status != 2 || !strstr(r.err, "/nonexist/x.json: cannot create it in /nonexist: "
					     "No such file or directory"))
			fail_msg("agentcap %s: exit %d, stderr: %s", cmds[i], r.status, r.err);
		cli_out_free(&r);
	}
}

/* When the JSON cannot be written after all, the table is still printed. */
static void test_table_survives_failed_json(void **state)
{
	(void)state;
	static const struct {
		const char *args;
		const char *in_table;
	} cases[] = {
		{"replay " TRACE " --json /dev/full", "Successful requests:"},
		{"stats " TRACE " --json /dev/full", "Prompt tokens"},
		{"fit --hardware dgx-spark --json /dev/full", "Models that fit on dgx-spark"},
		{"predict --hardware h100-sxm --model llama-3.1-8b --json /dev/full", "aggregate"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cli_out r = cli_run(cases[i].args);
		if (r.status != 2 || !strstr(r.err, "/dev/full: write failed: No space left on device") ||
		    !strstr(r.out, cases[i].in_table))
			fail_msg("agentcap %s: exit %d, stdout: %.200s, stderr: %s", cases[i].args,
				 r.status, r.out, r.err);
		cli_out_free(&r);
	}
}

/* DIR/NAME, whole (free it). */
static char *read_in(const char *dir, const char *name)
{
	char path[400];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	char *text = cli_slurp(path, NULL);
	assert_non_null(text);
	return text;
}

/* A full disk, with a file size limit standing in for it (writes past it
 * fail with EFBIG): an import and a replay's JSON report it, leave the
 * previous output as it was and no temporary file, the replay still prints
 * its table, and --engineers names its spill file. */
static void test_full_disk(void **state)
{
	(void)state;
	char *dir = tmpdir();
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "cd %s && echo previous >out.json", dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "cd %s && (ulimit -f 1; " AGENTCAP " import mooncake " MOONCAKE
		 " -o out.jsonl; echo $? >rc) 2>err", dir);
	(void)!system(cmd);
	char *err = read_in(dir, "err"), *rc = read_in(dir, "rc");
	if (strcmp(rc, "2\n") != 0 || !strstr(err, "out.jsonl: write failed: File too large"))
		fail_msg("import past the size limit: exit %s, stderr: %s", rc, err);
	free(err);
	free(rc);
	assert_int_equal(temps_in(dir), 0);
	snprintf(cmd, sizeof(cmd), "%s/out.jsonl", dir);
	assert_int_equal(access(cmd, F_OK), -1);

	snprintf(cmd, sizeof(cmd), "cd %s && (ulimit -f 1; " AGENTCAP " replay " TRACE
		 " --json out.json; echo $? >rc) 2>err | cat >table", dir);
	(void)!system(cmd);
	err = read_in(dir, "err");
	rc = read_in(dir, "rc");
	char *table = read_in(dir, "table");
	if (strcmp(rc, "2\n") != 0 || !strstr(err, "out.json: write failed: File too large") ||
	    !strstr(table, "Successful requests:"))
		fail_msg("replay --json past the size limit: exit %s, stderr: %s", rc, err);
	free(err);
	free(rc);
	free(table);
	assert_int_equal(temps_in(dir), 0);
	char *prev = read_in(dir, "out.json");
	assert_string_equal(prev, "previous\n");
	free(prev);

	snprintf(cmd, sizeof(cmd), "cd %s && (ulimit -f 4; " AGENTCAP " replay " MOONCAKE
		 " --engineers 3 >/dev/null; echo $? >rc) 2>err", dir);
	(void)!system(cmd);
	err = read_in(dir, "err");
	rc = read_in(dir, "rc");
	if (strcmp(rc, "2\n") != 0 || !strstr(err, "temporary file for --engineers (unnamed, in "
					       "/tmp): write or read failed: File too large"))
		fail_msg("replay --engineers past the size limit: exit %s, stderr: %s", rc, err);
	free(err);
	free(rc);
	rmtree(dir);
}

/* --json d/null (a link to a device), a FIFO, a link to a file: nothing is
 * turned into a regular file, the link stays a link. */
static void test_devices_fifos_links(void **state)
{
	(void)state;
	char *dir = tmpdir();
	char path[300], args[600];
	struct stat st;
	/* d/null -> /dev/null */
	snprintf(path, sizeof(path), "%s/null", dir);
	assert_int_equal(symlink("/dev/null", path), 0);
	snprintf(args, sizeof(args), "stats " TRACE " --json %s", path);
	struct cli_out r = cli_run(args);
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));

	/* a FIFO somebody reads */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	int rd = open(path, O_RDWR | O_NONBLOCK);
	assert_true(rd >= 0);
	snprintf(args, sizeof(args), "replay " TRACE " --quiet --json %s", path);
	r = cli_run(args);
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	char buf[256] = {0};
	assert_true(read(rd, buf, sizeof(buf) - 1) > 0);
	assert_non_null(strstr(buf, "\"schema_version\""));
	close(rd);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));

	/* import -o LINK: the file it points to is replaced, the link kept */
	char real[300];
	snprintf(real, sizeof(real), "%s/real.jsonl", dir);
	FILE *f = fopen(real, "w");
	fputs("old\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/link.jsonl", dir);
	assert_int_equal(symlink("real.jsonl", path), 0);
	snprintf(args, sizeof(args), "import mooncake " MOONCAKE " -o %s", path);
	r = cli_run(args);
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	char *text = cli_slurp(real, NULL);
	assert_non_null(strstr(text, "agentcap-trace"));
	free(text);

	/* a directory is refused and left alone */
	snprintf(args, sizeof(args), "replay " TRACE " --json %s", dir);
	r = cli_run(args);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "is a directory"));
	cli_out_free(&r);
	assert_int_equal(temps_in(dir), 0);
	rmtree(dir);
}

/* Start `agentcap import mooncake FIFO -o OUT` reading a FIFO that is fed a
 * few lines and kept open, so the import is running with its temporary file
 * in place; send sig; it must die of sig, leave the previous OUT as it was
 * and no temporary file behind. */
static void interrupt_import(int sig)
{
	char *dir = tmpdir();
	char fifo[300], out[300];
	snprintf(fifo, sizeof(fifo), "%s/in.jsonl", dir);
	snprintf(out, sizeof(out), "%s/out.jsonl", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	FILE *prev = fopen(out, "w");
	assert_non_null(prev);
	fputs("previous\n", prev);
	assert_int_equal(fclose(prev), 0);
	int wr = open(fifo, O_RDWR);
	assert_true(wr >= 0);
	char *lines = cli_slurp(MOONCAKE, NULL);
	assert_non_null(lines);
	/* the first 5 lines: well under the FIFO's buffer */
	char *p = lines;
	for (int i = 0; i < 5 && p; i++)
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	assert_non_null(p);
	assert_int_equal(write(wr, lines, (size_t)(p - lines)), p - lines);
	free(lines);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* as an interactive shell would start it, whatever ran the tests */
		signal(sig, SIG_DFL);
		close(wr);
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execl(AGENTCAP, AGENTCAP, "import", "mooncake", fifo, "-o", out, (char *)NULL);
		_exit(127);
	}
	/* wait (up to 20 s) until the import has its temporary file */
	for (int i = 0; i < 2000 && temps_in(dir) == 0; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	assert_int_equal(temps_in(dir), 1);
	assert_int_equal(kill(pid, sig), 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(wr);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), sig);
	assert_int_equal(temps_in(dir), 0);
	char *kept = read_in(dir, "out.jsonl");
	assert_string_equal(kept, "previous\n");
	free(kept);
	rmtree(dir);
}

static void test_sigterm_during_import(void **state)
{
	(void)state;
	interrupt_import(SIGTERM);
}

static void test_sigint_during_import(void **state)
{
	(void)state;
	interrupt_import(SIGINT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stdout_full),
		cmocka_unit_test(test_stdout_closed),
		cmocka_unit_test(test_output_checked_first),
		cmocka_unit_test(test_table_survives_failed_json),
		cmocka_unit_test(test_full_disk),
		cmocka_unit_test(test_devices_fifos_links),
		cmocka_unit_test(test_sigterm_during_import),
		cmocka_unit_test(test_sigint_during_import),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
