"""The semantic layer end to end, with the real offline model (MiniLM) and
the official Python `mcp` client: vectors in the snapshot, `search_code` in
every mode with its query routing, paging and coded errors, `related_files`,
`call_graph`, the `codeindex://relevant` resource, patterns and `mentions`
edges, `suggest-context`, `upgrade-embeddings`, and what an incremental
build re-embeds.

The main tree is a small slice of the django corpus (~400 chunks: embedded
once, then served from the default embedding cache). Answers are checked
against ripgrep, Python's own `ast`, and the snapshot's tables.
"""

from __future__ import annotations

import ast
import asyncio
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import pyarrow as pa
import pyarrow.compute  # noqa: F401
import yaml
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from helpers import (
    REPO_ROOT,
    chunk_inputs,
    build,
    git_commit_all,
    git_init,
    ort_tools,
    read_faiss_flat,
    run_cli,
    search_code,
    sha256_file,
)

pytestmark = pytest.mark.corpus

MODEL_ID = "minilm-code-int8:all-MiniLM-L6-v2+code-v1"  # the default: MiniLM tuned on code
GENERAL_MODEL_ID = "minilm-int8:all-MiniLM-L6-v2"
FP32_MODEL_ID = "minilm:all-MiniLM-L6-v2"
REPO = "semdemo"
HIT_KEYS = {"repo", "path", "module", "line", "end_line", "score", "kind", "symbol", "snippet", "follows_pattern", "why", "is_test"}
MODES = ("hybrid", "semantic", "keyword", "regex")

DJANGO_FILES = [
    "django/utils/dateparse.py",
    "django/utils/text.py",
    "django/utils/http.py",
    "django/utils/timesince.py",
    "django/db/backends/sqlite3/operations.py",
    "django/db/backends/utils.py",
    "django/forms/fields.py",
    "tests/utils_tests/test_dateparse.py",
    "tests/utils_tests/test_text.py",
    "tests/utils_tests/test_http.py",
]

# A navigation doc: what it names in backticks becomes `mentions` edges.
README_MD = """\
# semdemo

A small slice of Django, used to test code-index's semantic layer.

## Dates

Dates and times are parsed in `django/utils/dateparse.py` (see `parse_datetime`
and `parse_duration`); the tests live in `tests/utils_tests/test_dateparse.py`.

## Serialization

Serializers are registered in `django/core/serializers/__init__.py`. JSON output
goes through `DjangoJSONEncoder` in `django/core/serializers/json.py`.

## Apps and text

Each contrib app declares an `AppConfig` subclass, e.g. `django/contrib/admin/apps.py`.
Text helpers are in `django.utils.text`. A `plain code span` is not a link.
"""
# README span -> the file it must resolve to.
README_MENTIONS = {
    "django/utils/dateparse.py": "django/utils/dateparse.py",
    "parse_datetime": "django/utils/dateparse.py",
    "parse_duration": "django/utils/dateparse.py",
    "tests/utils_tests/test_dateparse.py": "tests/utils_tests/test_dateparse.py",
    "django/core/serializers/__init__.py": "django/core/serializers/__init__.py",
    "DjangoJSONEncoder": "django/core/serializers/json.py",
    "django/core/serializers/json.py": "django/core/serializers/json.py",
    "django/contrib/admin/apps.py": "django/contrib/admin/apps.py",
    "django.utils.text": "django/utils/text.py",
}


# --------------------------------------------------------------------------
# Helpers


def rg(root: Path, *args) -> list[tuple[str, int, str]]:
    """(path, line, text) of every rg match (no config, sorted)."""
    env = {k: v for k, v in os.environ.items() if k != "RIPGREP_CONFIG_PATH"}
    p = subprocess.run(["rg", "--no-config", "-n", "--with-filename", "--no-heading", "--sort", "path", *args],
                       cwd=root, capture_output=True, text=True, env=env)
    assert p.returncode in (0, 1), p.stderr
    out = []
    for line in p.stdout.splitlines():
        path, ln, text = line.split(":", 2)
        out.append((path.removeprefix("./"), int(ln), text))
    return out


def session_run(server_bin: Path, index: Path, body, env: dict | None = None):
    """Run `body(session)` against a fresh `code-index-mcp serve` process."""

    async def main():
        params = StdioServerParameters(command=str(server_bin), args=["serve", "--index", str(index)],
                                       env=env or dict(os.environ))
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return await body(s)

    return asyncio.run(main())


async def call(s, tool: str, args: dict):
    res = await s.call_tool(tool, args)
    return res.is_error, res.structured_content


async def all_pages(s, args: dict) -> tuple[list[dict], list[dict]]:
    """Every result of a search_code query, following next_cursor; (results, pages)."""
    results, pages, cursor = [], [], None
    while True:
        a = dict(args)
        if cursor:
            a["cursor"] = cursor
        err, sc = await call(s, "search_code", a)
        assert not err, sc
        pages.append(sc)
        results += sc["results"]
        cursor = sc.get("next_cursor")
        if not sc["has_more"]:
            break
        assert cursor, sc
        assert len(pages) < 200, "pagination does not end"
    return results, pages


def file_lines(root: Path, path: str) -> list[str]:
    return (root / path).read_text().splitlines()


def check_hit(h: dict, root: Path, repo: str):
    """A well-formed search_code result, checked against the tree."""
    assert HIT_KEYS <= set(h), sorted(HIT_KEYS - set(h))
    assert h["repo"] == repo
    assert (root / h["path"]).is_file(), h["path"]
    n = len(file_lines(root, h["path"]))
    assert 1 <= h["line"] <= h["end_line"] <= max(n, 1), (h["path"], h["line"], h["end_line"], n)
    assert isinstance(h["score"], (int, float)) and math.isfinite(h["score"]) and h["score"] > 0
    assert h["kind"] and h["why"]
    assert h["is_test"] == h["path"].startswith("tests/"), h
    assert h["snippet"].strip(), h
    # The snippet is text of the file (synthesized chunks: class summaries and patterns aside).
    if h["kind"] not in ("class_summary", "pattern"):
        span = "\n".join(file_lines(root, h["path"])[h["line"] - 1 : h["end_line"]])
        for sl in h["snippet"].splitlines():
            sl = sl.removesuffix("…")
            assert sl in span, (h["path"], h["line"], sl)
    if h["path"].endswith(".py") and h["module"] is not None:
        assert isinstance(h["module"], str)


def callers_by_ast(root: Path, name: str) -> dict[str, set[str]]:
    """{path: {qualified function names whose body calls `name(...)`}} over the tree's Python files (ast)."""
    out: dict[str, set[str]] = {}
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        tree = ast.parse(p.read_text())

        def visit(node, prefix):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    q = f"{prefix}{child.name}"
                    for n in ast.walk(child):
                        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name:
                            out.setdefault(rel, set()).add(q)
                            break
                    visit(child, q + ".")
                elif isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.")

        visit(tree, "")
    return out


def pattern_rows(snap_dir: Path) -> list[dict]:
    p = snap_dir / "patterns.parquet"
    return pq.read_table(p).to_pylist() if p.is_file() else []


# --------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="session")
def server_bin(indexer) -> Path:
    p = indexer.parent / "code-index-mcp"
    assert p.is_file(), f"{p} missing: build the workspace"
    return p


@pytest.fixture(scope="session")
def sem_tree(corpora, tmp_path_factory) -> Path:
    """django/contrib/*/apps.py, a few utils, the serializers, three callers of
    dateparse, three test files, the __init__.py files on the way, and a
    README: a git repository named semdemo."""
    src = corpora / "django"
    root = tmp_path_factory.mktemp("semantic") / REPO
    files = sorted(p.relative_to(src).as_posix() for p in src.glob("django/contrib/*/apps.py"))
    files += sorted(p.relative_to(src).as_posix() for p in src.glob("django/core/serializers/*.py"))
    files += DJANGO_FILES
    inits = set()
    for f in files:
        d = Path(f).parent
        while d.parts and d.parts[0] == "django":
            if (src / d / "__init__.py").is_file():
                inits.add((d / "__init__.py").as_posix())
            d = d.parent
    assert len([f for f in files if f.endswith("/apps.py")]) >= 10
    for f in sorted(set(files) | inits):
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / f, root / f)
    (root / "README.md").write_text(README_MD)
    git_init(root)
    git_commit_all(root, "semantic test tree")
    return root


@pytest.fixture(scope="session")
def sem_snap(indexer, model_dir, sem_tree, tmp_path_factory):
    """The tree indexed with embeddings (default model, default cache)."""
    snap = build(indexer, sem_tree, tmp_path_factory.mktemp("sem-out"))
    assert chunk_count(snap) <= 600, "the test tree must stay small (embedding runs at ~15 chunks/s)"
    return snap


@pytest.fixture(scope="session")
def sem_plain(indexer, sem_tree, tmp_path_factory):
    """The same tree built with --no-embeddings."""
    return build(indexer, sem_tree, tmp_path_factory.mktemp("sem-plain"), "--no-embeddings")


def write_tiny(root: Path, word: str = "alpha") -> None:
    """Four small Python files, all distinct; pipeline.py is cut into several
    chunks, each of which holds `word` (so renaming it changes all of them)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "shapes.py").write_text('"""Geometry helpers."""\n\n\ndef area(w, h):\n    """Area of a rectangle."""\n    return w * h\n\n\n'
                                    "def perimeter(w, h):\n    return 2 * (w + h)\n")
    (root / "greet.py").write_text("from shapes import area\n\n\ndef greet(name):\n"
                                   '    """Say hello to someone by name."""\n'
                                   '    return f"hello {name}, the room is {area(3, 4)} square metres"\n')
    (root / "store.py").write_text('import json\n\n\nclass Store:\n    """A tiny key-value store persisted as JSON."""\n\n'
                                   "    def __init__(self, path):\n        self.path = path\n        self.data = {}\n\n"
                                   '    def save(self):\n        with open(self.path, "w") as f:\n            json.dump(self.data, f)\n')

    def stage(i: int) -> str:
        body = "\n".join(f"    {word}_value_{i}_{j} = {word}_scale * {j} + {i}  # {word} step {j} of the {word} pipeline"
                         for j in range(40))
        return f'def {word}_stage_{i}({word}_scale):\n    """Stage {i} of the {word} computation."""\n{body}\n    return {word}_value_{i}_39\n'

    text = f'"""The {word} pipeline: stages that scale numbers."""\n\n{word.upper()}_NAME = "{word}"\n\n\n' + "\n\n".join(stage(i) for i in range(3))
    (root / "pipeline.py").write_text(text)


def chunk_count(snap, path: str | None = None) -> int:
    rows = snap.read("chunks", ["path"]).column("path").to_pylist()
    return len(rows) if path is None else sum(1 for p in rows if p == path)


# --------------------------------------------------------------------------
# The snapshot's vectors


def test_manifest_describes_the_vectors(sem_snap):
    m = sem_snap.manifest
    e = m["embeddings"]
    assert e is not None, "built with embeddings, but the manifest has none"
    assert e["model"] == MODEL_ID
    assert e["dimension"] == 384
    assert e["metric"] == "inner_product"
    assert e["normalized"] is True
    chunk_ids = sem_snap.read("chunks", ["chunk_id"]).column("chunk_id").to_pylist()
    pattern_ids = list(dict.fromkeys(r["pattern_id"] for r in pattern_rows(sem_snap.dir)))
    listed = {f["name"]: f for f in m["files"]}
    assert "vectors.faiss" in listed
    vf = listed["vectors.faiss"]
    assert vf["sha256"] == sha256_file(sem_snap.dir / "vectors.faiss")
    assert vf["bytes"] == (sem_snap.dir / "vectors.faiss").stat().st_size
    assert vf["rows"] == e["count"]
    # The file itself: unit vectors, ids = chunk ids then pattern ids, each
    # chunk's vectors (itself, then its definition windows) consecutive.
    dim, metric, ids, vecs = read_faiss_flat(sem_snap.dir / "vectors.faiss")
    assert (dim, metric) == (384, 0)
    # A test file's module-level, whole-file and class-summary chunks have none.
    inputs = chunk_inputs(sem_snap)
    embedded = [c for c in chunk_ids if inputs[c]]
    assert 0 < len(embedded) < len(chunk_ids), "the tree has test files: some chunks carry no vector"
    assert e["count"] == len(ids) >= len(embedded) + len(pattern_ids)
    assert list(dict.fromkeys(ids)) == embedded + pattern_ids
    runs = [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]
    assert len(runs) == len(embedded) + len(pattern_ids), "a chunk's vectors must be consecutive"
    assert len(ids) > len(embedded) + len(pattern_ids), "long chunks should carry definition windows"
    for v in vecs:
        assert abs(sum(x * x for x in v) - 1.0) < 1e-3


def ort_reference(model_dir: Path, file: str = "model-int8.onnx"):
    """The int8 model run by onnxruntime's Python API (installed by setup
    into a private directory), one text at a time, with the graph rewrites
    the builder leaves out (schemas/src/embed.rs ORT_DISABLED; with them the
    dynamic quantization rounds differently: cosine ≈ 0.999): mean pooling,
    L2 norm."""
    import importlib
    import sys

    tools = ort_tools()
    if tools is None:
        pytest.fail("onnxruntime's Python package is not installed: run scripts/setup.sh --deps-only", pytrace=False)
    sys.path.insert(0, str(tools))
    try:
        ort = importlib.import_module("onnxruntime")
    finally:
        sys.path.remove(str(tools))
    import numpy as np
    from tokenizers import Tokenizer

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(model_dir / file), so, providers=["CPUExecutionProvider"],
                                disabled_optimizers=["SkipLayerNormFusion"])
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(128)
    tok.no_padding()

    def embed(text: str):
        ids = np.array([tok.encode(text).ids], dtype=np.int64)
        h = sess.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})[0][0]
        m = h.mean(0)
        return m / np.linalg.norm(m)

    return embed


def picked_inputs(snap):
    """Small chunks (exact inputs: no windows) with a signature vector, and a
    class summary; with their stored vectors."""
    inputs = chunk_inputs(snap)
    spans = {r["chunk_id"]: (r["end_byte"] - r["start_byte"], r["kind"])
             for r in snap.read("chunks", ["chunk_id", "start_byte", "end_byte", "kind"]).to_pylist()}
    _, _, ids, vecs = read_faiss_flat(snap.dir / "vectors.faiss")
    by_id: dict[int, list] = {}
    for i, v in zip(ids, vecs):
        by_id.setdefault(i, []).append(v)
    picked = [c for c in sorted(inputs) if spans[c][0] < 800 and len(inputs[c]) >= 2][:5]
    picked += [c for c in sorted(inputs) if spans[c][1] == "class_summary"][:1]
    assert len(picked) == 6, "the tree should have small functions and a class"
    out = []
    for cid in picked:
        assert len(by_id[cid]) == len(inputs[cid]), (cid, inputs[cid])
        out += list(zip(inputs[cid], by_id[cid]))
    assert len(out) >= 11
    return out


def slice_snapshot(indexer, sem_tree: Path, dst: Path, *args: str):
    """A snapshot of three files of the tree, built cold with `args`: small
    work for a model's own checks."""
    tree = dst / "tree"
    for f in ["django/utils/dateparse.py", "django/utils/timesince.py", "django/core/serializers/base.py"]:
        (tree / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sem_tree / f, tree / f)
    return build(indexer, tree, dst / "out", *args, "--embedding-cache", "none")


def int8_cosines(snap, ort_embed, *others) -> list[list[float]]:
    """Every picked input's stored vector equals its model file run by
    onnxruntime's Python API (asserted); the cosines of the stored vectors
    to each of `others`' vectors of the same texts."""
    out = [[] for _ in others]
    for text, v in picked_inputs(snap):
        cos = float(ort_embed(text) @ v)
        assert cos > 0.99999, (text[:80], cos)
        for o, embed in zip(out, others):
            o.append(float(embed(text) @ v))
    return out


def tuned_weights(model_dir: Path, dst: Path) -> Path:
    """The code-tuned fp32 weights (the committed delta applied by
    scripts/make_minilm_code.py) in a model directory of their own."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in ("config.json", "tokenizer.json"):
        shutil.copyfile(model_dir / f, dst / f)
    subprocess.run([sys.executable, str(REPO_ROOT / "scripts/make_minilm_code.py"), str(model_dir / "model.safetensors"),
                    str(REPO_ROOT / "scripts/minilm-code-v1.delta.safetensors"), str(dst / "model.safetensors")],
                   check=True)
    return dst


def test_default_model_vectors_equal_an_independent_implementation(sem_snap, model_dir, tmp_path):
    """The stored vectors of the default model (the code-tuned MiniLM, int8,
    run by the builder through the Rust onnxruntime bindings) equal those of
    the same model file run by onnxruntime's Python API, for real chunk and
    signature inputs; stay close to the tuned fp32 weights run in NumPy
    (tests/minilm_ref.py; the delta applied by scripts/make_minilm_code.py):
    int8 weights move a vector a little, never far; and are not the
    published model's vectors."""
    from minilm_ref import MiniLM

    if not (model_dir / "model-code-int8.onnx").is_file():
        pytest.fail("the code-tuned model is not installed: run scripts/setup.sh --deps-only", pytrace=False)
    ort_embed = ort_reference(model_dir, "model-code-int8.onnx")
    general = ort_reference(model_dir)
    fp32 = MiniLM(tuned_weights(model_dir, tmp_path / "tuned"), max_tokens=128)
    cos_fp32, cos_general = int8_cosines(sem_snap, ort_embed, fp32.embed, general)
    assert min(cos_fp32) > 0.97, cos_fp32
    assert sum(cos_fp32) / len(cos_fp32) > 0.99, cos_fp32
    assert max(cos_general) < 0.999, cos_general


def test_general_model_vectors_equal_an_independent_implementation(indexer, model_dir, sem_tree, tmp_path):
    """`--model minilm-general` (all-MiniLM-L6-v2 as published, int8: the
    default before the code-tuned model) stores vectors equal to its model
    file run by onnxruntime's Python API and close to the fp32 model in
    NumPy. A slice of the tree keeps the work small."""
    from minilm_ref import MiniLM

    snap = slice_snapshot(indexer, sem_tree, tmp_path, "--model", "minilm-general")
    assert snap.manifest["embeddings"]["model"] == GENERAL_MODEL_ID
    (cos_fp32,) = int8_cosines(snap, ort_reference(model_dir), MiniLM(model_dir, max_tokens=128).embed)
    assert min(cos_fp32) > 0.97, cos_fp32


def test_fp32_model_vectors_equal_an_independent_implementation(indexer, model_dir, sem_tree, tmp_path):
    """`--model minilm-fp32` (candle, the default before int8) still builds
    the fp32 model's vectors: equal to tests/minilm_ref.py's. A slice of the
    tree keeps the slow model's work small."""
    from minilm_ref import MiniLM

    snap = slice_snapshot(indexer, sem_tree, tmp_path, "--model", "minilm-fp32")
    assert snap.manifest["embeddings"]["model"] == FP32_MODEL_ID
    ref = MiniLM(model_dir)
    for text, v in picked_inputs(snap):
        cos = float(ref.embed(text) @ v)
        assert cos > 0.9999, (text[:80], cos)


# --------------------------------------------------------------------------
# search_code


def test_every_mode_returns_well_formed_results(server_bin, sem_snap, sem_tree):
    concept = "parse an ISO 8601 date string"
    regex = r"def parse_\w+\("

    async def body(s):
        out = {}
        for mode in MODES:
            q = regex if mode == "regex" else concept
            out[mode] = await call(s, "search_code", {"query": q, "mode": mode, "limit": 20})
        return out

    out = session_run(server_bin, sem_snap.dir, body)
    for mode, (err, sc) in out.items():
        assert not err, (mode, sc)
        assert sc["mode"] == mode, (mode, sc["mode"], sc.get("notice"))
        assert sc["index_version"] == sem_snap.id
        assert sc["searched_repos"] == [REPO]
        assert sc["semantic"] is (mode in ("hybrid", "semantic")), (mode, sc.get("notice"))
        assert sc["results"], mode
        assert sc["total_count"] >= len(sc["results"])
        for h in sc["results"]:
            check_hit(h, sem_tree, REPO)
        # Unset max_per_file: each file's best chunk first, best first; when
        # fewer files matched than the page holds, their other chunks follow.
        paths = [h["path"] for h in sc["results"]]
        head = len(dict.fromkeys(paths))
        assert len(set(paths[:head])) == head, (mode, paths)
        scores = [h["score"] for h in sc["results"]]
        assert scores[:head] == sorted(scores[:head], reverse=True), (mode, scores)
        assert scores[head:] == sorted(scores[head:], reverse=True), (mode, scores)
    for mode in ("semantic", "hybrid"):
        top3 = [h["path"] for h in out[mode][1]["results"][:3]]
        assert "django/utils/dateparse.py" in top3, (mode, top3)
    # regex: every result holds a real match, and every file with a match is there.
    matches = rg(sem_tree, "-e", regex)
    by_file: dict[str, set[int]] = {}
    for path, ln, _ in matches:
        by_file.setdefault(path, set()).add(ln)
    sc = out["regex"][1]
    assert sc["query_type"] == "regex"
    for h in sc["results"]:
        lines = by_file.get(h["path"], set())
        assert any(h["line"] <= ln <= h["end_line"] for ln in lines), (h["path"], h["line"], h["end_line"], sorted(lines))
        m = re.search(r"line (\d+)", h["why"])
        assert m and int(m.group(1)) in lines, h["why"]
    assert {h["path"] for h in sc["results"]} == set(by_file)


def test_query_classification_and_routing(server_bin, sem_snap, sem_tree):
    queries = {
        "symbol": "parse_datetime",
        "relationship": "what calls parse_date",
        "flow": "from the serializer to the json encoder",
        "pattern": "how do app configs work",
        "concept": "cut a long text down to a number of words",
    }

    async def body(s):
        return {k: await call(s, "search_code", {"query": q, "limit": 50}) for k, q in queries.items()}

    out = session_run(server_bin, sem_snap.dir, body)
    for kind, (err, sc) in out.items():
        assert not err, (kind, sc)
        assert sc["query_type"] == kind, (queries[kind], sc["query_type"])
    # symbol: the chunk defining it comes first.
    (def_path, def_line, _), = rg(sem_tree, "-e", r"^def parse_datetime\(")
    first = out["symbol"][1]["results"][0]
    assert first["path"] == def_path and first["line"] <= def_line <= first["end_line"], first
    assert first["why"].startswith("definition of parse_datetime"), first["why"]
    # relationship: the routed callers come first and are exactly the call sites rg finds.
    calls = [(p, ln) for p, ln, t in rg(sem_tree, "-e", r"\bparse_date\(") if not t.lstrip().startswith("def ")]
    call_files = {p for p, _ in calls}
    res = out["relationship"][1]["results"]
    routed = [h for h in res if h["why"].startswith("calls parse_date")]
    assert routed and res[: len(routed)] == routed, [h["why"] for h in res]
    assert {h["path"] for h in routed} == call_files
    for h in routed:
        at = int(re.search(r"at line (\d+)", h["why"]).group(1))
        assert (h["path"], at) in calls, h
        assert any(h["line"] <= ln <= h["end_line"] for p, ln in calls if p == h["path"]), h
    # flow: a path through imports/calls was found, or the answer says why not.
    flow = out["flow"][1]
    assert any(h["why"].startswith("flow step") for h in flow["results"]) or "no import/call path" in (flow.get("notice") or "")
    # concept: the truncation helpers rank high.
    top = [h["path"] for h in out["concept"][1]["results"][:5]]
    assert "django/utils/text.py" in top, top


def test_include_tests(server_bin, sem_snap, sem_tree):
    q = "parse a date or a duration"

    async def body(s):
        out = {}
        for mode in ("keyword", "hybrid"):
            for t in ("include", "exclude", "only"):
                out[mode, t] = (await all_pages(s, {"query": q, "mode": mode, "include_tests": t, "limit": 50}))[0]
        out["bad"] = await call(s, "search_code", {"query": q, "include_tests": "sometimes"})
        return out

    out = session_run(server_bin, sem_snap.dir, body)
    is_test = {r["path"]: r["is_test"] for r in sem_snap.read("files", ["path", "is_test"]).to_pylist()}
    for mode in ("keyword", "hybrid"):
        inc, exc, only = out[mode, "include"], out[mode, "exclude"], out[mode, "only"]
        assert exc and only and inc
        assert not any(h["is_test"] for h in exc)
        assert all(h["is_test"] for h in only)
        for h in inc + exc + only:
            assert h["is_test"] == is_test[h["path"]], h
        assert any(h["is_test"] for h in inc) and not all(h["is_test"] for h in inc)
    # Keyword scores do not depend on the scope, and tests weigh the same (0.5) with
    # include and only: include is exactly exclude + only, merged by score.
    key = lambda h: (h["path"], h["line"], h["end_line"], h["score"])  # noqa: E731
    inc, exc, only = out["keyword", "include"], out["keyword", "exclude"], out["keyword", "only"]
    assert sorted(map(key, inc)) == sorted(map(key, exc + only))
    err, sc = out["bad"]
    assert err and sc["code"] == "INVALID_ARGUMENT" and "exclude" in sc["hint"] and "only" in sc["hint"]


def test_pagination_and_coded_errors(server_bin, sem_snap):
    q = "date"

    async def body(s):
        out = {}
        out["pages"] = await all_pages(s, {"query": q, "limit": 3})
        out["oneshot"] = await call(s, "search_code", {"query": q, "limit": 50})
        first = out["pages"][1][0]
        out["garbled"] = await call(s, "search_code", {"query": q, "limit": 3, "cursor": "!!garbled~cursor"})
        out["foreign"] = await call(s, "search_code", {"query": "serializer", "limit": 3, "cursor": first["next_cursor"]})
        out["mode"] = await call(s, "search_code", {"query": q, "mode": "fuzzy"})
        out["limit0"] = await call(s, "search_code", {"query": q, "limit": 0})
        out["limit51"] = await call(s, "search_code", {"query": q, "limit": 51})
        out["empty"] = await call(s, "search_code", {"query": "   "})
        return out

    out = session_run(server_bin, sem_snap.dir, body)
    results, pages = out["pages"]
    assert len(pages) >= 3
    total = pages[0]["total_count"]
    assert all(p["total_count"] == total for p in pages)
    assert all(len(p["results"]) <= 3 for p in pages)
    assert all(p["has_more"] and p["next_cursor"] for p in pages[:-1])
    assert pages[-1]["has_more"] is False and pages[-1].get("next_cursor") is None
    # (a pattern's chunk sits on its canonical file and may rank beside that file's own chunk)
    keys = [(h["path"], h["line"], h["kind"]) for h in results]
    assert len(keys) == len(set(keys)), "a result came twice"
    assert len(results) == total
    # Pages cut the same ranking as one big page.
    err, one = out["oneshot"]
    assert not err
    if total <= 50:
        assert [(h["path"], h["line"], h["kind"]) for h in one["results"]] == keys
    for name in ("garbled", "foreign"):
        err, sc = out[name]
        assert err and sc["code"] == "INVALID_CURSOR", (name, sc)
        assert sc["message"] and sc["hint"]
    err, sc = out["mode"]
    assert err and sc["code"] == "INVALID_ARGUMENT"
    for v in MODES:
        assert v in sc["hint"], sc
    for name in ("limit0", "limit51", "empty"):
        err, sc = out[name]
        assert err and sc["code"] == "INVALID_ARGUMENT", (name, sc)
        assert sc["hint"]
    assert "50" in out["limit51"][1]["hint"]


def test_empty_result_suggests_synonyms(server_bin, sem_snap, sem_tree):
    synonyms = yaml.safe_load((REPO_ROOT / "server/src/synonyms.yaml").read_text())
    word, nonsense = "encrypt", "zzqxv"
    # Preconditions, by rg: neither word is in the tree, a synonym of `encrypt` is.
    assert not rg(sem_tree, "-i", "-e", word, "-e", nonsense)
    present = [w for w in synonyms[word] if rg(sem_tree, "-i", "-w", "-e", w)]
    assert present, f"no synonym of {word} in the tree: pick another word"
    query = f"{nonsense} {word}"

    async def body(s):
        out = {"empty": await call(s, "search_code", {"query": query, "mode": "keyword"})}
        err, sc = out["empty"]
        for sug in sc.get("suggestions", []):
            q = sug["query"]
            out[q] = await call(s, "search_code", {"query": q, "mode": "keyword", "limit": 50, "max_per_file": 1000})
        return out

    out = session_run(server_bin, sem_snap.dir, body)
    err, sc = out["empty"]
    assert not err
    assert sc["total_count"] == 0 and sc["results"] == [] and sc["has_more"] is False
    assert sc["hint"] and "No results" in sc["hint"]
    sugs = sc.get("suggestions") or []
    assert sugs, sc
    assert all(s["results"] > 0 for s in sugs)
    swapped = {s["query"].split()[-1] for s in sugs if s["query"].startswith(nonsense + " ")}
    assert swapped & set(synonyms[word]), sugs
    assert swapped <= set(synonyms[word]), sugs
    # Each suggestion's count is what running it finds (all chunks, no per-file cut).
    for s in sugs:
        err, r = out[s["query"]]
        assert not err and r["total_count"] == s["results"], (s, r["total_count"])


def test_snapshot_without_vectors_runs_keyword_and_says_so(server_bin, sem_plain):
    assert sem_plain.manifest["embeddings"] is None
    assert not (sem_plain.dir / "vectors.faiss").exists()

    async def body(s):
        return {m: await call(s, "search_code", {"query": "parse a date string", "mode": m}) for m in ("semantic", "hybrid")}

    out = session_run(server_bin, sem_plain.dir, body)
    for m, (err, sc) in out.items():
        assert not err, (m, sc)
        assert sc["semantic"] is False and sc["mode"] == "keyword", (m, sc)
        assert sc["notice"] and "--no-embeddings" in sc["notice"], sc.get("notice")
        assert sc["results"] and sc["index_version"] == sem_plain.id


def test_few_files_fill_the_page_with_their_other_chunks(server_bin, sem_plain, sem_tree):
    """One file in scope: unset max_per_file lists its matching chunks best
    first (not one lone result); max_per_file 1 keeps one."""
    path = "django/core/serializers/base.py"

    async def body(s):
        args = {"query": "serialize objects", "mode": "keyword", "path": path, "limit": 10}
        return [await call(s, "search_code", args), await call(s, "search_code", {**args, "max_per_file": 1})]

    (err, filled), (err1, one) = session_run(server_bin, sem_plain.dir, body)
    assert not err and not err1, (filled, one)
    assert len(one["results"]) == 1, one["results"]
    hits = filled["results"]
    assert len(hits) >= 3, hits
    assert {h["path"] for h in hits} == {path}
    spans = [(h["line"], h["end_line"]) for h in hits]
    assert len(set(spans)) == len(spans), [(h["line"], h["end_line"], h["kind"], h["symbol"]) for h in hits]
    assert hits[0]["line"] == one["results"][0]["line"], (hits[0], one["results"][0])
    lines = (sem_tree / path).read_text().splitlines()
    for h in hits:
        text = " ".join(lines[h["line"] - 1 : h["end_line"]]).lower()
        assert "serializ" in text or "object" in text, (h["line"], h["end_line"])


def test_a_how_question_lets_files_vote(server_bin, sem_snap, sem_tree):
    """A "how ..." question asks for a mechanism, which a file holds: in
    hybrid mode each file's best chunk scores the fusion of the file's best
    rank in each list. `django/utils/http.py` (quote_etag, the urllib quote
    helpers) comes first, and ripgrep says which file is about quoting.
    Without the stage (`CODE_INDEX_RANK=-filevote`) the first file depends
    on the CPU's int8 kernels: on an AVX-512 VNNI machine chunk-level fusion
    put `URLField` of `django/forms/fields.py` (no quoting at all) first, on
    a plain AVX-512 one `http.py`; where they differ, the vote overturns a
    file without quoting."""
    def first(q: str, env: dict) -> str:
        return search_code(server_bin, sem_snap.dir, q, "hybrid", 5, env)[0]["path"]

    q = "how does url quoting work"
    voted, chunked = first(q, {}), first(q, {"CODE_INDEX_RANK": "-filevote"})
    assert voted == "django/utils/http.py", (voted, chunked)
    assert rg(sem_tree, "-i", "-e", "quot", voted), voted
    if chunked != voted:
        assert not rg(sem_tree, "-i", "-e", "quot", chunked), chunked
    # A description (not a question) is ranked as before.
    d = "Returns True if the host is either an exact match or a match to the wildcard pattern."
    assert first(d, {}) == first(d, {"CODE_INDEX_RANK": "-filevote"}) == "django/utils/http.py"


def test_a_name_query_finds_the_file_named_after_it(server_bin, sem_plain, sem_tree):
    """A query that is one name (`Jsonl`) that nothing defines ranks the
    file named after it (`serializers/jsonl.py`) first, though other files
    mention the word as often; its words are not counted in other paths."""
    stems = {"json": "django/core/serializers/json.py", "jsonl": "django/core/serializers/jsonl.py",
             "pyyaml": "django/core/serializers/pyyaml.py", "python": "django/core/serializers/python.py"}
    for stem, path in stems.items():
        assert (sem_tree / path).is_file(), path
        # Precondition, by rg: no definition is named after the word (else it is routed first).
        assert not rg(sem_tree, "-i", "-e", rf"^\s*(def|class)\s+{stem}\b"), stem
        # ... and other files hold the word too: the name, not the text, decides.
        assert {p for p, _, _ in rg(sem_tree, "-i", "-w", "-e", stem)} - {path}, stem

    async def body(s):
        return {stem: await call(s, "search_code", {"query": stem.capitalize(), "mode": "keyword", "limit": 5})
                for stem in stems}

    out = session_run(server_bin, sem_plain.dir, body)
    for stem, (err, sc) in out.items():
        assert not err, sc
        assert sc["query_type"] == "symbol", (stem, sc["query_type"])
        top = [h["path"] for h in sc["results"]]
        assert top and top[0] == stems[stem], (stem, top)


def test_a_doc_file_included_as_documentation_speaks_for_its_source(server_bin, snapshots, corpora):
    """clap_builder's `src/lib.rs` takes its crate docs from the README
    (`#![doc = include_str!("../README.md")]`): words only the README holds
    find the chunk of `lib.rs` that holds the attribute, ranked as code (a
    doc chunk weighs half for a query that is not a question)."""
    crate = corpora / "rust-crates" / "clap_builder-4.5.20"
    lib = (crate / "src/lib.rs").read_text()
    attr = next(i for i, l in enumerate(lib.splitlines(), 1) if l.startswith('#![doc = include_str!("../README.md")]'))
    # Precondition: the query's distinctive words are the README's, not lib.rs's.
    assert "tutorial" in (crate / "README.md").read_text().lower()
    assert "tutorial" not in lib.lower()
    snap = snapshots("rust-crates")

    async def body(s):
        return await call(s, "search_code", {"query": "clap builder derive tutorial", "mode": "keyword", "limit": 10})

    err, sc = session_run(server_bin, snap.dir, body)
    assert not err, sc
    paths = [h["path"] for h in sc["results"]]
    lib_path, readme = "clap_builder-4.5.20/src/lib.rs", "clap_builder-4.5.20/README.md"
    assert lib_path in paths and readme in paths, paths
    hit = sc["results"][paths.index(lib_path)]
    assert hit["line"] <= attr <= hit["end_line"], hit
    assert paths.index(lib_path) < paths.index(readme), paths


# --------------------------------------------------------------------------
# related_files, call_graph, the relevant resource


def test_related_files_lists_tests_and_importers(server_bin, sem_snap, sem_tree):
    target = "django/utils/dateparse.py"

    async def body(s):
        return (await call(s, "related_files", {"path": target, "limit": 50}),
                await call(s, "related_files", {"path": "django/utils/dateprase.py"}))

    (err, sc), (err2, missing) = session_run(server_bin, sem_snap.dir, body)
    assert not err, sc
    assert sc["path"] == target and sc["repo"] == REPO
    files = {f["path"]: f for f in sc["files"]}
    assert target not in files
    for f in sc["files"]:
        assert (sem_tree / f["path"]).is_file() and f["reasons"] and f["score"] > 0
    scores = [f["score"] for f in sc["files"]]
    assert scores == sorted(scores, reverse=True)
    test = "tests/utils_tests/test_dateparse.py"
    assert test in files and any("test" in r for r in files[test]["reasons"]), files.get(test)
    importers = {p for p, _, _ in rg(sem_tree, "-e", r"^\s*from django\.utils\.dateparse import|^\s*import django\.utils\.dateparse|^\s*from django\.utils import .*\bdateparse\b")}
    assert importers, "rg found no importer of dateparse"
    got = {p for p, f in files.items() if "imported by" in f["reasons"]}
    assert got == importers
    assert err2 and missing["code"] == "NOT_FOUND"


def test_call_graph_callers_match_the_source(server_bin, sem_snap, sem_tree):
    async def body(s):
        return {
            "d1": await call(s, "call_graph", {"symbol": "parse_date", "direction": "callers", "depth": 1}),
            "d2": await call(s, "call_graph", {"symbol": "parse_date", "depth": 2}),
            "callees": await call(s, "call_graph", {"symbol": "DatabaseOperations.convert_datefield_value", "direction": "callees"}),
            "deep": await call(s, "call_graph", {"symbol": "parse_date", "depth": 4}),
            "dir": await call(s, "call_graph", {"symbol": "parse_date", "direction": "sideways"}),
            "unknown": await call(s, "call_graph", {"symbol": "parse_dat"}),
            "bare": await call(s, "call_graph", {"symbol": "ready"}),
            "qualified": await call(s, "call_graph", {"symbol": "AdminConfig.ready"}),
            "empty": await call(s, "call_graph", {"symbol": " "}),
        }

    out = session_run(server_bin, sem_snap.dir, body)
    oracle = callers_by_ast(sem_tree, "parse_date")
    oracle_pairs = {(p, q) for p, qs in oracle.items() for q in qs}
    assert ("django/db/backends/sqlite3/operations.py", "DatabaseOperations.convert_datefield_value") in oracle_pairs
    err, sc = out["d1"]
    assert not err, sc
    (def_path, def_line, _), = rg(sem_tree, "-e", r"^def parse_date\(")
    assert [(r["path"], r["symbol"]) for r in sc["roots"]] == [(def_path, "parse_date")]
    assert sc["roots"][0]["line"] == def_line
    got = {(n["path"], n["symbol"]) for n in sc["nodes"]}
    assert got and got <= oracle_pairs, got - oracle_pairs
    assert ("django/db/backends/sqlite3/operations.py", "DatabaseOperations.convert_datefield_value") in got
    assert all(n["depth"] == 1 for n in sc["nodes"])
    calls = {(p, ln) for p, ln, t in rg(sem_tree, "-e", r"\bparse_date\(") if not t.lstrip().startswith("def ")}
    for e in sc["edges"]:
        assert (e["path"], e["line"]) in calls, e
        assert e["to"] == "parse_date" and e["resolved"]
    # Depth 2 keeps depth 1 and adds only deeper nodes.
    err, d2 = out["d2"]
    assert not err
    assert {(n["path"], n["symbol"]) for n in d2["nodes"] if n["depth"] == 1} == got
    # Callees of the sqlite converter include parse_date.
    err, ce = out["callees"]
    assert not err and any(e["to"] == "parse_date" for e in ce["edges"]), ce
    for name, code in (("deep", "INVALID_ARGUMENT"), ("dir", "INVALID_ARGUMENT"), ("unknown", "NOT_FOUND")):
        err, sc = out[name]
        assert err and sc["code"] == code, (name, sc)
    assert "parse_date" in out["unknown"][1]["hint"]
    assert "3" in out["deep"][1]["hint"]
    # A bare name roots at every method of that name; a qualified one at that
    # definition only (not SimpleAdminConfig.ready, defined beside it).
    err, bare = out["bare"]
    assert not err and len({r["path"] for r in bare["roots"]}) > 5, bare["roots"]
    assert "SimpleAdminConfig.ready" in {r["symbol"] for r in bare["roots"]}
    err, qual = out["qualified"]
    assert not err, qual
    assert [(r["path"], r["symbol"]) for r in qual["roots"]] == [("django/contrib/admin/apps.py", "AdminConfig.ready")]
    err, sc = out["empty"]
    assert err and sc["code"] == "INVALID_ARGUMENT", sc


def test_relevant_resource(server_bin, sem_snap):
    uri = "codeindex://relevant?path=django/utils/dateparse.py&query=parse+a+date"

    async def body(s):
        t = await s.list_resource_templates()
        r = await s.read_resource(uri)
        return t, r

    t, r = session_run(server_bin, sem_snap.dir, body)
    templates = {x.uri_template: x for x in t.resource_templates}
    assert "codeindex://relevant{?path,query}" in templates
    md = r.contents[0].text
    assert r.contents[0].mime_type == "text/markdown"
    assert "## Read next for `django/utils/dateparse.py`" in md
    assert "`tests/utils_tests/test_dateparse.py`" in md
    assert 'Most relevant to "parse a date"' in md
    # Query results exclude tests.
    query_part = md.split("Most relevant to", 1)[1]
    assert "tests/" not in query_part


# --------------------------------------------------------------------------
# Patterns and mentions


def test_patterns_find_the_app_configs(server_bin, sem_snap, sem_tree):
    rows = pattern_rows(sem_snap.dir)
    assert rows, "patterns.parquet is missing or empty"
    apps_re = re.compile(r"^django/contrib/[^/]+/apps\.py$")
    by_id: dict[int, list[dict]] = {}
    for r in rows:
        by_id.setdefault(r["pattern_id"], []).append(r)
    fam = [ms for ms in by_id.values() if len(ms) >= 5 and all(apps_re.match(m["path"]) for m in ms)]
    assert len(fam) == 1, [(ms[0]["name"], len(ms)) for ms in by_id.values()]
    members = fam[0]
    name = members[0]["name"]
    paths = {m["path"] for m in members}
    assert "apps.py" in name
    for m in members:
        assert m["name"] == name and m["member_count"] == len(members)
        assert m["member_similarity"] >= 0.8, m
        assert m["canonical_path"] in paths
        assert (m["text"] is not None) == (m["path"] == m["canonical_path"])
    canon = members[0]["canonical_path"]
    text = next(m["text"] for m in members if m["path"] == canon)
    assert all(p in text for p in paths), text
    assert next(m for m in members if m["path"] == canon)["member_similarity"] == 1.0
    # Every member declares an AppConfig subclass (rg).
    with_config = {p for p, _, _ in rg(sem_tree, "-e", r"^class \w+\((\w+\.)?AppConfig\)")}
    assert paths <= with_config
    member = sorted(paths - {canon})[0]
    outsider = "django/utils/text.py"

    async def body(s):
        return (await call(s, "search_code", {"query": "AppConfig", "mode": "keyword", "path": member}),
                await call(s, "search_code", {"query": "Truncator", "mode": "keyword", "path": outsider}),
                await call(s, "search_code", {"query": "how do app configs work", "limit": 10}),
                await call(s, "search_code", {"query": "how do app configs work", "limit": 10, "max_per_file": 2}))

    (e1, inside), (e2, outside), (e3, how), (e4, how2) = session_run(server_bin, sem_snap.dir, body)
    assert not (e1 or e2 or e3 or e4)
    assert inside["results"] and all(h["follows_pattern"] == name for h in inside["results"]), inside["results"]
    assert outside["results"] and all(h["follows_pattern"] is None for h in outside["results"])
    # A pattern question is answered by the pattern chunk (on the canonical file) ...
    for sc in (how, how2):
        assert sc["query_type"] == "pattern"
        first = sc["results"][0]
        assert first["kind"] == "pattern" and first["symbol"] == name and first["why"].startswith("pattern:"), first
        assert first["path"] == canon and first["follows_pattern"] == name
        assert first["snippet"].startswith(f"Pattern: {name}\nCanonical example: {canon}\n"), first["snippet"]
    # ... then, when a file may give two chunks, the canonical file's own code.
    second = how2["results"][1]
    assert second["path"] == canon and second["kind"] != "pattern" and second["why"].startswith("canonical example"), second


def test_readme_mentions_become_edges(sem_snap, sem_tree):
    edges = [r for r in sem_snap.read("edges").to_pylist() if r["kind"] == "mentions"]
    assert edges, "no mentions edges"
    assert all(r["src_path"] == "README.md" for r in edges)
    lines = README_MD.splitlines()
    got = {}
    for r in edges:
        assert f"`{r['dst_name']}`" in lines[r["line"] - 1], r
        assert r["resolved"] and (sem_tree / r["dst_path"]).exists(), r
        got[r["dst_name"]] = r["dst_path"]
    assert got == README_MENTIONS
    # Edges carry the section heading.
    heads = {r["dst_name"]: r["src_symbol"] for r in edges}
    assert heads["DjangoJSONEncoder"] == "Serialization"
    assert heads["parse_duration"] == "Dates"


# --------------------------------------------------------------------------
# CLI: suggest-context, upgrade-embeddings


def test_suggest_context_hook(indexer, sem_snap, sem_tree, tmp_path):
    target = sem_tree / "django/utils/dateparse.py"
    hook = {"session_id": "x", "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": str(target)}}
    for extra in ((), ("--hook-json",)):
        p = subprocess.run([str(indexer), "suggest-context", "--index", str(sem_snap.dir), *extra],
                           input=json.dumps(hook), capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert p.returncode == 0, p.stderr
        assert "## Read next for `django/utils/dateparse.py`" in p.stderr, p.stderr
        assert "tests/utils_tests/test_dateparse.py" in p.stderr
        if extra:
            out = json.loads(p.stdout)["hookSpecificOutput"]
            assert out["hookEventName"] == "PreToolUse" and "tests/utils_tests/test_dateparse.py" in out["additionalContext"]
        else:
            assert p.stdout == ""
    # Outside any repository: still exit 0, says nothing.
    stray = tmp_path / "stray.py"
    stray.write_text("x = 1\n")
    p = subprocess.run([str(indexer), "suggest-context", "--index", str(sem_snap.dir)],
                       input=json.dumps({"tool_name": "Read", "tool_input": {"file_path": str(stray)}}),
                       capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert p.returncode == 0 and "Read next" not in p.stderr


def test_upgrade_embeddings(indexer, tmp_path):
    tree = tmp_path / "tiny"
    write_tiny(tree)
    plain = build(indexer, tree, tmp_path / "plain", "--no-embeddings")
    m = chunk_count(plain)
    cache = tmp_path / "cache"
    out = tmp_path / "upgraded"
    p = subprocess.run([str(indexer), "upgrade-embeddings", str(plain.dir), "--model", "minilm", "--embedding-cache", str(cache), "--out", str(out)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert p.returncode == 0, p.stdout
    will = re.search(r"will embed (\d+) of (\d+) inputs \((\d+) chunks", p.stdout)
    done = re.search(r"snapshot (\w+) written to (\S+)", p.stdout)
    assert will and done, p.stdout
    assert will.start() < done.start(), "the announcement must come before the work"
    assert int(will.group(1)) == int(will.group(2)) >= int(will.group(3)) == m
    new = Path(done.group(2))
    new = new if new.is_absolute() else Path.cwd() / new
    assert new.parent == out / "tiny" and new.name == done.group(1)
    man = json.loads((new / "manifest.json").read_text())
    for f in plain.manifest["files"]:
        assert (new / f["name"]).read_bytes() == (plain.dir / f["name"]).read_bytes(), f["name"]
    listed = {f["name"]: f for f in man["files"]}
    assert set(listed) == {f["name"] for f in plain.manifest["files"]} | {"vectors.faiss"}
    assert listed["vectors.faiss"]["sha256"] == sha256_file(new / "vectors.faiss")
    e = man["embeddings"]
    _, _, ids, _ = read_faiss_flat(new / "vectors.faiss")
    assert e["model"] == MODEL_ID and e["dimension"] == 384 and e["count"] == len(ids) == int(will.group(2))
    assert list(dict.fromkeys(ids)) == plain.read("chunks", ["chunk_id"]).column("chunk_id").to_pylist()
    assert man["snapshot_id"] == done.group(1) != plain.id
    # The source snapshot is untouched, and everything is now cached.
    assert json.loads((plain.dir / "manifest.json").read_text()) == plain.manifest
    dry = run_cli(indexer, "upgrade-embeddings", plain.dir, "--model", "minilm", "--embedding-cache", cache, "--out", tmp_path / "dry", "--dry-run")
    assert re.search(rf"would embed 0 of {len(ids)} inputs \({m} chunks", dry.stdout), dry.stdout
    assert not (tmp_path / "dry").exists()


def test_upgrade_equals_a_build_with_embeddings(indexer, sem_snap, sem_plain, tmp_path):
    """Upgrading the --no-embeddings snapshot gives the snapshot a build with
    embeddings gives (same vectors, pattern chunks included, same id)."""
    out = tmp_path / "up"
    r = run_cli(indexer, "upgrade-embeddings", sem_plain.dir, "--model", "minilm", "--out", out, "--json")
    info = json.loads(r.stdout)
    new = Path(info["snapshot_dir"])
    new = new if new.is_absolute() else Path.cwd() / new
    man = json.loads((new / "manifest.json").read_text())
    assert man["embeddings"]["count"] == sem_snap.manifest["embeddings"]["count"], (
        "upgrade-embeddings embedded a different set of chunks than index (pattern chunks?)")
    _, _, ids_up, _ = read_faiss_flat(new / "vectors.faiss")
    _, _, ids_ix, _ = read_faiss_flat(sem_snap.dir / "vectors.faiss")
    assert ids_up == ids_ix
    assert (new / "vectors.faiss").read_bytes() == (sem_snap.dir / "vectors.faiss").read_bytes()
    assert info["snapshot_id"] == sem_snap.id


# --------------------------------------------------------------------------
# What a build embeds


def test_one_changed_file_reembeds_only_its_chunks(indexer, tmp_path):
    tree = tmp_path / "tiny"
    write_tiny(tree, "alpha")
    cache = tmp_path / "cache"
    b1 = build(indexer, tree, tmp_path / "o1", "--embedding-cache", cache)
    assert not pattern_rows(b1.dir), "the tiny tree must stay below pattern size"
    n1 = len(read_faiss_flat(b1.dir / "vectors.faiss")[2])  # vectors: chunks + definition windows
    assert n1 >= chunk_count(b1)
    assert b1.info["embeddings"]["embedded"] == n1 and b1.info["embeddings"]["from_cache"] == 0
    assert b1.info["embeddings"]["chunks"] == n1 == b1.manifest["embeddings"]["count"]

    write_tiny(tree, "beta")  # rewrites pipeline.py only; the other files keep their bytes
    b2 = build(indexer, tree, tmp_path / "o2", "--previous", b1.dir, "--embedding-cache", cache)
    assert b2.info["reused_files"] == 3
    assert chunk_count(b2, "pipeline.py") >= 3, "pipeline.py should be cut into several chunks"
    changed_ids = set(b2.read("chunks", ["chunk_id", "path"]).filter(
        pa.compute.equal(b2.read("chunks", ["chunk_id", "path"]).column("path"), "pipeline.py")).column("chunk_id").to_pylist())
    ids2_all = read_faiss_flat(b2.dir / "vectors.faiss")[2]
    changed = sum(1 for i in ids2_all if i in changed_ids)  # the edited file's vectors
    n2 = len(ids2_all)
    assert b2.info["embeddings"]["embedded"] == changed, b2.info["embeddings"]
    assert b2.info["embeddings"]["from_cache"] == n2 - changed

    # A fresh, empty cache: vectors of unchanged files come from the previous snapshot.
    b3 = build(indexer, tree, tmp_path / "o3", "--previous", b1.dir, "--embedding-cache", tmp_path / "fresh")
    assert b3.info["embeddings"]["embedded"] == changed, b3.info["embeddings"]
    assert b3.id == b2.id
    assert (b3.dir / "vectors.faiss").read_bytes() == (b2.dir / "vectors.faiss").read_bytes()

    # A full build of the edited tree agrees with the incremental one (same ids, same vectors).
    b4 = build(indexer, tree, tmp_path / "o4", "--embedding-cache", tmp_path / "fresh2")
    assert b4.info["embeddings"]["embedded"] == n2
    _, _, ids2, v2 = read_faiss_flat(b2.dir / "vectors.faiss")
    _, _, ids4, v4 = read_faiss_flat(b4.dir / "vectors.faiss")
    assert ids2 == ids4
    for a, b in zip(v2, v4):
        assert sum(x * y for x, y in zip(a, b)) > 0.9999


def test_vectors_are_reproducible(indexer, tmp_path):
    tree = tmp_path / "tiny"
    write_tiny(tree)
    a = build(indexer, tree, tmp_path / "a", "--embedding-cache", tmp_path / "ca")
    b = build(indexer, tree, tmp_path / "b", "--embedding-cache", tmp_path / "cb")
    n = len(read_faiss_flat(a.dir / "vectors.faiss")[2])
    assert a.info["embeddings"]["embedded"] == b.info["embeddings"]["embedded"] == n >= chunk_count(a)
    assert a.id == b.id
    assert (a.dir / "vectors.faiss").read_bytes() == (b.dir / "vectors.faiss").read_bytes()
    assert a.manifest == b.manifest


def test_weights_are_versioned_by_their_digest(indexer, server_bin, model_dir, tmp_path, monkeypatch):
    """A model id names a recipe; `embeddings.model_sha256` names the bytes
    that made the vectors. Other weights put in the default model's place
    (here the published MiniLM's int8 graph: a real, different model under
    the default's file name) take no vector cached under the pinned weights,
    and a server whose weights differ from a snapshot's says so
    (MODEL_MISMATCH, with the fix) and answers by keyword instead of comparing
    a query vector with vectors of another space."""
    code, general = model_dir / "model-code-int8.onnx", model_dir / "model-int8.onnx"
    if not (code.is_file() and general.is_file()):
        pytest.skip("needs both int8 models (scripts/setup.sh)")
    pinned = re.search(r'CODE_MODEL_SHA256="([0-9a-f]{64})"', (REPO_ROOT / "scripts/env.sh").read_text()).group(1)
    tree = tmp_path / "tiny"
    write_tiny(tree, "alpha")
    cache = tmp_path / "cache"
    b1 = build(indexer, tree, tmp_path / "o1", "--embedding-cache", cache)
    n = b1.manifest["embeddings"]["count"]
    assert b1.manifest["embeddings"]["model_sha256"] == sha256_file(code) == pinned

    other = tmp_path / "other-model"
    other.mkdir()
    for f in model_dir.iterdir():
        if f.is_file() and f.name != code.name:
            (other / f.name).symlink_to(f)
    (other / code.name).symlink_to(general)
    monkeypatch.setenv("CODE_INDEX_MODEL_DIR", str(other))
    b2 = build(indexer, tree, tmp_path / "o2", "--embedding-cache", cache)
    assert b2.manifest["embeddings"]["model"] == MODEL_ID, "same id: the file name says which recipe"
    assert b2.manifest["embeddings"]["model_sha256"] == sha256_file(general)
    assert b2.info["embeddings"]["from_cache"] == 0, "vectors of the pinned weights must not be reused"
    assert b2.info["embeddings"]["embedded"] == n
    assert b2.id != b1.id
    _, _, _, v1 = read_faiss_flat(b1.dir / "vectors.faiss")
    _, _, _, v2 = read_faiss_flat(b2.dir / "vectors.faiss")
    assert any(sum(x * y for x, y in zip(a, b)) < 0.99 for a, b in zip(v1, v2)), "other weights, other vectors"

    # The server under the other weights, on the pinned weights' snapshot.
    p = subprocess.run([str(server_bin), "search-code", "--index", str(b1.dir), "--mode", "semantic", "rectangle area"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["mode"] == "keyword" and out["semantic"] is False, out
    assert "MODEL_MISMATCH" in out["notice"] and "CODE_INDEX_MODEL_DIR" in out["notice"], out["notice"]
    assert out["results"], "it still answers, by keyword"
    # ... and on its own snapshot it runs semantic.
    own = json.loads(subprocess.run([str(server_bin), "search-code", "--index", str(b2.dir), "--mode", "semantic",
                                     "rectangle area"], capture_output=True, text=True, timeout=300).stdout)
    assert own["mode"] == "semantic" and "notice" not in own, own

    # Back on the pinned weights: everything comes from the cache, and the snapshot is b1's.
    monkeypatch.delenv("CODE_INDEX_MODEL_DIR")
    b3 = build(indexer, tree, tmp_path / "o3", "--embedding-cache", cache)
    assert b3.info["embeddings"]["from_cache"] == n and b3.info["embeddings"]["embedded"] == 0
    assert b3.id == b1.id
