/* SPDX-License-Identifier: Apache-2.0
 * hash: byte-string hashing (FNV-1a over 8-byte words, finalised by a mixer). */
#include "base/hash.h"

#include <string.h>

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = hash_mix64(seed ^ (uint64_t)len);
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ hash_mix64(w)) * 0x100000001b3ULL;
		p += 8;
		len -= 8;
	}
	uint64_t tail = 0;
	for (size_t i = 0; i < len; i++)
		tail |= (uint64_t)p[i] << (8 * i);
	h = (h ^ hash_mix64(tail ^ 0xa5a5a5a5ULL)) * 0x100000001b3ULL;
	return hash_mix64(h);
}

uint64_t hash_str(const char *s, uint64_t seed)
{
	return hash_bytes(s, strlen(s), seed);
}
