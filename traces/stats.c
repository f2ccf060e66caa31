/* SPDX-License-Identifier: Apache-2.0
 * stats: one streaming pass over a trace (see stats.h for the definitions).
 *
 * Design.  Per-session figures (tokens, tasks, tools, gaps) are taken when a
 * session is added.  What depends on the order of calls across sessions runs
 * on two timelines driven by one event heap ordered by (time, sequence): the
 * zero-service-time timeline feeds the prefix-cache analysis, the
 * service-time timeline the concurrency figures.  A session stays in memory
 * until both timelines have passed its last call (on the service-time
 * timeline, the end of its last call, when it leaves its turn).
 *
 * Prefix cache.  The unbounded LRU stack of every block seen is kept as
 * runs: a run is blocks lo..hi-1 of one chain of block hashes, lying next to
 * each other in the stack with block lo the most recent, because a call
 * touches its context's blocks last to first.  Since block hashes chain, two
 * chains that agree on block k agree on every block before it; so a call's
 * context is found run by run: `head` maps the hash of each run's first block
 * to the run, a run agrees with the call up to the first block where their
 * hashes differ (one comparison if the whole run agrees, else a binary
 * search), and the next piece of the context starts a run of its own.  The
 * Fenwick tree `bit` holds each run's size at its position (the time it was
 * last moved), so block j of run R has LRU stack distance
 * live - prefix(pos(R)) + (j - lo): the blocks touched since it.  A block at
 * distance d is cached by an LRU cache of more than d blocks.  A call's
 * leading blocks are served up to the first block missing at capacity C, so
 * block k is a hit at C iff the largest distance among blocks 0..k is below
 * C: hist[that maximum] += block_size, added per piece as one range of a
 * difference array.  Then the call's pieces move to the top of the stack,
 * whole runs in O(log runs); a piece that is only the front of a run is
 * copied into a new run first (once per point where two chains part), and
 * the call's new blocks extend its last piece.  A long session that extends
 * its context thus costs O(new blocks + pieces x log) per call, not
 * O(context).  When positions reach the tree's size they are renumbered
 * 1..runs (compaction).  Hash collisions between chains (2^-64 per pair) are
 * reported as an internal error, never merged silently.
 *
 * Turns.  Open turns sit in the pool `turns` (a free list threads the
 * unused entries) and are found by hash_combine(root id, task id) in
 * `turn_of`; each session points at the turn its current call is in.  As
 * calls reach the service-time timeline in start order, a turn keeps the
 * union of its intervals as the length of the pieces already closed plus the
 * last piece [cur_s, cur_e), which a new interval either extends or closes.
 * `roots` maps each subagent session to its root session; a session that is
 * not in it is a root (parents start before their subagents).
 *
 * With no_curve, the segment trie `trie` counts the unbounded hits and
 * distinct blocks (call_cache_trie); the runs, the tree and hist stay empty.
 *
 * Sampled curve (SHARDS, stats.h).  The trie gives the exact unbounded
 * figures; the curve comes from the sampled blocks only.  A session keeps,
 * instead of every block hash of its context, the (index, hash) of the
 * blocks that were sampled when they were hashed (`samp`), so a call that
 * extends its context hashes its new blocks and visits its sampled ones.
 * The sample is an LRU stack of single blocks: `smp` maps a block's hash
 * to its entry, whose `t` is the time it was last touched (a position in
 * the Fenwick tree `sbit`, which counts one per entry at its time), so the
 * sampled stack distance is s_live - prefix(t).  A call's sampled blocks
 * are touched last to first (block 0 the most recent), as in the exact
 * analysis.  `sheap` is a max-heap of the entries by sampling value, for
 * the fixed-size eviction.  A reference at estimated distance D = d' / R
 * hits at every capacity of at least floor(D) + 1 blocks; that smallest
 * capacity is binned 256 bins to an octave (`sw`: weight in tokens per
 * bin), and a capacity counts the bins up to its own: exact where the bins
 * are narrower than a block (below about 370 blocks), else off by at most
 * the share of one bin (0.3% of the capacity).
 *
 * Invariants (with the curve): live == sum of run sizes == prefix(now); every
 * run is non-empty, in `head` under the hash of its first block, at a distinct
 * position in 1..now; hits == sum(hist) (without no_curve); turn_of.len == the pool entries not on
 * the free list, each with holders >= 1, and the sessions pointing at a turn
 * number its holders.
 */
#include "traces/stats.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/map.h"
#include "base/vec.h"
#include "traces/prompt.h"
#include "traces/segtrie.h"
#include "traces/trace.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- exact distributions of integer values ---- */

struct qhist {
	struct map counts;   /* value -> number of samples */
	int64_t n;
	double sum;
	int64_t min, max;
};

static void qhist_init(struct qhist *q)
{
	memset(q, 0, sizeof(*q));
	map_init(&q->counts);
}

static int qhist_add(struct qhist *q, int64_t v)
{
	uint64_t *c = map_get(&q->counts, (uint64_t)v);
	if (c)
		(*c)++;
	else if (map_put(&q->counts, (uint64_t)v, 1) != 0)
		return DIAG_ENOMEM;
	if (q->n == 0 || v < q->min)
		q->min = v;
	if (q->n == 0 || v > q->max)
		q->max = v;
	q->n++;
	q->sum += (double)v;
	return 0;
}

struct qpair {
	int64_t v;
	int64_t cum; /* samples with a value <= v */
};

static int qpair_cmp(const void *a, const void *b)
{
	int64_t x = ((const struct qpair *)a)->v, y = ((const struct qpair *)b)->v;
	return (x > y) - (x < y);
}

/* Value of 0-based rank r among the sorted samples. */
static int64_t qpair_rank(const struct qpair *p, size_t n, int64_t r)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p[mid].cum > r)
			hi = mid;
		else
			lo = mid + 1;
	}
	return p[lo].v;
}

static double qpercentile(const struct qpair *p, size_t n, int64_t total, double pct)
{
	double h = (double)(total - 1) * pct;
	int64_t lo = (int64_t)floor(h);
	double frac = h - (double)lo;
	double a = (double)qpair_rank(p, n, lo);
	if (frac <= 0 || lo + 1 >= total)
		return a;
	double b = (double)qpair_rank(p, n, lo + 1);
	return a + frac * (b - a);
}

/* Summarise; every value is multiplied by `scale` (1 ms -> 0.001 s). */
static int qhist_summary(const struct qhist *q, double scale, struct stats_dist *out)
{
	memset(out, 0, sizeof(*out));
	if (q->n == 0)
		return 0;
	size_t n = q->counts.len;
	struct qpair *p = malloc(n * sizeof(*p));
	if (!p)
		return DIAG_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < q->counts.cap; i++)
		if (q->counts.used[i]) {
			p[k].v = (int64_t)q->counts.slots[i].key;
			p[k].cum = (int64_t)q->counts.slots[i].val;
			k++;
		}
	assert(k == n);
	qsort(p, n, sizeof(*p), qpair_cmp);
	for (size_t i = 1; i < n; i++)
		p[i].cum += p[i - 1].cum;
	assert(p[n - 1].cum == q->n);
	out->n = q->n;
	out->min = (double)q->min * scale;
	out->max = (double)q->max * scale;
	out->mean = q->sum / (double)q->n * scale;
	out->p50 = qpercentile(p, n, q->n, 0.50) * scale;
	out->p90 = qpercentile(p, n, q->n, 0.90) * scale;
	out->p99 = qpercentile(p, n, q->n, 0.99) * scale;
	free(p);
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double dpercentile(const double *v, size_t n, double pct)
{
	double h = (double)(n - 1) * pct;
	size_t lo = (size_t)floor(h);
	double frac = h - (double)lo;
	if (frac <= 0 || lo + 1 >= n)
		return v[lo];
	return v[lo] + frac * (v[lo + 1] - v[lo]);
}

/* Summarise the samples of a vec of doubles (sorted in place), with the
 * percentile rule of qhist_summary. */
static void dsummary(struct vec *v, struct stats_dist *out)
{
	memset(out, 0, sizeof(*out));
	size_t n = v->len;
	if (n == 0)
		return;
	double *a = v->data;
	qsort(a, n, sizeof(*a), dbl_cmp);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += a[i];
	out->n = (int64_t)n;
	out->min = a[0];
	out->max = a[n - 1];
	out->mean = sum / (double)n;
	out->p50 = dpercentile(a, n, 0.50);
	out->p90 = dpercentile(a, n, 0.90);
	out->p99 = dpercentile(a, n, 0.99);
}

static void qhist_release(struct qhist *q)
{
	map_release(&q->counts);
}

/* ---- binary heaps over a vec ---- */

struct ev {
	int64_t t_ns;
	uint64_t seq;        /* tie-break: order of scheduling */
	struct ssess *s;
	int kind;            /* EV_CACHE or EV_CONC */
};

enum { EV_CACHE = 0, EV_CONC = 1 };

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->seq < b->seq);
}

static int ev_push(struct vec *h, struct ev e)
{
	struct ev *slot = vec_push(h);
	if (!slot)
		return DIAG_ENOMEM;
	struct ev *a = h->data;
	size_t i = h->len - 1;
	while (i > 0) {
		size_t up = (i - 1) / 2;
		if (!ev_less(&e, &a[up]))
			break;
		a[i] = a[up];
		i = up;
	}
	a[i] = e;
	return 0;
}

static struct ev ev_pop(struct vec *h)
{
	struct ev *a = h->data;
	struct ev top = a[0];
	struct ev last = a[--h->len];
	size_t n = h->len, i = 0;
	while (n > 0) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && ev_less(&a[c + 1], &a[c]))
			c++;
		if (!ev_less(&a[c], &last))
			break;
		a[i] = a[c];
		i = c;
	}
	if (n > 0)
		a[i] = last;
	return top;
}

static int i64_push(struct vec *h, int64_t v)
{
	int64_t *slot = vec_push(h);
	if (!slot)
		return DIAG_ENOMEM;
	int64_t *a = h->data;
	size_t i = h->len - 1;
	while (i > 0 && a[(i - 1) / 2] > v) {
		a[i] = a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	a[i] = v;
	return 0;
}

static void i64_pop(struct vec *h)
{
	int64_t *a = h->data;
	int64_t last = a[--h->len];
	size_t n = h->len, i = 0;
	while (n > 0) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && a[c + 1] < a[c])
			c++;
		if (a[c] >= last)
			break;
		a[i] = a[c];
		i = c;
	}
	if (n > 0)
		a[i] = last;
}

/* ---- the accumulator ---- */

struct ssess {
	struct trace_session *ts;
	size_t next_cache, next_conc; /* next call on each timeline */
	uint64_t root;                /* id of the root session of its tree */
	int64_t turn;                 /* index in stats.turns of its current turn, or -1 */
	double conc_end_s;            /* end of its last call on the service-time timeline */
	int64_t t_cache_ns;           /* time of call next_cache */
	struct tchain chain;          /* block hashes of the context so far */
	struct vec hashes;            /* uint64_t per full block of prompt + output */
	struct segtrie_path path;     /* no_curve: the context so far in stats.trie */
	struct vec samp;              /* sampled curve: struct sblk of the context */
	int64_t n_blocks;             /* sampled curve: blocks of the context hashed */
	int refs;                     /* timelines still running */
};

/* A block of a session's context that was sampled when it was hashed. */
struct sblk {
	int64_t idx;
	uint64_t h;
};

/* A heap item: the entry and its key, hash_mix64 of its hash, whose top
 * SAMPLE_BITS are its sampling value. */
struct skey {
	uint64_t key;
	int64_t e;
};

/* A block in the sample: its hash and the time it was last touched. */
struct sent {
	uint64_t h;
	int64_t t;                    /* position in sbit; 0 when the entry is free */
};

#define SAMPLE_BITS 24
#define SAMPLE_ONE ((uint64_t)1 << SAMPLE_BITS)
#define BINS_PER_OCTAVE 256
#define SAMPLE_BINS (1 + 64 * BINS_PER_OCTAVE)

struct stats {
	struct stats_opts o;
	struct stats_summary sum;     /* counters; distributions filled at the end */
	struct qhist input, fresh, output, per_session, per_task, gap_ms, conc;
	struct map engineers;
	struct vec evq;               /* struct ev heap */
	uint64_t ev_seq;
	struct vec ends;              /* int64 heap: ends of calls in flight (concurrency) */
	struct vec ctx;               /* scratch: previous call's prompt + output segments */
	int64_t last_start_ns;
	bool any_call;
	int64_t first_ns, last_ns;

	/* prefix cache: stack distances over runs (see the design note) */
	struct vec runs;              /* struct run */
	struct map head;              /* hash of a run's first block -> run index */
	int64_t *bit;                 /* Fenwick tree of run sizes over positions 1..bit_cap */
	int64_t bit_cap;
	int64_t now;                  /* positions handed out since the last compaction */
	int64_t live;                 /* blocks in all runs: the distinct blocks seen */
	struct vec pieces;            /* scratch: struct piece of the call being run */
	struct vec hist;              /* int64: differences of tokens per prefix-max distance */
	int64_t hits;
	int64_t *cum;                 /* after finish: cum[k] = sum(hist[0..k)) */
	size_t cum_len;
	struct segtrie trie;          /* no_curve: the unbounded cache by segments */

	/* sampled curve (see the design note) */
	bool sampled;                 /* this accumulator samples */
	bool want_sampled;            /* auto: the exact curve outgrew its limit */
	uint64_t thresh;              /* T: a block is sampled when value < T */
	struct map smp;               /* hash of a sampled block -> index in sents */
	struct vec sents;             /* struct sent */
	struct vec sfree;             /* int64: free entries of sents */
	struct vec sheap;             /* struct skey: entries, max-heap by key */
	int32_t *sbit;                /* Fenwick tree over times 1..sbit_cap */
	int64_t sbit_cap;
	int64_t snow;                 /* times handed out since the last renumbering */
	int64_t s_live;               /* entries in the sample */
	double *sw;                   /* SAMPLE_BINS weights (tokens) by estimated distance */
	double *scum;                 /* after finish: scum[k] = sum(sw[0..k)) */
	struct vec scratch;           /* uint64: a call's new block hashes */
	struct vec touch;             /* struct sblk: a call's sampled blocks in order,
					 idx = their entry, -1 when new */

	/* turns and their overlap */
	struct vec turns;             /* struct turn pool */
	int64_t turn_free;            /* first unused pool entry, or -1 */
	struct map turn_of;           /* hash of (root, task) -> pool index, open turns */
	struct map roots;             /* subagent session id -> root session id */
	struct vec overlap;           /* double per closed turn whose calls overlap */
	bool finished;
	const char *path;             /* the trace being read by stats_read, for messages */
};

/* Blocks lo..hi-1 of a chain, adjacent in the LRU stack, lo most recent. */
struct run {
	uint64_t *h;                  /* h[i - base]: hash of block i, lo <= i < hi */
	int64_t base, lo, hi;
	int64_t cap;                  /* entries allocated at h */
	int64_t pos;                  /* position in the tree, 0 before it is placed */
};

/* Part of a call's context that lies in one run: its blocks lo..e-1. */
struct piece {
	int64_t run, lo, e;
	bool whole;                   /* the piece is the whole run */
};

/* One open turn (see the header and the design note). */
struct turn {
	uint64_t key;                 /* its key in turn_of */
	double busy_s;                /* sum of call durations */
	double closed_s;              /* union length of the pieces before the last */
	double cur_s, cur_e;          /* the last piece of the union */
	bool any;                     /* an interval was added */
	int32_t holders;              /* sessions now in the turn */
	int64_t next_free;            /* pool free list, when unused */
};

static const struct stats_opts default_opts = {
	.block_size = STATS_DEFAULT_BLOCK_SIZE,
	.decode_tokens_per_s = STATS_DEFAULT_DECODE_TOKENS_PER_S,
};

int stats_new(struct stats **out, const struct stats_opts *o, struct diag *d)
{
	*out = NULL;
	if (!o)
		o = &default_opts;
	if (o->block_size < 1 || o->block_size > (1 << 24))
		return diag_set(d, DIAG_EINPUT, "block size %lld (expected 1..16777216 tokens)",
				(long long)o->block_size);
	if (!(o->decode_tokens_per_s >= 1e-3 && o->decode_tokens_per_s <= 1e9))
		return diag_set(d, DIAG_EINPUT, "decode rate %g tokens/s (expected 0.001..1e9)",
				o->decode_tokens_per_s);
	struct stats *st = calloc(1, sizeof(*st));
	if (!st)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	st->o = *o;
	if (st->o.max_curve_blocks <= 0)
		st->o.max_curve_blocks = STATS_DEFAULT_MAX_CURVE_BLOCKS;
	if (st->o.sample_blocks <= 0)
		st->o.sample_blocks = STATS_DEFAULT_SAMPLE_BLOCKS;
	if (st->o.sample_blocks < 16 || st->o.sample_blocks > ((int64_t)1 << 30) ||
	    (unsigned)st->o.curve > STATS_CURVE_SAMPLED) {
		free(st);
		return diag_set(d, DIAG_EINPUT, "sampled curve of %lld blocks, mode %d (expected "
				"16..2^30 blocks and a mode of enum stats_curve_mode)",
				(long long)o->sample_blocks, (int)o->curve);
	}
	st->sampled = !o->no_curve && o->curve == STATS_CURVE_SAMPLED;
	st->thresh = SAMPLE_ONE;
	map_init(&st->smp);
	vec_init(&st->sents, sizeof(struct sent), VEC_NO_LIMIT);
	vec_init(&st->sfree, sizeof(int64_t), VEC_NO_LIMIT);
	vec_init(&st->sheap, sizeof(struct skey), VEC_NO_LIMIT);
	vec_init(&st->scratch, sizeof(uint64_t), VEC_NO_LIMIT);
	vec_init(&st->touch, sizeof(struct sblk), VEC_NO_LIMIT);
	if (st->sampled && !(st->sw = calloc(SAMPLE_BINS, sizeof(*st->sw)))) {
		free(st);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	qhist_init(&st->input);
	qhist_init(&st->fresh);
	qhist_init(&st->output);
	qhist_init(&st->per_session);
	qhist_init(&st->per_task);
	qhist_init(&st->gap_ms);
	qhist_init(&st->conc);
	map_init(&st->engineers);
	vec_init(&st->evq, sizeof(struct ev), VEC_NO_LIMIT);
	vec_init(&st->ends, sizeof(int64_t), VEC_NO_LIMIT);
	vec_init(&st->ctx, sizeof(struct trace_seg), VEC_NO_LIMIT);
	vec_init(&st->runs, sizeof(struct run), VEC_NO_LIMIT);
	map_init(&st->head);
	vec_init(&st->pieces, sizeof(struct piece), VEC_NO_LIMIT);
	vec_init(&st->hist, sizeof(int64_t), VEC_NO_LIMIT);
	segtrie_init(&st->trie, o->block_size);
	vec_init(&st->turns, sizeof(struct turn), VEC_NO_LIMIT);
	st->turn_free = -1;
	map_init(&st->turn_of);
	map_init(&st->roots);
	vec_init(&st->overlap, sizeof(double), VEC_NO_LIMIT);
	st->sum.block_size = o->block_size;
	st->sum.decode_tokens_per_s = o->decode_tokens_per_s;
	*out = st;
	return 0;
}

static void ssess_free(struct ssess *s)
{
	vec_release(&s->hashes);
	vec_release(&s->samp);
	trace_session_free(s->ts);
	free(s);
}

void stats_free(struct stats *st)
{
	if (!st)
		return;
	struct ev *a = st->evq.data;
	for (size_t i = 0; i < st->evq.len; i++)
		if (--a[i].s->refs == 0)
			ssess_free(a[i].s);
	vec_release(&st->evq);
	vec_release(&st->ends);
	vec_release(&st->ctx);
	qhist_release(&st->input);
	qhist_release(&st->fresh);
	qhist_release(&st->output);
	qhist_release(&st->per_session);
	qhist_release(&st->per_task);
	qhist_release(&st->gap_ms);
	qhist_release(&st->conc);
	map_release(&st->engineers);
	for (size_t i = 0; i < st->runs.len; i++)
		free(VEC_AT(&st->runs, struct run, i).h);
	vec_release(&st->runs);
	map_release(&st->head);
	vec_release(&st->pieces);
	free(st->bit);
	vec_release(&st->hist);
	free(st->cum);
	segtrie_release(&st->trie);
	map_release(&st->smp);
	vec_release(&st->sents);
	vec_release(&st->sfree);
	vec_release(&st->sheap);
	free(st->sbit);
	free(st->sw);
	free(st->scum);
	vec_release(&st->scratch);
	vec_release(&st->touch);
	vec_release(&st->turns);
	map_release(&st->turn_of);
	map_release(&st->roots);
	vec_release(&st->overlap);
	free(st);
}

static int64_t sec_to_ns(double s)
{
	return (int64_t)llround(s * 1e9);
}

/* a + b for times that may pile up past int64 on hostile input */
static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* An input error about line `line` of the trace: "PATH:LINE: ..." when the
 * trace is read by stats_read, "line LINE: ..." for sessions added directly. */
__attribute__((format(printf, 4, 5)))
static int line_err(const struct stats *st, struct diag *d, long line, const char *fmt, ...)
{
	char msg[DIAG_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (st->path)
		return diag_at(d, DIAG_EINPUT, st->path, line, 0, "%s", msg);
	return diag_set(d, DIAG_EINPUT, "line %ld: %s", line, msg);
}

static int nomem(struct diag *d)
{
	return diag_set(d, DIAG_ENOMEM, "out of memory for trace statistics");
}

/* ---- stack distances ---- */

static int64_t bit_prefix(const struct stats *st, int64_t i)
{
	int64_t s = 0;
	for (; i > 0; i -= i & -i)
		s += st->bit[i];
	return s;
}

static void bit_add(struct stats *st, int64_t i, int64_t v)
{
	for (; i > 0 && i <= st->bit_cap; i += i & -i)
		st->bit[i] += v;
}

static struct run *run_at(struct stats *st, int64_t i)
{
	return &VEC_AT(&st->runs, struct run, (size_t)i);
}

/* Renumber the placed runs 1..n in position order and make room: the tree
 * is first reused as the rank table, then rebuilt in O(size). */
static int compact(struct stats *st)
{
	int64_t placed = 0;
	for (size_t i = 0; i < st->runs.len; i++)
		placed += VEC_AT(&st->runs, struct run, i).pos > 0;
	int64_t cap = st->bit_cap;
	if (placed + 1 > cap / 2) {
		int64_t ncap = cap ? cap * 2 : 64;
		while (placed + 1 > ncap / 2)
			ncap *= 2;
		int64_t *nb = realloc(st->bit, (size_t)(ncap + 1) * sizeof(*nb));
		if (!nb)
			return DIAG_ENOMEM;
		st->bit = nb;
		st->bit_cap = ncap;
	}
	int64_t *rank = st->bit;
	memset(rank, 0, (size_t)(st->bit_cap + 1) * sizeof(*rank));
	for (size_t i = 0; i < st->runs.len; i++) {
		const struct run *r = &VEC_AT(&st->runs, struct run, i);
		if (r->pos > 0)
			rank[r->pos] = 1;
	}
	for (int64_t p = 1; p <= st->now; p++)
		rank[p] += rank[p - 1];
	for (size_t i = 0; i < st->runs.len; i++) {
		struct run *r = &VEC_AT(&st->runs, struct run, i);
		if (r->pos > 0)
			r->pos = rank[r->pos];
	}
	memset(st->bit, 0, (size_t)(st->bit_cap + 1) * sizeof(*st->bit));
	for (size_t i = 0; i < st->runs.len; i++) {
		const struct run *r = &VEC_AT(&st->runs, struct run, i);
		if (r->pos > 0)
			st->bit[r->pos] = r->hi - r->lo;
	}
	for (int64_t i = 1; i <= st->bit_cap; i++) {
		int64_t up = i + (i & -i);
		if (up <= st->bit_cap)
			st->bit[up] += st->bit[i];
	}
	st->now = placed;
	return 0;
}

/* Make run i the most recently used. */
static int to_top(struct stats *st, int64_t i)
{
	if (st->now == st->bit_cap && compact(st) != 0)
		return DIAG_ENOMEM;
	struct run *r = run_at(st, i);
	int64_t w = r->hi - r->lo;
	bit_add(st, r->pos, -w);
	r->pos = ++st->now;
	bit_add(st, r->pos, w);
	return 0;
}

/* A new, unplaced run of blocks lo..lo+n-1 with hashes h; index in *out. */
static int run_new(struct stats *st, int64_t lo, const uint64_t *h, int64_t n, int64_t *out)
{
	uint64_t *copy = malloc((size_t)n * sizeof(*copy));
	struct run *r = copy ? vec_push(&st->runs) : NULL;
	if (!r) {
		free(copy);
		return DIAG_ENOMEM;
	}
	memcpy(copy, h, (size_t)n * sizeof(*copy));
	*r = (struct run){.h = copy, .base = lo, .lo = lo, .hi = lo + n, .cap = n};
	*out = (int64_t)st->runs.len - 1;
	if (map_put(&st->head, h[0], (uint64_t)*out) != 0) {
		free(copy);
		st->runs.len--;
		return DIAG_ENOMEM;
	}
	return 0;
}

/* Append blocks hi..hi+n-1 (hashes h) to run i. */
static int run_append(struct stats *st, int64_t i, const uint64_t *h, int64_t n)
{
	struct run *r = run_at(st, i);
	if (r->hi - r->base + n > r->cap) {
		if (r->lo > r->base) { /* drop the blocks cut from the front */
			memmove(r->h, r->h + (r->lo - r->base), (size_t)(r->hi - r->lo) * sizeof(*r->h));
			r->base = r->lo;
		}
		if (r->hi - r->base + n > r->cap) {
			int64_t ncap = r->cap * 2 > r->hi - r->base + n ? r->cap * 2 : r->hi - r->base + n;
			uint64_t *nh = realloc(r->h, (size_t)ncap * sizeof(*nh));
			if (!nh)
				return DIAG_ENOMEM;
			r->h = nh;
			r->cap = ncap;
		}
	}
	memcpy(r->h + (r->hi - r->base), h, (size_t)n * sizeof(*h));
	r->hi += n;
	bit_add(st, r->pos, n);
	return 0;
}

/* Cut blocks lo..e-1 (e < hi) from the front of run i into a new unplaced
 * run; its index in *out.  The rest stays where it is in the stack. */
static int run_split(struct stats *st, int64_t i, int64_t e, int64_t *out)
{
	struct run *r = run_at(st, i);
	int64_t lo = r->lo;
	int rc = run_new(st, lo, r->h + (lo - r->base), e - lo, out); /* re-points the head */
	if (rc != 0)
		return rc;
	r = run_at(st, i); /* the pool may have moved */
	r->lo = e;
	bit_add(st, r->pos, -(e - lo));
	if (map_put(&st->head, r->h[e - r->base], (uint64_t)i) != 0)
		return DIAG_ENOMEM;
	if (r->lo - r->base > r->hi - r->lo && r->lo - r->base > 64) { /* give memory back */
		memmove(r->h, r->h + (r->lo - r->base), (size_t)(r->hi - r->lo) * sizeof(*r->h));
		r->base = r->lo;
		uint64_t *nh = realloc(r->h, (size_t)(r->hi - r->lo) * sizeof(*nh));
		if (nh) {
			r->h = nh;
			r->cap = r->hi - r->lo;
		}
	}
	return 0;
}

#ifndef NDEBUG
/* The invariants of the design note, for asserts: O(runs). */
static bool curve_ok(const struct stats *st)
{
	int64_t blocks = 0, placed = 0;
	for (size_t i = 0; i < st->runs.len; i++) {
		const struct run *r = &VEC_AT(&st->runs, struct run, i);
		const uint64_t *at = map_get(&st->head, r->h[r->lo - r->base]);
		if (r->lo >= r->hi || r->lo < r->base || r->hi - r->base > r->cap || r->pos < 1 ||
		    r->pos > st->now || !at || *at != i)
			return false;
		if (bit_prefix(st, r->pos) - bit_prefix(st, r->pos - 1) != r->hi - r->lo)
			return false;
		blocks += r->hi - r->lo;
		placed++;
	}
	return blocks == st->live && bit_prefix(st, st->now) == st->live &&
	       (size_t)placed == st->head.len;
}
#endif

/* tokens added to hist[a..b] (a difference array until stats_finish) */
static int hist_add(struct stats *st, int64_t a, int64_t b, int64_t tokens)
{
	size_t need = (size_t)b + 2;
	if (need > st->hist.len) {
		if (vec_reserve(&st->hist, need) != 0)
			return DIAG_ENOMEM;
		memset(vec_at(&st->hist, st->hist.len), 0, (need - st->hist.len) * sizeof(int64_t));
		st->hist.len = need;
	}
	VEC_AT(&st->hist, int64_t, (size_t)a) += tokens;
	VEC_AT(&st->hist, int64_t, (size_t)b + 1) -= tokens;
	return 0;
}

/* ---- the zero-service-time timeline: prefix cache ---- */

/* Without the curve: the unbounded cache on segment boundaries.  A call
 * reuses floor(shared / B) blocks of the tokens earlier calls computed, at
 * most floor((P - 1) / B); its block hashes are never made. */
static int call_cache_trie(struct stats *st, struct ssess *ss, struct diag *d)
{
	const struct trace_session *ts = ss->ts;
	const struct trace_call *c = &ts->calls[ss->next_cache];
	const int64_t B = st->o.block_size;
	if (!c->extends_prev)
		segtrie_path_reset(&ss->path);
	struct segtrie_call call;
	if (segtrie_begin(&st->trie, &ss->path, c->prompt_tokens + c->output_tokens - 1, &call) != 0)
		return nomem(d);
	for (size_t i = 0; i < c->n_segs; i++)
		if (segtrie_feed(&st->trie, &ss->path, &call, c->segs[i].content, c->segs[i].tokens) != 0)
			return nomem(d);
	if (ss->path.tokens != c->prompt_tokens)
		return diag_set(d, DIAG_EINTERNAL, "session at line %ld call %lld: %lld prompt tokens "
				"but segments add to %lld", ts->line, (long long)c->seq,
				(long long)c->prompt_tokens, (long long)ss->path.tokens);
	if (segtrie_feed(&st->trie, &ss->path, &call, trace_output_content(ts->id, c->seq),
			 c->output_tokens) != 0)
		return nomem(d);
	int64_t hit = call.shared_tokens / B, max_hit = (c->prompt_tokens - 1) / B;
	st->hits += (hit < max_hit ? hit : max_hit) * B;
	return 0;
}

/* ---- the sampled curve ---- */

/* A block's sampling value, 0..SAMPLE_ONE-1: sampled while value < thresh. */
static uint64_t svalue(uint64_t h)
{
	return hash_mix64(h) >> (64 - SAMPLE_BITS);
}

static struct sent *sent_at(struct stats *st, int64_t i)
{
	return &VEC_AT(&st->sents, struct sent, (size_t)i);
}

static void sbit_add(struct stats *st, int64_t i, int32_t v)
{
	for (; i > 0 && i <= st->sbit_cap; i += i & -i)
		st->sbit[i] += v;
}

static int64_t sbit_prefix(const struct stats *st, int64_t i)
{
	int64_t s = 0;
	for (; i > 0; i -= i & -i)
		s += st->sbit[i];
	return s;
}

/* Renumber the entries' times 1..s_live in order and make room: O(cap). */
static int srenumber(struct stats *st)
{
	int64_t cap = st->sbit_cap;
	if (st->s_live + 1 > cap / 2) {
		int64_t ncap = cap ? cap : 64;
		while (st->s_live + 1 > ncap / 2)
			ncap *= 2;
		int32_t *nb = realloc(st->sbit, (size_t)(ncap + 1) * sizeof(*nb));
		if (!nb)
			return DIAG_ENOMEM;
		st->sbit = nb;
		st->sbit_cap = ncap;
	}
	/* the old times are < snow + 1 <= cap + 1: rank them in the tree's
	 * array (ranks <= s_live <= 2^30 fit) */
	int32_t *rank = st->sbit;
	memset(rank, 0, (size_t)(st->sbit_cap + 1) * sizeof(*rank));
	for (size_t i = 0; i < st->sents.len; i++) {
		const struct sent *e = &VEC_AT(&st->sents, struct sent, i);
		if (e->t > 0)
			rank[e->t] = 1;
	}
	for (int64_t p = 1; p <= st->snow; p++)
		rank[p] += rank[p - 1];
	for (size_t i = 0; i < st->sents.len; i++) {
		struct sent *e = &VEC_AT(&st->sents, struct sent, i);
		if (e->t > 0)
			e->t = rank[e->t];
	}
	memset(st->sbit, 0, (size_t)(st->sbit_cap + 1) * sizeof(*st->sbit));
	for (int64_t i = 1; i <= st->s_live; i++)
		st->sbit[i] = 1;
	for (int64_t i = 1; i <= st->sbit_cap; i++) {
		int64_t up = i + (i & -i);
		if (up <= st->sbit_cap)
			st->sbit[up] += st->sbit[i];
	}
	st->snow = st->s_live;
	return 0;
}

static int sheap_push(struct stats *st, int64_t e)
{
	struct skey *slot = vec_push(&st->sheap);
	if (!slot)
		return DIAG_ENOMEM;
	struct skey x = {.key = hash_mix64(sent_at(st, e)->h), .e = e};
	struct skey *a = st->sheap.data;
	size_t i = st->sheap.len - 1;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (a[p].key >= x.key)
			break;
		a[i] = a[p];
		i = p;
	}
	a[i] = x;
	return 0;
}

static int64_t sheap_pop(struct stats *st)
{
	struct skey *a = st->sheap.data;
	struct skey top = a[0], last = a[--st->sheap.len];
	size_t n = st->sheap.len, i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && a[c].key < a[c + 1].key)
			c++;
		if (last.key >= a[c].key)
			break;
		a[i] = a[c];
		i = c;
	}
	if (n > 0)
		a[i] = last;
	return top.e;
}

/* Touch entry e (-1: a new block of hash h) as the most recent. */
static int stouch(struct stats *st, int64_t e, uint64_t h)
{
	if (st->snow == st->sbit_cap && srenumber(st) != 0)
		return DIAG_ENOMEM;
	if (e < 0) {
		if (st->sfree.len > 0) {
			e = VEC_AT(&st->sfree, int64_t, st->sfree.len - 1);
			st->sfree.len--;
		} else {
			if (!vec_push(&st->sents))
				return DIAG_ENOMEM;
			e = (int64_t)st->sents.len - 1;
		}
		*sent_at(st, e) = (struct sent){.h = h};
		if (map_put(&st->smp, h, (uint64_t)e) != 0 || sheap_push(st, e) != 0)
			return DIAG_ENOMEM;
		st->s_live++;
	} else {
		sbit_add(st, sent_at(st, e)->t, -1);
	}
	struct sent *x = sent_at(st, e);
	x->t = ++st->snow;
	sbit_add(st, x->t, 1);
	return 0;
}

/* Fixed size: while the sample is too large, lower the threshold to the
 * largest value held and drop every block at or above it. */
static void sevict(struct stats *st)
{
	while (st->s_live > st->o.sample_blocks) {
		st->thresh = VEC_AT(&st->sheap, struct skey, 0).key >> (64 - SAMPLE_BITS);
		while (st->sheap.len > 0 &&
		       VEC_AT(&st->sheap, struct skey, 0).key >> (64 - SAMPLE_BITS) >= st->thresh) {
			int64_t e = sheap_pop(st);
			struct sent *x = sent_at(st, e);
			sbit_add(st, x->t, -1);
			map_del(&st->smp, x->h);
			x->t = 0;
			int64_t *f = vec_push(&st->sfree);
			if (f) /* else the entry is lost to reuse, nothing else */
				*f = e;
			st->s_live--;
		}
	}
}

/* The bin of a capacity of c >= 1 blocks: BINS_PER_OCTAVE to an octave,
 * so a bin is narrower than one block below about 370 blocks. */
static size_t sbin(double c)
{
	double b = floor(log2(c) * BINS_PER_OCTAVE);
	return b <= 0 ? 0 : b >= SAMPLE_BINS - 1 ? SAMPLE_BINS - 1 : (size_t)b;
}

static int call_cache_sampled(struct stats *st, struct ssess *ss, struct diag *d)
{
	const struct trace_session *ts = ss->ts;
	const struct trace_call *c = &ts->calls[ss->next_cache];
	const int64_t B = st->o.block_size;
	int rc = call_cache_trie(st, ss, d); /* the exact unbounded figures */
	if (rc != 0)
		return rc;
	int64_t after = (c->prompt_tokens + c->output_tokens) / B;
	if (after > st->o.max_curve_blocks)
		return line_err(st, d, c->line ? c->line : ts->line, "call %lld needs the capacity "
				"curve to track more than %lld blocks of %lld tokens (expected a smaller "
				"trace, a larger --block-size, or --no-curve)", (long long)c->seq,
				(long long)st->o.max_curve_blocks, (long long)B);
	if (!c->extends_prev) {
		tchain_init(&ss->chain, B);
		vec_clear(&ss->samp);
		ss->n_blocks = 0;
	}
	vec_clear(&st->scratch);
	for (size_t i = 0; i < c->n_segs; i++)
		if (tchain_feed(&ss->chain, c->segs[i].content, c->segs[i].tokens, &st->scratch) != 0)
			return nomem(d);
	if (tchain_feed(&ss->chain, trace_output_content(ts->id, c->seq), c->output_tokens,
			&st->scratch) != 0)
		return nomem(d);
	for (size_t i = 0; i < st->scratch.len; i++) {
		uint64_t h = VEC_AT(&st->scratch, uint64_t, i);
		if (svalue(h) >= st->thresh)
			continue;
		struct sblk *b = vec_push(&ss->samp);
		if (!b)
			return nomem(d);
		*b = (struct sblk){.idx = ss->n_blocks + (int64_t)i, .h = h};
	}
	ss->n_blocks += (int64_t)st->scratch.len;
	int64_t n_h = ss->n_blocks;
	int64_t max_hit = (c->prompt_tokens - 1) / B;
	if (max_hit > n_h)
		max_hit = n_h;
	int64_t held = (c->prompt_tokens + c->output_tokens - 1) / B;
	if (held > n_h)
		held = n_h;
	/* look the sampled blocks up before anything moves; a block never seen
	 * means every later one of the chain is new too */
	double rate = (double)st->thresh / (double)SAMPLE_ONE;
	double worst = 0;
	bool missing = false;
	vec_clear(&st->touch);
	size_t keep = 0;
	for (size_t i = 0; i < ss->samp.len; i++) {
		struct sblk b = VEC_AT(&ss->samp, struct sblk, i);
		if (svalue(b.h) >= st->thresh)
			continue; /* left the sample */
		VEC_AT(&ss->samp, struct sblk, keep++) = b;
		if (b.idx >= held)
			continue;
		const uint64_t *e = map_get(&st->smp, b.h);
		missing = missing || !e;
		if (!missing) {
			double dist = (double)(st->s_live - sbit_prefix(st, sent_at(st, (int64_t)*e)->t)) /
				      rate;
			if (dist > worst)
				worst = dist;
			/* a hit at every capacity above the distance */
			if (b.idx < max_hit)
				st->sw[sbin(floor(worst) + 1)] += (double)B / rate;
		}
		struct sblk *t = vec_push(&st->touch);
		if (!t)
			return nomem(d);
		*t = (struct sblk){.idx = e ? (int64_t)*e : -1, .h = b.h};
	}
	ss->samp.len = keep;
	/* touch them last to first, so block 0 ends the most recent */
	for (size_t q = st->touch.len; q-- > 0;) {
		struct sblk t = VEC_AT(&st->touch, struct sblk, q);
		if (stouch(st, t.idx, t.h) != 0)
			return nomem(d);
	}
	sevict(st);
	return 0;
}

static int call_cache(struct stats *st, struct ssess *ss, struct diag *d)
{
	const struct trace_session *ts = ss->ts;
	const struct trace_call *c = &ts->calls[ss->next_cache];
	const int64_t B = st->o.block_size;
	if (st->o.no_curve)
		return call_cache_trie(st, ss, d);
	if (st->sampled)
		return call_cache_sampled(st, ss, d);
	/* check the limit on what the call may add before hashing any of it:
	 * a 10^9-token segment is 62.5 million blocks of 16 tokens */
	int64_t after = (c->prompt_tokens + c->output_tokens) / B;
	int64_t before = c->extends_prev ? (int64_t)ss->hashes.len : 0;
	int64_t max = st->o.max_curve_blocks;
	if (st->o.curve == STATS_CURVE_AUTO && max > STATS_AUTO_EXACT_BLOCKS)
		max = STATS_AUTO_EXACT_BLOCKS;
	if (after > max || st->live > max - (after - before)) {
		st->want_sampled = st->o.curve == STATS_CURVE_AUTO;
		return line_err(st, d, c->line ? c->line : ts->line, "call %lld needs the capacity "
				"curve to track more than %lld blocks of %lld tokens (expected a smaller "
				"trace, a larger --block-size, or --no-curve)", (long long)c->seq,
				(long long)max, (long long)B);
	}
	if (!c->extends_prev) {
		tchain_init(&ss->chain, B);
		vec_clear(&ss->hashes);
	}
	for (size_t i = 0; i < c->n_segs; i++)
		if (tchain_feed(&ss->chain, c->segs[i].content, c->segs[i].tokens, &ss->hashes) != 0)
			return nomem(d);
	if (ss->chain.tokens != c->prompt_tokens)
		return diag_set(d, DIAG_EINTERNAL, "session at line %ld call %lld: %lld prompt tokens "
				"but segments add to %lld", ts->line, (long long)c->seq,
				(long long)c->prompt_tokens, (long long)ss->chain.tokens);
	if (tchain_feed(&ss->chain, trace_output_content(ts->id, c->seq), c->output_tokens,
			&ss->hashes) != 0)
		return nomem(d);
	const uint64_t *h = ss->hashes.data;
	int64_t n_h = (int64_t)ss->hashes.len;
	int64_t max_hit = (c->prompt_tokens - 1) / B;
	if (max_hit > n_h)
		max_hit = n_h;
	int64_t held = (c->prompt_tokens + c->output_tokens - 1) / B;
	if (held > n_h)
		held = n_h;
	/* find the context's pieces and count hits, before anything moves */
	vec_clear(&st->pieces);
	int64_t k = 0, worst = 0;
	while (k < held) {
		const uint64_t *ri = map_get(&st->head, h[k]);
		if (!ri)
			break;
		struct run *r = run_at(st, (int64_t)*ri);
		if (r->lo != k)
			return diag_set(d, DIAG_EINTERNAL, "session at line %ld call %lld: block hash "
					"collision at block %lld", ts->line, (long long)c->seq, (long long)k);
		int64_t end = r->hi < held ? r->hi : held, e = end;
		if (r->h[end - 1 - r->base] != h[end - 1]) { /* they part: find where */
			int64_t lo = k + 1, hi = end - 1; /* block lo-1 agrees, block hi does not */
			while (lo < hi) {
				int64_t mid = lo + (hi - lo) / 2;
				if (r->h[mid - r->base] == h[mid])
					lo = mid + 1;
				else
					hi = mid;
			}
			e = lo;
		}
		if (k < max_hit) {
			/* block k + i is at distance dist + i; hit at prefix max(worst, dist + i) */
			int64_t m = (e < max_hit ? e : max_hit) - k;
			int64_t dist = st->live - bit_prefix(st, r->pos);
			int64_t flat = worst - dist + 1; /* blocks whose distance is <= worst */
			flat = flat < 0 ? 0 : flat > m ? m : flat;
			if (flat > 0 && hist_add(st, worst, worst, flat * B) != 0)
				return nomem(d);
			if (flat < m && hist_add(st, dist + flat, dist + m - 1, B) != 0)
				return nomem(d);
			if (dist + m - 1 > worst)
				worst = dist + m - 1;
			st->hits += m * B;
		}
		struct piece *p = vec_push(&st->pieces);
		if (!p)
			return nomem(d);
		*p = (struct piece){.run = (int64_t)*ri, .lo = k, .e = e, .whole = e == r->hi};
		k = e;
	}
	/* move the pieces to the top, last first, so block 0 ends most recent;
	 * the blocks never seen (k..held-1) extend the last piece */
	int64_t fresh = held - k;
	st->live += fresh;
	size_t np = st->pieces.len;
	if (np == 0) {
		int64_t i;
		if (fresh > 0 && (run_new(st, 0, h, fresh, &i) != 0 || to_top(st, i) != 0))
			return nomem(d);
		return 0;
	}
	for (size_t q = np; q-- > 0;) {
		struct piece p = VEC_AT(&st->pieces, struct piece, q);
		int64_t i = p.run;
		if (!p.whole && run_split(st, p.run, p.e, &i) != 0)
			return nomem(d);
		if (q == np - 1 && fresh > 0 && run_append(st, i, h + k, fresh) != 0)
			return nomem(d);
		if (to_top(st, i) != 0)
			return nomem(d);
	}
	return 0;
}

/* ---- the service-time timeline: concurrency ---- */

static int64_t call_duration_ns(const struct stats *st, const struct trace_call *c)
{
	double s = (double)c->output_tokens / st->o.decode_tokens_per_s;
	return s >= 1e9 ? (int64_t)1e18 : sec_to_ns(s);
}

/* ---- turns ---- */

static struct turn *turn_at(struct stats *st, int64_t i)
{
	return &VEC_AT(&st->turns, struct turn, (size_t)i);
}

/* Session ss leaves its turn; the last one out closes it and records its
 * overlap concurrency if its calls overlap. */
static int turn_leave(struct stats *st, struct ssess *ss)
{
	if (ss->turn < 0)
		return 0;
	int64_t i = ss->turn;
	struct turn *t = turn_at(st, i);
	ss->turn = -1;
	assert(t->holders > 0);
	if (--t->holders > 0)
		return 0;
	double uni = t->any ? t->closed_s + (t->cur_e - t->cur_s) : 0.0;
	bool removed = map_del(&st->turn_of, t->key);
	assert(removed);
	(void)removed;
	t->next_free = st->turn_free;
	st->turn_free = i;
	if (uni > 0 && t->busy_s / uni > 1 + 1e-9) {
		double *v = vec_push(&st->overlap);
		if (!v)
			return DIAG_ENOMEM;
		*v = t->busy_s / uni;
	}
	return 0;
}

/* Put ss in the turn of (its root, task), opening it if none is open. */
static int turn_enter(struct stats *st, struct ssess *ss, uint64_t task)
{
	uint64_t key = hash_combine(ss->root, task);
	if (ss->turn >= 0 && turn_at(st, ss->turn)->key == key)
		return 0;
	if (turn_leave(st, ss) != 0)
		return DIAG_ENOMEM;
	const uint64_t *open = map_get(&st->turn_of, key);
	if (open) {
		ss->turn = (int64_t)*open;
		turn_at(st, ss->turn)->holders++;
		return 0;
	}
	int64_t i = st->turn_free;
	if (i >= 0) {
		st->turn_free = turn_at(st, i)->next_free;
	} else {
		if (!vec_push(&st->turns))
			return DIAG_ENOMEM;
		i = (int64_t)st->turns.len - 1;
	}
	if (map_put(&st->turn_of, key, (uint64_t)i) != 0) {
		turn_at(st, i)->next_free = st->turn_free;
		st->turn_free = i;
		return DIAG_ENOMEM;
	}
	*turn_at(st, i) = (struct turn){.key = key, .holders = 1, .next_free = -1};
	ss->turn = i;
	st->sum.turns++;
	return 0;
}

/* Add the call interval [s, e) to ss's turn.  Intervals come in start order
 * up to rounding (the event order is in whole nanoseconds). */
static void turn_add(struct stats *st, const struct ssess *ss, double s, double e)
{
	struct turn *t = turn_at(st, ss->turn);
	t->busy_s += e - s;
	if (!t->any) {
		t->any = true;
		t->cur_s = s;
		t->cur_e = e;
	} else if (s >= t->cur_e) {
		t->closed_s += t->cur_e - t->cur_s;
		t->cur_s = s;
		t->cur_e = e;
	} else if (e > t->cur_e) {
		t->cur_e = e;
	}
}

static int call_conc(struct stats *st, struct ssess *ss, int64_t t_ns, int64_t *end_ns)
{
	while (st->ends.len > 0 && VEC_AT(&st->ends, int64_t, 0) <= t_ns)
		i64_pop(&st->ends);
	if (qhist_add(&st->conc, (int64_t)st->ends.len + 1) != 0)
		return DIAG_ENOMEM;
	const struct trace_session *ts = ss->ts;
	const struct trace_call *c = &ts->calls[ss->next_conc];
	*end_ns = sat_add(t_ns, call_duration_ns(st, c));
	if (i64_push(&st->ends, *end_ns) != 0)
		return DIAG_ENOMEM;
	if (ts->open_loop)
		return 0;
	double start_s = ss->next_conc == 0 ? ts->t_s : ss->conc_end_s + c->gap_s;
	ss->conc_end_s = start_s + (double)c->output_tokens / st->o.decode_tokens_per_s;
	if (turn_enter(st, ss, c->task) != 0)
		return DIAG_ENOMEM;
	turn_add(st, ss, start_s, ss->conc_end_s);
	return 0;
}

/* ---- events ---- */

static int schedule(struct stats *st, struct ssess *ss, int kind, int64_t t_ns)
{
	struct ev e = {.t_ns = t_ns, .seq = st->ev_seq++, .s = ss, .kind = kind};
	return ev_push(&st->evq, e);
}

/* Run the call that is due on timeline `kind` at t_ns and schedule the next;
 * the session is freed when both timelines are past its end.  On error the
 * session is freed only if no event refers to it any more. */
static int run(struct stats *st, struct ssess *ss, int kind, int64_t t_ns, struct diag *d)
{
	const struct trace_session *ts = ss->ts;
	int rc;
	if (kind == EV_CACHE) {
		if (!st->any_call || t_ns < st->first_ns)
			st->first_ns = t_ns;
		if (!st->any_call || t_ns > st->last_ns)
			st->last_ns = t_ns;
		st->any_call = true;
		rc = call_cache(st, ss, d);
		if (rc == 0 && ++ss->next_cache < ts->n_calls) {
			ss->t_cache_ns = sat_add(t_ns, sec_to_ns(ts->calls[ss->next_cache].gap_s));
			if (schedule(st, ss, kind, ss->t_cache_ns) == 0)
				return 0;
			rc = nomem(d);
		}
	} else if (ss->next_conc == ts->n_calls) {
		/* the end of the session's last call: it leaves its turn */
		rc = turn_leave(st, ss) != 0 ? nomem(d) : 0;
	} else {
		int64_t end_ns = 0;
		rc = call_conc(st, ss, t_ns, &end_ns);
		if (rc == 0 && ++ss->next_conc < ts->n_calls) {
			rc = schedule(st, ss, kind, sat_add(end_ns, sec_to_ns(ts->calls[ss->next_conc].gap_s)));
			if (rc == 0)
				return 0;
		} else if (rc == 0 && ss->turn >= 0) {
			rc = schedule(st, ss, kind, end_ns);
			if (rc == 0)
				return 0;
		}
		if (rc != 0)
			rc = nomem(d);
	}
	if (--ss->refs == 0)
		ssess_free(ss);
	return rc;
}

/* Process every event due before `t_ns` (all of them with INT64_MAX). */
static int drain(struct stats *st, int64_t t_ns, bool inclusive, struct diag *d)
{
	while (st->evq.len > 0) {
		const struct ev *top = st->evq.data;
		if (top->t_ns > t_ns || (!inclusive && top->t_ns == t_ns))
			break;
		struct ev e = ev_pop(&st->evq);
		int rc = run(st, e.s, e.kind, e.t_ns, d);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* ---- per-session figures ---- */

static int session_figures(struct stats *st, const struct trace_session *s)
{
	struct stats_summary *m = &st->sum;
	m->sessions++;
	if (s->open_loop)
		m->open_loop_calls++;
	else if (qhist_add(&st->per_session, (int64_t)s->n_calls) != 0)
		return DIAG_ENOMEM;
	if (s->engineer) {
		if (!map_get(&st->engineers, s->engineer) && map_put(&st->engineers, s->engineer, 1) != 0)
			return DIAG_ENOMEM;
	}
	vec_clear(&st->ctx);
	int64_t task_calls = 0;
	for (size_t i = 0; i < s->n_calls; i++) {
		const struct trace_call *c = &s->calls[i];
		m->calls++;
		m->prompt_tokens += c->prompt_tokens;
		m->output_tokens += c->output_tokens;
		int64_t len = c->prompt_tokens + c->output_tokens;
		if (len > m->longest_call_tokens)
			m->longest_call_tokens = len;
		if (st->o.context_tokens > 0 && len > st->o.context_tokens)
			m->calls_over_context++;
		int64_t fresh;
		if (i > 0 && c->extends_prev) {
			const struct trace_call *p = &s->calls[i - 1];
			fresh = c->prompt_tokens - p->prompt_tokens - p->output_tokens;
		} else {
			const struct trace_seg *a = st->ctx.data;
			int64_t common = 0;
			for (size_t k = 0; k < c->n_segs && k < st->ctx.len; k++) {
				if (a[k].content != c->segs[k].content || a[k].tokens != c->segs[k].tokens)
					break;
				common += c->segs[k].tokens;
			}
			fresh = c->prompt_tokens - common;
			vec_clear(&st->ctx);
		}
		if (vec_append(&st->ctx, c->segs, c->n_segs) != 0)
			return DIAG_ENOMEM;
		struct trace_seg *o = vec_push(&st->ctx);
		if (!o)
			return DIAG_ENOMEM;
		o->content = trace_output_content(s->id, c->seq);
		o->tokens = c->output_tokens;
		m->new_tokens += fresh;
		if (qhist_add(&st->input, c->prompt_tokens) != 0 || qhist_add(&st->fresh, fresh) != 0 ||
		    qhist_add(&st->output, c->output_tokens) != 0)
			return DIAG_ENOMEM;
		if (i > 0 && qhist_add(&st->gap_ms, llround(c->gap_s * 1000.0)) != 0)
			return DIAG_ENOMEM;
		if (c->tool == TRACE_TOOL_OK)
			m->tool_ok++;
		else if (c->tool == TRACE_TOOL_FAIL)
			m->tool_fail++;
		if (c->retry_of >= 0) {
			m->retry_calls++;
			m->retry_prompt_tokens += c->prompt_tokens;
		}
		if (s->open_loop)
			continue;
		task_calls++;
		if ((i + 1 == s->n_calls || s->calls[i + 1].task != c->task) && s->parent) {
			m->subagent_task_runs++; /* inside the parent's task */
			task_calls = 0;
		} else if (i + 1 == s->n_calls || s->calls[i + 1].task != c->task) {
			m->tasks++;
			m->tasks_accepted += c->accepted == TRACE_ACCEPT_TRUE;
			m->tasks_rejected += c->accepted == TRACE_ACCEPT_FALSE;
			if (qhist_add(&st->per_task, task_calls) != 0)
				return DIAG_ENOMEM;
			task_calls = 0;
		}
	}
	return 0;
}

int stats_add(struct stats *st, struct trace_session *s, struct diag *d)
{
	assert(!st->finished);
	if (!trace_session_check(s)) {
		long line = s ? s->line : 0;
		trace_session_free(s);
		return line_err(st, d, line, "session breaks the trace rules (expected what "
				"trace_session_check accepts)");
	}
	int64_t t_ns = sec_to_ns(s->t_s);
	if (t_ns < st->last_start_ns) {
		long line = s->line;
		trace_session_free(s);
		return line_err(st, d, line, "session starts before the previous one (expected "
				"sessions in start order)");
	}
	st->last_start_ns = t_ns;
	int rc = drain(st, t_ns, false, d);
	if (rc == 0 && session_figures(st, s) != 0)
		rc = nomem(d);
	if (rc != 0) {
		trace_session_free(s);
		return rc;
	}
	struct ssess *ss = calloc(1, sizeof(*ss));
	if (!ss) {
		trace_session_free(s);
		return nomem(d);
	}
	ss->ts = s;
	ss->refs = 2;
	ss->turn = -1;
	ss->root = s->id;
	vec_init(&ss->hashes, sizeof(uint64_t), VEC_NO_LIMIT);
	vec_init(&ss->samp, sizeof(struct sblk), VEC_NO_LIMIT);
	if (s->parent && !s->open_loop) {
		const uint64_t *r = map_get(&st->roots, s->parent);
		ss->root = r ? *r : s->parent;
		if (map_put(&st->roots, s->id, ss->root) != 0) {
			ssess_free(ss);
			return nomem(d);
		}
	}
	/* the first call goes now on both timelines; if the first run fails
	 * the second still owns the session and frees it */
	rc = run(st, ss, EV_CACHE, t_ns, d);
	int rc2 = run(st, ss, EV_CONC, t_ns, d);
	return rc != 0 ? rc : rc2;
}

int stats_finish(struct stats *st, struct stats_summary *out, struct diag *d)
{
	assert(!st->finished);
	int rc = drain(st, INT64_MAX, true, d);
	if (rc != 0)
		return rc;
	assert(st->o.no_curve || st->sampled || curve_ok(st));
	st->finished = true;
	if (st->sampled) {
		if (!(st->scum = malloc((SAMPLE_BINS + 1) * sizeof(*st->scum))))
			return nomem(d);
		st->scum[0] = 0;
		for (size_t i = 0; i < SAMPLE_BINS; i++)
			st->scum[i + 1] = st->scum[i] + st->sw[i];
		st->sum.curve_sampled = true;
		st->sum.curve_sample_rate = (double)st->thresh / (double)SAMPLE_ONE;
		st->sum.curve_sample_blocks = st->s_live;
	}
	st->cum_len = st->hist.len + 1;
	st->cum = malloc(st->cum_len * sizeof(*st->cum));
	if (!st->cum)
		return nomem(d);
	st->cum[0] = 0;
	int64_t at = 0; /* hist[i], summed from its differences */
	for (size_t i = 0; i < st->hist.len; i++) {
		at += VEC_AT(&st->hist, int64_t, i);
		st->cum[i + 1] = st->cum[i] + at;
	}
	if (!st->o.no_curve && !st->sampled && st->cum[st->hist.len] != st->hits)
		return diag_set(d, DIAG_EINTERNAL, "invariant: prefix hits %lld != histogram %lld",
				(long long)st->hits, (long long)st->cum[st->hist.len]);
	struct stats_summary *m = &st->sum;
	m->engineers = (int64_t)st->engineers.len;
	m->tool_failure_rate = m->tool_ok + m->tool_fail
		? (double)m->tool_fail / (double)(m->tool_ok + m->tool_fail) : 0.0;
	m->retry_rate = m->calls ? (double)m->retry_calls / (double)m->calls : 0.0;
	m->first_t_s = st->any_call ? (double)st->first_ns / 1e9 : 0.0;
	m->last_t_s = st->any_call ? (double)st->last_ns / 1e9 : 0.0;
	m->hit_tokens_unbounded = st->hits;
	m->prefix_hit_rate_unbounded = m->prompt_tokens ? (double)st->hits / (double)m->prompt_tokens : 0.0;
	m->distinct_blocks = st->o.no_curve || st->sampled ? segtrie_blocks(&st->trie) : st->live;
	if (qhist_summary(&st->input, 1, &m->input_tokens) != 0 ||
	    qhist_summary(&st->fresh, 1, &m->new_tokens_per_call) != 0 ||
	    qhist_summary(&st->output, 1, &m->output_tokens_per_call) != 0 ||
	    qhist_summary(&st->per_session, 1, &m->calls_per_session) != 0 ||
	    qhist_summary(&st->per_task, 1, &m->calls_per_task) != 0 ||
	    qhist_summary(&st->gap_ms, 0.001, &m->gap_s) != 0 ||
	    qhist_summary(&st->conc, 1, &m->concurrency) != 0)
		return nomem(d);
	assert(st->turn_of.len == 0);
	dsummary(&st->overlap, &m->overlap_concurrency);
	m->overlap_turns = m->overlap_concurrency.n;
	if (out)
		*out = *m;
	return 0;
}

int64_t stats_hit_tokens_at(const struct stats *st, int64_t cache_blocks)
{
	assert(st->finished);
	if (st->o.no_curve)
		return -1;
	if (cache_blocks <= 0 || !st->cum)
		return 0;
	if (st->sampled) {
		/* estimated hits below the capacity, scaled so that the curve
		 * ends at the exact unbounded hits */
		double total = st->scum[SAMPLE_BINS];
		if (cache_blocks >= st->sum.distinct_blocks || total <= 0)
			return cache_blocks >= st->sum.distinct_blocks ? st->hits : 0;
		double part = st->scum[sbin((double)cache_blocks) + 1];
		int64_t v = llround(part / total * (double)st->hits);
		return v > st->hits ? st->hits : v;
	}
	size_t k = (uint64_t)cache_blocks < st->cum_len - 1 ? (size_t)cache_blocks : st->cum_len - 1;
	return st->cum[k];
}

static int read_once(struct stats *st, const char *path, enum trace_format fmt, bool skip_bad,
		     struct stats_summary *out, struct stats_source *src, struct diag *d);

/* auto: the exact curve outgrew its limit; make st a fresh accumulator with
 * the sampled curve. */
static int restart_sampled(struct stats *st, struct diag *d)
{
	struct stats_opts o = st->o;
	o.curve = STATS_CURVE_SAMPLED;
	struct stats *fresh = NULL;
	int rc = stats_new(&fresh, &o, d);
	if (rc != 0)
		return rc;
	struct stats old = *st;
	*st = *fresh;
	*fresh = old;
	stats_free(fresh);
	return 0;
}

int stats_read(struct stats *st, const char *path, enum trace_format fmt, bool skip_bad,
	       struct stats_summary *out, struct stats_source *src, struct diag *d)
{
	int rc = read_once(st, path, fmt, skip_bad, out, src, d);
	if (rc != 0 && st->want_sampled && strcmp(path, "-") != 0) {
		diag_init(d);
		rc = restart_sampled(st, d);
		if (rc == 0)
			rc = read_once(st, path, fmt, skip_bad, out, src, d);
	}
	return rc;
}

static int read_once(struct stats *st, const char *path, enum trace_format fmt, bool skip_bad,
		     struct stats_summary *out, struct stats_source *src, struct diag *d)
{
	struct trace_reader *r = NULL;
	int rc = trace_reader_open(&r, path, fmt, d);
	if (rc != 0)
		return rc;
	trace_reader_set_skip_bad(r, skip_bad);
	st->path = path;
	struct trace_session *s = NULL;
	while ((rc = trace_reader_next(r, &s, d)) == 1) {
		rc = stats_add(st, s, d);
		if (rc != 0)
			break;
	}
	if (rc == 0)
		rc = stats_finish(st, out, d);
	st->path = NULL;
	if (src) {
		memset(src, 0, sizeof(*src));
		src->format = trace_reader_format(r);
		src->gzip = trace_reader_gzip(r);
		src->skipped_lines = trace_reader_skipped(r);
		const char *first = trace_reader_first_skipped(r);
		if (first) {
			size_t n = strlen(first);
			if (n >= sizeof(src->first_skipped))
				n = sizeof(src->first_skipped) - 1;
			memcpy(src->first_skipped, first, n);
		}
	}
	trace_reader_free(r);
	return rc;
}
