/* SPDX-License-Identifier: Apache-2.0
 * map: uint64 -> uint64 hash map, linear probing, backward-shift delete. */
#include "base/map.h"

#include "base/diag.h"
#include "base/hash.h"

#include <stdlib.h>

void map_init(struct map *m)
{
	m->slots = NULL;
	m->used = NULL;
	m->cap = 0;
	m->len = 0;
}

void map_release(struct map *m)
{
	free(m->slots);
	free(m->used);
	map_init(m);
}

static size_t map_home(const struct map *m, uint64_t key)
{
	return (size_t)hash_mix64(key) & (m->cap - 1);
}

uint64_t *map_get(const struct map *m, uint64_t key)
{
	if (m->len == 0)
		return NULL;
	for (size_t i = map_home(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return NULL;
		if (m->slots[i].key == key)
			return &m->slots[i].val;
	}
}

static void map_insert_fresh(struct map *m, uint64_t key, uint64_t val)
{
	size_t i = map_home(m, key);
	while (m->used[i])
		i = (i + 1) & (m->cap - 1);
	m->used[i] = 1;
	m->slots[i].key = key;
	m->slots[i].val = val;
	m->len++;
}

static int map_grow(struct map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	struct map_slot *ns = malloc(ncap * sizeof(*ns));
	unsigned char *nu = calloc(ncap, 1);
	if (!ns || !nu) {
		free(ns);
		free(nu);
		return DIAG_ENOMEM;
	}
	struct map old = *m;
	m->slots = ns;
	m->used = nu;
	m->cap = ncap;
	m->len = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.used[i])
			map_insert_fresh(m, old.slots[i].key, old.slots[i].val);
	free(old.slots);
	free(old.used);
	return 0;
}

int map_put(struct map *m, uint64_t key, uint64_t val)
{
	uint64_t *v = map_get(m, key);
	if (v) {
		*v = val;
		return 0;
	}
	if ((m->len + 1) * 10 > m->cap * 7 && map_grow(m) != 0)
		return DIAG_ENOMEM;
	map_insert_fresh(m, key, val);
	return 0;
}

uint64_t *map_ref(struct map *m, uint64_t key)
{
	if ((m->len + 1) * 10 > m->cap * 7 && map_grow(m) != 0) {
		uint64_t *v = map_get(m, key); /* present keys need no room */
		return v;
	}
	size_t i = map_home(m, key);
	for (; m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->slots[i].key == key)
			return &m->slots[i].val;
	m->used[i] = 1;
	m->slots[i].key = key;
	m->slots[i].val = 0;
	m->len++;
	return &m->slots[i].val;
}

bool map_del(struct map *m, uint64_t key)
{
	if (m->len == 0)
		return false;
	size_t mask = m->cap - 1;
	size_t i = map_home(m, key);
	for (;; i = (i + 1) & mask) {
		if (!m->used[i])
			return false;
		if (m->slots[i].key == key)
			break;
	}
	/* Backward shift: pull later members of the probe run into the hole
	 * unless their home lies cyclically in (hole, j]. */
	size_t hole = i;
	for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
		size_t home = map_home(m, m->slots[j].key);
		bool stays = hole <= j ? (hole < home && home <= j)
				       : (hole < home || home <= j);
		if (stays)
			continue;
		m->slots[hole] = m->slots[j];
		hole = j;
	}
	m->used[hole] = 0;
	m->len--;
	return true;
}
