#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Convert the shared calibration measurements into the calibration set.

Reads ../shared/data/calibration-measurements.csv (free-text hardware, model,
quantization, engine, load and metric columns, as transcribed from each
source) and writes models/calibration/measurements.csv with the columns

    hardware, n_gpus, model, quant, engine, concurrency, input_tokens,
    output_tokens, metric, value, unit, source, notes

where hardware, model and quant are catalogue ids (models/catalog/*.json),
engine is one of llama.cpp, vllm, sglang, tensorrt-llm, mlx, and metric one of
decode_tok_s, prefill_tok_s, output_throughput_tok_s, total_throughput_tok_s,
ttft_ms, tpot_ms, itl_ms, e2el_ms.  Everything the mapping drops from a row
(the original spelling of a name, file sizes, the statistic of a latency,
the arrival pattern, the kind of parallelism) goes into `notes` as
`key=value` items separated by " | ", so nothing is lost.

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
           "source", "notes"]
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
        ("a100-sxm-80gb", "SXM or PCIe not stated; SXM assumed"),
    "NVIDIA A100 80GB": ("a100-sxm-80gb", "form factor not stated; SXM assumed"),
    "NVIDIA A100": ("a100-sxm-80gb", "form factor not stated; SXM assumed"),
    "NVIDIA H100 80GB HBM3 (SXM)": ("h100-sxm", None),
    "NVIDIA H100 SXM 80GB (DGX H100)": ("h100-sxm", None),
    "NVIDIA H100 80GB": ("h100-sxm", "form factor not stated; SXM assumed"),
    "NVIDIA H100": ("h100-sxm", "form factor not stated; SXM assumed"),
    "NVIDIA H100 PCIe 80GB": ("h100-pcie", None),
    "NVIDIA H100 DGX (NVLink4/NVSwitch)": ("hgx-h100-8", None),
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


def convert_row(row, names):
    """-> (output dict, None) or (None, reason)."""
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
    if metric not in METRICS:
        raise Fail("metric '%s' is not one of the eight" % metric)
    out = {
        "hardware": hw, "n_gpus": row["n_gpus"], "model": model, "quant": quant,
        "engine": engine, "concurrency": conc,
        "input_tokens": row["input_tokens"], "output_tokens": row["output_tokens"],
        "metric": metric, "value": row["value"], "unit": unit,
        "source": row["source"], "notes": " | ".join(notes),
    }
    return out, None


def convert(in_path, catalog_dir):
    names = catalogue_names(catalog_dir)
    rows, dropped = [], []
    with open(in_path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        for row in reader:
            try:
                out, reason = convert_row(row, names)
            except Fail as e:
                raise Fail("%s:%d: %s" % (in_path, reader.line_num, e))
            if out:
                rows.append(out)
            else:
                dropped.append((reader.line_num, row, reason))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue(), rows, dropped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--input", default=os.path.join(
        os.path.dirname(ROOT), "shared", "data", "calibration-measurements.csv"))
    ap.add_argument("--output", default=os.path.join(HERE, "measurements.csv"))
    ap.add_argument("--catalog", default=os.path.join(ROOT, "models", "catalog"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    try:
        text, rows, dropped = convert(a.input, a.catalog)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
