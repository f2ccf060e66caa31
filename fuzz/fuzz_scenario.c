/* SPDX-License-Identifier: Apache-2.0
 * fuzz_scenario: the scenario reader (replay/scenario.h).  The input up to
 * the first NUL byte is the scenario file; what follows is a list of
 * NUL-separated --set arguments (at most 16) applied after it.  Each pool
 * of a scenario that loads is also viewed (scenario_pool_view). */
#include "fuzz/fuzz_util.h"

#include "base/diag.h"
#include "replay/scenario.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SETS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t text = nul ? (size_t)(nul - data) : size;
	const char *path = fuzz_write("scenario.json", data, text);
	/* the --set arguments, each copied to its own NUL-terminated string */
	char *sets[MAX_SETS];
	int n = 0;
	size_t at = nul ? text + 1 : size;
	while (at < size && n < MAX_SETS) {
		const uint8_t *end = memchr(data + at, 0, size - at);
		size_t len = end ? (size_t)(end - (data + at)) : size - at;
		sets[n] = malloc(len + 1);
		if (!sets[n])
			abort();
		memcpy(sets[n], data + at, len);
		sets[n][len] = '\0';
		n++;
		at += len + 1;
	}
	struct scenario *sc = malloc(sizeof(*sc));
	if (!sc)
		abort();
	struct diag d;
	diag_init(&d);
	int rc = scenario_load(sc, path, (const char *const *)sets, n, &d);
	if (rc > 0 || (rc < 0 && !d.msg[0]))
		abort();
	/* every pool's view: the keys it set laid over the top level */
	struct scenario *v = malloc(sizeof(*v));
	if (!v)
		abort();
	for (int32_t i = 0; rc == 0 && i < sc->n_pools; i++) {
		scenario_pool_view(sc, i, v);
		if (v->n_pools != 0 || v->replicas < 1)
			abort();
	}
	free(v);
	/* the built-in default with the same overrides */
	diag_init(&d);
	rc = scenario_load(sc, NULL, (const char *const *)sets, n, &d);
	if (rc > 0 || (rc < 0 && !d.msg[0]))
		abort();
	free(sc);
	for (int i = 0; i < n; i++)
		free(sets[i]);
	return 0;
}
