/* SPDX-License-Identifier: Apache-2.0
 * cmd_sweep: `agentcap sweep GRID` - one replay per cell of a grid of
 * scenario overrides x traces x seeds, one row per cell (plan/sweep.h), on
 * the threads of one machine or, in a build with MPI, on the ranks of an
 * MPI job (cli/sweep_mpi.h). */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "cli/args.h"
#ifdef AGENTCAP_MPI
#include "cli/sweep_mpi.h"
#endif

#include "base/diag.h"
#include "base/outfile.h"
#include "base/pool.h"
#include "models/catalog.h"
#include "plan/sweep.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char SWEEP_HELP[] =
	"NAME\n"
	"    agentcap sweep - replay every cell of a grid of scenarios x traces x seeds\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap sweep GRID.json [-o ROWS.jsonl] [--csv FILE] [--jobs J]\n"
	"                   [--catalog DIR] [--quiet]\n"
	"    mpirun -n K agentcap sweep GRID.json -o ROWS.jsonl   (a build with MPI)\n"
	"\n"
	"DESCRIPTION\n"
	"    GRID.json names a base scenario, the traces, the seeds and the scenario\n"
	"    keys to vary: \"grid\" (every combination of the values listed per key)\n"
	"    or \"cells\" (a list of override objects) (docs/scale.md).  Every cell is\n"
	"    checked before any runs: a bad key or value is an error at its line\n"
	"    and column.  Each cell is one replay, as agentcap replay runs it, and\n"
	"    gives one row of JSON Lines: the cell, its overrides, trace and seed,\n"
	"    TTFT, TPOT and E2E latency percentiles, goodput, SLO attainment and\n"
	"    the answer, GPU busy fraction, prefix-cache hit rate, and with\n"
	"    \"cost\": true the USD per accepted task of buying or renting.\n"
	"\n"
	"    Rows are appended to ROWS.jsonl in cell order as cells finish.  Run\n"
	"    the same command again after an interruption: cells whose row is\n"
	"    there (matched by a key hashing the cell's inputs) are skipped, and a\n"
	"    torn last line is dropped.  The rows do not depend on --jobs or on\n"
	"    the number of MPI ranks.\n"
	"\n"
	"OPTIONS\n"
	"    -o, --output FILE   the rows, JSON Lines, appended (default '-':\n"
	"                        standard output, nothing resumed)\n"
	"    --csv FILE          also every row as CSV (one column per field,\n"
	"                        nested ones dotted: ttft_ms.p95), written when the\n"
	"                        sweep ends\n"
	"    --jobs J            cells at once (1..256; default: the online cores);\n"
	"                        under MPI each rank replays one cell at a time\n"
	"    --catalog DIR       hardware and model catalogue (default: built in)\n"
	"    --quiet             no summary on standard error\n"
	"\n"
	"EXIT STATUS\n"
	"    0 every cell ran (whatever its answer: see each row's \"answer\"); 2 bad\n"
	"    usage or input (the grid, a trace, the output); 3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap sweep grid.json -o rows.jsonl --csv rows.csv\n"
	"    mpirun -n 16 --hostfile hosts agentcap sweep grid.json -o rows.jsonl\n";

struct sweep_args {
	const char *grid;
	const char *out;
	const char *csv;
	const char *catalog;
	int64_t jobs;
	bool quiet;
};

static int parse_args(int argc, char **argv, struct sweep_args *a)
{
	enum { O_CSV = 1000, O_JOBS, O_CATALOG, O_QUIET, O_HELP };
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"csv", required_argument, NULL, O_CSV},
		{"jobs", required_argument, NULL, O_JOBS},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"quiet", no_argument, NULL, O_QUIET},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	a->out = "-";
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case O_CSV: a->csv = optarg; break;
		case O_JOBS:
			if (!args_int(optarg, 1, POOL_MAX_JOBS, &a->jobs))
				return args_bad("sweep", "--jobs", optarg, "an integer 1..256");
			break;
		case O_CATALOG: a->catalog = optarg; break;
		case O_QUIET: a->quiet = true; break;
		case 'h':
		case O_HELP:
			fputs(SWEEP_HELP, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap sweep: unknown or incomplete option '%s' (see agentcap "
				"sweep --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "agentcap sweep: expected one GRID file (see agentcap sweep --help)\n");
		return 2;
	}
	a->grid = argv[optind];
	if (a->csv && strcmp(a->csv, "-") == 0 && strcmp(a->out, "-") == 0) {
		fprintf(stderr, "agentcap sweep: --csv - and the rows would both go to standard output "
			"(expected -o FILE with --csv -)\n");
		return 2;
	}
	return 0;
}

/* Ranks of the MPI job this process was started in, from the launchers'
 * environment (Open MPI's mpirun, PMI/PMIx as Slurm's srun sets it); 1 when
 * none. */
static long launched_ranks(void)
{
	static const char *const VARS[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", NULL};
	for (int i = 0; VARS[i]; i++) {
		const char *v = getenv(VARS[i]);
		if (v && atol(v) > 0)
			return atol(v);
	}
	return 1;
}

/* The rows as CSV to path, written whole. */
static int write_csv(const char *path, const struct sweep *sw, struct diag *d)
{
	struct outfile of;
	int rc = outfile_open(&of, path, d);
	if (rc != 0)
		return rc;
	struct diag wd;
	diag_init(&wd);
	return outfile_finish(&of, sweep_csv(of.fp, sw, &wd), &wd, d);
}

int cmd_sweep(int argc, char **argv)
{
	int rank = 0, size = 1;
	struct diag d;
	diag_init(&d);
#ifdef AGENTCAP_MPI
	bool mpi = launched_ranks() > 1;
	if (mpi && sweep_mpi_init(&argc, &argv, &rank, &size, &d) != 0)
		return cli_fail(d.code, d.msg);
#else
	/* every rank would run every cell into the same file: refused (by
	 * each rank: the launcher may stop the others before one prints) */
	if (launched_ranks() > 1)
		return cli_fail(DIAG_EINPUT, "sweep: started as one of several MPI ranks, but this "
				"agentcap was built without MPI (expected a build configured with "
				"-DAGENTCAP_MPI=ON, or no mpirun: --jobs runs the cells on this "
				"machine's cores)");
#endif
	struct sweep_args a;
	int prc = parse_args(argc, argv, &a);
	if (prc != 0) {
#ifdef AGENTCAP_MPI
		if (mpi)
			sweep_mpi_finalize();
#endif
		return prc < 0 ? 0 : prc;
	}
	struct catalog *cat = NULL;
	struct sweep *sw = NULL;
	struct pool *pool = NULL;
	struct sweep_out out = {.fd = -1};
	struct sweep_stats st = {0};
	/* checks first: the outputs, the grid and every cell */
	int rc = 0;
	if (rank == 0 && a.csv)
		rc = outfile_check(a.csv, &d);
	if (rc == 0 && rank == 0)
		rc = outfile_distinct((const char *const[]){"-o", "--csv"},
				      (const char *const[]){a.out, a.csv}, 2, &d);
	if (rc == 0)
		rc = catalog_load(&cat, a.catalog, &d);
	if (rc == 0)
		rc = sweep_load(&sw, a.grid, cat, &d);
	if (rc == 0 && rank == 0)
		rc = sweep_out_open(&out, a.out, sw, &d);
#ifdef AGENTCAP_MPI
	if (mpi) {
		int all = sweep_mpi_agree(rc);
		if (rc == 0 && all != 0) /* another rank failed: it says why */
			rc = diag_set(&d, all, "another rank could not load the sweep");
		if (rc == 0)
			rc = sweep_mpi_run(sw, rank == 0 ? &out : NULL, &st, &d);
	} else
#endif
	{
		if (rc == 0) {
			long cores = sysconf(_SC_NPROCESSORS_ONLN);
			int64_t jobs = a.jobs ? a.jobs : cores < 1 ? 1 : cores > POOL_MAX_JOBS
										 ? POOL_MAX_JOBS : cores;
			rc = pool_new(&pool, (int32_t)jobs, &d);
		}
		if (rc == 0) {
			struct sweep_opts o = {.pool = pool, .out = &out};
			rc = sweep_run(sw, &o, &st, &d);
		}
	}
	if (rank == 0 && out.fd >= 0) {
		struct diag cd;
		diag_init(&cd);
		int crc = sweep_out_close(&out, &cd);
		if (rc == 0 && crc != 0) {
			rc = crc;
			d = cd;
		}
	}
	if (rc == 0 && rank == 0 && a.csv)
		rc = write_csv(a.csv, sw, &d);
	if (rank == 0 && !a.quiet && sw && (rc == 0 || st.run > 0))
		fprintf(stderr, "agentcap sweep: %zu cells: %lld already in %s%s, %lld replayed%s, %lld "
			"rows written%s\n", sweep_cells(sw), (long long)st.skipped, a.out,
			out.torn ? " (a torn last line dropped)" : "", (long long)st.run,
			size > 1 ? " across the ranks" : "", (long long)st.written,
			rc == 0 && sweep_done(sw) < sweep_cells(sw) ? " (stopped before the end)" : "");
	pool_free(pool);
	sweep_free(sw);
	catalog_free(cat);
#ifdef AGENTCAP_MPI
	if (mpi)
		sweep_mpi_finalize();
#endif
	if (rc != 0)
		return rank == 0 ? cli_fail(rc, d.msg) : diag_exit_status(rc);
	return 0;
}
