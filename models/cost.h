/* SPDX-License-Identifier: Apache-2.0
 * cost: what a team's coding-agent work costs per month, per 1M output
 * tokens and per accepted task under each way of paying for it - buying
 * servers (purchase), renting them by the month (dedicated) or by the
 * GPU-hour as an autoscaler keeps them up (elastic), paying per seat, or
 * paying an API per token - and the energy the self-hosted GPUs use.
 *
 * The arithmetic is pure: its inputs are the plain numbers a replay
 * produces (struct cost_usage) and the parameters of one option, each a
 * struct cost_fig (a value and where it comes from); its output is a struct
 * cost_result whose assumptions list every figure used, with unit and
 * source, so a report can print them beside the total.  Nothing here reads
 * files or prints; the *_from_prices helpers fill an option's parameters
 * from the price and hardware catalogues, with the defaults docs/cost.md
 * gives and sources.
 *
 * Months: a month is COST_HOURS_PER_MONTH hours (8,760 / 12).  A replay
 * covers duration_s; traffic-driven figures (tokens, tasks, GPU-hours, busy
 * time) are scaled to a month by periods_per_month, which the caller sets
 * (a one-workday trace: working days per month) or leaves 0 for continuous
 * traffic (730 h / duration).  Fixed prices (a server, a seat) are already
 * per month.
 *
 * Task economics: an option has an acceptance rate (share of tasks whose
 * result is kept: the trace's own x a quality factor, or a figure given)
 * and a turns factor (calls and tokens per task relative to the trace: a
 * weaker model may need more turns).  The traffic priced is the replay's;
 * a turns factor T means it completes 1/T of the trace's tasks, so
 * cost per accepted task = monthly cost x T / (tasks per month x acceptance),
 * and cost per 1M output tokens does not move with it.
 */
#ifndef MODELS_COST_H
#define MODELS_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "models/prices.h"

struct catalog;
struct cat_hardware;
struct prices;
struct price_row;

#define COST_HOURS_PER_MONTH 730.0
/* Working days in a year by default: the 261 weekdays of 2026 (a 365-day
 * year that starts on a Thursday), with no holidays.  A replayed working
 * day counts workdays / 12 times a month wherever a month is built from
 * days (replay --cost with --engineers, compare, size, whatif, sweep); the
 * scenario key cost.workdays_per_year sets another calendar (250 with the
 * 11 US federal holidays of 2026, all on weekdays; docs/cost.md). */
#define COST_WORKDAYS_PER_YEAR 261.0
#define COST_WORKDAYS_PER_MONTH (COST_WORKDAYS_PER_YEAR / 12.0)
#define COST_LABEL_MAX 128
#define COST_NAME_MAX 48
#define COST_UNIT_MAX 32
#define COST_SOURCE_MAX 320
#define COST_DATE_MAX 16
#define COST_MAX_ASSUMPTIONS 28
#define COST_MAX_PARTS 8

enum cost_option {
	COST_PURCHASE = 0,
	COST_DEDICATED,
	COST_ELASTIC,
	COST_SEATS,
	COST_API,
	COST_OPTION_COUNT
};

/* "purchase", "dedicated", "elastic", "seats", "api" (static strings). */
const char *cost_option_name(enum cost_option o);

/* One input figure and where it comes from ("prices.json h100-sxm-street
 * (2026 mid, https://...)", "default, docs/cost.md", "--set ..."), and
 * the date of the price it was read from (cost_date_of of a price row's
 * or hardware.json price's date; "" for defaults, settings and measured
 * figures). */
struct cost_fig {
	double value;
	char source[COST_SOURCE_MAX];
	char date[COST_DATE_MAX];
};

/* Set f to value with a printf-style source and no date. */
void cost_fig_set(struct cost_fig *f, double value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The date a price states, as its leading YYYY, YYYY-MM, YYYY-MM-DD or
 * YYYY-Qn into out (what follows - " mid", " (stored copy)" - is dropped);
 * "" when it starts with no year ("n.d. (stored copy)"). */
void cost_date_of(const char *date, char out[COST_DATE_MAX]);

/* Whether date a (as cost_date_of gives) is later than b: by year, month
 * (a quarter counts as its last month) and day; a date that gives less
 * ("2026") is earlier than one within its year ("2026-05"); "" is the
 * earliest. */
bool cost_date_after(const char *a, const char *b);

/* One stretch a replica was kept up, as a cloud bills it: from the moment
 * it was asked to start (a cold start is billed) until it stopped, through
 * starting, up and draining; clipped to the replayed span. */
struct cost_stretch {
	double s;                     /* its length within the span, seconds */
	bool from_start;              /* already up when the span began */
	bool to_end;                  /* still up when the span ended */
};

/* Price classes of an API call: 0 the base prices; 1..n_tiers a call whose
 * prompt is above tier_over[class - 1] tokens (every token of it at that
 * tier's prices: Anthropic's and Alibaba's long-prompt rates); and
 * COST_API_OFF_PEAK a call that starts outside the provider's peak hours
 * (DeepSeek's discount). */
#define COST_API_OFF_PEAK (PRICE_TIERS_MAX + 1)
#define COST_API_CLASSES (PRICE_TIERS_MAX + 2)

/* The parts of a call's price, by index. */
enum { COST_API_IN, COST_API_CACHED, COST_API_WRITE, COST_API_OUT, COST_API_PARTS };

/* Token counts of API calls, of one price class or of all. */
struct cost_api_tokens {
	int64_t calls;
	int64_t prompt;                      /* cached tokens included */
	int64_t cached;
	int64_t cache_write;                 /* of prompt - cached */
	int64_t output;
};

/* What one replay measured, as plain numbers.  Counts are totals over
 * duration_s. */
struct cost_usage {
	double duration_s;            /* span the figures cover (> 0) */
	double periods_per_month;     /* spans per month; 0 = continuous
					 (COST_HOURS_PER_MONTH h / duration) */
	int64_t gpus_per_replica;     /* tp x pp (>= 1) */
	int64_t replicas;             /* replicas provisioned (the peak, when an
					 autoscaler varied them) (>= 1) */
	double gpu_hours_provisioned; /* GPU-hours kept up within duration_s;
					 0 = replicas x gpus x duration */
	double gpu_hours_busy;        /* GPU-hours with work in them */
	double busy_s_per_gpu;        /* mean over the provisioned GPUs of the
					 seconds with work (<= duration_s) */
	double idle_s_per_gpu;        /* mean seconds powered without work */
	const struct cost_stretch *replica_up; /* optional: every stretch a
					 replica was kept up (for billing
					 granularity and the minimum billing
					 period); NULL = not known: with
					 gpu_hours_provisioned 0 (or replicas
					 x GPUs x duration) each replica is one
					 stretch over the whole span */
	size_t replica_up_count;
	int64_t prompt_tokens;        /* every prompt token of the calls, cached
					 ones included */
	int64_t cached_tokens;        /* of those, read from the prefix cache */
	int64_t cache_write_tokens;   /* of the rest, written to an API's prompt
					 cache (billed at its write price; 0:
					 none, or not an API's usage) */
	int64_t output_tokens;
	int64_t calls;
	bool api_split;               /* the API usage is also split by price
					 class, in api_class, as the API of
					 label api_split_label splits it */
	char api_split_label[COST_LABEL_MAX];
	struct cost_api_tokens api_class[COST_API_CLASSES];
	bool api_clock_assumed;       /* an off-peak split read trace times
					 that are not absolute (from a Monday
					 00:00 UTC) */
	int64_t tasks;
	int64_t tasks_accept_known;   /* of those, tasks whose outcome the trace
					 records (0: none) */
	int64_t tasks_accepted;       /* of those, accepted */
	int64_t engineers;            /* >= 1 for seats; 0 = unknown */
	const char *periods_source;   /* optional: where periods_per_month comes
					 from ("21.75 working days a month
					 ..."), for its assumption; NULL = the
					 generic text */
};

/* Acceptance and turns of one option (see the file comment). */
struct cost_task {
	struct cost_fig acceptance_rate; /* (0, 1]; < 0 = the trace's own
					    tasks_accepted / tasks_accept_known
					    (1 when it records no outcome) */
	struct cost_fig turns_factor;    /* > 0; 1 = as the trace recorded */
	struct cost_fig quality_factor;  /* (0, 1]: multiplies the trace's own
					    acceptance (acceptance_rate < 0);
					    models/quality.h gives it from
					    published scores */
};

/* acceptance = trace's, turns 1, quality factor 1 (assumed equal to the
 * traced model's: said so in its source), as the defaults of docs/cost.md. */
void cost_task_default(struct cost_task *t);

/* Operator time of a self-hosted deployment (docs/cost.md):
 *
 *     operator per month = base + per-system share x systems
 *
 * where systems is what the option counts (purchase: systems bought;
 * dedicated: servers rented; elastic: replicas kept up, at the peak) and a
 * system of G GPUs takes G / system_gpus of system_usd_month (system_gpus
 * 0: system_usd_month per system whatever its GPUs).  usd_month >= 0 is the
 * whole figure instead (cost.operator_usd_month), the model unused. */
struct cost_operator {
	struct cost_fig usd_month;           /* >= 0: the whole figure; < 0: the
						model */
	struct cost_fig base_usd_month;      /* per deployment */
	struct cost_fig system_usd_month;    /* per system of system_gpus GPUs */
	struct cost_fig system_gpus;         /* 0 = per system as it is */
};

/* The share of one system of gpus GPUs under o's model (see above). */
double cost_operator_per_system(const struct cost_operator *o, double gpus);

struct cost_purchase {
	char label[COST_LABEL_MAX];
	struct cost_fig system_usd;          /* price of one server/unit, the
						host share included */
	struct cost_fig host_share_usd;      /* per GPU, included in system_usd
						(a bare GPU's part of its host;
						0: none) */
	char not_priced[COST_SOURCE_MAX];    /* what the price leaves out
						(network, installation, a
						maintenance contract, a host):
						said as the assumption
						"not_priced"; "" = nothing */
	char why_none[COST_SOURCE_MAX];      /* COST_NO_PRICE with a price on
						offer: why it is not priced (no
						power figure); "" otherwise */
	struct cost_fig gpus_per_system;
	struct cost_fig amortisation_months;
	struct cost_fig resale_fraction;     /* of system_usd, at the end */
	struct cost_fig busy_w;              /* per GPU while it has work */
	struct cost_fig idle_w;              /* per GPU while powered, idle */
	struct cost_fig pue;                 /* facility / IT power */
	struct cost_fig electricity_usd_kwh;
	struct cost_fig hosting_usd_month;   /* per system: rack, colocation */
	struct cost_operator op;
};

struct cost_dedicated {
	char label[COST_LABEL_MAX];
	struct cost_fig server_usd_month;
	struct cost_fig gpus_per_server;
	struct cost_operator op;
};

struct cost_elastic {
	char label[COST_LABEL_MAX];
	struct cost_fig usd_per_gpu_hour;
	struct cost_fig billing_granularity_s; /* each replica stretch is billed
						  in whole units of this; 1 =
						  per second */
	struct cost_fig min_billing_s;       /* each stretch billed on its own is
						billed at least this long; 0 =
						no minimum */
	struct cost_fig min_replicas;        /* kept up outside the traced
						periods (nights, weekends) */
	struct cost_operator op;
};

struct cost_api {
	char label[COST_LABEL_MAX];
	struct cost_fig input_usd_mtok;      /* per 1M uncached prompt tokens */
	struct cost_fig cached_usd_mtok;     /* per 1M cache-read tokens */
	struct cost_fig cache_write_usd_mtok;/* per 1M tokens written to the cache */
	struct cost_fig output_usd_mtok;
	/* the other classes (prices.json "tiers" or "off_peak" of the same
	 * rows, their sources the base figures'): */
	int32_t n_tiers;
	int64_t tier_over[PRICE_TIERS_MAX];  /* ascending */
	bool off_peak;
	uint8_t peak_days;                   /* as struct price_row's */
	uint32_t peak_hours;
	double class_usd_mtok[COST_API_CLASSES][COST_API_PARTS]; /* classes >= 1 */
	/* the clock the off-peak hours are read on: with clock_set, trace time
	 * t is clock_t0_ns + t nanoseconds since 1970-01-01 UTC (the scenario's
	 * cost.trace_start_utc); without, t is read from 00:00 UTC of a Monday
	 * (a generated trace's t = 0 is 00:00 UTC of its first day, a
	 * workday; an imported one's is its first session's start) */
	bool clock_set;
	int64_t clock_t0_ns;
};

/* The price class of a call of prompt_tokens (cached included) that starts
 * at trace time t_ns. */
int cost_api_class(const struct cost_api *p, int64_t prompt_tokens, int64_t t_ns);

/* Add one call to its class in cls[COST_API_CLASSES] (and nothing else). */
void cost_api_tokens_add(struct cost_api_tokens *cls, int cls_index, int64_t prompt,
			 int64_t cached, int64_t cache_write, int64_t output);

/* Scale every count of cls[COST_API_CLASSES] by f (rounded). */
void cost_api_tokens_scale(struct cost_api_tokens *cls, double f);

/* USD of tokens at p's prices: of one class (cost_api_usd_class) or of
 * cls[COST_API_CLASSES] (cost_api_usd).  Cache writes past the uncached
 * prompt tokens are not billed twice. */
double cost_api_usd_class(const struct cost_api *p, int cls_index, const struct cost_api_tokens *t);
double cost_api_usd(const struct cost_api *p, const struct cost_api_tokens *cls);

/* Multiply every price of p by f (a sensitivity swing). */
void cost_api_scale(struct cost_api *p, double f);

struct cost_seats {
	char label[COST_LABEL_MAX];
	struct cost_fig usd_per_seat_month;
	struct cost_fig min_seats;           /* 0 = none */
	struct cost_fig included_usage_usd;  /* per seat per month at API list
						prices; < 0 = the plan states
						none (usage not priced) */
	struct cost_fig overage_at_api_list; /* 1: usage beyond the included
						is billed at list; 0: no
						overage rule stated */
	struct cost_api list;                /* what the team's usage is worth
						at list prices (for included
						usage and overage) */
};

/* A line of the breakdown of a monthly total. */
struct cost_part {
	char name[COST_NAME_MAX];            /* "capital", "power", ... */
	double usd_month;
};

struct cost_assumption {
	char name[COST_NAME_MAX];
	double value;
	char unit[COST_UNIT_MAX];
	char source[COST_SOURCE_MAX];
	char date[COST_DATE_MAX];           /* the price's date; "" for none */
};

struct cost_result {
	enum cost_option option;
	char label[COST_LABEL_MAX];
	double usd_month;                    /* per month, whole team */
	double usd_per_mtok_output;          /* per 1M output tokens; 0 when the
						month has no output */
	double usd_per_accepted_task;        /* 0 when no task is accepted */
	double usd_per_engineer_month;       /* 0 when engineers is 0 */
	double output_tokens_month;          /* the replay's, over the month */
	double tasks_month;
	double accepted_tasks_month;
	struct cost_part parts[COST_MAX_PARTS];
	size_t part_count;
	struct cost_assumption assumptions[COST_MAX_ASSUMPTIONS];
	size_t assumption_count;
};

/* Energy of the self-hosted GPUs over a month (IT power; facility power
 * is that x PUE). */
struct cost_energy {
	double gpus;                         /* replicas x gpus per replica */
	double busy_gpu_hours_month;         /* the replay's, over the month */
	double idle_gpu_hours_month;         /* powered, no work: the rest of the
						month */
	double kwh_month_it;
	double kwh_month_facility;
	double j_per_output_token;           /* IT energy of the traced span /
						its output tokens (0 without
						output) */
};

/* The prices as of one date: newest becomes the latest of itself and the
 * dates of r's assumptions (cost_date_after; start from "").  A comparison
 * prints this one date (the newest price it used); each figure keeps its
 * own date in its source. */
void cost_newest_date(char newest[COST_DATE_MAX], const struct cost_result *r);

/* Input errors (DIAG_EINPUT, message naming the field and what was
 * expected) for usage that cannot be priced: duration <= 0, no GPUs,
 * negative counts, cached > prompt tokens, busy time past the span. */
int cost_usage_check(const struct cost_usage *u, struct diag *d);

/* periods_per_month, or 730 h / duration when it is 0. */
double cost_periods_per_month(const struct cost_usage *u);

/* The figures of each option.  t may be NULL (cost_task_default).
 * Returns 0, or DIAG_EINPUT when usage or a parameter is out of range
 * (negative price, acceptance outside (0, 1], amortisation <= 0, ...). */
int cost_purchase_eval(const struct cost_purchase *p, const struct cost_usage *u,
		       const struct cost_task *t, struct cost_result *r, struct diag *d);
int cost_dedicated_eval(const struct cost_dedicated *p, const struct cost_usage *u,
			const struct cost_task *t, struct cost_result *r, struct diag *d);
int cost_elastic_eval(const struct cost_elastic *p, const struct cost_usage *u,
		      const struct cost_task *t, struct cost_result *r, struct diag *d);
int cost_seats_eval(const struct cost_seats *p, const struct cost_usage *u,
		    const struct cost_task *t, struct cost_result *r, struct diag *d);
int cost_api_eval(const struct cost_api *p, const struct cost_usage *u,
		  const struct cost_task *t, struct cost_result *r, struct diag *d);

/* Energy from busy/idle time and watts: a GPU is powered the whole month
 * (owned hardware); busy time is the replay's, scaled to the month.  t may
 * be NULL. */
int cost_energy_eval(const struct cost_usage *u, double busy_w, double idle_w, double pue,
		     const struct cost_task *t, struct cost_energy *e, struct diag *d);

/* ---- parameters from the catalogues (defaults: docs/cost.md) ---- */

/* Returned by the *_from_prices helpers when the catalogue has no price for
 * the hardware (not an error: that option is simply not on offer). */
#define COST_NO_PRICE 1

/* Idle power as a share of TDP where the catalogue has no measured idle
 * figure: H200 SXM measured 80.3 W idle against its 700 W TDP (docs/cost.md). */
#define COST_IDLE_TDP_FRACTION 0.115

/* Busy and idle watts per GPU of hw, with how each is sourced: busy = the
 * measured inference power (upper end of its range) else the TDP; idle =
 * the measured idle power else COST_IDLE_TDP_FRACTION x TDP.  DIAG_EINPUT
 * when hw has neither a measured figure nor a TDP. */
int cost_watts(const struct cat_hardware *hw, struct cost_fig *busy_w, struct cost_fig *idle_w,
	       struct diag *d);

/* Purchase of hw: its purchase row (the median of several), else the
 * price hardware.json gives the entry (complete systems from the field
 * notes), else its accelerator's row times the GPU count.  A row of scope
 * gpus that names a host adds the host's share per GPU (prices_host_of:
 * an SXM module its part of an 8-GPU server, a card its workstation); what
 * the price still leaves out is said in p->not_priced: network,
 * installation and a maintenance contract for a server or bare GPUs, a
 * maintenance contract for a complete box, the host for bare GPUs that
 * name none, everything for a row of unstated scope.
 * watts by cost_watts; PUE, electricity and operator time from the default
 * rows; amortisation 36 months, resale 0, hosting 0 (docs/cost.md).
 * COST_NO_PRICE when none of these exists, or when hw has no power figure
 * (the owner pays the power: p->why_none says so). */
int cost_purchase_from_prices(struct cost_purchase *p, const struct prices *pr,
			      const struct cat_hardware *hw, struct diag *d);

/* Dedicated rental of hw (its dedicated_month row, the median of several),
 * operator time from the default rows.  COST_NO_PRICE when none. */
int cost_dedicated_from_prices(struct cost_dedicated *p, const struct prices *pr,
			       const struct cat_hardware *hw, struct diag *d);

/* Minimum billing period of a stretch where the catalogue says nothing:
 * Amazon EC2 bills Linux instances on-demand, reserved and spot "in one
 * second increments, with a minimum of 60 seconds" (AWS What's New,
 * "Announcing Amazon EC2 per second billing", 2017-10-02,
 * https://aws.amazon.com/about-aws/whats-new/2017/10/announcing-amazon-ec2-per-second-billing/). */
#define COST_DEFAULT_MIN_BILLING_S 60.0

/* Elastic rental of hw: the gpu_hour row row_id when it is given (not
 * NULL or "": any tariff, checked by cost_gpu_hour_row_check, DIAG_EINPUT
 * when it does not fit), else the median of the on-demand gpu_hour rows of hw,
 * else of its accelerator (spot, reserved and capacity-block rows are not
 * what an autoscaler pays), else the entry's rent_per_hour in hardware.json
 * unless the price file rents the entry itself by the month (a dedicated
 * server is never priced per hour: its hourly figure would be the monthly
 * rent / 730, which no one bills);
 * billing per second with a COST_DEFAULT_MIN_BILLING_S minimum per stretch,
 * min replicas 0, operator time from the default row.
 * COST_NO_PRICE when none. */
int cost_elastic_from_prices(struct cost_elastic *p, const struct prices *pr,
			     const struct cat_hardware *hw, const char *row_id, struct diag *d);

/* Whether gpu_hour row row_id (a scenario's cost.gpu_hour_row) can price
 * elastic rental of hw: a gpu_hour row of that id exists and names hw or
 * hw's accelerator.  0, or DIAG_EINPUT saying what was expected; the
 * commands check it as soon as the prices load, before any replay.  NULL
 * or "" is no row, and fine. */
int cost_gpu_hour_row_check(const struct prices *pr, const struct cat_hardware *hw,
			    const char *row_id, struct diag *d);

/* The API prices of model id (api_input/api_cached_input/api_output rows);
 * without a cached row, cache reads are priced as input (said so); cache
 * writes at the api_cache_write_5m row, else as input (said so).
 * DIAG_EINPUT when the id has no API rows. */
int cost_api_from_prices(struct cost_api *p, const struct prices *pr, const char *id,
			 struct diag *d);

/* Cache writes of p at the price of entries kept cache_ttl_s: the
 * api_cache_write_1h row of p's model past 5 minutes, the 5m row up to
 * them; without the row, as input (said so). */
void cost_api_cache_ttl(struct cost_api *p, const struct prices *pr, const char *id,
			double cache_ttl_s);

/* A seat plan (seat row id) with the API model whose list prices value its
 * usage (api_id).  DIAG_EINPUT for an unknown id. */
int cost_seats_from_prices(struct cost_seats *p, const struct prices *pr, const char *seat_id,
			   const char *api_id, struct diag *d);

/* ---- projections from one price (agentcap catalog --prices) ---- */

#define COST_DAYS_PER_YEAR 365.0

/* One year of renting price row row: a gpu_hour row by the hour, amount x
 * hours_per_day x 365 (per GPU); a dedicated_month row is a flat rent,
 * amount x 12 whatever the hours.  *amount in the row's currency, *usd at
 * the file's rate (row->usd / row->amount).  Excludes storage, transfer,
 * power, operations and resale (field notes).  0, or DIAG_EINPUT for
 * another kind of row or hours_per_day outside (0, 24]. */
int cost_rent_year(const struct price_row *row, double hours_per_day, double *amount,
		   double *usd, struct diag *d);

/* Output tokens a month at tok_s output tokens per second and a share u of
 * the month busy: tok_s x 3600 x COST_HOURS_PER_MONTH x u; and what one
 * million of them costs at usd_month a month (usd_month / (tokens / 1e6)).
 * 0, or DIAG_EINPUT for usd_month < 0, tok_s <= 0, u outside (0, 1]. */
int cost_per_mtok_at(double usd_month, double tok_s, double u, double *tokens_month,
		     double *usd_per_mtok, struct diag *d);

/* The default rows (ids in prices.json): electricity, PUE and operator time
 * used by the helpers above. */
#define COST_DEFAULT_ELECTRICITY "us-median-all-sectors"
#define COST_DEFAULT_PUE "uptime-global-2025"
#define COST_DEFAULT_AMORTISATION_MONTHS 36.0

/* Operator time: the base (operator_month rows) and the per-system share
 * (operator_system_month rows) at the default, and at the low and the high
 * end of their sourced ranges (compare's sensitivity).  Base: the field
 * notes' $5,000-15,000 a month loaded; per system: one loaded GPU cluster
 * engineer per 100 8-GPU nodes, 200 at the low end and 50 at the high. */
#define COST_DEFAULT_OPERATOR "field-notes-loaded"
#define COST_OPERATOR_BASE_HIGH "field-notes-loaded-high"
#define COST_DEFAULT_OPERATOR_SYSTEM "gpu-cluster-engineer-100-nodes"
#define COST_OPERATOR_SYSTEM_LOW "gpu-cluster-engineer-200-nodes"
#define COST_OPERATOR_SYSTEM_HIGH "gpu-cluster-engineer-50-nodes"

enum cost_operator_end {
	COST_OPERATOR_DEFAULT = 0,
	COST_OPERATOR_LOW,    /* both parts at the low end of their ranges */
	COST_OPERATOR_HIGH,   /* both at the high end */
};

/* The operator model from the price file's rows at end (the whole-figure
 * override unset).  0, or DIAG_EINPUT naming a missing row. */
int cost_operator_from_prices(struct cost_operator *o, const struct prices *pr,
			      enum cost_operator_end end, struct diag *d);

#endif
