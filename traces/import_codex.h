/* SPDX-License-Identifier: Apache-2.0
 * import_codex: the importer of Codex CLI rollouts (docs/importers.md says
 * how each field maps).  Used through traces/import.h only.
 */
#ifndef TRACES_IMPORT_CODEX_H
#define TRACES_IMPORT_CODEX_H

struct imp_format;

extern const struct imp_format imp_fmt_codex;

#endif
