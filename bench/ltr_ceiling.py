#!/usr/bin/env python3
"""How far a learned combination of the ranking stage's outputs could lift
the Django reference-doc set (bench/results/ranking.md, "A learned
re-ranker over the served lists").

    python3 bench/within_file.py --index W/snapshots/django --dump L.json   # the lists, 50 chunks per file
    V/bin/python bench/ltr_ceiling.py --lists L.json                         # V: a venv with numpy and torch

Each query's candidates are the union of the keyword, semantic and hybrid
lists that `within_file.py --dump` stored (`search_code`, limit 50,
max_per_file 50). A candidate's features: per list, its score over the
list's best, 1 / its rank, 1 / its file's rank (0 when absent); the share
of its definition's name words (and of its container's) that the query
holds; whether it has a symbol, a container; log of its line count. A
linear model or a 16-unit MLP is trained listwise (softmax over a query's
candidates, the chunks that overlap the definition as positives) on half
of the queries and scored on the other half, split by reference-doc file
(2 folds, seeded), so a model never sees the page its test sentences come
from. Scoring is eval_docs.py's: MRR@10 over each file's first chunk.

In-domain cross-validation is the optimistic case: a re-ranker shipped
would have to learn from another project. If it cannot beat the served
order here, the features the stage already has are spent.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import re
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
MODES = ("keyword", "semantic", "hybrid")
STOP = set("a an the of to for in on by with is are be this that it its and or as from at if given returns return".split())


def words(s: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", s).lower())


def stem(w: str) -> str:
    for suf in ("ing", "es", "s", "ed"):
        if w.endswith(suf) and len(w) > len(suf) + 2:
            return w[: -len(suf)]
    return w


def candidates(q: dict, lists: dict, qi: int) -> list[tuple[str, np.ndarray, float]]:
    qw = {stem(w) for w in words(q["query"]) if w not in STOP}
    cands: dict = {}
    for mi, mode in enumerate(MODES):
        L = lists[mode][qi]
        best = max([x[4] for x in L] or [1.0]) or 1.0
        file_rank: dict = {}
        for r, (p, l, e, s, sc) in enumerate(L):
            fr = file_rank.setdefault(p, len(file_rank))
            c = cands.setdefault((p, l, e), {"s": s, "f": np.zeros(9, dtype=np.float32)})
            c["f"][mi * 3:mi * 3 + 3] = (sc / best, 1 / (r + 1), 1 / (fr + 1))
    out = []
    for (p, l, e), c in cands.items():
        s = c["s"] or ""
        name = {stem(w) for w in words(s.split(".")[-1])}
        cont = {stem(w) for w in words(s.rsplit(".", 1)[0])} if "." in s else set()
        extra = np.array([len(name & qw) / max(1, len(name)), len(cont & qw) / max(1, len(cont)) if cont else 0.0,
                          float(bool(s)), math.log(1 + e - l), float("." in s)], dtype=np.float32)
        y = float(p == q["path"] and l <= q["end_line"] and e >= q["start_line"])
        out.append((p, np.concatenate([c["f"], extra]), y))
    return out


def mrr(data, scores, idx) -> float:
    tot = 0.0
    for i in idx:
        files: list[str] = []
        for j in np.argsort(-scores[i], kind="stable"):
            p, _, y = data[i][j]
            if p in files:
                continue
            files.append(p)
            if y > 0:
                tot += 1 / len(files)
                break
            if len(files) >= 10:
                break
    return tot / len(idx)


def fit(data, idx, cols, hidden: int, epochs: int, seed: int):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    n = len(cols)
    m = torch.nn.Linear(n, 1) if not hidden else torch.nn.Sequential(
        torch.nn.Linear(n, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))
    opt = torch.optim.Adam(m.parameters(), lr=0.01, weight_decay=1e-4)
    X = [torch.tensor(np.stack([x[1][cols] for x in data[i]])) for i in idx if any(x[2] for x in data[i])]
    Y = [torch.tensor([x[2] for x in data[i]]) for i in idx if any(x[2] for x in data[i])]
    for _ in range(epochs):
        order = list(range(len(X)))
        rng.shuffle(order)
        for b in range(0, len(order), 32):
            loss = sum(-(torch.log_softmax(m(X[j]).squeeze(-1), 0) * Y[j]).sum() / Y[j].sum() for j in order[b:b + 32])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lists", type=Path, required=True, help="within_file.py --dump output")
    ap.add_argument("--set", type=Path, default=ROOT / "bench/data/django-docs-queries.jsonl")
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    lists = json.loads(a.lists.read_text())
    qs = [json.loads(x) for x in a.set.read_text().splitlines()]
    data = [candidates(q, lists, i) for i, q in enumerate(qs)]
    every = range(len(qs))
    served = {m: [np.array([x[1][k * 3] for x in d]) for d in data] for k, m in enumerate(MODES)}
    docs = sorted({q["doc"].split(":")[0] for q in qs})
    random.Random(a.seed).shuffle(docs)
    fold = {d: i % 2 for i, d in enumerate(docs)}
    nf = len(data[0][0][1])
    print("| features | model | fold 0 (served) | fold 1 (served) | cross-validated | served |")
    print("|---|---|---:|---:|---:|---:|")
    for name, cols, base in (("hybrid list + names", list(range(6, 9)) + list(range(9, nf)), "hybrid"),
                             ("all three lists + names", list(range(nf)), "hybrid"),
                             ("keyword list + names", [0, 1, 2] + list(range(9, nf)), "keyword")):
        for hidden in (0, 16):
            cells, tot = [], 0.0
            for f in (0, 1):
                tr = [i for i, q in enumerate(qs) if fold[q["doc"].split(":")[0]] != f]
                te = [i for i, q in enumerate(qs) if fold[q["doc"].split(":")[0]] == f]
                m = fit(data, tr, cols, hidden, a.epochs, a.seed)
                with torch.no_grad():
                    sc = [m(torch.tensor(np.stack([x[1][cols] for x in d]))).squeeze(-1).numpy() for d in data]
                r = mrr(data, sc, te)
                tot += r * len(te)
                cells.append(f"{r:.3f} ({mrr(data, served[base], te):.3f})")
            print(f"| {name} | {'linear' if not hidden else 'MLP 16'} | {cells[0]} | {cells[1]} | "
                  f"**{tot / len(qs):.3f}** | {base} {mrr(data, served[base], every):.3f} |", flush=True)


if __name__ == "__main__":
    main()
