/* SPDX-License-Identifier: Apache-2.0
 * lifecycle: replicas that start, drain, fail and stop; the autoscaler.
 *
 * Every replica is in one state:
 *
 *   up        serves: the router may send it calls;
 *   starting  rented, not serving yet: the node, the image, the engine
 *             and its model (startup_ns: models/startup.h), then up;
 *   draining  scaled in: takes no new call, finishes those it holds (waiting
 *             ones included), then off;
 *   down      failed: its calls went back through the router, its KV cache
 *             is lost; after the repair time it starts again (without an
 *             autoscaler) or stays off for the autoscaler to use;
 *   off       not rented.
 *
 * Billed (GPU-hours provisioned) are up, starting and draining replicas.
 * Without any of the features below every replica is up for the whole run
 * and nothing here runs.
 *
 * Faults.  A listed fault takes replica `replica` down at at_ns for
 * repair_ns; a fault rate gives each replica, from every time it comes up,
 * an exponential time to failure of mean mtbf_ns drawn from a counter-based
 * stream seeded by `seed`, and a fixed repair time.  A fault on a replica
 * that is down or off does nothing (counted as skipped).  The calls the
 * failed replica held (running, or waiting in its queue) are retried through
 * the router at once, from scratch: tokens already streamed are lost, and
 * TTFT counts from the call's first arrival.  A call retried more than
 * max_retries times fails with a reason.  A call that arrives while a
 * replica is down, or that a failure retried, is counted "during an outage".
 *
 * Fault detection (detection).  FAULT_DETECT_INSTANT (the zero value) is
 * the above: the failure is seen at once and its calls are retried at
 * once.  FAULT_DETECT_PROBE: the replica hangs and nobody knows.  A health
 * probe runs every probe_period_ns (on a grid from time 0: the phase a
 * kubelet picks at random, fixed here) and fails after probe_timeout_ns
 * against a hung replica; the failure_threshold-th failed probe in a row
 * notices it: at (floor(fault / period) + threshold) x period + timeout,
 * or at the repair if that comes first (Kubernetes' liveness probe then
 * restarts the container, resetting every connection to it).  Until then
 * the router keeps sending it calls, and the calls on it (those it held and
 * those sent to it since) wait: each gives up at the detection or when its
 * client's timeout (client_timeout_ns since it was sent) passes, whichever
 * comes first, and its client retries it after the SDKs' back-off
 * (sim/backend.h client_backoff_ns, between retry_initial_ns and
 * retry_max_ns), within max_retries.  The replica counts as down from the
 * fault (outage time and the repair clock are unchanged).
 *
 * Autoscaler.  Every interval_ns of simulated time (an event: while the
 * cluster is idle at its floor the evaluation sleeps until the next call,
 * so idle time costs nothing) it reads the metric over the cluster:
 *   queue     calls waiting (at the router and in the replicas' queues);
 *   inflight  calls outstanding (waiting anywhere or running);
 *   kv        KV blocks in use / blocks, summed over up replicas (with
 *             none in use and calls waiting at the router, one replica's
 *             worth: a cluster scaled to zero still wakes);
 * and acts on it by its policy (sim/autoscale.h).  Counted as current: up
 * and starting replicas.  Scale-out starts the lowest-numbered off
 * replicas; scale-in cancels starting replicas first, then drains the up
 * replicas with the fewest outstanding calls.
 *   cooldown  this tool's first rule, kept as it was: desired =
 *             ceil(total / target) clamped to [min, max], read the instant
 *             it is evaluated; scale-out at once, scale-in to the desired
 *             count once cooldown_ns has passed since the last scaling
 *             action.  No named system scales this way.
 *   hpa       Kubernetes' HorizontalPodAutoscaler, syncing every
 *             interval_ns on the metric as it stood metric_lag_ns earlier
 *             (what Prometheus had last scraped): tolerance, stabilisation
 *             windows and rate limits as sim/autoscale.h says.
 *   keda      KEDA: a poll every polling_ns (activation above `activation`,
 *             scale to zero cooldown_ns after the last active poll) and
 *             the HPA it drives between 1 and max, both on the lagged
 *             metric.
 * With min 0 the cluster scales to zero: a call arriving then waits at the
 * router for a whole cold start (the next evaluation, the metric lag and
 * the start-up), and that wait is in its TTFT.
 * At time 0, min replicas are up and the rest off.
 */
#ifndef SIM_LIFECYCLE_H
#define SIM_LIFECYCLE_H

#include "base/diag.h"
#include "sim/autoscale.h"
#include "sim/results.h"

#include <stdbool.h>
#include <stdint.h>

struct sim;
struct replica;
struct sreq;

/* enum rep_life is in sim/results.h. */

/* "up", "starting", ... (static); NULL out of range. */
const char *rep_life_name(int life);

struct fault_spec {
	int32_t replica;
	int64_t at_ns;
	int64_t repair_ns;
};

enum autoscale_metric { AUTOSCALE_QUEUE = 0, AUTOSCALE_KV, AUTOSCALE_INFLIGHT, AUTOSCALE_N_METRICS };

/* "queue", "kv", "inflight" (static); NULL out of range. */
const char *autoscale_metric_name(enum autoscale_metric m);
bool autoscale_metric_parse(const char *s, enum autoscale_metric *out);

/* Retries a client makes after a failed call when faults.max_retries is not
 * set: the OpenAI Python SDK's default max_retries (2; openai-python
 * README, "Retries", read 2026-12-01). */
#define FAULT_DEFAULT_MAX_RETRIES 2

/* Replica failures one run may have: a fault rate past it is a scenario
 * error (each failure is kept in the run's timeline), not a memory hog. */
#define FAULT_MAX_FAILURES 1000000

enum { FAULT_DETECT_INSTANT = 0, FAULT_DETECT_PROBE };

/* Pools whose start-up the lifecycle keeps apart (sim.h's SIM_MAX_POOLS). */
#define ELASTIC_MAX_POOLS 64

struct elastic_config {
	int64_t startup_ns;            /* node to warm-up (models/startup.h; for
					  an engine_config that loads its model on
					  demand, up to the image pull) */
	int64_t pool_startup_ns[ELASTIC_MAX_POOLS]; /* > 0: pool p's replicas
					  start in this time instead (their own
					  weights); 0 = startup_ns */
	/* autoscale */
	bool autoscale;
	enum autoscale_policy policy;  /* default cooldown (the sim's; scenarios
					  default elsewhere: replay/scenario.h) */
	enum autoscale_metric metric;
	double target;                 /* > 0 */
	int32_t min_replicas;          /* 0 .. max */
	int32_t max_replicas;          /* 1 .. replicas; 0 = replicas */
	int64_t interval_ns;           /* > 0: evaluation or HPA sync period */
	int64_t cooldown_ns;           /* cooldown: after a scaling action before
					  a scale-in; keda: after the last active
					  poll before scaling to zero */
	struct hpa_config hpa;         /* hpa and keda */
	int64_t metric_lag_ns;         /* hpa and keda: age of the metric read */
	int64_t polling_ns;            /* keda: > 0 */
	double activation;             /* keda: active above this */
	/* faults */
	const struct fault_spec *faults; /* copied by sim_set_elastic */
	int32_t n_faults;
	double mtbf_ns;                /* 0 = no rate */
	int64_t repair_ns;             /* for the rate */
	int32_t max_retries;
	uint64_t seed;
	/* fault detection (above); all 0 = instant */
	int32_t detection;             /* FAULT_DETECT_* */
	int64_t probe_period_ns;       /* > 0 with a probe */
	int32_t probe_failure_threshold; /* >= 1 with a probe */
	int64_t probe_timeout_ns;
	int64_t client_timeout_ns;     /* > 0 with a probe */
	double retry_initial_ns, retry_max_ns; /* the client's back-off */
};

/* Nothing elastic: no autoscaler, no faults, max_retries at its default. */
void elastic_config_default(struct elastic_config *c);

/* Whether c asks for anything beyond replicas that are always up. */
bool elastic_active(const struct elastic_config *c);

/* What the lifecycle did over a run. */
struct elastic_stats {
	int64_t faults;             /* replicas taken down */
	int64_t faults_skipped;     /* faults on a replica already down or off */
	int64_t retries;            /* calls sent back through the router */
	int64_t retried_calls;      /* distinct calls retried at least once */
	int64_t fault_failed;       /* calls failed because of a fault */
	int64_t outage_ns;          /* time with at least one replica down */
	int64_t starts;             /* replicas that began starting */
	int64_t scale_outs;         /* autoscaler actions that added replicas */
	int64_t scale_ins;          /* ... that removed some */
	int64_t evaluations;        /* decisions taken (HPA syncs, KEDA polls) */
	int64_t activations;        /* keda: scale-outs from zero */
	int64_t deactivations;      /* keda: scale-ins to zero */
	int32_t active_min, active_max; /* up + starting, over the evaluations
					   and transitions (autoscaler bounds) */
	/* fault detection by probe */
	int64_t detected;           /* hangs the probes noticed */
	int64_t hung_calls;         /* calls that waited on a hung replica */
	int64_t hung_wait_ns;       /* the time they lost there (from their
				       sending to giving up) */
	int64_t client_timeouts;    /* of those, given up by the client's timeout */
	int64_t backoff_ns;         /* time clients waited before a retry */
};

/* ---- used by sim.c ---- */

/* Event kinds of the lifecycle (see replica.h for the engine's). */
enum { EV_FAULT = 4, EV_RATE_FAULT = 5, EV_REPAIRED = 6, EV_STARTED = 7, EV_AUTOSCALE = 8,
       EV_POLL = 10, EV_DECIDE = 11 };
enum { PRIO_LIFE = 3, PRIO_AUTOSCALE = 4 };

static inline bool ev_background(uint32_t kind)
{
	return (kind >= EV_FAULT && kind <= EV_AUTOSCALE) || kind == EV_POLL || kind == EV_DECIDE;
}

/* The autoscaler's state beside struct sim's counters. */
struct autoscale_state {
	struct hpa hpa;              /* hpa and keda */
	struct keda keda;
	bool poll_parked;            /* keda: the poll sleeps until a call */
	int64_t pending_live;        /* readings other than 0 queued behind the
					metric lag */
	int64_t hpa_parked_ns;       /* the sync tick that went to sleep (-1:
					never) */
};

/* Free what lifecycle_start allocated. */
void lifecycle_release(struct sim *s);

/* Set the initial states and queue the listed faults and the first
 * evaluation.  0, DIAG_EINPUT or DIAG_ENOMEM. */
int lifecycle_start(struct sim *s, struct diag *d);

/* Dispatch one lifecycle event. */
int lifecycle_event(struct sim *s, uint32_t kind, void *obj, int64_t arg, uint64_t gen);

/* A call arrived: wake a sleeping autoscaler. */
int lifecycle_on_arrival(struct sim *s);

/* A call finished on rep: a draining replica with nothing left goes off. */
void lifecycle_on_finish(struct sim *s, struct replica *rep);

/* Replicas up + starting now. */
int32_t lifecycle_active(const struct sim *s);

#endif
