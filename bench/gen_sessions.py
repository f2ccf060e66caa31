#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write a long synthetic agent trace (canonical agentcap-trace v1, gzip) for
the replay benchmark: closed-loop sessions that share a harness system prompt,
grow by tool output each call ("extends"), and think between calls.

Deterministic for a given --seed.  Standard library only.

    bench/gen_sessions.py --calls 1000000 -o bench/out/synth-1m.jsonl.gz
"""
import argparse
import gzip
import json
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--calls-per-session", type=int, default=20)
    ap.add_argument("--sessions-per-hour", type=float, default=60.0,
                    help="session start rate (Poisson)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()

    rng = random.Random(a.seed)
    n_sessions = (a.calls + a.calls_per_session - 1) // a.calls_per_session
    t = 0.0
    written = 0
    with gzip.open(a.output, "wt", compresslevel=3) as f:
        f.write(json.dumps({"format": "agentcap-trace", "version": 1,
                            "source": f"bench/gen_sessions.py --seed {a.seed}"}) + "\n")
        for s in range(n_sessions):
            t += rng.expovariate(a.sessions_per_hour / 3600.0)
            sid = f"s{s}"
            n = min(a.calls_per_session, a.calls - written)
            for i in range(n):
                rec = {"session": sid, "task": f"{sid}-t{i // 10}"}
                if i == 0:
                    rec["t"] = round(t, 3)
                    rec["prompt"] = [["harness-system", 6000],
                                     [f"{sid}-task", rng.randint(200, 2000)]]
                else:
                    rec["gap"] = round(rng.lognormvariate(1.5, 1.0), 3)
                    rec["extends"] = True
                    rec["prompt"] = [[f"{sid}-tool-{i}", rng.randint(50, 1500)]]
                rec["output_tokens"] = rng.randint(30, 600)
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")
                written += 1
    print(f"wrote {written} calls in {n_sessions} sessions to {a.output}")


if __name__ == "__main__":
    main()
