/* SPDX-License-Identifier: Apache-2.0
 * Tests of base/outfile: what each kind of path becomes (a regular file is
 * replaced atomically, a link is followed and stays a link, a device or a
 * FIFO is written in place, anything else is refused), write errors carry the
 * path and the system's reason (a full device, a file size limit standing in
 * for a full disk), and the signal-time clean-up finds every temporary file. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/diag.h"
#include "base/outfile.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

struct tmp {
	char dir[64];
	char path[8][160];
};

static int setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/agentcap-outfile-XXXXXX");
	if (!t || !mkdtemp(t->dir))
		return -1;
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tmp *t = *state;
	DIR *dp = opendir(t->dir);
	for (struct dirent *e; dp && (e = readdir(dp));) {
		if (e->d_name[0] == '.')
			continue;
		char p[400];
		snprintf(p, sizeof(p), "%s/%s", t->dir, e->d_name);
		if (unlink(p) != 0)
			rmdir(p);
	}
	if (dp)
		closedir(dp);
	rmdir(t->dir);
	free(t);
	return 0;
}

static const char *in_dir(struct tmp *t, int i, const char *name)
{
	snprintf(t->path[i], sizeof(t->path[i]), "%s/%s", t->dir, name);
	return t->path[i];
}

/* Entries of the folder whose name contains ".tmp." */
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

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void assert_file(const char *path, const char *text)
{
	char buf[256] = {0};
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_string_equal(buf, text);
}

static int write_all(const char *path, const char *text, struct diag *d)
{
	struct outfile of;
	int rc = outfile_open(&of, path, d);
	if (rc)
		return rc;
	fputs(text, of.fp);
	return outfile_commit(&of, d);
}

/* --json LINK where LINK -> real.json: the file is replaced, the link kept. */
static void test_symlink_followed(void **state)
{
	struct tmp *t = *state;
	const char *real = in_dir(t, 0, "real.json"), *link = in_dir(t, 1, "link.json");
	write_file(real, "old");
	assert_int_equal(chmod(real, 0600), 0);
	assert_int_equal(symlink("real.json", link), 0);
	struct diag d;
	diag_init(&d);
	assert_int_equal(write_all(link, "new", &d), 0);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_file(real, "new");
	/* the replaced file keeps its mode */
	assert_int_equal(stat(real, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* a chain of links, one of them absolute */
	const char *link2 = in_dir(t, 2, "link2.json");
	assert_int_equal(symlink(link, link2), 0);
	assert_int_equal(write_all(link2, "newer", &d), 0);
	assert_file(real, "newer");
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* a dangling link creates its target, in the target's folder */
	const char *dang = in_dir(t, 3, "dangling.json");
	assert_int_equal(symlink("sub/made.json", dang), 0);
	assert_int_equal(outfile_check(dang, &d), DIAG_EIO);
	assert_non_null(strstr(d.msg, "dangling.json"));
	assert_non_null(strstr(d.msg, "No such file or directory"));
	assert_int_equal(mkdir(in_dir(t, 4, "sub"), 0755), 0);
	diag_init(&d);
	assert_int_equal(write_all(dang, "made", &d), 0);
	assert_file(in_dir(t, 5, "sub/made.json"), "made");
	assert_int_equal(lstat(dang, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(temps_in(t->dir), 0);
	unlink(t->path[5]);
	/* a loop of links is refused */
	const char *la = in_dir(t, 6, "la"), *lb = in_dir(t, 7, "lb");
	assert_int_equal(symlink("lb", la), 0);
	assert_int_equal(symlink("la", lb), 0);
	diag_init(&d);
	assert_int_equal(write_all(la, "x", &d), DIAG_EIO);
	assert_non_null(strstr(d.msg, "la"));
	assert_int_equal(temps_in(t->dir), 0);
}

/* --json d/null: a character device stays one and gets the bytes. */
static void test_device_written_in_place(void **state)
{
	struct tmp *t = *state;
	struct diag d;
	diag_init(&d);
	/* through a link in the temporary folder */
	const char *link = in_dir(t, 0, "null");
	assert_int_equal(symlink("/dev/null", link), 0);
	assert_int_equal(outfile_check(link, &d), 0);
	assert_int_equal(write_all(link, "gone", &d), 0);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(temps_in(t->dir), 0);
	/* a device node of our own, where we may make one (as root) */
	const char *node = in_dir(t, 1, "dnull");
	if (mknod(node, S_IFCHR | 0666, makedev(1, 3)) == 0) {
		assert_int_equal(write_all(node, "gone", &d), 0);
		assert_int_equal(lstat(node, &st), 0);
		assert_true(S_ISCHR(st.st_mode));
		assert_int_equal(temps_in(t->dir), 0);
	}
	/* a full device: the write error names the path and the reason */
	diag_init(&d);
	struct outfile of;
	assert_int_equal(outfile_open(&of, "/dev/full", &d), 0);
	for (int i = 0; i < 2000; i++)
		fputs("0123456789", of.fp);
	assert_int_equal(outfile_commit(&of, &d), DIAG_EIO);
	assert_string_equal(d.msg, "/dev/full: write failed: No space left on device");
	assert_int_equal(stat("/dev/full", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	/* a small write that fails only on the final flush too */
	diag_init(&d);
	assert_int_equal(write_all("/dev/full", "x", &d), DIAG_EIO);
	assert_string_equal(d.msg, "/dev/full: write failed: No space left on device");
}

/* --json FIFO: written in place for the reader, not replaced by a file. */
static void test_fifo_written_in_place(void **state)
{
	struct tmp *t = *state;
	const char *fifo = in_dir(t, 0, "pipe");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* hold it open for reading (O_RDWR does not wait for a writer) */
	int rd = open(fifo, O_RDWR | O_NONBLOCK);
	assert_true(rd >= 0);
	struct diag d;
	diag_init(&d);
	assert_int_equal(outfile_check(fifo, &d), 0);
	assert_int_equal(write_all(fifo, "through the pipe", &d), 0);
	char buf[64] = {0};
	assert_int_equal(read(rd, buf, sizeof(buf) - 1), 16);
	assert_string_equal(buf, "through the pipe");
	close(rd);
	struct stat st;
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(temps_in(t->dir), 0);
}

/* Anything else is refused, by check and by open, and left as it was. */
static void test_other_types_refused(void **state)
{
	struct tmp *t = *state;
	struct diag d;
	const char *dir = in_dir(t, 0, "adir");
	assert_int_equal(mkdir(dir, 0755), 0);
	diag_init(&d);
	assert_int_equal(outfile_check(dir, &d), DIAG_EIO);
	assert_non_null(strstr(d.msg, "adir: is a directory (expected a regular file, a character "
				      "device such as /dev/null, a FIFO, or '-'"));
	diag_init(&d);
	assert_int_equal(write_all(dir, "x", &d), DIAG_EIO);
	assert_non_null(strstr(d.msg, "is a directory"));

	const char *sock = in_dir(t, 1, "sock");
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	assert_true(strlen(sock) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	diag_init(&d);
	assert_int_equal(write_all(sock, "x", &d), DIAG_EIO);
	assert_non_null(strstr(d.msg, "sock: is a socket"));
	close(s);
	struct stat st;
	assert_int_equal(lstat(sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));

	const char *blk = in_dir(t, 2, "blk");
	if (mknod(blk, S_IFBLK | 0600, makedev(7, 200)) == 0) {
		diag_init(&d);
		assert_int_equal(write_all(blk, "x", &d), DIAG_EIO);
		assert_non_null(strstr(d.msg, "blk: is a block device"));
		assert_int_equal(lstat(blk, &st), 0);
		assert_true(S_ISBLK(st.st_mode));
	}
	diag_init(&d);
	assert_int_equal(outfile_check("", &d), DIAG_EIO);
	assert_int_equal(temps_in(t->dir), 0);
}

/* The checks a command makes before its work: nothing is created. */
static void test_check_creates_nothing(void **state)
{
	struct tmp *t = *state;
	struct diag d;
	diag_init(&d);
	assert_int_equal(outfile_check(in_dir(t, 0, "new.json"), &d), 0);
	assert_int_equal(outfile_check("-", &d), 0);
	assert_int_equal(access(t->path[0], F_OK), -1);
	assert_int_equal(outfile_check("/nonexist/x.json", &d), DIAG_EIO);
	assert_string_equal(d.msg, "/nonexist/x.json: cannot create it in /nonexist: No such file "
				   "or directory");
	write_file(in_dir(t, 1, "plain"), "x");
	diag_init(&d);
	assert_int_equal(outfile_check(in_dir(t, 2, "plain/x.json"), &d), DIAG_EIO);
	assert_non_null(strstr(d.msg, "plain/x.json: cannot write: Not a directory"));
	if (geteuid() != 0) {
		/* permissions do not stop root, so only check them as a user */
		const char *ro = in_dir(t, 3, "ro");
		assert_int_equal(mkdir(ro, 0555), 0);
		diag_init(&d);
		assert_int_equal(outfile_check(in_dir(t, 4, "ro/x.json"), &d), DIAG_EIO);
		assert_non_null(strstr(d.msg, "Permission denied"));
		assert_int_equal(chmod(t->path[1], 0444), 0);
		diag_init(&d);
		assert_int_equal(outfile_check(t->path[1], &d), DIAG_EIO);
		assert_non_null(strstr(d.msg, "Permission denied"));
	}
	assert_int_equal(temps_in(t->dir), 0);
}

/* A full disk while writing a regular file: the file size limit stands in
 * for it (write fails with EFBIG), in a child process.  The old content
 * stays, the temporary file goes, the message says why. */
static void test_full_disk_keeps_old_file(void **state)
{
	struct tmp *t = *state;
	const char *path = in_dir(t, 0, "out.json");
	write_file(path, "old");
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = {.rlim_cur = 4096, .rlim_max = 4096};
		setrlimit(RLIMIT_FSIZE, &rl);
		struct diag d;
		diag_init(&d);
		struct outfile of;
		int rc = outfile_open(&of, path, &d);
		if (rc == 0) {
			for (int i = 0; i < 100000; i++)
				fputs("0123456789", of.fp);
			rc = outfile_commit(&of, &d);
		}
		if (write(fds[1], d.msg, strlen(d.msg)) < 0)
			rc = 99;
		_exit(rc == DIAG_EIO ? 0 : 1);
	}
	close(fds[1]);
	char msg[512] = {0};
	ssize_t n = read(fds[0], msg, sizeof(msg) - 1);
	close(fds[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(n > 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char want[300];
	snprintf(want, sizeof(want), "%s: write failed: File too large", path);
	assert_string_equal(msg, want);
	assert_file(path, "old");
	assert_int_equal(temps_in(t->dir), 0);
}

/* What a signal handler calls removes every temporary file still open. */
static void test_remove_temps(void **state)
{
	struct tmp *t = *state;
	struct diag d;
	diag_init(&d);
	struct outfile a, b, c;
	assert_int_equal(outfile_open(&a, in_dir(t, 0, "a.json"), &d), 0);
	assert_int_equal(outfile_open(&b, in_dir(t, 1, "b.json"), &d), 0);
	assert_int_equal(outfile_open(&c, in_dir(t, 2, "c.json"), &d), 0);
	fputs("c", c.fp);
	assert_int_equal(outfile_commit(&c, &d), 0);
	assert_int_equal(temps_in(t->dir), 2);
	outfile_remove_temps();
	assert_int_equal(temps_in(t->dir), 0);
	assert_file(t->path[2], "c");
	outfile_abort(&a);
	outfile_abort(&b);
	/* the table of temporary files is bounded, and its slots come back */
	struct outfile many[OUTFILE_MAX_TEMPS + 1];
	char name[32];
	for (int i = 0; i < OUTFILE_MAX_TEMPS; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		assert_int_equal(outfile_open(&many[i], in_dir(t, 3, name), &d), 0);
	}
	assert_int_equal(outfile_open(&many[OUTFILE_MAX_TEMPS], in_dir(t, 3, "over"), &d),
			 DIAG_ENOMEM);
	assert_non_null(strstr(d.msg, "outputs open at once"));
	for (int i = 0; i < OUTFILE_MAX_TEMPS; i++)
		outfile_abort(&many[i]);
	assert_int_equal(temps_in(t->dir), 0);
	diag_init(&d);
	assert_int_equal(write_all(in_dir(t, 3, "again"), "again", &d), 0);
	assert_file(t->path[3], "again");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_symlink_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_written_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_written_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_types_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_creates_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_disk_keeps_old_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_temps, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
