"""scripts/make_minilm_graph.py writes the default model's graph node by node
(onnxruntime's fused operators: EmbedLayerNormalization, Attention,
BiasGelu). Its fp32 graph, run by onnxruntime, must compute the model:
the same vectors as tests/minilm_ref.py, an independent NumPy implementation,
on real code; and the int8 file setup builds from it stays close to them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import REPO_ROOT, ort_tools

TEXTS = [
    "def parse_http_date(date):\n    \"\"\"Parse a date format as specified by HTTP RFC 9110 section 5.6.7.\"\"\"",
    "func (b *Reader) ReadString(delim byte) (string, error) {\n\tbytes, err := b.collectFragments(delim)",
    "how does the scheduler pick the next task",
    "impl<T> Drop for Sender<T> { fn drop(&mut self) { self.inner.close(); } }",
    "Returns a new QuerySet containing objects that match the given lookup parameters.",
]

# Run in the private onnxruntime/onnx directory setup installs (argv: out json, graph kind, weights, model dir).
RUNNER = r"""
import json, sys
from pathlib import Path
import numpy as np, onnx, onnxruntime as ort
from tokenizers import Tokenizer
from make_minilm_graph import graph
from make_minilm_code import load
out, weights, model_dir, int8 = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
path = int8 if int8 != "-" else str(Path(out).with_suffix(".onnx"))
if int8 == "-":
    onnx.save(graph(load(weights)[0]), path)
so = ort.SessionOptions(); so.intra_op_num_threads = 1
s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"], disabled_optimizers=["SkipLayerNormFusion"])
tok = Tokenizer.from_file(str(model_dir / "tokenizer.json")); tok.enable_truncation(128); tok.no_padding()
vs = []
for t in json.loads(sys.stdin.read()):
    ids = np.array([tok.encode(t).ids], dtype=np.int64)
    h = s.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})[0][0]
    m = h.mean(0); vs.append((m / np.linalg.norm(m)).tolist())
Path(out).write_text(json.dumps(vs))
"""


def run_graph(tmp_path: Path, model_dir: Path, int8: str = "-") -> np.ndarray:
    tools = ort_tools()
    if tools is None:
        pytest.fail("onnxruntime's Python package is not installed: run scripts/setup.sh --deps-only", pytrace=False)
    out = tmp_path / "vectors.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tools), str(REPO_ROOT / "scripts")] + sys.path)}
    subprocess.run([sys.executable, "-c", RUNNER, str(out), str(model_dir / "model.safetensors"), str(model_dir), int8],
                   input=json.dumps(TEXTS), text=True, env=env, check=True)
    return np.array(json.loads(out.read_text()))


def test_fp32_graph_computes_the_model(model_dir, tmp_path):
    from minilm_ref import MiniLM

    got = run_graph(tmp_path, model_dir)
    ref = MiniLM(model_dir, max_tokens=128)
    cos = [float(ref.embed(t) @ v) for t, v in zip(TEXTS, got)]
    assert min(cos) > 0.99999, cos
    # and the texts are told apart (a graph that ignored its input would pass the check above only by chance)
    assert float(got[0] @ got[2]) < 0.9


def test_default_int8_file_is_close_to_its_fp32_graph(model_dir, tmp_path):
    """The installed default file (fused graph, int8) against the fp32 graph
    of the same tuned weights."""
    int8 = model_dir / "model-code-int8.onnx"
    if not int8.is_file():
        pytest.fail("the code-tuned model is not installed: run scripts/setup.sh --deps-only", pytrace=False)
    tuned = tmp_path / "tuned"
    tuned.mkdir()
    (tuned / "tokenizer.json").write_bytes((model_dir / "tokenizer.json").read_bytes())
    subprocess.run([sys.executable, str(REPO_ROOT / "scripts/make_minilm_code.py"), str(model_dir / "model.safetensors"),
                    str(REPO_ROOT / "scripts/minilm-code-v1.delta.safetensors"), str(tuned / "model.safetensors")],
                   check=True)
    fp32 = run_graph(tmp_path, tuned)
    (tmp_path / "q").mkdir()
    q = run_graph(tmp_path / "q", tuned, str(int8))
    cos = (fp32 * q).sum(1)
    assert cos.min() > 0.97 and cos.mean() > 0.98, cos
    assert cos.max() < 0.999999, "the int8 file should not be the fp32 graph"
