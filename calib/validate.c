/* SPDX-License-Identifier: Apache-2.0
 * validate: measurements against predictions (see validate.h).
 *
 * Step metrics come straight from the performance model; serving metrics
 * from a small closed-loop run of the simulator driven here directly: each
 * client's next call is submitted from the done callback of its previous
 * one, with block hashes unique to the call, so nothing is shared through
 * the prefix cache (benchmarks send random prompts).
 */
#include "calib/validate.h"

#include "base/hash.h"
#include "base/jsonw.h"
#include "models/memory.h"
#include "models/perf_model.h"
#include "models/pipeline.h"
#include "sim/sim.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_names[VM_COUNT] = {
	"decode_tok_s", "prefill_tok_s", "output_throughput_tok_s", "total_throughput_tok_s",
	"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms",
};

const char *validate_metric_name(enum validate_metric m)
{
	return ((int)m >= 0 && m < VM_COUNT) ? metric_names[m] : "?";
}

static const char *const provenance_names[] = { "", "original", "copy", "inferred" };
static const char *const confidence_names[] = { "", "low", "medium", "high" };

const char *validate_provenance_name(enum validate_provenance p)
{
	return ((int)p >= 0 && p <= VP_INFERRED) ? provenance_names[p] : "?";
}

const char *validate_confidence_name(enum validate_confidence c)
{
	return ((int)c >= 0 && c <= VC_HIGH) ? confidence_names[c] : "?";
}

int validate_confidence_parse(const char *name)
{
	for (int c = VC_LOW; c <= VC_HIGH; c++)
		if (strcmp(name, confidence_names[c]) == 0)
			return c;
	return -1;
}

void validate_opts_init(struct validate_opts *o, const struct catalog *cat)
{
	*o = (struct validate_opts){ .cat = cat, .requests_per_client = 8,
				     .offline_requests = 1024 };
}

void validate_release(struct validate_report *rep)
{
	csvread_release(&rep->table);
	free(rep->rows);
	free(rep->families);
	memset(rep, 0, sizeof(*rep));
}

/* ---- small helpers ---- */

static bool contains_ci(const char *hay, const char *needle)
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

/* "-ub 2048" or "--ubatch-size 2048" in an engine description, else 0. */
static int64_t ubatch_of(const char *text)
{
	const char *keys[] = { "-ub ", "--ubatch-size ", "ubatch " };
	for (size_t i = 0; i < 3; i++) {
		const char *p = strstr(text, keys[i]);
		if (p) {
			long long v = strtoll(p + strlen(keys[i]), NULL, 10);
			if (v >= 1 && v <= (1 << 24))
				return v;
		}
	}
	return 0;
}

/* Flash attention named off in an engine description or the notes: "-fa 0",
 * "-fa off", "--flash-attn off" or "FA off".  An "on" form or nothing leaves
 * the engine's default (on). */
static bool fa_off(const char *text)
{
	static const char *const offs[] = { "-fa 0", "-fa off", "--flash-attn 0",
					    "--flash-attn off", "FA off" };
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		const char *p = strstr(text, offs[i]);
		if (p && !isdigit((unsigned char)p[strlen(offs[i])]))
			return true;
	}
	return false;
}

/* A llama.cpp build number as llama-bench prints it, "build: a094f38 (6210)"
 * or "build a094f38 (6210)": the commit then the number in parentheses.  0
 * when there is none. */
static int64_t build_of(const char *text)
{
	for (const char *p = strstr(text, "build"); p; p = strstr(p + 1, "build")) {
		const char *q = p + 5;
		if (*q == ':')
			q++;
		if (*q != ' ')
			continue;
		while (*q == ' ')
			q++;
		size_t hex = 0;
		while (isxdigit((unsigned char)q[hex]))
			hex++;
		if (hex < 6 || q[hex] != ' ' || q[hex + 1] != '(')
			continue;
		q += hex + 2;
		char *end;
		long long v = strtoll(q, &end, 10);
		if (end != q && *end == ')' && v >= 1 && v <= 10000000)
			return v;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- closed-loop simulation ---- */

struct loop {
	struct sim sim;
	int64_t in, out, block;
	int64_t next_call;
	int *left;                /* calls each client still has to send */
	uint64_t *hashes;
	int64_t n_hashes;
	double *ttft, *tpot, *e2el;
	size_t n, cap;
	int64_t first_arrival, last_done;
	double in_tokens, out_tokens;
	int64_t rejected;
	const char *reject_reason;
	int err;
	struct diag *d;
};

static int loop_submit(struct loop *lp, int client, int64_t t_ns)
{
	int64_t id = lp->next_call++;
	for (int64_t j = 0; j < lp->n_hashes; j++)
		lp->hashes[j] = hash_combine(hash_mix64((uint64_t)id + 0x5eed), (uint64_t)j);
	struct sim_call c = { .session = (uint64_t)client + 1, .task = 0, .seq = id,
			      .prompt_tokens = lp->in, .output_tokens = lp->out,
			      .block_hashes = lp->hashes, .n_hashes = lp->n_hashes,
			      .user = &lp->left[client] };
	lp->left[client]--;
	return sim_submit(&lp->sim, &c, t_ns, lp->d);
}

static void loop_done(void *ctx, const struct res_request *r, void *user)
{
	struct loop *lp = ctx;
	if (lp->err)
		return;
	if (r->status != RES_COMPLETED) {
		lp->rejected++;
		lp->reject_reason = r->reason;
	} else {
		if (lp->n == lp->cap)
			return; /* sized for every call at the start */
		double ttft = (double)(r->first_token_ns - r->arrival_ns);
		lp->ttft[lp->n] = ttft / 1e6;
		lp->tpot[lp->n] = r->output_tokens > 1
					  ? (double)(r->done_ns - r->first_token_ns) /
						    (double)(r->output_tokens - 1) / 1e6
					  : NAN;
		lp->e2el[lp->n] = (double)(r->done_ns - r->arrival_ns) / 1e6;
		lp->n++;
		lp->in_tokens += (double)r->prompt_tokens;
		lp->out_tokens += (double)r->output_tokens;
	}
	if (r->done_ns > lp->last_done)
		lp->last_done = r->done_ns;
	int *left = user;
	int client = (int)(left - lp->left);
	if (*left > 0)
		lp->err = loop_submit(lp, client, r->done_ns);
}

struct sim_out {
	double ttft_ms, tpot_ms, e2el_ms, output_tok_s, total_tok_s;
	int64_t rejected;
	const char *reject_reason;
};

static double mean_of(const double *v, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return n ? s / (double)n : NAN;
}

/* Pipeline parallelism as the engines run it: pp micro-batches in flight,
 * each the batch of one "virtual engine" (vLLM V0's name; V1's batch queue
 * of pp batches) with its share of the KV cache and of the running
 * sequences.  A virtual engine's step lasts the pipeline cycle of its
 * micro-batch (models/pipeline.h); the simulation runs min(pp, clients) of
 * them as replicas. */
struct pp_engine {
	const struct perf_model *pm;
	int micro_batches;
};

static double pp_step_ns(const void *ctx, const struct perf_batch *b)
{
	const struct pp_engine *e = ctx;
	return pipeline_batch_ns(e->pm, e->micro_batches, b);
}

static double pp_run_ns(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	const struct pp_engine *e = ctx;
	return pipeline_batch_run_ns(e->pm, e->micro_batches, b0, k);
}

static int simulate(const struct perf_model *pm, const struct engine_config *cfg, int clients,
		    int per_client, int64_t in, int64_t out, bool mean, struct sim_out *res,
		    struct diag *d)
{
	struct engine_config vcfg = *cfg;
	/* as many micro-batches as the clients can fill */
	int m = clients < pm->pp ? clients : pm->pp;
	struct pp_engine ppe = { .pm = pm, .micro_batches = m };
	struct sim_perf perf = sim_perf_from_model(pm);
	int32_t replicas = 1;
	if (m > 1) {
		/* the engine's max_num_seqs caps the running sequences of all
		 * micro-batches together (vLLM V1, issue 27462), and the KV
		 * cache holds every micro-batch's sequences */
		replicas = m;
		vcfg.max_num_seqs = (cfg->max_num_seqs + m - 1) / m;
		vcfg.kv_cache_tokens = cfg->kv_cache_tokens / m;
		perf = (struct sim_perf){ .ctx = &ppe, .step_ns = pp_step_ns,
					  .decode_run_ns = pp_run_ns, .work = NULL };
	}
	cfg = &vcfg;
	struct loop lp = { .in = in, .out = out, .block = cfg->block_size, .d = d };
	size_t total = (size_t)clients * (size_t)per_client;
	lp.n_hashes = (in + out) / cfg->block_size;
	lp.left = calloc((size_t)clients, sizeof(int));
	lp.hashes = malloc((size_t)(lp.n_hashes ? lp.n_hashes : 1) * sizeof(uint64_t));
	lp.ttft = malloc(total * sizeof(double));
	lp.tpot = malloc(total * sizeof(double));
	lp.e2el = malloc(total * sizeof(double));
	lp.cap = total;
	int rc = 0;
	if (!lp.left || !lp.hashes || !lp.ttft || !lp.tpot || !lp.e2el)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory for a simulation of %zu calls", total);
	struct res_sink sink = { 0 };
	if (!rc)
		rc = sim_init(&lp.sim, cfg, replicas, perf, sink, loop_done, &lp, d);
	for (int c = 0; c < clients && !rc; c++) {
		lp.left[c] = per_client;
		rc = loop_submit(&lp, c, 0);
	}
	while (!rc) {
		int st = sim_step(&lp.sim, d);
		if (st < 0)
			rc = st == DIAG_EINTERNAL ? diag_set(d, st, "simulator invariant failed") : st;
		else if (st == 0)
			break;
		if (!rc && lp.err)
			rc = lp.err;
	}
	if (!rc)
		rc = sim_check_end(&lp.sim, d);
	if (!rc) {
		double span_s = (double)(lp.last_done - lp.first_arrival) * 1e-9;
		size_t nt = 0;
		for (size_t i = 0; i < lp.n; i++)
			if (!isnan(lp.tpot[i]))
				lp.tpot[nt++] = lp.tpot[i];
		res->ttft_ms = mean ? mean_of(lp.ttft, lp.n) : median_of(lp.ttft, lp.n);
		res->tpot_ms = mean ? mean_of(lp.tpot, nt) : median_of(lp.tpot, nt);
		res->e2el_ms = mean ? mean_of(lp.e2el, lp.n) : median_of(lp.e2el, lp.n);
		res->output_tok_s = span_s > 0 ? lp.out_tokens / span_s : NAN;
		res->total_tok_s = span_s > 0 ? (lp.in_tokens + lp.out_tokens) / span_s : NAN;
		res->rejected = lp.rejected;
		res->reject_reason = lp.reject_reason;
	}
	sim_release(&lp.sim);
	free(lp.left);
	free(lp.hashes);
	free(lp.ttft);
	free(lp.tpot);
	free(lp.e2el);
	return rc;
}

/* Every simulation of one pass, reused by each later row that would run the
 * same one: a serving benchmark gives throughput, TTFT and TPOT rows of one
 * run, and a file may hold a run many times, not always next to each other
 * (SGLang's bench_serving appends every run to its --output-file), so a pass
 * simulates each distinct run once, not once a row.  Open addressing on the
 * key's hash; the table has at least twice as many slots as the pass has
 * rows, and one entry at most a row, so it never fills. */
#define SIM_MEMO_KEY_MAX 512

struct sim_memo_entry {
	char key[SIM_MEMO_KEY_MAX];
	struct sim_out so;
};

struct sim_memo {
	struct sim_memo_entry *e; /* distinct simulations, in the order run */
	size_t n, cap;
	int32_t *slot;            /* index into e, -1 empty */
	size_t n_slots;           /* a power of two, >= 2 x rows */
};

static int sim_memo_init(struct sim_memo *m, size_t rows)
{
	memset(m, 0, sizeof(*m));
	size_t n = 16;
	while (n < 2 * rows)
		n *= 2;
	m->slot = malloc(n * sizeof(*m->slot));
	if (!m->slot)
		return DIAG_ENOMEM;
	for (size_t i = 0; i < n; i++)
		m->slot[i] = -1;
	m->n_slots = n;
	return 0;
}

static void sim_memo_release(struct sim_memo *m)
{
	free(m->e);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

/* The slot holding key, or the empty slot where it goes. */
static size_t sim_memo_slot(const struct sim_memo *m, const char *key)
{
	size_t i = (size_t)hash_str(key, 0) & (m->n_slots - 1);
	while (m->slot[i] >= 0 && strcmp(m->e[m->slot[i]].key, key) != 0)
		i = (i + 1) & (m->n_slots - 1);
	return i;
}

static const struct sim_out *sim_memo_find(const struct sim_memo *m, const char *key)
{
	int32_t k = m->slot[sim_memo_slot(m, key)];
	return k >= 0 ? &m->e[k].so : NULL;
}

static int sim_memo_add(struct sim_memo *m, const char *key, const struct sim_out *so)
{
	assert(2 * (m->n + 1) <= m->n_slots);
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 8;
		struct sim_memo_entry *e = realloc(m->e, cap * sizeof(*e));
		if (!e)
			return DIAG_ENOMEM;
		m->e = e;
		m->cap = cap;
	}
	snprintf(m->e[m->n].key, sizeof(m->e[m->n].key), "%s", key);
	m->e[m->n].so = *so;
	m->slot[sim_memo_slot(m, key)] = (int32_t)m->n;
	m->n++;
	return 0;
}

/* ---- one row ---- */

struct cols {
	int hardware, n_gpus, model, quant, engine, concurrency, in, out, metric, value, unit,
	    kv, notes, provenance, confidence;
};

static int need_col(const struct csvread *t, const char *name, int *out, struct diag *d)
{
	*out = csvread_col(t, name);
	if (*out < 0)
		return diag_at(d, DIAG_EINPUT, t->path, 1, 0,
			       "missing column '%s' (expected hardware, n_gpus, model, quant, "
			       "engine, concurrency, input_tokens, output_tokens, metric, value, unit)",
			       name);
	return 0;
}

/* A whole number >= lo from a cell; -1 when empty. */
static int whole(const struct csvread *t, size_t r, int col, int64_t lo, int64_t *out,
		 struct diag *d)
{
	double v;
	int rc = csvread_number(t, r, col, 1, &v, d);
	if (rc)
		return rc;
	if (isnan(v)) {
		*out = -1;
		return 0;
	}
	if (v != floor(v) || v < (double)lo || v > 1e12)
		return diag_at(d, DIAG_EINPUT, t->path, t->lines[r], 0,
			       "column '%s': '%s' (expected a whole number >= %lld)", t->header[col],
			       csvread_cell(t, r, col), (long long)lo);
	*out = (int64_t)v;
	return 0;
}

static void note(struct validate_row *row, const char *fmt, const char *arg)
{
	size_t n = strlen(row->note);
	snprintf(row->note + n, sizeof(row->note) - n, "%s", n ? "; " : "");
	n = strlen(row->note);
	snprintf(row->note + n, sizeof(row->note) - n, fmt, arg);
}

/* The value of "key=" in a notes cell of " | "-separated items, copied
 * into buf (empty when absent). */
static void notes_value(const char *notes, const char *key, char *buf, size_t size)
{
	buf[0] = '\0';
	const char *p = notes;
	size_t klen = strlen(key);
	while ((p = strstr(p, key)) != NULL) {
		if ((p == notes || (p >= notes + 3 && strncmp(p - 3, " | ", 3) == 0)) &&
		    p[klen] == '=') {
			p += klen + 1;
			const char *end = strstr(p, " | ");
			size_t n = end ? (size_t)(end - p) : strlen(p);
			snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), p);
			return;
		}
		p += klen;
	}
}

/* The provenance and confidence cells of row r (columns optional). */
static int row_labels(const struct csvread *t, size_t r, const struct cols *cl,
		      struct validate_row *row, struct diag *d)
{
	if (cl->provenance >= 0) {
		const char *v = csvread_cell(t, r, cl->provenance);
		int p = VP_UNSTATED;
		while (p <= VP_INFERRED && strcmp(v, provenance_names[p]) != 0)
			p++;
		if (p > VP_INFERRED)
			return diag_at(d, DIAG_EINPUT, t->path, t->lines[r], 0, "column "
				       "'provenance': '%s' (expected original, copy, inferred or "
				       "empty)", v);
		row->provenance = (enum validate_provenance)p;
	}
	if (cl->confidence >= 0) {
		const char *v = csvread_cell(t, r, cl->confidence);
		int c = v[0] ? validate_confidence_parse(v) : VC_UNSTATED;
		if (c < 0)
			return diag_at(d, DIAG_EINPUT, t->path, t->lines[r], 0, "column "
				       "'confidence': '%s' (expected high, medium, low or empty)", v);
		row->confidence = (enum validate_confidence)c;
	}
	return 0;
}

static void skip(struct validate_row *row, const char *why)
{
	row->skipped = true;
	row->predicted = NAN;
	note(row, "skipped: %s", why);
}

/* Decode: c sequences decode `out` tokens after `in` of context. */
static double predict_decode(const struct perf_model *pm, double c, int64_t in, int64_t out)
{
	struct perf_batch b0 = perf_decode_batch((int32_t)c, in);
	double ns = perf_decode_run_ns(pm, &b0, out);
	return c * (double)out / (ns * 1e-9);
}

/* Prefill: c prompts of `in` tokens from empty, `chunk` tokens per step
 * shared evenly among them. */
static double predict_prefill(const struct perf_model *pm, double c, int64_t in, int64_t chunk)
{
	int64_t seqs = (int64_t)c;
	int64_t per = chunk / seqs > 0 ? chunk / seqs : 1;
	double ns = 0;
	for (int64_t done = 0; done < in;) {
		int64_t n = in - done < per ? in - done : per;
		struct perf_batch one = perf_prefill_batch(n, done);
		struct perf_batch b = { .new_tokens = n * seqs, .seqs = (int32_t)seqs,
					.decode_seqs = 0, .attn_pairs = one.attn_pairs * seqs,
					.kv_read_tokens = one.kv_read_tokens * seqs };
		ns += perf_step_ns(pm, &b);
		done += n;
	}
	return c * (double)in / (ns * 1e-9);
}

static int predict_row(struct validate_report *rep, size_t r, const struct cols *cl,
		       const struct validate_opts *o, const struct engine_table *et,
		       struct sim_memo *memo, struct diag *d)
{
	const struct csvread *t = &rep->table;
	struct validate_row *row = &rep->rows[r];
	const struct catalog *cat = o->cat;
	memset(row, 0, sizeof(*row));
	row->index = r;
	row->line = t->lines[r];
	const char *path = t->path;
	long line = row->line;
	const char *hw_name = csvread_cell(t, r, cl->hardware);
	const char *model_name = csvread_cell(t, r, cl->model);
	const char *quant = csvread_cell(t, r, cl->quant);
	const char *etext = csvread_cell(t, r, cl->engine);
	const char *mname = csvread_cell(t, r, cl->metric);
	const char *kv = cl->kv >= 0 && csvread_cell(t, r, cl->kv)[0] ? csvread_cell(t, r, cl->kv)
								       : NULL;
	const struct cat_hardware *hw = catalog_hardware(cat, hw_name);
	if (!hw)
		return diag_at(d, DIAG_EINPUT, path, line, 0, "unknown hardware '%s' (expected a "
			       "catalogue id: agentcap catalog)", hw_name);
	if (!catalog_model(cat, model_name))
		return diag_at(d, DIAG_EINPUT, path, line, 0, "unknown model '%s' (expected a "
			       "catalogue id: agentcap catalog)", model_name);
	if (!catalog_weight_format(cat, quant))
		return diag_at(d, DIAG_EINPUT, path, line, 0, "unknown quant '%s' (expected a "
			       "weight format id: agentcap catalog)", quant);
	int m = 0;
	while (m < VM_COUNT && strcmp(metric_names[m], mname) != 0)
		m++;
	if (m == VM_COUNT)
		return diag_at(d, DIAG_EINPUT, path, line, 0, "unknown metric '%s' (expected "
			       "decode_tok_s, prefill_tok_s, output_throughput_tok_s, "
			       "total_throughput_tok_s, ttft_ms, tpot_ms, itl_ms or e2el_ms)", mname);
	row->metric = (enum validate_metric)m;
	int rc = row_labels(t, r, cl, row, d);
	if (rc)
		return rc;
	int64_t gpus, in, out;
	double conc, value;
	if ((rc = whole(t, r, cl->n_gpus, 1, &gpus, d)) || (rc = whole(t, r, cl->in, 0, &in, d)) ||
	    (rc = whole(t, r, cl->out, 0, &out, d)) ||
	    (rc = csvread_number(t, r, cl->concurrency, 1, &conc, d)) ||
	    (rc = csvread_number(t, r, cl->value, 0, &value, d)))
		return rc;
	if (!(value > 0))
		return diag_at(d, DIAG_EINPUT, path, line, 0, "value %g: expected a positive "
			       "measurement", value);
	if (!isnan(conc) && (conc < 0 || conc != floor(conc) || conc > 1e6))
		return diag_at(d, DIAG_EINPUT, path, line, 0, "concurrency '%s': expected a "
			       "whole number >= 0 or empty", csvread_cell(t, r, cl->concurrency));
	row->measured = value;
	row->concurrency = isnan(conc) ? 0 : conc;
	row->input_tokens = in;
	row->output_tokens = out;
	if (gpus < 1)
		gpus = 1;
	const struct cat_family *fam = hw->family ? hw->family
				       : (hw->device ? hw->device->family : NULL);
	snprintf(row->family, sizeof(row->family), "%s", fam ? fam->id : "?");

	/* the engine as published (notes "engine_as_published=...") may name
	 * a version the engine column leaves out */
	char etext2[512];
	const char *pub = strstr(csvread_cell(t, r, cl->notes), "engine_as_published=");
	if (pub) {
		pub += strlen("engine_as_published=");
		const char *end = strstr(pub, " | ");
		int n = end ? (int)(end - pub) : (int)strlen(pub);
		snprintf(etext2, sizeof(etext2), "%s %.*s", etext, n, pub);
		etext = etext2;
	}
	const struct engine_profile *ep = engine_match(et, etext);
	if (!ep) {
		ep = engine_find(et, ENGINE_DEFAULT_ID);
		note(row, "engine not recognised: %s profile", ENGINE_DEFAULT_ID);
	}
	snprintf(row->engine, sizeof(row->engine), "%s", ep->id);
	const char *notes = csvread_cell(t, r, cl->notes);
	bool layer_split = contains_ci(etext, "layer split") || contains_ci(etext, "pipeline") ||
			   contains_ci(notes, "parallel=layer") || contains_ci(notes, "parallel=pp") ||
			   contains_ci(notes, "parallel=pipeline");
	bool mean = contains_ci(notes, "statistic=mean");
	char unmodelled[160];
	notes_value(notes, "not_modelled", unmodelled, sizeof(unmodelled));
	if (unmodelled[0])
		note(row, "not modelled: %s", unmodelled);
	row->tp = layer_split ? 1 : (int)gpus;
	row->pp = layer_split ? (int)gpus : 1;
	if (o->row_mask && (r >= o->row_mask_n || !o->row_mask[r])) {
		skip(row, "not in this run");
		return 0;
	}

	if (!kv) {
		struct engine_params epp;
		engine_resolve(ep, row->family, &epp);
		const struct cat_weight_format *wf = catalog_weight_format(cat, quant);
		if (epp.fp8_kv_with_fp8_weights && (wf->compute_dtype == CAT_DTYPE_FP8 ||
						    wf->compute_dtype == CAT_DTYPE_FP4)) {
			kv = "fp8";
			note(row, "%s", "FP8 KV cache (the engine's FP8 checkpoints carry one)");
		}
	}
	struct perf_opts po;
	perf_opts_init(&po);
	po.hardware = hw_name;
	po.model = model_name;
	po.weight_format = quant;
	po.kv_dtype = kv;
	po.engine = ep->id;
	po.engines = et;
	po.tp = row->tp;
	po.pp = row->pp;
	/* a board run below its rated power (notes "power_limit_w=W") */
	char plim[32];
	notes_value(notes, "power_limit_w", plim, sizeof(plim));
	if (plim[0]) {
		char *end;
		errno = 0;
		po.power_limit_w = strtod(plim, &end);
		if (errno || end == plim || *end || !(po.power_limit_w > 0))
			return diag_at(d, DIAG_EINPUT, path, line, 0, "power_limit_w '%s' in notes "
				       "(expected watts, a positive number)", plim);
		note(row, "board power limit %s W", plim);
	}
	po.no_flash_attention = fa_off(etext) || fa_off(notes);
	po.engine_build = build_of(etext);
	if (po.engine_build == 0)
		po.engine_build = build_of(notes);
	struct perf_model pm;
	struct diag pd;
	diag_init(&pd);
	if (perf_model_init_opts(&pm, cat, &po, &pd) != 0) {
		skip(row, pd.msg);
		return 0;
	}
	struct engine_params ep_par = pm.engine;
	int64_t chunk = ubatch_of(etext);
	if (chunk == 0)
		chunk = ubatch_of(notes);
	if (chunk == 0)
		chunk = engine_default_chunk(&ep_par, hw);
	double c = row->concurrency >= 1 ? row->concurrency : 1;
	switch (row->metric) {
	case VM_DECODE_TOK_S:
		if (out <= 0) {
			out = 128;
			note(row, "%s", "output_tokens empty: 128 assumed (llama-bench tg128)");
		}
		row->predicted = predict_decode(&pm, c, in > 0 ? in : 0, out);
		return 0;
	case VM_PREFILL_TOK_S:
		if (in <= 0) {
			skip(row, "prefill needs input_tokens");
			return 0;
		}
		row->predicted = predict_prefill(&pm, c, in, chunk);
		return 0;
	case VM_TPOT_MS:
	case VM_ITL_MS:
		if (row->concurrency == 1 && (in < 0 || out <= 0)) {
			/* one sequence: the time per token is a decode step */
			if (out <= 0)
				out = 128;
			note(row, "%s", "one sequence without token counts: decode steps of a "
			     "128-token generation");
			row->predicted = 1e3 / predict_decode(&pm, 1, in > 0 ? in : 0, out);
			return 0;
		}
		break;
	default:
		break;
	}
	if (in <= 0 || out <= 0) {
		skip(row, "a serving metric needs input_tokens and output_tokens to simulate");
		return 0;
	}
	if (o->no_simulation) {
		skip(row, "not simulated in this run");
		return 0;
	}
	row->simulated = true;
	struct mem_opts mo;
	mem_opts_init(&mo);
	mo.hardware = hw_name;
	mo.model = model_name;
	mo.weight_format = quant;
	mo.kv_dtype = kv;
	mo.tp = row->tp;
	mo.pp = row->pp;
	mo.max_num_batched_tokens = chunk;
	mo.mla_expanded = pm.mla_expanded;
	mem_engine_of(&mo.engine, &ep_par, engine_default_max_num_seqs(&ep_par, hw));
	struct mem_plan plan;
	diag_init(&pd);
	if (mem_plan_opts(&plan, cat, &mo, &pd) != 0) {
		skip(row, pd.msg);
		return 0;
	}
	/* the engine settings a replay of this deployment would use: the
	 * profile's defaults for the GPU and the hybrid KV layout of the plan */
	struct engine_config cfg = {
		.max_num_seqs = (int32_t)engine_default_max_num_seqs(&ep_par, hw),
		.max_num_batched_tokens = chunk,
		.block_size = 16,
		.gpu_memory_utilization = mo.gpu_memory_utilization,
		.enable_chunked_prefill = true,
		.enable_prefix_caching = true,
		.max_model_len = in + out + 16,
		.reserve_full_prompt = ep_par.reserve_full_prompt > 0,
	};
	sim_engine_hybrid(&cfg, &plan);
	int clients = row->concurrency >= 1 ? (int)row->concurrency : o->offline_requests;
	int per_client = row->concurrency >= 1 ? o->requests_per_client : 1;
	if (row->concurrency >= 1 && cfg.max_num_seqs < clients)
		cfg.max_num_seqs = clients; /* a benchmark at concurrency c runs c slots */
	struct sim_out so = { 0 };
	char key[SIM_MEMO_KEY_MAX];
	snprintf(key, sizeof(key), "%s|%s|%s|%s|%s|%d|%d|%d|%d|%lld|%lld|%d|%lld|%d|%.17g", hw_name,
		 model_name, quant, kv ? kv : "", ep->id, row->tp, row->pp, clients, per_client,
		 (long long)in, (long long)out, mean, (long long)chunk, (int)cfg.max_num_seqs,
		 pm.power_limit_w);
	const struct sim_out *seen = sim_memo_find(memo, key);
	if (seen) {
		so = *seen;
	} else {
		rc = simulate(&pm, &cfg, clients, per_client, in, out, mean, &so, d);
		if (rc)
			return rc;
		if (sim_memo_add(memo, key, &so) != 0)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		rep->n_simulations++;
	}
	if (so.rejected > 0) {
		skip(row, so.reject_reason ? so.reject_reason : "calls rejected");
		return 0;
	}
	switch (row->metric) {
	case VM_OUTPUT_THROUGHPUT: row->predicted = so.output_tok_s; break;
	case VM_TOTAL_THROUGHPUT: row->predicted = so.total_tok_s; break;
	case VM_TTFT_MS: row->predicted = so.ttft_ms; break;
	case VM_TPOT_MS:
	case VM_ITL_MS: row->predicted = so.tpot_ms; break;
	case VM_E2EL_MS: row->predicted = so.e2el_ms; break;
	default: break;
	}
	return 0;
}

static int family_cmp(const void *a, const void *b)
{
	return strcmp(((const struct validate_group *)a)->key,
		      ((const struct validate_group *)b)->key);
}

static bool in_summary(const struct validate_row *row)
{
	return !row->skipped && !row->excluded;
}

/* Fill g from the summary rows for which `member` holds: n, median and
 * worst APE over all of them, then the median over the original ones.
 * tmp holds n_rows doubles. */
static void group_fill(struct validate_group *g, const struct validate_report *rep,
		       bool (*member)(const struct validate_row *, const char *),
		       const char *key, double *tmp)
{
	size_t n = 0, no = 0;
	double mx = 0;
	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct validate_row *row = &rep->rows[i];
		if (in_summary(row) && member(row, key)) {
			tmp[n++] = row->ape_pct;
			mx = fmax(mx, row->ape_pct);
		}
	}
	g->n = n;
	g->median_ape_pct = median_of(tmp, n);
	g->max_ape_pct = mx;
	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct validate_row *row = &rep->rows[i];
		if (in_summary(row) && member(row, key) && row->provenance == VP_ORIGINAL)
			tmp[no++] = row->ape_pct;
	}
	g->n_original = no;
	g->median_ape_pct_original = median_of(tmp, no);
}

static bool metric_member(const struct validate_row *row, const char *key)
{
	return strcmp(metric_names[row->metric], key) == 0;
}

static bool family_member(const struct validate_row *row, const char *key)
{
	return strcmp(row->family, key) == 0;
}

static int summarize(struct validate_report *rep, struct diag *d)
{
	double *tmp = malloc((rep->n_rows ? rep->n_rows : 1) * sizeof(double));
	rep->families = calloc(rep->n_rows ? rep->n_rows : 1, sizeof(*rep->families));
	if (!tmp || !rep->families) {
		free(tmp);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	for (int m = 0; m < VM_COUNT; m++) {
		struct validate_group g = { 0 };
		group_fill(&g, rep, metric_member, metric_names[m], tmp);
		if (g.n == 0)
			continue;
		snprintf(g.key, sizeof(g.key), "%s", metric_names[m]);
		rep->metrics[rep->n_metrics++] = g;
	}
	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct validate_row *row = &rep->rows[i];
		if (!in_summary(row))
			continue;
		size_t f = 0;
		while (f < rep->n_families && strcmp(rep->families[f].key, row->family) != 0)
			f++;
		if (f == rep->n_families) {
			snprintf(rep->families[f].key, sizeof(rep->families[f].key), "%s", row->family);
			rep->n_families++;
		}
	}
	qsort(rep->families, rep->n_families, sizeof(*rep->families), family_cmp);
	for (size_t f = 0; f < rep->n_families; f++) {
		struct validate_group *g = &rep->families[f];
		char key[CAT_ID_MAX];
		snprintf(key, sizeof(key), "%s", g->key);
		group_fill(g, rep, family_member, key, tmp);
	}
	free(tmp);
	return 0;
}

static int run_table(struct validate_report *rep, const struct validate_opts *o, struct diag *d)
{
	const struct csvread *t = &rep->table;
	struct cols cl;
	int rc;
	if ((rc = need_col(t, "hardware", &cl.hardware, d)) ||
	    (rc = need_col(t, "n_gpus", &cl.n_gpus, d)) || (rc = need_col(t, "model", &cl.model, d)) ||
	    (rc = need_col(t, "quant", &cl.quant, d)) || (rc = need_col(t, "engine", &cl.engine, d)) ||
	    (rc = need_col(t, "concurrency", &cl.concurrency, d)) ||
	    (rc = need_col(t, "input_tokens", &cl.in, d)) ||
	    (rc = need_col(t, "output_tokens", &cl.out, d)) ||
	    (rc = need_col(t, "metric", &cl.metric, d)) || (rc = need_col(t, "value", &cl.value, d)) ||
	    (rc = need_col(t, "unit", &cl.unit, d)))
		return rc;
	cl.kv = csvread_col(t, "kv_dtype");
	cl.notes = csvread_col(t, "notes");
	cl.provenance = csvread_col(t, "provenance");
	cl.confidence = csvread_col(t, "confidence");
	rep->min_confidence = o->min_confidence;
	struct engine_table *own = NULL;
	const struct engine_table *et = o->engines ? o->engines : o->cat->engines;
	if (!et) {
		own = malloc(sizeof(*own));
		if (!own)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		if ((rc = engine_table_load(own, NULL, d))) {
			free(own);
			return rc;
		}
		et = own;
	}
	rep->rows = calloc(t->rows ? t->rows : 1, sizeof(*rep->rows));
	if (!rep->rows)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	struct sim_memo memo = { 0 };
	if (!rc && sim_memo_init(&memo, t->rows) != 0)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	for (size_t r = 0; r < t->rows && !rc; r++) {
		rc = predict_row(rep, r, &cl, o, et, &memo, d);
		if (rc)
			break;
		struct validate_row *row = &rep->rows[r];
		if (!row->skipped && !(row->predicted > 0 && isfinite(row->predicted)))
			skip(row, "the model gave no finite prediction");
		if (row->skipped)
			rep->n_skipped++;
		else
			row->ape_pct = fabs(row->predicted - row->measured) / row->measured * 100;
		if (!row->skipped && row->confidence != VC_UNSTATED &&
		    row->confidence < o->min_confidence) {
			row->excluded = true;
			rep->n_excluded++;
			char why[64];
			snprintf(why, sizeof(why), "excluded: confidence %s, below %s",
				 confidence_names[row->confidence],
				 confidence_names[o->min_confidence]);
			note(row, "%s", why);
		}
		rep->n_rows++;
	}
	sim_memo_release(&memo);
	free(own);
	if (!rc)
		rc = summarize(rep, d);
	return rc;
}

int validate_run(struct validate_report *rep, const char *path, const struct validate_opts *o,
		 struct diag *d)
{
	memset(rep, 0, sizeof(*rep));
	int rc = csvread_load(&rep->table, path, d);
	if (!rc)
		rc = run_table(rep, o, d);
	if (rc)
		validate_release(rep);
	return rc;
}

int validate_run_text(struct validate_report *rep, const char *name, const char *text,
		      size_t len, const struct validate_opts *o, struct diag *d)
{
	memset(rep, 0, sizeof(*rep));
	int rc = csvread_parse(&rep->table, name, text, len, d);
	if (!rc)
		rc = run_table(rep, o, d);
	if (rc)
		validate_release(rep);
	return rc;
}

double validate_median_ape(const struct validate_report *rep, enum validate_metric metric)
{
	for (size_t i = 0; i < rep->n_metrics; i++)
		if (strcmp(rep->metrics[i].key, metric_names[metric]) == 0)
			return rep->metrics[i].median_ape_pct;
	return NAN;
}

double validate_median_ape_original(const struct validate_report *rep,
				    enum validate_metric metric)
{
	for (size_t i = 0; i < rep->n_metrics; i++)
		if (strcmp(rep->metrics[i].key, metric_names[metric]) == 0)
			return rep->metrics[i].median_ape_pct_original;
	return NAN;
}

/* ---- output ---- */

static const char *cell(const struct validate_report *rep, size_t r, const char *col)
{
	return csvread_cell(&rep->table, r, csvread_col(&rep->table, col));
}

/* A summary table: all rows, then the rows of provenance `original`. */
static void write_groups(FILE *out, const char *title, const struct validate_group *g,
			 size_t n)
{
	fprintf(out, "\n%-28s %5s %12s %12s %11s %13s\n", title, "n", "median APE%",
		"worst APE%", "n original", "median orig%");
	for (size_t i = 0; i < n; i++) {
		char orig[32] = "-";
		if (g[i].n_original > 0)
			snprintf(orig, sizeof(orig), "%.1f", g[i].median_ape_pct_original);
		fprintf(out, "%-28s %5zu %12.1f %12.1f %11zu %13s\n", g[i].key, g[i].n,
			g[i].median_ape_pct, g[i].max_ape_pct, g[i].n_original, orig);
	}
}

int validate_write_text(FILE *out, const struct validate_report *rep, struct diag *d)
{
	if (rep->calibration)
		calfile_write_text(out, rep->calibration, NULL, NULL, NULL, 0);
	fprintf(out, "%-5s %-22s %-18s %-12s %-9s %-23s %5s %6s %6s %11s %11s %7s\n", "line",
		"hardware", "model", "quant", "engine", "metric", "conc", "in", "out", "measured",
		"predicted", "APE%");
	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct validate_row *row = &rep->rows[i];
		char conc[16], in[16], outt[16];
		snprintf(conc, sizeof(conc), row->concurrency > 0 ? "%.0f" : "-", row->concurrency);
		snprintf(in, sizeof(in), row->input_tokens >= 0 ? "%lld" : "-",
			 (long long)row->input_tokens);
		snprintf(outt, sizeof(outt), row->output_tokens >= 0 ? "%lld" : "-",
			 (long long)row->output_tokens);
		fprintf(out, "%-5ld %-22.22s %-18.18s %-12.12s %-9.9s %-23s %5s %6s %6s %11.4g ",
			row->line, cell(rep, i, "hardware"), cell(rep, i, "model"),
			cell(rep, i, "quant"), row->engine, metric_names[row->metric], conc, in, outt,
			row->measured);
		if (row->skipped)
			fprintf(out, "%11s %7s  %s\n", "-", "-", row->note);
		else
			fprintf(out, "%11.4g %7.1f%s%s\n", row->predicted, row->ape_pct,
				row->note[0] ? "  " : "", row->note);
	}
	write_groups(out, "metric", rep->metrics, rep->n_metrics);
	write_groups(out, "hardware family", rep->families, rep->n_families);
	fprintf(out, "\n%zu rows, %zu predicted, %zu skipped", rep->n_rows,
		rep->n_rows - rep->n_skipped, rep->n_skipped);
	if (rep->min_confidence != VC_UNSTATED)
		fprintf(out, ", %zu of the predicted excluded (confidence below %s)",
			rep->n_excluded, confidence_names[rep->min_confidence]);
	fputc('\n', out);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the validation table");
	return 0;
}


static void json_num(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.10g", v);
	else
		fputs("null", out);
}

/* A cell as a JSON number when it is one, else as a string. */
static void json_cell(FILE *out, const char *s)
{
	char *end;
	errno = 0;
	double v = s[0] ? strtod(s, &end) : 0;
	if (s[0] && !errno && !*end && isfinite(v))
		json_num(out, v);
	else
		jsonw_str(out, s);
}

static void json_group(FILE *out, const struct validate_group *g, size_t n)
{
	fputs("{", out);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n      " : "\n      ", out);
		jsonw_str(out, g[i].key);
		fprintf(out, ": {\"n\": %zu, \"median_ape_pct\": ", g[i].n);
		json_num(out, g[i].median_ape_pct);
		fputs(", \"max_ape_pct\": ", out);
		json_num(out, g[i].max_ape_pct);
		fprintf(out, ", \"n_original\": %zu, \"median_ape_pct_original\": ",
			g[i].n_original);
		json_num(out, g[i].median_ape_pct_original);
		fputs("}", out);
	}
	fputs(n ? "\n    }" : "}", out);
}

int validate_write_json(FILE *out, const struct validate_report *rep, struct diag *d)
{
	const struct csvread *t = &rep->table;
	fputs("{\n  \"schema_version\": 1,\n", out);
	if (rep->calibration) {
		fputs("  \"calibration\": ", out);
		calfile_write_json(out, rep->calibration, NULL, NULL, NULL, 0);
		fputs(",\n", out);
	}
	fputs("  \"rows\": [", out);
	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct validate_row *row = &rep->rows[i];
		fputs(i ? ",\n    {" : "\n    {", out);
		for (size_t c = 0; c < t->cols; c++) {
			jsonw_str(out, t->header[c]);
			fputs(": ", out);
			json_cell(out, csvread_cell(t, i, (int)c));
			fputs(", ", out);
		}
		fprintf(out, "\"line\": %ld, \"family\": ", row->line);
		jsonw_str(out, row->family);
		fputs(", \"engine_profile\": ", out);
		jsonw_str(out, row->engine);
		fprintf(out, ", \"tp\": %d, \"pp\": %d, \"method\": \"%s\", \"predicted\": ", row->tp,
			row->pp, row->skipped ? "skipped" : row->simulated ? "simulation" : "step");
		json_num(out, row->predicted);
		fputs(", \"measured\": ", out);
		json_num(out, row->measured);
		fputs(", \"ape_pct\": ", out);
		json_num(out, row->skipped ? NAN : row->ape_pct);
		fprintf(out, ", \"excluded\": %s, \"note\": ", row->excluded ? "true" : "false");
		jsonw_str(out, row->note);
		fputs("}", out);
	}
	fputs(rep->n_rows ? "\n  ],\n" : "],\n", out);
	fputs("  \"summary\": {\n    \"per_metric\": ", out);
	json_group(out, rep->metrics, rep->n_metrics);
	fputs(",\n    \"per_family\": ", out);
	json_group(out, rep->families, rep->n_families);
	fprintf(out, ",\n    \"rows\": %zu,\n    \"skipped\": %zu,\n    \"excluded\": %zu,\n"
		"    \"min_confidence\": ", rep->n_rows, rep->n_skipped, rep->n_excluded);
	if (rep->min_confidence == VC_UNSTATED)
		fputs("null", out);
	else
		jsonw_str(out, confidence_names[rep->min_confidence]);
	fputs("\n  }\n}\n", out);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the validation JSON");
	return 0;
}
