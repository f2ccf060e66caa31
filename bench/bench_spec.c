/* SPDX-License-Identifier: Apache-2.0
 * bench_spec: the speed-up of speculative decoding by batch size, as the
 * performance model gives it: tokens per verify step times a plain decode
 * step over a verify step and its drafting, at a 2,000-token context, for
 * a draft model and for MTP heads on one data-centre pair, and for MTP under
 * llama.cpp's Metal profile.  docs/speculative.md quotes it.  Prints; never
 * run by ctest.
 *
 *   bench_spec
 */
#include <stdio.h>
#include <stdlib.h>

#include "models/catalog.h"
#include "models/perf_model.h"
#include "models/spec.h"

struct pair {
	const char *hw, *model, *wf, *engine;
	int tp;
	struct spec_opts so;
};

static int table(const struct catalog *cat, const struct pair *p, double alpha)
{
	struct perf_model *plain = malloc(sizeof(*plain)), *sp = malloc(sizeof(*sp));
	if (!plain || !sp) {
		free(plain);
		free(sp);
		return 3;
	}
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = p->hw;
	o.model = p->model;
	o.weight_format = p->wf;
	o.engine = p->engine;
	o.tp = p->tp;
	struct diag d;
	diag_init(&d);
	int rc = perf_model_init_opts(plain, cat, &o, &d);
	o.spec = &p->so;
	if (rc == 0)
		rc = perf_model_init_opts(sp, cat, &o, &d);
	if (rc) {
		fprintf(stderr, "bench_spec: %s\n", d.msg);
		free(plain);
		free(sp);
		return 2;
	}
	double tau = spec_expected_tokens(alpha, p->so.k);
	printf("%s on %s x%d (%s, %s), %s %s, k %d, alpha %.2f: %.3f tokens per verify step\n",
	       p->model, p->hw, p->tp, p->wf, p->engine, spec_method_name(p->so.method),
	       sp->spec.draft_id, (int)p->so.k, alpha, tau);
	printf("  %6s %12s %12s %12s %9s\n", "batch", "plain ms", "verify ms", "draft ms", "speed-up");
	for (int32_t b = 1; b <= 256; b *= 2) {
		struct perf_batch pb = perf_decode_batch(b, 2000);
		struct perf_batch vb = spec_verify_batch(b, 2000, p->so.k, tau);
		struct perf_breakdown br;
		perf_step_breakdown(sp, &vb, &br);
		double t_plain = perf_step_ns(plain, &pb), t_spec = perf_step_ns(sp, &vb);
		printf("  %6d %12.3f %12.3f %12.3f %8.3fx\n", (int)b, t_plain / 1e6,
		       (t_spec - br.spec_draft_ns) / 1e6, br.spec_draft_ns / 1e6, tau * t_plain / t_spec);
	}
	free(plain);
	free(sp);
	return 0;
}

int main(void)
{
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	if (catalog_load(&cat, NULL, &d)) {
		fprintf(stderr, "bench_spec: %s\n", d.msg);
		return 2;
	}
	const struct pair pairs[] = {
		{ "h100-sxm", "llama-3.1-70b", "fp8", "vllm", 2, { SPEC_DRAFT, "llama-3.1-8b", 3 } },
		{ "h100-sxm", "llama-3.1-70b", "fp8", "vllm", 2, { SPEC_MTP, NULL, 3 } },
		{ "apple-m1-max-32c", "llama-3.1-8b", "gguf-q4-k-m", "llama.cpp", 1,
		  { SPEC_MTP, NULL, 3 } },
	};
	int rc = 0;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]) && rc == 0; i++)
		rc = table(cat, &pairs[i], 0.7);
	catalog_free(cat);
	return rc;
}
