/* SPDX-License-Identifier: Apache-2.0
 * import_tracelab: the importer of TraceLab normalised round traces
 * (docs/importers.md says how each field maps).  Used through traces/import.h
 * only.
 */
#ifndef TRACES_IMPORT_TRACELAB_H
#define TRACES_IMPORT_TRACELAB_H

struct imp_format;

extern const struct imp_format imp_fmt_tracelab;

#endif
