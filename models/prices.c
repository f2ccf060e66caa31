/* SPDX-License-Identifier: Apache-2.0
 * prices: parse and validate prices.json (see prices.h), look rows up and
 * render the listing of `agentcap catalog --prices`.
 *
 * The file is parsed once by cJSON and every row checked on the tree.
 * cJSON keeps no positions, so when a row is bad the place is found again
 * in the text by a small cursor (locate) that steps over the document's
 * punctuation and lets cJSON read each key and skip each value: the message
 * then points at the offending value.  Every allocation is registered in
 * p->owned and freed in one sweep, so a failure half-way leaks nothing.
 */
#include "models/prices.h"

#include "base/jsonw.h"
#include "base/textfile.h"
#include "base/utf8.h"
#include "models/catalog.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRICES_MAX_ROWS 10000
#define PRICES_MAX_TEXT 4096

static const char *const kind_names[PRICE_KIND_COUNT] = {
	"seat", "overage", "api_input", "api_cached_input", "api_output", "gpu_hour",
	"dedicated_month", "purchase", "electricity", "pue", "operator_month",
	"api_cache_write_5m", "api_cache_write_1h", "operator_system_month",
};

/* The unit each kind must state; NULL: any text starting "per ". */
static const char *const kind_units[PRICE_KIND_COUNT] = {
	"per user per month", NULL, "per 1M tokens", "per 1M tokens", "per 1M tokens",
	"per GPU-hour", "per server per month", "per unit", "per kWh", "ratio",
	"per deployment per month", "per 1M tokens", "per 1M tokens", "per system per month",
};

const char *price_kind_name(enum price_kind k)
{
	return ((int)k >= 0 && (int)k < PRICE_KIND_COUNT) ? kind_names[k] : "?";
}

static const char *const tariff_names[PRICE_TARIFF_COUNT] = {
	"on_demand", "spot", "reserved", "capacity_block", "unstated",
};

const char *price_tariff_name(enum price_tariff t)
{
	return ((int)t >= 0 && (int)t < PRICE_TARIFF_COUNT) ? tariff_names[t] : "?";
}

static const char *const scope_names[PRICE_SCOPE_COUNT] = {
	"unstated", "complete", "server", "gpus",
};

const char *price_scope_name(enum price_scope s)
{
	return ((int)s >= 0 && (int)s < PRICE_SCOPE_COUNT) ? scope_names[s] : "?";
}

/* ---- ownership ---------------------------------------------------------- */

static void *own(struct prices *p, void *ptr)
{
	if (!ptr)
		return NULL;
	if (p->owned_count == p->owned_cap) {
		size_t cap = p->owned_cap ? p->owned_cap * 2 : 256;
		void **grown = realloc(p->owned, cap * sizeof(*grown));
		if (!grown) {
			free(ptr);
			return NULL;
		}
		p->owned = grown;
		p->owned_cap = cap;
	}
	p->owned[p->owned_count++] = ptr;
	return ptr;
}

static char *own_strdup(struct prices *p, const char *s)
{
	size_t n = strlen(s) + 1;
	char *c = malloc(n);
	if (c)
		memcpy(c, s, n);
	return own(p, c);
}

void prices_free(struct prices *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->owned_count; i++)
		free(p->owned[i]);
	free(p->owned);
	free(p);
}

/* ---- finding a place in the text again ---------------------------------- */

static const char *skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	return s;
}

/* End of the JSON value starting at s (cJSON reads it); NULL if none. */
static const char *skip_value(const char *s, const char *end)
{
	const char *stop = NULL;
	cJSON *v = cJSON_ParseWithLengthOpts(s, (size_t)(end - s), &stop, 0);
	if (!v)
		return NULL;
	cJSON_Delete(v);
	return stop;
}

/* In the object whose '{' is at obj: the first member named key.  Returns
 * the start of its value and sets *key_at to the key's opening quote; NULL
 * when there is no such member. */
static const char *member_at(const char *obj, const char *end, const char *key,
			     const char **key_at)
{
	if (!obj || obj >= end || *obj != '{')
		return NULL;
	const char *s = skip_ws(obj + 1, end);
	while (s < end && *s == '"') {
		const char *k = s, *stop = NULL;
		cJSON *name = cJSON_ParseWithLengthOpts(s, (size_t)(end - s), &stop, 0);
		if (!name)
			return NULL;
		bool match = cJSON_IsString(name) && strcmp(name->valuestring, key) == 0;
		cJSON_Delete(name);
		s = skip_ws(stop, end);
		if (s >= end || *s != ':')
			return NULL;
		s = skip_ws(s + 1, end);
		if (match) {
			if (key_at)
				*key_at = k;
			return s;
		}
		s = skip_value(s, end);
		if (!s)
			return NULL;
		s = skip_ws(s, end);
		if (s < end && *s == ',')
			s = skip_ws(s + 1, end);
	}
	return NULL;
}

/* The start of element index of the array whose '[' is at arr; NULL. */
static const char *element_at(const char *arr, const char *end, size_t index)
{
	if (!arr || arr >= end || *arr != '[')
		return NULL;
	const char *s = skip_ws(arr + 1, end);
	for (size_t i = 0; s < end && *s != ']'; i++) {
		if (i == index)
			return s;
		s = skip_value(s, end);
		if (!s)
			return NULL;
		s = skip_ws(s, end);
		if (s < end && *s == ',')
			s = skip_ws(s + 1, end);
	}
	return NULL;
}

/* What a message points at. */
enum at { AT_VALUE, AT_KEY, AT_OBJECT };

struct pctx {
	struct prices *p;
	const char *text;
	size_t len;
	struct diag *d;
};

/* Position of top[index].key (index < 0: top itself; key NULL: the
 * element), falling back to the deepest place found. */
static const char *locate(const struct pctx *c, const char *top, long index, const char *key,
			  enum at at)
{
	const char *end = c->text + c->len;
	const char *best = skip_ws(c->text, end);
	const char *k = NULL;
	const char *v = top ? member_at(best, end, top, &k) : best;
	if (!v)
		return best;
	if (top && !key && index < 0 && at == AT_KEY)
		return k;
	best = v;
	if (index >= 0) {
		v = element_at(v, end, (size_t)index);
		if (!v)
			return best;
		best = v;
	}
	if (!key || at == AT_OBJECT)
		return best;
	v = member_at(best, end, key, &k);
	if (!v)
		return best;
	return at == AT_KEY ? k : v;
}

static int fail_at(const struct pctx *c, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(const struct pctx *c, const char *where, const char *fmt, ...)
{
	char msg[DIAG_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* textfile_line_col wants a NUL-terminated text; count by hand */
	long line = 1, col = 1;
	for (const char *s = c->text; s < where && s < c->text + c->len; s++) {
		if (*s == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	return diag_at(c->d, DIAG_EINPUT, c->p->name, line, col, "%s", msg);
}

static long line_of(const struct pctx *c, const char *where)
{
	long line = 1;
	for (const char *s = c->text; s < where && s < c->text + c->len; s++)
		line += *s == '\n';
	return line;
}

/* What is wrong with s as a string the catalogue keeps, into why (for a
 * message): bytes that are not UTF-8, or a control character (C0, DEL,
 * C1: a terminal acts on them, so "\x1b[2J" in a source would clear the
 * screen of whoever lists the prices).  0 when s is fine, else 1 and why
 * filled; s itself is never copied into why. */
static int bad_text(const char *s, char *why, size_t cap)
{
	size_t n = strlen(s);
	for (size_t at = 0; at < n;) {
		uint32_t cp;
		size_t k = utf8_decode(s + at, n - at, &cp);
		if (k == 0) {
			snprintf(why, cap, "byte 0x%02x at byte %zu, not UTF-8",
				 (unsigned)(unsigned char)s[at], at + 1);
			return 1;
		}
		if (utf8_is_control(cp)) {
			snprintf(why, cap, "control character U+%04X at byte %zu", (unsigned)cp, at + 1);
			return 1;
		}
		at += k;
	}
	return 0;
}

#define TEXT_EXPECTED "expected printable UTF-8 text: no control characters, which would act on " \
	"the terminal that prints it"

/* ---- reading rows ------------------------------------------------------- */

static const char *const row_keys[] = {
	"id", "kind", "item", "provider", "price", "unit", "currency", "date", "source",
	"note", "hardware", "gpus", "tariff", "scope", "host", "gpu_row", "min_seats",
	"included_usage_usd", "overage_at_api_list", "tiers", "off_peak", "memory_gb", "csv_line",
	NULL,
};

static const char ROW_KEYS_TEXT[] =
	"id, kind, item, provider, price, unit, currency, date, source, note, hardware, "
	"gpus, tariff, scope, host, gpu_row, min_seats, included_usage_usd, overage_at_api_list, "
	"tiers, off_peak, memory_gb, csv_line";

struct rowctx {
	const struct pctx *c;
	long index;
	const char *id;           /* for messages; "" until known */
};

static int row_fail(const struct rowctx *r, const char *key, enum at at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int row_fail(const struct rowctx *r, const char *key, enum at at, const char *fmt, ...)
{
	char msg[DIAG_MSG_MAX / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	const char *where = locate(r->c, "prices", r->index, key, at);
	if (r->id[0])
		return fail_at(r->c, where, "prices[%ld] '%s': %s", r->index, r->id, msg);
	return fail_at(r->c, where, "prices[%ld]: %s", r->index, msg);
}

static const char *json_type(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsArray(v))
		return "an array";
	return "an object";
}

static bool valid_id(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= 64)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.'))
			return false;
	}
	return true;
}

/* A required (or, with optional, possibly absent) non-empty string. */
static int get_text(const struct rowctx *r, const cJSON *row, const char *key, bool optional,
		    const char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
	*out = NULL;
	if (!v) {
		if (optional)
			return 0;
		return row_fail(r, key, AT_OBJECT, "missing key '%s' (expected a non-empty string)",
				key);
	}
	if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) > PRICES_MAX_TEXT)
		return row_fail(r, key, AT_VALUE, "%s is %s (expected a non-empty string of at most "
				"%d characters)", key, cJSON_IsString(v) ? "an empty or too long string"
				: json_type(v), PRICES_MAX_TEXT);
	char why[80];
	if (bad_text(v->valuestring, why, sizeof(why)))
		return row_fail(r, key, AT_VALUE, "%s holds %s (" TEXT_EXPECTED ")", key, why);
	*out = v->valuestring;
	return 0;
}

static int get_count(const struct rowctx *r, const cJSON *row, const char *key, int64_t lo,
		     int64_t hi, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
	if (!v)
		return 0;
	double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
	if (!cJSON_IsNumber(v))
		return row_fail(r, key, AT_VALUE, "%s is %s (expected an integer from %lld to %lld)",
				key, json_type(v), (long long)lo, (long long)hi);
	if (x != floor(x) || x < (double)lo || x > (double)hi)
		return row_fail(r, key, AT_VALUE, "%s is %g (expected an integer from %lld to %lld)",
				key, x, (long long)lo, (long long)hi);
	*out = (int64_t)x;
	return 0;
}

static double rate_of(const struct prices *p, const char *currency)
{
	if (strcmp(currency, "USD") == 0 || strcmp(currency, "none") == 0)
		return 1.0;
	for (size_t i = 0; i < p->rate_count; i++)
		if (strcmp(p->rates[i].currency, currency) == 0)
			return p->rates[i].usd_per_unit;
	return 0;
}

static bool api_kind(int k)
{
	return k == PRICE_API_INPUT || k == PRICE_API_CACHED_INPUT || k == PRICE_API_OUTPUT ||
	       k == PRICE_API_CACHE_WRITE_5M || k == PRICE_API_CACHE_WRITE_1H;
}

static const char *const day_names[7] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};

/* "mon-fri", "sat", ...: a day or an inclusive range of days, as bits. */
static bool parse_days(const char *t, uint8_t *out)
{
	int a = -1, b = -1;
	for (int i = 0; i < 7; i++) {
		if (strncmp(t, day_names[i], 3) == 0)
			a = i;
		if (strlen(t) == 7 && t[3] == '-' && strcmp(t + 4, day_names[i]) == 0)
			b = i;
	}
	if (a < 0 || (strlen(t) != 3 && (strlen(t) != 7 || b < 0)))
		return false;
	if (strlen(t) == 3)
		b = a;
	*out = 0;
	for (int i = a;; i = (i + 1) % 7) {
		*out |= (uint8_t)(1u << i);
		if (i == b)
			break;
	}
	return true;
}

/* "tiers" and "off_peak" of an API row, their prices converted at rate. */
static int parse_api_rates(const struct rowctx *r, const cJSON *row, int k, double rate,
			   struct price_row *out)
{
	const cJSON *tv = cJSON_GetObjectItemCaseSensitive(row, "tiers");
	const cJSON *ov = cJSON_GetObjectItemCaseSensitive(row, "off_peak");
	out->tier_count = 0;
	out->off_peak = false;
	if ((tv || ov) && !api_kind(k))
		return row_fail(r, tv ? "tiers" : "off_peak", AT_KEY, "%s given for kind %s "
				"(expected it only on API rows)", tv ? "tiers" : "off_peak",
				kind_names[k]);
	if (tv && ov)
		return row_fail(r, "off_peak", AT_KEY, "tiers and off_peak on one row (expected "
				"one of them: a price that depends on both is not modelled)");
	if (tv) {
		int n = cJSON_IsArray(tv) ? cJSON_GetArraySize(tv) : -1;
		if (n < 1 || n > PRICE_TIERS_MAX)
			return row_fail(r, "tiers", AT_VALUE, "tiers is %s (expected an array of 1 to "
					"%d objects {\"prompt_over\": tokens, \"price\": amount})",
					n < 0 ? json_type(tv) : "the wrong length", PRICE_TIERS_MAX);
		int i = 0;
		for (const cJSON *e = tv->child; e; e = e->next, i++) {
			const cJSON *over = cJSON_GetObjectItemCaseSensitive(e, "prompt_over");
			const cJSON *price = cJSON_GetObjectItemCaseSensitive(e, "price");
			int64_t prev = i ? out->tier_over[i - 1] : 0;
			if (!cJSON_IsObject(e) || cJSON_GetArraySize(e) != 2 || !cJSON_IsNumber(over) ||
			    !cJSON_IsNumber(price) || over->valuedouble != floor(over->valuedouble) ||
			    !(over->valuedouble > (double)prev) || !(over->valuedouble <= 1e9) ||
			    !(price->valuedouble > 0) || !(price->valuedouble <= PRICES_MAX))
				return row_fail(r, "tiers", AT_VALUE, "tiers[%d] is not {\"prompt_over\": "
						"tokens, \"price\": amount} (expected prompt_over an "
						"integer above %lld and at most 1e9, ascending, and price "
						"a number > 0 and at most %g)", i, (long long)prev,
						PRICES_MAX);
			out->tier_over[i] = (int64_t)over->valuedouble;
			out->tier_usd[i] = price->valuedouble * rate;
		}
		out->tier_count = n;
	}
	if (ov) {
		const cJSON *price = cJSON_GetObjectItemCaseSensitive(ov, "price");
		const cJSON *days = cJSON_GetObjectItemCaseSensitive(ov, "peak_days");
		const cJSON *hours = cJSON_GetObjectItemCaseSensitive(ov, "peak_hours_utc");
		static const char what[] = "expected {\"price\": amount, \"peak_days\": \"mon-fri\", "
			"\"peak_hours_utc\": [[1, 4], [6, 10]]}: the rate outside the peak hours, "
			"the days that have them (a day or a range of mon tue wed thu fri sat sun) "
			"and the peak hours as [from, to) in whole hours 0-24 UTC";
		if (!cJSON_IsObject(ov) || cJSON_GetArraySize(ov) != 3 || !cJSON_IsNumber(price) ||
		    !(price->valuedouble > 0) || !(price->valuedouble <= PRICES_MAX) ||
		    !cJSON_IsString(days) || !parse_days(days->valuestring, &out->peak_days) ||
		    !cJSON_IsArray(hours) || cJSON_GetArraySize(hours) < 1)
			return row_fail(r, "off_peak", AT_VALUE, "off_peak is not what it should be "
					"(%s)", what);
		out->peak_hours = 0;
		int i = 0;
		for (const cJSON *h = hours->child; h; h = h->next, i++) {
			const cJSON *a = cJSON_IsArray(h) && cJSON_GetArraySize(h) == 2 ? h->child : NULL;
			const cJSON *b = a ? a->next : NULL;
			if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b) ||
			    a->valuedouble != floor(a->valuedouble) ||
			    b->valuedouble != floor(b->valuedouble) || !(a->valuedouble >= 0) ||
			    !(b->valuedouble <= 24) || !(a->valuedouble < b->valuedouble))
				return row_fail(r, "off_peak", AT_VALUE, "off_peak.peak_hours_utc[%d] is "
						"not [from, to) (%s)", i, what);
			for (int x = (int)a->valuedouble; x < (int)b->valuedouble; x++)
				out->peak_hours |= UINT32_C(1) << x;
		}
		if (!(price->valuedouble * rate < out->usd))
			return row_fail(r, "off_peak", AT_VALUE, "off_peak.price %g is not below the "
					"row's price %g (expected the rate outside the peak hours to be "
					"the lower one)", price->valuedouble, out->amount);
		out->off_peak = true;
		out->off_peak_usd = price->valuedouble * rate;
	}
	return 0;
}

static int parse_row(const struct pctx *c, const cJSON *row, long index, struct price_row *out)
{
	struct prices *p = c->p;
	struct rowctx r = { .c = c, .index = index, .id = "" };
	if (!cJSON_IsObject(row))
		return row_fail(&r, NULL, AT_VALUE, "a row is %s (expected an object)", json_type(row));
	const cJSON *idv = cJSON_GetObjectItemCaseSensitive(row, "id");
	if (cJSON_IsString(idv) && valid_id(idv->valuestring))
		r.id = idv->valuestring;
	for (const cJSON *k = row->child; k; k = k->next) {
		bool known = false;
		for (size_t i = 0; row_keys[i]; i++)
			known |= strcmp(k->string, row_keys[i]) == 0;
		char why[80];
		if (!known && bad_text(k->string, why, sizeof(why)))
			return row_fail(&r, k->string, AT_KEY, "a key holds %s (expected one of %s)",
					why, ROW_KEYS_TEXT);
		if (!known)
			return row_fail(&r, k->string, AT_KEY, "unknown key '%s' (expected one of %s)",
					k->string, ROW_KEYS_TEXT);
		for (const cJSON *l = k->next; l; l = l->next)
			if (strcmp(k->string, l->string) == 0)
				return row_fail(&r, k->string, AT_KEY,
						"key '%s' given twice (expected each key once)",
						k->string);
	}
	const char *id, *kind, *item, *provider, *unit, *currency, *date, *source, *note, *hw;
	const char *host = NULL, *gpu_row = NULL;
	int rc;
	if ((rc = get_text(&r, row, "id", false, &id)))
		return rc;
	if (!valid_id(id))
		return row_fail(&r, "id", AT_VALUE, "id '%s' is not an id (expected 1-63 characters "
				"of a-z 0-9 - .)", id);
	if ((rc = get_text(&r, row, "kind", false, &kind)))
		return rc;
	int k = -1;
	for (int i = 0; i < PRICE_KIND_COUNT; i++)
		if (strcmp(kind, kind_names[i]) == 0)
			k = i;
	if (k < 0)
		return row_fail(&r, "kind", AT_VALUE, "unknown kind '%s' (expected seat, overage, "
				"api_input, api_cached_input, api_output, api_cache_write_5m, "
				"api_cache_write_1h, gpu_hour, dedicated_month, "
				"purchase, electricity, pue, operator_month or operator_system_month)",
				kind);
	if ((rc = get_text(&r, row, "item", false, &item)) ||
	    (rc = get_text(&r, row, "provider", false, &provider)))
		return rc;
	const cJSON *pv = cJSON_GetObjectItemCaseSensitive(row, "price");
	if (!pv)
		return row_fail(&r, "price", AT_OBJECT, "missing key 'price' (expected a number > 0)");
	if (!cJSON_IsNumber(pv) || !(pv->valuedouble > 0) || !(pv->valuedouble <= PRICES_MAX))
		return row_fail(&r, "price", AT_VALUE, "price is %s (expected a number > 0 and at "
				"most %g)", !cJSON_IsNumber(pv) ? json_type(pv)
					    : pv->valuedouble > 0 ? "too large" : "not positive",
				PRICES_MAX);
	if ((rc = get_text(&r, row, "unit", false, &unit)))
		return rc;
	if (kind_units[k] ? strcmp(unit, kind_units[k]) != 0 : strncmp(unit, "per ", 4) != 0)
		return row_fail(&r, "unit", AT_VALUE, "unit '%s' does not fit kind %s (expected "
				"\"%s\")", unit, kind, kind_units[k] ? kind_units[k] : "per ...");
	if ((rc = get_text(&r, row, "currency", false, &currency)))
		return rc;
	if (k == PRICE_PUE ? strcmp(currency, "none") != 0 : strcmp(currency, "none") == 0)
		return row_fail(&r, "currency", AT_VALUE, "currency '%s' does not fit kind %s "
				"(expected %s)", currency, kind,
				k == PRICE_PUE ? "\"none\": a ratio" : "a currency code");
	double rate = rate_of(p, currency);
	if (!(rate > 0))
		return row_fail(&r, "currency", AT_VALUE, "currency '%s' has no exchange rate "
				"(expected USD or a currency listed in exchange_rates)", currency);
	if ((rc = get_text(&r, row, "date", false, &date)) ||
	    (rc = get_text(&r, row, "source", false, &source)) ||
	    (rc = get_text(&r, row, "note", true, &note)) ||
	    (rc = get_text(&r, row, "hardware", true, &hw)))
		return rc;
	out->gpus = 0;
	out->min_seats = 0;
	out->included_usage_usd = -1;
	out->overage_at_api_list = false;
	bool per_gpus = k == PRICE_PURCHASE || k == PRICE_DEDICATED_MONTH ||
			 k == PRICE_OPERATOR_SYSTEM_MONTH;
	if (per_gpus && !cJSON_GetObjectItemCaseSensitive(row, "gpus"))
		return row_fail(&r, "gpus", AT_OBJECT, "missing key 'gpus' (expected the GPUs one "
				"%s holds, an integer from 1 to 4096)",
				k == PRICE_PURCHASE ? "unit" : k == PRICE_DEDICATED_MONTH ? "server"
				: "system of the figure");
	if (!per_gpus && cJSON_GetObjectItemCaseSensitive(row, "gpus"))
		return row_fail(&r, "gpus", AT_KEY, "gpus given for kind %s (expected it only on "
				"purchase, dedicated_month and operator_system_month rows)", kind);
	if ((rc = get_count(&r, row, "gpus", 1, 4096, &out->gpus)))
		return rc;
	if (hw && k != PRICE_PURCHASE && k != PRICE_DEDICATED_MONTH && k != PRICE_GPU_HOUR)
		return row_fail(&r, "hardware", AT_KEY, "hardware given for kind %s (expected it only "
				"on gpu_hour, dedicated_month and purchase rows)", kind);
	out->tariff = PRICE_ON_DEMAND;
	const cJSON *tv = cJSON_GetObjectItemCaseSensitive(row, "tariff");
	if (tv && k != PRICE_GPU_HOUR)
		return row_fail(&r, "tariff", AT_KEY, "tariff given for kind %s (expected it only on "
				"gpu_hour rows)", kind);
	if (tv) {
		int t = -1;
		for (int i = 0; cJSON_IsString(tv) && i < PRICE_TARIFF_COUNT; i++)
			if (strcmp(tv->valuestring, tariff_names[i]) == 0)
				t = i;
		if (t < 0)
			return row_fail(&r, "tariff", AT_VALUE, "tariff is not a tariff (expected "
					"on_demand, spot, reserved, capacity_block or unstated)");
		out->tariff = (enum price_tariff)t;
	}
	out->scope = PRICE_SCOPE_UNSTATED;
	const cJSON *sv = cJSON_GetObjectItemCaseSensitive(row, "scope");
	if (sv && k != PRICE_PURCHASE)
		return row_fail(&r, "scope", AT_KEY, "scope given for kind %s (expected it only on "
				"purchase rows)", kind);
	if (sv) {
		int t = -1;
		for (int i = PRICE_SCOPE_COMPLETE; cJSON_IsString(sv) && i < PRICE_SCOPE_COUNT; i++)
			if (strcmp(sv->valuestring, scope_names[i]) == 0)
				t = i;
		if (t < 0)
			return row_fail(&r, "scope", AT_VALUE, "scope is not a scope (expected "
					"complete, server or gpus)");
		out->scope = (enum price_scope)t;
	}
	if ((rc = get_text(&r, row, "host", true, &host)) ||
	    (rc = get_text(&r, row, "gpu_row", true, &gpu_row)))
		return rc;
	if (host && out->scope != PRICE_SCOPE_GPUS)
		return row_fail(&r, "host", AT_KEY, "host given on a row that is not of scope gpus "
				"(expected it only on purchase rows of bare GPUs or cards)");
	if (gpu_row && out->scope != PRICE_SCOPE_SERVER && out->scope != PRICE_SCOPE_COMPLETE)
		return row_fail(&r, "gpu_row", AT_KEY, "gpu_row given on a row that is not of scope "
				"server or complete (expected it only on purchase rows of systems)");
	if ((host && !valid_id(host)) || (gpu_row && !valid_id(gpu_row)))
		return row_fail(&r, host && !valid_id(host) ? "host" : "gpu_row", AT_VALUE,
				"%s is not an id (expected the id of a purchase row)",
				host && !valid_id(host) ? "host" : "gpu_row");
	static const char *const seat_keys[] = {"min_seats", "included_usage_usd",
						"overage_at_api_list"};
	for (size_t i = 0; i < 3; i++)
		if (k != PRICE_SEAT && cJSON_GetObjectItemCaseSensitive(row, seat_keys[i]))
			return row_fail(&r, seat_keys[i], AT_KEY, "%s given for kind %s (expected it "
					"only on seat rows)", seat_keys[i], kind);
	if ((rc = get_count(&r, row, "min_seats", 1, 1000000, &out->min_seats)))
		return rc;
	const cJSON *iv = cJSON_GetObjectItemCaseSensitive(row, "included_usage_usd");
	if (iv) {
		if (!cJSON_IsNumber(iv) || !(iv->valuedouble >= 0) || !isfinite(iv->valuedouble))
			return row_fail(&r, "included_usage_usd", AT_VALUE, "included_usage_usd is %s "
					"(expected a number >= 0: US dollars of usage at API list "
					"prices per seat per month)",
					cJSON_IsNumber(iv) ? "negative" : json_type(iv));
		out->included_usage_usd = iv->valuedouble;
	}
	const cJSON *ov = cJSON_GetObjectItemCaseSensitive(row, "overage_at_api_list");
	if (ov) {
		if (!cJSON_IsBool(ov))
			return row_fail(&r, "overage_at_api_list", AT_VALUE, "overage_at_api_list is "
					"%s (expected true or false)", json_type(ov));
		out->overage_at_api_list = cJSON_IsTrue(ov);
	}
	out->memory_gb = 0;
	const cJSON *mv = cJSON_GetObjectItemCaseSensitive(row, "memory_gb");
	if (mv && k != PRICE_PURCHASE && k != PRICE_DEDICATED_MONTH)
		return row_fail(&r, "memory_gb", AT_KEY, "memory_gb given for kind %s (expected it "
				"only on purchase and dedicated_month rows)", kind);
	if (mv) {
		if (!cJSON_IsNumber(mv) || !(mv->valuedouble > 0) || !(mv->valuedouble <= 1e6))
			return row_fail(&r, "memory_gb", AT_VALUE, "memory_gb is %s (expected the "
					"memory of the configuration priced, GB, above 0 and at most "
					"1e6)", cJSON_IsNumber(mv) ? "out of range" : json_type(mv));
		out->memory_gb = mv->valuedouble;
	}
	int64_t csv_line = 0;
	if ((rc = get_count(&r, row, "csv_line", 2, 100000000, &csv_line)))
		return rc;
	out->kind = (enum price_kind)k;
	out->amount = pv->valuedouble;
	out->usd = pv->valuedouble * rate;
	out->id = own_strdup(p, id);
	out->item = own_strdup(p, item);
	out->provider = own_strdup(p, provider);
	out->unit = own_strdup(p, unit);
	out->currency = own_strdup(p, currency);
	out->date = own_strdup(p, date);
	out->source = own_strdup(p, source);
	out->note = note ? own_strdup(p, note) : NULL;
	out->hardware = hw ? own_strdup(p, hw) : NULL;
	out->host = host ? own_strdup(p, host) : NULL;
	out->gpu_row = gpu_row ? own_strdup(p, gpu_row) : NULL;
	out->line = line_of(c, locate(c, "prices", index, NULL, AT_VALUE));
	if ((rc = parse_api_rates(&r, row, k, rate, out)))
		return rc;
	if (!out->id || !out->item || !out->provider || !out->unit || !out->currency ||
	    !out->date || !out->source || (note && !out->note) || (hw && !out->hardware) ||
	    (host && !out->host) || (gpu_row && !out->gpu_row))
		return diag_set(c->d, DIAG_ENOMEM, "%s: out of memory", p->name);
	return 0;
}

static int parse_rates(const struct pctx *c, const cJSON *arr)
{
	struct prices *p = c->p;
	if (!arr)
		return 0;
	if (!cJSON_IsArray(arr))
		return fail_at(c, locate(c, "exchange_rates", -1, NULL, AT_VALUE),
			       "exchange_rates is %s (expected an array)", json_type(arr));
	size_t n = (size_t)cJSON_GetArraySize(arr);
	p->rates = own(p, calloc(n ? n : 1, sizeof(*p->rates)));
	if (!p->rates)
		return diag_set(c->d, DIAG_ENOMEM, "%s: out of memory", p->name);
	long i = 0;
	for (const cJSON *e = arr->child; e; e = e->next, i++) {
		const cJSON *cur = cJSON_GetObjectItemCaseSensitive(e, "currency");
		const cJSON *rate = cJSON_GetObjectItemCaseSensitive(e, "usd_per_unit");
		const cJSON *date = cJSON_GetObjectItemCaseSensitive(e, "date");
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(e, "source");
		const char *where = locate(c, "exchange_rates", i, NULL, AT_VALUE);
		if (!cJSON_IsObject(e) || !cJSON_IsString(cur) || strlen(cur->valuestring) != 3 ||
		    strcmp(cur->valuestring, "USD") == 0 || !cJSON_IsNumber(rate) ||
		    !(rate->valuedouble >= PRICES_MIN_RATE) || !(rate->valuedouble <= PRICES_MAX_RATE) ||
		    !cJSON_IsString(date) || !date->valuestring[0] || !cJSON_IsString(src) ||
		    !src->valuestring[0])
			return fail_at(c, where, "exchange_rates[%ld]: expected {\"currency\": a "
				       "three-letter code other than USD, \"usd_per_unit\": a number "
				       "in [%g, %g], \"date\", \"source\": non-empty strings}", i,
				       PRICES_MIN_RATE, PRICES_MAX_RATE);
		const cJSON *texts[] = {cur, date, src};
		for (size_t t = 0; t < 3; t++) {
			char why[80];
			if (bad_text(texts[t]->valuestring, why, sizeof(why)))
				return fail_at(c, locate(c, "exchange_rates", i, texts[t]->string,
							 AT_VALUE),
					       "exchange_rates[%ld]: %s holds %s (" TEXT_EXPECTED ")", i,
					       texts[t]->string, why);
		}
		for (size_t j = 0; j < (size_t)i; j++)
			if (strcmp(p->rates[j].currency, cur->valuestring) == 0)
				return fail_at(c, where, "exchange_rates[%ld]: currency '%s' given "
					       "twice (expected one rate per currency)", i,
					       cur->valuestring);
		struct price_rate *pr = &p->rates[p->rate_count];
		pr->currency = own_strdup(p, cur->valuestring);
		pr->date = own_strdup(p, date->valuestring);
		pr->source = own_strdup(p, src->valuestring);
		pr->usd_per_unit = rate->valuedouble;
		if (!pr->currency || !pr->date || !pr->source)
			return diag_set(c->d, DIAG_ENOMEM, "%s: out of memory", p->name);
		p->rate_count++;
	}
	return 0;
}

static int parse_doc(const struct pctx *c, const cJSON *root)
{
	struct prices *p = c->p;
	static const char *const top_keys[] = {"schema_version", "description", "provenance",
					       "exchange_rates", "prices", NULL};
	if (!cJSON_IsObject(root))
		return fail_at(c, skip_ws(c->text, c->text + c->len),
			       "the document is %s (expected an object with schema_version, "
			       "exchange_rates and prices)", json_type(root));
	for (const cJSON *k = root->child; k; k = k->next) {
		bool known = false;
		for (size_t i = 0; top_keys[i]; i++)
			known |= strcmp(k->string, top_keys[i]) == 0;
		char why[80];
		if (!known && bad_text(k->string, why, sizeof(why)))
			return fail_at(c, locate(c, k->string, -1, NULL, AT_KEY),
				       "a key holds %s (expected schema_version, description, "
				       "provenance, exchange_rates, prices)", why);
		if (!known)
			return fail_at(c, locate(c, k->string, -1, NULL, AT_KEY),
				       "unknown key '%s' (expected schema_version, description, "
				       "provenance, exchange_rates, prices)", k->string);
	}
	const cJSON *sv = cJSON_GetObjectItemCaseSensitive(root, "schema_version");
	if (!cJSON_IsNumber(sv) || sv->valuedouble != 1)
		return fail_at(c, locate(c, sv ? "schema_version" : NULL, -1, NULL, AT_VALUE),
			       "schema_version is %s (expected 1)",
			       sv ? "not 1" : "missing");
	int rc = parse_rates(c, cJSON_GetObjectItemCaseSensitive(root, "exchange_rates"));
	if (rc)
		return rc;
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "prices");
	if (!cJSON_IsArray(rows))
		return fail_at(c, locate(c, rows ? "prices" : NULL, -1, NULL, AT_VALUE),
			       "prices is %s (expected an array of rows)",
			       rows ? json_type(rows) : "missing");
	size_t n = (size_t)cJSON_GetArraySize(rows);
	if (n > PRICES_MAX_ROWS)
		return fail_at(c, locate(c, "prices", -1, NULL, AT_VALUE),
			       "%zu rows (expected at most %d)", n, PRICES_MAX_ROWS);
	p->rows = own(p, calloc(n ? n : 1, sizeof(*p->rows)));
	if (!p->rows)
		return diag_set(c->d, DIAG_ENOMEM, "%s: out of memory", p->name);
	long i = 0;
	for (const cJSON *e = rows->child; e; e = e->next, i++) {
		struct price_row *row = &p->rows[p->row_count];
		if ((rc = parse_row(c, e, i, row)))
			return rc;
		for (size_t j = 0; j < p->row_count; j++) {
			if (p->rows[j].kind == row->kind && strcmp(p->rows[j].id, row->id) == 0) {
				struct rowctx r = { .c = c, .index = i, .id = row->id };
				return row_fail(&r, "id", AT_VALUE, "a second %s row with id '%s' (expected "
						"ids unique per kind; the first is on line %ld)",
						price_kind_name(row->kind), row->id, p->rows[j].line);
			}
		}
		p->row_count++;
	}
	/* a bare GPU's host is a system row that says what its GPUs cost, so
	 * that the rest of its price is the host; it must be more than nothing */
	for (size_t j = 0; j < p->row_count; j++) {
		const struct price_row *r = &p->rows[j];
		struct rowctx rc2 = { .c = c, .index = (long)j, .id = r->id };
		if (r->gpu_row) {
			const struct price_row *g = prices_find(p, PRICE_PURCHASE, r->gpu_row);
			if (!g || g->scope != PRICE_SCOPE_GPUS)
				return row_fail(&rc2, "gpu_row", AT_VALUE, "gpu_row '%s' is %s "
						"(expected the id of a purchase row of scope gpus)",
						r->gpu_row, g ? "not of scope gpus" : "no purchase row");
			if (!((double)r->gpus * g->usd < r->usd))
				return row_fail(&rc2, "gpu_row", AT_VALUE, "%lld x gpu_row '%s' (USD "
						"%.10g) is not less than this row's USD %.10g (expected "
						"the system to cost more than its GPUs)",
						(long long)r->gpus, g->id, g->usd, r->usd);
		}
		if (r->host) {
			const struct price_row *h = prices_find(p, PRICE_PURCHASE, r->host);
			if (!h || !h->gpu_row)
				return row_fail(&rc2, "host", AT_VALUE, "host '%s' is %s (expected the "
						"id of a purchase row of scope server or complete with "
						"a gpu_row)", r->host,
						h ? "a purchase row without gpu_row" : "no purchase row");
		}
	}
	/* an API model needs its input and output prices (a cached price may be
	 * missing: cache reads are then priced as input) */
	for (size_t j = 0; j < p->row_count; j++) {
		const struct price_row *r = &p->rows[j];
		if (r->kind != PRICE_API_INPUT && r->kind != PRICE_API_OUTPUT &&
		    r->kind != PRICE_API_CACHED_INPUT && r->kind != PRICE_API_CACHE_WRITE_5M &&
		    r->kind != PRICE_API_CACHE_WRITE_1H)
			continue;
		enum price_kind need[2] = {PRICE_API_INPUT, PRICE_API_OUTPUT};
		for (size_t q = 0; q < 2; q++)
			if (!prices_find(p, need[q], r->id)) {
				struct rowctx rc2 = { .c = c, .index = (long)j, .id = r->id };
				return row_fail(&rc2, "id", AT_VALUE, "API model '%s' has no %s row "
						"(expected api_input and api_output rows for every API "
						"model)", r->id, price_kind_name(need[q]));
			}
		/* one model's rows split calls the same way: by the same prompt
		 * sizes, or by the same peak hours */
		const struct price_row *in = prices_find(p, PRICE_API_INPUT, r->id);
		bool same = in->tier_count == r->tier_count && in->off_peak == r->off_peak &&
			    (!r->off_peak || (in->peak_days == r->peak_days &&
					      in->peak_hours == r->peak_hours));
		for (int32_t t = 0; same && t < r->tier_count; t++)
			same = in->tier_over[t] == r->tier_over[t];
		if (!same) {
			struct rowctx rc2 = { .c = c, .index = (long)j, .id = r->id };
			return row_fail(&rc2, r->off_peak || in->off_peak ? "off_peak" : "tiers",
					AT_VALUE, "API model '%s': this row's %s differ from its "
					"api_input row's on line %ld (expected every row of one model to "
					"give the same prompt sizes, or the same peak days and hours)",
					r->id, r->off_peak || in->off_peak ? "peak hours" : "tiers",
					in->line);
		}
	}
	return 0;
}

int prices_parse(struct prices **out, const char *name, const char *text, size_t len,
		 struct diag *d)
{
	*out = NULL;
	if (len > PRICES_FILE_MAX_BYTES)
		return diag_at(d, DIAG_EINPUT, name, 0, 0, "larger than %u bytes (expected a price "
			       "file)", PRICES_FILE_MAX_BYTES);
	struct prices *p = calloc(1, sizeof(*p));
	if (!p)
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", name);
	p->name = own_strdup(p, name);
	if (!p->name) {
		prices_free(p);
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", name);
	}
	struct pctx c = { .p = p, .text = text, .len = len, .d = d };
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	int rc;
	if (!root) {
		const char *at = (end && end >= text && end <= text + len) ? end : text;
		rc = fail_at(&c, at, "invalid JSON (expected a JSON object; or out of memory while "
			     "parsing)");
	} else {
		const char *rest = skip_ws(end, text + len);
		rc = rest < text + len ? fail_at(&c, rest, "text after the JSON document (expected "
						  "the end of the file)")
				       : parse_doc(&c, root);
		cJSON_Delete(root);
	}
	if (rc) {
		prices_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int prices_load(struct prices **out, const char *path, struct diag *d)
{
	*out = NULL;
	if (!path) {
		size_t len = 0;
		const char *text = prices_embedded(&len);
		return prices_parse(out, "prices.json", text, len, d);
	}
	char *text = textfile_read(path, PRICES_FILE_MAX_BYTES, "a price file", d);
	if (!text)
		return d->code;
	int rc = prices_parse(out, path, text, strlen(text), d);
	free(text);
	return rc;
}

bool prices_check(const struct prices *p)
{
	if (!p)
		return false;
	for (size_t i = 0; i < p->row_count; i++) {
		const struct price_row *r = &p->rows[i];
		if (!r->id || !valid_id(r->id) || (int)r->kind < 0 || r->kind >= PRICE_KIND_COUNT ||
		    !(r->amount > 0) || !(r->usd > 0) || !r->source || !r->date || r->line < 1)
			return false;
		if (fabs(r->usd - r->amount * rate_of(p, r->currency)) > 1e-9 * r->usd)
			return false;
		if ((r->kind == PRICE_PURCHASE || r->kind == PRICE_DEDICATED_MONTH ||
		     r->kind == PRICE_OPERATOR_SYSTEM_MONTH) && r->gpus < 1)
			return false;
		if ((int)r->scope < 0 || r->scope >= PRICE_SCOPE_COUNT ||
		    (r->kind != PRICE_PURCHASE && r->scope != PRICE_SCOPE_UNSTATED) ||
		    (r->host && r->scope != PRICE_SCOPE_GPUS))
			return false;
		if ((int)r->tariff < 0 || r->tariff >= PRICE_TARIFF_COUNT ||
		    (r->kind != PRICE_GPU_HOUR && r->tariff != PRICE_ON_DEMAND))
			return false;
		for (size_t j = 0; j < i; j++)
			if (p->rows[j].kind == r->kind && strcmp(p->rows[j].id, r->id) == 0)
				return false;
	}
	return true;
}

/* ---- lookups ------------------------------------------------------------ */

const struct price_row *prices_host_of(const struct prices *p, const struct price_row *r,
				       double *share_usd, const struct price_row **gpu)
{
	*share_usd = 0;
	if (gpu)
		*gpu = NULL;
	if (!r->host)
		return NULL;
	const struct price_row *h = prices_find(p, PRICE_PURCHASE, r->host);
	const struct price_row *g = h && h->gpu_row ? prices_find(p, PRICE_PURCHASE, h->gpu_row)
						    : NULL;
	if (!g) /* the loader refuses such a file */
		return NULL;
	*share_usd = (h->usd - (double)h->gpus * g->usd) / (double)h->gpus;
	if (gpu)
		*gpu = g;
	return h;
}

const struct price_row *prices_find(const struct prices *p, enum price_kind kind, const char *id)
{
	for (size_t i = 0; i < p->row_count; i++)
		if (p->rows[i].kind == kind && catalog_name_eq(p->rows[i].id, id))
			return &p->rows[i];
	return NULL;
}

size_t prices_for_hardware(const struct prices *p, enum price_kind kind, const char *hw,
			   const struct price_row **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < p->row_count; i++) {
		const struct price_row *r = &p->rows[i];
		if (r->kind != kind || !r->hardware || strcmp(r->hardware, hw) != 0)
			continue;
		if (n < max)
			out[n] = r;
		n++;
	}
	return n;
}

/* Whether row r is one of kind and hardware hw (and, t >= 0, tariff t). */
static bool row_of(const struct price_row *r, enum price_kind kind, const char *hw, int t)
{
	return r->kind == kind && r->hardware && strcmp(r->hardware, hw) == 0 &&
	       (t < 0 || r->tariff == (enum price_tariff)t);
}

/* The median of the rows row_of selects; *count receives their number. */
static const struct price_row *median_of(const struct prices *p, enum price_kind kind,
					 const char *hw, int t, size_t *count)
{
	/* selection by counting: the row with n/2 rows cheaper than it (ties
	 * broken by file order), so no buffer is needed; O(rows^2) over the
	 * few rows of one kind and hardware */
	size_t n = 0;
	for (size_t i = 0; i < p->row_count; i++)
		n += row_of(&p->rows[i], kind, hw, t);
	if (count)
		*count = n;
	if (n == 0)
		return NULL;
	size_t want = n / 2;
	for (size_t i = 0; i < p->row_count; i++) {
		const struct price_row *a = &p->rows[i];
		if (!row_of(a, kind, hw, t))
			continue;
		size_t below = 0;
		for (size_t j = 0; j < p->row_count; j++) {
			const struct price_row *b = &p->rows[j];
			if (row_of(b, kind, hw, t))
				below += b->usd < a->usd || (b->usd == a->usd && j < i);
		}
		if (below == want)
			return a;
	}
	return NULL;
}

const struct price_row *prices_median_for_hardware(const struct prices *p, enum price_kind kind,
						    const char *hw)
{
	return median_of(p, kind, hw, -1, NULL);
}

const struct price_row *prices_median_gpu_hour(const struct prices *p, const char *hw,
						enum price_tariff t, size_t *count)
{
	return median_of(p, PRICE_GPU_HOUR, hw, (int)t, count);
}

int prices_check_hardware(const struct prices *p, const struct catalog *cat, struct diag *d)
{
	for (size_t i = 0; i < p->row_count; i++) {
		const struct price_row *r = &p->rows[i];
		if (!r->hardware)
			continue;
		const struct cat_hardware *h = catalog_hardware(cat, r->hardware);
		if (!h || strcmp(h->id, r->hardware) != 0)
			return diag_at(d, DIAG_EINPUT, p->name, r->line, 0,
				       "%s '%s': hardware '%s' is not a hardware id of the catalogue "
				       "(expected an id listed by agentcap catalog)",
				       price_kind_name(r->kind), r->id, r->hardware);
		/* a price of one configuration is no price of another: the
		 * memory simulated must be the memory bought */
		double gb = h->memory_gb * (r->kind == PRICE_PURCHASE && r->gpus > 0 ? (double)r->gpus
						: 1.0);
		if (r->memory_gb > 0 && fabs(r->memory_gb - gb) > 0.5)
			return diag_at(d, DIAG_EINPUT, p->name, r->line, 0,
				       "%s '%s': memory_gb %g is not hardware '%s''s %g GB (expected "
				       "the price of the configuration the catalogue simulates, or no "
				       "hardware named)", price_kind_name(r->kind), r->id, r->memory_gb,
				       r->hardware, gb);
	}
	return 0;
}

/* ---- listings ----------------------------------------------------------- */

/* Whether any cost option can price hw (the rule of prices_write_table):
 * elastic rental takes on-demand rows only. */
static bool hw_priced(const struct prices *p, const struct cat_hardware *hw)
{
	const struct cat_hardware *dev = hw->device ? hw->device : hw;
	if (prices_median_gpu_hour(p, hw->id, PRICE_ON_DEMAND, NULL) ||
	    prices_median_gpu_hour(p, dev->id, PRICE_ON_DEMAND, NULL) ||
	    prices_for_hardware(p, PRICE_PURCHASE, hw->id, NULL, 0) ||
	    prices_for_hardware(p, PRICE_PURCHASE, dev->id, NULL, 0) ||
	    prices_for_hardware(p, PRICE_DEDICATED_MONTH, hw->id, NULL, 0))
		return true;
	return hw->price.currency != CAT_CUR_NONE || hw->rent_hour.currency != CAT_CUR_NONE;
}

double prices_usd(const struct prices *p, const char *currency, double amount)
{
	return amount * rate_of(p, currency);
}

int prices_write_table(const struct prices *p, const struct catalog *cat, FILE *out,
		       struct diag *d)
{
	for (int k = 0; k < PRICE_KIND_COUNT; k++) {
		size_t n = 0;
		for (size_t i = 0; i < p->row_count; i++)
			n += p->rows[i].kind == (enum price_kind)k;
		if (!n)
			continue;
		bool gpu_hour = k == PRICE_GPU_HOUR, purchase = k == PRICE_PURCHASE;
		fprintf(out, "%s (%zu)\n", kind_names[k], n);
		fprintf(out, "  %-34s %12s %-4s %12s  %-26s %-14s %s%s\n", "id", "price", "cur",
			"USD", "unit", "hardware", gpu_hour ? "tariff         "
					     : purchase ? "scope     " : "", "date");
		for (size_t i = 0; i < p->row_count; i++) {
			const struct price_row *r = &p->rows[i];
			if (r->kind != (enum price_kind)k)
				continue;
			fprintf(out, "  %-34s %12.4g %-4s %12.4g  %-26s %-14s ", r->id, r->amount,
				strcmp(r->currency, "none") ? r->currency : "-", r->usd, r->unit,
				r->hardware ? r->hardware : "-");
			if (gpu_hour)
				fprintf(out, "%-15s", tariff_names[r->tariff]);
			if (purchase)
				fprintf(out, "%-10s", scope_names[r->scope]);
			fprintf(out, "%s\n", r->date);
			fprintf(out, "  %-34s source: %s\n", "", r->source);
			double share;
			const struct price_row *g;
			const struct price_row *h = prices_host_of(p, r, &share, &g);
			if (h)
				fprintf(out, "  %-34s host: %s, USD %.10g per GPU = (USD %.10g - %lld x "
					"%s USD %.10g) / %lld\n", "", h->id, share, h->usd,
					(long long)h->gpus, g->id, g->usd, (long long)h->gpus);
			else if (purchase && r->scope == PRICE_SCOPE_GPUS)
				fprintf(out, "  %-34s host: none named (GPUs only)\n", "");
		}
		fputc('\n', out);
	}
	fputs("exchange rates\n", out);
	if (!p->rate_count)
		fputs("  (none: every row is in USD)\n", out);
	for (size_t i = 0; i < p->rate_count; i++)
		fprintf(out, "  1 %s = %.4g USD (%s; %s)\n", p->rates[i].currency,
			p->rates[i].usd_per_unit, p->rates[i].date, p->rates[i].source);
	if (cat) {
		fputs("\nhardware without any price (no row here for it or its GPU, no price or "
		      "rent_per_hour in hardware.json):\n  ", out);
		size_t col = 2, none = 0;
		for (size_t i = 0; i < cat->hardware_count; i++) {
			const char *id = cat->hardware[i].id;
			if (hw_priced(p, &cat->hardware[i]))
				continue;
			size_t w = strlen(id) + 1;
			if (col + w > 100) {
				fputs("\n  ", out);
				col = 2;
			}
			fprintf(out, "%s ", id);
			col += w;
			none++;
		}
		fprintf(out, "%s\n", none ? "" : "(none)");
	}
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "write failed");
	return 0;
}


int prices_write_json(const struct prices *p, const struct catalog *cat, FILE *out,
		      struct diag *d)
{
	fputs("{\"schema_version\": 1, \"exchange_rates\": [", out);
	for (size_t i = 0; i < p->rate_count; i++) {
		fputs(i ? ", {\"currency\": " : "{\"currency\": ", out);
		jsonw_str(out, p->rates[i].currency);
		fprintf(out, ", \"usd_per_unit\": %.10g, \"date\": ", p->rates[i].usd_per_unit);
		jsonw_str(out, p->rates[i].date);
		fputs(", \"source\": ", out);
		jsonw_str(out, p->rates[i].source);
		fputc('}', out);
	}
	fputs("],\n \"prices\": [\n", out);
	for (size_t i = 0; i < p->row_count; i++) {
		const struct price_row *r = &p->rows[i];
		fputs("  {\"id\": ", out);
		jsonw_str(out, r->id);
		fprintf(out, ", \"kind\": \"%s\", \"item\": ", kind_names[r->kind]);
		jsonw_str(out, r->item);
		fputs(", \"provider\": ", out);
		jsonw_str(out, r->provider);
		fprintf(out, ", \"price\": %.10g, \"unit\": ", r->amount);
		jsonw_str(out, r->unit);
		fputs(", \"currency\": ", out);
		jsonw_str(out, r->currency);
		fprintf(out, ", \"usd\": %.10g, \"date\": ", r->usd);
		jsonw_str(out, r->date);
		fputs(", \"source\": ", out);
		jsonw_str(out, r->source);
		fputs(", \"hardware\": ", out);
		jsonw_str(out, r->hardware);
		fputs(", \"tariff\": ", out);
		jsonw_str(out, r->kind == PRICE_GPU_HOUR ? tariff_names[r->tariff] : NULL);
		fputs(", \"scope\": ", out);
		jsonw_str(out, r->kind == PRICE_PURCHASE ? scope_names[r->scope] : NULL);
		fputs(", \"host\": ", out);
		jsonw_str(out, r->host);
		double share;
		if (prices_host_of(p, r, &share, NULL))
			fprintf(out, ", \"host_share_usd_per_gpu\": %.10g", share);
		else
			fputs(", \"host_share_usd_per_gpu\": null", out);
		fputs(", \"gpu_row\": ", out);
		jsonw_str(out, r->gpu_row);
		if (r->tier_count) {
			fputs(", \"tiers\": [", out);
			for (int32_t t = 0; t < r->tier_count; t++)
				fprintf(out, "%s{\"prompt_over\": %lld, \"usd\": %.10g}", t ? ", " : "",
					(long long)r->tier_over[t], r->tier_usd[t]);
			fputc(']', out);
		}
		if (r->off_peak) {
			fprintf(out, ", \"off_peak\": {\"usd\": %.10g, \"peak_days\": [",
				r->off_peak_usd);
			for (int x = 0, n = 0; x < 7; x++)
				if (r->peak_days >> x & 1u)
					fprintf(out, "%s\"%s\"", n++ ? ", " : "", day_names[x]);
			fputs("], \"peak_hours_utc\": [", out);
			for (int h = 0, n = 0; h < 24; h++)
				if (r->peak_hours >> h & 1u)
					fprintf(out, "%s%d", n++ ? ", " : "", h);
			fputs("]}", out);
		}
		fprintf(out, ", \"gpus\": %lld, \"line\": %ld}%s\n", (long long)r->gpus, r->line,
			i + 1 < p->row_count ? "," : "");
	}
	fputs(" ]", out);
	if (cat) {
		fputs(",\n \"hardware_without_price\": [", out);
		bool first = true;
		for (size_t i = 0; i < cat->hardware_count; i++) {
			if (hw_priced(p, &cat->hardware[i]))
				continue;
			fputs(first ? "" : ", ", out);
			jsonw_str(out, cat->hardware[i].id);
			first = false;
		}
		fputc(']', out);
	}
	fputs("}\n", out);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "write failed");
	return 0;
}

/* ---- the built-in copy -------------------------------------------------- */

extern const char prices_json[]; /* generated from models/catalog/prices.json */

const char *prices_embedded(size_t *len)
{
	*len = strlen(prices_json);
	return prices_json;
}
