/* SPDX-License-Identifier: Apache-2.0
 * cli: the agentcap command line.  Each subcommand is one cmd_<name>
 * function listed once in the table of cli/main.c.  Only this folder prints
 * to the terminal, reads argv or the environment, and chooses exit codes:
 * 0 ok, 1 the answer is "no", 2 bad usage or input, 3 internal error.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <stddef.h>
#include <stdio.h>

struct diag;

#define AGENTCAP_VERSION "0.1.0"

/* Subcommands: argv[0] is the subcommand name. */
int cmd_replay(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_catalog(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_fit_params(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_whatif(int argc, char **argv);
int cmd_size(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_sweep(int argc, char **argv);

struct scenario;
struct catalog;
struct fitparams_fit;

/* The table of fitted parameters (fit-params, calibrate): target, id,
 * family prefix, field, the value before (headed `before`) and the fitted
 * one, the field column as wide as its longest name. */
void cli_print_params(const struct fitparams_fit *fit, const char *before);

/* A result held in memory: write to fp between open and close, then read
 * text[0..len).  (cli/cmd_report.c) */
struct cli_buf {
	FILE *fp;
	char *text;
	size_t len;
};
int cli_buf_open(struct cli_buf *b, struct diag *d);
/* Close fp, keeping text; 0 or DIAG_ENOMEM. */
int cli_buf_close(struct cli_buf *b, struct diag *d);
void cli_buf_free(struct cli_buf *b);

/* Write text[0..len) to path as every output is written (base/outfile.h).
 * 0 or a DIAG code with d filled. */
int cli_text_write(const char *path, const char *text, size_t len, struct diag *d);

/* Write the HTML page of the JSON result json[0..len) to path as every
 * output is written (base/outfile.h), the page drawn whole in memory first,
 * so that nothing is written when it cannot be drawn.  name is the result's
 * origin for messages.  0 or a DIAG code with d filled. */
int cli_html_write(const char *path, const char *json, size_t len, const char *name,
		   struct diag *d);

/* Print "agentcap: <msg>" to stderr and return the exit status for code. */
int cli_fail(int code, const char *msg);

#endif
