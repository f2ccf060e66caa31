/* SPDX-License-Identifier: Apache-2.0
 * rules: PCRE2 volatile-span rules over segment text (see rules.h).  This is
 * the one file that includes the PCRE2 header. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "traces/rules.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/textfile.h"
#include "base/vec.h"
#include "traces/jsontext.h"
#include "traces/trace.h"

#include <cjson/cJSON.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED_PIN 0x70696e6e6564ULL  /* "pinned" */
#define SEED_VOL 0x766f6c6174ULL    /* "volat" */
#define NAME_MAX_BYTES 128
#define SHOWN_MAX_BYTES 64          /* of a pattern, in messages */
#define JIT_STACK_START_BYTES ((size_t)32 << 10)
#define MATCH_BAD_SPAN (-100000)    /* next_match: a span off character starts */
#define MATCH_PIECES (-100001)      /* pin_content: past RULES_MAX_PIECES */

struct rule {
	char name[NAME_MAX_BYTES];
	char shown[SHOWN_MAX_BYTES + 4]; /* the pattern, cut short for messages */
	char *where;                     /* owned: "FILE: rule N", "--pattern"; or NULL */
	enum rule_action action;
	pcre2_code *code;
	bool jit;
	bool crlf;                       /* "\r\n" is one newline for the pattern */
};

/* Invariants: md holds the ovector of the pattern with the most groups; mc
 * carries the limits of rules.h and, when the library has a JIT, js (every
 * match runs with mc); every text handed to a rule's match has been checked
 * for UTF-8 (the segment's text by `utf`, a pinned rewrite by construction:
 * spans on character starts, names checked by rules_add). */
struct rules {
	struct rule *v;
	size_t n;
	pcre2_code *utf;          /* the empty pattern: PCRE2's UTF-8 check of a text */
	pcre2_match_data *md;     /* sized for the largest pattern */
	pcre2_match_context *mc;  /* limits and the JIT stack */
	pcre2_jit_stack *js;      /* NULL without a JIT */
	uint32_t jit_off;         /* PCRE2_NO_JIT when rules_set_jit(r, false), else 0 */
	struct vec buf;           /* char: a pinned segment's rewritten text */
	struct vec next;          /* char: the rewrite under way */
};

int rules_new(struct rules **out, struct diag *d)
{
	struct rules *r = calloc(1, sizeof(*r));
	*out = r;
	if (!r)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	vec_init(&r->buf, 1, VEC_NO_LIMIT);
	vec_init(&r->next, 1, VEC_NO_LIMIT);
	int err = 0;
	PCRE2_SIZE off = 0;
	uint32_t has_jit = 0;
	r->utf = pcre2_compile((PCRE2_SPTR) "", 0, PCRE2_UTF, &err, &off, NULL);
	r->md = r->utf ? pcre2_match_data_create_from_pattern(r->utf, NULL) : NULL;
	r->mc = pcre2_match_context_create(NULL);
	if (pcre2_config(PCRE2_CONFIG_JIT, &has_jit) == 0 && has_jit)
		r->js = pcre2_jit_stack_create(JIT_STACK_START_BYTES, RULES_JIT_STACK_BYTES, NULL);
	if (!r->utf || !r->md || !r->mc || (has_jit && !r->js)) {
		rules_free(r);
		*out = NULL;
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	pcre2_set_match_limit(r->mc, RULES_MATCH_LIMIT);
	pcre2_set_depth_limit(r->mc, RULES_DEPTH_LIMIT);
	pcre2_set_heap_limit(r->mc, RULES_HEAP_LIMIT_KIB);
	if (r->js)
		pcre2_jit_stack_assign(r->mc, NULL, r->js);
	return 0;
}

void rules_free(struct rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		pcre2_code_free(r->v[i].code);
		free(r->v[i].where);
	}
	free(r->v);
	pcre2_code_free(r->utf);
	pcre2_match_data_free(r->md);
	pcre2_match_context_free(r->mc);
	pcre2_jit_stack_free(r->js);
	vec_release(&r->buf);
	vec_release(&r->next);
	free(r);
}

size_t rules_count(const struct rules *r)
{
	return r->n;
}

bool rules_jit(const struct rules *r)
{
	if (r->jit_off)
		return false;
	for (size_t i = 0; i < r->n; i++)
		if (!r->v[i].jit)
			return false;
	return r->n > 0;
}

void rules_set_jit(struct rules *r, bool on)
{
	r->jit_off = on ? 0 : PCRE2_NO_JIT;
}

/* Whether byte p of text[0..len) starts a character (or is the end). */
static bool char_start(const char *text, size_t len, size_t p)
{
	return p >= len || ((unsigned char)text[p] & 0xC0) != 0x80;
}

/* Copy UTF-8 s into out[0..size) whole characters at a time, marking a cut
 * with "..." when `mark` (out then needs 4 bytes of room past size - 1). */
static void copy_cut(char *out, size_t size, const char *s, bool mark)
{
	size_t n = strlen(s);
	bool cut = n > size - 1;
	if (cut) {
		n = size - 1;
		while (n > 0 && !char_start(s, n + 1, n))
			n--;
	}
	memcpy(out, s, n);
	strcpy(out + n, cut && mark ? "..." : "");
}

int rules_add(struct rules *r, const char *name, const char *pattern, enum rule_action action,
	      const char *where, struct diag *d)
{
	const char *pre = where ? where : "", *sep = where ? ": " : "";
	if (r->n >= RULES_MAX)
		return diag_set(d, DIAG_EINPUT, "%s%smore than %d rules (expected fewer)", pre, sep,
				RULES_MAX);
	if (!pattern || !pattern[0])
		return diag_set(d, DIAG_EINPUT, "%s%sempty pattern (expected a PCRE2 regular expression)",
				pre, sep);
	if (name && jsontext_find_bad_utf8(name, strlen(name)) < strlen(name))
		return diag_set(d, DIAG_EINPUT, "%s%sname is not UTF-8 (expected UTF-8 text)", pre,
				sep);
	int err = 0;
	PCRE2_SIZE off = 0;
	pcre2_code *code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
					 PCRE2_UTF | PCRE2_MULTILINE, &err, &off, NULL);
	if (!code) {
		PCRE2_UCHAR msg[256];
		if (pcre2_get_error_message(err, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", err);
		return diag_set(d, DIAG_EINPUT, "%s%sbad pattern '%s': %s at offset %zu "
				"(expected a PCRE2 regular expression)", pre, sep, pattern,
				(const char *)msg, (size_t)off);
	}
	struct rule *grown = realloc(r->v, (r->n + 1) * sizeof(*grown));
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
	char *where_copy = where ? strdup(where) : NULL;
	if (!grown || !md || (where && !where_copy)) {
		if (grown)
			r->v = grown;
		free(where_copy);
		pcre2_match_data_free(md);
		pcre2_code_free(code);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	r->v = grown;
	struct rule *ru = &r->v[r->n++];
	memset(ru, 0, sizeof(*ru));
	copy_cut(ru->name, sizeof(ru->name), name && name[0] ? name : "rule", false);
	copy_cut(ru->shown, SHOWN_MAX_BYTES, pattern, true);
	ru->where = where_copy;
	ru->action = action;
	ru->code = code;
	ru->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
	uint32_t nl = 0;
	pcre2_pattern_info(code, PCRE2_INFO_NEWLINE, &nl);
	ru->crlf = nl == PCRE2_NEWLINE_CRLF || nl == PCRE2_NEWLINE_ANY ||
		   nl == PCRE2_NEWLINE_ANYCRLF;
	/* keep the match data of the pattern with the most capture groups */
	if (pcre2_get_ovector_count(md) > pcre2_get_ovector_count(r->md)) {
		pcre2_match_data_free(r->md);
		r->md = md;
	} else {
		pcre2_match_data_free(md);
	}
	return 0;
}

int rules_load(struct rules *r, const char *path, struct diag *d)
{
	char *text = textfile_read(path, RULES_MAX_FILE_BYTES, "a rules file", d);
	if (!text)
		return d->code;
	cJSON *root = cJSON_ParseWithOpts(text, NULL, 1);
	int rc = 0;
	if (!root) {
		long line = 0, col = 0;
		const char *at = cJSON_GetErrorPtr();
		if (at && at >= text && at <= text + strlen(text))
			textfile_line_col(text, at, &line, &col);
		rc = diag_at(d, DIAG_EINPUT, path, line, col, "not valid JSON (expected an array of "
			     "{\"name\", \"pattern\", \"action\"} rules)");
		free(text);
		return rc;
	}
	free(text);
	const cJSON *arr = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "rules") : root;
	if (!cJSON_IsArray(arr)) {
		cJSON_Delete(root);
		return diag_set(d, DIAG_EINPUT, "%s: expected an array of {\"name\", \"pattern\", "
				"\"action\"} rules (or {\"rules\": [...]})", path);
	}
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, arr) {
		i++;
		char where[512];
		snprintf(where, sizeof(where), "%s: rule %d", path, i);
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
		const cJSON *pat = cJSON_GetObjectItemCaseSensitive(e, "pattern");
		const cJSON *act = cJSON_GetObjectItemCaseSensitive(e, "action");
		enum rule_action a = RULE_PIN;
		if (!cJSON_IsObject(e) || !cJSON_IsString(pat) || (name && !cJSON_IsString(name)) ||
		    (act && !cJSON_IsString(act))) {
			rc = diag_set(d, DIAG_EINPUT, "%s: expected {\"name\": string, \"pattern\": "
				      "string, \"action\": \"pin\" or \"volatile\"}", where);
			break;
		}
		if (act && strcmp(act->valuestring, "volatile") == 0) {
			a = RULE_VOLATILE;
		} else if (act && strcmp(act->valuestring, "pin") != 0) {
			rc = diag_set(d, DIAG_EINPUT, "%s: unknown action '%s' (expected \"pin\" or "
				      "\"volatile\")", where, act->valuestring);
			break;
		}
		if ((rc = rules_add(r, name ? name->valuestring : NULL, pat->valuestring, a, where,
				    d)) != 0)
			break;
	}
	if (rc == 0 && i == 0)
		rc = diag_set(d, DIAG_EINPUT, "%s: no rules (expected at least one)", path);
	cJSON_Delete(root);
	return rc;
}

/* The segment a message is about. */
struct seg_at {
	const struct trace_session *s;
	const struct trace_call *c;
	size_t k;
};

/* Where the matches of one rule over one text have got to. */
struct cursor {
	size_t from;      /* where the next search starts; past the end: done */
	bool after_empty; /* the last match was empty, at `from` */
};

/* One character on from p (a "\r\n" newline as one when the pattern says so). */
static size_t next_char(const char *text, size_t len, size_t p, bool crlf)
{
	if (crlf && p + 1 < len && text[p] == '\r' && text[p + 1] == '\n')
		return p + 2;
	p++;
	while (p < len && !char_start(text, len, p))
		p++;
	return p;
}

/* Next match of rule `ru` in text[0..len) (checked UTF-8) from the cursor:
 * 1 with [*a, *b), 0 if none, a PCRE2 error code (< 0), or MATCH_BAD_SPAN
 * (*a: where) for a span that does not start and end on characters at or
 * after the cursor (\C; \K in a lookaround before PCRE2 10.38).  After an
 * empty match the search retries at the same place for a non-empty match,
 * then goes one character on, so the matches always move forward. */
static int next_match(struct rules *r, const struct rule *ru, const char *text, size_t len,
		      struct cursor *cur, size_t *a, size_t *b, struct rules_stats *st)
{
	while (cur->from <= len) {
		uint32_t opt = PCRE2_NO_UTF_CHECK | r->jit_off;
		if (cur->after_empty)
			opt |= PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED;
		st->match_calls++;
		int rc = pcre2_match(ru->code, (PCRE2_SPTR)text, len, cur->from, opt, r->md, r->mc);
		if (rc == PCRE2_ERROR_NOMATCH && cur->after_empty) {
			cur->after_empty = false;
			cur->from = next_char(text, len, cur->from, ru->crlf);
			continue;
		}
		if (rc == PCRE2_ERROR_NOMATCH)
			return 0;
		if (rc < 0)
			return rc;
		const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
		*a = ov[0];
		*b = ov[1];
		if (ov[0] < cur->from || ov[1] < ov[0] || ov[1] > len ||
		    !char_start(text, len, ov[0]) || !char_start(text, len, ov[1]))
			return MATCH_BAD_SPAN;
		cur->from = ov[1];
		cur->after_empty = ov[0] == ov[1];
		return 1;
	}
	return 0;
}

/* A rule in messages: "rule 'NAME' (pattern 'P', from WHERE)". */
#define RULE_FMT "rule '%s' (pattern '%s'%s%s)"
#define RULE_ARGS(ru) (ru)->name, (ru)->shown, (ru)->where ? ", from " : "", \
	(ru)->where ? (ru)->where : ""
#define SEG_FMT "session at line %ld call %lld segment %zu"
#define SEG_ARGS(at) (at)->s->line, (long long)(at)->c->seq, (at)->k

/* Text that PCRE2's UTF-8 check refused (code, at byte `at_byte`). */
static int utf_error(const struct seg_at *at, int code, size_t at_byte, struct diag *d)
{
	PCRE2_UCHAR msg[256];
	if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
		snprintf((char *)msg, sizeof(msg), "error %d", code);
	return diag_set(d, DIAG_EINPUT, SEG_FMT ": segment text cannot be matched: %s at byte %zu "
			"(expected UTF-8 text)", SEG_ARGS(at), (const char *)msg, at_byte);
}

#define FIX_BACKTRACK "a pattern that backtracks less: no nested repeats such as (a+)+; " \
	"make them possessive, a++, or atomic, (?>a+)"
#define FIX_STATE "a pattern that keeps less to backtrack to: make a long repeat " \
	"possessive, (?:...)*+, or match each item on its own"

/* A match of rule `ru` that failed with `code` (next_match, pin_content;
 * at_byte: where, for MATCH_BAD_SPAN). */
static int rule_error(const struct seg_at *at, const struct rule *ru, int code, size_t at_byte,
		      struct diag *d)
{
	char what[160];
	const char *fix = FIX_STATE;
	switch (code) {
	case PCRE2_ERROR_MATCHLIMIT:
		snprintf(what, sizeof(what), "hit the match limit of %u backtracking steps in one "
			 "match", RULES_MATCH_LIMIT);
		fix = FIX_BACKTRACK;
		break;
	case PCRE2_ERROR_DEPTHLIMIT:
		snprintf(what, sizeof(what), "hit the depth limit of %u nested backtracking points "
			 "in one match", RULES_DEPTH_LIMIT);
		break;
	case PCRE2_ERROR_HEAPLIMIT:
		snprintf(what, sizeof(what), "hit the heap limit of %u KiB of backtracking memory "
			 "in one match", RULES_HEAP_LIMIT_KIB);
		break;
	case PCRE2_ERROR_JIT_STACKLIMIT:
		snprintf(what, sizeof(what), "hit the JIT stack limit of %zu KiB in one match",
			 RULES_JIT_STACK_BYTES >> 10);
		break;
	case PCRE2_ERROR_NOMEMORY:
		return diag_set(d, DIAG_ENOMEM, SEG_FMT ": out of memory matching " RULE_FMT,
				SEG_ARGS(at), RULE_ARGS(ru));
	case MATCH_BAD_SPAN:
		snprintf(what, sizeof(what), "matched a span that does not start and end on whole "
			 "characters at byte %zu", at_byte);
		fix = "a pattern without \\C";
		break;
	case MATCH_PIECES:
		snprintf(what, sizeof(what), "splits the segment into more than %d pieces, "
			 "counting every pin rule's matches", RULES_MAX_PIECES);
		fix = "a pattern that matches less often, and never the empty string: x+ rather "
		      "than x*";
		break;
	default: {
		PCRE2_UCHAR msg[128];
		if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", code);
		snprintf(what, sizeof(what), "cannot match the segment text: %s", (const char *)msg);
		fix = "text PCRE2 can match";
	}
	}
	return diag_set(d, DIAG_EINPUT, SEG_FMT ": " RULE_FMT " %s (expected %s)", SEG_ARGS(at),
			RULE_ARGS(ru), what, fix);
}

/* Check text[0..len) for UTF-8 once, with PCRE2's own check (the empty
 * pattern, anchored at 0, reads the whole text before it matches), so that
 * every match on it may skip the check. */
static int check_utf(struct rules *r, const struct seg_at *at, const char *text, size_t len,
		     struct rules_stats *st, struct diag *d)
{
	st->utf_checks++;
	st->utf_check_bytes += (int64_t)len;
	int rc = pcre2_match(r->utf, (PCRE2_SPTR)text, len, 0, PCRE2_ANCHORED, r->md, r->mc);
	if (rc >= 0)
		return 0;
	if (rc == PCRE2_ERROR_NOMEMORY)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	return utf_error(at, rc, rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21
				     ? (size_t)pcre2_get_startchar(r->md) : 0, d);
}

/* Pin: the content of `text` with every pin rule's matches replaced, at
 * most RULES_MAX_PIECES of them in all. */
static int pin_content(struct rules *r, const struct seg_at *at, const char *text, size_t len,
		       int64_t tokens, uint64_t *out, struct rules_stats *st, struct diag *d)
{
	struct vec *buf = &r->buf, *next = &r->next;
	vec_clear(buf);
	if (vec_append(buf, text, len) != 0)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	int64_t pieces = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct rule *ru = &r->v[i];
		if (ru->action != RULE_PIN)
			continue;
		vec_clear(next);
		struct cursor cur = {0, false};
		size_t done = 0, a = 0, b;
		const char *t = buf->data ? buf->data : "";
		int got;
		while ((got = next_match(r, ru, t, buf->len, &cur, &a, &b, st)) == 1) {
			st->matches++;
			if (++pieces > RULES_MAX_PIECES) {
				got = MATCH_PIECES;
				break;
			}
			if (vec_append(next, t + done, a - done) != 0 ||
			    vec_append(next, "<", 1) != 0 ||
			    vec_append(next, ru->name, strlen(ru->name)) != 0 ||
			    vec_append(next, ">", 1) != 0)
				return diag_set(d, DIAG_ENOMEM, "out of memory");
			done = b;
		}
		if (got < 0)
			return rule_error(at, ru, got, a, d);
		if (vec_append(next, t + done, buf->len - done) != 0)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		struct vec tmp = *buf; /* swap: next becomes the text */
		*buf = *next;
		*next = tmp;
	}
	*out = hash_combine(hash_bytes(buf->data, buf->len, SEED_PIN), (uint64_t)tokens);
	return 0;
}

int rules_apply(struct rules *r, struct trace_session *s, struct rules_stats *st, struct diag *d)
{
	for (size_t ci = 0; ci < s->n_calls; ci++) {
		struct trace_call *c = &s->calls[ci];
		for (size_t k = 0; c->seg_text && k < c->n_segs; k++) {
			const char *text = c->seg_text[k];
			if (!text)
				continue;
			st->segments_seen++;
			if (r->n == 0)
				continue;
			struct seg_at at = {s, c, k};
			size_t len = strlen(text);
			int rc = check_utf(r, &at, text, len, st, d);
			if (rc)
				return rc;
			bool pinned = false;
			uint64_t vol = 0;
			bool volatile_hit = false;
			for (size_t i = 0; i < r->n; i++) {
				const struct rule *ru = &r->v[i];
				struct cursor cur = {0, false};
				size_t a = 0, b;
				int got;
				while ((got = next_match(r, ru, text, len, &cur, &a, &b, st)) == 1) {
					if (ru->action == RULE_PIN) {
						pinned = true;
						break;
					}
					st->matches++;
					volatile_hit = true;
					vol = hash_combine(vol, hash_bytes(text + a, b - a, SEED_VOL));
				}
				if (got < 0)
					return rule_error(&at, ru, got, a, d);
			}
			if (pinned) {
				rc = pin_content(r, &at, text, len, c->segs[k].tokens, &c->segs[k].content,
						 st, d);
				if (rc)
					return rc;
				st->segments_pinned++;
			} else if (volatile_hit) {
				c->segs[k].content = hash_combine(c->segs[k].content, vol);
				st->segments_volatile++;
			}
		}
	}
	return 0;
}
