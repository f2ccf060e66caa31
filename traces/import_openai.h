/* SPDX-License-Identifier: Apache-2.0
 * import_openai: the importer of gateway logs of OpenAI chat-completion
 * requests (docs/importers.md says how each field maps).  Used through
 * traces/import.h only.
 */
#ifndef TRACES_IMPORT_OPENAI_H
#define TRACES_IMPORT_OPENAI_H

struct imp_format;

extern const struct imp_format imp_fmt_openai;

#endif
