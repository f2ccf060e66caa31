/* SPDX-License-Identifier: Apache-2.0
 * kvcap: the memory model against vLLM's start-up KV cache (see kvcap.h).
 */
#include "calib/kvcap.h"

#include "models/csvread.h"
#include "models/memory.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GIB 1073741824.0

/* Column indices of the CSV (-1: absent). */
struct cols {
	int id, hardware, tp, model, weight_format, kv_dtype, engine, util, mnbt, seqs, sampler,
	    block, tokens, gib, weights;
};

static int need(const struct csvread *t, const char *name, int *out, struct diag *d)
{
	*out = csvread_col(t, name);
	if (*out < 0)
		return diag_set(d, DIAG_EINPUT, "%s: no '%s' column", t->path, name);
	return 0;
}

static int find_cols(const struct csvread *t, struct cols *c, struct diag *d)
{
	int rc;
	if ((rc = need(t, "id", &c->id, d)) || (rc = need(t, "hardware", &c->hardware, d)) ||
	    (rc = need(t, "tp", &c->tp, d)) || (rc = need(t, "model", &c->model, d)) ||
	    (rc = need(t, "weight_format", &c->weight_format, d)) ||
	    (rc = need(t, "kv_dtype", &c->kv_dtype, d)) || (rc = need(t, "engine", &c->engine, d)) ||
	    (rc = need(t, "gpu_memory_utilization", &c->util, d)) ||
	    (rc = need(t, "max_num_batched_tokens", &c->mnbt, d)) ||
	    (rc = need(t, "max_num_seqs", &c->seqs, d)) ||
	    (rc = need(t, "sampler", &c->sampler, d)) ||
	    (rc = need(t, "block_size", &c->block, d)) ||
	    (rc = need(t, "reported_kv_tokens", &c->tokens, d)) ||
	    (rc = need(t, "reported_kv_gib", &c->gib, d)) ||
	    (rc = need(t, "logged_weights_gib", &c->weights, d)))
		return rc;
	return 0;
}

/* The minor version of "v0.<minor>" in text (case-insensitive), or -1. */
static int version_minor(const char *text)
{
	for (const char *p = text; *p; p++) {
		if ((p[0] == 'v' || p[0] == 'V') && p[1] == '0' && p[2] == '.' &&
		    isdigit((unsigned char)p[3]) && (p == text || !isalnum((unsigned char)p[-1])))
			return (int)strtol(p + 3, NULL, 10);
	}
	return -1;
}

static void copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

/* A whole number cell in [lo, hi]. */
static int whole(const struct csvread *t, size_t r, int col, double lo, double hi, int64_t *out,
		 struct diag *d)
{
	double v;
	int rc = csvread_number(t, r, col, 0, &v, d);
	if (rc)
		return rc;
	if (!(v >= lo && v <= hi) || v != floor(v))
		return diag_at(d, DIAG_EINPUT, t->path, t->lines[r], 0, "column '%s': %g (expected "
			       "a whole number from %g to %g)", t->header[col], v, lo, hi);
	*out = (int64_t)v;
	return 0;
}

static int read_row(const struct csvread *t, size_t r, const struct cols *c,
		    struct kvcap_row *row, struct diag *d)
{
	*row = (struct kvcap_row){ .line = t->lines[r], .logged_weights_gib = NAN };
	copy(row->id, sizeof(row->id), csvread_cell(t, r, c->id));
	copy(row->hardware, sizeof(row->hardware), csvread_cell(t, r, c->hardware));
	copy(row->model, sizeof(row->model), csvread_cell(t, r, c->model));
	copy(row->weight_format, sizeof(row->weight_format), csvread_cell(t, r, c->weight_format));
	copy(row->kv_dtype, sizeof(row->kv_dtype), csvread_cell(t, r, c->kv_dtype));
	copy(row->engine_text, sizeof(row->engine_text), csvread_cell(t, r, c->engine));
	copy(row->sampler, sizeof(row->sampler), csvread_cell(t, r, c->sampler));
	row->version_minor = version_minor(row->engine_text);
	int64_t tp = 0;
	int rc;
	if ((rc = whole(t, r, c->tp, 1, 1024, &tp, d)) ||
	    (rc = whole(t, r, c->mnbt, 1, 1 << 24, &row->max_num_batched_tokens, d)) ||
	    (rc = whole(t, r, c->seqs, 1, 1 << 20, &row->max_num_seqs, d)) ||
	    (rc = whole(t, r, c->block, 1, 1 << 16, &row->block_size, d)) ||
	    (rc = csvread_number(t, r, c->util, 0, &row->gpu_memory_utilization, d)) ||
	    (rc = csvread_number(t, r, c->weights, 1, &row->logged_weights_gib, d)))
		return rc;
	row->tp = (int)tp;
	if (strcmp(row->sampler, "sort") != 0 && strcmp(row->sampler, "flashinfer") != 0)
		return diag_at(d, DIAG_EINPUT, t->path, row->line, 0, "column 'sampler': '%s' "
			       "(expected sort or flashinfer)", row->sampler);
	double tokens, gib;
	if ((rc = csvread_number(t, r, c->tokens, 1, &tokens, d)) ||
	    (rc = csvread_number(t, r, c->gib, 1, &gib, d)))
		return rc;
	if (isnan(tokens) == isnan(gib))
		return diag_at(d, DIAG_EINPUT, t->path, row->line, 0, "expected exactly one of "
			       "reported_kv_tokens and reported_kv_gib");
	row->in_tokens = !isnan(tokens);
	row->reported = row->in_tokens ? tokens : gib;
	if (!(row->reported > 0))
		return diag_at(d, DIAG_EINPUT, t->path, row->line, 0, "reported KV capacity %g: "
			       "expected a positive figure", row->reported);
	return 0;
}

/* Plan one row as its vLLM version sized the cache. */
static int predict(struct kvcap_row *row, const char *path, const struct catalog *cat,
		   const struct engine_table *et, struct diag *d)
{
	const struct cat_hardware *hw = catalog_hardware(cat, row->hardware);
	if (!hw)
		return diag_at(d, DIAG_EINPUT, path, row->line, 0, "unknown hardware '%s'",
			       row->hardware);
	const struct engine_profile *ep = engine_match(et, row->engine_text);
	if (!ep)
		return diag_at(d, DIAG_EINPUT, path, row->line, 0, "engine '%s' matches no engine "
			       "profile", row->engine_text);
	copy(row->engine, sizeof(row->engine), ep->id);
	const struct cat_family *fam = hw->family ? hw->family
				       : (hw->device ? hw->device->family : NULL);
	struct engine_params par;
	engine_resolve(ep, fam ? fam->id : NULL, &par);
	struct mem_opts mo;
	mem_opts_init(&mo);
	mem_engine_of(&mo.engine, &par, row->max_num_seqs);
	/* the sampler path the start-up took, as its log or version says */
	mo.engine.sampler_bytes_per_logit = strcmp(row->sampler, "flashinfer") == 0
						    ? MEM_SAMPLER_FLASHINFER_BYTES_PER_LOGIT
						    : MEM_SAMPLER_SORT_BYTES_PER_LOGIT;
	/* CUDA graphs are charged before the KV cache from v0.21 on */
	if (row->version_minor >= 0 && row->version_minor < KVCAP_CUDA_GRAPH_MINOR)
		mo.engine.cuda_graph_gib = 0;
	mo.hardware = row->hardware;
	mo.model = row->model;
	mo.weight_format = row->weight_format;
	mo.kv_dtype = row->kv_dtype;
	mo.tp = row->tp;
	mo.gpu_memory_utilization = row->gpu_memory_utilization;
	mo.max_num_batched_tokens = row->max_num_batched_tokens;
	struct mem_plan plan;
	struct diag md;
	diag_init(&md);
	if (mem_plan_opts(&plan, cat, &mo, &md) != 0)
		return diag_at(d, DIAG_EINPUT, path, row->line, 0, "row '%s': %s", row->id, md.msg);
	double kv = (double)plan.kv_bytes;
	if (row->in_tokens) {
		double block = (double)plan.kv_gpu_bytes_per_token * (double)row->block_size;
		row->predicted = floor(kv / block) * (double)row->block_size;
	} else {
		row->predicted = kv / GIB;
	}
	row->error = (row->predicted - row->reported) / row->reported;
	row->device_gib = (double)plan.device_bytes / GIB;
	row->budget_gib = (double)plan.budget_bytes / GIB;
	row->weights_gib = (double)plan.weights_bytes / GIB;
	row->non_torch_gib = (double)plan.non_torch_bytes / GIB;
	row->cuda_graph_gib = (double)plan.cuda_graph_bytes / GIB;
	row->activation_gib = (double)plan.activation_bytes / GIB;
	row->kv_gib = kv / GIB;
	return 0;
}

static int run_table(struct kvcap_set *set, struct csvread *t, const struct catalog *cat,
		     const struct engine_table *et, struct diag *d)
{
	struct cols c;
	int rc = find_cols(t, &c, d);
	if (rc == 0 && t->rows > KVCAP_MAX_ROWS)
		rc = diag_set(d, DIAG_EINPUT, "%s: %zu rows (at most %d)", t->path, t->rows,
			      KVCAP_MAX_ROWS);
	for (size_t r = 0; rc == 0 && r < t->rows; r++) {
		struct kvcap_row *row = &set->rows[set->count];
		rc = read_row(t, r, &c, row, d);
		if (rc == 0)
			rc = predict(row, t->path, cat, et, d);
		if (rc == 0)
			set->count++;
	}
	csvread_release(t);
	return rc;
}

int kvcap_run(struct kvcap_set *set, const char *path, const struct catalog *cat,
	      const struct engine_table *et, struct diag *d)
{
	set->count = 0;
	struct csvread t;
	int rc = csvread_load(&t, path, d);
	return rc ? rc : run_table(set, &t, cat, et, d);
}

int kvcap_run_text(struct kvcap_set *set, const char *name, const char *text, size_t len,
		   const struct catalog *cat, const struct engine_table *et, struct diag *d)
{
	set->count = 0;
	struct csvread t;
	int rc = csvread_parse(&t, name, text, len, d);
	return rc ? rc : run_table(set, &t, cat, et, d);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double kvcap_median_abs_error(const struct kvcap_set *set)
{
	if (set->count == 0)
		return 0;
	double v[KVCAP_MAX_ROWS];
	for (size_t i = 0; i < set->count; i++)
		v[i] = fabs(set->rows[i].error);
	qsort(v, set->count, sizeof(v[0]), cmp_double);
	size_t n = set->count;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

size_t kvcap_within(const struct kvcap_set *set, double frac)
{
	size_t n = 0;
	for (size_t i = 0; i < set->count; i++)
		if (fabs(set->rows[i].error) <= frac)
			n++;
	return n;
}

size_t kvcap_hardware_count(const struct kvcap_set *set)
{
	size_t n = 0;
	for (size_t i = 0; i < set->count; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(set->rows[i].hardware, set->rows[j].hardware) == 0;
		n += !seen;
	}
	return n;
}

int kvcap_write_text(FILE *out, const struct kvcap_set *set, struct diag *d)
{
	fprintf(out, "%-28s %-17s %-10s %9s %9s %7s | %6s %6s %6s %6s %6s %6s %6s\n", "row",
		"GPU x tp", "engine", "reported", "predicted", "error", "device", "budget",
		"weights", "logged", "other", "act", "kv");
	for (size_t i = 0; i < set->count; i++) {
		const struct kvcap_row *r = &set->rows[i];
		char gpu[80], rep[24], pred[24], logged[16];
		snprintf(gpu, sizeof(gpu), "%s x%d", r->hardware, r->tp);
		if (r->in_tokens) {
			snprintf(rep, sizeof(rep), "%.0f", r->reported);
			snprintf(pred, sizeof(pred), "%.0f", r->predicted);
		} else {
			snprintf(rep, sizeof(rep), "%.2fGiB", r->reported);
			snprintf(pred, sizeof(pred), "%.2fGiB", r->predicted);
		}
		if (isnan(r->logged_weights_gib))
			snprintf(logged, sizeof(logged), "-");
		else
			snprintf(logged, sizeof(logged), "%.2f", r->logged_weights_gib);
		fprintf(out, "%-28s %-17s %-10s %9s %9s %+6.1f%% | %6.2f %6.2f %6.2f %6s %6.2f %6.2f "
			"%6.2f\n", r->id, gpu, r->engine, rep, pred, 100 * r->error, r->device_gib,
			r->budget_gib, r->weights_gib, logged, r->non_torch_gib + r->cuda_graph_gib,
			r->activation_gib, r->kv_gib);
	}
	fprintf(out, "%zu rows on %zu GPU models: median |error| %.1f%%, %zu within 10%%, %zu "
		"within 5%%\n", set->count, kvcap_hardware_count(set),
		100 * kvcap_median_abs_error(set), kvcap_within(set, 0.10),
		kvcap_within(set, 0.05));
	fprintf(out, "(memory in GiB per GPU: device as the driver reports it, budget = device x "
		"gpu_memory_utilization, weights as planned and as logged, other = outside PyTorch "
		"+ CUDA graphs, act = activation peak of the profiling step, kv = what is left)\n");
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "write error");
	return 0;
}
