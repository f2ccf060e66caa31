/* SPDX-License-Identifier: Apache-2.0
 * loghist: a weighted histogram on log-spaced bins for percentiles of values
 * that arrive in bulk (every inter-token latency of a run).
 *
 * Bin j covers [g^j, g^(j+1)) with g = 1.001, so a bin is 0.1% wide relative
 * to its lower edge; the bins span 1 .. 1e13 (in whatever unit the caller
 * uses: ns for ITLs), and values outside fall into the first or last bin.
 * Weight arrives either as a point mass (lo == hi) or spread uniformly over
 * [lo, hi], which costs O(bins spanned).  Each bin also remembers the
 * smallest and largest value that landed in it, and percentiles interpolate
 * between those, so:
 *   - a histogram made only of point masses with integer weights, no two
 *     distinct values in one bin, answers exactly what numpy.percentile
 *     (linear) gives for the expanded samples;
 *   - one uniform spread of weight k over [lo, hi] answers exactly what
 *     numpy gives for the k evenly spaced values lo .. hi (up to rounding);
 *   - otherwise the bins add an error of at most one bin width, 0.1% of the
 *     value (values below 1 or above 1e13 share the end bins).
 * Invariant: total equals the sum of the weights added; bins are allocated on
 * the first add (3 arrays of LOGHIST_BINS doubles, about 720 KB).
 */
#ifndef REPORTS_LOGHIST_H
#define REPORTS_LOGHIST_H

#include <stdbool.h>
#include <stddef.h>

/* ceil(ln(1e13) / ln(1.001)): the top edge, 1.001^29949, is just above 1e13. */
#define LOGHIST_BINS 29949

struct loghist {
	double *w;      /* weight per bin; NULL until the first add */
	double *vmin;   /* smallest value added to the bin (valid when w > 0) */
	double *vmax;   /* largest value added to the bin (valid when w > 0) */
	double total;   /* sum of all weights added */
};

void loghist_init(struct loghist *h);
void loghist_release(struct loghist *h);

/* Add `weight` spread uniformly over [lo, hi] (a point mass when lo == hi;
 * lo and hi may come in either order).  Returns 0, DIAG_EINPUT when a value
 * is negative or not finite or the weight is negative or not finite, or
 * DIAG_ENOMEM when the bins cannot be allocated.  A zero weight is a no-op. */
int loghist_add(struct loghist *h, double lo, double hi, double weight);

/* The p-th percentile (0 <= p <= 100, clamped) with numpy's default
 * "linear" rule applied to a sample of `total` values; 0 when empty. */
double loghist_percentile(const struct loghist *h, double p);

/* The invariants: bin weights non-negative and summing to total (to
 * rounding), each non-empty bin's vmin <= vmax inside its edges.  O(bins);
 * for asserts and tests. */
bool loghist_check(const struct loghist *h);

/* Bin index of a value (clamped to 0 .. LOGHIST_BINS-1) and a bin's lower
 * edge, exposed for tests. */
size_t loghist_bin(double x);
double loghist_edge(size_t bin);

#endif
