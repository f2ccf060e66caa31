/* SPDX-License-Identifier: Apache-2.0
 * engine: the engine profile table (see engine.h).
 *
 * engines.json holds {"schema_version": 1, "description"?, "engines": [...]}.
 * Every number is a sourced figure {"value", "unit", "source", "date",
 * "note"?} as in the catalogue; overheads are in "us" (>= 0), scales are
 * "fraction" in (0, 1].  An error names the file and the key path, as the
 * catalogue loader does: "engines.json: engines[1].bw_scale.value: ...".
 */
#include "models/engine.h"
#include "base/textfile.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/catalog.h"

extern const char engines_json[]; /* generated from models/catalog/engines.json */

const char *engine_embedded_json(void)
{
	return engines_json;
}

/* Parse state: the file name and the key path being read. */
struct ep {
	const char *file;
	char path[256];
	struct diag *d;
};

/* Append text to the key path, cut at its end; returns the mark to pop
 * back to.  The path is only read in messages and a key is pushed per
 * field, so no printf here. */
static size_t ep_push(struct ep *p, const char *text)
{
	size_t mark = strlen(p->path);
	size_t n = strlen(text), room = sizeof(p->path) - 1 - mark;
	if (n > room)
		n = room;
	memcpy(p->path + mark, text, n);
	p->path[mark + n] = '\0';
	return mark;
}

/* ".key" */
static size_t ep_key(struct ep *p, const char *key)
{
	size_t mark = ep_push(p, ".");
	ep_push(p, key);
	return mark;
}

/* "[i]" */
static size_t ep_index(struct ep *p, size_t i)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "[%zu]", i);
	return ep_push(p, buf);
}

static void ep_pop(struct ep *p, size_t mark)
{
	p->path[mark] = '\0';
}

static int ep_fail(struct ep *p, const char *what)
{
	return diag_set(p->d, DIAG_EINPUT, "%s: %s: %s", p->file, p->path[0] ? p->path : "(top)",
			what);
}

static int copy_str(struct ep *p, const cJSON *it, char *dst, size_t cap)
{
	if (!cJSON_IsString(it))
		return ep_fail(p, "expected a string");
	size_t n = strlen(it->valuestring);
	if (n == 0 || n >= cap)
		return ep_fail(p, "expected a non-empty string of fewer than 64 characters");
	memcpy(dst, it->valuestring, n + 1);
	return 0;
}

static int check_keys(struct ep *p, const cJSON *obj, const char *const *allowed)
{
	for (const cJSON *c = obj->child; c; c = c->next) {
		size_t i = 0;
		while (allowed[i] && strcmp(allowed[i], c->string) != 0)
			i++;
		if (!allowed[i]) {
			size_t m = ep_key(p, c->string);
			int rc = ep_fail(p, "unknown key");
			ep_pop(p, m);
			return rc;
		}
	}
	return 0;
}

enum range { R_NONNEG, R_FRACTION, R_TOKENS, R_SEQS, R_BOOL, R_GIB, R_FLOP_CLK, R_BYTES_CLK,
	      R_BUILD, R_SECONDS, R_GB, R_PER_GPU, R_BYTES_LOGIT };

/* A sourced figure; *out untouched when absent and not required. */
static int figure(struct ep *p, const cJSON *obj, const char *key, bool required,
		  enum range r, double *out)
{
	static const char *const keys[] = { "value", "unit", "source", "date", "note", NULL };
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	size_t m = ep_key(p, key);
	int rc = 0;
	if (!it) {
		if (required)
			rc = ep_fail(p, "missing (expected a sourced figure {\"value\", \"unit\", "
				     "\"source\", \"date\"})");
		goto out;
	}
	if (!cJSON_IsObject(it)) {
		rc = ep_fail(p, "expected a sourced figure {\"value\", \"unit\", \"source\", \"date\"}");
		goto out;
	}
	if ((rc = check_keys(p, it, keys)))
		goto out;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "value");
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(it, "unit");
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "source");
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(it, "date");
	static const char *const units[] = { "us", "fraction", "tokens", "sequences", "bool",
					     "GiB", "FLOP per core clock",
					     "bytes per core clock", "build", "s", "GB",
					     "fraction per GPU", "bytes per logit" };
	const char *want_unit = units[r];
	size_t m2;
	bool whole = r == R_TOKENS || r == R_SEQS || r == R_BUILD;
	if (r == R_BOOL ? !cJSON_IsBool(v) :
	    !cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
	    (r == R_FRACTION ? !(v->valuedouble > 0 && v->valuedouble <= 1)
	     : whole ? !(v->valuedouble >= 1 && v->valuedouble <= 1e7 &&
			 v->valuedouble == floor(v->valuedouble))
		     : !(v->valuedouble >= 0))) {
		m2 = ep_push(p, ".value");
		rc = ep_fail(p, r == R_BOOL ? "expected true or false"
				: r == R_FRACTION ? "expected a fraction in (0, 1]"
				: whole ? "expected a whole number from 1 to 10^7"
					: "expected a number >= 0");
		ep_pop(p, m2);
		goto out;
	}
	if (!cJSON_IsString(u) || strcmp(u->valuestring, want_unit) != 0) {
		char msg[64];
		snprintf(msg, sizeof(msg), "expected \"%s\"", want_unit);
		m2 = ep_push(p, ".unit");
		rc = ep_fail(p, msg);
		ep_pop(p, m2);
		goto out;
	}
	if (!cJSON_IsString(s) || !s->valuestring[0]) {
		m2 = ep_push(p, ".source");
		rc = ep_fail(p, "expected a non-empty string (where the figure comes from)");
		ep_pop(p, m2);
		goto out;
	}
	if (!cJSON_IsString(dt) || strlen(dt->valuestring) < 7 ||
	    !isdigit((unsigned char)dt->valuestring[0]) || dt->valuestring[4] != '-') {
		m2 = ep_push(p, ".date");
		rc = ep_fail(p, "expected a date YYYY-MM or YYYY-MM-DD");
		ep_pop(p, m2);
		goto out;
	}
	*out = r == R_BOOL ? (cJSON_IsTrue(v) ? 1 : 0) : v->valuedouble;
out:
	ep_pop(p, m);
	return rc;
}

static int bool_field(struct ep *p, const cJSON *obj, const char *key, int *out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!it)
		return 0;
	if (!cJSON_IsBool(it)) {
		size_t m = ep_key(p, key);
		int rc = ep_fail(p, "expected true or false");
		ep_pop(p, m);
		return rc;
	}
	*out = cJSON_IsTrue(it) ? 1 : 0;
	return 0;
}

static int str_list(struct ep *p, const cJSON *obj, const char *key,
		    char (*dst)[ENGINE_NAME_MAX], size_t max, size_t *n, bool lower)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	*n = 0;
	if (!it)
		return 0;
	size_t m = ep_key(p, key);
	int rc = 0;
	if (!cJSON_IsArray(it)) {
		rc = ep_fail(p, "expected an array of strings");
		goto out;
	}
	for (const cJSON *c = it->child; c; c = c->next) {
		size_t mi = ep_index(p, (size_t)*n);
		if (*n == max)
			rc = ep_fail(p, "too many entries");
		else
			rc = copy_str(p, c, dst[*n], ENGINE_NAME_MAX);
		ep_pop(p, mi);
		if (rc)
			goto out;
		if (lower)
			for (char *q = dst[*n]; *q; q++)
				*q = (char)tolower((unsigned char)*q);
		(*n)++;
	}
out:
	ep_pop(p, m);
	return rc;
}

/* "by_gpu_memory": [{"min_gib": n, "note"?, and sourced figures of
 * prefill_chunk_tokens, max_num_seqs, graph_max_seqs, graph_max_seqs_tp4}],
 * min_gib ascending; *n untouched when the key is absent. */
static int gpu_tiers(struct ep *p, const cJSON *e, struct engine_gpu_tier *t, int *n)
{
	static const char *const keys[] = { "min_gib", "prefill_chunk_tokens", "max_num_seqs",
		"graph_max_seqs", "graph_max_seqs_tp4", "note", NULL };
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(e, "by_gpu_memory");
	if (!arr)
		return 0;
	size_t m = ep_push(p, ".by_gpu_memory");
	int rc = 0, k = 0;
	if (!cJSON_IsArray(arr)) {
		rc = ep_fail(p, "expected an array of steps {\"min_gib\", ...}");
		goto out;
	}
	for (const cJSON *o = arr->child; o && !rc; o = o->next, k++) {
		size_t mi = ep_index(p, (size_t)k);
		if (k == ENGINE_GPU_TIERS_MAX)
			rc = ep_fail(p, "too many steps (expected at most 6)");
		else if (!cJSON_IsObject(o))
			rc = ep_fail(p, "expected an object {\"min_gib\", ...}");
		else
			rc = check_keys(p, o, keys);
		if (rc == 0) {
			struct engine_gpu_tier *g = &t[k];
			*g = (struct engine_gpu_tier){ 0 };
			const cJSON *mg = cJSON_GetObjectItemCaseSensitive(o, "min_gib");
			size_t mm = ep_push(p, ".min_gib");
			if (!cJSON_IsNumber(mg) || !isfinite(mg->valuedouble) || mg->valuedouble < 0 ||
			    (k > 0 && !(mg->valuedouble > t[k - 1].min_gib)))
				rc = ep_fail(p, k > 0 ? "expected a number of GiB above the step before"
						      : "expected a number of GiB >= 0");
			else
				g->min_gib = mg->valuedouble;
			ep_pop(p, mm);
			if (!rc)
				rc = figure(p, o, "prefill_chunk_tokens", false, R_TOKENS,
					    &g->prefill_chunk_tokens);
			if (!rc)
				rc = figure(p, o, "max_num_seqs", false, R_SEQS, &g->max_num_seqs);
			if (!rc)
				rc = figure(p, o, "graph_max_seqs", false, R_SEQS, &g->graph_max_seqs);
			if (!rc)
				rc = figure(p, o, "graph_max_seqs_tp4", false, R_SEQS,
					    &g->graph_max_seqs_tp4);
		}
		ep_pop(p, mi);
	}
	if (rc == 0)
		*n = k;
out:
	ep_pop(p, m);
	return rc;
}

static int params(struct ep *p, const cJSON *e, bool required, struct engine_params *out,
		  int *fp16acc)
{
	int rc;
	if ((rc = gpu_tiers(p, e, out->gpu_tiers, &out->gpu_tier_count)))
		return rc;
	if ((rc = figure(p, e, "step_overhead_us", required, R_NONNEG, &out->step_overhead_us)) ||
	    (rc = figure(p, e, "layer_overhead_us", required, R_NONNEG, &out->layer_overhead_us)) ||
	    (rc = figure(p, e, "compute_scale", required, R_FRACTION, &out->compute_scale)) ||
	    (rc = figure(p, e, "attention_scale", required, R_FRACTION, &out->attention_scale)) ||
	    (rc = figure(p, e, "attention_scale_without_fa", false, R_FRACTION,
			 &out->attention_scale_without_fa)) ||
	    (rc = figure(p, e, "bw_scale", required, R_FRACTION, &out->bw_scale)) ||
	    (rc = figure(p, e, "quant_bw_scale", required, R_FRACTION, &out->quant_bw_scale)) ||
	    (rc = figure(p, e, "moe_scale", required, R_FRACTION, &out->moe_scale)) ||
	    (rc = figure(p, e, "moe_layer_overhead_us", required, R_NONNEG,
			 &out->moe_layer_overhead_us)) ||
	    (rc = figure(p, e, "moe_host_routing_us", false, R_NONNEG,
			 &out->moe_host_routing_us)) ||
	    (rc = figure(p, e, "moe_tile_rows", false, R_TOKENS, &out->moe_tile_rows)) ||
	    (rc = figure(p, e, "moe_tile_rows_small", false, R_TOKENS,
			 &out->moe_tile_rows_small)) ||
	    (rc = figure(p, e, "max_num_seqs", required, R_SEQS, &out->max_num_seqs)) ||
	    (rc = figure(p, e, "prefill_chunk_tokens", required, R_TOKENS,
			 &out->prefill_chunk_tokens)) ||
	    (rc = figure(p, e, "reserve_full_prompt", false, R_BOOL, &out->reserve_full_prompt)) ||
	    (rc = figure(p, e, "max_num_seqs_large_gpu", false, R_SEQS,
			 &out->max_num_seqs_large_gpu)) ||
	    (rc = figure(p, e, "large_gpu_min_gib", false, R_GIB, &out->large_gpu_min_gib)) ||
	    /* the floors are optional: an engine without them has none */
	    (rc = figure(p, e, "kernel_graph_us", false, R_NONNEG, &out->kernel_graph_us)) ||
	    (rc = figure(p, e, "gemm_kernel_us", false, R_NONNEG, &out->gemm_kernel_us)) ||
	    (rc = figure(p, e, "kernel_eager_us", false, R_NONNEG, &out->kernel_eager_us)) ||
	    (rc = figure(p, e, "graph_max_seqs", false, R_SEQS, &out->graph_max_seqs)) ||
	    (rc = figure(p, e, "expert_kernel_empty_us", false, R_NONNEG,
			 &out->expert_kernel_empty_us)) ||
	    (rc = figure(p, e, "expert_kernel_eager_us", false, R_NONNEG,
			 &out->expert_kernel_eager_us)) ||
	    (rc = figure(p, e, "piecewise_layer_us", false, R_NONNEG,
			 &out->piecewise_layer_us)) ||
	    (rc = figure(p, e, "spec_draft_overhead_us", false, R_NONNEG,
			 &out->spec_draft_overhead_us)))
		return rc;
	return bool_field(p, e, "fp16_accumulate", fp16acc);
}

/* The start-up memory profile (engine-wide, never per family). */
static int kv_params(struct ep *p, const cJSON *e, struct engine_params *out)
{
	int rc;
	if ((rc = figure(p, e, "kv_sampler_bytes_per_logit", false, R_BYTES_LOGIT,
			 &out->kv_sampler_bytes_per_logit)) ||
	    (rc = figure(p, e, "kv_non_torch_gib", false, R_GIB, &out->kv_non_torch_gib)) ||
	    (rc = figure(p, e, "kv_non_torch_tp_gib", false, R_GIB, &out->kv_non_torch_tp_gib)) ||
	    (rc = figure(p, e, "kv_cuda_graph_gib", false, R_GIB, &out->kv_cuda_graph_gib)))
		return rc;
	return 0;
}

static int parse_override(struct ep *p, const cJSON *o, struct engine_override *ov)
{
	static const char *const keys[] = { "family_prefix", "step_overhead_us",
		"layer_overhead_us", "compute_scale", "attention_scale",
		"attention_scale_without_fa", "bw_scale",
		"quant_bw_scale", "moe_scale", "moe_layer_overhead_us", "moe_host_routing_us",
		"moe_tile_rows", "moe_tile_rows_small", "fp16_accumulate",
		"max_num_seqs", "prefill_chunk_tokens", "reserve_full_prompt",
		"max_num_seqs_large_gpu", "large_gpu_min_gib", "kernel_graph_us",
		"gemm_kernel_us", "kernel_eager_us", "graph_max_seqs", "expert_kernel_empty_us",
		"expert_kernel_eager_us", "piecewise_layer_us", "spec_draft_overhead_us", "note",
		"by_gpu_memory", NULL };
	if (!cJSON_IsObject(o))
		return ep_fail(p, "expected an object");
	int rc = check_keys(p, o, keys);
	if (rc)
		return rc;
	size_t m = ep_push(p, ".family_prefix");
	rc = copy_str(p, cJSON_GetObjectItemCaseSensitive(o, "family_prefix"), ov->family_prefix,
		      sizeof(ov->family_prefix));
	ep_pop(p, m);
	if (rc)
		return rc;
	ov->p = (struct engine_params){ .step_overhead_us = -1, .layer_overhead_us = -1,
					.compute_scale = -1, .attention_scale = -1,
					.attention_scale_without_fa = -1, .bw_scale = -1,
					.quant_bw_scale = -1, .moe_scale = -1,
					.moe_layer_overhead_us = -1, .moe_host_routing_us = -1,
					.moe_tile_rows = -1,
					.moe_tile_rows_small = -1, .max_num_seqs = -1,
					.prefill_chunk_tokens = -1, .reserve_full_prompt = -1,
					.max_num_seqs_large_gpu = -1, .large_gpu_min_gib = -1,
					.kernel_graph_us = -1, .gemm_kernel_us = -1, .kernel_eager_us = -1,
					.graph_max_seqs = -1, .expert_kernel_empty_us = -1,
					.expert_kernel_eager_us = -1, .piecewise_layer_us = -1,
					.spec_draft_overhead_us = -1, .gpu_tier_count = -1 };
	ov->fp16_accumulate = -1;
	return params(p, o, false, &ov->p, &ov->fp16_accumulate);
}

/* The start-up figures of entry e (each optional: what it leaves out keeps
 * what *x holds). */
static int parse_startup(struct ep *p, const cJSON *e, struct engine_startup *x)
{
	int rc;
	double keep = -1.0;
	bool has_keep = cJSON_GetObjectItemCaseSensitive(e, "keep_alive_s") != NULL;
	if ((rc = figure(p, e, "image_gb", false, R_GB, &x->image_gb)) ||
	    (rc = figure(p, e, "engine_start_s", false, R_SECONDS, &x->engine_start_s)) ||
	    (rc = figure(p, e, "engine_start_per_gpu_s", false, R_SECONDS,
			 &x->engine_start_per_gpu_s)) ||
	    (rc = figure(p, e, "compile_cold_s", false, R_SECONDS, &x->compile_cold_s)) ||
	    (rc = figure(p, e, "compile_cached_s", false, R_SECONDS, &x->compile_cached_s)) ||
	    (rc = figure(p, e, "cuda_graph_s_per_layer", false, R_SECONDS,
			 &x->cuda_graph_s_per_layer)) ||
	    (rc = figure(p, e, "cuda_graph_tp_growth", false, R_PER_GPU,
			 &x->cuda_graph_tp_growth)) ||
	    (rc = figure(p, e, "warmup_s", false, R_SECONDS, &x->warmup_s)) ||
	    (rc = figure(p, e, "keep_alive_s", false, R_SECONDS, &keep)))
		return rc;
	if (has_keep)
		x->keep_alive_s = keep;
	return 0;
}

/* "launch": {"cli", "version", "source", "date"}: how the engine is
 * started (an inheriting entry keeps its base's unless it gives one). */
static int parse_launch(struct ep *p, const cJSON *e, struct engine_profile *x)
{
	static const char *const keys[] = { "cli", "version", "source", "date", "note", NULL };
	static const char *const clis[] = { "vllm", "vllm-v0", "sglang", "trtllm", "llama-server",
					    "ollama", "mlx", NULL };
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(e, "launch");
	if (!l)
		return 0;
	size_t m = ep_push(p, ".launch");
	int rc = 0;
	if (!cJSON_IsObject(l)) {
		rc = ep_fail(p, "expected an object {\"cli\", \"version\", \"source\", \"date\"}");
		goto out;
	}
	if ((rc = check_keys(p, l, keys)))
		goto out;
	const cJSON *cli = cJSON_GetObjectItemCaseSensitive(l, "cli");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(l, "version");
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(l, "source");
	size_t i = 0;
	while (cJSON_IsString(cli) && clis[i] && strcmp(clis[i], cli->valuestring) != 0)
		i++;
	size_t mi;
	if (!cJSON_IsString(cli) || !clis[i]) {
		mi = ep_push(p, ".cli");
		rc = ep_fail(p, "expected one of: vllm, vllm-v0, sglang, trtllm, llama-server, "
			     "ollama, mlx");
		ep_pop(p, mi);
		goto out;
	}
	if (!cJSON_IsString(ver) || !ver->valuestring[0] ||
	    strlen(ver->valuestring) >= sizeof(x->launch_version)) {
		mi = ep_push(p, ".version");
		rc = ep_fail(p, "expected a non-empty string of fewer than 64 characters");
		ep_pop(p, mi);
		goto out;
	}
	if (!cJSON_IsString(src) || !src->valuestring[0] ||
	    strlen(src->valuestring) >= sizeof(x->launch_source)) {
		mi = ep_push(p, ".source");
		rc = ep_fail(p, "expected a non-empty string of fewer than 512 characters");
		ep_pop(p, mi);
		goto out;
	}
	snprintf(x->launch_cli, sizeof(x->launch_cli), "%s", cli->valuestring);
	snprintf(x->launch_version, sizeof(x->launch_version), "%s", ver->valuestring);
	snprintf(x->launch_source, sizeof(x->launch_source), "%s", src->valuestring);
out:
	ep_pop(p, m);
	return rc;
}

static int parse_engine(struct ep *p, const cJSON *e, const struct engine_table *t,
			struct engine_profile *x)
{
	static const char *const keys[] = { "id", "name", "aliases", "match", "note",
		"step_overhead_us", "layer_overhead_us", "compute_scale", "attention_scale",
		"attention_scale_without_fa",
		"bw_scale", "quant_bw_scale", "moe_scale", "moe_layer_overhead_us",
		"moe_host_routing_us", "moe_host_routing_last_build", "moe_tile_rows",
		"moe_tile_rows_small",
		"fp16_accumulate", "max_num_seqs",
		"prefill_chunk_tokens", "reserve_full_prompt", "max_num_seqs_large_gpu",
		"large_gpu_min_gib", "fp8_kv_with_fp8_weights", "fp4_tensor_cores", "kernel_graph_us",
		"gemm_kernel_us", "kernel_eager_us", "graph_max_seqs", "host_overlap",
		"expert_kernel_empty_us", "expert_kernel_eager_us", "piecewise_layer_us",
		"spec_draft_overhead_us", "moe_tile_spans_batch", "quant_matmul_flops_per_core_clock",
		"matvec_bytes_per_core_clock", "quant_matvec_bytes_per_core_clock", "formats",
		"mla_formats", "runs_on", "runs_on_source", "by_family", "inherits", "image_gb",
		"engine_start_s", "engine_start_per_gpu_s", "compile_cold_s", "compile_cached_s",
		"cuda_graph_s_per_layer", "cuda_graph_tp_growth", "warmup_s", "keep_alive_s",
		"kv_sampler_bytes_per_logit", "kv_non_torch_gib", "kv_non_torch_tp_gib",
		"kv_cuda_graph_gib", "by_gpu_memory", "launch", NULL };
	if (!cJSON_IsObject(e))
		return ep_fail(p, "expected an object");
	int rc = check_keys(p, e, keys);
	if (rc)
		return rc;
	const struct engine_profile *base = NULL;
	const cJSON *inh = cJSON_GetObjectItemCaseSensitive(e, "inherits");
	size_t m;
	if (inh) {
		m = ep_push(p, ".inherits");
		if (!cJSON_IsString(inh) || !(base = engine_find(t, inh->valuestring)))
			rc = ep_fail(p, "expected the id of an engine listed before this one");
		ep_pop(p, m);
		if (rc)
			return rc;
		*x = *base;
		x->alias_count = x->match_count = 0;
		memset(x->aliases, 0, sizeof(x->aliases));
		memset(x->match, 0, sizeof(x->match));
	} else {
		memset(x, 0, sizeof(*x));
		x->startup.keep_alive_s = -1.0;
	}
	m = ep_push(p, ".id");
	rc = copy_str(p, cJSON_GetObjectItemCaseSensitive(e, "id"), x->id, sizeof(x->id));
	ep_pop(p, m);
	if (rc)
		return rc;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
	m = ep_push(p, ".name");
	if (!cJSON_IsString(name) || !name->valuestring[0] ||
	    strlen(name->valuestring) >= sizeof(x->name))
		rc = ep_fail(p, "expected a non-empty string of fewer than 128 characters");
	else
		memcpy(x->name, name->valuestring, strlen(name->valuestring) + 1);
	ep_pop(p, m);
	if (rc)
		return rc;
	if ((rc = str_list(p, e, "aliases", x->aliases, ENGINE_ALIASES_MAX, &x->alias_count,
			   false)) ||
	    (rc = str_list(p, e, "match", x->match, ENGINE_MATCH_MAX, &x->match_count, true)))
		return rc;
	int fp16acc = base && base->p.fp16_accumulate, fp8kv = base && base->p.fp8_kv_with_fp8_weights,
	    overlap = base && base->p.host_overlap, fp4 = !base || base->p.fp4_tensor_cores,
	    spans = base && base->p.moe_tile_spans_batch;
	if ((rc = params(p, e, base == NULL, &x->p, &fp16acc)) || (rc = kv_params(p, e, &x->p)) ||
	    (rc = figure(p, e, "quant_matmul_flops_per_core_clock", false, R_FLOP_CLK,
			 &x->p.quant_matmul_flops_per_core_clock)) ||
	    (rc = figure(p, e, "matvec_bytes_per_core_clock", false, R_BYTES_CLK,
			 &x->p.matvec_bytes_per_core_clock)) ||
	    (rc = figure(p, e, "quant_matvec_bytes_per_core_clock", false, R_BYTES_CLK,
			 &x->p.quant_matvec_bytes_per_core_clock)) ||
	    (rc = figure(p, e, "moe_host_routing_last_build", false, R_BUILD,
			 &x->p.moe_host_routing_last_build)) ||
	    (rc = bool_field(p, e, "fp8_kv_with_fp8_weights", &fp8kv)) ||
	    (rc = bool_field(p, e, "fp4_tensor_cores", &fp4)) ||
	    (rc = bool_field(p, e, "host_overlap", &overlap)) ||
	    (rc = bool_field(p, e, "moe_tile_spans_batch", &spans)))
		return rc;
	x->p.moe_tile_spans_batch = spans == 1;
	x->p.fp16_accumulate = fp16acc == 1;
	x->p.fp8_kv_with_fp8_weights = fp8kv == 1;
	x->p.fp4_tensor_cores = fp4 == 1;
	x->p.host_overlap = overlap == 1;
	/* an inheriting entry keeps the lists it does not give */
	if ((!base || cJSON_GetObjectItemCaseSensitive(e, "formats")) &&
	    (rc = str_list(p, e, "formats", x->formats, ENGINE_FORMATS_MAX, &x->format_count,
			   true)))
		return rc;
	if ((!base || cJSON_GetObjectItemCaseSensitive(e, "mla_formats")) &&
	    (rc = str_list(p, e, "mla_formats", x->mla_formats, ENGINE_FORMATS_MAX,
			   &x->mla_format_count, true)))
		return rc;
	if ((!base || cJSON_GetObjectItemCaseSensitive(e, "runs_on")) &&
	    (rc = str_list(p, e, "runs_on", x->runs_on, ENGINE_RUNS_ON_MAX, &x->runs_on_count,
			   true)))
		return rc;
	if ((rc = parse_startup(p, e, &x->startup)))
		return rc;
	const cJSON *ros = cJSON_GetObjectItemCaseSensitive(e, "runs_on_source");
	if (ros) {
		m = ep_push(p, ".runs_on_source");
		if (!cJSON_IsString(ros) || strlen(ros->valuestring) >= sizeof(x->runs_on_source))
			rc = ep_fail(p, "expected a string of fewer than 512 characters");
		else
			memcpy(x->runs_on_source, ros->valuestring, strlen(ros->valuestring) + 1);
		ep_pop(p, m);
		if (rc)
			return rc;
	}
	if ((rc = parse_launch(p, e, x)))
		return rc;
	const cJSON *bf = cJSON_GetObjectItemCaseSensitive(e, "by_family");
	if (!bf)
		return 0;
	x->override_count = 0; /* an inheriting entry's replace its base's */
	m = ep_push(p, ".by_family");
	if (!cJSON_IsArray(bf)) {
		rc = ep_fail(p, "expected an array of overrides");
		ep_pop(p, m);
		return rc;
	}
	for (const cJSON *o = bf->child; o && !rc; o = o->next) {
		size_t mi = ep_index(p, x->override_count);
		if (x->override_count == ENGINE_OVERRIDES_MAX)
			rc = ep_fail(p, "too many overrides");
		else
			rc = parse_override(p, o, &x->overrides[x->override_count++]);
		ep_pop(p, mi);
	}
	ep_pop(p, m);
	return rc;
}

int engine_table_parse(struct engine_table *t, const char *name, const char *text,
		       size_t len, struct diag *d)
{
	struct ep p = { .file = name, .d = d };
	memset(t, 0, sizeof(*t));
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root) {
		long line = 1, col = 1;
		const char *stop = end ? end : text;
		for (const char *q = text; q < stop && q < text + len; q++) {
			if (*q == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		return diag_at(d, DIAG_EINPUT, name, line, col, "invalid JSON (expected an object "
			       "with \"engines\")");
	}
	static const char *const keys[] = { "schema_version", "description", "engines", NULL };
	int rc = 0;
	const cJSON *sv = cJSON_GetObjectItemCaseSensitive(root, "schema_version");
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "engines");
	if (!cJSON_IsObject(root)) {
		rc = ep_fail(&p, "expected an object");
	} else if ((rc = check_keys(&p, root, keys))) {
	} else if (!cJSON_IsNumber(sv) || sv->valuedouble != 1) {
		size_t m = ep_push(&p, "schema_version");
		rc = ep_fail(&p, "expected 1");
		ep_pop(&p, m);
	} else if (!cJSON_IsArray(arr) || !arr->child) {
		size_t m = ep_push(&p, "engines");
		rc = ep_fail(&p, "expected a non-empty array of engines");
		ep_pop(&p, m);
	}
	for (const cJSON *e = rc ? NULL : arr->child; e && !rc; e = e->next) {
		size_t m = ep_push(&p, "engines");
		ep_index(&p, t->count);
		if (t->count == ENGINE_MAX)
			rc = ep_fail(&p, "too many engines (at most 16)");
		else
			rc = parse_engine(&p, e, t, &t->engines[t->count]);
		if (!rc) {
			/* no two names may collide */
			const struct engine_profile *x = &t->engines[t->count];
			for (size_t k = 0; k <= x->alias_count && !rc; k++) {
				const char *nm = k == 0 ? x->id : x->aliases[k - 1];
				if (engine_find(t, nm))
					rc = ep_fail(&p, "name already used by an earlier engine");
			}
			t->count++;
		}
		ep_pop(&p, m);
	}
	cJSON_Delete(root);
	return rc;
}

int engine_table_load(struct engine_table *t, const char *path, struct diag *d)
{
	if (!path) {
		const char *txt = engine_embedded_json();
		return engine_table_parse(t, "engines.json", txt, strlen(txt), d);
	}
	char *buf = textfile_read(path, ENGINE_FILE_MAX_BYTES, "an engines.json file", d);
	if (!buf)
		return d->code ? d->code : DIAG_EIO;
	int rc = engine_table_parse(t, path, buf, strlen(buf), d);
	free(buf);
	return rc;
}

const struct engine_profile *engine_find(const struct engine_table *t, const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < t->count; i++) {
		const struct engine_profile *e = &t->engines[i];
		if (catalog_name_eq(e->id, name))
			return e;
		for (size_t k = 0; k < e->alias_count; k++)
			if (catalog_name_eq(e->aliases[k], name))
				return e;
	}
	return NULL;
}

/* Whether lower-cased `low` contains needle, compared without case. */
static bool contains_ci(const char *low, const char *needle)
{
	char nl[128];
	size_t n = strlen(needle);
	if (n == 0 || n >= sizeof(nl))
		return false;
	for (size_t i = 0; i <= n; i++)
		nl[i] = (char)tolower((unsigned char)needle[i]);
	return strstr(low, nl) != NULL;
}

const struct engine_profile *engine_match(const struct engine_table *t, const char *text)
{
	const struct engine_profile *best = NULL;
	size_t best_len = 0;
	if (!text)
		return NULL;
	/* the text lower-cased once; longer texts than any row's engine and
	 * notes are matched on their first 4 KiB */
	char low[4096];
	size_t tl = strlen(text);
	if (tl >= sizeof(low))
		tl = sizeof(low) - 1;
	for (size_t i = 0; i < tl; i++)
		low[i] = (char)tolower((unsigned char)text[i]);
	low[tl] = '\0';
	for (size_t i = 0; i < t->count; i++) {
		const struct engine_profile *e = &t->engines[i];
		size_t total = e->match_count + e->alias_count + 1;
		for (size_t k = 0; k < total; k++) {
			const char *s = k < e->match_count ? e->match[k]
				      : k == e->match_count ? e->id
							    : e->aliases[k - e->match_count - 1];
			size_t n = strlen(s);
			if (n > best_len && contains_ci(low, s)) {
				best = e;
				best_len = n;
			}
		}
	}
	return best;
}

const struct engine_override *engine_override_for(const struct engine_profile *e,
						  const char *family_id)
{
	if (!family_id)
		return NULL;
	const struct engine_override *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < e->override_count; i++) {
		const struct engine_override *o = &e->overrides[i];
		size_t n = strlen(o->family_prefix);
		if (n > best_len && strncmp(family_id, o->family_prefix, n) == 0) {
			best = o;
			best_len = n;
		}
	}
	return best;
}

void engine_resolve(const struct engine_profile *e, const char *family_id,
		    struct engine_params *out)
{
	*out = e->p;
	const struct engine_override *best = engine_override_for(e, family_id);
	if (!best)
		return;
	if (best->p.step_overhead_us >= 0)
		out->step_overhead_us = best->p.step_overhead_us;
	if (best->p.layer_overhead_us >= 0)
		out->layer_overhead_us = best->p.layer_overhead_us;
	if (best->p.compute_scale >= 0)
		out->compute_scale = best->p.compute_scale;
	if (best->p.attention_scale >= 0)
		out->attention_scale = best->p.attention_scale;
	if (best->p.attention_scale_without_fa >= 0)
		out->attention_scale_without_fa = best->p.attention_scale_without_fa;
	if (best->p.bw_scale >= 0)
		out->bw_scale = best->p.bw_scale;
	if (best->p.quant_bw_scale >= 0)
		out->quant_bw_scale = best->p.quant_bw_scale;
	if (best->p.moe_scale >= 0)
		out->moe_scale = best->p.moe_scale;
	if (best->p.moe_layer_overhead_us >= 0)
		out->moe_layer_overhead_us = best->p.moe_layer_overhead_us;
	if (best->p.moe_host_routing_us >= 0)
		out->moe_host_routing_us = best->p.moe_host_routing_us;
	if (best->p.moe_tile_rows >= 0)
		out->moe_tile_rows = best->p.moe_tile_rows;
	if (best->p.moe_tile_rows_small >= 0)
		out->moe_tile_rows_small = best->p.moe_tile_rows_small;
	if (best->p.max_num_seqs >= 0)
		out->max_num_seqs = best->p.max_num_seqs;
	if (best->p.prefill_chunk_tokens >= 0)
		out->prefill_chunk_tokens = best->p.prefill_chunk_tokens;
	if (best->p.reserve_full_prompt >= 0)
		out->reserve_full_prompt = best->p.reserve_full_prompt;
	if (best->p.max_num_seqs_large_gpu >= 0)
		out->max_num_seqs_large_gpu = best->p.max_num_seqs_large_gpu;
	if (best->p.large_gpu_min_gib >= 0)
		out->large_gpu_min_gib = best->p.large_gpu_min_gib;
	if (best->p.kernel_graph_us >= 0)
		out->kernel_graph_us = best->p.kernel_graph_us;
	if (best->p.gemm_kernel_us >= 0)
		out->gemm_kernel_us = best->p.gemm_kernel_us;
	if (best->p.kernel_eager_us >= 0)
		out->kernel_eager_us = best->p.kernel_eager_us;
	if (best->p.graph_max_seqs >= 0)
		out->graph_max_seqs = best->p.graph_max_seqs;
	if (best->p.expert_kernel_empty_us >= 0)
		out->expert_kernel_empty_us = best->p.expert_kernel_empty_us;
	if (best->p.expert_kernel_eager_us >= 0)
		out->expert_kernel_eager_us = best->p.expert_kernel_eager_us;
	if (best->p.piecewise_layer_us >= 0)
		out->piecewise_layer_us = best->p.piecewise_layer_us;
	if (best->p.spec_draft_overhead_us >= 0)
		out->spec_draft_overhead_us = best->p.spec_draft_overhead_us;
	if (best->p.gpu_tier_count >= 0) {
		memcpy(out->gpu_tiers, best->p.gpu_tiers, sizeof(out->gpu_tiers));
		out->gpu_tier_count = best->p.gpu_tier_count;
	}
	if (best->fp16_accumulate >= 0)
		out->fp16_accumulate = best->fp16_accumulate == 1;
}

const char *engine_default_for(const struct cat_hardware *hw)
{
	return hw->unified_memory ? "llama.cpp" : ENGINE_DEFAULT_ID;
}

double engine_device_gib(const struct cat_hardware *hw)
{
	/* vLLM reads the device's total memory; on unified-memory parts the
	 * query fails and it takes the small-GPU branch */
	if (!hw || hw->unified_memory)
		return 0.0;
	return hw->memory_visible_gib > 0 ? hw->memory_visible_gib
					  : hw->memory_gb * 1e9 / 1073741824.0;
}

const struct engine_gpu_tier *engine_gpu_tier(const struct engine_params *p,
					      const struct cat_hardware *hw)
{
	double gib = engine_device_gib(hw);
	const struct engine_gpu_tier *best = NULL;
	if (gib <= 0)
		return NULL;
	for (int i = 0; i < p->gpu_tier_count; i++)
		if (gib >= p->gpu_tiers[i].min_gib)
			best = &p->gpu_tiers[i];
	return best;
}

int engine_default_max_num_seqs(const struct engine_params *p, const struct cat_hardware *hw)
{
	const struct engine_gpu_tier *g = engine_gpu_tier(p, hw);
	if (g && g->max_num_seqs >= 1)
		return (int)g->max_num_seqs;
	double gib = engine_device_gib(hw);
	if (p->max_num_seqs_large_gpu > 0 && p->large_gpu_min_gib > 0 && gib > 0 &&
	    gib >= p->large_gpu_min_gib)
		return (int)p->max_num_seqs_large_gpu;
	return (int)p->max_num_seqs;
}

int64_t engine_default_chunk(const struct engine_params *p, const struct cat_hardware *hw)
{
	const struct engine_gpu_tier *g = engine_gpu_tier(p, hw);
	if (g && g->prefill_chunk_tokens >= 1)
		return (int64_t)g->prefill_chunk_tokens;
	return p->prefill_chunk_tokens >= 1 ? (int64_t)p->prefill_chunk_tokens : ENGINE_DEFAULT_CHUNK;
}

double engine_default_graph_max_seqs(const struct engine_params *p, const struct cat_hardware *hw,
				     int32_t tp)
{
	const struct engine_gpu_tier *g = engine_gpu_tier(p, hw);
	if (g && tp >= 4 && g->graph_max_seqs_tp4 >= 1)
		return g->graph_max_seqs_tp4;
	if (g && g->graph_max_seqs >= 1)
		return g->graph_max_seqs;
	return p->graph_max_seqs;
}

bool engine_supports_format(const struct engine_profile *e, const char *format_id)
{
	if (e->format_count == 0)
		return true;
	for (size_t i = 0; i < e->format_count; i++) {
		const char *f = e->formats[i];
		size_t n = strlen(f);
		if (n && f[n - 1] == '*' ? strncmp(format_id, f, n - 1) == 0
					 : catalog_name_eq(format_id, f))
			return true;
	}
	return false;
}

bool engine_runs_mla(const struct engine_profile *e, const char *format_id)
{
	if (e->mla_format_count == 0)
		return true;
	for (size_t i = 0; i < e->mla_format_count; i++)
		if (catalog_name_eq(format_id, e->mla_formats[i]))
			return true;
	return false;
}

bool engine_runs_on(const struct engine_profile *e, const char *family_id)
{
	if (e->runs_on_count == 0)
		return true;
	for (size_t i = 0; i < e->runs_on_count; i++) {
		const char *f = e->runs_on[i];
		size_t n = strlen(f);
		if (n && f[n - 1] == '*' ? strncmp(family_id, f, n - 1) == 0
					 : catalog_name_eq(family_id, f))
			return true;
	}
	return false;
}

void engine_list_ids(const struct engine_table *t, char *buf, size_t size)
{
	size_t n = 0;
	if (size == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < t->count && n + 1 < size; i++) {
		int w = snprintf(buf + n, size - n, "%s%s", i ? ", " : "", t->engines[i].id);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}
