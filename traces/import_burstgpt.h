/* SPDX-License-Identifier: Apache-2.0
 * import_burstgpt: the importer of BurstGPT CSV traces (docs/importers.md
 * says how each field maps).  Used through traces/import.h only.
 */
#ifndef TRACES_IMPORT_BURSTGPT_H
#define TRACES_IMPORT_BURSTGPT_H

struct imp_format;

extern const struct imp_format imp_fmt_burstgpt;

#endif
