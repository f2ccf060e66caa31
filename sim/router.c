/* SPDX-License-Identifier: Apache-2.0
 * router: routing policies, outstanding-work counters and the router queue
 * (see router.h). */
#include "sim/router.h"

#include "base/hash.h"
#include "sim/kvcache.h"
#include "sim/replica.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const POLICY_NAMES[ROUTER_N_POLICIES] = {
	"round_robin", "least_requests", "least_tokens",
	"power_of_two", "session_affinity", "prefix_aware",
	"sglang_smg_v1.9_approx", "sglang_smg_v1.9_exact",
	"llmd_v0.10_approx", "llmd_v0.10_precise", "dynamo_v1.0_kv", "least_time",
};

void router_config_default(struct router_config *c)
{
	memset(c, 0, sizeof(*c));
	c->policy = ROUTER_DEFAULT_POLICY;
	c->prefix_load_cap = ROUTER_PREFIX_LOAD_CAP;
	c->prefix_weight = ROUTER_PREFIX_WEIGHT;
	c->load_weight = ROUTER_LOAD_WEIGHT;
	c->cache_threshold = ROUTER_CACHE_THRESHOLD;
	c->balance_rel_threshold = ROUTER_BALANCE_REL_THRESHOLD;
	c->max_tree_tokens = ROUTER_MAX_TREE_TOKENS;
	c->queue_weight = ROUTER_QUEUE_WEIGHT;
	c->kv_weight = ROUTER_KV_WEIGHT;
	c->scrape_interval_ms = ROUTER_SCRAPE_INTERVAL_MS;
	c->overlap_weight = ROUTER_OVERLAP_WEIGHT;
	c->temperature = ROUTER_TEMPERATURE;
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
	return "round_robin, least_requests, least_tokens, power_of_two, session_affinity, "
	       "prefix_aware, sglang_smg_v1.9_approx, sglang_smg_v1.9_exact, llmd_v0.10_approx, "
	       "llmd_v0.10_precise, dynamo_v1.0_kv, least_time";
}

/* Append to b[*at..size) what fmt says, whole or not at all (a piece that
 * does not fit is left out, so nothing is cut inside a word). */
static void describe_add(char *b, size_t size, size_t *at, const char *fmt, ...)
{
	if (*at >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(b + *at, size - *at, fmt, ap);
	va_end(ap);
	if (w >= 0 && (size_t)w < size - *at)
		*at += (size_t)w;
	else
		b[*at] = '\0';
}

char *router_describe(const struct router_config *c, char *buf, size_t size)
{
	if (size == 0)
		return buf;
	const char *name = router_policy_name(c->policy);
	long long cap = (long long)c->prefix_load_cap;
	char s[ROUTER_DESCRIBE_MAX];
	size_t at = 0;
	s[0] = '\0';
	describe_add(s, sizeof(s), &at, "%s", name ? name : "?");
	switch (c->policy) {
	case ROUTER_PREFIX_AWARE:
		if (c->prefix_scorer == ROUTER_SCORER_WEIGHTED)
			describe_add(s, sizeof(s), &at, " weighted (prefix_weight %g, load_weight %g, "
				     "prefix_load_cap %lld)", c->prefix_weight, c->load_weight, cap);
		else
			describe_add(s, sizeof(s), &at, " cache_aware (cache_threshold %g, "
				     "prefix_load_cap %lld, balance_rel_threshold %g)", c->cache_threshold,
				     cap, c->balance_rel_threshold);
		break;
	case ROUTER_SGLANG_APPROX:
		describe_add(s, sizeof(s), &at, " (cache_threshold %g, prefix_load_cap %lld, "
			     "balance_rel_threshold %g, max_tree_tokens %lld)", c->cache_threshold, cap,
			     c->balance_rel_threshold, (long long)c->max_tree_tokens);
		break;
	case ROUTER_SGLANG_EXACT:
		describe_add(s, sizeof(s), &at, " (prefix_load_cap %lld, balance_rel_threshold %g)",
			     cap, c->balance_rel_threshold);
		break;
	case ROUTER_LLMD_APPROX:
	case ROUTER_LLMD_PRECISE:
		describe_add(s, sizeof(s), &at, " (prefix_weight %g, queue_weight %g, kv_weight %g, "
			     "scrape_interval_ms %g)", c->prefix_weight, c->queue_weight, c->kv_weight,
			     c->scrape_interval_ms);
		break;
	case ROUTER_DYNAMO_KV:
		describe_add(s, sizeof(s), &at, " (overlap_weight %g, temperature %g)",
			     c->overlap_weight, c->temperature);
		break;
	case ROUTER_SESSION_AFFINITY:
		if (c->affinity_saturation > 0)
			describe_add(s, sizeof(s), &at, " (affinity_saturation %lld)",
				     (long long)c->affinity_saturation);
		if (c->sticky_subagents)
			describe_add(s, sizeof(s), &at, " (sticky_subagents)");
		break;
	default:
		break;
	}
	if (c->max_outstanding > 0)
		describe_add(s, sizeof(s), &at, "; max_outstanding %lld",
			     (long long)c->max_outstanding);
	if (c->queue_limit > 0)
		describe_add(s, sizeof(s), &at, "; queue_limit %lld", (long long)c->queue_limit);
	/* whole, or the policy's name alone, or nothing */
	const char *out = strlen(s) < size ? s : name && strlen(name) < size ? name : "";
	snprintf(buf, size, "%s", out);
	return buf;
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

/* Whether the policy keeps a per-replica index (struct kvr). */
static bool has_index(enum router_policy p)
{
	return p == ROUTER_SGLANG_APPROX || p == ROUTER_LLMD_APPROX || p == ROUTER_DYNAMO_KV;
}

static bool is_llmd(enum router_policy p)
{
	return p == ROUTER_LLMD_APPROX || p == ROUTER_LLMD_PRECISE;
}

static bool is_named(enum router_policy p)
{
	return p >= ROUTER_SGLANG_APPROX && p <= ROUTER_DYNAMO_KV;
}

static bool finite_nonneg(double x)
{
	return x >= 0 && isfinite(x);
}

/* The per-replica indexes of the named policies (rt->cfg, rt->reps set):
 * their capacity in engine blocks.  0 or DIAG_ENOMEM. */
static int index_init(struct router *rt)
{
	const struct router_config *c = &rt->cfg;
	int64_t bs = rt->reps[0].kv.block_size;
	/* llm-d hashes index blocks of at least 64 tokens (the approximate
	 * producer's floor, minBlockSizeTokens): a whole number of ours */
	rt->idx_unit = bs >= ROUTER_LLMD_MIN_BLOCK_TOKENS
			       ? 1
			       : (ROUTER_LLMD_MIN_BLOCK_TOKENS + bs - 1) / bs;
	if (!has_index(c->policy))
		return 0;
	rt->idx = calloc((size_t)rt->n, sizeof(*rt->idx));
	if (!rt->idx)
		return DIAG_ENOMEM;
	for (int32_t i = 0; i < rt->n; i++) {
		int64_t gpu = rt->reps[i].kv.total_blocks > 0 ? rt->reps[i].kv.total_blocks : 1;
		int64_t cap = c->policy == ROUTER_SGLANG_APPROX ? c->max_tree_tokens / bs
			      : c->policy == ROUTER_LLMD_APPROX ? gpu * rt->idx_unit
								 : gpu; /* grows (router_sent) */
		if (kvr_init(&rt->idx[i], bs, cap > 0 ? cap : 1, true) != 0)
			return DIAG_ENOMEM; /* out of range cannot happen: bounded above */
	}
	return 0;
}

/* least_time: seconds per prompt token of a prefill step and per output
 * token of a decode step on rep's pool (router.h). */
static void speeds_of(const struct replica *rep, double *s_prompt, double *s_output)
{
	int64_t c = rep->cfg->max_num_batched_tokens > 0 ? rep->cfg->max_num_batched_tokens : 8192;
	if (c > 8192)
		c = 8192;
	struct perf_batch pre = {.new_tokens = c, .seqs = 1, .attn_pairs = c * (c + 1) / 2,
				 .kv_read_tokens = c};
	int32_t b = rep->cfg->max_num_seqs < 64 ? rep->cfg->max_num_seqs : 64;
	if (b < 1)
		b = 1;
	const int64_t ctx = 8192;
	struct perf_batch dec = {.new_tokens = b, .seqs = b, .decode_seqs = b,
				 .attn_pairs = (int64_t)b * (ctx + 1), .kv_read_tokens = (int64_t)b * (ctx + 1)};
	double p = rep->perf->step_ns(rep->perf->ctx, &pre), q = rep->perf->step_ns(rep->perf->ctx, &dec);
	*s_prompt = p > 0 ? p / 1e9 / (double)c : 0;
	*s_output = q > 0 ? q / 1e9 / (double)b : 0;
}

int router_init(struct router *rt, const struct router_config *cfg, int32_t n,
		int32_t max_num_seqs, const struct replica *reps, struct diag *d)
{
	memset(rt, 0, sizeof(*rt));
	if ((unsigned)cfg->policy >= ROUTER_N_POLICIES || n < 1 || cfg->max_outstanding < 0 ||
	    cfg->queue_limit < 0 || cfg->affinity_saturation < 0 || cfg->prefix_load_cap < 0 ||
	    !(cfg->prefix_weight >= 0) || !(cfg->load_weight >= 0) ||
	    (unsigned)cfg->prefix_scorer >= ROUTER_N_SCORERS || !(cfg->cache_threshold >= 0) ||
	    !(cfg->cache_threshold <= 1) || !(cfg->balance_rel_threshold >= 0) ||
	    cfg->max_tree_tokens < 1 || cfg->max_tree_tokens > ((int64_t)1 << 40) ||
	    !finite_nonneg(cfg->queue_weight) || !finite_nonneg(cfg->kv_weight) ||
	    !finite_nonneg(cfg->scrape_interval_ms) || cfg->scrape_interval_ms > 1e9 ||
	    !finite_nonneg(cfg->overlap_weight) || !finite_nonneg(cfg->temperature) ||
	    !finite_nonneg(cfg->prefix_weight) || cfg->team_max_inflight < 0)
		return diag_set(d, DIAG_EINPUT, "router settings out of range");
	if (cfg->sticky_subagents && cfg->policy != ROUTER_SESSION_AFFINITY)
		return diag_set(d, DIAG_EINPUT, "router.sticky_subagents: only session_affinity keeps a "
				"session on one replica (expected router.policy session_affinity, not %s)",
				router_policy_name(cfg->policy));
	if ((is_named(cfg->policy) || cfg->policy == ROUTER_LEAST_TIME) && !reps)
		return diag_set(d, DIAG_EINTERNAL, "router policy %s needs its replicas",
				router_policy_name(cfg->policy));
	rt->cfg = *cfg;
	rt->n = n;
	rt->max_num_seqs = max_num_seqs;
	rt->reps = reps;
	kvr_req_init(&rt->rec);
	rt->out_reqs = calloc((size_t)n, sizeof(*rt->out_reqs));
	rt->out_tokens = calloc((size_t)n, sizeof(*rt->out_tokens));
	rt->sent = calloc((size_t)n, sizeof(*rt->sent));
	rt->up = malloc((size_t)n);
	if (rt->up)
		memset(rt->up, 1, (size_t)n);
	bool ok = rt->out_reqs && rt->out_tokens && rt->sent && rt->up;
	if (ok && cfg->policy == ROUTER_SESSION_AFFINITY)
		ok = ring_build(rt) == 0;
	if (ok && is_named(cfg->policy)) {
		rt->score = calloc((size_t)n, sizeof(*rt->score));
		rt->ties = calloc((size_t)n, sizeof(*rt->ties));
		ok = rt->score && rt->ties && index_init(rt) == 0;
	}
	if (ok && is_llmd(cfg->policy)) {
		rt->scr_waiting = calloc((size_t)n, sizeof(*rt->scr_waiting));
		rt->scr_kv = calloc((size_t)n, sizeof(*rt->scr_kv));
		rt->scrape_ns = (int64_t)llround(cfg->scrape_interval_ms * 1e6);
		ok = rt->scr_waiting && rt->scr_kv;
	}
	if (ok && cfg->policy == ROUTER_DYNAMO_KV)
		ok = (rt->act_prefill = calloc((size_t)n, sizeof(*rt->act_prefill))) != NULL;
	if (ok && cfg->policy == ROUTER_LEAST_TIME) {
		rt->out_prompt = calloc((size_t)n, sizeof(*rt->out_prompt));
		rt->out_output = calloc((size_t)n, sizeof(*rt->out_output));
		rt->s_per_prompt = calloc((size_t)n, sizeof(*rt->s_per_prompt));
		rt->s_per_output = calloc((size_t)n, sizeof(*rt->s_per_output));
		ok = rt->out_prompt && rt->out_output && rt->s_per_prompt && rt->s_per_output;
		for (int32_t i = 0; ok && i < n; i++)
			speeds_of(&reps[i], &rt->s_per_prompt[i], &rt->s_per_output[i]);
	}
	if (!ok)
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
	for (int32_t i = 0; rt->idx && i < rt->n; i++)
		kvr_release(&rt->idx[i]);
	free(rt->idx);
	free(rt->rec.ent); /* holds nothing, or the indexes went with an error */
	free(rt->act_prefill);
	free(rt->out_prompt);
	free(rt->out_output);
	free(rt->s_per_prompt);
	free(rt->s_per_output);
	free(rt->scr_waiting);
	free(rt->scr_kv);
	free(rt->score);
	free(rt->ties);
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
	int32_t *cur = &rt->rr_next;
	uint64_t m = rt->cur_pools;
	if (rt->rr_per_pool && m && !(m & (m - 1))) /* one pool: its own cursor */
		cur = &rt->rr_pool[__builtin_ctzll(m)];
	for (int32_t k = 0; k < rt->n; k++) {
		int32_t i = (*cur + k) % rt->n;
		if (eligible(rt, i)) {
			*cur = (i + 1) % rt->n;
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
	uint64_t key = rt->cfg.sticky_subagents && r->call.parent ? r->call.parent : r->call.session;
	uint64_t h = key ? hash_mix64(key) : hash_combine(~rt->cfg.seed, rt->draws++);
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

/* ---- the named routers ---- */

/* A uniform draw in [0, 1) from the router's seeded stream. */
static double draw_unit(struct router *rt)
{
	uint64_t x = hash_combine(rt->cfg.seed ^ 0x5eed5eedULL, rt->draws++);
	return (double)(x >> 11) * 0x1.0p-53;
}

/* One of k equals, drawn from the stream (no draw for k = 1). */
static int32_t draw_of(struct router *rt, int32_t k)
{
	if (k <= 1)
		return 0;
	uint64_t x = hash_combine(rt->cfg.seed ^ 0x7135ULL, rt->draws++);
	return (int32_t)(x % (uint64_t)k);
}

/* The prompt's full blocks that carry a hash. */
static int64_t prompt_blocks(const struct router *rt, const struct sreq *r)
{
	int64_t blocks = r->call.prompt_tokens / rt->reps[0].kv.block_size;
	return blocks < r->call.n_hashes ? blocks : r->call.n_hashes;
}

/* Leading blocks of h[0..n) recorded in index kv. */
static int64_t index_match(const struct kvr *kv, const uint64_t *h, int64_t n)
{
	int64_t hit = 0;
	if (n > 0)
		kvr_match(kv, h, n, &hit, NULL, NULL);
	return hit;
}

/* Record the chain h[0..n) in index kv as a request that takes what is
 * there, adds the rest and leaves at once: the whole path becomes the
 * newest in the LRU, its last block the oldest of it, so an eviction takes
 * a recorded prompt from its tail (a leaf) first.  A chain longer than the
 * index keeps its first blocks.  0 or DIAG_ENOMEM. */
static int index_record(struct kvr *kv, struct kvr_req *tmp, const uint64_t *h, int64_t n)
{
	if (n > kv->total_blocks)
		n = kv->total_blocks;
	if (n <= 0)
		return 0;
	int64_t hit = index_match(kv, h, n);
	int rc = kvr_take(kv, tmp, h, hit);
	if (rc == 0)
		rc = kvr_alloc(kv, tmp, n - hit); /* room: only tmp holds blocks */
	if (rc == 0)
		rc = kvr_register(kv, tmp, h, n);
	int rc2 = kvr_put(kv, tmp);
	return rc ? (rc == DIAG_EINPUT ? DIAG_EINTERNAL : rc) : rc2;
}

/* SGLang's least loaded: fewer outstanding calls, then fewer calls routed,
 * then the lower index (smg v1.9.0 cache_aware.rs, select_worker: the
 * (load, processed_requests, idx) key). */
static bool smg_lighter(const struct router *rt, int32_t i, int32_t j)
{
	if (rt->out_reqs[i] != rt->out_reqs[j])
		return rt->out_reqs[i] < rt->out_reqs[j];
	if (rt->sent[i] != rt->sent[j])
		return rt->sent[i] < rt->sent[j];
	return i < j;
}

/* The SGLang model gateway's cache-aware policy as lightseekorg/smg v1.9.0
 * has it (model_gateway/src/policies/cache_aware.rs: select_worker,
 * is_imbalanced, select_worker_min_load; select_worker_with_text for HTTP
 * workers' string tree, crates/kv_index/src/string_tree.rs, and
 * select_worker_with_tokens for gRPC's token tree, token_tree.rs, both
 * matching and inserting the prompt for the picked worker in one descent,
 * the imbalanced path inserting too; select_worker_event_driven and
 * score_overlap for KV events).  Both modes first test the outstanding
 * calls for imbalance (max - min > balance_abs_threshold and max >
 * balance_rel_threshold x min) and then take the least loaded.  Approximate
 * (exact false): the replica whose recorded tree matches the longest prefix
 * wins if matched tokens / prompt tokens > cache_threshold, else the least
 * loaded; the gateway takes the worker it last touched at the deepest
 * matching node, here the least loaded of those recorded there, so the pick
 * does not depend on a hash map's order.  Exact: the replica whose prefix
 * table holds the most of the prompt's blocks, more than none, wins
 * whatever the share (the gateway's ties: lower load, then the smaller
 * indexer tree, for which the calls routed so far stand in here); none: the
 * least loaded.  The recording itself is router_sent's. */
static int32_t pick_sglang(struct router *rt, const struct sreq *r, bool exact)
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
		if (light < 0 || smg_lighter(rt, i, light))
			light = i;
	}
	if (light < 0 || rt->n == 1)
		return light;
	bool imbalanced = max_load - min_load > rt->cfg.prefix_load_cap &&
			  (double)max_load > rt->cfg.balance_rel_threshold * (double)min_load;
	int64_t blocks = prompt_blocks(rt, r);
	const uint64_t *h = r->call.block_hashes;
	int32_t best = -1;
	int64_t best_hit = 0;
	for (int32_t i = 0; blocks > 0 && i < rt->n; i++) {
		if (!eligible(rt, i))
			continue;
		int64_t hit = exact ? replica_match_len(&rt->reps[i], h, blocks)
				    : index_match(&rt->idx[i], h, blocks);
		if (hit > 0 && (best < 0 || hit > best_hit ||
				(hit == best_hit && smg_lighter(rt, i, best)))) {
			best = i;
			best_hit = hit;
		}
	}
	bool cached = best >= 0 &&
		      (exact || (double)(best_hit * rt->reps[0].kv.block_size) >
					rt->cfg.cache_threshold * (double)r->call.prompt_tokens);
	if (imbalanced) {
		if (cached && best != light)
			rt->stats.load_capped++;
		return light;
	}
	if (!cached)
		return light;
	rt->stats.prefix_matched++;
	return best;
}

/* llm-d's index blocks of the prompt.  The approximate producer cuts the
 * prompt into blocks of idx_unit engine blocks, its last block partial if
 * the prompt ends inside one, and hashes at most 131,072 tokens' worth
 * (prefixhash.GetBlockHashes, resolveMaxBlocks): *total of them, the
 * denominator of the prefix score.  *full: those whose hashes the call
 * carries (whole blocks), which the index can match and record. */
static void llmd_index_blocks(const struct router *rt, const struct sreq *r, int64_t *total,
			      int64_t *full)
{
	int64_t unit_tokens = rt->idx_unit * rt->reps[0].kv.block_size;
	int64_t cap = ROUTER_LLMD_MAX_PREFIX_TOKENS / unit_tokens;
	int64_t all = (r->call.prompt_tokens + unit_tokens - 1) / unit_tokens;
	int64_t whole = prompt_blocks(rt, r) / rt->idx_unit;
	*total = all < cap ? all : cap;
	*full = whole < *total ? whole : *total;
}

/* Replica i's waiting queue and KV-cache usage as the llm-d router sees
 * them: as last scraped, or live without a scrape interval. */
static int64_t llmd_waiting(const struct router *rt, int32_t i)
{
	return rt->scrape_ns > 0 ? rt->scr_waiting[i] : rt->reps[i].wq_len;
}

static double kv_usage(const struct replica *rep)
{
	int64_t total = rep->kv.total_blocks;
	return total > 0 ? (double)replica_kv_used(rep) / (double)total : 0.0;
}

static double llmd_kv(const struct router *rt, int32_t i)
{
	return rt->scrape_ns > 0 ? rt->scr_kv[i] : kv_usage(&rt->reps[i]);
}

void router_scrape(struct router *rt, int64_t t_ns)
{
	if (rt->scrape_ns <= 0 || t_ns < rt->scrape_next_ns)
		return;
	for (int32_t i = 0; i < rt->n; i++) {
		rt->scr_waiting[i] = rt->reps[i].wq_len;
		rt->scr_kv[i] = kv_usage(&rt->reps[i]);
	}
	rt->scrape_next_ns = (t_ns / rt->scrape_ns + 1) * rt->scrape_ns;
}

/* llm-d's router as llm-d/llm-d-router v0.10.0 configures it by default
 * (pkg/epp/config/loader/defaults.go: queue-scorer 2, kv-cache-utilization-
 * scorer 2, prefix-cache-scorer 3, max-score-picker).  Scorers:
 * scheduling/scorer/queuedepth/queue.go (min-max normalised waiting queue,
 * 1 when all are equal), scorer/kvcacheutilization (1 - KV usage), both read
 * from the metrics scraped every --refresh-metrics-interval
 * (pkg/epp/server/options.go, 50 ms); scorer/prefix/plugin.go (matched /
 * total blocks) fed by requestcontrol/dataproducer/approximateprefix
 * (plugin.go Produce / PreRequest, indexer.go: per endpoint an LRU of block
 * hashes as large as its GPU block count, added when a call is sent) or, in
 * precise mode, by the KV-event index (dataproducer/preciseprefixcache), here
 * the replica's prefix table.  picker/maxscore/picker.go shuffles then takes
 * the highest score: a tie goes to one drawn at random. */
static int32_t pick_llmd(struct router *rt, const struct sreq *r, bool precise)
{
	int64_t qmin = INT64_MAX, qmax = -1;
	int32_t any = -1, count = 0;
	for (int32_t i = 0; i < rt->n; i++) {
		if (!eligible(rt, i))
			continue;
		int64_t q = llmd_waiting(rt, i);
		qmin = q < qmin ? q : qmin;
		qmax = q > qmax ? q : qmax;
		any = i;
		count++;
	}
	if (count <= 1 || rt->n == 1)
		return any;
	const uint64_t *h = r->call.block_hashes;
	int64_t total = prompt_blocks(rt, r), full = total;
	if (!precise)
		llmd_index_blocks(rt, r, &total, &full);
	double best = -1, best_prefix = 0;
	int32_t n_ties = 0;
	for (int32_t i = 0; i < rt->n; i++) {
		if (!eligible(rt, i))
			continue;
		double prefix = 0;
		if (total > 0) {
			int64_t matched =
				precise ? replica_match_len(&rt->reps[i], h, full)
					: index_match(&rt->idx[i], h, full * rt->idx_unit) / rt->idx_unit;
			prefix = (double)matched / (double)total;
		}
		double queue = qmax == qmin ? 1.0
					    : (double)(qmax - llmd_waiting(rt, i)) / (double)(qmax - qmin);
		double score = rt->cfg.prefix_weight * prefix + rt->cfg.queue_weight * queue +
			       rt->cfg.kv_weight * (1.0 - llmd_kv(rt, i));
		rt->score[i] = prefix;
		if (prefix > best_prefix)
			best_prefix = prefix;
		if (score > best) {
			best = score;
			n_ties = 0;
		}
		if (score == best)
			rt->ties[n_ties++] = i;
	}
	int32_t pick = rt->ties[draw_of(rt, n_ties)];
	if (best_prefix > 0 && rt->score[pick] == best_prefix)
		rt->stats.prefix_matched++;
	return pick;
}

/* Blocks of h[0..n) in replica i's active set that running calls hold. */
static int64_t dynamo_held(const struct router *rt, int32_t i, const uint64_t *h, int64_t n)
{
	int64_t hit = 0, idle = 0;
	if (n > 0)
		kvr_match(&rt->idx[i], h, n, &hit, &idle, NULL);
	/* a holder holds a prefix of its chain, so the held blocks of a path
	 * are a prefix of it and the idle ones its tail */
	return hit - idle;
}

/* Dynamo's KV router (ai-dynamo/dynamo, lib/llm/src/kv_router/scheduler.rs:
 * DefaultWorkerSelector::select_worker and softmax_sample, read at commit
 * db19bd2a; the active set as kv_router/sequence.rs's ActiveSequences keeps
 * it: potential_blocks_and_tokens, new_blocks, new_tokens,
 * mark_prefill_completed; its defaults as Dynamo 1.0's frontend
 * configuration reference gives them: --router-kv-overlap-score-weight 1.0,
 * --router-temperature 0.0, KV events on, active blocks tracked assuming KV
 * reuse, output blocks not tracked).  Per replica, logit = overlap_weight x
 * potential prefill tokens / block size + potential decode blocks, where
 * the potential prefill tokens are the tokens of the calls it holds whose
 * prefill has not ended (their first token) plus this prompt's tokens past
 * its cached blocks (the overlap the KV-event indexer reports: here the
 * replica's prefix table), and the potential decode blocks the distinct
 * prompt blocks of the calls it holds plus this prompt's blocks not among
 * them.  Lowest wins; temperature 0: a tie goes to the smaller indexer tree
 * (here: fewer calls routed so far), then to one drawn at random; above 0
 * one is drawn with probability proportional to exp(-(logit - min) /
 * (max - min) / temperature), all alike when max = min. */
static int32_t pick_dynamo(struct router *rt, const struct sreq *r)
{
	int32_t any = -1, count = 0;
	for (int32_t i = 0; i < rt->n; i++)
		if (eligible(rt, i)) {
			any = i;
			count++;
		}
	if (count <= 1 || rt->n == 1)
		return any;
	int64_t bs = rt->reps[0].kv.block_size;
	int64_t blocks = prompt_blocks(rt, r);
	const uint64_t *h = r->call.block_hashes;
	double lo = INFINITY, hi = -INFINITY;
	int64_t best_overlap = 0;
	for (int32_t i = 0; i < rt->n; i++) {
		if (!eligible(rt, i))
			continue;
		int64_t overlap = blocks > 0 ? replica_match_len(&rt->reps[i], h, blocks) : 0;
		int64_t fresh = r->call.prompt_tokens - overlap * bs;
		double prefill = (double)(rt->act_prefill[i] + (fresh > 0 ? fresh : 0)) / (double)bs;
		double decode = (double)(kvr_used(&rt->idx[i]) + blocks - dynamo_held(rt, i, h, blocks));
		double logit = rt->cfg.overlap_weight * prefill + decode;
		rt->score[i] = logit;
		lo = logit < lo ? logit : lo;
		hi = logit > hi ? logit : hi;
		if (overlap > best_overlap)
			best_overlap = overlap;
	}
	int32_t pick = -1;
	if (rt->cfg.temperature > 0) {
		double sum = 0, u;
		for (int32_t i = 0; i < rt->n; i++)
			if (eligible(rt, i))
				sum += hi == lo ? 1.0 : exp(-(rt->score[i] - lo) / (hi - lo) / rt->cfg.temperature);
		u = draw_unit(rt) * sum;
		double cum = 0;
		for (int32_t i = 0; i < rt->n && pick < 0; i++) {
			if (!eligible(rt, i))
				continue;
			cum += hi == lo ? 1.0 : exp(-(rt->score[i] - lo) / (hi - lo) / rt->cfg.temperature);
			if (u < cum)
				pick = i;
		}
		if (pick < 0) /* rounding at the top end */
			for (int32_t i = 0; i < rt->n; i++)
				if (eligible(rt, i))
					pick = i;
	} else {
		/* the lowest cost, the fewest routed among them, then a draw */
		int64_t fewest = INT64_MAX;
		for (int32_t i = 0; i < rt->n; i++)
			if (eligible(rt, i) && rt->score[i] == lo && rt->sent[i] < fewest)
				fewest = rt->sent[i];
		int32_t k = 0;
		for (int32_t i = 0; i < rt->n; i++)
			if (eligible(rt, i) && rt->score[i] == lo && rt->sent[i] == fewest)
				k++;
		int32_t want = draw_of(rt, k);
		for (int32_t i = 0; i < rt->n && pick < 0; i++)
			if (eligible(rt, i) && rt->score[i] == lo && rt->sent[i] == fewest && want-- == 0)
				pick = i;
	}
	if (best_overlap > 0 && replica_match_len(&rt->reps[pick], h, blocks) == best_overlap)
		rt->stats.prefix_matched++;
	return pick;
}

/* least_time: the least outstanding work in seconds once r joins. */
static int32_t pick_least_time(const struct router *rt, const struct sreq *r)
{
	int32_t best = -1;
	double best_s = 0;
	for (int32_t i = 0; i < rt->n; i++) {
		if (!eligible(rt, i))
			continue;
		double s = (double)(rt->out_prompt[i] + r->call.prompt_tokens) * rt->s_per_prompt[i] +
			   (double)(rt->out_output[i] + r->call.output_tokens) * rt->s_per_output[i];
		if (best < 0 || s < best_s) {
			best = i;
			best_s = s;
		}
	}
	return best;
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
	case ROUTER_SGLANG_APPROX:
	case ROUTER_SGLANG_EXACT:
		return pick_sglang(rt, r, rt->cfg.policy == ROUTER_SGLANG_EXACT);
	case ROUTER_LLMD_APPROX:
	case ROUTER_LLMD_PRECISE:
		return pick_llmd(rt, r, rt->cfg.policy == ROUTER_LLMD_PRECISE);
	case ROUTER_DYNAMO_KV:
		return pick_dynamo(rt, r);
	case ROUTER_LEAST_TIME:
		return pick_least_time(rt, r);
	case ROUTER_N_POLICIES:
		break;
	}
	return -1;
}

/* Dynamo: r joins replica i's active set (its distinct prompt blocks) and
 * its uncached prompt tokens count until its first token.  0 or
 * DIAG_ENOMEM. */
static int dynamo_add(struct router *rt, int32_t i, struct sreq *r)
{
	struct kvr *act = &rt->idx[i];
	int64_t bs = rt->reps[0].kv.block_size;
	int64_t blocks = prompt_blocks(rt, r);
	const uint64_t *h = r->call.block_hashes;
	int64_t overlap = blocks > 0 ? replica_match_len(&rt->reps[i], h, blocks) : 0;
	int64_t fresh = r->call.prompt_tokens - overlap * bs;
	r->rt_prefill = fresh > 0 ? fresh : 0;
	rt->act_prefill[i] += r->rt_prefill;
	if (blocks <= 0)
		return 0;
	int64_t hit = index_match(act, h, blocks);
	int rc = kvr_take(act, &r->rt_act, h, hit);
	int64_t room = kvr_available(act);
	if (room < blocks - hit) /* the active set is not bounded: it grows */
		act->total_blocks += blocks - hit - room;
	if (rc == 0)
		rc = kvr_alloc(act, &r->rt_act, blocks - hit);
	if (rc == 0)
		rc = kvr_register(act, &r->rt_act, h, blocks);
	return rc == DIAG_EINPUT ? DIAG_EINTERNAL : rc;
}

/* Team t has delta more calls in flight: its waiting calls stop (or
 * start) counting as ready when it reaches (or leaves) its cap. */
static void team_take(struct router *rt, int32_t t, int64_t delta)
{
	int64_t cap = rt->cfg.team_max_inflight;
	bool was_under = rt->team_inflight[t] < cap;
	rt->team_inflight[t] += delta;
	assert(rt->team_inflight[t] >= 0);
	bool under = rt->team_inflight[t] < cap;
	if (was_under != under)
		rt->q_ready += under ? rt->tq_len[t] : -rt->tq_len[t];
}

int router_sent(struct router *rt, int32_t i, struct sreq *r)
{
	rt->out_reqs[i]++;
	rt->out_tokens[i] += r->call.prompt_tokens + r->call.output_tokens;
	if (rt->out_prompt) {
		rt->out_prompt[i] += r->call.prompt_tokens;
		rt->out_output[i] += r->call.output_tokens;
	}
	rt->sent[i]++;
	rt->stats.routed++;
	if (rt->cfg.team_max_inflight > 0 && !r->team_carry)
		team_take(rt, r->call.team, 1);
	r->team_carry = false;
	if (!rt->idx || rt->n == 1)
		return 0;
	int rc = 0;
	switch (rt->cfg.policy) {
	case ROUTER_SGLANG_APPROX:
		rc = index_record(&rt->idx[i], &rt->rec, r->call.block_hashes, prompt_blocks(rt, r));
		break;
	case ROUTER_LLMD_APPROX: {
		int64_t total, full;
		llmd_index_blocks(rt, r, &total, &full);
		rc = index_record(&rt->idx[i], &rt->rec, r->call.block_hashes, full * rt->idx_unit);
		break;
	}
	case ROUTER_DYNAMO_KV:
		rc = dynamo_add(rt, i, r);
		break;
	default:
		break;
	}
	if (rc != 0 && !rt->err)
		rt->err = rc;
	return rc;
}

void router_first_token(struct router *rt, int32_t i, struct sreq *r)
{
	if (rt->act_prefill && r->rt_prefill) {
		rt->act_prefill[i] -= r->rt_prefill;
		r->rt_prefill = 0;
	}
}

void router_done(struct router *rt, int32_t i, struct sreq *r)
{
	rt->out_reqs[i]--;
	rt->out_tokens[i] -= r->call.prompt_tokens + r->call.output_tokens;
	if (rt->out_prompt) {
		rt->out_prompt[i] -= r->call.prompt_tokens;
		rt->out_output[i] -= r->call.output_tokens;
	}
	if (rt->cfg.team_max_inflight > 0 && !r->team_carry)
		team_take(rt, r->call.team, -1);
	if (rt->cfg.policy != ROUTER_DYNAMO_KV || !rt->idx)
		return;
	router_first_token(rt, i, r);
	int rc = kvr_put(&rt->idx[i], &r->rt_act);
	if (rc != 0 && !rt->err)
		rt->err = rc;
}

/* ---- the queue ---- */

void router_team_drop(struct router *rt, struct sreq *r)
{
	if (rt->cfg.team_max_inflight > 0 && r->team_carry)
		team_take(rt, r->call.team, -1);
	r->team_carry = false;
}

bool router_queue_full(const struct router *rt)
{
	return rt->cfg.queue_limit > 0 && rt->q_len >= rt->cfg.queue_limit;
}

bool router_queue_bypass(const struct router *rt, const struct sreq *r)
{
	if (rt->cfg.team_max_inflight <= 0)
		return rt->q_len == 0;
	return rt->q_ready == 0 && rt->team_inflight[r->call.team] < rt->cfg.team_max_inflight;
}

int router_queue_push(struct router *rt, struct sreq *r)
{
	if (rt->cfg.team_max_inflight > 0) {
		int32_t t = r->call.team;
		r->tq_next = NULL;
		if (rt->tq_tail[t])
			rt->tq_tail[t]->tq_next = r;
		else
			rt->tq_head[t] = r;
		rt->tq_tail[t] = r;
		rt->tq_len[t]++;
		if (rt->team_inflight[t] < rt->cfg.team_max_inflight)
			rt->q_ready++;
		rt->q_len++;
	} else {
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
	}
	rt->stats.queued++;
	if (rt->q_len > rt->stats.queue_peak)
		rt->stats.queue_peak = rt->q_len;
	return 0;
}

/* The team whose waiting head goes next: from tq_turn on, the first with
 * calls waiting and room under its cap; -1 if none.  O(teams). */
static int32_t team_next(const struct router *rt)
{
	if (rt->q_ready == 0)
		return -1;
	for (int32_t k = 0; k < ROUTER_MAX_TEAMS; k++) {
		int32_t t = (rt->tq_turn + k) % ROUTER_MAX_TEAMS;
		if (rt->tq_len[t] > 0 && rt->team_inflight[t] < rt->cfg.team_max_inflight)
			return t;
	}
	assert(!"q_ready counts a call no team holds");
	return -1;
}

struct sreq *router_queue_front(const struct router *rt)
{
	if (rt->cfg.team_max_inflight > 0) {
		int32_t t = team_next(rt);
		return t < 0 ? NULL : rt->tq_head[t];
	}
	return rt->q_len ? rt->q[rt->q_head] : NULL;
}

static void team_pop(struct router *rt, int32_t t)
{
	struct sreq *r = rt->tq_head[t];
	rt->tq_head[t] = r->tq_next;
	if (!rt->tq_head[t])
		rt->tq_tail[t] = NULL;
	r->tq_next = NULL;
	rt->tq_len[t]--;
	rt->q_len--;
	if (rt->team_inflight[t] < rt->cfg.team_max_inflight)
		rt->q_ready--;
}

void router_queue_pop(struct router *rt)
{
	if (rt->cfg.team_max_inflight > 0) {
		int32_t t = team_next(rt);
		assert(t >= 0);
		team_pop(rt, t);
		rt->tq_turn = (t + 1) % ROUTER_MAX_TEAMS; /* the next team's turn */
		return;
	}
	rt->q_head = (rt->q_head + 1) % rt->q_cap;
	rt->q_len--;
}

struct sreq *router_queue_take_any(struct router *rt)
{
	if (rt->cfg.team_max_inflight > 0) {
		for (int32_t t = 0; t < ROUTER_MAX_TEAMS; t++)
			if (rt->tq_len[t] > 0) {
				struct sreq *r = rt->tq_head[t];
				team_pop(rt, t);
				return r;
			}
		return NULL;
	}
	struct sreq *r = rt->q_len ? rt->q[rt->q_head] : NULL;
	if (r)
		router_queue_pop(rt);
	return r;
}

void router_queue_each(const struct router *rt, void (*fn)(void *ctx, const struct sreq *r),
		       void *ctx)
{
	if (rt->cfg.team_max_inflight > 0) {
		for (int32_t t = 0; t < ROUTER_MAX_TEAMS; t++)
			for (const struct sreq *r = rt->tq_head[t]; r; r = r->tq_next)
				fn(ctx, r);
		return;
	}
	for (int64_t j = 0; j < rt->q_len; j++)
		fn(ctx, rt->q[(rt->q_head + j) % rt->q_cap]);
}
