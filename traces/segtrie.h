/* SPDX-License-Identifier: Apache-2.0
 * segtrie: which prefix of a call's token sequence an unbounded prefix cache
 * already holds, counted on segment boundaries instead of per block.
 *
 * A call's tokens are its segments in order (prompt, then output); token i of
 * a segment is (content, i).  Two calls share KV exactly as far as their token
 * sequences agree, which is what traces/prompt.h's chained block hashes test
 * block by block.  The trie has one node per distinct segment occurrence: the
 * child of node `parent` for (content, tokens).  Each node keeps `avail`, how
 * many of its tokens some call has computed through it (the engine computes
 * the KV of every token of prompt + output but the last); a computed token
 * implies that every token before it on its path was computed by the same
 * call, so the cached tokens of a path form a leading run.
 *
 * Contents.  A content hash normally names its token count too, but a "#hex"
 * id does not: (X, 10) and (X, 20) under one parent agree on their first 10
 * tokens.  Children with one content form a group; the group's first node
 * keeps the largest `avail` of the group, and a call's match inside the
 * segment reaches min(tokens, that maximum).  Past the segment the match goes
 * on only through the exact child, and only when that child is fully
 * computed.
 *
 * Cost: one or two hash lookups per segment a call walks; a call that
 * extends its session's previous call starts where that call ended, so it
 * walks only its new segments.  Memory: one 32-byte node and one map entry
 * per distinct segment occurrence (a second map entry for a content whose
 * token count differs from its group's first node).  Invariants: avail <=
 * tokens; group_avail of a group's first node == max avail in the group;
 * blocks == sum over groups of the multiples of block_size in
 * (start, start + group_avail], start being the group's token depth.
 */
#ifndef TRACES_SEGTRIE_H
#define TRACES_SEGTRIE_H

#include "base/map.h"
#include "base/vec.h"

#include <stdbool.h>
#include <stdint.h>

struct segtrie {
	int64_t block_size;
	struct vec nodes;    /* struct segtrie_node; index 0 is the root */
	struct map child;    /* hash(parent, content) -> a group's first node */
	struct map variant;  /* hash(parent, content, tokens) -> other nodes of a group */
	int64_t blocks;      /* whole blocks of block_size tokens some call computed */
};

/* Where a session's context ends in the trie. */
struct segtrie_path {
	int64_t node;        /* last node of the path; 0 (the root) when empty */
	int64_t tokens;      /* tokens on the path */
};

/* One call's walk. */
struct segtrie_call {
	int64_t computed_tokens; /* tokens of the path this call computes */
	int64_t shared_tokens;   /* leading tokens earlier calls computed */
	bool matching;           /* the match may still grow */
};

/* An empty trie counting blocks of block_size (>= 1) tokens.  Allocates
 * nothing yet (see segtrie_begin). */
void segtrie_init(struct segtrie *t, int64_t block_size);
void segtrie_release(struct segtrie *t);

/* An empty path, for a call that starts a new context. */
void segtrie_path_reset(struct segtrie_path *p);

/* Start a call whose token sequence is path p followed by the segments fed
 * next, and which computes the first computed_tokens of it (>= p->tokens for
 * a call that continues p; the caller passes P + O - 1).  The match starts
 * with what p already shares.  0 or DIAG_ENOMEM. */
int segtrie_begin(struct segtrie *t, const struct segtrie_path *p, int64_t computed_tokens,
		  struct segtrie_call *c);

/* Append a segment of `tokens` (>= 1) tokens to the call and to p: extend
 * the match, record what the call computes in it.  0 or DIAG_ENOMEM. */
int segtrie_feed(struct segtrie *t, struct segtrie_path *p, struct segtrie_call *c,
		 uint64_t content, int64_t tokens);

/* Blocks an unbounded block cache holds after the calls so far (whole
 * blocks of computed tokens, one per distinct token prefix). */
int64_t segtrie_blocks(const struct segtrie *t);

/* Number of nodes, the root included. */
int64_t segtrie_nodes(const struct segtrie *t);

#endif
