/* SPDX-License-Identifier: Apache-2.0
 * import_claude: the importer of Claude Code session logs (docs/importers.md
 * says how each field maps).  Used through traces/import.h only.
 */
#ifndef TRACES_IMPORT_CLAUDE_H
#define TRACES_IMPORT_CLAUDE_H

struct imp_format;

extern const struct imp_format imp_fmt_claude;

#endif
