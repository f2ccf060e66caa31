/* SPDX-License-Identifier: Apache-2.0
 * loghist: log-spaced weighted histogram (see loghist.h).
 *
 * Percentiles follow numpy's "linear" rule: for n samples, rank
 * r = p/100 * (n-1), and the answer interpolates between the order
 * statistics floor(r) and floor(r)+1.  The order statistic j is read from the
 * cumulative weight at j * n/(n-1) (written j + t with t = j/(n-1) so that the
 * comparison against integer cumulative weights stays exact): for point
 * masses this lands inside the mass holding rank j, and for a uniform spread
 * it lands where the j-th evenly spaced value lies.
 */
#include "reports/loghist.h"

#include "base/diag.h"

#include <math.h>
#include <stdlib.h>

static double loghist_ln_step(void)
{
	return log1p(1e-3);
}

double loghist_edge(size_t bin)
{
	return exp((double)bin * loghist_ln_step());
}

size_t loghist_bin(double x)
{
	if (!(x >= 1.0))
		return 0;
	double f = log(x) / loghist_ln_step();
	size_t b = f >= (double)(LOGHIST_BINS - 1) ? LOGHIST_BINS - 1 : (size_t)f;
	/* log() and exp() may disagree by an ulp at an edge: settle on edge(). */
	while (b + 1 < LOGHIST_BINS && x >= loghist_edge(b + 1))
		b++;
	while (b > 0 && x < loghist_edge(b))
		b--;
	return b;
}

void loghist_init(struct loghist *h)
{
	h->w = NULL;
	h->vmin = NULL;
	h->vmax = NULL;
	h->total = 0.0;
}

void loghist_release(struct loghist *h)
{
	free(h->w); /* one block holds all three arrays */
	loghist_init(h);
}

static void loghist_put(struct loghist *h, size_t b, double lo, double hi, double weight)
{
	if (h->w[b] <= 0.0) {
		h->vmin[b] = lo;
		h->vmax[b] = hi;
	} else {
		if (lo < h->vmin[b])
			h->vmin[b] = lo;
		if (hi > h->vmax[b])
			h->vmax[b] = hi;
	}
	h->w[b] += weight;
}

int loghist_add(struct loghist *h, double lo, double hi, double weight)
{
	if (!isfinite(lo) || !isfinite(hi) || lo < 0.0 || hi < 0.0 ||
	    !isfinite(weight) || weight < 0.0)
		return DIAG_EINPUT;
	if (weight == 0.0)
		return 0;
	if (!h->w) {
		double *p = calloc(3 * (size_t)LOGHIST_BINS, sizeof(double));
		if (!p)
			return DIAG_ENOMEM;
		h->w = p;
		h->vmin = p + LOGHIST_BINS;
		h->vmax = p + 2 * (size_t)LOGHIST_BINS;
	}
	if (lo > hi) {
		double tmp = lo;
		lo = hi;
		hi = tmp;
	}
	h->total += weight;
	size_t b0 = loghist_bin(lo);
	size_t b1 = loghist_bin(hi);
	if (b0 == b1) {
		loghist_put(h, b0, lo, hi, weight);
		return 0;
	}
	/* Spread over bins b0..b1 in proportion to the length each covers; the
	 * last bin takes what is left so the pieces sum to `weight` exactly. */
	double span = hi - lo;
	double left = weight;
	for (size_t b = b0; b <= b1; b++) {
		double seg_lo = b == b0 ? lo : loghist_edge(b);
		double seg_hi = b == b1 ? hi : loghist_edge(b + 1);
		double piece = b == b1 ? left : weight * ((seg_hi - seg_lo) / span);
		if (piece > left)
			piece = left;
		left -= piece;
		if (piece > 0.0)
			loghist_put(h, b, seg_lo, seg_hi, piece);
	}
	return 0;
}

bool loghist_check(const struct loghist *h)
{
	if (!h->w)
		return h->total == 0.0 && !h->vmin && !h->vmax;
	double sum = 0.0;
	for (size_t b = 0; b < LOGHIST_BINS; b++) {
		double w = h->w[b];
		if (!(w >= 0.0))
			return false;
		if (w == 0.0)
			continue;
		sum += w;
		if (!(h->vmin[b] <= h->vmax[b]))
			return false;
		if (b > 0 && h->vmin[b] < loghist_edge(b))
			return false;
		if (b + 1 < LOGHIST_BINS && h->vmax[b] > loghist_edge(b + 1))
			return false;
	}
	return fabs(sum - h->total) <= 1e-9 * h->total;
}

/* Order statistic j (0-based) of a sample of n = h->total values, n > 1. */
static double loghist_order_stat(const struct loghist *h, double j, double n)
{
	double t = j / (n - 1.0);
	double c = 0.0;
	size_t last = LOGHIST_BINS;
	for (size_t b = 0; b < LOGHIST_BINS; b++) {
		double w = h->w[b];
		if (w <= 0.0)
			continue;
		double k = j - c; /* exact while weights are integers below 2^53 */
		if (k + t <= w) {
			double lo = h->vmin[b], hi = h->vmax[b];
			if (hi <= lo)
				return lo;
			double f = (k + t) / w;
			if (f < 0.0)
				f = 0.0;
			if (f > 1.0)
				f = 1.0;
			return lo + f * (hi - lo);
		}
		c += w;
		last = b;
	}
	/* Rounding of fractional pieces can leave the target past the end. */
	return last < LOGHIST_BINS ? h->vmax[last] : 0.0;
}

double loghist_percentile(const struct loghist *h, double p)
{
	if (!h->w || !(h->total > 0.0))
		return 0.0;
	if (!(p > 0.0))
		p = 0.0;
	if (p > 100.0)
		p = 100.0;
	double n = h->total;
	if (n <= 1.0)
		return loghist_order_stat(h, 0.0, 2.0); /* t = 0: the smallest value */
	double r = p / 100.0 * (n - 1.0);
	double j = floor(r);
	double frac = r - j;
	double v0 = loghist_order_stat(h, j, n);
	if (frac <= 0.0)
		return v0;
	double v1 = loghist_order_stat(h, j + 1.0, n);
	return v0 + frac * (v1 - v0);
}
