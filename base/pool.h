/* SPDX-License-Identifier: Apache-2.0
 * pool: a fixed set of threads that run independent tasks, for the
 * planners that run many simulations (size, compare, sweeps).
 *
 * A pool of `jobs` runs at most `jobs` tasks at once: jobs - 1 worker
 * threads, and the thread that waits for a group, which runs the group's
 * own queued tasks while it waits instead of sleeping.  Tasks are grouped:
 * pool_group_new, pool_run for each task, pool_group_finish waits for all
 * of them.  A task may itself open a group and wait for it (a search per
 * hardware option whose replicates are tasks too): a waiting thread only
 * takes tasks of the group it waits for, so it is never held up by an
 * unrelated long task, and no wait can deadlock (every task of the group
 * is either queued, and the waiter runs it, or running on another thread).
 *
 * With jobs 1, or no pool at all (NULL), pool_run runs the task at once in
 * the calling thread: the tasks run one after another in submission order,
 * exactly as a plain loop would.
 *
 * Invariants a caller must keep: a task's argument stays valid until its
 * group is finished; tasks share nothing mutable unless they synchronise it
 * themselves; results are collected after pool_group_finish, in a fixed
 * order, so what a planner prints does not depend on jobs or on which task
 * finished first.  The pool holds no global state; each pool is
 * independent.
 */
#ifndef BASE_POOL_H
#define BASE_POOL_H

#include <stdint.h>

struct diag;
struct pool;
struct pool_group;

typedef void (*pool_fn)(void *arg);

#define POOL_MAX_JOBS 256

/* A pool running at most jobs (1..POOL_MAX_JOBS) tasks at once.  0, or
 * DIAG_EINPUT (jobs out of range), DIAG_ENOMEM or DIAG_EINTERNAL (a thread
 * could not be started) with d filled and *out NULL. */
int pool_new(struct pool **out, int32_t jobs, struct diag *d);

/* Stop the threads (after the tasks already queued) and free; NULL is
 * fine.  Every group must be finished first. */
void pool_free(struct pool *p);

/* Tasks at once: the jobs given to pool_new, 1 for NULL. */
int32_t pool_jobs(const struct pool *p);

/* A new group of tasks on p (NULL: tasks run at once in the caller).  NULL
 * when out of memory; pool_run and pool_group_finish accept a NULL group
 * and then run each task at once, so a caller needs no error path. */
struct pool_group *pool_group_new(struct pool *p);

/* Queue fn(arg) in group g.  When the pool has one job, or the queue entry
 * cannot be allocated, fn runs at once in the calling thread. */
void pool_run(struct pool_group *g, pool_fn fn, void *arg);

/* Wait until every task of g has run, running g's queued tasks in this
 * thread meanwhile, then free g. */
void pool_group_finish(struct pool_group *g);

#endif
