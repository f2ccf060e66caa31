/* SPDX-License-Identifier: Apache-2.0
 * test_pool: the thread pool the planners run simulations on.
 *   - every task of a group has run when pool_group_finish returns, with
 *     1, 2 and 4 jobs, and with no pool at all;
 *   - with one job (or no pool) tasks run at once, in submission order;
 *   - a task may open its own group and wait for it (nested groups, as a
 *     search per hardware option with its replicates as tasks) without
 *     deadlocking, even when every thread is waiting at once;
 *   - at most `jobs` tasks run at the same time;
 *   - jobs out of range is an input error naming the range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "base/diag.h"
#include "base/pool.h"

#define N_TASKS 64

struct counter {
	atomic_int ran;
	atomic_int running, peak;
	int order[N_TASKS];
	atomic_int next;
};

struct leaf {
	struct counter *c;
	int id;
};

static void leaf_run(void *arg)
{
	struct leaf *l = arg;
	int now = atomic_fetch_add(&l->c->running, 1) + 1;
	int peak = atomic_load(&l->c->peak);
	while (now > peak && !atomic_compare_exchange_weak(&l->c->peak, &peak, now))
		;
	struct timespec ts = {0, 200000}; /* 0.2 ms: let tasks overlap */
	nanosleep(&ts, NULL);
	int at = atomic_fetch_add(&l->c->next, 1);
	if (at < N_TASKS)
		l->c->order[at] = l->id;
	atomic_fetch_sub(&l->c->running, 1);
	atomic_fetch_add(&l->c->ran, 1);
}

static void run_flat(struct pool *p, struct counter *c)
{
	struct leaf l[N_TASKS];
	struct pool_group *g = pool_group_new(p);
	for (int i = 0; i < N_TASKS; i++) {
		l[i] = (struct leaf){.c = c, .id = i};
		pool_run(g, leaf_run, &l[i]);
	}
	pool_group_finish(g);
}

static void test_flat(void **state)
{
	(void)state;
	static const int32_t JOBS[] = {1, 2, 4};
	for (size_t j = 0; j < sizeof(JOBS) / sizeof(JOBS[0]); j++) {
		struct diag d;
		diag_init(&d);
		struct pool *p = NULL;
		assert_int_equal(pool_new(&p, JOBS[j], &d), 0);
		assert_int_equal(pool_jobs(p), JOBS[j]);
		struct counter c;
		memset(&c, 0, sizeof(c));
		run_flat(p, &c);
		assert_int_equal(atomic_load(&c.ran), N_TASKS);
		assert_true(atomic_load(&c.peak) <= JOBS[j]);
		if (JOBS[j] == 1) {
			for (int i = 0; i < N_TASKS; i++)
				assert_int_equal(c.order[i], i);
		}
		print_message("jobs %d: %d tasks, at most %d at once\n", JOBS[j],
			      atomic_load(&c.ran), atomic_load(&c.peak));
		pool_free(p);
	}
	/* no pool: at once, in order */
	struct counter c;
	memset(&c, 0, sizeof(c));
	run_flat(NULL, &c);
	assert_int_equal(atomic_load(&c.ran), N_TASKS);
	assert_int_equal(atomic_load(&c.peak), 1);
	for (int i = 0; i < N_TASKS; i++)
		assert_int_equal(c.order[i], i);
	assert_int_equal(pool_jobs(NULL), 1);
}

/* An outer task that opens a group of leaves and waits for it. */
struct outer {
	struct pool *p;
	struct counter *c;
	struct leaf l[8];
};

static void outer_run(void *arg)
{
	struct outer *o = arg;
	struct pool_group *g = pool_group_new(o->p);
	for (int i = 0; i < 8; i++) {
		o->l[i] = (struct leaf){.c = o->c, .id = i};
		pool_run(g, leaf_run, &o->l[i]);
	}
	pool_group_finish(g);
}

static void test_nested(void **state)
{
	(void)state;
	for (int32_t jobs = 1; jobs <= 4; jobs++) {
		struct diag d;
		diag_init(&d);
		struct pool *p = NULL;
		assert_int_equal(pool_new(&p, jobs, &d), 0);
		struct counter c;
		memset(&c, 0, sizeof(c));
		struct outer o[6];
		struct pool_group *g = pool_group_new(p);
		for (int i = 0; i < 6; i++) {
			o[i] = (struct outer){.p = p, .c = &c};
			pool_run(g, outer_run, &o[i]);
		}
		pool_group_finish(g);
		assert_int_equal(atomic_load(&c.ran), 6 * 8);
		assert_true(atomic_load(&c.peak) <= jobs);
		pool_free(p);
	}
}

static void test_bad_jobs(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	struct pool *p = (struct pool *)&d;
	assert_int_equal(pool_new(&p, 0, &d), DIAG_EINPUT);
	assert_null(p);
	assert_non_null(strstr(d.msg, "expected 1..256"));
	diag_init(&d);
	assert_int_equal(pool_new(&p, POOL_MAX_JOBS + 1, &d), DIAG_EINPUT);
	pool_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flat),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_bad_jobs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
