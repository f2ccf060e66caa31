/* SPDX-License-Identifier: Apache-2.0
 * utf8: where the characters of UTF-8 text start and end, for code that
 * cuts text to fit a buffer or checks it before printing.
 *
 * Well-formed means RFC 3629: no overlong forms, no surrogates (U+D800 to
 * U+DFFF), nothing above U+10FFFF.  Nothing here allocates; every function
 * reads at most the bytes it is given.
 */
#ifndef BASE_UTF8_H
#define BASE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* U+FFFD, the replacement character, as UTF-8. */
#define UTF8_REPLACEMENT "\xEF\xBF\xBD"

/* Length (1 to 4) of the well-formed character that starts s[0..n), its
 * code point in *cp (cp may be NULL); 0 when s[0..n) does not start with
 * one (n 0, a stray continuation byte, a sequence cut short, an overlong
 * form, a surrogate, a code point above U+10FFFF). */
size_t utf8_decode(const char *s, size_t n, uint32_t *cp);

/* The longest prefix of s[0..len) of at most max bytes that does not end
 * inside a character: max itself, or less when s[max] continues a
 * character begun before it (a lead byte followed by continuation bytes up
 * to s[max]).  len when max >= len.  A prefix of well-formed text so cut
 * is well-formed. */
size_t utf8_cut(const char *s, size_t len, size_t max);

/* True when the code point is a control character: C0 (below U+0020),
 * DEL (U+007F) or C1 (U+0080 to U+009F); terminals act on these. */
int utf8_is_control(uint32_t cp);

#endif
