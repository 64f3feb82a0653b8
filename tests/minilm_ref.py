"""all-MiniLM-L6-v2 written out in NumPy: an oracle for the builder's candle
model. BERT encoder (post-LayerNorm, GELU), mean pooling over the attention
mask, L2 normalization, as sentence-transformers runs this model; weights and
tokenizer from the installed model directory. One text at a time, no padding."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7).
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return s * y


def _layer_norm(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


class MiniLM:
    def __init__(self, model_dir: Path, max_tokens: int = 256):
        model_dir = Path(model_dir)
        raw = load_file(str(model_dir / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in raw.items()}
        cfg = json.loads((model_dir / "config.json").read_text())
        self.heads = cfg["num_attention_heads"]
        self.layers = cfg["num_hidden_layers"]
        self.eps = cfg.get("layer_norm_eps", 1e-12)
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.enable_truncation(max_tokens)
        self.tok.no_padding()

    def embed(self, text: str) -> np.ndarray:
        w = self.w
        ids = np.array(self.tok.encode(text).ids)
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        d = x.shape[1]
        hd = d // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(name, v):
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q, k, v = (lin(f"attention.self.{m}", x).reshape(n, self.heads, hd).transpose(1, 0, 2)
                       for m in ("query", "key", "value"))
            s = q @ k.transpose(0, 2, 1) / np.sqrt(hd)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            a = (s @ v).transpose(1, 0, 2).reshape(n, d)
            x = _layer_norm(lin("attention.output.dense", a) + x, w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"], self.eps)
            h = lin("intermediate.dense", x)
            h = 0.5 * h * (1.0 + _erf(h / np.sqrt(2.0)))
            x = _layer_norm(lin("output.dense", h) + x, w[p + "output.LayerNorm.weight"],
                            w[p + "output.LayerNorm.bias"], self.eps)
        m = x.mean(0)
        return m / np.linalg.norm(m)
