/* SPDX-License-Identifier: Apache-2.0
 * scale: resample engineer-days into a larger team (see scale.h).
 *
 * Index.  `refs` holds one entry per source session in file order: where its
 * bytes are in the spill file, its engineer, its start and, once the pass is
 * over, its time of the engineer's day.  Each
 * engineer-day (`cells`) chains its sessions through refs[].next in start
 * order.  The pool of a target day lists cell ids; an idle engineer-day is a
 * cell with no sessions.  `owner` maps every prompt content to the engineer
 * that used it, or to SHARED once a second engineer does.
 *
 * Spill format (private to this file, read back by the same process): the
 * struct trace_session, then per call the struct trace_call, its segments,
 * and when it has texts one length-prefixed string per segment (UINT32_MAX
 * for none).  Pointers inside the written structs are meaningless and are
 * rebuilt on reading.
 */
#include "replay/scale.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/map.h"
#include "base/vec.h"
#include "traces/reader.h"
#include "traces/trace.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY_S 86400.0
#define TOD_BINS 288               /* 5-minute bins of a day */
#define TOD_WORDS ((TOD_BINS + 63) / 64)
#define QUIET_MIN_BINS 48          /* 4 h: shorter quiet spells are no night */
#define MAX_DAY ((int64_t)1 << 20)  /* t <= 1e9 s gives < 11575 days */
#define SHARED UINT64_MAX
#define NO_TEXT UINT32_MAX

#define SEED_SESSION 0x7363616c652d7365ULL /* "scale-se" */
#define SEED_ENGINEER 0x7363616c652d656eULL /* "scale-en" */
#define SEED_TASK 0x7363616c652d7461ULL    /* "scale-ta" */
#define SEED_CONTENT 0x7363616c652d636fULL /* "scale-co" */

struct sref {
	int64_t off;       /* byte offset in the spill file */
	double t_s;        /* the session's start */
	double tod_s;      /* its time of the engineer's day, [0, DAY_S) */
	int64_t engineer;  /* index into the engineers seen */
	int64_t next;      /* next session of the same engineer-day, or -1 */
};

/* One source engineer: when their days begin. */
struct eng {
	uint64_t busy[TOD_WORDS]; /* 5-minute bins of the day with a session start */
	double midnight_s;        /* start of their day, seconds after 00:00 UTC */
	int64_t first_day;        /* their day number of their first session */
	int64_t last_day;         /* ... of their last, counted from first_day */
};

struct cell {
	int64_t engineer;  /* index into the engineers seen */
	int64_t day;       /* the engineer's own day, 0 = their first */
	int64_t head, tail;/* sessions (refs), -1 if idle */
	double tod_min, tod_max;
};

/* One session of the target day being emitted. */
struct out_ref {
	double t_s;
	int64_t day;       /* target day */
	int64_t engineer;  /* target engineer j */
	int64_t ref;       /* refs index */
	int64_t src_engineer;
};

struct scale {
	struct scale_opts o;
	struct scale_info info;
	FILE *spill;
	struct vec refs;          /* struct sref */
	struct vec cells;         /* struct cell */
	struct map cell_of;       /* engineer * MAX_DAY + day -> cell id */
	struct map eng_index;     /* engineer hash -> index */
	struct vec engs;          /* struct eng, by index */
	struct map owner;         /* content -> engineer index + 1, or SHARED */
	gsl_rng *rng;
	int64_t day;              /* next target day to lay out */
	int64_t team_first_day;   /* the earliest engineer's first day */
	double min_midnight_s;    /* earliest engineer midnight */
	struct vec out;           /* struct out_ref of the current target day */
	size_t out_at;
	/* scratch for reading a session back */
	struct vec calls, segs, texts, text_bytes;
};

static int nomem(struct diag *d)
{
	return diag_set(d, DIAG_ENOMEM, "out of memory while scaling the trace");
}

/* The spill file is unnamed (tmpfile(): in /tmp, gone when closed), so the
 * message says where it was; put() and get() clear errno first, so a reason
 * shown is this failure's own. */
static int spill_err(struct diag *d)
{
	int e = errno;
	return diag_set(d, DIAG_EIO, "temporary file for --engineers (unnamed, in /tmp): write or "
			"read failed: %s", e ? strerror(e) : "unexpected end of file");
}

void scale_free(struct scale *sc)
{
	if (!sc)
		return;
	if (sc->spill)
		fclose(sc->spill);
	vec_release(&sc->refs);
	vec_release(&sc->cells);
	map_release(&sc->cell_of);
	map_release(&sc->eng_index);
	vec_release(&sc->engs);
	map_release(&sc->owner);
	if (sc->rng)
		gsl_rng_free(sc->rng);
	vec_release(&sc->out);
	vec_release(&sc->calls);
	vec_release(&sc->segs);
	vec_release(&sc->texts);
	vec_release(&sc->text_bytes);
	free(sc);
}

/* ---- first pass ---- */

static bool put(FILE *f, const void *p, size_t n)
{
	errno = 0;
	return fwrite(p, 1, n, f) == n;
}

static int spill_session(struct scale *sc, const struct trace_session *s, int64_t *off,
			 struct diag *d)
{
	long pos = ftell(sc->spill);
	if (pos < 0)
		return spill_err(d);
	*off = pos;
	bool ok = put(sc->spill, s, sizeof(*s));
	for (size_t i = 0; ok && i < s->n_calls; i++) {
		const struct trace_call *c = &s->calls[i];
		ok = put(sc->spill, c, sizeof(*c)) &&
		     (c->n_segs == 0 || put(sc->spill, c->segs, c->n_segs * sizeof(*c->segs)));
		for (size_t k = 0; ok && c->seg_text && k < c->n_segs; k++) {
			const char *t = c->seg_text[k];
			size_t len = t ? strlen(t) : 0;
			if (t && len >= NO_TEXT)
				return diag_set(d, DIAG_EINPUT, "session at line %ld: a segment text of "
						"%zu bytes is too long to scale", s->line, len);
			uint32_t n = t ? (uint32_t)len : NO_TEXT;
			ok = put(sc->spill, &n, sizeof(n)) && (!t || put(sc->spill, t, len));
		}
	}
	return ok ? 0 : spill_err(d);
}

static int index_session(struct scale *sc, const struct trace_session *s, struct diag *d)
{
	/* engineer */
	uint64_t *e = map_get(&sc->eng_index, s->engineer);
	int64_t eng;
	if (!(s->t_s >= 0 && s->t_s <= TRACE_MAX_SECONDS))
		return diag_set(d, DIAG_EINPUT, "session at line %ld starts at t=%g s (expected 0..1e9)",
				s->line, s->t_s);
	if (e) {
		eng = (int64_t)*e;
	} else {
		eng = (int64_t)sc->eng_index.len;
		struct eng *ne;
		if (map_put(&sc->eng_index, s->engineer, (uint64_t)eng) != 0 ||
		    !(ne = vec_push(&sc->engs)))
			return nomem(d);
		memset(ne, 0, sizeof(*ne));
	}
	struct eng *en = vec_at(&sc->engs, (size_t)eng);
	int bin = (int)(fmod(s->t_s, DAY_S) / (DAY_S / TOD_BINS));
	if (bin >= TOD_BINS)
		bin = TOD_BINS - 1;
	en->busy[bin / 64] |= (uint64_t)1 << (bin % 64);

	/* contents: which engineer uses them */
	for (size_t i = 0; i < s->n_calls; i++)
		for (size_t k = 0; k < s->calls[i].n_segs; k++) {
			uint64_t c = s->calls[i].segs[k].content;
			uint64_t *w = map_get(&sc->owner, c);
			if (!w) {
				if (map_put(&sc->owner, c, (uint64_t)eng + 1) != 0)
					return nomem(d);
			} else if (*w != SHARED && *w != (uint64_t)eng + 1) {
				*w = SHARED;
				sc->info.shared_contents++;
			}
		}

	/* the session's bytes; its engineer-day is known once all are read */
	struct sref *r = vec_push(&sc->refs);
	if (!r)
		return nomem(d);
	int rc = spill_session(sc, s, &r->off, d);
	if (rc != 0)
		return rc;
	r->t_s = s->t_s;
	r->tod_s = 0;
	r->engineer = eng;
	r->next = -1;
	return 0;
}

static bool busy_bin(const struct eng *e, int bin)
{
	return (e->busy[bin / 64] >> (bin % 64)) & 1;
}

/* Where an engineer's day begins: the middle of the longest quiet spell of
 * their days (no session starting, circularly), when it lasts at least
 * QUIET_MIN_BINS; else 00:00 UTC.  Kept within 12 h of 00:00 UTC. */
static double engineer_midnight(const struct eng *e)
{
	int best_len = 0, best_start = 0, first_busy = -1;
	for (int i = 0; i < TOD_BINS; i++)
		if (busy_bin(e, i)) {
			first_busy = i;
			break;
		}
	if (first_busy < 0)
		return 0;
	/* walk one circle starting at a busy bin */
	int run = 0, start = 0;
	for (int k = 1; k <= TOD_BINS; k++) {
		int i = (first_busy + k) % TOD_BINS;
		if (!busy_bin(e, i)) {
			if (run == 0)
				start = i;
			run++;
			continue;
		}
		if (run > best_len) {
			best_len = run;
			best_start = start;
		}
		run = 0;
	}
	if (best_len < QUIET_MIN_BINS)
		return 0;
	double mid = fmod((best_start + best_len / 2.0) * (DAY_S / TOD_BINS), DAY_S);
	return mid < DAY_S / 2 ? mid : mid - DAY_S;
}

/* The engineer's own day number of time t. */
static int64_t own_day(const struct eng *e, double t)
{
	return (int64_t)floor((t - e->midnight_s) / DAY_S);
}

/* After the first pass: each engineer's day, every session's engineer-day
 * (days counted from the engineer's first), and the idle days of every
 * engineer's active span as empty cells. */
static int build_cells(struct scale *sc, struct diag *d)
{
	for (size_t e = 0; e < sc->engs.len; e++) {
		struct eng *en = vec_at(&sc->engs, e);
		en->midnight_s = engineer_midnight(en);
		en->first_day = INT64_MAX;
		en->last_day = 0;
	}
	for (size_t i = 0; i < sc->refs.len; i++) {
		const struct sref *r = vec_at(&sc->refs, i);
		struct eng *en = vec_at(&sc->engs, (size_t)r->engineer);
		int64_t day = own_day(en, r->t_s);
		if (day < en->first_day)
			en->first_day = day;
	}
	sc->team_first_day = INT64_MAX;
	sc->min_midnight_s = 0;
	for (size_t e = 0; e < sc->engs.len; e++) {
		const struct eng *en = vec_at(&sc->engs, e);
		if (en->first_day < sc->team_first_day)
			sc->team_first_day = en->first_day;
		if (en->midnight_s < sc->min_midnight_s)
			sc->min_midnight_s = en->midnight_s;
	}
	if (sc->engs.len == 0)
		sc->team_first_day = 0;
	for (size_t i = 0; i < sc->refs.len; i++) {
		struct sref *r = vec_at(&sc->refs, i);
		struct eng *en = vec_at(&sc->engs, (size_t)r->engineer);
		int64_t own = own_day(en, r->t_s), day = own - en->first_day;
		r->tod_s = r->t_s - en->midnight_s - (double)own * DAY_S;
		if (r->tod_s < 0)
			r->tod_s = 0;
		if (r->tod_s >= DAY_S)
			r->tod_s = nextafter(DAY_S, 0);
		if (day > en->last_day)
			en->last_day = day;
		int64_t id = (int64_t)i;
		uint64_t key = (uint64_t)r->engineer * (uint64_t)MAX_DAY + (uint64_t)day;
		uint64_t *cp = map_get(&sc->cell_of, key);
		struct cell *cl;
		if (cp) {
			cl = vec_at(&sc->cells, (size_t)*cp);
			VEC_AT(&sc->refs, struct sref, (size_t)cl->tail).next = id;
			cl->tail = id;
			if (r->tod_s < cl->tod_min)
				cl->tod_min = r->tod_s;
			if (r->tod_s > cl->tod_max)
				cl->tod_max = r->tod_s;
		} else {
			if (map_put(&sc->cell_of, key, sc->cells.len) != 0 ||
			    !(cl = vec_push(&sc->cells)))
				return nomem(d);
			cl->engineer = r->engineer;
			cl->day = day;
			cl->head = cl->tail = id;
			cl->tod_min = cl->tod_max = r->tod_s;
		}
	}
	for (size_t e = 0; e < sc->engs.len; e++) {
		const struct eng *en = vec_at(&sc->engs, e);
		for (int64_t day = 0; day <= en->last_day; day++) {
			uint64_t key = (uint64_t)e * (uint64_t)MAX_DAY + (uint64_t)day;
			if (map_get(&sc->cell_of, key))
				continue;
			struct cell *cl;
			if (map_put(&sc->cell_of, key, sc->cells.len) != 0 || !(cl = vec_push(&sc->cells)))
				return nomem(d);
			cl->engineer = (int64_t)e;
			cl->day = day;
			cl->head = cl->tail = -1;
		}
	}
	return 0;
}

int scale_open(struct scale **out, struct trace_reader *r, const struct scale_opts *o,
	       struct diag *d)
{
	*out = NULL;
	if (o->engineers < 1 || o->engineers > 1000000)
		return diag_set(d, DIAG_EINPUT, "--engineers %lld (expected 1..1000000)",
				(long long)o->engineers);
	if (o->days < 0 || o->days > 100000)
		return diag_set(d, DIAG_EINPUT, "--days %lld (expected 0..100000; 0 keeps the trace's span)",
				(long long)o->days);
	if (!(o->jitter_s >= 0 && o->jitter_s <= DAY_S / 2))
		return diag_set(d, DIAG_EINPUT, "--jitter %g s (expected 0..43200)", o->jitter_s);
	struct scale *sc = calloc(1, sizeof(*sc));
	if (!sc)
		return nomem(d);
	sc->o = *o;
	vec_init(&sc->refs, sizeof(struct sref), VEC_NO_LIMIT);
	vec_init(&sc->cells, sizeof(struct cell), VEC_NO_LIMIT);
	map_init(&sc->cell_of);
	map_init(&sc->eng_index);
	vec_init(&sc->engs, sizeof(struct eng), VEC_NO_LIMIT);
	map_init(&sc->owner);
	vec_init(&sc->out, sizeof(struct out_ref), VEC_NO_LIMIT);
	vec_init(&sc->calls, sizeof(struct trace_call), VEC_NO_LIMIT);
	vec_init(&sc->segs, sizeof(struct trace_seg), VEC_NO_LIMIT);
	vec_init(&sc->texts, sizeof(char *), VEC_NO_LIMIT);
	vec_init(&sc->text_bytes, 1, VEC_NO_LIMIT);
	int rc = 0;
	sc->spill = tmpfile();
	if (!sc->spill)
		rc = diag_set(d, DIAG_EIO, "cannot create a temporary file in /tmp for --engineers: %s",
			      strerror(errno));
	sc->rng = rc == 0 ? gsl_rng_alloc(gsl_rng_mt19937) : NULL;
	if (rc == 0 && !sc->rng)
		rc = nomem(d);
	if (rc == 0)
		gsl_rng_set(sc->rng, (unsigned long)o->seed);
	struct trace_session *s = NULL;
	while (rc == 0 && (rc = trace_reader_next(r, &s, d)) == 1) {
		rc = index_session(sc, s, d);
		trace_session_free(s);
		s = NULL;
	}
	if (rc == 0 && fflush(sc->spill) != 0)
		rc = spill_err(d);
	if (rc == 0)
		rc = build_cells(sc, d);
	if (rc != 0) {
		scale_free(sc);
		return rc;
	}
	struct scale_info *in = &sc->info;
	in->source_sessions = (int64_t)sc->refs.len;
	in->source_engineers = (int64_t)sc->eng_index.len;
	in->named_engineers = in->source_engineers - (map_get(&sc->eng_index, 0) ? 1 : 0);
	in->source_days = 0;
	for (size_t e = 0; e < sc->engs.len; e++) {
		const struct eng *en = vec_at(&sc->engs, e);
		if (en->last_day + 1 > in->source_days)
			in->source_days = en->last_day + 1;
	}
	double last_origin = (double)(sc->team_first_day + 1) * DAY_S;
	in->source_engineer_days = (int64_t)sc->cells.len;
	for (size_t i = 0; i < sc->cells.len; i++)
		in->active_engineer_days += VEC_AT(&sc->cells, struct cell, i).head >= 0;
	in->days = o->days ? o->days : in->source_days;
	if (last_origin + (double)in->days * DAY_S > TRACE_MAX_SECONDS) {
		rc = diag_set(d, DIAG_EINPUT, "--days %lld from t = %.0f s goes past t = 1e9 s "
			      "(expected fewer days)", (long long)in->days, last_origin);
		scale_free(sc);
		return rc;
	}
	in->engineers = o->engineers;
	*out = sc;
	return 0;
}

/* ---- second pass ---- */

static int out_cmp(const void *a, const void *b)
{
	const struct out_ref *x = a, *y = b;
	if (x->t_s != y->t_s)
		return x->t_s < y->t_s ? -1 : 1;
	if (x->day != y->day)
		return x->day < y->day ? -1 : 1;
	if (x->engineer != y->engineer)
		return x->engineer < y->engineer ? -1 : 1;
	return (x->ref > y->ref) - (x->ref < y->ref);
}

/* Cells that may stand in for target day d. */
static int pool_for_day(struct scale *sc, int64_t d, struct vec *pool)
{
	vec_clear(pool);
	bool weekly = sc->info.source_days >= 7;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sc->cells.len; i++) {
			const struct cell *cl = vec_at(&sc->cells, i);
			if (pass == 0 && weekly && cl->day % 7 != d % 7)
				continue;
			int64_t *slot = vec_push(pool);
			if (!slot)
				return DIAG_ENOMEM;
			*slot = (int64_t)i;
		}
		if (pool->len > 0 || !weekly)
			break;
	}
	return 0;
}

/* Earliest start a session of target day `day` can have. */
static double day_lower_bound(const struct scale *sc, int64_t day)
{
	return (double)(sc->team_first_day + day) * DAY_S + sc->min_midnight_s;
}

/* Lay out target day `d`: draw a cell per target engineer, add the sessions
 * to those still to emit (days overlap where time zones differ) and keep
 * them in start order. */
static int lay_out_day(struct scale *sc, int64_t day, struct diag *d)
{
	if (sc->out_at > 0) {
		size_t left = sc->out.len - sc->out_at;
		memmove(sc->out.data, (char *)sc->out.data + sc->out_at * sizeof(struct out_ref),
			left * sizeof(struct out_ref));
		sc->out.len = left;
		sc->out_at = 0;
	}
	struct vec pool;
	vec_init(&pool, sizeof(int64_t), VEC_NO_LIMIT);
	int rc = pool_for_day(sc, day, &pool);
	if (rc != 0 || pool.len == 0) {
		vec_release(&pool);
		return rc ? nomem(d) : 0;
	}
	int64_t *cells = pool.data;
	for (int64_t j = 0; j < sc->o.engineers; j++) {
		size_t k = (size_t)j % pool.len;
		if (k == 0)
			gsl_ran_shuffle(sc->rng, cells, pool.len, sizeof(*cells));
		const struct cell *cl = vec_at(&sc->cells, (size_t)cells[k]);
		/* day `day` of the team, in the drawn engineer's time zone */
		const struct eng *en = vec_at(&sc->engs, (size_t)cl->engineer);
		double day_start = (double)(sc->team_first_day + day) * DAY_S + en->midnight_s;
		/* drawn even without jitter, so --jitter moves the same draws */
		double u = gsl_rng_uniform(sc->rng), shift = 0;
		if (sc->o.jitter_s > 0) {
			if (cl->head >= 0) {
				double lo = fmax(-sc->o.jitter_s, -cl->tod_min);
				double hi = fmin(sc->o.jitter_s, DAY_S - 1.0 - cl->tod_max);
				if (hi > lo)
					shift = lo + u * (hi - lo);
			}
		}
		/* an engineer whose day 0 began before t = 0 on a day another
		 * engineer-day fills earlier: start at t = 0, never before */
		if (cl->head >= 0 && day_start + cl->tod_min + shift < 0)
			shift = -(day_start + cl->tod_min);
		for (int64_t r = cl->head; r >= 0; r = VEC_AT(&sc->refs, struct sref, (size_t)r).next) {
			struct out_ref *o = vec_push(&sc->out);
			if (!o) {
				vec_release(&pool);
				return nomem(d);
			}
			o->t_s = day_start + VEC_AT(&sc->refs, struct sref, (size_t)r).tod_s + shift;
			o->day = day;
			o->engineer = j;
			o->ref = r;
			o->src_engineer = cl->engineer;
		}
	}
	vec_release(&pool);
	qsort(sc->out.data, sc->out.len, sizeof(struct out_ref), out_cmp);
	return 0;
}

static bool get(FILE *f, void *p, size_t n)
{
	errno = 0;
	return fread(p, 1, n, f) == n;
}

/* Read session `off` back into scratch buffers; *tmp points into them. */
static int read_back(struct scale *sc, int64_t off, struct trace_session *tmp, struct diag *d)
{
	if (fseek(sc->spill, (long)off, SEEK_SET) != 0 || !get(sc->spill, tmp, sizeof(*tmp)))
		return spill_err(d);
	vec_clear(&sc->calls);
	vec_clear(&sc->segs);
	vec_clear(&sc->texts);
	vec_clear(&sc->text_bytes);
	if (vec_reserve(&sc->calls, tmp->n_calls) != 0)
		return nomem(d);
	/* segments and texts are placed by index first, pointers fixed after */
	for (size_t i = 0; i < tmp->n_calls; i++) {
		struct trace_call *c = vec_push(&sc->calls);
		if (!get(sc->spill, c, sizeof(*c)))
			return spill_err(d);
		size_t at = sc->segs.len;
		if (vec_reserve(&sc->segs, at + c->n_segs) != 0)
			return nomem(d);
		if (c->n_segs && !get(sc->spill, vec_at(&sc->segs, at), c->n_segs * sizeof(struct trace_seg)))
			return spill_err(d);
		sc->segs.len += c->n_segs;
		c->segs = (struct trace_seg *)(uintptr_t)at; /* index for now */
		if (!c->seg_text)
			continue;
		size_t tat = sc->texts.len;
		for (size_t k = 0; k < c->n_segs; k++) {
			uint32_t n;
			if (!get(sc->spill, &n, sizeof(n)))
				return spill_err(d);
			char **slot = vec_push(&sc->texts);
			if (!slot)
				return nomem(d);
			if (n == NO_TEXT) {
				*slot = NULL;
				continue;
			}
			size_t bat = sc->text_bytes.len;
			if (vec_reserve(&sc->text_bytes, bat + n + 1) != 0)
				return nomem(d);
			if (n && !get(sc->spill, vec_at(&sc->text_bytes, bat), n))
				return spill_err(d);
			((char *)sc->text_bytes.data)[bat + n] = '\0';
			sc->text_bytes.len += n + 1;
			*slot = (char *)(uintptr_t)(bat + 1); /* offset + 1 for now */
		}
		c->seg_text = (char **)(uintptr_t)(tat + 1);
	}
	struct trace_call *calls = sc->calls.data;
	for (size_t i = 0; i < tmp->n_calls; i++) {
		struct trace_call *c = &calls[i];
		c->segs = c->n_segs ? (struct trace_seg *)vec_at(&sc->segs, (size_t)(uintptr_t)c->segs) : NULL;
		if (!c->seg_text)
			continue;
		char **t = vec_at(&sc->texts, (size_t)(uintptr_t)c->seg_text - 1);
		for (size_t k = 0; k < c->n_segs; k++)
			if (t[k])
				t[k] = (char *)sc->text_bytes.data + ((size_t)(uintptr_t)t[k] - 1);
		c->seg_text = t;
	}
	tmp->calls = calls;
	return 0;
}

static uint64_t nonzero(uint64_t v)
{
	return v ? v : 1;
}

/* Session, parent or task id of copy (j, d). */
static uint64_t copy_id(uint64_t seed, int64_t j, int64_t d, uint64_t id)
{
	return nonzero(hash_combine(hash_combine(hash_combine(seed, (uint64_t)j), (uint64_t)d), id));
}

int scale_next(struct scale *sc, struct trace_session **out, struct diag *d)
{
	*out = NULL;
	/* lay out every day that may hold a session starting before the next
	 * one to emit */
	while (sc->day < sc->info.days &&
	       (sc->out_at == sc->out.len ||
		day_lower_bound(sc, sc->day) <= VEC_AT(&sc->out, struct out_ref, sc->out_at).t_s)) {
		int rc = lay_out_day(sc, sc->day, d);
		sc->day++;
		if (rc != 0)
			return rc;
	}
	if (sc->out_at == sc->out.len)
		return 0;
	const struct out_ref *o = vec_at(&sc->out, sc->out_at++);
	int64_t j = o->engineer, day = o->day;
	struct trace_session tmp;
	int rc = read_back(sc, VEC_AT(&sc->refs, struct sref, (size_t)o->ref).off, &tmp, d);
	if (rc != 0)
		return rc;
	tmp.id = copy_id(SEED_SESSION, j, day, tmp.id);
	if (tmp.parent)
		tmp.parent = copy_id(SEED_SESSION, j, day, tmp.parent);
	tmp.engineer = nonzero(hash_combine(SEED_ENGINEER, (uint64_t)j));
	tmp.t_s = o->t_s;
	uint64_t salt = hash_combine(hash_combine(SEED_CONTENT, (uint64_t)j), (uint64_t)o->src_engineer);
	for (size_t i = 0; i < tmp.n_calls; i++) {
		struct trace_call *c = &tmp.calls[i];
		if (c->task)
			c->task = copy_id(SEED_TASK, j, day, c->task);
		for (size_t k = 0; k < c->n_segs; k++) {
			const uint64_t *w = map_get(&sc->owner, c->segs[k].content);
			if (!w || *w != SHARED)
				c->segs[k].content = hash_combine(salt, c->segs[k].content);
		}
	}
	if (trace_session_clone(out, &tmp) != 0)
		return nomem(d);
	sc->info.sessions_out++;
	return 1;
}

void scale_get_info(const struct scale *sc, struct scale_info *out)
{
	*out = sc->info;
}
