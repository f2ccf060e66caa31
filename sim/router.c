/* SPDX-License-Identifier: Apache-2.0
 * router: routing policies, outstanding-work counters and the router queue
 * (see router.h). */
#include "sim/router.h"

#include "base/hash.h"
#include "sim/kvcache.h"
#include "sim/replica.h"

#include <stdlib.h>
#include <string.h>

static const char *const POLICY_NAMES[ROUTER_N_POLICIES] = {
	"round_robin", "least_requests", "least_tokens",
	"power_of_two", "session_affinity", "prefix_aware",
};

void router_config_default(struct router_config *c)
{
	memset(c, 0, sizeof(*c));
	c->policy = ROUTER_ROUND_ROBIN;
	c->prefix_load_cap = ROUTER_PREFIX_LOAD_CAP;
	c->prefix_weight = ROUTER_PREFIX_WEIGHT;
	c->load_weight = ROUTER_LOAD_WEIGHT;
	c->cache_threshold = ROUTER_CACHE_THRESHOLD;
	c->balance_rel_threshold = ROUTER_BALANCE_REL_THRESHOLD;
	c->seed = 1;
}

const char *router_policy_name(enum router_policy p)
{
	return (unsigned)p < ROUTER_N_POLICIES ? POLICY_NAMES[p] : NULL;
}

bool router_policy_parse(const char *s, enum router_policy *out)
{
	for (int i = 0; i < ROUTER_N_POLICIES; i++)
		if (strcmp(s, POLICY_NAMES[i]) == 0) {
			*out = (enum router_policy)i;
			return true;
		}
	return false;
}

const char *router_policy_names(void)
{
	return "round_robin, least_requests, least_tokens, power_of_two, session_affinity, prefix_aware";
}

const char *router_scorer_name(enum router_prefix_scorer s)
{
	return s == ROUTER_SCORER_CACHE_AWARE ? "cache_aware"
	       : s == ROUTER_SCORER_WEIGHTED  ? "weighted"
					      : NULL;
}

bool router_scorer_parse(const char *s, enum router_prefix_scorer *out)
{
	for (int i = 0; i < ROUTER_N_SCORERS; i++)
		if (strcmp(s, router_scorer_name((enum router_prefix_scorer)i)) == 0) {
			*out = (enum router_prefix_scorer)i;
			return true;
		}
	return false;
}

static int cmp_ring(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Build the consistent-hashing ring: ROUTER_VNODES points per replica. */
static int ring_build(struct router *rt)
{
	int64_t len = (int64_t)rt->n * ROUTER_VNODES;
	uint64_t *pairs = malloc((size_t)len * 2 * sizeof(*pairs));
	rt->ring_hash = malloc((size_t)len * sizeof(*rt->ring_hash));
	rt->ring_rep = malloc((size_t)len * sizeof(*rt->ring_rep));
	if (!pairs || !rt->ring_hash || !rt->ring_rep) {
		free(pairs);
		return DIAG_ENOMEM;
	}
	for (int32_t i = 0; i < rt->n; i++)
		for (int v = 0; v < ROUTER_VNODES; v++) {
			int64_t k = (int64_t)i * ROUTER_VNODES + v;
			pairs[2 * k] = hash_combine(hash_mix64((uint64_t)i + 1), (uint64_t)v);
			pairs[2 * k + 1] = (uint64_t)i;
		}
	qsort(pairs, (size_t)len, 2 * sizeof(*pairs), cmp_ring);
	for (int64_t k = 0; k < len; k++) {
		rt->ring_hash[k] = pairs[2 * k];
		rt->ring_rep[k] = (int32_t)pairs[2 * k + 1];
	}
	rt->ring_len = len;
	free(pairs);
	return 0;
}

int router_init(struct router *rt, const struct router_config *cfg, int32_t n,
		int32_t max_num_seqs, struct diag *d)
{
	memset(rt, 0, sizeof(*rt));
	if ((unsigned)cfg->policy >= ROUTER_N_POLICIES || n < 1 || cfg->max_outstanding < 0 ||
	    cfg->queue_limit < 0 || cfg->affinity_saturation < 0 || cfg->prefix_load_cap < 0 ||
	    !(cfg->prefix_weight >= 0) || !(cfg->load_weight >= 0) ||
	    (unsigned)cfg->prefix_scorer >= ROUTER_N_SCORERS || !(cfg->cache_threshold >= 0) ||
	    !(cfg->cache_threshold <= 1) || !(cfg->balance_rel_threshold >= 0))
		return diag_set(d, DIAG_EINPUT, "router settings out of range");
	rt->cfg = *cfg;
	rt->n = n;
	rt->max_num_seqs = max_num_seqs;
	rt->out_reqs = calloc((size_t)n, sizeof(*rt->out_reqs));
	rt->out_tokens = calloc((size_t)n, sizeof(*rt->out_tokens));
	rt->sent = calloc((size_t)n, sizeof(*rt->sent));
	rt->up = malloc((size_t)n);
	if (rt->up)
		memset(rt->up, 1, (size_t)n);
	if (!rt->out_reqs || !rt->out_tokens || !rt->sent || !rt->up ||
	    (cfg->policy == ROUTER_SESSION_AFFINITY && ring_build(rt) != 0))
		return diag_set(d, DIAG_ENOMEM, "out of memory for a router over %d replicas", (int)n);
	return 0;
}

void router_release(struct router *rt)
{
	free(rt->out_reqs);
	free(rt->out_tokens);
	free(rt->sent);
	free(rt->up);
	free(rt->ring_hash);
	free(rt->ring_rep);
	free(rt->q);
	memset(rt, 0, sizeof(*rt));
}

static bool eligible(const struct router *rt, int32_t i)
{
	return rt->up[i] && (rt->cfg.max_outstanding == 0 || rt->out_reqs[i] < rt->cfg.max_outstanding) &&
	       ((rt->cur_pools >> rt->cur_reps[i].pool) & 1u);
}

void router_set_up(struct router *rt, int32_t i, bool up)
{
	rt->up[i] = up;
}

/* Eligible replica with the least of key[] (lowest index on a tie), or -1. */
static int32_t least_of(const struct router *rt, const int64_t *key)
{
	int32_t best = -1;
	for (int32_t i = 0; i < rt->n; i++)
		if (eligible(rt, i) && (best < 0 || key[i] < key[best]))
			best = i;
	return best;
}

static int32_t pick_round_robin(struct router *rt)
{
	for (int32_t k = 0; k < rt->n; k++) {
		int32_t i = (rt->rr_next + k) % rt->n;
		if (eligible(rt, i)) {
			rt->rr_next = (i + 1) % rt->n;
			return i;
		}
	}
	return -1;
}

static int32_t pick_two(struct router *rt)
{
	if (rt->n == 1)
		return eligible(rt, 0) ? 0 : -1;
	uint64_t x = hash_combine(rt->cfg.seed, rt->draws++);
	int32_t a = (int32_t)(x % (uint64_t)rt->n);
	int32_t b = (int32_t)((x >> 32) % (uint64_t)(rt->n - 1));
	if (b >= a)
		b++;
	bool ea = eligible(rt, a), eb = eligible(rt, b);
	if (ea && eb) {
		if (rt->out_reqs[b] < rt->out_reqs[a] || (rt->out_reqs[b] == rt->out_reqs[a] && b < a))
			return b;
		return a;
	}
	if (ea || eb)
		return ea ? a : b;
	/* both drawn replicas are full: the least loaded eligible one */
	return least_of(rt, rt->out_reqs);
}

/* Outstanding calls at which replica i counts as saturated. */
static int64_t affinity_saturation(const struct router *rt, int32_t i)
{
	if (rt->cfg.affinity_saturation > 0)
		return rt->cfg.affinity_saturation;
	return rt->cfg.max_outstanding > 0 ? rt->cfg.max_outstanding
					   : rt->cur_reps[i].cfg->max_num_seqs;
}

static int32_t pick_affinity(struct router *rt, const struct sreq *r)
{
	/* a call without a session (open loop) hashes like a request id would:
	 * a fresh key from the router's stream */
	uint64_t h = r->call.session ? hash_mix64(r->call.session)
				     : hash_combine(~rt->cfg.seed, rt->draws++);
	/* first ring point at or after h, wrapping */
	int64_t lo = 0, hi = rt->ring_len;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (rt->ring_hash[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	int32_t owner = rt->ring_rep[lo % rt->ring_len];
	if (eligible(rt, owner) && rt->out_reqs[owner] < affinity_saturation(rt, owner))
		return owner;
	/* walk clockwise to the next replica that is neither full nor saturated */
	for (int64_t k = 1; k < rt->ring_len; k++) {
		int32_t i = rt->ring_rep[(lo + k) % rt->ring_len];
		if (i != owner && eligible(rt, i) && rt->out_reqs[i] < affinity_saturation(rt, i)) {
			rt->stats.affinity_fallbacks++;
			return i;
		}
	}
	int32_t i = eligible(rt, owner) ? owner : least_of(rt, rt->out_reqs);
	if (i >= 0 && i != owner)
		rt->stats.affinity_fallbacks++;
	return i;
}

static int32_t pick_weighted(struct router *rt, const struct sreq *r, const struct replica *reps)
{
	int64_t min_load = INT64_MAX, max_load = -1;
	for (int32_t i = 0; i < rt->n; i++)
		if (eligible(rt, i)) {
			if (rt->out_reqs[i] < min_load)
				min_load = rt->out_reqs[i];
			if (rt->out_reqs[i] > max_load)
				max_load = rt->out_reqs[i];
		}
	if (max_load < 0)
		return -1;
	int64_t bs = reps[0].kv.block_size;
	int64_t blocks = r->call.prompt_tokens / bs;
	if (blocks > r->call.n_hashes)
		blocks = r->call.n_hashes;
	int64_t cap_load = min_load + rt->cfg.prefix_load_cap;
	int32_t best = -1, best_hit_any = -1;
	double best_score = 0.0;
	int64_t best_hit = -1, hit_any = -1;
	for (int32_t i = 0; i < rt->n; i++) {
		if (!eligible(rt, i))
			continue;
		int64_t hit = blocks > 0 ? replica_match_len(&reps[i], r->call.block_hashes, blocks) : 0;
		if (hit > hit_any) {
			hit_any = hit;
			best_hit_any = i;
		}
		if (rt->out_reqs[i] > cap_load)
			continue;
		double load = max_load == min_load
				      ? 1.0
				      : (double)(max_load - rt->out_reqs[i]) / (double)(max_load - min_load);
		double score = rt->cfg.prefix_weight * (blocks > 0 ? (double)hit / (double)blocks : 0.0) +
			       rt->cfg.load_weight * load;
		if (best < 0 || score > best_score ||
		    (score == best_score && rt->out_reqs[i] < rt->out_reqs[best])) {
			best = i;
			best_score = score;
			best_hit = hit;
		}
	}
	if (hit_any > best_hit && rt->out_reqs[best_hit_any] > cap_load)
		rt->stats.load_capped++;
	return best;
}

/* Replica i is less loaded than replica j: fewer outstanding calls, then
 * fewer outstanding tokens, then fewer calls routed so far. */
static bool lighter(const struct router *rt, int32_t i, int32_t j)
{
	if (rt->out_reqs[i] != rt->out_reqs[j])
		return rt->out_reqs[i] < rt->out_reqs[j];
	if (rt->out_tokens[i] != rt->out_tokens[j])
		return rt->out_tokens[i] < rt->out_tokens[j];
	return rt->sent[i] < rt->sent[j];
}

/* Among replicas with the same cached prefix, i comes before j: lighter,
 * then the lower index. */
static bool tie_before(const struct router *rt, int32_t i, int32_t j)
{
	return lighter(rt, i, j) || (!lighter(rt, j, i) && i < j);
}

static int32_t pick_cache_aware(struct router *rt, const struct sreq *r,
				const struct replica *reps)
{
	int32_t light = -1;
	int64_t min_load = INT64_MAX, max_load = -1;
	for (int32_t i = 0; i < rt->n; i++) {
		if (!eligible(rt, i))
			continue;
		if (rt->out_reqs[i] < min_load)
			min_load = rt->out_reqs[i];
		if (rt->out_reqs[i] > max_load)
			max_load = rt->out_reqs[i];
		if (light < 0 || lighter(rt, i, light))
			light = i;
	}
	if (light < 0)
		return -1;
	int64_t blocks = r->call.prompt_tokens / reps[0].kv.block_size;
	if (blocks > r->call.n_hashes)
		blocks = r->call.n_hashes;
	const uint64_t *h = r->call.block_hashes;
	/* The replica with the longest cached prefix, lighter on a tie, the
	 * lower index on a full tie: an order that does not depend on the
	 * order replicas are read in.  A match is a binary search over the
	 * prompt's blocks (replica_match_len); still, the likeliest winner is
	 * read first -- the one holding the furthest of a few sampled blocks --
	 * and any other only if one probe says it could tie or beat it. */
	int32_t first = -1;
	int64_t first_est = -1;
	for (int32_t i = 0; blocks > 0 && i < rt->n; i++) {
		if (!eligible(rt, i))
			continue;
		int64_t est = 0;
		for (int64_t part = 8; part >= 1; part /= 2) {
			int64_t at = (blocks - 1) * part / 8;
			if (replica_holds(&reps[i], h, at)) {
				est = at + 1;
				break;
			}
		}
		if (est > first_est) {
			first = i;
			first_est = est;
		}
	}
	int32_t best = -1;
	int64_t best_hit = 0;
	for (int32_t k = -1; blocks > 0 && k < rt->n; k++) {
		int32_t i = k < 0 ? first : k;
		if (i < 0 || (k >= 0 && i == first) || !eligible(rt, i))
			continue;
		if (best >= 0) {
			bool beat = best_hit < blocks && replica_holds(&reps[i], h, best_hit);
			if (!beat && !(tie_before(rt, i, best) && replica_holds(&reps[i], h, best_hit - 1)))
				continue;
		}
		int64_t hit = replica_match_len(&reps[i], h, blocks);
		if (hit > 0 &&
		    (best < 0 || hit > best_hit || (hit == best_hit && tie_before(rt, i, best)))) {
			best = i;
			best_hit = hit;
		}
	}
	bool cached = best >= 0 && (double)best_hit > rt->cfg.cache_threshold * (double)blocks;
	bool imbalanced = max_load - min_load > rt->cfg.prefix_load_cap &&
			  (double)max_load > rt->cfg.balance_rel_threshold * (double)min_load;
	if (cached && !imbalanced) {
		rt->stats.prefix_matched++;
		return best;
	}
	if (cached && best != light)
		rt->stats.load_capped++;
	return light;
}

int32_t router_pick(struct router *rt, const struct sreq *r, const struct replica *reps)
{
	rt->cur_reps = reps;
	rt->cur_pools = r->pools_ok;
	switch (rt->cfg.policy) {
	case ROUTER_ROUND_ROBIN:
		return pick_round_robin(rt);
	case ROUTER_LEAST_REQUESTS:
		return least_of(rt, rt->out_reqs);
	case ROUTER_LEAST_TOKENS:
		return least_of(rt, rt->out_tokens);
	case ROUTER_POWER_OF_TWO:
		return pick_two(rt);
	case ROUTER_SESSION_AFFINITY:
		return pick_affinity(rt, r);
	case ROUTER_PREFIX_AWARE:
		return rt->cfg.prefix_scorer == ROUTER_SCORER_WEIGHTED ? pick_weighted(rt, r, reps)
									: pick_cache_aware(rt, r, reps);
	case ROUTER_N_POLICIES:
		break;
	}
	return -1;
}

void router_sent(struct router *rt, int32_t i, const struct sreq *r)
{
	rt->out_reqs[i]++;
	rt->out_tokens[i] += r->call.prompt_tokens + r->call.output_tokens;
	rt->sent[i]++;
	rt->stats.routed++;
}

void router_done(struct router *rt, int32_t i, const struct sreq *r)
{
	rt->out_reqs[i]--;
	rt->out_tokens[i] -= r->call.prompt_tokens + r->call.output_tokens;
}

/* ---- the queue ---- */

bool router_queue_full(const struct router *rt)
{
	return rt->cfg.queue_limit > 0 && rt->q_len >= rt->cfg.queue_limit;
}

int router_queue_push(struct router *rt, struct sreq *r)
{
	if (rt->q_len == rt->q_cap) {
		int64_t ncap = rt->q_cap ? rt->q_cap * 2 : 64;
		struct sreq **nq = malloc((size_t)ncap * sizeof(*nq));
		if (!nq)
			return DIAG_ENOMEM;
		for (int64_t i = 0; i < rt->q_len; i++)
			nq[i] = rt->q[(rt->q_head + i) % rt->q_cap];
		free(rt->q);
		rt->q = nq;
		rt->q_cap = ncap;
		rt->q_head = 0;
	}
	rt->q[(rt->q_head + rt->q_len++) % rt->q_cap] = r;
	rt->stats.queued++;
	if (rt->q_len > rt->stats.queue_peak)
		rt->stats.queue_peak = rt->q_len;
	return 0;
}

struct sreq *router_queue_front(const struct router *rt)
{
	return rt->q_len ? rt->q[rt->q_head] : NULL;
}

void router_queue_pop(struct router *rt)
{
	rt->q_head = (rt->q_head + 1) % rt->q_cap;
	rt->q_len--;
}
