/* SPDX-License-Identifier: Apache-2.0
 * trace: identity rules (how ids and contents hash) and whole-session helpers
 * for the canonical in-memory trace (see trace.h).
 *
 * The seeds below are part of the file format: changing one changes every
 * content hash, so a trace written before the change would no longer share
 * cache with one read after it.  They never change within a format version.
 * A session built here is one heap block: the struct, then its calls, then
 * all segments of all calls, then any segment texts, so freeing it is one
 * free().
 */
#include "traces/trace.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/vec.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#define SEED_ID      0x7472632d69642d31ULL /* "trc-id-1" */
#define SEED_ANON    0x7472632d616e6f6eULL /* "trc-anon" */
#define SEED_CSTR    0x7472632d63737472ULL /* "trc-cstr" */
#define SEED_CINT    0x7472632d63696e74ULL /* "trc-cint" */
#define SEED_OUTPUT  0x7472632d6f757470ULL /* "trc-outp" */

void trace_session_free(struct trace_session *s)
{
	free(s);
}

uint64_t trace_output_content(uint64_t session_id, int64_t seq)
{
	return hash_combine(hash_combine(SEED_OUTPUT, session_id), (uint64_t)seq);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool trace_hex_id(const char *s, uint64_t *out)
{
	if (s[0] != '#')
		return false;
	uint64_t v = 0;
	for (int i = 1; i <= 16; i++) {
		int x = hex_digit(s[i]);
		if (x < 0)
			return false;
		v = (v << 4) | (uint64_t)x;
	}
	if (s[17] != '\0')
		return false;
	*out = v;
	return true;
}

uint64_t trace_id_hash(const char *id)
{
	uint64_t v;
	if (trace_hex_id(id, &v))
		return v;
	v = hash_str(id, SEED_ID);
	return v ? v : 1; /* 0 means "no id" in struct trace_session */
}

uint64_t trace_anon_session_id(long line)
{
	uint64_t v = hash_combine(SEED_ANON, (uint64_t)line);
	return v ? v : 1;
}

uint64_t trace_content_str(const char *id, int64_t tokens)
{
	uint64_t v;
	if (trace_hex_id(id, &v))
		return v;
	return hash_combine(hash_str(id, SEED_CSTR), (uint64_t)tokens);
}

uint64_t trace_content_int(int64_t id, int64_t tokens)
{
	return hash_combine(hash_combine(SEED_CINT, (uint64_t)id), (uint64_t)tokens);
}

static size_t align_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

int trace_session_clone(struct trace_session **out, const struct trace_session *src)
{
	*out = NULL;
	size_t n_segs = 0, n_ptrs = 0, text_bytes = 0;
	for (size_t i = 0; i < src->n_calls; i++) {
		const struct trace_call *c = &src->calls[i];
		if (c->n_segs > SIZE_MAX / 4 - n_segs)
			return DIAG_ENOMEM;
		n_segs += c->n_segs;
		if (!c->seg_text)
			continue;
		n_ptrs += c->n_segs;
		for (size_t k = 0; k < c->n_segs; k++) {
			size_t len = c->seg_text[k] ? strlen(c->seg_text[k]) + 1 : 0;
			if (len > SIZE_MAX / 4 - text_bytes)
				return DIAG_ENOMEM;
			text_bytes += len;
		}
	}
	if (src->n_calls > SIZE_MAX / 4 / sizeof(struct trace_call) ||
	    n_segs > SIZE_MAX / 4 / sizeof(struct trace_seg) || n_ptrs > SIZE_MAX / 4 / sizeof(char *))
		return DIAG_ENOMEM;
	size_t calls_off = align_up(sizeof(struct trace_session), alignof(struct trace_call));
	size_t segs_off = align_up(calls_off + src->n_calls * sizeof(struct trace_call),
				   alignof(struct trace_seg));
	size_t ptrs_off = align_up(segs_off + n_segs * sizeof(struct trace_seg), alignof(char *));
	size_t text_off = ptrs_off + n_ptrs * sizeof(char *);
	size_t total = text_off + text_bytes;
	char *block = malloc(total);
	if (!block)
		return DIAG_ENOMEM;
	struct trace_session *s = (struct trace_session *)block;
	*s = *src;
	s->calls = (struct trace_call *)(block + calls_off);
	struct trace_seg *segs = (struct trace_seg *)(block + segs_off);
	char **ptrs = (char **)(block + ptrs_off);
	char *text = block + text_off;
	size_t at = 0, pat = 0;
	for (size_t i = 0; i < src->n_calls; i++) {
		const struct trace_call *c = &src->calls[i];
		s->calls[i] = *c;
		size_t n = c->n_segs;
		if (n)
			memcpy(segs + at, c->segs, n * sizeof(*segs));
		s->calls[i].segs = n ? segs + at : NULL;
		at += n;
		s->calls[i].seg_text = NULL;
		if (!c->seg_text || n == 0)
			continue;
		s->calls[i].seg_text = ptrs + pat;
		for (size_t k = 0; k < n; k++) {
			ptrs[pat + k] = NULL;
			if (!c->seg_text[k])
				continue;
			size_t len = strlen(c->seg_text[k]) + 1;
			memcpy(text, c->seg_text[k], len);
			ptrs[pat + k] = text;
			text += len;
		}
		pat += n;
	}
	*out = s;
	return 0;
}

/* Is `seq` the seq of one of calls[0..n)?  Binary search: seqs increase. */
static bool seq_before(const struct trace_call *calls, size_t n, int64_t seq)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (calls[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && calls[lo].seq == seq;
}

bool trace_session_check(const struct trace_session *s)
{
	if (!s || s->n_calls < 1 || !s->calls || !(s->t_s >= 0) || (s->open_loop && s->n_calls != 1))
		return false;
	const struct trace_call *prev = NULL;
	for (size_t i = 0; i < s->n_calls; i++) {
		const struct trace_call *c = &s->calls[i];
		if (c->seq < 0 || (prev && c->seq <= prev->seq))
			return false;
		if (!prev && (c->extends_prev || c->gap_s != 0))
			return false;
		if (!(c->gap_s >= 0))
			return false;
		if (c->n_segs && !c->segs)
			return false;
		int64_t total = c->extends_prev ? prev->prompt_tokens + prev->output_tokens : 0;
		for (size_t k = 0; k < c->n_segs; k++) {
			if (c->segs[k].tokens < 1 || c->segs[k].tokens > TRACE_MAX_TOKENS)
				return false;
			total += c->segs[k].tokens;
			if (total > TRACE_MAX_PROMPT_TOKENS)
				return false;
		}
		if (total < 1 || total != c->prompt_tokens)
			return false;
		if (c->output_tokens < 1 || c->output_tokens > TRACE_MAX_TOKENS)
			return false;
		if (c->retry_of != -1 && !seq_before(s->calls, i, c->retry_of))
			return false;
		prev = c;
	}
	return true;
}

int trace_session_prompt(const struct trace_session *s, size_t i, struct vec *out)
{
	/* Walk back to the first call of the extends chain, then forward. */
	size_t first = i;
	while (first > 0 && s->calls[first].extends_prev)
		first--;
	for (size_t k = first; k <= i; k++) {
		const struct trace_call *c = &s->calls[k];
		if (k > first) {
			const struct trace_call *p = &s->calls[k - 1];
			struct trace_seg *o = vec_push(out);
			if (!o)
				return DIAG_ENOMEM;
			o->content = trace_output_content(s->id, p->seq);
			o->tokens = p->output_tokens;
		}
		if (vec_append(out, c->segs, c->n_segs) != 0)
			return DIAG_ENOMEM;
	}
	return 0;
}
