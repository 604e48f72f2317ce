#!/usr/bin/env python3
"""Reference sentence embeddings for tests/embed.rs, from an implementation independent of candle.

A plain numpy BERT forward (float64) + mean pooling + L2 normalisation, reading the weights with
the `safetensors` numpy API and tokenising with the `tokenizers` Python package (the shipped
tokenizer.json, with its fixed 128-token padding/truncation switched off; every sentence here is
shorter than the model's 512 positions). Each sentence runs alone (no padding), so batching and
masking in the Rust code are checked against unpadded math.

This is what sentence-transformers computes for all-MiniLM-L6-v2 (Transformer -> Pooling(mean)
-> Normalize); torch (+ its multi-GB CUDA dependencies on PyPI) was not installed to run it.

Usage (in any venv with numpy, safetensors, tokenizers):
    python3 tests/data/embed/make_reference.py [MODEL_DIR] > tests/data/embed/reference.json
MODEL_DIR defaults to models/minilm-l6-v2.
"""

import json
import math
import sys
from pathlib import Path

import numpy as np
import safetensors
import tokenizers
from safetensors.numpy import load_file
from tokenizers import Tokenizer

SENTENCES = [
    "John is eating breakfast.",
    "The quick brown fox jumps over the lazy dog!",
    "Wait... what?! Isn't it 3:45 p.m. already -- we're late (again); \"hurry\", she said.",
    "今天天气很好，我们去公园散步吧。",
    "오늘 아침에 친구와 함께 커피를 마셨어요.",
    "Isabella Rodriguez is planning a Valentine's Day party at Hobbs Cafe on February 14th.",
    "",
    (
        "Klaus Mueller spent the whole morning in the library at Oak Hill College, reading about "
        "gentrification in low-income communities, taking careful notes on rent increases, "
        "displacement of long-time residents, and the role of local businesses; after lunch he "
        "walked to Hobbs Cafe, where he met Maria Lopez, who was streaming a video game while "
        "studying physics, and they talked for almost an hour about his research paper, her "
        "upcoming exams, the Valentine's Day party that Isabella Rodriguez was organising, and "
        "whether Sam Moore would really run for mayor of the town in the next election, before "
        "he went back to his dormitory to write down everything he had learned that day."
    ),
]


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def linear(x, w, b):
    return x @ w.T + b


def embed(ids, type_ids, W, cfg):
    p = "embeddings."
    n = len(ids)
    eps = cfg["layer_norm_eps"]
    x = (
        W[p + "word_embeddings.weight"][ids]
        + W[p + "position_embeddings.weight"][np.arange(n)]
        + W[p + "token_type_embeddings.weight"][type_ids]
    )
    x = layer_norm(x, W[p + "LayerNorm.weight"], W[p + "LayerNorm.bias"], eps)
    heads = cfg["num_attention_heads"]
    hd = cfg["hidden_size"] // heads
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        a = p + "attention.self."
        q = linear(x, W[a + "query.weight"], W[a + "query.bias"]).reshape(n, heads, hd)
        k = linear(x, W[a + "key.weight"], W[a + "key.bias"]).reshape(n, heads, hd)
        v = linear(x, W[a + "value.weight"], W[a + "value.bias"]).reshape(n, heads, hd)
        s = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(hd)
        s = s - s.max(-1, keepdims=True)
        pr = np.exp(s)
        pr = pr / pr.sum(-1, keepdims=True)
        ctx = np.einsum("hqk,khd->qhd", pr, v).reshape(n, heads * hd)
        o = p + "attention.output."
        x = layer_norm(
            linear(ctx, W[o + "dense.weight"], W[o + "dense.bias"]) + x,
            W[o + "LayerNorm.weight"],
            W[o + "LayerNorm.bias"],
            eps,
        )
        h = gelu(linear(x, W[p + "intermediate.dense.weight"], W[p + "intermediate.dense.bias"]))
        x = layer_norm(
            linear(h, W[p + "output.dense.weight"], W[p + "output.dense.bias"]) + x,
            W[p + "output.LayerNorm.weight"],
            W[p + "output.LayerNorm.bias"],
            eps,
        )
    pooled = x.mean(0)  # one unpadded sentence: every token (with [CLS] and [SEP]) counts
    return pooled / np.linalg.norm(pooled)


def main():
    root = Path(__file__).resolve().parents[3]
    model_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else root / "models" / "minilm-l6-v2"
    cfg = json.loads((model_dir / "config.json").read_text())
    W = {
        k: v.astype(np.float64) if v.dtype.kind == "f" else v
        for k, v in load_file(str(model_dir / "model.safetensors")).items()
    }
    W = {k[len("bert."):] if k.startswith("bert.") else k: v for k, v in W.items()}
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    out = []
    for s in SENTENCES:
        enc = tok.encode(s)
        assert len(enc.ids) <= cfg["max_position_embeddings"], s
        vec = embed(np.array(enc.ids), np.array(enc.type_ids), W, cfg)
        out.append(
            {
                "text": s,
                "tokens": len(enc.ids),
                "ids": enc.ids,
                "vector": [round(float(v), 6) for v in vec],
            }
        )
    doc = {
        "model": "all-MiniLM-L6-v2 (models/minilm-l6-v2)",
        "made_by": "tests/data/embed/make_reference.py: numpy float64 BERT + mean pooling + L2",
        "numpy": np.__version__,
        "safetensors": safetensors.__version__,
        "tokenizers": tokenizers.__version__,
        "dim": len(out[0]["vector"]),
        "sentences": out,
    }
    json.dump(doc, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
