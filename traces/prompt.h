/* SPDX-License-Identifier: Apache-2.0
 * prompt: turn a session's segment lists into chained KV block hashes.
 *
 * The engine caches KV per block of `block_size` tokens; a block's identity
 * is its content plus everything before it, as vLLM's automatic prefix
 * caching hashes it.  A tchain consumes segments in order and emits one hash
 * per completed block:  h_k = H(h_{k-1}, pieces of block k), where a piece is
 * (segment content, offset within segment, length).  A trailing partial block
 * gets no hash (the engine never caches it).
 *
 * Cost: O(segments + blocks) per call; no per-token work.
 */
#ifndef TRACES_PROMPT_H
#define TRACES_PROMPT_H

#include <stdint.h>

struct vec;

struct tchain {
	int64_t block_size;
	uint64_t prev;    /* hash of the last completed block (seed if none) */
	uint64_t cur;     /* running hash of the partial block */
	int64_t fill;     /* tokens in the partial block */
	int64_t tokens;   /* tokens fed so far */
};

void tchain_init(struct tchain *c, int64_t block_size);

/* Feed `tokens` tokens of segment `content`; appends one uint64_t per block
 * completed to `out` (a vec of uint64_t).  0 or DIAG_ENOMEM. */
int tchain_feed(struct tchain *c, uint64_t content, int64_t tokens, struct vec *out);

#endif
