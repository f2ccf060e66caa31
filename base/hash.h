/* SPDX-License-Identifier: Apache-2.0
 * hash: 64-bit hashing for content ids, KV block chains and hash maps.
 *
 * Deterministic across runs and machines (no per-process seed): block hashes
 * and content ids must agree between a writer and a later reader.  Not
 * cryptographic; salted ids for privacy are built on top with a secret salt.
 */
#ifndef BASE_HASH_H
#define BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Finaliser with full avalanche (splitmix64's). */
static inline uint64_t hash_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Order-sensitive combination of a running hash with one more value. */
static inline uint64_t hash_combine(uint64_t h, uint64_t v)
{
	return hash_mix64(h ^ (hash_mix64(v) + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2)));
}

/* Hash of a byte string, seeded. */
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed);

/* Hash of a NUL-terminated string, seeded. */
uint64_t hash_str(const char *s, uint64_t seed);

#endif
