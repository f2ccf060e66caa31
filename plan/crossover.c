/* SPDX-License-Identifier: Apache-2.0
 * crossover: compare over team sizes (see crossover.h). */
#include "plan/crossover.h"

#include "base/diag.h"
#include "base/jsonw.h"
#include "reports/output.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void crossover_init(struct crossover_curve *c)
{
	memset(c, 0, sizeof(*c));
}

static struct crossover_series *series_of(struct crossover_curve *c, const struct compare_row *row)
{
	for (size_t i = 0; i < c->n_series; i++) {
		struct crossover_series *s = &c->s[i];
		if (s->option == row->option && s->hybrid == row->hy.on &&
		    strcmp(s->hardware, row->hardware) == 0)
			return s;
	}
	if (c->n_series == COMPARE_MAX_ROWS)
		return NULL;
	struct crossover_series *s = &c->s[c->n_series++];
	memset(s, 0, sizeof(*s));
	s->option = row->option;
	s->hybrid = row->hy.on;
	snprintf(s->hardware, sizeof(s->hardware), "%s", row->hardware);
	for (size_t k = 0; k < CROSSOVER_MAX_TEAMS; k++)
		s->usd_task[k] = s->usd_month[k] = NAN;
	return s;
}

int crossover_add(struct crossover_curve *c, int64_t engineers, const struct compare_result *r,
		  struct diag *d)
{
	if (c->n == CROSSOVER_MAX_TEAMS)
		return diag_set(d, DIAG_EINPUT, "team sizes: more than %d (expected at most %d "
				"sizes)", CROSSOVER_MAX_TEAMS, CROSSOVER_MAX_TEAMS);
	if (c->n > 0 && engineers <= c->engineers[c->n - 1])
		return diag_set(d, DIAG_EINPUT, "team sizes: %lld after %lld (expected ascending "
				"sizes)", (long long)engineers, (long long)c->engineers[c->n - 1]);
	size_t k = c->n++;
	c->engineers[k] = engineers;
	c->seats_task[k] = c->api_task[k] = c->seats_month[k] = c->api_month[k] = NAN;
	for (size_t i = 0; i < r->n; i++) {
		const struct compare_row *row = &r->rows[i];
		if (row->option == COST_SEATS) {
			c->seats_task[k] = row->r.usd_per_accepted_task;
			c->seats_month[k] = row->r.usd_month;
			continue;
		}
		if (row->option == COST_API) {
			c->api_task[k] = row->r.usd_per_accepted_task;
			c->api_month[k] = row->r.usd_month;
			continue;
		}
		struct crossover_series *s = series_of(c, row);
		if (!s)
			return diag_set(d, DIAG_EINPUT, "team sizes: more than %d priced options",
					COMPARE_MAX_ROWS);
		s->usd_task[k] = row->r.usd_per_accepted_task;
		s->usd_month[k] = row->r.usd_month;
		s->gpus[k] = row->gpus;
		snprintf(s->deployment[k], sizeof(s->deployment[k]), "%s", row->deployment);
	}
	return 0;
}

/* The first point from which s stays at or below base (see crossover.h). */
static struct crossover_at first_for_good(const struct crossover_curve *c, const double *s,
					  const double *base)
{
	struct crossover_at at = {0};
	size_t from = c->n;
	for (size_t k = c->n; k-- > 0;) {
		if (!isfinite(s[k]) || !isfinite(base[k]) || s[k] > base[k])
			break;
		from = k;
	}
	if (from == c->n)
		return at;
	at.found = true;
	at.from = c->engineers[from];
	at.after = from > 0 ? c->engineers[from - 1] : 0;
	return at;
}

void crossover_finish(struct crossover_curve *c)
{
	for (size_t i = 0; i < c->n_series; i++) {
		struct crossover_series *s = &c->s[i];
		s->vs_seats = first_for_good(c, s->usd_task, c->seats_task);
		s->vs_api = first_for_good(c, s->usd_task, c->api_task);
	}
}

static const char *series_label(const struct crossover_series *s, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s %s%s", s->hardware, cost_option_name(s->option),
		 s->hybrid ? " + API" : "");
	return buf;
}

static const char *at_text(const struct crossover_at *at, char *buf, size_t cap)
{
	if (!at->found)
		snprintf(buf, cap, "not within the sizes tried");
	else if (at->after == 0)
		snprintf(buf, cap, "from %lld (every size tried)", (long long)at->from);
	else
		snprintf(buf, cap, "from %lld (more than %lld)", (long long)at->from,
			 (long long)at->after);
	return buf;
}

void crossover_table(FILE *fp, const struct compare_setup *cs, const struct crossover_curve *c)
{
	char label[SCENARIO_STR_MAX + 32];
	fprintf(fp, "Cost per accepted task (USD) by team size: each size sized and priced on its "
		"own, as `agentcap compare --engineers N` does\n");
	fprintf(fp, "%9s  %-40s %-11s %12s %12s %12s\n", "engineers", "cheapest self-hosted",
		"deployment", "USD/task", "seats", "API");
	for (size_t k = 0; k < c->n; k++) {
		const struct crossover_series *best = NULL;
		for (size_t i = 0; i < c->n_series; i++) {
			const struct crossover_series *s = &c->s[i];
			if (isfinite(s->usd_task[k]) && s->usd_task[k] > 0 &&
			    (!best || s->usd_task[k] < best->usd_task[k]))
				best = s;
		}
		fprintf(fp, "%9lld  ", (long long)c->engineers[k]);
		if (best)
			fprintf(fp, "%-40s %-11s %12.2f", series_label(best, label, sizeof(label)),
				best->deployment[k][0] ? best->deployment[k] : "-", best->usd_task[k]);
		else
			fprintf(fp, "%-40s %-11s %12s", "no deployment meets the objectives", "-", "-");
		fprintf(fp, " %12.2f %12.2f\n", c->seats_task[k], c->api_task[k]);
	}
	fprintf(fp, "\nCrossovers: the team size from which each option costs no more per accepted "
		"task than the seats (%s) and the API (%s), at that size and every larger one "
		"tried\n", cs->seat_id, cs->api_id);
	fprintf(fp, "  %-40s %-34s %s\n", "Option", "against the seats", "against the API");
	for (size_t i = 0; i < c->n_series; i++) {
		const struct crossover_series *s = &c->s[i];
		char seats[64], api[64];
		fprintf(fp, "  %-40s %-34s %s\n", series_label(s, label, sizeof(label)),
			at_text(&s->vs_seats, seats, sizeof(seats)),
			at_text(&s->vs_api, api, sizeof(api)));
	}
	fprintf(fp, "  (\"more than N\": the crossing lies between N, the size tried before, and "
		"the size given; try sizes between them to narrow it)\n");
}

static void json_num(FILE *fp, double v)
{
	if (isfinite(v))
		fprintf(fp, "%.17g", v);
	else
		fputs("null", fp);
}

static void json_at(FILE *fp, const char *key, const struct crossover_at *at)
{
	fprintf(fp, "\"%s\":", key);
	if (!at->found)
		fputs("null", fp);
	else if (at->after == 0)
		fprintf(fp, "{\"from\":%lld,\"after\":null}", (long long)at->from);
	else
		fprintf(fp, "{\"from\":%lld,\"after\":%lld}", (long long)at->from,
			(long long)at->after);
}

int crossover_json(FILE *fp, const struct compare_setup *cs, const struct crossover_curve *c)
{
	fprintf(fp, "{\"schema\":\"agentcap-compare-range\",\"version\":1,");
	if (cs->size->run) {
		report_run_json(fp, cs->size->run);
		fputc(',', fp);
	}
	fprintf(fp, "\"currency\":\"USD\",\"api\":");
	jsonw_str(fp, cs->api_id);
	fprintf(fp, ",\"seats\":");
	jsonw_str(fp, cs->seat_id);
	fprintf(fp, ",\"engineers\":[");
	for (size_t k = 0; k < c->n; k++)
		fprintf(fp, "%s%lld", k ? "," : "", (long long)c->engineers[k]);
	fprintf(fp, "],\"baselines\":[");
	for (int b = 0; b < 2; b++) {
		const double *task = b ? c->api_task : c->seats_task;
		const double *month = b ? c->api_month : c->seats_month;
		fprintf(fp, "%s{\"option\":\"%s\",\"id\":", b ? "," : "", b ? "api" : "seats");
		jsonw_str(fp, b ? cs->api_id : cs->seat_id);
		fprintf(fp, ",\"usd_per_accepted_task\":[");
		for (size_t k = 0; k < c->n; k++) {
			fputs(k ? "," : "", fp);
			json_num(fp, task[k]);
		}
		fprintf(fp, "],\"usd_per_month\":[");
		for (size_t k = 0; k < c->n; k++) {
			fputs(k ? "," : "", fp);
			json_num(fp, month[k]);
		}
		fprintf(fp, "]}");
	}
	fprintf(fp, "],\"series\":[");
	for (size_t i = 0; i < c->n_series; i++) {
		const struct crossover_series *s = &c->s[i];
		fprintf(fp, "%s{\"option\":\"%s\",\"hardware\":", i ? "," : "",
			cost_option_name(s->option));
		jsonw_str(fp, s->hardware);
		fprintf(fp, ",\"hybrid\":%s,\"usd_per_accepted_task\":[", s->hybrid ? "true" : "false");
		for (size_t k = 0; k < c->n; k++) {
			fputs(k ? "," : "", fp);
			json_num(fp, s->usd_task[k]);
		}
		fprintf(fp, "],\"usd_per_month\":[");
		for (size_t k = 0; k < c->n; k++) {
			fputs(k ? "," : "", fp);
			json_num(fp, s->usd_month[k]);
		}
		fprintf(fp, "],\"gpus\":[");
		for (size_t k = 0; k < c->n; k++) {
			if (isfinite(s->usd_task[k]))
				fprintf(fp, "%s%d", k ? "," : "", s->gpus[k]);
			else
				fprintf(fp, "%snull", k ? "," : "");
		}
		fprintf(fp, "],\"deployment\":[");
		for (size_t k = 0; k < c->n; k++) {
			fputs(k ? "," : "", fp);
			jsonw_str(fp, isfinite(s->usd_task[k]) ? s->deployment[k] : NULL);
		}
		fprintf(fp, "],");
		json_at(fp, "crossover_seats", &s->vs_seats);
		fputc(',', fp);
		json_at(fp, "crossover_api", &s->vs_api);
		fputc('}', fp);
	}
	fprintf(fp, "]}\n");
	return ferror(fp) ? DIAG_EIO : 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* A whole number 1..max ending at *end. */
static bool team_number(const char *s, char **end, int64_t max, int64_t *v)
{
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	long long x = strtoll(s, end, 10);
	if (errno || x < 1 || x > max)
		return false;
	*v = x;
	return true;
}

int crossover_parse_teams(const char *text, int64_t max, int64_t *out, size_t *n,
			  struct diag *d)
{
	*n = 0;
	const char *want = "a team size, a list of them (10,20,40) or a range start:stop:step "
			   "(10:80:10)";
	char *end = NULL;
	int64_t a, b, step;
	if (strchr(text, ':')) {
		if (!team_number(text, &end, max, &a) || *end != ':' ||
		    !team_number(end + 1, &end, max, &b) || *end != ':' ||
		    !team_number(end + 1, &end, max, &step) || *end || b < a)
			return diag_set(d, DIAG_EINPUT, "--engineers '%s': expected %s, each 1..%lld, "
					"stop not below start", text, want, (long long)max);
		for (int64_t v = a; v <= b; v += step) {
			if (*n == CROSSOVER_MAX_TEAMS)
				return diag_set(d, DIAG_EINPUT, "--engineers '%s': more than %d team "
						"sizes (expected at most %d)", text,
						CROSSOVER_MAX_TEAMS, CROSSOVER_MAX_TEAMS);
			out[(*n)++] = v;
		}
		return 0;
	}
	const char *p = text;
	for (;;) {
		int64_t v;
		if (!team_number(p, &end, max, &v) || (*end && *end != ','))
			return diag_set(d, DIAG_EINPUT, "--engineers '%s': expected %s, each 1..%lld",
					text, want, (long long)max);
		if (*n == CROSSOVER_MAX_TEAMS)
			return diag_set(d, DIAG_EINPUT, "--engineers '%s': more than %d team sizes "
					"(expected at most %d)", text, CROSSOVER_MAX_TEAMS,
					CROSSOVER_MAX_TEAMS);
		out[(*n)++] = v;
		if (!*end)
			break;
		p = end + 1;
	}
	qsort(out, *n, sizeof(*out), cmp_i64);
	for (size_t i = 1; i < *n; i++)
		if (out[i] == out[i - 1])
			return diag_set(d, DIAG_EINPUT, "--engineers '%s': %lld is given twice "
					"(expected each team size once)", text, (long long)out[i]);
	return 0;
}
