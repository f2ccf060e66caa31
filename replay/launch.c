/* SPDX-License-Identifier: Apache-2.0
 * launch: a pool's modelled configuration as its engine's command line
 * (see launch.h).
 *
 * Each engine family has one writer (vllm_args, sglang_args, ...) that
 * turns the pool's resolved settings into flags, and one table of the
 * flags it writes (FLAGS below), which launch_sets reads back.  A flag a
 * writer emits must be in its family's table, so the round trip covers
 * every flag; tests/replay/test_launch.c checks both directions and the
 * spellings against the engines' documented flag lists.
 */
#include "replay/launch.h"

#include "base/jsonw.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "models/spec.h"

#include <cJSON.h>
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void add_arg(struct launch_cmd *lc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_note(struct launch_cmd *lc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_env(struct launch_cmd *lc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_arg(struct launch_cmd *lc, const char *fmt, ...)
{
	assert(lc->argc < LAUNCH_MAX_ARGS); /* the writers emit at most ~40 */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(lc->argv[lc->argc++], LAUNCH_ARG_MAX, fmt, ap);
	va_end(ap);
}

static void add_env(struct launch_cmd *lc, const char *fmt, ...)
{
	assert(lc->n_env < LAUNCH_MAX_ENV);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(lc->env[lc->n_env++], LAUNCH_ARG_MAX, fmt, ap);
	va_end(ap);
}

/* A note; past LAUNCH_MAX_NOTES the last one says more were dropped. */
static void add_note(struct launch_cmd *lc, const char *fmt, ...)
{
	if (lc->n_notes == LAUNCH_MAX_NOTES) {
		snprintf(lc->notes[LAUNCH_MAX_NOTES - 1], LAUNCH_NOTE_MAX, "(more notes left out)");
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(lc->notes[lc->n_notes++], LAUNCH_NOTE_MAX, fmt, ap);
	va_end(ap);
}

/* A setting the command cannot carry: a note, and the command is not the
 * whole configuration. */
static void missing(struct launch_cmd *lc, const char *what)
{
	lc->complete = false;
	add_note(lc, "not expressed as a flag: %s", what);
}

/* The Hugging Face repo id of catalogue model m: the first alias of the
 * form org/name (models.json has no field of its own for it), else NULL. */
static const char *hf_repo(const struct cat_model *m)
{
	for (size_t i = 0; m && i < m->alias_count; i++)
		if (strchr(m->aliases[i], '/') && !strchr(m->aliases[i], ' '))
			return m->aliases[i];
	return NULL;
}

/* KV-cache dtypes by catalogue id, as each family spells them. */
enum kvd { KVD_BF16, KVD_FP16, KVD_FP8, KVD_Q8, KVD_Q4, KVD_OTHER };

static enum kvd kv_of(const struct catalog *cat, const char *name)
{
	const struct cat_kv_dtype *k = catalog_kv_dtype(cat, name);
	const char *id = k ? k->id : name;
	static const char *const ids[] = { "bf16", "fp16", "fp8", "q8-0", "q4-0" };
	for (int i = 0; i < 5; i++)
		if (strcmp(id, ids[i]) == 0)
			return (enum kvd)i;
	return KVD_OTHER;
}

static int kv_refused(const struct deploy_pool *p, const char *cli, const char *expected,
		      struct diag *d)
{
	return diag_set(d, DIAG_EINPUT, "%s: %skv_cache_dtype: '%s' is not a KV-cache dtype %s "
			"takes (expected %s)", p->sc.source, p->sc.key_prefix, p->sc.kv_cache_dtype,
			cli, expected);
}

/* The draft model of speculative method draft as the command names it. */
static const char *draft_name(const struct catalog *cat, const struct scenario *sc)
{
	const struct cat_model *m = catalog_model(cat, sc->spec.draft_model);
	const char *hf = hf_repo(m);
	return hf ? hf : sc->spec.draft_model;
}

/* ---- vLLM ---- */

static int vllm_args(struct launch_cmd *lc, const struct deploy_pool *p,
		     const struct catalog *cat, bool v0, struct diag *d)
{
	const struct scenario *sc = &p->sc;
	const struct engine_config *c = &p->cfg;
	add_arg(lc, "vllm");
	add_arg(lc, "serve");
	add_arg(lc, "%s", lc->model);
	add_arg(lc, "--tensor-parallel-size");
	add_arg(lc, "%d", sc->tensor_parallel_size);
	add_arg(lc, "--pipeline-parallel-size");
	add_arg(lc, "%d", sc->pipeline_parallel_size);
	if (sc->expert_parallel_size > 1) {
		if (v0)
			missing(lc, "expert parallelism (vLLM V0 has none)");
		else
			add_arg(lc, "--enable-expert-parallel");
		if (sc->expert_parallel_size != sc->tensor_parallel_size)
			add_note(lc, "vLLM's expert-parallel size is TP x DP = %d, not the "
				 "scenario's expert_parallel_size %d", sc->tensor_parallel_size,
				 sc->expert_parallel_size);
	}
	add_arg(lc, "--max-num-seqs");
	add_arg(lc, "%d", c->max_num_seqs);
	add_arg(lc, "--max-num-batched-tokens");
	add_arg(lc, "%lld", (long long)c->max_num_batched_tokens);
	add_arg(lc, "--gpu-memory-utilization");
	add_arg(lc, "%g", c->gpu_memory_utilization);
	add_arg(lc, "--max-model-len");
	add_arg(lc, "%lld", (long long)c->max_model_len);
	add_arg(lc, "--block-size");
	add_arg(lc, "%lld", (long long)c->block_size);
	switch (kv_of(cat, sc->kv_cache_dtype)) {
	case KVD_BF16:
	case KVD_FP16:
		add_arg(lc, "--kv-cache-dtype");
		add_arg(lc, "auto");
		break;
	case KVD_FP8:
		add_arg(lc, "--kv-cache-dtype");
		add_arg(lc, "fp8");
		break;
	default:
		return kv_refused(p, "vLLM", "bf16, fp16 or fp8", d);
	}
	if (v0) {
		if (c->enable_prefix_caching)
			add_arg(lc, "--enable-prefix-caching");
		if (c->enable_chunked_prefill)
			add_arg(lc, "--enable-chunked-prefill");
	} else {
		add_arg(lc, c->enable_prefix_caching ? "--enable-prefix-caching"
						     : "--no-enable-prefix-caching");
		add_arg(lc, c->enable_chunked_prefill ? "--enable-chunked-prefill"
						      : "--no-enable-chunked-prefill");
	}
	enum spec_method sm = SPEC_OFF;
	spec_method_parse(sc->spec.method, &sm);
	if (sm == SPEC_OFF)
		return 0;
	if (v0) {
		if (sm == SPEC_DRAFT || sm == SPEC_NGRAM) {
			add_arg(lc, "--speculative-model");
			add_arg(lc, "%s", sm == SPEC_NGRAM ? "[ngram]" : draft_name(cat, sc));
			add_arg(lc, "--num-speculative-tokens");
			add_arg(lc, "%d", sc->spec.k);
			if (sm == SPEC_NGRAM) {
				add_arg(lc, "--ngram-prompt-lookup-max");
				add_arg(lc, "4");
			}
			if (sc->spec.disable_by_batch_size > 0) {
				add_arg(lc, "--speculative-disable-by-batch-size");
				add_arg(lc, "%d", sc->spec.disable_by_batch_size);
			}
		} else {
			missing(lc, "speculative decoding by this method (vLLM V0 has draft models "
				"and n-grams only)");
		}
		return 0;
	}
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	/* a draft model needs no method: vLLM takes "model" alone as one */
	if (sm != SPEC_DRAFT)
		cJSON_AddStringToObject(j, "method", sm == SPEC_MTP ? "mtp"
					: sm == SPEC_EAGLE3 ? "eagle3"
					: sm == SPEC_NGRAM ? "ngram" : "suffix");
	if (sm == SPEC_DRAFT)
		cJSON_AddStringToObject(j, "model", draft_name(cat, sc));
	if (sm == SPEC_EAGLE3) {
		cJSON_AddStringToObject(j, "model", "EAGLE3-DRAFTER-OF-THIS-MODEL");
		add_note(lc, "--speculative-config: put the EAGLE-3 drafter trained for %s in "
			 "\"model\"", lc->model);
	}
	cJSON_AddNumberToObject(j, "num_speculative_tokens", sc->spec.k);
	if (sm == SPEC_NGRAM)
		cJSON_AddNumberToObject(j, "prompt_lookup_max", 4);
	if (sc->spec.disable_by_batch_size > 0)
		cJSON_AddNumberToObject(j, "disable_by_batch_size", sc->spec.disable_by_batch_size);
	char *txt = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!txt)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	add_arg(lc, "--speculative-config");
	add_arg(lc, "%s", txt);
	free(txt);
	return 0;
}

/* ---- SGLang ---- */

static int sglang_args(struct launch_cmd *lc, const struct deploy_pool *p,
		       const struct catalog *cat, struct diag *d)
{
	const struct scenario *sc = &p->sc;
	const struct engine_config *c = &p->cfg;
	add_arg(lc, "python");
	add_arg(lc, "-m");
	add_arg(lc, "sglang.launch_server");
	add_arg(lc, "--model-path");
	add_arg(lc, "%s", lc->model);
	add_arg(lc, "--tp-size");
	add_arg(lc, "%d", sc->tensor_parallel_size);
	add_arg(lc, "--pp-size");
	add_arg(lc, "%d", sc->pipeline_parallel_size);
	if (sc->expert_parallel_size > 1) {
		add_arg(lc, "--ep-size");
		add_arg(lc, "%d", sc->expert_parallel_size);
	}
	add_arg(lc, "--max-running-requests");
	add_arg(lc, "%d", c->max_num_seqs);
	if (c->enable_chunked_prefill) {
		add_arg(lc, "--chunked-prefill-size");
		add_arg(lc, "%lld", (long long)c->max_num_batched_tokens);
	} else {
		add_arg(lc, "--chunked-prefill-size");
		add_arg(lc, "-1");
		add_arg(lc, "--max-prefill-tokens");
		add_arg(lc, "%lld", (long long)c->max_num_batched_tokens);
	}
	add_arg(lc, "--mem-fraction-static");
	add_arg(lc, "%g", c->gpu_memory_utilization);
	add_arg(lc, "--context-length");
	add_arg(lc, "%lld", (long long)c->max_model_len);
	add_arg(lc, "--page-size");
	add_arg(lc, "%lld", (long long)c->block_size);
	switch (kv_of(cat, sc->kv_cache_dtype)) {
	case KVD_BF16:
	case KVD_FP16:
		add_arg(lc, "--kv-cache-dtype");
		add_arg(lc, "auto");
		break;
	case KVD_FP8:
		add_arg(lc, "--kv-cache-dtype");
		add_arg(lc, "fp8_e4m3");
		break;
	default:
		return kv_refused(p, "SGLang", "bf16, fp16 or fp8", d);
	}
	if (!c->enable_prefix_caching)
		add_arg(lc, "--disable-radix-cache");
	if (sc->kv_tiers.host_gb > 0) {
		add_arg(lc, "--enable-hierarchical-cache");
		add_arg(lc, "--hicache-size");
		add_arg(lc, "%.0f", ceil(sc->kv_tiers.host_gb));
		if (sc->kv_tiers.disk_gb > 0)
			missing(lc, "the disk KV tier (SGLang's --hicache-storage-backend)");
	}
	enum spec_method sm = SPEC_OFF;
	spec_method_parse(sc->spec.method, &sm);
	if (sm == SPEC_OFF)
		return 0;
	if (sm == SPEC_SUFFIX) {
		missing(lc, "suffix decoding (SGLang has no such method)");
		return 0;
	}
	add_arg(lc, "--speculative-algorithm");
	add_arg(lc, "%s", sm == SPEC_DRAFT ? "STANDALONE" : sm == SPEC_MTP ? "NEXTN"
			  : sm == SPEC_EAGLE3 ? "EAGLE3" : "NGRAM");
	if (sm == SPEC_DRAFT) {
		add_arg(lc, "--speculative-draft-model-path");
		add_arg(lc, "%s", draft_name(cat, sc));
	}
	if (sm == SPEC_EAGLE3)
		add_note(lc, "--speculative-draft-model-path: the EAGLE-3 drafter trained for %s",
			 lc->model);
	if (sm != SPEC_NGRAM) {
		add_arg(lc, "--speculative-num-steps");
		add_arg(lc, "%d", sc->spec.k);
		add_arg(lc, "--speculative-eagle-topk");
		add_arg(lc, "1");
	}
	add_arg(lc, "--speculative-num-draft-tokens");
	add_arg(lc, "%d", sc->spec.k + 1);
	if (sc->spec.disable_by_batch_size > 0)
		missing(lc, "speculative.disable_by_batch_size");
	return 0;
}

/* ---- TensorRT-LLM ---- */

static int trtllm_args(struct launch_cmd *lc, const struct deploy_pool *p,
		       const struct catalog *cat, struct diag *d)
{
	const struct scenario *sc = &p->sc;
	const struct engine_config *c = &p->cfg;
	add_arg(lc, "trtllm-serve");
	add_arg(lc, "serve");
	add_arg(lc, "%s", lc->model);
	add_arg(lc, "--backend");
	add_arg(lc, "pytorch");
	add_arg(lc, "--tp_size");
	add_arg(lc, "%d", sc->tensor_parallel_size);
	add_arg(lc, "--pp_size");
	add_arg(lc, "%d", sc->pipeline_parallel_size);
	if (sc->expert_parallel_size > 1) {
		add_arg(lc, "--ep_size");
		add_arg(lc, "%d", sc->expert_parallel_size);
	}
	add_arg(lc, "--max_batch_size");
	add_arg(lc, "%d", c->max_num_seqs);
	add_arg(lc, "--max_num_tokens");
	add_arg(lc, "%lld", (long long)c->max_num_batched_tokens);
	add_arg(lc, "--max_seq_len");
	add_arg(lc, "%lld", (long long)c->max_model_len);
	if (c->enable_chunked_prefill)
		add_arg(lc, "--enable_chunked_prefill");
	enum kvd k = kv_of(cat, sc->kv_cache_dtype);
	if (k != KVD_BF16 && k != KVD_FP16 && k != KVD_FP8)
		return kv_refused(p, "TensorRT-LLM", "bf16, fp16 or fp8", d);
	if (k == KVD_FP8)
		missing(lc, "the FP8 KV cache (kv_cache_config: {dtype: fp8} in the --config "
			"YAML file)");
	add_note(lc, "--kv_cache_free_gpu_memory_fraction is a share of the memory left after "
		 "the weights, not engine.gpu_memory_utilization %g: the KV cache of %lld tokens "
		 "per replica is the modelled one", c->gpu_memory_utilization,
		 (long long)c->kv_cache_tokens);
	if (!c->enable_prefix_caching)
		missing(lc, "prefix caching off (kv_cache_config: {enable_block_reuse: false} in "
			"the --config YAML file)");
	enum spec_method sm = SPEC_OFF;
	spec_method_parse(sc->spec.method, &sm);
	if (sm != SPEC_OFF)
		missing(lc, "speculative decoding (speculative_config in the --config YAML file)");
	return 0;
}

/* ---- llama.cpp and Ollama ---- */

/* llama.cpp's cache type of a KV dtype, NULL when it has none. */
static const char *ggml_kv(enum kvd k)
{
	switch (k) {
	case KVD_BF16: return "bf16";
	case KVD_FP16: return "f16";
	case KVD_Q8: return "q8_0";
	case KVD_Q4: return "q4_0";
	default: return NULL;
	}
}

static int llama_args(struct launch_cmd *lc, const struct deploy_pool *p,
		      const struct catalog *cat, struct diag *d)
{
	const struct scenario *sc = &p->sc;
	const struct engine_config *c = &p->cfg;
	const char *kv = ggml_kv(kv_of(cat, sc->kv_cache_dtype));
	if (!kv)
		return kv_refused(p, "llama.cpp", "bf16, fp16, q8-0 or q4-0", d);
	add_arg(lc, "llama-server");
	add_arg(lc, "-m");
	add_arg(lc, "%s.gguf", sc->model);
	add_note(lc, "-m: a GGUF file of %s in %s", sc->model, sc->weight_format);
	add_arg(lc, "--parallel");
	add_arg(lc, "%d", c->max_num_seqs);
	add_arg(lc, "--kv-unified");
	add_arg(lc, "-c");
	add_arg(lc, "%lld", (long long)c->kv_cache_tokens);
	add_arg(lc, "-ub");
	add_arg(lc, "%lld", (long long)c->max_num_batched_tokens);
	if (c->max_num_batched_tokens > 2048) { /* -b defaults to 2048 and must hold a ubatch */
		add_arg(lc, "-b");
		add_arg(lc, "%lld", (long long)c->max_num_batched_tokens);
	}
	add_arg(lc, "-ngl");
	add_arg(lc, "999");
	add_arg(lc, "-fa");
	add_arg(lc, "%s", sc->flash_attention ? "on" : "off");
	add_arg(lc, "-ctk");
	add_arg(lc, "%s", kv);
	add_arg(lc, "-ctv");
	add_arg(lc, "%s", kv);
	int32_t gpus = sc->tensor_parallel_size * sc->pipeline_parallel_size;
	if (gpus > 1) {
		add_arg(lc, "--split-mode");
		add_arg(lc, "%s", sc->tensor_parallel_size > 1 ? "row" : "layer");
		char ts[LAUNCH_ARG_MAX] = "";
		for (int32_t i = 0; i < gpus && i < 64; i++)
			strcat(ts, i ? ",1" : "1");
		add_arg(lc, "--tensor-split");
		add_arg(lc, "%s", ts);
		if (sc->tensor_parallel_size > 1 && sc->pipeline_parallel_size > 1)
			missing(lc, "TP and PP together (llama.cpp splits by rows or by layers)");
	}
	if (!c->enable_prefix_caching)
		add_arg(lc, "--no-cache-prompt");
	if (!c->enable_chunked_prefill)
		missing(lc, "chunked prefill off (llama.cpp always splits a prompt into ubatches)");
	enum spec_method sm = SPEC_OFF;
	spec_method_parse(sc->spec.method, &sm);
	if (sm == SPEC_DRAFT) {
		add_arg(lc, "-md");
		add_arg(lc, "%s.gguf", sc->spec.draft_model);
		add_arg(lc, "--draft-max");
		add_arg(lc, "%d", sc->spec.k);
	} else if (sm != SPEC_OFF) {
		missing(lc, "speculative decoding other than by a draft model");
	}
	return 0;
}

static int ollama_args(struct launch_cmd *lc, const struct deploy_pool *p,
		       const struct catalog *cat, struct diag *d)
{
	const struct scenario *sc = &p->sc;
	const struct engine_config *c = &p->cfg;
	enum kvd k = kv_of(cat, sc->kv_cache_dtype);
	const char *kv = k == KVD_BF16 ? NULL : ggml_kv(k);
	if (!kv)
		return kv_refused(p, "Ollama", "fp16, q8-0 or q4-0", d);
	add_env(lc, "OLLAMA_NUM_PARALLEL=%d", c->max_num_seqs);
	add_env(lc, "OLLAMA_CONTEXT_LENGTH=%lld", (long long)c->max_model_len);
	if (c->keep_alive_ns < 0)
		add_env(lc, "OLLAMA_KEEP_ALIVE=-1");
	else
		add_env(lc, "OLLAMA_KEEP_ALIVE=%.0fs", (double)c->keep_alive_ns / 1e9);
	add_env(lc, "OLLAMA_FLASH_ATTENTION=%d", sc->flash_attention ? 1 : 0);
	add_env(lc, "OLLAMA_KV_CACHE_TYPE=%s", kv);
	add_arg(lc, "ollama");
	add_arg(lc, "serve");
	add_note(lc, "then load %s in %s (ollama pull; Ollama names models by its own library "
		 "tags)", sc->model, sc->weight_format);
	if (c->max_num_batched_tokens != 512)
		missing(lc, "max_num_batched_tokens other than 512 (the num_batch option of a "
			"request or Modelfile)");
	if (!c->enable_prefix_caching)
		missing(lc, "prefix caching off");
	enum spec_method sm = SPEC_OFF;
	spec_method_parse(sc->spec.method, &sm);
	if (sm != SPEC_OFF)
		missing(lc, "speculative decoding (Ollama has none)");
	if (sc->tensor_parallel_size * sc->pipeline_parallel_size > 1)
		add_note(lc, "Ollama spreads a model over the GPUs it needs by layers itself");
	return 0;
}

/* ---- MLX ---- */

static int mlx_args(struct launch_cmd *lc, const struct deploy_pool *p,
		    const struct catalog *cat, struct diag *d)
{
	const struct scenario *sc = &p->sc;
	const struct engine_config *c = &p->cfg;
	enum kvd k = kv_of(cat, sc->kv_cache_dtype);
	if (k != KVD_BF16 && k != KVD_FP16)
		return kv_refused(p, "mlx_lm.server", "bf16 or fp16", d);
	add_arg(lc, "mlx_lm.server");
	add_arg(lc, "--model");
	add_arg(lc, "%s", lc->model);
	add_note(lc, "--model: an MLX checkpoint of the model in %s (mlx-community converts "
		 "most)", sc->weight_format);
	add_arg(lc, "--decode-concurrency");
	add_arg(lc, "%d", c->max_num_seqs);
	add_arg(lc, "--prefill-step-size");
	add_arg(lc, "%lld", (long long)c->max_num_batched_tokens);
	enum spec_method sm = SPEC_OFF;
	spec_method_parse(sc->spec.method, &sm);
	if (sm == SPEC_DRAFT) {
		add_arg(lc, "--draft-model");
		add_arg(lc, "%s", draft_name(cat, sc));
		add_arg(lc, "--num-draft-tokens");
		add_arg(lc, "%d", sc->spec.k);
	} else if (sm != SPEC_OFF) {
		missing(lc, "speculative decoding other than by a draft model");
	}
	if (!c->enable_prefix_caching)
		missing(lc, "prefix caching off (mlx_lm.server keeps a prompt cache)");
	return 0;
}

/* ---- building ---- */

int launch_build(struct launch_cmd *lc, const struct deploy_pool *p, const struct catalog *cat,
		 int32_t replicas, struct diag *d)
{
	memset(lc, 0, sizeof(*lc));
	lc->complete = true;
	const struct scenario *sc = &p->sc;
	struct engine_table *own = NULL;
	const struct engine_table *et = cat->engines;
	if (!et) {
		own = malloc(sizeof(*own));
		if (!own)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		int rc = engine_table_load(own, NULL, d);
		if (rc != 0) {
			free(own);
			return rc;
		}
		et = own;
	}
	const struct engine_profile *ep = engine_find(et, sc->engine_profile);
	if (ep) {
		snprintf(lc->engine, sizeof(lc->engine), "%s", ep->id);
		snprintf(lc->cli, sizeof(lc->cli), "%s", ep->launch_cli);
		snprintf(lc->version, sizeof(lc->version), "%s", ep->launch_version);
		snprintf(lc->version_source, sizeof(lc->version_source), "%s", ep->launch_source);
	}
	free(own);
	if (!lc->cli[0])
		return diag_set(d, DIAG_EINPUT, "%s: %sengine_profile: engine '%s' has no launch "
				"command (expected a profile with a \"launch\" entry in engines.json)",
				sc->source, sc->key_prefix, sc->engine_profile);
	if (sc->key_prefix[0])
		snprintf(lc->pool, sizeof(lc->pool), "%s", sc->name);
	lc->replicas = replicas;
	lc->gpus_per_replica = sc->tensor_parallel_size * sc->pipeline_parallel_size;
	const struct cat_model *m = catalog_model(cat, sc->model);
	const char *hf = hf_repo(m);
	snprintf(lc->model, sizeof(lc->model), "%s", hf ? hf : (m ? m->id : sc->model));
	lc->model_is_hf = hf != NULL;
	if (!hf)
		add_note(lc, "model: the catalogue id '%s' (the catalogue lists no Hugging Face "
			 "repo for it)", lc->model);
	int rc;
	if (strcmp(lc->cli, "vllm") == 0 || strcmp(lc->cli, "vllm-v0") == 0)
		rc = vllm_args(lc, p, cat, strcmp(lc->cli, "vllm-v0") == 0, d);
	else if (strcmp(lc->cli, "sglang") == 0)
		rc = sglang_args(lc, p, cat, d);
	else if (strcmp(lc->cli, "trtllm") == 0)
		rc = trtllm_args(lc, p, cat, d);
	else if (strcmp(lc->cli, "llama-server") == 0)
		rc = llama_args(lc, p, cat, d);
	else if (strcmp(lc->cli, "ollama") == 0)
		rc = ollama_args(lc, p, cat, d);
	else
		rc = mlx_args(lc, p, cat, d);
	if (rc == 0 && sc->kv_tiers.host_gb > 0 && strcmp(lc->cli, "sglang") != 0)
		missing(lc, "the host KV tier (kv_tiers.*: LMCache or the engine's KV offloading)");
	if (rc == 0 && sc->scheduling.policy == SCENARIO_SCHED_PRIORITY) {
		if (strcmp(lc->cli, "vllm") == 0 || strcmp(lc->cli, "vllm-v0") == 0) {
			add_arg(lc, "--scheduling-policy");
			add_arg(lc, "priority");
		} else {
			missing(lc, "priority scheduling (scheduling.policy priority)");
		}
	}
	if (rc == 0 && scenario_disaggregated(sc))
		missing(lc, "prefill/decode disaggregation (a KV connector, such as vLLM's "
			"--kv-transfer-config with the NIXL or LMCache connector, and a router that "
			"pairs the pools)");
	return rc;
}

int launch_of_deployment(struct launch_cmd *out, int max, int *n, const struct deployment *dp,
			 int32_t replicas_override, struct diag *d)
{
	*n = 0;
	for (int32_t i = 0; i < dp->n_pools; i++) {
		if (*n == max)
			return diag_set(d, DIAG_EINPUT, "%d pools (expected at most %d)", dp->n_pools,
					max);
		int32_t r = dp->pool[i].sc.replicas;
		if (!dp->pooled && replicas_override > 0)
			r = replicas_override;
		int rc = launch_build(&out[*n], &dp->pool[i], dp->cat, r, d);
		if (rc != 0)
			return rc;
		(*n)++;
	}
	return 0;
}

/* ---- printing ---- */

static bool shell_safe(const char *w)
{
	if (!*w)
		return false;
	for (const char *c = w; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || strchr("_./:=,@%+-", *c)))
			return false;
	return true;
}

/* Append s to buf at *at, counting what does not fit (as snprintf). */
static void put(char *buf, size_t size, size_t *at, const char *s)
{
	size_t n = strlen(s);
	if (buf && *at < size) {
		size_t room = size - *at - 1, k = n < room ? n : room;
		memcpy(buf + *at, s, k);
		buf[*at + k] = '\0';
	}
	*at += n;
}

/* Append word w, single-quoted when it holds anything a shell reads. */
static void put_word(char *buf, size_t size, size_t *at, const char *w)
{
	if (shell_safe(w)) {
		put(buf, size, at, w);
		return;
	}
	put(buf, size, at, "'");
	char one[2] = { 0, 0 };
	for (const char *c = w; *c; c++) {
		one[0] = *c;
		put(buf, size, at, *c == '\'' ? "'\\''" : one);
	}
	put(buf, size, at, "'");
}

size_t launch_shell(const struct launch_cmd *lc, char *buf, size_t size)
{
	size_t at = 0;
	if (buf && size)
		buf[0] = '\0';
	for (int i = 0; i < lc->n_env; i++) {
		/* NAME=value: the value quoted, not the name */
		const char *eq = strchr(lc->env[i], '=');
		char name[LAUNCH_ARG_MAX];
		size_t nl = eq ? (size_t)(eq - lc->env[i]) : strlen(lc->env[i]);
		memcpy(name, lc->env[i], nl);
		name[nl] = '\0';
		if (i)
			put(buf, size, &at, " ");
		put(buf, size, &at, name);
		put(buf, size, &at, "=");
		put_word(buf, size, &at, eq ? eq + 1 : "");
	}
	for (int i = 0; i < lc->argc; i++) {
		if (i || lc->n_env)
			put(buf, size, &at, " ");
		put_word(buf, size, &at, lc->argv[i]);
	}
	return at;
}

void launch_json(FILE *fp, const struct launch_cmd *lc)
{
	char shell[LAUNCH_MAX_ARGS * LAUNCH_ARG_MAX];
	launch_shell(lc, shell, sizeof(shell));
	fputs("{\"pool\":", fp);
	jsonw_str(fp, lc->pool);
	fputs(",\"engine\":", fp);
	jsonw_str(fp, lc->engine);
	fputs(",\"version\":", fp);
	jsonw_str(fp, lc->version);
	fputs(",\"version_source\":", fp);
	jsonw_str(fp, lc->version_source);
	fputs(",\"model\":", fp);
	jsonw_str(fp, lc->model);
	fprintf(fp, ",\"model_is_hf\":%s,\"replicas\":%d,\"gpus_per_replica\":%d,\"env\":[",
		lc->model_is_hf ? "true" : "false", lc->replicas, lc->gpus_per_replica);
	for (int i = 0; i < lc->n_env; i++) {
		if (i)
			fputc(',', fp);
		jsonw_str(fp, lc->env[i]);
	}
	fputs("],\"argv\":[", fp);
	for (int i = 0; i < lc->argc; i++) {
		if (i)
			fputc(',', fp);
		jsonw_str(fp, lc->argv[i]);
	}
	fputs("],\"shell\":", fp);
	jsonw_str(fp, shell);
	fprintf(fp, ",\"complete\":%s,\"notes\":[", lc->complete ? "true" : "false");
	for (int i = 0; i < lc->n_notes; i++) {
		if (i)
			fputc(',', fp);
		jsonw_str(fp, lc->notes[i]);
	}
	fputs("]}", fp);
}

void launch_print(FILE *fp, const struct launch_cmd *lc, const char *indent)
{
	char shell[LAUNCH_MAX_ARGS * LAUNCH_ARG_MAX];
	launch_shell(lc, shell, sizeof(shell));
	fprintf(fp, "%s# %s%s%s%s %s: %d replica%s x %d GPU%s%s\n", indent,
		lc->pool[0] ? "pool " : "", lc->pool, lc->pool[0] ? ": " : "", lc->engine,
		lc->version, lc->replicas, lc->replicas == 1 ? "" : "s", lc->gpus_per_replica,
		lc->gpus_per_replica == 1 ? "" : "s",
		lc->complete ? "" : " (incomplete: see the notes)");
	for (int i = 0; i < lc->n_notes; i++)
		fprintf(fp, "%s# %s\n", indent, lc->notes[i]);
	fprintf(fp, "%s%s\n", indent, shell);
}

/* ---- reading back ---- */

enum fk {
	F_INT,        /* key=<int> */
	F_NUM,        /* key=<number> */
	F_TRUE,       /* flag alone: key=true */
	F_FALSE,      /* flag alone: key=false */
	F_SKIP0,      /* flag alone, nothing to set */
	F_SKIP1,      /* flag and value, nothing to set */
	F_KV,         /* a KV-cache dtype as the engine spells it */
	F_STR,        /* key=<string> */
	F_GGUF,       /* key=<file without .gguf> */
	F_SPEC_JSON,  /* vLLM --speculative-config */
	F_SPEC_ALGO,  /* SGLang --speculative-algorithm */
	F_SPEC_V0,    /* vLLM V0 --speculative-model */
	F_DRAFT_TOK,  /* SGLang --speculative-num-draft-tokens (k + 1) */
	F_CHUNK_SG,   /* SGLang --chunked-prefill-size (-1: off) */
	F_EP_TP,      /* vLLM --enable-expert-parallel: EP over the TP group */
	F_FA,         /* llama.cpp -fa on|off */
	F_SPLIT,      /* llama.cpp --split-mode */
	F_TSPLIT,     /* llama.cpp --tensor-split: one entry per GPU */
	F_KEEPALIVE,  /* OLLAMA_KEEP_ALIVE */
	F_BOOL01,     /* key=<0|1> as false/true */
};

struct flag {
	const char *cli;   /* family, or "*vllm" for both vLLM families */
	const char *name;
	enum fk kind;
	const char *key;
};

static const struct flag FLAGS[] = {
	{ "*vllm", "--tensor-parallel-size", F_INT, "tensor_parallel_size" },
	{ "*vllm", "--pipeline-parallel-size", F_INT, "pipeline_parallel_size" },
	{ "vllm", "--enable-expert-parallel", F_EP_TP, "expert_parallel_size" },
	{ "*vllm", "--max-num-seqs", F_INT, "engine.max_num_seqs" },
	{ "*vllm", "--max-num-batched-tokens", F_INT, "engine.max_num_batched_tokens" },
	{ "*vllm", "--gpu-memory-utilization", F_NUM, "engine.gpu_memory_utilization" },
	{ "*vllm", "--max-model-len", F_INT, "engine.max_model_len" },
	{ "*vllm", "--block-size", F_INT, "engine.block_size" },
	{ "*vllm", "--kv-cache-dtype", F_KV, "kv_cache_dtype" },
	{ "*vllm", "--enable-prefix-caching", F_TRUE, "engine.enable_prefix_caching" },
	{ "vllm", "--no-enable-prefix-caching", F_FALSE, "engine.enable_prefix_caching" },
	{ "*vllm", "--enable-chunked-prefill", F_TRUE, "engine.enable_chunked_prefill" },
	{ "vllm", "--no-enable-chunked-prefill", F_FALSE, "engine.enable_chunked_prefill" },
	{ "vllm", "--speculative-config", F_SPEC_JSON, "speculative.method" },
	{ "vllm-v0", "--speculative-model", F_SPEC_V0, "speculative.method" },
	{ "vllm-v0", "--num-speculative-tokens", F_INT, "speculative.k" },
	{ "vllm-v0", "--ngram-prompt-lookup-max", F_SKIP1, NULL },
	{ "vllm-v0", "--speculative-disable-by-batch-size", F_INT,
	  "speculative.disable_by_batch_size" },
	{ "sglang", "--model-path", F_STR, "model" },
	{ "sglang", "--tp-size", F_INT, "tensor_parallel_size" },
	{ "sglang", "--pp-size", F_INT, "pipeline_parallel_size" },
	{ "sglang", "--ep-size", F_INT, "expert_parallel_size" },
	{ "sglang", "--max-running-requests", F_INT, "engine.max_num_seqs" },
	{ "sglang", "--chunked-prefill-size", F_CHUNK_SG, "engine.max_num_batched_tokens" },
	{ "sglang", "--max-prefill-tokens", F_INT, "engine.max_num_batched_tokens" },
	{ "sglang", "--mem-fraction-static", F_NUM, "engine.gpu_memory_utilization" },
	{ "sglang", "--context-length", F_INT, "engine.max_model_len" },
	{ "sglang", "--page-size", F_INT, "engine.block_size" },
	{ "sglang", "--kv-cache-dtype", F_KV, "kv_cache_dtype" },
	{ "sglang", "--disable-radix-cache", F_FALSE, "engine.enable_prefix_caching" },
	{ "sglang", "--enable-hierarchical-cache", F_SKIP0, NULL },
	{ "sglang", "--hicache-size", F_NUM, "kv_tiers.host_gb" },
	{ "sglang", "--speculative-algorithm", F_SPEC_ALGO, "speculative.method" },
	{ "sglang", "--speculative-draft-model-path", F_STR, "speculative.draft_model" },
	{ "sglang", "--speculative-num-steps", F_INT, "speculative.k" },
	{ "sglang", "--speculative-eagle-topk", F_SKIP1, NULL },
	{ "sglang", "--speculative-num-draft-tokens", F_DRAFT_TOK, "speculative.k" },
	{ "trtllm", "--backend", F_SKIP1, NULL },
	{ "trtllm", "--tp_size", F_INT, "tensor_parallel_size" },
	{ "trtllm", "--pp_size", F_INT, "pipeline_parallel_size" },
	{ "trtllm", "--ep_size", F_INT, "expert_parallel_size" },
	{ "trtllm", "--max_batch_size", F_INT, "engine.max_num_seqs" },
	{ "trtllm", "--max_num_tokens", F_INT, "engine.max_num_batched_tokens" },
	{ "trtllm", "--max_seq_len", F_INT, "engine.max_model_len" },
	{ "trtllm", "--enable_chunked_prefill", F_TRUE, "engine.enable_chunked_prefill" },
	{ "llama-server", "-m", F_GGUF, "model" },
	{ "llama-server", "--parallel", F_INT, "engine.max_num_seqs" },
	{ "llama-server", "--kv-unified", F_SKIP0, NULL },
	{ "llama-server", "-c", F_INT, "engine.kv_cache_tokens" },
	{ "llama-server", "-ub", F_INT, "engine.max_num_batched_tokens" },
	{ "llama-server", "-b", F_SKIP1, NULL },
	{ "llama-server", "-ngl", F_SKIP1, NULL },
	{ "llama-server", "-fa", F_FA, "engine.flash_attention" },
	{ "llama-server", "-ctk", F_KV, "kv_cache_dtype" },
	{ "llama-server", "-ctv", F_KV, "kv_cache_dtype" },
	{ "llama-server", "--split-mode", F_SPLIT, NULL },
	{ "llama-server", "--tensor-split", F_TSPLIT, NULL },
	{ "llama-server", "--no-cache-prompt", F_FALSE, "engine.enable_prefix_caching" },
	{ "llama-server", "-md", F_GGUF, "speculative.draft_model" },
	{ "llama-server", "--draft-max", F_INT, "speculative.k" },
	{ "ollama", "OLLAMA_NUM_PARALLEL", F_INT, "engine.max_num_seqs" },
	{ "ollama", "OLLAMA_CONTEXT_LENGTH", F_INT, "engine.max_model_len" },
	{ "ollama", "OLLAMA_KEEP_ALIVE", F_KEEPALIVE, "startup.keep_alive_s" },
	{ "ollama", "OLLAMA_FLASH_ATTENTION", F_BOOL01, "engine.flash_attention" },
	{ "ollama", "OLLAMA_KV_CACHE_TYPE", F_KV, "kv_cache_dtype" },
	{ "mlx", "--model", F_STR, "model" },
	{ "mlx", "--decode-concurrency", F_INT, "engine.max_num_seqs" },
	{ "mlx", "--prefill-step-size", F_INT, "engine.max_num_batched_tokens" },
	{ "mlx", "--draft-model", F_STR, "speculative.draft_model" },
	{ "mlx", "--num-draft-tokens", F_INT, "speculative.k" },
};

static const struct flag *flag_find(const char *cli, const char *name)
{
	for (size_t i = 0; i < sizeof(FLAGS) / sizeof(FLAGS[0]); i++) {
		const struct flag *f = &FLAGS[i];
		bool fam = strcmp(f->cli, cli) == 0 ||
			   (f->cli[0] == '*' && strncmp(cli, f->cli + 1, strlen(f->cli + 1)) == 0);
		if (fam && strcmp(f->name, name) == 0)
			return f;
	}
	return NULL;
}

struct sets {
	char (*v)[LAUNCH_SET_MAX];
	int max, n;
	struct diag *d;
};

static int set_add(struct sets *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int set_add(struct sets *s, const char *fmt, ...)
{
	if (s->n == s->max)
		return diag_set(s->d, DIAG_EINPUT, "more than %d settings to read back", s->max);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->v[s->n++], LAUNCH_SET_MAX, fmt, ap);
	va_end(ap);
	return 0;
}

static const char *kv_back(const char *v)
{
	static const char *const map[][2] = { { "auto", "bf16" }, { "fp8", "fp8" },
		{ "fp8_e4m3", "fp8" }, { "bf16", "bf16" }, { "f16", "fp16" }, { "q8_0", "q8-0" },
		{ "q4_0", "q4-0" } };
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i][0], v) == 0)
			return map[i][1];
	return NULL;
}

static bool whole(const char *v, long long *out)
{
	char *end;
	*out = strtoll(v, &end, 10);
	return *v && !*end;
}

static int bad_value(struct sets *s, const char *flag, const char *v, const char *want)
{
	return diag_set(s->d, DIAG_EINPUT, "%s '%s': expected %s", flag, v, want);
}

static int spec_json_back(struct sets *s, const char *flag, const char *v)
{
	cJSON *j = cJSON_Parse(v);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return bad_value(s, flag, v, "a JSON object");
	}
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "method");
	const cJSON *model = cJSON_GetObjectItemCaseSensitive(j, "model");
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "num_speculative_tokens");
	const cJSON *dis = cJSON_GetObjectItemCaseSensitive(j, "disable_by_batch_size");
	const char *method = cJSON_IsString(m) ? m->valuestring : "draft";
	int rc = set_add(s, "speculative.method=%s", method);
	if (rc == 0 && strcmp(method, "draft") == 0 && cJSON_IsString(model))
		rc = set_add(s, "speculative.draft_model=%s", model->valuestring);
	if (rc == 0 && cJSON_IsNumber(k))
		rc = set_add(s, "speculative.k=%d", k->valueint);
	if (rc == 0 && cJSON_IsNumber(dis))
		rc = set_add(s, "speculative.disable_by_batch_size=%d", dis->valueint);
	cJSON_Delete(j);
	return rc;
}

/* One flag f with value v (NULL for flags alone).  *split and *gpus collect
 * llama.cpp's split mode and GPU count. */
static int flag_back(struct sets *s, const struct flag *f, const char *v, int32_t tp,
		     char *split, int *gpus)
{
	long long x;
	char *end;
	switch (f->kind) {
	case F_INT:
		if (!whole(v, &x))
			return bad_value(s, f->name, v, "a whole number");
		return set_add(s, "%s=%lld", f->key, x);
	case F_NUM: {
		double y = strtod(v, &end);
		if (!*v || *end || !isfinite(y))
			return bad_value(s, f->name, v, "a number");
		return set_add(s, "%s=%s", f->key, v);
	}
	case F_TRUE:
		return set_add(s, "%s=true", f->key);
	case F_FALSE:
		return set_add(s, "%s=false", f->key);
	case F_SKIP0:
	case F_SKIP1:
		return 0;
	case F_KV: {
		const char *k = kv_back(v);
		if (!k)
			return bad_value(s, f->name, v, "a KV-cache dtype this tool models");
		return set_add(s, "%s=%s", f->key, k);
	}
	case F_STR:
		return set_add(s, "%s=%s", f->key, v);
	case F_GGUF: {
		size_t n = strlen(v);
		if (n < 6 || strcmp(v + n - 5, ".gguf") != 0)
			return bad_value(s, f->name, v, "a file name ending in .gguf");
		if (strcmp(f->key, "speculative.draft_model") == 0 &&
		    set_add(s, "speculative.method=draft"))
			return DIAG_EINPUT;
		return set_add(s, "%s=%.*s", f->key, (int)(n - 5), v);
	}
	case F_SPEC_JSON:
		return spec_json_back(s, f->name, v);
	case F_SPEC_ALGO: {
		static const char *const map[][2] = { { "STANDALONE", "draft" }, { "NEXTN", "mtp" },
			{ "EAGLE3", "eagle3" }, { "NGRAM", "ngram" } };
		for (size_t i = 0; i < 4; i++)
			if (strcmp(map[i][0], v) == 0)
				return set_add(s, "%s=%s", f->key, map[i][1]);
		return bad_value(s, f->name, v, "STANDALONE, NEXTN, EAGLE3 or NGRAM");
	}
	case F_SPEC_V0:
		if (strcmp(v, "[ngram]") == 0)
			return set_add(s, "speculative.method=ngram");
		if (set_add(s, "speculative.method=draft"))
			return DIAG_EINPUT;
		return set_add(s, "speculative.draft_model=%s", v);
	case F_DRAFT_TOK:
		if (!whole(v, &x) || x < 2)
			return bad_value(s, f->name, v, "a whole number of at least 2");
		return set_add(s, "%s=%lld", f->key, x - 1);
	case F_CHUNK_SG:
		if (!whole(v, &x))
			return bad_value(s, f->name, v, "a whole number, or -1");
		if (x < 0)
			return set_add(s, "engine.enable_chunked_prefill=false");
		return set_add(s, "%s=%lld", f->key, x);
	case F_EP_TP:
		return set_add(s, "%s=%d", f->key, tp);
	case F_FA:
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
			return bad_value(s, f->name, v, "on or off");
		return set_add(s, "%s=%s", f->key, strcmp(v, "on") == 0 ? "true" : "false");
	case F_SPLIT:
		if (strcmp(v, "row") != 0 && strcmp(v, "layer") != 0)
			return bad_value(s, f->name, v, "row or layer");
		snprintf(split, 8, "%s", v);
		return 0;
	case F_TSPLIT:
		*gpus = 1;
		for (const char *c = v; *c; c++)
			*gpus += *c == ',';
		return 0;
	case F_KEEPALIVE: {
		double y = strtod(v, &end);
		if (!*v || !(strcmp(end, "s") == 0 || (*end == '\0' && y < 0)))
			return bad_value(s, f->name, v, "seconds such as 300s, or -1");
		return set_add(s, "%s=%g", f->key, y);
	}
	case F_BOOL01:
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
			return bad_value(s, f->name, v, "0 or 1");
		return set_add(s, "%s=%s", f->key, strcmp(v, "1") == 0 ? "true" : "false");
	}
	return 0;
}

int launch_sets(const struct launch_cmd *lc, char sets[][LAUNCH_SET_MAX], int max, int *n,
		struct diag *d)
{
	struct sets s = { sets, max, 0, d };
	int rc = 0;
	/* what a flag's absence means in the family (the modelled value is
	 * written out whenever it differs) */
	if (strcmp(lc->cli, "vllm-v0") == 0 || strcmp(lc->cli, "trtllm") == 0)
		rc = set_add(&s, "engine.enable_chunked_prefill=false");
	if (rc == 0 && strcmp(lc->cli, "vllm-v0") == 0)
		rc = set_add(&s, "engine.enable_prefix_caching=false");
	if (rc == 0 && strcmp(lc->cli, "sglang") == 0)
		rc = set_add(&s, "engine.enable_prefix_caching=true");
	if (rc == 0 && (strcmp(lc->cli, "llama-server") == 0 || strcmp(lc->cli, "mlx") == 0 ||
			strcmp(lc->cli, "ollama") == 0))
		rc = set_add(&s, "engine.enable_prefix_caching=true");
	if (rc == 0 && strcmp(lc->cli, "sglang") == 0)
		rc = set_add(&s, "engine.enable_chunked_prefill=true");
	/* the model is positional in vllm serve and trtllm-serve */
	if (rc == 0 && (strcmp(lc->cli, "vllm") == 0 || strcmp(lc->cli, "vllm-v0") == 0 ||
			strcmp(lc->cli, "trtllm") == 0))
		rc = set_add(&s, "model=%s", lc->argv[2]);
	for (int i = 0; rc == 0 && i < lc->n_env; i++) {
		const char *eq = strchr(lc->env[i], '=');
		char name[LAUNCH_ARG_MAX];
		size_t nl = eq ? (size_t)(eq - lc->env[i]) : strlen(lc->env[i]);
		memcpy(name, lc->env[i], nl);
		name[nl] = '\0';
		const struct flag *f = flag_find(lc->cli, name);
		if (!f || !eq)
			rc = diag_set(d, DIAG_EINPUT, "%s: not a variable this tool reads back", name);
		else
			rc = flag_back(&s, f, eq + 1, 0, NULL, NULL);
	}
	/* argv: the program and its subcommand or model come first */
	int i = strcmp(lc->cli, "vllm") == 0 || strcmp(lc->cli, "vllm-v0") == 0 ? 3
		: strcmp(lc->cli, "sglang") == 0 ? 3 : strcmp(lc->cli, "trtllm") == 0 ? 3
		: strcmp(lc->cli, "ollama") == 0 ? 2 : 1;
	int32_t tp = 1;
	char split[8] = "";
	int gpus = 1;
	for (int k = i; k + 1 < lc->argc; k++)
		if (strcmp(lc->argv[k], "--tensor-parallel-size") == 0)
			tp = (int32_t)atoi(lc->argv[k + 1]);
	while (rc == 0 && i < lc->argc) {
		const char *name = lc->argv[i];
		const struct flag *f = flag_find(lc->cli, name);
		if (!f) {
			rc = diag_set(d, DIAG_EINPUT, "%s: not a flag this tool reads back for %s",
				      name, lc->cli);
			break;
		}
		bool alone = f->kind == F_TRUE || f->kind == F_FALSE || f->kind == F_SKIP0 ||
			     f->kind == F_EP_TP;
		if (!alone && i + 1 >= lc->argc) {
			rc = diag_set(d, DIAG_EINPUT, "%s: expected a value after it", name);
			break;
		}
		rc = flag_back(&s, f, alone ? NULL : lc->argv[i + 1], tp, split, &gpus);
		i += alone ? 1 : 2;
	}
	if (rc == 0 && strcmp(lc->cli, "llama-server") == 0) {
		bool rows = strcmp(split, "row") == 0;
		rc = set_add(&s, "tensor_parallel_size=%d", rows ? gpus : 1);
		if (rc == 0)
			rc = set_add(&s, "pipeline_parallel_size=%d", rows ? 1 : gpus);
	}
	*n = s.n;
	return rc;
}
