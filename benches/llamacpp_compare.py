#!/usr/bin/env python3
"""Side-by-side engine benchmark: llama.cpp (through llama-cpp-python) and `humanoid bench llm`
on the same GGUF file, same thread count, in one run.

Usage: python3 benches/llamacpp_compare.py [--model PATH] [--threads 2] [--python PY]

llama-cpp-python is a benchmark-only tool, never a dependency of the crate: install it in a
virtual environment first (it compiles llama.cpp, ~40 minutes on 2 cores):
    python3 -m venv /tmp/lcpenv && /tmp/lcpenv/bin/pip install llama-cpp-python
and pass --python /tmp/lcpenv/bin/python. Prints one JSON object with both sides and ratios.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

LLAMA_SIDE = r'''
import json, resource, sys, time
from llama_cpp import Llama
path, threads = sys.argv[1], int(sys.argv[2])
passage = open(sys.argv[3]).read()
t0 = time.perf_counter()
llm = Llama(model_path=path, n_ctx=2048, n_threads=threads, n_threads_batch=threads,
            n_batch=512, n_ubatch=512, verbose=False, logits_all=False)
load_s = time.perf_counter() - t0
best_prefill, best_decode = 0.0, 0.0
for rep in range(3):
    ids = llm.tokenize((f"Note {rep}: " + passage * 8).encode(), add_bos=False)[:500]
    llm.reset()
    t = time.perf_counter(); llm.eval(ids); dt = time.perf_counter() - t
    best_prefill = max(best_prefill, len(ids) / dt)
    short = llm.tokenize((f"Note {100 * rep}: " + passage).encode(), add_bos=False)[:40]
    llm.reset(); llm.eval(short)
    t = time.perf_counter()
    for _ in range(64):
        scores = llm.scores[llm.n_tokens - 1]
        llm.eval([int(scores.argmax())])
    best_decode = max(best_decode, 64 / (time.perf_counter() - t))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(json.dumps({"load_s": load_s, "prefill_tok_s": best_prefill, "decode_tok_s_batch1": best_decode,
                  "peak_rss_mib": round(peak, 1)}))
'''

PASSAGE = ("John Lin is a pharmacy shopkeeper at the Willows Market and Pharmacy who loves to help "
           "people. He is always looking for ways to make the process of getting medication easier "
           "for his customers. John Lin is living with his wife, Mei Lin, who is a college professor, "
           "and son, Eddy Lin, who is a student studying music theory. ")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "models/smollm2-135m/SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--python", default=sys.executable, help="a Python with llama-cpp-python")
    ap.add_argument("--humanoid", default=os.path.join(ROOT, "target/release/humanoid"))
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternate the two engines this many times and keep each one's best, "
                         "so background noise (which only slows) affects both alike; each "
                         "round's own figures and decode ratio are listed too")
    a = ap.parse_args()
    passage_file = os.path.join(ROOT, "target", "bench-passage.txt")
    os.makedirs(os.path.dirname(passage_file), exist_ok=True)
    with open(passage_file, "w") as f:
        f.write(PASSAGE)
    ours, theirs = None, None
    rounds = []
    for _ in range(max(1, a.rounds)):
        o = json.loads(subprocess.run(
            [a.humanoid, "bench", "llm", "--model", a.model, "--threads", str(a.threads), "--json"],
            check=True, capture_output=True, text=True).stdout)
        t = json.loads(subprocess.run(
            [a.python, "-c", LLAMA_SIDE, a.model, str(a.threads), passage_file],
            check=True, capture_output=True, text=True).stdout)
        rounds.append({
            "humanoid": {"prefill_tok_s": o["prefill_tok_s"], "decode_tok_s": dict(o["decode_tok_s"])},
            "llama_cpp": {"prefill_tok_s": round(t["prefill_tok_s"], 2),
                          "decode_tok_s_batch1": round(t["decode_tok_s_batch1"], 2)},
            "decode_batch1_ratio": round(o["decode_tok_s"]["1"] / t["decode_tok_s_batch1"], 2),
        })
        print(f"round {len(rounds)}: decode b1 {o['decode_tok_s']['1']} vs {t['decode_tok_s_batch1']:.2f} tok/s, "
              f"prefill {o['prefill_tok_s']} vs {t['prefill_tok_s']:.1f}", file=sys.stderr)
        if ours is None:
            ours, theirs = o, t
            continue
        for k in ("prefill_tok_s", "choose_calls_s"):
            ours[k] = max(ours[k], o[k])
        for b, v in o["decode_tok_s"].items():
            ours["decode_tok_s"][b] = max(ours["decode_tok_s"][b], v)
        ours["choose_vs_prefill_time"] = min(ours["choose_vs_prefill_time"], o["choose_vs_prefill_time"])
        ours["load_s"] = min(ours["load_s"], o["load_s"])
        for k in ("prefill_tok_s", "decode_tok_s_batch1"):
            theirs[k] = max(theirs[k], t[k])
        theirs["load_s"] = min(theirs["load_s"], t["load_s"])
        ours["peak_rss_mib"] = max(ours["peak_rss_mib"], o["peak_rss_mib"])
        theirs["peak_rss_mib"] = max(theirs["peak_rss_mib"], t["peak_rss_mib"])
    ratios = {
        "prefill": ours["prefill_tok_s"] / theirs["prefill_tok_s"],
        "decode_batch1": ours["decode_tok_s"]["1"] / theirs["decode_tok_s_batch1"],
        "decode_batch16_aggregate_vs_llamacpp_single": ours["decode_tok_s"]["16"] / theirs["decode_tok_s_batch1"],
        "peak_rss": ours["peak_rss_mib"] / theirs["peak_rss_mib"],
    }
    paired = sorted(r["decode_batch1_ratio"] for r in rounds)
    print(json.dumps({"humanoid": ours, "llama_cpp": theirs,
                      "ratios": {k: round(v, 2) for k, v in ratios.items()},
                      # Each round's two engines ran back to back, under about the same load.
                      "rounds": rounds,
                      "decode_batch1_paired_ratio": {"min": paired[0], "median": paired[len(paired) // 2],
                                                     "max": paired[-1]}}, indent=1))


if __name__ == "__main__":
    main()
