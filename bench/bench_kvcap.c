/* SPDX-License-Identifier: Apache-2.0
 * bench_kvcap: the memory model's KV-cache capacity against what vLLM
 * reported at start-up (models/calibration/kv-capacity.csv), row by row,
 * with the plan's parts and the median error.  docs/validation.md quotes
 * it.  Prints; never run by ctest.
 *
 *   bench_kvcap [kv-capacity.csv]     (default: the repository's, from the
 *                                      source tree this was built from)
 */
#include <stdio.h>
#include <stdlib.h>

#include "calib/kvcap.h"
#include "models/catalog.h"
#include "models/engine.h"

#ifndef AC_BENCH_SRC_DIR
#define AC_BENCH_SRC_DIR "."
#endif

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1]
				    : AC_BENCH_SRC_DIR "/models/calibration/kv-capacity.csv";
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct engine_table *et = malloc(sizeof(*et));
	struct kvcap_set *set = malloc(sizeof(*set));
	int rc = et && set ? 0 : DIAG_ENOMEM;
	if (rc == 0)
		rc = catalog_load(&cat, NULL, &d);
	if (rc == 0)
		rc = engine_table_load(et, NULL, &d);
	if (rc == 0)
		rc = kvcap_run(set, path, cat, et, &d);
	if (rc == 0)
		rc = kvcap_write_text(stdout, set, &d);
	if (rc)
		fprintf(stderr, "bench_kvcap: %s\n", rc == DIAG_ENOMEM ? "out of memory" : d.msg);
	catalog_free(cat);
	free(et);
	free(set);
	return rc ? 2 : 0;
}
