/* SPDX-License-Identifier: Apache-2.0
 * costing: replay figures -> struct cost_usage, and the cost table (see
 * costing.h). */
#include "reports/costing.h"

#include <string.h>

void costing_usage(struct cost_usage *u, const struct metrics_summary *s,
		   const struct cluster_summary *cls, int32_t replicas, int32_t gpus_per_replica,
		   int64_t engineers, double periods_per_month)
{
	memset(u, 0, sizeof(*u));
	u->duration_s = s->duration_s;
	u->periods_per_month = periods_per_month;
	u->replicas = replicas > 0 ? replicas : 1;
	u->gpus_per_replica = gpus_per_replica > 0 ? gpus_per_replica : 1;
	u->busy_s_per_gpu = s->gpu_busy_fraction * s->duration_s;
	if (u->busy_s_per_gpu > s->duration_s)
		u->busy_s_per_gpu = s->duration_s;
	u->idle_s_per_gpu = s->duration_s - u->busy_s_per_gpu;
	double gpus = (double)u->replicas * (double)u->gpus_per_replica;
	if (cls) {
		u->gpu_hours_provisioned = cls->gpu_hours_provisioned;
		u->gpu_hours_busy = cls->gpu_hours_busy;
		/* the replica timeline's stretches, billed as a cloud bills them */
		u->replica_up = cls->replica_up;
		u->replica_up_count = cls->replica_up ? cls->replica_up_count : 0;
	} else {
		u->gpu_hours_provisioned = gpus * s->duration_s / 3600.0;
		u->gpu_hours_busy = gpus * u->busy_s_per_gpu / 3600.0;
	}
	u->prompt_tokens = s->prompt_tokens;
	u->cached_tokens = s->cached_prompt_tokens;
	u->output_tokens = s->output_tokens;
	u->calls = s->completed + s->failed;
	u->tasks = s->tasks;
	u->tasks_accept_known = s->tasks_accept_known;
	u->tasks_accepted = s->tasks_accepted;
	u->engineers = engineers;
}

int costing_write_table(FILE *out, const struct costing *c, struct diag *d)
{
	const struct cost_result *r = c->r;
	size_t n = c->n;
	fputs("Cost (USD; docs/cost.md)\n", out);
	if (n == 0) {
		fprintf(out, "  the price catalogue has no purchase, dedicated or rental price for %s "
			"(agentcap catalog --prices)\n", c->hardware);
	} else {
		char as_of[COST_DATE_MAX] = "";
		for (size_t i = 0; i < n; i++)
			cost_newest_date(as_of, &r[i]);
		fprintf(out, "  Prices as of %s (the newest date of the prices used; each price's own "
			"date is in its source)\n", as_of[0] ? as_of : "- (no dated price used)");
		fprintf(out, "  %-40s %14s %14s %14s %14s\n", "option", "per month",
			"per 1M out tok", "per acc. task", "per eng-month");
	}
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "  %-40s %14.2f %14.4f %14.4f ", r[i].label, r[i].usd_month,
			r[i].usd_per_mtok_output, r[i].usd_per_accepted_task);
		if (r[i].usd_per_engineer_month > 0)
			fprintf(out, "%14.2f\n", r[i].usd_per_engineer_month);
		else
			fprintf(out, "%14s\n", "-");
	}
	fprintf(out, "  A month: %.6g replays of the trace (%s)\n", c->periods_per_month,
		c->periods_source);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "\n  %s: %.2f USD per month =", r[i].label, r[i].usd_month);
		for (size_t k = 0; k < r[i].part_count; k++)
			fprintf(out, "%s %s %.2f", k ? " +" : "", r[i].parts[k].name,
				r[i].parts[k].usd_month);
		fputc('\n', out);
		for (size_t k = 0; k < r[i].assumption_count; k++) {
			const struct cost_assumption *a = &r[i].assumptions[k];
			fprintf(out, "    %-22s %14.6g %-22s %s\n", a->name, a->value, a->unit,
				a->source);
		}
	}
	if (c->powered) {
		const struct cost_energy *e = &c->e;
		fprintf(out, "\n  Energy: %.4g J per output token (IT, the replayed span); %.6g kWh "
			"per month IT, %.6g kWh with PUE (%.6g GPU-h busy, %.6g GPU-h idle)\n",
			e->j_per_output_token, e->kwh_month_it, e->kwh_month_facility,
			e->busy_gpu_hours_month, e->idle_gpu_hours_month);
		fprintf(out, "  Power: busy %g W per GPU (%s); idle %g W (%s); PUE %g (%s)\n",
			c->busy_w.value, c->busy_w.source, c->idle_w.value, c->idle_w.source,
			c->pue.value, c->pue.source);
	}
	if (c->note[0])
		fprintf(out, "\n  Not priced: %s\n", c->note);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "write failed");
	return 0;
}
