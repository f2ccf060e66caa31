/* SPDX-License-Identifier: Apache-2.0
 * fit: which catalogue models fit on a machine, and which machines can hold
 * a model -- the library side of `agentcap fit`.
 *
 * A model fits a hardware entry in a weight format when the memory plan
 * (models/memory.h) leaves KV cache for at least min_context tokens (the
 * model's context, capped at FIT_DEFAULT_MIN_CONTEXT unless asked).  For
 * each model the best format is the one with the most bits per weight that
 * fits and that the engine loads (models/engine.h); a system entry spreads
 * the model over the fewest of its GPUs that hold it (1, 2, 4, ... or all)
 * by tensor parallelism.  A mixture of experts that
 * fits in no format may still fit with its routed experts in host RAM
 * (models/offload.h): the largest share of experts that leaves the KV
 * room stays on the GPUs and the rest needs host RAM, checked against the
 * entry's host RAM (or the --host-ram given, or FIT_DEFAULT_HOST_RAM_GB for
 * a bare GPU), and formats are tried from the most bits down until that
 * RAM suffices.  Unified-memory machines cannot offload.
 *
 * Figures per fitting row: weights, KV tokens left, the largest context x
 * concurrency the KV cache holds, and predicted single-stream decode and
 * prefill tokens/s at `context` tokens (models/perf_model.h).  Bandwidth
 * and peak rates are catalogue figures with their sources, never
 * measurements; a rate estimated from the family (no vendor figure) is
 * flagged.
 */
#ifndef MODELS_FIT_H
#define MODELS_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/diag.h"
#include "models/calfile.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "models/uncert.h"

#define FIT_DEFAULT_MIN_CONTEXT 32768
#define FIT_DEFAULT_CONTEXT 4096
/* Host RAM assumed for a bare GPU when none is given: a workstation
 * that takes 512 GB (field-notes.md: frontier MoE on a workstation). */
#define FIT_DEFAULT_HOST_RAM_GB 512.0

/* Output tokens of the call whose time ranks formats by speed: a prompt
 * of `context` tokens prefilled, then this many decoded (TraceLab's median
 * step produces 184-252 output tokens; field-notes.md). */
#define FIT_CALL_OUTPUT_TOKENS 256

/* How fit chooses among the formats that fit (see above). */
enum fit_prefer {
	FIT_PREFER_QUALITY = 0,
	FIT_PREFER_SPEED,
	FIT_PREFER_MEMORY,
};

/* "quality", "speed", "memory" (static). */
const char *fit_prefer_name(enum fit_prefer p);

/* Parse one of those names; false when it is none of them. */
bool fit_prefer_parse(const char *s, enum fit_prefer *out);

/* True when hw can run weight format wf: the hardware lists a dense rate for
 * its compute dtype or its fallback, or lists no tensor rate at all (Apple
 * GPUs, whose engines decide by the formats they load). */
bool fit_format_runs_on(const struct cat_hardware *hw, const struct cat_weight_format *wf);

struct fit_opts {
	const struct engine_table *engines; /* NULL: the built-in table */
	const char *engine;           /* NULL: llama.cpp on unified memory, else vllm */
	const char *weight_format;    /* NULL: try every format the engine loads */
	double memory_gb;             /* per-GPU memory instead of the catalogue's */
	double host_ram_gb;           /* 0: the entry's, else FIT_DEFAULT_HOST_RAM_GB */
	int64_t min_context;          /* 0: min(model context, FIT_DEFAULT_MIN_CONTEXT) */
	int64_t context;              /* tok/s figures at this context; 0: default */
	double gpu_memory_utilization;/* 0: 0.9 */
	bool all;                     /* keep rows that do not fit, with the reason */
	enum fit_prefer prefer;       /* 0: quality */
	const struct uncert_table *bands; /* error bars of the tok/s figures; NULL
					     none (models/uncert.h) */
};

enum fit_status {
	FIT_GPU = 0,                  /* fits in GPU memory */
	FIT_OFFLOAD,                  /* fits with experts in host RAM */
	FIT_NO,                       /* does not fit */
};

/* "gpu", "offload", "no" (static). */
const char *fit_status_name(enum fit_status s);

struct fit_row {
	const struct cat_hardware *hw;       /* borrowed from the catalogue */
	const struct cat_model *model;
	const struct cat_weight_format *format; /* NULL when nothing fits */
	char engine[ENGINE_NAME_MAX];
	int tp;                              /* GPUs used (tensor parallel) */
	int gpus_in_entry;                   /* GPUs the entry has (a system's count) */
	enum fit_status status;
	double weights_gb;                   /* whole model */
	double weights_gpu_gb;               /* per GPU */
	int64_t kv_tokens;
	int64_t context_cap;                 /* min(model context, kv_tokens) */
	int64_t sequences_at_cap;            /* kv_tokens / context_cap */
	double gpu_expert_fraction;          /* 1 unless offloaded */
	double host_ram_needed_gb;
	double host_ram_gb;                  /* what was assumed */
	bool host_ram_assumed;               /* no figure for the entry */
	double decode_tok_s;                 /* batch 1 at `context` */
	double prefill_tok_s;                /* a `context`-token prompt */
	double decode_band_pct;              /* +-% of their regimes' bands (the */
	double prefill_band_pct;             /* family, engine); NAN without bands */
	bool rate_estimated;
	bool compute_unknown;                /* no compute figure: no prefill */
	bool has_price;                      /* a list price is shown for the row */
	double price_usd;                    /* for sorting: USD, or EUR converted */
	const struct cat_price *price;       /* as published, for the whole entry;
						NULL when !has_price */
	bool price_withheld;                 /* --memory describes another machine */
	char why[DIAG_MSG_MAX];               /* FIT_NO: the reason */
	struct calfile_near near;            /* the nearest measured point of the
						catalogue's calibration to this
						row at batch 1 and `context`
						(found false: none stated) */
};

struct fit_result {
	bool by_model;                       /* fit_model (else fit_hardware) */
	const char *subject;                 /* hardware or model id (catalogue) */
	int64_t context;
	double memory_gb;                    /* --memory override; 0 none */
	enum fit_prefer prefer;
	double band_coverage;                /* of the bands; 0: none */
	double usd_per_eur;                  /* the catalogue's sorting rate; 0 none */
	const char *usd_per_eur_date;        /* borrowed from the catalogue */
	struct fit_row *rows;
	size_t n;
	size_t n_fit;                        /* rows with status != FIT_NO */
	size_t n_priced;                     /* by_model: rows[0..n_priced) have a price */
	const struct calfile *calibration;   /* the catalogue's (borrowed); NULL:
						not stated */
};

/* Every catalogue model on `hardware`, fitting ones first (by total
 * parameters, largest first), then the others when o->all.  0,
 * DIAG_EINPUT (unknown hardware or engine) or DIAG_ENOMEM. */
int fit_hardware(struct fit_result *r, const struct catalog *cat, const char *hardware,
		 const struct fit_opts *o, struct diag *d);

/* Every hardware entry that can hold `model`: those with a list price
 * first, cheapest first (EUR converted at the catalogue's usd_per_eur for
 * the order only), then those without one (no published price, or a
 * --memory that differs from the entry's, which describes another machine)
 * in catalogue order; n_priced says where the second group starts. */
int fit_model(struct fit_result *r, const struct catalog *cat, const char *model,
	      const struct fit_opts *o, struct diag *d);

/* One hardware/model pair (the row is filled whatever the outcome). */
int fit_one(struct fit_row *row, const struct catalog *cat, const struct cat_hardware *hw,
	    const struct cat_model *m, const struct fit_opts *o, const struct engine_table *et,
	    struct diag *d);

void fit_result_release(struct fit_result *r);

/* A table; DIAG_EIO when a write fails. */
int fit_write_text(FILE *out, const struct fit_result *r, struct diag *d);

/* {"schema_version": 1, "mode": "hardware"|"model", "subject", "context",
 * "rows": [...]} with a fixed key order. */
int fit_write_json(FILE *out, const struct fit_result *r, struct diag *d);

#endif
