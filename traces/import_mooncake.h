/* SPDX-License-Identifier: Apache-2.0
 * import_mooncake: the importer of Mooncake request traces (docs/importers.md
 * says how each field maps).  Used through traces/import.h only.
 */
#ifndef TRACES_IMPORT_MOONCAKE_H
#define TRACES_IMPORT_MOONCAKE_H

struct imp_format;

extern const struct imp_format imp_fmt_mooncake;

#endif
