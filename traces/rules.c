/* SPDX-License-Identifier: Apache-2.0
 * rules: PCRE2 volatile-span rules over segment text (see rules.h).  This is
 * the one file that includes the PCRE2 header. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "traces/rules.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/textfile.h"
#include "base/vec.h"
#include "traces/trace.h"

#include <cjson/cJSON.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED_PIN 0x70696e6e6564ULL  /* "pinned" */
#define SEED_VOL 0x766f6c6174ULL    /* "volat" */
#define NAME_MAX_BYTES 128

struct rule {
	char name[NAME_MAX_BYTES];
	enum rule_action action;
	pcre2_code *code;
	bool jit;
};

struct rules {
	struct rule *v;
	size_t n;
	pcre2_match_data *md;  /* sized for the largest pattern */
	struct vec buf;        /* char: a pinned segment's rewritten text */
};

int rules_new(struct rules **out, struct diag *d)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	vec_init(&(*out)->buf, 1, VEC_NO_LIMIT);
	return 0;
}

void rules_free(struct rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		pcre2_code_free(r->v[i].code);
	free(r->v);
	pcre2_match_data_free(r->md);
	vec_release(&r->buf);
	free(r);
}

size_t rules_count(const struct rules *r)
{
	return r->n;
}

bool rules_jit(const struct rules *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (!r->v[i].jit)
			return false;
	return r->n > 0;
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
	if (!grown || !md) {
		if (grown)
			r->v = grown;
		pcre2_match_data_free(md);
		pcre2_code_free(code);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	r->v = grown;
	struct rule *ru = &r->v[r->n++];
	memset(ru, 0, sizeof(*ru));
	snprintf(ru->name, sizeof(ru->name), "%s", name && name[0] ? name : "rule");
	ru->action = action;
	ru->code = code;
	ru->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
	/* keep the match data of the pattern with the most capture groups */
	if (!r->md || pcre2_get_ovector_count(md) > pcre2_get_ovector_count(r->md)) {
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

/* Next match of rule `ru` in text[from..len): 1 with [*a, *b), 0 if none,
 * or a PCRE2 error code (< 0). */
static int next_match(struct rules *r, const struct rule *ru, const char *text, size_t len,
		      size_t from, size_t *a, size_t *b)
{
	int rc = pcre2_match(ru->code, (PCRE2_SPTR)text, len, from, 0, r->md, NULL);
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc < 0)
		return rc;
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
	*a = ov[0];
	*b = ov[1];
	return 1;
}

/* Where the search goes on after a match [a, b): past it, or one UTF-8
 * character on after an empty match. */
static size_t resume_at(const char *text, size_t len, size_t a, size_t b)
{
	if (b > a)
		return b;
	size_t p = a + 1;
	while (p < len && ((unsigned char)text[p] & 0xC0) == 0x80)
		p++;
	return p;
}

static int match_error(struct trace_session *s, int code, struct diag *d)
{
	PCRE2_UCHAR msg[256];
	if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
		snprintf((char *)msg, sizeof(msg), "error %d", code);
	return diag_set(d, DIAG_EINPUT, "session at line %ld: segment text cannot be matched: %s "
			"(expected UTF-8 text)", s->line, (const char *)msg);
}

/* Pin: the content of `text` with every pin rule's matches replaced. */
static int pin_content(struct rules *r, struct trace_session *s, const char *text, size_t len,
		       int64_t tokens, uint64_t *out, int64_t *matches, struct diag *d)
{
	struct vec *buf = &r->buf;
	vec_clear(buf);
	if (vec_append(buf, text, len) != 0)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	struct vec next;
	vec_init(&next, 1, VEC_NO_LIMIT);
	int rc = 0;
	for (size_t i = 0; i < r->n && rc == 0; i++) {
		const struct rule *ru = &r->v[i];
		if (ru->action != RULE_PIN)
			continue;
		vec_clear(&next);
		size_t from = 0, done = 0, a, b;
		const char *t = buf->data ? buf->data : "";
		int got = 0;
		while (from <= buf->len && (got = next_match(r, ru, t, buf->len, from, &a, &b)) == 1) {
			(*matches)++;
			if (vec_append(&next, t + done, a - done) != 0 ||
			    vec_append(&next, "<", 1) != 0 ||
			    vec_append(&next, ru->name, strlen(ru->name)) != 0 ||
			    vec_append(&next, ">", 1) != 0) {
				got = DIAG_ENOMEM;
				break;
			}
			done = b;
			from = resume_at(t, buf->len, a, b);
		}
		if (got == DIAG_ENOMEM || vec_append(&next, t + done, buf->len - done) != 0)
			rc = diag_set(d, DIAG_ENOMEM, "out of memory");
		else if (got < 0)
			rc = match_error(s, got, d);
		else {
			struct vec tmp = *buf; /* swap: next becomes the text */
			*buf = next;
			next = tmp;
		}
	}
	vec_release(&next);
	if (rc == 0)
		*out = hash_combine(hash_bytes(buf->data, buf->len, SEED_PIN), (uint64_t)tokens);
	return rc;
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
			size_t len = strlen(text);
			bool pinned = false;
			uint64_t vol = 0;
			bool volatile_hit = false;
			for (size_t i = 0; i < r->n; i++) {
				const struct rule *ru = &r->v[i];
				size_t from = 0, a, b;
				int got = 0;
				while (from <= len && (got = next_match(r, ru, text, len, from, &a, &b)) == 1) {
					if (ru->action == RULE_PIN) {
						pinned = true;
						break;
					}
					st->matches++;
					volatile_hit = true;
					vol = hash_combine(vol, hash_bytes(text + a, b - a, SEED_VOL));
					from = resume_at(text, len, a, b);
				}
				if (got < 0)
					return match_error(s, got, d);
			}
			if (pinned) {
				int rc = pin_content(r, s, text, len, c->segs[k].tokens, &c->segs[k].content,
						     &st->matches, d);
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
