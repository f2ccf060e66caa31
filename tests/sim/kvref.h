/* SPDX-License-Identifier: Apache-2.0
 * kvref: the block-level KV cache the simulator used before its prefix index
 * was chained through the block records (sim/kvcache.h), kept as the oracle
 * the differential test (test_kvdiff.c) holds sim/kvcache.c to: same calls,
 * same answers, same evictions in the same order.  Its design note follows.
 *
 * The cache holds `total_blocks` blocks of `block_size` tokens.  A block is
 * in use (ref > 0, held by one or more requests' block tables) or free.  A
 * full block gets the chained content hash of its position (traces/prompt.h)
 * when the step that computes it is scheduled, as vLLM's allocate_slots caches
 * it, and is entered in `table`; when its last user releases it, it keeps
 * that hash and stays findable until it is evicted.  Two requests that
 * computed the same content hold two blocks with one hash: both stay
 * entered and servable (vLLM's BlockHashToBlockMap), a hit takes the one
 * entered first, and the hash leaves the table only with its last block.
 *
 * Free blocks sit in one LRU queue: allocation takes from the head, release
 * appends at the tail, and a hit on a free cached block takes it out of the
 * queue.  Blocks never used yet are handed out first, before anything in the
 * queue (as if they led the queue in id order, which is how vLLM's pool
 * starts), so memory grows with blocks actually touched, not with capacity.
 * Callers release a request's blocks tail first, so a prefix's head outlives
 * its tail.
 *
 * Invariants (kvref_check): a touched block is in the queue iff its ref is
 * 0; free_len counts the queue; every table entry maps a hash to the first of
 * a ring (dnext/dprev, in entry order) of the blocks that carry that hash,
 * and every hashed block is on its hash's ring; untouched blocks have no
 * state.  Each block also records when it last joined the queue (`stamp`,
 * increasing), so the queue is in stamp order.
 */
#ifndef TESTS_SIM_KVREF_H
#define TESTS_SIM_KVREF_H

#include "base/map.h"

#include <stdbool.h>
#include <stdint.h>

struct kvref {
	int64_t block_size;
	int64_t total_blocks;
	bool prefix_caching;
	int64_t touched;      /* blocks 0..touched-1 have been handed out once */
	int64_t cap;          /* allocated length of the per-block arrays */
	uint64_t *hash;       /* per block: content hash if `hashed` */
	unsigned char *hashed;
	int32_t *ref;
	int32_t *prev, *next; /* free queue links, -1 = none */
	int32_t *dprev, *dnext; /* ring of blocks with the same hash */
	uint64_t *stamp;      /* when the block last joined the free queue */
	uint64_t stamp_next;
	int32_t head, tail;   /* free queue ends, -1 if empty */
	int64_t free_len;
	int64_t reserved;     /* blocks set aside for running sequences' fixed
				 state (sliding windows, linear attention) */
	struct map table;     /* hash -> block id */
	int64_t evictions;    /* cached blocks whose hash was dropped to reuse them */
	/* called with the hash of each cached block evicted (a lower tier
	 * keeps it); NULL: none */
	void (*on_evict)(void *ctx, uint64_t hash);
	void *evict_ctx;
	int64_t duplicates;   /* blocks entered under a hash another block held */
};

/* 0, or DIAG_EINPUT if total_blocks is not in 1..2^31-1 (block ids are int32). */
int kvref_init(struct kvref *kv, int64_t block_size, int64_t total_blocks, bool prefix_caching);
void kvref_release(struct kvref *kv);

/* Forget every block, as a restarted engine does: the cache is as after
 * kvref_init, but keeps its eviction and duplicate counters and its
 * on_evict hook (the forgotten blocks are not passed to it).  Only when no
 * block is in use and nothing is reserved. */
void kvref_reset(struct kvref *kv);

/* Blocks that an allocation could obtain now (never used + free queue),
 * less those reserved. */
static inline int64_t kvref_available(const struct kvref *kv)
{
	return (kv->total_blocks - kv->touched) + kv->free_len - kv->reserved;
}

/* Number of leading hashes[0..n) present in the cache (0 without prefix
 * caching).  If `blocks` is not NULL, the matching block ids are stored in
 * blocks[0..result), so the caller need not look them up again. */
int64_t kvref_match(const struct kvref *kv, const uint64_t *hashes, int64_t n, int32_t *blocks);

/* Take a reference to cached block b (found by kvref_match). */
void kvref_take(struct kvref *kv, int32_t b);

/* Allocate a block (ref 1, no hash), evicting the least recently freed cached
 * block if needed; -1 if none is available. */
int32_t kvref_alloc(struct kvref *kv);

/* Give block b content hash h and enter it (after any other block with the
 * same hash).  0 or DIAG_ENOMEM. */
int kvref_register(struct kvref *kv, int32_t b, uint64_t h);

/* Drop one reference; at zero the block joins the tail of the free queue. */
void kvref_put(struct kvref *kv, int32_t b);

/* Of the next `limit` blocks an allocation would take (never used ones
 * first, then the free queue from its head), how many come before the first
 * free block whose stamp is at least `stamp`: at most limit. */
int64_t kvref_allocs_before(const struct kvref *kv, uint64_t stamp, int64_t limit);

/* Of the next `limit` blocks an allocation would take, how many come
 * before the first free block that carries a hash (whose eviction a lower
 * tier would see): at most limit. */
int64_t kvref_allocs_before_hashed(const struct kvref *kv, int64_t limit);

/* Blocks in use (ref > 0). */
int64_t kvref_used(const struct kvref *kv);

/* All invariants above hold. O(touched). */
bool kvref_check(const struct kvref *kv);

#endif
