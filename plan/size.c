/* SPDX-License-Identifier: Apache-2.0
 * size: gallop-and-bisect search for the smallest deployment meeting the
 * objectives, per hardware option (see size.h). */
#include "plan/size.h"

#include "base/clause.h"
#include "base/diag.h"
#include "base/jsonw.h"
#include "base/pool.h"
#include "models/catalog.h"
#include "models/perf_model.h"
#include "plan/run.h"
#include "models/engine.h"
#include "models/uncert.h"
#include "reports/backends.h"
#include "reports/costing.h"
#include "reports/metrics.h"
#include "reports/output.h"
#include "sim/router.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A replica shape: the scenario with its hardware and TP/PP set, and the
 * deployment of one replica built from it (deploy_run varies the count).
 * Disaggregated (dep.pd_on): one replica in each of the prefill and decode
 * pools (dep.pd's), both of this shape on this hardware. */
struct shape {
	struct scenario sc;
	struct deployment dep;
	int32_t tp, pp;                   /* of every replica */
};

/* GPUs a replica of shape sh takes. */
static int32_t shape_gpus(const struct shape *sh)
{
	return sh->tp * sh->pp;
}

/* The figure of metrics_stats a percentile names. */
static double stat_at(const struct metrics_stats *st, int percentile)
{
	switch (percentile) {
	case 50: return st->median;
	case 90: return st->p90;
	case 95: return st->p95;
	default: return st->p99;
	}
}

static double objective_value(const struct slo_objective *o, const struct metrics_summary *m)
{
	const struct metrics_stats *st = o->metric == SLO_TTFT   ? &m->ttft_ms
					 : o->metric == SLO_TPOT ? &m->tpot_ms
								 : &m->e2el_ms;
	return stat_at(st, o->percentile);
}

/* The first limit of each metric, for goodput (metrics_set_slo). */
static double first_limit(const struct slo *slo, enum slo_metric m)
{
	for (int i = 0; i < slo->n; i++)
		if (slo->obj[i].metric == m)
			return slo->obj[i].limit_ms;
	return 0;
}

/* Replay replicate k of candidate e on shape sh: fills e->fig[k] only
 * (other replicates may be filling theirs at the same time) and, when it
 * missed, why[0..why_size) with the reason. */
static int replay_one(const struct size_setup *s, const struct size_result *res,
		      const struct shape *sh, int k, struct size_eval *e, char *why_out,
		      size_t why_size, struct diag *d)
{
	struct size_fig *f = &e->fig[k];
	memset(f, 0, sizeof(*f));
	struct replay_early early = {.slo = s->slo, .total_calls = res->total_calls[k]};
	struct run_setup rs = {
		.dep = &sh->dep,
		.replay = s->replay,
		/* N+F: replicas 0..F-1 fail as the replay starts and stay down,
		 * so the others carry the day */
		.vary = {.replicas = e->prefill ? 0 : e->replicas, .failed_replicas = s->redundancy},
		.own_slo = true,
		.slo_ttft_ms = first_limit(s->slo, SLO_TTFT),
		.slo_tpot_ms = first_limit(s->slo, SLO_TPOT),
	};
	if (e->prefill) {
		rs.vary.pool_replicas[sh->dep.pd.prefill_pool] = e->prefill;
		rs.vary.pool_replicas[sh->dep.pd.decode_pool] = e->decode;
	}
	rs.replay.trace_path = s->traces[k];
	rs.replay.seed = s->seeds[k];
	rs.replay.scale.seed = s->seeds[k];
	rs.replay.early = s->no_early ? NULL : &early;
	struct run_result *r = malloc(sizeof(*r));
	int rc = r ? run_replay(&rs, r, d) : diag_set(d, DIAG_ENOMEM, "out of memory");
	const struct replay_stats *st = r ? &r->st : NULL;
	const struct metrics_summary *sum = r ? &r->sum : NULL;
	for (int32_t i = 0; rc == 0 && r->bk && i + 1 < r->bsum.n; i++) {
		const struct backends_row *row = &r->bsum.rows[i + 1];
		f->api_calls[i] = row->calls;
		f->api_prompt_tokens[i] = row->prompt_tokens;
		f->api_cached_tokens[i] = row->cached_prompt_tokens;
		f->api_cache_write_tokens[i] = row->cache_write_tokens;
		f->api_output_tokens[i] = row->output_tokens;
		memcpy(f->api_class[i], row->by_class, sizeof(f->api_class[i]));
		f->api_clock_assumed[i] = row->clock_assumed;
	}
	if (rc == 0 && r->bk) {
		f->api_tasks = backends_api_tasks(r->bk);
		f->api_share = r->bsum.api_share;
	}
	if (rc == 0) {
		f->verdict = st->verdict;
		f->calls = sum->completed + sum->failed;
		f->failed = sum->failed;
		f->goodput = sum->request_goodput;
		f->busy = sum->gpu_busy_fraction;
		f->hit = sum->prefix_cache_hit_rate;
		f->ttft_p95_ms = sum->ttft_ms.p95;
		f->tpot_p50_ms = sum->tpot_ms.median;
		f->duration_s = sum->duration_s;
		f->output_tokens = (double)sum->output_tokens;
		f->prompt_tokens = sum->prompt_tokens;
		f->cached_tokens = sum->cached_prompt_tokens;
		f->tasks = sum->tasks;
		f->tasks_accept_known = sum->tasks_accept_known;
		f->tasks_accepted = sum->tasks_accepted;
		f->days = s->replay.scale.engineers > 0 ? st->scale.days : 0;
		f->miss_share = st->verdict_share;
		f->sim_s = st->verdict != REPLAY_RAN_TO_END ? (double)st->verdict_ns / 1e9
							    : sum->duration_s;
		f->events = st->sim.events;
		costing_usage(&f->usage, sum, NULL, e->replicas, shape_gpus(sh), 0, 0);
		bool met = st->verdict == REPLAY_RAN_TO_END && sum->failed == 0;
		const char *why = st->verdict_why;
		char buf[192];
		for (int i = 0; i < s->slo->n; i++) {
			const struct slo_objective *ob = &s->slo->obj[i];
			f->obj_ms[i] = objective_value(ob, sum);
			if (met && f->obj_ms[i] > ob->limit_ms) {
				char key[16];
				snprintf(buf, sizeof(buf), "%s %.1f ms over the limit of %g ms",
					 slo_key(ob, key, sizeof(key)), f->obj_ms[i], ob->limit_ms);
				why = buf;
				met = false;
			}
		}
		if (st->verdict == REPLAY_RAN_TO_END && sum->failed > 0) {
			snprintf(buf, sizeof(buf), "%lld calls failed", (long long)sum->failed);
			why = buf;
		}
		f->met = met;
		if (!met)
			snprintf(why_out, why_size, "%s%s", st->verdict == REPLAY_RAN_TO_END ? ""
				 : "stopped early: ", why);
	}
	if (r)
		run_release(r);
	free(r);
	return rc;
}

/* One replicate of a candidate, run as a pool task. */
struct rep_task {
	const struct size_setup *s;
	const struct size_result *res;
	const struct shape *sh;
	struct size_eval *e;              /* shared: this task writes fig[k] only */
	atomic_bool *done;                /* shared: done[j] once fig[j] is final */
	const atomic_bool *cancel;        /* the candidate's figures are not wanted */
	int32_t k, allowed;               /* allowed: misses the confidence allows */
	bool skipped;
	int rc;
	struct diag d;
	char why[256];
};

/* Replicate k runs unless the candidate was cancelled or the replicates
 * before it that have finished already missed more often than allowed: the
 * search would stop before k, and its figures would be thrown away.
 * (Skipping is only a saving: what is kept is decided in order afterwards,
 * so it does not depend on which replicate finished first.) */
static void rep_task_run(void *arg)
{
	struct rep_task *t = arg;
	int32_t misses = 0;
	for (int32_t j = 0; j < t->k; j++)
		if (atomic_load(&t->done[j]) && !t->e->fig[j].met)
			misses++;
	if (misses > t->allowed || atomic_load(t->cancel)) {
		t->skipped = true;
	} else {
		t->rc = replay_one(t->s, t->res, t->sh, t->k, t->e, t->why, sizeof(t->why), &t->d);
		if (t->rc != 0)
			t->e->fig[t->k].met = false;
	}
	atomic_store(&t->done[t->k], true);
}

/* A candidate being replayed: its replicates queued on s->pool as one
 * group, the figures gathered by cand_finish. */
struct cand {
	struct size_eval e;
	struct rep_task *t;
	atomic_bool *done;
	atomic_bool cancel;
	struct pool_group *g;
	int32_t need;                     /* replicates that must meet */
	bool started;
};

/* Queue the replicates of `replicas` replicas of shape sh (disaggregated:
 * `prefill` of them in the prefill pool, the others in the decode pool); 0
 * or DIAG_ENOMEM.  c must stay put until cand_finish. */
static int cand_start(const struct size_setup *s, const struct size_result *res,
		      const struct shape *sh, int32_t replicas, int32_t prefill, struct cand *c,
		      struct diag *d)
{
	memset(&c->e, 0, sizeof(c->e));
	struct size_eval *e = &c->e;
	e->tp = sh->tp;
	e->pp = sh->pp;
	e->replicas = replicas;
	if (sh->dep.pd_on) {
		e->prefill = prefill;
		e->decode = replicas - prefill;
	}
	e->gpus_per_replica = shape_gpus(sh);
	e->gpus = replicas * shape_gpus(sh);
	e->kv_cache_tokens = sh->dep.pool[sh->dep.pd_on ? sh->dep.pd.decode_pool : 0]
				     .cfg.kv_cache_tokens;
	int32_t k_all = s->replicates;
	c->need = (int32_t)ceil(s->confidence * k_all - 1e-9);
	if (c->need < 1)
		c->need = 1;
	c->t = calloc((size_t)k_all, sizeof(*c->t));
	c->done = calloc((size_t)k_all, sizeof(*c->done));
	if (!c->t || !c->done) {
		free(c->t);
		free(c->done);
		c->t = NULL;
		c->done = NULL;
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	atomic_init(&c->cancel, false);
	c->g = pool_group_new(s->pool);
	c->started = true;
	for (int32_t k = 0; k < k_all; k++)
		atomic_init(&c->done[k], false);
	for (int32_t k = 0; k < k_all; k++) {
		c->t[k] = (struct rep_task){.s = s, .res = res, .sh = sh, .e = e, .done = c->done,
					    .cancel = &c->cancel, .k = k,
					    .allowed = k_all - c->need};
		diag_init(&c->t[k].d);
		pool_run(c->g, rep_task_run, &c->t[k]);
	}
	return 0;
}

/* Wait for c's replicates.  keep: gather them in order, stopping (as a
 * loop one after another would) at the first replicate after which the
 * confidence can no longer be reached, and count the candidate in opt (its
 * path, replays and events); 0 or the first replicate's error.  Not keep
 * (a candidate the search turned out not to need): the replicates not yet
 * started are skipped and nothing is counted. */
static int cand_finish(const struct size_setup *s, struct size_option *opt, struct cand *c,
		       bool keep, struct diag *d)
{
	if (!c->started)
		return 0;
	c->started = false;
	if (!keep)
		atomic_store(&c->cancel, true);
	pool_group_finish(c->g);
	struct size_eval *e = &c->e;
	int32_t k_all = s->replicates;
	int rc = 0;
	for (int32_t k = 0; keep && k < k_all; k++) {
		assert(!c->t[k].skipped);
		if (c->t[k].rc != 0) {
			rc = diag_set(d, c->t[k].rc, "%s", c->t[k].d.msg);
			break;
		}
		e->ran++;
		opt->replays++;
		opt->events += e->fig[k].events;
		if (e->fig[k].met)
			e->met++;
		else if (!e->why[0])
			snprintf(e->why, sizeof(e->why), "%s", c->t[k].why);
		if (e->ran - e->met > k_all - c->need)
			break; /* the confidence can no longer be reached */
	}
	/* replicates past the stop ran (or not) only for lack of knowing it
	 * yet; nothing of them is kept */
	for (int32_t k = e->ran; k < SIZE_MAX_REPLICATES; k++)
		memset(&e->fig[k], 0, sizeof(e->fig[k]));
	free(c->t);
	free(c->done);
	c->t = NULL;
	c->done = NULL;
	if (rc != 0 || !keep)
		return rc;
	e->meets = e->met >= c->need;
	if (opt->path && opt->n_path < SIZE_MAX_PATH)
		opt->path[opt->n_path++] = *e;
	return 0;
}

/* Replay the candidate of `replicas` replicas of shape sh (`prefill` of
 * them prefill replicas when disaggregated) into *e. */
static int evaluate(const struct size_setup *s, const struct size_result *res, struct size_option *opt,
		    const struct shape *sh, int32_t replicas, int32_t prefill, struct size_eval *e,
		    struct diag *d)
{
	struct cand *c = calloc(1, sizeof(*c));
	if (!c)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	int rc = cand_start(s, res, sh, replicas, prefill, c, d);
	if (rc == 0)
		rc = cand_finish(s, opt, c, true, d);
	if (rc == 0)
		*e = c->e;
	free(c);
	return rc;
}

/* Whether a pool of sc fixes its own TP or PP. */
static bool pools_fix_shape(const struct scenario *sc)
{
	for (int32_t i = 0; i < sc->n_pools; i++)
		if (scenario_pool_sets(sc, i, "tensor_parallel_size") ||
		    scenario_pool_sets(sc, i, "pipeline_parallel_size"))
			return true;
	return false;
}

/* Shapes a replica of hardware hw can take, as (tp, pp) pairs. */
static int shapes_of(const struct scenario *base, const struct cat_hardware *hw, int32_t tp[4],
		     int32_t pp[4])
{
	if (base->tensor_parallel_size || base->pipeline_parallel_size || pools_fix_shape(base) ||
	    (hw->system_kind && hw->device_count > 1)) {
		tp[0] = base->tensor_parallel_size; /* 0: deploy_resolve decides */
		pp[0] = base->pipeline_parallel_size;
		return 1;
	}
	static const int32_t TPS[] = {1, 2, 4, 8};
	int32_t most = catalog_replica_gpus_max(hw); /* one chip: no TP across units */
	int n = 0;
	for (int i = 0; i < 4; i++) {
		if (most > 0 && TPS[i] > most)
			break;
		tp[n] = TPS[i];
		pp[n++] = 1;
	}
	return n;
}

/* Build shape (tp, pp) of hardware id; 1 if the memory model or the
 * engine rules it out (the reason appended to opt->pruned), 0 if it fits
 * (release sh->dep), or an error. */
static int shape_init(const struct size_setup *s, const char *hw, int32_t tp, int32_t pp,
		      struct shape *sh, struct size_option *opt, struct diag *d)
{
	memset(sh, 0, sizeof(*sh));
	sh->sc = *s->base;
	snprintf(sh->sc.hardware, sizeof(sh->sc.hardware), "%s", hw);
	sh->sc.tensor_parallel_size = tp;
	sh->sc.pipeline_parallel_size = pp;
	sh->sc.replicas = 1;
	/* disaggregated: both pools on this option, one replica each to start
	 * (the search's counts replace them) */
	for (int32_t i = 0; i < sh->sc.n_pools; i++) {
		scenario_pool_unset(&sh->sc, i, "hardware");
		scenario_pool_unset(&sh->sc, i, "replicas");
	}
	int rc = deploy_resolve(&sh->sc, s->cat, NULL, d);
	if (rc != 0)
		return rc;
	snprintf(opt->engine_profile, sizeof(opt->engine_profile), "%s", sh->sc.engine_profile);
	struct diag sd;
	diag_init(&sd);
	bool unfit = false;
	struct deploy_opts o = {.prices = s->prices, .local_only = s->local_only, .unfit = &unfit};
	rc = deploy_build(&sh->dep, &sh->sc, s->cat, &o, NULL, &sd);
	if (rc == 0 && s->bands && !opt->extrapolation_set) {
		const struct perf_model *pm = &sh->dep.pool[0].pm;
		const struct cat_hardware *h = catalog_hardware(s->cat, pm->hardware_id);
		struct uncert_point pt = { h ? catalog_package_kind(h) : NULL,
					   h ? catalog_memory_kind(h) : NULL, pm->weight_format_id,
					   pm->engine_id };
		struct uncert_band none = { 0 };
		uncert_widen(s->bands, &pt, &none, opt->extrapolation, sizeof(opt->extrapolation));
		opt->extrapolation_set = true;
	}
	if (rc != 0 && unfit) {
		struct clause_list cl;
		clause_resume(&cl, opt->pruned, sizeof(opt->pruned));
		clause_add(&cl, "TP%d/PP%d: %s", sh->sc.tensor_parallel_size,
			   sh->sc.pipeline_parallel_size, sd.msg);
		return 1;
	}
	if (rc != 0)
		return diag_set(d, rc, "%s", sd.msg);
	bool pd = sh->dep.pd_on;
	const struct perf_model *p = &sh->dep.pool[pd ? sh->dep.pd.prefill_pool : 0].pm;
	const struct perf_model *q = &sh->dep.pool[pd ? sh->dep.pd.decode_pool : 0].pm;
	if (p->tp != q->tp || p->pp != q->pp) {
		rc = diag_set(d, DIAG_EINPUT, "%s: disaggregation: the prefill pool runs TP%d/PP%d, "
			      "the decode pool TP%d/PP%d: the search counts GPUs in replicas of one "
			      "shape (expected the same tensor_parallel_size and "
			      "pipeline_parallel_size in both pools)", s->base->source, (int)p->tp,
			      (int)p->pp, (int)q->tp, (int)q->pp);
		deploy_release(&sh->dep);
		return rc;
	}
	sh->tp = q->tp;
	sh->pp = q->pp;
	return 0;
}

/* Keep the largest candidate that missed as the closest miss. */
static void note_miss(struct size_option *opt, const struct size_eval *e)
{
	if (!opt->have_closest || e->gpus >= opt->closest.gpus) {
		opt->closest = *e;
		opt->have_closest = true;
	}
}

/* Say why the gallop on e's shape ended when doubling the replicas (prev_r
 * to e->replicas) did not help: what it saw at both counts under the
 * scenario's router, and what that points to.  A falling hit rate means
 * the router spread the sessions' prefixes over the replicas, and a P95
 * TTFT that rose means the extra replicas did harm; only when neither
 * happened is the miss put on the calls themselves. */
static void stall_note(const struct size_setup *s, struct clause_list *cl,
		       const struct size_eval *e, int32_t prev_r, const char *stall,
		       double prev_ttft, double ttft, double prev_hit, double hit, bool stopped)
{
	bool lost_hits = hit < prev_hit - 0.01;
	bool worse = ttft > prev_ttft;
	const char *verdict =
		lost_hits ? "more replicas lowered the prefix-cache hit rate: this router spread the "
			    "sessions' prefixes over them (router.policy)"
		: worse ? "more replicas made the TTFT tail worse though the hit rate held"
			: "the hit rate held: single calls on this shape miss the objectives";
	clause_add(cl, "TP%d/PP%d, router %s: %d replicas did %s than %d (%s); P95 TTFT %.0f ms "
		   "at %d, %.0f ms at %d, prefix-cache hit rate %.1f%% at %d, %.1f%% at %d%s; %s",
		   e->tp, e->pp, router_policy_name(s->base->router.policy), e->replicas,
		   worse ? "no better" : "little better", prev_r, stall, prev_ttft, prev_r, ttft,
		   e->replicas, 100 * prev_hit, prev_r, 100 * hit, e->replicas,
		   stopped ? " (of the calls finished when the replays stopped)" : "", verdict);
}

/* What the gallop saw at one count. */
struct gallop_seen {
	int32_t r;                        /* replicas; 0: nothing seen yet */
	double share, ratio, ttft, hit;
	bool stopped;
};

/* Whether the gallop ends at e, a miss, after prev (size.h says when):
 * if so, why goes to opt->stalled.  *now gets what e showed. */
static bool gallop_stalled(const struct size_setup *s, struct size_option *opt,
			   const struct size_eval *e, const struct gallop_seen *prev,
			   struct gallop_seen *now)
{
	*now = (struct gallop_seen){
		.r = e->replicas,
		.share = size_eval_median(e, offsetof(struct size_fig, miss_share)),
		.ratio = size_eval_worst_ratio(s->slo, e),
		.ttft = size_eval_median(e, offsetof(struct size_fig, ttft_p95_ms)),
		.hit = size_eval_median(e, offsetof(struct size_fig, hit)),
		.stopped = e->fig[0].verdict != REPLAY_RAN_TO_END,
	};
	bool rejected = false;
	for (int32_t k = 0; k < e->ran; k++)
		rejected = rejected || e->fig[k].verdict == REPLAY_STOPPED_FAILED ||
			   e->fig[k].failed > 0;
	const char *stall = rejected ? "calls were rejected"
			    : prev->r && now->stopped && prev->stopped && now->share > 0.95 * prev->share
				? "nearly the same share of calls missed"
			    : prev->r && !now->stopped && !prev->stopped && now->ratio > 0.99 * prev->ratio
				? "the worst objective came no nearer its limit"
				: NULL;
	if (!stall)
		return false;
	struct clause_list cl;
	clause_resume(&cl, opt->stalled, sizeof(opt->stalled));
	if (rejected)
		clause_add(&cl, "TP%d/PP%d at %d replicas: calls were rejected, which more replicas "
			   "of this shape do not change", e->tp, e->pp, e->replicas);
	else
		stall_note(s, &cl, e, prev->r, stall, prev->ttft, now->ttft, prev->hit, now->hit,
			   now->stopped);
	return true;
}

/* The most replicas of shape sh a search tries: --max-replicas (or the
 * default), and fewer than max_gpus GPUs (0: no bound). */
static int32_t replica_cap(const struct size_setup *s, const struct shape *sh, int32_t max_gpus)
{
	int32_t cap = s->max_replicas > 0 ? s->max_replicas : SIZE_DEFAULT_MAX_REPLICAS;
	if (max_gpus > 0 && (max_gpus - 1) / shape_gpus(sh) < cap)
		cap = (max_gpus - 1) / shape_gpus(sh);
	return cap;
}

/* Gallop then bisect on one shape, below max_gpus (0: no bound).  With
 * threads to spare (s->pool has at least twice the jobs that the options
 * and replicates keep busy) the gallop looks one count ahead: the next
 * count is replayed while the current one is, and dropped, unseen and
 * uncounted, when the current one ends the gallop. */
static int search_shape(const struct size_setup *s, const struct size_result *res,
			struct size_option *opt, const struct shape *sh, int32_t max_gpus,
			struct size_eval *scratch, struct diag *d)
{
	int32_t cap = replica_cap(s, sh, max_gpus);
	/* with R replicas failed, R replicas or fewer serve nothing: the gallop
	 * steps 1, 2, 4, ... above R */
	int32_t base = s->redundancy;
	int32_t lo = base, hi = 0; /* lo missed (or cannot serve), hi met (0: none yet) */
	struct gallop_seen prev = {0}, now;
	bool ahead = pool_jobs(s->pool) >= 2 * (int64_t)s->n_hardware * s->replicates;
	struct cand *cur = calloc(1, sizeof(*cur)), *next = calloc(1, sizeof(*next));
	int rc = cur && next ? 0 : diag_set(d, DIAG_ENOMEM, "out of memory");
	int32_t r = base + 1;
	if (rc == 0 && r <= cap)
		rc = cand_start(s, res, sh, r, 0, cur, d);
	while (rc == 0 && r <= cap) {
		int32_t nr = r == cap ? 0 : r - base > (cap - base) / 2 ? cap : base + 2 * (r - base);
		if (ahead && nr)
			rc = cand_start(s, res, sh, nr, 0, next, d);
		if (rc == 0)
			rc = cand_finish(s, opt, cur, true, d);
		if (rc != 0)
			break;
		*scratch = cur->e;
		if (scratch->meets) {
			hi = r;
			opt->best = *scratch;
			break;
		}
		lo = r;
		note_miss(opt, scratch);
		if (r == cap)
			break;
		if (gallop_stalled(s, opt, scratch, &prev, &now))
			break;
		prev = now;
		r = nr;
		struct cand *tmp = cur;
		cur = next;
		next = tmp;
		if (!cur->started)
			rc = cand_start(s, res, sh, r, 0, cur, d);
	}
	/* a count looked ahead at that the gallop did not reach; after an
	 * error, whatever is still running */
	if (next)
		cand_finish(s, opt, next, false, d);
	if (cur)
		cand_finish(s, opt, cur, false, d);
	free(cur);
	free(next);
	if (rc != 0)
		return rc;
	if (!hi)
		return 0;
	while (hi - lo > 1) {
		int32_t mid = lo + (hi - lo) / 2;
		rc = evaluate(s, res, opt, sh, mid, 0, scratch, d);
		if (rc != 0)
			return rc;
		if (scratch->meets) {
			hi = mid;
			opt->best = *scratch;
		} else {
			lo = mid;
			note_miss(opt, scratch);
		}
	}
	opt->found = true;
	return 0;
}

/* The candidate of n replicas of shape sh, p of them prefill replicas,
 * when the search path already holds it (the gallop's), else NULL. */
static const struct size_eval *tried(const struct size_option *opt, const struct shape *sh,
				     int32_t n, int32_t p)
{
	for (int j = 0; opt->path && j < opt->n_path; j++) {
		const struct size_eval *e = &opt->path[j];
		if (e->tp == sh->tp && e->pp == sh->pp && e->replicas == n && e->prefill == p)
			return e;
	}
	return NULL;
}

/* Disaggregated: the fewest replicas of shape sh, prefill and decode
 * together, that meet the objectives, below max_gpus (0: no bound).  A
 * gallop on k prefill and k decode replicas (1, 2, 4, ...) finds a count
 * that meets them, or ends as search_shape's does.  Then the totals below
 * it are tried from the top down, each split of a total (p prefill and
 * n - p decode replicas) from the one nearest the last winner's ratio
 * outwards, until a total none of whose splits meets.  Latency need not
 * fall with more replicas in one pool (faster decoding brings a session's
 * next call, and its prefill, sooner), so no split is ruled out for its
 * neighbour's miss; the one assumption is the colocated search's, taken
 * over totals: when no split of n replicas meets, none of fewer does. */
static int search_pd(const struct size_setup *s, const struct size_result *res,
		     struct size_option *opt, const struct shape *sh, int32_t max_gpus,
		     struct size_eval *scratch, struct diag *d)
{
	int32_t cap = replica_cap(s, sh, max_gpus);
	struct gallop_seen prev = {0}, now;
	int32_t k = 1;
	bool found = false;
	while (2 * k <= cap) {
		int rc = evaluate(s, res, opt, sh, 2 * k, k, scratch, d);
		if (rc != 0)
			return rc;
		if (scratch->meets) {
			opt->best = *scratch;
			found = true;
			break;
		}
		note_miss(opt, scratch);
		if (2 * k == cap || 2 * k + 1 == cap || gallop_stalled(s, opt, scratch, &prev, &now))
			break;
		prev = now;
		k = 4 * k <= cap ? 2 * k : cap / 2;
	}
	if (!found)
		return 0;
	for (int32_t n = opt->best.replicas - 1; n >= 2; n--) {
		int32_t p0 = (int32_t)lround((double)n * opt->best.prefill / opt->best.replicas);
		p0 = p0 < 1 ? 1 : p0 > n - 1 ? n - 1 : p0;
		bool met = false;
		/* p0, p0 + 1, p0 - 1, p0 + 2, ...: every split of n once */
		for (int32_t j = 0; j < 2 * n && !met; j++) {
			int32_t p = j % 2 ? p0 + (j + 1) / 2 : p0 - j / 2;
			if (p < 1 || p > n - 1)
				continue;
			const struct size_eval *seen = tried(opt, sh, n, p);
			int rc = seen ? 0 : evaluate(s, res, opt, sh, n, p, scratch, d);
			if (rc != 0)
				return rc;
			if (seen)
				*scratch = *seen;
			if (scratch->meets) {
				opt->best = *scratch;
				met = true;
			} else {
				note_miss(opt, scratch);
			}
		}
		if (!met)
			break;
	}
	opt->found = true;
	return 0;
}

/* The launch command of the winner, shape sh; an engine that cannot take
 * the scenario's settings leaves it out, saying why (the search stands). */
static int winner_launch(struct size_option *opt, const struct shape *sh,
			 const struct catalog *cat, struct diag *d)
{
	if (!opt->launch && !(opt->launch = calloc(SIZE_MAX_LAUNCH, sizeof(*opt->launch))))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	struct diag ld;
	diag_init(&ld);
	bool pd = sh->dep.pd_on;
	int32_t n = pd ? 2 : 1;
	int rc = 0;
	for (int32_t k = 0; rc == 0 && k < n; k++) {
		int32_t pool = pd ? (k ? sh->dep.pd.decode_pool : sh->dep.pd.prefill_pool) : 0;
		int32_t replicas = pd ? (k ? opt->best.decode : opt->best.prefill) : opt->best.replicas;
		rc = launch_build(&opt->launch[k], &sh->dep.pool[pool], cat, replicas, &ld);
	}
	if (rc == DIAG_ENOMEM)
		return diag_set(d, rc, "%s", ld.msg);
	opt->launch_error[0] = '\0';
	opt->n_launch = rc ? 0 : n;
	if (rc != 0) {
		snprintf(opt->launch_error, sizeof(opt->launch_error), "%s", ld.msg);
		free(opt->launch);
		opt->launch = NULL;
	}
	return 0;
}

static int search_option(const struct size_setup *s, const struct size_result *res,
			 struct size_option *opt, const struct cat_hardware *hw, struct diag *d)
{
	snprintf(opt->hardware, sizeof(opt->hardware), "%s", hw->id);
	opt->path = calloc(SIZE_MAX_PATH, sizeof(*opt->path));
	struct size_eval *scratch = malloc(sizeof(*scratch));
	struct shape *sh = malloc(sizeof(*sh));
	int rc = opt->path && scratch && sh ? 0 : diag_set(d, DIAG_ENOMEM, "out of memory");
	int32_t tp[4], pp[4];
	int n = rc == 0 ? shapes_of(s->base, hw, tp, pp) : 0;
	for (int i = 0; rc == 0 && i < n; i++) {
		int fit = shape_init(s, hw->id, tp[i], pp[i], sh, opt, d);
		if (fit < 0)
			rc = fit;
		if (fit != 0)
			continue;
		/* below the best found, or at most s->max_gpus (the bound is
		 * exclusive: one more) */
		int32_t bound = opt->found ? opt->best.gpus : s->max_gpus > 0 ? s->max_gpus + 1 : 0;
		int32_t least = (sh->dep.pd_on ? 2 : 1) * shape_gpus(sh);
		if (!opt->found || least < opt->best.gpus)
			rc = sh->dep.pd_on ? search_pd(s, res, opt, sh, bound, scratch, d)
					   : search_shape(s, res, opt, sh, bound, scratch, d);
		/* the winner came from this shape: its launch command */
		if (rc == 0 && opt->found && opt->best.tp == sh->tp && opt->best.pp == sh->pp)
			rc = winner_launch(opt, sh, s->cat, d);
		deploy_release(&sh->dep);
	}
	free(sh);
	free(scratch);
	return rc;
}

/* The search of one hardware option, run as a pool task: it writes only
 * its own option (and reads the calls per replicate). */
struct option_task {
	const struct size_setup *s;
	const struct size_result *r;
	struct size_option *opt;
	const struct cat_hardware *hw;
	int rc;
	struct diag d;
};

static void option_task_run(void *arg)
{
	struct option_task *t = arg;
	t->rc = search_option(t->s, t->r, t->opt, t->hw, &t->d);
}

int size_evaluate(const struct size_setup *s, const struct size_result *r, const char *hw,
		  int32_t tp, int32_t pp, int32_t replicas, int32_t prefill, struct size_eval *e,
		  struct diag *d)
{
	struct size_option *opt = calloc(1, sizeof(*opt));
	struct shape *sh = malloc(sizeof(*sh));
	int rc = opt && sh ? 0 : diag_set(d, DIAG_ENOMEM, "out of memory");
	if (rc == 0)
		rc = shape_init(s, hw, tp, pp, sh, opt, d);
	if (rc == 0 && sh->dep.pd_on != (prefill > 0 && prefill < replicas)) {
		rc = diag_set(d, DIAG_EINPUT, "%d prefill replicas of %d (expected 1..%d with "
			      "disaggregation, 0 without)", (int)prefill, (int)replicas,
			      (int)replicas - 1);
		deploy_release(&sh->dep);
	}
	if (rc == 0) {
		rc = evaluate(s, r, opt, sh, replicas, prefill, e, d);
		deploy_release(&sh->dep);
	}
	free(sh);
	free(opt);
	return rc;
}

int size_run(const struct size_setup *s, struct size_result *r, struct diag *d)
{
	memset(r, 0, sizeof(*r));
	if (s->n_hardware < 1 || s->n_hardware > SIZE_MAX_HARDWARE)
		return diag_set(d, DIAG_EINPUT, "--hardware: %zu options (expected 1..%d)",
				s->n_hardware, SIZE_MAX_HARDWARE);
	if (s->replicates < 1 || s->replicates > SIZE_MAX_REPLICATES)
		return diag_set(d, DIAG_EINPUT, "--replicates %d (expected 1..%d)", s->replicates,
				SIZE_MAX_REPLICATES);
	if (s->redundancy < 0 || s->redundancy > SIZE_MAX_REDUNDANCY)
		return diag_set(d, DIAG_EINPUT, "--redundancy %d (expected 0..%d)", s->redundancy,
				SIZE_MAX_REDUNDANCY);
	if (s->redundancy > 0 && scenario_disaggregated(s->base))
		return diag_set(d, DIAG_EINPUT, "%s: disaggregation: --redundancy %d is not modelled "
				"with prefill and decode pools (which pool's replicas fail is a choice "
				"of its own; expected --redundancy 0)", s->base->source, s->redundancy);
	if (!(s->confidence > 0 && s->confidence <= 1))
		return diag_set(d, DIAG_EINPUT, "--confidence %g (expected a share in (0, 1])",
				s->confidence);
	const struct cat_hardware *hw[SIZE_MAX_HARDWARE];
	for (size_t i = 0; i < s->n_hardware; i++) {
		hw[i] = catalog_hardware(s->cat, s->hardware[i]);
		if (!hw[i]) {
			char ids[2048];
			size_t at = 0;
			ids[0] = '\0';
			for (size_t j = 0; j < s->cat->hardware_count && at < sizeof(ids); j++) {
				int w = snprintf(ids + at, sizeof(ids) - at, "%s%s", j ? ", " : "",
						 s->cat->hardware[j].id);
				at += w > 0 ? (size_t)w : 0;
			}
			return diag_set(d, DIAG_EINPUT,
					"--hardware: unknown hardware id '%s' (expected one of: %s)",
					s->hardware[i], ids);
		}
	}
	for (int32_t k = 0; k < s->replicates; k++) {
		struct replay_opts o = s->replay;
		o.trace_path = s->traces[k];
		o.scale.seed = s->seeds[k];
		int rc = replay_count(&o, &r->total_calls[k], d);
		if (rc != 0)
			return rc;
	}
	struct option_task *t = calloc(s->n_hardware, sizeof(*t));
	if (!t)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	struct pool_group *g = pool_group_new(s->pool);
	for (size_t i = 0; i < s->n_hardware; i++) {
		t[i] = (struct option_task){.s = s, .r = r, .opt = &r->opt[i], .hw = hw[i]};
		diag_init(&t[i].d);
		pool_run(g, option_task_run, &t[i]);
	}
	pool_group_finish(g);
	r->n = s->n_hardware;
	int rc = 0;
	for (size_t i = 0; i < s->n_hardware; i++) {
		if (t[i].rc == 0)
			continue;
		r->opt[i].error = t[i].rc;
		snprintf(r->opt[i].error_msg, sizeof(r->opt[i].error_msg), "%s", t[i].d.msg);
		r->opt[i].found = false;
		if (rc == 0)
			rc = diag_set(d, t[i].rc, "%s: %s", s->hardware[i], t[i].d.msg);
	}
	free(t);
	return rc;
}

void size_result_release(struct size_result *r)
{
	for (size_t i = 0; i < SIZE_MAX_HARDWARE; i++) {
		free(r->opt[i].path);
		r->opt[i].path = NULL;
		free(r->opt[i].launch);
		r->opt[i].launch = NULL;
	}
}

size_t size_found(const struct size_result *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->opt[i].found;
	return n;
}

/* The figure at field_offset of each replicate that ran, sorted. */
static size_t gather(const struct size_eval *e, size_t field_offset, double *x)
{
	size_t n = 0;
	for (int32_t k = 0; k < e->ran; k++) {
		double v;
		memcpy(&v, (const char *)&e->fig[k] + field_offset, sizeof(v));
		x[n++] = v;
	}
	gsl_sort(x, 1, n);
	return n;
}

double size_eval_quantile(const struct size_eval *e, size_t field_offset, double q)
{
	double x[SIZE_MAX_REPLICATES];
	size_t n = gather(e, field_offset, x);
	return n ? gsl_stats_quantile_from_sorted_data(x, 1, n, q) : 0.0;
}

double size_eval_median(const struct size_eval *e, size_t field_offset)
{
	return size_eval_quantile(e, field_offset, 0.5);
}

double size_eval_worst_ratio(const struct slo *slo, const struct size_eval *e)
{
	double worst = 0;
	for (int i = 0; i < slo->n; i++) {
		double v = size_eval_median(e, offsetof(struct size_fig, obj_ms) +
						     (size_t)i * sizeof(double));
		double ratio = v / slo->obj[i].limit_ms;
		if (ratio > worst)
			worst = ratio;
	}
	return worst;
}

int size_closest(const struct size_setup *s, const struct size_result *r)
{
	int best = -1;
	double best_ratio = INFINITY;
	for (size_t i = 0; i < r->n; i++) {
		if (!r->opt[i].have_closest)
			continue;
		double ratio = size_eval_worst_ratio(s->slo, &r->opt[i].closest);
		if (ratio < best_ratio) {
			best_ratio = ratio;
			best = (int)i;
		}
	}
	return best;
}

#define MED(e, field) size_eval_median((e), offsetof(struct size_fig, field))

/* Whether the replays had the scenario's API backends beside the replicas. */
static bool with_backends(const struct size_setup *s)
{
	return s->base->n_backends > 0 && !s->local_only;
}

void size_eval_label(const struct size_eval *e, char *buf, size_t size)
{
	if (e->prefill > 0 && e->pp > 1)
		snprintf(buf, size, "%dP+%dD x TP%d/PP%d", e->prefill, e->decode, e->tp, e->pp);
	else if (e->prefill > 0)
		snprintf(buf, size, "%dP+%dD x TP%d", e->prefill, e->decode, e->tp);
	else if (e->pp > 1)
		snprintf(buf, size, "%d x TP%d/PP%d", e->replicas, e->tp, e->pp);
	else
		snprintf(buf, size, "%d x TP%d", e->replicas, e->tp);
}

static void eval_row(FILE *fp, const char *hw, const struct size_eval *e)
{
	char dep[48], met[24];
	size_eval_label(e, dep, sizeof(dep));
	snprintf(met, sizeof(met), "%d/%d", e->met, e->ran);
	fprintf(fp, "%-22s %6d %-14s %10.3f %7.1f %7.1f %11.1f %10.2f %8s\n", hw, e->gpus, dep,
		MED(e, goodput), 100 * MED(e, busy), 100 * MED(e, hit), MED(e, ttft_p95_ms),
		MED(e, tpot_p50_ms), met);
}

int size_slo_with_bands(struct slo *out, double band_pct[SLO_MAX_OBJECTIVES],
			const struct size_setup *s, const struct slo *asked,
			const struct uncert_table *t, struct diag *d)
{
	static const char *const metric[] = { [SLO_TTFT] = "ttft_ms", [SLO_TPOT] = "tpot_ms",
					      [SLO_E2EL] = "e2el_ms" };
	*out = *asked;
	for (int i = 0; i < asked->n; i++)
		band_pct[i] = 0;
	struct engine_table et;
	int rc = engine_table_load(&et, NULL, d);
	for (size_t h = 0; h < s->n_hardware && rc == 0; h++) {
		struct scenario sc = *s->base;
		snprintf(sc.hardware, sizeof(sc.hardware), "%s", s->hardware[h]);
		rc = deploy_resolve(&sc, s->cat, NULL, d);
		if (rc)
			break;
		const struct cat_hardware *hw = catalog_hardware(s->cat, sc.hardware);
		const struct engine_profile *e = engine_find(&et, sc.engine_profile);
		const char *family = hw ? hw->device->family->id : NULL;
		const char *engine = e ? e->id : sc.engine_profile;
		const struct cat_weight_format *wf =
			sc.weight_format[0] ? catalog_weight_format(s->cat, sc.weight_format) : NULL;
		struct uncert_point pt = { hw ? catalog_package_kind(hw) : NULL,
					   hw ? catalog_memory_kind(hw) : NULL, wf ? wf->id : NULL,
					   engine };
		for (int i = 0; i < asked->n; i++) {
			struct uncert_band b = uncert_lookup(t, family, engine,
							     metric[asked->obj[i].metric]);
			uncert_widen(t, &pt, &b, NULL, 0);
			if (b.regime && b.pct > band_pct[i])
				band_pct[i] = b.pct;
		}
	}
	for (int i = 0; i < asked->n && rc == 0; i++)
		out->obj[i].limit_ms = asked->obj[i].limit_ms / (1 + band_pct[i] / 100);
	return rc;
}

void size_table(FILE *fp, const struct size_setup *s, const struct size_result *r)
{
	char slo[256];
	slo_format(s->slo, slo, sizeof(slo));
	fprintf(fp, "================ agentcap size ================\n");
	fprintf(fp, "Objectives: %s; no call may fail\n", slo);
	char rt[ROUTER_DESCRIBE_MAX];
	fprintf(fp, "Router: %s\n", router_describe(&s->base->router, rt, sizeof(rt)));
	const struct scenario_pd *pd = &s->base->pd;
	if (scenario_disaggregated(s->base))
		fprintf(fp, "Disaggregation: prefill pool %s, decode pool %s, both on each hardware "
			"option; KV over %s; a call visits the prefill pool %s; \"1P+3D\" is 1 "
			"prefill and 3 decode replicas (docs/disaggregation.md)\n", pd->prefill_pool,
			pd->decode_pool, pd->link,
			strcmp(pd->decider, "always") == 0 ? "always" : "above its uncached-token "
								   "threshold");
	if (s->slo_asked) {
		char asked[256];
		fprintf(fp, "Model uncertainty: asked %s, each limit divided by 1 + the model's 80%% "
			"error band (", slo_format(s->slo_asked, asked, sizeof(asked)));
		for (int i = 0; i < s->slo_asked->n; i++) {
			char key[16];
			fprintf(fp, "%s%s +-%.1f%%", i ? ", " : "",
				slo_key(&s->slo_asked->obj[i], key, sizeof(key)), s->slo_band_pct[i]);
		}
		fprintf(fp, "; the widest over the hardware options)\n");
	}
	if (s->redundancy > 0)
		fprintf(fp, "Redundancy: N+%d: every candidate is replayed with %d replica%s failed for "
			"the whole run, and must still meet the objectives\n", s->redundancy,
			s->redundancy, s->redundancy == 1 ? "" : "s");
	fprintf(fp, "Replicates: %d (seeds %llu..%llu); a deployment must meet the objectives in "
		"at least %.0f%% of them\n", s->replicates, (unsigned long long)s->seeds[0],
		(unsigned long long)s->seeds[s->replicates - 1], 100 * s->confidence);
	fprintf(fp, "Calls per replicate: %lld", (long long)r->total_calls[0]);
	for (int32_t k = 1; k < s->replicates; k++)
		fprintf(fp, ", %lld", (long long)r->total_calls[k]);
	fprintf(fp, "\n\n");
	fprintf(fp, "%-22s %6s %-14s %10s %7s %7s %11s %10s %8s\n", "Hardware", "GPUs",
		"Replicas x TP", "Goodput", "Busy", "Hit", "P95 TTFT", "P50 TPOT", "Met");
	fprintf(fp, "%-22s %6s %-14s %10s %7s %7s %11s %10s %8s\n", "", "", "", "(req/s)", "(%)",
		"(%)", "(ms)", "(ms)", "(reps)");
	for (size_t i = 0; i < r->n; i++) {
		const struct size_option *o = &r->opt[i];
		if (o->found)
			eval_row(fp, o->hardware, &o->best);
		else if (o->error)
			fprintf(fp, "%-22s %6s its search stopped: %s\n", o->hardware, "-",
				o->error_msg);
		else
			fprintf(fp, "%-22s %6s %s%s%s\n", o->hardware, "-",
				o->n_path ? "nothing up to the replica cap meets the objectives"
					  : "no shape runs",
				!o->n_path && o->pruned[0] ? ": " : "",
				!o->n_path ? o->pruned : "");
	}
	for (size_t i = 0; i < r->n; i++)
		if (r->opt[i].extrapolation[0])
			fprintf(fp, "%s%s: the model extrapolates to %s (no calibration row; its 80%% "
				"bands are wider)\n", i && r->opt[i - 1].extrapolation[0] ? "" : "\n",
				r->opt[i].hardware, r->opt[i].extrapolation);
	bool any_launch = false;
	for (size_t i = 0; i < r->n; i++)
		any_launch = any_launch || (r->opt[i].found && (r->opt[i].launch ||
								 r->opt[i].launch_error[0]));
	if (any_launch) {
		fprintf(fp, "\nLaunch commands (each winner as modelled; one command per replica, "
			"docs/size.md):\n");
		for (size_t i = 0; i < r->n; i++) {
			const struct size_option *o = &r->opt[i];
			if (!o->found)
				continue;
			fprintf(fp, "  %s:\n", o->hardware);
			for (int32_t k = 0; o->launch && k < o->n_launch; k++)
				launch_print(fp, &o->launch[k], "    ");
			if (!o->launch && o->launch_error[0])
				fprintf(fp, "    (none: %s)\n", o->launch_error);
		}
	}
	if (with_backends(s)) {
		fprintf(fp, "\nAPI backends beside the replicas (the scenario's backends, docs/hybrid.md):");
		for (int32_t k = 0; k < s->base->n_backends; k++)
			fprintf(fp, "%s %s (%s)", k ? "," : "", s->base->backends[k].name,
				s->base->backends[k].price);
		fputc('\n', fp);
		for (size_t i = 0; i < r->n; i++)
			if (r->opt[i].found)
				fprintf(fp, "  %-20s the API served %.1f%% of the winner's calls\n",
					r->opt[i].hardware, 100 * MED(&r->opt[i].best, api_share));
	}
	if (s->replicates > 1) {
		fprintf(fp, "\nSpread over replicates (GSL quantiles 10%% / 50%% / 90%%):\n");
		for (size_t i = 0; i < r->n; i++) {
			const struct size_option *o = &r->opt[i];
			if (!o->found)
				continue;
			for (int j = 0; j < s->slo->n; j++) {
				size_t off = offsetof(struct size_fig, obj_ms) + (size_t)j * sizeof(double);
				char key[16];
				fprintf(fp, "  %-20s %-9s %10.1f / %10.1f / %10.1f ms\n", o->hardware,
					slo_key(&s->slo->obj[j], key, sizeof(key)),
					size_eval_quantile(&o->best, off, 0.1),
					size_eval_quantile(&o->best, off, 0.5),
					size_eval_quantile(&o->best, off, 0.9));
			}
		}
	}
	if (scenario_disaggregated(s->base))
		fprintf(fp, "\nSearch path (replicas tried, in order; gallop kP+kD for k = 1, 2, 4, ..., "
			"then every split of each smaller total, down to a total none of whose splits "
			"meets):\n");
	else
		fprintf(fp, "\nSearch path (replicas tried, in order; gallop 1, 2, 4, ... then bisect):\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct size_option *o = &r->opt[i];
		fprintf(fp, "  %s (engine %s): %d replays, %lld simulator events\n", o->hardware,
			o->engine_profile, o->replays, (long long)o->events);
		if (o->pruned[0])
			fprintf(fp, "    pruned before any replay: %s\n", o->pruned);
		if (o->stalled[0])
			fprintf(fp, "    gallop ended: %s\n", o->stalled);
		for (int j = 0; j < o->n_path; j++) {
			const struct size_eval *e = &o->path[j];
			char dep[48];
			size_eval_label(e, dep, sizeof(dep));
			fprintf(fp, "    %-16s %4d GPUs  %-4s %d/%d%s%s\n", dep, e->gpus,
				e->meets ? "yes" : "no", e->met, e->ran, e->why[0] ? "  " : "", e->why);
		}
	}
	if (!size_found(r)) {
		int c = size_closest(s, r);
		if (c >= 0) {
			const struct size_eval *e = &r->opt[c].closest;
			char dep[48];
			size_eval_label(e, dep, sizeof(dep));
			fprintf(fp, "\nClosest miss: %s %s (%d GPUs): worst objective at %.2fx its limit; %s\n",
				r->opt[c].hardware, dep, e->gpus, size_eval_worst_ratio(s->slo, e), e->why);
		}
	}
	fprintf(fp, "===============================================\n");
}

static void json_eval(FILE *fp, const struct size_setup *s, const struct size_eval *e)
{
	const struct slo *slo = s->slo;
	fprintf(fp, "{\"replicas\":%d,", e->replicas);
	if (e->prefill > 0)
		fprintf(fp, "\"prefill_replicas\":%d,\"decode_replicas\":%d,", e->prefill, e->decode);
	fprintf(fp, "\"tensor_parallel_size\":%d,\"pipeline_parallel_size\":%d,"
		"\"gpus\":%d,\"kv_cache_tokens_per_replica\":%lld,\"meets\":%s,"
		"\"replicates_run\":%d,\"replicates_met\":%d,\"why\":\"",
		e->tp, e->pp, e->gpus, (long long)e->kv_cache_tokens,
		e->meets ? "true" : "false", e->ran, e->met);
	for (const char *p = e->why; *p; p++)
		fprintf(fp, *p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
	fprintf(fp, "\",\"request_goodput\":%.17g,\"gpu_busy_fraction\":%.17g,"
		"\"prefix_cache_hit_rate\":%.17g,\"p95_ttft_ms\":%.17g,\"median_tpot_ms\":%.17g,"
		"\"objectives_ms\":{", MED(e, goodput), MED(e, busy), MED(e, hit), MED(e, ttft_p95_ms),
		MED(e, tpot_p50_ms));
	for (int i = 0; i < slo->n; i++) {
		size_t off = offsetof(struct size_fig, obj_ms) + (size_t)i * sizeof(double);
		char key[16];
		fprintf(fp, "%s\"%s\":{\"p10\":%.17g,\"p50\":%.17g,\"p90\":%.17g}", i ? "," : "",
			slo_key(&slo->obj[i], key, sizeof(key)), size_eval_quantile(e, off, 0.1),
			size_eval_quantile(e, off, 0.5), size_eval_quantile(e, off, 0.9));
	}
	fputc('}', fp);
	if (with_backends(s))
		fprintf(fp, ",\"api_share\":%.17g", MED(e, api_share));
	fprintf(fp, ",\"verdicts\":[");
	for (int32_t k = 0; k < e->ran; k++)
		fprintf(fp, "%s\"%s\"", k ? "," : "",
			e->fig[k].met ? "met" : replay_verdict_name(e->fig[k].verdict));
	fprintf(fp, "]}");
}

int size_json(FILE *fp, const struct size_setup *s, const struct size_result *r)
{
	char slo[256];
	fprintf(fp, "{\"schema\":\"agentcap-size\",\"version\":1,");
	if (s->run) {
		report_run_json(fp, s->run);
		fputc(',', fp);
	}
	fprintf(fp, "\"slo\":\"%s\",", slo_format(s->slo, slo, sizeof(slo)));
	if (s->slo_asked) {
		fprintf(fp, "\"slo_asked\":\"%s\",\"slo_band_pct\":[",
			slo_format(s->slo_asked, slo, sizeof(slo)));
		for (int i = 0; i < s->slo_asked->n; i++)
			fprintf(fp, "%s%.17g", i ? "," : "", s->slo_band_pct[i]);
		fputs("],", fp);
	}
	fprintf(fp, "\"replicates\":%d,\"confidence\":%.17g,\"redundancy\":%d,\"seeds\":[",
		s->replicates, s->confidence, s->redundancy);
	for (int32_t k = 0; k < s->replicates; k++)
		fprintf(fp, "%s%llu", k ? "," : "", (unsigned long long)s->seeds[k]);
	fprintf(fp, "],\"calls\":[");
	for (int32_t k = 0; k < s->replicates; k++)
		fprintf(fp, "%s%lld", k ? "," : "", (long long)r->total_calls[k]);
	fprintf(fp, "],\"options\":[");
	for (size_t i = 0; i < r->n; i++) {
		const struct size_option *o = &r->opt[i];
		fprintf(fp, "%s{\"hardware\":\"%s\",\"engine_profile\":\"%s\",\"found\":%s,"
			"\"replays\":%d,\"events\":%lld,\"pruned\":\"", i ? "," : "", o->hardware,
			o->engine_profile, o->found ? "true" : "false", o->replays, (long long)o->events);
		for (const char *p = o->pruned; *p; p++)
			fprintf(fp, *p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
		fprintf(fp, "\",\"gallop_ended\":");
		jsonw_str(fp, o->stalled);
		fprintf(fp, ",\"extrapolation\":");
		jsonw_str(fp, o->extrapolation_set && o->extrapolation[0] ? o->extrapolation : NULL);
		fprintf(fp, ",\"best\":");
		if (o->found)
			json_eval(fp, s, &o->best);
		else
			fprintf(fp, "null");
		fprintf(fp, ",\"closest_miss\":");
		if (o->have_closest)
			json_eval(fp, s, &o->closest);
		else
			fprintf(fp, "null");
		fprintf(fp, ",\"launch\":");
		if (o->found && o->launch && o->n_launch > 1) {
			for (int32_t k = 0; k < o->n_launch; k++) {
				fputc(k ? ',' : '[', fp);
				launch_json(fp, &o->launch[k]);
			}
			fputc(']', fp);
		} else if (o->found && o->launch)
			launch_json(fp, o->launch);
		else
			fprintf(fp, "null");
		if (o->launch_error[0]) {
			fprintf(fp, ",\"launch_error\":");
			jsonw_str(fp, o->launch_error);
		}
		fprintf(fp, ",\"path\":[");
		for (int j = 0; j < o->n_path; j++) {
			fprintf(fp, "%s", j ? "," : "");
			json_eval(fp, s, &o->path[j]);
		}
		fprintf(fp, "]}");
	}
	fputc(']', fp);
	if (s->tune && s->write_tune) {
		fputc(',', fp);
		s->write_tune(fp, s->tune);
	}
	fprintf(fp, "}\n");
	return ferror(fp) ? DIAG_EIO : 0;
}
