/* SPDX-License-Identifier: Apache-2.0
 * reqcsv: the per-request CSV, streamed (see reqcsv.h).  Only the free-text
 * reason needs quoting; libcsv does it. */
#include "reports/reqcsv.h"

#include "base/diag.h"
#include "sim/results.h"

#include <csv.h>
#include <inttypes.h>
#include <string.h>

static const char HEADER[] =
	"session,task,call,replica,arrival_ms,router_wait_ms,queue_ms,ttft_ms,tpot_ms,e2e_ms,"
	"prompt_tokens,cached_tokens,computed_prefill_tokens,output_tokens,preemptions,outcome,"
	"reason\n";

/* A non-negative nanosecond span as exact milliseconds, then a comma. */
static void put_ms(FILE *fp, int64_t ns)
{
	if (ns < 0) /* never for a completed call; kept readable if it were */
		fprintf(fp, "-%" PRId64 ".%06" PRId64 ",", -ns / 1000000, -ns % 1000000);
	else
		fprintf(fp, "%" PRId64 ".%06" PRId64 ",", ns / 1000000, ns % 1000000);
}

static void on_request(void *ctx, const struct res_request *r)
{
	struct reqcsv *c = ctx;
	FILE *fp = c->fp;
	bool ok = r->status == RES_COMPLETED;
	fprintf(fp, "%016" PRIx64 ",", r->session);
	if (r->task)
		fprintf(fp, "%016" PRIx64, r->task);
	fprintf(fp, ",%" PRId64 ",", r->seq);
	if (ok && r->replica >= 0)
		fprintf(fp, "%" PRId32, r->replica);
	fputc(',', fp);
	put_ms(fp, r->arrival_ns);
	if (ok) {
		put_ms(fp, r->dispatched_ns - r->arrival_ns);
		put_ms(fp, r->scheduled_ns - r->dispatched_ns);
		put_ms(fp, r->first_token_ns - r->arrival_ns);
		if (r->output_tokens > 1)
			fprintf(fp, "%.9f", (double)(r->done_ns - r->first_token_ns) / 1e6 /
						(double)(r->output_tokens - 1));
		fputc(',', fp);
		put_ms(fp, r->done_ns - r->arrival_ns);
	} else {
		fputs(",,,,,", fp);
	}
	fprintf(fp, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId32 ",%s,", r->prompt_tokens,
		r->cached_prompt_tokens, r->computed_prefill_tokens, r->output_tokens, r->preemptions,
		ok ? "completed" : "rejected");
	if (!ok && r->reason)
		csv_fwrite(fp, r->reason, strlen(r->reason));
	if (c->n_backends > 0) {
		bool api = ok && r->backend > 0 && r->backend <= c->n_backends;
		const char *route = ok ? res_route_name(r->route) : NULL;
		const char *name = api ? c->backends[r->backend - 1] : "local";
		fputc(',', fp);
		if (ok && strpbrk(name, ",\"\r\n"))
			csv_fwrite(fp, name, strlen(name));
		else if (ok)
			fputs(name, fp);
		fprintf(fp, ",%s", route ? route : "");
	}
	fputc('\n', fp);
	c->rows++;
	if (c->next.request)
		c->next.request(c->next.ctx, r);
}

static void on_itl_run(void *ctx, const struct res_itl_run *r)
{
	struct reqcsv *c = ctx;
	if (c->next.itl_run)
		c->next.itl_run(c->next.ctx, r);
}

static void on_busy(void *ctx, const struct res_busy *b)
{
	struct reqcsv *c = ctx;
	if (c->next.busy)
		c->next.busy(c->next.ctx, b);
}

static void on_session(void *ctx, const struct res_span *s)
{
	struct reqcsv *c = ctx;
	if (c->next.session)
		c->next.session(c->next.ctx, s);
}

static void on_task(void *ctx, const struct res_span *t)
{
	struct reqcsv *c = ctx;
	if (c->next.task)
		c->next.task(c->next.ctx, t);
}

static void on_sample(void *ctx, const struct res_sample *smp)
{
	struct reqcsv *c = ctx;
	if (c->next.sample)
		c->next.sample(c->next.ctx, smp);
}

static void on_replica(void *ctx, const struct res_replica *r)
{
	struct reqcsv *c = ctx;
	if (c->next.replica)
		c->next.replica(c->next.ctx, r);
}

void reqcsv_init(struct reqcsv *c, FILE *fp, struct res_sink next)
{
	*c = (struct reqcsv){.fp = fp, .next = next};
	fputs(HEADER, fp);
}

void reqcsv_init_backends(struct reqcsv *c, FILE *fp, struct res_sink next,
			  const char *const *names, int32_t n)
{
	*c = (struct reqcsv){.fp = fp, .next = next, .backends = names, .n_backends = n};
	fwrite(HEADER, 1, sizeof(HEADER) - 2, fp);
	fputs(n > 0 ? ",backend,route\n" : "\n", fp);
}

struct res_sink reqcsv_sink(struct reqcsv *c)
{
	return (struct res_sink){.ctx = c, .request = on_request, .itl_run = on_itl_run,
				 .busy = on_busy, .session = on_session, .task = on_task,
				 .replica = on_replica, .sample = on_sample};
}

int reqcsv_status(const struct reqcsv *c, const char *name, struct diag *d)
{
	if (ferror(c->fp))
		return diag_set(d, DIAG_EIO, "%s: write failed", name);
	return 0;
}
