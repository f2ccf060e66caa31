/* SPDX-License-Identifier: Apache-2.0
 * test_import: every importer turns its fixture into the trace counted by
 * hand (calls, sessions, token totals, gaps, tools, tasks, prefix reuse),
 * malformed records give the exact path:line[:col] message or are counted
 * with skip_bad, no text leaks without keep_text, ids are salted, output is
 * deterministic, all-or-nothing, and gzip when asked.
 *
 * The TraceLab Claude Code and Codex figures were counted independently of
 * the importer, from the raw records, with these one-offs (run in
 * tests/fixtures/import/):
 *
 *   python3 -c 'import json,datetime as D
 *   T=lambda s:D.datetime.fromisoformat(s.replace("Z","+00:00"))
 *   ms=lambda a,b:round((b-a).total_seconds()*1000)
 *   R=[json.loads(l) for l in open("claude_session.jsonl")]
 *   C={};O=[];inp=None
 *   for r in R:
 *     if r["type"]=="user": inp=T(r["timestamp"])
 *     if r["type"]=="assistant":
 *       i=r["message"]["id"]
 *       if i not in C: C[i]=dict(u=r["message"]["usage"],req=inp); O.append(i)
 *       C[i]["done"]=T(r["timestamp"])
 *   U=[C[i]["u"] for i in O]
 *   print(len(O),sum(u["input_tokens"]+u["cache_creation_input_tokens"]+
 *     u["cache_read_input_tokens"] for u in U),sum(u["cache_read_input_tokens"]
 *     for u in U),sum(u["output_tokens"] for u in U))
 *   print([ms(C[O[k-1]]["done"],C[O[k]]["req"]) for k in range(1,len(O))])'
 *   -> 10 418193 394068 9423
 *   -> [19291, 12688, 21467, 145, 19913, 16113, 2521, 130, 187]
 *
 *   python3 -c 'import json,datetime as D
 *   T=lambda s:D.datetime.fromisoformat(s.replace("Z","+00:00"))
 *   ms=lambda a,b:round((b-a).total_seconds()*1000)
 *   R=[json.loads(l) for l in open("codex_rollout.jsonl")]
 *   calls=[];inp=None;req=None
 *   for r in R:
 *     p=r["payload"];t=p.get("type")
 *     if t=="function_call_output" or (t=="message" and p.get("role")=="user") \
 *        or t=="user_message": inp=T(r["timestamp"])
 *     if req is None and (t in("reasoning","function_call","agent_message") or
 *        (t=="message" and p.get("role")=="assistant")): req=inp
 *     if t=="token_count" and p.get("info"):
 *       calls.append(dict(u=p["info"]["last_token_usage"],req=req,
 *         done=T(r["timestamp"]))); req=None
 *   U=[c["u"] for c in calls]
 *   print(len(calls),sum(u["input_tokens"] for u in U),sum(u["cached_input_tokens"]
 *     for u in U),sum(u["output_tokens"] for u in U))
 *   print([ms(calls[k-1]["done"],calls[k]["req"]) for k in range(1,len(calls))])'
 *   -> 9 95819 79488 1912
 *   -> [1162, 4990, 2, 133, 6333, 54, 18362, 40]
 *
 * Tool outcomes and tasks were read off TraceLab's explanation.md: the
 * Claude session has two user prompts and no failed tool; the Codex one has
 * three user prompts and one command exiting with code 1 (first call).
 */
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "base/vec.h"
#include "traces/import.h"
#include "traces/reader.h"
#include "traces/trace.h"
#include "traces/writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <math.h>
#include <cmocka.h>

#define FIX AC_SRC_DIR "/tests/fixtures/import/"

/* ---- Helpers ------------------------------------------------------------ */

static int imp(const char *fmt, const char *path, const struct import_opts *o, const char *out,
	       struct import_stats *st, char *msg)
{
	struct diag d;
	diag_init(&d);
	const char *paths[1] = {path};
	int rc = import_files(fmt, paths, 1, o, out, st, &d);
	if (msg)
		snprintf(msg, DIAG_MSG_MAX, "%s", d.msg);
	return rc;
}

struct sum {
	size_t sessions;
	int64_t calls, prompt, output, tool_ok, tool_fail, tasks, open_loop, extends;
	int64_t gaps_ms[64];
	int64_t n_gaps;
};

static void summarize(struct trace_session **s, size_t n, struct sum *out)
{
	memset(out, 0, sizeof(*out));
	out->sessions = n;
	for (size_t i = 0; i < n; i++) {
		out->open_loop += s[i]->open_loop;
		for (size_t k = 0; k < s[i]->n_calls; k++) {
			const struct trace_call *c = &s[i]->calls[k];
			out->calls++;
			out->prompt += c->prompt_tokens;
			out->output += c->output_tokens;
			out->tool_ok += c->tool == TRACE_TOOL_OK;
			out->tool_fail += c->tool == TRACE_TOOL_FAIL;
			out->extends += c->extends_prev;
			if (c->task && (k == 0 || c->task != s[i]->calls[k - 1].task))
				out->tasks++;
			if (k > 0 && out->n_gaps < 64)
				out->gaps_ms[out->n_gaps++] = llround(c->gap_s * 1000);
		}
	}
}

/* Import, read back, summarize; the sessions stay in *ss (free them). */
static void import_read(const char *fmt, const char *path, const struct import_opts *o,
			struct import_stats *st, struct trace_session ***ss, size_t *n, struct sum *sum)
{
	char out[512], msg[DIAG_MSG_MAX];
	testutil_scratch(out, sizeof(out), "import_out.jsonl");
	int rc = imp(fmt, path, o, out, st, msg);
	if (rc)
		fail_msg("%s import of %s: %s", fmt, path, msg);
	assert_int_equal(testutil_read_all(out, ss, n, msg, sizeof(msg)), 0);
	summarize(*ss, *n, sum);
	assert_int_equal(sum->calls, st->calls);
	assert_int_equal((int64_t)*n, st->sessions);
	assert_int_equal(sum->prompt, st->prompt_tokens);
	assert_int_equal(sum->output, st->output_tokens);
}

/* Tokens at the start of call i's prompt that are identical (same contents,
 * block for block) to call i-1's prompt followed by its output. */
static int64_t shared_with_prev(const struct trace_session *s, size_t i)
{
	struct vec a, b;
	vec_init(&a, sizeof(struct trace_seg), VEC_NO_LIMIT);
	vec_init(&b, sizeof(struct trace_seg), VEC_NO_LIMIT);
	assert_int_equal(trace_session_prompt(s, i - 1, &a), 0);
	struct trace_seg *o = vec_push(&a);
	o->content = trace_output_content(s->id, s->calls[i - 1].seq);
	o->tokens = s->calls[i - 1].output_tokens;
	assert_int_equal(trace_session_prompt(s, i, &b), 0);
	int64_t shared = 0;
	for (size_t k = 0; k < a.len && k < b.len; k++) {
		const struct trace_seg *x = vec_at(&a, k), *y = vec_at(&b, k);
		if (x->content != y->content)
			break;
		shared += x->tokens < y->tokens ? x->tokens : y->tokens;
		if (x->tokens != y->tokens)
			break;
	}
	vec_release(&a);
	vec_release(&b);
	return shared;
}

static bool file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	bool found = strstr(buf, needle) != NULL;
	free(buf);
	return found;
}

/* ---- TraceLab examples: counts made by hand ----------------------------- */

static const int64_t CLAUDE_READ[10] = {27217, 29380, 35738, 38590, 41129,
					 41587, 42874, 44770, 45277, 47506};
static const int64_t CLAUDE_GAPS[9] = {19291, 12688, 21467, 145, 19913, 16113, 2521, 130, 187};
static const int64_t CODEX_CACHED[9] = {6912, 9600, 9856, 3456, 10240, 9216, 10624, 10368, 9216};
static const int64_t CODEX_GAPS[8] = {1162, 4990, 2, 133, 6333, 54, 18362, 40};

static void check_claude(struct trace_session **s, size_t n, const struct sum *u,
			 const struct import_stats *st)
{
	assert_int_equal(n, 1);
	assert_int_equal(u->calls, 10);
	assert_int_equal(u->prompt, 418193);
	assert_int_equal(st->reused_tokens, 394068);
	assert_int_equal(u->output, 9423);
	assert_int_equal(u->n_gaps, 9);
	for (int i = 0; i < 9; i++)
		assert_int_equal(u->gaps_ms[i], CLAUDE_GAPS[i]);
	assert_int_equal(u->tool_fail, 0);
	assert_int_equal(u->tool_ok, 8);   /* every call but the two final answers */
	assert_int_equal(u->tasks, 2);
	assert_int_equal(s[0]->calls[4].tool, TRACE_TOOL_NONE);
	assert_int_equal(s[0]->calls[9].tool, TRACE_TOOL_NONE);
	assert_true(s[0]->calls[4].task != s[0]->calls[5].task);
	assert_true(s[0]->calls[0].task == s[0]->calls[4].task);
	/* The first call's cached prefix is one shared segment; every later
	 * call shares exactly its recorded cache read with the previous call. */
	assert_int_equal(s[0]->calls[0].segs[0].tokens, CLAUDE_READ[0]);
	for (size_t i = 1; i < 10; i++)
		assert_int_equal(shared_with_prev(s[0], i), CLAUDE_READ[i]);
}

static void test_claude_code(void **state)
{
	(void)state;
	struct import_stats st;
	struct trace_session **s;
	size_t n;
	struct sum u;
	import_read("claude-code", FIX "claude_session.jsonl", NULL, &st, &s, &n, &u);
	check_claude(s, n, &u, &st);
	assert_int_equal(st.records, 64);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.skipped, 0);
	testutil_free_all(s, n);
}

/* Subagent (sidechain) records form sessions of their own whose parent is
 * the main session: one keyed by agentId, one (older logs, no agentId) by
 * the root of its parentUuid chain.  Written for this test:
 * claude_subagents.jsonl, main session 0 s and 15 s, agent-7 from 6 s, the
 * chain at 7 s. */
static void test_claude_code_subagents(void **state)
{
	(void)state;
	struct import_stats st;
	struct trace_session **s;
	size_t n;
	struct sum u;
	import_read("claude-code", FIX "claude_subagents.jsonl", NULL, &st, &s, &n, &u);
	assert_int_equal(n, 3);
	assert_int_equal(u.calls, 5);
	assert_int_equal(u.prompt, 100 + 200 + 50 + 60 + 40);
	assert_int_equal(u.output, 10 + 20 + 5 + 6 + 4);
	/* sorted by start: main (0 s), agent-7 (6 s), the chain (7 s) */
	const struct trace_session *main_s = s[0], *agent = s[1], *chain = s[2];
	assert_int_equal(main_s->parent, 0);
	assert_true(main_s->id != 0);
	assert_true(agent->parent == main_s->id);
	assert_true(chain->parent == main_s->id);
	assert_true(agent->id != main_s->id && chain->id != main_s->id && agent->id != chain->id);
	assert_int_equal(main_s->n_calls, 2);
	assert_int_equal(main_s->calls[0].prompt_tokens, 100);
	assert_int_equal(main_s->calls[1].prompt_tokens, 200);
	assert_true(main_s->calls[1].gap_s == 7.0); /* tool result at 12 s - done at 5 s */
	assert_int_equal(agent->n_calls, 2);
	assert_true(agent->t_s == 6.0);
	assert_int_equal(agent->calls[0].prompt_tokens, 50);
	assert_true(agent->calls[1].gap_s == 1.0);
	assert_int_equal(chain->n_calls, 1);
	assert_true(chain->t_s == 7.0);
	assert_int_equal(chain->calls[0].prompt_tokens, 40);
	testutil_free_all(s, n);
}

static void check_codex(struct trace_session **s, size_t n, const struct sum *u,
			const struct import_stats *st)
{
	assert_int_equal(n, 1);
	assert_int_equal(u->calls, 9);
	assert_int_equal(u->prompt, 95819);
	assert_int_equal(st->reused_tokens, 79488);
	assert_int_equal(u->output, 1912);
	assert_int_equal(u->n_gaps, 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(u->gaps_ms[i], CODEX_GAPS[i]);
	assert_int_equal(u->tool_fail, 1);
	assert_int_equal(s[0]->calls[0].tool, TRACE_TOOL_FAIL);
	assert_int_equal(u->tool_ok, 5);
	assert_int_equal(u->tasks, 3);
	assert_int_equal(s[0]->calls[0].segs[0].tokens, CODEX_CACHED[0]);
	for (size_t i = 1; i < 9; i++)
		assert_int_equal(shared_with_prev(s[0], i), CODEX_CACHED[i]);
}

/* Who is who: an engineer named for an input path marks every session read
 * from it, subagents included; without a name the logs have none (the
 * pooled "Engineers 0" of before). */
static void test_engineer_per_path(void **state)
{
	(void)state;
	const char *names[] = {"alice"};
	struct import_opts o = {.engineers = names};
	struct import_stats st;
	struct trace_session **s;
	size_t n;
	struct sum u;
	import_read("claude-code", FIX "claude_session.jsonl", &o, &st, &s, &n, &u);
	assert_int_equal(st.engineers, 1);
	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++) {
		assert_true(s[i]->engineer != 0);
		assert_true(s[i]->engineer == s[0]->engineer);
	}
	testutil_free_all(s, n);
	import_read("tracelab", FIX "tracelab_round_trace.jsonl", &o, &st, &s, &n, &u);
	assert_int_equal(n, 2);
	assert_true(s[0]->engineer != 0 && s[0]->engineer == s[1]->engineer);
	testutil_free_all(s, n);
	import_read("claude-code", FIX "claude_session.jsonl", NULL, &st, &s, &n, &u);
	assert_int_equal(st.engineers, 0);
	for (size_t i = 0; i < n; i++)
		assert_true(s[i]->engineer == 0);
	testutil_free_all(s, n);
	/* folders per engineer need folders */
	struct import_opts dirs = {.engineer_dirs = true};
	char out[512], msg[DIAG_MSG_MAX];
	testutil_scratch(out, sizeof(out), "import_dirs.jsonl");
	assert_int_equal(imp("claude-code", FIX "claude_session.jsonl", &dirs, out, &st, msg),
			 DIAG_EINPUT);
	assert_non_null(strstr(msg, "not a folder"));
	/* request-level rows belong to no engineer */
	assert_int_equal(imp("mooncake", FIX "../traces/mooncake_head200.jsonl", &o, out, &st, msg),
			 DIAG_EINPUT);
	assert_non_null(strstr(msg, "request-level rows belong to no engineer"));
}

static void test_codex(void **state)
{
	(void)state;
	struct import_stats st;
	struct trace_session **s;
	size_t n;
	struct sum u;
	import_read("codex", FIX "codex_rollout.jsonl", NULL, &st, &s, &n, &u);
	check_codex(s, n, &u, &st);
	assert_int_equal(st.records, 72);
	testutil_free_all(s, n);
}

/* TraceLab's own normalised rows of the same two sessions import to the
 * same calls, tokens, gaps, tools and tasks. */
static void test_tracelab(void **state)
{
	(void)state;
	struct import_stats st;
	struct trace_session **s;
	size_t n;
	struct sum u;
	import_read("tracelab", FIX "tracelab_round_trace.jsonl", NULL, &st, &s, &n, &u);
	assert_int_equal(n, 2);
	assert_int_equal(st.records, 19);
	/* Sessions come out by start time: Codex (March) before Claude (June). */
	assert_int_equal(s[0]->n_calls, 9);
	assert_int_equal(s[1]->n_calls, 10);
	struct sum a, b;
	summarize(&s[0], 1, &a);
	summarize(&s[1], 1, &b);
	struct import_stats sa = {.reused_tokens = 79488}, sb = {.reused_tokens = 394068};
	assert_int_equal(st.reused_tokens, sa.reused_tokens + sb.reused_tokens);
	check_codex(&s[0], 1, &a, &sa);
	check_claude(&s[1], 1, &b, &sb);
	/* Clock times: the Claude session starts 71.8 days after the Codex one. */
	assert_int_equal(llround(s[1]->t_s * 1000), 6204860823LL);
	testutil_free_all(s, n);
}

/* ---- Request-level formats ---------------------------------------------- */

static void test_azure_2023(void **state)
{
	(void)state;
	struct import_stats st;
	struct trace_session **s;
	size_t n;
	struct sum u;
	/* First 50 rows of AzureLLMInferenceTrace_code.csv: CRLF lines, seven
	 * fractional digits, no final newline.  Sums by hand: awk -F, 'NR>1
	 * {a+=$2; b+=$3} END {print a, b}' azure2023_code_head50.csv */
	import_read("azure", FIX "azure2023_code_head50.csv", NULL, &st, &s, &n, &u);
	assert_int_equal(n, 50);
	assert_int_equal(u.open_loop, 50);
	assert_int_equal(u.prompt, 125078);
	assert_int_equal(u.output, 1085);
	assert_true(s[0]->t_s == 0);
	/* 2023-11-16 18:17:04.0319600 - 18:17:03.9799600 */
	assert_int_equal(llround(s[1]->t_s * 1e7), 520000);
	/* The last row, 18:17:40.6293580, is 36.649398 s after the first. */
	assert_int_equal(llround(s[49]->t_s * 1e7), 366493980);
	testutil_free_all(s, n);
}

static void test_azure_2024(void **state)
{
	(void)state;
	struct import_stats st;
	struct trace_session **s;
	size_t n;
	struct sum u;
	import_read("azure", FIX "azure2024.csv", NULL, &st, &s, &n, &u);
	assert_int_equal(n, 4);
	assert_int_equal(u.prompt, 2162 + 1024 + 4096 + 333);
	assert_int_equal(u.output, 5 + 215 + 10 + 7);
	assert_int_equal(llround(s[1]->t_s * 1e6), 204350);
	assert_int_equal(llround(s[2]->t_s * 1e6), 1490070);
	/* 02:00:01.5+02:00 is the same instant as 00:00:01.5Z. */
	assert_true(s[3]->t_s == s[2]->t_s);
	testutil_free_all(s, n);
}

static void test_burstgpt(void **state)
{
	(void)state;
	struct import_stats st;
	struct trace_session **s;
	size_t n;
	struct sum u;
	import_read("burstgpt", FIX "burstgpt.csv", NULL, &st, &s, &n, &u);
	assert_int_equal(n, 5);
	assert_int_equal(u.open_loop, 5);
	assert_int_equal(st.failed_requests, 2);
	assert_int_equal(u.prompt, 472 + 1087 + 417 + 2048 + 95);
	assert_int_equal(u.output, 18 + 1 + 77 + 301 + 1); /* failed: 0 -> 1 */
	assert_true(s[0]->t_s == 5 && s[3]->t_s == 118.5 && s[4]->t_s == 200);
	testutil_free_all(s, n);

	/* With sessions: s1 resends its history (extends), s2 does not. */
	import_read("burstgpt", FIX "burstgpt_sessions.csv", NULL, &st, &s, &n, &u);
	assert_int_equal(n, 2);
	assert_int_equal(u.open_loop, 0);
	assert_int_equal(s[0]->n_calls, 3);
	assert_int_equal(s[1]->n_calls, 2);
	assert_true(s[0]->calls[1].extends_prev && s[0]->calls[2].extends_prev);
	assert_false(s[1]->calls[1].extends_prev);
	assert_int_equal(s[0]->calls[1].prompt_tokens, 180);
	assert_int_equal(s[0]->calls[2].prompt_tokens, 300);
	/* gap = t - (previous t + its Elapsed time) */
	assert_true(s[0]->calls[1].gap_s == 7.5 && s[0]->calls[2].gap_s == 18);
	assert_true(s[1]->calls[1].gap_s == 18);
	assert_int_equal(st.failed_requests, 1);
	testutil_free_all(s, n);
}

static void test_weka(void **state)
{
	(void)state;
	struct import_stats st;
	struct trace_session **s;
	size_t n;
	struct sum u;
	import_read("weka", FIX "weka.json", NULL, &st, &s, &n, &u);
	assert_int_equal(n, 2);
	assert_int_equal(u.calls, 6);
	assert_int_equal(u.prompt, 1650);
	assert_int_equal(u.output, 140);
	const struct trace_session *root = s[0], *sub = s[1];
	assert_int_equal(root->n_calls, 4);
	assert_int_equal(sub->n_calls, 2);
	assert_true(sub->parent == root->id && root->parent == 0);
	/* The subagent's times are relative to its marker at t = 6. */
	assert_true(sub->t_s == 6.0);
	/* gaps: think_time 1.5; t - (prev t + api_time) = 11 - 3.5 - 1.5; 27 */
	assert_true(root->calls[1].gap_s == 1.5 && root->calls[2].gap_s == 6.0 &&
		    root->calls[3].gap_s == 27.0);
	assert_true(sub->calls[1].gap_s == 1.0);
	assert_int_equal(u.tasks, 3);
	assert_int_equal(root->calls[0].tool, TRACE_TOOL_OK);
	assert_int_equal(root->calls[3].tool, TRACE_TOOL_NONE);
	/* hash ids -> 64-token segments; [1,2,3] then [1,2,4,...]: 128 shared. */
	assert_int_equal(root->calls[0].n_segs, 3);
	assert_int_equal(root->calls[0].segs[2].tokens, 150 - 128);
	assert_true(root->calls[1].segs[1].content == root->calls[0].segs[1].content);
	assert_true(root->calls[1].segs[2].content != root->calls[0].segs[2].content);
	/* One hash namespace per file: the subagent's block 1 is the root's. */
	assert_true(sub->calls[0].segs[0].content == root->calls[0].segs[0].content);
	testutil_free_all(s, n);

	/* JSON lines of traces, global scope: contents shared across traces. */
	import_read("weka", FIX "weka_lines.jsonl", NULL, &st, &s, &n, &u);
	assert_int_equal(n, 2);
	assert_int_equal(u.calls, 3);
	assert_true(s[1]->t_s == 2.0);
	assert_true(s[1]->calls[0].segs[0].content == s[0]->calls[0].segs[0].content);
	testutil_free_all(s, n);
}

static void test_openai_log(void **state)
{
	(void)state;
	struct import_stats st;
	struct trace_session **s;
	size_t n;
	struct sum u;
	import_read("openai-log", FIX "openai.jsonl", NULL, &st, &s, &n, &u);
	assert_int_equal(n, 2);
	const struct trace_session *conv = s[0], *open = s[1];
	assert_int_equal(conv->n_calls, 2);
	assert_true(open->open_loop && open->t_s == 4.0);
	/* tools JSON (79 chars) -> 20; system (44 chars) -> 4 + 11; user (39) -> 4 + 10 */
	assert_int_equal(conv->calls[0].n_segs, 3);
	assert_int_equal(conv->calls[0].segs[0].tokens, 20);
	assert_int_equal(conv->calls[0].segs[1].tokens, 15);
	assert_int_equal(conv->calls[0].segs[2].tokens, 14);
	assert_int_equal(conv->calls[0].output_tokens, 25); /* usage.completion_tokens */
	/* The second request replays the first plus the assistant's tool call:
	 * it extends it with the tool message (23 chars -> 4 + 6). */
	assert_true(conv->calls[1].extends_prev);
	assert_int_equal(conv->calls[1].n_segs, 1);
	assert_int_equal(conv->calls[1].segs[0].tokens, 10);
	assert_int_equal(conv->calls[1].prompt_tokens, 49 + 25 + 10);
	assert_true(conv->calls[1].gap_s == 3.5); /* 5 s later, 1.5 s latency */
	assert_int_equal(conv->calls[0].tool, TRACE_TOOL_OK);
	assert_true(conv->engineer != 0 && conv->engineer != open->engineer);
	assert_int_equal(open->calls[0].prompt_tokens, 6); /* "hello" */
	assert_int_equal(st.estimated, 2); /* two outputs unknown -> 1 */
	assert_int_equal(u.tasks, 1);
	testutil_free_all(s, n);
}

static void test_mooncake(void **state)
{
	(void)state;
	struct import_stats st;
	struct trace_session **s, **direct;
	size_t n, nd;
	struct sum u;
	const char *src = AC_SRC_DIR "/tests/fixtures/traces/mooncake_head200.jsonl";
	import_read("mooncake", src, NULL, &st, &s, &n, &u);
	char msg[DIAG_MSG_MAX];
	assert_int_equal(testutil_read_all(src, &direct, &nd, msg, sizeof(msg)), 0);
	assert_int_equal(n, nd);
	for (size_t i = 0; i < n; i++)
		assert_true(testutil_session_equal(s[i], direct[i], false));
	testutil_free_all(s, n);
	testutil_free_all(direct, nd);
}

/* ---- Errors ------------------------------------------------------------- */

struct bad_case {
	const char *fmt;
	const char *text;
	const char *msg;     /* after "PATH:" */
	int64_t good_calls;  /* calls left with skip_bad */
};

#define CL_OK(id, ts) "{\"type\":\"assistant\",\"sessionId\":\"s\",\"timestamp\":\"" ts "\"," \
	"\"message\":{\"id\":\"" id "\",\"model\":\"m\",\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}}\n"

static const struct bad_case BAD[] = {
	{"claude-code", CL_OK("a", "2026-01-01T00:00:00Z") "{\"type\":\"assistant\",\n"
	 CL_OK("b", "2026-01-01T00:00:09Z"),
	 "2:21: invalid JSON: unexpected end of line (expected one JSON object per line)", 2},
	{"claude-code", CL_OK("a", "2026-01-01T00:00:00Z")
	 "{\"type\":\"assistant\",\"sessionId\":\"s\",\"timestamp\":\"2026-01-01T00:00:01Z\","
	 "\"message\":{\"id\":\"c\",\"usage\":{\"input_tokens\":\"ten\",\"output_tokens\":5}}}\n",
	 "2:116: bad message.usage.input_tokens (expected an integer 0..1000000000)", 1},
	{"claude-code", "{\"type\":\"user\",\"sessionId\":\"s\",\"timestamp\":\"yesterday\"}\n"
	 CL_OK("a", "2026-01-01T00:00:00Z"),
	 "1:44: bad or missing 'timestamp' (expected an ISO 8601 time such as "
	 "2026-06-01T05:40:20.151Z)", 1},
	{"codex", "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
	 "\"token_count\",\"info\":{\"last_token_usage\":{\"input_tokens\":10,\"cached_input_tokens\":"
	 "20,\"output_tokens\":1}}}}\n"
	 "{\"timestamp\":\"2026-01-01T00:00:01Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
	 "\"token_count\",\"info\":{\"last_token_usage\":{\"input_tokens\":10,\"output_tokens\":1}}}}\n",
	 "1:156: cached_input_tokens 20 exceed input_tokens 10 (expected the cached part of the input)", 1},
	{"tracelab", "{\"session_id\":\"x\",\"round_index\":0,\"input_tokens_total\":100,"
	 "\"prefix_tokens\":10,\"newly_append_tokens\":20,\"output_tokens\":5}\n"
	 "{\"session_id\":\"x\",\"round_index\":1,\"input_tokens_total\":30,"
	 "\"prefix_tokens\":10,\"newly_append_tokens\":20,\"output_tokens\":5}\n",
	 "1:56: input_tokens_total 100 is not prefix_tokens + newly_append_tokens = 30 (expected "
	 "the two parts to add up)", 1},
	{"azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	 "2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04.0319600,abc,8\n",
	 "3:29: bad ContextTokens 'abc' (expected an integer 1..1000000000)", 1},
	{"azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	 "2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:02.0000000,100,8\n",
	 "3:1: TIMESTAMP 2023-11-16 18:17:02.0000000 is before the previous row's "
	 "2023-11-16 18:17:03.9799600 (expected rows in time order)", 1},
	{"burstgpt", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	 "5,ChatGPT,472,18,490,Conversation log\n-3,ChatGPT,10,1,11,API log\n",
	 "3:1: bad Timestamp '-3' (expected seconds 0..1e9 from the start of the trace)", 1},
	{"weka", "{\"id\":\"t\",\"block_size\":64,\"requests\":[{\"t\":0,\"type\":\"n\",\"in\":200,"
	 "\"out\":1,\"hash_ids\":[1,2]},{\"t\":1,\"type\":\"n\",\"in\":10,\"out\":1}]}\n",
	 "1: requests[0]: in=200 does not fit 2 hash_ids of 64-token blocks (expected 65..128)", 1},
	{"openai-log", "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"request\":{\"messages\":[]}}\n"
	 "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}\n",
	 "1:59: no 'messages' (expected a chat-completion request body with a non-empty messages array)", 1},
	/* Hex, 2024-02-30, NULs: strtod reads "0x10" as 16; a NUL escape would cut ids and text */
	{"burstgpt", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	 "5,ChatGPT,472,18,490,Conversation log\n0x10,ChatGPT,10,1,11,API log\n",
	 "3:1: bad Timestamp '0x10' (expected seconds 0..1e9 from the start of the trace)", 1},
	{"azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	 "2024-02-29 18:17:03.9799600,4808,10\n2024-02-30 18:17:04.0319600,100,8\n",
	 "3:1: bad TIMESTAMP '2024-02-30 18:17:04.0319600' (expected 2023-11-16 18:17:03.9799600 or "
	 "2024-05-10 00:00:00.009930+00:00)", 1},
	{"claude-code", CL_OK("a", "2026-01-01T00:00:00Z")
	 "{\"type\":\"assistant\",\"sessionId\":\"s\\u0000two\",\"timestamp\":\"2026-01-01T00:00:01Z\","
	 "\"message\":{\"id\":\"c\",\"model\":\"m\",\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}}\n",
	 "2:35: NUL character (\\u0000) in a string (expected text without NUL: ids and texts would "
	 "be cut short at it)", 1},
	{"openai-log", "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"request\":{\"messages\":[{\"role\":"
	 "\"user\",\"content\":\"x\\u0000hidden\"}]}}\n"
	 "{\"timestamp\":\"2026-01-01T00:00:01Z\",\"request\":{\"messages\":[{\"role\":\"user\","
	 "\"content\":\"y\"}]}}\n",
	 "1:87: NUL character (\\u0000) in a string (expected text without NUL: ids and texts would "
	 "be cut short at it)", 1},
	{"tracelab", "{\"session_id\":\"x\",\"round_index\":0,\"input_tokens_total\":30,"
	 "\"prefix_tokens\":10,\"newly_append_tokens\":20,\"output_tokens\":5}\n"
	 "{\"session_id\":\"x\\u0000y\",\"round_index\":0,\"input_tokens_total\":30,"
	 "\"prefix_tokens\":10,\"newly_append_tokens\":20,\"output_tokens\":5}\n",
	 "2:17: NUL character (\\u0000) in a string (expected text without NUL: ids and texts would "
	 "be cut short at it)", 1},
	/* bytes that are not UTF-8 would pass through cJSON into the output text */
	{"openai-log", "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"request\":{\"messages\":[{\"role\":"
	 "\"user\",\"content\":\"caf\xe9!\"}]}}\n"
	 "{\"timestamp\":\"2026-01-01T00:00:01Z\",\"request\":{\"messages\":[{\"role\":\"user\","
	 "\"content\":\"y\"}]}}\n",
	 "1:89: invalid UTF-8 (byte 0xe9) (expected UTF-8 JSON text)", 1},
	{"mooncake", "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1}\n"
	 "{\"timestamp\": 1, \"input_length\": 0, \"output_length\": 1}\n",
	 "2:34: bad 'input_length' value '0' (expected an integer 1..2^40)", 1},
};

static void test_bad_records(void **state)
{
	(void)state;
	char in[512], out[512], msg[DIAG_MSG_MAX], want[2 * DIAG_MSG_MAX];
	testutil_scratch(out, sizeof(out), "bad_out.jsonl");
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		const struct bad_case *b = &BAD[i];
		char name[64];
		snprintf(name, sizeof(name), "bad_%zu.%s", i,
			 strcmp(b->fmt, "azure") == 0 || strcmp(b->fmt, "burstgpt") == 0 ? "csv" : "jsonl");
		testutil_scratch(in, sizeof(in), name);
		testutil_write_str(in, b->text);
		remove(out);
		struct import_stats st;
		int rc = imp(b->fmt, in, NULL, out, &st, msg);
		snprintf(want, sizeof(want), "%s:%s", in, b->msg);
		if (rc != DIAG_EINPUT || strcmp(msg, want) != 0)
			fail_msg("case %zu (%s): rc %d\n got: %s\nwant: %s", i, b->fmt, rc, msg, want);
		struct stat sbuf;
		assert_int_equal(stat(out, &sbuf), -1); /* nothing written */

		struct import_opts o = {.skip_bad = true};
		rc = imp(b->fmt, in, &o, out, &st, msg);
		if (rc != 0)
			fail_msg("case %zu (%s) with skip_bad: %s", i, b->fmt, msg);
		assert_int_equal(st.skipped, 1);
		assert_string_equal(st.first_skipped, want);
		assert_int_equal(st.calls, b->good_calls);
	}
}

/* A record that starts more than 1e9 s after the first: the message names
 * the file, whether the file is streamed (one request-level file) or its
 * sessions are buffered and sorted (two files). */
static void test_span_names_file(void **state)
{
	(void)state;
	char in[512], in2[512], out[512], msg[DIAG_MSG_MAX], want[2 * DIAG_MSG_MAX];
	testutil_scratch(in, sizeof(in), "span.csv");
	testutil_scratch(in2, sizeof(in2), "span2.csv");
	testutil_scratch(out, sizeof(out), "span_out.jsonl");
	testutil_write_str(in, "TIMESTAMP,ContextTokens,GeneratedTokens\n"
			   "1971-01-01 00:00:00.0,10,1\n2024-01-01 00:00:00.0,10,1\n");
	testutil_write_str(in2, "TIMESTAMP,ContextTokens,GeneratedTokens\n"
			   "1971-01-01 00:00:00.0,10,1\n");
	remove(out);
	assert_int_equal(imp("azure", in, NULL, out, NULL, msg), DIAG_EINPUT);
	snprintf(want, sizeof(want), "%s:3: record starts 1672531200 s after the first one "
		 "(expected time-ordered input spanning at most 1e9 s)", in);
	assert_string_equal(msg, want);
	struct diag d;
	diag_init(&d);
	const char *paths[2] = {in2, in};
	assert_int_equal(import_files("azure", paths, 2, NULL, out, NULL, &d), DIAG_EINPUT);
	snprintf(want, sizeof(want), "%s:3: session starts at t=1672531200 s (expected 0..1e9 s "
		 "after the earliest session)", in);
	assert_string_equal(d.msg, want);
	struct stat sbuf;
	assert_int_equal(stat(out, &sbuf), -1);
}

/* A session longer than the limit is refused at the record that passes it,
 * while reading, not after the whole session (10 million calls) is held:
 * here with a limit of 3 calls, the fourth call's line. */
static void test_session_limit_while_reading(void **state)
{
	(void)state;
	char in[512], out[512], msg[DIAG_MSG_MAX], want[2 * DIAG_MSG_MAX];
	testutil_scratch(in, sizeof(in), "long_session.jsonl");
	testutil_scratch(out, sizeof(out), "long_session_out.jsonl");
	testutil_write_str(in, CL_OK("a", "2026-01-01T00:00:00Z") CL_OK("b", "2026-01-01T00:00:01Z")
			   CL_OK("c", "2026-01-01T00:00:02Z") CL_OK("d", "2026-01-01T00:00:03Z")
			   CL_OK("e", "2026-01-01T00:00:04Z"));
	remove(out);
	struct import_opts o = {.max_calls_per_session = 3};
	assert_int_equal(imp("claude-code", in, &o, out, NULL, msg), DIAG_EINPUT);
	snprintf(want, sizeof(want), "%s:4: session from %s:1 has more than 3 calls (the limit of "
		 "docs/trace-format.md; expected a shorter session)", in, in);
	assert_string_equal(msg, want);
	struct stat sbuf;
	assert_int_equal(stat(out, &sbuf), -1);
	o.max_calls_per_session = 5;
	struct import_stats st;
	assert_int_equal(imp("claude-code", in, &o, out, &st, msg), 0);
	assert_int_equal(st.calls, 5);
	/* every importer that collects a session's records checks as it reads */
	static const char *const other[][2] = {
		{"codex", FIX "codex_rollout.jsonl"},
		{"tracelab", FIX "tracelab_round_trace.jsonl"},
		{"openai-log", FIX "openai.jsonl"},
	};
	o.max_calls_per_session = 1;
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		remove(out);
		int rc = imp(other[i][0], other[i][1], &o, out, NULL, msg);
		if (rc != DIAG_EINPUT || !strstr(msg, " has more than 1 calls (the limit of "))
			fail_msg("%s: rc %d: %s", other[i][0], rc, msg);
		assert_int_equal(strncmp(msg, other[i][1], strlen(other[i][1])), 0);
		assert_int_equal(stat(out, &sbuf), -1);
	}
}

static void test_usage_errors(void **state)
{
	(void)state;
	char out[512], msg[DIAG_MSG_MAX];
	testutil_scratch(out, sizeof(out), "usage_out.jsonl");
	struct import_stats st;
	assert_int_equal(imp("csv", FIX "azure2024.csv", NULL, out, &st, msg), DIAG_EINPUT);
	assert_non_null(strstr(msg, "unknown import format 'csv'"));
	assert_int_equal(imp("azure", FIX "burstgpt.csv", NULL, out, &st, msg), DIAG_EINPUT);
	assert_non_null(strstr(msg, "burstgpt.csv:1: not an Azure LLM inference trace header"));
	assert_int_equal(imp("azure", FIX "no-such-file.csv", NULL, out, &st, msg), DIAG_EIO);
	assert_int_equal(imp("codex", FIX "claude_session.jsonl", NULL, out, &st, msg), DIAG_EINPUT);
	assert_non_null(strstr(msg, "no LLM calls found"));
	assert_int_equal(imp("mooncake", FIX, NULL, out, &st, msg), DIAG_EINPUT);
	assert_non_null(strstr(msg, "is a folder"));
	struct diag d;
	diag_init(&d);
	assert_int_equal(import_files("azure", NULL, 0, NULL, out, NULL, &d), DIAG_EINPUT);

	const char *const *f = import_formats();
	const char *want[] = {"claude-code", "codex", "tracelab", "weka", "mooncake", "azure",
			      "burstgpt", "openai-log"};
	for (size_t i = 0; i < 8; i++) {
		assert_string_equal(f[i], want[i]);
		assert_non_null(import_format_summary(f[i]));
	}
	assert_null(f[8]);
}

/* A failed import leaves an existing output untouched. */
static void test_all_or_nothing(void **state)
{
	(void)state;
	char in[512], out[512], msg[DIAG_MSG_MAX];
	testutil_scratch(out, sizeof(out), "keep_me.jsonl");
	testutil_write_str(out, "previous\n");
	testutil_scratch(in, sizeof(in), "late_error.csv");
	testutil_write_str(in, "TIMESTAMP,ContextTokens,GeneratedTokens\n"
			   "2023-11-16 18:17:03.9,48,10\n2023-11-16 18:17:04.0,-1,8\n");
	assert_int_equal(imp("azure", in, NULL, out, NULL, msg), DIAG_EINPUT);
	assert_true(file_has(out, "previous"));
}

/* ---- Privacy, ids, determinism, output forms ----------------------------- */

static void test_no_text_leaks(void **state)
{
	(void)state;
	char out[512], msg[DIAG_MSG_MAX];
	testutil_scratch(out, sizeof(out), "leak.jsonl");
	/* Strings that are in the inputs (prompt text, tool input, a file path,
	 * a raw session id) and must not be in the output. */
	assert_true(file_has(FIX "claude_session.jsonl", "Qwen3-32B"));
	assert_int_equal(imp("claude-code", FIX "claude_session.jsonl", NULL, out, NULL, msg), 0);
	assert_false(file_has(out, "Qwen3-32B"));
	assert_false(file_has(out, "gpu_token_capacity"));
	assert_false(file_has(out, "92ee5b8a"));
	assert_true(file_has(FIX "codex_rollout.jsonl", "AGENTS.md"));
	assert_int_equal(imp("codex", FIX "codex_rollout.jsonl", NULL, out, NULL, msg), 0);
	assert_false(file_has(out, "AGENTS.md"));
	assert_false(file_has(out, "01a7c9e4"));
	assert_int_equal(imp("openai-log", FIX "openai.jsonl", NULL, out, NULL, msg), 0);
	assert_false(file_has(out, "SECRET-SYSTEM-PROMPT"));
	assert_false(file_has(out, "\"text\""));
	assert_false(file_has(out, "conv-1"));
	/* keep_text: the message text is in the segments and reads back. */
	struct import_opts keep = {.keep_text = true};
	assert_int_equal(imp("openai-log", FIX "openai.jsonl", &keep, out, NULL, msg), 0);
	assert_true(file_has(out, "{\"text\":\"You are a coding agent. SECRET-SYSTEM-PROMPT\"}"));
	assert_true(file_has(out, "{\"text\":\"FAILED test_parse_empty\"}"));
	struct trace_session **s;
	size_t n;
	assert_int_equal(testutil_read_all(out, &s, &n, msg, sizeof(msg)), 0);
	assert_int_equal(n, 2);
	assert_true(s[0]->id == trace_id_hash("conv-1")); /* unsalted with keep_text */
	testutil_free_all(s, n);
}

static size_t slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

static void test_salt_and_determinism(void **state)
{
	(void)state;
	char a[512], b[512], msg[DIAG_MSG_MAX];
	testutil_scratch(a, sizeof(a), "det_a.jsonl");
	testutil_scratch(b, sizeof(b), "det_b.jsonl");
	size_t cap = 1 << 20;
	char *ba = malloc(cap), *bb = malloc(cap);
	assert_true(ba && bb);
	assert_int_equal(imp("claude-code", FIX "claude_session.jsonl", NULL, a, NULL, msg), 0);
	assert_int_equal(imp("claude-code", FIX "claude_session.jsonl", NULL, b, NULL, msg), 0);
	size_t na = slurp(a, ba, cap), nb = slurp(b, bb, cap);
	assert_int_equal(na, nb);
	assert_memory_equal(ba, bb, na);
	free(ba);
	free(bb);
	struct import_opts o = {.salt = "team-secret"};
	assert_int_equal(imp("claude-code", FIX "claude_session.jsonl", &o, b, NULL, msg), 0);
	struct trace_session **s1, **s2;
	size_t n1, n2;
	assert_int_equal(testutil_read_all(a, &s1, &n1, msg, sizeof(msg)), 0);
	assert_int_equal(testutil_read_all(b, &s2, &n2, msg, sizeof(msg)), 0);
	assert_true(s1[0]->id != s2[0]->id);
	assert_true(s1[0]->calls[0].task != s2[0]->calls[0].task);
	/* The salt changes names, never shapes. */
	assert_int_equal(s1[0]->n_calls, s2[0]->n_calls);
	assert_int_equal(s1[0]->calls[9].prompt_tokens, s2[0]->calls[9].prompt_tokens);
	testutil_free_all(s1, n1);
	testutil_free_all(s2, n2);
}

static void test_gzip_and_folders(void **state)
{
	(void)state;
	char out[512], dir[512], sub[600], file[700], msg[DIAG_MSG_MAX];
	testutil_scratch(out, sizeof(out), "folder.jsonl.gz");
	testutil_scratch(dir, sizeof(dir), "projects");
	snprintf(sub, sizeof(sub), "%s/-home-user-project", dir);
	mkdir(dir, 0755);
	mkdir(sub, 0755);
	snprintf(file, sizeof(file), "%s/92ee5b8a.jsonl", sub);
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t n = slurp(FIX "claude_session.jsonl", buf, cap);
	testutil_write(file, buf, n);
	free(buf);
	snprintf(file, sizeof(file), "%s/notes.txt", sub);
	testutil_write_str(file, "not a log\n");
	struct import_stats st;
	assert_int_equal(imp("claude-code", dir, NULL, out, &st, msg), 0);
	assert_int_equal(st.files, 1);
	struct diag d;
	diag_init(&d);
	struct trace_reader *r;
	assert_int_equal(trace_reader_open(&r, out, TRACE_FMT_AUTO, &d), 0);
	assert_true(trace_reader_gzip(r));
	assert_string_equal(trace_reader_source(r), "claude-code import");
	trace_reader_free(r);
	struct trace_session **s;
	size_t ns;
	struct sum u;
	assert_int_equal(testutil_read_all(out, &s, &ns, msg, sizeof(msg)), 0);
	summarize(s, ns, &u);
	check_claude(s, ns, &u, &st);
	testutil_free_all(s, ns);
}

/* Several input files: sessions of all of them, sorted by start time. */
static void test_several_files(void **state)
{
	(void)state;
	char out[512], msg[DIAG_MSG_MAX];
	testutil_scratch(out, sizeof(out), "multi.jsonl");
	const char *paths[2] = {FIX "azure2024.csv", FIX "azure2023_code_head50.csv"};
	struct diag d;
	diag_init(&d);
	struct import_stats st;
	assert_int_equal(import_files("azure", paths, 2, NULL, out, &st, &d), 0);
	assert_int_equal(st.files, 2);
	assert_int_equal(st.sessions, 54);
	struct trace_session **s;
	size_t n;
	assert_int_equal(testutil_read_all(out, &s, &n, msg, sizeof(msg)), 0);
	assert_int_equal(n, 54);
	/* 2023 rows first; the 2024 ones half a year later. */
	assert_int_equal(s[0]->calls[0].prompt_tokens, 4808);
	assert_int_equal(s[50]->calls[0].prompt_tokens, 2162);
	assert_true(s[50]->t_s > 1.4e7);
	testutil_free_all(s, n);
}

/* Rows without timing events follow the previous row (gap 0); a session
 * made only of them starts with the import's earliest time. */
static void test_tracelab_untimed(void **state)
{
	(void)state;
	char in[512];
	testutil_scratch(in, sizeof(in), "untimed.jsonl");
	testutil_write_str(in,
		"{\"session_id\":\"a\",\"round_index\":0,\"input_tokens_total\":100,\"prefix_tokens\":0,"
		"\"output_tokens\":5,\"timing_events\":[{\"event_type\":\"user_message\",\"timestamp\":"
		"\"2026-01-01T00:00:10Z\"},{\"event_type\":\"text\",\"timestamp\":\"2026-01-01T00:00:12Z\"}]}\n"
		"{\"session_id\":\"a\",\"round_index\":1,\"input_tokens_total\":120,\"prefix_tokens\":105,"
		"\"output_tokens\":5}\n"
		"{\"session_id\":\"b\",\"round_index\":0,\"input_tokens_total\":7,\"output_tokens\":1}\n");
	struct import_stats st;
	struct trace_session **s;
	size_t n;
	struct sum u;
	import_read("tracelab", in, NULL, &st, &s, &n, &u);
	assert_int_equal(n, 2);
	assert_true(s[0]->t_s == 0 && s[1]->t_s == 0);
	const struct trace_session *a = s[0]->n_calls == 2 ? s[0] : s[1];
	assert_true(a->calls[1].gap_s == 0);
	/* 105 reused >= 100 + 5: the second call extends the first. */
	assert_true(a->calls[1].extends_prev);
	assert_int_equal(a->calls[1].prompt_tokens, 120);
	testutil_free_all(s, n);
}

/* Segment text (the trace.h extension) survives trace_session_clone as a
 * copy inside the clone's block, and the writer emits it. */
static void test_clone_keeps_text(void **state)
{
	(void)state;
	char t0[] = "first segment", t1[] = "said \"hi\"\n";
	char *texts[3] = {t0, NULL, t1};
	struct trace_seg segs[3] = {{1, 10}, {2, 20}, {3, 30}};
	struct trace_call call = {.seq = 0, .segs = segs, .n_segs = 3, .prompt_tokens = 60,
				  .output_tokens = 1, .retry_of = -1, .seg_text = texts};
	struct trace_session src = {.id = 9, .calls = &call, .n_calls = 1};
	struct trace_session *c = NULL;
	assert_int_equal(trace_session_clone(&c, &src), 0);
	t0[0] = 'X';
	assert_string_equal(c->calls[0].seg_text[0], "first segment");
	assert_null(c->calls[0].seg_text[1]);
	assert_string_equal(c->calls[0].seg_text[2], "said \"hi\"\n");
	assert_true((char *)c->calls[0].seg_text[2] > (char *)c &&
		    (char *)c->calls[0].seg_text[2] < (char *)c + 4096);
	char out[512], msg[DIAG_MSG_MAX];
	testutil_scratch(out, sizeof(out), "text.jsonl");
	struct diag d;
	diag_init(&d);
	struct trace_writer *w;
	assert_int_equal(trace_writer_open(&w, out, false, NULL, &d), 0);
	assert_int_equal(trace_writer_session(w, c, &d), 0);
	assert_int_equal(trace_writer_close(w, &d), 0);
	assert_true(file_has(out, "[\"#0000000000000001\",10,{\"text\":\"first segment\"}],"
			    "[\"#0000000000000002\",20],[\"#0000000000000003\",30,{\"text\":"
			    "\"said \\\"hi\\\"\\u000a\"}]"));
	trace_session_free(c);
	/* ... and the reader accepts it (the text itself is not kept). */
	struct trace_session **s;
	size_t n;
	assert_int_equal(testutil_read_all(out, &s, &n, msg, sizeof(msg)), 0);
	assert_int_equal(s[0]->calls[0].prompt_tokens, 60);
	assert_null(s[0]->calls[0].seg_text);
	testutil_free_all(s, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claude_code),
		cmocka_unit_test(test_claude_code_subagents),
		cmocka_unit_test(test_codex),
		cmocka_unit_test(test_engineer_per_path),
		cmocka_unit_test(test_tracelab),
		cmocka_unit_test(test_azure_2023),
		cmocka_unit_test(test_azure_2024),
		cmocka_unit_test(test_burstgpt),
		cmocka_unit_test(test_span_names_file),
		cmocka_unit_test(test_session_limit_while_reading),
		cmocka_unit_test(test_weka),
		cmocka_unit_test(test_openai_log),
		cmocka_unit_test(test_mooncake),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_all_or_nothing),
		cmocka_unit_test(test_no_text_leaks),
		cmocka_unit_test(test_salt_and_determinism),
		cmocka_unit_test(test_gzip_and_folders),
		cmocka_unit_test(test_several_files),
		cmocka_unit_test(test_tracelab_untimed),
		cmocka_unit_test(test_clone_keeps_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
