#!/usr/bin/env python3
"""llama.cpp's logits on the synthetic GGUF files of make_gguf.py, stored as test data.

    python3 tests/synthetic/reference.py DIR    # DIR holds the files make_gguf.py wrote

writes tests/data/synthetic/<case>.json for every DIR/<case>.gguf: the file's sha256, the
prompt's token ids, and for every position llama.cpp's arg-max token and its logits at a
fixed sample of token ids (the arg-maxes and 48 spread over the vocabulary), computed
with F32 weights and an F32 KV cache. Needs
llama-cpp-python (any recent version: its version is recorded), never a dependency of the
crate; run by hand when the synthetic files or llama.cpp change.
"""

import hashlib
import json
import pathlib
import sys

import numpy as np
import llama_cpp

from make_gguf import CASES

# A prompt longer than the synthetic models' sliding window (8), so that windows matter.
TOKENS = [1, 509, 3127, 28, 253, 1517, 42, 7704, 314, 2210, 9, 45, 1011, 13588, 271, 30, 7, 651, 4203, 48000, 12, 333, 8192, 77]


def main():
    src = pathlib.Path(sys.argv[1])
    out = pathlib.Path(__file__).resolve().parents[1] / "data" / "synthetic"
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(src.glob("*.gguf")):
        if CASES.get(path.stem, (None, {}))[1].get("refuse"):
            continue
        # An F32 KV cache and no flash attention: attention in F32, as our F32 path computes it.
        llm = llama_cpp.Llama(
            model_path=str(path), n_ctx=64, n_batch=64, n_threads=2, logits_all=True,
            type_k=0, type_v=0, flash_attn=False, verbose=False,
        )
        llm.eval(TOKENS)
        scores = np.array(llm.scores[: len(TOKENS)], dtype=np.float64)
        vocab = scores.shape[1]
        argmax = [int(i) for i in scores.argmax(axis=1)]
        ids = sorted(set(argmax) | {int(i) for i in np.linspace(0, vocab - 1, 48)})
        record = {
            "file": path.name,
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "llama_cpp_python": llama_cpp.__version__,
            "vocab": vocab,
            "tokens": TOKENS,
            "ids": ids,
            "argmax": argmax,
            "logits": [[round(float(scores[p, i]), 5) for i in ids] for p in range(len(TOKENS))],
        }
        (out / f"{path.stem}.json").write_text(json.dumps(record, indent=1) + "\n")
        print(f"{path.stem}: vocab {vocab}, arg-max {argmax[:6]}...")
        del llm


if __name__ == "__main__":
    main()
