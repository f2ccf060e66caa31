/* SPDX-License-Identifier: Apache-2.0
 * sweep_mpi: the cells of a sweep spread over the ranks of an MPI job (see
 * sweep_mpi.h).  The only file that includes mpi.h.
 *
 * Messages (MPI_COMM_WORLD):
 *   TAG_RESULT  worker -> 0: int64 cell (-1: ready, nothing done yet),
 *               int32 status (0 or a DIAG code), then the row, or the
 *               error's message; a worker sends one after each cell and
 *               one to start;
 *   TAG_WORK    0 -> worker: int64 cell to run, or -1: stop.
 * Rank 0 answers every TAG_RESULT with a TAG_WORK, so each worker has at
 * most one cell at a time, and cells go to whoever asks first.  Rank 0's
 * own share runs on one extra thread that takes cells from the same queue
 * (MPI itself is called from the main thread only: MPI_THREAD_FUNNELED).
 * On the first error (in cell order) or a failed write no more cells are
 * handed out; rank 0 waits for every worker to stop, then returns it.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli/sweep_mpi.h"

#include "base/diag.h"
#include "plan/sweep.h"

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_RESULT = 1, TAG_WORK = 2 };

/* Head of a TAG_RESULT message. */
struct head {
	int64_t cell;
	int32_t rc;
	int32_t pad;
};

int sweep_mpi_init(int *argc, char ***argv, int *rank, int *size, struct diag *d)
{
	int provided = 0;
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
		return diag_set(d, DIAG_EINTERNAL, "sweep: MPI could not start");
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return 0;
}

int sweep_mpi_agree(int rc)
{
	int all = rc;
	MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	return all;
}

void sweep_mpi_finalize(void)
{
	MPI_Finalize();
}

/* Send a TAG_RESULT: the cell, its status and text (row or message). */
static void send_result(int64_t cell, int32_t rc, const char *text)
{
	size_t len = text ? strlen(text) : 0;
	char *buf = malloc(sizeof(struct head) + len);
	struct head h = {.cell = cell, .rc = rc};
	if (!buf) { /* say so without the text */
		h.rc = DIAG_ENOMEM;
		MPI_Send(&h, (int)sizeof(h), MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
		return;
	}
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), text, len);
	MPI_Send(buf, (int)(sizeof(h) + len), MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
	free(buf);
}

static int worker(const struct sweep *sw)
{
	send_result(-1, 0, NULL);
	for (;;) {
		int64_t cell = -1;
		MPI_Recv(&cell, 1, MPI_INT64_T, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (cell < 0)
			return 0;
		struct diag d;
		diag_init(&d);
		char *row = NULL;
		int rc = sweep_cell_run(sw, (size_t)cell, &row, &d);
		send_result(cell, rc, rc == 0 ? row : d.msg);
		free(row);
	}
}

/* Rank 0's state, shared with its compute thread under mu. */
struct coord {
	struct sweep *sw;
	struct sweep_out *out;
	struct sweep_stats *st;
	pthread_mutex_t mu;
	size_t *todo;          /* cells to run, in cell order */
	size_t n, handed, written;
	char **row;            /* per todo entry: the row once run */
	int *rc;               /* per todo entry: its status */
	char **msg;            /* per todo entry: its error message */
	bool *finished;
	bool stop;             /* hand out nothing more */
	int err;               /* the first error, in cell order */
	struct diag d;
};

/* The todo index of cell, or SIZE_MAX. */
static size_t todo_index(const struct coord *c, int64_t cell)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((int64_t)c->todo[mid] < cell)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n && (int64_t)c->todo[lo] == cell ? lo : SIZE_MAX;
}

/* The next cell to hand out, or -1.  Under mu. */
static int64_t next_cell(struct coord *c)
{
	if (c->stop || c->handed >= c->n)
		return -1;
	return (int64_t)c->todo[c->handed++];
}

/* Record cell's outcome (row or message taken).  Under mu. */
static void record(struct coord *c, size_t k, int rc, char *text)
{
	c->finished[k] = true;
	c->rc[k] = rc;
	if (rc == 0)
		c->row[k] = text;
	else
		c->msg[k] = text;
	c->st->run++;
}

/* Append the rows now in order.  Under mu. */
static void flush(struct coord *c)
{
	while (c->written < c->n && !c->err && c->finished[c->written]) {
		size_t k = c->written;
		if (c->rc[k] != 0) {
			c->err = diag_set(&c->d, c->rc[k], "%s", c->msg[k] ? c->msg[k] : "out of memory");
			break;
		}
		int rc = sweep_out_append(c->out, c->row[k], strlen(c->row[k]), &c->d);
		if (rc == 0)
			rc = sweep_cell_take(c->sw, c->todo[k], c->row[k], &c->d);
		c->row[k] = NULL;
		if (rc != 0) {
			c->err = rc;
			break;
		}
		c->st->written++;
		c->written++;
	}
	if (c->err)
		c->stop = true;
}

static void *local_worker(void *arg)
{
	struct coord *c = arg;
	for (;;) {
		pthread_mutex_lock(&c->mu);
		int64_t cell = next_cell(c);
		pthread_mutex_unlock(&c->mu);
		if (cell < 0)
			return NULL;
		struct diag d;
		diag_init(&d);
		char *row = NULL;
		int rc = sweep_cell_run(c->sw, (size_t)cell, &row, &d);
		char *text = rc == 0 ? row : strdup(d.msg);
		pthread_mutex_lock(&c->mu);
		record(c, todo_index(c, cell), rc, text);
		flush(c);
		pthread_mutex_unlock(&c->mu);
	}
}

/* Receive one TAG_RESULT that Iprobe found, record it and answer.
 * Returns 1 when that worker was told to stop. */
static int serve(struct coord *c, const MPI_Status *probe)
{
	int count = 0;
	MPI_Get_count(probe, MPI_BYTE, &count);
	char *buf = malloc((size_t)count + 1);
	struct head h = {.cell = -1, .rc = DIAG_ENOMEM};
	MPI_Status st;
	if (buf) {
		MPI_Recv(buf, count, MPI_BYTE, probe->MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
		memcpy(&h, buf, sizeof(h));
	} else {
		/* take it off the line anyway, into the head alone */
		MPI_Recv(&h, (int)sizeof(h), MPI_BYTE, probe->MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD,
			 &st);
		h.rc = DIAG_ENOMEM;
	}
	pthread_mutex_lock(&c->mu);
	if (h.cell >= 0) {
		size_t k = todo_index(c, h.cell);
		char *text = NULL;
		if (buf) {
			size_t len = (size_t)count - sizeof(h);
			text = malloc(len + 1);
			if (text) {
				memcpy(text, buf + sizeof(h), len);
				text[len] = '\0';
			}
		}
		if (k == SIZE_MAX) {
			free(text);
			c->err = c->err ? c->err : diag_set(&c->d, DIAG_EINTERNAL, "sweep: rank %d "
							    "returned cell %lld, which was not handed out",
							    probe->MPI_SOURCE, (long long)h.cell);
			c->stop = true;
		} else {
			record(c, k, text ? h.rc : DIAG_ENOMEM, text);
			flush(c);
		}
	}
	int64_t next = next_cell(c);
	pthread_mutex_unlock(&c->mu);
	free(buf);
	MPI_Send(&next, 1, MPI_INT64_T, probe->MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
	return next < 0;
}

static int coordinator(struct sweep *sw, struct sweep_out *out, struct sweep_stats *st,
		       int size, struct diag *d)
{
	struct coord *c = calloc(1, sizeof(*c));
	size_t n = sweep_cells(sw) - sweep_done(sw);
	if (!c)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	c->sw = sw;
	c->out = out;
	c->st = st;
	diag_init(&c->d);
	pthread_mutex_init(&c->mu, NULL);
	c->todo = calloc(n + 1, sizeof(*c->todo));
	c->row = calloc(n + 1, sizeof(*c->row));
	c->msg = calloc(n + 1, sizeof(*c->msg));
	c->rc = calloc(n + 1, sizeof(*c->rc));
	c->finished = calloc(n + 1, sizeof(*c->finished));
	int rc = c->todo && c->row && c->msg && c->rc && c->finished
			 ? 0 : diag_set(d, DIAG_ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < sweep_cells(sw); i++)
		if (!sweep_cell_done(sw, i))
			c->todo[c->n++] = i;
	if (rc != 0)
		c->stop = true; /* tell the workers to stop, below */
	/* a second thread only where MPI allows threads beside its own */
	int level = MPI_THREAD_SINGLE;
	MPI_Query_thread(&level);
	pthread_t th;
	bool thread = rc == 0 && level >= MPI_THREAD_FUNNELED &&
		      pthread_create(&th, NULL, local_worker, c) == 0;
	int running = size - 1;
	while (running > 0) {
		int flag = 0;
		MPI_Status probe;
		MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, &probe);
		if (flag) {
			running -= serve(c, &probe);
			continue;
		}
		struct timespec pause = {0, 1000000}; /* 1 ms: nothing to do */
		nanosleep(&pause, NULL);
	}
	if (thread) {
		pthread_join(th, NULL);
	} else if (rc == 0) {
		/* no thread: rank 0 runs what the workers left */
		local_worker(c);
	}
	pthread_mutex_lock(&c->mu);
	flush(c);
	pthread_mutex_unlock(&c->mu);
	if (rc == 0 && c->err)
		rc = diag_set(d, c->err, "%s", c->d.msg);
	for (size_t k = 0; k < c->n; k++) {
		free(c->row[k]);
		free(c->msg[k]);
	}
	pthread_mutex_destroy(&c->mu);
	free(c->todo);
	free(c->row);
	free(c->msg);
	free(c->rc);
	free(c->finished);
	free(c);
	return rc;
}

int sweep_mpi_run(struct sweep *sw, struct sweep_out *out, struct sweep_stats *st,
		  struct diag *d)
{
	int rank = 0, size = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank != 0)
		return worker(sw);
	memset(st, 0, sizeof(*st));
	st->skipped = (int64_t)sweep_done(sw);
	return coordinator(sw, out, st, size, d);
}
