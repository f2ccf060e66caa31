/* SPDX-License-Identifier: Apache-2.0
 * import: the importers' entry point (see import.h): picks the format,
 * expands folders, runs the format's callbacks over every file, then orders
 * the buffered sessions by start time, rebases clock times and writes them.
 *
 * Order and time base: a format marked IMP_REQUEST_LEVEL given one input file
 * streams (each row is checked to come in time order by its importer); every
 * other import buffers its sessions and sorts them by (start, order of
 * emission), so equal starts keep input order and the output is
 * deterministic.  IMP_REBASE formats carry clock times; the earliest start
 * becomes t = 0.
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/import.h"

#include "base/diag.h"
#include "traces/import_azure.h"
#include "traces/import_burstgpt.h"
#include "traces/import_claude.h"
#include "traces/import_codex.h"
#include "traces/import_mooncake.h"
#include "traces/import_openai.h"
#include "traces/import_tracelab.h"
#include "traces/import_util.h"
#include "traces/import_weka.h"
#include "traces/writer.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DEPTH 16
#define MAX_FILES ((size_t)1 << 20)

static const struct imp_format *const FORMATS[] = {
	&imp_fmt_claude, &imp_fmt_codex, &imp_fmt_tracelab, &imp_fmt_weka, &imp_fmt_mooncake,
	&imp_fmt_azure, &imp_fmt_burstgpt, &imp_fmt_openai,
};
#define N_FORMATS (sizeof(FORMATS) / sizeof(FORMATS[0]))

static const char *const NAMES[N_FORMATS + 1] = {
	"claude-code", "codex", "tracelab", "weka", "mooncake", "azure", "burstgpt", "openai-log",
	NULL,
};

const char *const *import_formats(void)
{
	return NAMES;
}

static const struct imp_format *find_format(const char *name)
{
	for (size_t i = 0; i < N_FORMATS; i++)
		if (strcmp(FORMATS[i]->name, name) == 0)
			return FORMATS[i];
	return NULL;
}

const char *import_format_summary(const char *name)
{
	const struct imp_format *f = name ? find_format(name) : NULL;
	return f ? f->summary : NULL;
}

/* ---- Folder expansion --------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append the files under dir whose names end in suffix (or suffix.gz). */
static int walk(const char *dir, const char *suffix, int depth, struct vec *out, struct diag *d)
{
	if (depth > MAX_DEPTH)
		return diag_set(d, DIAG_EINPUT, "%s: folders nested deeper than %d levels "
				"(expected a log folder such as ~/.claude/projects)", dir, MAX_DEPTH);
	errno = 0;
	DIR *dh = opendir(dir);
	if (!dh)
		return diag_set(d, DIAG_EIO, "%s: cannot open folder: %s", dir, strerror(errno));
	struct vec names;
	vec_init(&names, sizeof(char *), MAX_FILES);
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(dh))) {
		if (e->d_name[0] == '.')
			continue;
		size_t n = strlen(dir) + strlen(e->d_name) + 2;
		char *p = malloc(n);
		char **slot = p ? vec_push(&names) : NULL;
		if (!slot) {
			free(p);
			rc = diag_set(d, DIAG_ENOMEM, "%s: out of memory listing the folder", dir);
			break;
		}
		snprintf(p, n, "%s/%s", dir, e->d_name);
		*slot = p;
	}
	closedir(dh);
	if (names.len)
		qsort(names.data, names.len, sizeof(char *), cmp_str);
	char gz_suffix[64];
	snprintf(gz_suffix, sizeof(gz_suffix), "%s.gz", suffix);
	for (size_t i = 0; i < names.len; i++) {
		char *p = VEC_AT(&names, char *, i);
		struct stat sbuf;
		if (rc == 0 && stat(p, &sbuf) == 0) {
			if (S_ISDIR(sbuf.st_mode)) {
				rc = walk(p, suffix, depth + 1, out, d);
			} else if (S_ISREG(sbuf.st_mode) && (ends_with(p, suffix) || ends_with(p, gz_suffix))) {
				char **slot = vec_push(out);
				if (!slot && out->len < out->max_len) {
					rc = diag_set(d, DIAG_ENOMEM, "out of memory listing %s", dir);
				} else if (!slot) {
					rc = diag_set(d, DIAG_EINPUT, "%s: too many files (more than %zu)",
						      dir, MAX_FILES);
				} else {
					*slot = p;
					p = NULL;
				}
			}
		}
		free(p);
	}
	vec_release(&names);
	return rc;
}

static void free_paths(struct vec *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(VEC_AT(v, char *, i));
	vec_release(v);
}

/* ---- Final ordering ----------------------------------------------------- */

struct order {
	double t;
	size_t i;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int flush(struct imp *m)
{
	size_t n = m->pend.len;
	struct trace_session **s = m->pend.data;
	if (n == 0)
		return 0;
	struct order *ord = malloc(n * sizeof(*ord));
	if (!ord)
		return diag_set(m->d, DIAG_ENOMEM, "out of memory sorting %zu sessions", n);
	for (size_t i = 0; i < n; i++)
		ord[i] = (struct order){.t = s[i]->t_s, .i = i};
	qsort(ord, n, sizeof(*ord), cmp_order);
	double base = m->rebase ? ord[0].t : 0;
	int rc = 0;
	for (size_t k = 0; k < n && rc == 0; k++) {
		struct trace_session *x = s[ord[k].i];
		x->t_s -= base;
		if (!(x->t_s >= 0 && x->t_s <= TRACE_MAX_SECONDS))
			rc = diag_at(m->d, DIAG_EINPUT, VEC_AT(&m->pend_path, const char *, ord[k].i),
				     x->line, 0, "session starts at t=%.17g s (expected 0..1e9 s after "
				     "the earliest session)", x->t_s);
		else
			rc = imp_write(m, x);
	}
	free(ord);
	return rc;
}

static void drop_pending(struct imp *m)
{
	for (size_t i = 0; i < m->pend.len; i++)
		trace_session_free(VEC_AT(&m->pend, struct trace_session *, i));
	vec_release(&m->pend);
	vec_release(&m->pend_path);
	for (size_t i = 0; i < m->paths.len; i++)
		free(VEC_AT(&m->paths, char *, i));
	vec_release(&m->paths);
}

/* ---- Entry point -------------------------------------------------------- */

/* Name the engineer of `file` read for input `i` (a file, or one under the
 * folder paths[i]). */
static int name_engineer(struct imp *m, const char *const *paths, size_t i, const char *file)
{
	const struct import_opts *o = m->o;
	if (o->engineers && o->engineers[i])
		return imp_name_engineer(m, file, o->engineers[i], strlen(o->engineers[i]));
	if (!o->engineer_dirs)
		return 0;
	size_t k = strlen(paths[i]);
	while (k > 1 && paths[i][k - 1] == '/')
		k--;
	const char *rest = file + k;
	while (*rest == '/')
		rest++;
	const char *slash = strchr(rest, '/');
	if (strncmp(file, paths[i], k) != 0 || rest == file + k || !slash)
		return diag_set(m->d, DIAG_EINPUT, "%s: sits directly in %s (expected one folder "
				"per engineer there, with --engineer-dirs)", file, paths[i]);
	return imp_name_engineer(m, file, rest, (size_t)(slash - rest));
}

static int run(struct imp *m, const struct imp_format *f, const char *const *paths, size_t n,
	       void *ctx)
{
	int rc = f->begin ? f->begin(m, ctx) : 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct stat sbuf;
		if (stat(paths[i], &sbuf) == 0 && S_ISDIR(sbuf.st_mode)) {
			if (!(f->flags & IMP_FOLDERS))
				return diag_set(m->d, DIAG_EINPUT, "%s: is a folder (expected a %s file)",
						paths[i], f->name);
			struct vec files;
			vec_init(&files, sizeof(char *), MAX_FILES);
			rc = walk(paths[i], f->suffix, 0, &files, m->d);
			if (rc == 0 && files.len == 0)
				rc = diag_set(m->d, DIAG_EINPUT, "%s: no *%s files in this folder "
					      "(expected %s logs)", paths[i], f->suffix, f->name);
			for (size_t k = 0; k < files.len && rc == 0; k++) {
				m->st->files++;
				rc = name_engineer(m, paths, i, VEC_AT(&files, char *, k));
				if (rc == 0)
					rc = f->file(m, ctx, VEC_AT(&files, char *, k));
			}
			free_paths(&files);
		} else if (m->o->engineer_dirs) {
			return diag_set(m->d, DIAG_EINPUT, "%s: not a folder (expected a folder holding "
					"one folder per engineer, with --engineer-dirs)", paths[i]);
		} else {
			m->st->files++;
			rc = name_engineer(m, paths, i, paths[i]);
			if (rc == 0)
				rc = f->file(m, ctx, paths[i]);
		}
	}
	if (rc == 0 && f->end)
		rc = f->end(m, ctx);
	return rc;
}

int import_files(const char *format, const char *const *paths, size_t n,
		 const struct import_opts *o, const char *out_path,
		 struct import_stats *st, struct diag *d)
{
	struct import_opts defaults = {0};
	struct import_stats dummy;
	if (!o)
		o = &defaults;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	const struct imp_format *f = format ? find_format(format) : NULL;
	if (!f)
		return diag_set(d, DIAG_EINPUT, "unknown import format '%s' (expected claude-code, "
				"codex, tracelab, weka, mooncake, azure, burstgpt or openai-log)",
				format ? format : "(null)");
	if (n == 0 || !paths)
		return diag_set(d, DIAG_EINPUT, "%s import: no input path (expected at least one)",
				f->name);
	for (size_t i = 0; i < n; i++)
		if (!paths[i] || !paths[i][0])
			return diag_set(d, DIAG_EINPUT, "%s import: empty input path", f->name);
	if (!out_path || !out_path[0])
		return diag_set(d, DIAG_EINPUT, "%s import: no output path", f->name);
	bool named = o->engineer_dirs;
	for (size_t i = 0; o->engineers && i < n; i++)
		named = named || o->engineers[i];
	if (named && (f->flags & IMP_REQUEST_LEVEL))
		return diag_set(d, DIAG_EINPUT, "%s import: request-level rows belong to no engineer "
				"(expected --engineer or --engineer-dirs only with session logs: "
				"claude-code, codex, tracelab, weka)", f->name);
	if (o->rules && !o->keep_text)
		return diag_set(d, DIAG_EINPUT, "%s import: rules match segment text (expected "
				"--keep-text with --rules)", f->name);

	struct imp m = {
		.o = o, .st = st, .d = d,
		.salt = o->salt ? o->salt : IMP_DEFAULT_SALT,
		.keep_text = o->keep_text, .skip_bad = o->skip_bad,
		.rebase = (f->flags & IMP_REBASE) != 0,
		.stream = (f->flags & IMP_REQUEST_LEVEL) && n == 1,
	};
	vec_init(&m.pend, sizeof(struct trace_session *), VEC_NO_LIMIT);
	vec_init(&m.pend_path, sizeof(const char *), VEC_NO_LIMIT);
	vec_init(&m.paths, sizeof(char *), VEC_NO_LIMIT);
	vec_init(&m.scratch, 1, VEC_NO_LIMIT);
	map_init(&m.engineer_of);
	map_init(&m.engineers);
	if (m.stream) {
		struct stat sbuf;
		if (stat(paths[0], &sbuf) == 0 && S_ISDIR(sbuf.st_mode))
			m.stream = false;
	}
	char source[64];
	snprintf(source, sizeof(source), "%s import", f->name);
	bool gz = ends_with(out_path, ".gz");
	int rc = trace_writer_open(&m.w, out_path, gz, source, d);
	if (rc) {
		vec_release(&m.pend);
		vec_release(&m.scratch);
		return rc;
	}
	void *ctx = calloc(1, f->ctx_size ? f->ctx_size : 1);
	if (!ctx)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	else
		rc = run(&m, f, paths, n, ctx);
	if (ctx && f->release)
		f->release(ctx);
	free(ctx);
	if (rc == 0 && m.oom)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory hashing an id");
	if (rc == 0)
		rc = flush(&m);
	drop_pending(&m);
	vec_release(&m.scratch);
	map_release(&m.engineer_of);
	map_release(&m.engineers);
	if (rc == 0 && st->calls == 0)
		rc = diag_set(d, DIAG_EINPUT, "%s: no LLM calls found (expected %s input)", paths[0],
			      f->name);
	if (rc) {
		trace_writer_abort(m.w);
		return rc;
	}
	return trace_writer_close(m.w, d);
}
