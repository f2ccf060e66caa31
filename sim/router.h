/* SPDX-License-Identifier: Apache-2.0
 * router: which replica serves a call, and what waits at the router.
 *
 * The router sees every replica of the cluster and counts, per replica, the
 * calls it has handed over that have not finished ("outstanding": waiting or
 * running inside the engine) and their tokens (prompt + output).  A policy
 * picks among the replicas that are eligible, i.e. up (sim/lifecycle.h: not
 * starting, draining, down or off) and below `max_outstanding` (0 = no
 * limit):
 *
 *   round_robin       the next replica in turn;
 *   least_requests    fewest outstanding calls (lowest index on a tie);
 *   least_tokens      fewest outstanding tokens;
 *   power_of_two      two distinct replicas drawn from a counter-based
 *                     random stream seeded by `seed`, the one with fewer
 *                     outstanding calls (Mitzenmacher's two choices);
 *   session_affinity  consistent hashing of the session id (a call without
 *                     one: a fresh key from the seeded stream) on a ring of
 *                     ROUTER_VNODES virtual nodes per replica; when the
 *                     owner has `affinity_saturation` outstanding calls or
 *                     more (or is not eligible), the next replica clockwise
 *                     that is not saturated, else the least loaded (each
 *                     such detour is an affinity fallback); with
 *                     sticky_subagents a sub-agent's calls hash on their
 *                     parent session's id instead, so they follow it (one
 *                     level: a sub-agent's own sub-agents follow it);
 *   prefix_aware      one of two published scorers (router.prefix_scorer),
 *                     both reading each eligible replica's own prefix table
 *                     (exact: the blocks of the call's prompt it holds):
 *     cache_aware     (default) the SGLang model gateway's cache-aware
 *                     rule.  The load (outstanding calls) is imbalanced
 *                     when max - min > prefix_load_cap (its
 *                     balance_abs_threshold) and max > balance_rel_threshold
 *                     x min; then the least loaded replica wins.  Else the
 *                     replica holding the longest prefix of the call wins if
 *                     that prefix is more than cache_threshold of the
 *                     prompt's full blocks, and the least loaded one if not.
 *                     "Least loaded" and ties of the longest prefix are
 *                     decided by fewer outstanding calls, then fewer
 *                     outstanding tokens, then fewer calls routed so far (a
 *                     turn among equals: at an instant when every replica
 *                     is idle the loads tie), then the lowest index.
 *     weighted        llm-d's default scheduling profile: every eligible
 *                     replica scores prefix_weight x (share of the call's
 *                     prompt blocks cached there) + load_weight x (max_load -
 *                     load) / (max_load - min_load), a min-max normalised
 *                     load score over outstanding calls (1 when all are
 *                     equal), weights 3 and 2 by default; highest score
 *                     wins, then fewest outstanding calls, then lowest index.
 *                     Before scoring, a load cap drops every replica with
 *                     more than min_load + prefix_load_cap outstanding calls.
 *
 * Policies that follow a named router release by release (the source file
 * each follows is cited at its pick function in router.c and in
 * docs/scenario.md).  "Least loaded" below is SGLang's key: fewer
 * outstanding calls, then fewer calls routed so far, then the lower index.
 *
 *   sglang_smg_v1.9_approx  the SGLang model gateway (lightseekorg/smg
 *                     v1.9.0, which carries sgl-router's history) with its
 *                     approximate tree, as for HTTP workers: per replica, the
 *                     prompts routed there, recorded when the call is sent
 *                     and never told of evictions (router.c: struct kvr per
 *                     replica, an LRU kept to max_tree_tokens; the gateway
 *                     trims its tree every 120 s instead).  When the load is
 *                     imbalanced (as cache_aware above) the least loaded
 *                     replica; else the replica whose recorded tree matches
 *                     the longest prefix of the prompt, if that prefix is
 *                     more than cache_threshold of the prompt's tokens, and
 *                     the least loaded if not.  Replicas tied at the longest
 *                     match: the least loaded of them (the gateway takes the
 *                     tenant it touched last at that node).
 *   sglang_smg_v1.9_exact   the same gateway's event-driven mode (gRPC
 *                     workers with KV events): it reads each replica's prefix
 *                     table; the imbalance rule as above, then the replica
 *                     with the most cached blocks of the prompt (no
 *                     threshold), the least loaded on a tie; none cached:
 *                     the least loaded.
 *   llmd_v0.10_approx  llm-d's router (llm-d/llm-d-router v0.10.0) with its
 *                     default profile: score = prefix_weight x prefix +
 *                     queue_weight x queue + kv_weight x kv, highest wins,
 *                     ties drawn at random from the seeded stream.  prefix:
 *                     of the prompt's index blocks (the smallest whole number
 *                     of engine blocks of at least 64 tokens; a partial last
 *                     one counts; at most 131,072 tokens), the share whose
 *                     hashes were recorded for that replica when calls were
 *                     sent there, in an LRU of as many index blocks as the
 *                     replica has KV blocks; queue: the replica's waiting
 *                     queue as last scraped (every scrape_interval_ms),
 *                     min-max normalised, 1 when all are equal; kv: 1 - its
 *                     KV-cache usage as last scraped.
 *   llmd_v0.10_precise  the same with the precise prefix scorer (KV events):
 *                     prefix is the share of the prompt's full blocks the
 *                     replica's prefix table holds.
 *   dynamo_v1.0_kv    Dynamo's KV router (ai-dynamo/dynamo 1.0, KV events
 *                     on): cost = overlap_weight x prefill blocks + decode
 *                     blocks, lowest wins.  prefill blocks: the prompt
 *                     tokens the replica has still to prefill for the calls
 *                     it holds (until their first token) plus this call's
 *                     tokens past its cached prefix, over the block size;
 *                     decode blocks: the distinct prompt blocks of the calls
 *                     it holds plus this call's blocks not among them.
 *                     temperature 0: a tie goes to the replica routed fewer
 *                     calls (for Dynamo's smaller indexer tree), then to one
 *                     drawn at random; above 0, one drawn with probability
 *                     proportional to exp(-(cost - min) / (max - min) /
 *                     temperature).
 *
 * Randomness (the tie draws, the softmax) comes from a counter-based stream
 * seeded by `seed`, as power_of_two's: same seed, same picks.
 *
 * Pools (sim/sim.h): a replica is eligible for a call only if its pool can
 * serve the call (the call's pools_ok), and session_affinity's default
 * saturation is each replica's own max_num_seqs.  The policies above
 * compare raw outstanding counts across pools, as llm-d's queue scorer and
 * SGLang's router do: a faster pool finishes its calls sooner and so holds
 * fewer, and takes more of the new ones without the router knowing its
 * speed.  One policy weighs the load by each pool's speed:
 *
 *   least_time        the replica whose outstanding work, in seconds at its
 *                     pool's speed, is least after this call joins it: its
 *                     calls' prompt tokens at its prefill rate plus their
 *                     output tokens at its decode rate (lowest index on a
 *                     tie).  The rates are the pool's step-time model's at
 *                     router_init: a prefill step of max_num_batched_tokens
 *                     (at most 8,192) tokens of one sequence, and a decode
 *                     step of min(max_num_seqs, 64) sequences at 8,192
 *                     tokens of context each.  Envoy's weighted least-request
 *                     balancer picks by weight / (outstanding + 1) with the
 *                     weights an operator sets per host; this is that rule
 *                     with the weights the pools' speeds and the load in
 *                     tokens, so a workstation beside an 8-GPU node takes
 *                     the share it can serve.
 *
 * When no replica is eligible, or calls are already waiting (first come,
 * first served), a call waits in the router's queue; with `queue_limit`
 * calls already waiting (0 = no limit) it is refused instead.  When a call
 * finishes, the head of the queue goes to whichever replica the policy then
 * picks.  With no limits and one replica, the router never queues and
 * every call goes to replica 0 at once, whatever the policy (the policies
 * that keep per-replica state keep none then).
 *
 * Cost: round_robin, power_of_two and the queue are O(1) per call;
 * least_* O(replicas); session_affinity O(log(ring)) plus the walk past
 * saturated owners; prefix_aware weighted O(replicas x prompt blocks
 * matched).  prefix_aware cache_aware reads a replica's table past one probe
 * only if that replica could tie or beat the longest prefix found so far
 * (its block at that depth is present), so a call typically costs
 * O(replicas + the longest prefix + the shared prefix re-read by the
 * replicas that also hold it); O(replicas x prompt blocks) at worst.
 * The named routers' trees and indexes are struct kvr caches (sim/kvruns.h):
 * a match costs O(nodes on the path), recording a call O(nodes + its new
 * blocks), so a call costs O(replicas x nodes on its path + new blocks);
 * the llm-d policies' scrape is O(replicas) per scrape_interval_ms of
 * simulated time in which anything happens.  Memory: each approximate tree
 * holds the hashes of the distinct blocks recorded there, up to its bound.
 */
#ifndef SIM_ROUTER_H
#define SIM_ROUTER_H

#include "base/diag.h"
#include "sim/kvruns.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct replica;
struct sreq;

enum router_policy {
	ROUTER_ROUND_ROBIN = 0,
	ROUTER_LEAST_REQUESTS,
	ROUTER_LEAST_TOKENS,
	ROUTER_POWER_OF_TWO,
	ROUTER_SESSION_AFFINITY,
	ROUTER_PREFIX_AWARE,
	ROUTER_SGLANG_APPROX,
	ROUTER_SGLANG_EXACT,
	ROUTER_LLMD_APPROX,
	ROUTER_LLMD_PRECISE,
	ROUTER_DYNAMO_KV,
	ROUTER_LEAST_TIME,
	ROUTER_N_POLICIES,
};

/* The policy of router_config_default: what a team routing agent traffic
 * over several replicas in 2026 would run.  The SGLang model gateway's
 * cache-aware policy is its default (smg v1.9.0,
 * model_gateway/src/main.rs: --policy defaults to cache_aware), and with
 * HTTP workers (vLLM or SGLang engines without a KV-event stream) it runs on
 * its approximate tree. */
#define ROUTER_DEFAULT_POLICY ROUTER_SGLANG_APPROX

#define ROUTER_VNODES 64

/* Defaults of the prefix-aware policy: llm-d's default profile weighs its
 * prefix-cache scorer 3 and its queue scorer 2 (Red Hat OpenShift AI 3.4,
 * "Configuring scheduler settings for LLM inference services", read
 * 2026-12-01); SGLang's model gateway (lightseekorg/smg,
 * docs/concepts/routing/cache-aware.md at commit 18a6017, read 2026-12-01)
 * defaults balance_abs_threshold to 64, balance_rel_threshold to 1.5 and
 * cache_threshold to 0.3. */
#define ROUTER_PREFIX_WEIGHT 3.0
#define ROUTER_LOAD_WEIGHT 2.0
#define ROUTER_PREFIX_LOAD_CAP 64
#define ROUTER_CACHE_THRESHOLD 0.3
#define ROUTER_BALANCE_REL_THRESHOLD 1.5

/* The named routers' defaults, each from the release its policy follows:
 * smg v1.9.0 model_gateway/src/main.rs (--max-tree-size 67108864 per
 * worker, characters of the HTTP string tree or tokens of the gRPC token
 * tree, taken here as tokens; --cache-threshold 0.3,
 * --balance-abs-threshold 64 and --balance-rel-threshold 1.5 as above);
 * llm-d-router v0.10.0 pkg/epp/config/loader/defaults.go (queue-scorer 2,
 * kv-cache-utilization-scorer 2, prefix-cache-scorer 3),
 * pkg/epp/server/options.go (--refresh-metrics-interval 50 ms) and the
 * approximate prefix producer's 64-token minimum index block and
 * 131,072-token match cap (pkg/epp/framework/plugins/requestcontrol/
 * dataproducer/approximateprefix/plugin.go and types.go); Dynamo 1.0's
 * frontend configuration reference (--router-kv-overlap-score-weight 1.0,
 * --router-temperature 0.0, --router-kv-events on,
 * --router-assume-kv-reuse on, --router-track-output-blocks off). */
#define ROUTER_MAX_TREE_TOKENS 67108864
#define ROUTER_QUEUE_WEIGHT 2.0
#define ROUTER_KV_WEIGHT 2.0
#define ROUTER_SCRAPE_INTERVAL_MS 50.0
#define ROUTER_LLMD_MIN_BLOCK_TOKENS 64
#define ROUTER_LLMD_MAX_PREFIX_TOKENS 131072
#define ROUTER_OVERLAP_WEIGHT 1.0
#define ROUTER_TEMPERATURE 0.0

/* How prefix_aware weighs cache against load (above). */
enum router_prefix_scorer {
	ROUTER_SCORER_CACHE_AWARE = 0,
	ROUTER_SCORER_WEIGHTED,
	ROUTER_N_SCORERS,
};

struct router_config {
	enum router_policy policy;
	int64_t max_outstanding;      /* per replica; 0 = no limit */
	int64_t queue_limit;          /* calls waiting at the router; 0 = no limit */
	int64_t affinity_saturation;  /* 0 = max_outstanding, else max_num_seqs */
	bool sticky_subagents;        /* session_affinity: a sub-agent's calls hash
					 on their parent session (sim_call.parent) */
	enum router_prefix_scorer prefix_scorer;
	int64_t prefix_load_cap;      /* prefix_aware: load difference, outstanding calls */
	double cache_threshold;       /* cache_aware: share of the prompt's blocks */
	double balance_rel_threshold; /* cache_aware: max / min load */
	double prefix_weight;         /* weighted, llmd_* */
	double load_weight;           /* weighted */
	int64_t max_tree_tokens;      /* sglang_*_approx: per replica */
	double queue_weight;          /* llmd_* */
	double kv_weight;             /* llmd_* */
	double scrape_interval_ms;    /* llmd_*: metrics refresh; 0 = read live */
	double overlap_weight;        /* dynamo_* */
	double temperature;           /* dynamo_*: 0 = lowest cost */
	uint64_t seed;                /* the random stream (power_of_two, ties, softmax) */
	int64_t team_max_inflight;    /* per team (sim_call.team): calls handed to
					 replicas and not finished; 0 = no cap */
};

/* The defaults above, ROUTER_DEFAULT_POLICY, no limits, seed 1. */
void router_config_default(struct router_config *c);

/* "round_robin", ... (static); NULL for an out-of-range value. */
const char *router_policy_name(enum router_policy p);

/* Parse a policy name; false if it is none of them. */
bool router_policy_parse(const char *s, enum router_policy *out);

/* "round_robin, least_requests, ...": every name, for messages. */
const char *router_policy_names(void);

/* The policy and the settings it reads, for reports: "sglang_smg_v1.9_approx
 * (cache_threshold 0.3, ...)"; ROUTER_DESCRIBE_MAX bytes always hold it.
 * In a smaller buf it is never cut: the policy's name alone, or nothing
 * when even that does not fit.  Returns buf. */
#define ROUTER_DESCRIBE_MAX 256
char *router_describe(const struct router_config *c, char *buf, size_t size);

/* The same for the prefix-aware scorers: "cache_aware", "weighted". */
const char *router_scorer_name(enum router_prefix_scorer s);
bool router_scorer_parse(const char *s, enum router_prefix_scorer *out);

/* What the router did over a run. */
struct router_stats {
	int64_t routed;              /* calls handed to a replica */
	int64_t queued;              /* calls that waited at the router first */
	int64_t refused;             /* calls refused: the router queue was full */
	int64_t affinity_fallbacks;  /* session_affinity calls sent off their owner */
	int64_t load_capped;         /* prefix_aware and sglang_* calls whose
					best-cached replica was passed over for
					its load (imbalance or the load cap) */
	int64_t prefix_matched;      /* calls sent for their prefix: prefix_aware
					cache_aware and sglang_*: to the replica
					with their longest prefix (above
					cache_threshold where the policy has
					one); llmd_* and dynamo_*: to a replica
					with the best prefix score or overlap,
					more than none */
	int64_t queue_peak;          /* longest router queue */
	int64_t wait_ns_sum;         /* time the queued calls waited, summed */
	int64_t wait_ns_max;
};

/* Teams a fair router keeps apart (sim_call.team < ROUTER_MAX_TEAMS). */
#define ROUTER_MAX_TEAMS 64

struct router {
	struct router_config cfg;
	int32_t n;
	int32_t max_num_seqs;
	int64_t *out_reqs;           /* per replica: outstanding calls */
	int64_t *out_tokens;         /* per replica: their prompt + output tokens */
	int64_t *sent;               /* per replica: calls handed over */
	unsigned char *up;           /* per replica: may take calls (all at init) */
	uint64_t *ring_hash;         /* session_affinity ring, sorted */
	int32_t *ring_rep;
	int64_t ring_len;
	int32_t rr_next;
	bool rr_per_pool;            /* round robin keeps a cursor per pool for
					picks confined to one pool (prefill/decode
					disaggregation: the two picks of a call
					must not move each other's cursor) */
	int32_t rr_pool[64];         /* those cursors, by pool */
	uint64_t draws;              /* draws from the random stream so far */
	const struct replica *reps;  /* the n replicas (router_init) */
	/* the named routers' per-replica state (NULL for other policies):
	 * idx: the approximate tree or index (sglang_*_approx, llmd_*_approx)
	 * or the active set (dynamo_*) of each replica */
	struct kvr *idx;
	struct kvr_req rec;          /* scratch request for recording a call */
	int64_t idx_unit;            /* llmd_*: engine blocks per index block */
	int64_t *act_prefill;        /* dynamo_*: prompt tokens still to prefill */
	int64_t *out_prompt;         /* least_time: outstanding prompt tokens */
	int64_t *out_output;         /* least_time: outstanding output tokens */
	double *s_per_prompt;        /* least_time: s per prompt token (prefill) */
	double *s_per_output;        /* least_time: s per output token (decode) */
	int64_t *scr_waiting;        /* llmd_*: waiting queues as last scraped */
	double *scr_kv;              /* llmd_*: KV usage as last scraped */
	int64_t scrape_ns;           /* llmd_*: the interval (0: read live) */
	int64_t scrape_next_ns;      /* the first tick not scraped yet */
	double *score;               /* per replica: scratch */
	int32_t *ties;               /* per replica: scratch */
	int err;                     /* the first error of an index (DIAG_ENOMEM) */
	/* the pick in progress (router_pick): the replicas and the pools that
	 * can serve the call */
	const struct replica *cur_reps;
	uint64_t cur_pools;
	struct sreq **q;             /* waiting calls, ring buffer (no team cap) */
	int64_t q_head, q_len, q_cap; /* q_len: every waiting call, either form */
	/* team_max_inflight > 0: one FIFO per team instead of q (linked
	 * through sreq.tq_next), the calls each team has in flight, and the
	 * team whose turn is next */
	struct sreq *tq_head[ROUTER_MAX_TEAMS], *tq_tail[ROUTER_MAX_TEAMS];
	int64_t tq_len[ROUTER_MAX_TEAMS];
	int64_t team_inflight[ROUTER_MAX_TEAMS];
	int32_t tq_turn;
	int64_t q_ready;             /* waiting calls whose team is under its cap */
	struct router_stats stats;
};

/* The n replicas reps[0..n) (kept: they must outlive the router; their
 * block size and KV capacity size the named routers' indexes), of
 * max_num_seqs slots each.  0, DIAG_EINPUT for a bad config, or
 * DIAG_ENOMEM. */
int router_init(struct router *rt, const struct router_config *cfg, int32_t n,
		int32_t max_num_seqs, const struct replica *reps, struct diag *d);
/* Frees the router's arrays, not the calls still queued (the caller owns them). */
void router_release(struct router *rt);

/* The replica the policy picks for r now, or -1 if none is eligible.
 * `reps` are the n replicas (prefix_aware reads their prefix tables and
 * waiting queues).  Updates the policy's own state (turn, draws, fallback
 * counters) as if r were sent. */
int32_t router_pick(struct router *rt, const struct sreq *r, const struct replica *reps);

/* Replica i may (up) or may not take new calls. */
void router_set_up(struct router *rt, int32_t i, bool up);

/* Account r as handed to replica i (the approximate policies record its
 * prompt for replica i now, dynamo_* adds it to replica i's active set):
 * 0, or DIAG_ENOMEM (the indexes are then fit only for router_release) /
 * finished on replica i, or taken back from it (a failure). */
int router_sent(struct router *rt, int32_t i, struct sreq *r);
void router_done(struct router *rt, int32_t i, struct sreq *r);

/* r, on replica i, produced its first token (dynamo_*: its prefill is no
 * longer pending there). */
void router_first_token(struct router *rt, int32_t i, struct sreq *r);

/* Called before each event at time t_ns: when a scrape tick has passed
 * since the last call, the llm-d policies' metrics are read as they stand
 * (the state since the previous event, which is the state at the tick).
 * Nothing for the other policies. */
void router_scrape(struct router *rt, int64_t t_ns);

/* A call that kept its team's slot across a hand-over (sreq.team_carry:
 * between its prefill and its decode replica) and ends before reaching
 * the second: the slot is given back. */
void router_team_drop(struct router *rt, struct sreq *r);

/* The router queue.  push: 0, or DIAG_ENOMEM; full: queue_limit reached.
 * Without a team cap it is one FIFO.  With team_max_inflight, each team
 * (sim_call.team) has its FIFO and a count of its calls handed to replicas
 * and not finished (router_sent .. router_done); a team at its cap holds
 * its calls back, and front/pop take the head of the next team in turn
 * (round robin from the team after the last one served) that has calls
 * waiting and room under its cap, NULL when none has: llm-d's flow
 * control, fairness across tenants with a concurrency limit per tenant.
 * front and pop cost O(ROUTER_MAX_TEAMS), push O(1).
 * bypass: whether r may skip the queue (no call waits that could go:
 * without teams, none waits; with them, none whose team is under its cap,
 * and r's own team is under it).  take_any: pop whatever waits, caps
 * aside (for freeing); each: every waiting call, in no promised order. */
bool router_queue_full(const struct router *rt);
bool router_queue_bypass(const struct router *rt, const struct sreq *r);
int router_queue_push(struct router *rt, struct sreq *r);
struct sreq *router_queue_front(const struct router *rt);
void router_queue_pop(struct router *rt);
struct sreq *router_queue_take_any(struct router *rt);
void router_queue_each(const struct router *rt, void (*fn)(void *ctx, const struct sreq *r),
		       void *ctx);

#endif
