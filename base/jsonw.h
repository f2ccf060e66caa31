/* SPDX-License-Identifier: Apache-2.0
 * jsonw: the one way agentcap writes a JSON string or number by hand.
 *
 * The writers that stream large documents (reports, catalogue listings,
 * calibration files) print with fprintf rather than building a cJSON tree;
 * they all escape strings here, so every file agrees on the escaping.
 */
#ifndef BASE_JSONW_H
#define BASE_JSONW_H

#include <stdio.h>

/* s as a JSON string: '"' and '\\' escaped, newline, return and tab as
 * \n \r \t, other control bytes and DEL as \u00XX; bytes >= 0x80 as they
 * are (UTF-8 passes through).  NULL prints null. */
void jsonw_str(FILE *fp, const char *s);

/* v with 10 significant digits; NaN and infinities (which JSON lacks)
 * print null. */
void jsonw_num(FILE *fp, double v);

#endif
