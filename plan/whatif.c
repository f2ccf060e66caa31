/* SPDX-License-Identifier: Apache-2.0
 * whatif: two replays of one trace and their comparison (see whatif.h). */
#include "plan/whatif.h"

#include "base/diag.h"

#include <math.h>
#include <string.h>

void whatif_result_release(struct whatif_result *r)
{
	for (int i = 0; i < 2; i++) {
		metrics_free(r->side[i].m);
		r->side[i].m = NULL;
	}
}

int whatif_run(const struct whatif_setup *s, const struct whatif_variant v[2],
	       struct whatif_result *r, struct diag *d)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 2; i++) {
		struct whatif_side *w = &r->side[i];
		snprintf(w->label, sizeof(w->label), "%s", v[i].label ? v[i].label : "?");
		if (!(w->m = metrics_new()))
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		metrics_set_replicas(w->m, s->replicas);
		metrics_set_slo(w->m, s->slo_ttft_ms, s->slo_tpot_ms);
		struct replay_opts o = s->replay;
		o.xform = &v[i].xform;
		o.compact_at = v[i].compact_at;
		int rc = replay_run(&o, s->cfg, s->perf, metrics_sink(w->m), &w->st, d);
		if (rc == 0)
			rc = metrics_summarize(w->m, &w->sum, d);
		if (rc != 0)
			return rc;
	}
	return 0;
}

size_t whatif_rows(const struct whatif_result *r, struct whatif_row *rows, size_t max)
{
	const struct metrics_summary *a = &r->side[0].sum, *b = &r->side[1].sum;
	const struct whatif_row all[] = {
		{"completed", "Requests completed", "", (double)a->completed, (double)b->completed, 0},
		{"failed", "Requests failed", "", (double)a->failed, (double)b->failed, 0},
		{"prompt_tokens", "Prompt tokens", "tokens", (double)a->prompt_tokens,
		 (double)b->prompt_tokens, 0},
		{"prefill_tokens_computed", "Prefill tokens computed", "tokens",
		 (double)a->computed_prefill_tokens, (double)b->computed_prefill_tokens, 0},
		{"prefix_cache_hit_rate", "Prefix cache hit rate", "%", 100 * a->prefix_cache_hit_rate,
		 100 * b->prefix_cache_hit_rate, 2},
		{"mean_ttft_ms", "Mean TTFT", "ms", a->ttft_ms.mean, b->ttft_ms.mean, 2},
		{"median_ttft_ms", "Median TTFT", "ms", a->ttft_ms.median, b->ttft_ms.median, 2},
		{"p90_ttft_ms", "P90 TTFT", "ms", a->ttft_ms.p90, b->ttft_ms.p90, 2},
		{"p99_ttft_ms", "P99 TTFT", "ms", a->ttft_ms.p99, b->ttft_ms.p99, 2},
		{"mean_tpot_ms", "Mean TPOT", "ms", a->tpot_ms.mean, b->tpot_ms.mean, 2},
		{"median_tpot_ms", "Median TPOT", "ms", a->tpot_ms.median, b->tpot_ms.median, 2},
		{"p90_tpot_ms", "P90 TPOT", "ms", a->tpot_ms.p90, b->tpot_ms.p90, 2},
		{"p99_tpot_ms", "P99 TPOT", "ms", a->tpot_ms.p99, b->tpot_ms.p99, 2},
		{"request_goodput", "Request goodput", "req/s", a->request_goodput, b->request_goodput, 4},
		{"slo_attainment", "SLO attainment", "%", 100 * a->slo_attainment,
		 100 * b->slo_attainment, 2},
		{"gpu_busy_fraction", "GPU busy fraction", "%", 100 * a->gpu_busy_fraction,
		 100 * b->gpu_busy_fraction, 2},
		{"duration_s", "Duration", "s", a->duration_s, b->duration_s, 2},
	};
	size_t n = sizeof(all) / sizeof(all[0]);
	if (n > max)
		n = max;
	memcpy(rows, all, n * sizeof(*rows));
	return n;
}

void whatif_table(FILE *fp, const char *kind, const struct whatif_result *r)
{
	struct whatif_row rows[WHATIF_MAX_ROWS];
	size_t n = whatif_rows(r, rows, WHATIF_MAX_ROWS);
	fprintf(fp, "============= What-if: %s =============\n", kind);
	fprintf(fp, "%-28s %18s %18s %18s %9s\n", "", r->side[0].label, r->side[1].label, "difference",
		"ratio");
	for (size_t i = 0; i < n; i++) {
		const struct whatif_row *w = &rows[i];
		char label[64];
		snprintf(label, sizeof(label), w->unit[0] ? "%s (%s)" : "%s", w->label, w->unit);
		char ratio[32] = "-";
		if (w->a != 0 && isfinite(w->b / w->a))
			snprintf(ratio, sizeof(ratio), "%.3fx", w->b / w->a);
		fprintf(fp, "%-28s %18.*f %18.*f %+18.*f %9s\n", label, w->digits, w->a, w->digits, w->b,
			w->digits, w->b - w->a, ratio);
	}
	fprintf(fp, "==================================================\n");
}

int whatif_json(FILE *fp, const char *kind, uint64_t seed, const struct whatif_result *r)
{
	struct whatif_row rows[WHATIF_MAX_ROWS];
	size_t n = whatif_rows(r, rows, WHATIF_MAX_ROWS);
	fprintf(fp, "{\"schema\":\"agentcap-whatif\",\"version\":1,\"whatif\":\"%s\",\"seed\":%llu,"
		"\"variants\":[\"%s\",\"%s\"],\"rows\":[", kind, (unsigned long long)seed,
		r->side[0].label, r->side[1].label);
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%s{\"key\":\"%s\",\"unit\":\"%s\",\"a\":%.17g,\"b\":%.17g,\"diff\":%.17g}",
			i ? "," : "", rows[i].key, rows[i].unit, rows[i].a, rows[i].b, rows[i].b - rows[i].a);
	fprintf(fp, "]}\n");
	return ferror(fp) ? DIAG_EIO : 0;
}
