/* SPDX-License-Identifier: Apache-2.0
 * bench_synth: how long the synthetic team takes to generate and write, and
 * how close its figures come to the profile's targets.
 *
 *   bench_synth [--engineers N] [--days D] [--seed S] [--profile FILE]
 *               [--out PATH] [--no-count]
 *
 * Generates the team into PATH (default: a file under /tmp, removed
 * afterwards), prints wall time, calls per second and output size, then
 * counts the file independently (tests/traces/test_synth_count.c) and prints
 * each figure beside its target.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/diag.h"
#include "tests/traces/test_synth_count.h"
#include "traces/synth.h"
#include "traces/synth_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct synth_team_opts o = {.engineers = 300, .days = 5, .seed = 1};
	const char *profile = NULL, *out = NULL;
	int count = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--engineers") == 0 && v) {
			o.engineers = atoi(v);
			i++;
		} else if (strcmp(a, "--days") == 0 && v) {
			o.days = atoi(v);
			i++;
		} else if (strcmp(a, "--seed") == 0 && v) {
			o.seed = strtoull(v, NULL, 10);
			i++;
		} else if (strcmp(a, "--profile") == 0 && v) {
			profile = v;
			i++;
		} else if (strcmp(a, "--out") == 0 && v) {
			out = v;
			i++;
		} else if (strcmp(a, "--no-count") == 0) {
			count = 0;
		} else {
			fprintf(stderr, "usage: bench_synth [--engineers N] [--days D] [--seed S] "
					"[--profile FILE] [--out PATH] [--no-count]\n");
			return 2;
		}
	}
	char tmp[64];
	if (!out) {
		snprintf(tmp, sizeof(tmp), "/tmp/bench-synth-%d.jsonl", (int)getpid());
		out = tmp;
	}
	struct diag d;
	diag_init(&d);
	struct synth_profile p;
	if (synth_profile_load(&p, profile, &d) != 0) {
		fprintf(stderr, "bench_synth: %s\n", d.msg);
		return 2;
	}
	struct synth_team_stats st;
	double t0 = now_s();
	if (synth_team_write(&p, &o, out, false, &st, &d) != 0) {
		fprintf(stderr, "bench_synth: %s\n", d.msg);
		return 3;
	}
	double wall = now_s() - t0;
	struct stat sb;
	long long bytes = stat(out, &sb) == 0 ? (long long)sb.st_size : -1;
	printf("team: %d engineers x %d days, seed %llu, profile %s\n", (int)o.engineers, (int)o.days,
	       (unsigned long long)o.seed, p.source);
	printf("generated: %lld sessions (%lld subagents), %lld calls, %lld tasks, %lld engineer-days\n",
	       (long long)st.sessions, (long long)st.subagent_sessions, (long long)st.calls,
	       (long long)st.tasks, (long long)st.engineer_days);
	printf("wall %.2f s, %.0f calls/s, %.1f MB written to %s\n", wall, (double)st.calls / wall,
	       (double)bytes / 1e6, out);
	printf("compactions %lld, cache busts %lld, tool failures %lld, retries %lld, reattempts %lld\n",
	       (long long)st.compactions, (long long)st.busts, (long long)st.tool_failures,
	       (long long)st.retries, (long long)st.reattempts);
	int rc = 0;
	if (count) {
		struct synth_count c;
		char msg[DIAG_MSG_MAX];
		t0 = now_s();
		if (synth_count_file(out, 16, p.decode_tokens_per_s, &c, msg, sizeof(msg)) != 0) {
			fprintf(stderr, "bench_synth: counting: %s\n", msg);
			rc = 3;
		} else {
			printf("independent count (%.1f s, block 16, decode %.0f tok/s):\n", now_s() - t0,
			       p.decode_tokens_per_s);
			printf("  %-28s %12s %12s\n", "figure", "measured", "target");
			printf("  %-28s %12.0f %12.0f\n", "median prompt tokens", c.median_prompt_tokens,
			       p.target_median_prompt_tokens);
			printf("  %-28s %12.0f %12.0f\n", "median output tokens", c.median_output_tokens,
			       p.target_median_output_tokens);
			printf("  %-28s %12.4f %12.4f\n", "prefix hit rate (unbounded)", c.hit_rate,
			       p.target_prefix_hit_rate);
			printf("  %-28s %12.2f %12.2f\n", "miss amplification", c.miss_amplification,
			       p.target_miss_amplification);
			printf("  %-28s %12.4f %12.4f\n", "tool failure rate", c.tool_failure_rate,
			       p.target_tool_failure_rate);
			printf("  %-28s %12.3f %12.3f\n", "overlap concurrency p50", c.overlap_median,
			       p.target_overlap_median);
			printf("  %-28s %12.3f %12.3f\n", "overlap concurrency p90", c.overlap_p90,
			       p.target_overlap_p90);
			printf("  trees %lld, turns %lld (overlapping %lld); max attempts per step %lld; tasks %lld "
			       "(accepted %lld, rejected %lld)\n",
			       (long long)c.trees, (long long)c.turns, (long long)c.overlap_turns, (long long)c.max_attempts,
			       (long long)c.tasks, (long long)c.accepted, (long long)c.rejected);
			printf("  calls per engineer-day %.0f, first start %.0f s, last start %.0f s\n",
			       (double)c.calls / (double)(st.engineer_days ? st.engineer_days : 1),
			       c.first_t_s, c.last_t_s);
		}
	}
	if (out == tmp)
		unlink(tmp);
	return rc;
}
