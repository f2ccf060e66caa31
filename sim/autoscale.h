/* SPDX-License-Identifier: Apache-2.0
 * autoscale: the decisions of the autoscaling policies a team runs, as state
 * machines the lifecycle (sim/lifecycle.h) drives with the metric it reads.
 *
 * hpa  Kubernetes' HorizontalPodAutoscaler (kubernetes/kubernetes,
 *      pkg/controller/podautoscaler/horizontal.go and replica_calculator.go;
 *      defaults in pkg/apis/autoscaling/v2/defaults.go; read 2026-12-06) on
 *      one metric summed over the replicas with a per-replica target (an
 *      External metric with an AverageValue target, which is how Prometheus
 *      Adapter and KEDA hand vLLM's request counts to it).  Each sync:
 *        - with current replicas above max or below min: max or min;
 *        - else the recommendation: ratio = metric / (target x current);
 *          within [1 - tolerance, 1 + tolerance] it is current, otherwise
 *          ceil(metric / target) (GetExternalPerPodMetricReplicas); with
 *          current 0 (scale to zero) ceil(metric / target);
 *        - stabilised (stabilizeRecommendationWithBehaviors): the lowest
 *          recommendation of the last up_window and the highest of the last
 *          down_window bound current from below and above;
 *        - rate-limited (convertDesiredReplicasWithBehaviorRate): scale-up to
 *          at most max(start + up_pods, ceil(start x (1 + up_percent/100)))
 *          and scale-down to no fewer than floor(start x (1 -
 *          down_percent/100)), where start is the count at the beginning of
 *          the policy's period (current less the replicas added in the last
 *          period, plus those removed); then clamped to [min, max].
 *      A recommendation and a scale event count inside a window or period
 *      when they are strictly younger than it (time.After(cutoff)).
 *      Defaults: tolerance 0.1, no scale-up window, 300 s scale-down window,
 *      4 pods or 100% per 15 s up, 100% per 15 s down.
 *
 * keda KEDA (kedacore/keda, pkg/scaling/executor/scale_scaledobjects.go,
 *      RequestScale; read 2026-12-06 at the 2026-08-20 snapshot): each
 *      poll, the scaler is active when the metric exceeds the activation
 *      threshold (the Prometheus scaler's `val > activationThreshold`).
 *      Active with 0 replicas: scale to max(min, 1) (scaleFromZeroOrIdle);
 *      active: remember the time.  Inactive with replicas and min 0: scale to
 *      0 once the last active poll is more than cooldownPeriod ago
 *      (scaleToZeroOrIdle; never active: at once, initialCooldownPeriod 0).
 *      Between 1 and max an HPA of min max(min, 1) scales (KEDA creates it:
 *      controllers/keda/hpa.go), disabled while the replicas are 0.
 *
 * Neither allocates after init; both are deterministic functions of what
 * they were fed.
 */
#ifndef SIM_AUTOSCALE_H
#define SIM_AUTOSCALE_H

#include "base/diag.h"

#include <stdbool.h>
#include <stdint.h>

enum autoscale_policy {
	AUTOSCALE_POLICY_COOLDOWN = 0, /* this tool's first rule (lifecycle.h) */
	AUTOSCALE_POLICY_HPA,
	AUTOSCALE_POLICY_KEDA,
	AUTOSCALE_N_POLICIES
};

/* "cooldown", "hpa", "keda" (static); NULL out of range. */
const char *autoscale_policy_name(enum autoscale_policy p);
bool autoscale_policy_parse(const char *s, enum autoscale_policy *out);

/* Kubernetes' defaults (see the file comment for where each is set). */
#define HPA_DEFAULT_TOLERANCE 0.1
#define HPA_DEFAULT_UP_WINDOW_S 0.0
#define HPA_DEFAULT_DOWN_WINDOW_S 300.0
#define HPA_DEFAULT_UP_PODS 4
#define HPA_DEFAULT_UP_PERCENT 100.0
#define HPA_DEFAULT_UP_PERIOD_S 15.0
#define HPA_DEFAULT_DOWN_PERCENT 100.0
#define HPA_DEFAULT_DOWN_PERIOD_S 15.0
/* KEDA's: ScaledObject pollingInterval 30 s (apis/keda/v1alpha1/
 * withtriggers_types.go, defaultPollingInterval), cooldownPeriod 300 s
 * (pkg/scaling/executor/scale_executor.go, defaultCooldownPeriod),
 * activation threshold 0 (the scalers' optional activationThreshold). */
#define KEDA_DEFAULT_POLLING_S 30.0
#define KEDA_DEFAULT_COOLDOWN_S 300.0
#define KEDA_DEFAULT_ACTIVATION 0.0

/* Most recommendations or scale events one window or period may hold: a
 * window of more sync periods than this is a settings error. */
#define HPA_MAX_HISTORY (1 << 20)

struct hpa_config {
	double tolerance;        /* >= 0 */
	int64_t up_window_ns;    /* >= 0 */
	int64_t down_window_ns;  /* >= 0 */
	int32_t up_pods;         /* >= 0; 0 = no Pods policy */
	double up_percent;       /* >= 0; 0 = no Percent policy */
	int64_t up_period_ns;    /* > 0 */
	double down_percent;     /* in [0, 100] */
	int64_t down_period_ns;  /* > 0 */
};

/* Kubernetes' defaults. */
void hpa_config_default(struct hpa_config *c);

struct hpa_stamp {
	int64_t t_ns;
	int32_t n;               /* a recommendation, or replicas added or removed */
};

/* A ring of stamps in time order, capacity fixed at init. */
struct hpa_ring {
	struct hpa_stamp *e;
	int32_t cap, head, len;
};

struct hpa {
	struct hpa_config c;
	struct hpa_ring recs;    /* recommendations before stabilisation */
	struct hpa_ring ups, downs; /* scale events */
	/* what the last sync decided, for tests and reports */
	int32_t last_raw;        /* the metric's recommendation */
	int32_t last_stable;     /* after stabilisation */
	bool last_limited;       /* the rate limit or min/max cut it */
};

/* Ready h for syncs every sync_ns (> 0): its rings hold the recommendations
 * and events one window or period can hold.  0, DIAG_EINPUT (a setting out of
 * range, or a window of more than HPA_MAX_HISTORY sync periods) or
 * DIAG_ENOMEM. */
int hpa_init(struct hpa *h, const struct hpa_config *c, int64_t sync_ns, struct diag *d);
void hpa_release(struct hpa *h);

/* One sync at now_ns (never earlier than the last): the replicas to have,
 * given `current` (up and starting), the metric summed over the replicas and
 * the target per replica (> 0), within [min, max].  A result other than
 * current is a scale event, recorded.  O(window / sync period). */
int32_t hpa_sync(struct hpa *h, int64_t now_ns, int32_t current, double metric, double target,
		 int32_t min, int32_t max);

/* Record a recommendation of n made at t_ns without acting on it (the syncs
 * an idle, sleeping autoscaler skipped). */
void hpa_note(struct hpa *h, int64_t t_ns, int32_t n);

struct keda {
	bool ever_active;
	int64_t last_active_ns;
};

/* One KEDA poll at now_ns: the replicas to have given `current` (up and
 * starting), the metric, the activation threshold, the cool-down and min;
 * current when KEDA leaves the count to the HPA. */
int32_t keda_poll(struct keda *k, int64_t now_ns, int32_t current, double metric, double activation,
		  int64_t cooldown_ns, int32_t min);

#endif
