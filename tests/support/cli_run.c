/* SPDX-License-Identifier: Apache-2.0
 * cli_run: run agentcap and capture its output (see cli_run.h). */
#include "tests/support/cli_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

char *cli_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
	if (buf)
		buf[got] = '\0';
	fclose(f);
	if (len)
		*len = got;
	return buf;
}

struct cli_out cli_run(const char *args)
{
	char o[] = "/tmp/agentcap-test-out-XXXXXX", e[] = "/tmp/agentcap-test-err-XXXXXX";
	close(mkstemp(o));
	close(mkstemp(e));
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "%s/cli/agentcap %s >%s 2>%s", AC_BIN_DIR, args, o, e);
	int st = system(cmd);
	struct cli_out r = {.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1};
	r.out = cli_slurp(o, &r.out_len);
	r.err = cli_slurp(e, NULL);
	unlink(o);
	unlink(e);
	return r;
}

void cli_out_free(struct cli_out *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}
