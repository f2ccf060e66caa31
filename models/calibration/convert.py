#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Convert the shared calibration measurements into the calibration set.

Reads ../shared/data/calibration-measurements.csv (free-text hardware, model,
quantization, engine, load and metric columns, as transcribed from each
source) and writes models/calibration/measurements.csv with the columns

    hardware, n_gpus, model, quant, engine, concurrency, input_tokens,
    output_tokens, metric, value, unit, source, notes, provenance, confidence

where hardware, model and quant are catalogue ids (models/catalog/*.json),
engine is one of llama.cpp, vllm, sglang, tensorrt-llm, mlx, and metric one of
decode_tok_s, prefill_tok_s, output_throughput_tok_s, total_throughput_tok_s,
ttft_ms, tpot_ms, itl_ms, e2el_ms.  Everything the mapping drops from a row
(the original spelling of a name, file sizes, the statistic of a latency,
the arrival pattern, the kind of parallelism) goes into `notes` as
`key=value` items separated by " | ", so nothing is lost.

`provenance` says how the figure reached the shared file: `original` (read
from the publisher's own page at a pinned commit), `copy` (transcribed from a
secondary copy of the page) or `inferred` (the figure is the source's, but
some of its conditions were read from elsewhere in it).  `confidence` is
`high`, `medium` or `low`; a low-confidence row is kept for comparison but
never sets a parameter (`agentcap validate --min-confidence medium` is the
set the parameters are checked on).  Both come from the SOURCES table and
the CORRECTIONS list below, each entry with its reason, which PROVENANCE.md
repeats.

The mapping is a set of explicit tables below, not guesses: a row whose
hardware, model, quantization, engine or metric is not in a table stops the
conversion with its line number.  Rows that cannot be represented are
dropped on purpose and listed (with the reason) on standard output as the
Markdown table that PROVENANCE.md carries.  Each id is checked against the
catalogue JSON with the loader's name rule (case-insensitive; ' ', '_' and
'-' equal).

Standard library only.  Usage, from the repository root:

    python3 models/calibration/convert.py \\
        [--input ../shared/data/calibration-measurements.csv] \\
        [--output models/calibration/measurements.csv] \\
        [--catalog models/catalog] [--check]

--check compares the would-be output with the existing file and exits 1 when
they differ (the shipped file is then stale).  The output is deterministic:
rows keep the input order.
"""
import argparse
import csv
import io
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

COLUMNS = ["hardware", "n_gpus", "model", "quant", "engine", "concurrency",
           "input_tokens", "output_tokens", "metric", "value", "unit",
           "source", "notes", "provenance", "confidence"]
PROVENANCES = ("original", "copy", "inferred")
CONFIDENCES = ("high", "medium", "low")
METRICS = {"decode_tok_s", "prefill_tok_s", "output_throughput_tok_s",
           "total_throughput_tok_s", "ttft_ms", "tpot_ms", "itl_ms",
           "e2el_ms"}

# source spelling -> (catalogue id, note or None)
HARDWARE = {
    "Apple M1 (8-core GPU)": ("apple-m1-8c", None),
    "Apple M2 (10-core GPU)": ("apple-m2-10c", None),
    "Apple M4 (10-core GPU)": ("apple-m4-10c", None),
    "Apple M2 Pro (16-core GPU)": ("apple-m2-pro-16c", None),
    "Apple M4 Pro (20-core GPU)": ("apple-m4-pro-20c", None),
    "Apple M1 Max (32-core GPU)": ("apple-m1-max-32c", None),
    "Apple M2 Max (30-core GPU)": ("apple-m2-max-30c", None),
    "Apple M3 Max (40-core GPU)": ("apple-m3-max-40c", None),
    "Apple M2 Max (64GB)": ("apple-m2-max-30c",
                            "GPU core count not stated (30 or 38); both bins have 400 GB/s"),
    "NVIDIA RTX 3090": ("rtx-3090", None),
    "NVIDIA RTX 4090": ("rtx-4090", None),
    "NVIDIA RTX 4090 (Intel 265K host)": ("rtx-4090", None),
    "NVIDIA RTX PRO 6000 Blackwell": ("rtx-pro-6000", None),
    "NVIDIA RTX PRO 6000 Blackwell Workstation (600W)": ("rtx-pro-6000", None),
    "NVIDIA RTX PRO 6000 Blackwell Workstation (200W power cap)":
        ("rtx-pro-6000", "power-capped to 200 W (the catalogue entry is the 600 W card)"),
    "NVIDIA A100 80GB (SXM/PCIe unstated)":
        ("a100-sxm-80gb", "form factor not stated (SXM or PCIe); SXM assumed"),
    "NVIDIA A100 80GB": ("a100-sxm-80gb", "form factor not stated; SXM assumed"),
    "NVIDIA A100": ("a100-sxm-80gb", "form factor not stated; SXM assumed"),
    "NVIDIA H100 80GB HBM3 (SXM)":
        ("h100-sxm", "form factor not stated; SXM assumed from 'HBM3' (the PCIe card has "
                     "HBM2e); '(SXM)' was added in transcription"),
    "NVIDIA H100 SXM 80GB (DGX H100)": ("h100-sxm", None),
    "NVIDIA H100 80GB": ("h100-sxm", "form factor not stated; SXM assumed"),
    "NVIDIA H100": ("h100-sxm", "form factor not stated; SXM assumed"),
    "NVIDIA H100 PCIe 80GB": ("h100-pcie", None),
    "NVIDIA H100 DGX (NVLink4/NVSwitch)": ("hgx-h100-8", None),
    "NVIDIA H100 SXM5 80GB (8-GPU node)": ("h100-sxm", None),
    "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition":
        ("rtx-pro-6000-maxq", "the 300 W Max-Q board at its default power limit"),
    "NVIDIA GeForce RTX 5060 Ti 16GB": ("rtx-5060-ti-16gb", None),
    "NVIDIA GeForce RTX 5070 Ti": ("rtx-5070-ti", None),
    "NVIDIA GeForce RTX 5080": ("rtx-5080", None),
    "NVIDIA GeForce RTX 4080": ("rtx-4080", None),
    "NVIDIA GeForce RTX 4080 SUPER": ("rtx-4080-super", None),
    "NVIDIA L40": ("l40", None),
    "NVIDIA A30": ("a30", None),
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition (600 W)": ("rtx-pro-6000", None),
}

MODELS = {
    "Llama-2-7B": ("llama-2-7b", None),
    "Llama-2-70B": ("llama-2-70b", None),
    "Llama-3-8B": ("llama-3-8b", None),
    "Llama-3-70B": ("llama-3-70b", None),
    "Llama-3.1-8B-Instruct": ("llama-3.1-8b", None),
    "Llama-3.1-70B-Instruct": ("llama-3.1-70b", None),
    "Llama-3.1-405B-Instruct": ("llama-3.1-405b", None),
    "Llama-3.3-70B-Instruct": ("llama-3.3-70b", None),
    "Llama-3.3-70B (shisa-v2 finetune)":
        ("llama-3.3-70b", "shisa-v2 finetune of Llama 3.3 70B (same architecture)"),
    "Qwen3-30B-A3B": ("qwen3-30b-a3b", None),
    "Qwen3-235B-A22B": ("qwen3-235b-a22b", None),
    "Qwen3.6-35B-A3B": ("qwen3.6-35b-a3b", None),
    "gpt-oss-20b": ("gpt-oss-20b", None),
    "gpt-oss-120b": ("gpt-oss-120b", None),
    "DeepSeek-V3": ("deepseek-v3", None),
    "DeepSeek-R1-0528": ("deepseek-v3", "DeepSeek-R1-0528 is a DeepSeek-V3 checkpoint "
                         "(same architecture, deepseek_v3 config)"),
    "(collective)": (None, None),
}

# quantization with any "(...)" detail removed -> (format id, note or None)
QUANTS = {
    "Q4_0": ("gguf-q4-0", None),
    "Q8_0": ("gguf-q8-0", None),
    "Q4_K_M": ("gguf-q4-k-m", None),
    "F16": ("fp16", None),
    "FP16": ("fp16", None),
    "BF16": ("bf16", None),
    "FP16/BF16": ("bf16", "FP16 or BF16 (same size and tensor rate)"),
    "FP8": ("fp8", None),
    "FP8 (ModelOpt)": ("fp8", "quantized with NVIDIA ModelOpt"),
    "MXFP4": ("mxfp4", None),
    "UD-Q8_K_XL": ("mxfp4", "Unsloth UD-Q8_K_XL GGUF: experts in MXFP4, other tensors 8-bit"),
    "MLX 4-bit": ("mlx-q4", None),
    "AWQ (4-bit)": ("int4-awq", None),
    "BF16/FP8": (None, None),
}

ENGINES = [  # (prefix, engine id); first match wins
    ("llama.cpp", "llama.cpp"),
    ("TensorRT-LLM", "tensorrt-llm"),
    ("SGLang", "sglang"),
    ("vLLM", "vllm"),
    ("rapid-mlx", "mlx"),
    ("Vidur", None),
    ("NCCL", None),
]

DROP_METRIC = {
    "per_layer_linear_ops_ms": "a per-operator profile of one decoder layer, not an "
                               "end-to-end metric (it calibrates families.json directly)",
    "allreduce_median_ms": "a collective micro-benchmark, not an end-to-end metric",
}

# How each source's figures reached the shared file, by the start of its
# `source` text: (prefix, provenance, confidence, reason).  Every row must
# match one.  A row whose hardware had to be assumed (a `hardware_note` of
# "... assumed") is at most `medium`; CORRECTIONS may lower it further.
SOURCES = [
    ("https://github.com/ggml-org/llama.cpp/discussions/", "copy", "medium",
     "llama.cpp discussion tables (#4167, #15013, #15396) transcribed from secondary "
     "copies; the discussions themselves were not reachable when checked"),
    ("https://github.com/ggml-org/llama.cpp/pull/15631", "copy", "low",
     "a pull request's table that states neither -fa nor the build number: flash attention "
     "alone moves the model's pp4096 of gpt-oss-20b on the row's RTX 4090 by a fifth, so the "
     "row is shown but not fitted on"),
    ("https://github.com/ggml-org/llama.cpp/pull/", "copy", "medium",
     "a llama.cpp pull request's benchmark table (added-measurements.csv), read from a "
     "stored copy of the thread"),
    ("GitHub markdown with raw llama-bench output", "copy", "low",
     "a raw llama-bench listing whose repository and commit are unknown"),
    ("github.com/NVIDIA/TensorRT-LLM", "original", "high",
     "NVIDIA's performance overview at a pinned commit"),
    ("github.com/sgl-project/sglang", "original", "high",
     "SGLang's benchmark README at a pinned commit"),
    ("github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference", "original", "high",
     "the benchmark README at a pinned commit"),
    ("github.com/vllm-project/vllm-project.github.io", "original", "high",
     "the vLLM blog post's source at its date"),
    ("https://github.com/raullenchai/Rapid-MLX/pull/", "original", "medium",
     "a community submission in a pull request; generation length not stated"),
    ("github.com/geerlingguy/ai-benchmarks", "original", "high",
     "the repository README at a pinned commit"),
    ("https://runinfra.ai/", "original", "medium", "a vendor benchmark page"),
    ("github.com/microsoft/vidur", "original", "high", "profiles at a pinned commit"),
    ("https://github.com/tenstorrent/tt-inference-server/issues/356", "original", "medium",
     "a benchmark table in an issue comment (added-measurements.csv); the vLLM version is not "
     "stated"),
    ("https://github.com/dzhsurf/deepseek-v3-r1-deploy-and-benchmarks", "original", "low",
     "deployment notes whose text rounds its own charts (added-measurements.csv)"),
]

XDAI = "github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference README.md " \
       "@00dd2bdeb2404263f22bd6c1cd46ce397e341db5"
SGL = "github.com/sgl-project/sglang benchmark/benchmark_vllm_060"
RAW = "GitHub markdown with raw llama-bench output"
L4167 = "https://github.com/ggml-org/llama.cpp/discussions/4167"
L15013 = "https://github.com/ggml-org/llama.cpp/discussions/15013"
L15396 = "https://github.com/ggml-org/llama.cpp/discussions/15396"

# Corrections found by checking rows against their sources.  `match` keys
# are input columns (exact text, or a list of alternatives) or
# `source_prefix`; `count` is how many
# input rows must match (the conversion stops otherwise, so a change of the
# shared file cannot silently skip a correction).  Actions: `drop` (reason),
# `set` (input columns replaced before conversion), `notes` (items appended),
# `provenance` / `confidence` (override SOURCES).  `why` is the reason
# PROVENANCE.md prints.
CORRECTIONS = [
    {"match": {"source_prefix": "github.com/geerlingguy/ai-benchmarks"}, "count": 1,
     "drop": "llama-bench on the Vulkan backend (build 086a63e3a), not CUDA, per the "
             "source's issue #43; the stored copy of that issue does not show the model "
             "file of this run (sibling issues name gpt-oss-20b-Q4_K_M.gguf, not an MXFP4 "
             "GGUF), so the quantization cannot be confirmed; agentcap models no Vulkan "
             "backend"},
    {"match": {"source_prefix": RAW, "model": "Llama-3.3-70B (shisa-v2 finetune)"}, "count": 2,
     "drop": "the raw llama-bench listing names no repository or commit, and none could "
             "be found; its four stored versions cannot be told apart by date"},
    {"match": {"source_prefix": RAW, "model": "Qwen3-30B-A3B"}, "count": 2,
     "drop": "the raw llama-bench listing names no repository or commit, and its stored "
             "versions disagree (pp512 7432.36 +- 248.16 in one, 7640.08 +- 25.58 in "
             "another; tg128 251.04 vs 251.61)"},
    {"match": {"source_prefix": RAW, "model": ["gpt-oss-120b", "Llama-2-7B"]}, "count": 2,
     "notes": ["provenance_note=repository and commit unknown (the stored versions of the "
               "listing that contain this value agree on it); kept for comparison, never "
               "fitted"],
     "why": "the listing names no repository or commit: low confidence, out of fitting"},
    {"match": {"source_prefix": "github.com/vllm-project/vllm-project.github.io"}, "count": 1,
     "provenance": "inferred", "confidence": "low",
     "notes": ["provenance_note=an aside in the post's API-server section; the H100, "
               "v0.6.0 and BF16 are read from other paragraphs of the post, not stated "
               "beside the figure; kept for comparison, never fitted"],
     "why": "the 13 ms figure is an aside; hardware, version and dtype are inferred"},
    {"match": {"source_prefix": SGL, "engine": "vLLM v0.6.0 TP4"}, "count": 1,
     "notes": ["run_conditions=--num-scheduler-steps 10 --tensor 4 --max_model_len 4096 "
               "--disable-log-requests (the README's offline command)",
               "not_modelled=multi-step scheduling"],
     "why": "the offline vLLM command ran with --num-scheduler-steps 10 --max_model_len 4096"},
    {"match": {"source_prefix": SGL, "engine": "vLLM v0.6.0 (--num-scheduler-steps 10) TP4"},
     "count": 4,
     "notes": ["run_conditions=--num-scheduler-steps 10 --tensor 4 --max_model_len 4096 "
               "--disable-log-requests",
               "not_modelled=multi-step scheduling"],
     "why": "the online vLLM command also set --max_model_len 4096"},
    {"match": {"source_prefix": SGL, "hardware": "NVIDIA A100 80GB"}, "count": 2,
     "notes": ["run_conditions=--enable-torch-compile --disable-radix-cache",
               "not_modelled=torch.compile"],
     "why": "SGLang's 8B A100 server ran with --enable-torch-compile"},
    {"match": {"source_prefix": SGL, "engine": "SGLang v0.3.0 TP4",
               "concurrency": "offline (5000 prompts at once)"}, "count": 1,
     "notes": ["run_conditions=--disable-radix-cache --tp 4 --mem-frac 0.88"],
     "why": "SGLang's offline 70B server ran with --mem-frac 0.88"},
    {"match": {"source_prefix": SGL, "engine": "SGLang v0.3.0 TP4",
               "notes": "ShareGPT dataset (lengths vary per request)"}, "count": 2,
     "notes": ["run_conditions=--disable-radix-cache --tp 4"],
     "why": "SGLang's online 70B server flags"},
    {"match": {"source_prefix": SGL, "engine": "SGLang v0.3.0 TP4",
               "notes": "ShareGPT dataset; vLLM multistep makes ITL bursty (ITL median 21.67 ms)"},
     "count": 1,
     "set": {"notes": "ShareGPT dataset; SGLang's own ITL median 21.67 ms (vLLM v0.6.0 with "
                      "multi-step scheduling: 231.23 ms)"},
     "notes": ["run_conditions=--disable-radix-cache --tp 4"],
     "why": "the shared file attributed SGLang's ITL median (21.67 ms) to vLLM"},
    {"match": {"source_prefix": SGL, "engine": "SGLang v0.3.0 TP4",
               "notes": "ShareGPT dataset; vLLM multistep makes ITL bursty (ITL median 24.45 ms)"},
     "count": 1,
     "set": {"notes": "ShareGPT dataset; SGLang's own ITL median 24.45 ms (vLLM v0.6.0 with "
                      "multi-step scheduling: 275.32 ms)"},
     "notes": ["run_conditions=--disable-radix-cache --tp 4"],
     "why": "the shared file attributed SGLang's ITL median (24.45 ms) to vLLM"},
    {"match": {"source_prefix": "github.com/NVIDIA/TensorRT-LLM", "model": "Qwen3-235B-A22B"},
     "count": 1, "confidence": "medium",
     "notes": ["run_conditions=the overview's MoE recipe: trtllm-bench --tp 8 --ep N (N not "
               "stated) with enable_attention_dp: true in llm_options.yml (nested under "
               "cuda_graph_config as published)",
               "not_modelled=expert parallelism and attention data parallelism (predicted "
               "as TP8)"],
     "why": "the MoE recipe runs expert parallelism and attention data parallelism, not "
            "plain TP; the EP size is not stated"},
    {"match": {"source_prefix": XDAI, "engine": "llama.cpp (Dec 2023)"}, "count": 3,
     "set": {"source": XDAI + " (LLaMA 2 overview table 'Average eval speed', GPUs rented "
                              "on RunPod, snapshots Dec 2023; build, CUDA version and "
                              "generation length not stated)"},
     "confidence": "medium",
     "why": "the shared file gave these December 2023 rows the May 2024 LLaMA 3 table's "
            "conditions (CUDA 12.1.1, llama.cpp May 2024)"},
    {"match": {"source_prefix": XDAI, "engine": "llama.cpp (May 2024, Metal)"}, "count": 1,
     "set": {"source": XDAI + " (LLaMA 3 Apple Silicon table, llama-bench on Metal, "
                              "M1 Max 32-core GPU 64GB MacBook Pro, snapshots May 2024)"},
     "why": "the shared file gave this Metal row the NVIDIA table's conditions (RunPod, "
            "CUDA 12.1.1)"},
    {"match": {"source_prefix": XDAI,
               "engine": ["llama.cpp (May 2024)", "llama.cpp (May 2024), layer split"]},
     "count": 6,
     "set": {"source": XDAI + " (LLaMA 3 NVIDIA table: RunPod, Ubuntu 22.04.2, CUDA 12.1.1, "
                              "llama-bench, snapshots May 2024; several GPUs = llama.cpp's "
                              "default layer split)"},
     "why": "the conditions belong to the May 2024 NVIDIA table only"},
    {"match": {"source_prefix": L4167, "hardware": "Apple M4 (10-core GPU)"}, "count": 5,
     "notes": ["copy_note=build uncertain: the copy lists the M4 in the table headed build "
               "8e672ef (2023-11-21), a year older than the chip, and copies disagree on the "
               "build these rows used"],
     "why": "which build the M4-generation rows used is uncertain"},
    {"match": {"source_prefix": L4167, "hardware": "Apple M4 Pro (20-core GPU)"}, "count": 5,
     "notes": ["copy_note=build uncertain: the copy lists the M4 Pro in the table headed "
               "build 8e672ef (2023-11-21), a year older than the chip, and copies disagree "
               "on the build these rows used"],
     "why": "which build the M4-generation rows used is uncertain"},
    {"match": {"source_prefix": L4167}, "count": 36,
     "notes": ["run_conditions=-fa 0 (build 8e672ef of 2023-11-21: llama.cpp had no flash "
               "attention before pull 5021 of 2024-04-30)"],
     "why": "flash attention off: the build predates it"},
    {"match": {"source_prefix": XDAI}, "count": 10,
     "notes": ["run_conditions=-fa 0 (llama-bench's default until flash attention became "
               "automatic in 2025; the tables name no -fa flag)"],
     "why": "flash attention off: the December 2023 and May 2024 builds ran without it "
            "unless asked"},
    {"match": {"source_prefix": L15396, "hardware": "NVIDIA RTX 4090"}, "count": 2,
     "set": {"engine": "llama.cpp build a094f38 (6210); CUDA 12.6 (llama-bench -t 1 -fa 1 "
                       "-b 4096 -ub 2048,4096; the n_ubatch 2048 rows)"},
     "notes": ["copy_note=the command, the n_ubatch column and the build read from a second "
               "copy of the guide (search-index id 60888481272, 2026-12-02)"],
     "why": "the guide ran -ub 2048 (its n_ubatch column): the shared file left it out of "
            "the pp2048 row, and a prefill step of 2048 tokens gives each expert four times "
            "the tokens of the default 512"},
    {"match": {"source_prefix": L15396, "metric": "decode_tok_s (tg128)"}, "count": 1,
     "notes": ["copy_note=copies disagree: 221.95 in the copy transcribed, 225.22 in "
               "another; the discussion itself was not reachable"],
     "why": "copies of #15396 disagree on the RTX 4090 tg128 (221.95 vs 225.22)"},
]


class Fail(Exception):
    pass


def norm(name):
    return re.sub(r"[ _]", "-", name.lower())


def catalogue_names(catalog_dir):
    """{table: {normalized name: id}} from the catalogue JSON."""
    tables = {}
    spec = [("hardware.json", "hardware", "hardware"),
            ("models.json", "models", "models"),
            ("formats.json", "weight_formats", "quant")]
    for fname, key, table in spec:
        with open(os.path.join(catalog_dir, fname), encoding="utf-8") as f:
            doc = json.load(f)
        names = {}
        for entry in doc[key]:
            for n in [entry["id"]] + entry.get("aliases", []):
                names[norm(n)] = entry["id"]
        tables[table] = names
    return tables


def split_detail(text):
    """'Q4_K_M (39.59 GiB)' -> ('Q4_K_M', '39.59 GiB')."""
    m = re.match(r"^(.*?)\s*\((.*)\)\s*$", text)
    return (m.group(1), m.group(2)) if m else (text, None)


def metric_of(raw):
    """-> (metric, statistic or None, detail or None) or (None, reason)."""
    base, detail = split_detail(raw)
    if base in DROP_METRIC:
        return None, DROP_METRIC[base], None
    if base in ("decode_tok_s", "prefill_tok_s"):
        stat = "median" if detail and detail.startswith("median") else None
        return base, stat, detail
    if base == "output_tok_s_total":
        return "output_throughput_tok_s", None, None
    m = re.match(r"^(ttft|tpot|itl|e2el)(?:_(median|mean|p\d+))?_ms$", base)
    if m:
        return m.group(1) + "_ms", m.group(2), detail
    raise Fail("unknown metric '%s'" % raw)


def load_of(raw):
    """concurrency column -> (number or '', notes)."""
    raw = raw.strip()
    if re.fullmatch(r"\d+", raw):
        return raw, []
    m = re.fullmatch(r"Poisson (\d+(?:\.\d+)?) req/s(?: \((\d+) prompts\))?", raw)
    if m:
        notes = ["arrival=poisson %s req/s" % m.group(1)]
        if m.group(2):
            notes.append("prompts=%s" % m.group(2))
        return "", notes
    m = re.fullmatch(r"offline \((\d+) prompts at once\)", raw)
    if m:
        return "", ["load=offline", "prompts=%s submitted at once" % m.group(1)]
    if raw == "max-throughput (offline)":
        return "", ["load=offline max-throughput (all requests queued)"]
    if raw == "light load (~1)":
        return "1", ["load=light (~1 in flight)"]
    if raw in ("saturation", ""):
        return "", ["load=%s" % (raw or "not stated")]
    raise Fail("unknown concurrency '%s'" % raw)


def engine_of(raw):
    for prefix, eid in ENGINES:
        if raw.startswith(prefix):
            return eid
    raise Fail("unknown engine '%s'" % raw)


def parallel_of(engine_raw, notes_raw):
    text = engine_raw + " " + notes_raw
    if "layer split" in text:
        return "layer-split"
    if re.search(r"\bTP\d+\b", text):
        return "tp"
    return None


def matches(corr, row):
    for key, want in corr["match"].items():
        if key == "source_prefix":
            if not row["source"].startswith(want):
                return False
            continue
        alts = want if isinstance(want, list) else [want]
        if row[key] not in alts:
            return False
    return True


def source_of(text):
    for prefix, prov, conf, _ in SOURCES:
        if text.startswith(prefix):
            return prov, conf
    raise Fail("no provenance for source '%s' (add it to SOURCES)" % text)


def lower(conf, cap):
    return conf if CONFIDENCES.index(conf) >= CONFIDENCES.index(cap) else cap


def convert_row(row, names, corrs=()):
    """-> (output dict, None) or (None, reason).  corrs: the CORRECTIONS
    entries that match the row (none of them a drop)."""
    prov, conf = source_of(row["source"])
    row = dict(row)
    for c in corrs:
        row.update(c.get("set", {}))
    notes = []
    hw_raw = row["hardware"]
    if hw_raw not in HARDWARE:
        raise Fail("unknown hardware '%s'" % hw_raw)
    hw, hw_note = HARDWARE[hw_raw]
    metric, stat, mdetail = metric_of(row["metric"])
    if metric is None:
        return None, stat
    model_raw = row["model"]
    if model_raw not in MODELS:
        raise Fail("unknown model '%s'" % model_raw)
    model, model_note = MODELS[model_raw]
    if model is None:
        return None, "no model (a collective benchmark)"
    qbase, qdetail = split_detail(row["quant"])
    key = row["quant"] if row["quant"] in QUANTS else qbase
    if key not in QUANTS:
        raise Fail("unknown quantization '%s'" % row["quant"])
    quant, q_note = QUANTS[key]
    if quant is None:
        return None, "quantization not stated by the source ('%s')" % row["quant"]
    engine = engine_of(row["engine"])
    if engine is None:
        return None, "not an inference engine ('%s')" % row["engine"]
    if row["concurrency"].strip() == "saturation":
        return None, "load not stated ('saturation' of an unpublished sweep)"
    conc, load_notes = load_of(row["concurrency"])
    if quant == "mxfp4" and engine == "llama.cpp":
        # llama.cpp runs GGUF files, whose gpt-oss conversions keep every
        # tensor but the experts at Q8_0 (formats.json gguf-mxfp4)
        quant = "gguf-mxfp4"

    for table, ident in (("hardware", hw), ("models", model), ("quant", quant)):
        if norm(ident) not in names[table]:
            raise Fail("%s id '%s' is not in the catalogue" % (table, ident))

    if norm(hw_raw) != norm(hw):
        notes.append("hardware_as_published=%s" % hw_raw)
    if hw_note:
        notes.append("hardware_note=%s" % hw_note)
    if norm(model_raw) != norm(model):
        notes.append("model_as_published=%s" % model_raw)
    if model_note:
        notes.append("model_note=%s" % model_note)
    if norm(row["quant"]) != norm(quant):
        notes.append("quant_as_published=%s" % row["quant"])
    if q_note:
        notes.append("quant_note=%s" % q_note)
    notes.append("engine_as_published=%s" % row["engine"])
    par = parallel_of(row["engine"], row["notes"])
    if par:
        notes.append("parallel=%s" % par)
    if row["metric"] != metric:
        notes.append("metric_as_published=%s" % row["metric"])
    if stat:
        notes.append("statistic=%s" % stat)
    if row["concurrency"] != conc:
        notes.append("concurrency_as_published=%s" % row["concurrency"])
    notes.extend(load_notes)
    unit = row["unit"]
    if unit.startswith("tok/s"):
        if unit != "tok/s":
            notes.append("unit_note=summed over all GPUs of the run")
        unit = "tok/s"
    elif unit != "ms":
        raise Fail("unknown unit '%s'" % unit)
    if row["params_b"]:
        notes.append("params_b=%s" % row["params_b"])
    if row["active_params_b"] and row["active_params_b"] != row["params_b"]:
        notes.append("active_params_b=%s" % row["active_params_b"])
    if row["notes"]:
        notes.append("source_notes=%s" % row["notes"])
    if hw_note and "assumed" in hw_note:
        conf = lower(conf, "medium")
    for c in corrs:
        notes.extend(c.get("notes", []))
        prov = c.get("provenance", prov)
        if "confidence" in c:
            conf = lower(conf, c["confidence"])
    if metric not in METRICS:
        raise Fail("metric '%s' is not one of the eight" % metric)
    out = {
        "hardware": hw, "n_gpus": row["n_gpus"], "model": model, "quant": quant,
        "engine": engine, "concurrency": conc,
        "input_tokens": row["input_tokens"], "output_tokens": row["output_tokens"],
        "metric": metric, "value": row["value"], "unit": unit,
        "source": row["source"], "notes": " | ".join(notes),
        "provenance": prov, "confidence": conf,
    }
    return out, None


def convert(in_paths, catalog_dir):
    """Rows of every input in turn (the shared file, then the rows added
    in this repository), converted the same way."""
    names = catalogue_names(catalog_dir)
    rows, dropped, corrected = [], [], []
    hits = [0] * len(CORRECTIONS)
    in_path = in_paths[0]
    with open(in_path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        for row in reader:
            idx = [i for i, c in enumerate(CORRECTIONS) if matches(c, row)]
            drops = [i for i in idx if "drop" in CORRECTIONS[i]]
            if drops:
                idx = drops[:1]
            for i in idx:
                hits[i] += 1
            if drops:
                dropped.append((reader.line_num, row, CORRECTIONS[drops[0]]["drop"]))
                continue
            try:
                out, reason = convert_row(row, names, [CORRECTIONS[i] for i in idx])
            except Fail as e:
                raise Fail("%s:%d: %s" % (in_path, reader.line_num, e))
            if out:
                rows.append(out)
                for i in idx:
                    corrected.append((reader.line_num, row, CORRECTIONS[i]["why"]))
            else:
                dropped.append((reader.line_num, row, reason))
    for i, c in enumerate(CORRECTIONS):
        if hits[i] != c["count"]:
            raise Fail("%s: correction %d (%s) matched %d rows (expected %d): the shared "
                       "file changed; check the correction against its source"
                       % (in_path, i + 1, c["match"], hits[i], c["count"]))
    # rows transcribed here carry their conditions already: no corrections
    for extra in in_paths[1:]:
        with open(extra, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            for row in reader:
                try:
                    out, reason = convert_row(row, names, [])
                except Fail as e:
                    raise Fail("%s:%d: %s" % (extra, reader.line_num, e))
                if out:
                    rows.append(out)
                else:
                    raise Fail("%s:%d: %s (a row added here must convert)"
                               % (extra, reader.line_num, reason))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue(), rows, dropped, corrected


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--input", default=os.path.join(
        os.path.dirname(ROOT), "shared", "data", "calibration-measurements.csv"))
    ap.add_argument("--added", default=os.path.join(HERE, "added-measurements.csv"),
                    help="rows transcribed in this repository (same columns as the "
                         "shared file), appended after it")
    ap.add_argument("--output", default=os.path.join(HERE, "measurements.csv"))
    ap.add_argument("--catalog", default=os.path.join(ROOT, "models", "catalog"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    try:
        text, rows, dropped, corrected = convert([a.input, a.added], a.catalog)
    except (Fail, OSError, KeyError, json.JSONDecodeError) as e:
        print("convert.py: %s" % e, file=sys.stderr)
        return 2
    if a.check:
        with open(a.output, encoding="utf-8") as f:
            same = f.read() == text
        print("%s is %s" % (a.output, "up to date" if same else "STALE"))
        return 0 if same else 1
    tmp = a.output + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.replace(tmp, a.output)
    print("%d rows written to %s, %d dropped:\n" % (len(rows), a.output, len(dropped)))
    print("| input line | hardware | model | metric | reason |")
    print("|---|---|---|---|---|")
    for line, row, reason in dropped:
        print("| %d | %s | %s | %s | %s |" % (line, row["hardware"], row["model"],
                                            row["metric"], reason))
    print("\n%d corrections or annotations:\n" % len(corrected))
    print("| input line | hardware | model | metric | value | what |")
    print("|---|---|---|---|---|---|")
    for line, row, why in corrected:
        print("| %d | %s | %s | %s | %s | %s |" % (line, row["hardware"], row["model"],
                                                 row["metric"], row["value"], why))
    counts = {}
    for r in rows:
        key = (r["provenance"], r["confidence"])
        counts[key] = counts.get(key, 0) + 1
    print("\nrows by provenance and confidence:\n")
    print("| provenance | confidence | rows |")
    print("|---|---|---|")
    for p in PROVENANCES:
        for c in CONFIDENCES:
            if (p, c) in counts:
                print("| %s | %s | %d |" % (p, c, counts[(p, c)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
