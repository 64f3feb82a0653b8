#!/usr/bin/env python3
"""Server benchmark: code-index-mcp through the official Python MCP client,
next to ripgrep on the same trees in the same session.

    python3 bench/bench_server.py [--corpora django go-stdlib] [--runs 5] [--plain-content]

For each corpus it builds (or reuses) a snapshot, starts `code-index-mcp serve`,
and reports:
  - time to ready (spawn → initialize answered, snapshot verified and loaded)
    and the server's resident memory next to the snapshot's content size
    (after load, right after the run, and idle 2.5 s later: the server gives
    memory back after 1 s without calls);
  - p50/p95 latency of each tool over repeated calls, and the median of a
    first call after 1.5 s idle;
  - for every grep parity case of that corpus: the time to fetch *all* pages
    through the MCP client vs `rg` with the same flags printing all matches
    (median of --runs), and their ratio (< 1 = faster than rg).
Writes bench/results/server-<corpus>.md and prints it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from test_grep_parity import CASES as PARITY_CASES, rg_flags, search_path  # noqa: E402

# The kernel is for benchmarks, not CI: its cases live here (`--corpora linux`,
# with the corpus fetched by ../shared/bench/corpora.sh into CODE_INDEX_CORPORA).
LINUX_CASES = [
    ("linux", ["-w", "-F", "-s"], "kmalloc"),
    ("linux", [], r"\bkmalloc\("),
    ("linux", ["-g", "*.c"], r"static int \w+_probe\("),
    ("linux", ["--path", "mm"], r"^struct \w+ \{"),
    ("linux", ["-g", "*.h", "-m", "1"], r"^#define \w+_H$"),
    ("linux", ["-U", "-g", "*.c"], r"static const struct file_operations \w+ = \{\n\s+\.owner"),
]
CASES = PARITY_CASES + LINUX_CASES

PROBES = {
    "django": dict(grep="def get_or_create", sym="get_or_create", defn="QuerySet", search="lang:python sym:save -file:tests",
                   files="**/*.py", read="django/db/models/query.py", code="how are querysets evaluated lazily"),
    "go-stdlib": dict(grep="func NewReader", sym="NewReader", defn="Reader", search="lang:go sym:Read -file:_test",
                      files="**/*.go", read="src/bufio/bufio.go", code="parse a URL query string"),
    "linux": dict(grep="kmem_cache_alloc\\(", sym="kmalloc", defn="task_struct", search="sym:kfree file:mm/",
                  files="**/*.c", read="mm/slab_common.c", code="allocate memory for a slab cache"),
}

TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/code-index/target"))
INDEXER = Path(os.environ.get("CODE_INDEXER", TARGET / "release/code-indexer"))
SERVER = TARGET / "release/code-index-mcp"
CORPORA = Path(os.environ.get("CODE_INDEX_CORPORA", Path.home() / ".cache/code-index/corpora"))
OUT = Path(os.environ.get("BENCH_SNAPSHOTS", Path.home() / ".cache/code-index/bench-snapshots"))


def grep_args(flags: list[str], pattern: str) -> dict:
    a: dict = {"pattern": pattern, "limit": 1000}
    i = 0
    globs = []
    while i < len(flags):
        f = flags[i]
        if f == "-g":
            globs.append(flags[i + 1]); i += 2; continue
        if f == "--path":
            a["path"] = flags[i + 1]; i += 2; continue
        if f in ("-C", "-A", "-B", "-m"):
            key = {"-C": "context_lines", "-A": "after", "-B": "before", "-m": "max_count"}[f]
            a[key] = int(flags[i + 1]); i += 2; continue
        a.update({"-F": {"fixed_string": True}, "-s": {"case_sensitive": True}, "-i": {"case_sensitive": False},
                  "-w": {"whole_word": True}, "-U": {"multiline": True}}[f])
        i += 1
    if globs:
        a["glob"] = globs
    return a


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


async def bench_corpus(corpus: str, runs: int, plain: bool = False) -> str:
    repo = CORPORA / corpus
    info = json.loads(subprocess.run([str(INDEXER), "index", str(repo), "--out", str(OUT), "--no-embeddings", "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    snap = Path(info["snapshot_dir"])
    content = sum(f["bytes"] for f in json.loads((snap / "manifest.json").read_text())["files"] if f["name"] == "files.parquet")
    src_bytes = info["source_bytes"]
    lines = [f"## Server benchmark: {corpus}{' (serve --plain-content)' if plain else ''}", ""]
    t0 = time.perf_counter()
    params = StdioServerParameters(command=str(SERVER), args=["serve", "--index", str(snap), *(["--plain-content"] if plain else [])])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            ready = time.perf_counter() - t0
            pid = int(subprocess.run(["pgrep", "-n", "-f", f"code-index-mcp serve --index {snap}"], capture_output=True, text=True).stdout.split()[0])
            rss_ready = rss_kb(pid)
            anon_ready = rss_kb(pid, "RssAnon")

            async def call(name, args):
                t = time.perf_counter()
                res = await s.call_tool(name, args)
                assert not res.is_error, (name, args, res.content[0].text[:300])
                return time.perf_counter() - t, res

            # Tool latency.
            pr = PROBES[corpus]
            probes = {
                "grep": {"pattern": pr["grep"], "limit": 50},
                "search_symbols": {"query": pr["sym"], "limit": 20},
                "find_definitions": {"symbol": pr["defn"]},
                "find_references": {"symbol": pr["sym"], "limit": 20},
                "search": {"query": pr["search"], "limit": 50},
                "search_files": {"pattern": pr["files"], "limit": 100},
                "read_file": {"path": pr["read"], "start_line": 100, "end_line": 200},
                # Keyword-only here (the benchmark's snapshots have no vectors); its first
                # call waits for the search_code index, so memory below includes it.
                "search_code": {"query": pr["code"], "limit": 10},
                "list_repos": {},
                "health": {},
            }
            # The first call after 1.5 s without calls: the server has given its
            # memory back by then (DuckDB's cached blocks among it).
            idle: dict[str, list[float]] = {name: [] for name in probes}
            for _ in range(3):
                for name, args in probes.items():
                    await asyncio.sleep(1.5)
                    idle[name].append((await call(name, args))[0] * 1000)
            lines += ["| tool | p50 ms | p95 ms | after 1.5 s idle, median ms |", "|---|---:|---:|---:|"]
            for name, args in probes.items():
                ts = [(await call(name, args))[0] * 1000 for _ in range(max(runs * 4, 10))]
                lines.append(f"| {name} | {pct(ts, 50):.1f} | {pct(ts, 95):.1f} | {statistics.median(idle[name]):.1f} |")
            lines.append("")

            # grep vs rg, all pages.
            lines += ["| case | matches | first page ms (cold; server-side) | all pages ms | rg ms | first page / rg | all pages / rg |",
                      "|---|---:|---:|---:|---:|---:|---:|"]
            worst = worst_first = 0.0
            for c, flags, pattern in CASES:
                if c != corpus:
                    continue
                args = grep_args(flags, pattern)
                st, ft = [], []
                n = 0
                # The first page of a query never asked before (cold: no result cache).
                t = time.perf_counter()
                _, first = await call("grep", dict(args, limit=50))
                ft.append(time.perf_counter() - t)
                server_ms = first.structured_content["elapsed_ms"]
                for _ in range(runs):
                    t = time.perf_counter()
                    cursor, n = None, 0
                    while True:
                        a = dict(args, **({"cursor": cursor} if cursor else {}))
                        _, res = await call("grep", a)
                        sc = res.structured_content
                        n += sc["returned"]
                        cursor = sc.get("next_cursor")
                        if not cursor:
                            break
                    st.append(time.perf_counter() - t)
                rt = []
                cmd = ["rg", "-n", *rg_flags(flags), "-e", pattern, "--", search_path(flags)]
                for _ in range(runs):
                    t = time.perf_counter()
                    subprocess.run(cmd, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    rt.append(time.perf_counter() - t)
                sm, rm, fm = statistics.median(st) * 1000, statistics.median(rt) * 1000, statistics.median(ft) * 1000
                worst = max(worst, sm / rm)
                worst_first = max(worst_first, fm / rm)
                case = f"`{' '.join(flags)} {pattern}`"[:90].replace("|", "\\|")
                lines.append(f"| {case} | {n} | {fm:.1f} ({server_ms:.1f}) | {sm:.1f} | {rm:.1f} | {fm / rm:.2f} | {sm / rm:.2f} |")
            rss_busy = rss_kb(pid)
            anon_busy = rss_kb(pid, "RssAnon")
            # The server gives memory back after 1 s without calls.
            await asyncio.sleep(2.5)
            rss_end = rss_kb(pid)
            anon_end = rss_kb(pid, "RssAnon")
    lines += [
        "",
        f"Ready (spawn → initialized, snapshot verified and loaded): **{ready:.2f} s**. "
        f"Resident memory (RSS; of it anonymous = heap, the rest mapped code such as libduckdb): "
        f"{rss_ready / 1024:.0f} MB ({anon_ready / 1024:.0f} MB heap) after load, "
        f"{rss_busy / 1024:.0f} MB ({anon_busy / 1024:.0f} MB heap) right after the run, "
        f"{rss_end / 1024:.0f} MB ({anon_end / 1024:.0f} MB heap) idle 2.5 s later; "
        f"indexed content {src_bytes / 1e6:.1f} MB (files.parquet {content / 1e6:.1f} MB) → RSS "
        f"{rss_end * 1024 / src_bytes:.2f}× idle ({rss_busy * 1024 / src_bytes:.2f}× busy), "
        f"heap {anon_end * 1024 / src_bytes:.2f}× the content size. "
        f"Worst grep case: first page {worst_first:.2f}× rg, "
        f"all pages {worst:.2f}× rg.",
        f"Median of {runs} runs; rg {subprocess.run(['rg', '--version'], capture_output=True, text=True).stdout.split()[1]}, "
        f"{os.cpu_count()} cores, load average before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}.",
        "",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", nargs="+", default=["django", "go-stdlib"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--plain-content", action="store_true", help="serve --plain-content (file texts uncompressed)")
    a = ap.parse_args()
    (ROOT / "bench/results").mkdir(parents=True, exist_ok=True)
    for c in a.corpora:
        text = asyncio.run(bench_corpus(c, a.runs, a.plain_content))
        (ROOT / f"bench/results/server-{c}{'-plain' if a.plain_content else ''}.md").write_text(text)
        print(text)


if __name__ == "__main__":
    main()
