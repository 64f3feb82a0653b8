#!/usr/bin/env python3
"""Indexed grep against ripgrep: every case through the official Python MCP
client, next to `rg` on the same tree in the same session.

    python3 bench/bench_grep_index.py --corpus linux [--runs 3] [--snapshot DIR]
    python3 bench/bench_grep_index.py --corpus django --corpus go-stdlib

For each case it reports the first page (50 matches) of a query never asked
before, through the client and server-side; all pages (1000 a page, through
the cursors); `rg -n` printing every match (median of --runs); their ratios
(rg time / ours: > 1 = faster than rg); and whether the full result equals
rg's: the same (path, line) of every match, over the files the snapshot
holds (files with redacted secrets differ by design and are left out).
Each first page is asked of an idle server (0.3 s after the previous
call, as between an agent's calls), after one warm-up grep of the process.
With `--off` the server also runs with CODE_INDEX_NGRAM=off (a scan of every
selected file) for comparison. Writes bench/results/grep-index-<corpus>.md.
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
sys.path.insert(0, str(ROOT / "bench"))

import pyarrow.parquet as pq  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from bench_server import CORPORA, INDEXER, OUT, SERVER, grep_args, rss_kb  # noqa: E402
from bench_server import LINUX_CASES as SERVER_LINUX_CASES  # noqa: E402
from test_grep_parity import CASES as PARITY_CASES, rg_flags, search_path  # noqa: E402

# At least 20 kernel cases: selective literals, case-insensitive alternations,
# classes, whole words, scoped paths and globs, multiline, no match, the
# large generated headers (over 1 MiB), and unselective patterns.
# bench_server.py's six kernel cases, and 18 more.
LINUX_CASES = SERVER_LINUX_CASES + [
    ("linux", ["-F"], "EXPORT_SYMBOL_GPL(kmem_cache_alloc"),
    ("linux", ["-F"], "spin_lock_irqsave(&priv->lock"),
    ("linux", ["-i"], r"(mutex_lock|mutex_unlock)\(&dev->mutex\)"),
    ("linux", ["-i"], r"copyright \(c\) 20(19|20) intel"),
    ("linux", [], r"0x[dD][eE][aA][dD][bB][eE][eE][fF]"),
    ("linux", ["-w"], "list_for_each_entry_safe_reverse"),
    ("linux", ["--path", "drivers/net/ethernet/intel", "-w"], "napi_schedule"),
    ("linux", ["-g", "drivers/gpu/**", "-F"], "drm_gem_object_put("),
    ("linux", ["-U", "-g", "*.c"], r"for \(i = 0; i < \w+; i\+\+\) \{\n\s+if \(!\w+\[i\]\)"),
    ("linux", [], "zzqx_no_such_symbol_42"),
    ("linux", [], r"\p{Greek}"),
    ("linux", ["-i", "-w"], "syzbot"),
    ("linux", ["-F"], "Reported-by: syzbot+"),
    ("linux", ["-g", "*.S"], r"^SYM_FUNC_START\(\w+\)"),
    ("linux", ["-g", "Kconfig*"], r"^config USB_\w+_DEBUG$"),
    ("linux", ["--path", "drivers/gpu/drm/amd/include"], r"mmGCVM_L2_CNTL\b"),
    ("linux", [], r"struct \w+_ops \w+ = \{"),
    ("linux", ["-i"], r"\b(TODO|FIXME|XXX):"),
]
CASES = PARITY_CASES + LINUX_CASES


def rg_set(repo: Path, flags: list[str], pattern: str) -> set[tuple[str, int]]:
    cmd = ["rg", "--json", *rg_flags(flags), "-e", pattern, "--", search_path(flags)]
    p = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
    out = set()
    for line in p.stdout.splitlines():
        m = json.loads(line)
        if m["type"] == "match" and "text" in m["data"]["path"]:
            out.add((os.path.normpath(m["data"]["path"]["text"]), m["data"]["line_number"]))
    return out


def rg_time(repo: Path, flags: list[str], pattern: str, runs: int) -> float:
    cmd = ["rg", "-n", *rg_flags(flags), "-e", pattern, "--", search_path(flags)]
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1000


async def serve(snap: Path, cases, repo: Path, runs: int, env: dict | None, compare: dict | None):
    rows, info = [], {}
    t0 = time.perf_counter()
    params = StdioServerParameters(command=str(SERVER), args=["serve", "--index", str(snap)], env=env)
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            info["ready"] = time.perf_counter() - t0
            pid = int(subprocess.run(["pgrep", "-n", "-f", f"code-index-mcp serve --index {snap}"],
                                     capture_output=True, text=True).stdout.split()[0])
            info["rss_ready"] = rss_kb(pid)
            # One call first: the client's and server's first-call costs are not a grep's.
            await s.call_tool("health", {})
            await asyncio.sleep(1.5)
            info["rss_idle_start"] = rss_kb(pid)
            await s.call_tool("list_repos", {})
            # The first grep of a process starts its scan threads.
            await s.call_tool("grep", {"pattern": "zz_warm_up_zz", "fixed_string": True})
            # The cases run on a server in its steady state: search_code's
            # keyword index is loaded and, on a first start of a new
            # snapshot, the table cache built in the background is done (the
            # first calls wait for them; the waits are reported).
            t = time.perf_counter()
            await s.call_tool("search_code", {"query": "allocate memory", "limit": 1})
            info["search_code_wait"] = time.perf_counter() - t
            t = time.perf_counter()
            await s.call_tool("search_symbols", {"query": "main", "limit": 1})
            info["tables_wait"] = time.perf_counter() - t
            # Until a new snapshot's table cache is built, table tools read
            # the Parquet files; the cases run once it is (its build would
            # compete with them for the cores).
            while (await s.call_tool("health", {})).structured_content["tables_from"] != "cache":
                await asyncio.sleep(0.5)
            info["tables_cache"] = time.perf_counter() - t0
            await asyncio.sleep(1.0)

            async def grep(args):
                t = time.perf_counter()
                res = await s.call_tool("grep", args)
                assert not res.is_error, (args, res.content[0].text[:300])
                return (time.perf_counter() - t) * 1000, res.structured_content

            for _, flags, pattern in cases:
                args = grep_args(flags, pattern)
                # On an idle server: the previous case's background cache fill
                # (at most 2 s) has ended, as between an agent's calls.
                await asyncio.sleep(0.3)
                first_ms, first = await grep(dict(args, limit=50))
                server_first = first["elapsed_ms"]
                all_ms, found = [], set()
                for run in range(runs):
                    t = time.perf_counter()
                    cursor, got, server_all = None, set(), 0.0
                    while True:
                        a = dict(args, limit=1000, **({"cursor": cursor} if cursor else {}))
                        _, sc = await grep(a)
                        server_all += sc["elapsed_ms"]
                        got |= {(m["path"], m["line"]) for m in sc["matches"]}
                        cursor = sc.get("next_cursor")
                        if not cursor:
                            break
                    all_ms.append((time.perf_counter() - t) * 1000)
                    found = got
                rows.append(dict(flags=flags, pattern=pattern, first_ms=first_ms, server_first=server_first,
                                 all_ms=statistics.median(all_ms), server_all=server_all, found=found))
            info["rss_busy"] = rss_kb(pid)
            await asyncio.sleep(2.5)
            info["rss_idle"] = rss_kb(pid)
    return rows, info


def bench(corpus: str, runs: int, snapshot: str | None, off: bool) -> str:
    repo = CORPORA / corpus
    if snapshot:
        snap = Path(snapshot)
        src_bytes = None
    else:
        t = time.perf_counter()
        info = json.loads(subprocess.run([str(INDEXER), "index", str(repo), "--out", str(OUT), "--no-embeddings", "--json"],
                                         check=True, capture_output=True, text=True).stdout)
        print(f"[bench] {corpus}: snapshot in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        snap = Path(info["snapshot_dir"])
        src_bytes = info["source_bytes"]
    files = pq.read_table(snap / "files.parquet", columns=["path", "has_secrets", "size_bytes"])
    indexed = set(files.column("path").to_pylist())
    secret = {p for p, h in zip(files.column("path").to_pylist(), files.column("has_secrets").to_pylist()) if h}
    content = sum(files.column("size_bytes").to_pylist())
    manifest = json.loads((snap / "manifest.json").read_text())
    sizes = {f["name"]: f["bytes"] for f in manifest["files"]}
    cases = [c for c in CASES if c[0] == corpus]
    rows, info = asyncio.run(serve(snap, cases, repo, runs, None, None))
    off_rows = asyncio.run(serve(snap, cases, repo, 1, {**os.environ, "CODE_INDEX_NGRAM": "off"}, None))[0] if off else None

    lines = [f"## Indexed grep vs rg: {corpus}", "",
             "| case | matches | = rg | first page ms (server) | all pages ms (server) | rg ms | rg / first page | rg / all pages |"
             + (" first page, index off (server) |" if off else ""),
             "|---|---:|:-:|---:|---:|---:|---:|---:|" + ("---:|" if off else "")]
    first_x, all_x, server_all_x, unequal = [], [], [], []
    for i, row in enumerate(rows):
        flags, pattern = row["flags"], row["pattern"]
        rg = {k for k in rg_set(repo, flags, pattern) if k[0] in indexed and k[0] not in secret}
        ours = {k for k in row["found"] if k[0] not in secret}
        equal = rg == ours
        if not equal:
            unequal.append((pattern, len(rg - ours), len(ours - rg), sorted(rg - ours)[:3], sorted(ours - rg)[:3]))
        rm = rg_time(repo, flags, pattern, runs)
        fx, ax = rm / row["first_ms"], rm / row["all_ms"]
        first_x.append(fx)
        all_x.append(ax)
        server_all_x.append(rm / max(row["server_all"], 0.01))
        case = f"`{' '.join(flags)} {pattern}`"[:90].replace("|", "\\|")
        off_col = f" {off_rows[i]['first_ms']:.1f} ({off_rows[i]['server_first']:.1f}) |" if off else ""
        lines.append(f"| {case} | {len(row['found'])} | {'yes' if equal else '**no**'} | {row['first_ms']:.1f} ({row['server_first']:.1f}) "
                     f"| {row['all_ms']:.1f} ({row['server_all']:.1f}) | {rm:.1f} | {fx:.1f}x | {ax:.1f}x |{off_col}")
    src = src_bytes or content
    lines += [
        "",
        f"**{len(rows)} cases: first page median {statistics.median(first_x):.1f}x faster than rg, slowest case "
        f"{min(first_x):.1f}x; all pages median {statistics.median(all_x):.1f}x, slowest {min(all_x):.1f}x "
        f"(server-side: median {statistics.median(server_all_x):.1f}x, slowest {min(server_all_x):.1f}x); "
        f"{len(rows) - len(unequal)} of {len(rows)} results equal to rg's.**",
        "",
        f"Server ready (spawn → initialized: snapshot verified and loaded) {info['ready']:.2f} s; first search_code "
        f"(keyword index read in place) {info['search_code_wait']:.2f} s, first table tool {info['tables_wait']:.2f} s "
        f"(a new snapshot's table cache ready {info['tables_cache']:.1f} s after the spawn, the table tools reading the "
        f"Parquet files until then; the cases run after it)"
        f"; RSS after load "
        f"{info['rss_ready'] / 1024:.0f} MB, idle before the cases {info['rss_idle_start'] / 1024:.0f} MB, right after "
        f"{info['rss_busy'] / 1024:.0f} MB, idle 2.5 s later {info['rss_idle'] / 1024:.0f} MB = "
        f"{info['rss_idle'] * 1024 / content:.2f}x the content ({content / 1e6:.1f} MB in {len(indexed):,} files). "
        f"Snapshot without vectors {sum(v for k, v in sizes.items() if k != 'vectors.faiss') / 1e6:.1f} MB = "
        f"{sum(v for k, v in sizes.items() if k != 'vectors.faiss') / src:.2f}x the source; ngrams.bin "
        f"{sizes.get('ngrams.bin', 0) / 1e6:.1f} MB.",
        f"rg {subprocess.run(['rg', '--version'], capture_output=True, text=True).stdout.split()[1]} (median of {runs} runs; "
        f"the server's all pages: median of {runs}, first page: one cold call), {os.cpu_count()} cores, "
        f"load average before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}; "
        f"`python3 bench/bench_grep_index.py --corpus {corpus} --runs {runs}{' --off' if off else ''}`, "
        f"{time.strftime('%Y-%m-%d')}.",
        "",
    ]
    for p, miss, extra, m3, e3 in unequal:
        lines.append(f"- not equal to rg: `{p}`: {miss} missing (e.g. {m3}), {extra} extra (e.g. {e3})")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", action="append", default=None)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--snapshot", help="an existing snapshot directory of the (single) corpus")
    ap.add_argument("--off", action="store_true", help="also serve with CODE_INDEX_NGRAM=off (first page only)")
    a = ap.parse_args()
    for c in a.corpus or ["linux"]:
        text = bench(c, a.runs, a.snapshot, a.off)
        (ROOT / f"bench/results/grep-index-{c}.md").write_text(text)
        print(text)


if __name__ == "__main__":
    main()
