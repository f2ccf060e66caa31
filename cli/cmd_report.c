/* SPDX-License-Identifier: Apache-2.0
 * report: `agentcap report RESULT.json -o FILE.html`, the HTML page of a
 * saved JSON result, and what every command's --html shares with it: the
 * page is drawn from the JSON result alone (reports/html.h), held in memory
 * until it is whole, then written as any output is (base/outfile.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/cli.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "base/textfile.h"
#include "reports/html.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The largest result drawn.  Memory is about the size of the text
 * (reports/jsondoc.h keeps the long arrays of numbers as text, and a line
 * is drawn from 2048 points at most), so this caps memory too; a larger
 * result is a replay's time series sampled far more often than a page can
 * show. */
#define REPORT_MAX_BYTES ((size_t)256 << 20)

static const char USAGE[] =
	"NAME\n"
	"    agentcap report - the HTML page of a saved JSON result\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap report RESULT.json [-o FILE.html]\n"
	"\n"
	"DESCRIPTION\n"
	"    Draws the page that --html on the run would have written, byte for\n"
	"    byte, from the JSON that --json wrote: replay, stats, size, compare\n"
	"    and whatif results (the object's \"schema\" says which; see\n"
	"    docs/output-schema.md).  The page is one self-contained file: inline\n"
	"    CSS and SVG charts, nothing fetched, no script; what was run (scenario,\n"
	"    trace, seed, version) at the top, and every chart with a title, axes\n"
	"    with units and a caption saying what to read from it.\n"
	"\n"
	"OPTIONS\n"
	"    -o, --output FILE   write the page to FILE (default '-': standard output)\n"
	"\n"
	"LIMITS\n"
	"    RESULT.json may be up to 256 MiB, and report needs about that much\n"
	"    memory; a longer line (a replay's time series) is drawn from 2048 of\n"
	"    its points, the highest and lowest of each stretch kept.  A larger\n"
	"    result comes from a report.interval_s far shorter than the run: write\n"
	"    it again with a longer one.\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success; 2 a file that is not JSON (RESULT:line:col), not an agentcap\n"
	"    result, one without a key the page needs (the message names the file\n"
	"    and what was expected) or one past the limits above, or an output that\n"
	"    cannot be written.  Nothing is written then.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap size --engineers 50 --json size.json && agentcap report size.json -o size.html\n";

int cli_buf_open(struct cli_buf *b, struct diag *d)
{
	b->text = NULL;
	b->len = 0;
	b->fp = open_memstream(&b->text, &b->len);
	if (!b->fp)
		return diag_set(d, DIAG_ENOMEM, "out of memory for a result");
	return 0;
}

int cli_buf_close(struct cli_buf *b, struct diag *d)
{
	int bad = ferror(b->fp);
	if (fclose(b->fp) != 0 || bad) {
		b->fp = NULL;
		return diag_set(d, DIAG_ENOMEM, "out of memory for a result");
	}
	b->fp = NULL;
	return 0;
}

void cli_buf_free(struct cli_buf *b)
{
	if (b->fp)
		fclose(b->fp);
	free(b->text);
	b->fp = NULL;
	b->text = NULL;
}

int cli_text_write(const char *path, const char *text, size_t len, struct diag *d)
{
	struct outfile of;
	int rc = outfile_open(&of, path, d);
	if (rc == 0) {
		fwrite(text, 1, len, of.fp);
		rc = outfile_commit(&of, d);
	}
	return rc;
}

int cli_html_write(const char *path, const char *json, size_t len, const char *name, struct diag *d)
{
	struct cli_buf page;
	int rc = cli_buf_open(&page, d);
	if (rc == 0) {
		rc = html_render(page.fp, json, len, name, d);
		int crc = cli_buf_close(&page, d);
		if (rc == 0)
			rc = crc;
	}
	if (rc == 0)
		rc = cli_text_write(path, page.text, page.len, d);
	cli_buf_free(&page);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	enum { O_HELP = 'h', O_OUT = 'o' };
	static const struct option opts[] = {
		{"output", required_argument, NULL, O_OUT},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	const char *out = "-";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case O_OUT: out = optarg; break;
		case O_HELP: fputs(USAGE, stdout); return 0;
		default:
			fputs("agentcap report: see agentcap report --help\n", stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		fputs("agentcap report: expected one RESULT.json (agentcap report RESULT.json -o "
		      "FILE.html)\n", stderr);
		return 2;
	}
	const char *in = argv[optind];
	struct diag d;
	diag_init(&d);
	int rc = outfile_check(out, &d);
	char *text = NULL;
	struct stat st;
	if (rc == 0 && stat(in, &st) == 0 && S_ISREG(st.st_mode) &&
	    (unsigned long long)st.st_size > REPORT_MAX_BYTES)
		rc = diag_set(&d, DIAG_EINPUT, "%s: %lld bytes, more than the %zu (256 MiB) report "
			      "draws from (expected a JSON result of agentcap; one this large is a "
			      "replay's time series sampled far more often than a page can show: "
			      "write it again with a longer report.interval_s)", in,
			      (long long)st.st_size, REPORT_MAX_BYTES);
	if (rc == 0) {
		text = textfile_read(in, REPORT_MAX_BYTES, "a JSON result of agentcap", &d);
		if (!text)
			rc = d.code ? d.code : DIAG_EINPUT;
	}
	if (rc == 0)
		rc = cli_html_write(out, text, strlen(text), in, &d);
	free(text);
	return rc ? cli_fail(rc, d.msg) : 0;
}
