/* SPDX-License-Identifier: Apache-2.0
 * output: terminal table and JSON document of one run (see output.h).
 *
 * The JSON is written by hand rather than through a JSON library so that the
 * bytes are fixed by this file alone: keys in the order below, two-space
 * indentation, integers in decimal, and every double as the shortest of
 * %.15g / %.16g / %.17g that reads back to the same value (non-finite values
 * as null, -0 as 0).  docs/metrics.md lists the keys; keep the two in step.
 */
#include "reports/output.h"

#include "base/diag.h"
#include "base/jsonw.h"
#include "base/outfile.h"
#include "reports/backends.h"
#include "reports/cluster.h"
#include "reports/costing.h"
#include "reports/fields.h"
#include "reports/timeseries.h"
#include "base/warn.h"
#include "reports/charts.h"
#include "reports/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- warnings ------------------------------------------------------------ */

bool report_answer_no(const struct report_meta *meta, const struct metrics_summary *s)
{
	if (s->failed > 0)
		return true;
	bool slo = meta->slo_ttft_ms > 0.0 || meta->slo_tpot_ms > 0.0;
	return slo && s->completed > 0 && s->slo_attainment < meta->slo_attainment_target;
}

/* What to change for a rejection reason of sim/sim.c (matched by the words
 * that name its limit). */
static const char *reason_hint(const char *reason)
{
	if (strstr(reason, "abandoned"))
		return "these follow from the failures above: fix those and the sessions go on";
	if (strstr(reason, "max_model_len"))
		return "raise engine.max_model_len if it is below the model's context, else "
		       "pick a model with a longer context";
	if (strstr(reason, "KV"))
		return "give the KV cache more room: more GPUs per replica (tensor_parallel_size), "
		       "a smaller weight format, kv_cache_dtype fp8, or a higher "
		       "engine.gpu_memory_utilization";
	if (strstr(reason, "max_num_batched_tokens"))
		return "set engine.enable_chunked_prefill=true or raise "
		       "engine.max_num_batched_tokens";
	return "see docs/metrics.md (failed_reasons)";
}

void report_run_warnings(const struct report_meta *meta, const struct metrics_summary *s,
			 struct warn_list *w)
{
	int64_t calls = s->completed + s->failed;
	if (s->failed > 0) {
		warn_add(w, "failed_calls",
			 "%" PRId64 " of %" PRId64 " calls failed (%.1f%%): they were never served, so "
			 "the latency percentiles below cover the %" PRId64 " completed calls only and "
			 "this deployment cannot serve the trace as it is.",
			 s->failed, calls, 100.0 * (double)s->failed / (double)calls, s->completed);
		for (size_t i = 0; i < s->n_failed_reasons; i++) {
			const struct metrics_reason *r = &s->failed_reasons[i];
			warn_add(w, "failed_reason", "%" PRId64 " calls: %s. To change: %s.", r->count,
				 r->reason, reason_hint(r->reason));
		}
	}
	bool slo = meta->slo_ttft_ms > 0.0 || meta->slo_tpot_ms > 0.0;
	if (slo && calls > 0 && s->slo_attainment < meta->slo_attainment_target) {
		char obj[96] = "";
		if (meta->slo_ttft_ms > 0.0 && meta->slo_tpot_ms > 0.0)
			snprintf(obj, sizeof(obj), "TTFT <= %g ms and TPOT <= %g ms", meta->slo_ttft_ms,
				 meta->slo_tpot_ms);
		else if (meta->slo_ttft_ms > 0.0)
			snprintf(obj, sizeof(obj), "TTFT <= %g ms", meta->slo_ttft_ms);
		else
			snprintf(obj, sizeof(obj), "TPOT <= %g ms", meta->slo_tpot_ms);
		warn_add(w, "slo_attainment",
			 "SLO attainment %.1f%% is below the target %.1f%% (slo.attainment): %" PRId64
			 " of %" PRId64 " calls met %s. The answer for this deployment is no: add "
			 "GPUs or replicas, or choose a smaller or quantized model.",
			 100.0 * s->slo_attainment, 100.0 * meta->slo_attainment_target,
			 s->good_requests, calls, obj);
	}
}

/* ---- terminal table ---------------------------------------------------- */

#define TABLE_WIDTH 50
#define TABLE_LABEL 40

/* A title centred in a rule of `fill`, laid out as Python's "{:^50}". */
static void table_rule(FILE *out, const char *title, char fill)
{
	size_t n = strlen(title);
	size_t pad = n < TABLE_WIDTH ? TABLE_WIDTH - n : 0;
	size_t left = pad / 2;
	for (size_t i = 0; i < left; i++)
		fputc(fill, out);
	fputs(title, out);
	for (size_t i = left; i < pad; i++)
		fputc(fill, out);
	fputc('\n', out);
}

static void table_str(FILE *out, const char *label, const char *value)
{
	fprintf(out, "%-*s %s\n", TABLE_LABEL, label, value ? value : "-");
}

static void table_int(FILE *out, const char *label, int64_t value)
{
	fprintf(out, "%-*s %" PRId64 "\n", TABLE_LABEL, label, value);
}

static void table_num(FILE *out, const char *label, double value)
{
	fprintf(out, "%-*s %.2f\n", TABLE_LABEL, label, value);
}

void report_human_duration(char *buf, size_t cap, double s)
{
	buf[0] = '\0';
	if (!isfinite(s) || s < 60 || cap == 0)
		return;
	long long t = llround(s);
	if (t < 3600)
		snprintf(buf, cap, "%lld min %02lld s", t / 60, t % 60);
	else if (t < 86400)
		snprintf(buf, cap, "%lld h %02lld min", t / 3600, t % 3600 / 60);
	else
		snprintf(buf, cap, "%lld d %02lld h %02lld min", t / 86400, t % 86400 / 3600,
			 t % 3600 / 60);
}

/* A duration in `unit` ("ms" or "s"): the number as table_num prints it,
 * then, from a minute up, the same in d/h/min beside it. */
static void table_dur(FILE *out, const char *label, double value, const char *unit)
{
	char h[48];
	report_human_duration(h, sizeof(h), strcmp(unit, "ms") == 0 ? value / 1000.0 : value);
	if (h[0])
		fprintf(out, "%-*s %.2f  (%s)\n", TABLE_LABEL, label, value, h);
	else
		table_num(out, label, value);
}

/* Row id of the field table (reports/fields.h), as the table shows it. */
static void tf(FILE *out, enum report_field_id id, const struct report_meta *m,
	       const struct metrics_summary *s)
{
	const struct report_field *f = report_field(id);
	char buf[32];
	switch (f->type) {
	case RT_STR:
		table_str(out, f->label, report_field_str(f, m));
		return;
	case RT_BOOL: {
		bool v = report_field_int(f, m, s) != 0;
		table_str(out, f->label, f->show == RS_ADMISSION ? (v ? "whole prompt" : "first chunk")
								  : (v ? "on" : "off"));
		return;
	}
	case RT_U64:
		snprintf(buf, sizeof(buf), "%" PRIu64, report_field_uint(f, m, s));
		table_str(out, f->label, buf);
		return;
	case RT_I32:
	case RT_I64:
		table_int(out, f->label, report_field_int(f, m, s));
		return;
	case RT_DBL: {
		double v = report_field_num(f, m, s);
		if (f->show == RS_PERCENT)
			v *= 100.0;
		if (f->show == RS_DURATION)
			table_dur(out, f->label, v, f->unit);
		else
			table_num(out, f->label, v);
		return;
	}
	}
}

/* Statistic `stat` ("Mean", "Median", "P90", ...) of row st as a label. */
static const char *stat_label(char *buf, size_t cap, const char *stat,
			      const struct report_stats_field *st)
{
	snprintf(buf, cap, "%s %s (%s):", stat, st->short_name, st->unit);
	return buf;
}

/* Mean, median and tail percentiles of one latency, as vllm bench serve
 * prints them ("Mean TTFT (ms):"), under the row's title. */
static void table_stats(FILE *out, enum report_stats_id id, const struct metrics_summary *s)
{
	const struct report_stats_field *f = report_stats_field(id);
	const struct metrics_stats *st = report_stats_of(f, s);
	char label[96];
	table_rule(out, f->title, '-');
	table_dur(out, stat_label(label, sizeof(label), "Mean", f), st->mean, f->unit);
	table_dur(out, stat_label(label, sizeof(label), "Median", f), st->median, f->unit);
	table_dur(out, stat_label(label, sizeof(label), "P90", f), st->p90, f->unit);
	table_dur(out, stat_label(label, sizeof(label), "P95", f), st->p95, f->unit);
	table_dur(out, stat_label(label, sizeof(label), "P99", f), st->p99, f->unit);
}

/* A rejection reason as a label, control characters shown as '?'. */
static void table_reason(FILE *out, const struct metrics_reason *r)
{
	char label[METRICS_REASON_MAX_LEN + 8];
	size_t n = 0;
	label[n++] = ' ';
	label[n++] = ' ';
	for (const char *p = r->reason; *p && n < sizeof(label) - 2; p++)
		label[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
	label[n++] = ':';
	label[n] = '\0';
	table_int(out, label, r->count);
}

static void table_run(FILE *out, const struct report_meta *m)
{
	const struct metrics_summary *none = NULL;
	table_rule(out, " agentcap run ", '=');
	static const enum report_field_id FIRST[] = {RF_VERSION, RF_MODEL, RF_HARDWARE,
		RF_TRACE_PATH, RF_TRACE_FORMAT, RF_SCENARIO_NAME};
	for (size_t i = 0; i < sizeof(FIRST) / sizeof(FIRST[0]); i++)
		tf(out, FIRST[i], m, none);
	if (m->scenario_path)
		tf(out, RF_SCENARIO_PATH, m, none);
	static const enum report_field_id SHAPE[] = {RF_WEIGHT_FORMAT, RF_KV_DTYPE,
		RF_ENGINE_PROFILE, RF_TP, RF_PP};
	for (size_t i = 0; i < sizeof(SHAPE) / sizeof(SHAPE[0]); i++)
		tf(out, SHAPE[i], m, none);
	if (m->ep > 1)
		tf(out, RF_EP, m, none);
	static const enum report_field_id ENGINE[] = {RF_GPU_MEMORY_UTILIZATION, RF_MAX_MODEL_LEN,
		RF_KV_CAPACITY, RF_BLOCK_SIZE, RF_MAX_NUM_SEQS, RF_MAX_NUM_BATCHED_TOKENS,
		RF_PREFIX_CACHING, RF_CHUNKED_PREFILL, RF_RESERVE_FULL_PROMPT, RF_CONTEXT_POLICY,
		RF_SEED};
	for (size_t i = 0; i < sizeof(ENGINE) / sizeof(ENGINE[0]); i++)
		tf(out, ENGINE[i], m, none);
	if (m->slo_ttft_ms > 0.0)
		tf(out, RF_SLO_TTFT, m, none);
	if (m->slo_tpot_ms > 0.0)
		tf(out, RF_SLO_TPOT, m, none);
	if (m->bands.coverage > 0) {
		const struct {
			const char *what;
			double pct;
			const char *regime;
		} b[] = {
			{ "throughput", m->bands.throughput_pct, m->bands.throughput_regime },
			{ "TTFT", m->bands.ttft_pct, m->bands.ttft_regime },
			{ "TPOT", m->bands.tpot_pct, m->bands.tpot_regime },
		};
		for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
			char label[64], value[192];
			snprintf(label, sizeof(label), "Model %.0f%% band, %s:", 100 * m->bands.coverage,
				 b[i].what);
			snprintf(value, sizeof(value), "+-%.1f%% (%s)", b[i].pct,
				 b[i].regime ? b[i].regime : "-");
			table_str(out, label, value);
		}
		if (m->bands.extrapolation) {
			char value[256];
			snprintf(value, sizeof(value), "%s (no calibration row; bands widened)",
				 m->bands.extrapolation);
			table_str(out, "Model extrapolates to:", value);
		}
	}
	tf(out, RF_SKIPPED_LINES, m, none);
	tf(out, RF_EVENTS, m, none);
	tf(out, RF_ENGINE_STEPS, m, none);
	if (m->calibration)
		report_calibration_table(out, m->calibration);
}

/* Printable (control characters as '?'), at most n bytes. */
/* Tokens a verify step yielded per sequence, kind k (-1: all kinds). */
static double spec_tokens_per_step(const struct report_spec *p, int k)
{
	int64_t st = 0, tok = 0;
	for (int i = 0; i < OUT_KINDS; i++)
		if (k < 0 || k == i) {
			st += p->seq_steps[i];
			tok += p->tokens[i];
		}
	return st ? (double)tok / (double)st : 0;
}

/* Speed-up of kind k's decoding at the batches the run formed: its tokens
 * per verify step times plain over speculative decode-run time. */
static double spec_speedup(const struct report_spec *p, int k)
{
	return p->run_s > 0 ? spec_tokens_per_step(p, k) * p->plain_s / p->run_s : 0;
}

static void table_spec(FILE *out, const struct report_spec *p, const struct metrics_summary *s)
{
	char buf[160];
	table_rule(out, "Speculative Decoding", '-');
	snprintf(buf, sizeof(buf), "%s%s%s, k %d", p->method, p->draft ? " " : "",
		 p->draft ? p->draft : "", (int)p->k);
	table_str(out, "Drafter:", buf);
	if (p->given_text)
		table_str(out, "Acceptance given as:", p->given_text);
	table_num(out, "Tokens per verify step:", spec_tokens_per_step(p, -1));
	table_num(out, "Decode speed-up (x):", spec_speedup(p, -1));
	for (int k = 0; k < OUT_KINDS; k++) {
		if (p->seq_steps[k] == 0 && s->by_kind[k].calls == 0)
			continue;
		snprintf(buf, sizeof(buf), "%s: alpha %.2f, %.2f tok/step, %.2fx, TPOT %.2f ms",
			 out_kind_name(k), p->acceptance[k], spec_tokens_per_step(p, k),
			 spec_speedup(p, k), s->by_kind[k].tpot_ms_mean);
		table_str(out, "  by kind:", buf);
	}
}

static void table_name(FILE *out, const char *s, int n)
{
	for (int k = 0; s && s[k] && k < n; k++)
		fputc((unsigned char)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k], out);
}

/* One group's latencies: a line of calls, then one of P50 / P95 each. */
static void table_group(FILE *out, const char *label, const struct metrics_group *g)
{
	char buf[200];
	fprintf(out, "  ");
	table_name(out, label, 24);
	fprintf(out, ": %" PRId64 " calls", g->completed);
	if (g->failed)
		fprintf(out, ", %" PRId64 " failed", g->failed);
	fputc('\n', out);
	snprintf(buf, sizeof(buf), "%.2f / %.2f", g->ttft_ms.median, g->ttft_ms.p95);
	table_str(out, "    TTFT P50 / P95 (ms):", buf);
	snprintf(buf, sizeof(buf), "%.2f / %.2f", g->tpot_ms.median, g->tpot_ms.p95);
	table_str(out, "    TPOT P50 / P95 (ms):", buf);
	snprintf(buf, sizeof(buf), "%.2f / %.2f", g->e2el_ms.median, g->e2el_ms.p95);
	table_str(out, "    E2EL P50 / P95 (ms):", buf);
}

/* Latencies by priority class and by team (report_groups). */
static void table_groups(FILE *out, const struct report_groups *gr, const struct metrics_summary *s)
{
	char label[48];
	table_rule(out, "Priorities and Teams", '-');
	table_str(out, "Scheduling policy:", gr->policy);
	if (gr->team_max_inflight > 0)
		table_int(out, "Team cap (calls in flight):", gr->team_max_inflight);
	else
		table_str(out, "Team cap (calls in flight):", "none");
	for (int32_t k = 0; k < s->n_classes; k++) {
		snprintf(label, sizeof(label), "class %d", (int)s->by_class[k].id);
		table_group(out, label, &s->by_class[k]);
	}
	for (int32_t k = 0; k < s->n_teams; k++) {
		int32_t id = s->by_team[k].id;
		snprintf(label, sizeof(label), "team %.40s", gr->team_label[id] ? gr->team_label[id] : "?");
		table_group(out, label, &s->by_team[k]);
	}
}

/* One block per pool: its shape, then its figures. */
static void table_pools(FILE *out, const struct cluster_summary *c)
{
	for (int32_t p = 0; p < c->n_pools; p++) {
		const struct cluster_pool *q = &c->pools[p];
		fprintf(out, "pool %d ", (int)p);
		table_name(out, q->name, 40);
		fprintf(out, ": %d x ", (int)q->replicas);
		table_name(out, q->hardware_id, 40);
		fprintf(out, " (TP %d, PP %d, EP %d, %d GPU%s each), ", (int)q->tp, (int)q->pp,
			(int)q->ep, (int)q->gpus_per_replica, q->gpus_per_replica > 1 ? "s" : "");
		table_name(out, q->model_id, 60);
		fputc(' ', out);
		table_name(out, q->weight_format, 20);
		fputs(", ", out);
		table_name(out, q->engine_profile, 20);
		fprintf(out, ", KV %" PRId64 " tokens/replica\n", q->kv_capacity_tokens);
	}
	fprintf(out, "%-6s %10s %8s %8s %12s %12s %12s %12s\n", "pool", "requests", "busy %", "hit %",
		"preemptions", "p95 TTFT ms", "GPU-h prov", "GPU-h busy");
	for (int32_t p = 0; p < c->n_pools; p++) {
		const struct cluster_pool *q = &c->pools[p];
		fprintf(out, "%-6d %10" PRId64 " %8.2f %8.2f %12" PRId64 " %12.2f %12.3f %12.3f\n",
			(int)p, q->requests, 100.0 * q->busy_fraction, 100.0 * q->prefix_cache_hit_rate,
			q->preemptions, q->ttft_p95_ms, q->gpu_hours_provisioned, q->gpu_hours_busy);
	}
}

/* The cluster section: GPU-hours, router decisions, one line per replica. */
static void table_cluster(FILE *out, const struct cluster_summary *c)
{
	const struct cluster_router *r = &c->router;
	table_rule(out, "Cluster", '-');
	table_int(out, "GPUs per replica:", c->gpus_per_replica);
	table_num(out, "GPU-hours provisioned:", c->gpu_hours_provisioned);
	table_num(out, "GPU-hours busy:", c->gpu_hours_busy);
	table_str(out, "Router policy:", r->policy);
	if (r->prefix_scorer)
		table_str(out, "Prefix scorer:", r->prefix_scorer);
	table_int(out, "Calls routed:", r->routed);
	table_int(out, "Calls queued at the router:", r->queued);
	table_int(out, "Calls refused by the router:", r->refused);
	table_num(out, "Mean router wait of queued (ms):", r->wait_mean_ms);
	table_num(out, "Max router wait (ms):", r->wait_max_ms);
	table_int(out, "Peak router queue:", r->queue_peak);
	table_int(out, "Affinity fallbacks:", r->affinity_fallbacks);
	table_int(out, "Prefix picks moved by the load cap:", r->load_capped);
	table_int(out, "Calls sent for their cached prefix:", r->prefix_matched);
	const struct cluster_elastic *e = &c->elastic;
	if (e->on && e->lifecycle) {
		table_num(out, "Replica start-up (s):", e->startup_s);
		table_num(out, "  node provisioning (s):", e->provision_s);
		table_num(out, e->image_prepulled ? "  image pull, pre-pulled (s):" : "  image pull (s):",
			  e->image_pull_s);
	}
	if (e->on) {
		if (e->on_demand)
			table_num(out, "Model load, on demand (s):", e->model_load_s);
		table_num(out, "  engine start (s):", e->engine_start_s);
		table_num(out, "  weight load (s):", e->weight_load_s);
		table_num(out, e->compile_cache ? "  torch.compile, cached (s):" : "  torch.compile, cold (s):",
			  e->compile_s);
		table_num(out, "  CUDA-graph capture (s):", e->cuda_graph_s);
		table_num(out, "  first-request warm-up (s):", e->warmup_s);
		if (e->on_demand) {
			if (e->keep_alive_s >= 0)
				table_num(out, "Model keep-alive (s):", e->keep_alive_s);
			else
				table_str(out, "Model keep-alive:", "never unloads");
			table_int(out, "Model loads:", e->model_loads);
			table_int(out, "Model reloads after unloading:", e->model_reloads);
			table_num(out, "Time loading models (s):", e->model_load_total_s);
		}
	}
	if (e->on && e->lifecycle) {
		table_num(out, "Mean replicas billed:", e->replicas_billed_mean);
		table_int(out, "Fewest replicas up:", e->replicas_up_min);
		table_int(out, "Most replicas up:", e->replicas_up_max);
		table_int(out, "Replica starts:", e->starts);
	}
	if (e->on && e->autoscale) {
		table_str(out, "Autoscale policy:", e->policy);
		table_str(out, "Autoscale metric:", e->metric);
		table_num(out, "Autoscale target per replica:", e->target);
		if (strcmp(e->policy, "cooldown") != 0)
			table_num(out, "Metric age when read (s):", e->metric_lag_s);
		table_int(out, "Scale-outs:", e->scale_outs);
		table_int(out, "Scale-ins:", e->scale_ins);
		if (strcmp(e->policy, "keda") == 0) {
			table_int(out, "Activations from zero:", e->activations);
			table_int(out, "Scale-ins to zero:", e->deactivations);
		}
	}
	if (e->on && e->faults) {
		table_int(out, "Replica failures:", e->fault_count);
		table_num(out, "Time with a replica down (s):", e->outage_s);
		table_int(out, "Calls retried after a failure:", e->retried_calls);
		table_int(out, "Calls failed by a failure:", e->fault_failed);
		if (e->detection && strcmp(e->detection, "probe") == 0) {
			char buf[160];
			snprintf(buf, sizeof(buf), "probe every %.15g s, %d failures, %.15g s timeout",
				 e->probe_period_s, (int)e->probe_failure_threshold, e->probe_timeout_s);
			table_str(out, "Failures detected by:", buf);
			table_int(out, "Calls that waited on a hung replica:", e->hung_calls);
			table_num(out, "Time lost on hung replicas (s):", e->hung_wait_s);
			table_int(out, "Calls given up by client timeout:", e->client_timeouts);
			table_num(out, "Time in retry back-off (s):", e->backoff_s);
		}
		table_num(out, "SLO attainment during outages (%):", 100.0 * e->slo_attainment_outage);
		table_num(out, "SLO attainment outside outages (%):", 100.0 * e->slo_attainment_outside);
	}
	if (c->n_pools)
		table_pools(out, c);
	fprintf(out, "%-8s %10s %10s %8s %8s %12s%s\n", "replica", "routed", "requests", "busy %",
		"hit %", "preemptions", c->n_pools ? "  pool" : "");
	for (int32_t i = 0, p = 0; i < c->replicas; i++) {
		const struct cluster_replica *x = &c->per_replica[i];
		fprintf(out, "%-8d %10" PRId64 " %10" PRId64 " %8.2f %8.2f %12" PRId64, (int)i,
			x->routed, x->requests, 100.0 * x->busy_fraction,
			100.0 * x->prefix_cache_hit_rate, x->preemptions);
		if (c->n_pools) {
			while (i >= c->pools[p].first + c->pools[p].replicas)
				p++;
			fprintf(out, "  %d", (int)p);
		}
		fputc('\n', out);
	}
}

/* The backends section: where calls went, what each side cost and how it
 * felt (docs/hybrid.md). */
static void table_backends(FILE *out, const struct backends_summary *b)
{
	table_rule(out, "Backends", '-');
	if (b->spill_to) {
		char rule[160], wait[48] = "", ttft[48] = "";
		if (b->spill_wait_ms > 0)
			snprintf(wait, sizeof(wait), "queue wait > %.15g ms", b->spill_wait_ms);
		if (b->spill_ttft_ms > 0)
			snprintf(ttft, sizeof(ttft), "TTFT > %.15g ms", b->spill_ttft_ms);
		snprintf(rule, sizeof(rule), "%s (predicted %s%s%s)", b->spill_to, wait,
			 wait[0] && ttft[0] ? " or " : "", ttft);
		table_str(out, "Spill over to:", rule);
	}
	if (b->fallback_to)
		table_str(out, "Fall back to:", b->fallback_to);
	if (b->size_to) {
		char rule[160];
		snprintf(rule, sizeof(rule), "%s (prompts > %lld tokens)", b->size_to,
			 (long long)b->size_prompt_tokens);
		table_str(out, "Route by size to:", rule);
	}
	table_num(out, "Calls spilled (%):", 100.0 * b->spilled_share);
	table_num(out, "Calls fallen back (%):", 100.0 * b->fallback_share);
	table_num(out, "Calls routed by size (%):", 100.0 * b->size_share);
	table_num(out, "Calls served by an API (%):", 100.0 * b->api_share);
	table_num(out, "API spend over the run (USD):", b->usd);
	fprintf(out, "%-12s %5s %8s %7s %8s %13s %11s %10s %9s %9s %9s %9s\n", "backend", "kind",
		"calls", "calls %", "tasks", "prompt tok", "cached %", "output tok", "USD", "p50 TTFT",
		"p95 TTFT", "p95 E2EL");
	for (int32_t k = 0; k < b->n; k++) {
		const struct backends_row *r = &b->rows[k];
		double hit = r->prompt_tokens ? (double)r->cached_prompt_tokens / (double)r->prompt_tokens : 0;
		fprintf(out,
			"%-12.12s %5.5s %8" PRId64 " %7.2f %8" PRId64 " %13" PRId64 " %11.2f %10" PRId64
			" %9.2f %9.0f %9.0f %9.0f\n",
			r->name, r->kind, r->calls, 100.0 * r->call_share, r->tasks, r->prompt_tokens,
			100.0 * hit, r->output_tokens, r->usd, r->ttft_median_ms, r->ttft_p95_ms,
			r->e2el_p95_ms);
	}
	for (int32_t k = 1; k < b->n; k++)
		if (b->rows[k].rate_limited > 0)
			fprintf(out, "%s: %" PRId64 " responses 429 (per-minute limits), %.2f s waited in "
				"back-off, %" PRId64 " calls gave up\n", b->rows[k].name,
				b->rows[k].rate_limited, b->rows[k].backoff_s, b->rows[k].limit_failed);
	for (int32_t k = 1; k < b->n; k++)
		if (b->rows[k].seat_usd_month > 0)
			fprintf(out, "%s: seat plan %s at %.2f USD per engineer-month (calls not priced per token)\n",
				b->rows[k].name, b->rows[k].price_id, b->rows[k].seat_usd_month);
	fputs("(latencies in ms)\n", out);
}

#define WARN_WRAP 78

/* One warning as "! " and its message wrapped at WARN_WRAP columns, the
 * continuation lines indented by two spaces.  Control characters show as
 * '?'. */
static void table_warning(FILE *out, const struct warn *x)
{
	const char *p = x->msg;
	const char *lead = "! ";
	while (*p) {
		size_t room = WARN_WRAP - 2, n = strlen(p), cut = n;
		if (n > room) {
			cut = room;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = room;
		}
		fputs(lead, out);
		for (size_t i = 0; i < cut; i++)
			fputc((unsigned char)p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i], out);
		fputc('\n', out);
		p += cut;
		while (*p == ' ')
			p++;
		lead = "  ";
	}
}

static void table_warnings(FILE *out, const struct warn_list *w)
{
	if (!w || (w->count == 0 && w->dropped == 0))
		return;
	table_rule(out, " WARNINGS ", '!');
	for (size_t i = 0; i < w->count; i++)
		table_warning(out, &w->items[i]);
	if (w->dropped)
		fprintf(out, "! ... and %zu more warnings (see --json)\n", w->dropped);
}

void report_table(FILE *out, const struct report_meta *meta, const struct metrics_summary *s)
{
	table_warnings(out, meta->warnings);
	table_run(out, meta);

	const struct report_meta *m = meta;
	bool slo = m->slo_ttft_ms > 0.0 || m->slo_tpot_ms > 0.0;
	table_rule(out, " Serving Benchmark Result ", '=');
	tf(out, RF_COMPLETED, m, s);
	tf(out, RF_FAILED, m, s);
	for (size_t i = 0; i < s->n_failed_reasons; i++)
		table_reason(out, &s->failed_reasons[i]);
	if (s->failed > 0)
		table_str(out, "Latency percentiles cover:", "completed requests only");
	static const enum report_field_id TPUT[] = {RF_DURATION, RF_PROMPT_TOKENS,
		RF_OUTPUT_TOKENS, RF_REQUEST_THROUGHPUT, RF_OUTPUT_THROUGHPUT, RF_TOTAL_THROUGHPUT};
	for (size_t i = 0; i < sizeof(TPUT) / sizeof(TPUT[0]); i++)
		tf(out, TPUT[i], m, s);
	if (slo) {
		tf(out, RF_GOODPUT, m, s);
		tf(out, RF_SLO_ATTAINMENT, m, s);
		tf(out, RF_SLO_TARGET, m, s);
	}

	for (int k = RST_TTFT; k <= RST_E2EL; k++)
		table_stats(out, (enum report_stats_id)k, s);

	table_rule(out, "Prefix Cache", '-');
	tf(out, RF_CACHED_TOKENS, m, s);
	tf(out, RF_HIT_RATE, m, s);
	tf(out, RF_COMPUTED_PREFILL, m, s);
	tf(out, RF_INFLIGHT_MISS, m, s);
	if (m->tiers.n > 0) {
		tf(out, RF_CACHED_GPU, m, s);
		tf(out, RF_CACHED_HOST, m, s);
		if (m->tiers.n > 1)
			tf(out, RF_CACHED_DISK, m, s);
		tf(out, RF_TIER_LOADED, m, s);
		tf(out, RF_TIER_LOAD_S, m, s);
		tf(out, RF_TIER_MODE, m, s);
		if (m->tiers.mode && strcmp(m->tiers.mode, "write_through") == 0)
			for (int id = RF_TIER_STORED_BLOCKS; id <= RF_TIER_LOAD_WAIT_S; id++)
				tf(out, (enum report_field_id)id, m, s);
	}
	if (m->retention.on)
		for (int id = RF_RETAIN_TTL; id <= RF_RETAIN_CAPPED; id++)
			tf(out, (enum report_field_id)id, m, s);
	if (m->pd.on)
		for (int id = RF_PD_LINK; id <= RF_PD_WIRE_S; id++)
			tf(out, (enum report_field_id)id, m, s);
	tf(out, RF_PREEMPTIONS, m, s);
	tf(out, RF_EVICTED, m, s);
	if (m->spec.on)
		table_spec(out, &m->spec, s);
	if (m->groups.on)
		table_groups(out, &m->groups, s);

	table_rule(out, "Context Limit", '-');
	tf(out, RF_COMPACTED, m, s);
	tf(out, RF_TRUNCATED, m, s);
	tf(out, RF_TOO_LONG, m, s);

	table_rule(out, "Utilisation and Headroom", '-');
	for (int id = RF_REPLICAS; id <= RF_KV_USE_PEAK; id++)
		tf(out, (enum report_field_id)id, m, s);

	if (s->peak_calls > 0) {
		char title[64];
		if (s->peak_window_s < METRICS_PEAK_WINDOW_S)
			snprintf(title, sizeof(title), "Peak Hour (whole run: %.0f s)", s->peak_window_s);
		else
			snprintf(title, sizeof(title), "Peak Hour (busiest by tokens arriving)");
		table_rule(out, title, '-');
		tf(out, RF_PEAK_OFFSET, m, s);
		tf(out, RF_PEAK_CALLS, m, s);
		tf(out, RF_PEAK_FAILED, m, s);
		tf(out, RF_PEAK_TOKENS, m, s);
		if (slo)
			tf(out, RF_PEAK_SLO, m, s);
		for (int k = RST_PEAK_TTFT; k <= RST_PEAK_TPOT; k++) {
			const struct report_stats_field *f = report_stats_field((enum report_stats_id)k);
			const struct metrics_stats *st = report_stats_of(f, s);
			char label[96];
			table_num(out, stat_label(label, sizeof(label), "Median", f), st->median);
			table_num(out, stat_label(label, sizeof(label), "P90", f), st->p90);
			table_num(out, stat_label(label, sizeof(label), "P99", f), st->p99);
		}
	}

	if (meta->cluster)
		table_cluster(out, meta->cluster);
	if (meta->backends)
		table_backends(out, meta->backends);

	if (s->sessions > 0) {
		table_rule(out, "Sessions", '-');
		tf(out, RF_SESSIONS, m, s);
		tf(out, RF_SESSION_CALLS, m, s);
		table_stats(out, RST_SESSION, s);
	}
	if (s->tasks > 0) {
		table_rule(out, "Tasks", '-');
		tf(out, RF_TASKS, m, s);
		tf(out, RF_TASKS_KNOWN, m, s);
		tf(out, RF_TASKS_ACCEPTED, m, s);
		table_stats(out, RST_TASK, s);
	}
	table_rule(out, "", '=');
}

/* ---- JSON ---------------------------------------------------------------- */

#define JSON_MAX_DEPTH 6

struct json {
	FILE *fp;
	int depth;
	int first[JSON_MAX_DEPTH]; /* no member written yet at this depth */
};


static void json_key(struct json *j, const char *key)
{
	fputs(j->first[j->depth] ? "\n" : ",\n", j->fp);
	j->first[j->depth] = 0;
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->fp);
	jsonw_str(j->fp, key);
	fputs(": ", j->fp);
}

/* An array element: separator and indentation, no key. */
static void json_elem(struct json *j)
{
	fputs(j->first[j->depth] ? "\n" : ",\n", j->fp);
	j->first[j->depth] = 0;
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->fp);
}

/* One nesting level for an object ('{' '}') or an array ('[' ']'). */
static void json_push(struct json *j, int open)
{
	fputc(open, j->fp);
	j->depth++;
	j->first[j->depth] = 1;
}

static void json_pop(struct json *j, int close)
{
	int empty = j->first[j->depth];
	j->depth--;
	if (!empty) {
		fputc('\n', j->fp);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->fp);
	}
	fputc(close, j->fp);
}

static void json_open_array(struct json *j) { json_push(j, '['); }
static void json_close_array(struct json *j) { json_pop(j, ']'); }
static void json_open(struct json *j) { json_push(j, '{'); }
static void json_close(struct json *j) { json_pop(j, '}'); }

static void json_int(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	fprintf(j->fp, "%" PRId64, v);
}

static void json_uint(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->fp, "%" PRIu64, v);
}

static void json_bool(struct json *j, const char *key, int v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->fp);
}

static void json_str(struct json *j, const char *key, const char *v)
{
	json_key(j, key);
	jsonw_str(j->fp, v);
}

/* The shortest of %.15g, %.16g, %.17g that reads back as v; null if v is
 * not finite. */
static void json_number(FILE *fp, double v)
{
	char buf[40];
	if (!isfinite(v)) {
		fputs("null", fp);
		return;
	}
	if (v == 0.0) {
		fputs("0", fp);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, fp);
}

static void json_num(struct json *j, const char *key, double v)
{
	json_key(j, key);
	json_number(j->fp, v);
}

/* A positive SLO, or null when there is none. */
static void json_slo(struct json *j, const char *key, double v)
{
	if (v > 0.0) {
		json_num(j, key, v);
	} else {
		json_key(j, key);
		fputs("null", j->fp);
	}
}

/* The statistics of one metric as flat keys: "<stat>_<name>_ms" in vllm
 * bench serve's style, or "<name>_makespan_s_<stat>" for spans (no std). */
static void json_stat_keys(struct json *j, const char *name, const struct metrics_stats *st,
			   bool span)
{
	const struct {
		const char *stat;
		double value;
	} keys[] = {
		{"mean", st->mean}, {"median", st->median}, {"std", st->std},
		{"p90", st->p90},   {"p95", st->p95},       {"p99", st->p99},
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char key[64];
		if (span && strcmp(keys[i].stat, "std") == 0)
			continue;
		if (span)
			snprintf(key, sizeof(key), "%s_makespan_s_%s", name, keys[i].stat);
		else
			snprintf(key, sizeof(key), "%s_%s_ms", keys[i].stat, name);
		json_num(j, key, keys[i].value);
	}
}

/* Row id of the field table under its key. */
static void jf(struct json *j, enum report_field_id id, const struct report_meta *m,
	       const struct metrics_summary *s)
{
	const struct report_field *f = report_field(id);
	switch (f->type) {
	case RT_STR: json_str(j, f->key, report_field_str(f, m)); return;
	case RT_BOOL: json_bool(j, f->key, report_field_int(f, m, s) != 0); return;
	case RT_U64: json_uint(j, f->key, report_field_uint(f, m, s)); return;
	case RT_I32:
	case RT_I64: json_int(j, f->key, report_field_int(f, m, s)); return;
	case RT_DBL:
		if (f->show == RS_NULL_ZERO)
			json_slo(j, f->key, report_field_num(f, m, s));
		else
			json_num(j, f->key, report_field_num(f, m, s));
		return;
	}
}

/* Rows first..last of the field table, in order. */
static void jf_range(struct json *j, enum report_field_id first, enum report_field_id last,
		     const struct report_meta *m, const struct metrics_summary *s)
{
	for (int id = first; id <= (int)last; id++)
		jf(j, (enum report_field_id)id, m, s);
}

/* A statistics row's keys. */
static void json_stats(struct json *j, enum report_stats_id id, const struct metrics_summary *s)
{
	const struct report_stats_field *f = report_stats_field(id);
	json_stat_keys(j, f->name, report_stats_of(f, s), f->span);
}

/* "calibration": the keys of report_calibration_json, indented. */
static void json_calibration(struct json *j, const struct report_calibration *c)
{
	json_key(j, "calibration");
	json_open(j);
	json_str(j, "source", c->own ? "own" : "built-in");
	json_str(j, "path", c->path);
	char crc[16];
	snprintf(crc, sizeof(crc), "%08lx", c->crc32);
	json_str(j, "crc32", crc);
	json_int(j, "rows", (int64_t)c->rows);
	json_int(j, "parameters", (int64_t)c->parameters);
	json_key(j, "nearest");
	json_open_array(j);
	for (size_t i = 0; i < c->n; i++) {
		const struct report_calib_point *p = &c->points[i];
		json_elem(j);
		json_open(j);
		json_str(j, "regime", p->label);
		json_num(j, "batch", p->batch);
		json_num(j, "context", p->context);
		if (!p->found) {
			json_key(j, "line");
			fputs("null", j->fp);
			json_close(j);
			continue;
		}
		json_int(j, "line", p->line);
		json_str(j, "hardware", p->hardware);
		json_str(j, "model", p->model);
		json_str(j, "engine", p->engine);
		json_num(j, "row_batch", p->row_batch);
		json_num(j, "row_context", p->row_context);
		json_str(j, "hardware_match", p->hardware_match);
		json_str(j, "model_match", p->model_match);
		json_str(j, "engine_match", p->engine_match);
		json_num(j, "batch_doublings", round(p->batch_doublings * 1000) / 1000);
		json_num(j, "context_doublings", round(p->context_doublings * 1000) / 1000);
		json_num(j, "score", round(p->score * 1000) / 1000);
		json_close(j);
	}
	json_close_array(j);
	json_close(j);
}

static void json_run(struct json *j, const struct report_meta *m)
{
	json_key(j, "run");
	json_open(j);
	const struct metrics_summary *none = NULL;
	static const enum report_field_id RUN[] = {RF_VERSION, RF_TRACE_PATH, RF_TRACE_FORMAT,
		RF_SCENARIO_NAME, RF_SCENARIO_PATH, RF_MODEL, RF_HARDWARE, RF_WEIGHT_FORMAT,
		RF_KV_DTYPE, RF_ENGINE_PROFILE, RF_TP, RF_PP};
	for (size_t i = 0; i < sizeof(RUN) / sizeof(RUN[0]); i++)
		jf(j, RUN[i], m, none);
	if (m->ep > 1)
		jf(j, RF_EP, m, none);
	static const enum report_field_id ENGINE[] = {RF_GPU_MEMORY_UTILIZATION, RF_MAX_MODEL_LEN,
		RF_RESERVE_FULL_PROMPT, RF_CONTEXT_POLICY, RF_SEED, RF_KV_CAPACITY, RF_BLOCK_SIZE,
		RF_MAX_NUM_SEQS, RF_MAX_NUM_BATCHED_TOKENS, RF_PREFIX_CACHING, RF_CHUNKED_PREFILL,
		RF_SKIPPED_LINES, RF_EVENTS, RF_ENGINE_STEPS, RF_SCALED_ENGINEERS, RF_SCALED_DAYS,
		RF_SLO_TTFT, RF_SLO_TPOT, RF_SLO_TARGET};
	for (size_t i = 0; i < sizeof(ENGINE) / sizeof(ENGINE[0]); i++)
		jf(j, ENGINE[i], m, none);
	if (m->bands.coverage > 0) {
		json_key(j, "model_bands");
		json_open(j);
		json_num(j, "coverage", m->bands.coverage);
		json_str(j, "calibration_commit", m->bands.commit);
		json_num(j, "output_throughput_pct", m->bands.throughput_pct);
		json_str(j, "output_throughput_regime", m->bands.throughput_regime);
		json_num(j, "ttft_pct", m->bands.ttft_pct);
		json_str(j, "ttft_regime", m->bands.ttft_regime);
		json_num(j, "tpot_pct", m->bands.tpot_pct);
		json_str(j, "tpot_regime", m->bands.tpot_regime);
		json_str(j, "extrapolation", m->bands.extrapolation);
		json_close(j);
	}
	if (m->calibration)
		json_calibration(j, m->calibration);
	json_close(j);
}

/* {"p50": .., "p95": ..} of one latency. */
static void json_p50_p95(struct json *j, const char *key, const struct metrics_stats *st)
{
	json_key(j, key);
	json_open(j);
	json_num(j, "p50", st->median);
	json_num(j, "p95", st->p95);
	json_close(j);
}

/* "scheduling": the policy, the team cap and the latencies by priority
 * class and by team (report_groups). */
static void json_groups(struct json *j, const struct report_groups *gr,
			const struct metrics_summary *s)
{
	json_key(j, "scheduling");
	json_open(j);
	json_str(j, "policy", gr->policy);
	json_int(j, "team_max_inflight", gr->team_max_inflight);
	for (int by_team = 0; by_team < 2; by_team++) {
		json_key(j, by_team ? "by_team" : "by_class");
		json_open_array(j);
		int32_t n = by_team ? s->n_teams : s->n_classes;
		for (int32_t k = 0; k < n; k++) {
			const struct metrics_group *g = by_team ? &s->by_team[k] : &s->by_class[k];
			json_elem(j);
			json_open(j);
			if (by_team)
				json_str(j, "team", gr->team_label[g->id]);
			else
				json_int(j, "class", g->id);
			json_int(j, "completed", g->completed);
			json_int(j, "failed", g->failed);
			json_p50_p95(j, "ttft_ms", &g->ttft_ms);
			json_p50_p95(j, "tpot_ms", &g->tpot_ms);
			json_p50_p95(j, "e2el_ms", &g->e2el_ms);
			json_close(j);
		}
		json_close_array(j);
	}
	json_close(j);
}

/* "pools": each pool's shape and figures. */
static void json_pools(struct json *j, const struct cluster_summary *c)
{
	json_key(j, "pools");
	json_open_array(j);
	for (int32_t p = 0; p < c->n_pools; p++) {
		const struct cluster_pool *q = &c->pools[p];
		json_elem(j);
		json_open(j);
		json_int(j, "pool", p);
		json_str(j, "name", q->name);
		json_str(j, "model_id", q->model_id);
		json_str(j, "hardware_id", q->hardware_id);
		json_str(j, "weight_format", q->weight_format);
		json_str(j, "kv_cache_dtype", q->kv_dtype);
		json_str(j, "engine_profile", q->engine_profile);
		json_int(j, "tensor_parallel_size", q->tp);
		json_int(j, "pipeline_parallel_size", q->pp);
		json_int(j, "expert_parallel_size", q->ep);
		json_int(j, "replicas", q->replicas);
		json_int(j, "first_replica", q->first);
		json_int(j, "gpus_per_replica", q->gpus_per_replica);
		json_int(j, "kv_capacity_tokens", q->kv_capacity_tokens);
		json_int(j, "max_num_seqs", q->max_num_seqs);
		json_int(j, "max_model_len", q->max_model_len);
		json_int(j, "requests", q->requests);
		json_int(j, "prompt_tokens", q->prompt_tokens);
		json_int(j, "cached_prompt_tokens", q->cached_prompt_tokens);
		json_num(j, "prefix_cache_hit_rate", q->prefix_cache_hit_rate);
		json_int(j, "preemptions", q->preemptions);
		json_num(j, "busy_s", q->busy_s);
		json_num(j, "busy_fraction", q->busy_fraction);
		json_num(j, "ttft_p95_ms", q->ttft_p95_ms);
		json_num(j, "gpu_hours_provisioned", q->gpu_hours_provisioned);
		json_num(j, "gpu_hours_busy", q->gpu_hours_busy);
		json_close(j);
	}
	json_close_array(j);
}

/* "elastic": replica start-up, the autoscaler and faults (docs/metrics.md). */
static void json_elastic(struct json *j, const struct cluster_elastic *e)
{
	json_key(j, "elastic");
	json_open(j);
	json_num(j, "startup_s", e->startup_s);
	json_num(j, "provision_s", e->provision_s);
	json_num(j, "weight_load_s", e->weight_load_s);
	json_num(j, "image_pull_s", e->image_pull_s);
	json_num(j, "engine_start_s", e->engine_start_s);
	json_num(j, "compile_s", e->compile_s);
	json_num(j, "cuda_graph_s", e->cuda_graph_s);
	json_num(j, "warmup_s", e->warmup_s);
	json_num(j, "model_load_s", e->model_load_s);
	json_bool(j, "image_prepulled", e->image_prepulled);
	json_bool(j, "compile_cache", e->compile_cache);
	if (e->on_demand) {
		json_key(j, "on_demand");
		json_open(j);
		/* null: never unloads */
		json_num(j, "keep_alive_s", e->keep_alive_s >= 0 ? e->keep_alive_s : NAN);
		json_int(j, "model_loads", e->model_loads);
		json_int(j, "model_reloads", e->model_reloads);
		json_num(j, "model_load_total_s", e->model_load_total_s);
		json_close(j);
	}
	json_num(j, "replicas_billed_mean", e->replicas_billed_mean);
	json_int(j, "replicas_up_min", e->replicas_up_min);
	json_int(j, "replicas_up_max", e->replicas_up_max);
	json_int(j, "starts", e->starts);
	if (e->autoscale) {
		json_key(j, "autoscale");
		json_open(j);
		json_str(j, "metric", e->metric);
		json_num(j, "target", e->target);
		json_int(j, "min_replicas", e->min_replicas);
		json_int(j, "max_replicas", e->max_replicas);
		json_num(j, "interval_s", e->interval_s);
		json_num(j, "cooldown_s", e->cooldown_s);
		json_int(j, "evaluations", e->evaluations);
		json_int(j, "scale_outs", e->scale_outs);
		json_int(j, "scale_ins", e->scale_ins);
		json_int(j, "active_min", e->active_min);
		json_int(j, "active_max", e->active_max);
		json_str(j, "policy", e->policy);
		if (strcmp(e->policy, "cooldown") != 0) {
			json_num(j, "tolerance", e->tolerance);
			json_num(j, "scale_up_window_s", e->up_window_s);
			json_num(j, "scale_down_window_s", e->down_window_s);
			json_int(j, "scale_up_pods", e->up_pods);
			json_num(j, "scale_up_percent", e->up_percent);
			json_num(j, "scale_up_period_s", e->up_period_s);
			json_num(j, "scale_down_percent", e->down_percent);
			json_num(j, "scale_down_period_s", e->down_period_s);
			json_num(j, "metric_lag_s", e->metric_lag_s);
		}
		if (strcmp(e->policy, "keda") == 0) {
			json_num(j, "polling_interval_s", e->polling_s);
			json_num(j, "activation_target", e->activation);
			json_int(j, "activations", e->activations);
			json_int(j, "deactivations", e->deactivations);
		}
		json_close(j);
	}
	if (e->faults) {
		json_key(j, "faults");
		json_open(j);
		json_int(j, "failures", e->fault_count);
		json_int(j, "skipped", e->faults_skipped);
		json_num(j, "outage_s", e->outage_s);
		json_int(j, "retries", e->retries);
		json_int(j, "retried_calls", e->retried_calls);
		json_int(j, "failed_calls", e->fault_failed);
		json_int(j, "calls_during_outage", e->calls_outage);
		json_int(j, "good_during_outage", e->good_outage);
		json_num(j, "slo_attainment_during_outage", e->slo_attainment_outage);
		json_int(j, "calls_outside_outage", e->calls_outside);
		json_int(j, "good_outside_outage", e->good_outside);
		json_num(j, "slo_attainment_outside_outage", e->slo_attainment_outside);
		json_str(j, "detection", e->detection);
		if (e->detection && strcmp(e->detection, "probe") == 0) {
			json_num(j, "probe_period_s", e->probe_period_s);
			json_int(j, "probe_failure_threshold", e->probe_failure_threshold);
			json_num(j, "probe_timeout_s", e->probe_timeout_s);
			json_num(j, "client_timeout_s", e->client_timeout_s);
			json_int(j, "detected", e->detected);
			json_int(j, "hung_calls", e->hung_calls);
			json_num(j, "hung_wait_s", e->hung_wait_s);
			json_int(j, "client_timeouts", e->client_timeouts);
			json_num(j, "backoff_s", e->backoff_s);
		}
		json_close(j);
	}
	json_close(j);
}

static void json_cluster(struct json *j, const struct cluster_summary *c)
{
	const struct cluster_router *r = &c->router;
	json_key(j, "cluster");
	json_open(j);
	json_int(j, "gpus_per_replica", c->gpus_per_replica);
	json_num(j, "gpu_hours_provisioned", c->gpu_hours_provisioned);
	json_num(j, "gpu_hours_busy", c->gpu_hours_busy);
	json_key(j, "router");
	json_open(j);
	json_str(j, "policy", r->policy);
	json_str(j, "prefix_scorer", r->prefix_scorer);
	json_int(j, "routed", r->routed);
	json_int(j, "queued", r->queued);
	json_int(j, "refused", r->refused);
	json_num(j, "wait_mean_ms", r->wait_mean_ms);
	json_num(j, "wait_max_ms", r->wait_max_ms);
	json_int(j, "queue_peak", r->queue_peak);
	json_int(j, "affinity_fallbacks", r->affinity_fallbacks);
	json_int(j, "load_capped", r->load_capped);
	json_int(j, "prefix_matched", r->prefix_matched);
	json_close(j);
	if (c->elastic.on)
		json_elastic(j, &c->elastic);
	json_key(j, "per_replica");
	json_open_array(j);
	for (int32_t i = 0; i < c->replicas; i++) {
		const struct cluster_replica *p = &c->per_replica[i];
		json_elem(j);
		json_open(j);
		json_int(j, "replica", i);
		if (c->n_pools) {
			int32_t q = 0;
			while (i >= c->pools[q].first + c->pools[q].replicas)
				q++;
			json_int(j, "pool", q);
		}
		json_int(j, "routed", p->routed);
		json_int(j, "requests", p->requests);
		json_int(j, "prompt_tokens", p->prompt_tokens);
		json_int(j, "cached_prompt_tokens", p->cached_prompt_tokens);
		json_num(j, "prefix_cache_hit_rate", p->prefix_cache_hit_rate);
		json_int(j, "preemptions", p->preemptions);
		json_num(j, "busy_s", p->busy_s);
		json_num(j, "busy_fraction", p->busy_fraction);
		json_close(j);
	}
	json_close_array(j);
	if (c->n_pools)
		json_pools(j, c);
	json_close(j);
}

static void json_backends(struct json *j, const struct backends_summary *b)
{
	json_key(j, "backends");
	json_open(j);
	json_key(j, "rules");
	json_open(j);
	json_str(j, "spill_to", b->spill_to);
	json_num(j, "spill_wait_ms", b->spill_wait_ms);
	json_num(j, "spill_ttft_ms", b->spill_ttft_ms);
	json_str(j, "fallback_to", b->fallback_to);
	json_str(j, "size_to", b->size_to);
	json_int(j, "size_prompt_tokens", b->size_prompt_tokens);
	json_close(j);
	json_int(j, "calls", b->calls);
	json_num(j, "spilled_share", b->spilled_share);
	json_num(j, "fallback_share", b->fallback_share);
	json_num(j, "size_share", b->size_share);
	json_num(j, "api_share", b->api_share);
	json_num(j, "usd", b->usd);
	json_key(j, "per_backend");
	json_open_array(j);
	for (int32_t k = 0; k < b->n; k++) {
		const struct backends_row *r = &b->rows[k];
		json_elem(j);
		json_open(j);
		json_str(j, "name", r->name);
		json_str(j, "kind", r->kind);
		json_str(j, "price_id", r->price_id);
		json_int(j, "calls", r->calls);
		json_num(j, "call_share", r->call_share);
		json_int(j, "tasks", r->tasks);
		json_int(j, "prompt_tokens", r->prompt_tokens);
		json_int(j, "cached_prompt_tokens", r->cached_prompt_tokens);
		json_int(j, "cache_write_tokens", r->cache_write_tokens);
		json_int(j, "output_tokens", r->output_tokens);
		json_int(j, "calls_spilled", r->by_route[RES_ROUTE_SPILL]);
		json_int(j, "calls_fallback", r->by_route[RES_ROUTE_FALLBACK]);
		json_int(j, "calls_size", r->by_route[RES_ROUTE_SIZE]);
		json_int(j, "rate_limited", r->rate_limited);
		json_num(j, "backoff_s", r->backoff_s);
		json_int(j, "limit_failed", r->limit_failed);
		json_num(j, "usd", r->usd);
		json_num(j, "seat_usd_month", r->seat_usd_month);
		json_num(j, "mean_ttft_ms", r->ttft_mean_ms);
		json_num(j, "median_ttft_ms", r->ttft_median_ms);
		json_num(j, "p90_ttft_ms", r->ttft_p90_ms);
		json_num(j, "p95_ttft_ms", r->ttft_p95_ms);
		json_num(j, "p99_ttft_ms", r->ttft_p99_ms);
		json_num(j, "mean_e2el_ms", r->e2el_mean_ms);
		json_num(j, "median_e2el_ms", r->e2el_median_ms);
		json_num(j, "p90_e2el_ms", r->e2el_p90_ms);
		json_num(j, "p95_e2el_ms", r->e2el_p95_ms);
		json_num(j, "p99_e2el_ms", r->e2el_p99_ms);
		json_close(j);
	}
	json_close_array(j);
	json_close(j);
}

static void json_fig(struct json *j, const char *key, const struct cost_fig *f)
{
	json_key(j, key);
	json_open(j);
	json_num(j, "value", f->value);
	json_str(j, "source", f->source);
	json_close(j);
}

/* replay --cost: each option priced, with its parts and assumptions, and
 * the energy (docs/output-schema.md). */
static void json_cost(struct json *j, const struct costing *c)
{
	json_key(j, "cost");
	json_open(j);
	json_str(j, "currency", "USD");
	json_str(j, "hardware", c->hardware);
	char as_of[COST_DATE_MAX] = "";
	for (size_t i = 0; i < c->n; i++)
		cost_newest_date(as_of, &c->r[i]);
	json_str(j, "prices_as_of", as_of[0] ? as_of : NULL);
	json_num(j, "periods_per_month", c->periods_per_month);
	json_str(j, "periods_source", c->periods_source);
	json_key(j, "options");
	json_open_array(j);
	for (size_t i = 0; i < c->n; i++) {
		const struct cost_result *r = &c->r[i];
		json_elem(j);
		json_open(j);
		json_str(j, "option", cost_option_name(r->option));
		json_str(j, "label", r->label);
		json_num(j, "usd_per_month", r->usd_month);
		json_num(j, "usd_per_1m_output_tokens", r->usd_per_mtok_output);
		json_num(j, "usd_per_accepted_task", r->usd_per_accepted_task);
		json_num(j, "usd_per_engineer_month", r->usd_per_engineer_month);
		json_num(j, "output_tokens_month", r->output_tokens_month);
		json_num(j, "tasks_month", r->tasks_month);
		json_num(j, "accepted_tasks_month", r->accepted_tasks_month);
		json_key(j, "parts");
		json_open_array(j);
		for (size_t k = 0; k < r->part_count; k++) {
			json_elem(j);
			json_open(j);
			json_str(j, "name", r->parts[k].name);
			json_num(j, "usd_per_month", r->parts[k].usd_month);
			json_close(j);
		}
		json_close_array(j);
		json_key(j, "assumptions");
		json_open_array(j);
		for (size_t k = 0; k < r->assumption_count; k++) {
			const struct cost_assumption *a = &r->assumptions[k];
			json_elem(j);
			json_open(j);
			json_str(j, "name", a->name);
			json_num(j, "value", a->value);
			json_str(j, "unit", a->unit);
			json_str(j, "source", a->source);
			json_close(j);
		}
		json_close_array(j);
		json_close(j);
	}
	json_close_array(j);
	if (c->powered) {
		json_key(j, "energy");
		json_open(j);
		json_fig(j, "busy_w_per_gpu", &c->busy_w);
		json_fig(j, "idle_w_per_gpu", &c->idle_w);
		json_fig(j, "pue", &c->pue);
		json_num(j, "gpus", c->e.gpus);
		json_num(j, "busy_gpu_hours_month", c->e.busy_gpu_hours_month);
		json_num(j, "idle_gpu_hours_month", c->e.idle_gpu_hours_month);
		json_num(j, "kwh_month_it", c->e.kwh_month_it);
		json_num(j, "kwh_month_facility", c->e.kwh_month_facility);
		json_num(j, "j_per_output_token", c->e.j_per_output_token);
		json_close(j);
	}
	json_str(j, "not_priced", c->note[0] ? c->note : NULL);
	json_close(j);
}

/* One series of the time series as a one-line array: key: [v0, v1, ...].
 * `get` reads sample k (replica i, or the cluster when i < 0). */
typedef double (*series_get_fn)(const struct res_sample *s, int32_t i);

static void json_series(struct json *j, const char *key, const struct timeseries *ts, int32_t i,
			series_get_fn get, bool integer)
{
	json_key(j, key);
	fputc('[', j->fp);
	for (int64_t k = 0; k < timeseries_len(ts); k++) {
		if (k)
			fputs(", ", j->fp);
		double v = get(timeseries_at(ts, k), i);
		if (integer)
			fprintf(j->fp, "%" PRId64, (int64_t)v);
		else
			json_number(j->fp, v);
	}
	fputc(']', j->fp);
}

/* Sums over the replicas of a sample. */
#define SUM_REPLICAS(field)                                  \
	double v = 0.0;                                      \
	for (int32_t r = 0; r < s->n_replicas; r++)          \
		v += (double)s->replicas[r].field;           \
	return v

static double ts_t(const struct res_sample *s, int32_t i) { (void)i; return (double)s->t_ns / 1e9; }
static double ts_up(const struct res_sample *s, int32_t i) { (void)i; return s->replicas_up; }
static double ts_starting(const struct res_sample *s, int32_t i) { (void)i; return s->replicas_starting; }
static double ts_rqueue(const struct res_sample *s, int32_t i) { (void)i; return (double)s->router_queue; }
static double ts_arr(const struct res_sample *s, int32_t i)
{
	return i < 0 ? (double)s->arrivals : (double)s->replicas[i].arrivals;
}
static double ts_done(const struct res_sample *s, int32_t i)
{
	return i < 0 ? (double)s->completions : (double)s->replicas[i].completions;
}
static double ts_failed(const struct res_sample *s, int32_t i) { (void)i; return (double)s->failed; }
static double ts_waiting(const struct res_sample *s, int32_t i)
{
	if (i >= 0)
		return (double)s->replicas[i].waiting;
	SUM_REPLICAS(waiting);
}
static double ts_running(const struct res_sample *s, int32_t i)
{
	if (i >= 0)
		return (double)s->replicas[i].running;
	SUM_REPLICAS(running);
}
static double ts_batch(const struct res_sample *s, int32_t i)
{
	if (i >= 0)
		return (double)s->replicas[i].batch_tokens;
	SUM_REPLICAS(batch_tokens);
}
static double ts_kv_used(const struct res_sample *s, int32_t i)
{
	if (i >= 0)
		return (double)s->replicas[i].kv_blocks_used;
	SUM_REPLICAS(kv_blocks_used);
}
/* Replica r serves calls at the sample: up, or draining what it holds. */
static bool ts_serving(const struct res_sample *s, int32_t r)
{
	return s->replicas[r].life == REP_UP || s->replicas[r].life == REP_DRAINING;
}
/* KV blocks used / blocks of the replicas serving */
static double ts_kv_use(const struct res_sample *s, int32_t i)
{
	double used = 0.0, total = 0.0;
	for (int32_t r = 0; r < s->n_replicas; r++)
		if ((i < 0 && ts_serving(s, r)) || r == i) {
			used += (double)s->replicas[r].kv_blocks_used;
			total += (double)s->replicas[r].kv_blocks_total;
		}
	return total > 0.0 ? used / total : 0.0;
}
/* step time / (interval x replicas serving at the sample) */
static double ts_busy(const struct res_sample *s, int32_t i)
{
	double busy = 0.0, n = 0.0;
	for (int32_t r = 0; r < s->n_replicas; r++)
		if ((i < 0 && ts_serving(s, r)) || r == i) {
			busy += (double)s->replicas[r].busy_ns;
			n += 1.0;
		}
	return n > 0.0 ? busy / (n * (double)s->interval_ns) : 0.0;
}
static double ts_rep_up(const struct res_sample *s, int32_t i)
{
	return s->replicas[i].life == REP_UP;
}
static double ts_rep_starting(const struct res_sample *s, int32_t i)
{
	return s->replicas[i].life == REP_STARTING;
}
static double ts_draining(const struct res_sample *s, int32_t i) { (void)i; return s->replicas_draining; }
static double ts_down(const struct res_sample *s, int32_t i) { (void)i; return s->replicas_down; }
/* lower tier i's blocks held, and held / capacity */
static double ts_tier_used(const struct res_sample *s, int32_t i)
{
	return (double)s->tier_blocks_used[i];
}
static double ts_tier_use(const struct res_sample *s, int32_t i)
{
	return s->tier_blocks_total[i] > 0
		       ? (double)s->tier_blocks_used[i] / (double)s->tier_blocks_total[i]
		       : 0.0;
}

static void json_timeseries(struct json *j, const struct timeseries *ts, double interval_s)
{
	json_key(j, "timeseries");
	json_open(j);
	json_num(j, "interval_s", interval_s);
	json_int(j, "samples", timeseries_len(ts));
	json_series(j, "t_s", ts, -1, ts_t, false);
	json_series(j, "replicas_up", ts, -1, ts_up, true);
	json_series(j, "replicas_starting", ts, -1, ts_starting, true);
	json_series(j, "replicas_draining", ts, -1, ts_draining, true);
	json_series(j, "replicas_down", ts, -1, ts_down, true);
	json_series(j, "arrivals", ts, -1, ts_arr, true);
	json_series(j, "completions", ts, -1, ts_done, true);
	json_series(j, "failed", ts, -1, ts_failed, true);
	json_series(j, "router_queue", ts, -1, ts_rqueue, true);
	json_series(j, "waiting", ts, -1, ts_waiting, true);
	json_series(j, "running", ts, -1, ts_running, true);
	json_series(j, "batch_tokens", ts, -1, ts_batch, true);
	json_series(j, "kv_blocks_used", ts, -1, ts_kv_used, true);
	json_series(j, "kv_use", ts, -1, ts_kv_use, false);
	json_series(j, "busy_fraction", ts, -1, ts_busy, false);
	int32_t n_tiers = timeseries_len(ts) > 0 ? timeseries_at(ts, 0)->n_tiers : 0;
	if (n_tiers > 0) {
		/* lower KV tiers, each summed over its sets: "host", then "disk" */
		static const char *const names[RES_MAX_TIERS] = {"host", "disk"};
		json_key(j, "kv_tiers");
		json_open_array(j);
		for (int32_t t = 0; t < n_tiers; t++) {
			json_elem(j);
			json_open(j);
			json_str(j, "tier", names[t]);
			json_series(j, "blocks_used", ts, t, ts_tier_used, true);
			json_series(j, "use", ts, t, ts_tier_use, false);
			json_close(j);
		}
		json_close_array(j);
	}
	json_key(j, "per_replica");
	json_open_array(j);
	for (int32_t i = 0; i < timeseries_replicas(ts); i++) {
		json_elem(j);
		json_open(j);
		json_int(j, "replica", i);
		json_series(j, "up", ts, i, ts_rep_up, true);
		json_series(j, "starting", ts, i, ts_rep_starting, true);
		json_series(j, "arrivals", ts, i, ts_arr, true);
		json_series(j, "completions", ts, i, ts_done, true);
		json_series(j, "waiting", ts, i, ts_waiting, true);
		json_series(j, "running", ts, i, ts_running, true);
		json_series(j, "batch_tokens", ts, i, ts_batch, true);
		json_series(j, "kv_blocks_used", ts, i, ts_kv_used, true);
		json_series(j, "kv_use", ts, i, ts_kv_use, false);
		json_series(j, "busy_fraction", ts, i, ts_busy, false);
		json_close(j);
	}
	json_close_array(j);
	json_close(j);
}

/* "warnings": an array of {"code", "message"} in the order they were
 * found, then "answer": "yes" or "no". */
static void json_warnings(struct json *j, const struct report_meta *m,
			  const struct metrics_summary *s)
{
	const struct warn_list *w = m->warnings;
	json_key(j, "warnings");
	if (!w || w->count == 0) {
		fputs("[]", j->fp);
	} else {
		fputc('[', j->fp);
		for (size_t i = 0; i < w->count; i++) {
			fputs(i ? ",\n" : "\n", j->fp);
			j->depth++; /* the array's own level */
			for (int k = 0; k < j->depth; k++)
				fputs("  ", j->fp);
			json_open(j);
			json_str(j, "code", w->items[i].code);
			json_str(j, "message", w->items[i].msg);
			json_close(j);
			j->depth--;
		}
		fputc('\n', j->fp);
		for (int k = 0; k < j->depth; k++)
			fputs("  ", j->fp);
		fputc(']', j->fp);
	}
	json_int(j, "warnings_dropped", w ? (int64_t)w->dropped : 0);
	json_str(j, "answer", report_answer_no(m, s) ? "no" : "yes");
}

static void json_document(FILE *fp, const struct report_meta *m, const struct metrics_summary *s)
{
	struct json j = {.fp = fp, .depth = 0};
	j.first[0] = 1;
	json_open(&j);
	json_int(&j, "schema_version", REPORT_SCHEMA_VERSION);
	json_str(&j, "schema", "agentcap-replay");
	json_run(&j, m);
	json_warnings(&j, m, s);
	if (m->launch_json) {
		json_key(&j, "launch");
		fputs(m->launch_json, j.fp);
	}
	if (m->launch_error)
		json_str(&j, "launch_error", m->launch_error);

	jf(&j, RF_COMPLETED, m, s);
	jf(&j, RF_FAILED, m, s);
	json_key(&j, "failed_reasons");
	json_open(&j);
	for (size_t i = 0; i < s->n_failed_reasons; i++)
		json_int(&j, s->failed_reasons[i].reason, s->failed_reasons[i].count);
	json_close(&j);
	jf(&j, RF_DURATION, m, s);
	jf_range(&j, RF_REQUEST_THROUGHPUT, RF_SLO_ATTAINMENT, m, s);
	for (int k = RST_TTFT; k <= RST_E2EL; k++)
		json_stats(&j, (enum report_stats_id)k, s);
	jf_range(&j, RF_PROMPT_TOKENS, RF_INFLIGHT_MISS, m, s);
	if (m->tiers.n > 0)
		jf_range(&j, RF_CACHED_GPU, RF_TIER_LOAD_WAIT_S, m, s);
	if (m->retention.on)
		jf_range(&j, RF_RETAIN_TTL, RF_RETAIN_CAPPED, m, s);
	if (m->pd.on)
		jf_range(&j, RF_PD_LINK, RF_PD_WIRE_S, m, s);
	if (m->groups.on)
		json_groups(&j, &m->groups, s);
	jf(&j, RF_HIT_RATE, m, s);
	if (m->spec.on) {
		const struct report_spec *p = &m->spec;
		json_key(&j, "speculative");
		json_open(&j);
		json_str(&j, "method", p->method);
		json_str(&j, "draft_model", p->draft);
		json_int(&j, "k", p->k);
		json_str(&j, "acceptance_given", p->given);
		json_str(&j, "acceptance_input", p->given_text);
		json_num(&j, "tokens_per_step", spec_tokens_per_step(p, -1));
		json_num(&j, "decode_speedup", spec_speedup(p, -1));
		json_key(&j, "by_kind");
		json_open_array(&j);
		for (int k = 0; k < OUT_KINDS; k++) {
			if (p->seq_steps[k] == 0 && s->by_kind[k].calls == 0)
				continue;
			json_elem(&j);
			json_open(&j);
			json_str(&j, "kind", out_kind_name(k));
			json_num(&j, "acceptance_rate", p->acceptance[k]);
			json_num(&j, "tokens_per_step", spec_tokens_per_step(p, k));
			json_num(&j, "decode_speedup", spec_speedup(p, k));
			json_int(&j, "calls", s->by_kind[k].calls);
			json_num(&j, "tpot_ms_mean", s->by_kind[k].tpot_ms_mean);
			json_num(&j, "decode_tok_s", s->by_kind[k].decode_tok_s);
			json_close(&j);
		}
		json_close_array(&j);
		json_close(&j);
	}
	jf_range(&j, RF_PREEMPTIONS, RF_PEAK_SLO, m, s);
	json_stats(&j, RST_PEAK_TTFT, s);
	json_stats(&j, RST_PEAK_TPOT, s);

	jf_range(&j, RF_SESSIONS, RF_SESSION_CALLS, m, s);
	json_stats(&j, RST_SESSION, s);
	jf(&j, RF_TASKS, m, s);
	jf(&j, RF_TASKS_ACCEPTED, m, s);
	jf(&j, RF_TASKS_KNOWN, m, s);
	json_stats(&j, RST_TASK, s);
	if (m->cluster)
		json_cluster(&j, m->cluster);
	if (m->backends)
		json_backends(&j, m->backends);
	if (m->timeseries)
		json_timeseries(&j, m->timeseries, m->timeseries_interval_s);
	if (m->cost)
		json_cost(&j, m->cost);
	if (m->charts) {
		json_key(&j, "charts");
		charts_json(fp, m->charts);
	}
	json_close(&j);
	fputc('\n', fp);
}

void report_json_stream(FILE *fp, const struct report_meta *meta, const struct metrics_summary *s)
{
	json_document(fp, meta, s);
}

void report_run_json(FILE *fp, const struct report_run *r)
{
	fputs("\"run\":{\"agentcap_version\":", fp);
	jsonw_str(fp, r->version);
	fputs(",\"scenario_name\":", fp);
	jsonw_str(fp, r->scenario_name);
	fputs(",\"scenario_path\":", fp);
	jsonw_str(fp, r->scenario_path);
	fputs(",\"trace\":", fp);
	jsonw_str(fp, r->trace);
	fputs(",\"model_id\":", fp);
	jsonw_str(fp, r->model_id);
	if (r->router) {
		fputs(",\"router\":{\"policy\":", fp);
		jsonw_str(fp, r->router);
		fputs(",\"settings\":", fp);
		jsonw_str(fp, r->router_settings ? r->router_settings : r->router);
		fputc('}', fp);
	}
	fprintf(fp, ",\"seed\":%" PRIu64, r->seed);
	if (r->calibration) {
		fputc(',', fp);
		report_calibration_json(fp, r->calibration);
	}
	fputc('}', fp);
}

void report_calibration_json(FILE *fp, const struct report_calibration *c)
{
	fputs("\"calibration\":{\"source\":", fp);
	jsonw_str(fp, c->own ? "own" : "built-in");
	fputs(",\"path\":", fp);
	jsonw_str(fp, c->path);
	fprintf(fp, ",\"crc32\":\"%08lx\",\"rows\":%zu,\"parameters\":%zu,\"nearest\":[", c->crc32,
		c->rows, c->parameters);
	for (size_t i = 0; i < c->n; i++) {
		const struct report_calib_point *p = &c->points[i];
		fputs(i ? ",{\"regime\":" : "{\"regime\":", fp);
		jsonw_str(fp, p->label);
		fputs(",\"batch\":", fp);
		json_number(fp, p->batch);
		fputs(",\"context\":", fp);
		json_number(fp, p->context);
		if (!p->found) {
			fputs(",\"line\":null}", fp);
			continue;
		}
		fprintf(fp, ",\"line\":%ld,\"hardware\":", p->line);
		jsonw_str(fp, p->hardware);
		fputs(",\"model\":", fp);
		jsonw_str(fp, p->model);
		fputs(",\"engine\":", fp);
		jsonw_str(fp, p->engine);
		fputs(",\"row_batch\":", fp);
		json_number(fp, p->row_batch);
		fputs(",\"row_context\":", fp);
		json_number(fp, p->row_context);
		fputs(",\"hardware_match\":", fp);
		jsonw_str(fp, p->hardware_match);
		fputs(",\"model_match\":", fp);
		jsonw_str(fp, p->model_match);
		fputs(",\"engine_match\":", fp);
		jsonw_str(fp, p->engine_match);
		fputs(",\"batch_doublings\":", fp);
		json_number(fp, round(p->batch_doublings * 1000) / 1000);
		fputs(",\"context_doublings\":", fp);
		json_number(fp, round(p->context_doublings * 1000) / 1000);
		fputs(",\"score\":", fp);
		json_number(fp, round(p->score * 1000) / 1000);
		fputc('}', fp);
	}
	fputs("]}", fp);
}

void report_calibration_table(FILE *out, const struct report_calibration *c)
{
	if (c->own)
		fprintf(out, "Calibration: own file %s (crc32 %08lx, %zu measured rows, %zu fitted "
			"parameter%s over the built-in values)\n", c->path ? c->path : "-", c->crc32,
			c->rows, c->parameters, c->parameters == 1 ? "" : "s");
	else
		fprintf(out, "Calibration: built-in (%s, %zu measured rows)\n", c->path ? c->path : "-",
			c->rows);
	for (size_t i = 0; i < c->n; i++) {
		const struct report_calib_point *p = &c->points[i];
		fprintf(out, "Nearest measured point (%s, batch %.0f, context %.0f): ", p->label,
			p->batch, p->context);
		if (!p->found) {
			fputs("none\n", out);
			continue;
		}
		fprintf(out, "%s %s %ld: %s/%s/%s at batch %.0f, context %.0f; %s, %s, %s; batch %.1f "
			"and context %.1f doublings away (score %.1f)\n", c->path ? c->path : "-",
			c->own ? "row" : "line", p->line, p->hardware, p->model, p->engine,
			p->row_batch, p->row_context, p->hardware_match, p->model_match,
			p->engine_match, p->batch_doublings, p->context_doublings, p->score);
	}
}

int report_json_write(const char *path, const struct report_meta *meta,
		      const struct metrics_summary *s, struct diag *d)
{
	struct outfile of;
	int rc = outfile_open(&of, path, d);
	if (rc != 0)
		return rc;
	json_document(of.fp, meta, s);
	return outfile_commit(&of, d);
}
