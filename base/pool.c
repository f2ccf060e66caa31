/* SPDX-License-Identifier: Apache-2.0
 * pool: worker threads over one FIFO queue of tasks (see pool.h).
 *
 * One mutex guards the queue, every group's count of unfinished tasks and
 * the stop flag.  `work` wakes workers when a task is queued or the pool
 * stops; `done` wakes waiters when any task finishes (each rechecks its own
 * group).  A group's `pending` counts its tasks queued or running; it is 0
 * exactly when pool_group_finish may return.  The queue is walked to find a
 * waiter's own tasks: O(queued tasks), which are a few hundred at most. */
#include "base/pool.h"

#include "base/diag.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct pool_task {
	struct pool_task *next;
	struct pool_group *g;
	pool_fn fn;
	void *arg;
};

struct pool {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct pool_task *head, *tail;
	bool stop;
	int32_t jobs;
	int32_t n_threads;  /* started */
	pthread_t threads[POOL_MAX_JOBS];
};

struct pool_group {
	struct pool *p;
	int64_t pending;
};

/* Unlink t (preceded by prev, NULL at the head) from the queue; mu held. */
static void unlink_task(struct pool *p, struct pool_task *prev, struct pool_task *t)
{
	if (prev)
		prev->next = t->next;
	else
		p->head = t->next;
	if (p->tail == t)
		p->tail = prev;
}

/* Run t outside the lock, then count it done; mu held on entry and exit. */
static void run_task(struct pool *p, struct pool_task *t)
{
	pthread_mutex_unlock(&p->mu);
	t->fn(t->arg);
	struct pool_group *g = t->g;
	free(t);
	pthread_mutex_lock(&p->mu);
	if (--g->pending == 0)
		pthread_cond_broadcast(&p->done);
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->head && !p->stop)
			pthread_cond_wait(&p->work, &p->mu);
		if (!p->head)
			break; /* stopping, nothing left */
		struct pool_task *t = p->head;
		unlink_task(p, NULL, t);
		run_task(p, t);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int pool_new(struct pool **out, int32_t jobs, struct diag *d)
{
	*out = NULL;
	if (jobs < 1 || jobs > POOL_MAX_JOBS)
		return diag_set(d, DIAG_EINPUT, "--jobs %d (expected 1..%d)", (int)jobs,
				POOL_MAX_JOBS);
	struct pool *p = calloc(1, sizeof(*p));
	if (!p)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	p->jobs = jobs;
	if (pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p);
		return diag_set(d, DIAG_EINTERNAL, "pool: cannot make a mutex");
	}
	if (pthread_cond_init(&p->work, NULL) != 0) {
		pthread_mutex_destroy(&p->mu);
		free(p);
		return diag_set(d, DIAG_EINTERNAL, "pool: cannot make a condition variable");
	}
	if (pthread_cond_init(&p->done, NULL) != 0) {
		pthread_cond_destroy(&p->work);
		pthread_mutex_destroy(&p->mu);
		free(p);
		return diag_set(d, DIAG_EINTERNAL, "pool: cannot make a condition variable");
	}
	for (int32_t i = 0; i < jobs - 1; i++) {
		int e = pthread_create(&p->threads[i], NULL, worker, p);
		if (e != 0) {
			pool_free(p);
			return diag_set(d, DIAG_ENOMEM, "cannot start thread %d of %d: %s (expected "
					"room for %d threads: run with fewer --jobs, or raise the "
					"memory or process limit)", (int)i + 1, (int)jobs - 1,
					strerror(e), (int)jobs - 1);
		}
		p->n_threads++;
	}
	*out = p;
	return 0;
}

void pool_free(struct pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (int32_t i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

int32_t pool_jobs(const struct pool *p)
{
	return p ? p->jobs : 1;
}

struct pool_group *pool_group_new(struct pool *p)
{
	if (!p)
		return NULL;
	struct pool_group *g = calloc(1, sizeof(*g));
	if (g)
		g->p = p;
	return g;
}

void pool_run(struct pool_group *g, pool_fn fn, void *arg)
{
	struct pool_task *t = g && g->p->jobs > 1 ? malloc(sizeof(*t)) : NULL;
	if (!t) {
		fn(arg);
		return;
	}
	*t = (struct pool_task){.g = g, .fn = fn, .arg = arg};
	struct pool *p = g->p;
	pthread_mutex_lock(&p->mu);
	if (p->tail)
		p->tail->next = t;
	else
		p->head = t;
	p->tail = t;
	g->pending++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
}

void pool_group_finish(struct pool_group *g)
{
	if (!g)
		return;
	struct pool *p = g->p;
	pthread_mutex_lock(&p->mu);
	while (g->pending > 0) {
		struct pool_task *prev = NULL, *t = p->head;
		while (t && t->g != g) {
			prev = t;
			t = t->next;
		}
		if (t) {
			unlink_task(p, prev, t);
			run_task(p, t);
		} else {
			pthread_cond_wait(&p->done, &p->mu);
		}
	}
	pthread_mutex_unlock(&p->mu);
	free(g);
}
