/* SPDX-License-Identifier: Apache-2.0 */
#include "base/jsonw.h"

#include <math.h>

void jsonw_str(FILE *fp, const char *s)
{
	if (!s) {
		fputs("null", fp);
		return;
	}
	fputc('"', fp);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", fp); break;
		case '\\': fputs("\\\\", fp); break;
		case '\n': fputs("\\n", fp); break;
		case '\r': fputs("\\r", fp); break;
		case '\t': fputs("\\t", fp); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(fp, "\\u%04x", *p);
			else
				fputc(*p, fp);
		}
	}
	fputc('"', fp);
}

void jsonw_num(FILE *fp, double v)
{
	if (isfinite(v))
		fprintf(fp, "%.10g", v);
	else
		fputs("null", fp);
}
