/* SPDX-License-Identifier: Apache-2.0
 * kvtier: a lower tier of KV cache below GPU caches (host DRAM, or a disk
 * or remote store), as LMCache or vLLM's CPU offloading keep one.
 *
 * A tier holds up to `capacity` blocks, known by their content hash (the
 * same chained hash the GPU cache enters them under; a sliding-window
 * group's blocks under their group's key).  Blocks arrive when a GPU cache
 * evicts them (demotion) or, written through, when a prefill computes them
 * (sim.h, enum sim_tier_mode), and are kept in LRU order: a new or loaded block
 * becomes the most recent, and a full tier passes its least recent block to
 * the tier below it (`lower`), or drops it.  A tier may serve several
 * replicas (one node's, LMCache-style); it never holds a block twice.
 *
 * Invariants (kvtier_check): `len` blocks are on the list from lru to mru
 * (links prev/next, -1 at the ends), each indexed by its hash in `index`;
 * len <= capacity.
 */
#ifndef SIM_KVTIER_H
#define SIM_KVTIER_H

#include "base/map.h"

#include <stdbool.h>
#include <stdint.h>

struct kvtier {
	int64_t capacity;      /* blocks */
	double ns_per_block;   /* time to load one block into a replica's GPUs */
	struct kvtier *lower;  /* where evicted blocks go; NULL: dropped */
	struct map index;      /* hash -> slot */
	uint64_t *hash;        /* per slot */
	int32_t *prev, *next;  /* LRU list, -1 = none */
	int64_t len, cap;      /* slots in use, slots allocated */
	int32_t lru, mru;
	int64_t stored;        /* blocks that arrived */
	int64_t evicted;       /* blocks pushed out for room */
	int64_t loaded;        /* blocks loaded back into a GPU */
	int err;               /* first allocation failure (DIAG_ENOMEM) */
};

/* 0, or DIAG_EINPUT if capacity is not in 1..2^31-1. */
int kvtier_init(struct kvtier *t, int64_t capacity, double ns_per_block, struct kvtier *lower);
void kvtier_release(struct kvtier *t);

/* The block with hash h arrived (a GPU cache evicted it, or a prefill
 * wrote it through): keep it as the most recent,
 * making room first.  A failure to grow the tier's arrays is recorded in
 * t->err (the block is then dropped). */
void kvtier_put(struct kvtier *t, uint64_t h);

/* Whether this tier holds h (not the tiers below). */
bool kvtier_has(const struct kvtier *t, uint64_t h);

/* The block h is being loaded into a GPU: count it and make it the most
 * recent.  h must be held. */
void kvtier_load(struct kvtier *t, uint64_t h);

/* All invariants above hold. O(len). */
bool kvtier_check(const struct kvtier *t);

#endif
