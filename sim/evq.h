/* SPDX-License-Identifier: Apache-2.0
 * evq: the simulator's event queue, a binary min-heap of plain events.
 *
 * Events order by (t_ns, prio, seq): seq is a counter stamped at push, so two
 * events at the same time and priority come out in the order they went in and
 * every run with the same inputs pops the same sequence.  Events carry no
 * callback; the owner dispatches on `kind`.  Cancellation is lazy: the owner
 * stamps a generation into `gen` and ignores stale events when they pop
 * (cheaper than finding and removing them; costs one wasted pop each).
 *
 * Cost: push and pop are O(log n); the heap array grows by doubling.
 */
#ifndef SIM_EVQ_H
#define SIM_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event {
	int64_t t_ns;
	int32_t prio;     /* lower first among equal times */
	uint32_t kind;    /* owner-defined */
	uint64_t seq;     /* stamped by evq_push */
	uint64_t gen;     /* owner-defined, for lazy cancellation */
	void *obj;        /* owner-defined payload */
	int64_t arg;      /* owner-defined payload */
};

struct evq {
	struct event *heap;
	size_t len;
	size_t cap;
	uint64_t next_seq;
};

void evq_init(struct evq *q);
void evq_release(struct evq *q);

/* Push a copy of *e (its seq is overwritten); 0 or DIAG_ENOMEM. */
int evq_push(struct evq *q, const struct event *e);

/* Pop the earliest event into *out; false if empty. */
bool evq_pop(struct evq *q, struct event *out);

/* The earliest event without removing it, or NULL.  Valid until the next push/pop. */
const struct event *evq_peek(const struct evq *q);

static inline size_t evq_len(const struct evq *q) { return q->len; }

/* Heap property holds everywhere (for asserts and tests). */
bool evq_check(const struct evq *q);

#endif
