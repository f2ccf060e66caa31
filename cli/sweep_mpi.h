/* SPDX-License-Identifier: Apache-2.0
 * sweep_mpi: `agentcap sweep` across the ranks of an MPI job.  Built only
 * with -DAGENTCAP_MPI=ON; cli/sweep_mpi.c is the one file of the program
 * that calls MPI, so the default build needs no MPI anywhere.
 *
 * Rank 0 hands out cells one at a time as ranks ask for work (a dynamic
 * queue: a rank that finishes early asks again, so long and short cells
 * even out), runs cells itself on one thread meanwhile, gathers every row
 * and appends them to the output in cell order, as a run on threads does.
 * The other ranks load the same grid (the same files must be readable on
 * every machine: a shared file system), replay the cells they are given,
 * one at a time, and send back the row or the error.  A row depends on the
 * cell only, so the rows are the same with 1 rank or K.
 */
#ifndef CLI_SWEEP_MPI_H
#define CLI_SWEEP_MPI_H

#include <stdbool.h>

struct diag;
struct sweep;
struct sweep_out;
struct sweep_stats;

/* Start MPI; *rank and *size of this process in MPI_COMM_WORLD.  0 or
 * DIAG_EINTERNAL. */
int sweep_mpi_init(int *argc, char ***argv, int *rank, int *size, struct diag *d);

/* The worst (lowest) of every rank's rc, the same on every rank. */
int sweep_mpi_agree(int rc);

/* Run the cells not done.  On rank 0 out is the output (opened, resumed)
 * and st what ran; on the other ranks out and st are unused.  0 or the
 * first error in cell order (on rank 0; a worker returns 0 once told to
 * stop). */
int sweep_mpi_run(struct sweep *sw, struct sweep_out *out, struct sweep_stats *st,
		  struct diag *d);

void sweep_mpi_finalize(void);

#endif
