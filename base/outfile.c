/* SPDX-License-Identifier: Apache-2.0
 * outfile: all-or-nothing outputs that leave devices, FIFOs and links alone
 * (see outfile.h).
 *
 * A path is first classified (plan_output); outfile_check stops there, and
 * outfile_open goes on to write standard output, the device or FIFO
 * directly, or a temporary file beside the regular file to replace.  The
 * temporary file is listed in live_temps from creation to rename or removal;
 * both moments run with signals blocked, so a signal arriving in between
 * always finds the table and the file system in agreement.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/outfile.h"

#include "base/diag.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary files that exist right now.  This is the program's one
 * mutable global, and it is one on purpose: a signal handler gets no
 * context pointer, so what it must remove before the process dies can only
 * be reached from static storage.  C11 (7.14.1.1) lets a handler read
 * lock-free atomic objects, hence one atomic pointer per slot (checked
 * below); each string stays valid while its slot points to it.  Zero (all
 * slots empty) at start. */
_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2, "a signal handler may read only lock-free atomics");
static _Atomic(char *) live_temps[OUTFILE_MAX_TEMPS];

/* Links followed before giving up with ELOOP, as the kernel does. */
#define MAX_LINK_HOPS 40

/* Block every signal the process may block, saving the old mask in *old.
 * A pending signal is delivered on restore_signals. */
static void block_signals(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

static void restore_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Put tmp in a free slot; its index, or -1 when all are taken. */
static int claim_slot(char *tmp)
{
	for (int i = 0; i < OUTFILE_MAX_TEMPS; i++) {
		char *empty = NULL;
		if (atomic_compare_exchange_strong(&live_temps[i], &empty, tmp))
			return i;
	}
	return -1;
}

void outfile_remove_temps(void)
{
	for (int i = 0; i < OUTFILE_MAX_TEMPS; i++) {
		char *p = atomic_load(&live_temps[i]);
		if (p)
			unlink(p);
	}
}

/* The target of the link at path, as a heap string (NULL with errno set). */
static char *read_link(const char *path)
{
	/* /proc links report size 0, so grow until the text fits. */
	for (size_t cap = 256; cap <= ((size_t)1 << 20); cap *= 2) {
		char *buf = malloc(cap);
		if (!buf)
			return NULL;
		ssize_t n = readlink(path, buf, cap);
		if (n < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return NULL;
		}
		if ((size_t)n < cap) {
			buf[n] = '\0';
			return buf;
		}
		free(buf);
	}
	errno = ENAMETOOLONG;
	return NULL;
}

/* Where a chain of symbolic links starting at path ends (a copy of path if
 * it is no link; the name a dangling link points to if it dangles).  Only
 * the last component is followed: links among the folders of the path do
 * not matter to a rename within one folder.  A heap string, or NULL with
 * errno set. */
static char *follow_links(const char *path)
{
	char *cur = strdup(path);
	for (int hops = 0; cur; hops++) {
		struct stat st;
		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
			return cur;
		if (hops == MAX_LINK_HOPS) {
			free(cur);
			errno = ELOOP;
			return NULL;
		}
		char *dest = read_link(cur);
		if (!dest) {
			int e = errno;
			free(cur);
			errno = e;
			return NULL;
		}
		const char *slash = strrchr(cur, '/');
		char *next = dest;
		if (dest[0] != '/' && slash) {
			/* relative to the folder holding the link */
			size_t dn = (size_t)(slash - cur) + 1, tn = strlen(dest);
			next = malloc(dn + tn + 1);
			if (next) {
				memcpy(next, cur, dn);
				memcpy(next + dn, dest, tn + 1);
			}
			free(dest);
		}
		free(cur);
		cur = next;
	}
	errno = ENOMEM;
	return NULL;
}

/* The folder a file at path would be in ("." for a bare name). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static const char *type_name(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

enum out_kind {
	OUT_STDOUT,  /* "-" */
	OUT_REPLACE, /* temporary file + rename over target */
	OUT_DIRECT,  /* open path and write it as it is */
};

struct plan {
	enum out_kind kind;
	char *target;  /* OUT_REPLACE: the regular file to replace or create */
	bool exists;   /* OUT_REPLACE: target exists */
	mode_t mode;   /* its permission bits when it does */
};

/* Decide how path is written.  0 (p->target then owned by the caller), or
 * an error naming path. */
static int plan_output(struct plan *p, const char *path, struct diag *d)
{
	*p = (struct plan){.kind = OUT_REPLACE};
	if (strcmp(path, "-") == 0) {
		p->kind = OUT_STDOUT;
		return 0;
	}
	if (!path[0])
		return diag_set(d, DIAG_EIO, "empty output path (expected a file name, or '-' for "
				"standard output)");
	struct stat st;
	if (stat(path, &st) != 0) {
		/* nothing there, or a link to nothing: the file is created */
		if (errno != ENOENT)
			return diag_set(d, DIAG_EIO, "%s: cannot write: %s", path, strerror(errno));
	} else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		p->kind = OUT_DIRECT;
		return 0;
	} else if (!S_ISREG(st.st_mode)) {
		return diag_set(d, DIAG_EIO, "%s: is %s (expected a regular file, a character device "
				"such as /dev/null, a FIFO, or '-' for standard output)", path,
				type_name(st.st_mode));
	} else {
		p->exists = true;
		p->mode = st.st_mode & 0777;
	}
	p->target = follow_links(path);
	if (!p->target)
		return diag_set(d, errno == ENOMEM ? DIAG_ENOMEM : DIAG_EIO,
				"%s: cannot follow the symbolic link: %s", path, strerror(errno));
	if (p->exists) {
		struct stat tst;
		if (stat(p->target, &tst) != 0 || tst.st_dev != st.st_dev || tst.st_ino != st.st_ino) {
			/* A link the kernel resolves its own way (/dev/stdout to a
			 * file, /proc/self/fd/N to one since deleted): write through
			 * it, as a shell redirection would. */
			free(p->target);
			p->target = NULL;
			p->kind = OUT_DIRECT;
		}
	}
	return 0;
}

/* Whether the plan can be carried out, short of trying. */
static int check_plan(const struct plan *p, const char *path, struct diag *d)
{
	if (p->kind == OUT_STDOUT)
		return 0;
	if (p->kind == OUT_DIRECT) {
		if (access(path, W_OK) != 0)
			return diag_set(d, DIAG_EIO, "%s: cannot write: %s", path, strerror(errno));
		return 0;
	}
	if (p->exists && access(p->target, W_OK) != 0)
		return diag_set(d, DIAG_EIO, "%s: cannot write: %s", path, strerror(errno));
	char *dir = dir_of(p->target);
	if (!dir)
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", path);
	int rc = 0;
	struct stat st;
	if (stat(dir, &st) != 0)
		rc = diag_set(d, DIAG_EIO, "%s: cannot create it in %s: %s", path, dir, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		rc = diag_set(d, DIAG_EIO, "%s: cannot create it: %s is not a directory", path, dir);
	else if (access(dir, W_OK | X_OK) != 0)
		rc = diag_set(d, DIAG_EIO, "%s: cannot create it in %s: %s", path, dir, strerror(errno));
	free(dir);
	return rc;
}

int outfile_check(const char *path, struct diag *d)
{
	struct plan p;
	int rc = plan_output(&p, path, d);
	if (rc == 0)
		rc = check_plan(&p, path, d);
	free(p.target);
	return rc;
}

static int open_direct(struct outfile *of, struct diag *d)
{
	int fd = open(of->path, O_WRONLY | O_NOCTTY);
	if (fd < 0)
		return diag_set(d, DIAG_EIO, "%s: cannot open: %s", of->path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return diag_set(d, DIAG_EIO, "%s: cannot open: %s", of->path, strerror(e));
	}
	/* Only a link the kernel resolves itself leads to a regular file here;
	 * start it afresh as `>` would. */
	if (S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) {
		int e = errno;
		close(fd);
		return diag_set(d, DIAG_EIO, "%s: cannot truncate: %s", of->path, strerror(e));
	}
	of->fp = fdopen(fd, "w");
	if (!of->fp) {
		int e = errno;
		close(fd);
		return diag_set(d, DIAG_EIO, "%s: cannot open: %s", of->path, strerror(e));
	}
	return 0;
}

static int open_temp(struct outfile *of, const struct plan *p, struct diag *d)
{
	static const char suffix[] = ".tmp.XXXXXX";
	size_t n = strlen(of->target);
	of->tmp_path = malloc(n + sizeof(suffix));
	if (!of->tmp_path)
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", of->path);
	memcpy(of->tmp_path, of->target, n);
	memcpy(of->tmp_path + n, suffix, sizeof(suffix));
	sigset_t old;
	block_signals(&old);
	int fd = mkstemp(of->tmp_path);
	int e = errno;
	if (fd >= 0) {
		of->slot = claim_slot(of->tmp_path);
		if (of->slot < 0) {
			unlink(of->tmp_path);
			close(fd);
			fd = -1;
			e = 0;
		}
	}
	restore_signals(&old);
	if (fd < 0) {
		free(of->tmp_path);
		of->tmp_path = NULL;
		if (!e)
			return diag_set(d, DIAG_ENOMEM, "%s: more than %d outputs open at once", of->path,
					OUTFILE_MAX_TEMPS);
		return diag_set(d, DIAG_EIO, "%s: cannot create a temporary file beside it: %s",
				of->path, strerror(e));
	}
	/* mkstemp makes the file 0600; give it the mode of the file it replaces,
	 * or the one a plain fopen would (0666 less the umask). */
	mode_t mode = p->mode;
	if (!p->exists) {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	if (fchmod(fd, mode) != 0) {
		e = errno;
		close(fd);
		return diag_set(d, DIAG_EIO, "%s: cannot set the mode of %s: %s", of->path, of->tmp_path,
				strerror(e));
	}
	of->fp = fdopen(fd, "w");
	if (!of->fp) {
		e = errno;
		close(fd);
		return diag_set(d, DIAG_EIO, "%s: cannot open %s: %s", of->path, of->tmp_path,
				strerror(e));
	}
	return 0;
}

bool outfile_is_input(const char *path, const char *input)
{
	struct stat a, b;
	if (!path || !input || strcmp(path, "-") == 0 || strcmp(input, "-") == 0)
		return false;
	if (stat(path, &a) != 0 || stat(input, &b) != 0)
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* dirname(path) resolved, then "/" and the last component; false when the
 * directory cannot be resolved. */
static bool canonical_name(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	const char *base = slash ? slash + 1 : path;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return false;
	char *real = realpath(dir, NULL);
	if (!real)
		return false;
	int n = snprintf(out, cap, "%s/%s", real, base);
	free(real);
	return n > 0 && (size_t)n < cap;
}

bool outfile_same(const char *a, const char *b)
{
	if (!a || !b)
		return false;
	if (strcmp(a, b) == 0)
		return true;
	if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
		return false;
	struct stat sa, sb;
	bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
	if (ea && eb)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	char ca[8192], cb[8192];
	return canonical_name(a, ca, sizeof(ca)) && canonical_name(b, cb, sizeof(cb)) &&
	       strcmp(ca, cb) == 0;
}

int outfile_distinct(const char *const *options, const char *const *paths, size_t n,
		     struct diag *d)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; paths[i] && j < i; j++)
			if (paths[j] && outfile_same(paths[i], paths[j]))
				return diag_set(d, DIAG_EINPUT, "%s and %s both name '%s' (expected "
						"a file each: the one written last would keep only "
						"its own output)", options[j], options[i], paths[i]);
	return 0;
}

int outfile_open(struct outfile *of, const char *path, struct diag *d)
{
	*of = (struct outfile){.slot = -1};
	struct plan p;
	int rc = plan_output(&p, path, d);
	if (rc != 0)
		return rc;
	if (p.kind == OUT_STDOUT) {
		of->fp = stdout;
		return 0;
	}
	of->target = p.target;
	of->path = strdup(path);
	if (!of->path)
		rc = diag_set(d, DIAG_ENOMEM, "%s: out of memory", path);
	if (rc == 0)
		rc = check_plan(&p, path, d);
	if (rc == 0)
		rc = p.kind == OUT_DIRECT ? open_direct(of, d) : open_temp(of, &p, d);
	if (rc != 0)
		outfile_abort(of);
	return rc;
}

/* Flush fp and report the first error it met, naming name. */
static int flush_checked(FILE *fp, const char *name, struct diag *d)
{
	bool failed_before = ferror(fp) != 0;
	errno = 0;
	if (fflush(fp) != 0)
		return diag_set(d, DIAG_EIO, "%s: write failed: %s", name,
				errno ? strerror(errno) : "unknown error");
	if (failed_before)
		/* stdio does not keep the reason of a failure already past */
		return diag_set(d, DIAG_EIO, "%s: write failed (an earlier write was refused)", name);
	return 0;
}

int outfile_commit(struct outfile *of, struct diag *d)
{
	if (!of->fp)
		return diag_set(d, DIAG_EINTERNAL, "output committed twice or never opened");
	if (of->fp == stdout) {
		int rc = flush_checked(stdout, "standard output", d);
		/* reported here, so not once more when the program ends */
		if (rc)
			clearerr(stdout);
		of->fp = NULL;
		return rc;
	}
	int rc = flush_checked(of->fp, of->path, d);
	errno = 0;
	if (fclose(of->fp) != 0 && rc == 0)
		rc = diag_set(d, DIAG_EIO, "%s: write failed on close: %s", of->path,
			      errno ? strerror(errno) : "unknown error");
	of->fp = NULL;
	if (rc == 0 && of->tmp_path) {
		sigset_t old;
		block_signals(&old);
		int moved = rename(of->tmp_path, of->target);
		int e = errno;
		if (moved == 0) {
			atomic_store(&live_temps[of->slot], NULL);
			of->slot = -1;
			free(of->tmp_path);
			of->tmp_path = NULL;
		}
		restore_signals(&old);
		if (moved != 0)
			rc = diag_set(d, DIAG_EIO, "%s: cannot move %s into place: %s", of->path,
				      of->tmp_path, strerror(e));
	}
	outfile_abort(of);
	return rc;
}

int outfile_finish(struct outfile *of, int wrc, const struct diag *wd, struct diag *d)
{
	if (wrc == 0 || (wrc == DIAG_EIO && of->fp && ferror(of->fp))) {
		int rc = outfile_commit(of, d);
		/* a stream error the commit did not see again: keep the writer's word */
		return rc ? rc : wrc ? diag_set(d, wrc, "%s", wd->msg) : 0;
	}
	outfile_abort(of);
	return diag_set(d, wrc, "%s", wd->msg);
}

void outfile_abort(struct outfile *of)
{
	/* a failed write to standard output was the caller's to report */
	if (of->fp == stdout)
		clearerr(stdout);
	else if (of->fp)
		fclose(of->fp);
	if (of->tmp_path) {
		sigset_t old;
		block_signals(&old);
		if (of->slot >= 0)
			atomic_store(&live_temps[of->slot], NULL);
		unlink(of->tmp_path);
		restore_signals(&old);
	}
	free(of->tmp_path);
	free(of->target);
	free(of->path);
	*of = (struct outfile){.slot = -1};
}
