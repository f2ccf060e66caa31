/* SPDX-License-Identifier: Apache-2.0
 * kvcache: paged KV blocks, a chained prefix index and an LRU free queue. */
#include "sim/kvcache.h"

#include "base/diag.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* kvblock.retained_q */
enum { RQ_NONE = 0, RQ_LIVE = 1, RQ_EXPIRED = 2 };

int kvcache_init(struct kvcache *kv, int64_t block_size, int64_t total_blocks, bool prefix_caching)
{
	memset(kv, 0, sizeof(*kv));
	kv->block_size = block_size;
	kv->total_blocks = total_blocks;
	kv->prefix_caching = prefix_caching;
	kv->head = kv->tail = -1;
	kv->rhead = kv->rtail = kv->rlive = -1;
	if (block_size < 1 || total_blocks < 1 || total_blocks > INT32_MAX)
		return DIAG_EINPUT;
	return 0;
}

void kvcache_release(struct kvcache *kv)
{
	free(kv->blk);
	free(kv->bucket);
	memset(kv, 0, sizeof(*kv));
	kv->head = kv->tail = -1;
	kv->rhead = kv->rtail = kv->rlive = -1;
}

void kvcache_reset(struct kvcache *kv)
{
	assert(kvcache_used(kv) == 0 && kv->reserved == 0);
	int64_t bs = kv->block_size, total = kv->total_blocks;
	bool pc = kv->prefix_caching;
	int64_t ev = kv->evictions, dup = kv->duplicates;
	void (*on_evict)(void *, uint64_t) = kv->on_evict;
	void *evict_ctx = kv->evict_ctx;
	struct kvcache keep = *kv; /* retention's setting and counters */
	kvcache_release(kv); /* no block is demoted: the GPU's memory is simply lost */
	int rc = kvcache_init(kv, bs, total, pc); /* cannot fail: it held these values */
	assert(rc == 0);
	(void)rc;
	kv->evictions = ev;
	kv->duplicates = dup;
	kv->on_evict = on_evict;
	kv->evict_ctx = evict_ctx;
	kv->retain_cap = keep.retain_cap;
	kv->retain_peak = keep.retain_peak;
	kv->retain_hits = keep.retain_hits;
	kv->retain_forced = keep.retain_forced;
	kv->retain_capped = keep.retain_capped;
	kv->retain_avoided = keep.retain_avoided;
}

/* The bucket of hash h (Fibonacci hashing: the top bits of h times 2^64/phi,
 * so keys that differ only in their high bits spread too). */
static size_t home(const struct kvcache *kv, uint64_t h)
{
	return (size_t)(((h ^ (h >> 32)) * 0x9E3779B97F4A7C15ULL) >> (64 - kv->bucket_bits));
}

/* Append hashed block b at the end of its bucket's chain. */
static void chain_append(struct kvcache *kv, int32_t b)
{
	size_t i = home(kv, kv->blk[b].hash);
	int32_t last = -1;
	for (int32_t x = kv->bucket[i]; x >= 0; x = kv->blk[x].hnext)
		last = x;
	kv->blk[b].hprev = last;
	kv->blk[b].hnext = -1;
	if (last >= 0)
		kv->blk[last].hnext = b;
	else
		kv->bucket[i] = b;
}

/* Size the index to at least twice `blocks` buckets, moving every chain in
 * order (so blocks with one hash keep their entry order). */
static int index_grow(struct kvcache *kv, int64_t blocks)
{
	int bits = kv->bucket_bits ? kv->bucket_bits : 4;
	while (((int64_t)1 << bits) < 2 * blocks)
		bits++;
	if (bits == kv->bucket_bits)
		return 0;
	int32_t *nb = malloc(((size_t)1 << bits) * sizeof(*nb));
	if (!nb)
		return DIAG_ENOMEM;
	memset(nb, 0xff, ((size_t)1 << bits) * sizeof(*nb)); /* all -1 */
	int32_t *old = kv->bucket;
	size_t n_old = kv->bucket_bits ? (size_t)1 << kv->bucket_bits : 0;
	kv->bucket = nb;
	kv->bucket_bits = bits;
	for (size_t i = 0; i < n_old; i++)
		for (int32_t x = old[i], nx; x >= 0; x = nx) {
			nx = kv->blk[x].hnext;
			chain_append(kv, x);
		}
	free(old);
	return 0;
}

static int kv_grow(struct kvcache *kv)
{
	int64_t ncap = kv->cap ? kv->cap * 2 : 1024;
	if (ncap > kv->total_blocks)
		ncap = kv->total_blocks;
	struct kvblock *nb = realloc(kv->blk, (size_t)ncap * sizeof(*nb));
	if (!nb)
		return DIAG_ENOMEM;
	kv->blk = nb;
	if (kv->prefix_caching && index_grow(kv, ncap) != 0)
		return DIAG_ENOMEM; /* cap stays: the next allocation tries again */
	kv->cap = ncap;
	return 0;
}

/* Take free block b off whichever queue holds it. */
static void q_unlink(struct kvcache *kv, int32_t b)
{
	struct kvblock *k = &kv->blk[b];
	int32_t *head = k->retained_q ? &kv->rhead : &kv->head;
	int32_t *tail = k->retained_q ? &kv->rtail : &kv->tail;
	if (k->prev >= 0)
		kv->blk[k->prev].next = k->next;
	else
		*head = k->next;
	if (k->next >= 0)
		kv->blk[k->next].prev = k->prev;
	else
		*tail = k->prev;
	if (b == kv->rlive)
		kv->rlive = k->next; /* the next one is live too, or none is */
	k->prev = k->next = -1;
	kv->free_len--;
	if (k->retained_q == RQ_LIVE)
		kv->retained--;
	else if (k->retained_q == RQ_EXPIRED)
		kv->rexpired--;
	k->retained_q = 0;
}

static void q_append(struct kvcache *kv, int32_t b)
{
	struct kvblock *k = &kv->blk[b];
	k->prev = kv->tail;
	k->next = -1;
	if (kv->tail >= 0)
		kv->blk[kv->tail].next = b;
	else
		kv->head = b;
	kv->tail = b;
	kv->free_len++;
	k->stamp = kv->stamp_next++;
}

/* Append b at the tail of the retained queue (a fresh stamp, like q_append). */
static void rq_append(struct kvcache *kv, int32_t b, int64_t expire_ns)
{
	struct kvblock *k = &kv->blk[b];
	k->prev = kv->rtail;
	k->next = -1;
	if (kv->rtail >= 0)
		kv->blk[kv->rtail].next = b;
	else
		kv->rhead = b;
	kv->rtail = b;
	kv->free_len++;
	k->stamp = kv->stamp_next++;
	k->retained_q = RQ_LIVE;
	k->expire_ns = expire_ns;
	kv->retained++;
	if (kv->rlive < 0)
		kv->rlive = b;
}

/* Expire the first n live retained blocks: they stay where they are, as
 * the retained queue's expired prefix, and are evicted in stamp order with
 * the LRU queue from then on (kvcache_alloc), as plain LRU would. */
static void rq_expire_head(struct kvcache *kv, int64_t n)
{
	for (; n > 0 && kv->rlive >= 0; n--) {
		int32_t b = kv->rlive;
		kv->blk[b].retained_q = RQ_EXPIRED;
		kv->retained--;
		kv->rexpired++;
		kv->rlive = kv->blk[b].next;
	}
}

/* Take b off its hash chain; the hash leaves the index with its last block. */
static void unhash(struct kvcache *kv, int32_t b)
{
	struct kvblock *k = &kv->blk[b];
	if (k->hprev >= 0)
		kv->blk[k->hprev].hnext = k->hnext;
	else
		kv->bucket[home(kv, k->hash)] = k->hnext;
	if (k->hnext >= 0)
		kv->blk[k->hnext].hprev = k->hprev;
	k->hprev = k->hnext = -1;
	k->hashed = 0;
	kv->indexed--;
}

int32_t kvcache_lookup(const struct kvcache *kv, uint64_t h)
{
	if (!kv->prefix_caching || !kv->bucket_bits)
		return -1;
	for (int32_t x = kv->bucket[home(kv, h)]; x >= 0; x = kv->blk[x].hnext)
		if (kv->blk[x].hash == h)
			return x;
	return -1;
}

int64_t kvcache_match(const struct kvcache *kv, const uint64_t *hashes, int64_t n, int32_t *blocks)
{
	if (!kv->prefix_caching || !kv->bucket_bits)
		return 0;
	int64_t i = 0;
	for (; i < n; i++) {
		int32_t b = kvcache_lookup(kv, hashes[i]);
		if (b < 0)
			break;
		if (blocks)
			blocks[i] = b;
	}
	return i;
}

int64_t kvcache_match_len(const struct kvcache *kv, const uint64_t *hashes, int64_t n)
{
	if (!kv->prefix_caching || !kv->bucket_bits || n <= 0)
		return 0;
	int64_t lo = 0, hi = n; /* hashes[0..lo) cached; hi == n or hashes[hi] is not */
	if (kvcache_lookup(kv, hashes[n - 1]) >= 0)
		lo = n;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (kvcache_lookup(kv, hashes[mid]) >= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	assert(lo == kvcache_match(kv, hashes, n, NULL));
	return lo;
}

void kvcache_take(struct kvcache *kv, int32_t b)
{
	assert(b >= 0 && b < kv->touched && kv->blk[b].hashed);
	if (kv->blk[b].ref == 0) {
		kv->retain_hits += kv->blk[b].retained_q == RQ_LIVE;
		q_unlink(kv, b);
	}
	kv->blk[b].ref++;
}

int32_t kvcache_alloc(struct kvcache *kv)
{
	int32_t b;
	if (kv->touched < kv->total_blocks) {
		if (kv->touched == kv->cap && kv_grow(kv) != 0)
			return -1;
		b = (int32_t)kv->touched++;
	} else if (kv->head >= 0 || kv->rhead >= 0) {
		/* the older of the LRU head and the first expired retained block;
		 * a live retained block only when neither exists */
		int32_t e = kv->rhead >= 0 && kv->rhead != kv->rlive ? kv->rhead : -1;
		if (kv->head >= 0 && (e < 0 || kv->blk[kv->head].stamp < kv->blk[e].stamp))
			b = kv->head;
		else
			b = e;
		if (b >= 0) {
			kv->retain_avoided += kv->rlive >= 0 && kv->blk[kv->rlive].stamp < kv->blk[b].stamp;
		} else {
			b = kv->rlive; /* nothing else free: retention gives way */
			kv->retain_forced++;
		}
		q_unlink(kv, b);
		if (kv->blk[b].hashed) {
			unhash(kv, b);
			kv->evictions++;
			if (kv->on_evict)
				kv->on_evict(kv->evict_ctx, kv->blk[b].hash);
		}
	} else {
		return -1;
	}
	struct kvblock *k = &kv->blk[b];
	k->hash = 0;
	k->stamp = 0;
	k->hashed = 0;
	k->ref = 1;
	k->retained_q = 0;
	k->expire_ns = 0;
	k->prev = k->next = -1;
	k->hprev = k->hnext = -1;
	return b;
}

int kvcache_register(struct kvcache *kv, int32_t b, uint64_t h)
{
	struct kvblock *k = &kv->blk[b];
	if (!kv->prefix_caching || k->hashed)
		return 0;
	k->hash = h;
	k->hashed = 1;
	/* append at the end of the chain, noting whether h is there already */
	size_t i = home(kv, h);
	int32_t last = -1;
	bool dup = false;
	for (int32_t x = kv->bucket[i]; x >= 0; x = kv->blk[x].hnext) {
		dup |= kv->blk[x].hash == h;
		last = x;
	}
	k->hprev = last;
	k->hnext = -1;
	if (last >= 0)
		kv->blk[last].hnext = b;
	else
		kv->bucket[i] = b;
	kv->indexed++;
	kv->duplicates += dup;
	return 0;
}

void kvcache_put(struct kvcache *kv, int32_t b)
{
	assert(kv->blk[b].ref > 0);
	if (--kv->blk[b].ref == 0)
		q_append(kv, b);
}

void kvcache_retain_config(struct kvcache *kv, int64_t cap_blocks)
{
	assert(kv->retained == 0 && cap_blocks >= 0);
	kv->retain_cap = cap_blocks;
}

void kvcache_put_retained(struct kvcache *kv, int32_t b, int64_t expire_ns)
{
	struct kvblock *k = &kv->blk[b];
	assert(k->ref > 0);
	if (--k->ref > 0)
		return;
	if (kv->retain_cap <= 0 || !k->hashed) {
		q_append(kv, b);
		return;
	}
	assert(kv->rtail < 0 || kv->blk[kv->rtail].expire_ns <= expire_ns);
	rq_append(kv, b, expire_ns);
	if (kv->retained > kv->retain_cap) {
		kv->retain_capped += kv->retained - kv->retain_cap;
		rq_expire_head(kv, kv->retained - kv->retain_cap);
	}
	if (kv->retained > kv->retain_peak)
		kv->retain_peak = kv->retained;
}

void kvcache_retain_expire(struct kvcache *kv, int64_t now_ns)
{
	while (kv->rlive >= 0 && kv->blk[kv->rlive].expire_ns <= now_ns)
		rq_expire_head(kv, 1);
}

/* Allocation order after the never-used blocks: the LRU queue merged by
 * stamp with the retained queue's expired prefix, then the live retained
 * blocks.  `it` holds the three cursors. */
struct alloc_it {
	int32_t a, e, l;
};

static struct alloc_it alloc_first(const struct kvcache *kv)
{
	return (struct alloc_it){kv->head, kv->rhead != kv->rlive ? kv->rhead : -1, kv->rlive};
}

static int32_t alloc_next(const struct kvcache *kv, struct alloc_it *it)
{
	const struct kvblock *blk = kv->blk;
	int32_t b;
	if (it->a >= 0 && (it->e < 0 || blk[it->a].stamp < blk[it->e].stamp)) {
		b = it->a;
		it->a = blk[b].next;
	} else if (it->e >= 0) {
		b = it->e;
		it->e = blk[b].next == kv->rlive ? -1 : blk[b].next;
	} else if (it->l >= 0) {
		b = it->l;
		it->l = blk[b].next;
	} else {
		b = -1;
	}
	return b;
}

int64_t kvcache_allocs_before(const struct kvcache *kv, uint64_t stamp, int64_t limit)
{
	int64_t n = kv->total_blocks - kv->touched;
	if (n >= limit)
		return limit;
	struct alloc_it it = alloc_first(kv);
	for (int32_t b = alloc_next(kv, &it); b >= 0 && n < limit && kv->blk[b].stamp < stamp;
	     b = alloc_next(kv, &it))
		n++;
	return n;
}

int64_t kvcache_allocs_before_hashed(const struct kvcache *kv, int64_t limit)
{
	int64_t n = kv->total_blocks - kv->touched;
	if (n >= limit)
		return limit;
	struct alloc_it it = alloc_first(kv);
	for (int32_t b = alloc_next(kv, &it); b >= 0 && n < limit && !kv->blk[b].hashed;
	     b = alloc_next(kv, &it))
		n++;
	return n;
}

int64_t kvcache_used(const struct kvcache *kv)
{
	return kv->touched - kv->free_len;
}

bool kvcache_check(const struct kvcache *kv)
{
	const struct kvblock *blk = kv->blk;
	int64_t n = 0, nr = 0;
	for (int32_t b = kv->head, p = -1; b >= 0; p = b, b = blk[b].next) {
		if (b >= kv->touched || blk[b].prev != p || blk[b].ref != 0 || blk[b].retained_q ||
		    n > kv->touched)
			return false;
		n++;
	}
	/* the retained queue: its expired prefix, then its live blocks from rlive */
	int64_t ne = 0;
	bool live = false;
	for (int32_t b = kv->rhead, p = -1; b >= 0; p = b, b = blk[b].next) {
		if (b >= kv->touched || blk[b].prev != p || blk[b].ref != 0 || !blk[b].retained_q ||
		    !blk[b].hashed || nr + ne > kv->touched)
			return false;
		if (p >= 0 && (blk[p].stamp >= blk[b].stamp || blk[p].expire_ns > blk[b].expire_ns))
			return false;
		if (blk[b].retained_q == RQ_LIVE && !live) {
			if (b != kv->rlive)
				return false;
			live = true;
		}
		if (blk[b].retained_q == RQ_EXPIRED && live)
			return false;
		nr += blk[b].retained_q == RQ_LIVE;
		ne += blk[b].retained_q == RQ_EXPIRED;
	}
	if (!live && kv->rlive != -1)
		return false;
	if (n + nr + ne != kv->free_len || nr != kv->retained || ne != kv->rexpired ||
	    (nr > 0 && nr > kv->retain_cap))
		return false;
	int64_t zero = 0, hashed = 0;
	for (int64_t b = 0; b < kv->touched; b++) {
		if (blk[b].ref < 0)
			return false;
		if (blk[b].ref == 0)
			zero++;
		if (blk[b].hashed) {
			/* b is on the chain its hash maps to */
			if (!kv->prefix_caching)
				return false;
			int32_t x = kv->bucket[home(kv, blk[b].hash)];
			for (int64_t steps = 0; x >= 0 && x != b && steps <= kv->touched; steps++)
				x = blk[x].hnext;
			if (x != b)
				return false;
			hashed++;
		}
	}
	for (int32_t b = kv->head; b >= 0 && blk[b].next >= 0; b = blk[b].next)
		if (blk[b].stamp >= blk[blk[b].next].stamp)
			return false;
	if (zero != kv->free_len || hashed != kv->indexed)
		return false;
	/* every chain holds hashed blocks of its own bucket, linked both ways */
	int64_t chained = 0;
	size_t nb = kv->bucket_bits ? (size_t)1 << kv->bucket_bits : 0;
	for (size_t i = 0; i < nb; i++)
		for (int32_t x = kv->bucket[i], p = -1; x >= 0; p = x, x = blk[x].hnext) {
			if (x >= kv->touched || !blk[x].hashed || blk[x].hprev != p ||
			    home(kv, blk[x].hash) != i || ++chained > kv->indexed)
				return false;
		}
	return chained == kv->indexed;
}
