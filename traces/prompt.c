/* SPDX-License-Identifier: Apache-2.0
 * prompt: chained block hashes over content-addressed segments (see prompt.h). */
#include "traces/prompt.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/vec.h"

#define TCHAIN_SEED 0x6167656e74636170ULL /* "agentcap" */

void tchain_init(struct tchain *c, int64_t block_size)
{
	c->block_size = block_size;
	c->prev = TCHAIN_SEED;
	c->cur = hash_combine(TCHAIN_SEED, TCHAIN_SEED);
	c->fill = 0;
	c->tokens = 0;
}

int tchain_feed(struct tchain *c, uint64_t content, int64_t tokens, struct vec *out)
{
	int64_t off = 0;
	while (off < tokens) {
		int64_t take = c->block_size - c->fill;
		if (take > tokens - off)
			take = tokens - off;
		uint64_t h = hash_combine(c->cur, content);
		h = hash_combine(h, (uint64_t)off);
		c->cur = hash_combine(h, (uint64_t)take);
		c->fill += take;
		off += take;
		if (c->fill == c->block_size) {
			uint64_t *slot = vec_push(out);
			if (!slot)
				return DIAG_ENOMEM;
			*slot = c->cur;
			c->prev = c->cur;
			c->cur = hash_combine(c->prev, TCHAIN_SEED);
			c->fill = 0;
		}
	}
	c->tokens += tokens;
	return 0;
}
