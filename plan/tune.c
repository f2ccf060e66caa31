/* SPDX-License-Identifier: Apache-2.0
 * tune: coordinate descent over the engine levers, each candidate scored by
 * a size search of its hardware option (see tune.h). */
#include "plan/tune.h"

#include "base/diag.h"
#include "base/jsonw.h"
#include "base/pool.h"
#include "models/catalog.h"
#include "plan/compare.h"
#include "replay/deploy.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const LEVER_KEYS[TUNE_LEVERS] = {
	"engine.enable_chunked_prefill",
	"engine.gpu_memory_utilization",
	"engine.max_num_batched_tokens",
	"engine.max_num_seqs",
	"kv_cache_dtype",
};

/* The candidate values.  Sources (docs/size.md, "Tuning the engine"):
 * chunked prefill on/off: vLLM's switch, on by default (field notes);
 * gpu_memory_utilization: vLLM's default 0.9, and the preemption advice to
 * raise it (field notes), one step each way; max_num_batched_tokens: 512
 * (llama.cpp's -ub, the smallest step any engine profile uses), 2048 (vLLM
 * under 70 GiB, "favours ITL"), 8192 (vLLM on large GPUs; "> 8192 for
 * smaller models on large GPUs"), 16384 (SGLang's largest default);
 * max_num_seqs: 64 and 128 (headroom against preemption), 256 and 1024
 * (vLLM's defaults by GPU size), 512 between; kv_cache_dtype: fp8 where the
 * hardware has FP8 tensor cores, "doubles the tokens that fit". */
static const char *const GPU_MEMORY[] = {"0.85", "0.9", "0.95"};
static const char *const BATCHED[] = {"512", "2048", "8192", "16384"};
static const char *const SEQS[] = {"64", "128", "256", "512", "1024"};

const char *tune_lever_key(enum tune_lever l)
{
	return l >= 0 && l < TUNE_LEVERS ? LEVER_KEYS[l] : "?";
}

void tune_sets(const struct tune_config *c, char sets[TUNE_LEVERS][LAUNCH_SET_MAX])
{
	for (int l = 0; l < TUNE_LEVERS; l++)
		snprintf(sets[l], LAUNCH_SET_MAX, "%s=%s", LEVER_KEYS[l], c->v[l]);
}

/* Set config c's values in sc (the text parsed as scenario_load would). */
static void config_apply(struct scenario *sc, const struct tune_config *c)
{
	sc->engine.enable_chunked_prefill = strcmp(c->v[TUNE_CHUNKED_PREFILL], "true") == 0;
	sc->engine.gpu_memory_utilization = strtod(c->v[TUNE_GPU_MEMORY], NULL);
	sc->engine.max_num_batched_tokens = strtoll(c->v[TUNE_BATCHED_TOKENS], NULL, 10);
	sc->engine.max_num_seqs = (int32_t)strtol(c->v[TUNE_MAX_NUM_SEQS], NULL, 10);
	snprintf(sc->kv_cache_dtype, sizeof(sc->kv_cache_dtype), "%s", c->v[TUNE_KV_DTYPE]);
}

static bool config_equal(const struct tune_config *a, const struct tune_config *b)
{
	for (int l = 0; l < TUNE_LEVERS; l++)
		if (strcmp(a->v[l], b->v[l]) != 0)
			return false;
	return true;
}

/* a strictly better than b: meets on fewer GPUs, or as many and a lower
 * P95 TTFT. */
static bool score_better(const struct tune_score *a, const struct tune_score *b)
{
	if (!a->found)
		return false;
	if (!b->found || a->gpus < b->gpus)
		return true;
	return a->gpus == b->gpus && a->ttft_p95_ms < b->ttft_p95_ms;
}

static struct tune_score score_of(const struct size_option *o)
{
	struct tune_score sc = {.found = o->found && o->launch != NULL};
	if (sc.found) {
		sc.gpus = o->best.gpus;
		sc.ttft_p95_ms = size_eval_median(&o->best, offsetof(struct size_fig, ttft_p95_ms));
	}
	return sc;
}

/* Add value v to lever l's candidates unless there. */
static void add_value(struct tune_option *o, int l, const char *v)
{
	for (int i = 0; i < o->n_values[l]; i++)
		if (strcmp(o->values[l][i], v) == 0)
			return;
	if (o->n_values[l] < TUNE_MAX_VALUES)
		snprintf(o->values[l][o->n_values[l]++], TUNE_VALUE_MAX, "%s", v);
}

/* The scenario's values on hardware hw as the engine resolves them, and
 * each lever's candidates (the scenario's value first, then the list). */
static int option_values(const struct size_setup *s, const struct cat_hardware *hw,
			 struct tune_option *o, struct diag *d)
{
	struct scenario *sc = malloc(sizeof(*sc));
	if (!sc)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	*sc = *s->base;
	snprintf(sc->hardware, sizeof(sc->hardware), "%s", hw->id);
	int rc = deploy_resolve(sc, s->cat, NULL, d);
	if (rc == 0) {
		struct tune_config *c = &o->scenario;
		snprintf(c->v[TUNE_CHUNKED_PREFILL], TUNE_VALUE_MAX, "%s",
			 sc->engine.enable_chunked_prefill ? "true" : "false");
		snprintf(c->v[TUNE_GPU_MEMORY], TUNE_VALUE_MAX, "%.6g", sc->engine.gpu_memory_utilization);
		snprintf(c->v[TUNE_BATCHED_TOKENS], TUNE_VALUE_MAX, "%lld",
			 (long long)sc->engine.max_num_batched_tokens);
		snprintf(c->v[TUNE_MAX_NUM_SEQS], TUNE_VALUE_MAX, "%d", (int)sc->engine.max_num_seqs);
		if (strlen(sc->kv_cache_dtype) >= TUNE_VALUE_MAX)
			rc = diag_set(d, DIAG_EINPUT, "kv_cache_dtype: '%s' is too long to tune "
				      "(expected a catalogue dtype id)", sc->kv_cache_dtype);
		snprintf(c->v[TUNE_KV_DTYPE], TUNE_VALUE_MAX, "%.*s", TUNE_VALUE_MAX - 1,
			 sc->kv_cache_dtype);
		for (int l = 0; l < TUNE_LEVERS; l++)
			add_value(o, l, c->v[l]);
		add_value(o, TUNE_CHUNKED_PREFILL, sc->engine.enable_chunked_prefill ? "false" : "true");
		for (size_t i = 0; i < sizeof(GPU_MEMORY) / sizeof(*GPU_MEMORY); i++)
			add_value(o, TUNE_GPU_MEMORY, GPU_MEMORY[i]);
		for (size_t i = 0; i < sizeof(BATCHED) / sizeof(*BATCHED); i++)
			add_value(o, TUNE_BATCHED_TOKENS, BATCHED[i]);
		for (size_t i = 0; i < sizeof(SEQS) / sizeof(*SEQS); i++)
			add_value(o, TUNE_MAX_NUM_SEQS, SEQS[i]);
		/* an unset dtype is the engine's choice: left alone */
		if (sc->kv_cache_dtype[0] && hw->tflops[CAT_DTYPE_FP8] > 0)
			add_value(o, TUNE_KV_DTYPE, "fp8");
		o->tuned = o->scenario;
	}
	free(sc);
	return rc;
}

/* The memo of one option's searches. */
struct memo_entry {
	struct tune_config c;
	struct tune_score sc;
	int32_t max_gpus;              /* the search's bound (0: none) */
};

struct tuner {
	const struct size_setup *s;
	const struct cat_hardware *hw;
	struct tune_option *o;
	int32_t budget;
	struct memo_entry *memo;
	int n_memo, cap_memo;
	struct scenario *sc;           /* scratch: the base with a config */
	struct size_result *best;      /* the size result of the best
					  configuration searched: o->tuned */
	struct tune_config best_c;
	struct tune_score best_sc;
	bool base_complete;            /* the scenario's winner's launch command
					  is complete */
	struct size_result *scratch;
};

/* One size search of config c on the option, at most `bound` GPUs (0:
 * none), into t->scratch (released by the caller) and *out. */
static int search(struct tuner *t, const struct tune_config *c, int32_t bound,
		  struct tune_score *out, struct diag *d)
{
	*t->sc = *t->s->base;
	config_apply(t->sc, c);
	struct size_setup one = *t->s;
	const char *hw = t->hw->id;
	one.base = t->sc;
	one.hardware = &hw;
	one.n_hardware = 1;
	one.run = NULL;
	one.max_gpus = bound;
	struct diag sd;
	diag_init(&sd);
	int rc = size_run(&one, t->scratch, &sd);
	t->o->searches++;
	/* a configuration the scenario's checks refuse (DIAG_EINPUT) meets
	 * nothing; any other error stops the tuning */
	if (rc != 0 && rc != DIAG_EINPUT) {
		size_result_release(t->scratch);
		return diag_set(d, rc, "%s", sd.msg);
	}
	struct tune_score sc = {0};
	if (rc == 0) {
		sc = score_of(&t->scratch->opt[0]);
		/* a setting the engine takes only outside its command line (a
		 * note, the command incomplete: llama.cpp without chunked
		 * prefill) is not the engine allowing it */
		const struct launch_cmd *lc = t->scratch->opt[0].launch;
		if (sc.found && t->base_complete && !lc->complete)
			sc.found = false;
		t->o->replays += t->scratch->opt[0].replays;
		t->o->events += t->scratch->opt[0].events;
	}
	*out = sc;
	return rc == 0 ? 0 : 2;
}

static struct memo_entry *memo_find(struct tuner *t, const struct tune_config *c)
{
	for (int i = 0; i < t->n_memo; i++)
		if (config_equal(&t->memo[i].c, c))
			return &t->memo[i];
	return NULL;
}

/* Score config c: from the memo, else by a size search of the option
 * (1 when the budget forbids one and counted is set).  A counted search
 * whose result beats the best so far becomes t->best. */
static int score(struct tuner *t, const struct tune_config *c, bool counted,
		 struct tune_score *out, struct diag *d)
{
	/* a candidate is of interest only on as many GPUs as the best so far:
	 * its search is bounded there (an effect's is not) */
	int32_t bound = counted && t->best_sc.found ? t->best_sc.gpus : 0;
	struct memo_entry *m = memo_find(t, c);
	/* a bounded search that found nothing says nothing above its bound */
	if (m && (m->sc.found || !m->max_gpus || (bound && bound <= m->max_gpus))) {
		*out = m->sc;
		return 0;
	}
	if (counted && t->o->searches >= t->budget) {
		t->o->budget_spent = true;
		return 1;
	}
	if (!m && t->n_memo == t->cap_memo)
		return diag_set(d, DIAG_EINTERNAL, "tune: memo full");
	struct tune_score sc;
	int rc = search(t, c, bound, &sc, d);
	if (rc < 0)
		return rc;
	if (!m)
		m = &t->memo[t->n_memo++];
	*m = (struct memo_entry){.c = *c, .sc = sc, .max_gpus = bound};
	*out = sc;
	/* the descent never takes a configuration worse than one it has
	 * searched, so the best searched is the one it ends on; the effects'
	 * searches (counted false) are not candidates */
	if (rc == 0 && counted && score_better(&sc, &t->best_sc)) {
		struct size_result *tmp = t->best;
		t->best = t->scratch;
		t->scratch = tmp;
		t->best_c = *c;
		t->best_sc = sc;
	}
	size_result_release(t->scratch);
	return 0;
}

/* The tuned configuration searched again as size searches it, without the
 * bound, so that size (or replay) of its settings gives the same result;
 * that search is what is reported. */
static int confirm(struct tuner *t, struct diag *d)
{
	struct memo_entry *m = memo_find(t, &t->o->tuned);
	if (!m || !m->max_gpus)
		return 0;
	struct tune_score sc;
	int rc = search(t, &t->o->tuned, 0, &sc, d);
	if (rc < 0)
		return rc;
	if (rc != 0) { /* refused now: keep the bounded search */
		size_result_release(t->scratch);
		return 0;
	}
	struct size_result *tmp = t->best;
	t->best = t->scratch;
	t->scratch = tmp;
	size_result_release(t->scratch);
	m->sc = sc;
	m->max_gpus = 0;
	t->best_sc = sc;
	t->o->best = sc;
	return 0;
}

/* Coordinate descent from the scenario's configuration; t->best holds
 * size_run's result for it on entry. */
static int descend(struct tuner *t, struct diag *d)
{
	struct tune_option *o = t->o;
	o->best = o->base;
	t->best_c = o->scenario;
	t->best_sc = o->base;
	t->memo[t->n_memo++] = (struct memo_entry){.c = o->scenario, .sc = o->base};
	bool changed = true;
	int rc = 0;
	while (changed && !o->budget_spent && rc == 0) {
		changed = false;
		o->passes++;
		for (int l = 0; l < TUNE_LEVERS && rc == 0 && !o->budget_spent; l++) {
			struct tune_config pick = o->tuned;
			struct tune_score pick_sc = o->best;
			for (int i = 0; i < o->n_values[l]; i++) {
				struct tune_config c = o->tuned;
				if (strcmp(c.v[l], o->values[l][i]) == 0)
					continue;
				snprintf(c.v[l], TUNE_VALUE_MAX, "%s", o->values[l][i]);
				struct tune_score sc = {0};
				rc = score(t, &c, true, &sc, d);
				if (rc != 0)
					break;
				if (score_better(&sc, &pick_sc)) {
					pick = c;
					pick_sc = sc;
				}
			}
			if (rc == 1)
				rc = 0;
			if (rc == 0 && !config_equal(&pick, &o->tuned)) {
				o->tuned = pick;
				o->best = pick_sc;
				changed = true;
			}
		}
	}
	if (rc == 0)
		rc = confirm(t, d);
	/* each lever's effect: the tuned configuration with it put back */
	for (int l = 0; l < TUNE_LEVERS && rc == 0; l++) {
		o->effect[l] = o->best;
		if (strcmp(o->tuned.v[l], o->scenario.v[l]) == 0)
			continue;
		struct tune_config c = o->tuned;
		snprintf(c.v[l], TUNE_VALUE_MAX, "%s", o->scenario.v[l]);
		rc = score(t, &c, false, &o->effect[l], d);
	}
	assert(rc != 0 || config_equal(&t->best_c, &o->tuned));
	return rc;
}

struct tune_task {
	const struct size_setup *s;
	const struct cat_hardware *hw;
	const struct size_option *base;
	struct tune_option *o;
	struct size_option *out;        /* t->tuned->opt[i] */
	int32_t budget;
	int rc;
	struct diag d;
};

/* Move the first option of r into *dst (path and launch change owner). */
static void option_take(struct size_option *dst, struct size_result *r)
{
	*dst = r->opt[0];
	r->opt[0].path = NULL;
	r->opt[0].launch = NULL;
}

/* A deep copy of option src into dst (its path and launch duplicated). */
static int option_copy(struct size_option *dst, const struct size_option *src, struct diag *d)
{
	*dst = *src;
	dst->path = NULL;
	dst->launch = NULL;
	if (src->path && !(dst->path = calloc(SIZE_MAX_PATH, sizeof(*dst->path))))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	if (src->path)
		memcpy(dst->path, src->path, SIZE_MAX_PATH * sizeof(*dst->path));
	if (src->launch && !(dst->launch = calloc(SIZE_MAX_LAUNCH, sizeof(*dst->launch))))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	if (src->launch)
		memcpy(dst->launch, src->launch, SIZE_MAX_LAUNCH * sizeof(*dst->launch));
	return 0;
}

static void tune_task_run(void *arg)
{
	struct tune_task *k = arg;
	struct tune_option *o = k->o;
	struct tuner t = {.s = k->s, .hw = k->hw, .o = o, .budget = k->budget};
	t.cap_memo = k->budget + 2 * TUNE_LEVERS + 4;
	t.memo = calloc((size_t)t.cap_memo, sizeof(*t.memo));
	t.sc = malloc(sizeof(*t.sc));
	t.best = calloc(1, sizeof(*t.best));
	t.scratch = calloc(1, sizeof(*t.scratch));
	int rc = t.memo && t.sc && t.best && t.scratch ? 0
		 : diag_set(&k->d, DIAG_ENOMEM, "out of memory");
	if (rc == 0)
		rc = option_values(k->s, k->hw, o, &k->d);
	if (rc == 0) {
		o->base = score_of(k->base);
		t.base_complete = k->base->launch && k->base->launch->complete;
		t.best->n = 1;
		rc = option_copy(&t.best->opt[0], k->base, &k->d);
	}
	if (rc == 0)
		rc = descend(&t, &k->d);
	if (rc == 0)
		option_take(k->out, t.best);
	else
		option_copy(k->out, k->base, &k->d);
	k->rc = rc;
	if (t.best)
		size_result_release(t.best);
	if (t.scratch)
		size_result_release(t.scratch);
	free(t.best);
	free(t.scratch);
	free(t.sc);
	free(t.memo);
}

int tune_run(const struct size_setup *s, int32_t budget, const struct size_result *r,
	     struct tune_result *t, struct diag *d)
{
	memset(t, 0, sizeof(*t));
	if (budget == 0)
		budget = TUNE_DEFAULT_BUDGET;
	if (budget < 1 || budget > TUNE_MAX_BUDGET)
		return diag_set(d, DIAG_EINPUT, "--tune-budget %d (expected an integer 1..%d)",
				budget, TUNE_MAX_BUDGET);
	t->budget = budget;
	if (!(t->tuned = calloc(1, sizeof(*t->tuned))))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	memcpy(t->tuned->total_calls, r->total_calls, sizeof(r->total_calls));
	struct tune_task *k = calloc(r->n ? r->n : 1, sizeof(*k));
	if (!k)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	struct pool_group *g = pool_group_new(s->pool);
	for (size_t i = 0; i < r->n; i++) {
		struct tune_option *o = &t->opt[i];
		snprintf(o->hardware, sizeof(o->hardware), "%s", r->opt[i].hardware);
		for (int w = 0; w < 2; w++)
			for (int j = 0; j < 3; j++)
				o->usd_month[w][j] = -1;
		k[i] = (struct tune_task){.s = s, .hw = catalog_hardware(s->cat, r->opt[i].hardware),
					  .base = &r->opt[i], .o = o, .out = &t->tuned->opt[i],
					  .budget = budget};
		diag_init(&k[i].d);
		if (!k[i].hw || r->opt[i].error) {
			/* size could not search it: nothing to tune from */
			k[i].rc = option_copy(k[i].out, &r->opt[i], &k[i].d);
			o->error = r->opt[i].error ? r->opt[i].error : DIAG_EINPUT;
			snprintf(o->error_msg, sizeof(o->error_msg), "%s",
				 r->opt[i].error ? r->opt[i].error_msg : "unknown hardware");
			continue;
		}
		pool_run(g, tune_task_run, &k[i]);
	}
	pool_group_finish(g);
	t->n = r->n;
	t->tuned->n = r->n;
	int rc = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (k[i].rc == 0)
			continue;
		t->opt[i].error = k[i].rc;
		snprintf(t->opt[i].error_msg, sizeof(t->opt[i].error_msg), "%s", k[i].d.msg);
		if (rc == 0)
			rc = diag_set(d, k[i].rc, "%s: --tune: %s", r->opt[i].hardware, k[i].d.msg);
	}
	free(k);
	return rc;
}

void tune_result_release(struct tune_result *t)
{
	if (t->tuned) {
		size_result_release(t->tuned);
		free(t->tuned);
		t->tuned = NULL;
	}
}

static void price_from(struct tune_option *o, int w, const struct compare_result *c)
{
	if (!c)
		return;
	static const enum cost_option WAYS[3] = {COST_PURCHASE, COST_DEDICATED, COST_ELASTIC};
	for (int j = 0; j < 3; j++)
		for (size_t i = 0; i < c->n; i++)
			if (c->rows[i].option == WAYS[j] && strcmp(c->rows[i].hardware, o->hardware) == 0) {
				o->usd_month[w][j] = c->rows[i].r.usd_month;
				break;
			}
}

void tune_price(struct tune_result *t, const struct compare_result *base,
		const struct compare_result *tuned)
{
	for (size_t i = 0; i < t->n; i++) {
		price_from(&t->opt[i], 0, base);
		price_from(&t->opt[i], 1, tuned);
	}
}

static void gpus_text(const struct tune_score *sc, char *buf, size_t size)
{
	if (sc->found)
		snprintf(buf, size, "%d", (int)sc->gpus);
	else
		snprintf(buf, size, "none");
}

static void usd_text(double usd, char *buf, size_t size)
{
	if (usd < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "$%.0f", usd);
}

void tune_table(FILE *fp, const struct tune_result *t)
{
	fprintf(fp, "\nEngine tuning (--tune: coordinate descent, at most %d size searches per "
		"option, docs/size.md); the table above is the tuned result:\n", (int)t->budget);
	for (size_t i = 0; i < t->n; i++) {
		const struct tune_option *o = &t->opt[i];
		if (o->error) {
			fprintf(fp, "  %s: not tuned: %s\n", o->hardware, o->error_msg);
			continue;
		}
		char gb[16], gt[16], pb[24], pt[24], eb[24], et[24];
		gpus_text(&o->base, gb, sizeof(gb));
		gpus_text(&o->best, gt, sizeof(gt));
		usd_text(o->usd_month[0][0], pb, sizeof(pb));
		usd_text(o->usd_month[1][0], pt, sizeof(pt));
		usd_text(o->usd_month[0][2], eb, sizeof(eb));
		usd_text(o->usd_month[1][2], et, sizeof(et));
		fprintf(fp, "  %s: GPUs %s with the scenario's settings, %s tuned; bought %s -> %s a "
			"month, rented by the GPU-hour %s -> %s; %d size searches, %d passes%s\n",
			o->hardware, gb, gt, pb, pt, eb, et, (int)o->searches, (int)o->passes,
			o->budget_spent ? ", stopped by the budget" : "");
		fprintf(fp, "    %-32s %10s %10s %14s  %s\n", "lever", "scenario", "tuned",
			"GPUs at scen.", "candidates");
		for (int l = 0; l < TUNE_LEVERS; l++) {
			char ge[16], cand[160];
			size_t at = 0;
			cand[0] = '\0';
			for (int j = 0; j < o->n_values[l] && at < sizeof(cand); j++) {
				int w = snprintf(cand + at, sizeof(cand) - at, "%s%s", j ? " " : "",
						 o->values[l][j]);
				at += w > 0 ? (size_t)w : 0;
			}
			bool same = strcmp(o->tuned.v[l], o->scenario.v[l]) == 0;
			if (same)
				snprintf(ge, sizeof(ge), "(kept)");
			else
				gpus_text(&o->effect[l], ge, sizeof(ge));
			fprintf(fp, "    %-32s %10s %10s %14s  %s\n", LEVER_KEYS[l], o->scenario.v[l],
				o->tuned.v[l], ge, o->n_values[l] > 1 ? cand : "(not tuned here)");
		}
		char sets[TUNE_LEVERS][LAUNCH_SET_MAX];
		tune_sets(&o->tuned, sets);
		fprintf(fp, "    replay it with:");
		for (int l = 0; l < TUNE_LEVERS; l++)
			fprintf(fp, " --set %s", sets[l]);
		fputc('\n', fp);
	}
}

static void json_score(FILE *fp, const struct tune_score *sc)
{
	if (!sc->found) {
		fprintf(fp, "{\"found\":false,\"gpus\":null,\"p95_ttft_ms\":null}");
		return;
	}
	fprintf(fp, "{\"found\":true,\"gpus\":%d,\"p95_ttft_ms\":", (int)sc->gpus);
	jsonw_num(fp, sc->ttft_p95_ms);
	fputc('}', fp);
}

static void json_usd(FILE *fp, const double usd[3])
{
	static const char *const NAMES[3] = {"purchase", "dedicated", "elastic"};
	fputc('{', fp);
	for (int j = 0; j < 3; j++) {
		fprintf(fp, "%s\"%s\":", j ? "," : "", NAMES[j]);
		if (usd[j] < 0)
			fprintf(fp, "null");
		else
			jsonw_num(fp, usd[j]);
	}
	fputc('}', fp);
}

void tune_json(FILE *fp, const struct tune_result *t)
{
	fprintf(fp, "\"tune\":{\"budget\":%d,\"options\":[", (int)t->budget);
	for (size_t i = 0; i < t->n; i++) {
		const struct tune_option *o = &t->opt[i];
		fprintf(fp, "%s{\"hardware\":", i ? "," : "");
		jsonw_str(fp, o->hardware);
		if (o->error) {
			fprintf(fp, ",\"error\":");
			jsonw_str(fp, o->error_msg);
			fputc('}', fp);
			continue;
		}
		fprintf(fp, ",\"searches\":%d,\"passes\":%d,\"budget_spent\":%s,\"replays\":%d,"
			"\"events\":%lld,\"scenario\":", (int)o->searches, (int)o->passes,
			o->budget_spent ? "true" : "false", (int)o->replays, (long long)o->events);
		json_score(fp, &o->base);
		fprintf(fp, ",\"tuned\":");
		json_score(fp, &o->best);
		fprintf(fp, ",\"usd_month_scenario\":");
		json_usd(fp, o->usd_month[0]);
		fprintf(fp, ",\"usd_month_tuned\":");
		json_usd(fp, o->usd_month[1]);
		fprintf(fp, ",\"levers\":[");
		for (int l = 0; l < TUNE_LEVERS; l++) {
			fprintf(fp, "%s{\"key\":\"%s\",\"scenario\":", l ? "," : "", LEVER_KEYS[l]);
			jsonw_str(fp, o->scenario.v[l]);
			fprintf(fp, ",\"tuned\":");
			jsonw_str(fp, o->tuned.v[l]);
			fprintf(fp, ",\"candidates\":[");
			for (int j = 0; j < o->n_values[l]; j++) {
				fprintf(fp, "%s", j ? "," : "");
				jsonw_str(fp, o->values[l][j]);
			}
			fprintf(fp, "],\"at_scenario_value\":");
			json_score(fp, &o->effect[l]);
			fputc('}', fp);
		}
		char sets[TUNE_LEVERS][LAUNCH_SET_MAX];
		tune_sets(&o->tuned, sets);
		fprintf(fp, "],\"sets\":[");
		for (int l = 0; l < TUNE_LEVERS; l++) {
			fprintf(fp, "%s", l ? "," : "");
			jsonw_str(fp, sets[l]);
		}
		fprintf(fp, "]}");
	}
	fprintf(fp, "]}");
}
