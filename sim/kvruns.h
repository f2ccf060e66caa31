/* SPDX-License-Identifier: Apache-2.0
 * kvruns: the KV cache of sim/kvcache.h for the full-attention group, kept
 * in runs of blocks instead of single blocks, so that admitting, growing and
 * releasing a request costs O(runs touched + new blocks' hashes copied), not
 * O(blocks in its prompt).
 *
 * It answers exactly as the block-level cache driven block by block would
 * (same hits, same free queue with the same stamps, same evictions and
 * duplicates), for a replica with prefix caching of full-attention blocks
 * and no lower tiers: every request's block table is a prefix of its own
 * chain of hashes (traces/prompt.h), hashed positions first and unhashed
 * blocks after them, taken at admission, grown at its tail, entered in
 * position order and released tail first.  Under those rules the hashes the
 * cache holds from one chain always form a prefix of that chain, so the
 * cache is a radix tree over chain positions.
 *
 * Design.  A node covers positions [lo, hi) of one chain; its hashes sit in
 * a refcounted array shared with the request that entered them (struct
 * kvr_ext), and the index maps the hash of a node's first position to the
 * node.  Chained hashes agree at a position iff they agree at every position
 * before it, so a match compares a node's last hash and binary-searches only
 * the node where the match ends.  A node holds one or more layers (struct
 * kvr_seg): physical copies of all its positions, in entry order; layer 0
 * serves hits, the others are duplicates entered while it existed.  A layer
 * has one reference count for all its blocks, and every request holding one
 * of its blocks holds all of them; a free layer is one run of consecutive
 * free-queue stamps, its last position having the oldest (release is tail
 * first).  Nodes split (all their layers with them) where a take, an entry
 * or an eviction ends inside them.  The free queue is a list of runs in
 * stamp order: free layers and runs of free unhashed blocks.  Allocation
 * takes never-used blocks first, then pops the queue's head run (a layer
 * loses its tail; a node whose last layer goes is a leaf and goes too).
 * A request's table (struct kvr_req) lists the layers it holds (a layer
 * split later continues through `cont`) and counts its unhashed blocks.
 *
 * Costs: kvr_match and kvr_take O(nodes on the path + log of the node where
 * the match ends); kvr_alloc O(runs popped); kvr_register O(nodes met +
 * hashes entered, which it copies); kvr_put O(layers held); the
 * allocs-before counts O(runs walked).
 *
 * Invariants (kvr_check): the queue holds exactly the runs whose ref is 0,
 * in increasing, disjoint stamp ranges below stamp_next, and free_len
 * counts their blocks; every node has at least one layer, each pointing
 * back to it, is indexed under its first hash, starts where its parent
 * ends, and its child count is the number of nodes whose parent it is.
 * A request's table (kvr_req_check) runs through held layers of one path
 * of the tree from position 0 to n_hashed.
 *
 * Out of memory (DIAG_ENOMEM) may leave the cache half-changed: it is then
 * fit only for kvr_release.
 */
#ifndef SIM_KVRUNS_H
#define SIM_KVRUNS_H

#include "base/map.h"

#include <stdbool.h>
#include <stdint.h>

/* Hashes of positions [lo, lo + n) of one chain, shared by the nodes that
 * cover them and the request that entered them. */
struct kvr_ext {
	uint64_t *h;
	int64_t lo, n, cap;
	int64_t refs;
	struct kvr_ext *next_free;
};

struct kvr_node;

/* A run of blocks: a layer of a node (node != NULL), or free unhashed
 * blocks (node == NULL, len of them). */
struct kvr_seg {
	struct kvr_node *node;
	int64_t len;          /* unhashed runs only; a layer spans its node */
	int64_t ref;
	uint64_t stamp;       /* free: the oldest stamp (its last position's) */
	struct kvr_seg *qprev, *qnext; /* free queue, when ref is 0 */
	struct kvr_seg *lprev, *lnext; /* the node's layers, in entry order */
	struct kvr_seg *cont; /* the upper part after a split (see kvr_req) */
	struct kvr_seg *next_free;
};

struct kvr_node {
	int64_t lo, hi;
	struct kvr_ext *ext;  /* hash of position p: ext->h[p - ext->lo] */
	struct kvr_node *parent;
	int64_t nchild;
	struct kvr_seg *first, *last; /* layers */
	struct kvr_node *next_free;
};

/* One run of positions a request holds: `seg` and the layers split off it
 * since (seg->cont, ...), `n` positions in all. */
struct kvr_ent {
	struct kvr_seg *seg;
	int64_t n;
};

struct kvr_req {
	struct kvr_ent *ent;
	int64_t n_ent, cap_ent;
	int64_t n_hashed;     /* positions [0, n_hashed) hold entered blocks */
	int64_t n_unhashed;   /* blocks after them, not (yet) entered */
	struct kvr_ext *ext;  /* hashes this request entered, if any */
};

/* Objects come from slabs and are recycled through free lists, so a
 * replica's steady state does not call malloc for them. */
struct kvr_slab {
	struct kvr_slab *next;
};

struct kvr {
	int64_t block_size;
	int64_t total_blocks;
	bool prefix_caching;
	int64_t touched;      /* blocks handed out at least once */
	struct map index;     /* first hash of a node -> node */
	int64_t nroots;       /* nodes starting at position 0 */
	struct kvr_seg *qhead, *qtail;
	int64_t free_len;     /* blocks in the queue */
	uint64_t stamp_next;
	int64_t reserved;     /* as kvcache.reserved */
	int64_t evictions;    /* cached blocks whose hash was dropped to reuse them */
	int64_t duplicates;   /* blocks entered under a hash another block held */
	int64_t nodes, segs;  /* live objects */
	struct kvr_slab *seg_slabs, *node_slabs, *ext_slabs;
	struct kvr_seg *free_segs;
	struct kvr_node *free_nodes;
	struct kvr_ext *free_exts;
	struct kvr_seg **scratch; /* kvr_release's layers of one entry */
	int64_t scratch_cap;
};

/* 0, or DIAG_EINPUT if block_size < 1 or total_blocks is not in 1..2^62. */
int kvr_init(struct kvr *kv, int64_t block_size, int64_t total_blocks, bool prefix_caching);
void kvr_release(struct kvr *kv);

/* Forget every block, as kvcache_reset does (counters kept, stamps start
 * again at 0).  Only when no request holds a block and nothing is reserved. */
void kvr_reset(struct kvr *kv);

void kvr_req_init(struct kvr_req *r);
/* Frees the table's memory; the request must hold no block (kvr_put). */
void kvr_req_release(struct kvr_req *r);

static inline int64_t kvr_available(const struct kvr *kv)
{
	return (kv->total_blocks - kv->touched) + kv->free_len - kv->reserved;
}

/* Blocks in use (ref > 0). */
static inline int64_t kvr_used(const struct kvr *kv)
{
	return kv->touched - kv->free_len;
}

/* Of the chain hashes[0..n): how many leading positions are cached (*hit;
 * 0 without prefix caching), how many of the blocks kvr_take would take for
 * them are free (*evictable), and the oldest stamp among those
 * (*min_free_stamp, UINT64_MAX if none).  Any output pointer may be NULL. */
void kvr_match(const struct kvr *kv, const uint64_t *hashes, int64_t n, int64_t *hit,
	       int64_t *evictable, uint64_t *min_free_stamp);

/* Request r, holding nothing, takes positions [0, hit) of the chain: the
 * first-entered copy of each (hit at most kvr_match's).  0 or DIAG_ENOMEM. */
int kvr_take(struct kvr *kv, struct kvr_req *r, const uint64_t *hashes, int64_t hit);

/* Append m new unhashed blocks to r's table: never-used blocks first, then
 * the free queue from its head (a cached block taken from it is evicted).
 * DIAG_EINPUT if fewer than m blocks are free or never used (reserved ones
 * included, as kvcache_alloc does; nothing changes then) or DIAG_ENOMEM. */
int kvr_alloc(struct kvr *kv, struct kvr_req *r, int64_t m);

/* Enter positions [r->n_hashed, upto) of r's table under hashes[j], each
 * after any other copy of its hash (upto at most the blocks r holds).
 * Without prefix caching nothing is entered.  0 or DIAG_ENOMEM. */
int kvr_register(struct kvr *kv, struct kvr_req *r, const uint64_t *hashes, int64_t upto);

/* Drop r's references, last position first (its unhashed blocks, then its
 * layers, as replica_free_blocks puts them); blocks whose ref reaches 0 join
 * the queue's tail.  r then holds nothing.  0 or DIAG_ENOMEM. */
int kvr_put(struct kvr *kv, struct kvr_req *r);

/* As kvcache_allocs_before and kvcache_allocs_before_hashed. */
int64_t kvr_allocs_before(const struct kvr *kv, uint64_t stamp, int64_t limit);
int64_t kvr_allocs_before_hashed(const struct kvr *kv, int64_t limit);

/* Blocks in a run: a layer spans its node. */
static inline int64_t kvr_seg_len(const struct kvr_seg *s)
{
	return s->node ? s->node->hi - s->node->lo : s->len;
}

/* The hash of position p of node x (lo <= p < hi). */
static inline uint64_t kvr_node_hash(const struct kvr_node *x, int64_t p)
{
	return x->ext->h[p - x->ext->lo];
}

/* The reference count of each of r's hashed positions into refs[0..n_hashed)
 * (O(positions): for tests). */
void kvr_req_refs(const struct kvr_req *r, int64_t *refs);

/* All invariants above hold.  O(objects). */
bool kvr_check(const struct kvr *kv);

/* r's table is consistent with kv.  O(layers held). */
bool kvr_req_check(const struct kvr *kv, const struct kvr_req *r);

#endif
