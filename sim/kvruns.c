/* SPDX-License-Identifier: Apache-2.0
 * kvruns: the full-attention KV cache as a radix tree of layered runs, with
 * a free queue of runs (design note in kvruns.h). */
#include "sim/kvruns.h"

#include "base/diag.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { SLAB_OBJS = 256 };

union slab_head {
	struct kvr_slab s;
	max_align_t align;
};

/* A new slab of n objects of `size` bytes, linked on *list; NULL if out of
 * memory.  Returns the first object. */
static void *slab_new(struct kvr_slab **list, size_t size, size_t n)
{
	union slab_head *h = malloc(sizeof(*h) + size * n);
	if (!h)
		return NULL;
	h->s.next = *list;
	*list = &h->s;
	return h + 1;
}

static void slabs_free(struct kvr_slab *s)
{
	while (s) {
		struct kvr_slab *n = s->next;
		free(s);
		s = n;
	}
}

static struct kvr_seg *seg_new(struct kvr *kv)
{
	if (!kv->free_segs) {
		struct kvr_seg *a = slab_new(&kv->seg_slabs, sizeof(*a), SLAB_OBJS);
		if (!a)
			return NULL;
		for (int i = 0; i < SLAB_OBJS; i++) {
			a[i].next_free = kv->free_segs;
			kv->free_segs = &a[i];
		}
	}
	struct kvr_seg *s = kv->free_segs;
	kv->free_segs = s->next_free;
	memset(s, 0, sizeof(*s));
	kv->segs++;
	return s;
}

static void seg_free(struct kvr *kv, struct kvr_seg *s)
{
	s->next_free = kv->free_segs;
	kv->free_segs = s;
	kv->segs--;
}

static struct kvr_node *node_alloc(struct kvr *kv)
{
	if (!kv->free_nodes) {
		struct kvr_node *a = slab_new(&kv->node_slabs, sizeof(*a), SLAB_OBJS);
		if (!a)
			return NULL;
		for (int i = 0; i < SLAB_OBJS; i++) {
			a[i].next_free = kv->free_nodes;
			kv->free_nodes = &a[i];
		}
	}
	struct kvr_node *x = kv->free_nodes;
	kv->free_nodes = x->next_free;
	memset(x, 0, sizeof(*x));
	kv->nodes++;
	return x;
}

/* A hash array starting at position lo, one reference (the caller's).  A
 * recycled one keeps its buffer. */
static struct kvr_ext *ext_new(struct kvr *kv, int64_t lo)
{
	if (!kv->free_exts) {
		struct kvr_ext *a = slab_new(&kv->ext_slabs, sizeof(*a), SLAB_OBJS);
		if (!a)
			return NULL;
		memset(a, 0, sizeof(*a) * SLAB_OBJS);
		for (int i = 0; i < SLAB_OBJS; i++) {
			a[i].next_free = kv->free_exts;
			kv->free_exts = &a[i];
		}
	}
	struct kvr_ext *e = kv->free_exts;
	kv->free_exts = e->next_free;
	e->next_free = NULL;
	e->lo = lo;
	e->n = 0;
	e->refs = 1;
	return e;
}

static void ext_unref(struct kvr *kv, struct kvr_ext *e)
{
	assert(e->refs > 0);
	if (--e->refs == 0) {
		e->next_free = kv->free_exts;
		kv->free_exts = e;
	}
}

static int ext_append(struct kvr_ext *e, const uint64_t *h, int64_t n)
{
	if (e->n + n > e->cap) {
		int64_t cap = e->cap ? e->cap : 64;
		while (cap < e->n + n)
			cap *= 2;
		uint64_t *nh = realloc(e->h, (size_t)cap * sizeof(*nh));
		if (!nh)
			return DIAG_ENOMEM;
		e->h = nh;
		e->cap = cap;
	}
	memcpy(e->h + e->n, h, (size_t)n * sizeof(*h));
	e->n += n;
	return 0;
}

static struct kvr_node *lookup(const struct kvr *kv, uint64_t h)
{
	uint64_t *v = map_get(&kv->index, h);
	return v ? (struct kvr_node *)(uintptr_t)*v : NULL;
}

static int index_put(struct kvr *kv, const struct kvr_node *x)
{
	return map_put(&kv->index, kvr_node_hash(x, x->lo), (uint64_t)(uintptr_t)x);
}

/* A node for [lo, hi) under parent (NULL: a root), hashes in e, indexed;
 * no layers yet. */
static struct kvr_node *node_new(struct kvr *kv, int64_t lo, int64_t hi, struct kvr_ext *e,
				 struct kvr_node *parent)
{
	struct kvr_node *x = node_alloc(kv);
	if (!x)
		return NULL;
	x->lo = lo;
	x->hi = hi;
	x->ext = e;
	e->refs++;
	x->parent = parent;
	if (index_put(kv, x) != 0) {
		ext_unref(kv, e);
		x->next_free = kv->free_nodes;
		kv->free_nodes = x;
		kv->nodes--;
		return NULL;
	}
	if (parent)
		parent->nchild++;
	else
		kv->nroots++;
	return x;
}

/* Drop node x, which has no layers and no children. */
static void node_free(struct kvr *kv, struct kvr_node *x)
{
	assert(!x->first && x->nchild == 0);
	bool had = map_del(&kv->index, kvr_node_hash(x, x->lo));
	assert(had);
	(void)had;
	if (x->parent)
		x->parent->nchild--;
	else
		kv->nroots--;
	ext_unref(kv, x->ext);
	x->next_free = kv->free_nodes;
	kv->free_nodes = x;
	kv->nodes--;
}

static void q_append(struct kvr *kv, struct kvr_seg *s)
{
	s->qprev = kv->qtail;
	s->qnext = NULL;
	if (kv->qtail)
		kv->qtail->qnext = s;
	else
		kv->qhead = s;
	kv->qtail = s;
}

static void q_insert_before(struct kvr *kv, struct kvr_seg *s, struct kvr_seg *at)
{
	s->qnext = at;
	s->qprev = at->qprev;
	if (at->qprev)
		at->qprev->qnext = s;
	else
		kv->qhead = s;
	at->qprev = s;
}

static void q_unlink(struct kvr *kv, struct kvr_seg *s)
{
	if (s->qprev)
		s->qprev->qnext = s->qnext;
	else
		kv->qhead = s->qnext;
	if (s->qnext)
		s->qnext->qprev = s->qprev;
	else
		kv->qtail = s->qprev;
	s->qprev = s->qnext = NULL;
}

/* Split node x at position m (lo < m < hi): a new node takes [lo, m) and
 * x's place under its parent and in the index, and x keeps [m, hi) and its
 * children.  Each layer's seg object keeps the lower part (so the tables
 * that list it stay valid, continuing through `cont`) and a new one takes
 * the upper part; a free layer's upper part has the older stamps and goes
 * just before it in the queue.  Returns the lower node, NULL if out of
 * memory. */
static struct kvr_node *split(struct kvr *kv, struct kvr_node *x, int64_t m)
{
	assert(x->lo < m && m < x->hi);
	struct kvr_node *low = node_alloc(kv);
	if (!low)
		return NULL;
	low->lo = x->lo;
	low->hi = m;
	low->ext = x->ext;
	x->ext->refs++;
	low->parent = x->parent;
	low->nchild = 1;
	x->parent = low;
	x->lo = m;
	*map_get(&kv->index, kvr_node_hash(low, low->lo)) = (uint64_t)(uintptr_t)low;
	if (index_put(kv, x) != 0)
		return NULL;
	low->first = x->first;
	low->last = x->last;
	x->first = x->last = NULL;
	for (struct kvr_seg *s = low->first; s; s = s->lnext) {
		struct kvr_seg *u = seg_new(kv);
		if (!u)
			return NULL;
		s->node = low;
		u->node = x;
		u->ref = s->ref;
		u->cont = s->cont;
		s->cont = u;
		if (s->ref == 0) {
			u->stamp = s->stamp;
			s->stamp += (uint64_t)(x->hi - m);
			q_insert_before(kv, u, s);
		}
		u->lprev = x->last;
		if (x->last)
			x->last->lnext = u;
		else
			x->first = u;
		x->last = u;
	}
	return low;
}

static void layer_append(struct kvr_node *x, struct kvr_seg *s)
{
	s->node = x;
	s->lprev = x->last;
	s->lnext = NULL;
	if (x->last)
		x->last->lnext = s;
	else
		x->first = s;
	x->last = s;
}

/* Evict free layer s whole; its node goes with its last layer. */
static void evict_layer(struct kvr *kv, struct kvr_seg *s)
{
	struct kvr_node *x = s->node;
	q_unlink(kv, s);
	if (s->lprev)
		s->lprev->lnext = s->lnext;
	else
		x->first = s->lnext;
	if (s->lnext)
		s->lnext->lprev = s->lprev;
	else
		x->last = s->lprev;
	seg_free(kv, s);
	if (!x->first)
		node_free(kv, x);
}

/* Take `need` blocks from the queue's head, evicting what they held. */
static int evict(struct kvr *kv, int64_t need)
{
	while (need > 0) {
		struct kvr_seg *s = kv->qhead;
		assert(s);
		int64_t len = kvr_seg_len(s);
		int64_t k = need < len ? need : len;
		if (!s->node) {
			if (k == len) {
				q_unlink(kv, s);
				seg_free(kv, s);
			} else {
				s->len -= k;
				s->stamp += (uint64_t)k;
			}
		} else if (k == len) {
			evict_layer(kv, s);
			kv->evictions += k;
		} else if (s->node->first == s->node->last) {
			/* its last position's only copy goes: nothing can
			 * follow it (the hashes held form prefixes) */
			assert(s->node->nchild == 0);
			s->node->hi -= k;
			s->stamp += (uint64_t)k;
			kv->evictions += k;
		} else {
			/* other copies stay: split, and the upper part (now
			 * the queue's head) goes whole on the next turn */
			if (!split(kv, s->node, s->node->hi - k))
				return DIAG_ENOMEM;
			continue;
		}
		kv->free_len -= k;
		need -= k;
	}
	return 0;
}

int kvr_init(struct kvr *kv, int64_t block_size, int64_t total_blocks, bool prefix_caching)
{
	memset(kv, 0, sizeof(*kv));
	map_init(&kv->index);
	kv->block_size = block_size;
	kv->total_blocks = total_blocks;
	kv->prefix_caching = prefix_caching;
	if (block_size < 1 || total_blocks < 1 || total_blocks > ((int64_t)1 << 62))
		return DIAG_EINPUT;
	return 0;
}

void kvr_release(struct kvr *kv)
{
	for (struct kvr_slab *s = kv->ext_slabs; s; s = s->next) {
		struct kvr_ext *a = (struct kvr_ext *)((union slab_head *)s + 1);
		for (int i = 0; i < SLAB_OBJS; i++)
			free(a[i].h);
	}
	slabs_free(kv->seg_slabs);
	slabs_free(kv->node_slabs);
	slabs_free(kv->ext_slabs);
	map_release(&kv->index);
	free(kv->scratch);
	memset(kv, 0, sizeof(*kv));
	map_init(&kv->index);
}

void kvr_reset(struct kvr *kv)
{
	assert(kvr_used(kv) == 0 && kv->reserved == 0);
	int64_t bs = kv->block_size, total = kv->total_blocks;
	bool pc = kv->prefix_caching;
	int64_t ev = kv->evictions, dup = kv->duplicates;
	kvr_release(kv);
	int rc = kvr_init(kv, bs, total, pc); /* cannot fail: it held these values */
	assert(rc == 0);
	(void)rc;
	kv->evictions = ev;
	kv->duplicates = dup;
}

void kvr_req_init(struct kvr_req *r)
{
	memset(r, 0, sizeof(*r));
}

void kvr_req_release(struct kvr_req *r)
{
	assert(r->n_ent == 0 && r->n_unhashed == 0 && !r->ext);
	free(r->ent);
	memset(r, 0, sizeof(*r));
}

static int ent_push(struct kvr_req *r, struct kvr_seg *s, int64_t n)
{
	if (r->n_ent == r->cap_ent) {
		int64_t cap = r->cap_ent ? 2 * r->cap_ent : 16;
		struct kvr_ent *ne = realloc(r->ent, (size_t)cap * sizeof(*ne));
		if (!ne)
			return DIAG_ENOMEM;
		r->ent = ne;
		r->cap_ent = cap;
	}
	r->ent[r->n_ent++] = (struct kvr_ent){.seg = s, .n = n};
	return 0;
}

/* Where hashes[p..e) stops agreeing with node x's (x agrees at p): chained
 * hashes agree up to a point and never after, so the last one settles it
 * or a binary search finds the point. */
static int64_t agree_end(const struct kvr_node *x, const uint64_t *hashes, int64_t p, int64_t e)
{
	if (kvr_node_hash(x, e - 1) == hashes[e - 1])
		return e;
	int64_t a = p, b = e - 1; /* equal at a, different at b */
	while (b - a > 1) {
		int64_t mid = a + (b - a) / 2;
		if (kvr_node_hash(x, mid) == hashes[mid])
			a = mid;
		else
			b = mid;
	}
	return a + 1;
}

void kvr_match(const struct kvr *kv, const uint64_t *hashes, int64_t n, int64_t *hit,
	       int64_t *evictable, uint64_t *min_free_stamp)
{
	int64_t p = 0, ev = 0;
	uint64_t mn = UINT64_MAX;
	while (kv->prefix_caching && p < n) {
		const struct kvr_node *x = lookup(kv, hashes[p]);
		if (!x || x->lo != p)
			break;
		int64_t e = agree_end(x, hashes, p, x->hi < n ? x->hi : n);
		const struct kvr_seg *s = x->first;
		if (s->ref == 0) {
			ev += e - p;
			/* the oldest stamp taken is position e-1's */
			uint64_t st = s->stamp + (uint64_t)(x->hi - e);
			if (st < mn)
				mn = st;
		}
		p = e;
		if (e < x->hi)
			break;
	}
	if (hit)
		*hit = p;
	if (evictable)
		*evictable = ev;
	if (min_free_stamp)
		*min_free_stamp = mn;
}

int kvr_take(struct kvr *kv, struct kvr_req *r, const uint64_t *hashes, int64_t hit)
{
	assert(r->n_ent == 0 && r->n_hashed == 0 && r->n_unhashed == 0);
	int64_t p = 0;
	while (p < hit) {
		struct kvr_node *x = lookup(kv, hashes[p]);
		assert(x && x->lo == p);
		if (x->hi > hit && !(x = split(kv, x, hit)))
			return DIAG_ENOMEM;
		struct kvr_seg *s = x->first;
		if (s->ref == 0) {
			q_unlink(kv, s);
			kv->free_len -= x->hi - x->lo;
		}
		s->ref++;
		if (ent_push(r, s, x->hi - x->lo) != 0)
			return DIAG_ENOMEM;
		p = x->hi;
	}
	r->n_hashed = hit;
	return 0;
}

int kvr_alloc(struct kvr *kv, struct kvr_req *r, int64_t m)
{
	if (m <= 0)
		return 0;
	int64_t fresh = kv->total_blocks - kv->touched;
	if (fresh + kv->free_len < m)
		return DIAG_EINPUT;
	int64_t k = fresh < m ? fresh : m;
	kv->touched += k;
	if (m > k && evict(kv, m - k) != 0)
		return DIAG_ENOMEM;
	r->n_unhashed += m;
	return 0;
}

/* The layer holding r's last hashed position, NULL if none. */
static struct kvr_seg *req_last_seg(const struct kvr_req *r)
{
	if (r->n_ent == 0)
		return NULL;
	const struct kvr_ent *e = &r->ent[r->n_ent - 1];
	struct kvr_seg *s = e->seg;
	for (int64_t covered = kvr_seg_len(s); covered < e->n; covered += kvr_seg_len(s))
		s = s->cont;
	return s;
}

int kvr_register(struct kvr *kv, struct kvr_req *r, const uint64_t *hashes, int64_t upto)
{
	int64_t p = r->n_hashed;
	if (!kv->prefix_caching || upto <= p)
		return 0;
	assert(upto <= r->n_hashed + r->n_unhashed);
	if (!r->ext && !(r->ext = ext_new(kv, p)))
		return DIAG_ENOMEM;
	assert(r->ext->lo + r->ext->n == p);
	if (ext_append(r->ext, hashes + p, upto - p) != 0)
		return DIAG_ENOMEM;
	struct kvr_seg *last = req_last_seg(r);
	struct kvr_node *parent = last ? last->node : NULL;
	while (p < upto) {
		struct kvr_node *x = lookup(kv, hashes[p]);
		if (x) {
			/* copies exist: this one is entered after them */
			assert(x->lo == p && x->parent == parent);
			int64_t e = agree_end(x, hashes, p, x->hi < upto ? x->hi : upto);
			if (e < x->hi && !(x = split(kv, x, e)))
				return DIAG_ENOMEM;
			struct kvr_seg *s = seg_new(kv);
			if (!s)
				return DIAG_ENOMEM;
			s->ref = 1;
			layer_append(x, s);
			kv->duplicates += x->hi - x->lo;
			if (ent_push(r, s, x->hi - x->lo) != 0)
				return DIAG_ENOMEM;
			parent = x;
			last = s;
			p = x->hi;
			continue;
		}
		/* new positions: so are all after them (the hashes held form
		 * prefixes); they extend r's own leaf if it is one */
		if (parent && parent->nchild == 0 && parent->first == last && parent->last == last &&
		    last->ref == 1 && parent->ext == r->ext && parent->hi == p) {
			parent->hi = upto;
			r->ent[r->n_ent - 1].n += upto - p;
		} else {
			struct kvr_node *nx = node_new(kv, p, upto, r->ext, parent);
			struct kvr_seg *s = nx ? seg_new(kv) : NULL;
			if (!s)
				return DIAG_ENOMEM;
			s->ref = 1;
			layer_append(nx, s);
			if (ent_push(r, s, upto - p) != 0)
				return DIAG_ENOMEM;
		}
		p = upto;
	}
	r->n_unhashed -= upto - r->n_hashed;
	r->n_hashed = upto;
	return 0;
}

/* A layer's reference goes; at zero it joins the queue's tail, its last
 * position first (stamps counted up from there). */
static void layer_put(struct kvr *kv, struct kvr_seg *s)
{
	assert(s->ref > 0);
	if (--s->ref == 0) {
		int64_t len = kvr_seg_len(s);
		s->stamp = kv->stamp_next;
		kv->stamp_next += (uint64_t)len;
		kv->free_len += len;
		q_append(kv, s);
	}
}

int kvr_put(struct kvr *kv, struct kvr_req *r)
{
	if (r->n_unhashed > 0) {
		struct kvr_seg *u = seg_new(kv);
		if (!u)
			return DIAG_ENOMEM;
		u->len = r->n_unhashed;
		u->stamp = kv->stamp_next;
		kv->stamp_next += (uint64_t)u->len;
		kv->free_len += u->len;
		q_append(kv, u);
		r->n_unhashed = 0;
	}
	while (r->n_ent > 0) {
		const struct kvr_ent *e = &r->ent[r->n_ent - 1];
		struct kvr_seg *s = e->seg;
		int64_t covered = kvr_seg_len(s);
		if (covered == e->n) {
			layer_put(kv, s);
			r->n_ent--;
			continue;
		}
		/* split since: put its pieces last first */
		int64_t n = 0;
		for (covered = 0; covered < e->n; covered += kvr_seg_len(s), s = s->cont) {
			if (n == kv->scratch_cap) {
				int64_t cap = kv->scratch_cap ? 2 * kv->scratch_cap : 16;
				struct kvr_seg **ns = realloc(kv->scratch, (size_t)cap * sizeof(*ns));
				if (!ns)
					return DIAG_ENOMEM;
				kv->scratch = ns;
				kv->scratch_cap = cap;
			}
			kv->scratch[n++] = s;
		}
		while (n > 0)
			layer_put(kv, kv->scratch[--n]);
		r->n_ent--;
	}
	if (r->ext)
		ext_unref(kv, r->ext);
	r->ext = NULL;
	r->n_hashed = 0;
	return 0;
}

int64_t kvr_allocs_before(const struct kvr *kv, uint64_t stamp, int64_t limit)
{
	int64_t n = kv->total_blocks - kv->touched;
	for (const struct kvr_seg *s = kv->qhead; s && n < limit && s->stamp < stamp; s = s->qnext) {
		int64_t len = kvr_seg_len(s);
		if (s->stamp + (uint64_t)len <= stamp) {
			n += len;
		} else {
			n += (int64_t)(stamp - s->stamp);
			break;
		}
	}
	return n < limit ? n : limit;
}

int64_t kvr_allocs_before_hashed(const struct kvr *kv, int64_t limit)
{
	int64_t n = kv->total_blocks - kv->touched;
	for (const struct kvr_seg *s = kv->qhead; s && n < limit && !s->node; s = s->qnext)
		n += s->len;
	return n < limit ? n : limit;
}

void kvr_req_refs(const struct kvr_req *r, int64_t *refs)
{
	int64_t p = 0;
	for (int64_t i = 0; i < r->n_ent; i++) {
		const struct kvr_seg *s = r->ent[i].seg;
		for (int64_t covered = 0; covered < r->ent[i].n; s = s->cont) {
			int64_t len = kvr_seg_len(s);
			for (int64_t j = 0; j < len; j++)
				refs[p++] = s->ref;
			covered += len;
		}
	}
}

bool kvr_check(const struct kvr *kv)
{
	if (kv->touched < 0 || kv->touched > kv->total_blocks || kv->free_len > kv->touched)
		return false;
	/* the queue: free runs in stamp order */
	int64_t free_blocks = 0, runs = 0, unhashed_runs = 0;
	uint64_t next = 0;
	for (const struct kvr_seg *s = kv->qhead, *prev = NULL; s; prev = s, s = s->qnext) {
		int64_t len = kvr_seg_len(s);
		if (s->qprev != prev || s->ref != 0 || len < 1 || s->stamp < next ||
		    s->stamp + (uint64_t)len > kv->stamp_next || ++runs > kv->segs)
			return false;
		next = s->stamp + (uint64_t)len;
		free_blocks += len;
		unhashed_runs += !s->node;
		if (!s->qnext && kv->qtail != s)
			return false;
	}
	if (free_blocks != kv->free_len || (!kv->qhead && kv->qtail))
		return false;
	/* the tree, through the index */
	/* each node's child count, summed, is the number of non-root nodes
	 * (a tally per node would need memory, and a check must not fail for
	 * want of it) */
	int64_t kids = 0;
	bool ok = true;
	int64_t nodes = 0, layers = 0, free_layers = 0, roots = 0;
	for (size_t i = 0; ok && i < kv->index.cap; i++) {
		if (!kv->index.used[i])
			continue;
		const struct kvr_node *x = (const struct kvr_node *)(uintptr_t)kv->index.slots[i].val;
		nodes++;
		kids += x->nchild;
		ok = x->lo >= 0 && x->lo < x->hi && x->ext && x->ext->refs > 0 && x->ext->lo <= x->lo &&
		     x->hi <= x->ext->lo + x->ext->n && kvr_node_hash(x, x->lo) == kv->index.slots[i].key &&
		     x->first && !x->first->lprev && !x->last->lnext;
		if (!ok)
			break;
		if (x->parent) {
			ok = x->parent->hi == x->lo && lookup(kv, kvr_node_hash(x->parent, x->parent->lo)) == x->parent;
			ok = ok && x->parent->nchild >= 1;
		} else {
			ok = x->lo == 0;
			roots++;
		}
		for (const struct kvr_seg *s = x->first; ok && s; s = s->lnext) {
			ok = s->node == x && s->ref >= 0 && (s->lnext ? s->lnext->lprev == s : x->last == s) &&
			     ++layers <= kv->segs;
			free_layers += ok && s->ref == 0;
		}
	}
	return ok && kids == nodes - roots && nodes == kv->nodes && roots == kv->nroots &&
	       layers + unhashed_runs == kv->segs &&
	       free_layers + unhashed_runs == runs;
}

bool kvr_req_check(const struct kvr *kv, const struct kvr_req *r)
{
	int64_t p = 0;
	const struct kvr_node *prev = NULL;
	for (int64_t i = 0; i < r->n_ent; i++) {
		const struct kvr_seg *s = r->ent[i].seg;
		int64_t covered = 0;
		while (covered < r->ent[i].n) {
			if (!s || !s->node || s->ref < 1 || s->node->lo != p || s->node->parent != prev ||
			    lookup(kv, kvr_node_hash(s->node, p)) != s->node)
				return false;
			int64_t len = kvr_seg_len(s);
			covered += len;
			p += len;
			prev = s->node;
			s = s->cont;
		}
		if (covered != r->ent[i].n)
			return false;
	}
	if (p != r->n_hashed || r->n_unhashed < 0)
		return false;
	if (r->ext && (r->ext->refs < 1 || r->ext->lo + r->ext->n != r->n_hashed))
		return false;
	return true;
}
