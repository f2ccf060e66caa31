/* SPDX-License-Identifier: Apache-2.0
 * segtrie: unbounded prefix-cache matching on segment boundaries (see
 * segtrie.h for the model and the invariants).
 *
 * A node records its token count, how many of them were computed, and its
 * group: the first node made under the same parent with the same content,
 * which also holds the group's largest `avail`.  Raising a node's avail
 * raises its group's and counts the block boundaries passed, so `blocks` is
 * kept up to date without a pass at the end.
 */
#include "traces/segtrie.h"

#include "base/diag.h"
#include "base/hash.h"

#include <assert.h>

struct segtrie_node {
	int64_t tokens;
	int64_t avail;       /* tokens of it some call computed, 0..tokens */
	int64_t group_avail; /* in a group's first node: max avail of the group */
	int64_t group;       /* index of the group's first node (itself for it) */
};

static struct segtrie_node *node_at(const struct segtrie *t, int64_t i)
{
	return &VEC_AT(&t->nodes, struct segtrie_node, (size_t)i);
}

void segtrie_init(struct segtrie *t, int64_t block_size)
{
	assert(block_size >= 1);
	t->block_size = block_size;
	vec_init(&t->nodes, sizeof(struct segtrie_node), VEC_NO_LIMIT);
	map_init(&t->child);
	map_init(&t->variant);
	t->blocks = 0;
}

void segtrie_release(struct segtrie *t)
{
	vec_release(&t->nodes);
	map_release(&t->child);
	map_release(&t->variant);
}

void segtrie_path_reset(struct segtrie_path *p)
{
	p->node = 0;
	p->tokens = 0;
}

int64_t segtrie_blocks(const struct segtrie *t)
{
	return t->blocks;
}

int64_t segtrie_nodes(const struct segtrie *t)
{
	return (int64_t)t->nodes.len;
}

/* A new node of `tokens` tokens in group `group` (-1: it starts a group). */
static int node_new(struct segtrie *t, int64_t tokens, int64_t group, int64_t *out)
{
	struct segtrie_node *n = vec_push(&t->nodes);
	if (!n)
		return DIAG_ENOMEM;
	*out = (int64_t)t->nodes.len - 1;
	*n = (struct segtrie_node){.tokens = tokens, .group = group >= 0 ? group : *out};
	return 0;
}

/* Extend the match by node i (at token depth `start`), then record that the
 * call computes its tokens up to c->computed_tokens. */
static void visit(struct segtrie *t, int64_t i, int64_t start, struct segtrie_call *c)
{
	struct segtrie_node *n = node_at(t, i);
	struct segtrie_node *g = node_at(t, n->group);
	if (c->matching) {
		int64_t m = g->group_avail < n->tokens ? g->group_avail : n->tokens;
		c->shared_tokens = start + m;
		c->matching = n->avail == n->tokens;
	}
	int64_t a = c->computed_tokens - start;
	if (a > n->tokens)
		a = n->tokens;
	if (a > n->avail)
		n->avail = a;
	if (a > g->group_avail) {
		const int64_t B = t->block_size;
		t->blocks += (start + a) / B - (start + g->group_avail) / B;
		g->group_avail = a;
	}
}

int segtrie_begin(struct segtrie *t, const struct segtrie_path *p, int64_t computed_tokens,
		  struct segtrie_call *c)
{
	if (t->nodes.len == 0) {
		int64_t root = 0;
		if (node_new(t, 0, -1, &root) != 0)
			return DIAG_ENOMEM;
		assert(root == 0);
	}
	assert(computed_tokens >= p->tokens - 1);
	c->computed_tokens = computed_tokens;
	c->shared_tokens = 0;
	c->matching = true;
	if (p->node != 0) {
		/* every node before the last is fully computed by the call that
		 * made the path; the last one may lack its final token */
		int64_t n_tokens = node_at(t, p->node)->tokens;
		visit(t, p->node, p->tokens - n_tokens, c);
	}
	return 0;
}

int segtrie_feed(struct segtrie *t, struct segtrie_path *p, struct segtrie_call *c,
		 uint64_t content, int64_t tokens)
{
	assert(tokens >= 1 && t->nodes.len > 0);
	uint64_t key = hash_combine((uint64_t)p->node, content);
	const uint64_t *first = map_get(&t->child, key);
	int64_t i;
	if (!first) {
		if (node_new(t, tokens, -1, &i) != 0)
			return DIAG_ENOMEM;
		if (map_put(&t->child, key, (uint64_t)i) != 0) {
			t->nodes.len--;
			return DIAG_ENOMEM;
		}
	} else if (node_at(t, (int64_t)*first)->tokens == tokens) {
		i = (int64_t)*first;
	} else {
		int64_t g = (int64_t)*first;
		uint64_t vkey = hash_combine(key, (uint64_t)tokens);
		const uint64_t *v = map_get(&t->variant, vkey);
		if (v) {
			i = (int64_t)*v;
		} else {
			if (node_new(t, tokens, g, &i) != 0)
				return DIAG_ENOMEM;
			if (map_put(&t->variant, vkey, (uint64_t)i) != 0) {
				t->nodes.len--;
				return DIAG_ENOMEM;
			}
		}
	}
	visit(t, i, p->tokens, c);
	p->node = i;
	p->tokens += tokens;
	return 0;
}
