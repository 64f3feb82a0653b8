#!/usr/bin/env python3
"""Apply the code-tuned delta to all-MiniLM-L6-v2's weights.

    make_minilm_code.py MODEL.safetensors DELTA.safetensors OUT.safetensors

DELTA (scripts/minilm-code-v1.delta.safetensors, written by
bench/finetune_model.py train --lora) holds, per adapted weight matrix W of
key k: k.lora_a (int16, r x in) with one scale k.lora_a_scale, and k.lora_b
(int16, out x r) with one scale per row k.lora_b_scale (f64); per bias or
LayerNorm tensor, k.delta (f32). OUT = MODEL with
W + float32((lora_b @ lora_a) * lora_b_scale[row] * lora_a_scale) and
t + delta. The product is integer arithmetic and every float step is one
correctly rounded operation, so OUT is the same bytes on every machine
(scripts/setup.sh checks the int8 model made from it against a pinned
sha256). Needs numpy only.
"""
import json
import sys
from pathlib import Path

import numpy as np

TYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I16": np.int16}


def load(path: Path) -> tuple[dict, dict]:
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=TYPES[meta["dtype"]]).reshape(meta["shape"])
    return out, header.get("__metadata__", {})


def save(tensors: dict, path: Path) -> None:
    """safetensors, tensors in name order (the format's own rule for a stable file)."""
    names = {v: k for k, v in TYPES.items()}
    header, blobs, off = {}, [], 0
    for k in sorted(tensors):
        v = np.ascontiguousarray(tensors[k])
        b = v.tobytes()
        header[k] = {"dtype": names[v.dtype.type], "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(len(h).to_bytes(8, "little") + h + b"".join(blobs))
    tmp.replace(path)


def apply(base: dict, delta: dict) -> dict:
    out = dict(base)
    used = set()
    for k in base:
        if k + ".lora_a" in delta:
            a, b = delta[k + ".lora_a"].astype(np.int64), delta[k + ".lora_b"].astype(np.int64)
            sa, sb = delta[k + ".lora_a_scale"], delta[k + ".lora_b_scale"]
            if b.shape[0] != base[k].shape[0] or a.shape[1] != base[k].shape[1]:
                sys.exit(f"{k}: delta shape {b.shape[0]}x{a.shape[1]} does not fit {base[k].shape}")
            prod = (b @ a).astype(np.float64)  # exact: |values| < 2^53
            d = (prod * (sb[:, None] * sa[0])).astype(np.float32)
            out[k] = base[k] + d
            used |= {k + ".lora_a", k + ".lora_b", k + ".lora_a_scale", k + ".lora_b_scale"}
        if k + ".delta" in delta:
            if delta[k + ".delta"].shape != base[k].shape:
                sys.exit(f"{k}: delta shape {delta[k + '.delta'].shape} does not fit {base[k].shape}")
            out[k] = base[k] + delta[k + ".delta"]
            used.add(k + ".delta")
    unknown = set(delta) - used
    if unknown:
        sys.exit(f"the delta names tensors the model does not have: {sorted(unknown)[:5]}")
    return out


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    base, _ = load(Path(sys.argv[1]))
    delta, _ = load(Path(sys.argv[2]))
    save(apply(base, delta), Path(sys.argv[3]))


if __name__ == "__main__":
    main()
