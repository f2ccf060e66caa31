#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write the workloads of the published-experiment suite
(models/calibration/published-experiments.csv) as agentcap-trace v1 files.

Each workload follows what its source states (README.md beside this file
says which parameters are stated and which are inferred).  Deterministic:
every workload has its own fixed seed; the files are committed, so the suite
never runs this script.  Standard library only.

    models/calibration/published/gen_workloads.py   # rewrites the .jsonl files here
"""
import gzip
import io
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def header(source):
    return {"format": "agentcap-trace", "version": 1, "source": source}


def write(name, source, lines):
    """name.jsonl, or name.jsonl.gz gzip-compressed with a zero timestamp so
    that the bytes depend on the content only."""
    text = json.dumps(header(source), separators=(",", ":")) + "\n"
    text += "".join(json.dumps(ln, separators=(",", ":")) + "\n" for ln in lines)
    path = os.path.join(HERE, name)
    if name.endswith(".gz"):
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as g:
            g.write(text.encode("utf-8"))
        data = buf.getvalue()
    else:
        data = text.encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)


def zipf_cdf(n, s):
    w = [1.0 / (k ** s) for k in range(1, n + 1)]
    tot = sum(w)
    c, acc = [], 0.0
    for x in w:
        acc += x
        c.append(acc / tot)
    return c


def pick(cdf, u):
    lo, hi = 0, len(cdf) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cdf[mid] < u:
            lo = mid + 1
        else:
            hi = mid
    return lo


def tool_prefix_groups():
    """Preble's tool-use workload shape: many tools, each with a long shared
    description, popularity Zipf-1.1 (its ablation's setting), short unique
    questions and short answers, Poisson arrivals, one call per request."""
    rng = random.Random(33091)
    tools, calls, rps = 400, 1200, 6.0
    prefix, question, output = 3000, 300, 60
    cdf = zipf_cdf(tools, 1.1)
    t, out = 0.0, []
    for i in range(calls):
        t += rng.expovariate(rps)
        k = pick(cdf, rng.random())
        out.append({"session": "q%d" % i, "t": round(t, 4),
                    "prompt": [["tool%d" % k, prefix], ["q%d" % i, question]],
                    "output_tokens": output})
    write("tool-prefix-groups.jsonl", "gen_workloads.py tool_prefix_groups", out)


def offload_single_request(name, prompt, fillers=6, filler_tokens=100000):
    """vLLM's offloading-connector benchmark, single request: one prompt is
    prefilled, then pushed out of the GPU cache by long unrelated prompts
    (the source disables GPU prefix caching to the same end), then sent
    again, alone, at t=400 s and measured: its KV either comes back from CPU
    memory or is recomputed."""
    out = [{"session": "warm", "t": 0.0, "prompt": [["doc", prompt]], "output_tokens": 1}]
    for k in range(fillers):
        out.append({"session": "fill%d" % k, "t": 20.0 + 30.0 * k,
                    "prompt": [["fill%d" % k, filler_tokens]], "output_tokens": 1})
    out.append({"session": "again", "t": 400.0, "prompt": [["doc", prompt]], "output_tokens": 1})
    write(name, "gen_workloads.py offload_single_request prompt=%d" % prompt, out)


def offload_throughput(name, requests=10000, tokens=512, warm_every=1, t_measure=600.0):
    """vLLM's offloading-connector benchmark, concurrent requests: a batch of
    unique 512-token prefill requests submitted at once, after a warm-up
    pass that put every warm_every-th of them in the CPU cache (warm_every=1:
    100% CPU hits, 2: 50%); the measured batch starts at t_measure."""
    out = []
    for i in range(0, requests, warm_every):
        out.append({"session": "w%d" % i, "t": 0.0, "prompt": [["p%d" % i, tokens]], "output_tokens": 1})
    for i in range(requests):
        out.append({"session": "m%d" % i, "t": t_measure, "prompt": [["p%d" % i, tokens]], "output_tokens": 1})
    write(name, "gen_workloads.py offload_throughput warm_every=%d" % warm_every, out)


def multi_round_qa(name, users, rounds, qps, system, history, answer, question,
                   warm_users, warm_qps=2.0, warm_pause=10.0, window=100.0):
    """The vLLM production-stack multi-round QA benchmark
    (benchmarks/multi-round-qa/multi-round-qa.py, run.sh) as its script
    schedules it: a warm-up run (one user at a time, two rounds, a new user
    every 1/warm_qps s) that fills the caches with the first prompts of
    users 2..warm_users+1, a pause, then the measured run: `users` sessions
    ramped up mid-conversation plus a new user every gap_between_users,
    each sending a request every users/qps s after its previous one, for
    `window` seconds.  A user's first prompt of a run is the shared system
    prompt, its own history and a question; later rounds extend the
    conversation by the answer and a new question.

    The benchmark sends the user id as the session key (x-user-id) in both
    runs, so one user is one agentcap session here: its warm-up calls, then
    its measured calls.  A later call carries the time from the previous
    call's launch to its own as its gap (closed loop), so it arrives later
    than the script would send it by the previous call's latency, a second
    or two against a 100 s window.  Returns the measured run's start."""
    calls = {}  # user -> [(time, new conversation?, segments)]
    t, uid = 0.0, 2  # the ramped-up user 1 has already done both rounds
    wgap = 1.0 / warm_qps
    while t < warm_users * wgap:
        calls.setdefault(uid, []).append((t, True, [["sys", system], ["ctx%d" % uid, history], ["u%d:w1" % uid, question]]))
        calls[uid].append((t + wgap, False, [["u%d:w2" % uid, question]]))
        t += wgap
        uid += 1
    t0 = t + warm_pause
    gap = users / qps
    alive = gap * (rounds - 1)
    gbu = alive / users
    starts = []
    for k in range(users):  # ramp-up: users 1..users, part-way through their rounds
        offset = alive - k * gbu
        passed = int(offset / gap) + 1
        if passed < rounds:
            starts.append((t0 - offset + passed * gap, k + 1, passed))
    j = 0
    while j * gbu < window:  # users joining during the window
        starts.append((t0 + j * gbu, users + 1 + j, 0))
        j += 1
    for first, u, passed in starts:
        q, tt, n = passed, first, 0
        while q < rounds and tt < t0 + window:
            q += 1
            seg = [["sys", system], ["ctx%d" % u, history]] if n == 0 else []
            calls.setdefault(u, []).append((tt, n == 0, seg + [["u%d:q%d" % (u, q), question]]))
            n += 1
            tt += gap
    out = []
    for u in sorted(calls, key=lambda u: (calls[u][0][0], u)):
        cs = sorted(calls[u], key=lambda c: c[0])
        for i, (tt, new, seg) in enumerate(cs):
            line = {"session": "u%d" % u}
            if i == 0:
                line["t"] = round(tt, 4)
            else:
                line["gap"] = round(tt - cs[i - 1][0], 4)
                if not new:
                    line["extends"] = True
            line["prompt"] = seg
            line["output_tokens"] = answer
            out.append(line)
    write(name, "gen_workloads.py multi_round_qa users=%d rounds=%d qps=%g" % (users, rounds, qps), out)
    return t0


def fixed_length_poisson(name, calls, prompt, output, seed):
    """DistServe's synthetic workload (hao-ai-lab blog, 2024-03-17, Figure 6):
    every request has `prompt` input and `output` output tokens, no prefix
    shared with another, Poisson arrivals.  Open-loop requests (no session),
    the gaps rescaled so that the first to the last arrival average exactly
    one request per second: the suite's goodput search replays the trace at
    rate r by dividing every arrival time by r."""
    rng = random.Random(seed)
    gaps = [rng.expovariate(1.0) for _ in range(calls - 1)]
    k = (calls - 1) / sum(gaps)
    t, out = 0.0, []
    for i in range(calls):
        if i:
            t += gaps[i - 1] * k
        out.append({"t": round(t, 6), "prompt": [["r%d" % i, prompt]], "output_tokens": output})
    write(name, "gen_workloads.py fixed_length_poisson calls=%d prompt=%d output=%d seed=%d"
          % (calls, prompt, output, seed), out)


if __name__ == "__main__":
    tool_prefix_groups()
    # vLLM offloading connector (blog.vllm.ai, 2026-01-08), Llama-3.1-8B on one H100
    for k in (10, 50, 100):
        offload_single_request("offload-single-%dk.jsonl" % k, k * 1000)
    offload_throughput("offload-throughput-hit100.jsonl.gz", warm_every=1)
    offload_throughput("offload-throughput-hit50.jsonl.gz", warm_every=2)
    # vLLM production-stack benchmark, Llama-3.1-8B on 8 x A100 (run.sh)
    for q in (0.5, 2.1, 3.1):
        t0 = multi_round_qa("multi-round-qa-8b-qps%g.jsonl" % q, users=320, rounds=10, qps=q,
                            system=1000, history=20000, answer=100, question=20, warm_users=400)
    print("8B measured from %.1f s" % t0)
    t0 = multi_round_qa("multi-round-qa-70b-qps0.6.jsonl", users=70, rounds=20, qps=0.6,
                        system=1000, history=8000, answer=10, question=20, warm_users=70,
                        warm_qps=0.5)
    print("70B measured from %.1f s" % t0)
    # DistServe's goodput comparison (hao-ai-lab blog, 2024-03-17), a 13B model on A100-80GB
    fixed_length_poisson("distserve-512-64.jsonl", calls=300, prompt=512, output=64, seed=2024)
