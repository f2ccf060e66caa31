/* SPDX-License-Identifier: Apache-2.0
 * deploy: a loaded scenario compiled into a runnable deployment, the one
 * step from a scenario to the simulator that every command takes.
 *
 * scenario_load (replay/scenario.h) reads and checks keys; deploy_build
 * decides what the scenario leaves to the catalogue and builds what the
 * simulator runs:
 *   - per pool (one pool for a scenario without `pools`): the shape
 *     resolved (engine profile, TP/PP, the engine's defaults), its
 *     performance model and measured profile, its engine settings with the
 *     KV capacity of the memory model (a speculative drafter's weights
 *     included), the catalogue's pre-flight checks, and the weight bytes a
 *     replica loads at start-up;
 *   - the router, the KV tiers, the replica lifecycle (start-up, autoscaler,
 *     faults) and the API backends with their price rows.
 * deploy_scan checks a trace against it before a replay (the pre-flight
 * pass), deploy_capacity gives the metrics their denominators, and
 * deploy_run replays a trace on it.  No command assembles any of these
 * itself: a scenario feature reaches every command the same way, or
 * deploy_check refuses it for that command, by key, before any work, from
 * the one table of what each command can vary (deploy.c, COMMANDS).
 *
 * A deployment borrows the scenario and the catalogue it was built from;
 * both must outlive it.  It is read-only once built, so replays on several
 * threads may share one.
 */
#ifndef REPLAY_DEPLOY_H
#define REPLAY_DEPLOY_H

#include "base/diag.h"
#include "base/warn.h"
#include "models/perf_model.h"
#include "models/startup.h"
#include "replay/replay.h"
#include "replay/scenario.h"
#include "sim/backend.h"
#include "sim/lifecycle.h"
#include "sim/sim.h"

#include <stdbool.h>
#include <stdint.h>

struct apilat;
struct prices;
struct perf_profile;
struct engine_table;

/* The scenario features whose presence a command must honour or refuse. */
enum deploy_feature {
	DEPLOY_POOLS = 0,        /* pools */
	DEPLOY_BACKENDS,         /* backends (and router.spill_to, ...) */
	DEPLOY_TIERS,            /* kv_tiers.host_gb, kv_tiers.disk_gb */
	DEPLOY_AUTOSCALE,        /* autoscale.enabled */
	DEPLOY_FAULTS,           /* faults.list, faults.mtbf_h */
	DEPLOY_SPECULATIVE,      /* speculative.method */
	DEPLOY_STARTUP,          /* startup.* */
	DEPLOY_DISAGG,           /* disaggregation.* */
	DEPLOY_PRIORITY,         /* scheduling.policy priority */
	DEPLOY_TEAM_CAP,         /* router.team_max_inflight */
	DEPLOY_N_FEATURES
};

/* The commands that build deployments. */
enum deploy_command {
	DEPLOY_CMD_REPLAY = 0,
	DEPLOY_CMD_SIZE,
	DEPLOY_CMD_COMPARE,
	DEPLOY_CMD_WHATIF,       /* the two replays */
	DEPLOY_CMD_WHATIF_SIZED, /* whatif --slo: the replays and their sizing */
	DEPLOY_CMD_SWEEP,
	DEPLOY_N_COMMANDS
};

/* "pools", "backends", ... (static): the feature's scenario key. */
const char *deploy_feature_key(enum deploy_feature f);

/* "replay", "size", ... (static). */
const char *deploy_command_name(enum deploy_command c);

/* Bit f set: sc uses feature f. */
uint32_t deploy_features(const struct scenario *sc);

/* Whether command c takes feature f (the table in deploy.c). */
bool deploy_takes(enum deploy_command c, enum deploy_feature f);

/* 0 when command c takes every feature sc uses; else DIAG_EINPUT naming
 * sc's file, the first refused feature's key, and why c refuses it. */
int deploy_check(const struct scenario *sc, enum deploy_command c, struct diag *d);

/* What scenario_load leaves to the hardware and the engine, decided in
 * place: the engine profile (the hardware's default when unset), TP and PP
 * (a multi-GPU system's devices when both are unset: TP up to 8 within a
 * node, the rest as pipeline stages; one of them set: the other fills the
 * system), max_num_seqs, max_num_batched_tokens and reserve_full_prompt
 * (the engine's).  et NULL: the catalogue's engine table.  0 or
 * DIAG_EINPUT (unknown hardware or engine). */
int deploy_resolve(struct scenario *sc, const struct catalog *cat, const struct engine_table *et,
		   struct diag *d);

/* The engine settings and performance model of a resolved one-shape
 * scenario: KV capacity and max_model_len from the memory model and the
 * catalogue where the scenario leaves them out, speculative decoding's
 * tokens per verify step, the measured step profile when it names one
 * (*prof, freed by the caller with perf_profile_free).  0 or a DIAG code. */
int deploy_engine(const struct scenario *sc, const struct catalog *cat, struct perf_model *pm,
		  struct perf_profile **prof, struct engine_config *cfg, struct diag *d);

/* The speculative-decoding options of sc (out->draft_model points into
 * sc); method SPEC_OFF when sc leaves it off. */
void deploy_spec_opts(const struct scenario *sc, struct spec_opts *out);

/* One pool of a deployment (the one shape of a scenario without pools). */
struct deploy_pool {
	struct scenario sc;           /* the pool's view, resolved */
	struct perf_model pm;
	struct perf_profile *prof;    /* measured step profile or NULL; owned */
	struct engine_config cfg;
	double weight_bytes;          /* a replica loads at start-up; 0 unknown */
	struct startup_parts startup; /* a replica's start-up (models/startup.h) */
};

/* The API backends of a scenario, kept apart for their prices. */
struct deploy_backends {
	struct hybrid_config hybrid;  /* n = 0: none */
	struct scenario_backend_price price[SCENARIO_MAX_BACKENDS];
};

struct deployment {
	const struct scenario *sc;    /* as loaded; borrowed */
	const struct catalog *cat;    /* borrowed */
	bool pooled;                  /* sc lists pools: pool[i] is pools[i] */
	int32_t n_pools;              /* >= 1 */
	struct deploy_pool *pool;     /* [n_pools] */
	struct sim_pool *sim_pools;   /* pooled: [n_pools], the simulator's */
	int32_t replicas;             /* over every pool */
	struct sim_tiers_config tiers;/* n = 0: none */
	double tier_host_gbs;         /* the host tier's load bandwidth used */
	struct elastic_config elastic;/* its seed is each run's */
	bool elastic_on;
	bool on_demand;               /* some pool loads its model on demand
					 (engine_config.load_on_demand) */
	struct deploy_backends backends;
	struct prices *own_prices;    /* owned, when deploy_build loaded them */
	bool pd_on;                   /* prefill/decode disaggregation */
	struct sim_pd_config pd;      /* its pools by index, link and KV size */
};

/* The API backends and routing rules of sc as the simulator takes them
 * (sim/backend.h): each backend's TTFT, output speed and cache rules from
 * the latency catalogue (models/apilat.h; its `latency` id, else its
 * `price` id) unless the scenario gives them, and its price rows from pr
 * (borrowed: out->price points into it).  0, or DIAG_EINPUT naming the
 * backend and what was expected. */
int deploy_backends(const struct scenario *sc, const struct prices *pr, struct deploy_backends *out,
		    struct diag *d);

/* What deploy_build may be given. */
struct deploy_opts {
	const struct prices *prices;  /* the backends' price rows; NULL: the
					 scenario's price file, or the built-in */
	bool local_only;              /* leave the API backends out (compare's
					 rows of the self-hosted deployment
					 alone, beside its box + API rows) */
	bool *unfit;                  /* non-NULL: set on an error when it is
					 the shape's own: the memory model leaves
					 no room (weights, KV cache) or the engine
					 cannot serve it on the hardware
					 (pre-flight).  size prunes such a shape;
					 for every other command it is an input
					 error like any other. */
};

/* Build dp from sc (loaded; not modified) and cat.  Warnings of the
 * catalogue's pre-flight go to w (may be NULL: dropped).  0 or a DIAG code
 * with d filled; dp is released in every case but 0. */
int deploy_build(struct deployment *dp, const struct scenario *sc, const struct catalog *cat,
		 const struct deploy_opts *o, struct warn_list *w, struct diag *d);

void deploy_release(struct deployment *dp);

/* The pre-flight pass over the trace o names (as recorded; format and
 * skip_bad from o): calls no pool can serve, and per pool the calls only
 * others can, as warnings into w; *calls gets the calls read.  A trace none
 * of whose calls can be served is DIAG_EINPUT.  O(trace). */
int deploy_scan(const struct deployment *dp, const struct replay_opts *o, struct warn_list *w,
		int64_t *calls, struct diag *d);

/* Replicas a run may hold failed (deploy_vary.failed_replicas). */
#define DEPLOY_MAX_FAILED 8

/* What a search or a what-if varies in a deployment between runs. */
struct deploy_vary {
	int32_t replicas;             /* > 0: replicas of the one shape instead
					 of the scenario's */
	int32_t pool_replicas[SCENARIO_MAX_POOLS]; /* with pools: [i] > 0,
					 pool i's replicas instead of the
					 scenario's (size's prefill:decode
					 search); 0: the scenario's */
	int32_t failed_replicas;      /* N+F: replicas 0..F-1 down from the start
					 to the end of the run (0..DEPLOY_MAX_FAILED;
					 not beside the scenario's lifecycle) */
	bool compact;                 /* the harness compacts calls past the
					 limit whatever replay.context_policy says
					 (the compact-at what-if, both sides) */
	bool as_recorded;             /* every call as recorded, no context
					 limit (replay_opts.as_recorded) */
};

/* Replay on dp: o gives the trace side (trace, format, skip_bad, seed,
 * scale, xform, compact_at, early, series, routed); the deployment side
 * (replicas, pools, router, tiers, lifecycle, backends, context policy) is
 * dp's, the router and the lifecycle seeded with o->seed.  v may be NULL.
 * As replay_run. */
int deploy_run(const struct deployment *dp, const struct replay_opts *o,
	       const struct deploy_vary *v, struct res_sink sink, struct replay_stats *st,
	       struct diag *d);

/* Replicas a run of dp under v has (v may be NULL). */
int32_t deploy_replicas(const struct deployment *dp, const struct deploy_vary *v);

/* Replicas pool i of dp has in a run under v (v may be NULL). */
int32_t deploy_pool_replicas(const struct deployment *dp, const struct deploy_vary *v, int32_t i);

/* GPUs of a run of dp under v (may be NULL): every pool's replicas times
 * its tensor- and pipeline-parallel sizes. */
int32_t deploy_gpus(const struct deployment *dp, const struct deploy_vary *v);

/* One replica's capacity for the metrics of a run under v (may be NULL):
 * with pools, the mean over every replica (so fractions of peak over
 * replicas x duration stay exact); no compute peak if any pool lacks one. */
void deploy_capacity(const struct deployment *dp, const struct deploy_vary *v,
		     struct res_capacity *cap);

#endif
