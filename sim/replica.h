/* SPDX-License-Identifier: Apache-2.0
 * replica: one engine instance modelled on vLLM V1's scheduler.
 *
 * A replica has a waiting queue (FCFS; preempted requests return to its
 * front) and a running list in admission order.  Each step it builds one
 * batch under max_num_batched_tokens and max_num_seqs: first every running
 * request (a decode token, or the next chunk of an unfinished prefill), then
 * waiting requests while budget, sequence slots and KV blocks last.  A
 * request that cannot get the blocks for its next tokens preempts the most
 * recently admitted running request (recompute: its blocks are freed and its
 * progress forgotten); when a step preempts, no waiting request is admitted.
 * A waiting request's first chunk starts after its longest cached prefix
 * (never the whole prompt: the last token is always computed).  It is
 * admitted if the free and evictable blocks cover its first chunk, or, with
 * reserve_full_prompt (vLLM's scheduler_reserve_full_isl), its whole current
 * sequence; either way only the chunk's blocks are allocated.
 *
 * Hybrid models.  With sliding-window layers every request has a second
 * block table (wblocks) for the window groups, filled and hashed with the
 * first (under each group's own key) from the same pool; before a request's
 * next allocation the blocks that left the window are freed (w_lo), and a
 * prefix hit is the longest one whose window blocks just before its end are
 * still cached (vLLM's HybridKVCacheCoordinator and SlidingWindowManager).
 * Linear-attention state is reserved from the pool (seq_blocks) on admission
 * and returned on preemption or finish.
 *
 * Decode runs.  When a step is decode-only, admits nobody and preempts nobody,
 * the next steps would be identical in shape until a request finishes, KV
 * blocks run out, or an arrival can change the schedule.  The replica then
 * schedules k such steps as one event (k chosen from the remaining output
 * lengths and the free blocks) and applies their effect at once: cost per
 * batch change, not per token.  An arrival that could change the schedule
 * (the waiting queue was empty) cuts the run at the first step boundary at or
 * after the arrival.  A waiting head that KV blocks held back can become
 * admissible in two ways while a run allocates and caches blocks: an
 * allocation evicts a free block of its cached prefix (its hit shrinks, and
 * the free blocks after it stop counting as its own), a block the run fills
 * carries a hash that lengthens that prefix in some group (its hit grows), or
 * the window blocks the run frees add up to the blocks it lacked.  The run
 * stops before any of these, and applies its window frees step by step in
 * batch order, so it stays exactly what single steps would do.
 *
 * Speculative decoding (cfg->spec_k > 0).  A decoding sequence's step is a
 * verify step of spec_k + 1 positions (counted against the token budget and
 * in the step's shape) that yields the expected tokens of its call's output
 * kind: a fixed-point fraction carried from step to step decides when the
 * fractional part adds a token, the same in a decode run of k steps as in k
 * single steps, so runs stay one event.  Only the accepted tokens take KV
 * blocks.  A model with sliding-window groups takes no decode runs then.
 *
 * KV retention (cfg->kv_retain_ttl_ns > 0).  A completed call whose
 * session resumes releases its blocks as retained (sim/kvcache.h); the
 * cache is then kept block by block.  Expiry is looked at when the replica
 * schedules, and a decode run ends before the next expiry, so runs stay
 * what single steps would do.
 *
 * Timing: a step's tokens exist at its end.  Blocks of a step are allocated
 * when it is scheduled, and those it fills are entered in the prefix table
 * then too (vLLM's allocate_slots caches them at once), so a request admitted
 * later in the same step hits the chunk being computed.  A decode run enters
 * the blocks its later steps fill when it ends.
 */
#ifndef SIM_REPLICA_H
#define SIM_REPLICA_H

#include "sim/kvcache.h"
#include "sim/kvruns.h"
#include "sim/sim.h"

#include <stdbool.h>
#include <stdint.h>

/* Event kinds and their priorities at one instant (see sim.h). */
enum { EV_ARRIVAL = 1, EV_STEP_END = 2, EV_SCHEDULE = 3, EV_LOADED = 12 };
enum { PRIO_ARRIVAL = 0, PRIO_STEP_END = 1, PRIO_SCHEDULE = 2 };

enum sreq_state { SREQ_WAITING = 1, SREQ_RUNNING, SREQ_DONE };

/* A call inside the simulator.  Pooled; its arrays are sized at submit for
 * the call's whole life, so the step loop never allocates.  The arrays only
 * ever grow, with their contents dropped: a pooled request keeps its room
 * for the next call instead of copying anything. */
struct sreq {
	struct sim_call call;       /* block_hashes is `hashes` below */
	const uint64_t *hashes;     /* the full-block hashes: `own`, or the
				       caller's array (call.borrow_hashes) */
	uint64_t *own;              /* owned copy when not borrowed */
	int64_t cap_own;            /* room in own */
	int32_t *blocks;            /* block table (full-attention group) */
	int64_t cap_blocks;         /* room in blocks */
	int32_t *wblocks;           /* sliding-window groups: position j of
				       group g at [j * window_group_blocks + g];
				       live for j in [w_lo, n_blocks) */
	int64_t w_lo;               /* positions before it left the window */
	int64_t n_blocks;           /* positions allocated, in every group */
	int64_t max_blocks;         /* ceil((prompt + output) / block_size) */
	int64_t seq_blocks;         /* reserved while running (hybrid attention) */
	int64_t n_registered;       /* leading blocks whose hash is entered */
	int64_t pend_lo, pend_hi;   /* hashes[pend_lo..pend_hi): prompt blocks
				       it is still to compute (in flight) */
	int32_t pend_slot;          /* its place in the replica's `pend` list
				       while that range is not empty */
	uint64_t pools_ok;          /* bit p: pool p can serve the call */
	enum sreq_state state;
	int64_t arrival_ns;
	int64_t dispatched_ns;      /* the router handed it to a replica */
	int64_t scheduled_ns;       /* first admitted to the running batch */
	int64_t admitted_ns;        /* last admitted to it (after a preemption
				       or a retry, the prefill that counts) */
	int64_t computed;           /* tokens whose KV exists (vLLM num_computed_tokens) */
	int64_t generated;          /* output tokens produced */
	int64_t first_token_ns;
	int64_t last_token_ns;
	int64_t cached_first;       /* prefix hit at first admission */
	int64_t inflight_miss;
	int64_t prefill_computed;   /* prefill tokens computed, recompute included */
	int64_t kv_obtained;        /* cached + computed tokens over all admissions */
	int64_t kv_dropped;         /* computed tokens thrown away by preemption */
	int64_t wt_blocks;          /* write-through: prompt blocks handed to the
				       host tier since its admission */
	int64_t tier_first[RES_MAX_TIERS]; /* tokens loaded from each lower tier
				       at first admission */
	uint32_t spec_q;            /* speculative decoding: expected tokens
				       per verify step on this replica, in
				       units of 1/SPEC_Q_ONE (0: none) */
	uint32_t spec_acc;          /* the fraction of a token carried over */
	int32_t preemptions;
	int32_t retries;            /* sent back to the router by a failure */
	bool outage;                /* arrived during an outage, or retried */
	bool admitted_once;
	int32_t backend;            /* served by API backend backend - 1; 0 = local */
	int32_t route;              /* enum res_route */
	int64_t api_first_ns;       /* API backends: its first token */
	int32_t rate_limited;       /* 429s met (sim/backend.h) */
	int32_t limited_backend;    /* the backend that sent them, + 1 */
	int64_t backoff_ns;         /* time its client waited to try again */
	int64_t sent_ns;            /* when its client sent this attempt */
	int32_t hung_on;            /* faults.detection probe: the hung replica
				       it waits on, + 1; 0 = none */
	struct kvr_req kr;          /* its block table on a replica in runs
				       (replica.runs); `blocks` unused there */
	struct kvr_req rt_act;      /* dynamo_* routers: its prompt blocks in
				       the router's active set of its replica */
	int64_t rt_prefill;         /* dynamo_* routers: its uncached prompt
				       tokens, counted on its replica until its
				       first token (0: none pending) */
	/* prefill/decode disaggregation (sim_set_pd) */
	int8_t pd_phase;            /* enum sreq_pd */
	int32_t pd_decode;          /* the decode replica picked on arrival; -1 none */
	int64_t pd_output;          /* its output tokens, while the prefill
				       replica produces only the first */
	int64_t pd_remote_blocks;   /* leading prompt blocks that arrive from the
				       prefill replica at its next admission */
	bool pd_reserved;           /* counted as outstanding on pd_decode at the
				       router from its pick to its arrival there */
	bool team_carry;            /* its team's slot at the router is kept
				       from the prefill replica to the decode
				       replica (router_sent takes none then,
				       router_done gives none back) */
	struct sreq *tq_next;       /* its team's router queue (team caps) */
	struct sreq *next_free;
};

/* Where a call is in prefill/decode disaggregation. */
enum sreq_pd { SREQ_PD_NONE = 0, SREQ_PD_LOCAL, SREQ_PD_PREFILL, SREQ_PD_TRANSFER, SREQ_PD_DECODE };

struct batch_item {
	struct sreq *r;
	int64_t n;                  /* tokens scheduled in the (first) step;
				       a verify step's: the tokens it yields */
	bool spec;                  /* a verify step of speculative decoding */
};

/* Fixed point of the expected tokens per verify step: a sequence that
 * yields q / SPEC_Q_ONE tokens a step has, after k steps from a carried
 * fraction acc, (acc + k q) / SPEC_Q_ONE of them (rounded down), so its
 * tokens follow the expectation exactly, without drawing. */
#define SPEC_Q_ONE 65536

struct replica {
	int32_t id;
	int32_t pool;               /* index of its pool in the sim */
	const struct engine_config *cfg; /* its pool's settings */
	const struct sim_perf *perf;     /* its pool's step-time model */
	int32_t life;               /* enum rep_life (sim/lifecycle.h) */
	uint64_t start_gen;         /* stamps the live EV_STARTED event */
	/* models loaded on demand (engine_config.load_on_demand) */
	bool loaded;                /* its model is in memory */
	bool loading;               /* a load is under way: nothing runs */
	bool loaded_once;           /* a load before: the next is a reload */
	uint64_t load_gen;          /* stamps the live EV_LOADED event */
	int64_t idle_since_ns;      /* it last held no call from then */
	uint64_t fault_gen;         /* stamps the live EV_RATE_FAULT event */
	struct kvcache kv;          /* block by block (block_size and
				       total_blocks always valid) */
	bool runs;                  /* the cache is `kr`, in runs of blocks:
				       full attention only, no lower tiers */
	struct kvr kr;
	int kv_err;                 /* a release that ran out of memory */
	struct sreq **wq;           /* waiting ring buffer */
	int64_t wq_head, wq_len, wq_cap;
	struct sreq **running;      /* admission order, max_num_seqs slots */
	int32_t n_running;
	struct sreq **pend;         /* the running requests with prompt blocks in
				       flight (pend_lo < pend_hi), any order;
				       max_num_seqs slots */
	int32_t n_pend;
	struct batch_item *batch;
	int32_t n_batch;
	/* the step (or decode run) in flight */
	bool busy;                  /* a step is in flight */
	bool sched_pending;         /* a schedule event is queued */
	bool run_cuttable;          /* waiting was empty when the run began */
	bool run_decode;            /* the in-flight step is a decode run */
	int64_t run_t0_ns;
	int64_t run_k;
	double run_total_ns;         /* exact duration of the run's run_k steps */
	uint64_t run_gen;           /* stamps the live step-end event */
	struct perf_batch run_b0;
	/* the waiting head, when KV blocks held it back at the last schedule */
	bool head_blocked;
	bool spec_paused;           /* this step's batch speculates not: it
				       started with spec_disable_batch or more
				       running sequences */
	const struct sreq *head;
	int64_t head_hit;           /* its prefix hit, in blocks */
	int64_t head_grow_end;      /* a block filled at a position in
				       [head_hit, head_grow_end) with its hash
				       could lengthen the hit */
	int64_t head_deficit;       /* blocks it lacked */
	int64_t head_loads;         /* blocks of its hit a lower tier holds */
	uint64_t head_first_stamp;  /* oldest free-queue stamp of its cached
				       prefix (UINT64_MAX: none free) */
	int64_t run_kv_start;       /* blocks in use when the run was scheduled */
	/* sliding-window KV-cache groups (0 groups: none) */
	int64_t win_tokens;         /* the window */
	int64_t win_groups;         /* blocks one position costs in them */
	int64_t win_hit_blocks;     /* cached blocks a hit needs just before its
				       end: cdiv(window - 1, block_size) */
	/* lower KV tiers (sim_set_tiers): the top of the chain, NULL when off */
	struct kvtier *tier;
	bool tier_shared;           /* other replicas read and fill it too */
	double load_ns;             /* loads of the step being scheduled */
	double link_free_ns;        /* write-through, async: the host link is
				       busy with stores until then */
	bool retain;                /* KV retention on (cfg.kv_retain_ttl_ns) */
	int64_t retain_last_ns;     /* retain_area counted up to then */
	double retain_area;         /* retained blocks x ns */
	int32_t *scratch;           /* max_num_seqs entries */
	int64_t *bucket;            /* block_size + 1 entries */
};

/* The replica's KV cache, whichever form it takes (kvcache or kvruns):
 * blocks in use, blocks an allocation could obtain, blocks set aside
 * (delta added), evictions, the length of a chain's cached prefix, whether
 * position `pos` of a chain is cached, forgetting everything (as
 * kvcache_reset), and its invariants. */
int64_t replica_kv_used(const struct replica *rep);
int64_t replica_kv_available(const struct replica *rep);
void replica_kv_reserve(struct replica *rep, int64_t delta);
int64_t replica_kv_reserved(const struct replica *rep);
int64_t replica_kv_evictions(const struct replica *rep);
int64_t replica_kv_duplicates(const struct replica *rep);
int64_t replica_match_len(const struct replica *rep, const uint64_t *hashes, int64_t n);
bool replica_holds(const struct replica *rep, const uint64_t *hashes, int64_t pos);
void replica_kv_reset(struct replica *rep);
bool replica_kv_check(const struct replica *rep);

/* Replica `id` of pool `pool`, whose cfg and perf it keeps pointers to (they
 * must outlive it). */
int replica_init(struct replica *rep, int32_t id, int32_t pool, const struct engine_config *cfg,
		 const struct sim_perf *perf, struct diag *d);
void replica_release(struct replica *rep);

/* A request arrives (already validated).  On failure r is not queued
 * unless r->state says SREQ_WAITING. */
int replica_enqueue(struct sim *s, struct replica *rep, struct sreq *r);

/* Event handlers. */
int replica_schedule(struct sim *s, struct replica *rep);
int replica_step_end(struct sim *s, struct replica *rep, uint64_t gen);

/* Return every block r holds (sliding-window groups first, each tail first,
 * then the full-attention group tail first: vLLM's coordinator frees group
 * by group) and drop its pending marks. */
void replica_free_blocks(struct replica *rep, struct sreq *r);

/* A completed call returns its blocks: as replica_free_blocks, but with
 * KV retention on and a session that resumes (call.resumes) its cached
 * blocks stay retained until now_ns plus the retention's time to live. */
void replica_finish_blocks(struct replica *rep, struct sreq *r, int64_t now_ns);

/* Bring the retained blocks' time integral up to now_ns (retention on). */
void replica_retain_tick(struct replica *rep, int64_t now_ns);

/* Called by sim when a request finishes (sim frees it after the callback). */
void sim_finish_request(struct sim *s, struct replica *rep, struct sreq *r);

/* Send r (taken from a failed replica, router counters already settled)
 * back through the router, or fail it with `why` when it has used its
 * retries or the router queue is full.  0 or an error code. */
int sim_retry(struct sim *s, struct sreq *r);

/* Hand calls waiting at the router to replicas while the policy finds room. */
void sim_router_drain(struct sim *s);

/* Wake the replica (queue a schedule event now) if it is idle. */
int replica_kick(struct sim *s, struct replica *rep);

/* A call is about to reach rep: with a model loaded on demand, unload it if
 * rep has held no call for its keep-alive, and start loading it if it is
 * not loaded (the call then waits in rep's queue until EV_LOADED).  0 or
 * DIAG_ENOMEM. */
int replica_need_model(struct sim *s, struct replica *rep);

/* EV_LOADED: the load stamped gen finished. */
int replica_loaded(struct sim *s, struct replica *rep, uint64_t gen);

/* rep starts afresh (a start-up ended, or it went off or down): nothing
 * loaded, no load under way. */
void replica_model_reset(struct replica *rep);

/* The replica failed: cancel its step in flight, take every call it holds
 * (running ones lose their blocks and progress, as a preemption that also
 * forgets streamed tokens) into out[0..*n) in admission then queue order,
 * and empty its KV cache.  `out` has room for n_running + wq_len calls.
 * The router's counters are the caller's. */
void replica_fail(struct sim *s, struct replica *rep, struct sreq **out, int64_t *n);

#endif
