/* SPDX-License-Identifier: Apache-2.0
 * html: a command's result as one self-contained HTML page.
 *
 * The page is drawn from the command's JSON result alone (the document
 * --json writes), so `agentcap report RESULT.json` and `--html` on the run
 * give the same bytes, and one renderer serves each kind of result: the
 * object's "schema" says which (agentcap-replay, agentcap-stats,
 * agentcap-size, agentcap-compare, agentcap-compare-range, agentcap-whatif).
 *
 * The page carries its CSS inline and its charts as inline SVG
 * (reports/svgplot.h); it fetches nothing and runs no script, so it reads
 * the same offline, printed, or attached to a ticket.  It is also
 * well-formed XML, so a strict XML parser checks it.  What was run (the
 * scenario, the trace, the seed and the version) is at the top; every chart
 * has a title, axes with units and a caption saying what to read from it.
 */
#ifndef REPORTS_HTML_H
#define REPORTS_HTML_H

#include <stddef.h>
#include <stdio.h>

struct diag;

/* Write the page of the JSON result text[0..len) to out.  name is where
 * the text came from, for messages.  0; DIAG_EINPUT when the text is not
 * JSON ("name:line:col: ..."), not a result of a kind above, lacks a key
 * the page needs (the message names it and what was expected) or holds
 * more than 2^20 values besides its arrays of numbers (no result agentcap
 * writes comes near); DIAG_ENOMEM.  Memory: little more than len, however
 * long the result's arrays of numbers (reports/jsondoc.h); a line of more
 * points than a chart shows is drawn from 2048 of them, each stretch's
 * first, lowest, highest and last.
 * On an error, part of the page may have been written: write to a
 * temporary place and drop it (base/outfile.h).  Write errors are left for
 * the caller to see with ferror(out). */
int html_render(FILE *out, const char *text, size_t len, const char *name, struct diag *d);

#endif
