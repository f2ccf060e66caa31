/* SPDX-License-Identifier: Apache-2.0
 * calibrate: fit a team's benchmark rows and write the calibration file
 * (see calibrate.h).
 */
#include "calib/calibrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonw.h"
#include "models/calfile.h"
#include "models/csvread.h"

/* Simulated requests per client in the fit: enough for the batch to settle,
 * few enough for a fit of a few hundred evaluations to take seconds. */
#define CALIBRATE_PER_CLIENT_MIN 2
#define CALIBRATE_PER_CLIENT_MAX 8

static const char *rows_name(const struct benchres *b)
{
	return b->n_inputs ? b->inputs[0].path : "the benchmark rows";
}

/* The fit refused the rows (fd): say why in terms of the results they were
 * read from, never the rows' own CSV lines, columns or metric names, which
 * the user did not write.  Every row is of a catalogue id and in range
 * (benchres checks them), so the one refusal left is that none could be
 * predicted: the first row's reason names its result.  Anything else is a
 * disagreement between benchres and validate: an internal error.  Runs only
 * when the fit failed, so its one more evaluation costs nothing otherwise. */
static int unfit(const struct benchres *b, const struct catalog *cat,
		 const struct engine_table *et, const struct fitparams_opts *fo,
		 const struct diag *fd, struct diag *d)
{
	struct validate_opts vo;
	validate_opts_init(&vo, cat);
	vo.engines = et;
	vo.requests_per_client = fo->requests_per_client;
	if (fo->offline_requests > 0)
		vo.offline_requests = fo->offline_requests;
	vo.min_confidence = fo->min_confidence;
	struct validate_report rep;
	struct diag vd;
	diag_init(&vd);
	int rc = validate_run_text(&rep, rows_name(b), b->csv, b->len, &vo, &vd);
	if (rc == DIAG_ENOMEM)
		return diag_set(d, rc, "%s", vd.msg);
	if (rc)
		return diag_set(d, DIAG_EINTERNAL, "the measurement rows read from the results were "
				"refused (%s)", vd.msg);
	int sc = csvread_col(&rep.table, "source");
	for (size_t r = 0; r < rep.n_rows && !rc; r++) {
		const struct validate_row *row = &rep.rows[r];
		if (!row->skipped)
			continue;
		/* the source cell is "path (kind, result N)" (benchres.c): said as
		 * "path: result N" like benchres's own messages */
		const char *src = sc >= 0 ? csvread_cell(&rep.table, r, sc) : "";
		const char *open = strrchr(src, '(');
		const char *res = open ? strstr(open, ", result ") : NULL;
		int n_path = open && res && open > src ? (int)(open - src - 1) : (int)strlen(src);
		const char *why = row->note;
		const char *sk = strstr(why, "skipped: ");
		if (sk)
			why = sk + strlen("skipped: ");
		rc = diag_set(d, DIAG_EINPUT, "%.*s: %.*s%sagentcap cannot predict it, so nothing is "
			      "left to fit: %s (expected results of a deployment the performance "
			      "model can run: check --hardware, --model, --quant and --gpus)", n_path,
			      src, res ? (int)strcspn(res + 2, ")") : 0, res ? res + 2 : "",
			      res ? ": " : "", why);
	}
	validate_release(&rep);
	if (!rc)
		rc = diag_set(d, DIAG_EINTERNAL, "the fit refused the measurement rows read from the "
			      "results (%s)", fd->msg);
	return rc;
}

int calibrate_run(struct fitparams_fit *fit, struct catalog *cat, struct engine_table *et,
		  const struct benchres *b, struct diag *d)
{
	memset(fit, 0, sizeof(*fit));
	if (b->n_rows == 0 || !b->csv)
		return diag_set(d, DIAG_EINPUT, "no measurement row to fit (expected at least one "
				"benchmark result)");
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	o.simulate = true;
	o.identifiable_only = true;
	o.min_confidence = VC_MEDIUM;
	int per = CALIBRATE_PER_CLIENT_MIN;
	for (size_t i = 0; i < b->n_inputs; i++)
		if (b->inputs[i].requests_per_client > per)
			per = b->inputs[i].requests_per_client;
	o.requests_per_client = per < CALIBRATE_PER_CLIENT_MAX ? per : CALIBRATE_PER_CLIENT_MAX;
	for (size_t i = 0; i < b->n_inputs; i++)
		if (b->inputs[i].offline_requests > o.offline_requests)
			o.offline_requests = b->inputs[i].offline_requests;
	struct diag fd;
	diag_init(&fd);
	int rc = fitparams_fit_run(fit, cat, et, rows_name(b), b->csv, b->len, &o, &fd);
	if (rc == DIAG_EINPUT)
		return unfit(b, cat, et, &o, &fd, d);
	return rc ? diag_set(d, rc, "%s", fd.msg) : 0;
}



/* A numeric cell as a number, an empty one as null. */
static void json_cell_num(FILE *out, const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (*s && *end == '\0' && isfinite(v))
		fprintf(out, "%.10g", v);
	else
		fputs("null", out);
}

/* The engine profile a row's engine text selects, as validate selects it. */
static const char *profile_of(const struct engine_table *et, const char *engine,
			      const char *notes)
{
	char text[1024];
	const char *pub = strstr(notes, "engine_as_published=");
	if (pub) {
		pub += strlen("engine_as_published=");
		const char *end = strstr(pub, " | ");
		int n = end ? (int)(end - pub) : (int)strlen(pub);
		snprintf(text, sizeof(text), "%s %.*s", engine, n, pub);
	} else {
		snprintf(text, sizeof(text), "%s", engine);
	}
	const struct engine_profile *ep = engine_match(et, text);
	return ep ? ep->id : ENGINE_DEFAULT_ID;
}

static int write_rows(FILE *out, const struct benchres *b, const struct engine_table *et,
		      struct diag *d)
{
	struct csvread t;
	int rc = csvread_parse(&t, rows_name(b), b->csv, b->len, d);
	if (rc)
		return rc;
	static const char *const str_cols[] = { "hardware", "model", "quant", "engine" };
	static const char *const num_cols[] = { "n_gpus", "concurrency", "input_tokens",
						"output_tokens" };
	fputs("  \"rows\": [", out);
	for (size_t r = 0; r < t.rows; r++) {
		fprintf(out, "%s\n    {\"line\": %ld", r ? "," : "", t.lines[r]);
		for (size_t k = 0; k < 4; k++) {
			fprintf(out, ", \"%s\": ", str_cols[k]);
			jsonw_str(out, csvread_cell(&t, r, csvread_col(&t, str_cols[k])));
		}
		fputs(", \"engine_profile\": ", out);
		jsonw_str(out, profile_of(et, csvread_cell(&t, r, csvread_col(&t, "engine")),
					 csvread_cell(&t, r, csvread_col(&t, "notes"))));
		for (size_t k = 0; k < 4; k++) {
			fprintf(out, ", \"%s\": ", num_cols[k]);
			json_cell_num(out, csvread_cell(&t, r, csvread_col(&t, num_cols[k])));
		}
		static const char *const tail[] = { "metric", "value", "unit", "source", "notes",
						    "confidence" };
		for (size_t k = 0; k < 6; k++) {
			fprintf(out, ", \"%s\": ", tail[k]);
			const char *v = csvread_cell(&t, r, csvread_col(&t, tail[k]));
			if (k == 1)
				json_cell_num(out, v);
			else
				jsonw_str(out, v);
		}
		fputc('}', out);
	}
	fputs(t.rows ? "\n  ],\n" : "],\n", out);
	csvread_release(&t);
	return 0;
}

int calibrate_write_json(FILE *out, const struct fitparams_fit *fit, const struct benchres *b,
			 const struct engine_table *et, struct diag *d)
{
	fprintf(out, "{\n  \"format\": \"%s\",\n  \"schema_version\": 1,\n  \"inputs\": [",
		CALFILE_FORMAT);
	for (size_t i = 0; i < b->n_inputs; i++) {
		const struct benchres_input *in = &b->inputs[i];
		fprintf(out, "%s\n    {\"path\": ", i ? "," : "");
		jsonw_str(out, in->path);
		fprintf(out, ", \"kind\": \"%s\", \"crc32\": \"%08lx\", \"rows\": %zu}",
			benchres_kind_name(in->kind), in->crc32, in->rows);
	}
	fputs(b->n_inputs ? "\n  ],\n  \"kept_out\": [" : "],\n  \"kept_out\": [", out);
	for (size_t i = 0; i < b->n_skipped; i++) {
		fputs(i ? ",\n    " : "\n    ", out);
		jsonw_str(out, b->skipped[i]);
	}
	fputs(b->n_skipped ? "\n  ],\n" : "],\n", out);
	fprintf(out, "  \"kept_out_total\": %zu,\n", b->n_skipped_total);
	fputs("  \"method\": \"weighted nonlinear least squares on the log error (GSL "
	      "gsl_multifit_nlinear, Levenberg-Marquardt, finite-difference Jacobian) over the "
	      "rows below, serving rows by closed-loop simulation; fractions as "
	      "1/(1+exp(-theta)), overheads as exp(theta); a prior toward the built-in value; "
	      "parameters no row moves keep their built-in values and are not listed\",\n", out);
	int rc = write_rows(out, b, et, d);
	if (rc)
		return rc;
	/* the rows again as the CSV the fit read, for validate --calibration */
	fputs("  \"measurements_csv\": ", out);
	jsonw_str(out, b->csv ? b->csv : "");
	fputs(",\n", out);
	fitparams_fit_write_body(out, fit);
	fprintf(out, "  \"summary\": {\"rows\": %zu, \"parameters\": %zu, \"cost_builtin\": ",
		fit->n_res, fit->n_params);
	jsonw_num(out, fit->cost_before);
	fputs(", \"cost_fitted\": ", out);
	jsonw_num(out, fit->cost_after);
	fputs(", \"median_ape_pct_builtin\": ", out);
	jsonw_num(out, fit->median_ape_before);
	fputs(", \"median_ape_pct_fitted\": ", out);
	jsonw_num(out, fit->median_ape_after);
	fputs("}\n}\n", out);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the calibration file");
	return 0;
}
