/* SPDX-License-Identifier: Apache-2.0
 * Tests for replay/launch: for each engine profile, the launch command of a
 * deployment uses only flags its engine documents (the lists under
 * tests/fixtures/engine-help), carries the deployment's values (TP, PP,
 * batch and token limits, memory fraction, KV dtype, speculative decoding),
 * and read back into scenario keys gives the same deployment again (the
 * round trip a replay of the emitted settings takes); the engines' own
 * defaults by GPU size reach the command; the shell line quotes what a
 * shell would split; bad input is refused by key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/catalog.h"
#include "replay/deploy.h"
#include "replay/launch.h"
#include "replay/scenario.h"

#define HELP AC_SRC_DIR "/tests/fixtures/engine-help/"

struct tcase {
	const char *name;
	const char *fixture;
	const char *sets[10];
	const char *want[12]; /* flag, value pairs the command must hold */
};

static const struct tcase CASES[] = {
	{ "vllm on H100, TP 2, FP8 KV, EAGLE-3", "vllm-serve.txt",
	  { "hardware=h100-sxm", "engine_profile=vllm", "model=qwen3-32b",
	    "tensor_parallel_size=2", "kv_cache_dtype=fp8", "speculative.method=eagle3",
	    "speculative.k=3", NULL },
	  { "--tensor-parallel-size", "2", "--max-num-seqs", "1024", "--max-num-batched-tokens",
	    "8192", "--kv-cache-dtype", "fp8", NULL } },
	{ "vllm on L40S: the small-GPU defaults", "vllm-serve.txt",
	  { "hardware=l40s", "engine_profile=vllm", "model=qwen3-8b", NULL },
	  { "--max-num-seqs", "256", "--max-num-batched-tokens", "2048", "--gpu-memory-utilization",
	    "0.9", "--kv-cache-dtype", "auto", NULL } },
	{ "vllm on A100 80GB: no large-GPU defaults", "vllm-serve.txt",
	  { "hardware=a100-sxm-80gb", "engine_profile=vllm", "model=qwen3-8b",
	    "engine.enable_prefix_caching=false", NULL },
	  { "--max-num-seqs", "256", "--max-num-batched-tokens", "2048", NULL } },
	{ "vllm-2025 with a draft model", "vllm-serve.txt",
	  { "hardware=h100-sxm", "engine_profile=vllm-2025", "model=qwen3-32b",
	    "speculative.method=draft", "speculative.draft_model=qwen3-0.6b", "speculative.k=4",
	    "engine.max_num_seqs=128", NULL },
	  { "--max-num-seqs", "128", "--pipeline-parallel-size", "1", NULL } },
	{ "vllm-v0 with n-grams", "vllm-serve-v0.6.txt",
	  { "hardware=a100-sxm-80gb", "engine_profile=vllm-v0", "model=qwen3-8b",
	    "speculative.method=ngram", "speculative.k=5", "engine.max_num_batched_tokens=4096",
	    NULL },
	  { "--speculative-model", "[ngram]", "--num-speculative-tokens", "5",
	    "--max-num-batched-tokens", "4096", NULL } },
	{ "sglang on H100, TP 4, host KV tier, EAGLE-3", "sglang-launch-server.txt",
	  { "hardware=h100-sxm", "engine_profile=sglang", "model=qwen3-32b",
	    "tensor_parallel_size=4", "kv_tiers.host_gb=64", "speculative.method=eagle3",
	    "speculative.k=2", "kv_cache_dtype=fp8", NULL },
	  { "--tp-size", "4", "--chunked-prefill-size", "8192", "--hicache-size", "64",
	    "--speculative-num-draft-tokens", "3", "--kv-cache-dtype", "fp8_e4m3", NULL } },
	{ "sglang on L40S: its 4096-token chunk", "sglang-launch-server.txt",
	  { "hardware=l40s", "engine_profile=sglang", "model=qwen3-8b",
	    "engine.enable_prefix_caching=false", NULL },
	  { "--chunked-prefill-size", "4096", "--max-running-requests", "1024", NULL } },
	{ "trtllm on H100, TP 2", "trtllm-serve.txt",
	  { "hardware=h100-sxm", "engine_profile=trtllm", "model=qwen3-32b",
	    "tensor_parallel_size=2", NULL },
	  { "--tp_size", "2", "--max_batch_size", "2048", "--max_num_tokens", "8192", NULL } },
	{ "llama.cpp on an RTX 4090, Q8 KV", "llama-server.txt",
	  { "hardware=rtx-4090", "engine_profile=llama.cpp", "model=qwen3-8b",
	    "weight_format=gguf-q4-k-m", "kv_cache_dtype=q8-0", NULL },
	  { "--parallel", "4", "-ub", "512", "-ctk", "q8_0", "-ctv", "q8_0", NULL } },
	{ "llama.cpp over two GPUs with a draft model", "llama-server.txt",
	  { "hardware=rtx-4090", "engine_profile=llama.cpp", "model=qwen3-32b",
	    "weight_format=gguf-q4-k-m", "kv_cache_dtype=fp16", "tensor_parallel_size=2",
	    "speculative.method=draft", "speculative.draft_model=qwen3-0.6b", NULL },
	  { "--split-mode", "row", "--tensor-split", "1,1", "-ctk", "f16", NULL } },
	{ "ollama on a Mac", "ollama-serve.txt",
	  { "hardware=apple-m4-max-40c", "engine_profile=ollama", "model=qwen3-8b",
	    "weight_format=gguf-q4-k-m", "kv_cache_dtype=fp16", NULL },
	  { NULL } },
	{ "mlx on a Mac", "mlx-lm-server.txt",
	  { "hardware=apple-m4-max-40c", "engine_profile=mlx", "model=qwen3-8b",
	    "weight_format=mlx-q4", "kv_cache_dtype=fp16", NULL },
	  { "--decode-concurrency", "1", "--prefill-step-size", "2048", NULL } },
};

static int nsets(const char *const *s)
{
	int n = 0;
	while (s[n])
		n++;
	return n;
}

/* Whether word w is listed in fixture text (a line's comma-separated
 * entries, or a word of its first non-comment line). */
static bool listed(const char *text, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = strstr(text, w); p; p = strstr(p + 1, w)) {
		bool start = p == text || p[-1] == '\n' || p[-1] == ' ';
		bool end = p[n] == '\0' || p[n] == '\n' || p[n] == ',' || p[n] == ' ';
		if (start && end)
			return true;
	}
	return false;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot read %s", path);
	char *buf = calloc(1, 1 << 16);
	assert_non_null(buf);
	size_t n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* An option: starts with '-' and is not a negative number. */
static bool is_flag(const char *a)
{
	return a[0] == '-' && !isdigit((unsigned char)a[1]);
}

struct fx {
	struct catalog *cat;
	struct scenario sc, sc2;
	struct deployment dp, dp2;
	struct launch_cmd lc, lc2;
	char sets[LAUNCH_MAX_SETS + 16][LAUNCH_SET_MAX];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct diag d;
	diag_init(&d);
	if (!f || catalog_load(&f->cat, NULL, &d) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	catalog_free(f->cat);
	free(f);
	return 0;
}

static void build(struct fx *f, struct scenario *sc, struct deployment *dp,
		  const char *const *sets, int n)
{
	struct diag d;
	diag_init(&d);
	if (scenario_load(sc, NULL, sets, n, &d) != 0 || deploy_build(dp, sc, f->cat, NULL, NULL, &d))
		fail_msg("%s", d.msg);
}

/* Every case: flags documented, values the deployment's, round trip. */
static void test_profiles(void **state)
{
	struct fx *f = *state;
	struct diag d;
	diag_init(&d);
	for (size_t c = 0; c < sizeof(CASES) / sizeof(CASES[0]); c++) {
		const struct tcase *t = &CASES[c];
		build(f, &f->sc, &f->dp, t->sets, nsets(t->sets));
		int n = 0;
		if (launch_of_deployment(&f->lc, 1, &n, &f->dp, 3, &d) != 0)
			fail_msg("%s: %s", t->name, d.msg);
		assert_int_equal(n, 1);
		const struct launch_cmd *lc = &f->lc;
		assert_int_equal(lc->replicas, 3);
		assert_true(lc->version[0] && lc->version_source[0]);
		/* documented flags only, and the command itself */
		char path[512];
		snprintf(path, sizeof(path), "%s%s", HELP, t->fixture);
		char *help = slurp(path);
		for (int i = 0; i < lc->argc; i++)
			if (is_flag(lc->argv[i]) && !listed(help, lc->argv[i]))
				fail_msg("%s: %s is not in %s", t->name, lc->argv[i], t->fixture);
		assert_true(listed(help, lc->argv[0]));
		for (int i = 0; i < lc->n_env; i++) {
			char name[LAUNCH_ARG_MAX];
			snprintf(name, sizeof(name), "%.*s", (int)strcspn(lc->env[i], "="), lc->env[i]);
			if (!listed(help, name))
				fail_msg("%s: %s is not in %s", t->name, name, t->fixture);
		}
		free(help);
		/* the deployment's values */
		for (int k = 0; t->want[k]; k += 2) {
			int i = 0;
			while (i + 1 < lc->argc && strcmp(lc->argv[i], t->want[k]) != 0)
				i++;
			if (i + 1 >= lc->argc || strcmp(lc->argv[i + 1], t->want[k + 1]) != 0)
				fail_msg("%s: %s should be %s", t->name, t->want[k], t->want[k + 1]);
		}
		const struct engine_config *c1 = &f->dp.pool[0].cfg;
		/* read back: the hardware is not on the command line, nor the
		 * weight format or, for some engines, the model */
		int m = 0, k = 0;
		for (; t->sets[m]; m++)
			if (strncmp(t->sets[m], "hardware=", 9) == 0 ||
			    strncmp(t->sets[m], "engine_profile=", 15) == 0 ||
			    strncmp(t->sets[m], "weight_format=", 14) == 0 ||
			    strncmp(t->sets[m], "model=", 6) == 0 ||
			    strncmp(t->sets[m], "speculative.draft_model=", 24) == 0)
				snprintf(f->sets[k++], LAUNCH_SET_MAX, "%s", t->sets[m]);
		int got = 0;
		if (launch_sets(lc, &f->sets[k], LAUNCH_MAX_SETS, &got, &d) != 0)
			fail_msg("%s: %s", t->name, d.msg);
		const char *ptr[LAUNCH_MAX_SETS + 16];
		for (int i = 0; i < k + got; i++)
			ptr[i] = f->sets[i];
		build(f, &f->sc2, &f->dp2, ptr, k + got);
		const struct engine_config *c2 = &f->dp2.pool[0].cfg;
		const struct scenario *s1 = &f->dp.pool[0].sc, *s2 = &f->dp2.pool[0].sc;
		if (s1->tensor_parallel_size != s2->tensor_parallel_size ||
		    s1->pipeline_parallel_size != s2->pipeline_parallel_size ||
		    /* "auto" (the checkpoint's 16-bit dtype) reads back as bf16 */
		    catalog_kv_dtype(f->cat, s1->kv_cache_dtype)->bits_per_element !=
			    catalog_kv_dtype(f->cat, s2->kv_cache_dtype)->bits_per_element ||
		    strcmp(s1->spec.method, s2->spec.method) != 0 ||
		    c1->max_num_seqs != c2->max_num_seqs ||
		    c1->max_num_batched_tokens != c2->max_num_batched_tokens ||
		    c1->block_size != c2->block_size ||
		    c1->gpu_memory_utilization != c2->gpu_memory_utilization ||
		    c1->enable_prefix_caching != c2->enable_prefix_caching ||
		    c1->enable_chunked_prefill != c2->enable_chunked_prefill ||
		    c1->kv_cache_tokens != c2->kv_cache_tokens ||
		    c1->max_model_len != c2->max_model_len || c1->spec_k != c2->spec_k ||
		    c1->spec_disable_batch != c2->spec_disable_batch ||
		    c1->keep_alive_ns != c2->keep_alive_ns ||
		    memcmp(c1->spec_tokens, c2->spec_tokens, sizeof(c1->spec_tokens)) != 0 ||
		    f->dp.tiers.n != f->dp2.tiers.n)
			fail_msg("%s: the settings read back build another deployment: seqs %d/%d, "
				 "tokens %lld/%lld, kv %lld/%lld, tp %d/%d, prefix %d/%d, util %g/%g, "
				 "chunked %d/%d, spec k %d/%d, len %lld/%lld, keep %lld/%lld, "
				 "block %lld/%lld", t->name, c1->max_num_seqs, c2->max_num_seqs,
				 (long long)c1->max_num_batched_tokens,
				 (long long)c2->max_num_batched_tokens, (long long)c1->kv_cache_tokens,
				 (long long)c2->kv_cache_tokens, s1->tensor_parallel_size,
				 s2->tensor_parallel_size, c1->enable_prefix_caching,
				 c2->enable_prefix_caching, c1->gpu_memory_utilization,
				 c2->gpu_memory_utilization, c1->enable_chunked_prefill,
				 c2->enable_chunked_prefill, c1->spec_k, c2->spec_k,
				 (long long)c1->max_model_len, (long long)c2->max_model_len,
				 (long long)c1->keep_alive_ns, (long long)c2->keep_alive_ns,
				 (long long)c1->block_size, (long long)c2->block_size);
		/* the command of the deployment read back is the same command */
		assert_int_equal(launch_build(&f->lc2, &f->dp2.pool[0], f->cat, 3, &d), 0);
		char a[8192], b[8192];
		launch_shell(&f->lc, a, sizeof(a));
		launch_shell(&f->lc2, b, sizeof(b));
		assert_string_equal(a, b);
		deploy_release(&f->dp2);
		deploy_release(&f->dp);
	}
}

/* The shell line quotes the JSON of --speculative-config and nothing that
 * needs no quotes; the incomplete commands say why. */
static void test_shell_and_notes(void **state)
{
	struct fx *f = *state;
	struct diag d;
	diag_init(&d);
	const char *sets[] = { "hardware=h100-sxm", "engine_profile=vllm", "model=qwen3-8b",
			       "speculative.method=ngram", "speculative.k=4" };
	build(f, &f->sc, &f->dp, sets, 5);
	assert_int_equal(launch_build(&f->lc, &f->dp.pool[0], f->cat, 2, &d), 0);
	char line[8192];
	size_t need = launch_shell(&f->lc, line, sizeof(line));
	assert_int_equal(need, strlen(line));
	assert_non_null(strstr(line, "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 1 "));
	assert_non_null(strstr(line, " --speculative-config '{\"method\":\"ngram\","
				     "\"num_speculative_tokens\":4,\"prompt_lookup_max\":4}'"));
	assert_true(f->lc.model_is_hf && f->lc.complete);
	/* truncation counts as snprintf does */
	char small[16];
	assert_int_equal(launch_shell(&f->lc, small, sizeof(small)), need);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	deploy_release(&f->dp);
	/* TensorRT-LLM takes speculative decoding from its YAML file only */
	const char *trt[] = { "hardware=h100-sxm", "engine_profile=trtllm", "model=qwen3-8b",
			      "speculative.method=ngram" };
	build(f, &f->sc, &f->dp, trt, 4);
	assert_int_equal(launch_build(&f->lc, &f->dp.pool[0], f->cat, 1, &d), 0);
	assert_false(f->lc.complete);
	bool said = false;
	for (int i = 0; i < f->lc.n_notes; i++)
		said = said || strstr(f->lc.notes[i], "speculative decoding") != NULL;
	assert_true(said);
	deploy_release(&f->dp);
}

/* A KV dtype the engine lacks is refused by key; a command with a flag
 * this tool does not read back is refused by flag. */
static void test_errors(void **state)
{
	struct fx *f = *state;
	struct diag d;
	diag_init(&d);
	const char *sets[] = { "hardware=rtx-4090", "engine_profile=llama.cpp", "model=qwen3-8b",
			       "weight_format=gguf-q4-k-m", "kv_cache_dtype=fp8" };
	build(f, &f->sc, &f->dp, sets, 5);
	assert_int_equal(launch_build(&f->lc, &f->dp.pool[0], f->cat, 1, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "(built-in default): kv_cache_dtype: 'fp8' is not a KV-cache "
				   "dtype llama.cpp takes (expected bf16, fp16, q8-0 or q4-0)");
	deploy_release(&f->dp);
	const char *ok[] = { "hardware=h100-sxm", "engine_profile=vllm", "model=qwen3-8b" };
	build(f, &f->sc, &f->dp, ok, 3);
	assert_int_equal(launch_build(&f->lc, &f->dp.pool[0], f->cat, 1, &d), 0);
	snprintf(f->lc.argv[f->lc.argc++], LAUNCH_ARG_MAX, "--enforce-eager");
	int n = 0;
	diag_init(&d);
	assert_int_equal(launch_sets(&f->lc, f->sets, LAUNCH_MAX_SETS, &n, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "--enforce-eager: not a flag this tool reads back for vllm");
	f->lc.argc--;
	snprintf(f->lc.argv[4], LAUNCH_ARG_MAX, "two");
	diag_init(&d);
	assert_int_equal(launch_sets(&f->lc, f->sets, LAUNCH_MAX_SETS, &n, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "--tensor-parallel-size 'two': expected a whole number");
	deploy_release(&f->dp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_shell_and_notes),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
