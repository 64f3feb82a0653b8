#!/usr/bin/env python3
"""Recall@10 of the approximate (IVF) vector index against the exact (Flat)
one, on real embeddings.

    python3 bench/ivf_recall.py [--tree /tmp/eval/go/src] [--queries /tmp/eval/go/queries.jsonl]

Builds the same tree twice with the same embedding cache (so no chunk is
embedded twice): once with the default layout (Flat below 200,000 vectors)
and once with `--flat-max 1`, which forces `IVF<4*sqrt(n)>,Flat` with the
stored nprobe. Then runs every query through `search_code` in semantic mode
(limit 10, one chunk per file) on both snapshots via the MCP client and
reports mean |top10(IVF) ∩ top10(Flat)| / |top10(Flat)|.
Defaults use the eval tree of bench/eval_search.py (run that first).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/code-index/target"))
INDEXER = TARGET / "release/code-indexer"
SERVER = TARGET / "release/code-index-mcp"


def build(tree: Path, out: Path, *extra: str) -> dict:
    p = subprocess.run([str(INDEXER), "index", str(tree), "--out", str(out), "--name", "ivf-recall", "--json", *extra],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(p.stderr)
    return json.loads(p.stdout)


async def top10(snap: str, queries: list[str]) -> list[list[tuple[str, int]]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    out = []
    params = StdioServerParameters(command=str(SERVER), args=["serve", "--index", snap])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            for q in queries:
                res = await s.call_tool("search_code", {"query": q, "mode": "semantic", "limit": 10, "repo": "ivf-recall"})
                assert not res.is_error, res.content[0].text
                out.append([(h["path"], h["line"]) for h in res.structured_content["results"]])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", type=Path, default=Path("/tmp/eval/go/src"))
    ap.add_argument("--queries", type=Path, default=Path("/tmp/eval/go/queries.jsonl"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/ivf-recall"))
    a = ap.parse_args()
    qs = [json.loads(line)["query"] for line in a.queries.read_text().splitlines() if line.strip()]
    cache: list[str] = []  # the default cache: the eval run has embedded this tree already
    flat = build(a.tree, a.work / "flat", *cache)
    ivf = build(a.tree, a.work / "ivf", *cache, "--flat-max", "1")
    mf = json.loads((Path(flat["snapshot_dir"]) / "manifest.json").read_text())["embeddings"]
    mi = json.loads((Path(ivf["snapshot_dir"]) / "manifest.json").read_text())["embeddings"]
    exact = asyncio.run(top10(flat["snapshot_dir"], qs))
    approx = asyncio.run(top10(ivf["snapshot_dir"], qs))
    rec = [len(set(x) & set(e)) / len(e) for x, e in zip(approx, exact) if e]
    mean = sum(rec) / len(rec)
    text = (
        "## IVF recall@10 against Flat\n\n"
        f"Tree `{a.tree}`: {mf['count']} vectors; exact `{mf['index']}` vs approximate `{mi['index']}` "
        f"(nprobe = nlist/3, min 32, stored in the file). {len(rec)} queries (semantic mode, limit 10).\n\n"
        f"Mean recall@10: **{mean:.3f}** (min {min(rec):.2f}).\n"
    )
    dest = ROOT / "bench/results/ivf-recall.md"
    dest.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
