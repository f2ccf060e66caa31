/* SPDX-License-Identifier: Apache-2.0
 * test_reader: the canonical and Mooncake readers.  Table-driven error tests
 * (input -> exact "path:line:col: message"), extends and prompt_tokens,
 * ordering rules, gzip vs plain, truncated gzip, skip_bad, the Mooncake
 * mapping, limits, and garbage input that must fail cleanly.
 */
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "base/outkind.h"
#include "traces/jsontext.h"
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
#include <cmocka.h>

#define HDR "{\"format\":\"agentcap-trace\",\"version\":1}\n"

/* Open + read everything; returns the first error code (0 if none) and its
 * message in d, the number of sessions in *n. */
static int read_file(const char *path, enum trace_format fmt, bool skip_bad,
		     struct diag *d, size_t *n, long *skipped)
{
	diag_init(d);
	*n = 0;
	struct trace_reader *r = NULL;
	int rc = trace_reader_open(&r, path, fmt, d);
	if (rc)
		return rc;
	trace_reader_set_skip_bad(r, skip_bad);
	struct trace_session *s;
	while ((rc = trace_reader_next(r, &s, d)) == 1) {
		assert_true(trace_session_check(s));
		trace_session_free(s);
		(*n)++;
	}
	if (skipped)
		*skipped = trace_reader_skipped(r);
	trace_reader_free(r);
	return rc;
}

struct err_case {
	enum trace_format fmt;
	const char *body;      /* file content; HDR is not added */
	const char *want;      /* message after "path:" */
};

static const struct err_case err_cases[] = {
	/* JSON syntax */
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\n",
	  "2:22: invalid JSON: unexpected end of line (expected one JSON object per line)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\" \"t\":0}\n",
	  "2:16: invalid JSON at '\"t\":0}' (expected one JSON object per line)" },
	{ TRACE_FMT_AUTO, HDR "{\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1} trailing\n",
	  "2:46: invalid JSON at 'trailing' (expected one JSON object per line)" },
	{ TRACE_FMT_AUTO, HDR "[1,2]\n",
	  "2:1: line is not an object '[1,2]' (expected one JSON object per line)" },
	{ TRACE_FMT_AUTO, HDR "{\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n\"just a string\"\n",
	  "3:1: line is not an object '\"just a string\"' (expected one JSON object per line)" },
	/* required keys and types */
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]]}\n",
	  "2:1: missing 'output_tokens' (expected an integer >= 0)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"output_tokens\":1}\n",
	  "2:1: missing 'prompt' (expected an array of [content_id, tokens] or "
	  "[content_id, tokens, {\"text\": ...}] segments)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":{},\"output_tokens\":1}\n",
	  "2:31: bad 'prompt' value '{}' (expected an array of [content_id, tokens] or "
	  "[content_id, tokens, {\"text\": ...}] segments)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",0]],\"output_tokens\":1}\n",
	  "2:37: bad token count in prompt[0] '0' (expected an integer 1..1000000000)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",5],[\"y\", 2.5]],\"output_tokens\":1}\n",
	  "2:46: bad token count in prompt[1] '2.5' (expected an integer 1..1000000000)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[true,5]],\"output_tokens\":1}\n",
	  "2:33: bad content id in prompt[0] 'true' (expected a non-empty string or an integer within +-2^53)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[1e20,5]],\"output_tokens\":1}\n",
	  "2:33: bad content id in prompt[0] '1e20' (expected a non-empty string or an integer within +-2^53)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"\",5]],\"output_tokens\":1}\n",
	  "2:33: bad content id in prompt[0] '\"\"' (expected a non-empty string or an integer within +-2^53)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\"]],\"output_tokens\":1}\n",
	  "2:32: bad segment prompt[0] '[\"x\"]' (expected [content_id, tokens] or "
	  "[content_id, tokens, {\"text\": ...}])" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",5,\"text\"]],\"output_tokens\":1}\n",
	  "2:39: bad annotation in prompt[0] '\"text\"' (expected an object like {\"text\": \"...\"})" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",5,{\"text\":3}]],\"output_tokens\":1}\n",
	  "2:39: bad annotation in prompt[0] '{\"text\":3}' (expected an object like {\"text\": \"...\"})" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[],\"output_tokens\":1}\n",
	  "2:31: empty prompt (expected at least one segment)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":-3}\n",
	  "2:57: bad 'output_tokens' value '-3' (expected an integer 0..1000000000)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":-1,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:20: bad 't' value '-1' (expected a number of seconds 0..1e9)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":\"0\",\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:20: bad 't' value '\"0\"' (expected a number of seconds 0..1e9)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":1e999,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:20: bad 't' value '1e999' (expected a number of seconds 0..1e9)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"a\",\"gap\":2e9,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "3:22: bad 'gap' value '2e9' (expected a number of seconds 0..1e9)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:12: bad 'session' value '\"\"' (expected a non-empty string or an integer)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1,\"tool\":\"maybe\"}\n",
	  "2:66: bad 'tool' value '\"maybe\"' (expected \"ok\" or \"fail\")" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1,\"kind\":\"poem\"}\n",
	  "2:66: bad 'kind' value '\"poem\"' (expected \"code\", \"structured\", \"prose\" or \"unknown\")" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1,\"priority\":16}\n",
	  "2:70: bad 'priority' value '16' (expected an integer 0..15, \"main\", \"subagent\" or \"batch\")" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1,\"priority\":\"urgent\"}\n",
	  "2:70: bad 'priority' value '\"urgent\"' (expected an integer 0..15, \"main\", \"subagent\" or \"batch\")" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"team\":\"\",\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:29: bad 'team' value '\"\"' (expected a non-empty string or an integer)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"team\":\"x\",\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"a\",\"gap\":0,\"team\":\"y\",\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "3:31: 'team' differs from the first call of session 'a' (expected the same team or none)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1,\"kind\":3}\n",
	  "2:66: bad 'kind' value '3' (expected \"code\", \"structured\", \"prose\" or \"unknown\")" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1,\"accepted\":\"yes\"}\n",
	  "2:70: bad 'accepted' value '\"yes\"' (expected true, false or null)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"extends\":1,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:32: bad 'extends' value '1' (expected true or false)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"seq\":-1,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:28: bad 'seq' value '-1' (expected an integer >= 0)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n" HDR,
	  "3:11: second header line (expected one header, on line 1; merge traces with the "
	  "writer instead of concatenating them)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1,\"x\":\"\0\"}\n",
	  "2:64: NUL byte in line (expected JSON text)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"\xed\xa0\x80\",1]],\"output_tokens\":1}\n",
	  "2:34: invalid UTF-8 (byte 0xed) (expected UTF-8 JSON text)" },
	/* "\u0000" inside a string: cJSON would cut the string there, so
	 * "p\u0000one" and "p\u0000two" would be one content; refused instead */
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"p\\u0000one\",16]],\"output_tokens\":1}\n",
	  "2:35: NUL character (\\u0000) in a string (expected text without NUL: ids and texts "
	  "would be cut short at it)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\\u0000b\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:14: NUL character (\\u0000) in a string (expected text without NUL: ids and texts "
	  "would be cut short at it)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1,{\"text\":\"ab\\\\\\u0000\"}]],\"output_tokens\":1}\n",
	  "2:52: NUL character (\\u0000) in a string (expected text without NUL: ids and texts "
	  "would be cut short at it)" },
	/* first and later calls */
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"gap\":1,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:22: 'gap' on the first call of session 'a' (expected 't': the absolute start time in seconds)" },
	{ TRACE_FMT_AUTO, HDR "{\"gap\":1,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:8: 'gap' on a call without 'session' (expected 't': the absolute start time in seconds)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:1: missing 't' on the first call of session 'a' (expected 't': the absolute start time in seconds)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"extends\":true,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:32: 'extends' on the first call of session 'a' (expected false: there is no previous call to extend)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"a\",\"t\":1,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "3:20: 't' on a later call of session 'a' (expected 'gap': seconds from the previous call's completion)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"a\",\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "3:1: missing 'gap' on a later call of session 'a' (expected 'gap': seconds from the previous call's completion)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"seq\":5,\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"a\",\"seq\":5,\"gap\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "3:22: seq 5 is not after the previous call's seq 5 in session 'a' (expected strictly increasing seq)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"a\",\"gap\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1,\"retry_of\":3}\n",
	  "3:72: retry_of 3 names no earlier call of session 'a' (expected the seq of an earlier call)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1,\"retry_of\":0}\n",
	  "2:70: retry_of 0 names no earlier call of session 'a' (expected the seq of an earlier call)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"engineer\":\"e1\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"a\",\"engineer\":\"e2\",\"gap\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "3:27: 'engineer' differs from the first call of session 'a' (expected the same engineer or none)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"a\",\"gap\":0,\"prompt\":[],\"output_tokens\":1}\n",
	  "3:33: empty prompt (expected at least one segment)" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"a\",\"open_loop\":true,\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"a\",\"gap\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "3:1: second call of open-loop session 'a' (expected one call per open-loop session)" },
	{ TRACE_FMT_AUTO, HDR "{\"open_loop\":false,\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "2:14: bad 'open_loop' value 'false' (expected true or no key: a call without 'session' is open loop)" },
	/* ordering */
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"x\",\"t\":5,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"y\",\"t\":3,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "3:20: session 'y' starts at t=3 before the previous session's t=5: sort sessions by start time" },
	{ TRACE_FMT_AUTO, HDR "{\"session\":\"x\",\"t\":1,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"y\",\"t\":2,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
	  "{\"session\":\"x\",\"gap\":2,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n",
	  "4:12: session 'x' reappears after another session: calls of a session must be contiguous" },
	/* header */
	{ TRACE_FMT_AUTO, "{\"format\":\"agentcap-trace\",\"version\":2}\n",
	  "1:38: bad 'version' value '2' (expected 1: this reader knows version 1 only)" },
	{ TRACE_FMT_AUTO, "{\"format\":\"agentcap-trace\"}\n",
	  "1:1: missing 'version' (expected 1)" },
	{ TRACE_FMT_AUTO, "{\"format\":\"other\",\"version\":1}\n",
	  "1:11: bad 'format' value '\"other\"' (expected \"agentcap-trace\")" },
	{ TRACE_FMT_AUTO, "{\"format\":\"agentcap-trace\",\"version\":1,\"block_tokens_hint\":0}\n",
	  "1:60: bad 'block_tokens_hint' value '0' (expected an integer 1..16777216)" },
	{ TRACE_FMT_AUTO, "{\"foo\":1}\n",
	  "1:1: cannot tell the trace format (expected the canonical header "
	  "{\"format\":\"agentcap-trace\",\"version\":1} or a Mooncake line with \"hash_ids\" and \"input_length\"; "
	  "other logs go through agentcap import)" },
	{ TRACE_FMT_AUTO, "hello\n",
	  "1:1: invalid JSON at 'hello' (expected one JSON object per line)" },
	{ TRACE_FMT_AUTO, "",
	  " empty file (expected a canonical agentcap trace or Mooncake JSON lines)" },
	{ TRACE_FMT_CANONICAL, "\n\n",
	  " empty file (expected the header {\"format\":\"agentcap-trace\",\"version\":1} on line 1)" },
	{ TRACE_FMT_CANONICAL, "{\"timestamp\":0,\"input_length\":5,\"output_length\":1,\"hash_ids\":[1]}\n",
	  "1:1: missing header (expected {\"format\":\"agentcap-trace\",\"version\":1} on line 1)" },
	/* Mooncake */
	{ TRACE_FMT_AUTO, "{\"timestamp\":0,\"input_length\":1025,\"output_length\":1,\"hash_ids\":[1,2]}\n",
	  "1:31: input_length 1025 does not fit 2 hash_ids of 512-token blocks (expected 513..1024)" },
	{ TRACE_FMT_AUTO, "{\"timestamp\":0,\"input_length\":512,\"output_length\":1,\"hash_ids\":[1,2]}\n",
	  "1:31: input_length 512 does not fit 2 hash_ids of 512-token blocks (expected 513..1024)" },
	{ TRACE_FMT_AUTO, "{\"timestamp\":10,\"input_length\":5,\"output_length\":1,\"hash_ids\":[1]}\n"
	  "{\"timestamp\":9,\"input_length\":5,\"output_length\":1,\"hash_ids\":[1]}\n",
	  "2:14: timestamp 9 ms is before the previous line's 10 ms (expected non-decreasing timestamps)" },
	{ TRACE_FMT_AUTO, "{\"timestamp\":0,\"input_length\":600,\"output_length\":1,\"hash_ids\":[1,\"b\"]}\n",
	  "1:67: bad hash_ids[1] '\"b\"' (expected an integer within +-2^53)" },
	{ TRACE_FMT_AUTO, "{\"timestamp\":0,\"input_length\":5,\"hash_ids\":[1]}\n",
	  "1:1: missing 'output_length' (expected an integer >= 0)" },
	{ TRACE_FMT_AUTO, "{\"timestamp\":0,\"input_length\":0,\"output_length\":1,\"hash_ids\":[]}\n",
	  "1:31: bad 'input_length' value '0' (expected an integer 1..2^40)" },
	{ TRACE_FMT_MOONCAKE, "{\"timestamp\":-5,\"input_length\":5,\"output_length\":1}\n",
	  "1:14: bad 'timestamp' value '-5' (expected milliseconds 0..1e12)" },
	{ TRACE_FMT_MOONCAKE, "{\"timestamp\":0,\"input_length\":5,\"output_length\":1,\"hash_ids\":7}\n",
	  "1:62: bad 'hash_ids' value '7' (expected an array of integer block ids)" },
};

static void test_error_table(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "err.jsonl");
	int failures = 0;
	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		const struct err_case *c = &err_cases[i];
		size_t len = strlen(c->body);
		/* The NUL case: the body continues after the embedded NUL. */
		if (strstr(c->want, "NUL byte"))
			len += 1 + strlen(c->body + len + 1);
		testutil_write(path, c->body, len);
		struct diag d;
		size_t n;
		int rc = read_file(path, c->fmt, false, &d, &n, NULL);
		char want[DIAG_MSG_MAX];
		snprintf(want, sizeof(want), "%s:%s", path, c->want);
		if (rc != DIAG_EINPUT || strcmp(d.msg, want) != 0) {
			printf("case %zu: rc %d\n  got:  %s\n  want: %s\n", i, rc, d.msg, want);
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

/* A raw Claude Code or Codex log given where a trace belongs says which
 * import makes a trace of it. */
static void test_raw_agent_logs_name_the_import(void **state)
{
	(void)state;
	const char *cases[][2] = {
		{"{\"type\":\"user\",\"sessionId\":\"s\",\"parentUuid\":null}\n",
		 "this is a Claude Code session log, not a trace (run 'agentcap import claude-code "},
		{"{\"timestamp\":\"2026-03-21T10:05:59.326Z\",\"type\":\"session_meta\","
		 "\"payload\":{}}\n",
		 "this looks like a Codex CLI rollout, not a trace (run 'agentcap import codex "},
	};
	char path[512];
	testutil_scratch(path, sizeof(path), "raw_log.jsonl");
	for (size_t i = 0; i < 2; i++) {
		testutil_write(path, cases[i][0], strlen(cases[i][0]));
		struct diag d;
		size_t n;
		assert_int_equal(read_file(path, TRACE_FMT_AUTO, false, &d, &n, NULL), DIAG_EINPUT);
		char want[2 * DIAG_MSG_MAX];
		snprintf(want, sizeof(want), "%s:1:1: %s%s -o trace.jsonl.gz' first", path, cases[i][1],
			 path);
		if (strncmp(d.msg, want, strlen(want)) != 0)
			fail_msg("got %s\nwant %s...", d.msg, want);
	}
}

/* The scanners behind the NUL and UTF-8 errors, on their edge cases. */
static void test_jsontext_scanners(void **state)
{
	(void)state;
	const char *t = "\"a\\\\u0000b\""; /* "a\\u0000b": a backslash, then text */
	assert_int_equal(jsontext_find_nul(t, strlen(t)), strlen(t));
	t = "\"a\\\\\\u0000\""; /* "a\\\u0000": a backslash, then a NUL */
	assert_int_equal(jsontext_find_nul(t, strlen(t)), 4);
	t = "\"\\u00000\"";
	assert_int_equal(jsontext_find_nul(t, strlen(t)), 1);
	t = "\"\\u0001\\u000\"";
	assert_int_equal(jsontext_find_nul(t, strlen(t)), strlen(t));
	static const struct {
		const char *s;
		size_t bad; /* offset, or SIZE_MAX for valid */
	} u[] = {
		{"plain", SIZE_MAX}, {"caf\xc3\xa9", SIZE_MAX}, {"\xe2\x82\xac", SIZE_MAX},
		{"\xf0\x9f\x98\x80", SIZE_MAX}, {"\xf4\x8f\xbf\xbf", SIZE_MAX},
		{"caf\xe9", 3}, {"\xc0\xaf", 0}, {"\xe0\x80\xaf", 0}, {"\xed\xa0\x80", 0},
		{"\xf4\x90\x80\x80", 0}, {"x\xe2\x82", 1}, {"\x80", 0}, {"\xff", 0},
		{"\xf0\x9f\x98x", 0},
	};
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		size_t n = strlen(u[i].s);
		size_t want = u[i].bad == SIZE_MAX ? n : u[i].bad;
		if (jsontext_find_bad_utf8(u[i].s, n) != want)
			fail_msg("case %zu: %zu, want %zu", i, jsontext_find_bad_utf8(u[i].s, n), want);
	}
}

static void test_good_fixture(void **state)
{
	(void)state;
	char path[512];
	testutil_fixture(path, sizeof(path), "session_good.jsonl");
	struct diag d;
	diag_init(&d);
	struct trace_reader *r = NULL;
	assert_int_equal(trace_reader_open(&r, path, TRACE_FMT_AUTO, &d), 0);
	assert_int_equal(trace_reader_format(r), TRACE_FMT_CANONICAL);
	assert_false(trace_reader_gzip(r));
	assert_int_equal(trace_reader_block_tokens_hint(r), 16);
	assert_string_equal(trace_reader_source(r), "hand-written fixture");
	assert_string_equal(trace_reader_path(r), path);

	struct trace_session *s = NULL;
	/* s1: extends chain, retry, acceptance, unknown keys, output 0 -> 1 */
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_true(trace_session_check(s));
	assert_true(s->id == trace_id_hash("s1"));
	assert_true(s->engineer == trace_id_hash("alice"));
	assert_true(s->parent == 0);
	assert_true(s->t_s == 0.5);
	assert_int_equal(s->line, 2);
	assert_false(s->open_loop);
	assert_int_equal(s->n_calls, 4);
	const struct trace_call *c = s->calls;
	assert_int_equal(c[0].seq, 0);
	assert_true(c[0].task == trace_id_hash("fix-bug"));
	assert_true(c[0].gap_s == 0);
	assert_false(c[0].extends_prev);
	assert_int_equal(c[0].n_segs, 3);
	assert_true(c[0].segs[0].content == trace_content_str("sys", 1000));
	assert_int_equal(c[0].segs[2].tokens, 40);
	assert_int_equal(c[0].prompt_tokens, 1540);
	assert_int_equal(c[0].output_tokens, 120);
	assert_int_equal(c[0].tool, TRACE_TOOL_OK);
	assert_int_equal(c[0].retry_of, -1);
	assert_int_equal(c[0].accepted, TRACE_ACCEPT_UNKNOWN);

	assert_int_equal(c[1].seq, 1);
	assert_true(c[1].gap_s == 2.25);
	assert_true(c[1].extends_prev);
	assert_true(c[1].task == 0);
	assert_int_equal(c[1].n_segs, 1);
	assert_int_equal(c[1].prompt_tokens, 1540 + 120 + 300);
	assert_int_equal(c[1].tool, TRACE_TOOL_FAIL);

	assert_int_equal(c[2].seq, 2);
	assert_int_equal(c[2].prompt_tokens, 1960 + 80 + 50);
	assert_int_equal(c[2].output_tokens, 1);
	assert_int_equal(c[2].retry_of, 1);
	assert_true(c[2].segs[0].content == trace_content_str("tr2", 50));

	assert_int_equal(c[3].seq, 10);
	assert_false(c[3].extends_prev);
	assert_int_equal(c[3].prompt_tokens, 1064);
	assert_true(c[3].segs[1].content == trace_content_int(7, 64));
	assert_int_equal(c[3].accepted, TRACE_ACCEPT_TRUE);
	uint64_t s1 = s->id;
	trace_session_free(s);

	/* sub1: a subagent; shares the "sys" segment with s1 */
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_true(s->id == trace_id_hash("sub1"));
	assert_true(s->parent == s1);
	assert_int_equal(s->line, 7);
	assert_int_equal(s->calls[0].prompt_tokens, 1010);
	assert_true(s->calls[0].segs[0].content == trace_content_str("sys", 1000));
	assert_int_equal(s->calls[0].accepted, TRACE_ACCEPT_UNKNOWN);
	assert_int_equal(s->calls[0].tool, TRACE_TOOL_NONE);
	trace_session_free(s);

	/* a call without a session: its own one-call session */
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_true(s->id == trace_anon_session_id(8));
	assert_true(s->open_loop);
	assert_true(s->t_s == 1.0);
	assert_int_equal(s->n_calls, 1);
	uint64_t x100 = s->calls[0].segs[0].content;
	trace_session_free(s);

	/* integer session id 7 == "7"; ("x",512) differs from ("x",100) */
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_true(s->id == trace_id_hash("7"));
	assert_true(s->calls[0].segs[0].content != x100);
	assert_int_equal(s->calls[0].accepted, TRACE_ACCEPT_FALSE);
	trace_session_free(s);

	/* s9: extends with no appended segments (no "prompt" key) */
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_int_equal(s->n_calls, 2);
	assert_int_equal(s->calls[1].n_segs, 0);
	assert_null(s->calls[1].segs);
	assert_int_equal(s->calls[1].prompt_tokens, 8 + 2);
	assert_true(s->calls[1].gap_s == 0.125);
	trace_session_free(s);

	assert_int_equal(trace_reader_next(r, &s, &d), 0);
	assert_null(s);
	assert_int_equal(trace_reader_next(r, &s, &d), 0);
	assert_int_equal(d.code, DIAG_OK);
	assert_int_equal(trace_reader_line(r), 11);
	trace_reader_free(r);
}

static void compare_files(const char *a, const char *b)
{
	struct trace_session **x, **y;
	size_t nx, ny;
	char msg[DIAG_MSG_MAX];
	assert_int_equal(testutil_read_all(a, &x, &nx, msg, sizeof(msg)), 0);
	assert_int_equal(testutil_read_all(b, &y, &ny, msg, sizeof(msg)), 0);
	assert_int_equal(nx, ny);
	assert_true(nx > 0);
	for (size_t i = 0; i < nx; i++)
		assert_true(testutil_session_equal(x[i], y[i], true));
	testutil_free_all(x, nx);
	testutil_free_all(y, ny);
}

static void test_gzip_same_as_plain(void **state)
{
	(void)state;
	char a[512], b[512];
	testutil_fixture(a, sizeof(a), "session_good.jsonl");
	testutil_fixture(b, sizeof(b), "session_good.jsonl.gz");
	compare_files(a, b);
	testutil_fixture(a, sizeof(a), "mooncake_head200.jsonl");
	testutil_fixture(b, sizeof(b), "mooncake_head200.jsonl.gz");
	compare_files(a, b);

	/* Detection is by magic bytes: a gzip file without .gz in its name. */
	char c[512];
	testutil_scratch(c, sizeof(c), "gzip_without_suffix.jsonl");
	FILE *in = fopen(b, "rb");
	assert_non_null(in);
	char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	testutil_write(c, buf, n);
	compare_files(a, c);
	struct diag d;
	diag_init(&d);
	struct trace_reader *r = NULL;
	assert_int_equal(trace_reader_open(&r, c, TRACE_FMT_AUTO, &d), 0);
	assert_true(trace_reader_gzip(r));
	trace_reader_free(r);
}

static void test_truncated_gzip(void **state)
{
	(void)state;
	char path[512];
	testutil_fixture(path, sizeof(path), "mooncake_head200_truncated.jsonl.gz");
	struct diag d;
	size_t n;
	int rc = read_file(path, TRACE_FMT_AUTO, false, &d, &n, NULL);
	assert_int_equal(rc, DIAG_EINPUT);
	char want[600];
	snprintf(want, sizeof(want), "%s: truncated gzip stream (unexpected end of file) after ", path);
	assert_memory_equal(d.msg, want, strlen(want));
	long lines = atol(d.msg + strlen(want));
	assert_true(lines > 0 && lines < 200);
	assert_string_equal(d.msg + strlen(want) + strcspn(d.msg + strlen(want), " "), " lines");
	assert_true(n <= (size_t)lines && n > 0);
	/* skip_bad does not hide it */
	rc = read_file(path, TRACE_FMT_AUTO, true, &d, &n, NULL);
	assert_int_equal(rc, DIAG_EINPUT);

	/* The error is sticky. */
	diag_init(&d);
	struct trace_reader *r = NULL;
	assert_int_equal(trace_reader_open(&r, path, TRACE_FMT_AUTO, &d), 0);
	struct trace_session *s;
	while ((rc = trace_reader_next(r, &s, &d)) == 1)
		trace_session_free(s);
	assert_int_equal(rc, DIAG_EINPUT);
	struct diag d2;
	diag_init(&d2);
	assert_int_equal(trace_reader_next(r, &s, &d2), DIAG_EINPUT);
	assert_null(s);
	assert_string_equal(d.msg, d2.msg);
	trace_reader_free(r);

	/* Cut inside the first line: the error comes from open. */
	char cut[512], src[512];
	testutil_fixture(src, sizeof(src), "mooncake_head200.jsonl.gz");
	testutil_scratch(cut, sizeof(cut), "cut20.jsonl.gz");
	FILE *in = fopen(src, "rb");
	assert_non_null(in);
	char buf[20];
	assert_int_equal(fread(buf, 1, sizeof(buf), in), sizeof(buf));
	fclose(in);
	testutil_write(cut, buf, sizeof(buf));
	rc = read_file(cut, TRACE_FMT_AUTO, false, &d, &n, NULL);
	assert_int_equal(rc, DIAG_EINPUT);
	snprintf(want, sizeof(want), "%s: truncated gzip stream (unexpected end of file) after 0 lines", cut);
	assert_string_equal(d.msg, want);
}

static void test_corrupt_gzip(void **state)
{
	(void)state;
	char src[512], path[512];
	testutil_fixture(src, sizeof(src), "session_good.jsonl.gz");
	testutil_scratch(path, sizeof(path), "corrupt.jsonl.gz");
	FILE *in = fopen(src, "rb");
	assert_non_null(in);
	char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	buf[n - 8] ^= 0x55; /* the CRC-32 in the trailer */
	testutil_write(path, buf, n);
	struct diag d;
	size_t cnt;
	assert_int_equal(read_file(path, TRACE_FMT_AUTO, true, &d, &cnt, NULL), DIAG_EINPUT);
	char want[600];
	snprintf(want, sizeof(want), "%s: corrupt gzip stream (incorrect data check) after ", path);
	assert_memory_equal(d.msg, want, strlen(want));
}

static void test_skip_bad(void **state)
{
	(void)state;
	char path[512];
	testutil_fixture(path, sizeof(path), "session_bad_mixed.jsonl");
	struct diag d;
	size_t n;
	long skipped;
	int rc = read_file(path, TRACE_FMT_AUTO, false, &d, &n, NULL);
	assert_int_equal(rc, DIAG_EINPUT);
	char want[600];
	snprintf(want, sizeof(want), "%s:3:39: bad token count in prompt[0] '0' "
		 "(expected an integer 1..1000000000)", path);
	assert_string_equal(d.msg, want);

	struct trace_reader *r = NULL;
	diag_init(&d);
	assert_int_equal(trace_reader_open(&r, path, TRACE_FMT_AUTO, &d), 0);
	assert_null(trace_reader_first_skipped(r));
	trace_reader_set_skip_bad(r, true);
	struct trace_session *s;
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_true(s->id == trace_id_hash("a"));
	assert_int_equal(s->n_calls, 2);
	assert_int_equal(s->calls[1].seq, 1);
	trace_session_free(s);
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_true(s->id == trace_id_hash("b"));
	assert_int_equal(s->n_calls, 2);
	trace_session_free(s);
	assert_int_equal(trace_reader_next(r, &s, &d), 0);
	assert_int_equal(trace_reader_skipped(r), 4);
	assert_string_equal(trace_reader_first_skipped(r), want);
	trace_reader_free(r);

	rc = read_file(path, TRACE_FMT_AUTO, true, &d, &n, &skipped);
	assert_int_equal(rc, 0);
	assert_int_equal(n, 2);
	assert_int_equal(skipped, 4);
}

static void test_mooncake_mapping(void **state)
{
	(void)state;
	char path[512];
	testutil_fixture(path, sizeof(path), "mooncake_head200.jsonl");
	struct diag d;
	diag_init(&d);
	struct trace_reader *r = NULL;
	assert_int_equal(trace_reader_open(&r, path, TRACE_FMT_AUTO, &d), 0);
	assert_int_equal(trace_reader_format(r), TRACE_FMT_MOONCAKE);
	assert_int_equal(trace_reader_block_tokens_hint(r), 512);
	assert_string_equal(trace_reader_source(r), "mooncake");
	struct trace_session *s;
	/* line 1: {"timestamp": 0, "input_length": 6758, "output_length": 500,
	 *          "hash_ids": [0, 1, ..., 13]} */
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_true(s->id == trace_anon_session_id(1));
	assert_true(s->open_loop);
	assert_int_equal(s->line, 1);
	assert_true(s->t_s == 0);
	assert_int_equal(s->n_calls, 1);
	const struct trace_call *c = &s->calls[0];
	assert_int_equal(c->n_segs, 14);
	for (size_t k = 0; k < 13; k++) {
		assert_int_equal(c->segs[k].tokens, 512);
		assert_true(c->segs[k].content == trace_content_int((int64_t)k, 512));
	}
	assert_int_equal(c->segs[13].tokens, 6758 - 13 * 512);
	assert_true(c->segs[13].content == trace_content_int(13, 6758 - 13 * 512));
	assert_int_equal(c->prompt_tokens, 6758);
	assert_int_equal(c->output_tokens, 500);
	assert_false(c->extends_prev);
	uint64_t block0 = c->segs[0].content;
	trace_session_free(s);
	/* line 2 starts with the same block 0 */
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_true(s->calls[0].segs[0].content == block0);
	assert_true(s->calls[0].segs[1].content != trace_content_int(1, 512));
	assert_true(s->id != trace_anon_session_id(1));
	trace_session_free(s);
	size_t n = 2;
	double last = 0;
	int rc;
	while ((rc = trace_reader_next(r, &s, &d)) == 1) {
		assert_true(s->t_s >= last);
		last = s->t_s;
		n++;
		trace_session_free(s);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 200);
	trace_reader_free(r);

	/* Hand-made lines: ms -> s, output 0 -> 1, no hash_ids -> one unique
	 * segment, extra keys ignored, blank line ignored. */
	char p2[512];
	testutil_scratch(p2, sizeof(p2), "moon_small.jsonl");
	testutil_write_str(p2, "{\"timestamp\":1500,\"input_length\":700,\"output_length\":0,\"hash_ids\":[9,10],\"x\":1}\n"
		     "\n"
		     "{\"timestamp\":1500,\"input_length\":700,\"output_length\":2,\"hash_ids\":[]}\n"
		     "{\"timestamp\":2500.5,\"input_length\":700,\"output_length\":2}");
	diag_init(&d);
	assert_int_equal(trace_reader_open(&r, p2, TRACE_FMT_MOONCAKE, &d), 0);
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_true(s->t_s == 1.5);
	assert_int_equal(s->calls[0].output_tokens, 1);
	assert_int_equal(s->calls[0].segs[1].tokens, 700 - 512);
	trace_session_free(s);
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_int_equal(s->line, 3);
	assert_int_equal(s->calls[0].n_segs, 1);
	assert_int_equal(s->calls[0].segs[0].tokens, 700);
	uint64_t u3 = s->calls[0].segs[0].content;
	trace_session_free(s);
	assert_int_equal(trace_reader_next(r, &s, &d), 1);
	assert_true(s->t_s == 2.5005);
	assert_true(s->calls[0].segs[0].content != u3);
	trace_session_free(s);
	assert_int_equal(trace_reader_next(r, &s, &d), 0);
	trace_reader_free(r);

	/* An empty Mooncake file is an empty trace when the format is given. */
	testutil_write_str(p2, "");
	size_t cnt;
	assert_int_equal(read_file(p2, TRACE_FMT_MOONCAKE, false, &d, &cnt, NULL), 0);
	assert_int_equal(cnt, 0);
}

static void test_line_endings(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "crlf.jsonl");
	testutil_write_str(path, "{\"format\":\"agentcap-trace\",\"version\":1}\r\n"
		     "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\r\n"
		     "   \r\n"
		     "{\"session\":\"a\",\"gap\":0,\"extends\":true,\"output_tokens\":1}");
	struct diag d;
	size_t n;
	assert_int_equal(read_file(path, TRACE_FMT_AUTO, false, &d, &n, NULL), 0);
	assert_int_equal(n, 1);
	/* Header only: no sessions. */
	testutil_write_str(path, HDR);
	assert_int_equal(read_file(path, TRACE_FMT_CANONICAL, false, &d, &n, NULL), 0);
	assert_int_equal(n, 0);
}

static void test_limits(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "limits.jsonl");
	char body[4096];
	char pad[300];
	memset(pad, 'p', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	snprintf(body, sizeof(body), HDR
		 "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
		 "{\"session\":\"b\",\"t\":0,\"prompt\":[[\"%s\",1]],\"output_tokens\":1}\n"
		 "{\"session\":\"c\",\"t\":0,\"prompt\":[[\"x\",1],[\"y\",1],[\"z\",1]],\"output_tokens\":1}\n"
		 "{\"session\":\"d\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
		 "{\"session\":\"d\",\"gap\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
		 "{\"session\":\"d\",\"gap\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
		 "{\"session\":\"e\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1,\"p\":\"%s\"}",
		 pad, pad);
	testutil_write_str(path, body);
	struct trace_reader_limits lim = { .max_line_bytes = 200, .max_segs_per_call = 2,
		.max_calls_per_session = 2 };
	struct diag d;
	diag_init(&d);
	struct trace_reader *r = NULL;
	assert_int_equal(trace_reader_open(&r, path, TRACE_FMT_AUTO, &d), 0);
	trace_reader_set_limits(r, &lim);
	struct trace_session *s;
	assert_int_equal(trace_reader_next(r, &s, &d), DIAG_EINPUT);
	char want[600];
	snprintf(want, sizeof(want), "%s:3: line longer than the 200-byte limit "
		 "(expected one JSON object per line)", path);
	assert_string_equal(d.msg, want);
	trace_reader_free(r);

	diag_init(&d);
	assert_int_equal(trace_reader_open(&r, path, TRACE_FMT_AUTO, &d), 0);
	trace_reader_set_limits(r, &lim);
	trace_reader_set_skip_bad(r, true);
	size_t n = 0;
	int rc;
	while ((rc = trace_reader_next(r, &s, &d)) == 1) {
		n++;
		trace_session_free(s);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 2); /* a, d (two calls) */
	assert_int_equal(trace_reader_skipped(r), 4);
	trace_reader_free(r);

	/* The messages of the other limits. */
	testutil_write_str(path, HDR "{\"session\":\"c\",\"t\":0,\"prompt\":[[\"x\",1],[\"y\",1],[\"z\",1]],\"output_tokens\":1}\n");
	diag_init(&d);
	assert_int_equal(trace_reader_open(&r, path, TRACE_FMT_AUTO, &d), 0);
	trace_reader_set_limits(r, &lim);
	assert_int_equal(trace_reader_next(r, &s, &d), DIAG_EINPUT);
	snprintf(want, sizeof(want), "%s:2:31: prompt has more than 2 segments (the limit per call)", path);
	assert_string_equal(d.msg, want);
	trace_reader_free(r);

	testutil_write_str(path, HDR "{\"session\":\"d\",\"t\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
		     "{\"session\":\"d\",\"gap\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n"
		     "{\"session\":\"d\",\"gap\":0,\"prompt\":[[\"x\",1]],\"output_tokens\":1}\n");
	diag_init(&d);
	assert_int_equal(trace_reader_open(&r, path, TRACE_FMT_AUTO, &d), 0);
	trace_reader_set_limits(r, &lim);
	assert_int_equal(trace_reader_next(r, &s, &d), DIAG_EINPUT);
	snprintf(want, sizeof(want), "%s:4:1: session 'd' has more than 2 calls (the limit per session)", path);
	assert_string_equal(d.msg, want);
	trace_reader_free(r);
}

static void test_open_errors(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	struct trace_reader *r = (struct trace_reader *)&d; /* must be reset to NULL */
	char path[512];
	testutil_scratch(path, sizeof(path), "does-not-exist.jsonl");
	assert_int_equal(trace_reader_open(&r, path, TRACE_FMT_AUTO, &d), DIAG_EIO);
	assert_null(r);
	char want[600];
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
	assert_string_equal(d.msg, want);
	trace_reader_free(NULL);
}

/* Deterministic pseudo-random bytes and mutations: every input must end in
 * a clean return, never a crash (the sanitizer build checks the rest). */
static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 33;
}

static void test_garbage(void **state)
{
	(void)state;
	char src[512], path[512];
	testutil_fixture(src, sizeof(src), "session_good.jsonl");
	testutil_scratch(path, sizeof(path), "garbage.jsonl");
	FILE *in = fopen(src, "rb");
	assert_non_null(in);
	char orig[8192];
	size_t len = fread(orig, 1, sizeof(orig), in);
	fclose(in);
	uint64_t seed = 42;
	char buf[8192];
	for (int round = 0; round < 300; round++) {
		memcpy(buf, orig, len);
		int flips = 1 + (int)(lcg(&seed) % 4);
		for (int k = 0; k < flips; k++) {
			size_t at = lcg(&seed) % len;
			static const char pool[] = "{}[],:\"0-9e.\\ \n\x01tfn#";
			buf[at] = pool[lcg(&seed) % (sizeof(pool) - 1)];
		}
		testutil_write(path, buf, len);
		struct diag d;
		size_t n;
		long skipped;
		int rc = read_file(path, TRACE_FMT_AUTO, round % 2 == 1, &d, &n, &skipped);
		assert_true(rc == 0 || rc == DIAG_EINPUT);
		assert_true(rc == 0 || strstr(d.msg, path) == d.msg);
	}
	for (int round = 0; round < 50; round++) {
		size_t n = 1 + lcg(&seed) % sizeof(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = (char)lcg(&seed);
		if (round % 3 == 0)
			buf[0] = '{';
		testutil_write(path, buf, n);
		struct diag d;
		size_t cnt;
		int rc = read_file(path, round % 2 ? TRACE_FMT_MOONCAKE : TRACE_FMT_AUTO, true,
				   &d, &cnt, NULL);
		assert_true(rc == 0 || rc == DIAG_EINPUT);
	}
}

static void test_bundled_data(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof(path), "%s/traces/data/mooncake/conversation_trace.jsonl.gz", AC_SRC_DIR);
	struct diag d;
	size_t n;
	assert_int_equal(read_file(path, TRACE_FMT_AUTO, false, &d, &n, NULL), 0);
	assert_int_equal(n, 12031);
	snprintf(path, sizeof(path), "%s/traces/data/mooncake/synthetic_trace.jsonl.gz", AC_SRC_DIR);
	assert_int_equal(read_file(path, TRACE_FMT_AUTO, false, &d, &n, NULL), 0);
	assert_int_equal(n, 3993);
}

/* The `n`th ```json block after `heading` in docs/trace-format.md, into buf. */
static void doc_block(const char *heading, int n, char *buf, size_t cap)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/docs/trace-format.md", AC_SRC_DIR);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *doc = malloc(1 << 20);
	assert_non_null(doc);
	size_t len = fread(doc, 1, (1 << 20) - 1, f);
	fclose(f);
	doc[len] = '\0';
	const char *p = strstr(doc, heading);
	assert_non_null(p);
	for (int i = 0; i <= n; i++) {
		p = strstr(p, "```json\n");
		assert_non_null(p);
		p += 8;
	}
	const char *end = strstr(p, "```");
	assert_non_null(end);
	assert_true((size_t)(end - p) < cap);
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = '\0';
	free(doc);
}

/* The examples of the specification are valid and mean what it says. */
/* A call's output kind is read, kept through the writer, and absent reads
 * as unknown. */
static void test_kind_round_trip(void **state)
{
	(void)state;
	char path[512], out[512];
	testutil_scratch(path, sizeof(path), "kinds.jsonl");
	testutil_scratch(out, sizeof(out), "kinds_out.jsonl");
	testutil_write_str(path, HDR
		"{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",9]],\"output_tokens\":5,\"kind\":\"code\"}\n"
		"{\"session\":\"a\",\"gap\":1,\"prompt\":[[\"y\",9]],\"output_tokens\":5,\"kind\":\"prose\"}\n"
		"{\"session\":\"a\",\"gap\":1,\"prompt\":[[\"z\",9]],\"output_tokens\":5,\"kind\":\"structured\"}\n"
		"{\"session\":\"a\",\"gap\":1,\"prompt\":[[\"w\",9]],\"output_tokens\":5,\"kind\":\"unknown\"}\n"
		"{\"session\":\"a\",\"gap\":1,\"prompt\":[[\"v\",9]],\"output_tokens\":5}\n");
	int want[5] = { OUT_KIND_CODE, OUT_KIND_PROSE, OUT_KIND_STRUCTURED, OUT_KIND_UNKNOWN,
			OUT_KIND_UNKNOWN };
	struct trace_session **s;
	size_t n;
	char msg[DIAG_MSG_MAX];
	assert_int_equal(testutil_read_all(path, &s, &n, msg, sizeof(msg)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(s[0]->n_calls, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(s[0]->calls[i].kind, want[i]);
	struct diag d;
	diag_init(&d);
	struct trace_writer *w = NULL;
	assert_int_equal(trace_writer_open(&w, out, false, "kinds", &d), 0);
	assert_int_equal(trace_writer_session(w, s[0], &d), 0);
	assert_int_equal(trace_writer_close(w, &d), 0);
	testutil_free_all(s, n);
	assert_int_equal(testutil_read_all(out, &s, &n, msg, sizeof(msg)), 0);
	assert_int_equal(n, 1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(s[0]->calls[i].kind, want[i]);
	testutil_free_all(s, n);
}

static void test_spec_examples(void **state)
{
	(void)state;
	char text[8192], path[512];
	testutil_scratch(path, sizeof(path), "spec.jsonl");
	struct trace_session **s;
	size_t n;
	char msg[DIAG_MSG_MAX];

	doc_block("## 12. A complete example", 0, text, sizeof(text));
	testutil_write_str(path, text);
	assert_int_equal(testutil_read_all(path, &s, &n, msg, sizeof(msg)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(s[0]->n_calls, 3);
	assert_int_equal(s[0]->calls[0].prompt_tokens, 1540);
	assert_int_equal(s[0]->calls[1].prompt_tokens, 1960);
	assert_int_equal(s[0]->calls[2].prompt_tokens, 2090);
	assert_int_equal(s[0]->calls[2].retry_of, 1);
	assert_int_equal(s[0]->calls[2].accepted, TRACE_ACCEPT_TRUE);
	assert_true(s[1]->parent == s[0]->id);
	assert_true(s[1]->calls[0].segs[0].content == s[0]->calls[0].segs[0].content);
	assert_true(s[2]->open_loop);
	testutil_free_all(s, n);

	char calls[4096];
	doc_block("## 3. Call lines", 0, calls, sizeof(calls));
	snprintf(text, sizeof(text), "%s%s", HDR, calls);
	testutil_write_str(path, text);
	assert_int_equal(testutil_read_all(path, &s, &n, msg, sizeof(msg)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(s[0]->n_calls, 3);
	testutil_free_all(s, n);

	doc_block("## 2. Header", 0, text, sizeof(text));
	testutil_write_str(path, text);
	assert_int_equal(testutil_read_all(path, &s, &n, msg, sizeof(msg)), 0);
	assert_int_equal(n, 0);
	free(s);

	doc_block("## 11. Mooncake", 0, text, sizeof(text));
	testutil_write_str(path, text);
	assert_int_equal(testutil_read_all(path, &s, &n, msg, sizeof(msg)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(s[0]->calls[0].n_segs, 2);
	assert_int_equal(s[0]->calls[0].segs[1].tokens, 916 - 512);
	assert_true(s[0]->t_s == 33.0);
	testutil_free_all(s, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_table),
		cmocka_unit_test(test_raw_agent_logs_name_the_import),
		cmocka_unit_test(test_jsontext_scanners),
		cmocka_unit_test(test_good_fixture),
		cmocka_unit_test(test_gzip_same_as_plain),
		cmocka_unit_test(test_truncated_gzip),
		cmocka_unit_test(test_corrupt_gzip),
		cmocka_unit_test(test_skip_bad),
		cmocka_unit_test(test_mooncake_mapping),
		cmocka_unit_test(test_line_endings),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_bundled_data),
		cmocka_unit_test(test_kind_round_trip),
		cmocka_unit_test(test_spec_examples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
