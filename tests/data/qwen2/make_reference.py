#!/usr/bin/env python3
"""Reference outputs of llama.cpp on Qwen2.5-Coder-1.5B-Instruct Q4_K_M, for the qwen2 tests.

Usage: python3 tests/data/qwen2/make_reference.py MODEL.gguf > tests/data/qwen2/llamacpp-reference.json

Needs llama-cpp-python (a benchmark and test-data tool, never a dependency of the crate):
    python3 -m venv /tmp/lcpenv && /tmp/lcpenv/bin/pip install llama-cpp-python==0.3.36
Runs on the CPU with 2 threads. Writes, like shared/reference/llamacpp-reference.json:
- `tokenize`: ids of varied strings (add_bos=false, special=true);
- `top_logits`: the 10 highest next-token logits of a few prompts;
- `greedy`: for chat prompts rendered with the model's ChatML markup, the greedy continuation
  (ids) and, per generated token, the margin between the two best logits, so a test can demand
  equality up to the first near-tie.
"""
import json
import sys

import numpy as np
from llama_cpp import Llama, __version__

TOKENIZE = [
    "Hello world! It's 7:00 am, John Lin opens the pharmacy. 12345 apples; café naïve",
    "  leading spaces\n\nnew\tlines   and  'quotes' we'll they're",
    "林家的早晨：约翰在药店工作。 안녕하세요, 에디는 피아노를 연습해요.",
    "Emoji 🍳☕️😀 and symbols ±×÷ → ∞",
    "def f(x):\n    return x ** 2  # square\n",
    "<|im_start|>user\nWhat time is it?<|im_end|>\n<|im_start|>assistant\n",
    "",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1234567890123",
]

PROMPTS = [
    "The capital of France is",
    "John Lin is a pharmacy shopkeeper. Every morning at 7:00 am he",
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
    "Is eating breakfast good for your health? Answer yes or no.<|im_end|>\n<|im_start|>assistant\n",
]

CHATS = [
    "Write one sentence about breakfast.",
    "Plan John Lin's morning from 6:00 am to 9:00 am, one line per hour, as 'hh:mm am: activity'.",
    "Eddy Lin has practised the piano for four hours and is exhausted. What should he do next? "
    "Answer in one short sentence.",
    "Say hello to your father in one sentence.",
]


def chatml(user):
    return ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n")


def main():
    path = sys.argv[1]
    llm = Llama(model_path=path, n_ctx=1024, n_threads=2, n_threads_batch=2, logits_all=True,
                verbose=False)
    out = {"file": path.rsplit("/", 1)[-1], "llama_cpp_python": __version__,
           "tokenize": [], "top_logits": [], "greedy": []}
    for text in TOKENIZE:
        ids = llm.tokenize(text.encode(), add_bos=False, special=True)
        out["tokenize"].append({"text": text, "ids": ids, "add_bos": False, "special": True})
    for prompt in PROMPTS:
        ids = llm.tokenize(prompt.encode(), add_bos=False, special=True)
        llm.reset()
        llm.eval(ids)
        logits = np.array(llm.scores[llm.n_tokens - 1])
        top = np.argsort(-logits)[:10]
        out["top_logits"].append({
            "prompt": prompt, "ids": ids,
            "top": [[int(t), float(logits[t]),
                     llm.detokenize([int(t)]).decode("utf-8", "replace")] for t in top]})
    for user in CHATS:
        ids = llm.tokenize(chatml(user).encode(), add_bos=False, special=True)
        llm.reset()
        llm.eval(ids)
        gen, margins = [], []
        for _ in range(32):
            logits = np.array(llm.scores[llm.n_tokens - 1])
            a, b = np.argsort(-logits)[:2]
            gen.append(int(a))
            margins.append(float(logits[a] - logits[b]))
            if int(a) == llm.token_eos() or llm.detokenize([int(a)]) == b"<|im_end|>":
                break
            llm.eval([int(a)])
        out["greedy"].append({"user": user, "ids": ids, "generated": gen, "margins": margins,
                              "text": llm.detokenize(gen).decode("utf-8", "replace")})
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    print()


if __name__ == "__main__":
    main()
