/* SPDX-License-Identifier: Apache-2.0
 * fuzz_import: every importer of traces/import.h.  The input's first line
 * names the format (one of import_formats(); others are ignored), the rest
 * is the file to import.  An import that succeeds must produce a trace the
 * reader accepts in full, and stats must take every session of it; one that
 * fails must say why.  Strict and skip-bad imports alternate with the
 * format line's last byte. */
#include "fuzz/fuzz_util.h"

#include "base/diag.h"
#include "traces/import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size < 40 ? size : 40);
	if (!nl)
		return 0;
	char name[40];
	size_t len = (size_t)(nl - data);
	memcpy(name, data, len);
	name[len] = '\0';
	bool skip_bad = len > 0 && name[len - 1] == ' ';
	while (len > 0 && name[len - 1] == ' ')
		name[--len] = '\0';
	const char *const *formats = import_formats();
	size_t k = 0;
	while (formats[k] && strcmp(formats[k], name) != 0)
		k++;
	if (!formats[k])
		return 0;
	const char *in = fuzz_write("input.dat", nl + 1, size - (size_t)(nl + 1 - data));
	char in_path[512];
	snprintf(in_path, sizeof(in_path), "%s", in);
	char out_path[512];
	snprintf(out_path, sizeof(out_path), "%s", fuzz_path("out.jsonl"));
	struct import_opts o = {.skip_bad = skip_bad};
	struct import_stats st;
	struct diag d;
	diag_init(&d);
	const char *paths[1] = {in_path};
	int rc = import_files(formats[k], paths, 1, &o, out_path, &st, &d);
	if (rc > 0 || (rc < 0 && !d.msg[0]))
		abort();
	if (rc == 0) {
		if (fuzz_read_trace(out_path, TRACE_FMT_CANONICAL, false) != 0)
			abort(); /* the importer wrote a trace its own reader refuses */
		remove(out_path);
	}
	return 0;
}
