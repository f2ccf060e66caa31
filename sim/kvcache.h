/* SPDX-License-Identifier: Apache-2.0
 * kvcache: one replica's paged KV cache with automatic prefix caching.
 *
 * The cache holds `total_blocks` blocks of `block_size` tokens.  A block is
 * in use (ref > 0, held by one or more requests' block tables) or free.  A
 * full block gets the chained content hash of its position (traces/prompt.h)
 * when the step that computes it is scheduled, as vLLM's allocate_slots caches
 * it, and is entered in the prefix table; when its last user releases it, it
 * keeps that hash and stays findable until it is evicted.  Two requests that
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
 * Blocks live in one array of records (struct kvblock), so the few fields an
 * operation touches share a cache line.  The prefix table is a chained hash
 * index threaded through the blocks themselves: `bucket` holds the first
 * block of each chain, and a block carrying a hash sits on its bucket's
 * chain (hprev/hnext), appended at the end when entered.  A look-up returns
 * the first block on the chain with that hash, which is the one of its
 * blocks entered first; entering or dropping a block is O(chain length)
 * and O(1), with no table of its own to probe, grow or shift.
 *
 * Invariants (kvcache_check): a touched block is in the queue iff its ref is
 * 0; free_len counts the queue; a block is on the chain of the bucket its
 * hash maps to iff it is hashed, and `indexed` counts them; untouched blocks
 * have no state.  Each block also records when it last joined the queue
 * (`stamp`, increasing), so the queue is in stamp order.
 *
 * Retention across tool pauses (kvcache_retain_config; off by default).  A
 * finished call's blocks may be released as retained until an expiry time
 * (kvcache_put_retained): they then join a second queue, the retained
 * queue, instead of the LRU queue.  Allocation takes never-used blocks, then
 * the LRU queue, and only when both are empty the retained queue from its
 * head (the oldest retained block first), so retention never refuses an
 * admission: it gives way, counted in retain_forced.  Every block joins the
 * retained queue with the same time to live, so the queue is in expiry
 * order as well as stamp order, and its expired blocks are a prefix of it:
 * kvcache_retain_expire marks them expired where they stand, and from then
 * on allocation takes the older of the LRU queue's head and the first
 * expired block, so they are evicted as plain LRU would (a merge of two
 * queues in stamp order, never a walk to move a block).  At most
 * retain_cap blocks stay retained: a release past the cap expires the
 * oldest retained blocks at once.  A hit takes a retained block out of the
 * queue as it does a free one.
 *
 * Invariants added (kvcache_check): a free block is on exactly one of the
 * two queues (`retained_q` says which); each queue is in stamp order;
 * the retained queue is in expiry order, its expired blocks (rexpired of
 * them) before rlive and its retained ones (`retained`) from rlive on;
 * free_len counts both queues, and retained <= retain_cap.
 */
#ifndef SIM_KVCACHE_H
#define SIM_KVCACHE_H

#include <stdbool.h>
#include <stdint.h>

struct kvblock {
	uint64_t hash;    /* content hash if `hashed` */
	uint64_t stamp;   /* when the block last joined the free queue */
	int32_t ref;
	int32_t prev, next;   /* free queue links, -1 = none */
	int32_t hprev, hnext; /* chain of its hash bucket, -1 = none */
	int32_t hashed;
	int32_t retained_q;   /* free and on the retained queue: 1 retained,
				 2 expired (kvcache.c, RQ_*) */
	int64_t expire_ns;    /* retained until then (on the retained queue) */
};

struct kvcache {
	int64_t block_size;
	int64_t total_blocks;
	bool prefix_caching;
	int64_t touched;      /* blocks 0..touched-1 have been handed out once */
	int64_t cap;          /* allocated length of `blk` */
	struct kvblock *blk;
	int32_t *bucket;      /* first block of each hash chain, -1 = none */
	int bucket_bits;      /* 1 << bucket_bits buckets (0: no array yet) */
	int64_t indexed;      /* hashed blocks, all on their chains */
	uint64_t stamp_next;
	int32_t head, tail;   /* free queue ends, -1 if empty */
	int64_t free_len;
	int64_t reserved;     /* blocks set aside for running sequences' fixed
				 state (sliding windows, linear attention) */
	int64_t evictions;    /* cached blocks whose hash was dropped to reuse them */
	/* called with the hash of each cached block evicted (a lower tier
	 * keeps it); NULL: none */
	void (*on_evict)(void *ctx, uint64_t hash);
	void *evict_ctx;
	int64_t duplicates;   /* blocks entered under a hash another block held */
	/* retention (see above); retain_cap 0: off */
	int64_t retain_cap;      /* most blocks the retained queue may hold */
	int32_t rhead, rtail;    /* retained queue ends, -1 if empty */
	int32_t rlive;           /* its first block still retained, -1 if none */
	int64_t retained;        /* blocks on it still retained (counted in
				    free_len too) */
	int64_t rexpired;        /* blocks before rlive: expired, evicted in
				    stamp order with the LRU queue */
	int64_t retain_peak;     /* most blocks it held at once */
	int64_t retain_hits;     /* retained blocks taken by a prefix hit */
	int64_t retain_forced;   /* retained blocks evicted because nothing
				    else was free */
	int64_t retain_capped;   /* retained blocks expired early by the cap */
	int64_t retain_avoided;  /* evictions that took an LRU block while an
				    older block was retained: plain LRU would
				    have evicted a retained block there */
};

/* 0, or DIAG_EINPUT if total_blocks is not in 1..2^31-1 (block ids are int32). */
int kvcache_init(struct kvcache *kv, int64_t block_size, int64_t total_blocks, bool prefix_caching);
void kvcache_release(struct kvcache *kv);

/* Forget every block, as a restarted engine does: the cache is as after
 * kvcache_init, but keeps its eviction and duplicate counters and its
 * on_evict hook (the forgotten blocks are not passed to it).  Only when no
 * block is in use and nothing is reserved. */
void kvcache_reset(struct kvcache *kv);

/* Blocks that an allocation could obtain now (never used + free queue),
 * less those reserved. */
static inline int64_t kvcache_available(const struct kvcache *kv)
{
	return (kv->total_blocks - kv->touched) + kv->free_len - kv->reserved;
}

/* The first-entered block carrying hash h, or -1 (also without prefix
 * caching).  O(chain length). */
int32_t kvcache_lookup(const struct kvcache *kv, uint64_t h);

/* Block b's reference count and the stamp it last joined the queue with. */
static inline int32_t kvcache_ref(const struct kvcache *kv, int32_t b)
{
	return kv->blk[b].ref;
}

static inline uint64_t kvcache_stamp(const struct kvcache *kv, int32_t b)
{
	return kv->blk[b].stamp;
}

/* Number of leading hashes[0..n) present in the cache (0 without prefix
 * caching).  If `blocks` is not NULL, the matching block ids are stored in
 * blocks[0..result), so the caller need not look them up again. */
int64_t kvcache_match(const struct kvcache *kv, const uint64_t *hashes, int64_t n, int32_t *blocks);

/* kvcache_match's count alone, in O(log n) look-ups: a binary search for
 * the first hash not cached.  It equals the walk because the hashes a cache
 * holds from one chain form a prefix of it: a block table holds every
 * position before a block and releases them after it (tail first) or keeps
 * them, so the free queue evicts a position no earlier than every position
 * after it in that chain (and a duplicate copy keeps the hash entered).
 * Debug builds assert the two agree on every call. */
int64_t kvcache_match_len(const struct kvcache *kv, const uint64_t *hashes, int64_t n);

/* Take a reference to cached block b (found by kvcache_match). */
void kvcache_take(struct kvcache *kv, int32_t b);

/* Allocate a block (ref 1, no hash), evicting the least recently freed cached
 * block if needed; -1 if none is available. */
int32_t kvcache_alloc(struct kvcache *kv);

/* Give block b content hash h and enter it (after any other block with the
 * same hash).  0 (the index was sized when b was allocated). */
int kvcache_register(struct kvcache *kv, int32_t b, uint64_t h);

/* Drop one reference; at zero the block joins the tail of the free queue. */
void kvcache_put(struct kvcache *kv, int32_t b);

/* Retain released blocks, at most cap_blocks of them at once (0: off, the
 * default; then kvcache_put_retained is kvcache_put).  Before any block is
 * retained. */
void kvcache_retain_config(struct kvcache *kv, int64_t cap_blocks);

/* kvcache_put, but a block whose ref reaches 0 with a hash joins the tail of
 * the retained queue until expire_ns (no earlier than the expiry of any
 * block retained before it); past the cap, the oldest retained blocks
 * expire at once.  An unhashed block joins the LRU queue (nothing could hit
 * it). */
void kvcache_put_retained(struct kvcache *kv, int32_t b, int64_t expire_ns);

/* Expire every retained block whose expiry is at or before now_ns.
 * O(blocks expired). */
void kvcache_retain_expire(struct kvcache *kv, int64_t now_ns);

/* The earliest expiry of a retained block, or INT64_MAX if none. */
static inline int64_t kvcache_retain_next_ns(const struct kvcache *kv)
{
	return kv->rlive >= 0 ? kv->blk[kv->rlive].expire_ns : INT64_MAX;
}

/* Of the next `limit` blocks an allocation would take (never used ones
 * first, then the free queue and the expired retained blocks in stamp
 * order, then the retained blocks from the oldest), how many come before the first
 * free block whose stamp is at least `stamp`: at most limit. */
int64_t kvcache_allocs_before(const struct kvcache *kv, uint64_t stamp, int64_t limit);

/* Of the next `limit` blocks an allocation would take, how many come
 * before the first free block that carries a hash (whose eviction a lower
 * tier would see): at most limit. */
int64_t kvcache_allocs_before_hashed(const struct kvcache *kv, int64_t limit);

/* Blocks in use (ref > 0). */
int64_t kvcache_used(const struct kvcache *kv);

/* All invariants above hold. O(touched). */
bool kvcache_check(const struct kvcache *kv);

#endif
