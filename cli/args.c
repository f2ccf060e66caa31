/* SPDX-License-Identifier: Apache-2.0
 * args: option values (see args.h). */
#include "cli/args.h"
#include "base/outfile.h"

#include "base/diag.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "models/calfile.h"
#include "reports/output.h"

#include <errno.h>
#include <math.h>
#include <sys/resource.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int args_bad(const char *cmd, const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "agentcap %s: %s '%s': expected %s\n", cmd, opt, val, want);
	return 2;
}

int args_output_is_input(const char *cmd, const char *opt, const char *out, const char *input,
			 const char *what)
{
	if (!outfile_is_input(out, input))
		return 0;
	fprintf(stderr, "agentcap %s: %s %s: %s (expected another path: writing it would replace "
		"the input)\n", cmd, opt, out, what);
	return 2;
}

bool args_number(const char *s, double lo, double hi, bool integral, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi ||
	    (integral && v != floor(v)))
		return false;
	*out = v;
	return true;
}

bool args_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

bool args_size_gb(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v <= 0)
		return false;
	double mul = 1;
	if (*end == 'T' || *end == 't')
		mul = 1000, end++;
	else if (*end == 'G' || *end == 'g')
		end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1e-3, end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return false;
	*out = v * mul;
	return *out < 1e7;
}

bool args_trace_format(const char *s, enum trace_format *out)
{
	static const struct {
		const char *name;
		enum trace_format fmt;
	} names[] = {
		{"auto", TRACE_FMT_AUTO},
		{"canonical", TRACE_FMT_CANONICAL},
		{"mooncake", TRACE_FMT_MOONCAKE},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0) {
			*out = names[i].fmt;
			return true;
		}
	return false;
}

int args_models_load(const char *catalog_dir, const char *engines_path, struct catalog **cat,
		     struct engine_table **et, struct diag *d)
{
	*cat = NULL;
	*et = NULL;
	int rc = catalog_load(cat, catalog_dir, d);
	if (rc != 0 || !engines_path)
		return rc;
	*et = malloc(sizeof(**et));
	if (!*et)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	return engine_table_load(*et, engines_path, d);
}

void args_models_free(struct catalog *cat, struct engine_table *et)
{
	free(et);
	catalog_free(cat);
}

int args_calibration(const char *path, struct catalog *cat, struct engine_table **et,
		     struct calfile **cf, struct diag *d)
{
	*cf = NULL;
	int rc;
	/* one engine table for the whole command: the calibration's engine
	 * matching, the performance model, the pre-flight and the launch
	 * command all read it through cat->engines */
	if (!*et) {
		*et = malloc(sizeof(**et));
		if (!*et)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		if ((rc = engine_table_load(*et, NULL, d)) != 0)
			return rc;
	}
	rc = path ? calfile_load(cf, path, d) : calfile_builtin(cf, *et, d);
	if (rc == 0 && path)
		rc = calfile_apply(*cf, cat, *et, d);
	if (rc != 0)
		return rc;
	cat->engines = *et;
	cat->calibration = *cf;
	return 0;
}

void args_calibration_describe(struct report_calibration *rc, const struct calfile *cf)
{
	memset(rc, 0, sizeof(*rc));
	rc->own = cf->own;
	rc->path = cf->path;
	rc->crc32 = cf->crc32;
	rc->rows = cf->n_rows;
	rc->parameters = cf->n_params;
}

void args_calibration_point(struct report_calibration *rc, const struct calfile *cf,
			    const struct catalog *cat, const char *label,
			    const struct calfile_regime *r)
{
	if (rc->n >= REPORT_CALIB_POINTS_MAX)
		return;
	struct calfile_near n;
	calfile_nearest(cf, cat, r, &n);
	struct report_calib_point *p = &rc->points[rc->n++];
	memset(p, 0, sizeof(*p));
	p->label = label;
	p->batch = r->batch >= 1 ? r->batch : 1;
	p->context = r->context >= 1 ? r->context : 1;
	p->found = n.found;
	if (!n.found)
		return;
	const struct calfile_row *row = &cf->rows[n.row];
	p->line = row->line;
	p->hardware = row->hardware;
	p->model = row->model;
	p->engine = row->engine;
	p->row_batch = n.row_batch;
	p->row_context = n.row_context;
	p->hardware_match = calfile_hardware_word(n.hardware_rank);
	p->model_match = calfile_model_word(n.model_rank);
	p->engine_match = calfile_engine_word(n.engine_rank);
	p->batch_doublings = n.batch_doublings;
	p->context_doublings = n.context_doublings;
	p->score = n.score;
}

int args_team_fits(const char *cmd, int64_t engineers, int64_t days, struct diag *d)
{
	double need = (double)engineers * (double)days * ARGS_TEAM_BYTES_PER_ENGINEER_DAY;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	double have = pages > 0 && page > 0 ? (double)pages * (double)page : INFINITY;
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (double)rl.rlim_cur < have)
		have = (double)rl.rlim_cur;
	if (need <= have)
		return 0;
	return diag_set(d, DIAG_EINPUT, "%s: a synthetic team of %lld engineers x %lld days needs "
			"about %.1f GB to generate (%.0f KB per engineer-day), more than the %.1f GB "
			"this process may use (expected a team that fits: fewer engineers or days; "
			"cost and GPUs scale with the team, see docs/size.md)", cmd,
			(long long)engineers, (long long)days, need / 1e9,
			ARGS_TEAM_BYTES_PER_ENGINEER_DAY / 1024, have / 1e9);
}
