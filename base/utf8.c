/* SPDX-License-Identifier: Apache-2.0
 * utf8: UTF-8 character boundaries (see utf8.h). */
#include "base/utf8.h"

size_t utf8_decode(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	if (n == 0)
		return 0;
	uint32_t c = u[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
	if (c < 0x80) {
		if (cp)
			*cp = c;
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		c &= 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		c &= 0x0f;
		if (u[0] == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (u[0] == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		c &= 0x07;
		if (u[0] == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (u[0] == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 0; /* a continuation byte, C0/C1 (overlong) or F5..FF */
	}
	if (n < len || u[1] < lo || u[1] > hi)
		return 0;
	c = (c << 6) | (u[1] & 0x3f);
	for (size_t k = 2; k < len; k++) {
		if ((u[k] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (u[k] & 0x3f);
	}
	if (cp)
		*cp = c;
	return len;
}

size_t utf8_cut(const char *s, size_t len, size_t max)
{
	if (max >= len)
		return len;
	const unsigned char *u = (const unsigned char *)s;
	/* back from s[max] over at most three continuation bytes to the byte
	 * that leads them: when it leads a sequence reaching s[max], cut
	 * before it */
	size_t k = max;
	while (k > 0 && max - k < 3 && (u[k] & 0xc0) == 0x80)
		k--;
	if (k == max || (u[k] & 0xc0) == 0x80 || u[k] < 0xc0)
		return max; /* s[max] starts a character, or the bytes before it lead nothing */
	size_t want = u[k] >= 0xf0 ? 4 : u[k] >= 0xe0 ? 3 : 2;
	return k + want > max ? k : max;
}

int utf8_is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}
