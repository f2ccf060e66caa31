/* SPDX-License-Identifier: Apache-2.0
 * cluster: per-replica figures and GPU-hours of a run on several replicas.
 *
 * A struct cluster is a res_sink that passes every record on to another sink
 * (the run's struct metrics) and keeps, per replica, the calls it completed,
 * their prompt and cached tokens, their preemptions, and the time its steps
 * ran.  cluster_summarize turns them into plain figures; the router's own
 * counters come from the simulator and are copied in by the caller.
 *
 * GPU-hours: provisioned = replicas x GPUs per replica x the run's duration;
 * busy = GPUs per replica x the summed step time of every replica.  Both in
 * hours; the cost model prices them.  docs/metrics.md defines every key.
 *
 * Pools (cluster_set_pools): replicas of different shapes, numbered pool
 * after pool.  Each pool gets the per-replica figures summed over its
 * replicas, its p95 TTFT (from a log histogram: within 0.1%) and its own
 * GPU-hours at its GPUs per replica; the cluster's GPU-hours are then summed
 * replica by replica, each at its pool's GPU count, so the pools' add up to
 * them (to rounding).
 * Replicas that start, drain, fail or stop (sim/lifecycle.h) send replica
 * records; the aggregator keeps them as a timeline of how many replicas are
 * in each state, and provisioned GPU-hours become the integral over the
 * run's duration (first arrival to last completion, as metrics counts it) of
 * the billed replicas (up, starting, draining) x GPUs per replica.  The
 * same records give each replica's billed stretches (struct cost_stretch:
 * from the start of a cold start to the end of a drain, clipped to the
 * run), which the cost model bills in whole units of a billing granularity
 * with a minimum per stretch (docs/cost.md).
 */
#ifndef REPORTS_CLUSTER_H
#define REPORTS_CLUSTER_H

#include "models/cost.h"
#include "sim/results.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cluster;

struct cluster_replica {
	int64_t routed;                 /* calls the router handed to it (set by the caller) */
	int64_t requests;               /* completed on this replica */
	int64_t prompt_tokens;          /* of those requests */
	int64_t cached_prompt_tokens;
	double prefix_cache_hit_rate;   /* cached / prompt tokens, 0..1 */
	int64_t preemptions;
	double busy_s;                  /* summed step time */
	double busy_fraction;           /* busy_s / the run's duration */
};

/* Router figures, copied from the simulator by the caller. */
struct cluster_router {
	const char *policy;
	const char *prefix_scorer;      /* prefix_aware's scorer, else NULL */
	int64_t routed;                 /* calls handed to a replica */
	int64_t queued;                 /* of those, calls that waited at the router */
	int64_t refused;                /* calls refused: router queue full */
	int64_t affinity_fallbacks;
	int64_t load_capped;
	int64_t prefix_matched;
	int64_t queue_peak;
	double wait_mean_ms;            /* over the calls that waited */
	double wait_max_ms;
};

/* One pool: its shape (the caller's, to cluster_set_pools) and its figures. */
struct cluster_pool {
	/* the shape, given by the caller; strings borrowed (valid while the
	 * caller's are) */
	const char *name;
	const char *model_id;
	const char *hardware_id;
	const char *weight_format;
	const char *kv_dtype;
	const char *engine_profile;
	int32_t tp, pp, ep;
	int64_t kv_capacity_tokens;     /* per replica */
	int32_t max_num_seqs;
	int64_t max_model_len;
	int32_t first;                  /* its first replica */
	int32_t replicas;
	int32_t gpus_per_replica;
	/* the figures, filled by cluster_summarize */
	int64_t requests;               /* completed on its replicas */
	int64_t prompt_tokens;
	int64_t cached_prompt_tokens;
	double prefix_cache_hit_rate;
	int64_t preemptions;
	double busy_s;                  /* summed step time of its replicas */
	double busy_fraction;           /* busy_s / (replicas x duration) */
	double ttft_p95_ms;             /* of the calls it completed; -1 when the
					   histogram ran out of memory */
	double gpu_hours_provisioned;   /* replicas x GPUs x duration; with replicas
					   that come and go, GPUs x the time each
					   was billed within the run */
	double gpu_hours_busy;          /* GPUs x busy_s */
};


/* Replica lifecycle figures: the settings and the simulator's counters are
 * copied in by the caller; the timeline figures come from the records. */
struct cluster_elastic {
	bool on;                        /* print the section */
	double startup_s;               /* provisioning + weight load */
	double provision_s;
	double weight_load_s;
	bool autoscale;
	const char *metric;
	double target;
	int32_t min_replicas, max_replicas;
	double interval_s, cooldown_s;
	int64_t evaluations, scale_outs, scale_ins, starts;
	int32_t active_min, active_max; /* up + starting (autoscaler bounds) */
	bool faults;
	int64_t fault_count, faults_skipped, retries, retried_calls, fault_failed;
	double outage_s;                /* time with at least one replica down */
	int64_t calls_outage, good_outage;   /* arrived during an outage or retried */
	int64_t calls_outside, good_outside;
	double slo_attainment_outage, slo_attainment_outside;
	/* from the timeline, over the run's duration */
	double replicas_billed_mean;
	int32_t replicas_up_min, replicas_up_max;
};

/* One point of the replica timeline: from t_ns on, n[state] replicas are in
 * each state (enum rep_life), until the next point. */
struct cluster_point {
	int64_t t_ns;
	int32_t n[REP_N_LIFE];
};

struct cluster_summary {
	int32_t replicas;
	int32_t gpus_per_replica;       /* with pools: 0 unless every pool has the same */
	double gpu_hours_provisioned;
	double gpu_hours_busy;
	struct cluster_router router;
	struct cluster_elastic elastic;
	const struct cluster_replica *per_replica; /* [replicas], owned by the struct cluster */
	int32_t n_pools;                /* 0: one shape */
	const struct cluster_pool *pools; /* [n_pools], owned by the struct cluster */
	/* every stretch a replica was billed (up, starting or draining) within
	 * the run, replica by replica, in time order; without replica records
	 * one per replica over the whole run.  Owned by the struct cluster,
	 * valid until the next cluster_summarize or cluster_free; NULL (and 0)
	 * when they could not be kept (out of memory) */
	const struct cost_stretch *replica_up;
	size_t replica_up_count;
};

/* An aggregator over `replicas` replicas forwarding to `inner`; NULL when out
 * of memory. */
struct cluster *cluster_new(int32_t replicas, struct res_sink inner);
void cluster_free(struct cluster *c); /* accepts NULL */

/* A sink feeding c (and through it the inner sink); valid while c is. */
struct res_sink cluster_sink(struct cluster *c);

/* Split c's replicas into n_pools pools: pools[p].first, .replicas and
 * .gpus_per_replica (and .name) say which, consecutive and covering every
 * replica; the figures are filled by cluster_summarize.  Before any record.
 * 0, DIAG_EINPUT when the pools do not tile the replicas, DIAG_ENOMEM. */
int cluster_set_pools(struct cluster *c, const struct cluster_pool *pools, int32_t n_pools);

/* Record that the router handed `calls` calls to replica i (ignored out of
 * range); shows in per_replica[i].routed. */
void cluster_set_routed(struct cluster *c, int32_t i, int64_t calls);

/* Fill *out (router left zero) for a run of duration_s seconds on replicas
 * of gpus_per_replica GPUs each.  out->per_replica stays valid until c is
 * freed.  Records naming a replica outside [0, replicas) are counted in
 * cluster_stray and left out. */
void cluster_summarize(struct cluster *c, double duration_s, int32_t gpus_per_replica,
		       struct cluster_summary *out);
int64_t cluster_stray(const struct cluster *c);

/* The replica timeline so far: *n points in time order, the first at time 0
 * (every replica up unless records said otherwise).  Valid until the next
 * record.  Without replica records there is one point. */
const struct cluster_point *cluster_timeline(const struct cluster *c, size_t *n);

/* Seconds x replicas billed (up, starting or draining) over [t0_ns, t1_ns),
 * from the timeline. */
double cluster_billed_replica_s(const struct cluster *c, int64_t t0_ns, int64_t t1_ns);

#endif
