#!/usr/bin/env python3
"""semble's public code-search benchmark (MinishLab/semble, benchmarks/), run
against `search_code` the way semble runs it: NDCG@10 per query, per repo,
overall, by category and by language, with the index time of each repo.

    python3 bench/eval_semble.py --repos-dir /tmp/semble-repos                 # every repo found there
    python3 bench/eval_semble.py --repos-dir /tmp/semble-repos --repo chi --repo cobra
    python3 bench/eval_semble.py --semble-dir /path/to/semble/benchmarks ...   # their files instead of ours

Inputs
------
--semble-dir (default bench/data/semble): `repos.json` (name, language, url,
pinned revision, benchmark_root) and `annotations/<repo>.json` (queries).
--repos-dir: one directory per repo, `<repos-dir>/<name>`, holding the repo at
its pinned revision (e.g. `git archive <revision> | tar -x -C <repos-dir>/<name>`).
A repo with annotations but no checkout is reported as skipped.

Method (semble's benchmarks/run_benchmark.py + data.py, re-implemented)
------
1. Index what semble indexes: `<checkout>/<benchmark_root>` (the whole checkout
   when benchmark_root is null), with
   `code-indexer index <root> --out <work>/snapshots --name <repo> --json
   --no-embeddings --threads 2` (plus `--follow-symlinks` for rxswift, whose
   benchmark root is links: FOLLOW_SYMLINKS; `--embeddings` drops --no-embeddings and adds
   `--embedding-cache none`: every vector is computed). Wall time of that
   command is the index time (`--reuse`: the time recorded when the reused
   snapshot was built).
2. `code-index-mcp serve --index <snapshot>` through the MCP Python client;
   per query `search_code` {"query", "mode", "limit": 10, "repo"}; modes
   `keyword`, plus `hybrid` when the snapshot has vectors (vectors.faiss),
   plus `semantic` then with `--semantic`.
3. Relevance. A query's targets are its `relevant` plus its `secondary`
   entries, all of gain 1 (binary relevance; secondary is not down-weighted).
   A target is a file (a path string) or a span ({path, start_line, end_line}).
   Our result paths are relative to the indexed root, so `<benchmark_root>/`
   (or the spec's `annotation_root`, where a checkout's layout moved) is put in
   front to get the repo-relative path the annotations use. A result
   covers a target when the paths match (equal, or one ends with "/" + the
   other) and, for a span target, the result's lines [line, end_line] overlap
   the span (inclusive). File targets are covered by any chunk of the file.
4. NDCG@10 of a query: for each target, the rank of the first result (1..10)
   covering it; gain 1 at each such rank (a rank hit by several targets counts
   once; a later chunk of an already-found file adds nothing, and one chunk
   covering two targets counts once). DCG = sum gain/log2(rank+1). Ideal DCG =
   min(10, n) ones, where n = the number of targets that some indexed chunk
   covers (targets outside the index are left out of the ideal; semble counts
   them against its own chunks, we against our snapshot's chunks; a query with
   n = 0 scores 0).
5. Aggregation as semble's run_benchmark.py: repo NDCG@10 = mean over its
   queries; "overall" = mean over repos; by language = mean over that
   language's repos. By category = mean over the queries of that category
   (pooled across repos). We also print the mean over all queries (their README
   says "averaged across all queries"; their saved summary averages repos).
   Categories missing in an annotation are inferred as semble does: one word ->
   symbol, starts with "how " -> architecture, else semantic.

Published numbers (--published, default bench/data/semble/published.json):
per-repo NDCG@10 of semble (hybrid), CodeRankEmbed (semantic and hybrid) and
BM25 (raw) copied from semble's results files, each with the file it comes
from; shown next to ours on the same repos, and averaged the same way.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import math
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
K = 10


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Data


def infer_category(query: str) -> str:
    q = query.strip()
    if " " not in q:
        return "symbol"
    low = q.lower()
    return "architecture" if low.startswith("how ") else "semantic"


def parse_target(t) -> tuple[str, int | None, int | None]:
    if isinstance(t, str):
        return (t, None, None)
    a, b = t.get("start_line"), t.get("end_line")
    return (str(t["path"]), None if a is None else int(a), None if b is None else int(b))


def load(semble_dir: Path):
    specs = {r["name"]: r for r in json.loads((semble_dir / "repos.json").read_text())}
    tasks: dict[str, list[dict]] = {}
    for f in sorted((semble_dir / "annotations").glob("*.json")):
        for item in json.loads(f.read_text()):
            repo = item.get("repo", f.stem)
            if repo not in specs:
                continue
            cat = item.get("category")
            tasks.setdefault(repo, []).append({
                "query": item["query"],
                "targets": [parse_target(t) for t in item.get("relevant", []) + item.get("secondary", [])],
                "category": cat if isinstance(cat, str) else infer_category(item["query"]),
            })
    return specs, tasks


# --------------------------------------------------------------------------
# Metric


def norm(p: str) -> str:
    return p.replace("\\", "/")


def path_matches(a: str, b: str) -> bool:
    a, b = norm(a), norm(b)
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def covers(path: str, start: int, end: int, target) -> bool:
    tp, ts, te = target
    if not path_matches(path, tp):
        return False
    if ts is None or te is None:
        return True
    return not (end < ts or start > te)


def dcg(gains: list[int]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg(results: list[tuple[str, int, int]], targets, n_indexed: int, k: int = K) -> float:
    if n_indexed == 0:
        return 0.0
    gains = [0] * k
    for t in targets:
        r = next((i for i, (p, a, b) in enumerate(results[:k]) if covers(p, a, b, t)), None)
        if r is not None:
            gains[r] = 1
    return dcg(gains) / dcg([1] * min(k, n_indexed))


# --------------------------------------------------------------------------
# Index


def snapshot_chunks(snap: Path, prefix: str) -> dict[str, list[tuple[int, int]]]:
    """Every indexed chunk span per repo-relative path (for the ideal DCG)."""
    import pyarrow.parquet as pq

    out: dict[str, list[tuple[int, int]]] = {}
    cp = snap / "chunks.parquet"
    if cp.exists():
        cols = pq.read_schema(cp).names
        a = "start_line" if "start_line" in cols else "line"
        t = pq.read_table(cp, columns=["path", a, "end_line"]).to_pydict()
        for p, s, e in zip(t["path"], t[a], t["end_line"]):
            out.setdefault(prefix + p, []).append((s, e))
    # Every indexed file is searchable as a whole (files without chunks included).
    f = pq.read_table(snap / "files.parquet", columns=["path"]).to_pydict()["path"]
    for p in f:
        out.setdefault(prefix + p, []).append((1, 10**9))
    return out


def n_indexed(chunks: dict[str, list[tuple[int, int]]], targets) -> int:
    n = 0
    for t in targets:
        for p, spans in chunks.items():
            if path_matches(p, t[0]) and any(covers(p, a, b, t) for a, b in spans):
                n += 1
                break
    return n


# Repos whose benchmark root is a directory of symbolic links: RxSwift's
# `Sources/RxSwift` links each file to `../../RxSwift/<name>.swift`, and the
# annotations name the links' paths, so semble's published run (0.791 there)
# read the files through them. Indexed with `--follow-symlinks` (as `rg -L`);
# every other repo is indexed as ripgrep lists it, links skipped.
FOLLOW_SYMLINKS = {"rxswift"}


def index_repo(a, name: str, root: Path) -> tuple[Path, float, dict]:
    repo_dir = a.work / "snapshots" / name
    saved = repo_dir / "eval-index.json"
    if a.reuse and saved.is_file() and (repo_dir / "latest").is_file():
        # The snapshot of an earlier run with the same --work (ranking-only
        # experiments: the server changed, the builder did not).
        snap = repo_dir / (repo_dir / "latest").read_text().strip()
        if (snap / "manifest.json").is_file():
            d = json.loads(saved.read_text())
            return snap, d["wall"], d["summary"]
    cmd = [str(a.indexer), "index", str(root), "--out", str(a.work / "snapshots"), "--name", name, "--json",
           "--threads", str(a.threads)]
    if name in FOLLOW_SYMLINKS:
        cmd.append("--follow-symlinks")
    if not a.embeddings:
        cmd.append("--no-embeddings")
    else:
        # Cold: no vector is taken from the persistent embedding cache, so the
        # index time is what a first index of the repo costs.
        cmd += ["--embedding-cache", "none"]
        if a.model:
            cmd += ["--model", a.model]
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"code-indexer failed (exit {p.returncode}): {shlex.join(cmd)}")
    summary = json.loads(p.stdout)
    saved.write_text(json.dumps({"wall": wall, "summary": summary}))
    return Path(summary["snapshot_dir"]), wall, summary


# --------------------------------------------------------------------------
# Search through MCP


async def run_queries(a, snap: Path, repo: str, queries: list[str], modes: list[str]) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    out: dict = {}
    params = StdioServerParameters(command=str(a.server), args=["serve", "--index", str(snap)], env=dict(os.environ))
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()

            async def call(q: str, mode: str):
                args = {"query": q, "mode": mode, "limit": K, "repo": repo}
                t0 = time.perf_counter()
                res = await s.call_tool("search_code", args, read_timeout_seconds=a.timeout)
                ms = (time.perf_counter() - t0) * 1000
                if res.is_error:
                    raise RuntimeError(f"search_code failed ({mode}, {q!r}): "
                                       f"{res.content[0].text[:300] if res.content else ''}")
                sc = res.structured_content or {}
                return ms, sc

            for mode in modes:
                await call("open a file and read it line by line", mode)  # warm-up, untimed
                rows = []
                for q in queries:
                    ms, sc = await call(q, mode)
                    rows.append({"ms": ms, "ran_as": sc.get("mode"),
                                 "results": [(x.get("path", ""), int(x.get("line") or 0), int(x.get("end_line") or 0))
                                             for x in sc.get("results", [])[:K]]})
                out[mode] = rows
    return out


# --------------------------------------------------------------------------
# Report


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def f3(x) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def git_head(d: Path) -> str:
    try:
        return subprocess.check_output(["git", "-C", str(d), "rev-parse", "HEAD"], text=True).strip()
    except Exception:
        return "unknown"


def report(a, specs, runs: list[dict], skipped: list[tuple[str, str]], published: dict, cmdline: str) -> str:
    modes = [m for m in ("keyword", "hybrid", "semantic") if any(m in r["modes"] for r in runs)]
    pub_methods = published.get("methods", {})
    L = []
    L.append("# semble's benchmark on `search_code` (bench/eval_semble.py)\n")
    L.append(f"- date: {dt.date.today().isoformat()}")
    L.append(f"- our commit: {git_head(ROOT)}")
    src = published.get("source", {})
    default_dir = a.semble_dir.resolve() == (ROOT / "bench/data/semble").resolve()
    note = src.get("note", "see its README") if default_dir else f"origin and revisions: {a.semble_dir}/README.md"
    L.append(f"- their data: {a.semble_dir} ({note})")
    L.append(f"- command: `{cmdline}`")
    L.append(f"- index: `code-indexer index <checkout>/<benchmark_root> --json --threads {a.threads}"
             f"{'' if a.embeddings else ' --no-embeddings'}`; search: `search_code` limit {K}, modes {', '.join(modes)}")
    L.append(f"- repos run: {len(runs)} of {len(specs)} in repos.json ({', '.join(r['repo'] for r in runs)})")
    if skipped:
        L.append("- skipped: " + "; ".join(f"{n} ({why})" for n, why in skipped))
    L.append("")
    L.append("Metric: NDCG@10 with binary gains; targets = relevant + secondary (files, or line spans); a result "
             "counts for a target when its path matches and its lines overlap the span; each target counts once, "
             "at its first covering result; ideal = min(10, targets present in the index). Repo score = mean over "
             "its queries; overall and per-language = mean over repos (semble's run_benchmark.py); per category "
             "= mean over queries. Published columns: per-repo numbers from semble's results files "
             "(sources below), averaged the same way over the same repos.\n")

    # per repo
    head = ["repo", "language", "queries", "files", "index s"] + [f"ours {m}" for m in modes] + \
        list(pub_methods)
    L.append("## Per repo (NDCG@10)\n")
    L.append("| " + " | ".join(head) + " |")
    L.append("|" + "|".join("---" if i < 2 else "---:" for i in range(len(head))) + "|")
    for r in runs:
        row = [r["repo"], r["language"], str(len(r["queries"])), str(r["files"]), f"{r['index_s']:.2f}"]
        row += [f3(r["modes"][m]["ndcg"]) if m in r["modes"] else "—" for m in modes]
        row += [f3(pub_methods[pm].get("repos", {}).get(r["repo"])) for pm in pub_methods]
        L.append("| " + " | ".join(row) + " |")

    def pub_avg(pm, repos):
        vals = [pub_methods[pm].get("repos", {}).get(x) for x in repos]
        return None if not vals or any(v is None for v in vals) else mean(vals)

    L.append("\n## Overall\n")
    head = ["", *[f"ours {m}" for m in modes], *pub_methods]
    L.append("| " + " | ".join(head) + " |")
    L.append("|---|" + "---:|" * (len(head) - 1))
    names = [r["repo"] for r in runs]
    L.append("| mean over repos | " + " | ".join(
        [f3(mean(r["modes"][m]["ndcg"] for r in runs if m in r["modes"])) for m in modes] +
        [f3(pub_avg(pm, names)) for pm in pub_methods]) + " |")
    # When some repos have no published number, a row over those that do
    # keeps the comparison on the same repos.
    with_pub = [r for r in runs if pub_methods and all(
        pub_methods[pm].get("repos", {}).get(r["repo"]) is not None for pm in pub_methods)]
    if with_pub and len(with_pub) < len(runs):
        L.append(f"| mean over the {len(with_pub)} repos with published numbers | " + " | ".join(
            [f3(mean(r["modes"][m]["ndcg"] for r in with_pub if m in r["modes"])) for m in modes] +
            [f3(pub_avg(pm, [r["repo"] for r in with_pub])) for pm in pub_methods]) + " |")
    L.append("| mean over queries | " + " | ".join(
        [f3(mean(x for r in runs if m in r["modes"] for x in r["modes"][m]["per_query"])) for m in modes] +
        ["—" for _ in pub_methods]) + " |")
    L.append("| index time, mean per repo | " + " | ".join(
        [f"{mean(r['index_s'] for r in runs):.2f} s" for _ in modes] + ["—" for _ in pub_methods]) + " |")

    L.append("\n## By language (mean over repos)\n")
    L.append("| language | repos | " + " | ".join([f"ours {m}" for m in modes] + list(pub_methods)) + " |")
    L.append("|---|---:|" + "---:|" * (len(modes) + len(pub_methods)))
    for lang in sorted({r["language"] for r in runs}):
        rs = [r for r in runs if r["language"] == lang]
        L.append(f"| {lang} | {len(rs)} | " + " | ".join(
            [f3(mean(r["modes"][m]["ndcg"] for r in rs if m in r["modes"])) for m in modes] +
            [f3(pub_avg(pm, [r["repo"] for r in rs])) for pm in pub_methods]) + " |")

    L.append("\n## By category (mean over queries)\n")
    L.append("| category | queries | " + " | ".join(f"ours {m}" for m in modes) + " |")
    L.append("|---|---:|" + "---:|" * len(modes))
    for cat in sorted({q["category"] for r in runs for q in r["queries"]}):
        n = sum(1 for r in runs for q in r["queries"] if q["category"] == cat)
        vals = []
        for m in modes:
            vals.append(f3(mean(x for r in runs if m in r["modes"]
                                for q, x in zip(r["queries"], r["modes"][m]["per_query"]) if q["category"] == cat)))
        L.append(f"| {cat} | {n} | " + " | ".join(vals) + " |")

    L.append("\n## Misses (ours, first mode, NDCG@10 < 1)\n")
    m0 = modes[0] if modes else None
    for r in runs:
        if m0 not in r["modes"]:
            continue
        for q, x, top in zip(r["queries"], r["modes"][m0]["per_query"], r["modes"][m0]["top"]):
            if x < 1:
                want = ", ".join(t[0] if t[1] is None else f"{t[0]}:{t[1]}-{t[2]}" for t in q["targets"])
                L.append(f"- {r['repo']} [{q['category']}] {x:.3f} `{q['query']}` want {want}; "
                         f"top3 {', '.join(f'{p}:{s}-{e}' for p, s, e in top[:3])}")

    L.append("\n## Published numbers: sources\n")
    for pm, d in pub_methods.items():
        L.append(f"- {pm}: {d.get('source', '?')}")
    for line in published.get("notes", []):
        L.append(f"- {line}")
    L.append("")
    return "\n".join(L)


# --------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--semble-dir", type=Path, default=ROOT / "bench/data/semble")
    ap.add_argument("--repos-dir", type=Path, required=True, help="<dir>/<name> = checkout at the pinned revision")
    ap.add_argument("--repo", action="append", default=[], help="repo name (repeatable; default: all available)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/eval-semble"))
    ap.add_argument("--embeddings", action="store_true", help="index with vectors (then hybrid is run too)")
    ap.add_argument("--model", help="with --embeddings: code-indexer's --model (default: its default)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--semantic", action="store_true", help="with --embeddings: run semantic mode too")
    ap.add_argument("--reuse", action="store_true",
                    help="use the snapshot a run with the same --work left (its index time too) instead of indexing")
    ap.add_argument("--modes", help="comma-separated subset of the modes to run (ranking experiments)")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--published", type=Path, default=ROOT / "bench/data/semble/published.json")
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/eval-semble.md")
    ap.add_argument("--json-out", type=Path, default=None, help="per-query results as JSON")
    home = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/code-index/target")) / "release"
    ap.add_argument("--indexer", type=Path, default=home / "code-indexer")
    ap.add_argument("--server", type=Path, default=home / "code-index-mcp")
    a = ap.parse_args()
    cmdline = "python3 bench/eval_semble.py " + shlex.join(sys.argv[1:])

    specs, tasks = load(a.semble_dir)
    published = json.loads(a.published.read_text()) if a.published.exists() else {}
    wanted = a.repo or list(specs)
    skipped: list[tuple[str, str]] = []
    todo = []
    for name in wanted:
        if name not in specs:
            skipped.append((name, "not in repos.json"))
        elif name not in tasks:
            skipped.append((name, "no annotations in --semble-dir"))
        elif not (a.repos_dir / name).is_dir():
            skipped.append((name, "no checkout in --repos-dir"))
        else:
            todo.append(name)
    a.work.mkdir(parents=True, exist_ok=True)
    runs = []
    for name in todo:
        spec = specs[name]
        root_rel = spec.get("benchmark_root") or ""
        root = a.repos_dir / name / root_rel
        # the path the annotations give the indexed root (held-out set: a
        # checkout whose layout moved, bench/data/semble-heldout/README.md)
        ann_rel = spec["annotation_root"] if "annotation_root" in spec else root_rel
        prefix = (ann_rel.rstrip("/") + "/") if ann_rel else ""
        try:
            snap, wall, summary = index_repo(a, name, root)
        except Exception as e:  # noqa: BLE001
            skipped.append((name, f"index failed: {e}"))
            continue
        vec = (snap / "vectors.faiss").exists()
        modes = ["keyword"] + (["hybrid"] if vec else []) + (["semantic"] if vec and a.semantic else [])
        if a.modes:
            modes = [m for m in modes if m in a.modes.split(",")]
        chunks = snapshot_chunks(snap, prefix)
        qs = tasks[name]
        res = asyncio.run(run_queries(a, snap, name, [q["query"] for q in qs], modes))
        run = {"repo": name, "language": spec["language"], "queries": qs, "index_s": wall,
               "files": summary.get("files"), "modes": {}}
        for m, rows in res.items():
            per_q = []
            for q, row in zip(qs, rows):
                results = [(prefix + p, s, e) for p, s, e in row["results"]]
                per_q.append(ndcg(results, q["targets"], n_indexed(chunks, q["targets"])))
            run["modes"][m] = {"ndcg": mean(per_q), "per_query": per_q,
                               "top": [[(p, s, e) for p, s, e in row["results"]] for row in rows],
                               "ran_as": sorted({str(row["ran_as"]) for row in rows}),
                               "p50_ms": sorted(r["ms"] for r in rows)[len(rows) // 2]}
        log(f"{name:<20} {spec['language']:<11} files={summary.get('files')} index={wall:.2f}s " +
            " ".join(f"{m}={run['modes'][m]['ndcg']:.3f} (p50 {run['modes'][m]['p50_ms']:.1f} ms)" for m in run["modes"]))
        runs.append(run)
    if not runs:
        raise SystemExit("no repo was run: " + "; ".join(f"{n}: {w}" for n, w in skipped))
    md = report(a, specs, runs, skipped, published, cmdline)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(md)
    if a.json_out:
        a.json_out.write_text(json.dumps(runs, indent=1, default=list))
    print(md)


if __name__ == "__main__":
    main()
