/* SPDX-License-Identifier: Apache-2.0
 * Tests for reports/loghist: bin edges, exact percentiles for point masses
 * (against numpy's linear rule on the expanded samples), exact answers for a
 * single uniform spread, clamping outside 1 .. 1e13, large weights, and bad
 * input.
 */
#include "reports/loghist.h"

#include "base/diag.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#define NEAR(got, want, tol)                                                          \
	do {                                                                          \
		double g_ = (got), w_ = (want);                                       \
		if (!(fabs(g_ - w_) <= (tol) * fmax(1.0, fabs(w_)))) {                \
			print_error("%s = %.17g, want %.17g\n", #got, g_, w_);        \
			fail();                                                       \
		}                                                                     \
	} while (0)

/* numpy.percentile(x, p) with the default linear method; x sorted. */
static double ref_percentile(const double *x, size_t n, double p)
{
	double r = p / 100.0 * (double)(n - 1);
	size_t j = (size_t)floor(r);
	double f = r - (double)j;
	if (j + 1 >= n)
		return x[n - 1];
	return x[j] + f * (x[j + 1] - x[j]);
}

static const double ps[] = {0, 1, 5, 10, 25, 33.3, 50, 66.7, 75, 80, 85, 90, 95, 99, 99.9, 100};
#define NPS (sizeof(ps) / sizeof(ps[0]))

static void test_bins(void **state)
{
	(void)state;
	assert_true(loghist_edge(0) == 1.0);
	assert_int_equal(loghist_bin(0.0), 0);
	assert_int_equal(loghist_bin(0.5), 0);
	assert_int_equal(loghist_bin(1.0), 0);
	assert_int_equal(loghist_bin(1.0005), 0);
	assert_int_equal(loghist_bin(1.0015), 1);
	assert_int_equal(loghist_bin(1e30), LOGHIST_BINS - 1);
	assert_true(loghist_edge(LOGHIST_BINS) >= 1e13);
	assert_true(loghist_edge(LOGHIST_BINS - 1) < 1e13);
	size_t probe[] = {1, 2, 17, 1000, 12345, 20000, LOGHIST_BINS - 1};
	for (size_t i = 0; i < sizeof(probe) / sizeof(probe[0]); i++) {
		size_t b = probe[i];
		double e = loghist_edge(b);
		assert_int_equal(loghist_bin(e), b);
		assert_int_equal(loghist_bin(nextafter(e, 0.0)), b - 1);
		NEAR(loghist_edge(b + 1) / e - 1.0, 1e-3, 1e-9);
	}
}

static void test_point_masses_exact(void **state)
{
	(void)state;
	struct {
		double v, w;
	} masses[] = {{20e6, 8}, {40e6, 2}, {10e6, 1}, {30e6, 1}, {20.05e6, 3}, {7, 2}, {123456.789, 1}};
	double x[64];
	size_t n = 0;
	struct loghist h;
	loghist_init(&h);
	for (size_t i = 0; i < sizeof(masses) / sizeof(masses[0]); i++) {
		assert_int_equal(loghist_add(&h, masses[i].v, masses[i].v, masses[i].w), 0);
		for (int k = 0; k < (int)masses[i].w; k++)
			x[n++] = masses[i].v;
	}
	NEAR(h.total, (double)n, 0);
	assert_true(loghist_check(&h));
	/* insertion sort is enough for a handful */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && x[j - 1] > x[j]; j--) {
			double t = x[j];
			x[j] = x[j - 1];
			x[j - 1] = t;
		}
	for (size_t i = 0; i < NPS; i++)
		NEAR(loghist_percentile(&h, ps[i]), ref_percentile(x, n, ps[i]), 1e-12);
	/* out-of-range p is clamped */
	NEAR(loghist_percentile(&h, -5), x[0], 0);
	NEAR(loghist_percentile(&h, 250), x[n - 1], 0);
	loghist_release(&h);
	loghist_release(&h); /* release leaves an empty histogram */
}

/* One spread of weight k over [lo, hi] answers for k evenly spaced values. */
static void test_single_spread_exact(void **state)
{
	(void)state;
	struct loghist h;
	loghist_init(&h);
	assert_true(loghist_check(&h));
	assert_int_equal(loghist_add(&h, 700.0, 100.0, 7), 0); /* either order */
	assert_true(loghist_check(&h));
	double x[7];
	for (int i = 0; i < 7; i++)
		x[i] = 100.0 + 100.0 * i;
	for (size_t i = 0; i < NPS; i++)
		NEAR(loghist_percentile(&h, ps[i]), ref_percentile(x, 7, ps[i]), 1e-9);
	loghist_release(&h);

	/* a spread inside one bin, and one from below 1 to above 1e13 */
	loghist_init(&h);
	assert_int_equal(loghist_add(&h, 1000.0, 1000.5, 2), 0);
	NEAR(loghist_percentile(&h, 50), 1000.25, 1e-15);
	NEAR(loghist_percentile(&h, 100), 1000.5, 1e-15);
	loghist_release(&h);
	loghist_init(&h);
	assert_int_equal(loghist_add(&h, 0.0, 2e13, 3), 0);
	assert_true(loghist_check(&h));
	NEAR(loghist_percentile(&h, 0), 0.0, 0);
	NEAR(loghist_percentile(&h, 50), 1e13, 1e-6);
	NEAR(loghist_percentile(&h, 100), 2e13, 1e-12);
	loghist_release(&h);
}

/* Two distinct values closer than a bin width share a bin: the answer is
 * then only within the bin's 0.1%. */
static void test_shared_bin_within_resolution(void **state)
{
	(void)state;
	struct loghist h;
	loghist_init(&h);
	assert_int_equal(loghist_add(&h, 20.0e6, 20.0e6, 3), 0);
	assert_int_equal(loghist_add(&h, 20.01e6, 20.01e6, 1), 0);
	double x[] = {20.0e6, 20.0e6, 20.0e6, 20.01e6};
	for (size_t i = 0; i < NPS; i++) {
		double want = ref_percentile(x, 4, ps[i]);
		assert_true(fabs(loghist_percentile(&h, ps[i]) - want) <= 1e-3 * want);
	}
	loghist_release(&h);
}

/* Values outside 1 .. 1e13 share the end bins but keep their order. */
static void test_clamped_ends(void **state)
{
	(void)state;
	struct loghist h;
	loghist_init(&h);
	assert_int_equal(loghist_add(&h, 0.25, 0.25, 1), 0);
	assert_int_equal(loghist_add(&h, 5e13, 5e13, 1), 0);
	assert_int_equal(loghist_add(&h, 50.0, 50.0, 1), 0);
	NEAR(loghist_percentile(&h, 0), 0.25, 0);
	NEAR(loghist_percentile(&h, 50), 50.0, 0);
	NEAR(loghist_percentile(&h, 100), 5e13, 0);
	NEAR(loghist_percentile(&h, 25), (0.25 + 50.0) / 2, 1e-15);
	loghist_release(&h);
}

/* With 10^12 samples the rank arithmetic must still pick the right mass. */
static void test_large_weights(void **state)
{
	(void)state;
	struct loghist h;
	loghist_init(&h);
	assert_int_equal(loghist_add(&h, 20.0, 20.0, 4e11), 0);
	assert_int_equal(loghist_add(&h, 10.0, 10.0, 6e11), 0);
	/* rank 0.6 * (1e12 - 1) = 599999999999.4 lies between the last 10 and the first 20 */
	assert_true(loghist_check(&h));
	NEAR(loghist_percentile(&h, 60), 14.0, 1e-4);
	NEAR(loghist_percentile(&h, 59.9), 10.0, 0);
	NEAR(loghist_percentile(&h, 60.1), 20.0, 0);
	loghist_release(&h);
}

static void test_bad_input(void **state)
{
	(void)state;
	struct loghist h;
	loghist_init(&h);
	assert_true(loghist_percentile(&h, 50) == 0.0);
	assert_int_equal(loghist_add(&h, -1.0, 3.0, 1), DIAG_EINPUT);
	assert_int_equal(loghist_add(&h, 1.0, INFINITY, 1), DIAG_EINPUT);
	assert_int_equal(loghist_add(&h, NAN, 1.0, 1), DIAG_EINPUT);
	assert_int_equal(loghist_add(&h, 1.0, 2.0, -1), DIAG_EINPUT);
	assert_int_equal(loghist_add(&h, 1.0, 2.0, NAN), DIAG_EINPUT);
	assert_int_equal(loghist_add(&h, 1.0, 2.0, 0), 0);
	assert_null(h.w); /* nothing added, nothing allocated */
	assert_true(loghist_percentile(&h, 50) == 0.0);
	/* a single value answers every percentile */
	assert_int_equal(loghist_add(&h, 42.0, 42.0, 1), 0);
	assert_true(loghist_percentile(&h, 0) == 42.0);
	assert_true(loghist_percentile(&h, 99) == 42.0);
	loghist_release(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bins),
		cmocka_unit_test(test_point_masses_exact),
		cmocka_unit_test(test_single_spread_exact),
		cmocka_unit_test(test_shared_bin_within_resolution),
		cmocka_unit_test(test_clamped_ends),
		cmocka_unit_test(test_large_weights),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
