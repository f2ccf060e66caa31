/* SPDX-License-Identifier: Apache-2.0
 * reqcsv: one CSV row per call, written as the call finishes.
 *
 * A struct reqcsv is a res_sink that writes each request record to a stream
 * and passes every record on to another sink (the run's metrics), so a
 * replay of any length keeps nothing per call for it.  The columns, in order
 * (docs/output-schema.md, "Per-request CSV"):
 *
 *   session, task          16 hex digits of the trace's id hash (task empty
 *                          when the call has none)
 *   call                   index of the call in its session
 *   replica                replica that served it (empty when rejected)
 *   arrival_ms             issue time, from the start of the trace
 *   router_wait_ms         arrival to the router handing it to a replica
 *   queue_ms               from then to its first admission to a batch
 *   ttft_ms                arrival to its first token
 *   tpot_ms                (e2e - ttft) / (output_tokens - 1); empty for
 *                          one output token
 *   e2e_ms                 arrival to its last token
 *   prompt_tokens, cached_tokens, computed_prefill_tokens, output_tokens,
 *   preemptions
 *   outcome                completed or rejected
 *   reason                 why it was rejected (empty when completed)
 *
 * Times derived from whole nanoseconds are printed exactly (6 decimals of a
 * millisecond); tpot_ms, a quotient, with 9 decimals.  Timing columns are
 * empty for a rejected call.  Rows come in the order calls finish.
 */
#ifndef REPORTS_REQCSV_H
#define REPORTS_REQCSV_H

#include "sim/results.h"

#include <stdio.h>

struct diag;

struct reqcsv {
	FILE *fp;              /* borrowed; written on every request record */
	struct res_sink next;  /* receives every record after the row is out */
	long long rows;        /* rows written so far, header excluded */
	const char *const *backends; /* API backends' names (borrowed), or NULL */
	int32_t n_backends;
};

/* Start a table on fp (writes the header line) in front of next. */
void reqcsv_init(struct reqcsv *c, FILE *fp, struct res_sink next);

/* The same with API backends beside the local engines (sim/backend.h):
 * two columns more, `backend` ("local" or the backend's name, names[k - 1])
 * and `route` ("local", "spill", "fallback", "size"; empty when rejected),
 * and `replica` empty for a call an API served. */
void reqcsv_init_backends(struct reqcsv *c, FILE *fp, struct res_sink next,
			  const char *const *names, int32_t n);

/* The sink to hand the simulator; valid while c is. */
struct res_sink reqcsv_sink(struct reqcsv *c);

/* 0, or DIAG_EIO when the stream refused a write (name in the message). */
int reqcsv_status(const struct reqcsv *c, const char *name, struct diag *d);

#endif
