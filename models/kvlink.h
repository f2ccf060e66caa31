/* SPDX-License-Identifier: Apache-2.0
 * kvlink: the links a prefill replica's KV cache crosses to a decode
 * replica under prefill/decode disaggregation
 * (models/catalog/kv_links.json), and the time a transfer takes.
 *
 * A transfer of B bytes in n pieces between replicas of g GPUs each
 * (the smaller tensor-parallel size of the two) takes
 *
 *     n x per_transfer + B / (gbs x (per_gpu ? g : 1))
 *
 * (each GPU sends its own shard of every layer's KV at once over its own
 * link, or the replica's GPUs share one).  A block-wise connector sends
 * one piece per KV block, a buffered one a single piece.  With layer-wise
 * pipelining (the engine sends each layer's KV as its prefill finishes the
 * layer) only what outlasts the prefill is exposed: of L layers, the last
 * layer's share, or the excess of the transfer over the prefill's first
 * L - 1 layers, whichever is longer.
 */
#ifndef MODELS_KVLINK_H
#define MODELS_KVLINK_H

#include "base/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KVLINK_MAX 16
#define KVLINK_ID_MAX 32

struct kv_link {
	char id[KVLINK_ID_MAX];
	double gbs;                /* GB/s a GPU, each direction, > 0 */
	bool per_gpu;              /* each GPU has its own; false: shared */
	double per_transfer_us;    /* fixed cost of each piece, >= 0 */
};

struct kvlink_table {
	struct kv_link link[KVLINK_MAX];
	size_t n;
};

/* Load path, or the built-in table when NULL.  0, DIAG_EIO or DIAG_EINPUT
 * naming the file, the entry and what was expected. */
int kvlink_load(struct kvlink_table *t, const char *path, struct diag *d);

/* Parse a file's text (name for messages). */
int kvlink_parse(struct kvlink_table *t, const char *name, const char *text, size_t len,
		 struct diag *d);

const struct kv_link *kvlink_find(const struct kvlink_table *t, const char *id);

/* "nvlink, infiniband, ..." into buf. */
void kvlink_ids(const struct kvlink_table *t, char *buf, size_t size);

/* What a transfer costs (see above). */
struct kv_transfer {
	double bytes;              /* KV bytes over the replica's GPUs */
	int64_t pieces;            /* transfers the connector issues */
	int32_t gpus;              /* GPUs sending at once (>= 1) */
	int32_t layers;            /* the model's layers; layer-wise only */
	bool layerwise;
	double prefill_ns;         /* the prefill it overlaps; layer-wise only */
};

/* The transfer's whole time and the part of it the call waits for
 * (exposed; = whole unless layer-wise), in ns. */
void kvlink_time(const struct kv_link *l, const struct kv_transfer *x, double *whole_ns,
		 double *exposed_ns);

/* The built-in file's text. */
const char *kvlink_embedded_json(void);

#endif
