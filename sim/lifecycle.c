/* SPDX-License-Identifier: Apache-2.0
 * lifecycle: replica states, faults and the autoscaler (see lifecycle.h). */
#include "sim/lifecycle.h"

#include "base/hash.h"
#include "sim/replica.h"
#include "sim/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const LIFE_NAMES[REP_N_LIFE] = {"up", "starting", "draining", "down", "off"};
static const char *const METRIC_NAMES[AUTOSCALE_N_METRICS] = {"queue", "kv", "inflight"};

const char *rep_life_name(int life)
{
	return life >= 0 && life < REP_N_LIFE ? LIFE_NAMES[life] : NULL;
}

const char *autoscale_metric_name(enum autoscale_metric m)
{
	return (unsigned)m < AUTOSCALE_N_METRICS ? METRIC_NAMES[m] : NULL;
}

bool autoscale_metric_parse(const char *s, enum autoscale_metric *out)
{
	for (int i = 0; i < AUTOSCALE_N_METRICS; i++)
		if (strcmp(s, METRIC_NAMES[i]) == 0) {
			*out = (enum autoscale_metric)i;
			return true;
		}
	return false;
}

void elastic_config_default(struct elastic_config *c)
{
	memset(c, 0, sizeof(*c));
	c->policy = AUTOSCALE_POLICY_COOLDOWN;
	c->metric = AUTOSCALE_INFLIGHT;
	hpa_config_default(&c->hpa);
	c->polling_ns = (int64_t)(KEDA_DEFAULT_POLLING_S * 1e9);
	c->activation = KEDA_DEFAULT_ACTIVATION;
	c->max_retries = FAULT_DEFAULT_MAX_RETRIES;
	c->seed = 1;
}

bool elastic_active(const struct elastic_config *c)
{
	return c->autoscale || c->n_faults > 0 || c->mtbf_ns > 0.0;
}

int32_t lifecycle_active(const struct sim *s)
{
	return s->n_life[REP_UP] + s->n_life[REP_STARTING];
}

static int push_bg(struct sim *s, int64_t t_ns, uint32_t kind, int32_t prio, void *obj, int64_t arg,
		   uint64_t gen)
{
	struct event e = {.t_ns = t_ns, .prio = prio, .kind = kind, .obj = obj, .arg = arg, .gen = gen};
	if (evq_push(&s->q, &e) != 0)
		return DIAG_ENOMEM;
	s->n_background++;
	return 0;
}

static void note_active(struct sim *s)
{
	int32_t a = lifecycle_active(s);
	if (a < s->el_stats.active_min)
		s->el_stats.active_min = a;
	if (a > s->el_stats.active_max)
		s->el_stats.active_max = a;
}

/* Move rep to state `to`, keeping the counts, the router and the outage
 * clock in step, and tell the sink. */
static void set_life(struct sim *s, struct replica *rep, int to)
{
	int from = rep->life;
	if (from == to)
		return;
	s->n_life[from]--;
	s->n_life[to]++;
	rep->life = to;
	router_set_up(&s->router, rep->id, to == REP_UP);
	if (to == REP_DOWN && s->n_life[REP_DOWN] == 1)
		s->outage_since_ns = s->now_ns;
	if (from == REP_DOWN && s->n_life[REP_DOWN] == 0)
		s->el_stats.outage_ns += s->now_ns - s->outage_since_ns;
	if (to == REP_OFF || to == REP_DOWN)
		rep->fault_gen++; /* no rate fault while not serving */
	note_active(s);
	if (s->sink.replica) {
		struct res_replica rec = {.replica = rep->id, .t_ns = s->now_ns, .from = from, .to = to};
		s->sink.replica(s->sink.ctx, &rec);
	}
}

/* Exponential time to failure from the seeded stream, ns. */
static int64_t draw_ttf(struct sim *s)
{
	uint64_t x = hash_combine(s->el.seed ^ 0x6661756c74ULL, s->fault_draws++);
	double u = ((double)(x >> 11) + 0.5) * 0x1.0p-53; /* (0, 1) */
	double t = -log(u) * s->el.mtbf_ns;
	return t < 4e18 ? (int64_t)t : INT64_C(4000000000000000000);
}

/* rep is serving now: arm its next rate fault. */
static int arm_rate_fault(struct sim *s, struct replica *rep)
{
	if (!(s->el.mtbf_ns > 0.0))
		return 0;
	return push_bg(s, s->now_ns + draw_ttf(s), EV_RATE_FAULT, PRIO_LIFE, rep, 0, rep->fault_gen);
}

static int start_replica(struct sim *s, struct replica *rep)
{
	set_life(s, rep, REP_STARTING);
	s->el_stats.starts++;
	int64_t t = s->el.pool_startup_ns[rep->pool] > 0 ? s->el.pool_startup_ns[rep->pool]
							   : s->el.startup_ns;
	return push_bg(s, s->now_ns + t, EV_STARTED, PRIO_LIFE, rep, 0, ++rep->start_gen);
}

static void go_off(struct sim *s, struct replica *rep)
{
	set_life(s, rep, REP_OFF);
	replica_model_reset(rep);
	if (replica_kv_used(rep) == 0 && replica_kv_reserved(rep) == 0) {
		replica_retain_tick(rep, s->now_ns); /* its retained blocks go too */
		replica_kv_reset(rep); /* a released machine keeps no cache */
	}
}

int lifecycle_start(struct sim *s, struct diag *d)
{
	struct elastic_config *c = &s->el;
	s->as.hpa_parked_ns = -1;
	if (c->autoscale) {
		if (c->max_replicas == 0 || c->max_replicas > s->n_replicas)
			c->max_replicas = s->n_replicas;
		if (c->min_replicas < 0 || c->min_replicas > c->max_replicas || !(c->target > 0.0) ||
		    c->interval_ns <= 0 || c->cooldown_ns < 0 ||
		    (unsigned)c->policy >= AUTOSCALE_N_POLICIES)
			return diag_set(d, DIAG_EINPUT,
					"autoscale settings out of range (expected 0 <= autoscale.min_replicas <= autoscale.max_replicas <= replicas, autoscale.target > 0, autoscale.interval_s > 0)");
		if (c->policy != AUTOSCALE_POLICY_COOLDOWN) {
			if (c->metric_lag_ns < 0 || !(c->activation >= 0.0) ||
			    (c->policy == AUTOSCALE_POLICY_KEDA && c->polling_ns <= 0))
				return diag_set(d, DIAG_EINPUT,
						"autoscale settings out of range (expected autoscale.metric_lag_s >= 0, autoscale.activation_target >= 0, autoscale.polling_interval_s > 0)");
			int rc = hpa_init(&s->as.hpa, &c->hpa, c->interval_ns, d);
			if (rc != 0)
				return rc;
		}
	}
	bool bad_start = c->startup_ns < 0;
	for (int32_t p = 0; p < ELASTIC_MAX_POOLS; p++)
		bad_start |= c->pool_startup_ns[p] < 0;
	if (bad_start || c->max_retries < 0 || c->mtbf_ns < 0.0 || c->repair_ns < 0)
		return diag_set(d, DIAG_EINPUT, "start-up, retry or fault-rate settings out of range");
	for (int32_t k = 0; k < c->n_faults; k++)
		if (c->faults[k].replica < 0 || c->faults[k].replica >= s->n_replicas ||
		    c->faults[k].at_ns < 0 || c->faults[k].repair_ns < 0)
			return diag_set(d, DIAG_EINPUT,
					"faults.list[%d]: replica %d (expected a replica in [0, %d) and times >= 0)",
					(int)k, (int)c->faults[k].replica, (int)s->n_replicas);
	for (int32_t i = 0; i < s->n_replicas; i++)
		s->replicas[i].life = REP_UP;
	s->n_life[REP_UP] = s->n_replicas;
	s->el_stats.active_min = s->el_stats.active_max = s->n_replicas;
	int rc = 0;
	if (c->autoscale) {
		for (int32_t i = c->min_replicas; i < s->n_replicas; i++)
			go_off(s, &s->replicas[i]);
		s->el_stats.active_min = s->el_stats.active_max = lifecycle_active(s);
		rc = push_bg(s, c->interval_ns, EV_AUTOSCALE, PRIO_AUTOSCALE, NULL, 0, 0);
		if (rc == 0 && c->policy == AUTOSCALE_POLICY_KEDA)
			rc = push_bg(s, c->polling_ns, EV_POLL, PRIO_AUTOSCALE, NULL, 0, 0);
	}
	for (int32_t i = 0; rc == 0 && i < s->n_replicas; i++)
		if (s->replicas[i].life == REP_UP)
			rc = arm_rate_fault(s, &s->replicas[i]);
	for (int32_t k = 0; rc == 0 && k < c->n_faults; k++)
		rc = push_bg(s, c->faults[k].at_ns, EV_FAULT, PRIO_LIFE, NULL, k, 0);
	if (rc != 0)
		return diag_set(d, rc, "out of memory for the lifecycle events");
	return 0;
}

/* rep fails now for repair_ns: its calls go back through the router. */
static int fail_replica(struct sim *s, struct replica *rep, int64_t repair_ns)
{
	if (rep->life == REP_DOWN || rep->life == REP_OFF) {
		s->el_stats.faults_skipped++;
		return 0;
	}
	if (++s->el_stats.faults > FAULT_MAX_FAILURES) {
		s->err_limit = "more than 1,000,000 replica failures (expected a fault rate a run can "
			       "hold: raise faults.mtbf_h, or replay a shorter span)";
		return DIAG_EINPUT;
	}
	if (rep->life == REP_STARTING)
		rep->start_gen++; /* its start never completes */
	/* out of the router first, so no retry comes back here */
	set_life(s, rep, REP_DOWN);
	int64_t n = 0;
	struct sreq **buf = s->scratch;
	int64_t need = (int64_t)rep->n_running + rep->wq_len;
	struct sreq **own = NULL;
	if (need > s->cfg.max_num_seqs) { /* the scratch holds max_num_seqs */
		own = malloc((size_t)need * sizeof(*own));
		if (!own)
			return DIAG_ENOMEM;
		buf = own;
	}
	replica_fail(s, rep, buf, &n);
	for (int64_t j = 0; j < n; j++)
		router_done(&s->router, rep->id, buf[j]);
	int rc = 0;
	for (int64_t j = 0; j < n; j++) {
		int r2 = sim_retry(s, buf[j]);
		if (r2 != 0 && rc == 0)
			rc = r2;
	}
	free(own);
	if (rc == 0 && s->n_backends && s->router.q_len)
		sim_router_drain(s); /* calls waiting at the router may fall back now */
	if (rc != 0)
		return rc;
	return push_bg(s, s->now_ns + repair_ns, EV_REPAIRED, PRIO_LIFE, rep, 0, 0);
}

/* ---- fault detection (faults.detection; lifecycle.h) ----
 * Kept apart from fail_replica: with a health probe, the failed replica
 * first hangs.  sim_hang_begin (sim.c) takes the calls it holds out of it
 * without telling the router, fail_replica then marks it down as ever
 * (nothing left to retry), and sim_hang_route keeps the router sending it
 * calls until the probes notice. */
static int fault_replica(struct sim *s, struct replica *rep, int64_t repair_ns)
{
	if (s->el.detection != FAULT_DETECT_PROBE ||
	    (rep->life != REP_UP && rep->life != REP_DRAINING))
		return fail_replica(s, rep, repair_ns);
	bool was_up = rep->life == REP_UP;
	int rc = sim_hang_begin(s, rep, repair_ns);
	if (rc == 0)
		rc = fail_replica(s, rep, repair_ns);
	if (rc == 0)
		sim_hang_route(s, rep, was_up);
	return rc;
}

/* ---- autoscaler ---- */

static double metric_total(const struct sim *s)
{
	double total = 0.0;
	switch (s->el.metric) {
	case AUTOSCALE_QUEUE:
		total = (double)s->router.q_len;
		for (int32_t i = 0; i < s->n_replicas; i++)
			total += (double)s->replicas[i].wq_len;
		break;
	case AUTOSCALE_INFLIGHT:
		total = (double)s->router.q_len;
		for (int32_t i = 0; i < s->n_replicas; i++)
			total += (double)s->router.out_reqs[i];
		break;
	case AUTOSCALE_KV:
		for (int32_t i = 0; i < s->n_replicas; i++)
			if (s->replicas[i].life == REP_UP)
				total += (double)replica_kv_used(&s->replicas[i]) /
					 (double)s->replicas[i].kv.total_blocks;
		/* calls waiting with no replica up still ask for one */
		if (total == 0.0 && s->router.q_len > 0)
			total = s->el.target;
		break;
	case AUTOSCALE_N_METRICS:
		break;
	}
	return total;
}

/* Among replicas in state `life`, the one to scale in: fewest outstanding
 * calls, highest index on a tie; -1 if none. */
static int32_t scale_in_victim(const struct sim *s, int life)
{
	int32_t best = -1;
	for (int32_t i = s->n_replicas - 1; i >= 0; i--)
		if (s->replicas[i].life == life &&
		    (best < 0 || s->router.out_reqs[i] < s->router.out_reqs[best]))
			best = i;
	return best;
}

/* Start or stop replicas until `desired` are up or starting: the
 * lowest-numbered off replicas start; starting replicas are cancelled
 * first, then the up replicas with the fewest outstanding calls drain. */
static int scale_to(struct sim *s, int32_t desired)
{
	int rc = 0;
	if (desired > lifecycle_active(s)) {
		int64_t starts0 = s->el_stats.starts;
		for (int32_t i = 0; i < s->n_replicas && lifecycle_active(s) < desired && rc == 0; i++)
			if (s->replicas[i].life == REP_OFF)
				rc = start_replica(s, &s->replicas[i]);
		if (s->el_stats.starts != starts0) { /* none, when every slot is down */
			s->el_stats.scale_outs++;
			s->as_last_action_ns = s->now_ns;
		}
	} else if (desired < lifecycle_active(s)) {
		s->el_stats.scale_ins++;
		s->as_last_action_ns = s->now_ns;
		while (lifecycle_active(s) > desired) {
			int32_t i = scale_in_victim(s, REP_STARTING);
			if (i >= 0) {
				s->replicas[i].start_gen++;
				go_off(s, &s->replicas[i]);
				continue;
			}
			i = scale_in_victim(s, REP_UP);
			set_life(s, &s->replicas[i], REP_DRAINING);
			lifecycle_on_finish(s, &s->replicas[i]);
		}
	}
	return rc;
}

/* Nothing can change until a call arrives: none in flight, at the floor,
 * nothing starting or draining, no reading of a call queued behind the
 * metric lag (a reading of 0 at the floor changes nothing under any
 * policy: the HPA stays at min, KEDA at zero or min). */
static bool settled(const struct sim *s)
{
	return s->live_reqs == 0 && lifecycle_active(s) == s->el.min_replicas &&
	       s->n_life[REP_STARTING] == 0 && s->n_life[REP_DRAINING] == 0 && s->as.pending_live == 0;
}

/* The cooldown policy: one evaluation. */
static int evaluate(struct sim *s)
{
	const struct elastic_config *c = &s->el;
	s->el_stats.evaluations++;
	int32_t active = lifecycle_active(s);
	double total = metric_total(s);
	double want = ceil(total / c->target - 1e-9);
	int32_t desired = want > (double)c->max_replicas ? c->max_replicas
			  : want < (double)c->min_replicas ? c->min_replicas
							  : (int32_t)want;
	int rc = 0;
	if (desired > active ||
	    (desired < active && s->now_ns - s->as_last_action_ns >= c->cooldown_ns))
		rc = scale_to(s, desired);
	if (rc != 0)
		return rc;
	/* asleep while nothing can change: no call, at the floor, settled */
	if (settled(s)) {
		s->as_parked = true;
		return 0;
	}
	return push_bg(s, s->now_ns + c->interval_ns, EV_AUTOSCALE, PRIO_AUTOSCALE, NULL, 0, 0);
}

enum { LOOP_HPA = 0, LOOP_KEDA = 1 };

/* hpa and keda: act on metric value v of loop `loop` (read metric_lag_ns
 * ago). */
static int decide(struct sim *s, int loop, double v)
{
	const struct elastic_config *c = &s->el;
	s->el_stats.evaluations++;
	int32_t cur = lifecycle_active(s);
	int32_t desired;
	if (loop == LOOP_KEDA) {
		desired = keda_poll(&s->as.keda, s->now_ns, cur, v, c->activation, c->cooldown_ns,
				    c->min_replicas);
		if (desired > 0 && cur == 0)
			s->el_stats.activations++;
		if (desired == 0 && cur > 0)
			s->el_stats.deactivations++;
	} else {
		int32_t lo = c->min_replicas;
		if (c->policy == AUTOSCALE_POLICY_KEDA) {
			if (cur == 0)
				return 0; /* the HPA is disabled at zero: KEDA's to wake */
			if (lo < 1)
				lo = 1;
		}
		desired = hpa_sync(&s->as.hpa, s->now_ns, cur, v, c->target, lo, c->max_replicas);
	}
	return desired != cur ? scale_to(s, desired) : 0;
}

/* hpa and keda: read the metric now and act on it now or, with a metric
 * lag, when the reading reaches the autoscaler. */
static int sample(struct sim *s, int loop)
{
	double v = metric_total(s);
	if (s->el.metric_lag_ns == 0)
		return decide(s, loop, v);
	int64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	s->as.pending_live += v != 0.0;
	return push_bg(s, s->now_ns + s->el.metric_lag_ns, EV_DECIDE, PRIO_AUTOSCALE, NULL, bits,
		       (uint64_t)loop);
}

/* hpa and keda: an HPA sync tick; asleep instead while settled (its
 * reading would be 0 and change nothing). */
static int hpa_tick(struct sim *s)
{
	if (settled(s)) {
		s->as_parked = true;
		s->as.hpa_parked_ns = s->now_ns;
		return 0;
	}
	int rc = sample(s, LOOP_HPA);
	if (rc != 0)
		return rc;
	return push_bg(s, s->now_ns + s->el.interval_ns, EV_AUTOSCALE, PRIO_AUTOSCALE, NULL, 0, 0);
}

/* keda: a poll tick, likewise. */
static int poll_tick(struct sim *s)
{
	if (settled(s)) {
		s->as.poll_parked = true;
		return 0;
	}
	int rc = sample(s, LOOP_KEDA);
	if (rc != 0)
		return rc;
	return push_bg(s, s->now_ns + s->el.polling_ns, EV_POLL, PRIO_AUTOSCALE, NULL, 0, 0);
}

int lifecycle_on_arrival(struct sim *s)
{
	int rc = 0;
	if (s->as_parked) {
		s->as_parked = false;
		/* the next tick of the evaluation clock */
		int64_t iv = s->el.interval_ns;
		int64_t t = (s->now_ns / iv + 1) * iv;
		/* the syncs slept through saw no call: recommendations of 0 (the
		 * HPA runs at the floor unless KEDA holds it at zero), which only
		 * a scale-up window reads */
		bool hpa_on = s->el.policy == AUTOSCALE_POLICY_HPA ||
			      (s->el.policy == AUTOSCALE_POLICY_KEDA && lifecycle_active(s) > 0);
		if (hpa_on && t - iv > s->as.hpa_parked_ns)
			hpa_note(&s->as.hpa, t - iv + s->el.metric_lag_ns, 0);
		rc = push_bg(s, t, EV_AUTOSCALE, PRIO_AUTOSCALE, NULL, 0, 0);
	}
	if (rc == 0 && s->as.poll_parked) {
		s->as.poll_parked = false;
		int64_t pv = s->el.polling_ns;
		rc = push_bg(s, (s->now_ns / pv + 1) * pv, EV_POLL, PRIO_AUTOSCALE, NULL, 0, 0);
	}
	return rc;
}

void lifecycle_release(struct sim *s)
{
	hpa_release(&s->as.hpa);
}

void lifecycle_on_finish(struct sim *s, struct replica *rep)
{
	if (rep->life == REP_DRAINING && s->router.out_reqs[rep->id] == 0)
		go_off(s, rep);
}

int lifecycle_event(struct sim *s, uint32_t kind, void *obj, int64_t arg, uint64_t gen)
{
	struct replica *rep = obj;
	switch (kind) {
	case EV_FAULT: {
		const struct fault_spec *f = &s->faults[arg];
		return fault_replica(s, &s->replicas[f->replica], f->repair_ns);
	}
	case EV_RATE_FAULT:
		if (gen != rep->fault_gen || (rep->life != REP_UP && rep->life != REP_DRAINING))
			return 0;
		return fault_replica(s, rep, s->el.repair_ns);
	case EV_REPAIRED:
		/* with an autoscaler the repaired machine is there to be used;
		 * without, it serves again after a start-up */
		if (s->el.autoscale) {
			go_off(s, rep);
			return 0;
		}
		return start_replica(s, rep);
	case EV_STARTED:
		if (gen != rep->start_gen || rep->life != REP_STARTING)
			return 0;
		replica_model_reset(rep); /* a fresh engine: on demand, no model yet */
		rep->idle_since_ns = s->now_ns;
		set_life(s, rep, REP_UP);
		int rc = arm_rate_fault(s, rep);
		if (rc == 0 && s->router.q_len)
			sim_router_drain(s);
		return rc != 0 ? rc : s->err;
	case EV_AUTOSCALE:
		return s->el.policy == AUTOSCALE_POLICY_COOLDOWN ? evaluate(s) : hpa_tick(s);
	case EV_POLL:
		return poll_tick(s);
	case EV_DECIDE: {
		double v;
		memcpy(&v, &arg, sizeof(v));
		s->as.pending_live -= v != 0.0;
		return decide(s, (int)gen, v);
	}
	}
	return DIAG_EINTERNAL;
}
