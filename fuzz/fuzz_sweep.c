/* SPDX-License-Identifier: Apache-2.0
 * fuzz_sweep: the sweep grid reader and the reader of a sweep's earlier
 * rows (plan/sweep.h).  The input up to the first NUL byte is the grid
 * file; what follows is the rows file it resumes.  The grid may name the
 * trace "t.jsonl" (two calls of one session, beside it) or anything else.
 * A grid's cells are resolved one by one, so the harness keeps grids small:
 * at most 12 commas (13 values in all), which bounds the combinations to
 * a few hundred; longer grids are left to the tests.  No cell is replayed.
 */
#include "fuzz/fuzz_util.h"

#include "base/diag.h"
#include "models/catalog.h"
#include "plan/sweep.h"
#include "traces/jsontext.h"

#include <cjson/cJSON.h>

#include <stdlib.h>
#include <string.h>

#define MAX_COMMAS 12

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char TRACE[] =
	"{\"format\":\"agentcap-trace\",\"version\":1}\n"
	"{\"session\":\"s\",\"seq\":0,\"t\":0,\"prompt\":[[\"a\",600]],\"output_tokens\":20}\n"
	"{\"session\":\"s\",\"seq\":1,\"gap\":1,\"prompt\":[[\"a\",600],[\"b\",50]],"
	"\"output_tokens\":10}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t text = nul ? (size_t)(nul - data) : size;
	size_t commas = 0;
	for (size_t i = 0; i < text; i++)
		commas += data[i] == ',';
	if (commas > MAX_COMMAS)
		return 0;
	fuzz_write("t.jsonl", (const uint8_t *)TRACE, sizeof(TRACE) - 1);
	const char *rest = nul ? (const char *)nul + 1 : "";
	size_t rest_len = nul ? size - text - 1 : 0;
	/* fuzz_path is valid until the next call: keep copies */
	char *rows = strdup(fuzz_write("rows.jsonl", (const uint8_t *)rest, rest_len));
	char *grid = strdup(fuzz_write("grid.json", data, text));
	if (!rows || !grid)
		abort();
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	if (catalog_load(&cat, NULL, &d) != 0)
		abort();
	struct sweep *sw = NULL;
	diag_init(&d);
	int rc = sweep_load(&sw, grid, cat, &d);
	if (rc > 0 || (rc < 0 && (!d.msg[0] || sw)) || (rc == 0 && sweep_cells(sw) < 1))
		abort();
	/* a key given twice (top level, set, grid, a cell) is never accepted */
	cJSON *root = rc == 0 ? cJSON_ParseWithLength((const char *)data, text) : NULL;
	if (root) {
		const cJSON *objs[] = {root, cJSON_GetObjectItemCaseSensitive(root, "set"),
				       cJSON_GetObjectItemCaseSensitive(root, "grid")};
		for (int i = 0; i < 3; i++)
			if (cJSON_IsObject(objs[i]) && jsontext_repeated_key(objs[i]))
				abort();
		const cJSON *c;
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(root, "cells"))
			if (cJSON_IsObject(c) && jsontext_repeated_key(c))
				abort();
		cJSON_Delete(root);
	}
	if (rc == 0) {
		struct sweep_out out;
		diag_init(&d);
		rc = sweep_out_open(&out, rows, sw, &d);
		if (rc > 0 || (rc < 0 && !d.msg[0]))
			abort();
		if (rc == 0) {
			/* every row kept marks its own cell, once */
			if ((size_t)out.kept != sweep_done(sw) || sweep_done(sw) > sweep_cells(sw))
				abort();
			for (size_t i = 0; i < sweep_cells(sw); i++)
				if (sweep_cell_done(sw, i) != (sweep_row(sw, i) != NULL))
					abort();
			if (sweep_out_close(&out, &d) != 0)
				abort();
		}
	}
	sweep_free(sw);
	catalog_free(cat);
	free(grid);
	free(rows);
	return 0;
}
