/* SPDX-License-Identifier: Apache-2.0
 * fuzz_trace_mooncake: arbitrary bytes read as a Mooncake trace (the format
 * forced, as with --format mooncake), strictly and skipping bad lines. */
#include "fuzz/fuzz_util.h"

#include "base/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_write("trace", data, size);
	if (fuzz_read_trace(path, TRACE_FMT_MOONCAKE, false) == DIAG_EINPUT)
		fuzz_read_trace(path, TRACE_FMT_MOONCAKE, true);
	return 0;
}
