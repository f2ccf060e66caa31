/* SPDX-License-Identifier: Apache-2.0
 * fuzz_trace_reader: arbitrary bytes as a trace file, format detected as
 * agentcap replay does (canonical or Mooncake, plain or gzip by magic), read
 * strictly and, when that fails on a line, again skipping bad lines. */
#include "fuzz/fuzz_util.h"

#include "base/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_write("trace", data, size);
	if (fuzz_read_trace(path, TRACE_FMT_AUTO, false) == DIAG_EINPUT)
		fuzz_read_trace(path, TRACE_FMT_AUTO, true);
	return 0;
}
