#!/usr/bin/env python3
"""Many repositories at once: 100 snapshots served together, through the
official Python MCP client.

    python3 bench/bench_many.py [--runs 10] [--count 100]

Builds one snapshot (no vectors) per crate of rust-crates and per directory
two levels down in go-stdlib's src/ (src/net/http, src/crypto/tls, ...) until
there are --count, serves them all from one --index directory, and reports:
the time to ready, then for grep (first page, every repo) and search_symbols
(every repo) the first call and the p50/p95 of repeated calls, with the
number of repos that answered. Writes bench/results/many-snapshots.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from bench_server import CORPORA, INDEXER, SERVER, pct  # noqa: E402

OUT = Path(os.environ.get("BENCH_SNAPSHOTS", Path.home() / ".cache/code-index/bench-snapshots")) / "many"

GREPS = [
    {"pattern": "fn main", "fixed_string": True},
    {"pattern": r"func New\w*\(", "glob": ["*.go"]},
    {"pattern": r"\bunsafe\b"},
    {"pattern": "TODO|FIXME"},
    {"pattern": "Deserialize", "fixed_string": True, "case_sensitive": True},
    {"pattern": "zz_no_such_text_zz", "fixed_string": True},
]
SYMBOLS = ["Reader", "new", "parse", "Deserialize", "Marshal", "ServeHTTP"]


def sources(count: int) -> list[tuple[str, Path]]:
    out = []
    crates = CORPORA / "rust-crates"
    for d in sorted(crates.iterdir()):
        if d.is_dir():
            out.append((f"crate-{d.name}", d))
    src = CORPORA / "go-stdlib" / "src"
    for top in sorted(src.iterdir()):
        if not top.is_dir():
            continue
        subs = [s for s in sorted(top.iterdir()) if s.is_dir() and s.name != "testdata"]
        for d in subs or [top]:
            out.append((f"go-{d.relative_to(src).as_posix().replace('/', '-')}", d))
    return out[:count]


def build(count: int) -> float:
    srcs = sources(count)
    assert len(srcs) == count, f"only {len(srcs)} source trees"
    if OUT.exists():
        shutil.rmtree(OUT)
    t = time.perf_counter()
    for name, d in srcs:
        subprocess.run([str(INDEXER), "index", str(d), "--out", str(OUT), "--name", name, "--no-embeddings", "--json"],
                       check=True, capture_output=True)
    return time.perf_counter() - t


async def measure(runs: int) -> dict:
    res: dict = {}
    t0 = time.perf_counter()
    params = StdioServerParameters(command=str(SERVER), args=["serve", "--index", str(OUT)])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            res["ready"] = time.perf_counter() - t0
            repos = (await s.call_tool("list_repos", {})).structured_content
            res["repos"] = len(repos.get("repos", []))

            async def call(name, args):
                t = time.perf_counter()
                out = await s.call_tool(name, args)
                assert not out.is_error, (name, args, out.content[0].text[:300])
                return (time.perf_counter() - t) * 1000, out.structured_content

            rows = []
            for g in GREPS:
                args = dict(g, repo="all", limit=50)
                first, sc = await call("grep", args)
                ts = [(await call("grep", args))[0] for _ in range(runs)]
                hit_repos = len({m["repo"] for m in sc["matches"]})
                rows.append(("grep", json.dumps(g), first, pct(ts, 50), pct(ts, 95), sc["returned"], hit_repos))
            for q in SYMBOLS:
                args = {"query": q, "repo": "all", "limit": 20}
                first, sc = await call("search_symbols", args)
                ts = [(await call("search_symbols", args))[0] for _ in range(runs)]
                items = sc.get("symbols") or sc.get("results") or []
                rows.append(("search_symbols", q, first, pct(ts, 50), pct(ts, 95), len(items), len({i.get("repo") for i in items})))
            res["rows"] = rows
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--count", type=int, default=100)
    a = ap.parse_args()
    built = build(a.count)
    res = asyncio.run(measure(a.runs))
    lines = [f"## {a.count} snapshots served together", "",
             f"{a.count} snapshots (each crate of rust-crates, each directory two levels down in go-stdlib's src/) "
             f"built in {built:.1f} s; the server loaded {res['repos']} repos and was ready (spawn → initialized) in "
             f"{res['ready']:.2f} s. Every call asks `repo: \"all\"`.", "",
             "| tool | query | first call ms | p50 ms | p95 ms | results | repos in them |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for tool, q, first, p50, p95, n, nrepos in res["rows"]:
        lines.append(f"| {tool} | `{q}` | {first:.1f} | {p50:.1f} | {p95:.1f} | {n} | {nrepos} |")
    worst = max(r[3] for r in res["rows"])
    lines += ["", f"Slowest p50: {worst:.1f} ms. {a.runs} repeats per query; 2 cores; "
              f"`python3 bench/bench_many.py --runs {a.runs}`, {time.strftime('%Y-%m-%d')}.", ""]
    text = "\n".join(lines)
    (ROOT / "bench/results/many-snapshots.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
