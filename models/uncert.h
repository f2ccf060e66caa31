/* SPDX-License-Identifier: Apache-2.0
 * uncert: error bars of the performance model, per regime, from its
 * out-of-sample errors on the calibration set.
 *
 * A regime is (hardware family, engine profile, metric), the metric named
 * as `agentcap validate` names it (decode_tok_s, prefill_tok_s,
 * output_throughput_tok_s, ttft_ms, tpot_ms, ...).  Its band is the
 * `coverage` quantile (0.8 by default) of |ln(predicted / measured)| over
 * the calibration rows of that regime, each predicted with parameters
 * refitted without the row's hardware family (calib/fitparams.h,
 * leave-one-family-out): the error a prediction on hardware the fit has
 * not seen makes.  The quantile is an order statistic, the
 * ceil(coverage x n)-th smallest, so at least that share of the regime's
 * rows lie within the band.
 *
 * A regime with fewer than min_rows rows has no band of its own, and a
 * lookup falls back, level by level, to the first pooled regime that has
 * one:
 *
 *   0  family x engine x metric
 *   1  any family x engine x metric
 *   2  family x any engine x metric
 *   3  any family x any engine x metric
 *   4  all rows
 *
 * ("*" stands for "any" in the file.)  Level 4 exists whenever there is a
 * row, so every lookup of a built table answers.  A pooled regime's band
 * is the quantile over all its rows (what a family without rows of its own
 * gets), widened to the quantile over the rows that fall back to it when
 * there are min_rows of those, so that the rows of small groups are
 * covered as often as those of large ones.
 *
 * The file (models/calibration/uncertainty.json, built into the library)
 * records the measurements it came from (path, CRC-32, calibration commit)
 * and lists the regimes in a fixed order: by level, then family, engine and
 * metric.  A band of log width b says that the measured value lies in
 * [predicted e^-b, predicted e^b]; it is shown as +-100 (e^b - 1) %, the
 * wider side.
 */
#ifndef MODELS_UNCERT_H
#define MODELS_UNCERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/diag.h"

#define UNCERT_COVERAGE_DEFAULT 0.80
#define UNCERT_MIN_ROWS_DEFAULT 5
#define UNCERT_ID_MAX 64
#define UNCERT_LEVELS 5
#define UNCERT_REGIMES_MAX 4096
#define UNCERT_FILE_MAX_BYTES (1u << 20)

/* One out-of-sample error (strings borrowed for the call). */
struct uncert_sample {
	const char *family;
	const char *engine;
	const char *metric;
	double log_error;        /* ln(predicted / measured) */
};

struct uncert_regime {
	int level;                      /* 0..UNCERT_LEVELS-1 (see above) */
	char family[UNCERT_ID_MAX];     /* "*": any */
	char engine[UNCERT_ID_MAX];     /* "*": any */
	char metric[UNCERT_ID_MAX];     /* "*": any */
	size_t n;                       /* rows */
	size_t n_fallback;              /* of them, those no narrower regime
					   takes: the rows a lookup resolves here */
	double log_band;                /* the coverage quantile of |log error|
					   over the n rows, or over the
					   n_fallback rows when larger and
					   there are min_rows of them */
};

/* A dimension of the calibration set's coverage: the values of it the set
 * has rows of, and the band of a prediction for a value it has none of
 * (the coverage quantile of |ln(predicted / measured)| over the rows, each
 * predicted with parameters refitted without its value of the dimension:
 * leave-one-package-kind-out, and so on). */
#define UNCERT_DIMS_MAX 8
#define UNCERT_WHY_MAX (4 * UNCERT_ID_MAX + 48) /* uncert_widen's why */
#define UNCERT_COVERED_MAX 32
struct uncert_dim {
	char name[UNCERT_ID_MAX];       /* "package", "memory", "format", "engine" */
	char covered[UNCERT_COVERED_MAX][UNCERT_ID_MAX]; /* sorted */
	size_t n_covered;
	double log_band;
};

/* Where a prediction lies on those dimensions (NULL: not known, taken as
 * covered). */
struct uncert_point {
	const char *package;            /* catalog_package_kind */
	const char *memory;             /* catalog_memory_kind */
	const char *format;             /* weight format id */
	const char *engine;             /* engine profile id */
};

struct uncert_table {
	double coverage;                /* (0, 1) */
	size_t min_rows;                /* >= 1 */
	char grouping[UNCERT_ID_MAX];   /* how the errors were made out of sample
					   ("family") */
	char path[256];                 /* the measurements */
	char crc32[16];                 /* of their text, 8 hex digits */
	char commit[64];                /* calibration commit; "" unknown */
	struct uncert_regime *regimes;  /* sorted (see above) */
	size_t n;
	struct uncert_dim dims[UNCERT_DIMS_MAX]; /* the file's "extrapolation" */
	size_t n_dims;
};

/* What a lookup found. */
struct uncert_band {
	const struct uncert_regime *regime; /* borrowed from the table; NULL: none */
	double log_band;                /* 0 when none */
	double pct;                     /* +-% shown: 100 (e^log_band - 1) */
	double low_factor, high_factor; /* e^-b and e^b: measured / predicted */
};

void uncert_init(struct uncert_table *t);
void uncert_release(struct uncert_table *t);

/* Regimes from out-of-sample errors: every level's groups with at least
 * min_rows rows (level 4 with any).  0, DIAG_EINPUT (coverage outside
 * (0, 1), min_rows 0, no sample, an id too long or a non-finite error) or
 * DIAG_ENOMEM.  t is replaced; its header fields other than coverage and
 * min_rows are left for the caller. */
int uncert_build(struct uncert_table *t, const struct uncert_sample *s, size_t n,
		 double coverage, size_t min_rows, struct diag *d);

/* The band of (family, engine, metric), falling back as above; any of them
 * may be NULL (never matches a level that names it).  A table without
 * regimes gives a band with regime NULL. */
struct uncert_band uncert_lookup(const struct uncert_table *t, const char *family,
				 const char *engine, const char *metric);

/* b widened for every dimension of t on which p lies outside the
 * calibration set's coverage: the log band becomes the root of the sum of
 * the squares of b's and of each such dimension's band.  why (may be NULL)
 * receives "package multi-die, engine vllm" for those dimensions, "" when
 * none; returns how many there are. */
size_t uncert_widen(const struct uncert_table *t, const struct uncert_point *p,
		    struct uncert_band *b, char *why, size_t why_size);

/* "family x engine x metric" of a regime, "*" spelled "any" (buf). */
const char *uncert_regime_name(const struct uncert_regime *r, char *buf, size_t size);

/* The file; DIAG_EIO when a write fails. */
int uncert_write_json(FILE *out, const struct uncert_table *t, struct diag *d);

/* Parse a file's text; name is used in messages ("name: regimes[2].n:
 * expected ...").  0, DIAG_EINPUT or DIAG_ENOMEM; t is replaced. */
int uncert_parse(struct uncert_table *t, const char *name, const char *text, size_t len,
		 struct diag *d);

/* Load path, or the built-in table when path is NULL. */
int uncert_load(struct uncert_table *t, const char *path, struct diag *d);

/* The built-in file's text (static). */
const char *uncert_embedded_json(void);

#endif
