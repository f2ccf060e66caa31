/* SPDX-License-Identifier: Apache-2.0
 * baseline: the team's work on a per-token API, as recorded (see
 * baseline.h). */
#include "plan/baseline.h"

#include "base/diag.h"
#include "models/apilat.h"
#include "models/prices.h"
#include "plan/run.h"
#include "replay/deploy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The latency row of api_id: its own, else the first of the same provider
 * (the provider of the API's price rows). */
static const struct apilat_row *latency_row(const struct apilat *lat, const struct prices *pr,
					    const char *api_id, struct baseline_result *r)
{
	const struct apilat_row *row = apilat_find(lat, api_id);
	if (row)
		return row;
	const struct price_row *own = prices_find(pr, PRICE_API_OUTPUT, api_id);
	for (size_t i = 0; own && i < lat->n; i++) {
		const struct price_row *other = prices_find(pr, PRICE_API_OUTPUT, lat->rows[i].id);
		if (other && strcmp(other->provider, own->provider) == 0) {
			snprintf(r->timing_note, sizeof(r->timing_note),
				 "api_backends.json has no row for %.48s: the timing and cache minimum "
				 "of %.48s, the same provider's", api_id, lat->rows[i].id);
			return &lat->rows[i];
		}
	}
	return NULL;
}

int baseline_run(const struct baseline_setup *s, struct baseline_result *r, struct diag *d)
{
	memset(r, 0, sizeof(*r));
	r->cache_ttl_s = s->cache_ttl_s;
	struct apilat *lat = NULL;
	struct scenario *sc = malloc(sizeof(*sc));
	struct run_result *res = malloc(sizeof(*res));
	int rc = sc && res ? apilat_load(&lat, NULL, NULL, d)
			   : diag_set(d, DIAG_ENOMEM, "out of memory");
	const struct apilat_row *row = rc == 0 ? latency_row(lat, s->prices, s->api_id, r) : NULL;
	if (rc == 0 && !row)
		rc = diag_set(d, DIAG_EINPUT, "--api %s: no API timing for it or its provider in "
			      "api_backends.json (expected an API whose provider has a row there, to "
			      "pace the team's calls)", s->api_id);
	struct deployment dep;
	bool built = false, ran = false;
	if (rc == 0) {
		snprintf(r->latency_id, sizeof(r->latency_id), "%s", row->id);
		*sc = *s->size->base;
		snprintf(sc->hardware, sizeof(sc->hardware), "%s", s->hardware);
		sc->tensor_parallel_size = s->tp;
		sc->pipeline_parallel_size = s->pp;
		sc->replicas = 1;
		sc->n_pools = 0; /* every call goes to the API: no pools, so no */
		memset(&sc->pd, 0, sizeof(sc->pd)); /* disaggregation */
		/* the API, taking every prompt (longer than 0 tokens) */
		memset(sc->backends, 0, sizeof(sc->backends));
		sc->n_backends = 1;
		struct scenario_backend *b = &sc->backends[0];
		snprintf(b->name, sizeof(b->name), "api");
		snprintf(b->kind, sizeof(b->kind), "api");
		snprintf(b->price, sizeof(b->price), "%s", s->api_id);
		snprintf(b->latency, sizeof(b->latency), "%s", row->id);
		scenario_backend_unset(b);
		b->cache_ttl_s = s->cache_ttl_s;
		/* the baseline prices the team's tokens as the API would bill them:
		 * no per-minute limits, so no call is lost to a 429 */
		b->rpm = b->input_tpm = b->output_tpm = b->tpm = 0;
		memset(&sc->routes, 0, sizeof(sc->routes));
		snprintf(sc->routes.size_to, sizeof(sc->routes.size_to), "api");
		sc->routes.size_prompt_tokens = 0;
		struct deploy_opts o = {.prices = s->prices};
		rc = deploy_build(&dep, sc, s->size->cat, &o, NULL, d);
		built = rc == 0;
	}
	if (rc == 0) {
		struct run_setup rs = {
			.dep = &dep,
			.replay = s->size->replay,
			.vary = {.as_recorded = true},
		};
		rs.replay.trace_path = s->size->traces[0];
		rs.replay.seed = s->size->seeds[0];
		rs.replay.scale.seed = s->size->seeds[0];
		rs.replay.early = NULL;
		rs.replay.hybrid = NULL;
		rc = run_replay(&rs, res, d);
		ran = true;
	}
	if (rc == 0) {
		const struct backends_row *api = &res->bsum.rows[1];
		const struct metrics_summary *sum = &res->sum;
		if (res->bsum.rows[0].calls > 0 || sum->failed > 0)
			rc = diag_set(d, DIAG_EINTERNAL, "the API baseline: %lld calls served locally, "
				      "%lld failed (expected every call on the API)",
				      (long long)res->bsum.rows[0].calls, (long long)sum->failed);
		r->usage = (struct cost_usage){
			.duration_s = sum->duration_s > 0 ? sum->duration_s : 1,
			.gpus_per_replica = 1,
			.replicas = 1,
			.idle_s_per_gpu = sum->duration_s > 0 ? sum->duration_s : 1,
			.prompt_tokens = api->prompt_tokens,
			.cached_tokens = api->cached_prompt_tokens,
			.cache_write_tokens = api->cache_write_tokens,
			.output_tokens = api->output_tokens,
			.calls = api->calls,
			.tasks = sum->tasks,
			.tasks_accept_known = sum->tasks_accept_known,
			.tasks_accepted = sum->tasks_accepted,
		};
		/* split by the API's long-prompt tiers and off-peak hours, as its
		 * backend priced each call */
		const struct scenario_backend_price *bp = &dep.backends.price[0];
		if (bp->priced) {
			r->usage.api_split = true;
			snprintf(r->usage.api_split_label, sizeof(r->usage.api_split_label), "%s",
				 bp->list.label);
			memcpy(r->usage.api_class, api->by_class, sizeof(r->usage.api_class));
			r->usage.api_clock_assumed = api->clock_assumed;
		}
		r->days = s->size->replay.scale.engineers > 0 ? res->st.scale.days : 0;
	}
	if (ran)
		run_release(res);
	if (built)
		deploy_release(&dep);
	apilat_free(lat);
	free(res);
	free(sc);
	return rc;
}
