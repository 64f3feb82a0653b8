"""scripts/make_minilm_code.py: the code-tuned model's delta is applied with
exact arithmetic (the same bytes on every machine, so setup can pin the int8
model's sha256), and a delta that does not fit the model is refused."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np

from helpers import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts/make_minilm_code.py"


def load_module():
    spec = importlib.util.spec_from_file_location("make_minilm_code", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_delta_is_applied_exactly(tmp_path):
    mc = load_module()
    rng = np.random.default_rng(7)
    base = {
        "layer.weight": rng.normal(size=(6, 5)).astype(np.float32),
        "layer.bias": rng.normal(size=6).astype(np.float32),
        "ids": np.arange(4, dtype=np.int64),
    }
    a = rng.integers(-32767, 32768, size=(3, 5)).astype(np.int16)
    b = rng.integers(-32767, 32768, size=(6, 3)).astype(np.int16)
    sa = np.array([1.5e-6])
    sb = rng.uniform(1e-7, 1e-6, size=6)
    dbias = rng.normal(scale=1e-3, size=6).astype(np.float32)
    delta = {"layer.weight.lora_a": a, "layer.weight.lora_a_scale": sa, "layer.weight.lora_b": b,
             "layer.weight.lora_b_scale": sb, "layer.bias.delta": dbias}
    mc.save(base, tmp_path / "base.safetensors")
    mc.save(delta, tmp_path / "delta.safetensors")
    out = tmp_path / "out.safetensors"
    subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "base.safetensors"),
                    str(tmp_path / "delta.safetensors"), str(out)], check=True)
    got, _ = mc.load(out)
    # reference: the integer product summed in Python ints, then the same rounding steps
    prod = [[sum(int(b[i, k]) * int(a[k, j]) for k in range(3)) for j in range(5)] for i in range(6)]
    want = base["layer.weight"] + (np.array(prod, dtype=np.float64) * (sb[:, None] * sa[0])).astype(np.float32)
    assert got["layer.weight"].tobytes() == want.tobytes()
    assert got["layer.bias"].tobytes() == (base["layer.bias"] + dbias).tobytes()
    assert got["ids"].tobytes() == base["ids"].tobytes()
    assert not np.array_equal(got["layer.weight"], base["layer.weight"])
    # the same inputs give the same bytes
    again = tmp_path / "again.safetensors"
    subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "base.safetensors"),
                    str(tmp_path / "delta.safetensors"), str(again)], check=True)
    assert again.read_bytes() == out.read_bytes()


def test_a_delta_that_does_not_fit_is_refused(tmp_path):
    mc = load_module()
    mc.save({"w.weight": np.zeros((4, 4), np.float32)}, tmp_path / "base.safetensors")
    for bad, says in [
        ({"other.weight.delta": np.zeros(4, np.float32)}, "does not have"),
        ({"w.weight.delta": np.zeros(3, np.float32)}, "does not fit"),
    ]:
        mc.save(bad, tmp_path / "delta.safetensors")
        p = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "base.safetensors"),
                            str(tmp_path / "delta.safetensors"), str(tmp_path / "out.safetensors")],
                           capture_output=True, text=True)
        assert p.returncode != 0 and says in p.stderr, p.stderr
        assert not (tmp_path / "out.safetensors").exists()
