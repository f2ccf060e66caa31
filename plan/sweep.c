/* SPDX-License-Identifier: Apache-2.0
 * sweep: a grid of scenario overrides x traces x seeds replayed cell by cell,
 * one JSON row per cell, appended in cell order and resumable (see sweep.h).
 *
 * The grid is parsed whole with cJSON; cJSON keeps no positions, so a
 * message about a value finds its line and column by walking the text again
 * along the value's path (locate), each member and element skipped by
 * letting cJSON parse it in place.  A cell keeps only its family (which
 * overrides), trace and seed; its scenario is loaded and resolved again
 * when it runs, so a grid of many cells holds little memory and cells
 * share nothing mutable.
 */
#define _POSIX_C_SOURCE 200809L
#include "plan/sweep.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/pool.h"
#include "base/textfile.h"
#include "models/catalog.h"
#include "models/cost.h"
#include "models/prices.h"
#include "plan/run.h"
#include "replay/deploy.h"
#include "traces/jsontext.h"
#include "replay/replay.h"
#include "replay/scenario.h"
#include "reports/costing.h"
#include "reports/metrics.h"
#include "reports/output.h"

#include <cjson/cJSON.h>
#include <csv.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes of a trace hashed at a time. */
#define SWEEP_HASH_CHUNK (1u << 20)

/* One override: a dotted scenario key and its value as JSON text, with the
 * value's place in the grid file. */
struct sweep_val {
	char *key;
	char *json;
	long line, col;
};

struct sweep_family {
	const struct sweep_val **v;  /* n overrides, pointing into sw->vals */
	int n;
	uint64_t fp;                 /* fingerprint of the resolved inputs */
};

struct sweep_trace {
	char *shown;                 /* as the grid writes it */
	char *path;                  /* relative to the grid's folder resolved */
	uint64_t hash;               /* of its bytes */
};

struct sweep_cell {
	size_t fam, trace, seed;
	char key[17];
	char *row;                   /* NULL until done */
};

struct sweep {
	const struct catalog *cat;
	char *grid_path;
	char *scenario;              /* NULL: the built-in default */
	struct sweep_val *vals;      /* every override value of the file */
	size_t n_vals;
	struct sweep_val **base;     /* "set": for every cell */
	int n_base;
	struct sweep_family *fam;
	size_t n_fam;
	struct sweep_trace *traces;
	size_t n_traces;
	uint64_t *seeds;
	size_t n_seeds;
	int64_t engineers, days;
	struct prices *prices;       /* "cost": true */
	struct sweep_cell *cells;
	size_t n_cells, n_done;
};

/* ---- positions in the grid text ---- */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* The end of the JSON value at p (NULL if none parses there). */
static const char *skip_value(const char *p)
{
	const char *end = NULL;
	cJSON *v = cJSON_ParseWithOpts(p, &end, 0);
	if (!v)
		return NULL;
	cJSON_Delete(v);
	return end;
}

/* The start of the value at steps[0..n) from the value at p: a step is a
 * member name (key != NULL) or an array index.  NULL if the path is not
 * there. */
struct step {
	const char *key;
	int idx;
};

static const char *locate(const char *p, const struct step *steps, int n)
{
	p = skip_ws(p);
	for (int s = 0; s < n && p; s++) {
		char open = steps[s].key ? '{' : '[', close = steps[s].key ? '}' : ']';
		if (*p != open)
			return NULL;
		p = skip_ws(p + 1);
		for (int i = 0;; i++) {
			if (*p == close || !*p)
				return NULL;
			bool hit = !steps[s].key && i == steps[s].idx;
			if (steps[s].key) {
				const char *end = NULL;
				cJSON *k = cJSON_ParseWithOpts(p, &end, 0);
				if (!k)
					return NULL;
				hit = cJSON_IsString(k) && strcmp(k->valuestring, steps[s].key) == 0;
				cJSON_Delete(k);
				p = skip_ws(end);
				if (*p != ':')
					return NULL;
				p = skip_ws(p + 1);
			}
			if (hit)
				break;
			if (!(p = skip_value(p)))
				return NULL;
			p = skip_ws(p);
			if (*p == ',')
				p = skip_ws(p + 1);
		}
	}
	return p;
}

static void where(const char *text, const struct step *steps, int n, long *line, long *col)
{
	const char *at = locate(text, steps, n);
	if (!at) {
		*line = 1;
		*col = 1;
		return;
	}
	textfile_line_col(text, at, line, col);
}

/* ---- loading ---- */

void sweep_free(struct sweep *sw)
{
	if (!sw)
		return;
	for (size_t i = 0; i < sw->n_vals; i++) {
		free(sw->vals[i].key);
		free(sw->vals[i].json);
	}
	free(sw->vals);
	free(sw->base);
	for (size_t i = 0; i < sw->n_fam; i++)
		free(sw->fam[i].v);
	free(sw->fam);
	for (size_t i = 0; i < sw->n_traces; i++) {
		free(sw->traces[i].shown);
		free(sw->traces[i].path);
	}
	free(sw->traces);
	free(sw->seeds);
	for (size_t i = 0; i < sw->n_cells; i++)
		free(sw->cells[i].row);
	free(sw->cells);
	prices_free(sw->prices);
	free(sw->scenario);
	free(sw->grid_path);
	free(sw);
}

/* p relative to the folder of the grid file (as given when absolute). */
static char *beside(const char *grid, const char *p)
{
	const char *slash = strrchr(grid, '/');
	if (p[0] == '/' || !slash)
		return strdup(p);
	size_t dn = (size_t)(slash - grid) + 1, pn = strlen(p);
	char *out = malloc(dn + pn + 1);
	if (out) {
		memcpy(out, grid, dn);
		memcpy(out + dn, p, pn + 1);
	}
	return out;
}

/* Hash of a file's bytes; 0 or an error naming shown. */
static int hash_file(const char *path, const char *shown, uint64_t *h, const char *grid,
		     long line, long col, struct diag *d)
{
	/* every cell reads its trace again: a pipe or a device would not do
	 * (opened without blocking, so that a FIFO is refused, not waited on) */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return diag_at(d, DIAG_EINPUT, grid, line, col, "cannot open '%s': %s (expected a "
			       "readable file)", shown, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return diag_at(d, DIAG_EINPUT, grid, line, col, "'%s' is not a regular file (expected "
			       "a file: a sweep reads it once per cell)", shown);
	}
	FILE *fp = fdopen(fd, "rb");
	if (!fp) {
		close(fd);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	unsigned char *buf = malloc(SWEEP_HASH_CHUNK);
	if (!buf) {
		fclose(fp);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	uint64_t x = 0x5377656570ULL;
	size_t n;
	while ((n = fread(buf, 1, SWEEP_HASH_CHUNK, fp)) > 0)
		x = hash_bytes(buf, n, x);
	int rc = ferror(fp) ? diag_at(d, DIAG_EINPUT, grid, line, col, "cannot read '%s': %s",
				      shown, strerror(errno))
			    : 0;
	free(buf);
	fclose(fp);
	*h = x;
	return rc;
}

/* A new override value, its place found in text along steps. */
static struct sweep_val *add_val(struct sweep *sw, const char *text, const struct step *steps,
				 int n, const char *key, const cJSON *v, struct diag *d)
{
	struct sweep_val *x = &sw->vals[sw->n_vals];
	x->key = strdup(key);
	x->json = cJSON_PrintUnformatted(v);
	if (!x->key || !x->json) {
		free(x->key);
		free(x->json);
		diag_set(d, DIAG_ENOMEM, "out of memory");
		return NULL;
	}
	where(text, steps, n, &x->line, &x->col);
	sw->n_vals++;
	size_t len = strlen(x->json);
	if (len > SWEEP_MAX_VALUE_BYTES) {
		diag_at(d, DIAG_EINPUT, sw->grid_path, x->line, x->col, "%s: a value of %zu bytes "
			"(expected at most %d: a row repeats every value it sets)", key, len,
			SWEEP_MAX_VALUE_BYTES);
		return NULL;
	}
	return x;
}

/* The scenario of family f (NULL: the base overrides only), loaded, and
 * its deployment built (released by the caller).  On an error in an
 * override, the message is put at that value's place in the grid file. */
static int family_scenario(const struct sweep *sw, const struct sweep_family *f, bool priced,
			   struct scenario *sc, struct deployment *dep, struct diag *d)
{
	int n = sw->n_base + (f ? f->n : 0);
	const struct sweep_val **all = malloc(((size_t)n + 1) * sizeof(*all));
	char **sets = calloc((size_t)n + 1, sizeof(*sets));
	int rc = all && sets ? 0 : diag_set(d, DIAG_ENOMEM, "out of memory");
	for (int i = 0; rc == 0 && i < n; i++) {
		all[i] = i < sw->n_base ? sw->base[i] : f->v[i - sw->n_base];
		size_t len = strlen(all[i]->key) + strlen(all[i]->json) + 2;
		if (!(sets[i] = malloc(len)))
			rc = diag_set(d, DIAG_ENOMEM, "out of memory");
		else
			snprintf(sets[i], len, "%s=%s", all[i]->key, all[i]->json);
	}
	struct diag sd;
	diag_init(&sd);
	if (rc == 0 && (rc = scenario_load(sc, sw->scenario, (const char *const *)sets, n, &sd))) {
		/* "--set KEY=VALUE: why": put it at the value */
		const struct sweep_val *bad = NULL;
		for (int i = 0; i < n && !bad; i++) {
			size_t len = strlen(sets[i]);
			if (strncmp(sd.msg, "--set ", 6) == 0 && strncmp(sd.msg + 6, sets[i], len) == 0 &&
			    sd.msg[6 + len] == ':')
				bad = all[i];
		}
		if (bad) { /* scenario_load's message goes on with the key */
			const char *why = sd.msg + 6 + strlen(bad->key) + 1 + strlen(bad->json) + 1;
			rc = diag_at(d, rc, sw->grid_path, bad->line, bad->col, "%s",
				     why + (*why == ' '));
		} else
			rc = diag_set(d, rc, "%s", sd.msg);
	}
	if (rc == 0)
		rc = deploy_check(sc, DEPLOY_CMD_SWEEP, &sd);
	/* a cell's cost prices one shape of one hardware, as replay --cost */
	if (rc == 0 && priced && sc->n_pools > 0)
		rc = diag_set(&sd, DIAG_EINPUT, "pools: a cell with pools is not priced yet (expected "
			      "no \"cost\" in the grid, or a scenario of one shape)");
	if (rc == 0 && priced && sc->n_backends > 0)
		rc = diag_set(&sd, DIAG_EINPUT, "backends: a cell with API backends is priced by "
			      "agentcap compare (expected no \"cost\" in the grid, or a scenario "
			      "without backends)");
	if (rc == 0) {
		struct deploy_opts o = {.prices = sw->prices};
		rc = deploy_build(dep, sc, sw->cat, &o, NULL, &sd);
	}
	if (rc != 0 && d->code == 0) {
		/* a whole cell's problem: at its first override, naming them all */
		char cell[512] = "";
		size_t at = 0;
		for (int i = sw->n_base; f && i < n && at < sizeof(cell); i++)
			at += (size_t)snprintf(cell + at, sizeof(cell) - at, "%s%s=%s",
					       i > sw->n_base ? ", " : "", all[i]->key, all[i]->json);
		if (f && f->n > 0)
			diag_at(d, rc, sw->grid_path, f->v[0]->line, f->v[0]->col, "the cell %s: %s",
				cell, sd.msg);
		else
			diag_set(d, rc, "%s: %s", sw->grid_path, sd.msg);
	}
	for (int i = 0; sets && i < n; i++)
		free(sets[i]);
	free(sets);
	free(all);
	return rc;
}

/* The fingerprint of one resolved shape: what the replay sees of it beyond
 * the grid's own text. */
static uint64_t shape_fp(const struct scenario *sc, const struct perf_model *pm,
			 const struct engine_config *c)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "%s|%s|%s|%s|%s|tp%d|pp%d|ep%d|r%d|%d|%lld|%lld|%.17g|%d|%d|%lld|%lld|%lld|%lld|"
		 "%lld|%d|%.17g|%.17g|%.17g|%.17g", sc->model, sc->hardware, sc->weight_format,
		 sc->kv_cache_dtype, sc->engine_profile, sc->tensor_parallel_size,
		 sc->pipeline_parallel_size, sc->expert_parallel_size, sc->replicas, c->max_num_seqs,
		 (long long)c->max_num_batched_tokens, (long long)c->block_size,
		 c->gpu_memory_utilization, c->enable_chunked_prefill, c->enable_prefix_caching,
		 (long long)c->kv_cache_tokens, (long long)c->max_model_len,
		 (long long)c->seq_state_tokens, (long long)c->sliding_window_tokens,
		 (long long)c->window_group_blocks, c->reserve_full_prompt, pm->matmul_peak_flops,
		 pm->mem_bw_bytes, sc->slo_ttft_ms, sc->slo_tpot_ms);
	return hash_str(buf, 0x66616d696c79ULL);
}

/* The fingerprint of a family's deployment: its one shape's (as before
 * pools were swept, so rows written then resume), or every pool's. */
static uint64_t resolved_fp(const struct deployment *dep)
{
	const struct deploy_pool *p = &dep->pool[0];
	uint64_t h = shape_fp(&p->sc, &p->pm, &p->cfg);
	for (int32_t i = 1; i < dep->n_pools; i++)
		h = hash_combine(h, shape_fp(&dep->pool[i].sc, &dep->pool[i].pm, &dep->pool[i].cfg));
	return h;
}

static const char *const TOP_KEYS[] = {"scenario", "set", "traces", "seeds", "engineers", "days",
				       "grid", "cells", "cost", NULL};

/* An integer in [lo, hi] at member key of root, or def when absent. */
static int get_int(const cJSON *root, const char *key, int64_t lo, int64_t hi, int64_t def,
		   int64_t *out, const char *text, const char *grid, struct diag *d)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
	*out = def;
	if (!v)
		return 0;
	double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
	if (!(x >= (double)lo && x <= (double)hi && x == floor(x))) {
		long line, col;
		where(text, (struct step[]){{key, 0}}, 1, &line, &col);
		return diag_at(d, DIAG_EINPUT, grid, line, col, "%s: expected an integer %lld..%lld",
			       key, (long long)lo, (long long)hi);
	}
	*out = (int64_t)x;
	return 0;
}

/* Count the override values of the file, for one allocation. */
static size_t count_vals(const cJSON *root)
{
	size_t n = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "set"));
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "grid");
	for (const cJSON *k = g ? g->child : NULL; k; k = k->next)
		n += (size_t)cJSON_GetArraySize(k);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "cells");
	for (const cJSON *e = c ? c->child : NULL; e; e = e->next)
		n += (size_t)cJSON_GetArraySize(e);
	return n;
}

static int load_root(struct sweep *sw, const cJSON *root, const char *text, struct diag *d)
{
	const char *g = sw->grid_path;
	long line, col;
	if (!cJSON_IsObject(root))
		return diag_at(d, DIAG_EINPUT, g, 1, 1, "expected a JSON object (a sweep grid: "
			       "docs/scale.md)");
	/* a key given twice would keep one of its values silently */
	const cJSON *objs[] = {root, cJSON_GetObjectItemCaseSensitive(root, "set"),
			       cJSON_GetObjectItemCaseSensitive(root, "grid")};
	for (int i = 0; i < 3; i++) {
		const cJSON *twice = cJSON_IsObject(objs[i]) ? jsontext_repeated_key(objs[i]) : NULL;
		if (!twice)
			continue;
		struct step st[] = {{i == 1 ? "set" : "grid", 0}, {twice->string, 0}};
		where(text, i ? st : st + 1, i ? 2 : 1, &line, &col);
		return diag_at(d, DIAG_EINPUT, g, line, col, "%s%s: given twice (expected each key "
			       "once)", i == 0 ? "" : i == 1 ? "set." : "grid.", twice->string);
	}
	for (const cJSON *k = root->child; k; k = k->next) {
		bool known = false;
		for (int i = 0; TOP_KEYS[i]; i++)
			known = known || strcmp(k->string, TOP_KEYS[i]) == 0;
		if (!known) {
			where(text, (struct step[]){{k->string, 0}}, 1, &line, &col);
			return diag_at(d, DIAG_EINPUT, g, line, col, "unknown key '%s' (expected one of: "
				       "scenario, set, traces, seeds, engineers, days, grid, cells, cost)",
				       k->string);
		}
	}
	const cJSON *scn = cJSON_GetObjectItemCaseSensitive(root, "scenario");
	if (scn && !cJSON_IsString(scn)) {
		where(text, (struct step[]){{"scenario", 0}}, 1, &line, &col);
		return diag_at(d, DIAG_EINPUT, g, line, col, "scenario: expected a file name");
	}
	if (scn && !(sw->scenario = beside(g, scn->valuestring)))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	const cJSON *grid = cJSON_GetObjectItemCaseSensitive(root, "grid");
	const cJSON *cells = cJSON_GetObjectItemCaseSensitive(root, "cells");
	const cJSON *set = cJSON_GetObjectItemCaseSensitive(root, "set");
	const char *shape_err[][2] = {{"grid", "an object of dotted scenario keys, each with a "
					       "non-empty list of values"},
				      {"cells", "a non-empty list of objects of dotted scenario keys"},
				      {"set", "an object of dotted scenario keys and values"}};
	const cJSON *shape_of[] = {grid, cells, set};
	bool shape_ok[] = {!grid || (cJSON_IsObject(grid) && grid->child),
			   !cells || (cJSON_IsArray(cells) && cells->child),
			   !set || cJSON_IsObject(set)};
	for (int i = 0; i < 3; i++)
		if (shape_of[i] && !shape_ok[i]) {
			where(text, (struct step[]){{shape_err[i][0], 0}}, 1, &line, &col);
			return diag_at(d, DIAG_EINPUT, g, line, col, "%s: expected %s", shape_err[i][0],
				       shape_err[i][1]);
		}
	if (grid && cells) {
		where(text, (struct step[]){{"cells", 0}}, 1, &line, &col);
		return diag_at(d, DIAG_EINPUT, g, line, col, "cells: a grid gives either 'grid' (every "
			       "combination) or 'cells' (a list), not both");
	}
	size_t nv = count_vals(root);
	if (!(sw->vals = calloc(nv + 1, sizeof(*sw->vals))))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	/* set: the base overrides */
	int n_set = set ? cJSON_GetArraySize(set) : 0;
	if (!(sw->base = calloc((size_t)n_set + 1, sizeof(*sw->base))))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	for (const cJSON *k = set ? set->child : NULL; k; k = k->next) {
		struct step st[] = {{"set", 0}, {k->string, 0}};
		if (!(sw->base[sw->n_base] = add_val(sw, text, st, 2, k->string, k, d)))
			return d->code;
		sw->n_base++;
	}
	/* the families */
	if (grid) {
		int nd = cJSON_GetArraySize(grid);
		if (nd > SWEEP_MAX_KEYS) {
			where(text, (struct step[]){{"grid", 0}}, 1, &line, &col);
			return diag_at(d, DIAG_EINPUT, g, line, col, "grid: %d keys (expected at most %d)",
				       nd, SWEEP_MAX_KEYS);
		}
		size_t first[SWEEP_MAX_KEYS], len[SWEEP_MAX_KEYS];
		size_t total = 1;
		int k = 0;
		for (const cJSON *dim = grid->child; dim; dim = dim->next, k++) {
			struct step st[] = {{"grid", 0}, {dim->string, 0}, {NULL, 0}};
			if (!cJSON_IsArray(dim) || !dim->child) {
				where(text, st, 2, &line, &col);
				return diag_at(d, DIAG_EINPUT, g, line, col, "grid.%s: expected a non-empty "
					       "list of values", dim->string);
			}
			first[k] = sw->n_vals;
			len[k] = (size_t)cJSON_GetArraySize(dim);
			int i = 0;
			for (const cJSON *v = dim->child; v; v = v->next, i++) {
				st[2].idx = i;
				if (!add_val(sw, text, st, 3, dim->string, v, d))
					return d->code;
			}
			if (total > SWEEP_MAX_CELLS / len[k])
				return diag_at(d, DIAG_EINPUT, g, 1, 1, "grid: more than %d combinations",
					       SWEEP_MAX_CELLS);
			total *= len[k];
		}
		if (!(sw->fam = calloc(total, sizeof(*sw->fam))))
			return diag_set(d, DIAG_ENOMEM, "out of memory for %zu cells", total);
		for (size_t f = 0; f < total; f++) {
			struct sweep_family *fa = &sw->fam[sw->n_fam++];
			if (!(fa->v = calloc((size_t)nd, sizeof(*fa->v))))
				return diag_set(d, DIAG_ENOMEM, "out of memory");
			fa->n = nd;
			size_t r = f;
			for (int j = nd - 1; j >= 0; j--) { /* the last key varies fastest */
				fa->v[j] = &sw->vals[first[j] + r % len[j]];
				r /= len[j];
			}
		}
	} else if (cells) {
		size_t nc = (size_t)cJSON_GetArraySize(cells);
		if (!(sw->fam = calloc(nc, sizeof(*sw->fam))))
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		int i = 0;
		for (const cJSON *c = cells->child; c; c = c->next, i++) {
			struct step st[] = {{"cells", 0}, {NULL, i}, {NULL, 0}};
			int nk = cJSON_GetArraySize(c);
			if (!cJSON_IsObject(c) || nk > SWEEP_MAX_KEYS) {
				where(text, st, 2, &line, &col);
				return diag_at(d, DIAG_EINPUT, g, line, col, "cells[%d]: expected an object "
					       "of at most %d dotted scenario keys", i, SWEEP_MAX_KEYS);
			}
			const cJSON *twice = jsontext_repeated_key(c);
			if (twice) {
				where(text, st, 2, &line, &col);
				return diag_at(d, DIAG_EINPUT, g, line, col, "cells[%d].%s: given twice "
					       "(expected each key once)", i, twice->string);
			}
			struct sweep_family *fa = &sw->fam[sw->n_fam++];
			if (!(fa->v = calloc((size_t)nk + 1, sizeof(*fa->v))))
				return diag_set(d, DIAG_ENOMEM, "out of memory");
			for (const cJSON *k = c->child; k; k = k->next) {
				st[2].key = k->string;
				if (!(fa->v[fa->n++] = add_val(sw, text, st, 3, k->string, k, d)))
					return d->code;
			}
		}
	} else {
		if (!(sw->fam = calloc(1, sizeof(*sw->fam))))
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		sw->n_fam = 1;
	}
	/* traces */
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(root, "traces");
	int nt = tr && cJSON_IsArray(tr) ? cJSON_GetArraySize(tr) : 0;
	if (nt < 1 || nt > SWEEP_MAX_TRACES) {
		if (tr)
			where(text, (struct step[]){{"traces", 0}}, 1, &line, &col);
		else
			line = 1, col = 1;
		return diag_at(d, DIAG_EINPUT, g, line, col, "traces: expected a list of 1..%d trace "
			       "files", SWEEP_MAX_TRACES);
	}
	if (!(sw->traces = calloc((size_t)nt, sizeof(*sw->traces))))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	int i = 0;
	for (const cJSON *t = tr->child; t; t = t->next, i++) {
		where(text, (struct step[]){{"traces", 0}, {NULL, i}}, 2, &line, &col);
		if (!cJSON_IsString(t) || !t->valuestring[0])
			return diag_at(d, DIAG_EINPUT, g, line, col, "traces[%d]: expected a file name", i);
		struct sweep_trace *x = &sw->traces[sw->n_traces++];
		if (!(x->shown = strdup(t->valuestring)) || !(x->path = beside(g, t->valuestring)))
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		int rc = hash_file(x->path, x->shown, &x->hash, g, line, col, d);
		if (rc != 0)
			return rc;
	}
	/* seeds */
	const cJSON *se = cJSON_GetObjectItemCaseSensitive(root, "seeds");
	int ns = se ? (cJSON_IsArray(se) ? cJSON_GetArraySize(se) : -1) : 1;
	if (ns < 1 || ns > SWEEP_MAX_SEEDS) {
		where(text, (struct step[]){{"seeds", 0}}, 1, &line, &col);
		return diag_at(d, DIAG_EINPUT, g, line, col, "seeds: expected a list of 1..%d "
			       "non-negative integers", SWEEP_MAX_SEEDS);
	}
	if (!(sw->seeds = calloc((size_t)ns, sizeof(*sw->seeds))))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	if (!se) {
		sw->seeds[0] = 1;
		sw->n_seeds = 1;
	}
	i = 0;
	for (const cJSON *s = se ? se->child : NULL; s; s = s->next, i++) {
		double x = cJSON_IsNumber(s) ? s->valuedouble : -1;
		if (!(x >= 0 && x <= 9007199254740992.0 && x == floor(x))) {
			where(text, (struct step[]){{"seeds", 0}, {NULL, i}}, 2, &line, &col);
			return diag_at(d, DIAG_EINPUT, g, line, col, "seeds[%d]: expected an integer "
				       "0..2^53", i);
		}
		sw->seeds[sw->n_seeds++] = (uint64_t)x;
	}
	int rc = get_int(root, "engineers", 1, 1000000, 0, &sw->engineers, text, g, d);
	if (rc == 0)
		rc = get_int(root, "days", 0, 1000000, 0, &sw->days, text, g, d);
	if (rc == 0 && sw->days && !sw->engineers) {
		where(text, (struct step[]){{"days", 0}}, 1, &line, &col);
		rc = diag_at(d, DIAG_EINPUT, g, line, col, "days: needs engineers (a team resampled "
			     "from each trace)");
	}
	if (rc != 0)
		return rc;
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(root, "cost");
	if (cost && !cJSON_IsBool(cost)) {
		where(text, (struct step[]){{"cost", 0}}, 1, &line, &col);
		return diag_at(d, DIAG_EINPUT, g, line, col, "cost: expected true or false");
	}
	return cJSON_IsTrue(cost) ? 1 : 0; /* 1: price the cells */
}

struct key_ix {
	const char *key;
	size_t i;
};

static int cmp_key_ix(const void *a, const void *b)
{
	const struct key_ix *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The same inputs twice would be one replay under two rows. */
static int check_repeats(const struct sweep *sw, struct diag *d)
{
	struct key_ix *ix = malloc((sw->n_cells + 1) * sizeof(*ix));
	if (!ix)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	for (size_t i = 0; i < sw->n_cells; i++)
		ix[i] = (struct key_ix){sw->cells[i].key, i};
	qsort(ix, sw->n_cells, sizeof(*ix), cmp_key_ix);
	int rc = 0;
	for (size_t k = 1; rc == 0 && k < sw->n_cells; k++) {
		size_t i = ix[k].i, j = ix[k - 1].i;
		if (strcmp(ix[k].key, ix[k - 1].key) != 0)
			continue;
		const struct sweep_family *f = &sw->fam[sw->cells[i].fam];
		long line = f->n ? f->v[0]->line : 1, col = f->n ? f->v[0]->col : 1;
		rc = diag_at(d, DIAG_EINPUT, sw->grid_path, line, col, "cell %zu repeats cell %zu (the "
			     "same scenario, overrides, trace and seed; expected each cell once)", i, j);
	}
	free(ix);
	return rc;
}

int sweep_load(struct sweep **out, const char *path, const struct catalog *cat, struct diag *d)
{
	*out = NULL;
	struct sweep *sw = calloc(1, sizeof(*sw));
	if (!sw || !(sw->grid_path = strdup(path))) {
		free(sw);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	sw->cat = cat;
	char *text = textfile_read(path, SWEEP_MAX_GRID_BYTES, "a sweep grid", d);
	if (!text) {
		sweep_free(sw);
		return d->code;
	}
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
	int rc = 0;
	if (!root) {
		long line, col;
		const char *at = end ? end : text;
		textfile_line_col(text, at, &line, &col);
		int n = 0;
		while (n < 16 && at[n] && at[n] != '\n')
			n++;
		rc = diag_at(d, DIAG_EINPUT, path, line, col, "malformed JSON at '%.*s' (expected a "
			     "sweep grid: docs/scale.md)", n, at);
	}
	bool priced = false;
	if (rc == 0) {
		rc = load_root(sw, root, text, d);
		priced = rc == 1;
		if (rc == 1)
			rc = 0;
	}
	cJSON_Delete(root);
	/* the count first: a grid too large is refused before any of it is
	 * resolved */
	size_t n = sw->n_fam * sw->n_traces * sw->n_seeds;
	if (rc == 0 && n > SWEEP_MAX_CELLS)
		rc = diag_at(d, DIAG_EINPUT, path, 1, 1, "%zu cells (expected at most %d)", n,
			     SWEEP_MAX_CELLS);
	for (size_t f = 0; rc == 0 && f < sw->n_fam; f++) {
		size_t bytes = 0;
		for (int i = 0; i < sw->fam[f].n; i++)
			bytes += strlen(sw->fam[f].v[i]->key) + strlen(sw->fam[f].v[i]->json) + 4;
		if (bytes > SWEEP_MAX_CELL_SET_BYTES)
			rc = diag_at(d, DIAG_EINPUT, path, sw->fam[f].v[0]->line, sw->fam[f].v[0]->col,
				     "a cell setting %zu bytes of values (expected at most %d: a row "
				     "repeats every value it sets)", bytes, SWEEP_MAX_CELL_SET_BYTES);
	}
	/* every family loads, resolves and fits, before anything runs */
	struct scenario *sc = rc == 0 ? malloc(sizeof(*sc)) : NULL;
	if (rc == 0 && !sc)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	uint64_t scen_hash = 0;
	if (rc == 0 && sw->scenario)
		rc = hash_file(sw->scenario, sw->scenario, &scen_hash, path, 1, 1, d);
	for (size_t f = 0; rc == 0 && f < sw->n_fam; f++) {
		struct deployment dep;
		rc = family_scenario(sw, &sw->fam[f], priced, sc, &dep, d);
		if (rc != 0)
			break;
		uint64_t h = hash_combine(scen_hash, resolved_fp(&dep));
		for (int i = 0; i < sw->n_base; i++)
			h = hash_combine(hash_str(sw->base[i]->json, hash_str(sw->base[i]->key, h)), 1);
		for (int i = 0; i < sw->fam[f].n; i++)
			h = hash_combine(hash_str(sw->fam[f].v[i]->json,
						  hash_str(sw->fam[f].v[i]->key, h)), 2);
		sw->fam[f].fp = h;
		if (priced && !sw->prices)
			rc = prices_load(&sw->prices, sc->prices[0] ? sc->prices : NULL, d);
		/* each family's elastic row fits its hardware, before any cell runs */
		if (rc == 0 && priced && catalog_hardware(sw->cat, sc->hardware))
			rc = cost_gpu_hour_row_check(sw->prices, catalog_hardware(sw->cat, sc->hardware),
						     sc->cost.gpu_hour_row, d);
		deploy_release(&dep);
	}
	free(sc);
	if (rc == 0 && !(sw->cells = calloc(n, sizeof(*sw->cells))))
		rc = diag_set(d, DIAG_ENOMEM, "out of memory for %zu cells", n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct sweep_cell *c = &sw->cells[i];
		c->seed = i % sw->n_seeds;
		c->trace = (i / sw->n_seeds) % sw->n_traces;
		c->fam = i / (sw->n_seeds * sw->n_traces);
		const struct sweep_trace *t = &sw->traces[c->trace];
		uint64_t h = hash_combine(sw->fam[c->fam].fp, t->hash);
		h = hash_str(t->shown, h);
		h = hash_combine(h, sw->seeds[c->seed]);
		h = hash_combine(hash_combine(h, (uint64_t)sw->engineers), (uint64_t)sw->days);
		h = hash_combine(h, priced);
		snprintf(c->key, sizeof(c->key), "%016" PRIx64, h);
		sw->n_cells++;
	}
	if (rc == 0)
		rc = check_repeats(sw, d);
	free(text);
	if (rc != 0) {
		sweep_free(sw);
		return rc;
	}
	*out = sw;
	return 0;
}

size_t sweep_cells(const struct sweep *sw)
{
	return sw->n_cells;
}

size_t sweep_done(const struct sweep *sw)
{
	return sw->n_done;
}

bool sweep_cell_done(const struct sweep *sw, size_t cell)
{
	return cell < sw->n_cells && sw->cells[cell].row != NULL;
}

const char *sweep_cell_key(const struct sweep *sw, size_t cell)
{
	return sw->cells[cell].key;
}

const char *sweep_row(const struct sweep *sw, size_t cell)
{
	return cell < sw->n_cells ? sw->cells[cell].row : NULL;
}

/* ---- one cell ---- */

static void put_num(FILE *fp, const char *key, double x)
{
	if (isfinite(x))
		fprintf(fp, ",\"%s\":%.17g", key, x);
	else
		fprintf(fp, ",\"%s\":null", key);
}

static void put_stats(FILE *fp, const char *key, const struct metrics_stats *s)
{
	fprintf(fp, ",\"%s\":{", key);
	const double v[] = {s->mean, s->median, s->p90, s->p95, s->p99};
	static const char *const k[] = {"mean", "p50", "p90", "p95", "p99"};
	for (int i = 0; i < 5; i++) {
		if (isfinite(v[i]))
			fprintf(fp, "%s\"%s\":%.17g", i ? "," : "", k[i], v[i]);
		else
			fprintf(fp, "%s\"%s\":null", i ? "," : "", k[i]);
	}
	fputc('}', fp);
}

static void put_str(FILE *fp, const char *s)
{
	cJSON *v = cJSON_CreateString(s);
	char *t = v ? cJSON_PrintUnformatted(v) : NULL;
	fputs(t ? t : "null", fp);
	cJSON_free(t);
	cJSON_Delete(v);
}

/* USD per accepted task under purchase, dedicated and elastic rental of the
 * cell's deployment (NAN where the catalogue has no price, or, bought,
 * where the hardware has no power figure), as replay --cost prices a run
 * (run_cost: the same month, the cluster's provisioned GPU-hours). */
static int cell_cost(const struct sweep *sw, const struct scenario *sc,
		     const struct run_result *res, int64_t engineers, int64_t days, double usd[3],
		     struct diag *d)
{
	for (int k = 0; k < 3; k++)
		usd[k] = NAN;
	struct costing *c = malloc(sizeof(*c));
	if (!c)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	int rc = run_cost(c, sw->prices, sw->cat, sc, res, engineers, days, d);
	for (size_t i = 0; rc == 0 && i < c->n; i++)
		if (c->r[i].option <= COST_ELASTIC)
			usd[c->r[i].option] = c->r[i].usd_per_accepted_task;
	free(c);
	return rc;
}

/* The row of a replayed cell. */
static int cell_row(const struct sweep *sw, size_t i, const struct deployment *dep,
		    const struct run_result *res, int64_t team_engineers, int64_t team_days,
		    char **row, struct diag *d)
{
	const struct scenario *top = dep->sc, *sc = &dep->pool[0].sc;
	const struct engine_config *cfg = &dep->pool[0].cfg;
	const struct metrics_summary *s = &res->sum;
	const struct replay_stats *st = &res->st;
	const struct sweep_cell *c = &sw->cells[i];
	const struct sweep_family *f = &sw->fam[c->fam];
	double usd[3];
	int rc = sw->prices ? cell_cost(sw, sc, res, team_engineers, team_days, usd, d) : 0;
	if (rc != 0)
		return rc;
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	if (!fp)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	fprintf(fp, "{\"cell\":%zu,\"key\":\"%s\",\"set\":{", i, c->key);
	for (int k = 0; k < f->n; k++) {
		fputs(k ? "," : "", fp);
		put_str(fp, f->v[k]->key);
		fprintf(fp, ":%s", f->v[k]->json);
	}
	fprintf(fp, "},\"trace\":");
	put_str(fp, sw->traces[c->trace].shown);
	fprintf(fp, ",\"seed\":%" PRIu64, sw->seeds[c->seed]);
	if (sw->engineers)
		fprintf(fp, ",\"engineers\":%lld,\"days\":%lld", (long long)st->scale.engineers,
			(long long)st->scale.days);
	fprintf(fp, ",\"scenario\":");
	put_str(fp, top->name);
	fprintf(fp, ",\"hardware\":");
	put_str(fp, sc->hardware);
	fprintf(fp, ",\"model\":");
	put_str(fp, sc->model);
	fprintf(fp, ",\"tp\":%d,\"pp\":%d,\"replicas\":%d,\"kv_cache_tokens\":%lld,"
		"\"calls\":%lld,\"completed\":%lld,\"failed\":%lld", sc->tensor_parallel_size,
		sc->pipeline_parallel_size, deploy_replicas(dep, NULL), (long long)cfg->kv_cache_tokens,
		(long long)(s->completed + s->failed), (long long)s->completed, (long long)s->failed);
	if (dep->pooled) { /* the lines above describe pools[0]; each pool here */
		fprintf(fp, ",\"pools\":[");
		for (int32_t k = 0; k < dep->n_pools; k++) {
			const struct deploy_pool *p = &dep->pool[k];
			fprintf(fp, "%s{\"name\":", k ? "," : "");
			put_str(fp, p->sc.name);
			fprintf(fp, ",\"hardware\":");
			put_str(fp, p->sc.hardware);
			fprintf(fp, ",\"model\":");
			put_str(fp, p->sc.model);
			fprintf(fp, ",\"tp\":%d,\"pp\":%d,\"replicas\":%d,\"kv_cache_tokens\":%lld}",
				p->sc.tensor_parallel_size, p->sc.pipeline_parallel_size,
				p->sc.replicas, (long long)p->cfg.kv_cache_tokens);
		}
		fputc(']', fp);
	}
	if (res->bk) { /* calls each API backend served */
		fprintf(fp, ",\"api_calls\":{");
		for (int32_t k = 0; k + 1 < res->bsum.n; k++) {
			fputs(k ? "," : "", fp);
			put_str(fp, top->backends[k].name);
			fprintf(fp, ":%lld", (long long)res->bsum.rows[k + 1].calls);
		}
		fputc('}', fp);
	}
	put_stats(fp, "ttft_ms", &s->ttft_ms);
	put_stats(fp, "tpot_ms", &s->tpot_ms);
	put_stats(fp, "e2el_ms", &s->e2el_ms);
	put_num(fp, "request_throughput", s->request_throughput);
	put_num(fp, "output_throughput", s->output_throughput);
	put_num(fp, "request_goodput", s->request_goodput);
	put_num(fp, "slo_attainment", s->slo_attainment);
	put_num(fp, "slo_attainment_target", top->slo_attainment);
	struct report_meta meta = {.slo_ttft_ms = top->slo_ttft_ms, .slo_tpot_ms = top->slo_tpot_ms,
				   .slo_attainment_target = top->slo_attainment};
	fprintf(fp, ",\"answer\":\"%s\"", report_answer_no(&meta, s) ? "no" : "yes");
	put_num(fp, "gpu_busy_fraction", s->gpu_busy_fraction);
	put_num(fp, "prefix_cache_hit_rate", s->prefix_cache_hit_rate);
	if (sc->kv_tiers.host_gb > 0) { /* of the cached tokens, those loaded from each tier */
		fprintf(fp, ",\"tier_cached_tokens\":{\"host\":%lld",
			(long long)s->tier_cached_tokens[0]);
		if (sc->kv_tiers.disk_gb > 0)
			fprintf(fp, ",\"disk\":%lld", (long long)s->tier_cached_tokens[1]);
		fputc('}', fp);
	}
	fprintf(fp, ",\"preemptions\":%lld", (long long)s->preemptions);
	put_num(fp, "duration_s", s->duration_s);
	if (sw->prices) {
		fprintf(fp, ",\"usd_per_accepted_task\":{");
		static const char *const opt[] = {"purchase", "dedicated", "elastic"};
		for (int k = 0; k < 3; k++) {
			if (isfinite(usd[k]))
				fprintf(fp, "%s\"%s\":%.17g", k ? "," : "", opt[k], usd[k]);
			else
				fprintf(fp, "%s\"%s\":null", k ? "," : "", opt[k]);
		}
		fputc('}', fp);
	}
	fputs("}\n", fp);
	bool failed = ferror(fp) != 0;
	if (fclose(fp) != 0 || failed) {
		free(text);
		return diag_set(d, DIAG_ENOMEM, "cell %zu: out of memory for its row", i);
	}
	if (len > SWEEP_MAX_ROW_BYTES) {
		free(text);
		return diag_set(d, DIAG_EINPUT, "cell %zu: its row is %zu bytes (expected at most %d: "
				"shorter trace paths or grid values)", i, len, SWEEP_MAX_ROW_BYTES);
	}
	*row = text;
	return 0;
}

int sweep_cell_run(const struct sweep *sw, size_t i, char **row, struct diag *d)
{
	*row = NULL;
	if (i >= sw->n_cells)
		return diag_set(d, DIAG_EINTERNAL, "sweep: no cell %zu", i);
	const struct sweep_cell *c = &sw->cells[i];
	uint64_t seed = sw->seeds[c->seed];
	struct scenario *sc = malloc(sizeof(*sc));
	struct run_result *res = malloc(sizeof(*res));
	int rc = sc && res ? 0 : diag_set(d, DIAG_ENOMEM, "out of memory");
	struct deployment dep;
	bool built = false, ran = false;
	int64_t team_days = 0, team_engineers = 0;
	if (rc == 0) {
		rc = family_scenario(sw, &sw->fam[c->fam], sw->prices != NULL, sc, &dep, d);
		built = rc == 0;
	}
	if (rc == 0) {
		struct run_setup rs = {
			.dep = &dep,
			.replay = {.trace_path = sw->traces[c->trace].path, .seed = seed,
				   .scale = {.engineers = sw->engineers, .days = sw->days,
					     .seed = seed}},
		};
		rc = run_replay(&rs, res, d);
		ran = true;
		/* a month as replay --cost counts it (0: round-the-clock) */
		if (rc == 0 && sw->prices)
			rc = replay_month_days(&rs.replay, &res->st, &team_days, &team_engineers, d);
	}
	if (rc == 0)
		rc = cell_row(sw, i, &dep, res, team_engineers, team_days, row, d);
	if (ran)
		run_release(res);
	if (built)
		deploy_release(&dep);
	free(res);
	free(sc);
	return rc;
}

/* The "key" of a row line (len bytes), or false. */
static bool row_key(const char *line, size_t len, char key[17], int64_t *cell)
{
	cJSON *v = cJSON_ParseWithLength(line, len);
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(v, "key");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(v, "cell");
	bool ok = cJSON_IsString(k) && strlen(k->valuestring) == 16 && cJSON_IsNumber(c);
	if (ok) {
		memcpy(key, k->valuestring, 17);
		*cell = (int64_t)c->valuedouble;
	}
	cJSON_Delete(v);
	return ok;
}

int sweep_cell_take(struct sweep *sw, size_t cell, char *row, struct diag *d)
{
	char key[17];
	int64_t at;
	size_t len = strlen(row);
	if (cell >= sw->n_cells || !row_key(row, len, key, &at) ||
	    strcmp(key, sw->cells[cell].key) != 0) {
		free(row);
		return diag_set(d, DIAG_EINPUT, "a row given for cell %zu is not that cell's", cell);
	}
	if (!sw->cells[cell].row)
		sw->n_done++;
	free(sw->cells[cell].row);
	sw->cells[cell].row = row;
	return 0;
}

/* ---- output ---- */

/* The cell whose key is key, or SIZE_MAX.  Cells hold keys in cell order;
 * a row's own "cell" is tried first (the usual case), then all. */
static size_t cell_of(const struct sweep *sw, const char *key, int64_t hint)
{
	if (hint >= 0 && (size_t)hint < sw->n_cells && strcmp(sw->cells[hint].key, key) == 0)
		return (size_t)hint;
	for (size_t i = 0; i < sw->n_cells; i++)
		if (strcmp(sw->cells[i].key, key) == 0)
			return i;
	return SIZE_MAX;
}

/* The start of every row a sweep writes (cell_row). */
#define ROW_HEAD "{\"cell\":"

/* Whether s[0..n) can be the start of a row whose write was cut short: a
 * prefix of a row's opening, or a row's opening and more, and no NUL. */
static bool torn_row(const char *s, size_t n)
{
	size_t h = sizeof(ROW_HEAD) - 1;
	if (memcmp(s, ROW_HEAD, n < h ? n : h) != 0)
		return false;
	return memchr(s, '\0', n) == NULL;
}

/* One complete line of the file (len bytes, no newline) as a row of this
 * sweep, taken into its cell. */
static int take_row(struct sweep_out *o, struct sweep *sw, const char *text, size_t len, long line,
		    struct diag *d)
{
	char key[17];
	int64_t hint;
	size_t cell = SIZE_MAX;
	if (memchr(text, '\0', len) || !row_key(text, len, key, &hint))
		return diag_at(d, DIAG_EINPUT, o->path, line, 0, "not a sweep row (expected the "
			       "output of a sweep; a row is one JSON object with its \"key\")");
	if ((cell = cell_of(sw, key, hint)) == SIZE_MAX)
		return diag_at(d, DIAG_EINPUT, o->path, line, 0, "a row of another sweep: key %s "
			       "is no cell of this grid (expected the output of this grid: its "
			       "scenario, traces, seeds or the catalogue changed; write to another "
			       "file)", key);
	if (sw->cells[cell].row)
		return diag_at(d, DIAG_EINPUT, o->path, line, 0, "cell %zu (key %s) a second time",
			       cell, key);
	char *row = strndup(text, len + 1);
	if (!row)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	o->kept++;
	return sweep_cell_take(sw, cell, row, d);
}

/* Read the rows already in the regular file at fd, a line at a time (never
 * more than two rows' worth of it in memory).  A file that is not this
 * sweep's rows is refused untouched; only a last line that is the start of
 * a row (its write cut short) is dropped. */
static int read_rows(struct sweep_out *o, struct sweep *sw, struct diag *d)
{
	struct stat st;
	if (fstat(o->fd, &st) != 0)
		return diag_set(d, DIAG_EIO, "%s: cannot read: %s", o->path, strerror(errno));
	if (st.st_size == 0)
		return 0;
	if ((uint64_t)st.st_size > (uint64_t)SWEEP_MAX_CELLS * SWEEP_MAX_ROW_BYTES)
		return diag_set(d, DIAG_EINPUT, "%s: larger than a sweep's rows can be (expected the "
				"output of this grid)", o->path);
	const size_t cap = 2 * (size_t)SWEEP_MAX_ROW_BYTES + 2;
	char *buf = malloc(cap);
	if (!buf)
		return diag_set(d, DIAG_ENOMEM, "out of memory for %s", o->path);
	int64_t n = (int64_t)st.st_size, at = 0, done = 0; /* read; kept up to */
	size_t have = 0;
	long line = 1;
	int rc = 0;
	bool torn = false;
	while (rc == 0 && done < n) {
		while (have < cap - 1 && at < n) {
			ssize_t r = pread(o->fd, buf + have, cap - 1 - have, (off_t)at);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				rc = diag_set(d, DIAG_EIO, "%s: cannot read: %s", o->path,
					      strerror(r < 0 ? errno : EIO));
				break;
			}
			have += (size_t)r;
			at += r;
		}
		if (rc != 0)
			break;
		size_t pos = 0;
		for (;;) {
			char *nl = memchr(buf + pos, '\n', have - pos);
			size_t len = nl ? (size_t)(nl - (buf + pos)) : have - pos;
			if (len > SWEEP_MAX_ROW_BYTES) {
				rc = diag_at(d, DIAG_EINPUT, o->path, line, 0, "a line of more than %d "
					     "bytes: not a sweep row (expected the output of a sweep)",
					     SWEEP_MAX_ROW_BYTES);
				break;
			}
			if (!nl)
				break;
			if ((rc = take_row(o, sw, buf + pos, len, line, d)) != 0)
				break;
			pos += len + 1;
			done += (int64_t)len + 1;
			line++;
		}
		if (rc != 0)
			break;
		if (pos == 0 && at == n) {
			/* no newline in what is left: the end of the file */
			if (!torn_row(buf, have))
				rc = diag_at(d, DIAG_EINPUT, o->path, line, 0, "not a sweep row, and "
					     "no newline after it (expected the output of a sweep; "
					     "nothing was changed)");
			torn = true;
			break;
		}
		memmove(buf, buf + pos, have - pos);
		have -= pos;
	}
	free(buf);
	if (rc != 0)
		return rc;
	o->size = done;
	if (torn && done < n) {
		/* a row whose write was cut short: no half-written row stays */
		if (ftruncate(o->fd, (off_t)done) != 0)
			return diag_set(d, DIAG_EIO, "%s: cannot drop the torn last line: %s", o->path,
					strerror(errno));
		o->torn = 1;
	}
	return 0;
}

int sweep_out_open(struct sweep_out *o, const char *path, struct sweep *sw, struct diag *d)
{
	*o = (struct sweep_out){.fd = -1};
	if (!(o->path = strdup(path)))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	if (strcmp(path, "-") == 0) {
		o->direct = true;
		o->fd = STDOUT_FILENO;
		return 0;
	}
	struct stat st;
	int rc = 0;
	bool none = stat(path, &st) != 0;
	if (none && errno != ENOENT) {
		rc = diag_set(d, DIAG_EIO, "%s: cannot write: %s", path, strerror(errno));
	} else if (!none && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		o->direct = true;
		if ((o->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0)
			rc = diag_set(d, DIAG_EIO, "%s: cannot open: %s", path, strerror(errno));
	} else if (!none && !S_ISREG(st.st_mode)) {
		rc = diag_set(d, DIAG_EIO, "%s: is not a regular file, a FIFO or a character device "
			      "(expected a file for the rows, or '-' for standard output)", path);
	} else if ((o->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666)) < 0) {
		/* nothing there (or a link to nothing) is created; a file is
		 * appended to, never truncated; a link is followed, not replaced */
		rc = diag_set(d, DIAG_EIO, "%s: cannot open: %s", path, strerror(errno));
	} else if (fstat(o->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = diag_set(d, DIAG_EIO, "%s: changed while it was opened (expected a regular file)",
			      path);
	} else if (flock(o->fd, LOCK_EX | LOCK_NB) != 0) {
		/* two sweeps appending to one file would each write every row */
		rc = errno == EWOULDBLOCK
			     ? diag_set(d, DIAG_EINPUT, "%s: another sweep is writing to it (expected "
					"one sweep per output file; wait for it, or write elsewhere)",
					path)
			     : diag_set(d, DIAG_EIO, "%s: cannot lock: %s", path, strerror(errno));
	} else {
		rc = read_rows(o, sw, d);
	}
	if (rc != 0) {
		if (o->fd >= 0 && !o->direct)
			close(o->fd);
		o->fd = -1;
		free(o->path);
		o->path = NULL;
	}
	return rc;
}

int sweep_out_append(struct sweep_out *o, const char *row, size_t len, struct diag *d)
{
	size_t done = 0;
	int e = 0;
	while (done < len) {
		ssize_t w = write(o->fd, row + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			e = w < 0 ? errno : EIO;
			break;
		}
		done += (size_t)w;
		if (done < len && !o->direct) {
			/* a short write to a file: the disk is full; say why */
			e = ENOSPC;
			break;
		}
	}
	if (e == 0) {
		o->size += (int64_t)len;
		return 0;
	}
	if (!o->direct && done > 0 && ftruncate(o->fd, (off_t)o->size) != 0)
		return diag_set(d, DIAG_EIO, "%s: write failed: %s; and the part written could not be "
				"cut off (%s): the last line is torn", o->path, strerror(e),
				strerror(errno));
	return diag_set(d, DIAG_EIO, "%s: write failed: %s", o->path, strerror(e));
}

int sweep_out_close(struct sweep_out *o, struct diag *d)
{
	int rc = 0;
	if (o->fd >= 0 && o->fd != STDOUT_FILENO && close(o->fd) != 0)
		rc = diag_set(d, DIAG_EIO, "%s: write failed on close: %s", o->path, strerror(errno));
	o->fd = -1;
	free(o->path);
	o->path = NULL;
	return rc;
}

/* ---- running on a pool ---- */

struct run_ctx;

struct cell_task {
	struct run_ctx *ctx;
	size_t cell;
	char *row;
	int rc;
	bool finished;
	struct diag d;
};

struct run_ctx {
	struct sweep *sw;
	const struct sweep_opts *o;
	struct sweep_stats *st;
	pthread_mutex_t mu;
	atomic_bool stop;
	struct cell_task *t;      /* one per cell to run, in cell order */
	size_t n, next;           /* tasks; the next to write */
	int rc;                   /* the first error, in cell order */
	struct diag d;
};

/* Write the finished tasks from ctx->next on, in order.  Under ctx->mu. */
static void flush_rows(struct run_ctx *c)
{
	while (c->next < c->n && c->rc == 0) {
		struct cell_task *t = &c->t[c->next];
		if (!t->finished)
			break;
		if (t->rc != 0) {
			c->rc = diag_set(&c->d, t->rc, "%s", t->d.msg);
			break;
		}
		if (c->o->stop_after > 0 && c->st->written >= c->o->stop_after)
			break;
		if (c->o->out) {
			int rc = sweep_out_append(c->o->out, t->row, strlen(t->row), &c->d);
			if (rc != 0) {
				c->rc = rc;
				break;
			}
		}
		c->rc = sweep_cell_take(c->sw, t->cell, t->row, &c->d);
		t->row = NULL;
		c->st->written++;
		c->next++;
	}
	if (c->rc != 0 || (c->o->stop_after > 0 && c->st->written >= c->o->stop_after))
		atomic_store(&c->stop, true);
}

static void cell_task_run(void *arg)
{
	struct cell_task *t = arg;
	struct run_ctx *c = t->ctx;
	if (!atomic_load(&c->stop)) {
		t->rc = sweep_cell_run(c->sw, t->cell, &t->row, &t->d);
		pthread_mutex_lock(&c->mu);
		c->st->run++;
		t->finished = true;
		flush_rows(c);
		pthread_mutex_unlock(&c->mu);
	}
}

int sweep_run(struct sweep *sw, const struct sweep_opts *o, struct sweep_stats *st,
	      struct diag *d)
{
	memset(st, 0, sizeof(*st));
	st->skipped = (int64_t)sw->n_done;
	struct run_ctx *c = calloc(1, sizeof(*c));
	size_t todo = sw->n_cells - sw->n_done;
	if (!c || !(c->t = calloc(todo + 1, sizeof(*c->t)))) {
		free(c);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	c->sw = sw;
	c->o = o;
	c->st = st;
	pthread_mutex_init(&c->mu, NULL);
	atomic_init(&c->stop, false);
	diag_init(&c->d);
	for (size_t i = 0; i < sw->n_cells; i++)
		if (!sw->cells[i].row) {
			c->t[c->n] = (struct cell_task){.ctx = c, .cell = i};
			diag_init(&c->t[c->n].d);
			c->n++;
		}
	struct pool_group *g = pool_group_new(o->pool);
	for (size_t i = 0; i < c->n; i++)
		pool_run(g, cell_task_run, &c->t[i]);
	pool_group_finish(g);
	int rc = c->rc;
	if (rc != 0)
		diag_set(d, rc, "%s", c->d.msg);
	for (size_t i = 0; i < c->n; i++)
		free(c->t[i].row);
	pthread_mutex_destroy(&c->mu);
	free(c->t);
	free(c);
	return rc;
}

/* ---- CSV ---- */

/* Column names: the union of the rows' flattened keys, in the order first
 * met (cell order). */
struct cols {
	char **name;
	size_t n, cap;
};

static int cols_add(struct cols *cs, const char *name)
{
	for (size_t i = 0; i < cs->n; i++)
		if (strcmp(cs->name[i], name) == 0)
			return 0;
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? 2 * cs->cap : 64;
		char **p = realloc(cs->name, cap * sizeof(*p));
		if (!p)
			return -1;
		cs->name = p;
		cs->cap = cap;
	}
	if (!(cs->name[cs->n] = strdup(name)))
		return -1;
	cs->n++;
	return 0;
}

/* Visit every leaf of v, named by its dotted path. */
typedef int (*leaf_fn)(void *ctx, const char *name, const cJSON *v);

static int leaves(const cJSON *v, const char *prefix, leaf_fn fn, void *ctx)
{
	for (const cJSON *k = v->child; k; k = k->next) {
		char name[512];
		int len = snprintf(name, sizeof(name), "%s%s%s", prefix, prefix[0] ? "." : "", k->string);
		if (len < 0 || (size_t)len >= sizeof(name))
			return -1; /* no row of ours nests keys this long */
		int rc = cJSON_IsObject(k) && k->child ? leaves(k, name, fn, ctx) : fn(ctx, name, k);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int add_col(void *ctx, const char *name, const cJSON *v)
{
	(void)v;
	return cols_add(ctx, name);
}

struct csv_line {
	const struct cols *cs;
	char **cell;
};

static int fill_cell(void *ctx, const char *name, const cJSON *v)
{
	struct csv_line *l = ctx;
	for (size_t i = 0; i < l->cs->n; i++)
		if (strcmp(l->cs->name[i], name) == 0) {
			free(l->cell[i]);
			l->cell[i] = cJSON_IsString(v) ? strdup(v->valuestring)
				     : cJSON_IsNull(v) ? strdup("")
							 : cJSON_PrintUnformatted(v);
			return l->cell[i] ? 0 : -1;
		}
	return 0;
}

int sweep_csv(FILE *fp, const struct sweep *sw, struct diag *d)
{
	struct cols cs = {0};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sw->n_cells; i++) {
		if (!sw->cells[i].row)
			continue;
		cJSON *v = cJSON_Parse(sw->cells[i].row);
		if (!v || leaves(v, "", add_col, &cs) != 0)
			rc = diag_set(d, DIAG_ENOMEM, "out of memory for the CSV (or a key path of 512 characters or more)");
		cJSON_Delete(v);
	}
	for (size_t k = 0; rc == 0 && k < cs.n; k++) {
		fputs(k ? "," : "", fp);
		csv_fwrite(fp, cs.name[k], strlen(cs.name[k]));
	}
	if (rc == 0 && cs.n)
		fputc('\n', fp);
	char **cell = calloc(cs.n + 1, sizeof(*cell));
	if (rc == 0 && !cell)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory for the CSV (or a key path of 512 characters or more)");
	for (size_t i = 0; rc == 0 && i < sw->n_cells; i++) {
		if (!sw->cells[i].row)
			continue;
		cJSON *v = cJSON_Parse(sw->cells[i].row);
		struct csv_line l = {.cs = &cs, .cell = cell};
		if (!v || leaves(v, "", fill_cell, &l) != 0)
			rc = diag_set(d, DIAG_ENOMEM, "out of memory for the CSV (or a key path of 512 characters or more)");
		cJSON_Delete(v);
		for (size_t k = 0; k < cs.n; k++) {
			fputs(k ? "," : "", fp);
			if (cell[k]) /* libcsv quotes every field it writes */
				csv_fwrite(fp, cell[k], strlen(cell[k]));
			free(cell[k]);
			cell[k] = NULL;
		}
		fputc('\n', fp);
	}
	free(cell);
	for (size_t k = 0; k < cs.n; k++)
		free(cs.name[k]);
	free(cs.name);
	if (rc == 0 && ferror(fp))
		rc = diag_set(d, DIAG_EIO, "the CSV could not be written");
	return rc;
}
