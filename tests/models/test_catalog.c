/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/catalog: the embedded and on-disk catalogues load and
 * agree, lookups by id and alias, and every kind of bad catalogue gives a
 * message naming the file and the key path (table-driven: one textual edit
 * of a shipped file -> the exact message expected).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/catalog.h"
#include "models/memory.h"
#include "models/perf_model.h"

static struct catalog *load_embedded(void)
{
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	int rc = catalog_load(&cat, NULL, &d);
	if (rc)
		fail_msg("embedded catalogue: %s", d.msg);
	assert_non_null(cat);
	assert_true(catalog_check(cat));
	return cat;
}

static void test_embedded_loads(void **state)
{
	(void)state;
	struct catalog *cat = load_embedded();
	assert_true(cat->hardware_count >= 6);
	assert_true(cat->family_count >= 3);
	assert_true(cat->model_count >= 4);
	assert_true(cat->weight_format_count >= 6);
	assert_true(cat->kv_dtype_count >= 3);

	assert_false(catalog_check(NULL));

	const struct cat_hardware *h = catalog_hardware(cat, "h100-sxm");
	assert_non_null(h);
	assert_string_equal(h->family->id, "nvidia-hopper");
	assert_true(h->memory_gb == 80);
	assert_true(h->mem_bw_gbs == 3350);
	assert_true(h->tflops[CAT_DTYPE_BF16] == 989.4);
	assert_true(h->tflops[CAT_DTYPE_FP8] == 1978.9);
	assert_true(h->tflops[CAT_DTYPE_FP4] == 0);
	assert_true(h->tdp_w == 700);
	assert_string_equal(h->peer_link.kind, "nvlink4");
	assert_true(h->peer_link.bw_gbs == 450); /* 900 bidirectional */
	assert_true(h->host_link.bw_gbs == 64);
	assert_false(h->unified_memory);
	assert_true(h->usable_memory_fraction == 1.0);

	const struct cat_hardware *l = catalog_hardware(cat, "l40s");
	assert_non_null(l);
	assert_null(l->peer_link.kind);
	assert_true(catalog_hardware(cat, "a100-sxm-80gb")->tflops[CAT_DTYPE_FP8] == 0);

	const struct cat_model *m = catalog_model(cat, "llama-3.1-8b");
	assert_non_null(m);
	assert_int_equal(m->layers, 32);
	assert_int_equal(m->hidden_size, 4096);
	assert_int_equal(m->heads, 32);
	assert_int_equal(m->kv_heads, 8);
	assert_int_equal(m->head_dim, 128);
	assert_int_equal(m->intermediate_size, 14336);
	assert_int_equal(m->vocab_size, 128256);
	assert_int_equal(m->max_context, 131072);
	assert_false(m->tied_embeddings);
	assert_int_equal(m->experts, 0);
	/* the exact safetensors count of Llama 3.1 8B */
	assert_int_equal(m->total_params, 8030261248LL);
	assert_int_equal(catalog_model(cat, "llama-2-7b")->total_params, 6738415616LL);
	assert_int_equal(catalog_model(cat, "qwen2.5-7b")->total_params, 7615616512LL);

	const struct cat_weight_format *w = catalog_weight_format(cat, "fp8");
	assert_non_null(w);
	assert_true(w->bits_per_weight == 8);
	assert_int_equal(w->compute_dtype, CAT_DTYPE_FP8);
	assert_true(w->has_fallback);
	assert_int_equal(w->fallback_dtype, CAT_DTYPE_BF16);
	const struct cat_weight_format *awq = catalog_weight_format(cat, "int4-awq");
	assert_true(awq->bits_per_weight > 4 && awq->bits_per_weight < 4.25);
	assert_true(catalog_kv_dtype(cat, "fp8")->bits_per_element == 8);
	catalog_free(cat);
}

static void test_directory_matches_embedded(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	struct catalog *disk = NULL;
	int rc = catalog_load(&disk, AC_SRC_DIR "/models/catalog", &d);
	if (rc)
		fail_msg("%s", d.msg);
	struct catalog *emb = load_embedded();
	assert_int_equal(disk->hardware_count, emb->hardware_count);
	assert_int_equal(disk->model_count, emb->model_count);
	for (size_t i = 0; i < emb->hardware_count; i++) {
		assert_string_equal(disk->hardware[i].id, emb->hardware[i].id);
		assert_true(disk->hardware[i].mem_bw_gbs == emb->hardware[i].mem_bw_gbs);
		assert_true(disk->hardware[i].tflops[CAT_DTYPE_BF16] ==
			    emb->hardware[i].tflops[CAT_DTYPE_BF16]);
	}
	for (size_t i = 0; i < emb->model_count; i++)
		assert_int_equal(disk->models[i].total_params, emb->models[i].total_params);
	catalog_free(disk);
	catalog_free(emb);
}

static void test_lookup_by_alias(void **state)
{
	(void)state;
	struct catalog *cat = load_embedded();
	const struct cat_hardware *h100 = catalog_hardware(cat, "h100-sxm");
	assert_ptr_equal(catalog_hardware(cat, "H100"), h100);
	assert_ptr_equal(catalog_hardware(cat, "h100 sxm"), h100);
	assert_ptr_equal(catalog_hardware(cat, "H100_SXM"), h100);
	assert_ptr_equal(catalog_hardware(cat, "nvidia h100 sxm5 80gb"), h100);
	assert_ptr_equal(catalog_hardware(cat, "A100"), catalog_hardware(cat, "a100-sxm-80gb"));
	assert_ptr_equal(catalog_hardware(cat, "4090"), catalog_hardware(cat, "rtx-4090"));
	assert_ptr_equal(catalog_hardware(cat, "H200"), catalog_hardware(cat, "h200"));
	assert_null(catalog_hardware(cat, "H1000"));
	assert_null(catalog_hardware(cat, "H10"));
	assert_null(catalog_hardware(cat, ""));
	assert_null(catalog_hardware(cat, NULL));

	assert_ptr_equal(catalog_model(cat, "meta-llama/Llama-3.1-8B-Instruct"),
			 catalog_model(cat, "llama-3.1-8b"));
	assert_ptr_equal(catalog_model(cat, "Qwen/Qwen2.5-7B"), catalog_model(cat, "qwen2.5-7b"));
	assert_ptr_equal(catalog_weight_format(cat, "AWQ"), catalog_weight_format(cat, "int4-awq"));
	assert_ptr_equal(catalog_weight_format(cat, "bfloat16"),
			 catalog_weight_format(cat, "bf16"));
	assert_ptr_equal(catalog_kv_dtype(cat, "fp8_e4m3"), catalog_kv_dtype(cat, "fp8"));
	assert_ptr_equal(catalog_family(cat, "NVIDIA-Hopper"),
			 catalog_hardware(cat, "h100-sxm")->family);

	assert_true(catalog_name_eq("RTX 4090", "rtx-4090"));
	assert_true(catalog_name_eq("a_b-c d", "A-B C_D"));
	assert_false(catalog_name_eq("rtx4090", "rtx-4090"));
	assert_false(catalog_name_eq("h100", "h100-sxm"));

	struct diag d;
	diag_init(&d);
	struct cat_selection sel;
	assert_int_equal(catalog_select(cat, &sel, "H100", "llama-3.1-8b", NULL, NULL, &d), 0);
	assert_string_equal(sel.weight_format->id, "bf16");
	assert_string_equal(sel.kv_dtype->id, "bf16");
	assert_int_equal(catalog_select(cat, &sel, "H100", "llama-9", NULL, NULL, &d),
			 DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown model 'llama-9' (known: llama-3.1-8b,"));
	catalog_free(cat);
}

/* Parse the embedded files with the first `from` in `file` replaced by `to`
 * (or the whole file replaced when from is NULL). */
static int parse_edited(const char *file, const char *from, const char *to, struct diag *d)
{
	size_t n;
	const struct catalog_file *orig = catalog_embedded(&n);
	struct catalog_file files[8];
	char *edited = NULL;
	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++) {
		files[i] = orig[i];
		if (strcmp(orig[i].name, file) != 0)
			continue;
		if (!from) {
			files[i].text = to;
			files[i].len = strlen(to);
			continue;
		}
		const char *at = strstr(orig[i].text, from);
		if (!at)
			fail_msg("'%s' not found in %s", from, file);
		size_t pre = (size_t)(at - orig[i].text);
		size_t len = orig[i].len - strlen(from) + strlen(to);
		edited = malloc(len + 1);
		assert_non_null(edited);
		memcpy(edited, orig[i].text, pre);
		strcpy(edited + pre, to);
		strcpy(edited + pre + strlen(to), at + strlen(from));
		files[i].text = edited;
		files[i].len = len;
	}
	struct catalog *cat = NULL;
	diag_init(d);
	int rc = catalog_parse(&cat, files, n, d);
	if (rc == 0)
		assert_non_null(cat);
	else
		assert_null(cat);
	catalog_free(cat);
	free(edited);
	return rc;
}

struct bad_case {
	const char *file;
	const char *from;
	const char *to;
	const char *msg;      /* the whole message, or its start when prefix */
	int prefix;
};

static const struct bad_case bad_cases[] = {
	{ "hardware.json", "\"value\": 2039,", "\"value\": \"2039\",",
	  "hardware.json: hardware[3].mem_bw_gbs.value: expected a number", 0 },
	{ "hardware.json", "\"mem_bw_gbs\"", "\"mem_bw_gb\"",
	  "hardware.json: hardware[0]: unknown key 'mem_bw_gb'", 0 },
	{ "hardware.json", "\"unit\": \"GB/s\"", "\"unit\": \"TB/s\"",
	  "hardware.json: hardware[0].mem_bw_gbs.unit: expected \"GB/s\", got \"TB/s\"", 0 },
	{ "hardware.json", "\"family\": \"nvidia-ada\"", "\"family\": \"nvidia-adda\"",
	  "hardware.json: hardware[4].family: unknown family 'nvidia-adda' (not in "
	  "families.json)", 0 },
	{ "hardware.json", "\"A100 80GB\"", "\"H100 SXM5\"",
	  "hardware.json: hardware[3].aliases[1]: 'H100 SXM5' already names 'h100-sxm' "
	  "(hardware[0])", 0 },
	{ "hardware.json", "\"unified_memory\": false", "\"unified_memory\": 0",
	  "hardware.json: hardware[0].unified_memory: expected true or false", 0 },
	{ "hardware.json", "\"unified_memory\": false", "\"unified_memory\": true",
	  "hardware.json: hardware[0].usable_memory_fraction: missing (expected a sourced "
	  "figure {\"value\", \"unit\", \"source\", \"date\"})", 0 },
	{ "hardware.json", "\"id\": \"h100-sxm\"", "\"id\": \"H100 SXM\"",
	  "hardware.json: hardware[0].id: 'H100 SXM' is not an id (expected 1-63 lower-case "
	  "letters, digits, '-' or '.')", 0 },
	{ "hardware.json", "\"bf16\": {", "\"bf17\": {",
	  "hardware.json: hardware[0].tflops: unknown key 'bf17'", 0 },
	{ "hardware.json", "\"GB/s bidirectional\"", "\"GB/s\"",
	  "hardware.json: hardware[0].interconnect.peer.bw_gbs.unit: expected \"GB/s per "
	  "direction\" or \"GB/s bidirectional\", got \"GB/s\"", 0 },
	{ "families.json", "\"date\": \"2026-08\"", "\"date\": \"2026-13\"",
	  "families.json: families[0].eff_compute.date: '2026-13' is not a date (expected "
	  "YYYY-MM or YYYY-MM-DD)", 0 },
	{ "families.json", "\"value\": 0.75", "\"value\": 1.5",
	  "families.json: families[0].eff_bw.value: 1.5 is out of range (expected a "
	  "fraction in (0, 1])", 0 },
	{ "families.json", "\"source\": \"Vidur", "\"sauce\": \"Vidur",
	  "families.json: families[0].eff_compute: unknown key 'sauce'", 0 },
	{ "families.json", "\"schema_version\": 1", "\"schema_version\": 2",
	  "families.json: schema_version: unsupported version 2 (this build reads version 1)",
	  0 },
	{ "families.json", NULL, "[]",
	  "families.json: expected a JSON object at the top level", 0 },
	{ "families.json", "\"families\": [", "\"families\": [], \"x\": [",
	  "families.json: unknown key 'x'", 0 },
	{ "families.json", "\"eff_bw\"", "\"eff_compute\"",
	  "families.json: families[0]: duplicate key 'eff_compute'", 0 },
	{ "models.json", "\"kv_heads\": 8", "\"kv_heads\": 7",
	  "models.json: models[0].kv_heads: 7 does not divide heads (32)", 0 },
	{ "models.json", "\"hidden_size\": 4096", "\"hidden_size\": 5120",
	  "models.json: models[0].params: published count 8.03e+09 differs from", 1 },
	{ "models.json", "\"layers\": 32", "\"layers\": 32.5",
	  "models.json: models[0].layers: expected an integer", 0 },
	{ "models.json", "\"attention\": \"gqa\"", "\"attention\": \"mqa\"",
	  "models.json: models[0].attention: expected \"gqa\" or \"mla\", got \"mqa\"", 0 },
	{ "models.json", "\"architecture\": \"dense\"", "\"architecture\": \"moe\"",
	  "models.json: models[0].moe: missing (expected an object)", 0 },
	{ "models.json", "\"url\": \"https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/"
	  "config.json\",", "",
	  "models.json: models[0].source.url: missing (expected a string)", 0 },
	{ "formats.json", "\"compute_dtype\": \"fp8\"", "\"compute_dtype\": \"fp9\"",
	  "formats.json: weight_formats[2].compute_dtype: unknown dtype \"fp9\" (expected "
	  "bf16, fp16, fp8, int8 or fp4)", 0 },
	{ "formats.json", "\"kv_dtypes\": [", "\"kv_dtypes\": [], \"y\": [",
	  "formats.json: unknown key 'y'", 0 },
	{ "formats.json", "\"weight_formats\": [", "\"weight_formats\": {",
	  "formats.json:", 1 },
	{ "formats.json", "\"weight_formats\": [\n", "\"weight_formats\": [\n@",
	  "formats.json:5:", 1 },
	{ "models.json", "\"models\": [", "\"models\": 3, \"z\": [",
	  "models.json: unknown key 'z'", 0 },
	{ "models.json", "\"models\": [", "\"modelz\": [",
	  "models.json: unknown key 'modelz'", 0 },
};

static void test_bad_catalogues(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct diag d;
		int rc = parse_edited(c->file, c->from, c->to, &d);
		if (rc != DIAG_EINPUT)
			fail_msg("case %zu: rc %d, msg '%s'", i, rc, d.msg);
		int ok = c->prefix ? strncmp(d.msg, c->msg, strlen(c->msg)) == 0
				   : strcmp(d.msg, c->msg) == 0;
		if (!ok)
			fail_msg("case %zu:\n  got      '%s'\n  expected '%s'%s", i, d.msg, c->msg,
				 c->prefix ? " (prefix)" : "");
	}
}

static void test_missing_file(void **state)
{
	(void)state;
	size_t n;
	const struct catalog_file *files = catalog_embedded(&n);
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_parse(&cat, files, n - 1, &d), DIAG_EINPUT);
	assert_null(cat);
	assert_string_equal(d.msg, "the catalogue has no formats.json");
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *fp = fopen(path, "wb");
	if (!fp)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	assert_int_equal(fwrite(text, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

static void test_bad_directory(void **state)
{
	(void)state;
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/tests/models/bad_catalog", AC_BIN_DIR);
	mkdir(dir, 0777);
	size_t n;
	const struct catalog_file *files = catalog_embedded(&n);
	for (size_t i = 0; i < n; i++) {
		char path[1200];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		if (strcmp(files[i].name, "hardware.json") == 0) {
			const char *at = strstr(files[i].text, "\"value\": 2039,");
			assert_non_null(at);
			size_t pre = (size_t)(at - files[i].text);
			char *t = malloc(files[i].len + 8);
			assert_non_null(t);
			memcpy(t, files[i].text, pre);
			strcpy(t + pre, "\"value\": \"fast\",");
			strcat(t, at + strlen("\"value\": 2039,"));
			write_file(path, t, strlen(t));
			free(t);
		} else {
			write_file(path, files[i].text, files[i].len);
		}
	}
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, dir, &d), DIAG_EINPUT);
	assert_null(cat);
	char want[1400];
	snprintf(want, sizeof(want), "%s/hardware.json: hardware[3].mem_bw_gbs.value: "
		 "expected a number", dir);
	assert_string_equal(d.msg, want);

	diag_init(&d);
	snprintf(dir, sizeof(dir), "%s/tests/models/no_such_dir", AC_BIN_DIR);
	assert_int_equal(catalog_load(&cat, dir, &d), DIAG_EIO);
	assert_null(cat);
	assert_non_null(strstr(d.msg, "families.json: cannot open: "));
}

/* A MoE entry and an MLA entry load (this version does not simulate them). */
static const char moe_and_mla[] =
	"\"models\": [\n"
	"{\"id\": \"test-moe\", \"name\": \"MoE shaped like Qwen3-30B-A3B\",\n"
	" \"source\": {\"url\": \"https://example.invalid/config.json\", \"date\": \"2026-08\"},\n"
	" \"architecture\": \"moe\", \"attention\": \"gqa\", \"layers\": 48,\n"
	" \"hidden_size\": 2048, \"heads\": 32, \"kv_heads\": 4, \"head_dim\": 128,\n"
	" \"vocab_size\": 151936, \"max_context\": 40960, \"tied_embeddings\": false,\n"
	" \"params\": {\"value\": 30.5e9, \"unit\": \"parameters\", \"source\": \"test\",\n"
	"            \"date\": \"2026-08\"},\n"
	" \"moe\": {\"experts\": 128, \"experts_per_token\": 8,\n"
	"         \"expert_intermediate_size\": 768}},\n"
	"{\"id\": \"test-mla\", \"name\": \"MLA\",\n"
	" \"source\": {\"url\": \"https://example.invalid/config.json\", \"date\": \"2026-08\"},\n"
	" \"architecture\": \"dense\", \"attention\": \"mla\", \"layers\": 4,\n"
	" \"hidden_size\": 1024, \"heads\": 8, \"kv_heads\": 8, \"head_dim\": 128,\n"
	" \"intermediate_size\": 4096, \"vocab_size\": 1000, \"max_context\": 4096,\n"
	" \"tied_embeddings\": true,\n"
	" \"params\": {\"value\": 1e8, \"unit\": \"parameters\", \"source\": \"test\",\n"
	"            \"date\": \"2026-08\"},\n"
	" \"mla\": {\"kv_lora_rank\": 512, \"qk_rope_head_dim\": 64}},\n";

static void test_moe_and_mla_entries(void **state)
{
	(void)state;
	size_t n;
	const struct catalog_file *orig = catalog_embedded(&n);
	struct catalog_file files[8];
	char *edited = NULL;
	for (size_t i = 0; i < n; i++) {
		files[i] = orig[i];
		if (strcmp(orig[i].name, "models.json") != 0)
			continue;
		const char *at = strstr(orig[i].text, "\"models\": [\n");
		assert_non_null(at);
		size_t pre = (size_t)(at - orig[i].text);
		edited = malloc(orig[i].len + sizeof(moe_and_mla));
		assert_non_null(edited);
		memcpy(edited, orig[i].text, pre);
		strcpy(edited + pre, moe_and_mla);
		strcat(edited, at + strlen("\"models\": [\n"));
		files[i].text = edited;
		files[i].len = strlen(edited);
	}
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	if (catalog_parse(&cat, files, n, &d))
		fail_msg("%s", d.msg);
	const struct cat_model *moe = catalog_model(cat, "test-moe");
	assert_non_null(moe);
	assert_int_equal(moe->experts, 128);
	assert_int_equal(moe->experts_per_token, 8);
	assert_true(moe->total_params > 30.0e9 && moe->total_params < 31.0e9);
	const struct cat_model *mla = catalog_model(cat, "test-mla");
	assert_non_null(mla);
	assert_int_equal(mla->attention, CAT_ATTN_MLA);
	assert_int_equal(mla->total_params, 100000000);
	assert_int_equal(mem_kv_bytes_per_token(mla, catalog_kv_dtype(cat, "bf16")),
			 4 * (512 + 64) * 2);

	struct perf_model pm;
	diag_init(&d);
	assert_int_equal(perf_model_init(&pm, cat, "h100-sxm", "test-moe", NULL, NULL, 1, &d),
			 DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "mixture of experts"));
	diag_init(&d);
	assert_int_equal(perf_model_init(&pm, cat, "h100-sxm", "test-mla", NULL, NULL, 1, &d),
			 DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "latent attention"));
	catalog_free(cat);
	free(edited);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embedded_loads),
		cmocka_unit_test(test_directory_matches_embedded),
		cmocka_unit_test(test_lookup_by_alias),
		cmocka_unit_test(test_bad_catalogues),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_bad_directory),
		cmocka_unit_test(test_moe_and_mla_entries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
