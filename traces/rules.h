/* SPDX-License-Identifier: Apache-2.0
 * rules: volatile-span rules over segment text (the cache-bust what-if).
 *
 * A rule is a name, a PCRE2 pattern (UTF-8, multi-line: ^ and $ match at
 * line ends; JIT-compiled when the library has a JIT) and an action:
 *   pin       the fix: every match is replaced by a constant ("<name>")
 *             and the segment's content id is computed from the resulting
 *             text and its token count, so segments that differ only in the
 *             matched spans share one content id (and their KV cache);
 *   volatile  the bug as recorded: the segment's content id is combined
 *             with the matched text, so a span that changes per call makes
 *             the segment (and everything after it) a cache miss.
 * A segment that no rule matches, or that has no text, keeps its content id.
 * Rules are applied in file order; pin wins over volatile when both match
 * one segment.  rules_apply works on one session at a time, so a trace is
 * transformed while it streams; nothing is kept between sessions.
 *
 * Matching goes on after a match as Perl's global match does: past it, or,
 * after an empty match, at the same place for a non-empty one, else one
 * character on; so every rule ends on every text.
 *
 * Cost: each segment text is checked for UTF-8 once (O(length)); then one
 * pcre2 match per rule per text-bearing segment (plus one per extra match,
 * two per empty one), none of which checks the UTF-8 again.  A pinned
 * segment's text is rewritten once per pin rule into buffers owned by the
 * rule set.  Hostile patterns and texts are bounded: one match may take at
 * most RULES_MATCH_LIMIT backtracking steps, RULES_DEPTH_LIMIT nested
 * backtracking points and RULES_HEAP_LIMIT_KIB of memory (interpreter), or
 * RULES_JIT_STACK_BYTES of JIT stack; the pin rules replace at most
 * RULES_MAX_PIECES matches in one segment.  Going past a bound is an input
 * error naming the rule, where it came from, the segment and the bound.
 */
#ifndef TRACES_RULES_H
#define TRACES_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diag;
struct trace_session;

enum rule_action { RULE_PIN = 0, RULE_VOLATILE };

#define RULES_MAX 256            /* rules in one set */
#define RULES_MAX_FILE_BYTES ((size_t)1 << 20)
#define RULES_MATCH_LIMIT 1000000u     /* backtracking steps in one match */
#define RULES_DEPTH_LIMIT 250000u      /* nested backtracking points in one match */
#define RULES_HEAP_LIMIT_KIB 65536u    /* interpreter backtracking memory, KiB */
#define RULES_JIT_STACK_BYTES ((size_t)8 << 20) /* JIT stack, at most */
#define RULES_MAX_PIECES 1048576       /* pin matches replaced in one segment */

struct rules;

/* An empty rule set; 0 or DIAG_ENOMEM. */
int rules_new(struct rules **out, struct diag *d);
void rules_free(struct rules *r); /* accepts NULL */

/* Compile and append one rule.  A pattern PCRE2 refuses is DIAG_EINPUT:
 * "bad pattern 'P' (rule N): MESSAGE at offset K"; so is a name that is not
 * UTF-8 (a name longer than 127 bytes is cut).  `where` (may be NULL)
 * prefixes the message, e.g. "rules.json: rule 2", and is kept (copied) to
 * name the rule in the errors of rules_apply. */
int rules_add(struct rules *r, const char *name, const char *pattern, enum rule_action action,
	      const char *where, struct diag *d);

/* Append the rules of a JSON file: an array of {"name": str, "pattern":
 * str, "action": "pin" | "volatile"} (or an object {"rules": [...]}).
 * DIAG_EINPUT names the file and the rule at fault; DIAG_EIO. */
int rules_load(struct rules *r, const char *path, struct diag *d);

size_t rules_count(const struct rules *r);

/* Whether the library JIT-compiled the patterns (all of them) and the JIT
 * is on. */
bool rules_jit(const struct rules *r);

/* Match with the JIT when the library has one (on, the default), or always
 * with PCRE2's interpreter (off: tests and benchmarks of that path). */
void rules_set_jit(struct rules *r, bool on);

struct rules_stats {
	int64_t segments_seen;   /* segments with text */
	int64_t segments_pinned;
	int64_t segments_volatile;
	int64_t matches;
	int64_t utf_checks;      /* segment texts checked for UTF-8: one check each */
	int64_t utf_check_bytes; /* bytes those checks read: the texts' lengths */
	int64_t match_calls;     /* pcre2 matches run, all with PCRE2_NO_UTF_CHECK */
};

/* Rewrite the content ids of every text-bearing segment of `s` in place (see
 * the top of this file).  Text is left as recorded.  0, DIAG_ENOMEM, or
 * DIAG_EINPUT, naming the segment ("session at line L call C segment K"):
 * text that is not UTF-8 ("segment text cannot be matched: ... (expected
 * UTF-8 text)"), or a rule past one of the bounds above (the message names
 * the rule, its pattern, where it came from, the bound and what to change). */
int rules_apply(struct rules *r, struct trace_session *s, struct rules_stats *st,
		struct diag *d);

#endif
