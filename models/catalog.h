/* SPDX-License-Identifier: Apache-2.0
 * catalog: hardware, hardware families, model architectures and numeric
 * formats, loaded from the JSON files of models/catalog/ and validated.
 *
 * The catalogue is read-only once loaded.  Every string and array in it is
 * owned by the struct catalog and stays valid until catalog_free; pointers
 * returned by the lookups share that lifetime.  Figures are stored in the
 * units their field names say (GB, GB/s, TFLOPS, W, us); a figure the files
 * do not give is 0.  Lookups compare ids and aliases case-insensitively and
 * treat ' ', '-' and '_' as the same character, so "H100", "h100" and
 * "NVIDIA H100 SXM5 80GB" can all name one entry.
 *
 * A hardware entry is either one accelerator (a GPU, or a unified-memory
 * machine such as a Mac or a DGX Spark) or a complete system that names its
 * accelerator and how many it holds (a workstation with two RTX 5090, two
 * DGX Sparks linked by ConnectX-7).  A system entry carries the per-device
 * figures of its accelerator (copied at load, so memory_gb, mem_bw_gbs and
 * tflops are always per device) plus device_count, its own price, host RAM
 * and the link between its devices.
 *
 * The JSON shape (sourced figures, required and optional keys) is documented
 * in models/catalog/README.md.  Loading uses cJSON, which records the place
 * of its last parse error in a process-wide variable: load catalogues before
 * starting threads that parse JSON with cJSON.
 */
#ifndef MODELS_CATALOG_H
#define MODELS_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/diag.h"

struct engine_table; /* models/engine.h */
struct calfile;      /* models/calfile.h */

/* Longest id the catalogue accepts (including the terminating NUL). */
#define CAT_ID_MAX 64

/* Tensor-core number formats a matmul can run in. */
enum cat_dtype {
	CAT_DTYPE_BF16 = 0,
	CAT_DTYPE_FP16,
	CAT_DTYPE_FP8,
	CAT_DTYPE_INT8,
	CAT_DTYPE_FP4,
	CAT_DTYPE_COUNT
};

/* "bf16", "fp16", ... (static strings). */
const char *cat_dtype_name(enum cat_dtype t);

/* The tuned parameters of one hardware family (the only tuned ones). */
/* The kind of unit a family's GPUs multiply matrices on (families.json
 * "matmul_units"): tensor cores, or the vector ALUs of GPUs without them
 * (Apple).  Its eff_compute is a first value from outside the calibration
 * set, what a family of that unit gets before any row of its own. */
struct cat_matmul_unit {
	char *id;
	char *name;
	double eff_compute;
};

/* The memory technology of a family's GPUs (families.json "memory_kind"):
 * stacked HBM beside the die, or DRAM chips (GDDR on the board, LPDDR in the
 * package).  What fraction of its peak a kernel streams differs between the
 * two, so cross-validation pools bandwidth efficiencies by it. */
enum cat_memory_kind { CAT_MEM_DRAM = 0, CAT_MEM_HBM };

struct cat_family {
	char *id;
	char *name;
	const struct cat_matmul_unit *matmul_unit;
	enum cat_memory_kind memory_kind;
	double eff_compute;        /* achievable fraction of dense peak FLOP/s */
	double eff_bw;             /* achievable fraction of peak memory bandwidth */
	double step_overhead_us;   /* fixed cost of one engine step */
	double eff_issue;          /* fraction of an engine's per-core-clock rate
				      of issue-bound quantized matmuls the
				      family's boards sustain; 0: not given
				      (catalog_eff_issue) */
	double sm_w_at_1ghz;       /* dynamic watts of one SM in an issue-bound
				      matmul at 1 GHz, growing with the cube of
				      the clock: how far a board's rating lets
				      it hold its rated clock under that load
				      (perf_sustained_clock); 0: not given, the
				      boards hold it */
	double runtime_reserve_gib;/* CUDA context, library workspaces */
	double die_remote_penalty; /* a package of several dies: the cost of a
				      read from another die's memory beyond a
				      local one, as a fraction of the local
				      one's, that the family's GPU does not hide
				      (families.json die_remote_penalty); 0:
				      not given (catalog_die_factor) */
};

/* A link; kind is NULL when the device has none. */
struct cat_link {
	char *kind;                /* "nvlink4", "pcie-gen5-x16", ... */
	double bw_gbs;             /* GB/s in EACH direction */
};

/* Currencies prices are quoted in.  Never converted silently: see
 * catalog_price_usd. */
enum cat_currency {
	CAT_CUR_NONE = 0,          /* no price published */
	CAT_CUR_USD,
	CAT_CUR_EUR,
};

/* "USD", "EUR" ("" for CAT_CUR_NONE; static strings). */
const char *cat_currency_name(enum cat_currency c);

/* A dated price as published; amount_max > amount when the source gives a
 * range ("~EUR 1,300-1,600"), else equal to amount. */
struct cat_price {
	enum cat_currency currency; /* CAT_CUR_NONE: no price */
	double amount;
	double amount_max;
	char *date;                /* YYYY-MM or YYYY-MM-DD of the source */
	char *source;
};

struct cat_hardware {
	char *id;
	char *name;
	char **aliases;
	size_t alias_count;
	const struct cat_family *family;
	double memory_gb;          /* datasheet capacity, 1e9 bytes */
	double memory_visible_gib; /* what the driver reports as total; 0 unknown */
	double mem_bw_gbs;         /* peak memory bandwidth, 1e9 bytes/s */
	double tflops[CAT_DTYPE_COUNT]; /* dense peak per dtype (TOPS for int8);
					   0 = no such tensor path or unknown.
					   Matmuls accumulating in FP32. */
	double tflops_fp16acc[CAT_DTYPE_COUNT]; /* same with FP16 accumulation
					   (GeForce cards run it at twice
					   the FP32-accumulate rate; engines
					   such as llama.cpp use it); equal to
					   tflops[] where the files give no
					   separate figure, and for fp16 to
					   the bf16 rate when the files give
					   no fp16 figure at all */
	double fp32_vector_tflops; /* non-tensor FP32 peak; 0 unknown (the only
				      compute figure Apple publishes) */
	int64_t gpu_cores;         /* GPU cores / SMs / CUs as named; 0 unknown */
	double gpu_clock_mhz;      /* the GPU's boost clock; 0 unknown.  With
				      gpu_cores, the rate kernels bound by
				      instruction issue scale with
				      (models/perf_model.c, core clock) */
	double tdp_w;              /* board power, or the machine's maximum for
				      unified-memory machines; 0 unknown */
	double power_limit_w;      /* the board's power limit when it runs below
				      tdp_w (a capped board); 0 none.  The
				      peaks are rated at tdp_w; models/power.h
				      turns the limit into a clock */
	double idle_w;             /* 0 unknown */
	double inference_w;        /* measured while serving an LLM; 0 unknown */
	double inference_w_max;    /* upper end of that range (= inference_w) */
	struct cat_link peer_link; /* GPU-to-GPU (NVLink, Infinity Fabric; for a
				      system, the link between its devices) */
	struct cat_link host_link; /* to the host (PCIe) */
	bool unified_memory;       /* memory shared with the CPU (Apple, GB10) */
	double usable_memory_fraction; /* share of memory_gb a model may use;
					  1 for discrete devices */
	int64_t dies;              /* GPU dies in the package joined by a die
				      link (package.dies); 1 for one die */
	double die_link_gbs;       /* that link's bandwidth, 1e9 bytes/s
				      (package.die_link_gbs); 0 for one die, or
				      not published */

	/* Systems.  For a bare device: device == self, device_count == 1,
	 * system_kind == NULL.  For a system: device is the accelerator entry
	 * (never itself a system), and every per-device figure above is the
	 * device's. */
	const struct cat_hardware *device;
	int64_t device_count;
	char *system_kind;         /* "workstation", "desktop", "laptop",
				      "cluster"; NULL for a bare device */
	double host_memory_gb;     /* system RAM besides the accelerators (lower
				      end of the offered range); 0 unknown or
				      unified */
	double host_memory_max_gb; /* upper end (= host_memory_gb if one size) */

	struct cat_price price;    /* purchase, whole entry (system or device) */
	struct cat_price rent_hour;/* rental per device-hour */
};

enum cat_attention {
	CAT_ATTN_GQA = 0,          /* multi-head and grouped-query attention */
	CAT_ATTN_MLA,              /* multi-head latent attention (DeepSeek) */
};

/* Largest number of fields one model may list as estimated. */
#define CAT_MAX_ESTIMATED 32

struct cat_model {
	char *id;
	char *name;
	char **aliases;
	size_t alias_count;
	enum cat_attention attention;
	int64_t layers;
	int64_t hidden_size;
	int64_t heads;             /* query heads */
	int64_t kv_heads;
	int64_t head_dim;
	int64_t intermediate_size; /* dense FFN width */
	int64_t vocab_size;
	int64_t max_context;       /* max_position_embeddings */
	bool tied_embeddings;
	bool attention_bias;       /* q/k/v projections carry biases */
	bool attention_output_gate;/* q_proj also emits a per-head output gate
				      (Qwen3.5/3.6 gated attention) */
	double params_published;   /* parameter count the publisher states */
	double active_params_published; /* per token; 0 when not published */

	/* Mixture of experts; experts == 0 means dense. */
	int64_t experts;
	int64_t experts_per_token;
	int64_t shared_experts;
	int64_t expert_intermediate_size;
	int64_t shared_expert_intermediate_size; /* = expert size unless given */
	int64_t dense_layers;      /* leading layers with a dense FFN
				      (first_k_dense_replace) */
	int64_t moe_layer_freq;    /* after dense_layers, layer i (0-based) is MoE
				      when (i + 1) % moe_layer_freq == 0; 1 = all.
				      Llama 4 Maverick: 2 */
	int64_t moe_layers;        /* derived: how many layers are MoE */

	/* Multi-head latent attention (attention == CAT_ATTN_MLA). */
	int64_t kv_lora_rank;
	int64_t qk_rope_head_dim;
	int64_t qk_nope_head_dim;  /* 0 when not given (then the count of the
				      attention weights is not checked) */
	int64_t v_head_dim;
	int64_t q_lora_rank;       /* 0: queries are projected directly */

	/* Local attention: sliding_window_layers of the layers see only the
	 * last sliding_window tokens (gpt-oss alternates; Llama 4 uses chunks of
	 * attention_chunk_size, recorded the same way); 0 = none. */
	int64_t sliding_window;
	int64_t sliding_window_layers;

	/* Linear (recurrent) attention layers, e.g. Gated DeltaNet in
	 * Qwen3.5/3.6: they keep a fixed-size state per sequence instead of a
	 * KV cache that grows with the context.  0 = none. */
	int64_t linear_attention_layers;
	int64_t linear_qk_heads;
	int64_t linear_v_heads;
	int64_t linear_head_dim;
	int64_t linear_conv_kernel;
	int64_t kv_layers;         /* derived: layers that keep a KV cache per
				      token (layers - linear_attention_layers) */

	/* Fields estimated rather than copied from a published config (2026
	 * models with only counts published); names as in models.json. */
	char **estimated;
	size_t estimated_count;

	/* Derived at load from the architecture and checked against
	 * params_published (2%) and active_params_published (4%: publishers
	 * round active counts to two digits).  For MLA entries without
	 * qk_nope_head_dim/v_head_dim, linear_params is what the published
	 * total leaves. */
	int64_t embedding_params;  /* vocab x hidden input table */
	int64_t lm_head_params;    /* 0 when tied to the embeddings */
	int64_t norm_params;       /* RMSNorm weights */
	int64_t linear_params;     /* every matrix (and bias) of the blocks */
	int64_t total_params;
	int64_t expert_params;     /* routed experts of all MoE layers (part of
				      linear_params); 0 for dense models */
	int64_t active_params;     /* used per token: total minus the routed
				      experts not chosen (embeddings included) */
};

/* True when the model lists `field` as estimated. */
bool cat_model_is_estimated(const struct cat_model *m, const char *field);

struct cat_weight_format {
	char *id;
	char *name;
	char **aliases;
	size_t alias_count;
	double bits_per_weight;    /* linear layers, scales and zero points included */
	double dense_bits;         /* the non-expert linear layers (attention,
				      shared experts, the router): bits_per_weight
				      unless the format keeps them at another
				      precision than the experts */
	double embedding_bits;     /* embeddings, lm_head and norms */
	enum cat_dtype compute_dtype;
	bool has_fallback;
	enum cat_dtype fallback_dtype; /* used where hardware lacks compute_dtype */
	double tensor_efficiency;  /* the share of the family's matmul efficiency
				      its tensor-core kernels reach in the
				      format's own dtype (formats.json
				      tensor_efficiency; 1 when not given): FP4
				      GEMMs reach less of their peak than BF16
				      ones on the same chip */
};

struct cat_kv_dtype {
	char *id;
	char *name;
	char **aliases;
	size_t alias_count;
	double bits_per_element;
};

/* Read-only after catalog_load/catalog_parse; iterate the arrays freely. */
struct catalog {
	double usd_per_eur;        /* snapshot rate used only by
				      catalog_price_usd; 0 when not given */
	char *usd_per_eur_date;
	struct cat_matmul_unit *matmul_units;
	size_t matmul_unit_count;
	struct cat_family *families;
	size_t family_count;
	struct cat_hardware *hardware;
	size_t hardware_count;
	struct cat_model *models;
	size_t model_count;
	struct cat_weight_format *weight_formats;
	size_t weight_format_count;
	struct cat_kv_dtype *kv_dtypes;
	size_t kv_dtype_count;
	void **owned;              /* every allocation, freed by catalog_free */
	size_t owned_count;
	size_t owned_cap;
	/* The calibration the families' factors come from (models/calfile.h)
	 * and the engine table it set, borrowed: whoever applies a team's
	 * calibration file sets both and keeps them alive as long as the
	 * catalogue.  NULL: the built-in calibration and engine table. */
	const struct engine_table *engines;
	const struct calfile *calibration;
};

/* One catalogue file held in memory. */
struct catalog_file {
	const char *name;          /* "hardware.json", ... */
	const char *text;
	size_t len;
};

/* Largest catalogue file accepted, in bytes. */
#define CATALOG_FILE_MAX_BYTES (8u << 20)

/* Load the catalogue from directory dir (families.json, hardware.json,
 * models.json, formats.json), or the copy built into the library when dir
 * is NULL.  On success *out owns a new catalogue (free with catalog_free).
 * Returns 0, DIAG_EIO (a file cannot be read), DIAG_EINPUT (bad JSON or a
 * failed check: the message names the file and the key path, e.g.
 * "hardware.json: hardware[3].mem_bw_gbs.value: expected a number") or
 * DIAG_ENOMEM; *out is NULL on failure. */
int catalog_load(struct catalog **out, const char *dir, struct diag *d);

/* Same from files already in memory (all four names must be present; the
 * text need not be NUL-terminated).  Messages name files as given. */
int catalog_parse(struct catalog **out, const struct catalog_file *files,
		  size_t n, struct diag *d);

/* The embedded copy of the files (static storage, never freed). */
const struct catalog_file *catalog_embedded(size_t *n);

void catalog_free(struct catalog *cat); /* accepts NULL */

/* True when the invariants of a loaded catalogue hold (every hardware entry
 * points into cat->families, ids are valid, derived counts are positive).
 * For assert() and tests; O(entries). */
bool catalog_check(const struct catalog *cat);

/* Lookups by id or alias; NULL when unknown. */
const struct cat_family *catalog_family(const struct catalog *cat, const char *name);

/* The same, writable: for fitting a family's efficiency factors in place
 * (calib/fitparams.h); models initialised afterwards see the new values. */
struct cat_family *catalog_family_mut(struct catalog *cat, const char *name);

/* The eff_issue a model of fam runs on, in *out: its own, else the median
 * over the families that give one (what cross-validation gives a family
 * whose rows it holds out: calib/fitparams.h), else 1.  0, DIAG_ENOMEM. */
int catalog_eff_issue(const struct catalog *cat, const struct cat_family *fam, double *out,
		      struct diag *d);
const struct cat_hardware *catalog_hardware(const struct catalog *cat, const char *name);

/* The kind of package hw's device is: "multi-die" (dies joined by a die
 * link: Apple's Ultra chips, B200, MI300X), "soc" (one die sharing unified
 * memory with the CPU), or "monolithic" (one discrete GPU die).  A bound
 * learnt on one kind does not transfer to another without a mechanism
 * (docs/performance-model.md, multi-die packages). */
const char *catalog_package_kind(const struct cat_hardware *hw);

/* The share of its bandwidth a package of several dies reaches, against
 * one die of its kind: with memory interleaved over every die, a share
 * f = 1 - 1/dies of the reads cross the die link, each costing
 * die_remote_penalty more than a local one, so the bytes delivered per
 * unit of time fall to 1 / (1 + f x penalty) (docs/performance-model.md,
 * multi-die packages).  *factor is 1 for one die.  The penalty is the
 * family's; a family without one takes that of the first family of its
 * memory kind that has one (*from says which: NULL, the family's own or
 * none needed); without any, DIAG_EINPUT naming the hardware: a bound
 * learnt on single dies is not carried to several without it. */
int catalog_die_factor(const struct catalog *cat, const struct cat_hardware *hw, double *factor,
		       const struct cat_family **from, struct diag *d);

/* hw's memory kind: "hbm" (its family's memory_kind), else "lpddr" when
 * the memory is unified with the CPU's, "gddr" when not. */
const char *catalog_memory_kind(const struct cat_hardware *hw);

/* The most GPUs one replica may span on hw, 0 for no limit of its own.  A
 * chip whose memory it shares with its CPU (Apple silicon, Ryzen AI Max,
 * GB10) is one GPU with no GPU-to-GPU link: 1; with a link between units
 * (DGX Spark's ConnectX-7, which NVIDIA documents for clustering two): 2.
 * Discrete GPUs and multi-GPU systems are limited by their device count
 * and the engine instead. */
int32_t catalog_replica_gpus_max(const struct cat_hardware *hw);
const struct cat_model *catalog_model(const struct catalog *cat, const char *name);
const struct cat_weight_format *catalog_weight_format(const struct catalog *cat,
						      const char *name);
const struct cat_kv_dtype *catalog_kv_dtype(const struct catalog *cat, const char *name);

/* True when a and b name the same thing under the lookup rule above. */
bool catalog_name_eq(const char *a, const char *b);

/* A hardware/model/format combination, resolved. */
struct cat_selection {
	const struct cat_hardware *hardware;
	const struct cat_model *model;
	const struct cat_weight_format *weight_format;
	const struct cat_kv_dtype *kv_dtype;
};

/* Resolve the four names (weight_format and kv_dtype NULL mean "bf16").
 * An unknown name is DIAG_EINPUT with the list of known ids. */
int catalog_select(const struct catalog *cat, struct cat_selection *sel,
		   const char *hardware, const char *model,
		   const char *weight_format, const char *kv_dtype, struct diag *d);

/* Purchase price of hw in US dollars: USD as published, EUR converted at
 * cat->usd_per_eur (the only conversion anywhere in the catalogue).  Uses
 * the lower end of a published range.  Returns false (and *usd = 0) when
 * hw has no price or an EUR price meets a catalogue without a rate. */
bool catalog_price_usd(const struct catalog *cat, const struct cat_hardware *hw,
		       double *usd);

/* Fill out[0..n) with every hardware entry that has a price, cheapest first
 * (by catalog_price_usd; ties by id), then the entries without one in
 * file order.  out must hold cat->hardware_count pointers; returns how many
 * have a price.  O(n^2) (insertion sort, no allocation; hundreds of
 * entries at most). */
size_t catalog_hardware_by_price(const struct catalog *cat,
				 const struct cat_hardware **out);

/* Total accelerator memory of an entry in GB: memory_gb x device_count. */
double cat_hardware_total_memory_gb(const struct cat_hardware *hw);

/* Write the catalogue listing `agentcap catalog --json` prints: a stable
 * JSON document (fixed key order, entries in file order, numbers with at
 * most 10 significant digits) with the ids, names, aliases and key figures
 * of every family, hardware entry, model, weight format and KV dtype.
 * Returns 0 or DIAG_EIO when a write fails. */
int catalog_write_json(const struct catalog *cat, FILE *out, struct diag *d);

/* The same as a plain-text listing, one table per kind (purchase price and
 * rental per GPU-hour in the currency published). */
int catalog_write_table(const struct catalog *cat, FILE *out, struct diag *d);

/* Every sourced figure of the catalogue's files (dir, or the embedded copy
 * when NULL): per file and entry, one line per figure with its value, unit,
 * source and date, in file order.  0, DIAG_EIO, DIAG_EINPUT (a file that
 * is not JSON) or DIAG_ENOMEM. */
int catalog_write_sources(const char *dir, FILE *out, struct diag *d);

/* Dense peak FLOP/s (not TFLOPS) of hw for a format's matmuls: the rate of
 * the format's compute dtype, else of its fallback; 0 when the hardware has
 * neither.  *used (may be NULL) receives the dtype whose rate was taken. */
double catalog_matmul_flops(const struct cat_hardware *hw,
			    const struct cat_weight_format *wf, enum cat_dtype *used);

#endif
