/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/catalog: the embedded and on-disk catalogues load and
 * agree, lookups by id and alias, and every kind of bad catalogue gives a
 * message naming the file and the key path (table-driven: one textual edit
 * of a shipped file -> the exact message expected).  Also: every external
 * figure of the shipped files carries a source and a date (a walk over the
 * JSON), parameter counts derived from the architectures match the
 * published totals and active counts, systems take their accelerator's
 * figures, prices sort cheapest first, every row of the calibration set
 * names catalogue ids and none is of a kind held out for an independent
 * check, and the `agentcap catalog --json` rendering is
 * deterministic.
 */
#define _POSIX_C_SOURCE 200809L
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

#include <cJSON.h>
#include <math.h>

#include "models/catalog.h"

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
	assert_true(cat->hardware_count >= 45);
	assert_true(cat->family_count >= 10);
	assert_true(cat->model_count >= 20);
	assert_true(cat->weight_format_count >= 14);
	assert_true(cat->kv_dtype_count >= 5);

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
	  "families.json: matmul_units[0].eff_compute: unknown key 'sauce'", 0 },
	{ "families.json", "\"matmul_unit\": \"matrix\"", "\"matmul_unit\": \"systolic\"",
	  "families.json: families[0].matmul_unit: unknown matmul unit 'systolic' (expected an id "
	  "of matmul_units)", 0 },
	{ "families.json", "\"memory_kind\": \"hbm\"", "\"memory_kind\": \"sram\"",
	  "families.json: families[0].memory_kind: 'sram' (expected \"hbm\" or \"dram\")", 0 },
	{ "hardware.json", "\"unit\": \"MHz\"", "\"unit\": \"GHz\"",
	  "hardware.json: hardware[0].gpu_clock_mhz.unit: expected \"MHz\", got \"GHz\"", 0 },
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
	/* systems, prices, ranges, accumulate modes */
	{ "hardware.json", "\"accelerator\": \"rtx-5060-ti-16gb\"", "\"accelerator\": \"rtx-5060\"",
	  "hardware.json: hardware[36].system.accelerator: unknown hardware 'rtx-5060' (not in "
	  "hardware.json)", 0 },
	{ "hardware.json", "\"accelerator\": \"rtx-5060-ti-16gb\"", "\"accelerator\": \"ws-rtx-5090\"",
	  "hardware.json: hardware[36].system.accelerator: 'ws-rtx-5090' is itself a system "
	  "(expected an accelerator)", 0 },
	{ "hardware.json", "\"kind\": \"workstation\"", "\"kind\": \"tower\"",
	  "hardware.json: hardware[36].system.kind: expected \"workstation\", \"desktop\", "
	  "\"laptop\", \"server\" or \"cluster\", got \"tower\"", 0 },
	{ "hardware.json", "\"system\": {", "\"memory_gb\": 1, \"system\": {",
	  "hardware.json: hardware[36]: unknown key 'memory_gb'", 0 },
	{ "hardware.json", "\"unit\": \"EUR\"", "\"unit\": \"GBP\"",
	  "hardware.json: hardware[29].price.unit: expected \"USD\" or \"EUR\", got \"GBP\"", 0 },
	{ "hardware.json", "\"max\": 45,", "\"max\": 35,",
	  "hardware.json: hardware[16].idle_w.max: 35 is out of range (expected at least value, 40)",
	  0 },
	{ "hardware.json", "\"value\": 838,", "\"value\": 400,",
	  "hardware.json: hardware[11].tflops.fp8_fp16acc: 400 is below the FP32-accumulate rate "
	  "419 (expected at least that)", 0 },
	{ "hardware.json", "\"unit\": \"USD/EUR\"", "\"unit\": \"EUR/USD\"",
	  "hardware.json: usd_per_eur.unit: expected \"USD/EUR\", got \"EUR/USD\"", 0 },
	/* a board power limit needs the rated power and must be one the
	 * clock model can meet (models/power.h) */
	{ "hardware.json", "\"tdp_w\": {", "\"power_limit_w\": {\"value\": 200, \"unit\": \"W\", "
	  "\"source\": \"s\", \"date\": \"2026-08\"}, \"tdp_w\": {",
	  "hardware.json: hardware[0].power_limit_w: 200 W (expected a limit above 30% of tdp_w "
	  "and at most tdp_w, which the entry must give)", 0 },
	{ "hardware.json", "\"tdp_w\": {", "\"power_limit_w\": {\"value\": 800, \"unit\": \"W\", "
	  "\"source\": \"s\", \"date\": \"2026-08\"}, \"tdp_w\": {",
	  "hardware.json: hardware[0].power_limit_w: 800 W (expected a limit above 30% of tdp_w "
	  "and at most tdp_w, which the entry must give)", 0 },
	/* a core clock in GHz written as MHz */
	{ "hardware.json", "\"value\": 1980, \"unit\": \"MHz\"", "\"value\": 1.98, \"unit\": \"MHz\"",
	  "hardware.json: hardware[0].gpu_clock_mhz: 1.98 MHz (expected a GPU core clock of 100 to "
	  "5000 MHz)", 0 },
	/* MoE, MLA, local and linear attention, estimated fields */
	{ "models.json", "\"value\": 12900000000.0,", "\"value\": 20000000000.0,",
	  "models.json: models[15].active_params: published active count 2e+10 differs from "
	  "1.288e+10 counted from the architecture by 35.6% (more than 4%)", 0 },
	{ "models.json", "\"expert_intermediate_size\": 14336", "\"expert_intermediate_size\": 10000",
	  "models.json: models[15].params: published count 4.67e+10 differs from", 1 },
	{ "models.json", "\"estimated\": [\n        \"layers\"", "\"estimated\": [\n        \"lairs\"",
	  "models.json: models[11].estimated[0]: 'lairs' is not a field of a model entry", 0 },
	{ "models.json", "\"kind\": \"sliding\"", "\"kind\": \"window\"",
	  "models.json: models[16].local_attention.kind: expected \"sliding\" or \"chunked\", got "
	  "\"window\"", 0 },
	{ "models.json", "\"v_head_dim\": 128,", "",
	  "models.json: models[20].mla: give both qk_nope_head_dim and v_head_dim, or neither", 0 },
	{ "models.json", "\"layers\": 30,", "\"layers\": 40,",
	  "models.json: models[14].linear_attention.layers: 40 is out of range (expected 1 to 39)",
	  0 },
	{ "models.json", "\"v_head_dim\": 128,", "\"v_head_dim\": 1024,",
	  "models.json: models[20].params: published count 6.71e+11 differs from", 1 },
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

/* A MoE entry and an MLA entry without the optional MLA dimensions load:
 * the MoE count is derived, the MLA linear count is what the total leaves. */
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
	assert_int_equal(moe->moe_layers, 48);
	assert_int_equal(moe->kv_layers, 48);
	assert_true(moe->total_params > 30.0e9 && moe->total_params < 31.0e9);
	/* 48 layers x 120 idle experts x 3 x 2048 x 768 */
	assert_int_equal(moe->total_params - moe->active_params, 48LL * 120 * 3 * 2048 * 768);
	const struct cat_model *mla = catalog_model(cat, "test-mla");
	assert_non_null(mla);
	assert_int_equal(mla->attention, CAT_ATTN_MLA);
	assert_int_equal(mla->total_params, 100000000);
	assert_int_equal(mla->kv_lora_rank, 512);
	assert_int_equal(mla->qk_nope_head_dim, 0);
	catalog_free(cat);
	free(edited);
}

/* ---- the shipped catalogue ---------------------------------------------- */

/* Parameter counts derived at load against the publishers' figures, and a
 * few exact derived values (so a change of the counting rule shows). */
static void test_params_match_published(void **state)
{
	(void)state;
	struct catalog *cat = load_embedded();
	for (size_t i = 0; i < cat->model_count; i++) {
		const struct cat_model *m = &cat->models[i];
		double rel = fabs((double)m->total_params - m->params_published) /
			     m->params_published;
		if (rel > 0.02)
			fail_msg("%s: derived %lld vs published %.4g", m->id,
				 (long long)m->total_params, m->params_published);
		assert_true(m->active_params <= m->total_params);
		if (m->experts == 0) {
			assert_int_equal(m->active_params, m->total_params);
			continue;
		}
		assert_true(m->active_params_published > 0); /* every MoE entry has one */
		double with = (double)m->active_params;
		double without = with - (double)m->embedding_params;
		double r1 = fabs(with - m->active_params_published) / m->active_params_published;
		double r2 = fabs(without - m->active_params_published) / m->active_params_published;
		if (r1 > 0.04 && r2 > 0.04)
			fail_msg("%s: active %lld (%lld without embeddings) vs published %.4g",
				 m->id, (long long)m->active_params, (long long)without,
				 m->active_params_published);
	}
	/* Mixtral 8x7B: 46.7B total, 12.9B active (Mistral AI) */
	const struct cat_model *mx = catalog_model(cat, "mixtral-8x7b");
	assert_int_equal(mx->total_params, 46702792704LL);
	assert_int_equal(mx->active_params, 12879925248LL); /* router included */
	/* DeepSeek-V3: 671B; 36.6B active including the 0.9B output head and not
	 * the input embedding (README_WEIGHTS.md); MLA weights counted */
	const struct cat_model *ds = catalog_model(cat, "deepseek-v3");
	assert_int_equal(ds->attention, CAT_ATTN_MLA);
	assert_int_equal(ds->moe_layers, 58);
	assert_true(fabs((double)ds->total_params - 671.0e9) < 0.1e9);
	assert_true(fabs((double)(ds->active_params - ds->embedding_params) - 36.6e9) < 0.05e9);
	/* gpt-oss-20b: 20.91B, 3.61B active without the input embedding (OpenAI) */
	const struct cat_model *g = catalog_model(cat, "gpt-oss-20b");
	assert_true(fabs((double)g->total_params - 20.91e9) < 0.01e9);
	assert_true(fabs((double)(g->active_params - g->embedding_params) - 3.61e9) < 0.01e9);
	assert_int_equal(g->sliding_window, 128);
	assert_int_equal(g->sliding_window_layers, 12);
	/* Llama 4 Maverick: every second layer MoE */
	assert_int_equal(catalog_model(cat, "llama-4-maverick-17b-128e")->moe_layers, 24);
	assert_int_equal(catalog_model(cat, "llama-4-scout-17b-16e")->moe_layers, 48);
	/* Qwen3.6-35B-A3B: 10 of 40 layers keep a KV cache */
	const struct cat_model *q = catalog_model(cat, "qwen3.6-35b-a3b");
	assert_int_equal(q->kv_layers, 10);
	assert_int_equal(q->linear_attention_layers, 30);
	assert_true(q->attention_output_gate);
	/* 2026 models with only counts published say which fields are estimated */
	const struct cat_model *q38 = catalog_model(cat, "qwen3.8-27b");
	assert_true(q38->estimated_count > 0);
	assert_true(cat_model_is_estimated(q38, "hidden_size"));
	assert_false(cat_model_is_estimated(q38, "params"));
	assert_false(cat_model_is_estimated(catalog_model(cat, "llama-3.1-8b"), "layers"));
	catalog_free(cat);
}

/* Keys whose numbers are not external figures: the file version, counts of
 * devices and cores of an entry. */
static bool plain_number_key(const char *key)
{
	return key && (strcmp(key, "schema_version") == 0 || strcmp(key, "count") == 0 ||
		       strcmp(key, "gpu_cores") == 0);
}

static bool has_nonempty(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(it) && it->valuestring && it->valuestring[0];
}

/* Count numbers under `node` that are neither the value/max of a sourced
 * figure (an object with a non-empty "source" and "date") nor allowed by
 * plain_number_key; `covered` is true inside a model entry whose source
 * object (url + date) covers its architecture integers. */
static int unsourced(const cJSON *node, const cJSON *parent, bool covered, const char *file,
		     char *where, size_t where_len)
{
	int bad = 0;
	if (cJSON_IsNumber(node)) {
		bool figure = parent && cJSON_IsObject(parent) && has_nonempty(parent, "source") &&
			      has_nonempty(parent, "date") &&
			      (strcmp(node->string, "value") == 0 || strcmp(node->string, "max") == 0);
		if (!figure && !covered && !plain_number_key(node->string)) {
			snprintf(where, where_len, "%s: '%s' = %g", file,
				 node->string ? node->string : "?", node->valuedouble);
			bad++;
		}
		return bad;
	}
	bool cover = covered;
	if (cJSON_IsObject(node) && strcmp(file, "models.json") == 0) {
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(node, "source");
		if (cJSON_IsObject(src) && has_nonempty(src, "url") && has_nonempty(src, "date"))
			cover = true;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, node) {
		/* a figure's value is covered only by its own source */
		bool inner = cover && !(cJSON_IsObject(it) &&
					cJSON_GetObjectItemCaseSensitive(it, "value"));
		bad += unsourced(it, node, inner, file, where, where_len);
	}
	return bad;
}

/* Every figure object has value, unit, source, date; every number is in one
 * (or is an architecture integer under a model's source). */
static void test_every_figure_sourced(void **state)
{
	(void)state;
	size_t n;
	const struct catalog_file *files = catalog_embedded(&n);
	for (size_t i = 0; i < n; i++) {
		cJSON *root = cJSON_ParseWithLength(files[i].text, files[i].len);
		assert_non_null(root);
		char where[512] = "";
		int bad = unsourced(root, NULL, false, files[i].name, where, sizeof(where));
		if (bad)
			fail_msg("%d number(s) without source and date, e.g. %s", bad, where);
		cJSON_Delete(root);
	}
	/* the walk itself catches one: strip the source of a price */
	const struct catalog_file *hw = NULL;
	for (size_t i = 0; i < n; i++)
		if (strcmp(files[i].name, "hardware.json") == 0)
			hw = &files[i];
	assert_non_null(hw);
	cJSON *root = cJSON_ParseWithLength(hw->text, hw->len);
	cJSON *h0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "hardware"), 0);
	cJSON *mem = cJSON_GetObjectItemCaseSensitive(h0, "memory_gb");
	cJSON_DeleteItemFromObjectCaseSensitive(mem, "source");
	char where[512];
	assert_int_equal(unsourced(root, NULL, false, "hardware.json", where, sizeof(where)), 1);
	assert_string_equal(where, "hardware.json: 'value' = 80");
	cJSON_Delete(root);
}

static void test_systems_and_new_hardware(void **state)
{
	(void)state;
	struct catalog *cat = load_embedded();
	const struct cat_hardware *r = catalog_hardware(cat, "rtx-5090");
	assert_non_null(r);
	assert_ptr_equal(r->device, r);
	assert_int_equal(r->device_count, 1);
	assert_null(r->system_kind);
	assert_true(r->tflops[CAT_DTYPE_BF16] == 209.5);
	assert_true(r->tflops_fp16acc[CAT_DTYPE_FP16] == 419);
	assert_true(r->tflops_fp16acc[CAT_DTYPE_FP8] == 838);
	assert_true(r->tflops_fp16acc[CAT_DTYPE_BF16] == 209.5); /* no separate figure */
	assert_true(r->tflops[CAT_DTYPE_FP4] == 1676);
	/* datacenter parts: one rate for both accumulate modes */
	const struct cat_hardware *h100 = catalog_hardware(cat, "h100-sxm");
	assert_true(h100->tflops_fp16acc[CAT_DTYPE_FP8] == h100->tflops[CAT_DTYPE_FP8]);
	/* no FP16 figure at all: FP16 runs at the BF16 rate */
	assert_true(h100->tflops[CAT_DTYPE_FP16] == 0);
	assert_true(h100->tflops_fp16acc[CAT_DTYPE_FP16] == 989.4);

	const struct cat_hardware *w = catalog_hardware(cat, "Workstation 2x RTX 5090");
	assert_non_null(w);
	assert_string_equal(w->id, "ws-2x-rtx-5090");
	assert_ptr_equal(w->device, r);
	assert_int_equal(w->device_count, 2);
	assert_string_equal(w->system_kind, "workstation");
	assert_ptr_equal(w->family, r->family);
	assert_true(w->memory_gb == 32);
	assert_true(cat_hardware_total_memory_gb(w) == 64);
	assert_true(w->mem_bw_gbs == 1792);
	assert_true(w->host_memory_gb == 128 && w->host_memory_max_gb == 256);
	assert_string_equal(w->peer_link.kind, "pcie-gen5-x16");
	assert_int_equal(w->price.currency, CAT_CUR_EUR);
	assert_true(w->price.amount == 8000 && w->price.amount_max == 12000);
	assert_string_equal(w->price.date, "2026-08");
	/* a single-device system has no link between devices */
	assert_null(catalog_hardware(cat, "ws-rtx-5090")->peer_link.kind);

	const struct cat_hardware *s = catalog_hardware(cat, "DGX Spark");
	assert_non_null(s);
	assert_true(s->unified_memory);
	assert_true(s->usable_memory_fraction > 0.5 && s->usable_memory_fraction < 1);
	assert_true(s->idle_w == 40 && s->inference_w == 60 && s->inference_w_max == 90);
	assert_int_equal(s->price.currency, CAT_CUR_USD);
	const struct cat_hardware *s2 = catalog_hardware(cat, "dgx-spark-x2");
	assert_int_equal(s2->device_count, 2);
	assert_true(s2->unified_memory);
	assert_true(s2->peer_link.bw_gbs == 25);
	assert_string_equal(s2->peer_link.kind, "connectx-7");

	/* unified-memory Macs: no tensor rate, a usable fraction of RAM */
	const struct cat_hardware *m = catalog_hardware(cat, "Apple M1 Max (32-core GPU)");
	assert_non_null(m);
	assert_true(m->unified_memory);
	assert_true(m->usable_memory_fraction == 0.65);
	assert_true(m->tflops[CAT_DTYPE_BF16] == 0);
	assert_true(m->fp32_vector_tflops == 10.4);
	assert_int_equal(m->gpu_cores, 32);

	/* a rent inherited from the device, and a system's own */
	assert_true(catalog_hardware(cat, "hgx-h200-8")->rent_hour.amount ==
		    catalog_hardware(cat, "h200")->rent_hour.amount);
	assert_true(catalog_hardware(cat, "hgx-h100-8")->rent_hour.amount == 1.85);
	assert_true(catalog_hardware(cat, "h100-sxm")->rent_hour.amount == 2.49);
	/* a server rented by the month has no hourly rent (EUR 889 / 730 h is
	 * no price anyone bills by the hour) */
	const struct cat_hardware *gex = catalog_hardware(cat, "hetzner-gex131");
	assert_int_equal(gex->rent_hour.currency, CAT_CUR_NONE);
	assert_ptr_equal(gex->device, catalog_hardware(cat, "rtx-pro-6000-maxq"));

	/* every field-notes system and every hardware.csv accelerator */
	static const char *const required[] = {
		"mac-mini-m6-16gb", "ws-rtx-5060-ti", "mac-mini-m5-pro-24gb", "ryzen-ai-max-395",
		"dgx-spark", "macbook-pro-m5-pro-48gb", "ws-rtx-5090", "macbook-pro-m5-max-128gb",
		"dgx-spark-x2", "ws-2x-rtx-5090", "mac-studio-m5-ultra-256gb", "ws-rtx-pro-6000",
		"ws-2x-rtx-pro-6000", "h100-sxm", "h100-pcie", "h200", "b200", "gb200",
		"a100-sxm-80gb", "l40s", "rtx-3090", "rtx-4090", "rtx-5090", "rtx-pro-6000",
		"rtx-pro-6000-maxq", "rtx-pro-6000-server", "mi300x", "apple-m4-max-40c",
		"apple-m3-ultra-80c", "apple-m2-ultra-76c", "apple-m1-max-32c", NULL };
	for (const char *const *id = required; *id; id++)
		if (!catalog_hardware(cat, *id))
			fail_msg("no hardware '%s'", *id);
	static const char *const models[] = {
		"llama-2-7b", "llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b", "qwen2.5-coder-32b",
		"qwen3-30b-a3b", "qwen3-235b-a22b", "mixtral-8x7b", "gpt-oss-20b", "gpt-oss-120b",
		"llama-4-scout-17b-16e", "deepseek-v3", "qwen3.6-35b-a3b", "qwen3.8-27b",
		"glm-5.2", "llama-4-maverick-17b-128e", NULL };
	for (const char *const *id = models; *id; id++)
		if (!catalog_model(cat, *id))
			fail_msg("no model '%s'", *id);
	static const char *const formats[] = { "gguf-q4_0", "gguf-q4_k_m", "gguf-q8_0",
		"gguf-q3_k_m", "mxfp4", "nvfp4", "int4-awq", "int4-gptq", "fp8", NULL };
	for (const char *const *id = formats; *id; id++)
		if (!catalog_weight_format(cat, *id))
			fail_msg("no weight format '%s'", *id);
	assert_true(catalog_weight_format(cat, "Q4_0")->bits_per_weight == 4.5);
	assert_true(catalog_weight_format(cat, "Q8_0")->bits_per_weight == 8.5);
	assert_true(catalog_weight_format(cat, "mxfp4")->bits_per_weight == 4.25);
	assert_int_equal(catalog_weight_format(cat, "nvfp4")->compute_dtype, CAT_DTYPE_FP4);
	catalog_free(cat);
}

static void test_price_order(void **state)
{
	(void)state;
	struct catalog *cat = load_embedded();
	assert_true(cat->usd_per_eur > 1 && cat->usd_per_eur < 1.3);
	const struct cat_hardware **order = calloc(cat->hardware_count, sizeof(*order));
	assert_non_null(order);
	size_t priced = catalog_hardware_by_price(cat, order);
	assert_true(priced >= 20 && priced < cat->hardware_count);
	double prev = 0;
	for (size_t i = 0; i < cat->hardware_count; i++) {
		double usd;
		bool has = catalog_price_usd(cat, order[i], &usd);
		assert_int_equal(has, i < priced);
		if (has) {
			assert_true(usd >= prev);
			prev = usd;
		}
	}
	/* EUR is converted at the catalogue's rate, USD is taken as published */
	double usd;
	const struct cat_hardware *mini = catalog_hardware(cat, "mac-mini-m6-16gb");
	assert_true(catalog_price_usd(cat, mini, &usd));
	assert_true(fabs(usd - 1049 * cat->usd_per_eur) < 1e-9);
	assert_ptr_equal(order[0], mini); /* the cheapest purchase in the catalogue */
	assert_true(catalog_price_usd(cat, catalog_hardware(cat, "dgx-spark"), &usd));
	assert_true(usd == 4699);
	assert_false(catalog_price_usd(cat, catalog_hardware(cat, "l40s"), &usd));
	assert_true(usd == 0);
	/* without a rate an EUR price is not comparable: it is not converted */
	struct catalog copy = *cat;
	copy.usd_per_eur = 0;
	assert_false(catalog_price_usd(&copy, mini, &usd));
	free(order);
	catalog_free(cat);
}

/* ---- the calibration set ------------------------------------------------ */

/* Split one CSV record (RFC 4180 quotes, no embedded newlines) in place. */
static int csv_split(char *line, char **fields, int max)
{
	int n = 0;
	char *p = line;
	for (;;) {
		if (n == max)
			return -1;
		char *out = p;
		fields[n++] = p;
		if (*p == '"') {
			p++;
			for (;;) {
				if (!*p)
					return -1;
				if (*p == '"' && p[1] == '"') {
					*out++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*out++ = *p++;
				}
			}
		} else {
			while (*p && *p != ',')
				*out++ = *p++;
		}
		char sep = *p;
		*out = '\0';
		if (sep != ',')
			return sep ? -1 : n;
		p++;
	}
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Every row says how its figure reached the set and how far to trust it,
 * and the rows found wrong against their sources (models/calibration/
 * PROVENANCE.md) stay corrected: fl is the 15 fields of one data row. */
static void calibration_row_provenance(int line_no, char **fl)
{
	const char *hw = fl[0], *model = fl[2], *source = fl[11], *notes = fl[12];
	const char *prov = fl[13], *conf = fl[14];
	if (strcmp(prov, "original") != 0 && strcmp(prov, "copy") != 0 &&
	    strcmp(prov, "inferred") != 0)
		fail_msg("measurements.csv:%d: provenance '%s'", line_no, prov);
	if (strcmp(conf, "high") != 0 && strcmp(conf, "medium") != 0 && strcmp(conf, "low") != 0)
		fail_msg("measurements.csv:%d: confidence '%s'", line_no, conf);
	/* a figure read from a copy is never trusted above medium */
	if (strcmp(prov, "original") != 0 && strcmp(conf, "high") == 0)
		fail_msg("measurements.csv:%d: a %s row of high confidence", line_no, prov);
	if (strstr(notes, "assumed") && strcmp(conf, "high") == 0)
		fail_msg("measurements.csv:%d: an assumed condition at high confidence", line_no);
	/* dropped: Vulkan run of unconfirmed quantization; raw listing rows
	 * without a repository */
	if (starts_with(source, "github.com/geerlingguy/"))
		fail_msg("measurements.csv:%d: the Vulkan gpt-oss-20b row is back", line_no);
	if (starts_with(source, "GitHub markdown with raw llama-bench") &&
	    (strcmp(model, "llama-3.3-70b") == 0 || strcmp(model, "qwen3-30b-a3b") == 0))
		fail_msg("measurements.csv:%d: a raw-listing row without a repository", line_no);
	if (starts_with(source, "GitHub markdown with raw llama-bench"))
		assert_string_equal(conf, "low");
	/* the blog aside: conditions inferred, never fitted */
	if (starts_with(source, "github.com/vllm-project/vllm-project.github.io")) {
		assert_string_equal(prov, "inferred");
		assert_string_equal(conf, "low");
	}
	/* run conditions the model ignores are written down */
	if (strstr(notes, "engine_as_published=vLLM v0.6.0") && strstr(source, "benchmark_vllm_060"))
		assert_non_null(strstr(notes, "--num-scheduler-steps 10 --tensor 4 --max_model_len 4096"));
	if (strstr(source, "benchmark_vllm_060") && strcmp(hw, "a100-sxm-80gb") == 0)
		assert_non_null(strstr(notes, "--enable-torch-compile"));
	if (strcmp(model, "qwen3-235b-a22b") == 0 && strstr(source, "TensorRT-LLM"))
		assert_non_null(strstr(notes, "enable_attention_dp"));
	/* source text that belonged to another table, and ITL medians credited
	 * to the wrong engine */
	if (strstr(notes, "(Dec 2023)") || strstr(notes, "Metal)"))
		if (strstr(source, "CUDA 12.1.1"))
			fail_msg("measurements.csv:%d: May 2024 CUDA conditions on a %s row",
				 line_no, strstr(notes, "Metal)") ? "Metal" : "December 2023");
	if (strstr(notes, "engine_as_published=SGLang") &&
	    strstr(notes, "vLLM multistep makes ITL bursty"))
		fail_msg("measurements.csv:%d: SGLang's ITL median credited to vLLM", line_no);
	/* the form factor of unnamed data-centre parts is an assumption */
	if (strstr(source, "discussions/15013") &&
	    (strcmp(hw, "a100-sxm-80gb") == 0 || strcmp(hw, "h100-sxm") == 0))
		assert_non_null(strstr(notes, "hardware_note=form factor not stated"));
}

static void test_calibration_ids_resolve(void **state)
{
	(void)state;
	static const char *const columns[] = { "hardware", "n_gpus", "model", "quant",
		"engine", "concurrency", "input_tokens", "output_tokens", "metric", "value",
		"unit", "source", "notes", "provenance", "confidence" };
	static const char *const metrics[] = { "decode_tok_s", "prefill_tok_s",
		"output_throughput_tok_s", "total_throughput_tok_s", "ttft_ms", "tpot_ms",
		"itl_ms", "e2el_ms", NULL };
	static const char *const engines[] = { "llama.cpp", "vllm", "sglang", "tensorrt-llm",
		"mlx", NULL };
	struct catalog *cat = load_embedded();
	FILE *f = fopen(AC_SRC_DIR "/models/calibration/measurements.csv", "r");
	assert_non_null(f);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int line_no = 0, rows = 0;
	bool seen_decode = false, seen_mac = false;
	while ((len = getline(&line, &cap, f)) > 0) {
		line_no++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		char *fl[16];
		int n = csv_split(line, fl, 16);
		if (n != 15)
			fail_msg("measurements.csv:%d: %d fields (expected 15)", line_no, n);
		if (line_no == 1) {
			for (int i = 0; i < 15; i++)
				assert_string_equal(fl[i], columns[i]);
			continue;
		}
		calibration_row_provenance(line_no, fl);
		rows++;
		const struct cat_hardware *hw = catalog_hardware(cat, fl[0]);
		if (!hw || strcmp(hw->id, fl[0]) != 0)
			fail_msg("measurements.csv:%d: hardware '%s' is not a catalogue id", line_no,
				 fl[0]);
		const struct cat_model *m = catalog_model(cat, fl[2]);
		if (!m || strcmp(m->id, fl[2]) != 0)
			fail_msg("measurements.csv:%d: model '%s' is not a catalogue id", line_no,
				 fl[2]);
		const struct cat_weight_format *w = catalog_weight_format(cat, fl[3]);
		if (!w || strcmp(w->id, fl[3]) != 0)
			fail_msg("measurements.csv:%d: quant '%s' is not a catalogue id", line_no,
				 fl[3]);
		bool ok = false;
		for (const char *const *e = engines; *e; e++)
			ok = ok || strcmp(*e, fl[4]) == 0;
		if (!ok)
			fail_msg("measurements.csv:%d: engine '%s'", line_no, fl[4]);
		ok = false;
		for (const char *const *mt = metrics; *mt; mt++)
			ok = ok || strcmp(*mt, fl[8]) == 0;
		if (!ok)
			fail_msg("measurements.csv:%d: metric '%s'", line_no, fl[8]);
		char *end;
		long gpus = strtol(fl[1], &end, 10);
		assert_true(*end == '\0' && gpus >= 1 && gpus <= 72);
		double v = strtod(fl[9], &end);
		assert_true(*end == '\0' && v > 0);
		bool ms = strstr(fl[8], "_ms") != NULL;
		assert_string_equal(fl[10], ms ? "ms" : "tok/s");
		assert_true(fl[11][0] != '\0'); /* every row keeps its source */
		seen_decode = seen_decode || strcmp(fl[8], "decode_tok_s") == 0;
		seen_mac = seen_mac || hw->unified_memory;
	}
	assert_true(rows >= 80);
	assert_true(seen_decode && seen_mac);
	free(line);
	fclose(f);
	catalog_free(cat);
}

/* ---- the held-out kinds ------------------------------------------------- */

/* Hardware and sources kept out of the calibration set on purpose, so that
 * measurements of them stay an independent check of the model
 * (models/calibration/PROVENANCE.md).  Spelled in the compact form
 * held_out_name() compares: lower-case letters and digits only. */
static const char *const held_out_names[] = {
	"b200", "h200", "gb200", "gb10", "dgxspark", "rtx5090",
	"rtxpro6000server", "rtxpro6000blackwellserver",
	"m1pro", "m3pro", "m4max", "m2ultra", "m3ultra",
	"mlperf", "mlcommons", "mlenergy", NULL
};

/* Catalogue devices of those kinds (a system is judged by its device). */
static const char *const held_out_devices[] = {
	"b200", "h200", "gb200", "dgx-spark", "rtx-5090", "rtx-pro-6000-server",
	"apple-m4-max-40c", "apple-m2-ultra-76c", "apple-m3-ultra-80c", NULL
};

/* The held-out name that the text s mentions, or NULL.  The text is
 * compacted (separators dropped, letters lower-cased) so that "8xH200",
 * "RTX PRO 6000 Blackwell Server Edition" and "hgx-b200-8" are caught; a
 * match must not touch a digit on either side in the original text
 * ("GB100", or "8b 200 requests", are not matches). */
static const char *held_out_name(const char *s)
{
	char compact[4096];
	size_t from[4096]; /* compact[i] is s[from[i]] */
	size_t n = 0;
	for (size_t i = 0; s[i] && n + 1 < sizeof compact; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			compact[n] = (char)c;
		else if (c >= 'A' && c <= 'Z')
			compact[n] = (char)(c - 'A' + 'a');
		else
			continue;
		from[n++] = i;
	}
	compact[n] = '\0';
	for (const char *const *h = held_out_names; *h; h++) {
		size_t hl = strlen(*h);
		for (const char *at = strstr(compact, *h); at; at = strstr(at + 1, *h)) {
			size_t first = from[at - compact], last = from[at - compact + hl - 1];
			bool digit_before = first > 0 && s[first - 1] >= '0' && s[first - 1] <= '9';
			bool digit_after = s[last + 1] >= '0' && s[last + 1] <= '9';
			if (!digit_before && !digit_after)
				return *h;
		}
	}
	return NULL;
}

static void test_held_out_matcher(void **state)
{
	(void)state;
	static const char *const caught[] = { "NVIDIA H200 141GB", "8xH200 (SGLang)",
		"hgx-b200-8", "GB200 NVL72", "NVIDIA DGX Spark", "gb10", "GeForce RTX 5090",
		"RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-server",
		"Apple M1 Pro (16-core GPU)", "M3 Pro", "MacBook Pro M4 Max", "apple-m2-ultra-76c",
		"Mac Studio M3 Ultra", "MLPerf Inference v5.1 datacenter",
		"https://ml.energy/leaderboard", "MLCommons results", NULL };
	static const char *const passed[] = { "h100-sxm", "NVIDIA H100 SXM5 80GB (8-GPU node)",
		"rtx-pro-6000", "rtx-pro-6000-maxq", "apple-m4-pro-20c", "apple-m2-pro-16c",
		"apple-m3-max-40c", "Apple M2 Max", "llama-3-8b 200 requests", "GB100",
		"RTX 4090", "mac-studio-m5-ultra-256gb", NULL };
	for (const char *const *c = caught; *c; c++)
		if (!held_out_name(*c))
			fail_msg("'%s' not recognised as held out", *c);
	for (const char *const *p = passed; *p; p++)
		if (held_out_name(*p))
			fail_msg("'%s' taken for held out ('%s')", *p, held_out_name(*p));
}

/* Scan one calibration CSV: every row's hardware, source and notes columns
 * (located by header name), and the catalogue device behind the hardware id
 * where it is one.  Returns the number of data rows. */
static int scan_held_out(const struct catalog *cat, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("%s: cannot open", path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int line_no = 0, rows = 0;
	int col_hw = -1, col_src = -1, col_notes = -1, ncols = 0;
	while ((len = getline(&line, &cap, f)) > 0) {
		line_no++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		char *fl[32];
		int n = csv_split(line, fl, 32);
		if (n < 0)
			fail_msg("%s:%d: not a CSV record", path, line_no);
		if (line_no == 1) {
			ncols = n;
			for (int i = 0; i < n; i++) {
				if (strcmp(fl[i], "hardware") == 0)
					col_hw = i;
				else if (strcmp(fl[i], "source") == 0)
					col_src = i;
				else if (strcmp(fl[i], "notes") == 0)
					col_notes = i;
			}
			if (col_hw < 0 || col_src < 0 || col_notes < 0)
				fail_msg("%s: no hardware, source or notes column", path);
			continue;
		}
		if (n != ncols)
			fail_msg("%s:%d: %d fields (expected %d)", path, line_no, n, ncols);
		rows++;
		const int cols[] = { col_hw, col_src, col_notes };
		for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
			const char *hit = held_out_name(fl[cols[i]]);
			if (hit)
				fail_msg("%s:%d: held-out kind '%s' in '%s'", path, line_no, hit,
					 fl[cols[i]]);
		}
		const struct cat_hardware *hw = catalog_hardware(cat, fl[col_hw]);
		if (hw) {
			if (strcmp(hw->device->family->id, "nvidia-gb10") == 0)
				fail_msg("%s:%d: a GB10 row", path, line_no);
			for (const char *const *d = held_out_devices; *d; d++)
				if (strcmp(hw->device->id, *d) == 0)
					fail_msg("%s:%d: held-out device '%s'", path, line_no, *d);
		}
	}
	free(line);
	fclose(f);
	return rows;
}

/* No measurement of a held-out kind enters the calibration set: neither the
 * generated set nor the rows added in this repository, nor the KV-capacity
 * rows the memory model is checked on. */
static void test_calibration_no_held_out(void **state)
{
	(void)state;
	struct catalog *cat = load_embedded();
	for (const char *const *d = held_out_devices; *d; d++)
		if (!catalog_hardware(cat, *d))
			fail_msg("held-out device '%s' is not a catalogue id", *d);
	assert_true(scan_held_out(cat, AC_SRC_DIR "/models/calibration/measurements.csv") >= 80);
	assert_true(scan_held_out(cat, AC_SRC_DIR "/models/calibration/added-measurements.csv") >= 1);
	/* the memory model's validation set (models/calibration/KV-CAPACITY.md) */
	assert_true(scan_held_out(cat, AC_SRC_DIR "/models/calibration/kv-capacity.csv") >= 20);
	catalog_free(cat);
}

/* ---- listings ----------------------------------------------------------- */

static char *render(const struct catalog *cat, bool json, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	assert_non_null(f);
	struct diag d;
	diag_init(&d);
	int rc = json ? catalog_write_json(cat, f, &d) : catalog_write_table(cat, f, &d);
	assert_int_equal(rc, 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_listing_deterministic(void **state)
{
	(void)state;
	struct catalog *a = load_embedded();
	struct catalog *b = load_embedded();
	size_t la, lb;
	char *ja = render(a, true, &la);
	char *jb = render(b, true, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(ja, jb, la);
	assert_true(strncmp(ja, "{\n  \"schema_version\": 1,\n  \"usd_per_eur\": ", 42) == 0);

	cJSON *root = cJSON_ParseWithLength(ja, la);
	assert_non_null(root);
	const cJSON *hw = cJSON_GetObjectItemCaseSensitive(root, "hardware");
	assert_int_equal(cJSON_GetArraySize(hw), (int)a->hardware_count);
	for (size_t i = 0; i < a->hardware_count; i++) {
		const cJSON *e = cJSON_GetArrayItem(hw, (int)i);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "id")->valuestring,
				    a->hardware[i].id);
		assert_true(cJSON_GetObjectItemCaseSensitive(e, "memory_gb")->valuedouble ==
			    a->hardware[i].memory_gb);
	}
	const cJSON *e0 = cJSON_GetArrayItem(hw, 0);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(e0, "aliases")->child->valuestring,
			    "H100");
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(e0, "tflops"), "fp4")));
	const cJSON *models = cJSON_GetObjectItemCaseSensitive(root, "models");
	assert_int_equal(cJSON_GetArraySize(models), (int)a->model_count);
	assert_string_equal(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(models, 0), "id")->valuestring,
		"llama-3.1-8b");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root,
				"weight_formats")), (int)a->weight_format_count);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "kv_dtypes")),
			 (int)a->kv_dtype_count);
	cJSON_Delete(root);

	size_t lt;
	char *t = render(a, false, &lt);
	assert_non_null(strstr(t, "HARDWARE ("));
	assert_non_null(strstr(t, "\n  ws-2x-rtx-5090 "));
	assert_non_null(strstr(t, "MODELS ("));
	assert_non_null(strstr(t, "Qwen3.8 27B (estimated)"));
	assert_non_null(strstr(t, "KV-CACHE DTYPES ("));
	free(t);

	/* a write error is reported, not ignored */
	FILE *ro = fopen("/dev/full", "w");
	if (ro) {
		struct diag d;
		diag_init(&d);
		setvbuf(ro, NULL, _IONBF, 0);
		assert_int_equal(catalog_write_json(a, ro, &d), DIAG_EIO);
		fclose(ro);
	}
	free(ja);
	free(jb);
	catalog_free(a);
	catalog_free(b);
}

/* Every sourced figure can be listed with its source; the table prints
 * rents. */
static void test_sources_and_rent(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_write_sources(NULL, f, &d), 0);
	fclose(f);
	const char *h = strstr(buf, "  hardware h100-sxm\n");
	assert_non_null(h);
	const char *bw = strstr(h, "    mem_bw_gbs");
	assert_non_null(bw);
	assert_true(bw < strstr(h + 1, "  hardware "));
	assert_non_null(strstr(bw, "3350 GB/s  ["));
	assert_non_null(strstr(buf, "  weight_formats nvfp4\n"));
	free(buf);
	diag_init(&d);
	assert_int_equal(catalog_write_sources("/nonexistent/catalog", stdout, &d), DIAG_EIO);
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(catalog_write_table(cat, f, &d), 0);
	fclose(f);
	assert_non_null(strstr(buf, "rent/GPU-hour"));
	assert_non_null(strstr(buf, "USD 2.49-2.85"));
	/* the GEX131 is rented by the month: no rent per hour in its line */
	const char *gex = strstr(buf, "  hetzner-gex131 ");
	assert_non_null(gex);
	const char *eol = strchr(gex, '\n');
	const char *no_rent = strstr(gex, "              -  Hetzner GEX131");
	assert_true(no_rent && no_rent < eol);
	assert_null(strstr(buf, "EUR 1.22"));
	free(buf);
	catalog_free(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embedded_loads),
		cmocka_unit_test(test_sources_and_rent),
		cmocka_unit_test(test_directory_matches_embedded),
		cmocka_unit_test(test_lookup_by_alias),
		cmocka_unit_test(test_bad_catalogues),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_bad_directory),
		cmocka_unit_test(test_moe_and_mla_entries),
		cmocka_unit_test(test_params_match_published),
		cmocka_unit_test(test_every_figure_sourced),
		cmocka_unit_test(test_systems_and_new_hardware),
		cmocka_unit_test(test_price_order),
		cmocka_unit_test(test_calibration_ids_resolve),
		cmocka_unit_test(test_held_out_matcher),
		cmocka_unit_test(test_calibration_no_held_out),
		cmocka_unit_test(test_listing_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
