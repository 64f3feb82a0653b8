#!/usr/bin/env python3
"""Where the Django reference-doc set loses: the file, or the chunk a file
answers with (bench/results/ranking.md, "the chunk a file answers with").

    python3 bench/within_file.py --index W/snapshots/django     # W: an eval_docs.py --embeddings work dir

Per query of bench/data/django-docs-queries.jsonl (written by eval_docs.py)
and mode (keyword, semantic, hybrid), `search_code` is asked through the
official MCP Python client with `limit` 50 and `max_per_file` 50, so that a
file's other chunks follow in score order. From those lists:

- MRR@10 as eval_docs.py counts it (one chunk per file: each file's first);
- file-level MRR@10 (a hit: the definition's file among the first ten files);
- the oracle: each of the first ten files answers with its chunk that holds
  the definition, when one of its listed chunks does;
- given the file (the definition's file is listed and one of its chunks in
  any mode's list holds the definition), the share of queries whose file's
  best chunk holds it: by each mode's order, by a max-scaled blend of the
  keyword and vector scores within the file, by reciprocal rank within it;
- switching from a file's first chunk to its second under simple rules, the
  file order kept (hybrid and keyword MRR@10; queries up and down).

Scores are the ones search_code returns (after the ranking stage), so the
blends are approximations of what the server could compute.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_docs import Query, accepted, hit_overlap, snapshot_dir  # noqa: E402
from eval_search import ROOT, binary  # noqa: E402

MODES = ("keyword", "semantic", "hybrid")


async def dump(server: Path, snap: Path, queries: list[Query]) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=str(server), args=["serve", "--index", str(snap)], env=dict(os.environ))
    out: dict = {}
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            for mode in MODES:
                lists = []
                for q in queries:
                    res = await s.call_tool("search_code", {"query": q.query, "mode": mode, "limit": 50,
                                                            "max_per_file": 50, "repo": "django"})
                    if res.is_error:
                        raise SystemExit(f"search_code failed ({mode}, {q.query!r}): {res.content[0].text[:300]}")
                    lists.append([(x["path"], x["line"], x["end_line"], x.get("symbol"), x.get("score") or 0.0)
                                  for x in (res.structured_content or {}).get("results", [])])
                out[mode] = lists
    return out


def holds(c, q: Query) -> bool:
    """Whether the listed chunk c (path, line, end_line, ...) holds q's definition (eval_docs.py's rule)."""
    return hit_overlap({"path": c[0], "line": c[1], "end_line": c[2]}, q)


def by_file(lst):
    order, chunks = [], {}
    for c in lst:
        if c[0] not in chunks:
            chunks[c[0]] = []
            order.append(c[0])
        chunks[c[0]].append(c)
    return order, chunks


def mrr(ranks: list[int]) -> float:
    return sum(1 / r for r in ranks if r) / len(ranks)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True, help="snapshot (or <out>/<repo> with `latest`) of eval_docs.py --embeddings")
    ap.add_argument("--set", type=Path, default=ROOT / "bench/data/django-docs-queries.jsonl")
    ap.add_argument("--server", type=Path, default=None, help="default: as eval_docs.py finds code-index-mcp")
    ap.add_argument("--dump", type=Path, default=None, help="write (or, with --reuse, read) the lists here")
    ap.add_argument("--reuse", action="store_true")
    a = ap.parse_args()
    qs = [Query(**json.loads(line)) for line in a.set.read_text().splitlines() if line.strip()]
    a.server = a.server or binary("code-index-mcp", "CODE_INDEX_MCP")
    if a.reuse and a.dump and a.dump.exists():
        R = json.loads(a.dump.read_text())
    else:
        R = asyncio.run(dump(a.server, snapshot_dir(a.index.resolve()), qs))
        if a.dump:
            a.dump.write_text(json.dumps(R))

    print(f"{len(qs)} queries, {a.index}\n")
    print("| measure | " + " | ".join(MODES) + " |\n|---|" + "---:|" * len(MODES))
    rows = {"MRR@10 (each file's first chunk)": [], "file-level MRR@10": [], "oracle: each file's chunk holding the definition": []}
    for m in MODES:
        first, files, oracle = [], [], []
        for i, q in enumerate(qs):
            order, chunks = by_file(R[m][i])
            paths = {d["path"] for d in accepted(q)}
            first.append(next((k + 1 for k, f in enumerate(order[:10]) if holds(chunks[f][0], q)), 0))
            files.append(next((k + 1 for k, f in enumerate(order[:10]) if f in paths), 0))
            oracle.append(next((k + 1 for k, f in enumerate(order[:10]) if any(holds(c, q) for c in chunks[f])), 0))
        for name, v in zip(rows, (first, files, oracle)):
            rows[name].append(mrr(v))
    for name, v in rows.items():
        print(f"| {name} | " + " | ".join(f"{x:.3f}" for x in v) + " |")

    # Given the file: which rule picks its chunk that holds the definition.
    n, hit = 0, {}
    for i, q in enumerate(qs):
        f = q.path
        per = {m: {(c[1], c[2]): c for c in R[m][i] if c[0] == f} for m in MODES}
        spans = set().union(*per.values())
        if not per["hybrid"] or not any(holds((f, s, e), q) for s, e in spans):
            continue
        n += 1
        for m in MODES:
            best = max(per[m].values(), key=lambda c: c[4], default=None)
            hit[m] = hit.get(m, 0) + bool(best and holds(best, q))
        K, S = per["keyword"], per["semantic"]
        km = max((c[4] for c in K.values()), default=1.0) or 1.0
        sm = max((c[4] for c in S.values()), default=1.0) or 1.0
        for w in (0.5, 1, 2, 4):
            s = max(spans, key=lambda k: (K[k][4] / km if k in K else 0) + w * (S[k][4] / sm if k in S else 0))
            hit[f"blend A={w}"] = hit.get(f"blend A={w}", 0) + holds((f,) + s, q)
        kr = {k: r for r, k in enumerate(sorted(K, key=lambda k: -K[k][4]))}
        sr = {k: r for r, k in enumerate(sorted(S, key=lambda k: -S[k][4]))}
        for k0 in (1, 3):
            s = max(spans, key=lambda k: (1 / (k0 + kr[k]) if k in kr else 0) + 1.5 * (1 / (k0 + sr[k]) if k in sr else 0))
            hit[f"reciprocal rank k={k0}"] = hit.get(f"reciprocal rank k={k0}", 0) + holds((f,) + s, q)
    print(f"\nGiven the file ({n} queries): share whose chosen chunk holds the definition\n")
    print("| rule | share |\n|---|---:|")
    for k, v in hit.items():
        print(f"| {k} | {v / n:.3f} |")

    def within(mode: str, i: int, f: str) -> dict:
        return {(c[1], c[2]): r for r, c in enumerate(c for c in R[mode][i] if c[0] == f)}

    def switched(rule, mode: str):
        ranks, up, down = [], 0, 0
        for i, q in enumerate(qs):
            order, chunks = by_file(R[mode][i])
            r = r0 = 0
            for k, f in enumerate(order[:10]):
                cs = chunks[f]
                c = cs[1] if len(cs) > 1 and rule(i, f, cs[0], cs[1]) else cs[0]
                r = r or (k + 1 if holds(c, q) else 0)
                r0 = r0 or (k + 1 if holds(cs[0], q) else 0)
            ranks.append(r)
            a_, b_ = (1 / r if r else 0), (1 / r0 if r0 else 0)
            up += a_ > b_
            down += a_ < b_
        return mrr(ranks), up, down

    rules = {"never": lambda i, f, a, b: False}
    for t in (0.9, 0.8, 0.5):
        rules[f"the first has no symbol, the second has (>= {t})"] = lambda i, f, a, b, t=t: a[3] is None and b[3] is not None and b[4] >= t * a[4]
        for m in ("semantic", "keyword"):
            rules[f"the {m} list ranks it above the first (>= {t})"] = (
                lambda i, f, a, b, t=t, m=m: (lambda w: w.get((b[1], b[2]), 999) < w.get((a[1], a[2]), 999))(within(m, i, f)) and b[4] >= t * a[4])
        rules[f"it is smaller (>= {t})"] = lambda i, f, a, b, t=t: (b[2] - b[1]) < (a[2] - a[1]) and b[4] >= t * a[4]
    print("\nSwitching to a file's second chunk (file order kept)\n")
    print("| rule | hybrid MRR@10 (up / down) | keyword MRR@10 |\n|---|---:|---:|")
    for name, fn in rules.items():
        h, u, d = switched(fn, "hybrid")
        k, _, _ = switched(fn, "keyword")
        print(f"| {name} | {h:.3f} ({u} / {d}) | {k:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
