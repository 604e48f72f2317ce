#!/usr/bin/env python3
"""Tiny synthetic GGUF models, one per architecture, for checking our forward passes
against llama.cpp without downloading the real models.

Each file has random weights (from a seeded PCG64 stream, so the same script writes the
same bytes), the architecture's real metadata keys, tensor names and shapes, and the
tokenizer of SmolLM2-135M copied from the GGUF file given with --tokenizer (a real
tokenizer, so that llama.cpp loads the file; the tests feed token ids, never text).

    python3 tests/synthetic/make_gguf.py --tokenizer models/smollm2-135m/SmolLM2-135M-Instruct.Q4_1.gguf --out DIR

writes DIR/<case>.gguf for every case in CASES. `reference.py` runs llama.cpp on them and
stores its logits in tests/data/synthetic/; the Rust test `synthetic_arch` regenerates the
files, checks their sha256 against the stored ones and compares our logits with llama.cpp's.
Needs the `gguf` package (pinned in setup.sh) and numpy.
"""

import argparse
import hashlib
import pathlib

import numpy as np
import gguf

# Shapes shared by every case: small, but with grouped-query attention (4 query heads over 2
# kv heads) and every dimension a multiple of 32 as GGUF block formats need.
HIDDEN = 64
HEADS = 4
KV_HEADS = 2
FFN = 128
LAYERS = 2
CONTEXT = 256
EPS = 1e-5

# name -> (architecture, options). Options: head_dim (when not HIDDEN / HEADS), tied (no
# output.weight), qkv_bias, qk_norm, post_norms, fused (phi3's fused QKV and gate-up),
# rope_freqs (Llama 3 per-dimension factors), linear (rope.scaling linear factor), window
# (sliding window), local_base, softcap (attention, final), yarn and longrope (RoPE scalings we
# refuse), refuse (a file we must refuse to load: reference.py skips it).
CASES = {
    "llama3": ("llama", dict(rope_freqs=True)),
    "llama-linear": ("llama", dict(linear=4.0)),
    "qwen2": ("qwen2", dict(qkv_bias=True)),
    "qwen3": ("qwen3", dict(head_dim=32, qk_norm=True, tied=True)),
    "phi3": ("phi3", dict(fused=True)),
    "gemma2": ("gemma2", dict(head_dim=32, post_norms=True, window=8, softcap=(50.0, 30.0), tied=True)),
    "gemma3": ("gemma3", dict(head_dim=32, qk_norm=True, post_norms=True, window=8, local_base=10_000.0, tied=True)),
    # What we refuse (with an error naming it) rather than approximate: no reference logits.
    "llama-yarn": ("llama", dict(yarn=4.0, refuse=True)),
    "phi3-longrope": ("phi3", dict(fused=True, longrope=True, refuse=True)),
}


class Rng:
    """Uniform values from a PCG64 stream (raw 53-bit uniforms are stable across numpy)."""

    def __init__(self, seed):
        self.g = np.random.Generator(np.random.PCG64(seed))

    def uniform(self, shape, scale):
        return ((self.g.random(shape) * 2.0 - 1.0) * scale).astype(np.float32)

    def matrix(self, rows, cols):
        # Kaiming-like scale keeps activations of order one through the layers.
        return self.uniform((rows, cols), (3.0 / cols) ** 0.5)

    def norm(self, n):
        return (1.0 + self.uniform((n,), 0.2)).astype(np.float32)


def copy_tokenizer(writer, path):
    """Copies every tokenizer.* key of the GGUF file at `path`."""
    reader = gguf.GGUFReader(path)
    vocab = 0
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer.") or key == "tokenizer.chat_template":
            continue
        kind = field.types[0]
        if kind == gguf.GGUFValueType.ARRAY:
            sub = field.types[1]
            if sub == gguf.GGUFValueType.STRING:
                values = [bytes(field.parts[i]).decode("utf-8") for i in field.data]
            else:
                values = [field.parts[i].tolist()[0] for i in field.data]
            writer.add_array(key, values)
            if key == "tokenizer.ggml.tokens":
                vocab = len(values)
        elif kind == gguf.GGUFValueType.STRING:
            writer.add_string(key, bytes(field.parts[field.data[0]]).decode("utf-8"))
        elif kind == gguf.GGUFValueType.BOOL:
            writer.add_bool(key, bool(field.parts[field.data[0]][0]))
        elif kind == gguf.GGUFValueType.UINT32:
            writer.add_uint32(key, int(field.parts[field.data[0]][0]))
        elif kind == gguf.GGUFValueType.INT32:
            writer.add_int32(key, int(field.parts[field.data[0]][0]))
        elif kind == gguf.GGUFValueType.FLOAT32:
            writer.add_float32(key, float(field.parts[field.data[0]][0]))
        else:
            raise SystemExit(f"{path}: tokenizer key {key} of type {kind} is not copied")
    return vocab


def write_case(name, arch, opt, tokenizer, out, seed):
    path = out / f"{name}.gguf"
    w = gguf.GGUFWriter(str(path), arch)
    rng = Rng(seed)
    head_dim = opt.get("head_dim", HIDDEN // HEADS)
    q_dim, kv_dim = HEADS * head_dim, KV_HEADS * head_dim
    # (Not the architecture's name: llama.cpp gives a model named "phi3" Phi-3's special
    # tokens, which this vocabulary does not have.)
    w.add_name(f"humanoid synthetic test model {seed}")
    w.add_context_length(CONTEXT)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_layer_norm_rms_eps(EPS)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(100_000.0 if arch != "gemma2" else 10_000.0)
    if "head_dim" in opt:
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    if "linear" in opt:
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(opt["linear"])
    if "yarn" in opt:
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(opt["yarn"])
        w.add_rope_scaling_orig_ctx_len(CONTEXT // 4)
    if "window" in opt:
        w.add_sliding_window(opt["window"])
    if "local_base" in opt:
        w.add_rope_freq_base_swa(opt["local_base"])
    if "softcap" in opt:
        w.add_attn_logit_softcapping(opt["softcap"][0])
        w.add_final_logit_softcapping(opt["softcap"][1])
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    vocab = copy_tokenizer(w, tokenizer)

    # Small embeddings, as trained models have: the layers, not the residual, decide the logits.
    w.add_tensor("token_embd.weight", rng.uniform((vocab, HIDDEN), 0.125))
    if opt.get("rope_freqs"):
        # Llama 3's shape of factors: 1 for the fast dimensions, up to 8 for the slow ones.
        half = head_dim // 2
        w.add_tensor("rope_freqs.weight", np.linspace(1.0, 8.0, half, dtype=np.float32))
    if opt.get("longrope"):
        half = head_dim // 2
        w.add_tensor("rope_factors_long.weight", np.linspace(1.0, 16.0, half, dtype=np.float32))
        w.add_tensor("rope_factors_short.weight", np.linspace(1.0, 2.0, half, dtype=np.float32))
    for l in range(LAYERS):
        p = f"blk.{l}."
        w.add_tensor(p + "attn_norm.weight", rng.norm(HIDDEN))
        if opt.get("fused"):
            w.add_tensor(p + "attn_qkv.weight", rng.matrix(q_dim + 2 * kv_dim, HIDDEN))
        else:
            w.add_tensor(p + "attn_q.weight", rng.matrix(q_dim, HIDDEN))
            w.add_tensor(p + "attn_k.weight", rng.matrix(kv_dim, HIDDEN))
            w.add_tensor(p + "attn_v.weight", rng.matrix(kv_dim, HIDDEN))
        if opt.get("qkv_bias"):
            w.add_tensor(p + "attn_q.bias", rng.uniform((q_dim,), 0.5))
            w.add_tensor(p + "attn_k.bias", rng.uniform((kv_dim,), 0.5))
            w.add_tensor(p + "attn_v.bias", rng.uniform((kv_dim,), 0.5))
        if opt.get("qk_norm"):
            w.add_tensor(p + "attn_q_norm.weight", rng.norm(head_dim))
            w.add_tensor(p + "attn_k_norm.weight", rng.norm(head_dim))
        w.add_tensor(p + "attn_output.weight", rng.matrix(HIDDEN, q_dim))
        if opt.get("post_norms"):
            w.add_tensor(p + "post_attention_norm.weight", rng.norm(HIDDEN))
        w.add_tensor(p + "ffn_norm.weight", rng.norm(HIDDEN))
        if opt.get("fused"):
            w.add_tensor(p + "ffn_up.weight", rng.matrix(2 * FFN, HIDDEN))
        else:
            w.add_tensor(p + "ffn_gate.weight", rng.matrix(FFN, HIDDEN))
            w.add_tensor(p + "ffn_up.weight", rng.matrix(FFN, HIDDEN))
        w.add_tensor(p + "ffn_down.weight", rng.matrix(HIDDEN, FFN))
        if opt.get("post_norms"):
            w.add_tensor(p + "post_ffw_norm.weight", rng.norm(HIDDEN))
    w.add_tensor("output_norm.weight", rng.norm(HIDDEN))
    if not opt.get("tied"):
        w.add_tensor("output.weight", rng.matrix(vocab, HIDDEN))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenizer", required=True, help="a GGUF file to copy the tokenizer from")
    ap.add_argument("--out", required=True, help="folder for the .gguf files")
    ap.add_argument("--only", nargs="*", help="cases to write (default: all)")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for i, (name, (arch, opt)) in enumerate(CASES.items()):
        if a.only and name not in a.only:
            continue
        path = write_case(name, arch, opt, a.tokenizer, out, seed=1000 + i)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        print(f"{path} {digest}")


if __name__ == "__main__":
    main()
