/* SPDX-License-Identifier: Apache-2.0
 * autoscale: HPA and KEDA decisions (see autoscale.h). */
#include "sim/autoscale.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const POLICY_NAMES[AUTOSCALE_N_POLICIES] = {"cooldown", "hpa", "keda"};

const char *autoscale_policy_name(enum autoscale_policy p)
{
	return (unsigned)p < AUTOSCALE_N_POLICIES ? POLICY_NAMES[p] : NULL;
}

bool autoscale_policy_parse(const char *s, enum autoscale_policy *out)
{
	for (int i = 0; i < AUTOSCALE_N_POLICIES; i++)
		if (strcmp(s, POLICY_NAMES[i]) == 0) {
			*out = (enum autoscale_policy)i;
			return true;
		}
	return false;
}

void hpa_config_default(struct hpa_config *c)
{
	*c = (struct hpa_config){
		.tolerance = HPA_DEFAULT_TOLERANCE,
		.up_window_ns = (int64_t)(HPA_DEFAULT_UP_WINDOW_S * 1e9),
		.down_window_ns = (int64_t)(HPA_DEFAULT_DOWN_WINDOW_S * 1e9),
		.up_pods = HPA_DEFAULT_UP_PODS,
		.up_percent = HPA_DEFAULT_UP_PERCENT,
		.up_period_ns = (int64_t)(HPA_DEFAULT_UP_PERIOD_S * 1e9),
		.down_percent = HPA_DEFAULT_DOWN_PERCENT,
		.down_period_ns = (int64_t)(HPA_DEFAULT_DOWN_PERIOD_S * 1e9),
	};
}

/* ---- rings ---- */

static int ring_init(struct hpa_ring *r, int32_t cap)
{
	r->e = malloc((size_t)cap * sizeof(*r->e));
	r->cap = cap;
	r->head = r->len = 0;
	return r->e ? 0 : DIAG_ENOMEM;
}

static const struct hpa_stamp *ring_at(const struct hpa_ring *r, int32_t i)
{
	return &r->e[(r->head + i) % r->cap];
}

/* Drop stamps at or before cutoff_ns (no longer strictly younger). */
static void ring_prune(struct hpa_ring *r, int64_t cutoff_ns)
{
	while (r->len > 0 && r->e[r->head].t_ns <= cutoff_ns) {
		r->head = (r->head + 1) % r->cap;
		r->len--;
	}
}

/* Append; when full (only if the caller's sizing was wrong), the oldest
 * stamp goes, which can only loosen a window, never break memory. */
static void ring_push(struct hpa_ring *r, int64_t t_ns, int32_t n)
{
	if (r->len == r->cap) {
		r->head = (r->head + 1) % r->cap;
		r->len--;
	}
	r->e[(r->head + r->len) % r->cap] = (struct hpa_stamp){.t_ns = t_ns, .n = n};
	r->len++;
}

/* Sum of the stamps strictly younger than period_ns at now_ns. */
static int32_t ring_sum(const struct hpa_ring *r, int64_t now_ns, int64_t period_ns)
{
	int64_t sum = 0;
	for (int32_t i = 0; i < r->len; i++)
		if (ring_at(r, i)->t_ns > now_ns - period_ns)
			sum += ring_at(r, i)->n;
	return sum > INT32_MAX ? INT32_MAX : (int32_t)sum;
}

/* ---- hpa ---- */

int hpa_init(struct hpa *h, const struct hpa_config *c, int64_t sync_ns, struct diag *d)
{
	memset(h, 0, sizeof(*h));
	if (!(c->tolerance >= 0.0 && c->tolerance < 1e6) || c->up_window_ns < 0 || c->down_window_ns < 0 ||
	    c->up_pods < 0 || !(c->up_percent >= 0.0) || c->up_period_ns <= 0 ||
	    !(c->down_percent >= 0.0 && c->down_percent <= 100.0) || c->down_period_ns <= 0 ||
	    sync_ns <= 0)
		return diag_set(d, DIAG_EINPUT,
				"autoscale: HPA settings out of range (expected tolerance >= 0, windows >= 0, "
				"scale-up pods and percent >= 0, scale-down percent in [0, 100], periods and "
				"the sync interval > 0)");
	int64_t longest = c->up_window_ns > c->down_window_ns ? c->up_window_ns : c->down_window_ns;
	int64_t period = c->up_period_ns > c->down_period_ns ? c->up_period_ns : c->down_period_ns;
	if (period > longest)
		longest = period;
	int64_t cap = longest / sync_ns + 4;
	if (cap > HPA_MAX_HISTORY)
		return diag_set(d, DIAG_EINPUT,
				"autoscale: a stabilisation window or policy period of %.0f s holds %lld syncs "
				"of %.3f s (expected at most %d: a shorter window or a longer "
				"autoscale.interval_s)",
				(double)longest / 1e9, (long long)(longest / sync_ns), (double)sync_ns / 1e9,
				HPA_MAX_HISTORY);
	h->c = *c;
	if (ring_init(&h->recs, (int32_t)cap) != 0 || ring_init(&h->ups, (int32_t)cap) != 0 ||
	    ring_init(&h->downs, (int32_t)cap) != 0) {
		hpa_release(h);
		return diag_set(d, DIAG_ENOMEM, "out of memory for the autoscaler's history");
	}
	return 0;
}

void hpa_release(struct hpa *h)
{
	free(h->recs.e);
	free(h->ups.e);
	free(h->downs.e);
	memset(h, 0, sizeof(*h));
}

void hpa_note(struct hpa *h, int64_t t_ns, int32_t n)
{
	if (h->recs.cap > 0)
		ring_push(&h->recs, t_ns, n);
}

/* The metric's recommendation (GetExternalPerPodMetricReplicas). */
static int32_t recommend(const struct hpa *h, int32_t current, double metric, double target)
{
	double want = ceil(metric / target - 1e-9);
	if (want < 0.0)
		want = 0.0;
	if (want > (double)INT32_MAX)
		want = (double)INT32_MAX;
	if (current == 0)
		return (int32_t)want;
	double ratio = metric / (target * (double)current);
	if (ratio >= 1.0 - h->c.tolerance && ratio <= 1.0 + h->c.tolerance)
		return current;
	return (int32_t)want;
}

int32_t hpa_sync(struct hpa *h, int64_t now_ns, int32_t current, double metric, double target,
		 int32_t min, int32_t max)
{
	const struct hpa_config *c = &h->c;
	int64_t keep = c->up_window_ns > c->down_window_ns ? c->up_window_ns : c->down_window_ns;
	ring_prune(&h->recs, now_ns - keep);
	ring_prune(&h->ups, now_ns - (c->up_period_ns > c->down_period_ns ? c->up_period_ns
									  : c->down_period_ns));
	ring_prune(&h->downs, now_ns - (c->up_period_ns > c->down_period_ns ? c->up_period_ns
									    : c->down_period_ns));
	int32_t desired;
	h->last_limited = false;
	if (current > max) {
		desired = max;
	} else if (current < min) {
		desired = min;
	} else {
		int32_t raw = recommend(h, current, metric, target);
		/* stabilise between the lowest recent recommendation (up window)
		 * and the highest (down window), the new one included */
		int32_t up = raw, down = raw;
		for (int32_t i = 0; i < h->recs.len; i++) {
			const struct hpa_stamp *r = ring_at(&h->recs, i);
			if (r->t_ns > now_ns - c->up_window_ns && r->n < up)
				up = r->n;
			if (r->t_ns > now_ns - c->down_window_ns && r->n > down)
				down = r->n;
		}
		ring_push(&h->recs, now_ns, raw);
		int32_t stable = current;
		if (stable < up)
			stable = up;
		if (stable > down)
			stable = down;
		h->last_raw = raw;
		h->last_stable = stable;
		desired = stable;
		if (stable > current) {
			int64_t start = (int64_t)current - ring_sum(&h->ups, now_ns, c->up_period_ns) +
					ring_sum(&h->downs, now_ns, c->up_period_ns);
			int64_t limit = INT32_MIN;
			if (c->up_pods > 0 && start + c->up_pods > limit)
				limit = start + c->up_pods;
			if (c->up_percent > 0.0) {
				double p = ceil((double)start * (1.0 + c->up_percent / 100.0));
				if (p > (double)limit)
					limit = p > (double)INT32_MAX ? INT32_MAX : (int64_t)p;
			}
			if (limit < current)
				limit = current;
			int64_t allowed = max < limit ? max : limit;
			if (stable > allowed) {
				desired = (int32_t)allowed;
				h->last_limited = true;
			}
		} else if (stable < current) {
			int64_t start = (int64_t)current - ring_sum(&h->ups, now_ns, c->down_period_ns) +
					ring_sum(&h->downs, now_ns, c->down_period_ns);
			/* the one Percent policy; int32 conversion truncates */
			int64_t limit = (int64_t)((double)start * (1.0 - c->down_percent / 100.0));
			if (limit > current)
				limit = current;
			int64_t allowed = min > limit ? min : limit;
			if (stable < allowed) {
				desired = (int32_t)allowed;
				h->last_limited = true;
			}
		}
	}
	if (desired > current)
		ring_push(&h->ups, now_ns, desired - current);
	else if (desired < current)
		ring_push(&h->downs, now_ns, current - desired);
	return desired;
}

/* ---- keda ---- */

int32_t keda_poll(struct keda *k, int64_t now_ns, int32_t current, double metric, double activation,
		  int64_t cooldown_ns, int32_t min)
{
	if (metric > activation) {
		k->ever_active = true;
		k->last_active_ns = now_ns;
		if (current == 0)
			return min > 0 ? min : 1;
		return current;
	}
	if (current > 0 && min == 0) {
		if (!k->ever_active || k->last_active_ns + cooldown_ns < now_ns)
			return 0;
		return current;
	}
	if (current < min)
		return min;
	return current;
}
