/* SPDX-License-Identifier: Apache-2.0
 * import_azure: the importer of Azure LLM inference traces (2023 and 2024
 * CSV) (docs/importers.md says how each field maps).  Used through
 * traces/import.h only.
 */
#ifndef TRACES_IMPORT_AZURE_H
#define TRACES_IMPORT_AZURE_H

struct imp_format;

extern const struct imp_format imp_fmt_azure;

#endif
