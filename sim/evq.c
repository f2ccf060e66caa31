/* SPDX-License-Identifier: Apache-2.0
 * evq: binary heap ordered by (t_ns, prio, seq). */
#include "sim/evq.h"

#include "base/diag.h"

#include <stdlib.h>

static bool ev_before(const struct event *a, const struct event *b)
{
	if (a->t_ns != b->t_ns)
		return a->t_ns < b->t_ns;
	if (a->prio != b->prio)
		return a->prio < b->prio;
	return a->seq < b->seq;
}

void evq_init(struct evq *q)
{
	q->heap = NULL;
	q->len = 0;
	q->cap = 0;
	q->next_seq = 0;
}

void evq_release(struct evq *q)
{
	free(q->heap);
	evq_init(q);
}

int evq_push(struct evq *q, const struct event *e)
{
	if (q->len == q->cap) {
		size_t ncap = q->cap ? q->cap * 2 : 256;
		struct event *h = realloc(q->heap, ncap * sizeof(*h));
		if (!h)
			return DIAG_ENOMEM;
		q->heap = h;
		q->cap = ncap;
	}
	struct event ev = *e;
	ev.seq = q->next_seq++;
	size_t i = q->len++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!ev_before(&ev, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = ev;
	return 0;
}

bool evq_pop(struct evq *q, struct event *out)
{
	if (q->len == 0)
		return false;
	*out = q->heap[0];
	struct event last = q->heap[--q->len];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= q->len)
			break;
		if (c + 1 < q->len && ev_before(&q->heap[c + 1], &q->heap[c]))
			c++;
		if (!ev_before(&q->heap[c], &last))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	if (q->len > 0)
		q->heap[i] = last;
	return true;
}

const struct event *evq_peek(const struct evq *q)
{
	return q->len ? &q->heap[0] : NULL;
}

bool evq_check(const struct evq *q)
{
	for (size_t i = 1; i < q->len; i++)
		if (ev_before(&q->heap[i], &q->heap[(i - 1) / 2]))
			return false;
	return true;
}
