/* SPDX-License-Identifier: Apache-2.0
 * sweep: many independent replays, one per cell of a grid of scenario
 * overrides x traces x seeds, one result row per cell (`agentcap sweep`).
 *
 * A grid file (docs/scale.md) names a base scenario, `set` overrides for
 * every cell, the traces, the seeds, and either `grid` (an object of dotted
 * scenario keys, each with a list of values: every combination is a cell
 * family, the last key varying fastest) or `cells` (an explicit list of
 * override objects).  Cells are numbered in the order override family x
 * trace x seed, the seed varying fastest.  sweep_load checks every cell
 * before anything runs: a key the scenario does not know, a value of the
 * wrong type, a hardware the catalogue lacks or a model that does not fit
 * is an input error at the grid file's line and column of that value.
 *
 * A cell's key is a 64-bit hash of its full resolved inputs: the base
 * scenario file's bytes, every override, the trace path and the trace
 * file's bytes, the seed, the team scaling, and the resolved deployment
 * (engine settings, TP/PP, replicas, KV capacity, the performance model's
 * peaks).  Two cells with the same key are the same replay, which a grid
 * must not list twice.  A row carries its key; an output file is resumed
 * by skipping the cells whose key it already holds.
 *
 * Rows are JSON Lines (docs/scale.md lists the fields): the cell, the
 * overrides, trace and seed, then the replay's headline figures.  Nothing
 * in a row depends on timing, the number of threads or of MPI ranks, so
 * the same grid gives byte-identical rows however it is run.
 *
 * Output (struct sweep_out): rows are appended to the file in cell order,
 * each with one write(2) of the whole line, so an interruption leaves at
 * most one torn last line; opening the file again drops that line (the
 * file is cut back to the last newline) and counts it.  A failed or short
 * write cuts the file back to where the row began and is an error naming
 * the path.  Standard output ("-"), a FIFO or a character device is written
 * directly and never read back (no resume); a symbolic link is followed,
 * never replaced; anything else is refused.
 *
 * Nothing here prints to the terminal; the only files written are the
 * output the caller names and the stream given to sweep_csv.
 */
#ifndef PLAN_SWEEP_H
#define PLAN_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct catalog;
struct diag;
struct pool;
struct sweep;

/* Limits of a grid: every one an input error when passed. */
#define SWEEP_MAX_CELLS 1000000
#define SWEEP_MAX_KEYS 32        /* override keys of one cell */
#define SWEEP_MAX_TRACES 1024
#define SWEEP_MAX_SEEDS 1024
#define SWEEP_MAX_GRID_BYTES (16u << 20)
#define SWEEP_MAX_ROW_BYTES 65536
/* A grid value's JSON, and the values one cell sets together: bounded so
 * that every row fits in SWEEP_MAX_ROW_BYTES beside its figures. */
#define SWEEP_MAX_VALUE_BYTES 8192
#define SWEEP_MAX_CELL_SET_BYTES 32768

/* Load and check the grid at path (relative paths in it are relative to the
 * grid file's folder).  cat is borrowed for the sweep's lifetime.  0, or
 * DIAG_EINPUT "path:line:col: what (expected ...)", DIAG_ENOMEM. */
int sweep_load(struct sweep **out, const char *path, const struct catalog *cat, struct diag *d);

void sweep_free(struct sweep *sw); /* accepts NULL */

/* Cells of the grid, and those already done (their row held from an output
 * opened with sweep_out_open, or run since). */
size_t sweep_cells(const struct sweep *sw);
size_t sweep_done(const struct sweep *sw);
bool sweep_cell_done(const struct sweep *sw, size_t cell);

/* The key of a cell, as its row writes it (16 hex digits, static to sw). */
const char *sweep_cell_key(const struct sweep *sw, size_t cell);

/* Replay one cell and write its row (one line of JSON, ending in '\n') into
 * a heap string *row (free it).  Thread-safe: cells share only what
 * sweep_load made read-only.  0 or a DIAG code (a trace that cannot be
 * read...) with d filled. */
int sweep_cell_run(const struct sweep *sw, size_t cell, char **row, struct diag *d);

/* Hold row (taken: freed by sw) as cell's result, marking it done.  0, or
 * DIAG_EINPUT when row is not a row of this cell (another key), as a row
 * from another machine could be. */
int sweep_cell_take(struct sweep *sw, size_t cell, char *row, struct diag *d);

/* Where rows go. */
struct sweep_out {
	int fd;          /* -1: closed */
	char *path;      /* as given, for messages */
	bool direct;     /* standard output, a FIFO or a device: never read back */
	int64_t size;    /* bytes of whole rows in the file */
	int64_t kept;    /* rows found there (cells that will not run again) */
	int64_t torn;    /* a torn last line dropped (0 or 1) */
};

/* Open path for sw's rows; for a regular file that exists, read its rows
 * first: each marks its cell done (sweep_cell_take), a torn last line is
 * cut off.  A complete line that is no row of this grid is DIAG_EINPUT
 * "path:line: ..." (the file is left as it was).  0, or DIAG_EIO naming
 * the path and the system's reason. */
int sweep_out_open(struct sweep_out *o, const char *path, struct sweep *sw, struct diag *d);

/* Append one row (len bytes, ending in '\n') with a single write; on a
 * failed or short write the file is cut back to its size before, and
 * DIAG_EIO names the path and the reason. */
int sweep_out_append(struct sweep_out *o, const char *row, size_t len, struct diag *d);

/* Close; DIAG_EIO if the system reports a deferred write error. */
int sweep_out_close(struct sweep_out *o, struct diag *d);

/* What a run did. */
struct sweep_stats {
	int64_t run;       /* cells replayed in this run */
	int64_t written;   /* rows appended */
	int64_t skipped;   /* cells already in the output */
};

struct sweep_opts {
	struct pool *pool;       /* runs the cells; NULL: one after another */
	struct sweep_out *out;   /* NULL: rows only held (sweep_row) */
	/* Test hook: > 0, stop as if interrupted once this many rows were
	 * appended (the cells after them are not run, or not written). */
	int64_t stop_after;
};

/* Run every cell not done, on o->pool, appending each row to o->out in
 * cell order as soon as the rows before it are written.  0, or the first
 * error in cell order (rows before it stay written). */
int sweep_run(struct sweep *sw, const struct sweep_opts *o, struct sweep_stats *st,
	      struct diag *d);

/* The row of a done cell (valid while sw is), or NULL. */
const char *sweep_row(const struct sweep *sw, size_t cell);

/* Every held row, in cell order, as CSV (libcsv quoting): one column per
 * override key ("set.KEY"), then the row's fields, nested objects
 * flattened with dots ("ttft_ms.p95").  0, DIAG_ENOMEM, or DIAG_EIO when
 * the stream fails. */
int sweep_csv(FILE *fp, const struct sweep *sw, struct diag *d);

#endif
