/* SPDX-License-Identifier: Apache-2.0
 * outkind: what kind of text an LLM call generates (code, structured output,
 * prose), as a trace may record it and speculative decoding prices it.
 *
 * Acceptance of drafted tokens depends on what is being generated (code and
 * JSON repeat their context more than prose does), so a call carries its
 * kind from the trace to the replica.  OUT_KIND_UNKNOWN (0) is what a call
 * without one reads as; the numbering is part of no file format (traces
 * spell the names).
 */
#ifndef BASE_OUTKIND_H
#define BASE_OUTKIND_H

enum out_kind {
	OUT_KIND_UNKNOWN = 0,
	OUT_KIND_CODE,
	OUT_KIND_STRUCTURED,
	OUT_KIND_PROSE,
	OUT_KINDS
};

/* "unknown", "code", "structured", "prose" (static); "?" out of range. */
const char *out_kind_name(int kind);

/* The kind named s (one of the names above), or -1. */
int out_kind_parse(const char *s);

#endif
