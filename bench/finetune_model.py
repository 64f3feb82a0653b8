#!/usr/bin/env python3
"""Fine-tune all-MiniLM-L6-v2 on (docstring sentence, code) pairs from
repositories that no evaluation uses, CodeSearchNet-style: a code-tuned
MiniLM derived from the pinned model (results: bench/results/embed-models.md,
"A code-tuned MiniLM").

    V=~/.cache/code-index/pytools/train-venv   # numpy torch transformers safetensors tokenizers
    $V/bin/python bench/finetune_model.py prepare --work W    # stripped trees and queries
    python3 bench/finetune_model.py prepare-multi --work W    # Go, Java, C, C++, Rust, TS (code-indexer)
    $V/bin/python bench/finetune_model.py train --work W --out FT.safetensors
    # the int8 graph of the tuned weights, as setup.sh builds the default:
    python3 scripts/make_minilm_graph.py FT.safetensors OUT.onnx

Data (`prepare`). bench/data/finetune-repos.json pins each repository (none is
in semble's benchmark, Django, or the stdlib sets of eval_search.py). Its
non-test `.py` files (no test/tests/docs/examples directories, no test_*.py)
are copied with every function, method and class docstring removed
(eval_search.strip_python). A query is the first
sentence of a removed docstring of a public (no leading `_`), not nested
definition; it needs 4 words and must not start with "Deprecated"; a sentence
that several definitions share is dropped.

Other languages (`prepare-multi`): the repositories of finetune-repos.json
whose language is not Python (checkouts of pinned mirrors, or the Rust and
TypeScript corpora of ../shared/bench/corpora.sh without the crates semble's
benchmark holds) are indexed by code-indexer (`--no-embeddings`; found as eval_search.py
finds it: $CODE_INDEXER, else $CARGO_TARGET_DIR/release), and a query is the first sentence of a definition's doc
comment from its symbols table (Javadoc inline tags reduced to their text, a
Go doc's leading name dropped); the positive is the definition's own lines,
which start after that comment (other comments in it stay, as in real code).

The positive text (`train`) is what the builder embeds for a definition:
`file: <path>`, `in: <Class>` for a method, then the definition's lines from
the stripped file (decorators included), cut at 2,000 characters on a line
boundary; identifiers split into words as the builder splits them
(schemas/src/embed.rs `naturalize`, ported in bench/embed_models.py).

Training: MultipleNegativesRanking (InfoNCE over the batch, scale 20); a
batch holds the pairs of one repository, so its negatives are code of the
same project (`--group file`: whole files of it, so a definition's siblings
are its negatives; `--hard N`: each pair also brings one of the N definitions
of its repository that BM25 ranks highest for its query; both measured, not
kept: bench/results/embed-models.md). A twentieth of each repository's pairs is held out (in-batch
MRR@10 over the held-out pairs of a repository, before and after). AdamW
(weight decay 0.01), linear warm-up over a tenth of the steps then linear
decay, fp32 on the CPU, seeded. The output keeps the original file's tensor
names.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embed_models import BM25, bm25_tokens, naturalize  # noqa: E402  (schemas/src/embed.rs `naturalize`, ported)
from eval_search import binary, first_sentence, normalize, py_defs, strip_python  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REPOS = ROOT / "bench/data/finetune-repos.json"
MIRRORS = Path(os.environ.get("CODE_INDEX_MIRRORS", "/work/.mirror"))
MODEL_DIR = Path(os.environ.get("CODE_INDEX_MODEL_DIR", Path.home() / ".cache/code-index/models/all-minilm-l6-v2"))
SKIP_PARTS = {"test", "tests", "testing", "docs", "doc", "examples", "benchmarks", "benchmark"}


# ---------------------------------------------------------------- prepare

def python_targets_all(rel: str, old: ast.AST, new_src: bytes) -> list[dict]:
    new = ast.parse(new_src)
    out = []
    for (q, o, nested), (_, n, _) in zip(py_defs(old), py_defs(new)):
        if nested or o.name.startswith("_"):
            continue
        doc = ast.get_docstring(o, clean=True)
        if not doc or doc.lower().startswith("deprecated"):
            continue
        sent = first_sentence(doc.strip().split("\n\n")[0])
        if sum(any(c.isalpha() for c in w) for w in sent.split()) < 4:
            continue
        out.append({"path": rel, "name": q, "line": n.lineno, "end_line": n.end_lineno,
                    "kind": "class" if isinstance(o, ast.ClassDef) else "function", "query": sent})
    return out


def extract(mirror: Path, revision: str, dest: Path, check: bool = True) -> None:
    """`git archive <revision> | tar -x` into dest."""
    p1 = subprocess.Popen(["git", "-C", str(mirror), "archive", revision], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=p1.stdout, check=check)
    p1.wait()


def unique_queries(targets: list[dict]) -> list[dict]:
    """Drop the sentences several definitions share: they have no single answer."""
    seen: dict[str, int] = {}
    for t in targets:
        seen[normalize(t["query"])] = seen.get(normalize(t["query"]), 0) + 1
    return [t for t in targets if seen[normalize(t["query"])] == 1]


def prepare(a):
    work = Path(a.work)
    repos = json.loads(REPOS.read_text())
    for r in repos:
        if r["language"] != "python" or (a.only and r["name"] not in a.only.split(",")):
            continue
        tree = work / "trees" / r["name"]
        qfile = work / "queries" / f"{r['name']}.jsonl"
        if not qfile.exists():
            mirror = MIRRORS / r["mirror"] / "repo"
            raw = work / "raw" / r["name"]
            raw.mkdir(parents=True, exist_ok=True)
            extract(mirror, r["revision"], raw)
            targets, files, dropped = [], 0, 0
            for p in sorted(raw.rglob("*.py")):
                rel = p.relative_to(raw)
                parts = set(rel.parts[:-1])
                if parts & SKIP_PARTS or rel.name.startswith("test_") or rel.name == "conftest.py":
                    continue
                src = p.read_bytes()
                try:
                    old = ast.parse(src)
                    new_src = strip_python(src)
                    ast.parse(new_src)
                except (SyntaxError, ValueError, RecursionError):
                    dropped += 1
                    continue
                (tree / rel).parent.mkdir(parents=True, exist_ok=True)
                (tree / rel).write_bytes(new_src)
                files += 1
                targets += python_targets_all(rel.as_posix(), old, new_src)
            targets = unique_queries(targets)
            qfile.parent.mkdir(parents=True, exist_ok=True)
            qfile.write_text("".join(json.dumps(t) + "\n" for t in targets))
            subprocess.run(["rm", "-rf", str(raw)], check=True)
            print(f"{r['name']}: {files} files ({dropped} unparsable), {len(targets)} queries", flush=True)


MULTI_KINDS = {"function", "method", "class", "struct", "interface", "trait", "enum", "type", "constructor",
               "macro", "impl", "module", "namespace"}


def prepare_multi(a):
    """Pairs in the languages other than Python, from the builder's own
    symbols: code-indexer indexes the tree (no vectors), and a query is the
    first sentence of a documented definition's doc comment (4 words or more,
    not "Deprecated"; a Go doc's leading name dropped). The positive is the
    definition's own lines, which start after its doc comment; a sentence
    several definitions share is dropped, as in `prepare`."""
    import duckdb

    work = Path(a.work)
    indexer = binary("code-indexer", "CODE_INDEXER")
    for r in json.loads(REPOS.read_text()):
        if r["language"] == "python" or (a.only and r["name"] not in a.only.split(",")):
            continue
        tree = work / "trees" / r["name"]
        qfile = work / "queries" / f"{r['name']}.jsonl"
        if qfile.exists():
            continue
        if not tree.exists():
            tree.mkdir(parents=True)
            if "corpus" in r:
                src = Path(os.path.expanduser(r["corpus"]))
                subprocess.run(["cp", "-a", f"{src}/.", str(tree)], check=True)
                for x in r.get("exclude", []):
                    subprocess.run(["rm", "-rf", str(tree / x)], check=True)
            else:
                mirror = MIRRORS / r["mirror"] / "repo"
                # a mirror may lack its largest blobs (test data): tar stops
                # there, the source files come before them or not at all
                extract(mirror, r["revision"], tree, check=False)
        out = work / "snapshots"
        subprocess.run([str(indexer), "index", str(tree), "--out", str(out), "--name", r["name"],
                       "--no-embeddings", "--json"], stdout=subprocess.PIPE, text=True, check=True)
        snap = out / r["name"] / (out / r["name"] / "latest").read_text().strip()
        rows = duckdb.sql(f"""select path, name, container, kind, doc, start_line, end_line, is_test
                              from '{snap}/symbols.parquet' where doc is not null""").fetchall()
        targets = []
        for path, name, container, kind, doc, start, end, is_test in rows:
            parts = set(Path(path).parts[:-1])
            if is_test or parts & SKIP_PARTS or kind not in MULTI_KINDS or name.startswith("_"):
                continue
            # Javadoc/TSDoc inline tags keep their text: {@link Foo#bar} -> Foo#bar
            sent = re.sub(r"\{@\w+\s+([^}]*)\}", r"\1", first_sentence(doc.strip().split("\n\n")[0]))
            words = sent.split()
            if words and words[0].strip("`*'\"") == name:
                words = words[1:]
                if words and words[0] in ("is", "are"):
                    words = words[1:]
                sent = " ".join(words)
                sent = sent[:1].upper() + sent[1:]
            if sum(any(c.isalpha() for c in w) for w in sent.split()) < 4 or sent.lower().startswith("deprecated"):
                continue
            if sent.startswith(("@", "{@", "Copyright", "SPDX")):
                continue
            q = f"{container}.{name}" if container else name
            targets.append({"path": path, "name": q, "line": start, "end_line": end, "kind": kind, "query": sent})
        targets = unique_queries(targets)
        targets.sort(key=lambda t: (t["path"], t["line"]))
        qfile.parent.mkdir(parents=True, exist_ok=True)
        qfile.write_text("".join(json.dumps(t) + "\n" for t in targets))
        print(f"{r['name']} ({r['language']}): {len(rows)} documented symbols, {len(targets)} queries", flush=True)


def positive_text(tree: Path, t: dict) -> str:
    lines = (tree / t["path"]).read_text(errors="replace").splitlines()
    start = t["line"] - 1
    while start > 0 and lines[start - 1].lstrip().startswith("@"):
        start -= 1
    head = [f"file: {t['path']}"]
    if "." in t["name"]:
        head.append(f"in: {t['name'].rsplit('.', 1)[0]}")
    body, size = [], 0
    for ln in lines[start:t["end_line"]]:
        if size + len(ln) + 1 > 2000:
            break
        body.append(ln)
        size += len(ln) + 1
    return naturalize("\n".join(head + body))


def signature_form(tree: Path, t: dict) -> str | None:
    """What the builder embeds for a function without a doc: `Container: `
    then its declaration on one line, cut at 200 bytes (builder/src/embeddings/input.rs)."""
    if t.get("kind") != "function":
        return None
    lines = (tree / t["path"]).read_text(errors="replace").splitlines()
    head = []
    for ln in lines[t["line"] - 1:t["end_line"]]:
        head.append(ln.strip())
        if ln.rstrip().endswith(":"):
            break
    sig = " ".join(head).rstrip(":").strip()
    if "." in t["name"]:
        sig = f"{t['name'].rsplit('.', 1)[0]}: {sig}"
    out = naturalize(sig)
    if len(out) > 200:
        cut = out.rfind(" ", 0, 200)
        out = out[:cut if cut > 100 else 200]
    return out


def load_pairs(work: Path, per_repo: int, seed: int, extra: list[str] = (), per_repo_other: int = 0,
               sig_share: float = 0.0):
    rng = random.Random(seed)
    train, held = [], []
    for r in json.loads(REPOS.read_text()):
        cap = per_repo_other if per_repo_other and r["language"] != "python" else per_repo
        qf = work / "queries" / f"{r['name']}.jsonl"
        if not qf.exists():
            continue
        qs = [json.loads(x) for x in qf.read_text().splitlines()]
        rng.shuffle(qs)
        srng = random.Random(seed + 7)
        pairs = []
        for t in qs:
            pos = positive_text(work / "trees" / r["name"], t)
            if sig_share and srng.random() < sig_share:
                pos = signature_form(work / "trees" / r["name"], t) or pos
            pairs.append((r["name"], naturalize(t["query"]), pos, t["path"]))
        cut = max(1, len(pairs) // 20)
        held += pairs[:cut]
        train += pairs[cut:cut + cap]
    # Extra pairs (after the repositories, whose split stays as it was), given whole (`--pairs`): one JSON object per line with
    # `group`, `query`, `positive` (the model's input as the builder makes
    # it) and `path`; a group is a repository for batching and holding out.
    for f in extra:
        groups: dict[str, list] = {}
        for x in Path(f).read_text().splitlines():
            t = json.loads(x)
            groups.setdefault(t["group"], []).append((t["group"], naturalize(t["query"]), t["positive"], t["path"]))
        for pairs in groups.values():
            rng.shuffle(pairs)
            cut = max(1, len(pairs) // 20)
            held += pairs[:cut]
            train += pairs[cut:cut + per_repo]
    return train, held


def bm25_negatives(pairs, top: int, seed: int) -> list[str]:
    """For each (repo, query, positive, path) pair, a hard negative: one of
    the `top` definitions of the same repository that BM25 (bench/embed_models.py's)
    ranks highest for the query, other than the positive (and than any
    definition whose text equals it). The vectors are fused with BM25 in
    hybrid mode, so these are the lexical confusers they must outrank."""
    rng = random.Random(seed)
    neg = [""] * len(pairs)
    by_repo: dict[str, list[int]] = {}
    for i, x in enumerate(pairs):
        by_repo.setdefault(x[0], []).append(i)
    for idx in by_repo.values():
        bm = BM25([bm25_tokens(pairs[i][2]) for i in idx])
        k = min(len(idx) - 1, top + 8)
        for i in idx:
            best = [d for d in bm.top(pairs[i][1], k) if pairs[idx[d]][2] != pairs[i][2]][:top]
            neg[i] = pairs[idx[rng.choice(best)] if best else rng.choice(idx)][2]
    return neg


def train(a):
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel
    from safetensors.torch import save_file

    torch.manual_seed(a.seed)
    torch.set_num_threads(2)
    tok = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    tok.enable_truncation(a.max_len)
    tok.enable_padding()
    model = AutoModel.from_pretrained(str(MODEL_DIR))
    original = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if a.lora:
        params = add_lora(model, a.lora)
    else:
        params = [{"params": list(model.parameters()), "lr": a.lr, "weight_decay": 0.01}]
    pairs, held = load_pairs(Path(a.work), a.per_repo, a.seed, a.pairs, a.per_repo_other, a.sig_share)
    print(f"{len(pairs)} training pairs, {len(held)} held out", flush=True)
    negs = bm25_negatives(pairs, a.hard, a.seed) if a.hard else [None] * len(pairs)

    def encode(texts):
        enc = tok.encode_batch(texts)
        ids = torch.tensor([e.ids for e in enc])
        mask = torch.tensor([e.attention_mask for e in enc])
        h = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
        m = mask.unsqueeze(-1).float()
        v = (h * m).sum(1) / m.sum(1)
        return torch.nn.functional.normalize(v, dim=-1)

    def held_mrr():
        model.eval()
        with torch.no_grad():
            by = {}
            for n, q, p, _ in held:
                by.setdefault(n, []).append((q, p))
            tot, cnt = 0.0, 0
            for n, ps in by.items():
                Q = torch.cat([encode([q for q, _ in ps[i:i + 64]]) for i in range(0, len(ps), 64)])
                P = torch.cat([encode([p for _, p in ps[i:i + 64]]) for i in range(0, len(ps), 64)])
                S = Q @ P.T
                ranks = (S > S.diag().unsqueeze(1)).sum(1)
                tot += float(torch.where(ranks < 10, 1.0 / (ranks + 1), torch.zeros_like(ranks, dtype=torch.float)).sum())
                cnt += len(ps)
        model.train()
        return tot / cnt

    rng = random.Random(a.seed)
    by_repo = {}
    for (n, q, p, f), neg in zip(pairs, negs):
        by_repo.setdefault(n, []).append((q, p, f, neg))
    batches = []
    for _ in range(a.epochs):
        for n, ps in by_repo.items():
            ps = ps[:]
            rng.shuffle(ps)
            if a.group == "file":
                # A file's definitions side by side: its siblings are the
                # negatives (files in random order, and within a file too).
                files: dict[str, list] = {}
                for x in ps:
                    files.setdefault(x[2], []).append(x)
                order = list(files)
                rng.shuffle(order)
                ps = [x for f in order for x in files[f]]
            ps = [(q, p, neg) for q, p, _, neg in ps]
            batches += [ps[i:i + a.batch] for i in range(0, len(ps) - a.batch + 1, a.batch)]
    rng.shuffle(batches)
    if a.limit_steps:
        batches = batches[:a.limit_steps]
    opt = torch.optim.AdamW(params)
    warm = max(1, len(batches) // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (len(batches) - s) / max(1, len(batches) - warm))))
    print(f"held-out in-batch MRR@10 before: {held_mrr():.4f}; {len(batches)} steps", flush=True)
    model.train()
    t0 = time.time()
    for step, b in enumerate(batches, 1):
        qv = encode([q for q, _, _ in b])
        pv = encode([p for _, p, _ in b])
        if a.hard:
            # Each query's hard negative joins the batch's other positives.
            pv = torch.cat([pv, encode([n for _, _, n in b])])
        loss = torch.nn.functional.cross_entropy(20.0 * qv @ pv.T, torch.arange(len(b)))
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for g in params for p in g["params"]], 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        if step % 20 == 0 or step == len(batches):
            print(f"step {step}/{len(batches)} loss {loss.item():.4f} ({time.time() - t0:.0f}s)", flush=True)
    print(f"held-out in-batch MRR@10 after: {held_mrr():.4f}", flush=True)
    if a.lora:
        from safetensors.numpy import save_file as save_np
        delta = lora_delta(model, original)
        save_np(delta, a.out)
        print(f"wrote {a.out}: {len(delta)} tensors, {sum(v.nbytes for v in delta.values()) / 1e6:.2f} MB")
        return
    sd = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(sd, a.out)
    print(f"wrote {a.out}")


LORA_TARGETS = ("attention.self.query", "attention.self.key", "attention.self.value",
                "attention.output.dense", "intermediate.dense", "output.dense")


def add_lora(model, r: int, alpha: float = 32.0):
    """Low-rank adapters (A: r x in, B: out x r, B starting at zero) on every
    linear layer of the encoder; those and every bias and LayerNorm tensor
    train, the rest stays frozen. Returns the optimizer's parameter groups."""
    import torch

    class LoRALinear(torch.nn.Module):
        def __init__(self, base):
            super().__init__()
            self.base = base
            self.lora_a = torch.nn.Parameter(torch.randn(r, base.in_features) / base.in_features ** 0.5)
            self.lora_b = torch.nn.Parameter(torch.zeros(base.out_features, r))
            self.scale = alpha / r

        def forward(self, x):
            return self.base(x) + (x @ self.lora_a.T @ self.lora_b.T) * self.scale

    for p in model.parameters():
        p.requires_grad = False
    lora = []
    for name, mod in list(model.named_modules()):
        for t in LORA_TARGETS:
            if name.startswith("encoder.layer.") and name.endswith(t) and isinstance(mod, torch.nn.Linear):
                if t == "output.dense" and name.endswith("attention.output.dense"):
                    continue
                parent = model.get_submodule(name.rsplit(".", 1)[0])
                wrapped = LoRALinear(mod)
                setattr(parent, name.rsplit(".", 1)[1], wrapped)
                lora += [wrapped.lora_a, wrapped.lora_b]
    small = []
    for name, p in model.named_parameters():
        if (name.endswith(".bias") or "LayerNorm" in name) and "lora_" not in name:
            p.requires_grad = True
            small.append(p)
    print(f"LoRA r={r}: {len(lora) // 2} matrices, {sum(p.numel() for p in lora)} + {sum(p.numel() for p in small)} "
          "trainable parameters", flush=True)
    return [{"params": lora, "lr": 2e-4, "weight_decay": 0.0}, {"params": small, "lr": 1e-4, "weight_decay": 0.0}]


def lora_delta(model, original) -> dict:
    """The shipped form of a LoRA fine-tune (read by scripts/make_minilm_code.py):
    per adapted matrix W (key k), k.lora_a int16 (r x in, one scale k.lora_a_scale),
    k.lora_b int16 (out x r, the LoRA scale folded in, one scale per row in
    k.lora_b_scale, f64); per bias or LayerNorm tensor, k.delta (f32) to add.
    Integers, so that applying it is exact arithmetic on every machine."""
    import numpy as np
    out = {}
    for name, mod in model.named_modules():
        if hasattr(mod, "lora_a"):
            k = name + ".weight"
            A = mod.lora_a.detach().double().numpy()
            B = (mod.lora_b.detach().double() * mod.scale).numpy()
            sa = max(np.abs(A).max() / 32767.0, 1e-30)
            sb = np.maximum(np.abs(B).max(axis=1) / 32767.0, 1e-30)
            out[k + ".lora_a"] = np.round(A / sa).astype(np.int16)
            out[k + ".lora_a_scale"] = np.array([sa], dtype=np.float64)
            out[k + ".lora_b"] = np.round(B / sb[:, None]).astype(np.int16)
            out[k + ".lora_b_scale"] = sb.astype(np.float64)
    for k, v in model.state_dict().items():
        k0 = k.replace(".base.", ".")
        if "lora_" in k or not (k0.endswith(".bias") or "LayerNorm" in k0):
            continue
        d = (v.detach() - original[k0]).numpy().astype(np.float32)
        if np.any(d != 0):
            out[k0 + ".delta"] = d
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--work", default=str(Path.home() / ".cache/code-index/finetune"))
    p.add_argument("--only", help="comma-separated repository names")
    p = sub.add_parser("train")
    p.add_argument("--work", default=str(Path.home() / ".cache/code-index/finetune"))
    p.add_argument("--out", required=True)
    p.add_argument("--per-repo", type=int, default=2500, help="training pairs per repository at most")
    p.add_argument("--per-repo-other", type=int, default=0,
                   help="the same for the repositories not in Python (0: --per-repo)")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--max-len", type=int, default=160, help="tokens per text in training")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit-steps", type=int, default=0)
    p.add_argument("--pairs", action="append", default=[],
                   help="extra pairs, JSONL of {group, query, positive, path} (repeatable)")
    p.add_argument("--lora", type=int, default=0, help="rank of low-rank adapters (0: full fine-tune)")
    p.add_argument("--sig-share", type=float, default=0.0,
                   help="share of function pairs whose positive is the builder's input for a function "
                        "without a doc (`Container: signature`) instead of its code (measured, not kept)")
    p.add_argument("--hard", type=int, default=0,
                   help="add a hard negative per pair: one of the N definitions BM25 ranks highest (0: none)")
    p.add_argument("--group", choices=["repo", "file"], default="repo",
                   help="a batch: random pairs of one repository, or whole files of one (siblings as negatives)")
    p = sub.add_parser("prepare-multi")
    p.add_argument("--work", default=str(Path.home() / ".cache/code-index/finetune"))
    p.add_argument("--only", help="comma-separated repository names")
    a = ap.parse_args()
    {"prepare": prepare, "prepare-multi": prepare_multi, "train": train}[a.cmd](a)


if __name__ == "__main__":
    main()
