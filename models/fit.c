/* SPDX-License-Identifier: Apache-2.0
 * fit: models against machines (see fit.h).
 *
 * For each pair the candidate formats are sorted by bits per weight, most
 * first; the memory plan decides whether a format fits, the performance
 * model gives the tokens/s.  The whole answer for one hardware entry is a
 * few hundred plans and model inits over the embedded catalogue: well
 * under a second.
 */
#include "models/fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/memory.h"
#include "models/perf_model.h"

static const char *const status_names[] = { "gpu", "offload", "no" };
static const char *const prefer_names[] = { "quality", "speed", "memory" };

const char *fit_prefer_name(enum fit_prefer p)
{
	return ((int)p >= 0 && (int)p < 3) ? prefer_names[p] : "?";
}

bool fit_prefer_parse(const char *s, enum fit_prefer *out)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(s, prefer_names[i]) == 0) {
			*out = (enum fit_prefer)i;
			return true;
		}
	return false;
}

bool fit_format_runs_on(const struct cat_hardware *hw, const struct cat_weight_format *wf)
{
	bool any = false;
	for (int t = 0; t < CAT_DTYPE_COUNT; t++)
		any = any || hw->tflops[t] > 0;
	return !any || catalog_matmul_flops(hw, wf, NULL) > 0;
}

/* Nominal bits: fp8 (8) and int8 (8.01) are the same size, 4.16-4.84 bit
 * formats are all "4-bit". */
static int nominal_bits(const struct cat_weight_format *wf)
{
	return (int)floor(wf->bits_per_weight + 1e-9);
}

static bool is_float_dtype(enum cat_dtype t)
{
	return t != CAT_DTYPE_INT8;
}

/* Seconds of one agent call at the row's context: the prompt's prefill
 * plus FIT_CALL_OUTPUT_TOKENS of decode (the prefill is left out when the
 * hardware has no compute figure). */
static double call_seconds(const struct fit_row *r, int64_t context)
{
	double s = isfinite(r->decode_tok_s) && r->decode_tok_s > 0
		   ? FIT_CALL_OUTPUT_TOKENS / r->decode_tok_s : INFINITY;
	if (isfinite(r->prefill_tok_s) && r->prefill_tok_s > 0)
		s += (double)context / r->prefill_tok_s;
	return s;
}

/* True when candidate row a is a better choice than b under `prefer`.
 * "Faster" is the shorter call_seconds; within 0.1% counts as equal. */
static bool better(const struct fit_row *a, const struct fit_row *b, enum fit_prefer prefer,
		   int64_t context)
{
	double ta = call_seconds(a, context), tb = call_seconds(b, context);
	int speed = ta * 1.001 < tb ? 1 : tb * 1.001 < ta ? -1 : 0;
	int na = nominal_bits(a->format), nb = nominal_bits(b->format);
	switch (prefer) {
	case FIT_PREFER_SPEED:
		if (speed)
			return speed > 0;
		if (na != nb)
			return na > nb;
		break;
	case FIT_PREFER_MEMORY:
		if (a->format->bits_per_weight != b->format->bits_per_weight)
			return a->format->bits_per_weight < b->format->bits_per_weight;
		if (speed)
			return speed > 0;
		break;
	case FIT_PREFER_QUALITY:
	default:
		if (na != nb)
			return na > nb;
		if (speed)
			return speed > 0;
		break;
	}
	bool fa = is_float_dtype(a->format->compute_dtype), fb = is_float_dtype(b->format->compute_dtype);
	if (fa != fb)
		return fa;
	if (a->tp != b->tp)
		return a->tp < b->tp;
	return strcmp(a->format->id, b->format->id) < 0;
}

const char *fit_status_name(enum fit_status s)
{
	return ((int)s >= 0 && (int)s < 3) ? status_names[s] : "?";
}

void fit_result_release(struct fit_result *r)
{
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

static int tp_of(const struct cat_hardware *hw)
{
	return hw->system_kind && hw->device_count > 1 ? (int)hw->device_count : 1;
}

static int fmt_cmp(const void *a, const void *b)
{
	const struct cat_weight_format *x = *(const struct cat_weight_format *const *)a;
	const struct cat_weight_format *y = *(const struct cat_weight_format *const *)b;
	if (x->bits_per_weight != y->bits_per_weight)
		return x->bits_per_weight > y->bits_per_weight ? -1 : 1;
	return strcmp(x->id, y->id);
}

static void mem_opts_for(struct mem_opts *mo, const struct cat_hardware *hw,
			 const struct cat_model *m, const struct cat_weight_format *wf, int tp,
			 const struct fit_opts *o, const struct engine_params *par, double chunk)
{
	mem_opts_init(mo);
	mem_engine_of(&mo->engine, par, engine_default_max_num_seqs(par, hw));
	mo->hardware = hw->id;
	mo->model = m->id;
	mo->weight_format = wf->id;
	mo->tp = tp;
	mo->device_memory_gb = o->memory_gb;
	if (o->gpu_memory_utilization > 0)
		mo->gpu_memory_utilization = o->gpu_memory_utilization;
	mo->max_num_batched_tokens = chunk >= 1 ? (int64_t)chunk : 8192;
}

/* Predictions and the figures of a fitting row. */
static void figures(struct fit_row *row, const struct catalog *cat, const struct fit_opts *o,
		    const struct engine_table *et, const struct mem_plan *plan, int64_t context,
		    double chunk)
{
	const struct cat_model *m = row->model;
	row->weights_gb = plan->weights_total_bytes / 1e9;
	row->weights_gpu_gb = plan->weights_bytes / 1e9;
	row->kv_tokens = plan->kv_capacity_tokens;
	row->context_cap = m->max_context < row->kv_tokens ? m->max_context : row->kv_tokens;
	row->sequences_at_cap = row->context_cap > 0 ? row->kv_tokens / row->context_cap : 0;
	row->host_ram_needed_gb = plan->host_ram_needed_bytes / 1e9;
	struct perf_opts po;
	perf_opts_init(&po);
	po.hardware = row->hw->id;
	po.model = m->id;
	po.weight_format = row->format->id;
	po.engine = row->engine;
	po.engines = et;
	po.tp = row->tp;
	po.gpu_expert_fraction = row->gpu_expert_fraction;
	po.allow_unknown_compute = true;
	struct perf_model pm;
	struct diag d;
	diag_init(&d);
	row->decode_band_pct = row->prefill_band_pct = NAN;
	if (perf_model_init_opts(&pm, cat, &po, &d) != 0) {
		row->decode_tok_s = row->prefill_tok_s = NAN;
		return;
	}
	(void)o;
	row->rate_estimated = pm.rate_estimated;
	row->compute_unknown = pm.compute_unknown;
	struct perf_batch b = perf_decode_batch(1, context);
	row->decode_tok_s = 1e9 / perf_step_ns(&pm, &b);
	row->prefill_tok_s = pm.compute_unknown ? NAN
			     : (double)context / (perf_prefill_ns(&pm, context, 0, (int64_t)chunk) * 1e-9);
	if (o->bands) {
		/* single-stream figures: the errors of single-stream rows */
		struct uncert_band db = uncert_lookup(o->bands, pm.family_id, pm.engine_id,
						      "decode_tok_s");
		struct uncert_band pb = uncert_lookup(o->bands, pm.family_id, pm.engine_id,
						      "prefill_tok_s");
		row->decode_band_pct = db.regime ? db.pct : NAN;
		row->prefill_band_pct = pb.regime && isfinite(row->prefill_tok_s) ? pb.pct : NAN;
	}
}

static int fit_one_inner(struct fit_row *row, const struct catalog *cat,
			 const struct cat_hardware *hw, const struct cat_model *m,
			 const struct fit_opts *o, const struct engine_table *et, struct diag *d)
{
	memset(row, 0, sizeof(*row));
	row->hw = hw;
	row->model = m;
	row->status = FIT_NO;
	row->tp = tp_of(hw);
	row->gpu_expert_fraction = 1;
	row->gpus_in_entry = tp_of(hw);
	row->has_price = catalog_price_usd(cat, hw, &row->price_usd);
	if (row->has_price && o->memory_gb > 0 && fabs(o->memory_gb - hw->memory_gb) > 0.5) {
		/* another machine than the one the price was published for */
		row->has_price = false;
		row->price_withheld = true;
		row->price_usd = 0;
	}
	row->price = row->has_price ? &hw->price : NULL;
	const char *ename = o->engine ? o->engine : engine_default_for(hw);
	const struct engine_profile *ep = engine_find(et, ename);
	if (!ep) {
		char ids[512];
		engine_list_ids(et, ids, sizeof(ids));
		return diag_set(d, DIAG_EINPUT, "unknown engine '%s' (known: %s)", ename, ids);
	}
	snprintf(row->engine, sizeof(row->engine), "%s", ep->id);
	const struct cat_family *fam = hw->family ? hw->family
				       : (hw->device ? hw->device->family : NULL);
	struct engine_params par;
	engine_resolve(ep, fam ? fam->id : NULL, &par);
	double chunk = (double)engine_default_chunk(&par, hw);
	int64_t min_ctx = o->min_context > 0 ? o->min_context
			  : (m->max_context < FIT_DEFAULT_MIN_CONTEXT ? m->max_context
								   : FIT_DEFAULT_MIN_CONTEXT);
	int64_t context = o->context > 0 ? o->context : FIT_DEFAULT_CONTEXT;
	row->host_ram_gb = o->host_ram_gb > 0 ? o->host_ram_gb
			   : hw->host_memory_max_gb > 0 ? hw->host_memory_max_gb
							: FIT_DEFAULT_HOST_RAM_GB;
	row->host_ram_assumed = !(o->host_ram_gb > 0) && !(hw->host_memory_max_gb > 0);

	/* candidate formats, most bits first */
	const struct cat_weight_format *cand[64];
	size_t nc = 0;
	for (size_t i = 0; i < cat->weight_format_count && nc < 64; i++) {
		const struct cat_weight_format *wf = &cat->weight_formats[i];
		if (o->weight_format ? catalog_name_eq(o->weight_format, wf->id) ||
					       wf == catalog_weight_format(cat, o->weight_format)
				     : engine_supports_format(ep, wf->id))
			cand[nc++] = wf;
	}
	if (nc == 0) {
		snprintf(row->why, sizeof(row->why), "no weight format the %s engine loads%s%s",
			 ep->id, o->weight_format ? " matches " : "",
			 o->weight_format ? o->weight_format : "");
		return 0;
	}
	/* only formats the hardware can compute in */
	size_t nr = 0;
	for (size_t i = 0; i < nc; i++)
		if (fit_format_runs_on(hw, cand[i]))
			cand[nr++] = cand[i];
		else
			snprintf(row->why, sizeof(row->why), "%s has no %s tensor path for %s (and the "
				 "format has no fallback)", hw->id,
				 cat_dtype_name(cand[i]->compute_dtype), cand[i]->id);
	if (nr == 0)
		return 0;
	nc = nr;
	qsort(cand, nc, sizeof(cand[0]), fmt_cmp);

	struct perf_opts po;
	perf_opts_init(&po);
	po.hardware = hw->id;
	po.model = m->id;
	po.engine = ep->id;
	po.engines = et;
	po.tp = row->tp;
	po.allow_unknown_compute = true;
	struct mem_plan plan;
	struct diag md;
	/* tensor-parallel groups a system can form: powers of two, then all */
	int tps[16], ntp = 0, gpus = row->tp;
	for (int t = 1; t < gpus && ntp < 15; t *= 2)
		tps[ntp++] = t;
	tps[ntp++] = gpus;
	/* all weights on the GPUs: each format on the fewest GPUs that hold
	 * it, and the best of those by the preference */
	struct fit_row best;
	bool have = false;
	char why[sizeof(row->why)];
	snprintf(why, sizeof(why), "%s", row->why);
	for (size_t i = 0; i < nc; i++) {
		for (int k = 0; k < ntp; k++) {
			int tp = tps[k];
			struct mem_opts mo;
			mem_opts_for(&mo, hw, m, cand[i], tp, o, &par, chunk);
			diag_init(&md);
			int rc = mem_plan_opts(&plan, cat, &mo, &md);
			if (rc == 0 && plan.kv_capacity_tokens < min_ctx) {
				snprintf(why, sizeof(why), "in %s the KV cache holds %lld tokens, "
					 "fewer than %lld", cand[i]->id,
					 (long long)plan.kv_capacity_tokens, (long long)min_ctx);
				continue;
			}
			if (rc != 0) {
				snprintf(why, sizeof(why), "%s", md.msg);
				continue;
			}
			struct perf_model pm;
			po.weight_format = cand[i]->id;
			po.tp = tp;
			diag_init(&md);
			if (perf_model_init_opts(&pm, cat, &po, &md) != 0) {
				snprintf(why, sizeof(why), "%s", md.msg);
				continue;
			}
			struct fit_row c = *row;
			c.tp = tp;
			c.format = cand[i];
			c.status = FIT_GPU;
			c.why[0] = '\0';
			figures(&c, cat, o, et, &plan, context, chunk);
			if (!have || better(&c, &best, o->prefer, context))
				best = c;
			have = true;
			break;
		}
	}
	if (have) {
		*row = best;
		return 0;
	}
	snprintf(row->why, sizeof(row->why), "%s", why);
	if (m->experts <= 0 || hw->unified_memory)
		return 0;
	/* experts in host RAM, all GPUs of the entry */
	po.tp = row->tp;
	double best_need = INFINITY;
	for (size_t i = 0; i < nc; i++) {
		struct mem_opts mo;
		mem_opts_for(&mo, hw, m, cand[i], row->tp, o, &par, chunk);
		double f = mem_max_gpu_expert_fraction(cat, &mo, min_ctx);
		if (f < 0)
			continue;
		mo.gpu_expert_fraction = f;
		diag_init(&md);
		if (mem_plan_opts(&plan, cat, &mo, &md) != 0)
			continue;
		double need = plan.host_ram_needed_bytes / 1e9;
		if (need > row->host_ram_gb) {
			best_need = fmin(best_need, need);
			continue;
		}
		struct perf_model pm;
		po.weight_format = cand[i]->id;
		po.gpu_expert_fraction = f;
		diag_init(&md);
		if (perf_model_init_opts(&pm, cat, &po, &md) != 0)
			continue;
		row->format = cand[i];
		row->status = FIT_OFFLOAD;
		row->gpu_expert_fraction = f;
		row->why[0] = '\0';
		figures(row, cat, o, et, &plan, context, chunk);
		return 0;
	}
	if (isfinite(best_need))
		snprintf(row->why, sizeof(row->why), "with experts in host RAM it needs %.0f GB of "
			 "host RAM, more than the %.0f GB %s", best_need, row->host_ram_gb,
			 row->host_ram_assumed ? "assumed (--host-ram)" : "available");
	return 0;
}

int fit_one(struct fit_row *row, const struct catalog *cat, const struct cat_hardware *hw,
	    const struct cat_model *m, const struct fit_opts *o, const struct engine_table *et,
	    struct diag *d)
{
	int rc = fit_one_inner(row, cat, hw, m, o, et, d);
	if (rc == 0 && cat->calibration && row->status != FIT_NO) {
		struct calfile_regime reg = { .hardware = hw->id, .model = m->id,
					      .engine = row->engine, .batch = 1,
					      .context = (double)(o->context > 0 ? o->context
										 : FIT_DEFAULT_CONTEXT) };
		calfile_nearest(cat->calibration, cat, &reg, &row->near);
	}
	return rc;
}

static int total_cmp(const void *a, const void *b)
{
	const struct fit_row *x = a, *y = b;
	if ((x->status == FIT_NO) != (y->status == FIT_NO))
		return x->status == FIT_NO ? 1 : -1;
	if (x->model->total_params != y->model->total_params)
		return x->model->total_params > y->model->total_params ? -1 : 1;
	return strcmp(x->model->id, y->model->id);
}

static int load_engines(const struct catalog *cat, const struct fit_opts *o,
			struct engine_table **own, const struct engine_table **et, struct diag *d)
{
	*own = NULL;
	*et = o->engines ? o->engines : cat->engines;
	if (*et)
		return 0;
	*own = malloc(sizeof(**own));
	if (!*own)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	int rc = engine_table_load(*own, NULL, d);
	if (rc) {
		free(*own);
		*own = NULL;
		return rc;
	}
	*et = *own;
	return 0;
}

static void result_meta(struct fit_result *r, const struct catalog *cat, const struct fit_opts *o)
{
	r->calibration = cat->calibration;
	r->context = o->context > 0 ? o->context : FIT_DEFAULT_CONTEXT;
	r->memory_gb = o->memory_gb;
	r->prefer = o->prefer;
	r->band_coverage = o->bands ? o->bands->coverage : 0;
	r->usd_per_eur = cat->usd_per_eur;
	r->usd_per_eur_date = cat->usd_per_eur_date;
}

/* Priced rows first, cheapest first (ties by id), then the others in the
 * order they came (catalogue order): a stable insertion sort. */
static size_t sort_by_price(struct fit_row *rows, size_t n)
{
	size_t priced = 0;
	for (size_t i = 1; i < n; i++) {
		struct fit_row x = rows[i];
		size_t j = i;
		while (j > 0) {
			const struct fit_row *y = &rows[j - 1];
			bool before = x.has_price && (!y->has_price || x.price_usd < y->price_usd ||
					(x.price_usd == y->price_usd && strcmp(x.hw->id, y->hw->id) < 0));
			if (!before)
				break;
			rows[j] = rows[j - 1];
			j--;
		}
		rows[j] = x;
	}
	for (size_t i = 0; i < n; i++)
		priced += rows[i].has_price;
	return priced;
}

int fit_hardware(struct fit_result *r, const struct catalog *cat, const char *hardware,
		 const struct fit_opts *o, struct diag *d)
{
	memset(r, 0, sizeof(*r));
	const struct cat_hardware *hw = catalog_hardware(cat, hardware);
	if (!hw) {
		struct cat_selection sel;
		return catalog_select(cat, &sel, hardware, cat->models[0].id, NULL, NULL, d);
	}
	struct engine_table *own;
	const struct engine_table *et;
	int rc = load_engines(cat, o, &own, &et, d);
	if (rc)
		return rc;
	r->subject = hw->id;
	result_meta(r, cat, o);
	r->rows = calloc(cat->model_count ? cat->model_count : 1, sizeof(*r->rows));
	if (!r->rows)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	for (size_t i = 0; i < cat->model_count && !rc; i++) {
		struct fit_row row;
		rc = fit_one(&row, cat, hw, &cat->models[i], o, et, d);
		if (rc)
			break;
		if (row.status != FIT_NO)
			r->n_fit++;
		if (row.status != FIT_NO || o->all)
			r->rows[r->n++] = row;
	}
	free(own);
	if (rc) {
		fit_result_release(r);
		return rc;
	}
	qsort(r->rows, r->n, sizeof(*r->rows), total_cmp);
	return 0;
}

int fit_model(struct fit_result *r, const struct catalog *cat, const char *model,
	      const struct fit_opts *o, struct diag *d)
{
	memset(r, 0, sizeof(*r));
	const struct cat_model *m = catalog_model(cat, model);
	if (!m) {
		struct cat_selection sel;
		return catalog_select(cat, &sel, cat->hardware[0].id, model, NULL, NULL, d);
	}
	struct engine_table *own;
	const struct engine_table *et;
	int rc = load_engines(cat, o, &own, &et, d);
	if (rc)
		return rc;
	r->by_model = true;
	r->subject = m->id;
	result_meta(r, cat, o);
	size_t nh = cat->hardware_count;
	r->rows = calloc(nh ? nh : 1, sizeof(*r->rows));
	if (!r->rows)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	for (size_t i = 0; i < nh && !rc; i++) {
		struct fit_row row;
		rc = fit_one(&row, cat, &cat->hardware[i], m, o, et, d);
		if (rc)
			break;
		if (row.status != FIT_NO)
			r->n_fit++;
		if (row.status != FIT_NO || o->all)
			r->rows[r->n++] = row;
	}
	free(own);
	if (rc)
		fit_result_release(r);
	else
		r->n_priced = sort_by_price(r->rows, r->n);
	return rc;
}

/* ---- output ---- */

static void human_tokens(char *buf, size_t cap, int64_t t)
{
	if (t >= 1000000)
		snprintf(buf, cap, "%.1fM", t / 1e6);
	else if (t >= 10000)
		snprintf(buf, cap, "%lldK", (long long)(t / 1000));
	else
		snprintf(buf, cap, "%lld", (long long)t);
}

static void params_text(char *buf, size_t cap, const struct cat_model *m)
{
	if (m->experts > 0)
		snprintf(buf, cap, "%.0fB/%.1fB", m->total_params / 1e9, m->active_params / 1e9);
	else
		snprintf(buf, cap, "%.1fB", m->total_params / 1e9);
}

static void note_text(char *buf, size_t cap, const struct fit_row *row)
{
	buf[0] = '\0';
	if (row->status == FIT_NO) {
		snprintf(buf, cap, "does not fit: %s", row->why);
		return;
	}
	size_t n = 0;
	if (row->status == FIT_OFFLOAD)
		n += (size_t)snprintf(buf + n, cap - n, "expert offload: %.0f%% of experts on GPU, "
				      "needs %.0f GB host RAM%s; ", 100 * row->gpu_expert_fraction,
				      row->host_ram_needed_gb,
				      row->host_ram_assumed ? " (512 GB assumed)" : "");
	if (row->rate_estimated && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "compute rate estimated from the family; ");
	if (row->compute_unknown && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "no compute figure in the catalogue: decode "
				      "from bandwidth only, no prefill; ");
	if (row->near.found && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "nearest measured: %s, %s, %s, score %.1f; ",
				      calfile_hardware_word(row->near.hardware_rank),
				      calfile_model_word(row->near.model_rank),
				      calfile_engine_word(row->near.engine_rank), row->near.score);
	if (n >= 2 && n < cap)
		buf[n - 2] = '\0';
}

static void price_text(char *buf, size_t cap, const struct fit_row *row)
{
	if (row->has_price && row->price)
		snprintf(buf, cap, "%s %.0f", cat_currency_name(row->price->currency),
			 row->price->amount);
	else if (row->price_withheld)
		snprintf(buf, cap, "(--memory)");
	else
		snprintf(buf, cap, "no price");
}

static void gpus_text(char *buf, size_t cap, const struct fit_row *row)
{
	if (row->gpus_in_entry > row->tp)
		snprintf(buf, cap, "%d of %d", row->tp, row->gpus_in_entry);
	else
		snprintf(buf, cap, "%d", row->tp);
}

static void write_row(FILE *out, const struct fit_result *r, const struct fit_row *row)
{
	char kv[32] = "-", cap[32] = "-", ctx[48] = "-", note[DIAG_MSG_MAX + 64], w[32] = "-";
	if (row->status != FIT_NO) {
		human_tokens(kv, sizeof(kv), row->kv_tokens);
		human_tokens(cap, sizeof(cap), row->context_cap);
		snprintf(ctx, sizeof(ctx), "%s x %lld", cap, (long long)row->sequences_at_cap);
		snprintf(w, sizeof(w), "%.1f GB", row->weights_gb);
	}
	note_text(note, sizeof(note), row);
	const char *fmt = row->format ? row->format->id : "-";
	if (r->by_model) {
		char price[48], gpus[32];
		price_text(price, sizeof(price), row);
		gpus_text(gpus, sizeof(gpus), row);
		fprintf(out, "%-26s %13s %8s %-12s %-9s %9s %10s %-14s", row->hw->id, price, gpus,
			fmt, row->engine, w, kv, ctx);
	} else {
		char par[32];
		params_text(par, sizeof(par), row->model);
		fprintf(out, "%-26s %-11s %-12s %-9s %9s %10s %-14s", row->model->id, par, fmt,
			row->engine, w, kv, ctx);
	}
	if (row->status != FIT_NO && isfinite(row->decode_tok_s) && isfinite(row->prefill_tok_s))
		fprintf(out, " %9.1f %9.0f", row->decode_tok_s, row->prefill_tok_s);
	else if (row->status != FIT_NO && isfinite(row->decode_tok_s))
		fprintf(out, " %9.1f %9s", row->decode_tok_s, "-");
	else
		fprintf(out, " %9s %9s", "-", "-");
	if (r->band_coverage > 0) {
		char db[16] = "-", pb[16] = "-";
		if (row->status != FIT_NO && isfinite(row->decode_band_pct))
			snprintf(db, sizeof(db), "%.0f%%", row->decode_band_pct);
		if (row->status != FIT_NO && isfinite(row->prefill_band_pct))
			snprintf(pb, sizeof(pb), "%.0f%%", row->prefill_band_pct);
		fprintf(out, " %5s %5s", db, pb);
	}
	fprintf(out, "  %s\n", note);
}

int fit_write_text(FILE *out, const struct fit_result *r, struct diag *d)
{
	char mem[96] = "";
	if (r->memory_gb > 0)
		snprintf(mem, sizeof(mem), "%g GB per GPU (--memory)", r->memory_gb);
	if (r->by_model) {
		fprintf(out, "Hardware that can hold %s, cheapest first (%zu of the catalogue%s%s):\n",
			r->subject, r->n_fit, mem[0] ? "; " : "", mem);
	} else if (r->n > 0) {
		const struct cat_hardware *hw = r->rows[0].hw;
		if (mem[0])
			snprintf(mem, sizeof(mem), "%g GB per GPU (--memory; the catalogue's %g GB)",
				 r->memory_gb, hw->memory_gb);
		else
			snprintf(mem, sizeof(mem), "%g GB per GPU", hw->memory_gb);
		fprintf(out, "Models that fit on %s (%s; %s, %.0f GB/s peak memory bandwidth from the "
			"catalogue's datasheet figure): %zu\n", r->subject, hw->name, mem,
			hw->mem_bw_gbs, r->n_fit);
	} else {
		fprintf(out, "No catalogue model fits on %s%s%s.\n", r->subject,
			mem[0] ? " with " : "", mem);
	}
	fprintf(out, "decode and prefill tok/s are model predictions at %lld tokens of context, "
		"one sequence; not measurements.\n", (long long)r->context);
	if (r->band_coverage > 0)
		fprintf(out, "+-dec, +-pre: the %.0f%% band of each prediction, from the out-of-sample "
			"errors of its hardware family x engine (docs/validation.md).\n",
			100 * r->band_coverage);
	fprintf(out, "format: per row the one preferred for %s (--prefer) among those that fit and "
		"that the hardware and engine can run.\n", fit_prefer_name(r->prefer));
	if (r->by_model) {
		fputs("price: the whole entry's list price as published (lower end of a range), in its "
		      "own currency", out);
		if (r->usd_per_eur > 0)
			fprintf(out, "; sorted with EUR at %g USD (catalogue rate of %s)", r->usd_per_eur,
				r->usd_per_eur_date ? r->usd_per_eur_date : "unknown date");
		fputs(".\nGPUs: those the model uses, of the entry's total when a system has more.\n",
		      out);
		if (r->memory_gb > 0)
			fputs("(--memory): an entry whose memory --memory changes is another machine; its "
			      "list price is not shown.\n", out);
	}
	if (r->calibration) {
		char cb[CALFILE_PATH_MAX + 128];
		calfile_describe(r->calibration, cb, sizeof(cb));
		fprintf(out, "Calibration: %s; the note says how far each row is from its nearest "
			"measured point (docs/calibrate.md).\n", cb);
	}
	fputc('\n', out);
	if (r->by_model)
		fprintf(out, "%-26s %13s %8s %-12s %-9s %9s %10s %-14s %9s %9s", "hardware",
			"price", "GPUs", "format", "engine", "weights", "KV tokens",
			"ctx x seqs", "decode/s", "prefill/s");
	else
		fprintf(out, "%-26s %-11s %-12s %-9s %9s %10s %-14s %9s %9s", "model",
			"params", "format", "engine", "weights", "KV tokens", "ctx x seqs",
			"decode/s", "prefill/s");
	if (r->band_coverage > 0)
		fprintf(out, " %5s %5s", "+-dec", "+-pre");
	fputs("  note\n", out);
	for (size_t i = 0; i < r->n; i++) {
		if (r->by_model && i == r->n_priced)
			fprintf(out, "-- %s, in catalogue order:\n", r->memory_gb > 0
				? "without a list price for this memory (none published, or --memory)"
				: "no price published in the catalogue");
		write_row(out, r, &r->rows[i]);
	}
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the fit table");
	return 0;
}

static void jnum(FILE *out, const char *key, double v)
{
	if (isfinite(v))
		fprintf(out, "\"%s\": %.10g", key, v);
	else
		fprintf(out, "\"%s\": null", key);
}

int fit_write_json(FILE *out, const struct fit_result *r, struct diag *d)
{
	fprintf(out, "{\n  \"schema_version\": 1,\n  \"mode\": \"%s\",\n  \"subject\": \"%s\",\n"
		"  \"context\": %lld,\n  \"prefer\": \"%s\",\n  ", r->by_model ? "model" : "hardware",
		r->subject ? r->subject : "", (long long)r->context, fit_prefer_name(r->prefer));
	jnum(out, "memory_gb", r->memory_gb > 0 ? r->memory_gb : NAN);
	fputs(",\n  ", out);
	jnum(out, "usd_per_eur", r->usd_per_eur > 0 ? r->usd_per_eur : NAN);
	if (r->band_coverage > 0) {
		fputs(",\n  ", out);
		jnum(out, "band_coverage", r->band_coverage);
	}
	if (r->calibration) {
		size_t k = r->n ? r->n : 1;
		const char **labels = calloc(k, sizeof(*labels));
		char *lab = calloc(k, 2 * CAT_ID_MAX + 2);
		struct calfile_regime *reg = calloc(k, sizeof(*reg));
		struct calfile_near *nr = calloc(k, sizeof(*nr));
		if (!labels || !lab || !reg || !nr) {
			free(labels);
			free(lab);
			free(reg);
			free(nr);
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		}
		size_t m = 0;
		for (size_t i = 0; i < r->n; i++) {
			const struct fit_row *row = &r->rows[i];
			if (row->status == FIT_NO)
				continue;
			char *l = lab + m * (2 * CAT_ID_MAX + 2);
			snprintf(l, 2 * CAT_ID_MAX + 2, "%s/%s", row->hw->id, row->model->id);
			labels[m] = l;
			reg[m] = (struct calfile_regime){ .hardware = row->hw->id, .model = row->model->id,
							  .engine = row->engine, .batch = 1,
							  .context = (double)r->context };
			nr[m] = row->near;
			m++;
		}
		fputs(",\n  \"calibration\": ", out);
		calfile_write_json(out, r->calibration, labels, reg, nr, m);
		free(labels);
		free(lab);
		free(reg);
		free(nr);
	}
	fprintf(out, ",\n  \"fitting\": %zu,\n  \"rows\": [", r->n_fit);
	for (size_t i = 0; i < r->n; i++) {
		const struct fit_row *row = &r->rows[i];
		fprintf(out, "%s\n    {\"hardware\": \"%s\", \"model\": \"%s\", \"status\": \"%s\", "
			"\"format\": ", i ? "," : "", row->hw->id, row->model->id,
			fit_status_name(row->status));
		if (row->format)
			fprintf(out, "\"%s\"", row->format->id);
		else
			fputs("null", out);
		fprintf(out, ", \"engine\": \"%s\", \"gpus\": %d, \"gpus_in_entry\": %d, ",
			row->engine, row->tp, row->gpus_in_entry);
		jnum(out, "weights_gb", row->status == FIT_NO ? NAN : row->weights_gb);
		fputs(", ", out);
		jnum(out, "weights_gpu_gb", row->status == FIT_NO ? NAN : row->weights_gpu_gb);
		fprintf(out, ", \"kv_tokens\": %lld, \"context_cap\": %lld, \"sequences_at_cap\": %lld, ",
			(long long)row->kv_tokens, (long long)row->context_cap,
			(long long)row->sequences_at_cap);
		jnum(out, "gpu_expert_fraction", row->gpu_expert_fraction);
		fputs(", ", out);
		jnum(out, "host_ram_needed_gb", row->host_ram_needed_gb);
		fputs(", ", out);
		jnum(out, "decode_tok_s", row->status == FIT_NO ? NAN : row->decode_tok_s);
		fputs(", ", out);
		jnum(out, "prefill_tok_s", row->status == FIT_NO ? NAN : row->prefill_tok_s);
		fputs(", ", out);
		if (r->band_coverage > 0) {
			jnum(out, "decode_band_pct", row->status == FIT_NO ? NAN : row->decode_band_pct);
			fputs(", ", out);
			jnum(out, "prefill_band_pct",
			     row->status == FIT_NO ? NAN : row->prefill_band_pct);
			fputs(", ", out);
		}
		jnum(out, "price_usd", row->has_price ? row->price_usd : NAN);
		if (row->has_price && row->price)
			fprintf(out, ", \"price\": {\"amount\": %.10g, \"currency\": \"%s\", "
				"\"date\": \"%s\"}", row->price->amount,
				cat_currency_name(row->price->currency),
				row->price->date ? row->price->date : "");
		else
			fputs(", \"price\": null", out);
		fprintf(out, ", \"price_withheld\": %s", row->price_withheld ? "true" : "false");
		fprintf(out, ", \"rate_estimated\": %s, \"compute_unknown\": %s, \"why\": \"",
			row->rate_estimated ? "true" : "false", row->compute_unknown ? "true" : "false");
		for (const char *p = row->why; *p; p++) {
			if (*p == '"' || *p == '\\')
				fputc('\\', out);
			if ((unsigned char)*p >= 0x20)
				fputc(*p, out);
		}
		fputs("\"}", out);
	}
	fputs(r->n ? "\n  ]\n}\n" : "]\n}\n", out);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the fit JSON");
	return 0;
}
