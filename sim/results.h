/* SPDX-License-Identifier: Apache-2.0
 * results: what a simulation run reports, record by record.
 *
 * The simulator (and the replay driver above it) push records into a
 * res_sink as they happen; reports/ aggregates them.  Nothing here is kept by
 * the simulator after the call returns, so memory does not grow with the
 * length of the trace unless the sink chooses to keep records.
 *
 * Times are simulated int64 nanoseconds from the start of the trace.
 */
#ifndef SIM_RESULTS_H
#define SIM_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum res_status {
	RES_COMPLETED = 0,
	RES_REJECTED = 1, /* could never be served; `reason` says why */
};

/* Why a call went where it did (sim/backend.h): the local engines, or an
 * API backend by spill-over, fallback or size. */
enum res_route { RES_ROUTE_LOCAL = 0, RES_ROUTE_SPILL, RES_ROUTE_FALLBACK, RES_ROUTE_SIZE, RES_N_ROUTES };

/* "local", "spill", "fallback", "size" (static); NULL out of range. */
static inline const char *res_route_name(int route)
{
	static const char *const names[RES_N_ROUTES] = {"local", "spill", "fallback", "size"};
	return route >= 0 && route < RES_N_ROUTES ? names[route] : NULL;
}

/* Lower KV-cache tiers below a replica's GPU cache: host, disk/remote. */
#define RES_MAX_TIERS 2

/* Capacity of one replica, the denominators of a run's headroom figures
 * (reports/metrics.h); a 0 leaves the figures that need it at 0. */
struct res_capacity {
	int32_t max_num_seqs;
	int64_t kv_blocks;
	double peak_flops;             /* FLOP/s of all the replica's GPUs */
	double peak_bytes_per_s;       /* memory bandwidth of all its GPUs */
};

/* One LLM call, reported once when it completes or is rejected. */
struct res_request {
	uint64_t session;          /* session id hash (0 for open-loop requests) */
	uint64_t task;             /* task id hash (0 if none) */
	int64_t seq;               /* call index within its session */
	int32_t replica;           /* replica that served it (-1 if rejected or
				      served by an API backend) */
	int32_t backend;           /* 0: the local engines; k >= 1: API backend
				      k - 1 (sim/backend.h) */
	int32_t route;             /* enum res_route: why it went there */
	enum res_status status;
	const char *reason;        /* static string when rejected, else NULL */
	int64_t arrival_ns;        /* when the call was issued */
	int64_t dispatched_ns;     /* when the router handed it to a replica
				      (arrival_ns unless the router queued it) */
	int64_t scheduled_ns;      /* when the replica first admitted it to its
				      running batch */
	int64_t first_token_ns;    /* end of the step that produced token 1 */
	int64_t done_ns;           /* end of the step that produced the last token */
	int64_t prompt_tokens;
	int64_t output_tokens;
	int64_t cached_prompt_tokens;   /* prefix-cache hits at first admission */
	int64_t computed_prefill_tokens;/* prefill computed, recomputation included */
	int64_t inflight_miss_tokens;   /* prefix tokens missed only because another
					   request was still computing them */
	int64_t tier_cached_tokens[RES_MAX_TIERS]; /* of cached_prompt_tokens, those
					   loaded from the host tier [0] and the
					   disk/remote tier [1] (kv_tiers) */
	int32_t preemptions;
	int32_t retries;           /* times a replica failure sent it back to the router */
	bool outage;               /* arrived while a replica was down, or retried */
	int32_t kind;              /* enum out_kind of its output (base/outkind.h) */
	/* API backends' per-minute limits (sim/backend.h) */
	int32_t rate_limited;      /* 429s the call met */
	int32_t limited_backend;   /* the backend (k >= 1 as `backend`) that sent
				      them; 0 = none */
	int64_t backoff_ns;        /* time its client waited to try again, after
				      429s and after failed replicas */
	int32_t prio;              /* its priority class (sim_call.prio) */
	int32_t team;              /* its team (sim_call.team) */
};

/* A run of `steps` consecutive decode steps shared by `seqs` sequences: each
 * sequence saw `steps` inter-token latencies, the first `first_ns` long and
 * the last `last_ns` long.  Their sum is exactly `total_ns`; in between they
 * are treated as varying linearly, which is exact while the run stays on one
 * side of the compute/memory crossover of the step-time model and otherwise
 * off by at most the bend at that crossover.  Every gap between two tokens
 * of a completed request is in exactly one run (steps * seqs samples in all
 * equal the sum of output_tokens - 1). */
struct res_itl_run {
	double first_ns;
	double last_ns;
	double total_ns;           /* exact sum of the `steps` step times */
	int64_t steps;
	int32_t seqs;
};

/* One step (or run of identical-shape steps) of one replica, for
 * utilisation and headroom.  A decode run's steps each add one token per
 * sequence, so its KV use grows from kv_blocks_start to kv_blocks_end;
 * flops and bytes are the work of all its steps as the step-time model
 * counts it (0 when the model does not say). */
struct res_busy {
	int32_t replica;
	int64_t start_ns;
	int64_t end_ns;
	int64_t steps;
	int32_t seqs;              /* sequences in each step's batch */
	int64_t kv_blocks_start;   /* KV blocks held by running requests, step start */
	int64_t kv_blocks_end;     /* the same at its end, before finished requests free theirs */
	double flops;              /* floating-point operations of all its steps */
	double bytes;              /* bytes moved to and from GPU memory, all its steps */
};

/* A closed-loop session or a task (a span of calls) that finished. */
struct res_span {
	uint64_t id;
	int64_t start_ns;          /* issue time of its first call */
	int64_t end_ns;            /* completion of its last call */
	int32_t calls;
	bool accepted_known;
	bool accepted;
};

/* Replica states (sim/lifecycle.h says what each means). */
enum rep_life { REP_UP = 0, REP_STARTING, REP_DRAINING, REP_DOWN, REP_OFF, REP_N_LIFE };

/* A replica changed state (enum rep_life) at t_ns.  Every
 * replica is up at time 0 unless a record at time 0 says otherwise; with
 * nothing elastic configured there are no such records. */
struct res_replica {
	int32_t replica;
	int64_t t_ns;
	int32_t from;
	int32_t to;
};

/* One replica in a time-series sample (struct res_sample): its state at
 * the sample's instant and what it did in the interval that ends there. */
struct res_sample_replica {
	int64_t waiting;           /* calls in its waiting queue */
	int64_t running;           /* calls in its running set */
	int64_t batch_tokens;      /* tokens of the step in flight (0 when idle) */
	int64_t kv_blocks_used;    /* KV blocks held by its running calls */
	int64_t kv_blocks_total;
	int64_t busy_ns;           /* step time inside the interval */
	int64_t arrivals;          /* calls the router handed to it in the interval
				      (retries included) */
	int64_t completions;       /* calls it completed in the interval */
	int32_t life;              /* its state (enum rep_life): REP_UP for every
				      replica unless the lifecycle is on */
};

/* A time-series sample, every interval_ns of simulated time: gauges are
 * the state at t_ns (after every event before t_ns, before those at t_ns);
 * counts cover the interval [t_ns - interval_ns, t_ns).  Samples come in
 * time order, at every multiple of interval_ns up to the first one after
 * the run's last event, so the counts of all samples add up to the run's. */
struct res_sample {
	int64_t t_ns;
	int64_t interval_ns;
	int64_t router_queue;      /* calls waiting at the router */
	int64_t arrivals;          /* calls that arrived (rejected ones included;
				      a retry after a failure is not a new one) */
	int64_t completions;
	int64_t failed;            /* calls that failed (rejected, refused by the
				      router, or out of retries) */
	int32_t replicas_up;       /* replicas in each state (enum rep_life) */
	int32_t replicas_starting;
	int32_t replicas_draining;
	int32_t replicas_down;
	int32_t n_replicas;
	int32_t n_tiers;           /* lower KV tiers (kv_tiers), 0 when off */
	int64_t tier_blocks_used[RES_MAX_TIERS];  /* blocks each lower tier holds, */
	int64_t tier_blocks_total[RES_MAX_TIERS]; /* summed over its sets */
	const struct res_sample_replica *replicas; /* [n_replicas], valid during the call */
};

struct res_sink {
	void *ctx;
	void (*request)(void *ctx, const struct res_request *r);
	void (*itl_run)(void *ctx, const struct res_itl_run *r);
	void (*busy)(void *ctx, const struct res_busy *b);
	void (*session)(void *ctx, const struct res_span *s);
	void (*task)(void *ctx, const struct res_span *t);
	void (*replica)(void *ctx, const struct res_replica *r); /* may be NULL */
	void (*sample)(void *ctx, const struct res_sample *s); /* time series; may be NULL */
};

#endif
