/* SPDX-License-Identifier: Apache-2.0
 * import_util: the machinery every importer shares (traces/import.h is the
 * public entry point; this header is for the import_*.c modules only).
 *
 *   - struct imp: one import run: options, statistics, the output writer and
 *     the sink that orders sessions by start time (buffered and sorted, or
 *     streamed when one request-level file is already in order);
 *   - struct lines: a line reader over plain or gzip files with a line limit;
 *   - record errors: imp_bad reports "path:line[:col]: what (expected ...)"
 *     or, with skip_bad, counts the record and lets the importer go on;
 *   - ids and contents: salted hashes unless keep_text;
 *   - struct sb: assembles one session; a call's prompt is given either as
 *     usage numbers (whole prompt, reused prefix: the prefix rule of
 *     docs/importers.md) or as explicit segments.
 * Invariants: a session handed to the sink passes trace_session_check; the
 * sink never holds a pointer into an sb.
 */
#ifndef TRACES_IMPORT_UTIL_H
#define TRACES_IMPORT_UTIL_H

#include "base/map.h"
#include "base/vec.h"
#include "traces/import.h"
#include "traces/trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct diag;
struct trace_writer;

/* Longest input line or JSON document an importer reads. */
#define IMP_MAX_LINE_BYTES ((size_t)64 << 20)
/* How far a skipped line too long to keep is followed to its end. */
#define IMP_MAX_SKIP_BYTES ((size_t)1 << 30)
/* Default salt of id hashes (documented in docs/importers.md). */
#define IMP_DEFAULT_SALT "agentcap-import-v1"

struct imp {
	const struct import_opts *o;
	struct import_stats *st;
	struct diag *d;
	const char *salt;
	bool keep_text;
	bool skip_bad;
	bool rebase;          /* clock times: shift so the earliest start is t = 0 */
	bool stream;          /* write each session at once (caller keeps order) */
	bool have_base;
	double base_t;        /* stream mode: the time that becomes t = 0 */
	struct trace_writer *w;
	struct vec pend;      /* struct trace_session *: buffered sessions */
	struct vec pend_path; /* const char *: the file of each buffered session,
				 pointing into `paths` */
	struct vec paths;     /* char *: copies of the files sessions came from */
	struct vec scratch;   /* char: id strings being hashed */
	bool oom;             /* an id could not be hashed: the import fails */
	uint64_t emitted;     /* sessions handed to the sink */
	bool have_t0;
	int64_t t0_ns;        /* clock time that imp_rel_s maps to 0 */
	struct map engineer_of; /* hash of an input file's path -> engineer id */
	struct map engineers; /* engineer id -> 1: the distinct ones named */
};

/* The engineer named for the input file `path` (import_opts.engineers or
 * engineer_dirs), or 0. */
uint64_t imp_engineer_of(struct imp *m, const char *path);

/* Name name[0..name_len) the engineer of input file `path`.  0,
 * DIAG_EINPUT (an empty or over-long name) or DIAG_ENOMEM. */
int imp_name_engineer(struct imp *m, const char *path, const char *name, size_t name_len);

/* ---- Errors ------------------------------------------------------------- */

/* A malformed record at path:line (col 0: no column).  With skip_bad: counted,
 * the first message kept in st->first_skipped, returns 1 (skip the record and
 * go on).  Otherwise fills m->d and returns DIAG_EINPUT. */
int imp_bad(struct imp *m, const char *path, long line, long col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Importers that collect a session's records before building it call this
 * before adding call number `n_calls` + 1: 0, or DIAG_EINPUT at path:line
 * once the session (which began at sess_path:sess_line) would pass the
 * limit on calls per session, so it is refused while reading, not after
 * being held whole. */
int imp_check_calls(struct imp *m, size_t n_calls, const char *path, long line,
		    const char *sess_path, long sess_line);

/* Column (1-based) of the value of the first `"key":` in line s[0..n), or 0. */
long imp_col(const char *s, size_t n, const char *key);

/* ---- Lines -------------------------------------------------------------- */

enum { LINES_OK = 1, LINES_TOO_LONG = 2 };

struct lines {
	void *gz;             /* gzFile */
	const char *path;
	char *buf;
	size_t pos, len, cap;
	bool eof;
	bool rest_too_long;   /* the line last returned (LINES_TOO_LONG) goes on:
				 the next call skips the rest of it first */
	long line_no;         /* 1-based number of the line last returned */
};

/* 0, DIAG_EIO (cannot open) or DIAG_ENOMEM. */
int lines_open(struct lines *l, const char *path, struct diag *d);
/* LINES_OK with the line NUL-terminated in place (no newline, no trailing
 * CR; valid until the next call), LINES_TOO_LONG (the line was dropped, as
 * soon as it passed IMP_MAX_LINE_BYTES, so that a stream without newlines
 * ends too), 0 at the end, or a negative code (read error, corrupt or
 * truncated gzip; DIAG_EINPUT when the rest of a line too long to keep runs
 * past IMP_MAX_SKIP_BYTES). */
int lines_next(struct lines *l, char **line, size_t *len, struct diag *d);
void lines_close(struct lines *l);
bool lines_blank(const char *s, size_t n);

/* Read a whole file (plain or gzip) into a NUL-terminated heap buffer of at
 * most IMP_MAX_LINE_BYTES.  0, DIAG_EIO, DIAG_ENOMEM, or DIAG_EINPUT (too
 * big or corrupt). */
int imp_slurp(const char *path, char **out, size_t *len, struct diag *d);

/* Parse one JSON object line.  0 with *root (cJSON_Delete it), 1 when the
 * record was skipped (skip_bad), or DIAG_EINPUT/DIAG_ENOMEM. */
int imp_json_line(struct imp *m, const char *path, long line, const char *s, size_t n,
		  struct cJSON **root);

/* One JSON record of a JSON-lines file, parsed; `s` is the raw line (for
 * column look-ups).  Return 0 to go on, 1 when the record was skipped
 * (skip_bad), or a negative code to stop. */
typedef int (*imp_record_fn)(struct imp *m, void *ctx, struct cJSON *root, const char *path,
			     long line, const char *s, size_t n);

/* Feed every JSON object line of `path` to fn: counts records, skips blank
 * lines, and reports over-long and malformed lines as imp_bad does ("line
 * longer than N bytes (expected one JSON `what` per line)").  The root is
 * freed after fn returns.  0 or a negative code. */
int imp_json_lines(struct imp *m, const char *path, const char *what, imp_record_fn fn, void *ctx);

/* Keep a copy of `path` in `paths` (a vec of char *) for messages that
 * outlive the file's reading; *kept points at the copy.  0 or DIAG_ENOMEM. */
int imp_keep_path(struct imp *m, struct vec *paths, const char *path, const char **kept);

/* ---- Values ------------------------------------------------------------- */

/* "YYYY-MM-DD[T ]HH:MM[:SS[.frac]][Z|+HH:MM|-HH:MM|+HHMM]" (no zone: UTC)
 * to nanoseconds since 1970-01-01 UTC (fraction digits past the ninth are
 * dropped).  Importers keep clock times in integer nanoseconds, so gaps are
 * exact differences. */
bool imp_parse_time(const char *s, int64_t *ns);
/* Seconds from the first clock time this import converted (which becomes 0
 * unless an earlier one turns up; the final rebase takes care of that). */
double imp_rel_s(struct imp *m, int64_t ns);
/* b - a in seconds. */
static inline double imp_span_s(int64_t a_ns, int64_t b_ns)
{
	return (double)(b_ns - a_ns) / 1e9;
}
/* A whole number 0..max, from a JSON number. */
bool imp_json_int(const struct cJSON *v, int64_t max, int64_t *out);
/* Child by key path ("message", "usage", NULL-terminated), or NULL. */
const struct cJSON *imp_json_path(const struct cJSON *root, ...);

/* ---- Ids and contents --------------------------------------------------- */

/* Hash of id `id`: trace_id_hash(id) with keep_text, else
 * trace_id_hash(salt + ":" + id).  0 for NULL or "", and 0 with m->oom set
 * when memory for the salted string runs out (the import then fails). */
uint64_t imp_id(struct imp *m, const char *id);
/* Same for an id made of two parts ("session" and a sub id). */
uint64_t imp_id2(struct imp *m, const char *a, const char *b);
/* Content hash of a piece of text (salted unless keep_text). */
uint64_t imp_text_content(struct imp *m, const char *kind, const char *text, size_t len);
/* Content shared by every session of an agent/model (a common system prompt
 * and tool definitions): never salted, so imports of one team agree. */
uint64_t imp_shared_content(const char *agent, const char *model);

/* ---- Session builder ---------------------------------------------------- */

struct sb_call {
	int64_t prompt_tokens;   /* whole prompt, >= 1 */
	int64_t reused_tokens;   /* recorded cached prefix, 0..prompt_tokens */
	int64_t output_tokens;   /* >= 0 (0 is written as 1) */
	double gap_s;            /* >= 0; ignored on the first call */
	uint64_t task;
	enum trace_tool tool;
	uint64_t shared_prefix;  /* first call only: content of a reused prefix
				    shared across sessions (0: unique) */
};

struct sb {
	struct imp *m;
	const char *path;     /* for messages */
	uint64_t id, engineer, parent;
	double t_s;
	long line;
	bool open_loop;
	struct vec calls;     /* struct trace_call (segs set at emit) */
	struct vec seg_off;   /* size_t: first segment of each call */
	struct vec segs;      /* struct trace_seg */
	struct vec texts;     /* char *: one per segment when keep_text (owned) */
	struct vec hist;      /* struct trace_seg: last prompt + its output */
	int64_t hist_tokens;
	int64_t reused;       /* sum of reused_tokens (statistics) */
};

void sb_init(struct sb *b, struct imp *m);
void sb_release(struct sb *b);
/* Forget the calls and start session `id` at clock time t_s. */
void sb_start(struct sb *b, const char *path, uint64_t id, double t_s, long line);
/* Append a call given by usage numbers (the prefix rule).  0 or an error
 * (DIAG_ENOMEM, DIAG_EINPUT for a session past the format's limits). */
int sb_add_usage(struct sb *b, const struct sb_call *c);
/* Append a call with explicit segments (texts: NULL or n entries, kept only
 * with keep_text); extends: the prompt continues the previous call's prompt
 * and output.  prompt_tokens/reused_tokens of c are ignored. */
int sb_add_segs(struct sb *b, const struct sb_call *c, const struct trace_seg *segs,
		char *const *texts, size_t n, bool extends);
size_t sb_calls(const struct sb *b);
struct trace_call *sb_call_at(struct sb *b, size_t i);
/* Hand the session to the sink (nothing if it has no call) and reset. */
int sb_emit(struct sb *b);

/* Content of new prompt tokens that nothing else shares. */
uint64_t imp_unique_content(uint64_t session, int64_t seq, int k);

/* ---- Sink --------------------------------------------------------------- */

/* Take a session read from `path` (both copied; the caller keeps its own).
 * The path names the file in messages about the session's start time. */
int imp_emit(struct imp *m, const char *path, const struct trace_session *s);
/* Count a session in the statistics and write it (import.c's final flush). */
int imp_write(struct imp *m, struct trace_session *s);

/* ---- Formats ------------------------------------------------------------ */

enum {
	IMP_FOLDERS = 1,       /* a path may be a folder: its files are read */
	IMP_REQUEST_LEVEL = 2, /* one-call sessions in file order: one file streams */
	IMP_REBASE = 4,        /* clock times: the earliest start becomes t = 0 */
};

/* One input format: begin once, file per input file (folders expanded, in
 * path order), end once (emit what was buffered), release always. */
struct imp_format {
	const char *name;
	const char *summary;
	unsigned flags;
	const char *suffix;    /* file name ending read from folders */
	size_t ctx_size;       /* zeroed storage handed to the callbacks */
	int (*begin)(struct imp *m, void *ctx);
	int (*file)(struct imp *m, void *ctx, const char *path);
	int (*end)(struct imp *m, void *ctx);
	void (*release)(void *ctx);
};

#endif
