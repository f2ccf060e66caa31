/* SPDX-License-Identifier: Apache-2.0
 * import_weka: the importer of WEKA/SemiAnalysis Claude Code traces
 * (docs/importers.md says how each field maps).  Used through traces/import.h
 * only.
 */
#ifndef TRACES_IMPORT_WEKA_H
#define TRACES_IMPORT_WEKA_H

struct imp_format;

extern const struct imp_format imp_fmt_weka;

#endif
