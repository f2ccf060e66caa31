/* SPDX-License-Identifier: Apache-2.0
 * slo: percentile latency objectives (see slo.h). */
#include "replay/slo.h"

#include "base/diag.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const METRIC_NAMES[] = {"ttft", "tpot", "e2el"};

static const char EXPECTED[] =
	"expected KEY=DURATION[,KEY=DURATION...], KEY one of ttft, tpot, e2el with _p50, "
	"_p90, _p95 or _p99, DURATION a positive number with a unit, ms or s, "
	"e.g. ttft_p95=2s,tpot_p50=50ms";

static int parse_one(struct slo *out, const char *piece, const char *where, struct diag *d)
{
	const char *eq = strchr(piece, '=');
	size_t klen = eq ? (size_t)(eq - piece) : strlen(piece);
	int metric = -1, pct = 0;
	for (int i = 0; i < 3; i++) {
		size_t ml = strlen(METRIC_NAMES[i]);
		if (klen == ml + 4 && strncmp(piece, METRIC_NAMES[i], ml) == 0 && piece[ml] == '_' &&
		    piece[ml + 1] == 'p') {
			char num[3] = {piece[ml + 2], piece[ml + 3], 0};
			int p = atoi(num);
			if (p == 50 || p == 90 || p == 95 || p == 99)
				metric = i, pct = p;
		}
	}
	if (!eq || metric < 0)
		return diag_set(d, DIAG_EINPUT, "%s: '%s' is not an objective (%s)", where, piece,
				EXPECTED);
	const char *v = eq + 1;
	char *end = NULL;
	errno = 0;
	double x = strtod(v, &end);
	double scale = 0;
	if (end && end != v && strcmp(end, "ms") == 0)
		scale = 1;
	else if (end && end != v && strcmp(end, "s") == 0)
		scale = 1000;
	if (errno || !scale || !isfinite(x) || !(x > 0) || x * scale > 1e12)
		return diag_set(d, DIAG_EINPUT, "%s: '%s' has no valid duration '%s' (%s)", where, piece,
				v, EXPECTED);
	struct slo_objective o = {(enum slo_metric)metric, pct, x * scale};
	for (int i = 0; i < out->n; i++)
		if (out->obj[i].metric == o.metric && out->obj[i].percentile == o.percentile)
			return diag_set(d, DIAG_EINPUT, "%s: '%.*s' given twice (expected each "
					"objective once)", where, (int)klen, piece);
	if (out->n == SLO_MAX_OBJECTIVES)
		return diag_set(d, DIAG_EINPUT, "%s: more than %d objectives", where,
				SLO_MAX_OBJECTIVES);
	out->obj[out->n++] = o;
	return 0;
}

int slo_parse(struct slo *out, const char *s, const char *where, struct diag *d)
{
	memset(out, 0, sizeof(*out));
	size_t len = strlen(s);
	if (len == 0 || len > 512)
		return diag_set(d, DIAG_EINPUT, "%s: '%s' (%s)", where, s, EXPECTED);
	char buf[520];
	memcpy(buf, s, len + 1);
	char *p = buf;
	for (;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		int rc = parse_one(out, p, where, d);
		if (rc != 0) {
			memset(out, 0, sizeof(*out));
			return rc;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	return 0;
}

const char *slo_key(const struct slo_objective *o, char *buf, size_t size)
{
	snprintf(buf, size, "%s_p%d", METRIC_NAMES[o->metric], o->percentile);
	return buf;
}

const char *slo_format(const struct slo *s, char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int i = 0; i < s->n && at < size; i++) {
		char k[16];
		int w = snprintf(buf + at, size - at, "%s%s=%gms", i ? "," : "",
				 slo_key(&s->obj[i], k, sizeof(k)), s->obj[i].limit_ms);
		if (w < 0)
			break;
		at += (size_t)w;
	}
	return buf;
}

double slo_request_ms(enum slo_metric m, const struct res_request *r)
{
	if (r->status != RES_COMPLETED)
		return -1;
	switch (m) {
	case SLO_TTFT:
		return (double)(r->first_token_ns - r->arrival_ns) / 1e6;
	case SLO_TPOT:
		if (r->output_tokens < 2)
			return -1;
		return (double)(r->done_ns - r->first_token_ns) / 1e6 / (double)(r->output_tokens - 1);
	case SLO_E2EL:
		return (double)(r->done_ns - r->arrival_ns) / 1e6;
	}
	return -1;
}

int64_t slo_miss_budget(int percentile, int64_t n)
{
	if (n < 1)
		n = 1;
	/* floor(p (n-1) / 100) in integers: exact, no rounding at the edge */
	return n - ((int64_t)percentile * (n - 1)) / 100;
}
