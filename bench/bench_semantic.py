#!/usr/bin/env python3
"""Semantic-layer benchmark: embedding throughput, build time with
embeddings (cold and after a one-file change), and search_code latency
through the official Python MCP client.

    python3 bench/bench_semantic.py [--corpus django] [--work /tmp/bench-semantic] [--runs 3]

Steps (all timed in this session, on this machine):
  1. copy the corpus to <work>/src (the copy is edited in step 3);
  2. cold build: `code-indexer index --embedding-cache <fresh dir>` (wall time,
     peak RSS from /usr/bin/time -v); embedding throughput = embedded chunks /
     embedding seconds, from the build's own summary;
  3. one-file change: append a function to one file, rebuild with
     `--previous <cold snapshot>` and the same cache; report how many chunks
     were embedded next to how many chunks that file has;
  4. start `code-index-mcp serve` on the cold snapshot; after the engine is
     ready, call search_code for each query in QUERIES and each mode, --runs
     times, and report p50/p95 client-side latency; also the time from spawn
     to the first answered search_code (engine build: BM25 + vectors).
Writes bench/results/semantic-<corpus>.md and prints it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/code-index/target"))
INDEXER = Path(os.environ.get("CODE_INDEXER", TARGET / "release/code-indexer"))
SERVER = TARGET / "release/code-index-mcp"
CORPORA = Path(os.environ.get("CODE_INDEX_CORPORA", Path.home() / ".cache/code-index/corpora"))

QUERIES = [
    "parse an ISO 8601 date string into a datetime",
    "escape HTML special characters",
    "hash a password with a salt",
    "cache a value with a timeout",
    "send an email to the site admins",
    "QuerySet.get_or_create",
    "what calls get_or_create",
    "how do database backends work",
    "from the request handler to the database",
    "validate an email address",
    "paginate a list of objects",
    "sign a value with a secret key",
]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def timed_build(args: list[str]) -> tuple[dict, float, int]:
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v", str(INDEXER), *args, "--json"], capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"build failed: {' '.join(args)}\n{p.stderr[-2000:]}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return json.loads(p.stdout), wall, int(m.group(1)) if m else 0


async def latency(snap: Path, runs: int) -> tuple[list[str], dict]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    lines = []
    t0 = time.perf_counter()
    params = StdioServerParameters(command=str(SERVER), args=["serve", "--index", str(snap)],
                                   env=dict(os.environ, OMP_NUM_THREADS="1"))
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            ready = time.perf_counter() - t0
            res = await s.call_tool("search_code", {"query": "warm up the engine", "limit": 1})
            first = time.perf_counter() - t0
            assert not res.is_error, res.content[0].text[:300]
            # A table tool waits for the background load of the tables;
            # timing starts after it, so every mode sees the same steady state.
            res = await s.call_tool("search_symbols", {"query": "QuerySet", "limit": 1})
            tables = time.perf_counter() - t0
            assert not res.is_error, res.content[0].text[:300]
            lat: dict[str, list[float]] = {}
            types: dict[str, str] = {}
            for mode in ("hybrid", "keyword", "semantic"):
                for run in range(runs):
                    for q in QUERIES:
                        # Distinct text per run: measure the work, not the result cache.
                        qq = q if run == 0 else f"{q} {'.' * run}"
                        t = time.perf_counter()
                        res = await s.call_tool("search_code", {"query": qq, "mode": mode})
                        lat.setdefault(mode, []).append(time.perf_counter() - t)
                        assert not res.is_error, (q, res.content[0].text[:300])
                        if mode == "hybrid" and run == 0:
                            types[q] = res.structured_content["query_type"]
            lines += [
                f"- server ready (initialize answered): {ready:.2f} s; first search_code answered (engine built: BM25 + vectors + model): {first:.2f} s; tables loaded (first search_symbols answered): {tables:.2f} s",
                "- timed after the tables have loaded: while they load, in the first seconds after start, the load shares the two cores with the queries",
                "",
                "| mode | calls | p50 ms | p95 ms |",
                "|---|---:|---:|---:|",
            ]
            for mode, xs in lat.items():
                lines.append(f"| {mode} | {len(xs)} | {statistics.median(xs) * 1000:.1f} | {pct(xs, 95) * 1000:.1f} |")
            lines += ["", "| query | query_type |", "|---|---|"] + [f"| {q} | {t} |" for q, t in types.items()]
    return lines, lat


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="django")
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-semantic"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reuse", action="store_true", help="keep the cold snapshot of an earlier run")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    src = a.work / "src"
    out = a.work / "out"
    cache = a.work / "cache"
    lines = [f"## Semantic benchmark: {a.corpus}", "",
             f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, `{' '.join(sys.argv)}`", ""]
    cold_json = a.work / "cold.json"
    if not (a.reuse and cold_json.is_file()):
        shutil.rmtree(a.work, ignore_errors=True)
        a.work.mkdir(parents=True)
        shutil.copytree(CORPORA / a.corpus, src, symlinks=True)
        info, wall, rss = timed_build(["index", str(src), "--out", str(out), "--embedding-cache", str(cache)])
        cold_json.write_text(json.dumps({"info": info, "wall": wall, "rss": rss}))
    c = json.loads(cold_json.read_text())
    info, wall, rss = c["info"], c["wall"], c["rss"]
    e = info["embeddings"]
    lines += [
        "| step | wall s | chunks | embedded | embedding s | chunks/s | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| cold build (empty cache) | {wall:.1f} | {e['chunks']} | {e['embedded']} | {e['seconds']:.1f} | {e['embedded'] / max(e['seconds'], 1e-9):.1f} | {rss / 1024:.0f} |",
    ]
    # One-file change.
    import duckdb

    snap = Path(info["snapshot_dir"])
    target = duckdb.sql(
        f"SELECT path FROM '{snap}/chunks.parquet' WHERE language = 'python' AND NOT is_test "
        "GROUP BY path HAVING count(*) BETWEEN 5 AND 20 ORDER BY path LIMIT 1").fetchall()[0][0]
    f = src / target
    original = f.read_text()
    f.write_text(original + "\n\ndef bench_added_function(x):\n    \"\"\"Added by bench_semantic.py.\"\"\"\n    return x * 2\n")
    try:
        info2, wall2, rss2 = timed_build(["index", str(src), "--out", str(out), "--embedding-cache", str(cache),
                                          "--previous", str(snap)])
    finally:
        f.write_text(original)
    snap2 = Path(info2["snapshot_dir"])
    n_file = duckdb.sql(f"SELECT count(*) FROM '{snap2}/chunks.parquet' WHERE path = '{target}'").fetchall()[0][0]
    e2 = info2["embeddings"]
    lines.append(f"| one-file change, `--previous` | {wall2:.1f} | {e2['chunks']} | {e2['embedded']} | {e2['seconds']:.1f} | - | {rss2 / 1024:.0f} |")
    lines += ["", f"Changed file: `{target}` ({n_file} chunks after the edit); embedded on rebuild: {e2['embedded']}.", ""]
    lat_lines, _ = asyncio.run(latency(snap, a.runs))
    lines += ["### search_code latency through the MCP client (django snapshot with vectors)", ""] + lat_lines
    text = "\n".join(lines) + "\n"
    dest = a.out or ROOT / "bench" / "results" / f"semantic-{a.corpus}.md"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
