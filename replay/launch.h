/* SPDX-License-Identifier: Apache-2.0
 * launch: the command line that starts a deployment's engine the way it
 * was modelled (`vllm serve ...`, `python -m sglang.launch_server ...`,
 * `llama-server ...`, `ollama serve`, `mlx_lm.server ...`,
 * `trtllm-serve ...`).
 *
 * One command per replica shape (per pool of a pooled deployment), built
 * from the pool's resolved scenario and engine settings: only the flags
 * whose value the simulation used (parallelism, batch and token limits,
 * memory fraction, KV-cache dtype and size, prefix caching, chunked
 * prefill, speculative decoding, host KV tier), every value written out
 * even where it is the engine's default, so the command pins what was
 * modelled whatever the release's defaults.  Flag spellings are those of
 * the release the engine profile stands for (engines.json "launch");
 * tests/fixtures/engine-help holds each engine's documented flag list and
 * the tests check every emitted flag against it.  What a command cannot
 * express (a speculative method the engine lacks, a setting only its YAML
 * file takes) is a note, and the command is marked incomplete.
 *
 * launch_sets reads a command back into scenario keys (--set KEY=VALUE),
 * so a replay of the emitted settings is the modelled configuration.
 *
 * struct launch_cmd is fixed-size plain data (no heap); strings in it are
 * NUL-terminated and live as long as it does.
 */
#ifndef REPLAY_LAUNCH_H
#define REPLAY_LAUNCH_H

#include "base/diag.h"
#include "replay/deploy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct catalog;

#define LAUNCH_MAX_ARGS 64
#define LAUNCH_ARG_MAX 256
#define LAUNCH_MAX_ENV 8
#define LAUNCH_MAX_NOTES 8
#define LAUNCH_NOTE_MAX 320
#define LAUNCH_MAX_SETS 32
#define LAUNCH_SET_MAX 160

struct launch_cmd {
	char pool[128];                   /* the pool's name ("" without pools) */
	char engine[64];                  /* engine profile id */
	char cli[64];                     /* engines.json launch.cli */
	char version[64];                 /* the release the profile stands for */
	char version_source[512];
	char model[128];                  /* what the command loads */
	bool model_is_hf;                 /* model is a Hugging Face repo id */
	int32_t replicas;                 /* of this shape */
	int32_t gpus_per_replica;
	int n_env;                        /* NAME=value, set before argv */
	char env[LAUNCH_MAX_ENV][LAUNCH_ARG_MAX];
	int argc;
	char argv[LAUNCH_MAX_ARGS][LAUNCH_ARG_MAX];
	int n_notes;
	char notes[LAUNCH_MAX_NOTES][LAUNCH_NOTE_MAX];
	bool complete;                    /* every modelled setting is a flag */
};

/* The command of pool p (resolved by deploy_build) run as `replicas`
 * replicas; cat is the deployment's catalogue.  0, or DIAG_EINPUT naming
 * the scenario key whose value the engine cannot take ("kv_cache_dtype:
 * 'q8-0' is not a KV-cache dtype of vllm (expected bf16, fp16 or fp8)"),
 * or DIAG_ENOMEM. */
int launch_build(struct launch_cmd *lc, const struct deploy_pool *p, const struct catalog *cat,
		 int32_t replicas, struct diag *d);

/* One command per pool of dp into out[0..max); *n gets the count.  The
 * replicas are the scenario's (replicas_override > 0: that many of a
 * one-shape deployment, as a search sized it).  As launch_build. */
int launch_of_deployment(struct launch_cmd *out, int max, int *n, const struct deployment *dp,
			 int32_t replicas_override, struct diag *d);

/* The command as one line a POSIX shell runs: the environment assignments,
 * then argv, each word single-quoted when it holds anything but
 * [A-Za-z0-9_./:=,@%+-].  Returns the length it needs (as snprintf), the
 * text truncated to size. */
size_t launch_shell(const struct launch_cmd *lc, char *buf, size_t size);

/* {"pool", "engine", "version", "version_source", "model", "model_is_hf",
 * "replicas", "gpus_per_replica", "env": [...], "argv": [...], "shell",
 * "complete", "notes": [...]} (docs/output-schema.md). */
void launch_json(FILE *fp, const struct launch_cmd *lc);

/* The command for a terminal: "# <engine> <version> (...)", notes as
 * comment lines, then the shell line; each line starts with indent. */
void launch_print(FILE *fp, const struct launch_cmd *lc, const char *indent);

/* Read lc's argv and environment back into scenario --set arguments
 * ("tensor_parallel_size=2", "engine.max_num_seqs=256", ...) into
 * sets[0..*n): what a replay of the emitted command takes.  0, or
 * DIAG_EINPUT naming a flag it cannot read back (an unknown flag, a value
 * that does not parse). */
int launch_sets(const struct launch_cmd *lc, char sets[][LAUNCH_SET_MAX], int max, int *n,
		struct diag *d);

#endif
