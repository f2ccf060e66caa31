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
 */
#ifndef REPORTS_CLUSTER_H
#define REPORTS_CLUSTER_H

#include "sim/results.h"

#include <stdint.h>

struct cluster;

struct cluster_replica {
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
	int64_t routed;                 /* calls handed to a replica */
	int64_t queued;                 /* of those, calls that waited at the router */
	int64_t refused;                /* calls refused: router queue full */
	int64_t affinity_fallbacks;
	int64_t load_capped;
	int64_t queue_peak;
	double wait_mean_ms;            /* over the calls that waited */
	double wait_max_ms;
};

struct cluster_summary {
	int32_t replicas;
	int32_t gpus_per_replica;
	double gpu_hours_provisioned;
	double gpu_hours_busy;
	struct cluster_router router;
	const struct cluster_replica *per_replica; /* [replicas], owned by the struct cluster */
};

/* An aggregator over `replicas` replicas forwarding to `inner`; NULL when out
 * of memory. */
struct cluster *cluster_new(int32_t replicas, struct res_sink inner);
void cluster_free(struct cluster *c); /* accepts NULL */

/* A sink feeding c (and through it the inner sink); valid while c is. */
struct res_sink cluster_sink(struct cluster *c);

/* Fill *out (router left zero) for a run of duration_s seconds on replicas
 * of gpus_per_replica GPUs each.  out->per_replica stays valid until c is
 * freed.  Records naming a replica outside [0, replicas) are counted in
 * cluster_stray and left out. */
void cluster_summarize(struct cluster *c, double duration_s, int32_t gpus_per_replica,
		       struct cluster_summary *out);
int64_t cluster_stray(const struct cluster *c);

#endif
