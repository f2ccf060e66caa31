/* SPDX-License-Identifier: Apache-2.0
 * map: an open-addressing hash map from uint64 keys to uint64 values.
 *
 * Linear probing with backward-shift deletion, so there are no tombstones and
 * lookups stay short under churn (the KV cache inserts and evicts millions of
 * block hashes).  Keys are arbitrary 64-bit values, including 0.  The table
 * doubles when it is 70% full.  Iteration order depends on keys only, never
 * on addresses, so it is deterministic.
 */
#ifndef BASE_MAP_H
#define BASE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct map_slot {
	uint64_t key;
	uint64_t val;
};

struct map {
	struct map_slot *slots;
	unsigned char *used; /* one byte per slot: 0 empty, 1 occupied */
	size_t cap;          /* power of two, or 0 */
	size_t len;
};

void map_init(struct map *m);
void map_release(struct map *m);

/* Find key; returns a pointer to its value or NULL.  Valid until the next
 * insertion or removal. */
uint64_t *map_get(const struct map *m, uint64_t key);

/* Insert or overwrite; 0 or DIAG_ENOMEM. */
int map_put(struct map *m, uint64_t key, uint64_t val);

/* The value of key, inserted as 0 if absent: one probe where map_get then
 * map_put take three.  NULL (nothing inserted) if the table could not grow.
 * Valid until the next insertion or removal. */
uint64_t *map_ref(struct map *m, uint64_t key);

/* Remove key; true if it was present. */
bool map_del(struct map *m, uint64_t key);

#endif
