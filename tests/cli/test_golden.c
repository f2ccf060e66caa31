/* SPDX-License-Identifier: Apache-2.0
 * Golden outputs: fixed small replays must give exactly the JSON committed
 * in tests/fixtures/golden/.  The runs cover closed-loop sessions with
 * extends chains, and an open-loop Mooncake head with a cache small enough
 * to force preemptions and evictions.  An intended change of figures means
 * regenerating the files (see tests/fixtures/golden/README.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *args; /* run from the source root, so paths in the report are relative */
	const char *golden;
	int status; /* exit status: 1 where the answer is no */
} RUNS[] = {
	{"replay tests/fixtures/replay/two_sessions.jsonl --set engine.kv_cache_tokens=100000 --seed 3",
	 "tests/fixtures/golden/replay_two_sessions.json", 0},
	{"replay tests/fixtures/traces/mooncake_head200.jsonl --set engine.kv_cache_tokens=150000",
	 "tests/fixtures/golden/replay_mooncake_head200.json", 1},
};

static void test_golden(void **state)
{
	(void)state;
	assert_int_equal(chdir(AC_SRC_DIR), 0);
	for (size_t i = 0; i < sizeof(RUNS) / sizeof(RUNS[0]); i++) {
		char args[1024];
		snprintf(args, sizeof(args), "%s --quiet --json -", RUNS[i].args);
		struct cli_out r = cli_run(args);
		if (r.status != RUNS[i].status)
			fail_msg("agentcap %s: exit %d (want %d): %s", args, r.status, RUNS[i].status,
				 r.err);
		size_t len = 0;
		char *want = cli_slurp(RUNS[i].golden, &len);
		assert_non_null(want);
		if (len != r.out_len || memcmp(want, r.out, len) != 0) {
			size_t at = 0;
			while (at < len && at < r.out_len && want[at] == r.out[at])
				at++;
			size_t from = at > 80 ? at - 80 : 0;
			fail_msg("agentcap %s differs from %s at byte %zu:\n"
				 "  want ...%.160s\n  got  ...%.160s\n"
				 "(if intended: agentcap %s --quiet --json %s)",
				 RUNS[i].args, RUNS[i].golden, at, want + from, r.out + from, RUNS[i].args,
				 RUNS[i].golden);
		}
		free(want);
		cli_out_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
