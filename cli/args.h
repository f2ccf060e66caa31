/* SPDX-License-Identifier: Apache-2.0
 * args: parsing and rejecting option values, shared by the subcommands so
 * that every command words a bad value the same way:
 *     agentcap CMD: OPT 'VALUE': expected WANT
 */
#ifndef CLI_ARGS_H
#define CLI_ARGS_H

#include "traces/reader.h"

#include <stdbool.h>
#include <stdint.h>

struct catalog;
struct diag;
struct engine_table;

/* Print the message above to stderr; returns 2 (bad usage). */
int args_bad(const char *cmd, const char *opt, const char *val, const char *want);

/* When the output path of option opt names the same file as input (what
 * says which input), print "agentcap CMD: OPT PATH: WHAT (expected another
 * path: ...)" to stderr and return 2; else 0 (base/outfile.h,
 * outfile_is_input). */
int args_output_is_input(const char *cmd, const char *opt, const char *out, const char *input,
			 const char *what);

/* A finite number in [lo, hi] (a whole one if integral). */
bool args_number(const char *s, double lo, double hi, bool integral, double *out);

/* A decimal integer in [lo, hi], exact over the whole int64 range. */
bool args_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* A size in decimal GB: "96G", "96GB", "80", "512M", "1.5T". */
bool args_size_gb(const char *s, double *out);

/* Memory a synthetic team takes per engineer-day to generate: measured
 * 86 KB (peak RSS of agentcap synth at 1,000 and 5,000 engineers for one
 * day, 2026-12-06), rounded up. */
#define ARGS_TEAM_BYTES_PER_ENGINEER_DAY ((double)(128 << 10))

/* 0 when a synthetic team of engineers x days fits in this process's memory
 * (the machine's physical memory, or a lower address-space limit); else
 * DIAG_EINPUT saying what it needs, what there is and what to change, so
 * that a team too large is refused at once, not after an hour and an
 * out-of-memory exit.  cmd names the command. */
int args_team_fits(const char *cmd, int64_t engineers, int64_t days, struct diag *d);

/* A --format value: auto, canonical or mooncake. */
bool args_trace_format(const char *s, enum trace_format *out);

/* The catalogue (catalog_dir NULL: the built-in copy) and, when
 * engines_path is given, an engine table read from it (else *et = NULL: the
 * built-in table).  Release both with args_models_free, on failure too. */
int args_models_load(const char *catalog_dir, const char *engines_path, struct catalog **cat,
		     struct engine_table **et, struct diag *d);
void args_models_free(struct catalog *cat, struct engine_table *et);

struct calfile;

/* --calibration FILE: load the team's calibration file and lay its
 * parameters over cat's families and the engine table (*et, loaded from the
 * built-in copy when NULL), then point cat at both; path NULL: the built-in
 * calibration (cat keeps its families) and the engine table, so that the
 * whole command reads one table.  *cf is what results describe; free
 * it with calfile_free after cat.  0 or a DIAG code with d filled (an
 * unreadable or foreign file names the file and what was expected). */
int args_calibration(const char *path, struct catalog *cat, struct engine_table **et,
		     struct calfile **cf, struct diag *d);

struct report_calibration;
struct calfile_regime;

/* What a result says about its calibration: the source of cf, and no
 * points yet.  rc borrows cf's strings. */
void args_calibration_describe(struct report_calibration *rc, const struct calfile *cf);

/* Add the nearest measured point to regime r, labelled `label` (borrowed;
 * the regime's ids too), unless rc is full. */
void args_calibration_point(struct report_calibration *rc, const struct calfile *cf,
			    const struct catalog *cat, const char *label,
			    const struct calfile_regime *r);

#endif
