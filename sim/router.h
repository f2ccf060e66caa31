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
 *                     such detour is an affinity fallback);
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
 * Pools (sim/sim.h): a replica is eligible for a call only if its pool can
 * serve the call (the call's pools_ok), and session_affinity's default
 * saturation is each replica's own max_num_seqs.  The policies compare raw
 * outstanding counts across pools, as llm-d's queue scorer and SGLang's
 * router do: a faster pool finishes its calls sooner and so holds fewer,
 * and takes more of the new ones without the router knowing its speed.
 *
 * When no replica is eligible, or calls are already waiting (first come,
 * first served), a call waits in the router's queue; with `queue_limit`
 * calls already waiting (0 = no limit) it is refused instead.  When a call
 * finishes, the head of the queue goes to whichever replica the policy then
 * picks.  With the defaults (round_robin, no limits) and one replica, the
 * router never queues and every call goes to replica 0 at once.
 *
 * Cost: round_robin, power_of_two and the queue are O(1) per call;
 * least_* O(replicas); session_affinity O(log(ring)) plus the walk past
 * saturated owners; prefix_aware weighted O(replicas x prompt blocks
 * matched).  prefix_aware cache_aware reads a replica's table past one probe
 * only if that replica could tie or beat the longest prefix found so far
 * (its block at that depth is present), so a call typically costs
 * O(replicas + the longest prefix + the shared prefix re-read by the
 * replicas that also hold it); O(replicas x prompt blocks) at worst.
 */
#ifndef SIM_ROUTER_H
#define SIM_ROUTER_H

#include "base/diag.h"

#include <stdbool.h>
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
	ROUTER_N_POLICIES,
};

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
	enum router_prefix_scorer prefix_scorer;
	int64_t prefix_load_cap;      /* prefix_aware: load difference, outstanding calls */
	double cache_threshold;       /* cache_aware: share of the prompt's blocks */
	double balance_rel_threshold; /* cache_aware: max / min load */
	double prefix_weight;         /* weighted */
	double load_weight;           /* weighted */
	uint64_t seed;                /* power_of_two's random stream */
};

/* The defaults above, round_robin, no limits, seed 1. */
void router_config_default(struct router_config *c);

/* "round_robin", ... (static); NULL for an out-of-range value. */
const char *router_policy_name(enum router_policy p);

/* Parse a policy name; false if it is none of them. */
bool router_policy_parse(const char *s, enum router_policy *out);

/* "round_robin, least_requests, ...": every name, for messages. */
const char *router_policy_names(void);

/* The same for the prefix-aware scorers: "cache_aware", "weighted". */
const char *router_scorer_name(enum router_prefix_scorer s);
bool router_scorer_parse(const char *s, enum router_prefix_scorer *out);

/* What the router did over a run. */
struct router_stats {
	int64_t routed;              /* calls handed to a replica */
	int64_t queued;              /* calls that waited at the router first */
	int64_t refused;             /* calls refused: the router queue was full */
	int64_t affinity_fallbacks;  /* session_affinity calls sent off their owner */
	int64_t load_capped;         /* prefix_aware calls whose best-cached
					replica was passed over for its load
					(imbalance or the load cap) */
	int64_t prefix_matched;      /* prefix_aware cache_aware calls sent to
					the replica with their longest prefix,
					above cache_threshold */
	int64_t queue_peak;          /* longest router queue */
	int64_t wait_ns_sum;         /* time the queued calls waited, summed */
	int64_t wait_ns_max;
};

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
	uint64_t draws;              /* power_of_two draws so far */
	/* the pick in progress (router_pick): the replicas and the pools that
	 * can serve the call */
	const struct replica *cur_reps;
	uint64_t cur_pools;
	struct sreq **q;             /* waiting calls, ring buffer */
	int64_t q_head, q_len, q_cap;
	struct router_stats stats;
};

/* n replicas of max_num_seqs slots each.  0, DIAG_EINPUT for a bad config,
 * or DIAG_ENOMEM. */
int router_init(struct router *rt, const struct router_config *cfg, int32_t n,
		int32_t max_num_seqs, struct diag *d);
/* Frees the router's arrays, not the calls still queued (the caller owns them). */
void router_release(struct router *rt);

/* The replica the policy picks for r now, or -1 if none is eligible.
 * `reps` are the n replicas (prefix_aware reads their prefix tables and
 * waiting queues).  Updates the policy's own state (turn, draws, fallback
 * counters) as if r were sent. */
int32_t router_pick(struct router *rt, const struct sreq *r, const struct replica *reps);

/* Replica i may (up) or may not take new calls. */
void router_set_up(struct router *rt, int32_t i, bool up);

/* Account r as handed to replica i / finished on replica i. */
void router_sent(struct router *rt, int32_t i, const struct sreq *r);
void router_done(struct router *rt, int32_t i, const struct sreq *r);

/* The router queue.  push: 0, or DIAG_ENOMEM; full: queue_limit reached. */
bool router_queue_full(const struct router *rt);
int router_queue_push(struct router *rt, struct sreq *r);
struct sreq *router_queue_front(const struct router *rt);
void router_queue_pop(struct router *rt);

#endif
