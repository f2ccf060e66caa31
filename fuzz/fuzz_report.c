/* SPDX-License-Identifier: Apache-2.0
 * fuzz_report: the HTML page of a JSON result (reports/html.h), the input
 * `agentcap report` reads from any file.  Any bytes give a page or an input
 * error with a message (out of memory aside), never a crash, a hang or a
 * leak; a page that is drawn ends its document. */
#define _POSIX_C_SOURCE 200809L
#include "base/diag.h"
#include "reports/html.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *page = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&page, &len);
	if (!out)
		return 0;
	struct diag d;
	diag_init(&d);
	int rc = html_render(out, (const char *)data, size, "fuzz.json", &d);
	if (fclose(out) != 0) {
		free(page);
		return 0;
	}
	if (rc > 0 || (rc < 0 && !d.msg[0]) || (rc < 0 && rc != DIAG_EINPUT && rc != DIAG_ENOMEM))
		abort();
	if (rc == 0 && (len < 8 || strcmp(page + len - 8, "</html>\n") != 0))
		abort();
	free(page);
	return 0;
}
