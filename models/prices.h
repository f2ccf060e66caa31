/* SPDX-License-Identifier: Apache-2.0
 * prices: the dated price catalogue (models/catalog/prices.json) - seats,
 * API token prices, GPU-hour rental, dedicated servers, purchase prices,
 * electricity, PUE and operator time - loaded and validated.
 *
 * Every row keeps the amount, unit and currency it was published in, its
 * date and source; usd is the amount converted at the exchange rate the
 * file states (the only conversion; a currency without a stated rate is an
 * input error).  The catalogue is read-only once loaded; every string is
 * owned by the struct prices and stays valid until prices_free.
 *
 * A bad file is an input error naming the place: a row with a wrong value
 * is "prices.json:LINE:COL: prices[3] 'claude-pro': price is a string
 * (expected a number > 0)", where LINE:COL is the value (or the key, for an
 * unknown key; the row's '{' for a missing one).  Positions are worked out
 * only when there is something to report, so a good file costs one parse.
 *
 * Every string kept (and every unknown key, which a message would name) must
 * be UTF-8 without control characters (C0, DEL, C1): catalog --prices,
 * compare, size and replay --cost print them to a terminal, where "\x1b[2J"
 * in a source would act instead of being read.  Such a string is an input
 * error naming the row and the field, its value never echoed.
 */
#ifndef MODELS_PRICES_H
#define MODELS_PRICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/diag.h"

struct catalog;

/* What a row prices, with the unit every row of that kind must state. */
enum price_kind {
	PRICE_SEAT = 0,           /* "per user per month" */
	PRICE_OVERAGE,            /* usage beyond a seat plan: "per <unit>" */
	PRICE_API_INPUT,          /* "per 1M tokens" */
	PRICE_API_CACHED_INPUT,   /* "per 1M tokens" (a cache read) */
	PRICE_API_OUTPUT,         /* "per 1M tokens" */
	PRICE_GPU_HOUR,           /* "per GPU-hour" */
	PRICE_DEDICATED_MONTH,    /* "per server per month" (gpus: per server) */
	PRICE_PURCHASE,           /* "per unit" (gpus: per unit) */
	PRICE_ELECTRICITY,        /* "per kWh" */
	PRICE_PUE,                /* "ratio" (facility / IT power; currency "none") */
	PRICE_OPERATOR_MONTH,     /* "per deployment per month" */
	PRICE_API_CACHE_WRITE_5M, /* "per 1M tokens": a prompt-cache write kept 5
				     minutes (Anthropic: 1.25x input) */
	PRICE_API_CACHE_WRITE_1H, /* "per 1M tokens": kept an hour (2x input) */
	PRICE_OPERATOR_SYSTEM_MONTH, /* "per system per month": operator time per
				     system looked after (gpus: the GPUs of the
				     system the figure is for) */
	PRICE_KIND_COUNT
};

/* "seat", "api_input", ... as written in the file (static strings). */
const char *price_kind_name(enum price_kind k);

/* How a gpu_hour row is sold (its "tariff" key).  Only on-demand rows price
 * elastic rental by default: a spot floor can be taken away, a reservation
 * or a capacity block is paid whether used or not.  A row without the key
 * is on-demand; the shipped catalogue states it on every gpu_hour row, as
 * its source says (unstated: the source names no tariff, e.g. a market
 * index). */
enum price_tariff {
	PRICE_ON_DEMAND = 0,      /* "on_demand": pay as you go, no commitment */
	PRICE_SPOT,               /* "spot": interruptible, marketplace floors */
	PRICE_RESERVED,           /* "reserved": a term commitment */
	PRICE_CAPACITY_BLOCK,     /* "capacity_block": a booked block of time */
	PRICE_TARIFF_UNSTATED,    /* "unstated": the source names none */
	PRICE_TARIFF_COUNT
};

/* "on_demand", "spot", ... as written in the file (static strings). */
const char *price_tariff_name(enum price_tariff t);

/* What a purchase row's price buys (its "scope" key).  Every purchase row
 * of the shipped catalogue states it; a row without the key is unstated,
 * and priced as it is with a warning. */
enum price_scope {
	PRICE_SCOPE_UNSTATED = 0, /* the row does not say */
	PRICE_SCOPE_COMPLETE,     /* "complete": a box that runs as bought
				     (workstation, Mac, DGX Spark) */
	PRICE_SCOPE_SERVER,       /* "server": a server without network or
				     installation */
	PRICE_SCOPE_GPUS,         /* "gpus": bare GPUs or cards that need a host */
	PRICE_SCOPE_COUNT
};

/* "unstated", "complete", "server", "gpus" (static strings). */
const char *price_scope_name(enum price_scope s);

/* Long-prompt tiers an API row may list (models.dev lists three for
 * Qwen3-Coder-Plus). */
#define PRICE_TIERS_MAX 4

struct price_row {
	char *id;                 /* unique within its kind; the three API kinds
				     of one model share an id */
	enum price_kind kind;
	char *item;               /* what is priced, as published */
	char *provider;
	double amount;            /* in currency, per unit */
	char *unit;
	char *currency;           /* "USD", "EUR", ...; "none" for a ratio */
	double usd;               /* amount in US dollars (= amount for USD and
				     for a ratio) */
	char *date;               /* as the source dates it (free text: some
				     sources carry no date) */
	char *source;
	char *note;               /* NULL when none */
	char *hardware;           /* hardware.json id this row prices; NULL */
	int64_t gpus;             /* GPUs per server or unit (dedicated,
				     purchase); 0 for other kinds */
	enum price_tariff tariff; /* gpu_hour rows; PRICE_ON_DEMAND for others */
	enum price_scope scope;   /* purchase rows; PRICE_SCOPE_UNSTATED for others */
	char *host;               /* scope gpus: the id of the purchase row (scope
				     server or complete, with gpu_row) of the
				     system these GPUs go in; NULL = none named */
	char *gpu_row;            /* scope server or complete: the id of the
				     purchase row (scope gpus) its GPUs are
				     priced at, so that price - gpus x that row
				     is the host; NULL = none */
	int32_t tier_count;       /* API rows: long-prompt tiers (its "tiers"),
				     by ascending tier_over; 0 = none */
	int64_t tier_over[PRICE_TIERS_MAX]; /* a call whose prompt (cached
				     tokens included) is above this many tokens
				     pays ... */
	double tier_usd[PRICE_TIERS_MAX];   /* ... this, in US dollars per
				     unit, on every token of the row's kind
				     (the highest tier it is above) */
	bool off_peak;            /* API rows: a lower rate outside the
				     provider's peak hours (its "off_peak") */
	double off_peak_usd;      /* that rate, US dollars per unit */
	uint8_t peak_days;        /* bit d: day d of the week (0 = Monday,
				     UTC) has peak hours */
	uint32_t peak_hours;      /* bit h: the hour from h:00 UTC is a peak
				     hour on those days */
	double memory_gb;         /* purchase, dedicated_month: the memory of the
				     configuration priced (per unit, GB); 0 =
				     not stated.  It must be the hardware
				     entry's (prices_check_hardware) */
	int64_t min_seats;        /* seat plans: 0 = no minimum stated */
	double included_usage_usd;/* seat plans: usage included per seat per
				     month, worth this much at API list prices;
				     < 0 = the plan states none */
	bool overage_at_api_list; /* seat plans: usage beyond what is included
				     is billed at API list prices */
	long line;                /* 1-based line of the row in its file */
};

struct price_rate {
	char *currency;           /* "EUR" */
	double usd_per_unit;
	char *date;
	char *source;
};

struct prices {
	char *name;               /* file name used in messages */
	struct price_rate *rates;
	size_t rate_count;
	struct price_row *rows;   /* in file order */
	size_t row_count;
	void **owned;             /* every allocation, freed by prices_free */
	size_t owned_count;
	size_t owned_cap;
};

/* Largest price file accepted, in bytes. */
#define PRICES_FILE_MAX_BYTES (4u << 20)

/* A price row's price, in its own currency, and an exchange rate (USD per
 * unit): bounds that keep every cost agentcap derives finite (a month of a
 * cluster of hundreds of machines at the largest price stays far from
 * overflow), checked when the file loads, before any replay.  No real price
 * of a GPU, an hour, a seat or a token comes near them. */
#define PRICES_MAX 1e9
#define PRICES_MIN_RATE 1e-6
#define PRICES_MAX_RATE 1e6

/* Load prices from path, or the copy built into the library when path is
 * NULL.  On success *out owns a new catalogue (free with prices_free).
 * Returns 0, DIAG_EINPUT (unreadable file, bad JSON, a bad row: the message
 * names file:line:col and what was expected), DIAG_EIO or DIAG_ENOMEM; *out
 * is NULL on failure. */
int prices_load(struct prices **out, const char *path, struct diag *d);

/* Same from text in memory (need not be NUL-terminated); name is used in
 * messages ("prices.json"). */
int prices_parse(struct prices **out, const char *name, const char *text, size_t len,
		 struct diag *d);

/* The embedded prices.json (static storage, NUL-terminated). */
const char *prices_embedded(size_t *len);

void prices_free(struct prices *p); /* accepts NULL */

/* True when the invariants of a loaded catalogue hold (ids valid and unique
 * per kind, amounts positive, usd consistent with the stated rates).  For
 * assert() and tests. */
bool prices_check(const struct prices *p);

/* The row of that kind and id (ids compared as catalog_name_eq does);
 * NULL when there is none.  O(rows). */
const struct price_row *prices_find(const struct prices *p, enum price_kind kind, const char *id);

/* The rows of one kind that price hardware id hw (exactly), in out[0..max);
 * returns how many there are (may exceed max; only max are written). */
size_t prices_for_hardware(const struct prices *p, enum price_kind kind, const char *hw,
			   const struct price_row **out, size_t max);

/* The representative row of those: the median by usd (the higher of the
 * two middle rows when their number is even; ties by file order), so one
 * spot floor or hyperscaler list price does not decide.  NULL when none. */
const struct price_row *prices_median_for_hardware(const struct prices *p, enum price_kind kind,
						    const char *hw);

/* The median (as above) of the gpu_hour rows of hw sold under tariff t;
 * *count (may be NULL) receives how many such rows there are.  NULL when
 * none. */
const struct price_row *prices_median_gpu_hour(const struct prices *p, const char *hw,
						enum price_tariff t, size_t *count);

/* The host of purchase row r (scope gpus, naming a host): the host row,
 * with *share_usd its price per GPU besides the GPUs, (host - host gpus x
 * its gpu_row) / host gpus, and *gpu (may be NULL) the gpu_row.  NULL when
 * r names no host (*share_usd 0).  The loader checks that every host and
 * gpu_row exists and that the share is > 0. */
const struct price_row *prices_host_of(const struct prices *p, const struct price_row *r,
				       double *share_usd, const struct price_row **gpu);

/* amount in currency converted to US dollars at the file's stated rate
 * ("USD" as is); 0 when the file states no rate for currency. */
double prices_usd(const struct prices *p, const char *currency, double amount);

/* Every row naming a hardware id must name one of cat (DIAG_EINPUT naming
 * the row's file:line otherwise). */
int prices_check_hardware(const struct prices *p, const struct catalog *cat, struct diag *d);

/* `agentcap catalog --prices`: every row grouped by kind (amount and
 * currency as published, USD, unit, date, hardware id, source), the stated
 * exchange rates, then the hardware entries of cat that no cost option can
 * price: no on-demand rental, dedicated or purchase row for the entry or
 * (rental, purchase) its accelerator, and no price or rent_per_hour in
 * hardware.json
 * (cat may be NULL: that part is left out).  0 or DIAG_EIO. */
int prices_write_table(const struct prices *p, const struct catalog *cat, FILE *out,
		       struct diag *d);

/* The same as one JSON document (fixed key order, rows in file order). */
int prices_write_json(const struct prices *p, const struct catalog *cat, FILE *out,
		      struct diag *d);

#endif
