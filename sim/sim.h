/* SPDX-License-Identifier: Apache-2.0
 * sim: the discrete-event simulation of a serving deployment.
 *
 * A struct sim owns the event queue, the replicas (one vLLM-style engine
 * each: sim/replica.h) and the requests in flight.  The driver above it
 * (replay/) submits calls with sim_submit and pumps events with sim_step,
 * interleaving its own arrivals by comparing sim_next_time with the time of
 * the next call it could read; it learns of each finished call through the
 * done callback, which may submit further calls (closed loop).
 *
 * Time is int64 nanoseconds.  Events at one instant run in the order
 * arrival < step end < schedule, so a call issued at the instant a step ends
 * (a zero-gap follow-up, or an arrival) is seen by the next batch.
 *
 * Calls reach the replicas through a router (sim/router.h): with one replica
 * and the default router every call goes to replica 0 the instant it
 * arrives, exactly as a lone engine would take it.
 *
 * Pools.  The replicas may come in pools (sim_init_pools), each with its own
 * engine settings, step-time model and KV capacity: replicas are numbered
 * pool after pool, and the router sees them all.  Pools share the KV block
 * size, since a call carries one chain of block hashes.  A call that one
 * pool cannot serve (past its max_model_len, more KV blocks than its cache
 * holds) is routed only to the pools that can; it is rejected on arrival
 * only when no pool can, with pools[0]'s reason.
 * Replicas may start, drain, fail and stop (sim/lifecycle.h, set with
 * sim_set_elastic); those events are background work: once no call is left
 * in the simulator, sim_next_time no longer shows them and sim_step does not
 * run them, so a run ends with its last call.
 *
 * All state hangs off the struct; nothing is global.  Same inputs, same
 * event order, same results.
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include "base/diag.h"
#include "base/outkind.h"
#include "models/kvlink.h"
#include "models/memory.h"
#include "models/perf.h"
#include "sim/backend.h"
#include "sim/evq.h"
#include "sim/lifecycle.h"
#include "sim/results.h"
#include "sim/router.h"

#include <stdbool.h>
#include <stdint.h>

struct replica;
struct kvtier;

/* Engine settings with vLLM's names and meanings. */
struct engine_config {
	int32_t max_num_seqs;
	int64_t max_num_batched_tokens;
	int64_t block_size;
	double gpu_memory_utilization;  /* used by the memory model, not here */
	bool enable_chunked_prefill;
	bool enable_prefix_caching;
	int64_t kv_cache_tokens;        /* KV capacity in tokens per replica */
	int64_t max_model_len;          /* longest prompt + output accepted */
	/* hybrid attention (models/memory.h, sim_engine_hybrid) */
	int64_t seq_state_tokens;       /* linear-attention state each running
					   sequence holds, in KV tokens of this
					   cache */
	int64_t sliding_window_tokens;  /* the sliding-window layers' window;
					   0: no sliding-window KV-cache group */
	int64_t window_group_blocks;    /* blocks of this cache one block of
					   positions costs in the sliding-window
					   groups (their count over the
					   full-attention groups', rounded up) */
	bool reserve_full_prompt;       /* admit a waiting request only if blocks for
					   its whole current sequence are free (vLLM
					   scheduler_reserve_full_isl); else for its
					   first chunk */
	/* speculative decoding (models/spec.h): 0 = off.  Each decode step
	 * verifies spec_k + 1 positions of every decoding sequence, which
	 * then advances by the expected tokens of its call's output kind. */
	int32_t spec_k;
	double spec_tokens[OUT_KINDS];  /* expected tokens per verify step,
					   >= 1, by enum out_kind */
	/* Models loaded on demand (Ollama): a replica's model loads when a
	 * call reaches it unloaded (model_load_ns, the call waiting) and
	 * unloads, its KV cache with it, once the replica has held no call for
	 * keep_alive_ns (< 0: never).  A replica up at time 0 or after a
	 * start-up has no model loaded.  Off: loaded at start, kept. */
	bool load_on_demand;
	int64_t keep_alive_ns;
	int64_t model_load_ns;
	int32_t spec_disable_batch;     /* > 0: a step that starts with this many
					   running sequences or more decodes them
					   plainly (vLLM V0's
					   speculative_disable_by_batch_size); 0 =
					   never */
	/* KV retention across tool pauses (sim/kvcache.h): a call that
	 * completes and whose session resumes after a tool call
	 * (sim_call.resumes) releases its cached blocks as retained for
	 * kv_retain_ttl_ns, so eviction passes over them while anything else
	 * is free; at most kv_retain_max_fraction of the cache stays retained
	 * (the oldest give way first).  0: off, plain LRU.  A replica with
	 * retention keeps its cache block by block (not in runs). */
	int64_t kv_retain_ttl_ns;
	double kv_retain_max_fraction;  /* (0, 1] when retention is on */
	/* Scheduling policy (vLLM --scheduling-policy): false = fcfs; true =
	 * priority: the waiting queue is ordered by (sim_call.prio, time the
	 * replica received the call), a preempted request goes back to its
	 * place in that order (not to the front), and a running request that
	 * lacks KV blocks preempts the running request with the largest
	 * (prio, received time), itself included (sim/replica.h). */
	bool sched_priority;
};

/* Step-time source.  Production wires models/perf.h; tests inject their own.
 * `work` (may be NULL) gives the FLOPs and bytes of one step (k == 0) or of
 * a decode run of k >= 1 steps from b0, for the achieved fractions of peak. */
struct sim_perf {
	const void *ctx;
	double (*step_ns)(const void *ctx, const struct perf_batch *b);
	double (*decode_run_ns)(const void *ctx, const struct perf_batch *b0, int64_t k);
	void (*work)(const void *ctx, const struct perf_batch *b0, int64_t k, double *flops,
		     double *bytes);
};

/* Adapter: a sim_perf that calls perf_step_ns/perf_decode_run_ns on pm, and
 * perf_step_breakdown for the work (a decode run's as k times the mean of its
 * first and last step: exact while FLOPs and bytes grow linearly with the
 * context, as they do outside sliding-window layers). */
struct sim_perf sim_perf_from_model(const struct perf_model *pm);

/* One LLM call as the driver hands it in.  `block_hashes` holds the chained
 * hashes of every full block of prompt + output (traces/prompt.h).  The
 * simulator copies what it needs before sim_submit returns, unless
 * `borrow_hashes` is set: then it reads the caller's array in place, which
 * must stay unchanged until the call's done callback runs (the simulator
 * never reads it after), so that submitting a call costs the same at any
 * prompt length. */
struct sim_call {
	uint64_t session;
	uint64_t parent;         /* the parent session of a sub-agent; 0: none */
	uint64_t task;
	int64_t seq;
	int64_t prompt_tokens;
	int64_t output_tokens;   /* >= 1 */
	const uint64_t *block_hashes;
	int64_t n_hashes;
	int32_t kind;            /* enum out_kind (OUT_KIND_UNKNOWN = 0) */
	bool borrow_hashes;      /* see above */
	bool resumes;            /* a tool call follows and the session comes back
				    (not its last call): KV retention keeps
				    its blocks (engine_config.kv_retain_ttl_ns) */
	int32_t prio;            /* priority class 0..SIM_MAX_PRIO (0 first
				    served): read by engine_config.sched_priority */
	int32_t team;            /* team 0..SIM_MAX_TEAMS-1 (0 also for calls
				    without one): read by the router's per-team
				    cap (router_config.team_max_inflight) */
	void *user;              /* handed back in the done callback */
};

/* One pool of identical replicas: their engine settings and step-time
 * model.  sim_init_pools copies it and fills `first`. */
struct sim_pool {
	struct engine_config cfg;
	struct sim_perf perf;
	int32_t replicas;        /* >= 1 */
	int32_t first;           /* index of its first replica (output) */
};

/* At most this many pools (a call keeps a bit per pool that can serve it). */
#define SIM_MAX_POOLS 64
/* Priority classes are 0..SIM_MAX_PRIO; teams 0..SIM_MAX_TEAMS-1. */
#define SIM_MAX_PRIO 15
#define SIM_MAX_TEAMS ROUTER_MAX_TEAMS

/* Called once per call when it completes or is rejected; may call sim_submit. */
typedef void (*sim_done_fn)(void *ctx, const struct res_request *r, void *user);

struct sim_stats {
	int64_t events;          /* events dispatched */
	int64_t steps;           /* engine steps simulated */
	int64_t step_events;     /* step-end events (a decode run is one) */
	int64_t submitted, completed, rejected;
	int64_t preemptions;
	int64_t kv_evictions;    /* cached blocks evicted for reuse (sim_get_stats) */
	/* KV retention (engine_config.kv_retain_ttl_ns), over all replicas
	 * (sim_get_stats) */
	int64_t retain_peak_blocks;  /* most blocks one replica held retained */
	double retain_peak_share;    /* the largest such share of a replica's cache */
	double retain_block_ns;      /* retained blocks integrated over time */
	double retain_mean_blocks;   /* that over the simulated time so far */
	int64_t retain_hit_blocks;   /* retained blocks a prefix hit took */
	int64_t retain_forced;       /* retained blocks evicted: nothing else free */
	int64_t retain_capped;       /* expired early by kv_retain_max_fraction */
	int64_t retain_avoided;      /* evictions that spared an older retained block */
	int64_t model_loads;     /* models loaded on demand (load_on_demand) */
	int64_t model_reloads;   /* of those, loads after an unload */
	int64_t model_load_ns;   /* their time, summed */
	int64_t truncated_runs;  /* decode runs cut short by an arrival */
	int64_t head_cut_runs;   /* decode runs shortened so the blocked waiting
				    head's cached prefix stays as it was */
	int64_t tier_loaded_blocks; /* blocks loaded from lower tiers */
	double tier_load_ns;     /* time steps spent loading them */
	/* write-through (SIM_TIER_WRITE_THROUGH) */
	int64_t tier_stored_blocks; /* blocks stored to the host tier as computed */
	int64_t tier_stored_chunks; /* chunks those blocks belong to, per step */
	double tier_stored_bytes;   /* their bytes over each replica's GPUs */
	double tier_store_ns;    /* host-link time of those stores */
	double tier_store_stall_ns; /* of that, time steps waited (sync stores) */
	double tier_load_wait_ns;   /* time loads waited behind async stores */
	/* speculative decoding, by enum out_kind of the call */
	int64_t spec_seq_steps[OUT_KINDS]; /* verify steps, one per sequence */
	int64_t spec_tokens[OUT_KINDS];    /* tokens they yielded */
	double spec_run_ns;      /* decode runs with verify steps: their time */
	double spec_plain_ns;    /* the same runs' time without speculation */
};

/* Lower KV-cache tiers (kv_tiers): tier[0] the host, tier[1] (when n is 2)
 * a disk or remote store below it; shared_by replicas in a row (one node's)
 * share one set.  Off (n = 0) by default.
 *
 * How blocks reach the host tier (mode):
 *   SIM_TIER_EVICT          a GPU cache demotes each block it evicts, at no
 *                           cost (the zero value);
 *   SIM_TIER_WRITE_THROUGH  each step's prefill stores the prompt blocks it
 *                           completes, chunk_blocks at a time (LMCache's
 *                           store on prefill; vLLM's OffloadingConnector
 *                           likewise stores blocks once computed), over the
 *                           host link at tier[0].ns_per_block a block.  A
 *                           block stays in the GPU cache too, and the GPU's
 *                           evictions copy nothing.  async_store: the copy
 *                           overlaps compute and holds the replica's link,
 *                           so a later load waits for it; otherwise the step
 *                           waits for its stores. */
enum sim_tier_mode { SIM_TIER_EVICT, SIM_TIER_WRITE_THROUGH };

struct sim_tier_config {
	int64_t blocks;          /* capacity, in blocks of this cache */
	double ns_per_block;     /* time to load one block into a replica's GPUs */
};
struct sim_tiers_config {
	int32_t n;               /* 0..RES_MAX_TIERS */
	struct sim_tier_config tier[RES_MAX_TIERS];
	int32_t shared_by;       /* >= 1 */
	enum sim_tier_mode mode;
	int64_t chunk_blocks;    /* write-through: blocks a stored chunk spans (>= 1) */
	bool save_unfull_chunk;  /* write-through: a prompt's last, partial chunk
				    is stored too */
	bool async_store;        /* write-through: stores overlap compute */
	double bytes_per_block;  /* a block over a replica's GPUs (for reports) */
};

/* Prefill/decode disaggregation (sim_set_pd; docs/disaggregation.md).
 * Calls go to the decode pool's replicas; the router picks a decode
 * replica first, and a call is sent to the prefill pool when `always`, or
 * when more than non_cached_tokens of its prompt are missing from that
 * replica's prefix cache (llm-d's prefix-based P/D decider).  There it runs
 * its prefill and produces its first token; its prompt's KV then crosses
 * `link` to the decode replica (only the blocks that replica lacks; one
 * piece per block, or one when `buffered`; with `layerwise` only what
 * outlasts the prefill is waited for: models/kvlink.h), which takes the
 * blocks on admission without computing them and generates the rest.  A
 * call below the threshold never visits the prefill pool. */
struct sim_pd_config {
	int32_t prefill_pool, decode_pool;
	bool always;
	int64_t non_cached_tokens;
	double kv_bytes_per_token;     /* over a replica's GPUs */
	struct kv_link link;
	int32_t gpus;                  /* GPUs sending at once (the smaller TP) */
	int32_t layers;
	bool layerwise, buffered;
};

struct sim_pd_stats {
	int64_t remote;                /* calls prefilled on the prefill pool */
	int64_t local;                 /* calls the decider kept on a decode replica */
	int64_t transfers;
	int64_t blocks;                /* KV blocks sent */
	double bytes;
	double whole_ns;               /* transfer time, summed */
	double exposed_ns;             /* of it, what the calls waited for */
	double max_exposed_ns;
};

/* Time-series sampling (sim_set_series); off while interval_ns is 0. */
struct sim_series {
	int64_t interval_ns;
	int64_t next_ns;           /* end of the open interval */
	int64_t arrivals, completions, failed;
	struct res_sample_replica *rep; /* per replica: the open interval's counters */
};

struct sim {
	struct engine_config cfg;  /* pools[0]'s (block_size is every pool's) */
	struct sim_pool *pools;    /* [n_pools]; each replica points into it */
	int32_t n_pools;
	struct res_sink sink;
	sim_done_fn done;
	void *done_ctx;
	struct evq q;
	int64_t now_ns;
	struct replica *replicas;
	int32_t n_replicas;
	struct router router;
	struct kvtier *tiers;      /* n_tier_sets x tiers.n, NULL when off */
	int32_t n_tier_sets;
	struct sim_tiers_config tiers_cfg;
	struct sim_stats stats;
	struct sim_series series;
	int64_t tokens_scheduled;  /* sum of batch tokens given to the perf model */
	int64_t tokens_applied;    /* sum of tokens credited to requests */
	void *free_reqs;           /* pool of finished request structs */
	int64_t live_reqs;
	int err;                   /* first error inside a callback path */
	const char *err_limit;     /* with err DIAG_EINPUT: the limit the run
				      passed and what to change (static) */
	/* lifecycle (sim/lifecycle.h); all zero unless sim_set_elastic */
	bool elastic;
	struct elastic_config el;
	struct fault_spec *faults;   /* owned copy of el.faults */
	int32_t n_life[REP_N_LIFE];  /* replicas in each state */
	int64_t n_background;        /* background events queued */
	bool as_parked;              /* the autoscaler sleeps until a call */
	int64_t as_last_action_ns;
	struct autoscale_state as;   /* hpa and keda policies */
	int64_t outage_since_ns;     /* when the first of the down replicas failed */
	uint64_t fault_draws;        /* fault-rate random stream position */
	struct sreq **scratch;       /* a failed replica's calls */
	struct elastic_stats el_stats;
	bool single_step;          /* verification aid: never coalesce decode runs */
	/* API backends and the rules that use them (sim/backend.h); n_backends
	 * is 0 unless sim_set_hybrid gave some */
	struct hybrid_config hyb;
	struct backend *backends;
	int32_t n_backends;
	int64_t *hyb_scratch;        /* spill prediction: max_num_seqs entries */
	/* faults.detection probe (sim/lifecycle.h): per replica, when the
	 * probes notice its hang (0 = not hung) and the hang's number */
	int64_t *hang_detect_ns;
	uint64_t *hang_gen;
	/* prefill/decode disaggregation (sim_set_pd) */
	bool pd_on;
	struct sim_pd_config pd;
	struct sim_pd_stats pd_stats;
};

/* Disaggregate prefill and decode (see struct sim_pd_config) between two
 * pools of a simulator made by sim_init_pools, before any call.  The
 * pools must keep prefix caching on and hold no sliding-window groups;
 * the replicas keep their caches block by block.  0 or DIAG_EINPUT. */
int sim_set_pd(struct sim *s, const struct sim_pd_config *c, struct diag *d);

/* kv_blocks: blocks per replica (cfg.kv_cache_tokens / block_size).  One
 * pool of n_replicas replicas. */
int sim_init(struct sim *s, const struct engine_config *cfg, int32_t n_replicas,
	     struct sim_perf perf, struct res_sink sink, sim_done_fn done, void *done_ctx,
	     struct diag *d);

/* The same over pools[0..n_pools) (1..SIM_MAX_POOLS), copied.  DIAG_EINPUT
 * when their block sizes differ or a setting is out of range.  After a
 * failure, sim_release still frees what was built. */
int sim_init_pools(struct sim *s, const struct sim_pool *pools, int32_t n_pools,
		   struct res_sink sink, sim_done_fn done, void *done_ctx, struct diag *d);
void sim_release(struct sim *s);

/* Blocks a running sequence holds besides its blocks of positions: the
 * linear-attention state. */
int64_t sim_state_blocks(const struct engine_config *cfg);

/* Most blocks of positions a sequence of `tokens` tokens holds at once in
 * the sliding-window groups (per group): a chunk of up to
 * max_num_batched_tokens plus the window before it, as vLLM's
 * SlidingWindowSpec.max_admission_blocks_per_request bounds it; 0 without
 * a window. */
int64_t sim_window_peak_blocks(const struct engine_config *cfg, int64_t tokens);

/* Set cfg's hybrid-attention fields from a memory plan of the same model and
 * parallelism: the linear layers' state in KV tokens, the sliding window and
 * the cost of its groups; and kv_cache_tokens from the plan when it is 0. */
void sim_engine_hybrid(struct engine_config *cfg, const struct mem_plan *plan);

/* Put tiers below the replicas' caches; only before the first sim_submit.
 * 0, DIAG_EINPUT (a capacity out of 1..2^31-1, shared_by < 1), DIAG_ENOMEM,
 * or DIAG_EINTERNAL when calls were already submitted. */
int sim_set_tiers(struct sim *s, const struct sim_tiers_config *tc, struct diag *d);

/* Replace the default router (round_robin, no limits) by one built from rc;
 * only before the first sim_submit.  0, DIAG_EINPUT, DIAG_ENOMEM, or
 * DIAG_EINTERNAL when calls were already submitted. */
int sim_set_router(struct sim *s, const struct router_config *rc, struct diag *d);

/* Start, drain, fail and scale replicas as c says (sim/lifecycle.h); only
 * before the first sim_submit and after sim_set_router.  c's fault list is
 * copied.  0, DIAG_EINPUT (a fault naming a replica outside the cluster,
 * autoscale bounds out of range), DIAG_ENOMEM, or DIAG_EINTERNAL when calls
 * were already submitted. */
int sim_set_elastic(struct sim *s, const struct elastic_config *c, struct diag *d);

/* Put API backends beside the replicas, with the rules that send calls to
 * them (sim/backend.h); only before the first sim_submit.  c is copied.  0,
 * DIAG_EINPUT (hybrid_config_check), DIAG_ENOMEM, or DIAG_EINTERNAL when
 * calls were already submitted.  A config without backends changes
 * nothing. */
int sim_set_hybrid(struct sim *s, const struct hybrid_config *c, struct diag *d);

/* Fault detection by probe (sim/lifecycle.h), for lifecycle.c: take the
 * calls rep holds out of it, each to give up at the detection or its
 * client's timeout, the router not told (0 or DIAG_ENOMEM); then, once rep
 * is down, keep routing to it (was_up) until the probes notice. */
int sim_hang_begin(struct sim *s, struct replica *rep, int64_t repair_ns);
void sim_hang_route(struct sim *s, struct replica *rep, bool was_up);

/* What the lifecycle did so far (outage time counted up to now). */
struct elastic_stats sim_elastic_stats(const struct sim *s);

/* Sample the cluster every interval_ns of simulated time into the sink's
 * `sample` callback (res_sample); 0 turns sampling off.  Only before the
 * first sim_submit.  Samples are emitted as events pass their instants, so
 * the cost is O(samples x replicas) over a run, none while off.  0,
 * DIAG_EINPUT (negative interval), DIAG_ENOMEM, or DIAG_EINTERNAL when calls
 * were already submitted. */
int sim_set_series(struct sim *s, int64_t interval_ns, struct diag *d);

/* After the last event: emit the sample that closes the open interval (no
 * sample when nothing ever happened).  Call once, at the end of a run. */
void sim_series_flush(struct sim *s);

/* Why a call of prompt + output tokens can never be served under cfg with a
 * cache of kv_blocks blocks (a static string), or NULL if it can be.  The
 * simulator rejects exactly these calls on arrival. */
const char *sim_reject_reason(const struct engine_config *cfg, int64_t kv_blocks,
			      int64_t prompt_tokens, int64_t output_tokens);

/* Issue a call at time t_ns (>= the current time). */
int sim_submit(struct sim *s, const struct sim_call *c, int64_t t_ns, struct diag *d);

/* Time of the next event, or INT64_MAX when nothing is pending (no call is
 * left and only lifecycle events remain). */
int64_t sim_next_time(const struct sim *s);

/* Dispatch one event: 1 if one ran, 0 if the queue was empty, or an error. */
int sim_step(struct sim *s, struct diag *d);

/* What waits in a running simulation (for early verdicts, replay.h):
 * `waiting` counts the calls at the router and in the replicas' waiting
 * queues; `no_token_before` the calls in flight anywhere (router, waiting,
 * running) that arrived before t_ns and have no output token yet;
 * `arrived_before` those that arrived before t_ns, token or not.  Calls
 * whose arrival event has not run are not counted.  O(calls in flight). */
struct sim_backlog {
	int64_t waiting;
	int64_t no_token_before;
	int64_t arrived_before;
};
void sim_backlog(const struct sim *s, int64_t t_ns, struct sim_backlog *out);

/* The counters so far, the replicas' own included. */
struct sim_stats sim_get_stats(const struct sim *s);

/* End-of-run invariants: every call completed or rejected, no request left
 * (in a replica or at the router), every KV block returned, token accounting
 * balanced.  0 or DIAG_EINTERNAL
 * with what broke. */
int sim_check_end(const struct sim *s, struct diag *d);

#endif
