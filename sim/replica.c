/* SPDX-License-Identifier: Apache-2.0
 * replica: vLLM V1-style scheduling, KV allocation and step execution (see
 * replica.h for the model and its invariants). */
#include "sim/replica.h"

#include "base/diag.h"
#include "base/hash.h"
#include "sim/kvtier.h"
#include "sim/lifecycle.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

int64_t replica_kv_used(const struct replica *rep)
{
	return rep->runs ? kvr_used(&rep->kr) : kvcache_used(&rep->kv);
}

int64_t replica_kv_available(const struct replica *rep)
{
	return rep->runs ? kvr_available(&rep->kr) : kvcache_available(&rep->kv);
}

void replica_kv_reserve(struct replica *rep, int64_t delta)
{
	*(rep->runs ? &rep->kr.reserved : &rep->kv.reserved) += delta;
}

int64_t replica_kv_reserved(const struct replica *rep)
{
	return rep->runs ? rep->kr.reserved : rep->kv.reserved;
}

int64_t replica_kv_evictions(const struct replica *rep)
{
	return rep->runs ? rep->kr.evictions : rep->kv.evictions;
}

int64_t replica_kv_duplicates(const struct replica *rep)
{
	return rep->runs ? rep->kr.duplicates : rep->kv.duplicates;
}

int64_t replica_match_len(const struct replica *rep, const uint64_t *hashes, int64_t n)
{
	if (!rep->runs)
		return kvcache_match_len(&rep->kv, hashes, n);
	int64_t hit = 0;
	kvr_match(&rep->kr, hashes, n, &hit, NULL, NULL);
	return hit;
}

bool replica_holds(const struct replica *rep, const uint64_t *hashes, int64_t pos)
{
	if (!rep->runs)
		return kvcache_lookup(&rep->kv, hashes[pos]) >= 0;
	/* a chain's cached positions form a prefix of it */
	int64_t hit = 0;
	kvr_match(&rep->kr, hashes, pos + 1, &hit, NULL, NULL);
	return hit > pos;
}

void replica_kv_reset(struct replica *rep)
{
	if (rep->runs)
		kvr_reset(&rep->kr);
	else
		kvcache_reset(&rep->kv);
}

bool replica_kv_check(const struct replica *rep)
{
	return rep->runs ? kvr_check(&rep->kr) : kvcache_check(&rep->kv);
}

int replica_init(struct replica *rep, int32_t id, int32_t pool, const struct engine_config *cfg,
		 const struct sim_perf *perf, struct diag *d)
{
	memset(rep, 0, sizeof(*rep));
	rep->id = id;
	rep->pool = pool;
	rep->cfg = cfg;
	rep->perf = perf;
	int64_t blocks = cfg->kv_cache_tokens / cfg->block_size;
	if (kvcache_init(&rep->kv, cfg->block_size, blocks, cfg->enable_prefix_caching) != 0)
		return diag_set(d, DIAG_EINPUT,
				"KV cache of %lld tokens gives %lld blocks of %lld tokens (expected 1 to 2^31-1 blocks)",
				(long long)cfg->kv_cache_tokens, (long long)blocks, (long long)cfg->block_size);
	if (kvr_init(&rep->kr, cfg->block_size, blocks, cfg->enable_prefix_caching) != 0)
		return diag_set(d, DIAG_EINPUT, "KV cache of %lld blocks (expected at least 1)",
				(long long)blocks);
	rep->runs = cfg->enable_prefix_caching &&
		    !(cfg->sliding_window_tokens > 0 && cfg->window_group_blocks > 0);
	if (cfg->kv_retain_ttl_ns > 0) {
		if (!(cfg->kv_retain_max_fraction > 0.0 && cfg->kv_retain_max_fraction <= 1.0))
			return diag_set(d, DIAG_EINPUT, "KV retention holds %g of the cache "
					"(expected more than 0 and at most 1)", cfg->kv_retain_max_fraction);
		rep->retain = true;
		rep->runs = false; /* retention orders evictions block by block */
		kvcache_retain_config(&rep->kv, (int64_t)((double)blocks * cfg->kv_retain_max_fraction));
	}
	rep->loaded = !cfg->load_on_demand;
	rep->running = calloc((size_t)cfg->max_num_seqs, sizeof(*rep->running));
	rep->batch = calloc((size_t)cfg->max_num_seqs, sizeof(*rep->batch));
	rep->pend = calloc((size_t)cfg->max_num_seqs, sizeof(*rep->pend));
	if (!rep->running || !rep->batch || !rep->pend)
		return diag_set(d, DIAG_ENOMEM, "out of memory for %d sequence slots", (int)cfg->max_num_seqs);
	if (cfg->sliding_window_tokens > 0 && cfg->window_group_blocks > 0) {
		rep->win_tokens = cfg->sliding_window_tokens;
		rep->win_groups = cfg->window_group_blocks;
		rep->win_hit_blocks = ceil_div(cfg->sliding_window_tokens - 1, cfg->block_size);
		if (rep->win_hit_blocks < 1)
			rep->win_hit_blocks = 1;
		rep->scratch = calloc((size_t)cfg->max_num_seqs, sizeof(*rep->scratch));
		rep->bucket = calloc((size_t)cfg->block_size + 1, sizeof(*rep->bucket));
		if (!rep->scratch || !rep->bucket)
			return diag_set(d, DIAG_ENOMEM, "out of memory for %d sequence slots",
					(int)cfg->max_num_seqs);
	}
	return 0;
}

void replica_release(struct replica *rep)
{
	kvcache_release(&rep->kv);
	kvr_release(&rep->kr);
	free(rep->wq);
	free(rep->running);
	free(rep->batch);
	free(rep->pend);
	free(rep->scratch);
	free(rep->bucket);
	memset(rep, 0, sizeof(*rep));
}

/* ---- waiting queue (ring buffer) ---- */

static int wq_grow(struct replica *rep)
{
	int64_t ncap = rep->wq_cap ? rep->wq_cap * 2 : 64;
	struct sreq **n = malloc((size_t)ncap * sizeof(*n));
	if (!n)
		return DIAG_ENOMEM;
	for (int64_t i = 0; i < rep->wq_len; i++)
		n[i] = rep->wq[(rep->wq_head + i) % rep->wq_cap];
	free(rep->wq);
	rep->wq = n;
	rep->wq_cap = ncap;
	rep->wq_head = 0;
	return 0;
}

static int wq_push_back(struct replica *rep, struct sreq *r)
{
	if (rep->wq_len == rep->wq_cap && wq_grow(rep) != 0)
		return DIAG_ENOMEM;
	rep->wq[(rep->wq_head + rep->wq_len++) % rep->wq_cap] = r;
	return 0;
}

static int wq_push_front(struct replica *rep, struct sreq *r)
{
	if (rep->wq_len == rep->wq_cap && wq_grow(rep) != 0)
		return DIAG_ENOMEM;
	rep->wq_head = (rep->wq_head + rep->wq_cap - 1) % rep->wq_cap;
	rep->wq[rep->wq_head] = r;
	rep->wq_len++;
	return 0;
}

static struct sreq *wq_front(const struct replica *rep)
{
	return rep->wq_len ? rep->wq[rep->wq_head] : NULL;
}

static void wq_pop_front(struct replica *rep)
{
	rep->wq_head = (rep->wq_head + 1) % rep->wq_cap;
	rep->wq_len--;
}

/* ---- KV bookkeeping of one request ---- */

/* Tokens whose KV the request needs before it can emit its next token. */
static int64_t sreq_total(const struct sreq *r)
{
	return r->call.prompt_tokens + r->generated;
}

/* Speculative decoding: whether r's next step on rep is a verify step
 * (it is decoding on a replica that speculates). */
static bool sreq_verifies(const struct replica *rep, const struct sreq *r)
{
	return rep->cfg->spec_k > 0 && !rep->spec_paused && r->spec_q > 0 && r->generated > 0 &&
	       r->computed == sreq_total(r) - 1;
}

/* Tokens r gains over k verify steps (capped at its remaining output). */
static int64_t spec_tokens_after(const struct sreq *r, int64_t k)
{
	int64_t e = ((int64_t)r->spec_acc + k * (int64_t)r->spec_q) / SPEC_Q_ONE;
	return min64(e, r->call.output_tokens - r->generated);
}

/* Verify steps until r has its whole output. */
static int64_t spec_steps_to_finish(const struct sreq *r)
{
	int64_t want = (r->call.output_tokens - r->generated) * SPEC_Q_ONE - (int64_t)r->spec_acc;
	int64_t q = r->spec_q;
	return want <= 0 ? 1 : (want + q - 1) / q;
}

/* The most verify steps after which r has gained at most t tokens (0 when
 * even one step gains more). */
static int64_t spec_steps_within(const struct sreq *r, int64_t t)
{
	int64_t lim = (t + 1) * SPEC_Q_ONE - (int64_t)r->spec_acc - 1;
	return lim < 0 ? 0 : lim / (int64_t)r->spec_q;
}

/* Tokens a decode run of k steps adds to r: k, or its verify steps'. */
static int64_t run_tokens(const struct replica *rep, const struct sreq *r, int64_t k)
{
	return rep->cfg->spec_k > 0 && !rep->spec_paused && r->spec_q > 0 ? spec_tokens_after(r, k)
									     : k;
}

static int64_t sreq_prompt_blocks(const struct sreq *r, int64_t bs)
{
	return min64(r->call.prompt_tokens / bs, r->call.n_hashes);
}

/* Set r's in-flight prompt blocks to hashes[lo..hi), keeping the replica's
 * list of requests with some in flight. */
static void sreq_set_pending(struct replica *rep, struct sreq *r, int64_t lo, int64_t hi)
{
	bool was = r->pend_lo < r->pend_hi, is = lo < hi;
	r->pend_lo = lo;
	r->pend_hi = hi;
	if (is && !was) {
		assert(rep->n_pend < rep->cfg->max_num_seqs);
		r->pend_slot = rep->n_pend;
		rep->pend[rep->n_pend++] = r;
	} else if (was && !is) {
		struct sreq *last = rep->pend[--rep->n_pend];
		rep->pend[r->pend_slot] = last;
		last->pend_slot = r->pend_slot;
	}
}

static void sreq_drop_pending(struct replica *rep, struct sreq *r)
{
	sreq_set_pending(rep, r, 0, 0);
}

/* Of r's prompt blocks from..n-1, how many leading ones are cached or in
 * flight: at that position in another running request's blocks still to be
 * computed, with the same hash.  Chained hashes agree only at the same
 * position of the same prefix, so each such request covers one run of
 * positions, compared hash by hash; a position neither covers nor finds
 * cached ends the match.  Costs O(positions compared + runs x requests in
 * flight), with no per-block bookkeeping while requests run. */
static int64_t inflight_match(const struct replica *rep, const struct sreq *r, int64_t from, int64_t n)
{
	int64_t i = from;
	while (i < n) {
		int64_t e = i;
		for (int32_t k = 0; k < rep->n_pend; k++) {
			const struct sreq *o = rep->pend[k];
			if (i < o->pend_lo || i >= o->pend_hi)
				continue;
			int64_t j = i, stop = min64(o->pend_hi, n);
			while (j < stop && o->hashes[j] == r->hashes[j])
				j++;
			if (j > e)
				e = j;
		}
		if (e > i)
			i = e;
		else if (replica_holds(rep, r->hashes, i))
			i++;
		else
			break;
	}
	return i - from;
}

/* The hash under which a sliding-window group enters a block: vLLM keys its
 * table by (block hash, group id), so each group finds only its own blocks. */
static uint64_t group_hash(uint64_t h, int64_t g)
{
	return hash_mix64(h ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(g + 1)));
}

static int32_t *wslot(const struct replica *rep, const struct sreq *r, int64_t j, int64_t g)
{
	return &r->wblocks[j * rep->win_groups + g];
}

/* Leading positions a sliding-window group no longer needs once `computed`
 * tokens exist: those before the window of the next token (vLLM's
 * SlidingWindowManager.get_num_skipped_tokens, in blocks). */
static int64_t window_skipped(const struct replica *rep, int64_t computed)
{
	int64_t t = computed - rep->win_tokens + 1;
	return t > 0 ? t / rep->kv.block_size : 0;
}

void replica_free_blocks(struct replica *rep, struct sreq *r)
{
	if (rep->runs) {
		if (kvr_put(&rep->kr, &r->kr) != 0)
			rep->kv_err = DIAG_ENOMEM;
	} else {
		for (int64_t g = 0; g < rep->win_groups; g++)
			for (int64_t j = r->n_blocks - 1; j >= r->w_lo; j--)
				kvcache_put(&rep->kv, *wslot(rep, r, j, g));
		for (int64_t j = r->n_blocks - 1; j >= 0; j--)
			kvcache_put(&rep->kv, r->blocks[j]);
	}
	r->n_blocks = 0;
	r->w_lo = 0;
	r->n_registered = 0;
	sreq_drop_pending(rep, r);
}

void replica_retain_tick(struct replica *rep, int64_t now_ns)
{
	if (now_ns > rep->retain_last_ns)
		rep->retain_area += (double)rep->kv.retained * (double)(now_ns - rep->retain_last_ns);
	rep->retain_last_ns = now_ns;
}

void replica_finish_blocks(struct replica *rep, struct sreq *r, int64_t now_ns)
{
	if (!rep->retain || !r->call.resumes) {
		replica_free_blocks(rep, r);
		return;
	}
	replica_retain_tick(rep, now_ns);
	int64_t until = now_ns + rep->cfg->kv_retain_ttl_ns;
	for (int64_t g = 0; g < rep->win_groups; g++)
		for (int64_t j = r->n_blocks - 1; j >= r->w_lo; j--)
			kvcache_put_retained(&rep->kv, *wslot(rep, r, j, g), until);
	for (int64_t j = r->n_blocks - 1; j >= 0; j--)
		kvcache_put_retained(&rep->kv, r->blocks[j], until);
	r->n_blocks = 0;
	r->w_lo = 0;
	r->n_registered = 0;
	sreq_drop_pending(rep, r);
}

/* Free the sliding-window blocks that left the window once `computed`
 * tokens exist, latest position first (vLLM's remove_skipped_blocks, which
 * allocate_slots calls before it allocates).  They keep their hashes and
 * stay findable until evicted. */
static void sreq_leave_window(struct replica *rep, struct sreq *r, int64_t computed)
{
	int64_t to = min64(window_skipped(rep, computed), r->n_blocks);
	if (to <= r->w_lo)
		return;
	for (int64_t g = 0; g < rep->win_groups; g++)
		for (int64_t j = to - 1; j >= r->w_lo; j--)
			kvcache_put(&rep->kv, *wslot(rep, r, j, g));
	r->w_lo = to;
}

/* Grow the block table to cover `tokens` tokens in every group; the caller
 * checked that enough blocks are available, so the only failure is running
 * out of memory for the cache's own arrays: DIAG_ENOMEM. */
static int sreq_cover(struct replica *rep, struct sreq *r, int64_t tokens)
{
	int64_t want = ceil_div(tokens, rep->kv.block_size);
	assert(want <= r->max_blocks);
	if (rep->runs) {
		if (want > r->n_blocks) {
			if (kvr_alloc(&rep->kr, &r->kr, want - r->n_blocks) != 0)
				return DIAG_ENOMEM;
			r->n_blocks = want;
		}
		return 0;
	}
	while (r->n_blocks < want) {
		int32_t b = kvcache_alloc(&rep->kv);
		if (b < 0)
			return DIAG_ENOMEM;
		for (int64_t g = 0; g < rep->win_groups; g++) {
			int32_t w = kvcache_alloc(&rep->kv);
			if (w < 0)
				return DIAG_ENOMEM;
			*wslot(rep, r, r->n_blocks, g) = w;
		}
		r->blocks[r->n_blocks++] = b;
	}
	return 0;
}

/* Enter the hashes of the blocks full once the first `tokens` tokens are
 * computed (called when the step computing them is scheduled). */
static int sreq_register(struct replica *rep, struct sreq *r, int64_t tokens)
{
	int64_t full = min64(tokens / rep->kv.block_size, r->call.n_hashes);
	if (rep->runs && full > r->n_registered &&
	    kvr_register(&rep->kr, &r->kr, r->hashes, full) != 0)
		return DIAG_ENOMEM;
	for (int64_t j = r->n_registered; !rep->runs && j < full; j++) {
		if (kvcache_register(&rep->kv, r->blocks[j], r->hashes[j]) != 0)
			return DIAG_ENOMEM;
		for (int64_t g = 0; g < rep->win_groups && j >= r->w_lo; g++)
			if (kvcache_register(&rep->kv, *wslot(rep, r, j, g), group_hash(r->hashes[j], g)) != 0)
				return DIAG_ENOMEM;
	}
	/* the in-flight range starts where the entered blocks end */
	if (r->pend_lo < r->pend_hi && full > r->pend_lo)
		sreq_set_pending(rep, r, min64(full, r->pend_hi), r->pend_hi);
	if (full > r->n_registered)
		r->n_registered = full;
	return 0;
}

/* Whether a is served before b under the priority policy: by (prio, time
 * the replica received it), as vLLM's Request.__lt__ orders its
 * PriorityRequestQueue (priority, then arrival_time). */
static bool prio_before(const struct sreq *a, const struct sreq *b)
{
	if (a->call.prio != b->call.prio)
		return a->call.prio < b->call.prio;
	return a->dispatched_ns < b->dispatched_ns;
}

static struct sreq **wq_at(const struct replica *rep, int64_t j)
{
	return &rep->wq[(rep->wq_head + j) % rep->wq_cap];
}

/* Priority policy: put r at its place in the waiting queue, after every
 * request not after it (so equal keys stay first come, first served), and
 * return that place.  The ring must have room.  O(log n) to find it plus
 * the requests on the shorter side moved. */
static int64_t wq_insert_sorted(struct replica *rep, struct sreq *r)
{
	int64_t lo = 0, hi = rep->wq_len;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (prio_before(r, *wq_at(rep, mid)))
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo < rep->wq_len - lo) { /* move the head side one place back */
		rep->wq_head = (rep->wq_head + rep->wq_cap - 1) % rep->wq_cap;
		for (int64_t j = 0; j < lo; j++)
			*wq_at(rep, j) = *wq_at(rep, j + 1);
	} else {
		for (int64_t j = rep->wq_len; j > lo; j--)
			*wq_at(rep, j) = *wq_at(rep, j - 1);
	}
	*wq_at(rep, lo) = r;
	rep->wq_len++;
	return lo;
}

/* The running request a preemption takes: fcfs, the most recently
 * admitted; priority, the one with the largest (prio, received time), the
 * first of equals in admission order (vLLM: max(self.running, key=lambda
 * r: (r.priority, r.arrival_time))). */
static int32_t victim_index(const struct replica *rep)
{
	if (!rep->cfg->sched_priority)
		return rep->n_running - 1;
	int32_t v = 0;
	for (int32_t j = 1; j < rep->n_running; j++)
		if (prio_before(rep->running[v], rep->running[j]))
			v = j;
	return v;
}

/* Preempt running request j (recompute): its blocks are freed and it
 * returns to the waiting queue, at the front (fcfs) or at its place
 * (priority: vLLM's prepend_request on a PriorityRequestQueue adds it by
 * its key).  The queue makes room first, so a request is never lost in
 * between. */
static int preempt_at(struct sim *s, struct replica *rep, int32_t j, struct sreq **victim)
{
	if (rep->wq_len == rep->wq_cap && wq_grow(rep) != 0)
		return DIAG_ENOMEM;
	struct sreq *r = rep->running[j];
	for (int32_t k = j + 1; k < rep->n_running; k++)
		rep->running[k - 1] = rep->running[k];
	rep->n_running--;
	r->kv_dropped += r->computed;
	replica_free_blocks(rep, r);
	replica_kv_reserve(rep, -r->seq_blocks);
	r->computed = 0;
	r->preemptions++;
	r->state = SREQ_WAITING;
	s->stats.preemptions++;
	if (rep->cfg->sched_priority) {
		wq_insert_sorted(rep, r);
	} else {
		int rc = wq_push_front(rep, r);
		assert(rc == 0);
		(void)rc;
	}
	*victim = r;
	return 0;
}

/* ---- scheduling ---- */

static int push_event(struct sim *s, int64_t t_ns, uint32_t kind, int32_t prio,
		      void *obj, uint64_t gen)
{
	struct event e = {.t_ns = t_ns, .prio = prio, .kind = kind, .obj = obj, .gen = gen};
	return evq_push(&s->q, &e);
}

int replica_kick(struct sim *s, struct replica *rep)
{
	if (rep->busy || rep->sched_pending)
		return 0;
	rep->sched_pending = true;
	return push_event(s, s->now_ns, EV_SCHEDULE, PRIO_SCHEDULE, rep, 0);
}

int replica_enqueue(struct sim *s, struct replica *rep, struct sreq *r)
{
	bool was_empty = rep->wq_len == 0;
	bool head = was_empty;
	if (rep->cfg->sched_priority) {
		if (rep->wq_len == rep->wq_cap && wq_grow(rep) != 0)
			return DIAG_ENOMEM;
		head = wq_insert_sorted(rep, r) == 0;
	} else if (wq_push_back(rep, r) != 0) {
		return DIAG_ENOMEM; /* not queued: still the caller's */
	}
	r->state = SREQ_WAITING;
	if (!rep->busy)
		return replica_kick(s, rep);
	/* A decode run assumed no admission could happen; an arrival into an
	 * empty waiting queue may change that, so end the run at the first step
	 * boundary at or after now.  Under the priority policy an arrival
	 * that goes to the head of a queue whose head was held back changes
	 * the schedule as well. */
	if (rep->run_decode && rep->run_k > 1 &&
	    (rep->cfg->sched_priority ? head : rep->run_cuttable && was_empty)) {
		int64_t lo = 1, hi = rep->run_k;
		while (lo < hi) {
			int64_t mid = lo + (hi - lo) / 2;
			int64_t end = rep->run_t0_ns + llround(rep->perf->decode_run_ns(rep->perf->ctx, &rep->run_b0, mid));
			if (end >= s->now_ns)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (lo < rep->run_k) {
			rep->run_k = lo;
			rep->run_total_ns = rep->perf->decode_run_ns(rep->perf->ctx, &rep->run_b0, lo);
			rep->run_gen++;
			s->stats.truncated_runs++;
			return push_event(s, rep->run_t0_ns + llround(rep->run_total_ns), EV_STEP_END,
					  PRIO_STEP_END, rep, rep->run_gen);
		}
	}
	return 0;
}

/* A verify step of r yielding e tokens: k + 1 positions on its context. */
static void batch_add_spec(struct replica *rep, struct perf_batch *pb, struct sreq *r, int64_t e)
{
	int64_t pos = (int64_t)rep->cfg->spec_k + 1;
	rep->batch[rep->n_batch++] = (struct batch_item){ .r = r, .n = e, .spec = true };
	pb->new_tokens += pos;
	pb->seqs++;
	pb->decode_seqs++;
	pb->spec_seqs++;
	pb->spec_context += r->computed;
	pb->spec_advance += (double)r->spec_q / SPEC_Q_ONE;
	pb->attn_pairs += pos * r->computed + pos * (pos + 1) / 2;
	pb->kv_read_tokens += r->computed + pos;
}

static void batch_add(struct replica *rep, struct perf_batch *pb, struct sreq *r, int64_t n)
{
	rep->batch[rep->n_batch].r = r;
	rep->batch[rep->n_batch].n = n;
	rep->batch[rep->n_batch].spec = false;
	rep->n_batch++;
	pb->new_tokens += n;
	pb->seqs++;
	if (n == 1 && r->generated > 0 && r->computed == sreq_total(r) - 1)
		pb->decode_seqs++;
	pb->attn_pairs += n * r->computed + n * (n + 1) / 2;
	pb->kv_read_tokens += r->computed + n;
}

/* Take r's item out of the batch being built, undoing batch_add or
 * batch_add_spec (r's progress is still as it was then); returns the
 * budget it took.  O(batch). */
static int64_t batch_remove(struct replica *rep, struct perf_batch *pb, const struct sreq *r)
{
	int32_t k = 0;
	while (k < rep->n_batch && rep->batch[k].r != r)
		k++;
	assert(k < rep->n_batch);
	struct batch_item it = rep->batch[k];
	for (int32_t j = k + 1; j < rep->n_batch; j++)
		rep->batch[j - 1] = rep->batch[j];
	rep->n_batch--;
	int64_t n = it.spec ? (int64_t)rep->cfg->spec_k + 1 : it.n;
	pb->new_tokens -= n;
	pb->seqs--;
	if (it.spec) {
		pb->decode_seqs--;
		pb->spec_seqs--;
		pb->spec_context -= r->computed;
		pb->spec_advance -= (double)r->spec_q / SPEC_Q_ONE;
	} else if (n == 1 && r->generated > 0 && r->computed == sreq_total(r) - 1) {
		pb->decode_seqs--;
	}
	pb->attn_pairs -= n * r->computed + n * (n + 1) / 2;
	pb->kv_read_tokens -= r->computed + n;
	return n;
}

/* Schedule the running list; returns true if anything was preempted.
 * Under the priority policy the victim may be a request scheduled earlier
 * in this loop: it leaves the batch and gives its budget back, as vLLM's
 * scheduler takes it out of scheduled_running_reqs. */
static bool schedule_running(struct sim *s, struct replica *rep, struct perf_batch *pb, int64_t *budget)
{
	bool preempted = false;
	for (int32_t i = 0; i < rep->n_running && *budget > 0; i++) {
		struct sreq *r = rep->running[i];
		sreq_leave_window(rep, r, r->computed);
		int64_t need = sreq_total(r) - r->computed;
		int64_t n = min64(need, *budget);
		bool verify = sreq_verifies(rep, r);
		if (verify) /* the tokens it yields; k + 1 count against the budget */
			n = spec_tokens_after(r, 1);
		int64_t want = (ceil_div(r->computed + n, rep->kv.block_size) - r->n_blocks) *
			       (1 + rep->win_groups);
		bool self_preempted = false;
		while (want > replica_kv_available(rep)) {
			struct sreq *victim;
			int32_t j = victim_index(rep);
			if (j < i) {
				*budget += batch_remove(rep, pb, rep->running[j]);
				i--; /* r moves down one place */
			}
			if (preempt_at(s, rep, j, &victim) != 0) {
				s->err = DIAG_ENOMEM;
				return preempted;
			}
			preempted = true;
			if (victim == r) {
				self_preempted = true;
				break;
			}
		}
		if (self_preempted)
			break;
		if (sreq_cover(rep, r, r->computed + n) != 0 ||
		    sreq_register(rep, r, r->computed + n) != 0) {
			s->err = DIAG_ENOMEM;
			break;
		}
		if (verify) {
			batch_add_spec(rep, pb, r, n);
			*budget -= (int64_t)rep->cfg->spec_k + 1;
			continue;
		}
		batch_add(rep, pb, r, n);
		*budget -= n;
	}
	return preempted;
}

/* The lower tier (0 host, 1 disk/remote) holding h, or -1. */
static int tier_of(const struct replica *rep, uint64_t h)
{
	int i = 0;
	for (const struct kvtier *t = rep->tier; t; t = t->lower, i++)
		if (kvtier_has(t, h))
			return i;
	return -1;
}

static struct kvtier *tier_at(const struct replica *rep, int i)
{
	struct kvtier *t = rep->tier;
	while (i-- > 0)
		t = t->lower;
	return t;
}

/* Whether every sliding-window group holds a block for r's position j, in
 * the GPU cache or a lower tier; the ids go to r's window table (scratch
 * while r waits), -1 for a block a tier would load. */
static bool window_cached(const struct replica *rep, struct sreq *r, int64_t j)
{
	for (int64_t g = 0; g < rep->win_groups; g++) {
		uint64_t h = group_hash(r->hashes[j], g);
		int32_t b = kvcache_lookup(&rep->kv, h);
		if (b >= 0)
			*wslot(rep, r, j, g) = b;
		else if (rep->tier && tier_of(rep, h) >= 0)
			*wslot(rep, r, j, g) = -1;
		else
			return false;
	}
	return true;
}

/* A new GPU block entered under h, for a block a tier loads.  DIAG_ENOMEM. */
static int load_block(struct replica *rep, uint64_t h, int32_t *slot)
{
	int32_t b = kvcache_alloc(&rep->kv);
	if (b < 0 || kvcache_register(&rep->kv, b, h) != 0)
		return DIAG_ENOMEM;
	*slot = b;
	return 0;
}

/* Mark the tier blocks r's hit of `hit` positions loads (full-attention
 * positions from `full_gpu`, window positions from `skip`): each becomes
 * its tier's most recent, and its transfer time joins the step.  Done
 * before any allocation, so demotions that allocation causes cannot push
 * them out first. */
static void mark_loads(struct sim *s, struct replica *rep, struct sreq *r, int64_t full_gpu,
		       int64_t hit, int64_t skip)
{
	int64_t bs = rep->kv.block_size;
	for (int64_t j = full_gpu; j < hit; j++) {
		int t = tier_of(rep, r->hashes[j]);
		assert(t >= 0);
		struct kvtier *k = tier_at(rep, t);
		kvtier_load(k, r->hashes[j]);
		rep->load_ns += k->ns_per_block;
		s->stats.tier_loaded_blocks++;
		if (!r->admitted_once)
			r->tier_first[t] += bs;
	}
	for (int64_t g = 0; g < rep->win_groups; g++)
		for (int64_t j = skip; j < hit; j++) {
			if (*wslot(rep, r, j, g) >= 0)
				continue;
			uint64_t h = group_hash(r->hashes[j], g);
			int t = tier_of(rep, h);
			assert(t >= 0);
			struct kvtier *k = tier_at(rep, t);
			kvtier_load(k, h);
			rep->load_ns += k->ns_per_block;
			s->stats.tier_loaded_blocks++;
		}
}

/* Store block h to the host tier if it lacks it; 1 when it arrived. */
static int store_block(struct kvtier *host, uint64_t h)
{
	if (kvtier_has(host, h))
		return 0; /* already there: nothing crosses the link */
	kvtier_put(host, h);
	return 1;
}

/* Write-through (SIM_TIER_WRITE_THROUGH): the prompt blocks the batch's
 * prefill completes go to the host tier as the step computes them, a chunk
 * of chunk_blocks at a time (LMCache stores each full chunk of a prefill;
 * the prompt's last, partial chunk only with save_unfull_chunk).  A block
 * the host already holds is not copied again; every other block costs the
 * host link tier[0].ns_per_block.  Window groups store their own blocks of
 * each position.  Returns the link time of this step's stores.  O(blocks
 * stored + blocks found held), once per block of each admission. */
static double write_through(struct sim *s, struct replica *rep)
{
	const struct sim_tiers_config *tc = &s->tiers_cfg;
	struct kvtier *host = rep->tier;
	int64_t bs = rep->kv.block_size, cb = tc->chunk_blocks;
	double ns = 0;
	for (int32_t i = 0; i < rep->n_batch; i++) {
		struct sreq *r = rep->batch[i].r;
		int64_t prompt = r->call.prompt_tokens;
		if (rep->batch[i].spec || r->computed >= prompt)
			continue; /* decode: LMCache's save_decode_cache is off */
		int64_t pblocks = sreq_prompt_blocks(r, bs);
		int64_t end = r->computed + rep->batch[i].n;
		/* chunks are counted from the prompt's start, as LMCache's are */
		int64_t upto = end >= prompt && tc->save_unfull_chunk ? pblocks
			       : (min64(end, prompt) / (cb * bs)) * cb;
		upto = min64(upto, pblocks);
		int64_t last_chunk = -1;
		for (int64_t j = r->wt_blocks; j < upto; j++) {
			int n = store_block(host, r->hashes[j]);
			for (int64_t g = 0; g < rep->win_groups; g++)
				n += store_block(host, group_hash(r->hashes[j], g));
			if (n == 0)
				continue;
			s->stats.tier_stored_blocks += n;
			s->stats.tier_stored_bytes += n * tc->bytes_per_block;
			ns += n * host->ns_per_block;
			if (j / cb != last_chunk) {
				s->stats.tier_stored_chunks++;
				last_chunk = j / cb;
			}
		}
		if (upto > r->wt_blocks)
			r->wt_blocks = upto;
	}
	return ns;
}

/* The prefix hit of a model with sliding-window groups, given the
 * full-attention hit of `full` blocks (vLLM's HybridKVCacheCoordinator with
 * one full and one sliding-window kind: full attention first, then
 * SlidingWindowManager.find_longest_cache_hit up to that length).  A
 * window group serves a prefix of L blocks only if it still holds the
 * win_hit_blocks blocks just before L; the hit is the longest such L, or,
 * when there is none, the blocks it holds from the start (fewer than
 * win_hit_blocks).  The search looks at the leftmost block of each
 * candidate run first and skips the whole run when that one is gone, so a
 * prefix whose window blocks were evicted costs O(full / win_hit_blocks)
 * lookups.  The ids of the blocks in [result - win_hit_blocks, result) are
 * left in r's window table. */
static int64_t window_hit(const struct replica *rep, struct sreq *r, int64_t full)
{
	int64_t need = rep->win_hit_blocks;
	int64_t e = full - 1; /* the candidate run ends here */
	while (e - need + 1 >= 0) {
		int64_t lo = e - need + 1;
		if (!window_cached(rep, r, lo)) {
			e = lo - 1;
			continue;
		}
		int64_t j = e;
		while (j > lo && window_cached(rep, r, j))
			j--;
		if (j == lo)
			return e + 1;
		e = j - 1;
	}
	int64_t j = 0;
	while (j < full && j < need && window_cached(rep, r, j))
		j++;
	return j;
}

/* Admit waiting requests in FCFS order; returns how many. */
static int schedule_waiting(struct sim *s, struct replica *rep, struct perf_batch *pb,
			    int64_t *budget)
{
	const struct engine_config *cfg = rep->cfg;
	int64_t bs = rep->kv.block_size;
	int64_t wg = rep->win_groups;
	int admitted = 0;
	rep->head_blocked = false;
	while (rep->wq_len > 0 && rep->n_running < cfg->max_num_seqs && *budget > 0) {
		struct sreq *r = wq_front(rep);
		int64_t total = sreq_total(r);
		int64_t max_hit = min64((total - 1) / bs, r->call.n_hashes);
		/* r holds no blocks while waiting: its tables are scratch for the
		 * ids of the cached prefix */
		int64_t gpu_hit, run_evictable = 0;
		uint64_t run_first_stamp = UINT64_MAX;
		if (rep->runs)
			kvr_match(&rep->kr, r->hashes, max_hit, &gpu_hit, &run_evictable,
				  &run_first_stamp);
		else
			gpu_hit = kvcache_match(&rep->kv, r->hashes, max_hit, r->blocks);
		/* then the lower tiers continue the match (-1: loaded from one) */
		int64_t full_hit = gpu_hit;
		if (rep->tier && rep->kv.prefix_caching)
			while (full_hit < max_hit && tier_of(rep, r->hashes[full_hit]) >= 0)
				r->blocks[full_hit++] = -1;
		int64_t tier_end = full_hit;
		/* prefill/decode disaggregation: the prompt blocks the prefill
		 * replica sent arrive like loads, at no cost to the step (their
		 * transfer was waited for before the call came here) */
		while (full_hit < min64(r->pd_remote_blocks, max_hit))
			r->blocks[full_hit++] = -1;
		int64_t hit = wg && full_hit > 0 ? window_hit(rep, r, full_hit) : full_hit;
		int64_t skip = wg ? window_skipped(rep, hit * bs) : 0;
		int64_t cached = hit * bs;
		int64_t need = total - cached;
		int64_t n = min64(need, *budget);
		if (!cfg->enable_chunked_prefill && n < need)
			break;
		/* GPU hits in the free queue count as blocks the request takes;
		 * blocks loaded from a tier need new ones */
		int64_t evictable_hits = run_evictable, loads = 0;
		for (int64_t j = 0; !rep->runs && j < hit; j++) {
			if (r->blocks[j] < 0)
				loads++;
			else
				evictable_hits += kvcache_ref(&rep->kv, r->blocks[j]) == 0;
		}
		for (int64_t g = 0; g < wg; g++)
			for (int64_t j = skip; j < hit; j++) {
				int32_t b = *wslot(rep, r, j, g);
				if (b < 0)
					loads++;
				else
					evictable_hits += kvcache_ref(&rep->kv, b) == 0;
			}
		/* blocks the admission check asks for: the first chunk's, or
		 * (reserve_full_prompt) the whole current sequence's, in the
		 * window groups capped at what they hold at once; only the
		 * chunk's are allocated now */
		int64_t tokens = cfg->reserve_full_prompt ? total : cached + n;
		int64_t want = ceil_div(tokens, bs) - hit + loads;
		if (wg) {
			/* a window group holds positions [skip, end of the chunk) once
			 * the chunk is allocated, and never more than the peak of a
			 * chunk plus its window; of those it takes hit - skip cached.
			 * (The peak is a count of blocks, not a position: comparing it
			 * with hit under-reserved every long cached prompt.) */
			int64_t at_once = ceil_div(cached + n, bs) - skip;
			if (cfg->reserve_full_prompt && sim_window_peak_blocks(cfg, total) > at_once)
				at_once = sim_window_peak_blocks(cfg, total);
			int64_t held = hit - skip;
			want += (at_once > held ? at_once - held : 0) * wg;
		}
		int64_t room = replica_kv_available(rep) - evictable_hits;
		if (want + r->seq_blocks > room) {
			/* what a decode run must leave alone (see replica.h) */
			rep->head_blocked = true;
			rep->head = r;
			rep->head_hit = hit;
			rep->head_grow_end = rep->kv.prefix_caching ? min64(full_hit + 1, max_hit) : hit;
			rep->head_deficit = want + r->seq_blocks - room;
			rep->head_loads = loads;
			rep->head_first_stamp = run_first_stamp;
			for (int64_t j = 0; !rep->runs && j < hit; j++)
				if (r->blocks[j] >= 0 && kvcache_ref(&rep->kv, r->blocks[j]) == 0 &&
				    kvcache_stamp(&rep->kv, r->blocks[j]) < rep->head_first_stamp)
					rep->head_first_stamp = kvcache_stamp(&rep->kv, r->blocks[j]);
			for (int64_t g = 0; g < wg; g++)
				for (int64_t j = skip; j < hit; j++) {
					int32_t b = *wslot(rep, r, j, g);
					if (b >= 0 && kvcache_ref(&rep->kv, b) == 0 &&
					    kvcache_stamp(&rep->kv, b) < rep->head_first_stamp)
						rep->head_first_stamp = kvcache_stamp(&rep->kv, b);
				}
			break;
		}
		wq_pop_front(rep);
		replica_kv_reserve(rep, r->seq_blocks);
		r->spec_q = 0;
		if (cfg->spec_k > 0) {
			int32_t kind = r->call.kind >= 0 && r->call.kind < OUT_KINDS ? r->call.kind : 0;
			r->spec_q = (uint32_t)llround(cfg->spec_tokens[kind] * SPEC_Q_ONE);
		}
		r->state = SREQ_RUNNING;
		rep->running[rep->n_running++] = r; /* owned by the running list from here */
		if (loads)
			mark_loads(s, rep, r, gpu_hit, min64(hit, tier_end), skip);
		r->pd_remote_blocks = 0; /* taken; a preemption recomputes them */
		r->admitted_ns = s->now_ns;
		if (!r->admitted_once) {
			r->admitted_once = true;
			r->scheduled_ns = s->now_ns;
			r->cached_first = cached;
			r->inflight_miss = rep->kv.prefix_caching ? inflight_match(rep, r, full_hit, max_hit) * bs : 0;
		}
		if (rep->runs && kvr_take(&rep->kr, &r->kr, r->hashes, hit) != 0)
			return DIAG_ENOMEM;
		for (int64_t j = 0; !rep->runs && j < hit; j++)
			if (r->blocks[j] >= 0)
				kvcache_take(&rep->kv, r->blocks[j]);
		for (int64_t g = 0; g < wg; g++)
			for (int64_t j = skip; j < hit; j++)
				if (*wslot(rep, r, j, g) >= 0)
					kvcache_take(&rep->kv, *wslot(rep, r, j, g));
		for (int64_t j = gpu_hit; loads && j < hit; j++)
			if (load_block(rep, r->hashes[j], &r->blocks[j]) != 0)
				return DIAG_ENOMEM;
		for (int64_t g = 0; loads && g < wg; g++)
			for (int64_t j = skip; j < hit; j++)
				if (*wslot(rep, r, j, g) < 0 &&
				    load_block(rep, group_hash(r->hashes[j], g), wslot(rep, r, j, g)) != 0)
					return DIAG_ENOMEM;
		r->n_blocks = hit;
		r->w_lo = skip;
		r->n_registered = hit;
		r->wt_blocks = 0; /* LMCache stores whatever of the prompt it lacks */
		r->computed = cached;
		r->kv_obtained += cached;
		if (sreq_cover(rep, r, cached + n) != 0)
			return DIAG_ENOMEM;
		/* the prompt blocks this request is about to compute */
		if (rep->kv.prefix_caching)
			sreq_set_pending(rep, r, hit, sreq_prompt_blocks(r, bs));
		if (sreq_register(rep, r, cached + n) != 0)
			return DIAG_ENOMEM;
		batch_add(rep, pb, r, n);
		*budget -= n;
		admitted++;
	}
	return admitted;
}

/* The longest decode run (<= kmax) that fills no block that could lengthen
 * the blocked head's hit: one at a position in [head_hit, head_grow_end)
 * carrying the head's hash there (chained hashes agree only on the same
 * prefix).  A run ending with tokens computed + k must keep computed + k
 * below the end of such a block. */
static int64_t run_k_before_head_grows(const struct replica *rep, int64_t kmax)
{
	int64_t bs = rep->kv.block_size;
	const struct sreq *h = rep->head;
	for (int32_t i = 0; i < rep->n_batch; i++) {
		const struct sreq *r = rep->batch[i].r;
		int64_t end = min64(min64(ceil_div(r->computed + run_tokens(rep, r, kmax), bs),
					  r->call.n_hashes),
				    rep->head_grow_end);
		for (int64_t j = r->n_registered > rep->head_hit ? r->n_registered : rep->head_hit;
		     j < end; j++)
			if (r->hashes[j] == h->hashes[j]) {
				int64_t t = (j + 1) * bs - r->computed - 1;
				kmax = min64(kmax, rep->batch[i].spec ? spec_steps_within(r, t) : t);
				break;
			}
	}
	return kmax < 1 ? 1 : kmax;
}

/* The first step (>= 1) of a decode run from the current state at whose
 * schedule r frees a sliding-window block: when the window's start passes
 * the end of position w_lo. */
static int64_t first_window_free(const struct replica *rep, const struct sreq *r)
{
	int64_t s = (r->w_lo + 1) * rep->kv.block_size + rep->win_tokens - 1 - r->computed;
	return s < 1 ? 1 : s;
}

/* Blocks the schedules of a decode run's steps 1..s free in the window
 * groups (one position per request every block_size steps). */
static int64_t run_window_frees(const struct replica *rep, int64_t s)
{
	int64_t n = 0;
	for (int32_t i = 0; i < rep->n_batch; i++) {
		int64_t f = first_window_free(rep, rep->batch[i].r);
		if (s >= f)
			n += (s - f) / rep->kv.block_size + 1;
	}
	return n * rep->win_groups;
}

/* The longest decode run (<= kmax) that ends before the window blocks it
 * frees could cover the blocked head's deficit: a run of k steps leaves the
 * frees of step k to the next real schedule, where the head is checked. */
static int64_t run_k_before_frees(const struct replica *rep, int64_t kmax)
{
	if (kmax <= 1 || run_window_frees(rep, kmax - 1) < rep->head_deficit)
		return kmax;
	int64_t lo = 1, hi = kmax - 1; /* the first s with frees >= deficit */
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (run_window_frees(rep, mid) >= rep->head_deficit)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Apply the window frees of a decode run's steps 1..k-1 (the run's first
 * schedule made its own) in the order single steps make them: step by step,
 * and within a step in batch order.  Each request frees every block_size
 * steps from its first free, so requests are bucketed by that step modulo
 * block_size.  Called when the run's tokens are applied, so each request's
 * count at the run's start is computed - k. */
static void run_leave_window(struct replica *rep, int64_t k)
{
	if (!rep->win_groups || k < 2 || rep->n_batch == 0)
		return;
	int64_t bs = rep->kv.block_size;
	int64_t *start = rep->bucket;
	memset(start, 0, (size_t)(bs + 1) * sizeof(*start));
	for (int32_t i = 0; i < rep->n_batch; i++) {
		struct sreq *r = rep->batch[i].r;
		r->computed -= k; /* back to the run's start while we look */
		start[first_window_free(rep, r) % bs + 1]++;
		r->computed += k;
	}
	for (int64_t m = 0; m < bs; m++)
		start[m + 1] += start[m];
	for (int32_t i = 0; i < rep->n_batch; i++) {
		struct sreq *r = rep->batch[i].r;
		r->computed -= k;
		int64_t m = first_window_free(rep, r) % bs;
		r->computed += k;
		rep->scratch[start[m]++] = i;
	}
	/* start[m] now ends bucket m; bucket m begins where bucket m-1 ends */
	for (int64_t s = 1; s < k; s++) {
		int64_t m = s % bs;
		for (int64_t x = m ? start[m - 1] : 0; x < start[m]; x++) {
			struct sreq *r = rep->batch[rep->scratch[x]].r;
			sreq_leave_window(rep, r, r->computed - k + s);
		}
	}
}

/* Blocks the batch needs to run k decode steps beyond what it holds. */
static int64_t run_blocks_needed(const struct replica *rep, int64_t k)
{
	int64_t need = 0;
	for (int32_t i = 0; i < rep->n_batch; i++) {
		const struct sreq *r = rep->batch[i].r;
		need += ceil_div(r->computed + run_tokens(rep, r, k), rep->kv.block_size) -
			r->n_blocks;
	}
	return need * (1 + rep->win_groups);
}

/* The largest k in [1, kmax] whose extra blocks are at most `limit`. */
static int64_t run_k_fits(const struct replica *rep, int64_t kmax, int64_t limit)
{
	int64_t lo = 1, hi = kmax;
	while (lo < hi) {
		int64_t mid = hi - (hi - lo) / 2;
		if (run_blocks_needed(rep, mid) <= limit)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* The largest k in [1, kmax] whose steps all start before the earliest
 * retained block expires: single steps would look at the expiry when the
 * first step at or after it is scheduled, so the run stops there. */
static int64_t run_k_before_expiry(const struct sim *s, const struct replica *rep,
				   const struct perf_batch *pb, int64_t kmax)
{
	int64_t next = kvcache_retain_next_ns(&rep->kv);
	if (next == INT64_MAX)
		return kmax;
	int64_t lo = 1, hi = kmax; /* step k - 1 starts at t0 + the time of k - 1 steps */
	while (lo < hi) {
		int64_t mid = hi - (hi - lo) / 2;
		int64_t start = s->now_ns + llround(rep->perf->decode_run_ns(rep->perf->ctx, pb, mid - 1));
		if (start < next)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

void replica_model_reset(struct replica *rep)
{
	rep->loaded = !rep->cfg->load_on_demand;
	rep->loading = false;
	rep->load_gen++;
}

int replica_need_model(struct sim *s, struct replica *rep)
{
	const struct engine_config *c = rep->cfg;
	if (!c->load_on_demand || rep->loading)
		return 0;
	bool empty = rep->n_running == 0 && rep->wq_len == 0 && !rep->busy;
	if (rep->loaded && empty && c->keep_alive_ns >= 0 &&
	    s->now_ns - rep->idle_since_ns >= c->keep_alive_ns) {
		/* it unloaded keep_alive after its last call; its cache went too */
		rep->loaded = false;
		if (replica_kv_used(rep) == 0 && replica_kv_reserved(rep) == 0) {
			replica_retain_tick(rep, s->now_ns); /* retained blocks go too */
			replica_kv_reset(rep);
		}
	}
	if (rep->loaded)
		return 0;
	rep->loading = true;
	s->stats.model_loads++;
	s->stats.model_reloads += rep->loaded_once;
	s->stats.model_load_ns += c->model_load_ns;
	rep->loaded_once = true;
	return push_event(s, s->now_ns + c->model_load_ns, EV_LOADED, PRIO_STEP_END, rep,
			  ++rep->load_gen);
}

int replica_loaded(struct sim *s, struct replica *rep, uint64_t gen)
{
	if (gen != rep->load_gen || !rep->loading)
		return 0;
	rep->loading = false;
	rep->loaded = true;
	return rep->wq_len > 0 ? replica_kick(s, rep) : 0;
}

int replica_schedule(struct sim *s, struct replica *rep)
{
	rep->sched_pending = false;
	if (rep->kv_err)
		return rep->kv_err;
	if (rep->life == REP_DOWN || rep->life == REP_OFF)
		return 0; /* failed or stopped since the event was queued */
	if (rep->loading)
		return 0; /* EV_LOADED kicks it */
	assert(!rep->busy);
	if (rep->retain) {
		/* expiry is looked at when the replica schedules: a decode run
		 * ends before the next one (below), so that is when it falls */
		replica_retain_tick(rep, s->now_ns);
		kvcache_retain_expire(&rep->kv, s->now_ns);
	}
	rep->n_batch = 0;
	struct perf_batch pb = {0};
	int64_t budget = rep->cfg->max_num_batched_tokens;
	rep->load_ns = 0;
	rep->spec_paused = rep->cfg->spec_disable_batch > 0 &&
			   rep->n_running >= rep->cfg->spec_disable_batch;
	bool preempted = schedule_running(s, rep, &pb, &budget);
	int admitted = 0;
	rep->head_blocked = false;
	if (!preempted) {
		admitted = schedule_waiting(s, rep, &pb, &budget);
		if (admitted < 0)
			return admitted;
	}
	if (s->err)
		return s->err;
	if (rep->n_batch == 0 && preempted && rep->cfg->sched_priority && rep->n_running > 0) {
		/* Priority policy: the first running request found no blocks and
		 * was itself the lowest priority, so the loop stopped before the
		 * others (vLLM breaks out of its running loop there too).  The
		 * next schedule, at this instant, runs them with its blocks. */
		return replica_kick(s, rep);
	}
	if (rep->n_batch == 0) {
		/* Nothing runnable.  With nothing running, every block is free or
		 * evictable and admission checks guarantee the head fits, so a
		 * non-empty waiting queue here is a broken invariant. */
		if (rep->wq_len > 0)
			return DIAG_EINTERNAL;
		return 0;
	}
	int64_t k = 1;
	bool decode = !s->single_step && !preempted && admitted == 0 && pb.decode_seqs == pb.seqs;
	if (decode) {
		int64_t kmax = INT64_MAX;
		for (int32_t i = 0; i < rep->n_batch; i++) {
			const struct sreq *r = rep->batch[i].r;
			kmax = min64(kmax, rep->batch[i].spec ? spec_steps_to_finish(r)
							      : r->call.output_tokens - r->generated);
		}
		/* window frees assume a token a step: verify steps go one by one */
		if (pb.spec_seqs > 0 && rep->win_groups)
			kmax = 1;
		/* largest k <= kmax whose extra blocks are available */
		int64_t avail = replica_kv_available(rep);
		k = run_k_fits(rep, kmax, avail);
		/* a tier other replicas read sees this one's evictions as they
		 * happen: a run evicts no cached block */
		if (rep->tier_shared && k > 1)
			k = run_k_fits(rep, k, kvcache_allocs_before_hashed(&rep->kv, avail));
		if (rep->retain && k > 1)
			k = run_k_before_expiry(s, rep, &pb, k);
		if (rep->head_blocked && rep->wq_len > 0) {
			/* nor may it change what the blocked head would find cached */
			int64_t kh = run_k_before_head_grows(rep, k);
			int64_t limit = avail;
			if (rep->head_first_stamp != UINT64_MAX)
				limit = rep->runs ? kvr_allocs_before(&rep->kr, rep->head_first_stamp, avail)
						  : kvcache_allocs_before(&rep->kv, rep->head_first_stamp, avail);
			/* with tiers, an eviction changes what they hold for the head */
			if (rep->tier)
				limit = min64(limit, kvcache_allocs_before_hashed(&rep->kv, avail));
			if (limit < avail)
				kh = run_k_fits(rep, kh, limit);
			/* a shared tier can lose the head's loaded blocks to another
			 * replica's demotions at any step */
			if (rep->tier_shared && rep->head_loads > 0)
				kh = 1;
			if (rep->win_groups)
				kh = run_k_before_frees(rep, kh);
			if (kh < k) {
				k = kh;
				s->stats.head_cut_runs++;
			}
		}
	}
	double dur = decode ? rep->perf->decode_run_ns(rep->perf->ctx, &pb, k) : rep->perf->step_ns(rep->perf->ctx, &pb);
	if (!(dur >= 0.0) || !isfinite(dur))
		return DIAG_EINTERNAL;
	bool wt = rep->tier && s->tiers_cfg.mode == SIM_TIER_WRITE_THROUGH;
	double store_ns = wt ? write_through(s, rep) : 0.0;
	if (rep->load_ns > 0) { /* tier loads finish before the step's compute */
		/* behind the async stores still holding the host link */
		double wait = wt && rep->link_free_ns > (double)s->now_ns
				      ? rep->link_free_ns - (double)s->now_ns : 0.0;
		dur += wait + rep->load_ns;
		s->stats.tier_load_ns += rep->load_ns;
		s->stats.tier_load_wait_ns += wait;
	}
	if (store_ns > 0) {
		s->stats.tier_store_ns += store_ns;
		if (s->tiers_cfg.async_store) {
			/* the copy starts once the step has computed the KV, or
			 * when the link is free, and the step goes on */
			double from = (double)s->now_ns + dur;
			rep->link_free_ns = (rep->link_free_ns > from ? rep->link_free_ns : from) + store_ns;
		} else {
			dur += store_ns; /* the step ends when its stores do */
			s->stats.tier_store_stall_ns += store_ns;
		}
	}
	rep->busy = true;
	rep->run_decode = decode;
	rep->run_cuttable = rep->wq_len == 0;
	rep->run_t0_ns = s->now_ns;
	rep->run_k = k;
	rep->run_total_ns = dur;
	rep->run_b0 = pb;
	rep->run_kv_start = replica_kv_used(rep);
	rep->run_gen++;
	return push_event(s, s->now_ns + llround(dur), EV_STEP_END, PRIO_STEP_END, rep, rep->run_gen);
}

void replica_fail(struct sim *s, struct replica *rep, struct sreq **out, int64_t *n)
{
	(void)s;
	*n = 0;
	replica_model_reset(rep); /* a load under way never finishes */
	if (rep->busy) { /* the step in flight never ends: its tokens are lost */
		rep->busy = false;
		rep->run_gen++;
	}
	rep->n_batch = 0;
	for (int32_t i = 0; i < rep->n_running; i++) {
		struct sreq *r = rep->running[i];
		r->kv_dropped += r->computed;
		replica_free_blocks(rep, r);
		replica_kv_reserve(rep, -r->seq_blocks);
		r->computed = 0;
		r->generated = 0;
		r->pd_remote_blocks = 0; /* KV that crossed to this replica is lost */
		r->first_token_ns = r->last_token_ns = 0;
		r->state = 0;
		out[(*n)++] = r;
	}
	rep->n_running = 0;
	while (rep->wq_len > 0) {
		struct sreq *r = wq_front(rep);
		wq_pop_front(rep);
		r->generated = 0; /* a preempted call's streamed tokens are lost too */
		r->pd_remote_blocks = 0;
		r->first_token_ns = r->last_token_ns = 0;
		r->state = 0;
		out[(*n)++] = r;
	}
	rep->head_blocked = false;
	replica_retain_tick(rep, s->now_ns); /* retained blocks go too */
	replica_kv_reset(rep);
}

/* ---- step end ---- */

static void emit_itl(struct sim *s, double first, double last, double total, int64_t steps, int32_t seqs)
{
	if (!s->sink.itl_run || steps <= 0 || seqs <= 0)
		return;
	struct res_itl_run run = {.first_ns = first, .last_ns = last, .total_ns = total,
				  .steps = steps, .seqs = seqs};
	s->sink.itl_run(s->sink.ctx, &run);
}

int replica_step_end(struct sim *s, struct replica *rep, uint64_t gen)
{
	if (gen != rep->run_gen || !rep->busy)
		return 0; /* a run that was cut short: stale event */
	if (rep->kv_err)
		return rep->kv_err;
	int64_t k = rep->run_k;
	int64_t t0 = rep->run_t0_ns;
	double total = rep->run_total_ns;
	double first = total, last = total;
	if (rep->run_decode && k > 1) {
		first = rep->perf->decode_run_ns(rep->perf->ctx, &rep->run_b0, 1);
		last = total - rep->perf->decode_run_ns(rep->perf->ctx, &rep->run_b0, k - 1);
	}
	rep->busy = false;
	s->stats.steps += k;
	s->stats.step_events++;
	/* verify positions are not tokens applied: count what they yield on
	 * both sides (below) */
	s->tokens_scheduled += (rep->run_b0.new_tokens -
				(int64_t)rep->run_b0.spec_seqs * (rep->cfg->spec_k + 1)) * k;
	if (rep->run_b0.spec_seqs > 0 && rep->run_decode) {
		/* the same decode run without speculation, for the speed-up */
		struct perf_batch plain = {
			.new_tokens = rep->run_b0.seqs, .seqs = rep->run_b0.seqs,
			.decode_seqs = rep->run_b0.seqs,
			.attn_pairs = rep->run_b0.spec_context + rep->run_b0.seqs,
			.kv_read_tokens = rep->run_b0.spec_context + rep->run_b0.seqs };
		s->stats.spec_run_ns += total;
		s->stats.spec_plain_ns += rep->perf->decode_run_ns(rep->perf->ctx, &plain, k);
	}

	/* Apply the tokens.  Requests whose previous token came at t0 (the
	 * usual case) share one ITL record; the rest report their own gap. */
	int32_t steady = 0;
	for (int32_t i = 0; i < rep->n_batch; i++) {
		struct sreq *r = rep->batch[i].r;
		bool spec = rep->batch[i].spec;
		int64_t n = spec ? (rep->run_decode ? spec_tokens_after(r, k) : rep->batch[i].n)
				 : rep->run_decode ? k : rep->batch[i].n;
		bool decoding = r->generated > 0 && r->computed == sreq_total(r) - 1;
		if (spec) {
			int64_t steps = rep->run_decode ? k : 1;
			int32_t kind = r->call.kind >= 0 && r->call.kind < OUT_KINDS ? r->call.kind : 0;
			r->spec_acc = (uint32_t)(((int64_t)r->spec_acc + steps * (int64_t)r->spec_q) %
						 SPEC_Q_ONE);
			s->tokens_scheduled += n;
			s->stats.spec_seq_steps[kind] += steps;
			s->stats.spec_tokens[kind] += n;
		}
		if (!decoding)
			r->prefill_computed += n;
		r->computed += n;
		r->kv_obtained += n;
		s->tokens_applied += n;
		int64_t emitted = 0;
		if (rep->run_decode) {
			if (sreq_cover(rep, r, r->computed) != 0)
				return DIAG_ENOMEM;
			emitted = spec ? n : k;
		} else if (spec) {
			emitted = n;
		} else if (r->computed == sreq_total(r)) {
			emitted = 1;
		}
		r->generated += emitted;
		if (sreq_register(rep, r, r->computed) != 0) /* a run's later steps */
			return DIAG_ENOMEM;
		if (emitted == 0)
			continue;
		if (r->generated == emitted) {
			r->first_token_ns = s->now_ns; /* token 1 came now */
			router_first_token(&s->router, rep->id, r);
		} else if (spec) {
			/* a verify step yields its tokens at once: their gaps
			 * share the time since the last ones */
			double gap = (double)(s->now_ns - r->last_token_ns);
			emit_itl(s, gap / (double)emitted, gap / (double)emitted, gap, emitted, 1);
		} else if (r->last_token_ns == t0) {
			steady++;
		} else {
			double gap = (double)(t0 - r->last_token_ns) + first;
			emit_itl(s, gap, gap, gap, 1, 1);
			if (emitted > 1)
				emit_itl(s, first, last, total - first, emitted - 1, 1);
		}
		r->last_token_ns = s->now_ns;
	}
	emit_itl(s, first, last, total, k, steady);
	if (rep->run_decode)
		run_leave_window(rep, k);
	if (s->sink.busy) {
		struct res_busy b = {.replica = rep->id, .start_ns = t0, .end_ns = s->now_ns, .steps = k,
				     .seqs = rep->run_b0.seqs, .kv_blocks_start = rep->run_kv_start,
				     .kv_blocks_end = replica_kv_used(rep)};
		if (rep->perf->work)
			rep->perf->work(rep->perf->ctx, &rep->run_b0, rep->run_decode ? k : 0, &b.flops,
				     &b.bytes);
		s->sink.busy(s->sink.ctx, &b);
	}

	/* Finish requests, keeping the running list in admission order. */
	int32_t w = 0;
	for (int32_t i = 0; i < rep->n_running; i++) {
		struct sreq *r = rep->running[i];
		if (r->generated >= r->call.output_tokens)
			sim_finish_request(s, rep, r);
		else
			rep->running[w++] = r;
	}
	rep->n_running = w;
	rep->n_batch = 0;
	if (s->err)
		return s->err;
	if (rep->n_running > 0 || rep->wq_len > 0)
		return replica_kick(s, rep);
	return 0;
}
