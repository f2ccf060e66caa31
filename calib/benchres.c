/* SPDX-License-Identifier: Apache-2.0
 * benchres: benchmark results into measurement rows (see benchres.h).
 *
 * Every format is read into the same small record (struct test) before a
 * row is written, so the mapping to catalogue ids and the row text live in
 * one place.  The rows are CSV text with the calibration set's header, so
 * that the fit reads them exactly as it reads measurements.csv.
 */
#include "calib/benchres.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <zlib.h>

#include "base/textfile.h"
#include "models/csvread.h"

#define HEADER "hardware,n_gpus,model,quant,engine,concurrency,input_tokens,output_tokens," \
	       "metric,value,unit,source,notes,provenance,confidence\n"

static const char *const kind_names[] = { "llama-bench", "vllm-bench-serve",
					  "sglang-bench-serving" };

const char *benchres_kind_name(enum benchres_kind k)
{
	return (int)k >= 0 && k <= BENCHRES_SGLANG_SERVE ? kind_names[k] : "?";
}

void benchres_init(struct benchres *b)
{
	memset(b, 0, sizeof(*b));
}

void benchres_release(struct benchres *b)
{
	free(b->csv);
	memset(b, 0, sizeof(*b));
}

static int append(struct benchres *b, struct diag *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return diag_set(d, DIAG_EINTERNAL, "cannot format a measurement row");
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + (size_t)n + 1)
			cap *= 2;
		if (cap > BENCHRES_MAX_BYTES)
			return diag_set(d, DIAG_EINPUT, "more than %u bytes of measurement rows",
					BENCHRES_MAX_BYTES);
		char *p = realloc(b->csv, cap);
		if (!p)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		b->csv = p;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->csv + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

/* A CSV cell: quoted, quotes doubled, control characters as spaces. */
static int cell(struct benchres *b, struct diag *d, const char *s, bool last)
{
	int rc = append(b, d, "\"");
	for (const char *p = s; *p && !rc; p++) {
		if (*p == '"')
			rc = append(b, d, "\"\"");
		else
			rc = append(b, d, "%c", (unsigned char)*p < 0x20 ? ' ' : *p);
	}
	return rc ? rc : append(b, d, last ? "\"\n" : "\",");
}

static void skip(struct benchres *b, const char *path, size_t test, const char *why)
{
	if (b->n_skipped < BENCHRES_SKIPPED_MAX)
		snprintf(b->skipped[b->n_skipped++], sizeof(b->skipped[0]), "%s: result %zu: %s",
			 path, test + 1, why);
	b->n_skipped_total++;
}

/* ---- one test, whatever the format ---- */

struct test {
	size_t index;              /* its place among the file's results, from 0 */
	long line;                 /* the line it starts on; 0 for the one
				      object of a JSON document, named by its
				      place only */
	const char *bad_field;     /* the first field read that is there but
				      not a number; NULL: none */
	char bad_text[48];         /* what it holds */
	const char *gpu_info, *model_type, *model_filename, *backends, *build;
	const char *model_id;      /* serving: the served model */
	const char *model_field;   /* serving: the field model_id came from */
	double n_prompt, n_gen, n_depth, avg_ts, ngl, n_ubatch;
	double build_number;       /* llama-bench's build_number; NAN absent */
	bool fa_on;                /* llama-bench flash_attn on (or auto); off
				      when false, 0 or absent: builds before
				      flash attention do not print it */
	/* serving */
	double concurrency;        /* NAN: none */
	double max_concurrency;    /* as written; NAN absent or null */
	double completed, prompts; /* as written; NAN absent */
	double total_in, total_out;
	bool open_loop;
	double in, out;            /* mean tokens per request */
	const char *len_fields;    /* the fields in and out come from */
	double out_tok_s, ttft_ms, tpot_ms;
	const char *tpot_field;    /* median_tpot_ms, or mean_tpot_ms without it */
	int per_client;
	int offline;               /* offline runs: prompts queued at once */
	char lengths_note[128];
};

static void test_init(struct test *t)
{
	memset(t, 0, sizeof(*t));
	t->n_prompt = t->n_gen = t->n_depth = t->avg_ts = t->ngl = t->n_ubatch = NAN;
	t->build_number = NAN;
	t->concurrency = t->in = t->out = t->out_tok_s = t->ttft_ms = t->tpot_ms = NAN;
	t->max_concurrency = t->completed = t->prompts = t->total_in = t->total_out = NAN;
	t->tpot_field = "median_tpot_ms";
	t->len_fields = "total_input_tokens, total_output_tokens and completed";
}

/* ---- what a result may say ---- */

/* An error about result t of `path`: "path:line: result N: ..." (the line
 * left out where the format has none). */
static int bad_result(const char *path, const struct test *t, struct diag *d, const char *fmt,
		      ...) __attribute__((format(printf, 4, 5)));

static int bad_result(const char *path, const struct test *t, struct diag *d, const char *fmt,
		      ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return diag_at(d, DIAG_EINPUT, path, t->line, 0, "result %zu: %s", t->index + 1, msg);
}

/* A field that is there but holds no number, as the first one met. */
static void note_bad(struct test *t, const char *field, const char *text)
{
	if (t->bad_field)
		return;
	t->bad_field = field;
	snprintf(t->bad_text, sizeof(t->bad_text), "%s", text);
}

/* A figure the tool measured: there, finite and within [lo, hi] `unit`. */
static int check_figure(const char *path, const struct test *t, const char *field, double v,
			double lo, double hi, const char *unit, struct diag *d)
{
	if (isnan(v))
		return bad_result(path, t, d, "no %s (expected %s within [%g, %g])", field, unit,
				  lo, hi);
	if (!(v >= lo && v <= hi))
		return bad_result(path, t, d, "%s %.15g is not a plausible measurement (expected "
				  "%s within [%g, %g])", field, v, unit, lo, hi);
	return 0;
}

/* A latency a serving run may leave out: absent (NAN), 0 (not measured:
 * SGLang's figure when the backend did not stream), or within the bounds. */
static int check_latency(const char *path, const struct test *t, const char *field, double ms,
			 struct diag *d)
{
	if (isnan(ms) || ms == 0)
		return 0;
	return check_figure(path, t, field, ms, BENCHRES_MS_MIN, BENCHRES_MS_MAX,
			    "ms (or 0: not measured)", d);
}

/* A count: absent (NAN) when it may be, else a whole number in [lo, hi]. */
static int check_count(const char *path, const struct test *t, const char *field, double v,
		       bool needed, double lo, double hi, const char *what, struct diag *d)
{
	if (isnan(v) && !needed)
		return 0;
	char range[64];
	if (isinf(hi))
		snprintf(range, sizeof(range), "a whole number, at least %.0f", lo);
	else
		snprintf(range, sizeof(range), "a whole number from %.0f to %.0f", lo, hi);
	if (isnan(v))
		return bad_result(path, t, d, "no %s (expected the %s, %s)", field, what, range);
	if (!(v >= lo && v <= hi && v == floor(v)))
		return bad_result(path, t, d, "%s %.15g is not a plausible %s (expected %s)", field,
				  v, what, range);
	return 0;
}

static int check_bad_field(const char *path, const struct test *t, struct diag *d)
{
	if (!t->bad_field)
		return 0;
	return bad_result(path, t, d, "%s '%s' is not a number (expected a number, as the "
			  "benchmark writes it)", t->bad_field, t->bad_text);
}

/* The ids a row is written with. */
struct ids {
	const struct cat_hardware *hw;
	const struct cat_model *model;
	const char *quant;
	int n_gpus;
};

static bool ci_contains(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++) {
		size_t k = 0;
		while (k < n && hay[k] &&
		       tolower((unsigned char)hay[k]) == tolower((unsigned char)needle[k]))
			k++;
		if (k == n)
			return true;
	}
	return false;
}

/* llama.cpp's type names in model_type ("qwen2 7B Q4_K - Medium") to
 * weight-format ids.  llama-bench runs GGUF files: "MXFP4 MoE" is the GGUF
 * layout (MXFP4 experts, Q8_0 elsewhere: formats.json gguf-mxfp4). */
static const char *quant_of_model_type(const char *mt)
{
	static const struct { const char *name, *id; } map[] = {
		{ "Q4_K - Medium", "gguf-q4-k-m" }, { "Q3_K - Medium", "gguf-q3-k-m" },
		{ "Q4_0", "gguf-q4-0" }, { "Q8_0", "gguf-q8-0" }, { "BF16", "bf16" },
		{ "F16", "fp16" }, { "MXFP4", "gguf-mxfp4" },
	};
	for (size_t i = 0; mt && i < sizeof(map) / sizeof(map[0]); i++)
		if (ci_contains(mt, map[i].name))
			return map[i].id;
	return NULL;
}

/* The model named by a file name: its base name without directories, the
 * .gguf extension and a trailing quantization tag ("-Q4_K_M"). */
static const struct cat_model *model_of_filename(const struct catalog *cat, const char *fn)
{
	if (!fn || !*fn)
		return NULL;
	const char *base = strrchr(fn, '/');
	base = base ? base + 1 : fn;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", base);
	char *dot = strstr(buf, ".gguf");
	if (dot)
		*dot = '\0';
	for (;;) {
		const struct cat_model *m = catalog_model(cat, buf);
		if (m)
			return m;
		char *cut = strrchr(buf, '-');
		if (!cut)
			return NULL;
		*cut = '\0';
	}
}

static int resolve_ids(struct ids *ids, const struct catalog *cat, const char *path,
		       const struct test *t, const struct benchres_given *g, enum benchres_kind k,
		       struct diag *d)
{
	memset(ids, 0, sizeof(*ids));
	ids->n_gpus = g->n_gpus > 0 ? g->n_gpus : 1;
	/* hardware */
	if (g->hardware) {
		ids->hw = catalog_hardware(cat, g->hardware);
		if (!ids->hw)
			return diag_set(d, DIAG_EINPUT, "%s: --hardware '%s' is not catalogue hardware "
					"(expected an id or alias: agentcap catalog)", path,
					g->hardware);
	} else if (k == BENCHRES_LLAMA_BENCH && t->gpu_info && *t->gpu_info) {
		char first[256];
		snprintf(first, sizeof(first), "%s", t->gpu_info);
		char *comma = strchr(first, ',');
		if (comma)
			*comma = '\0';
		ids->hw = catalog_hardware(cat, first);
		if (!ids->hw)
			return diag_set(d, DIAG_EINPUT, "%s: gpu_info '%s' is not catalogue hardware "
					"(expected --hardware ID: agentcap catalog lists them)", path,
					t->gpu_info);
	} else {
		return diag_set(d, DIAG_EINPUT, "%s: the %s result does not name the hardware "
				"(expected --hardware ID: agentcap catalog lists them)", path,
				benchres_kind_name(k));
	}
	/* model */
	if (g->model) {
		ids->model = catalog_model(cat, g->model);
		if (!ids->model)
			return diag_set(d, DIAG_EINPUT, "%s: --model '%s' is not a catalogue model "
					"(expected an id or alias: agentcap catalog)", path, g->model);
	} else if (k == BENCHRES_LLAMA_BENCH) {
		ids->model = model_of_filename(cat, t->model_filename);
		if (!ids->model)
			return diag_set(d, DIAG_EINPUT, "%s: model_filename '%s' (model_type '%s') "
					"names no catalogue model (expected --model ID: agentcap "
					"catalog lists them)", path,
					t->model_filename ? t->model_filename : "",
					t->model_type ? t->model_type : "");
	} else if (t->model_id && *t->model_id) {
		ids->model = catalog_model(cat, t->model_id);
		if (!ids->model)
			return diag_set(d, DIAG_EINPUT, "%s: %s '%s' is not a catalogue model "
					"(expected --model ID: agentcap catalog lists them)", path,
					t->model_field, t->model_id);
	} else {
		return diag_set(d, DIAG_EINPUT, "%s: the %s result does not name the model "
				"(expected --model ID: agentcap catalog lists them)", path,
				benchres_kind_name(k));
	}
	/* weight format */
	if (g->quant) {
		const struct cat_weight_format *wf = catalog_weight_format(cat, g->quant);
		if (!wf)
			return diag_set(d, DIAG_EINPUT, "%s: --quant '%s' is not a catalogue weight "
					"format (expected an id: agentcap catalog)", path, g->quant);
		ids->quant = wf->id;
	} else if (k == BENCHRES_LLAMA_BENCH) {
		ids->quant = quant_of_model_type(t->model_type);
		if (!ids->quant)
			return diag_set(d, DIAG_EINPUT, "%s: model_type '%s' names no weight format "
					"agentcap knows (expected --quant ID: agentcap catalog lists "
					"them)", path, t->model_type ? t->model_type : "");
	} else {
		ids->quant = "bf16";
	}
	return 0;
}

static const char *engine_column(enum benchres_kind k)
{
	return k == BENCHRES_LLAMA_BENCH ? "llama.cpp" : k == BENCHRES_VLLM_SERVE ? "vllm" : "sglang";
}

static int row(struct benchres *b, const struct ids *ids, const char *engine, double conc,
	       double in, double out, const char *metric, double value, const char *unit,
	       const char *source, const char *notes, const char *confidence, struct diag *d)
{
	int rc = append(b, d, "%s,%d,%s,%s,", ids->hw->id, ids->n_gpus, ids->model->id, ids->quant);
	if (!rc)
		rc = cell(b, d, engine, false);
	if (!rc && isfinite(conc))
		rc = append(b, d, "%.0f", conc);
	if (!rc)
		rc = append(b, d, ",");
	if (!rc && isfinite(in))
		rc = append(b, d, "%.0f", in);
	if (!rc)
		rc = append(b, d, ",");
	if (!rc && isfinite(out))
		rc = append(b, d, "%.0f", out);
	if (!rc)
		rc = append(b, d, ",%s,%.10g,%s,", metric, value, unit);
	if (!rc)
		rc = cell(b, d, source, false);
	if (!rc)
		rc = cell(b, d, notes, false);
	if (!rc)
		rc = append(b, d, "original,%s\n", confidence);
	if (!rc)
		b->n_rows++;
	return rc;
}

/* One llama-bench test as rows (or kept out). */
static int llama_test(struct benchres *b, const struct catalog *cat, const char *path, size_t i,
		      const struct test *t, const struct benchres_given *g, size_t *rows,
		      struct diag *d)
{
	int rc;
	if ((rc = check_bad_field(path, t, d)) ||
	    (rc = check_figure(path, t, "avg_ts", t->avg_ts, BENCHRES_TOK_S_MIN, BENCHRES_TOK_S_MAX,
			       "tokens/s", d)) ||
	    (rc = check_count(path, t, "n_prompt", t->n_prompt, true, 0, INFINITY,
			      "prompt length in tokens", d)) ||
	    (rc = check_count(path, t, "n_gen", t->n_gen, true, 0, INFINITY,
			      "generation length in tokens", d)) ||
	    (rc = check_count(path, t, "n_depth", t->n_depth, false, 0, INFINITY,
			      "depth in tokens", d)) ||
	    (rc = check_count(path, t, "n_ubatch", t->n_ubatch, false, 1, BENCHRES_UBATCH_MAX,
			      "micro-batch in tokens", d)))
		return rc;
	double depth = isfinite(t->n_depth) ? t->n_depth : 0;
	if (t->n_prompt > 0 && t->n_gen > 0) {
		skip(b, path, i, "a prompt-and-generation test (-pg) mixes prefill and decode: "
		     "not fitted");
		return 0;
	}
	if (t->n_prompt > 0 && depth > 0) {
		skip(b, path, i, "prefill after a prefilled depth (-d): not fitted");
		return 0;
	}
	if (!(t->n_prompt > 0) && !(t->n_gen > 0)) {
		skip(b, path, i, "neither a prompt nor a generation test");
		return 0;
	}
	struct ids ids;
	rc = resolve_ids(&ids, cat, path, t, g, BENCHRES_LLAMA_BENCH, d);
	if (rc)
		return rc;
	/* the test's context: llama-bench fills n_depth tokens, then runs the
	 * prompt or the generation on top */
	int64_t ctx = ids.model->max_context;
	if (depth + t->n_prompt + t->n_gen > (double)ctx)
		return bad_result(path, t, d, "n_depth %.15g + n_prompt %.15g + n_gen %.15g tokens is "
				  "beyond the context of %s (expected at most %lld tokens in all)",
				  depth, t->n_prompt, t->n_gen, ids.model->id, (long long)ctx);
	char engine[512], notes[1024], source[600];
	snprintf(engine, sizeof(engine), "%s", g->engine ? g->engine : "llama.cpp");
	/* "build <commit> (<number>)" as llama-bench prints it: validate reads
	 * the number (the host-routed MoE of builds before pull 15525) */
	char build[128];
	if (t->build && isfinite(t->build_number) && t->build_number >= 1)
		snprintf(build, sizeof(build), "build %s (%.0f)", t->build, t->build_number);
	else
		snprintf(build, sizeof(build), "%s", t->build ? t->build : "?");
	int n = snprintf(notes, sizeof(notes), "engine_as_published=llama.cpp %s (%s)%s%.0f -fa %d",
			 build, t->backends ? t->backends : "?",
			 isfinite(t->n_ubatch) ? " -ub " : "", isfinite(t->n_ubatch) ? t->n_ubatch : 0,
			 t->fa_on ? 1 : 0);
	if (ids.n_gpus > 1 && n > 0 && (size_t)n < sizeof(notes))
		n += snprintf(notes + n, sizeof(notes) - (size_t)n, " | parallel=layer-split");
	if (isfinite(t->ngl) && t->ngl >= 0 && t->ngl < (double)ids.model->layers && n > 0 &&
	    (size_t)n < sizeof(notes))
		n += snprintf(notes + n, sizeof(notes) - (size_t)n, " | not_modelled=n_gpu_layers "
			      "%.0f of %lld layers", t->ngl, (long long)ids.model->layers);
	if (t->model_type && n > 0 && (size_t)n < sizeof(notes))
		snprintf(notes + n, sizeof(notes) - (size_t)n, " | model_as_published=%s",
			 t->model_type);
	snprintf(source, sizeof(source), "%s (llama-bench, result %zu)", path, i + 1);
	if (t->n_prompt > 0)
		rc = row(b, &ids, engine, 1, t->n_prompt, 0, "prefill_tok_s", t->avg_ts, "tok/s",
			 source, notes, "high", d);
	else
		rc = row(b, &ids, engine, 1, depth, t->n_gen, "decode_tok_s", t->avg_ts, "tok/s",
			 source, notes, "high", d);
	if (!rc)
		(*rows)++;
	return rc;
}

/* One serving run as rows. */
static int serve_run(struct benchres *b, const struct catalog *cat, const char *path, size_t i,
		     const struct test *t, const struct benchres_given *g, enum benchres_kind k,
		     size_t *rows, int *per_client, int *offline, struct diag *d)
{
	int rc;
	if ((rc = check_bad_field(path, t, d)) ||
	    (rc = check_figure(path, t, "output_throughput", t->out_tok_s, BENCHRES_TOK_S_MIN,
			       BENCHRES_TOK_S_MAX, "tokens/s", d)) ||
	    (rc = check_latency(path, t, "median_ttft_ms", t->ttft_ms, d)) ||
	    (rc = check_latency(path, t, t->tpot_field, t->tpot_ms, d)) ||
	    (rc = check_count(path, t, "max_concurrency", t->max_concurrency, false, 1,
			      BENCHRES_CONCURRENCY_MAX, "number of clients", d)) ||
	    (rc = check_count(path, t, "num_prompts", t->prompts, false, 0,
			      BENCHRES_REQUESTS_MAX, "number of requests", d)) ||
	    (rc = check_count(path, t, "completed", t->completed, false, 0,
			      BENCHRES_REQUESTS_MAX, "number of requests", d)) ||
	    (rc = check_count(path, t, "total_input_tokens", t->total_in, false, 0, INFINITY,
			      "token count", d)) ||
	    (rc = check_count(path, t, "total_output_tokens", t->total_out, false, 0, INFINITY,
			      "token count", d)))
		return rc;
	if (!(t->in >= 1) || !(t->out >= 1))
		return bad_result(path, t, d, "no prompt and output lengths (expected "
				  "total_input_tokens, total_output_tokens and completed > 0, or "
				  "input_lens and output_lens)");
	if (t->open_loop) {
		skip(b, path, i, "an open-loop run (a request rate without --max-concurrency): "
		     "the fit simulates closed-loop clients; not fitted");
		return 0;
	}
	struct ids ids;
	rc = resolve_ids(&ids, cat, path, t, g, k, d);
	if (rc)
		return rc;
	double in = round(t->in), out = round(t->out);
	int64_t ctx = ids.model->max_context;
	if (in + out > (double)ctx)
		return bad_result(path, t, d, "a mean request of %.15g prompt and %.15g output tokens "
				  "(%s) is beyond the context of %s (expected at most %lld tokens "
				  "in all)", in, out, t->len_fields, ids.model->id, (long long)ctx);
	char engine[512], notes[512], source[600];
	snprintf(engine, sizeof(engine), "%s", g->engine ? g->engine : engine_column(k));
	snprintf(notes, sizeof(notes), "%s%s", t->lengths_note,
		 isfinite(t->concurrency) ? "" : " | offline: every request queued at once");
	snprintf(source, sizeof(source), "%s (%s, result %zu)", path, benchres_kind_name(k), i + 1);
	double c = t->concurrency;
	rc = row(b, &ids, engine, c, in, out, "output_throughput_tok_s", t->out_tok_s, "tok/s",
		 source, notes, "high", d);
	if (!rc && t->ttft_ms > 0)
		rc = row(b, &ids, engine, c, in, out, "ttft_ms", t->ttft_ms, "ms", source, notes,
			 "medium", d);
	if (!rc && t->tpot_ms > 0)
		rc = row(b, &ids, engine, c, in, out, "tpot_ms", t->tpot_ms, "ms", source, notes,
			 "medium", d);
	if (!rc) {
		*rows += 1 + (t->ttft_ms > 0) + (t->tpot_ms > 0);
		if (t->per_client > *per_client)
			*per_client = t->per_client;
		if (t->offline > *offline)
			*offline = t->offline;
	}
	return rc;
}

/* ---- JSON readers ---- */

/* llama-bench's flash_attn: a boolean in JSON, 0/1 in CSV; -1 or "auto"
 * (automatic, on where the backend has the kernels) in recent builds. */
static bool fa_text_on(const char *s)
{
	return s && *s && strcmp(s, "0") != 0 && strcmp(s, "false") != 0 && strcmp(s, "off") != 0;
}

static const char *jstrv(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnumv(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (cJSON_IsNumber(v))
		return v->valuedouble;
	if (cJSON_IsString(v)) {
		char *end;
		double x = strtod(v->valuestring, &end);
		if (end != v->valuestring && *end == '\0')
			return x;
	}
	return NAN;
}

/* A field that becomes a row: NAN when absent or null; a number, or a
 * string holding one ("inf" too, never "nan"); anything else is noted in t
 * (check_bad_field reports it). */
static double jnum(struct test *t, const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!v || cJSON_IsNull(v))
		return NAN;
	if (cJSON_IsNumber(v))
		return v->valuedouble;
	if (cJSON_IsString(v)) {
		char *end;
		double x = strtod(v->valuestring, &end);
		if (end != v->valuestring && *end == '\0' && !isnan(x))
			return x;
		note_bad(t, k, v->valuestring);
	} else {
		note_bad(t, k, cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? "true" : "false")
			 : cJSON_IsArray(v) ? "[...]" : "{...}");
	}
	return NAN;
}

static bool has(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k) != NULL;
}

static void llama_from_json(struct test *t, const cJSON *o)
{
	t->gpu_info = jstrv(o, "gpu_info");
	t->model_type = jstrv(o, "model_type");
	t->model_filename = jstrv(o, "model_filename");
	t->backends = jstrv(o, "backends");
	t->build = jstrv(o, "build_commit");
	t->build_number = jnumv(o, "build_number");
	t->n_prompt = jnum(t, o, "n_prompt");
	t->n_gen = jnum(t, o, "n_gen");
	t->n_depth = jnum(t, o, "n_depth");
	t->avg_ts = jnum(t, o, "avg_ts");
	t->ngl = jnumv(o, "n_gpu_layers");
	t->n_ubatch = jnum(t, o, "n_ubatch");
	const cJSON *fa = cJSON_GetObjectItemCaseSensitive(o, "flash_attn");
	t->fa_on = cJSON_IsTrue(fa) || (cJSON_IsNumber(fa) && fa->valuedouble != 0) ||
		   (cJSON_IsString(fa) && fa_text_on(fa->valuestring));
}

static double mean_of_array(const cJSON *a, size_t *n)
{
	double s = 0;
	*n = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, a) {
		if (!cJSON_IsNumber(it))
			return NAN;
		s += it->valuedouble;
		(*n)++;
	}
	return *n ? s / (double)*n : NAN;
}

/* A serving result object (vLLM or SGLang) into t. */
static void serve_from_json(struct test *t, const cJSON *o)
{
	t->model_id = jstrv(o, "model_id");
	t->model_field = "model_id";
	if (!t->model_id) {
		const cJSON *si = cJSON_GetObjectItemCaseSensitive(o, "server_info");
		t->model_id = cJSON_IsObject(si) ? jstrv(si, "model_path") : NULL;
		t->model_field = "server_info.model_path";
	}
	double mc = t->max_concurrency = jnum(t, o, "max_concurrency");
	double rate = jnumv(o, "request_rate"); /* "inf" parses as inf */
	t->concurrency = mc >= 1 ? mc : NAN;
	t->open_loop = !(mc >= 1) && isfinite(rate) && rate > 0;
	double completed = t->completed = jnum(t, o, "completed");
	t->total_in = jnum(t, o, "total_input_tokens");
	t->total_out = jnum(t, o, "total_output_tokens");
	size_t ni = 0, no = 0;
	double mi = mean_of_array(cJSON_GetObjectItemCaseSensitive(o, "input_lens"), &ni);
	double mo = mean_of_array(cJSON_GetObjectItemCaseSensitive(o, "output_lens"), &no);
	if (ni > 0 && no > 0 && isfinite(mi) && isfinite(mo)) {
		t->in = mi;
		t->out = mo;
		t->len_fields = "the means of input_lens and output_lens";
		snprintf(t->lengths_note, sizeof(t->lengths_note), "lengths=means of input_lens and "
			 "output_lens (%zu requests)", ni);
	} else if (completed > 0) {
		t->in = t->total_in / completed;
		t->out = t->total_out / completed;
		snprintf(t->lengths_note, sizeof(t->lengths_note), "lengths=total tokens / %.0f "
			 "completed requests", completed);
	}
	t->out_tok_s = jnum(t, o, "output_throughput");
	t->ttft_ms = jnum(t, o, "median_ttft_ms");
	t->tpot_ms = jnum(t, o, "median_tpot_ms");
	if (isnan(t->tpot_ms)) {
		t->tpot_ms = jnum(t, o, "mean_tpot_ms");
		t->tpot_field = "mean_tpot_ms";
	}
	double prompts = t->prompts = jnum(t, o, "num_prompts");
	if (!isfinite(prompts))
		prompts = completed;
	if (isfinite(t->concurrency) && prompts > 0)
		t->per_client = (int)fmax(1, floor(prompts / t->concurrency));
	else if (!t->open_loop && prompts >= 1 && prompts <= BENCHRES_REQUESTS_MAX)
		t->offline = (int)prompts;
}

static bool is_llama(const cJSON *o)
{
	return cJSON_IsObject(o) && has(o, "avg_ts") && has(o, "n_prompt");
}

static bool is_sglang(const cJSON *o)
{
	return cJSON_IsObject(o) && has(o, "output_throughput") &&
	       (has(o, "random_input_len") || has(o, "dataset_name")) && !has(o, "model_id");
}

static bool is_vllm(const cJSON *o)
{
	return cJSON_IsObject(o) && has(o, "output_throughput") && has(o, "completed") &&
	       !is_sglang(o);
}

static int not_ours(const char *path, struct diag *d)
{
	return diag_set(d, DIAG_EINPUT, "%s: not a benchmark result agentcap reads (expected "
			"llama-bench -o json, jsonl or csv; vllm bench serve --save-result JSON; "
			"or sglang.bench_serving --output-file JSONL)", path);
}

static int too_many(const char *path, long line, struct diag *d)
{
	return diag_at(d, DIAG_EINPUT, path, line, 0, "more than %d results in one file "
		       "(expected at most %d: split the results over several files)",
		       BENCHRES_RESULTS_MAX, BENCHRES_RESULTS_MAX);
}

/* The results of a JSON document or a JSON Lines file; lines[i] is the line
 * objs[i] starts on (NULL: one object, named by its place only). */
static int objects(struct benchres *b, const struct catalog *cat, const char *path,
		   const cJSON *const *objs, const long *lines, size_t n, struct benchres_input *in,
		   const struct benchres_given *g, struct diag *d)
{
	if (n == 0)
		return diag_set(d, DIAG_EINPUT, "%s: no result in the file (expected at least one "
				"benchmark result)", path);
	enum benchres_kind k = is_llama(objs[0]) ? BENCHRES_LLAMA_BENCH
			       : is_sglang(objs[0]) ? BENCHRES_SGLANG_SERVE
			       : is_vllm(objs[0])   ? BENCHRES_VLLM_SERVE
						    : (enum benchres_kind)-1;
	if ((int)k < 0)
		return not_ours(path, d);
	in->kind = k;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		bool same = k == BENCHRES_LLAMA_BENCH ? is_llama(objs[i])
			    : k == BENCHRES_SGLANG_SERVE ? is_sglang(objs[i]) : is_vllm(objs[i]);
		struct test t;
		test_init(&t);
		t.index = i;
		t.line = lines ? lines[i] : 0;
		if (!same)
			return bad_result(path, &t, d, "not a %s result like the first (expected one "
					  "tool's results per file)", benchres_kind_name(k));
		if (k == BENCHRES_LLAMA_BENCH) {
			llama_from_json(&t, objs[i]);
			rc = llama_test(b, cat, path, i, &t, g, &in->rows, d);
		} else {
			serve_from_json(&t, objs[i]);
			rc = serve_run(b, cat, path, i, &t, g, k, &in->rows, &in->requests_per_client,
				       &in->offline_requests, d);
		}
	}
	return rc;
}

/* The line each of the first n elements of the top-level JSON array in text
 * starts on.  text is valid JSON (cJSON parsed it), so a string's end is its
 * first unescaped quote and no raw newline sits inside one. */
static void array_lines(const char *text, size_t len, long *lines, size_t n)
{
	long line = 1;
	int depth = 0;
	bool in_str = false, want = false;
	size_t k = 0;
	for (size_t i = 0; i < len && k < n; i++) {
		char c = text[i];
		if (c == '\n')
			line++;
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (isspace((unsigned char)c))
			continue;
		if (want && depth == 1) {
			lines[k++] = line;
			want = false;
		}
		if (c == '"') {
			in_str = true;
		} else if (c == '[' || c == '{') {
			if (++depth == 1)
				want = true;
		} else if (c == ']' || c == '}') {
			depth--;
		} else if (c == ',' && depth == 1) {
			want = true;
		}
	}
	for (; k < n; k++)
		lines[k] = 0;
}

static int json_error(const char *path, const char *text, size_t len, const char *what,
		      struct diag *d)
{
	long line = 1, col = 1;
	const char *at = cJSON_GetErrorPtr();
	if (at && at >= text && at <= text + len)
		textfile_line_col(text, at, &line, &col);
	return diag_at(d, DIAG_EINPUT, path, line, col, "%s", what);
}

/* JSON Lines: every non-blank line one object. */
static int read_jsonl(struct benchres *b, const struct catalog *cat, const char *path,
		      const char *text, size_t len, struct benchres_input *in,
		      const struct benchres_given *g, struct diag *d)
{
	size_t cap = 16, n = 0;
	cJSON **objs = calloc(cap, sizeof(*objs));
	long *lines = calloc(cap, sizeof(*lines));
	int rc = objs && lines ? 0 : diag_set(d, DIAG_ENOMEM, "out of memory");
	const char *p = text, *end = text + len;
	long line = 0;
	while (!rc && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *q = p;
		line++;
		while (q < le && isspace((unsigned char)*q))
			q++;
		if (q < le && n == BENCHRES_RESULTS_MAX) {
			rc = too_many(path, line, d);
			break;
		}
		if (q < le) {
			const char *pe = NULL;
			cJSON *o = cJSON_ParseWithLengthOpts(q, (size_t)(le - q), &pe, false);
			if (!o) {
				rc = json_error(path, text, len, "not a JSON object (expected one "
						"benchmark result a line)", d);
				break;
			}
			if (n == cap) {
				cJSON **np = realloc(objs, 2 * cap * sizeof(*objs));
				if (np)
					objs = np;
				long *nl2 = np ? realloc(lines, 2 * cap * sizeof(*lines)) : NULL;
				if (nl2)
					lines = nl2;
				if (!np || !nl2) {
					cJSON_Delete(o);
					rc = diag_set(d, DIAG_ENOMEM, "out of memory");
					break;
				}
				cap *= 2;
			}
			lines[n] = line;
			objs[n++] = o;
		}
		p = le + 1;
	}
	if (!rc)
		rc = objects(b, cat, path, (const cJSON *const *)objs, lines, n, in, g, d);
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(objs[i]);
	free(objs);
	free(lines);
	return rc;
}

/* ---- llama-bench CSV ---- */

static double cnum(const struct csvread *t, size_t r, const char *col)
{
	const char *s = csvread_cell(t, r, csvread_col(t, col));
	char *end;
	double x = strtod(s, &end);
	return *s && end != s && *end == '\0' ? x : NAN;
}

/* A cell that becomes a row: NAN when empty or absent; one that holds no
 * number is noted in x (check_bad_field reports it). */
static double cnum_row(struct test *x, const struct csvread *t, size_t r, const char *col)
{
	const char *s = csvread_cell(t, r, csvread_col(t, col));
	double v = cnum(t, r, col);
	if (*s && isnan(v))
		note_bad(x, col, s);
	return v;
}

static const char *cstr(const struct csvread *t, size_t r, const char *col)
{
	int c = csvread_col(t, col);
	return c >= 0 ? csvread_cell(t, r, c) : NULL;
}

static int read_llama_csv(struct benchres *b, const struct catalog *cat, const char *path,
			  const char *text, size_t len, struct benchres_input *in,
			  const struct benchres_given *g, struct diag *d)
{
	struct csvread t;
	int rc = csvread_parse(&t, path, text, len, d);
	if (rc)
		return rc;
	if (csvread_col(&t, "avg_ts") < 0 || csvread_col(&t, "n_prompt") < 0 ||
	    csvread_col(&t, "n_gen") < 0) {
		csvread_release(&t);
		return not_ours(path, d);
	}
	in->kind = BENCHRES_LLAMA_BENCH;
	if (t.rows == 0)
		rc = diag_set(d, DIAG_EINPUT, "%s: no result in the file (expected at least one "
			      "benchmark result)", path);
	else if (t.rows > BENCHRES_RESULTS_MAX)
		rc = too_many(path, t.lines[BENCHRES_RESULTS_MAX], d);
	for (size_t r = 0; r < t.rows && !rc; r++) {
		struct test x;
		test_init(&x);
		x.index = r;
		x.line = t.lines[r];
		x.gpu_info = cstr(&t, r, "gpu_info");
		x.model_type = cstr(&t, r, "model_type");
		x.model_filename = cstr(&t, r, "model_filename");
		x.backends = cstr(&t, r, "backends");
		x.build = cstr(&t, r, "build_commit");
		x.build_number = cnum(&t, r, "build_number");
		x.n_prompt = cnum_row(&x, &t, r, "n_prompt");
		x.n_gen = cnum_row(&x, &t, r, "n_gen");
		x.n_depth = cnum_row(&x, &t, r, "n_depth");
		x.avg_ts = cnum_row(&x, &t, r, "avg_ts");
		x.ngl = cnum(&t, r, "n_gpu_layers");
		x.n_ubatch = cnum_row(&x, &t, r, "n_ubatch");
		x.fa_on = fa_text_on(cstr(&t, r, "flash_attn"));
		rc = llama_test(b, cat, path, r, &x, g, &in->rows, d);
	}
	csvread_release(&t);
	return rc;
}

int benchres_read_text(struct benchres *b, const struct catalog *cat, const char *name,
		       const char *text, size_t len, const struct benchres_given *g,
		       struct diag *d)
{
	if (b->n_inputs == BENCHRES_INPUTS_MAX)
		return diag_set(d, DIAG_EINPUT, "%s: more than %d result files (expected at most %d)",
				name, BENCHRES_INPUTS_MAX, BENCHRES_INPUTS_MAX);
	int rc = 0;
	if (b->len == 0)
		rc = append(b, d, "%s", HEADER);
	if (rc)
		return rc;
	size_t len0 = b->len, rows0 = b->n_rows, skipped0 = b->n_skipped,
	       skipped_total0 = b->n_skipped_total;
	struct benchres_input *in = &b->inputs[b->n_inputs];
	memset(in, 0, sizeof(*in));
	snprintf(in->path, sizeof(in->path), "%s", name);
	in->crc32 = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)text, (uInt)len);
	size_t i = 0;
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (i == len) {
		rc = diag_set(d, DIAG_EINPUT, "%s: empty (expected a benchmark result)", name);
	} else if (text[i] == '[' || text[i] == '{') {
		const char *end = NULL;
		cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
		/* a value followed by more than white space is JSON Lines */
		while (root && end && end < text + len && isspace((unsigned char)*end))
			end++;
		if (root && end && end < text + len) {
			cJSON_Delete(root);
			root = NULL;
		}
		if (root && cJSON_IsArray(root)) {
			size_t n = (size_t)cJSON_GetArraySize(root);
			const cJSON **objs = n > BENCHRES_RESULTS_MAX ? NULL
					     : calloc(n ? n : 1, sizeof(*objs));
			long *lines = objs ? calloc(n ? n : 1, sizeof(*lines)) : NULL;
			if (n > BENCHRES_RESULTS_MAX) {
				rc = too_many(name, 0, d);
			} else if (!objs || !lines) {
				rc = diag_set(d, DIAG_ENOMEM, "out of memory");
			} else {
				size_t k = 0;
				const cJSON *it;
				cJSON_ArrayForEach(it, root) objs[k++] = it;
				array_lines(text, len, lines, n);
				rc = objects(b, cat, name, objs, lines, n, in, g, d);
			}
			free(objs);
			free(lines);
		} else if (root) {
			const cJSON *one = root;
			rc = objects(b, cat, name, &one, NULL, 1, in, g, d);
		} else if (text[i] == '{') {
			rc = read_jsonl(b, cat, name, text, len, in, g, d);
		} else {
			rc = json_error(name, text, len, "not JSON (expected a benchmark result)", d);
		}
		cJSON_Delete(root);
	} else {
		rc = read_llama_csv(b, cat, name, text, len, in, g, d);
	}
	if (!rc && in->rows == 0)
		rc = diag_set(d, DIAG_EINPUT, "%s: no result agentcap can fit (%zu kept out: %s)",
			      name, b->n_skipped_total - skipped_total0,
			      b->n_skipped > skipped0 ? b->skipped[skipped0] : "none");
	if (rc) {
		/* nothing of a bad file stays */
		b->len = len0;
		if (b->csv)
			b->csv[len0] = '\0';
		b->n_rows = rows0;
		b->n_skipped = skipped0;
		b->n_skipped_total = skipped_total0;
		return rc;
	}
	b->n_inputs++;
	return 0;
}

int benchres_read(struct benchres *b, const struct catalog *cat, const char *path,
		  const struct benchres_given *g, struct diag *d)
{
	struct diag rd;
	diag_init(&rd);
	char *text = textfile_read(path, BENCHRES_MAX_BYTES, "a benchmark result", &rd);
	if (!text)
		return diag_set(d, rd.code ? rd.code : DIAG_EINPUT, "%s (expected a benchmark result: "
				"llama-bench -o json, jsonl or csv; vllm bench serve --save-result "
				"JSON; or sglang.bench_serving --output-file JSONL)", rd.msg);
	int rc = benchres_read_text(b, cat, path, text, strlen(text), g, d);
	free(text);
	return rc;
}
