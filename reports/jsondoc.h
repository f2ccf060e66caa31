/* SPDX-License-Identifier: Apache-2.0
 * jsondoc: a JSON result parsed for drawing, its long arrays of numbers
 * left in the text.
 *
 * cJSON spends about 80 bytes on every value, so the tree of a replay
 * result whose time series hold millions of samples (a few bytes of text
 * each) took 20 to 40 times the size of the text.  jsondoc_parse reads the
 * text once to find every array of at least JSONDOC_RUN_MIN elements that
 * are all numbers or null (a "run"), and has cJSON parse the text with each
 * run written as an empty array; a run's numbers are read from the text
 * when a chart asks for them (jsondoc_nums_*).  The tree then holds only
 * the rest of the document, small for every result agentcap writes, and at
 * most max_values values, so a document too large to draw is an input
 * error found before any large allocation, never an out-of-memory exit.
 *
 * Memory: the runs' table (48 bytes a run), the copy of the text without
 * its runs (none when it has no run) and cJSON's tree of that copy.  The
 * text is borrowed: it must stay valid and unchanged until
 * jsondoc_release.
 */
#ifndef REPORTS_JSONDOC_H
#define REPORTS_JSONDOC_H

#include <stddef.h>

struct cJSON;

/* Arrays of numbers this long or longer stay in the text. */
#define JSONDOC_RUN_MIN 64

enum jsondoc_rc {
	JSONDOC_OK = 0,
	JSONDOC_SYNTAX,   /* not valid JSON; *at is where the parser stopped */
	JSONDOC_TRAILING, /* text after the value; *at is its first byte */
	JSONDOC_VALUES,   /* more than max_values values outside runs; *at 0 */
	JSONDOC_NOMEM,    /* the parts kept did not fit in memory */
};

struct jsondoc_run;

struct jsondoc {
	struct cJSON *root;       /* the tree, runs as empty arrays */
	const char *text;         /* borrowed */
	size_t len;
	struct jsondoc_run *runs; /* in the order of the text */
	size_t n_runs;
	size_t values;            /* values of the tree, at most (runs count one) */
};

/* Parse text[0..len) (text[len] need not be readable) as one JSON value
 * with nothing but blanks after it, into doc.  On JSONDOC_OK doc holds the
 * tree (jsondoc_release frees it); on any other code doc holds nothing to
 * release and *at is a 0-based byte offset into text, where it applies. */
enum jsondoc_rc jsondoc_parse(struct jsondoc *doc, const char *text, size_t len, size_t max_values,
			      size_t *at);

void jsondoc_release(struct jsondoc *doc);

/* Elements of the array a of doc's tree, those of a run included; 0 when a
 * is NULL or not an array.  O(runs) for a run, O(elements) otherwise. */
size_t jsondoc_size(const struct jsondoc *doc, const struct cJSON *a);

/* A reader of the elements of an array as numbers. */
struct jsondoc_nums {
	const struct cJSON *e; /* the next element of an array of the tree */
	const char *p;         /* the next number of a run */
	size_t left;           /* numbers of the run left */
};

/* Start reading array a of doc's tree (NULL or not an array: nothing). */
void jsondoc_nums_init(struct jsondoc_nums *it, const struct jsondoc *doc, const struct cJSON *a);

/* The next element's value: NAN for null or an element that is not a
 * number; NAN again after the last (jsondoc_size says how many there are). */
double jsondoc_nums_next(struct jsondoc_nums *it);

#endif
