/* SPDX-License-Identifier: Apache-2.0
 * fuzz_set: one --set KEY=VALUE over the built-in scenario
 * (replay/scenario.h), the input up to its first NUL byte.  A VALUE that
 * is not JSON as a whole must mean exactly the same JSON string: the
 * argument is also given with VALUE quoted ("..."), and the two loads must
 * agree, success for success and byte for byte -- so that no JSON prefix
 * of a value ("2" of "2s", "false" of "falsey") is ever taken for it. */
#include "fuzz/fuzz_util.h"

#include "base/diag.h"
#include "replay/scenario.h"

#include <cjson/cJSON.h>

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t len = nul ? (size_t)(nul - data) : size;
	char *arg = malloc(len + 1);
	if (!arg)
		abort();
	memcpy(arg, data, len);
	arg[len] = '\0';
	struct scenario *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	if (!a || !b)
		abort();
	struct diag d;
	diag_init(&d);
	const char *sets[1] = {arg};
	int rc = scenario_load(a, NULL, sets, 1, &d);
	if (rc > 0 || (rc < 0 && !d.msg[0]))
		abort();
	char *eq = strchr(arg, '=');
	cJSON *whole = eq ? cJSON_ParseWithOpts(eq + 1, NULL, 1) : NULL;
	if (eq && !whole) {
		/* the same value as a JSON string */
		cJSON *str = cJSON_CreateString(eq + 1);
		char *quoted = str ? cJSON_PrintUnformatted(str) : NULL;
		size_t klen = (size_t)(eq - arg) + 1;
		char *arg2 = quoted ? malloc(klen + strlen(quoted) + 1) : NULL;
		if (!arg2)
			abort();
		memcpy(arg2, arg, klen);
		strcpy(arg2 + klen, quoted);
		const char *sets2[1] = {arg2};
		struct diag d2;
		diag_init(&d2);
		int rc2 = scenario_load(b, NULL, sets2, 1, &d2);
		if ((rc == 0) != (rc2 == 0))
			abort();
		if (rc == 0 && memcmp(a, b, sizeof(*a)) != 0)
			abort();
		free(arg2);
		cJSON_free(quoted);
		cJSON_Delete(str);
	}
	cJSON_Delete(whole);
	free(a);
	free(b);
	free(arg);
	return 0;
}
