/* SPDX-License-Identifier: Apache-2.0
 * fuzz_trace_gzip: the input is compressed into a gzip stream first, so the
 * reader's gzip path sees well-formed compression of arbitrary text (the
 * plain target covers damaged streams); with an odd first byte the stream
 * is cut short, which must fail as a truncated stream, never as a short
 * run. */
#include "fuzz/fuzz_util.h"

#include "base/diag.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	bool cut = data[0] & 1;
	data++;
	size--;
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	uLong cap = deflateBound(&z, (uLong)size) + 64;
	unsigned char *out = malloc(cap);
	if (!out)
		abort();
	z.next_in = (unsigned char *)data;
	z.avail_in = (uInt)size;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	size_t n = cap - z.avail_out;
	deflateEnd(&z);
	if (cut && n > 20)
		n -= 1 + n % 8; /* drop the trailer and maybe some data */
	const char *path = fuzz_write("trace.gz", out, n);
	free(out);
	int rc = fuzz_read_trace(path, TRACE_FMT_AUTO, false);
	if (cut && n > 20 && rc == 0)
		abort(); /* a cut stream must never read as complete */
	return 0;
}
