/* SPDX-License-Identifier: Apache-2.0
 * synth_profile: schema-checked JSON profile for the synthetic team (see
 * synth_profile.h).
 *
 * One table lists every scalar and distribution knob with its type, its
 * place in struct synth_profile and its range; the two lists (time zones and
 * archetypes) have small tables of their own.  Loading parses the built-in
 * default first, then the user's file over it, so a file names only what it
 * changes.  The first bad key stops loading with the file and key path.
 */
#include "traces/synth_profile.h"

#include "base/diag.h"
#include "base/keys.h"
#include "base/textfile.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <assert.h>
#include <string.h>

enum kind { K_OBJ, K_TEXT, K_STR, K_NUM, K_INT, K_INT64, K_DIST, K_ZONES, K_ARCHETYPES };

struct key {
	const char *path;  /* dotted */
	enum kind kind;
	size_t off;        /* into struct synth_profile */
	double lo, hi;     /* range of a number, or the domain of a distribution's draws */
};

#define OFF(f) offsetof(struct synth_profile, f)
#define TOK 1e9   /* largest token count of one segment (TRACE_MAX_TOKENS) */
#define DAY_S 86400.0
static const struct key KEYS[] = {
	{"name", K_STR, OFF(name), 0, 0},
	{"description", K_TEXT, 0, 0, 0},
	{"team", K_OBJ, 0, 0, 0},
	{"team.timezones", K_ZONES, 0, 0, 0},
	{"team.day_start_local_h", K_DIST, OFF(day_start_local_h), 0, 24},
	{"team.day_length_h", K_DIST, OFF(day_length_h), 0.25, 24},
	{"team.day_jitter_h", K_DIST, OFF(day_jitter_h), -12, 12},
	{"team.active_day_probability", K_NUM, OFF(active_day_probability), 0, 1},
	{"team.repos", K_INT, OFF(repos), 1, 1e6},
	{"team.home_repo_probability", K_NUM, OFF(home_repo_probability), 0, 1},
	{"team.repo_context_tokens", K_DIST, OFF(repo_context_tokens), 1, TOK},
	{"harness", K_OBJ, 0, 0, 0},
	{"harness.system_prompt_tokens", K_INT64, OFF(system_prompt_tokens), 1, TOK},
	{"harness.tool_definitions_tokens", K_INT64, OFF(tool_definitions_tokens), 0, TOK},
	{"harness.timestamp_header_tokens", K_INT64, OFF(timestamp_header_tokens), 0, 1000},
	{"harness.context_window_tokens", K_INT64, OFF(context_window_tokens), 1024, 1e8},
	{"harness.compact_reserve_tokens", K_INT64, OFF(compact_reserve_tokens), 0, 1e8},
	{"harness.compact_request_tokens", K_INT64, OFF(compact_request_tokens), 1, TOK},
	{"harness.summary_tokens", K_DIST, OFF(summary_tokens), 1, TOK},
	{"harness.kept_tokens", K_DIST, OFF(kept_tokens), 0, TOK},
	{"sessions", K_OBJ, 0, 0, 0},
	{"sessions.first_session_delay_s", K_DIST, OFF(first_session_delay_s), 0, DAY_S},
	{"sessions.break_s", K_DIST, OFF(break_s), 0, DAY_S},
	{"sessions.tasks_per_session", K_DIST, OFF(tasks_per_session), 1, 1000},
	{"sessions.user_gap_s", K_DIST, OFF(user_gap_s), 0, DAY_S},
	{"task", K_OBJ, 0, 0, 0},
	{"task.brief_tokens", K_DIST, OFF(brief_tokens), 1, TOK},
	{"task.steps", K_DIST, OFF(steps_per_task), 1, 10000},
	{"task.explore_steps", K_DIST, OFF(explore_steps), 0, 10000},
	{"task.run_spread_sigma", K_NUM, OFF(run_spread_sigma), 0, 3},
	{"task.accept_probability", K_NUM, OFF(accept_probability), 0, 1},
	{"task.reattempt_probability", K_NUM, OFF(reattempt_probability), 0, 1},
	{"step", K_OBJ, 0, 0, 0},
	{"step.output_tokens", K_DIST, OFF(output_tokens), 1, TOK},
	{"step.explore_tool_output_tokens", K_DIST, OFF(explore_tool_output_tokens), 1, TOK},
	{"step.tool_output_tokens", K_DIST, OFF(tool_output_tokens), 1, TOK},
	{"step.tool_gap_s", K_DIST, OFF(tool_gap_s), 0, DAY_S},
	{"tools", K_OBJ, 0, 0, 0},
	{"tools.failure_rate", K_NUM, OFF(failure_rate), 0, 0.9},
	{"tools.retry_failure_probability", K_NUM, OFF(retry_failure_probability), 0, 0.95},
	{"tools.max_attempts", K_INT, OFF(max_attempts), 1, 64},
	{"tools.error_tokens", K_DIST, OFF(error_tokens), 1, TOK},
	{"cache", K_OBJ, 0, 0, 0},
	{"cache.bust_probability", K_NUM, OFF(bust_probability), 0, 1},
	{"cache.volatile_tokens", K_INT64, OFF(volatile_tokens), 1, TOK},
	{"subagents", K_OBJ, 0, 0, 0},
	{"subagents.spawn_probability", K_NUM, OFF(spawn_probability), 0, 1},
	{"subagents.parallel", K_DIST, OFF(subagents_parallel), 1, 64},
	{"subagents.brief_tokens", K_DIST, OFF(subagent_brief_tokens), 1, TOK},
	{"subagents.steps", K_DIST, OFF(subagent_steps), 1, 10000},
	{"subagents.result_tokens", K_DIST, OFF(subagent_result_tokens), 1, TOK},
	{"archetypes", K_ARCHETYPES, 0, 0, 0},
	{"timing", K_OBJ, 0, 0, 0},
	{"timing.decode_tokens_per_s", K_NUM, OFF(decode_tokens_per_s), 0.01, 1e7},
	{"output_kinds", K_OBJ, 0, 0, 0},
	{"output_kinds.code", K_NUM, OFF(kind_share[OUT_KIND_CODE]), 0, 1},
	{"output_kinds.structured", K_NUM, OFF(kind_share[OUT_KIND_STRUCTURED]), 0, 1},
	{"output_kinds.prose", K_NUM, OFF(kind_share[OUT_KIND_PROSE]), 0, 1},
	{"targets", K_OBJ, 0, 0, 0},
	{"targets.median_prompt_tokens", K_NUM, OFF(target_median_prompt_tokens), 0, 1e12},
	{"targets.median_output_tokens", K_NUM, OFF(target_median_output_tokens), 0, 1e12},
	{"targets.prefix_hit_rate", K_NUM, OFF(target_prefix_hit_rate), 0, 1},
	{"targets.miss_amplification", K_NUM, OFF(target_miss_amplification), 0, 1e6},
	{"targets.tool_failure_rate", K_NUM, OFF(target_tool_failure_rate), 0, 1},
	{"targets.overlap_concurrency_median", K_NUM, OFF(target_overlap_median), 1, 1e6},
	{"targets.overlap_concurrency_p90", K_NUM, OFF(target_overlap_p90), 1, 1e6},
};
#undef OFF
#define N_KEYS (sizeof(KEYS) / sizeof(KEYS[0]))

/* Parameter names of each distribution kind (NULL: unused). */
static const struct {
	const char *name, *p1, *p2;
} DISTS[] = {
	[SYNTH_DIST_FIXED] = {"fixed", "value", NULL},
	[SYNTH_DIST_UNIFORM] = {"uniform", "low", "high"},
	[SYNTH_DIST_NORMAL] = {"normal", "mean", "sd"},
	[SYNTH_DIST_LOGNORMAL] = {"lognormal", "median", "sigma"},
	[SYNTH_DIST_GAMMA] = {"gamma", "mean", "shape"},
	[SYNTH_DIST_EXPONENTIAL] = {"exponential", "mean", NULL},
	[SYNTH_DIST_GEOMETRIC] = {"geometric", "mean", NULL},
	[SYNTH_DIST_POISSON] = {"poisson", "mean", NULL},
};
#define N_DISTS (sizeof(DISTS) / sizeof(DISTS[0]))

static const struct key *key_find(const char *path)
{
	return keys_find(KEYS, N_KEYS, sizeof(KEYS[0]), path);
}

/* "a, b, c": the children of `prefix` ("" = top level). */
static void key_children(const char *prefix, char *out, size_t cap)
{
	keys_children(KEYS, N_KEYS, sizeof(KEYS[0]), prefix, out, cap);
}

static bool is_num(const cJSON *v)
{
	return cJSON_IsNumber(v) && isfinite(v->valuedouble);
}

static int want_num(const cJSON *v, double lo, double hi, double *out, const char *where,
		    const char *path, struct diag *d)
{
	if (!is_num(v) || v->valuedouble < lo || v->valuedouble > hi)
		return diag_set(d, DIAG_EINPUT, "%s: %s: expected a number in [%.15g, %.15g]", where,
				path, lo, hi);
	*out = v->valuedouble;
	return 0;
}

static int want_int(const cJSON *v, double lo, double hi, double *out, const char *where,
		    const char *path, struct diag *d)
{
	if (!is_num(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > hi)
		return diag_set(d, DIAG_EINPUT, "%s: %s: expected an integer in [%.15g, %.15g]", where,
				path, lo, hi);
	*out = v->valuedouble;
	return 0;
}

static int want_name(const cJSON *v, char *out, const char *where, const char *path,
		     struct diag *d)
{
	if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= SYNTH_NAME_MAX)
		return diag_set(d, DIAG_EINPUT, "%s: %s: expected a non-empty string of at most %d bytes",
				where, path, SYNTH_NAME_MAX - 1);
	snprintf(out, SYNTH_NAME_MAX, "%s", v->valuestring);
	return 0;
}

/* Parameter checks that do not depend on the knob. */
static const char *dist_param_problem(const struct synth_dist *x)
{
	switch (x->kind) {
	case SYNTH_DIST_FIXED:
		return NULL;
	case SYNTH_DIST_UNIFORM:
		return x->p1 <= x->p2 ? NULL : "low must not exceed high";
	case SYNTH_DIST_NORMAL:
		return x->p2 >= 0 ? NULL : "sd must be >= 0";
	case SYNTH_DIST_LOGNORMAL:
		return x->p1 > 0 && x->p2 >= 0 && x->p2 <= 10 ? NULL
							    : "median must be > 0 and sigma in [0, 10]";
	case SYNTH_DIST_GAMMA:
		return x->p1 > 0 && x->p2 > 0 ? NULL : "mean and shape must be > 0";
	case SYNTH_DIST_EXPONENTIAL:
		return x->p1 > 0 ? NULL : "mean must be > 0";
	case SYNTH_DIST_GEOMETRIC:
		return x->p1 >= 1 ? NULL : "mean must be >= 1";
	case SYNTH_DIST_POISSON:
		return x->p1 >= 0 && x->p1 <= 1e9 ? NULL : "mean must be in [0, 1e9]";
	}
	return "unknown kind";
}

static int parse_dist(struct synth_dist *out, const cJSON *v, const struct key *k, const char *where,
		      const char *path, struct diag *d)
{
	if (!cJSON_IsObject(v))
		return diag_set(d, DIAG_EINPUT, "%s: %s: expected a distribution object {\"dist\": KIND, ...}",
				where, path);
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(v, "dist");
	char sub[300];
	snprintf(sub, sizeof(sub), "%s.dist", path);
	size_t kd = N_DISTS;
	if (cJSON_IsString(kind))
		for (kd = 0; kd < N_DISTS; kd++)
			if (strcmp(DISTS[kd].name, kind->valuestring) == 0)
				break;
	if (kd == N_DISTS)
		return diag_set(d, DIAG_EINPUT, "%s: %s: expected one of fixed, uniform, normal, lognormal, "
				"gamma, exponential, geometric, poisson", where, sub);
	struct synth_dist x = {.kind = (enum synth_dist_kind)kd, .min = k->lo, .max = k->hi};
	bool have1 = false, have2 = false;
	for (const cJSON *c = v->child; c; c = c->next) {
		snprintf(sub, sizeof(sub), "%s.%s", path, c->string);
		int rc = 0;
		if (strcmp(c->string, "dist") == 0)
			continue;
		if (strcmp(c->string, DISTS[kd].p1) == 0) {
			rc = want_num(c, -1e15, 1e15, &x.p1, where, sub, d);
			have1 = true;
		} else if (DISTS[kd].p2 && strcmp(c->string, DISTS[kd].p2) == 0) {
			rc = want_num(c, -1e15, 1e15, &x.p2, where, sub, d);
			have2 = true;
		} else if (strcmp(c->string, "min") == 0) {
			rc = want_num(c, k->lo, k->hi, &x.min, where, sub, d);
		} else if (strcmp(c->string, "max") == 0) {
			rc = want_num(c, k->lo, k->hi, &x.max, where, sub, d);
		} else {
			return diag_set(d, DIAG_EINPUT, "%s: %s: unknown key (expected one of: dist, %s%s%s, "
					"min, max)", where, sub, DISTS[kd].p1, DISTS[kd].p2 ? ", " : "",
					DISTS[kd].p2 ? DISTS[kd].p2 : "");
		}
		if (rc)
			return rc;
	}
	if (!have1 || (DISTS[kd].p2 && !have2))
		return diag_set(d, DIAG_EINPUT, "%s: %s: a %s distribution needs %s%s%s", where, path,
				DISTS[kd].name, DISTS[kd].p1, DISTS[kd].p2 ? " and " : "",
				DISTS[kd].p2 ? DISTS[kd].p2 : "");
	const char *problem = dist_param_problem(&x);
	if (problem)
		return diag_set(d, DIAG_EINPUT, "%s: %s: %s", where, path, problem);
	if (x.min > x.max)
		return diag_set(d, DIAG_EINPUT, "%s: %s: min %.15g exceeds max %.15g", where, path, x.min,
				x.max);
	if (x.kind == SYNTH_DIST_FIXED && (x.p1 < x.min || x.p1 > x.max))
		return diag_set(d, DIAG_EINPUT, "%s: %s.value: expected a number in [%.15g, %.15g]", where,
				path, x.min, x.max);
	*out = x;
	return 0;
}

static int parse_zones(struct synth_profile *p, const cJSON *v, const char *where, struct diag *d)
{
	int n = cJSON_GetArraySize(v);
	if (!cJSON_IsArray(v) || n < 1 || n > SYNTH_MAX_ZONES)
		return diag_set(d, DIAG_EINPUT, "%s: team.timezones: expected an array of 1 to %d "
				"{\"name\", \"utc_offset_h\", \"weight\"} objects", where, SYNTH_MAX_ZONES);
	int i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		char path[128], sub[160];
		snprintf(path, sizeof(path), "team.timezones[%d]", i);
		if (!cJSON_IsObject(e))
			return diag_set(d, DIAG_EINPUT, "%s: %s: expected an object", where, path);
		struct synth_zone z = {.weight = -1, .utc_offset_h = 99};
		snprintf(z.name, sizeof(z.name), "zone %d", i);
		for (const cJSON *c = e->child; c; c = c->next) {
			snprintf(sub, sizeof(sub), "%s.%s", path, c->string);
			int rc;
			if (strcmp(c->string, "name") == 0)
				rc = want_name(c, z.name, where, sub, d);
			else if (strcmp(c->string, "utc_offset_h") == 0)
				rc = want_num(c, -12, 14, &z.utc_offset_h, where, sub, d);
			else if (strcmp(c->string, "weight") == 0)
				rc = want_num(c, 1e-9, 1e9, &z.weight, where, sub, d);
			else
				rc = diag_set(d, DIAG_EINPUT, "%s: %s: unknown key (expected one of: name, "
					      "utc_offset_h, weight)", where, sub);
			if (rc)
				return rc;
		}
		if (z.weight < 0 || z.utc_offset_h > 14)
			return diag_set(d, DIAG_EINPUT, "%s: %s: needs utc_offset_h and weight", where, path);
		p->zones[i] = z;
	}
	p->n_zones = n;
	return 0;
}

static int parse_archetypes(struct synth_profile *p, const cJSON *v, const char *where,
			    struct diag *d)
{
	int n = cJSON_GetArraySize(v);
	if (!cJSON_IsArray(v) || n < 1 || n > SYNTH_MAX_ARCHETYPES)
		return diag_set(d, DIAG_EINPUT, "%s: archetypes: expected an array of 1 to %d archetype "
				"objects", where, SYNTH_MAX_ARCHETYPES);
	int i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		char path[128], sub[160];
		snprintf(path, sizeof(path), "archetypes[%d]", i);
		if (!cJSON_IsObject(e))
			return diag_set(d, DIAG_EINPUT, "%s: %s: expected an object", where, path);
		struct synth_archetype a = {.weight = -1, .token_scale = 1, .steps_scale = 1,
					    .break_scale = 1};
		snprintf(a.name, sizeof(a.name), "archetype %d", i);
		for (const cJSON *c = e->child; c; c = c->next) {
			snprintf(sub, sizeof(sub), "%s.%s", path, c->string);
			int rc;
			if (strcmp(c->string, "name") == 0)
				rc = want_name(c, a.name, where, sub, d);
			else if (strcmp(c->string, "weight") == 0)
				rc = want_num(c, 1e-9, 1e9, &a.weight, where, sub, d);
			else if (strcmp(c->string, "token_scale") == 0)
				rc = want_num(c, 1e-3, 1e3, &a.token_scale, where, sub, d);
			else if (strcmp(c->string, "steps_scale") == 0)
				rc = want_num(c, 1e-3, 1e3, &a.steps_scale, where, sub, d);
			else if (strcmp(c->string, "break_scale") == 0)
				rc = want_num(c, 1e-3, 1e3, &a.break_scale, where, sub, d);
			else
				rc = diag_set(d, DIAG_EINPUT, "%s: %s: unknown key (expected one of: name, "
					      "weight, token_scale, steps_scale, break_scale)", where, sub);
			if (rc)
				return rc;
		}
		if (a.weight < 0)
			return diag_set(d, DIAG_EINPUT, "%s: %s: needs a weight", where, path);
		p->archetypes[i] = a;
	}
	p->n_archetypes = n;
	return 0;
}

static int store(struct synth_profile *p, const struct key *k, const cJSON *v, const char *where,
		 struct diag *d)
{
	char *field = (char *)p + k->off;
	double x = 0;
	int rc = 0;
	switch (k->kind) {
	case K_OBJ:
		if (!cJSON_IsObject(v))
			rc = diag_set(d, DIAG_EINPUT, "%s: %s: expected an object", where, k->path);
		break;
	case K_TEXT:
		if (!cJSON_IsString(v))
			rc = diag_set(d, DIAG_EINPUT, "%s: %s: expected a string", where, k->path);
		break;
	case K_STR:
		rc = want_name(v, field, where, k->path, d);
		break;
	case K_NUM:
		rc = want_num(v, k->lo, k->hi, (double *)field, where, k->path, d);
		break;
	case K_INT:
		if ((rc = want_int(v, k->lo, k->hi, &x, where, k->path, d)) == 0)
			*(int32_t *)field = (int32_t)x;
		break;
	case K_INT64:
		if ((rc = want_int(v, k->lo, k->hi, &x, where, k->path, d)) == 0)
			*(int64_t *)field = (int64_t)x;
		break;
	case K_DIST:
		rc = parse_dist((struct synth_dist *)field, v, k, where, k->path, d);
		break;
	case K_ZONES:
		rc = parse_zones(p, v, where, d);
		break;
	case K_ARCHETYPES:
		rc = parse_archetypes(p, v, where, d);
		break;
	}
	return rc;
}

static int walk(struct synth_profile *p, const cJSON *obj, const char *prefix, const char *where,
		struct diag *d)
{
	for (const cJSON *c = obj->child; c; c = c->next) {
		char path[256];
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", c->string);
		const struct key *k = key_find(path);
		if (!k) {
			char kids[1024];
			key_children(prefix, kids, sizeof(kids));
			return diag_set(d, DIAG_EINPUT, "%s: %s: unknown key (expected one of: %s)", where,
					path, kids);
		}
		int rc = store(p, k, c, where, d);
		if (rc == 0 && k->kind == K_OBJ)
			rc = walk(p, c, path, where, d);
		if (rc)
			return rc;
	}
	return 0;
}

/* The largest value a distribution can draw. */
static double dist_upper(const struct synth_dist *x)
{
	if (x->kind == SYNTH_DIST_FIXED)
		return fmin(x->max, x->p1);
	if (x->kind == SYNTH_DIST_UNIFORM)
		return fmin(x->max, x->p2);
	return x->max;
}

int64_t synth_profile_compact_threshold(const struct synth_profile *p)
{
	return p->context_window_tokens - p->compact_reserve_tokens;
}

int64_t synth_profile_step_cap(const struct synth_profile *p)
{
	double limit = (double)synth_profile_compact_threshold(p);
	double base = (double)(p->system_prompt_tokens + p->tool_definitions_tokens +
			       p->timestamp_header_tokens + p->volatile_tokens) + dist_upper(&p->repo_context_tokens);
	double cap = limit - base - dist_upper(&p->summary_tokens) - dist_upper(&p->output_tokens);
	return cap < 1 ? 0 : cap > 1e15 ? (int64_t)1e15 : (int64_t)cap;
}

/* Cross-field rules that one key alone cannot check: with them (and the
 * step cap) no prompt plus its output ever passes the context window. */
static int check_whole(const struct synth_profile *p, const char *where, struct diag *d)
{
	double shares = 0;
	for (int k = 0; k < OUT_KINDS; k++)
		shares += p->kind_share[k];
	if (shares > 1 + 1e-9)
		return diag_set(d, DIAG_EINPUT, "%s: output_kinds: shares add up to %g (expected at "
				"most 1; the rest carry no kind)", where, shares);
	double limit = (double)synth_profile_compact_threshold(p);
	if ((double)p->compact_reserve_tokens <
	    (double)p->compact_request_tokens + dist_upper(&p->summary_tokens))
		return diag_set(d, DIAG_EINPUT, "%s: harness.compact_reserve_tokens: %lld leaves no room "
				"for the compaction call (expected at least compact_request_tokens + "
				"summary_tokens.max = %.0f)", where, (long long)p->compact_reserve_tokens,
				(double)p->compact_request_tokens + dist_upper(&p->summary_tokens));
	if (synth_profile_step_cap(p) < SYNTH_MIN_STEP_CAP)
		return diag_set(d, DIAG_EINPUT, "%s: harness: after a compaction the harness, the "
				"largest repository context, summary and output leave %lld tokens below "
				"the compaction threshold %.0f (expected at least %d: a larger "
				"context_window_tokens or smaller maxima)", where,
				(long long)synth_profile_step_cap(p), limit, SYNTH_MIN_STEP_CAP);
	return 0;
}

int synth_profile_load_text(struct synth_profile *p, const char *text, const char *where,
			    struct diag *d)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithOpts(text, &end, true);
	if (!root) {
		long line, col;
		const char *at = end ? end : text;
		textfile_line_col(text, at, &line, &col);
		if (!*at)
			return diag_at(d, DIAG_EINPUT, where, line, col,
				       "malformed JSON: unexpected end of file (expected a profile object)");
		/* at the end of a line, show the character the parser stopped after */
		const char *show = *at == '\n' && at > text ? at - 1 : at;
		int n = 0;
		while (n < 16 && show[n] && show[n] != '\n')
			n++;
		return diag_at(d, DIAG_EINPUT, where, line, col,
			       "malformed JSON at '%.*s' (expected a profile object)", n, show);
	}
	int rc;
	if (!cJSON_IsObject(root))
		rc = diag_set(d, DIAG_EINPUT, "%s: expected a JSON object at the top level", where);
	else
		rc = walk(p, root, "", where, d);
	cJSON_Delete(root);
	if (rc == 0)
		rc = check_whole(p, where, d);
	if (rc == 0)
		snprintf(p->source, sizeof(p->source), "%s", where);
	return rc;
}

int synth_profile_load(struct synth_profile *p, const char *path, struct diag *d)
{
	memset(p, 0, sizeof(*p));
	int rc = synth_profile_load_text(p, synth_profile_default_json, "(built-in default profile)", d);
	if (rc != 0)
		return rc;
	snprintf(p->source, sizeof(p->source), "(built-in default)");
	if (!path)
		return 0;
	char *text = textfile_read(path, 4u << 20, "a profile file", d);
	if (!text)
		return d->code;
	rc = synth_profile_load_text(p, text, path, d);
	free(text);
	if (rc == 0)
		snprintf(p->source, sizeof(p->source), "%s", path);
	return rc;
}

double synth_dist_mean(const struct synth_dist *x)
{
	switch (x->kind) {
	case SYNTH_DIST_FIXED:
		return x->p1;
	case SYNTH_DIST_UNIFORM:
		return 0.5 * (x->p1 + x->p2);
	case SYNTH_DIST_LOGNORMAL:
		return x->p1 * exp(0.5 * x->p2 * x->p2);
	case SYNTH_DIST_NORMAL:
	case SYNTH_DIST_GAMMA:
	case SYNTH_DIST_EXPONENTIAL:
	case SYNTH_DIST_GEOMETRIC:
	case SYNTH_DIST_POISSON:
		return x->p1;
	}
	return 0;
}

static bool dist_ok(const struct synth_dist *x)
{
	return (size_t)x->kind < N_DISTS && !dist_param_problem(x) && x->min <= x->max;
}

void synth_profile_keep_zones(struct synth_profile *p, int n)
{
	assert(n >= 1);
	while (p->n_zones > n) {
		/* drop the lightest zone, the later of equal ones */
		int drop = 0;
		for (int i = 1; i < p->n_zones; i++)
			if (p->zones[i].weight <= p->zones[drop].weight)
				drop = i;
		memmove(&p->zones[drop], &p->zones[drop + 1],
			(size_t)(p->n_zones - drop - 1) * sizeof(p->zones[0]));
		p->n_zones--;
	}
}

bool synth_profile_check(const struct synth_profile *p)
{
	if (p->n_zones < 1 || p->n_zones > SYNTH_MAX_ZONES || p->n_archetypes < 1 ||
	    p->n_archetypes > SYNTH_MAX_ARCHETYPES || p->repos < 1 || p->max_attempts < 1 ||
	    p->context_window_tokens < 1 || p->system_prompt_tokens < 1 ||
	    p->decode_tokens_per_s <= 0)
		return false;
	for (int i = 0; i < p->n_zones; i++)
		if (!(p->zones[i].weight > 0))
			return false;
	for (int i = 0; i < p->n_archetypes; i++)
		if (!(p->archetypes[i].weight > 0) || !(p->archetypes[i].token_scale > 0))
			return false;
	for (size_t i = 0; i < N_KEYS; i++)
		if (KEYS[i].kind == K_DIST &&
		    !dist_ok((const struct synth_dist *)((const char *)p + KEYS[i].off)))
			return false;
	return true;
}
