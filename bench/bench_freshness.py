#!/usr/bin/env python3
"""Freshness on django: from the PostToolUse hook's start to the server
answering with the edit, and what `watch` costs on an idle tree.

A git copy of the pinned django tree is indexed with the default vectors
(the embedding cache makes that build quick after the first); a server is
started on it through the MCP Python SDK. Each round edits one file (a new
function with a unique name), runs `code-indexer invalidate-file` with the
hook's JSON on stdin, and calls `search_symbols` until the new name comes
back (marked overlay). Reported: the hook command's time and the end-to-end
time (hook start → answer), median and max over the rounds, and the chunks
embedded by each overlay build.

Then `code-indexer watch --interval 10s` runs on the unchanged tree for 60 s;
its CPU time (utime + stime of the process and its children, /proc) over
that wall time is the idle cost.

Usage: python3 bench/bench_freshness.py [--rounds 8] [--idle 60] [--out bench/results/freshness-django.md]
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
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/code-index/target")) / "release"
CORPORA = Path(os.environ.get("CODE_INDEX_CORPORA", Path.home() / ".cache/code-index/corpora"))
FILES = [
    "django/utils/text.py", "django/db/models/query.py", "django/http/request.py", "django/forms/fields.py",
    "django/core/cache/backends/base.py", "django/contrib/auth/models.py", "django/template/base.py",
    "django/urls/resolvers.py", "django/views/generic/base.py", "django/db/models/fields/__init__.py",
]


def git(repo: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def cpu_seconds(pid: int) -> float:
    """utime + stime (+ waited-for children) of a process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))
    return ticks / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--idle", type=float, default=60.0)
    ap.add_argument("--out", default=str(ROOT / "bench/results/freshness-django.md"))
    a = ap.parse_args()
    indexer, server = TARGET / "code-indexer", TARGET / "code-index-mcp"
    work = Path(tempfile.mkdtemp(prefix="fresh-"))
    tree = work / "django"
    shutil.copytree(CORPORA / "django", tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "base")
    out = work / "snaps"
    t = time.time()
    p = subprocess.run([str(indexer), "sync", str(tree), "--index", str(out / "django"), "--json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    first = json.loads(p.stdout)
    build_s = time.time() - t
    manifest = json.loads((out / "django" / first["snapshot_id"] / "manifest.json").read_text())
    model = (manifest.get("embeddings") or {}).get("model", "none")
    env = dict(os.environ, CODE_INDEX_SNAPSHOTS=str(out), CODE_INDEX_METRICS="off")
    rounds = []

    async def session():
        params = StdioServerParameters(command=str(server), args=["serve", "--index", str(out / "django")], env=env)
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                await s.call_tool("search_code", {"query": "warm up", "mode": "hybrid"})
                for i in range(a.rounds):
                    rel = FILES[i % len(FILES)]
                    name = f"fresh_probe_{i}_{int(time.time())}"
                    with open(tree / rel, "a") as f:
                        f.write(f"\n\ndef {name}(value):\n    \"\"\"Probe {i} for the freshness benchmark.\"\"\"\n    return value\n")
                    hook = {"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(tree / rel)}}
                    t0 = time.perf_counter()
                    p = subprocess.run([str(indexer), "invalidate-file", "--json"], input=json.dumps(hook),
                                       capture_output=True, text=True, env=env)
                    t_hook = time.perf_counter() - t0
                    assert p.returncode == 0, p.stderr
                    while True:
                        res = await s.call_tool("search_symbols", {"query": name})
                        syms = res.structured_content.get("symbols", [])
                        if syms and syms[0].get("overlay"):
                            break
                        if time.perf_counter() - t0 > 60:
                            raise SystemExit(f"round {i}: the server never answered with {name}")
                        await asyncio.sleep(0.01)
                    t_end = time.perf_counter() - t0
                    sem = await s.call_tool("search_code", {"query": f"Probe {i} for the freshness benchmark", "mode": "semantic"})
                    top = [x["path"] for x in sem.structured_content.get("results", [])[:5]]
                    rounds.append({"file": rel, "hook_s": t_hook, "end_to_end_s": t_end, "semantic_top5": rel in top})

    asyncio.run(session())
    # Embedded chunks per overlay build, from the build events of a second, metrics-on edit.
    mfile = work / "m.jsonl"
    with open(tree / FILES[0], "a") as f:
        f.write("\n\ndef fresh_probe_count(value):\n    return value\n")
    subprocess.run([str(indexer), "invalidate-file", str(tree / FILES[0])], check=True, capture_output=True,
                   env=dict(env, CODE_INDEX_METRICS=str(mfile)))
    build_ev = [json.loads(l) for l in mfile.read_text().splitlines() if '"build"' in l][-1]
    emb = build_ev.get("embeddings") or {}

    # watch on the idle tree (the edits committed, the snapshot synced first).
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "edits")
    subprocess.run([str(indexer), "sync", str(tree), "--index", str(out / "django")], check=True, capture_output=True)
    w = subprocess.Popen([str(indexer), "watch", "--repos", str(tree), "--out", str(out), "--interval", "10s"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(1.0)
    c0, t0 = cpu_seconds(w.pid), time.time()
    time.sleep(a.idle)
    c1, t1 = cpu_seconds(w.pid), time.time()
    w.terminate()
    w.wait(timeout=30)
    idle_pct = (c1 - c0) / (t1 - t0) * 100

    hooks = [r["hook_s"] for r in rounds]
    ends = [r["end_to_end_s"] for r in rounds]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    load = Path("/proc/loadavg").read_text().split()[:3]
    md = f"""## Freshness benchmark: django

One-file edits on a git copy of django (snapshot with vectors: `{model}`; first build {build_s:.1f} s with the embedding cache warm).
Each round appends a function to a different file, runs `code-indexer invalidate-file` with the PostToolUse hook's JSON, and calls `search_symbols` until the new name is answered from the overlay (same server process).

| | median | max |
|---|---:|---:|
| hook command (`invalidate-file`, overlay with vectors) | {statistics.median(hooks):.3f} s | {max(hooks):.3f} s |
| hook start → server answers with the edit | {statistics.median(ends):.3f} s | {max(ends):.3f} s |

Rounds: {len(rounds)}; the new function in `search_code` semantic top 5 in {sum(r['semantic_top5'] for r in rounds)} of {len(rounds)}.
Per round (the overlay re-analyses every file it covers, so round n covers n files; `sync` starts it over): hook {', '.join(f"{r['hook_s']:.2f}" for r in rounds)} s; end to end {', '.join(f"{r['end_to_end_s']:.2f}" for r in rounds)} s.
Chunks of one overlay build: {emb.get('chunks', '-')} ({emb.get('from_cache', '-')} from the embedding cache, {emb.get('embedded', '-')} embedded).

| `watch --interval 10s` on the idle tree | |
|---|---:|
| CPU over {t1 - t0:.0f} s wall | {c1 - c0:.2f} s |
| share of one core | {idle_pct:.2f}% |

Reproduce: `python3 bench/bench_freshness.py` (needs the django corpus: `../shared/bench/corpora.sh`).
code-index commit {commit}; {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores; load average before: {' '.join(load)}.
"""
    Path(a.out).write_text(md)
    print(md)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
