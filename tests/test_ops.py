"""Operations: the metrics the server and the hooks record, the `metrics`
CLI over a generated log of 10,000+ events (checked against the same sums
computed here), rotation of metrics and logs by size, `cache stats` and
`invalidate`."""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from helpers import build, small_repo

TOOLS = ["grep", "search_code", "search_symbols", "find_references", "search_files"]


def ts(d: datetime) -> str:
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def nearest_rank(xs: list[float], p: float):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs), max(1, math.ceil(p * len(xs)))) - 1]


def generate(path: Path, n: int, now: datetime) -> list[dict]:
    rng = random.Random(7)
    events = []
    for i in range(n):
        # Ages from 0 to 20 days, never within an hour of the 7-day edge.
        age = rng.uniform(0, 20 * 24)
        if abs(age - 7 * 24) < 1:
            age += 2
        t = now - timedelta(hours=age)
        kind = rng.choices(["search", "file_read", "context_inject", "tool_call"], [70, 15, 10, 5])[0]
        e = {"ts": ts(t), "event": kind}
        if kind == "search":
            results = rng.choice([0, 0, 1, 3, 10, 25])
            e.update(tool=rng.choice(TOOLS), query=f"q{rng.randrange(40)}", query_type="x", results=results,
                     zero_results=results == 0, latency_ms=round(rng.lognormvariate(2, 1), 2),
                     error=None if rng.random() > 0.02 else "INVALID_PATTERN")
            if e["error"]:
                e["zero_results"] = False
        elif kind == "file_read":
            e.update(path=f"f{rng.randrange(30)}.py", was_suggested=rng.random() < 0.3)
        elif kind == "context_inject":
            e.update(path="a.py", suggestions=3, suggested=["b.py"])
        else:
            e.update(tool="health", latency_ms=1.0)
        events.append(e)
    rng.shuffle(events)
    path.write_text("".join(json.dumps(e) + "\n" for e in events) + "not json\n")
    return events


def metrics(indexer, f: Path, *args) -> dict:
    p = subprocess.run([str(indexer), "metrics", "--file", str(f), "--json", *args], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_metrics_cli_on_a_generated_log(indexer, tmp_path):
    now = datetime.now(timezone.utc)
    f = tmp_path / "events.jsonl"
    events = generate(f, 12000, now)
    week = [e for e in events if datetime.fromisoformat(e["ts"].replace("Z", "+00:00")) >= now - timedelta(days=7)]
    s = metrics(indexer, f, "--last", "7d", "--limit", "5")
    searches = [e for e in week if e["event"] == "search"]
    assert s["events"] == len(week)
    assert s["searches"] == len(searches)
    assert s["zero_results"] == sum(e["zero_results"] for e in searches)
    assert s["errors"] == sum(e["error"] is not None for e in searches)
    assert s["p50_ms"] == nearest_rank([e["latency_ms"] for e in searches], 0.5)
    assert s["p95_ms"] == nearest_rank([e["latency_ms"] for e in searches], 0.95)
    for tool in TOOLS:
        mine = [e for e in searches if e["tool"] == tool]
        assert s["by_tool"][tool]["calls"] == len(mine)
        assert s["by_tool"][tool]["p95_ms"] == nearest_rank([e["latency_ms"] for e in mine], 0.95)
    reads = [e for e in week if e["event"] == "file_read"]
    assert (s["file_reads"], s["suggested_reads"]) == (len(reads), sum(e["was_suggested"] for e in reads))
    counts: dict = {}
    for e in searches:
        counts[(e["tool"], e["query"])] = counts.get((e["tool"], e["query"]), 0) + 1
    top = sorted(counts.values(), reverse=True)[:5]
    assert [q["count"] for q in s["top_queries"]] == top

    z = metrics(indexer, f, "--zero-results", "--last", "30d", "--limit", "1000")
    zero = [e for e in events if e["event"] == "search" and e["zero_results"]]
    assert z["zero_results"] == len(zero) and sum(q["count"] for q in z["queries"]) == len(zero)

    q = metrics(indexer, f, "--query", "Q1", "--last", "30d", "--limit", "3")
    hits = [e for e in events if e["event"] == "search" and "q1" in e["query"]]
    assert q["matches"] == len(hits) and len(q["events"]) == 3
    assert [e["ts"] for e in q["events"]] == sorted((e["ts"] for e in hits), reverse=True)[:3]

    cut = now - timedelta(days=10)
    c = metrics(indexer, f, "--compare", "--before", cut.strftime("%Y-%m-%dT%H:%M"), "--after", cut.strftime("%Y-%m-%dT%H:%M"))
    cut_s = ts(cut.replace(second=0, microsecond=0))
    before = [e for e in events if e["event"] == "search" and e["ts"] < cut_s]
    after = [e for e in events if e["event"] == "search" and e["ts"] >= cut_s]
    assert (c["before"]["searches"], c["after"]["searches"]) == (len(before), len(after))
    assert c["before"]["p50_ms"] == nearest_rank([e["latency_ms"] for e in before], 0.5)

    # The table form, and coded errors.
    p = subprocess.run([str(indexer), "metrics", "--file", str(f), "--last", "30d"], capture_output=True, text=True)
    assert p.returncode == 0 and "zero-result" in p.stdout and "1 unreadable line" in p.stderr
    p = subprocess.run([str(indexer), "metrics", "--file", str(tmp_path / "none.jsonl")], capture_output=True, text=True)
    assert p.returncode == 2 and "E_NO_METRICS" in p.stderr and "hint:" in p.stderr
    p = subprocess.run([str(indexer), "metrics", "--file", str(f), "--last", "7x"], capture_output=True, text=True)
    assert p.returncode == 2 and "no span" in p.stderr


def test_server_and_hooks_record_metrics_and_rotate_them_and_the_logs(indexer, tmp_path):
    server = indexer.parent / "code-index-mcp"
    repo = small_repo(tmp_path / "repo", {"a.py": "import b\n\ndef alpha():\n    return b.beta()\n",
                                          "b.py": "def beta():\n    return 2\n"})
    out = tmp_path / "snaps"
    build(indexer, repo, out, "--no-embeddings")
    mfile = tmp_path / "m" / "events.jsonl"
    cfg = tmp_path / "config.yaml"
    cfg.write_text("logging:\n  level: debug\n")
    env = dict(os.environ, CODE_INDEX_METRICS=str(mfile), CODE_INDEX_CONFIG=str(cfg),
               CODE_INDEX_LOG_DIR=str(tmp_path / "logs"), CODE_INDEX_SNAPSHOTS=str(out))

    # The Read hook suggests b.py for a.py; the read of b.py then counts as suggested.
    hook = {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": str(repo / "a.py")}}
    p = subprocess.run([str(indexer), "suggest-context"], input=json.dumps(hook), capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "b.py" in p.stderr, p.stderr
    hook["tool_input"]["file_path"] = str(repo / "b.py")
    subprocess.run([str(indexer), "suggest-context"], input=json.dumps(hook), capture_output=True, text=True, env=env, check=True)

    async def session(calls):
        params = StdioServerParameters(command=str(server), args=["serve", "--index", str(out / "repo")], env=env)
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                for name, args in calls:
                    await s.call_tool(name, args)

    asyncio.run(session([("grep", {"pattern": "def beta"}), ("grep", {"pattern": "def beta"}),
                         ("search_symbols", {"query": "no_such_symbol_anywhere"}), ("grep", {"pattern": "("}),
                         ("read_file", {"path": "a.py"})]))
    lines = [json.loads(l) for l in mfile.read_text().splitlines()]
    assert [e["event"] for e in lines] == ["file_read", "context_inject", "file_read", "context_inject",
                                           "search", "search", "search", "search", "file_read"], lines
    assert lines[0]["path"] == "a.py" and lines[0]["was_suggested"] is False
    assert "b.py" in lines[1]["suggested"] and lines[1]["suggestions"] >= 1
    assert lines[2]["path"] == "b.py" and lines[2]["was_suggested"] is True
    g1, g2, sym, bad, read = lines[4:]
    assert (g1["tool"], g1["query"], g1["query_type"], g1["results"], g1["zero_results"]) == ("grep", "def beta", "regex", 1, False)
    assert g1["cache_hit"] is False and g2["cache_hit"] is True and g1["latency_ms"] >= 0
    assert sym["zero_results"] is True and sym["results"] == 0
    assert bad["error"] == "INVALID_PATTERN" and bad["zero_results"] is False
    # a.py imports b.py: the hook on b.py suggested it.
    assert read["source"] == "read_file" and read["path"] == "a.py" and read["was_suggested"] is True
    # No file content in the metrics.
    assert "return 2" not in mfile.read_text()

    # Rotation by size, of metrics and logs, per the settings file.
    cfg.write_text("logging:\n  level: debug\n  max_size_mb: 0.002\n  max_files: 2\nmetrics: {max_size_mb: 0.004, max_files: 3}\n")
    asyncio.run(session([("search_files", {"pattern": f"a{i}"}) for i in range(80)]))
    files = sorted(p.name for p in mfile.parent.iterdir() if p.name.startswith("events.jsonl") and not p.name.endswith(".lock"))
    assert files == ["events.jsonl", "events.jsonl.1", "events.jsonl.2", "events.jsonl.3"], files
    lines = []
    for name in ["events.jsonl.3", "events.jsonl.2", "events.jsonl.1", "events.jsonl"]:
        p = mfile.parent / name
        assert p.stat().st_size <= 0.004 * 1024 * 1024 + 500
        lines += [json.loads(l) for l in p.read_text().splitlines()]
    patterns = [e["query"] for e in lines if e["event"] == "search"]
    # The newest events survive, in order, none lost between the kept files.
    assert patterns[-1] == "a79" and patterns == [f"a{i}" for i in range(80 - len(patterns), 80)], patterns
    s = metrics(indexer, mfile, "--last", "1d")
    assert s["by_tool"]["search_files"]["zero_results"] == len(patterns)

    logs = sorted(p.name for p in (tmp_path / "logs").iterdir() if not p.name.endswith(".lock"))
    assert "code-index-mcp.log" in logs and "code-index-mcp.log.1" in logs and "code-index-mcp.log.3" not in logs, logs
    text = "".join((tmp_path / "logs" / n).read_text() for n in logs if n.startswith("code-index-mcp"))
    assert "INFO" in text
    assert all((tmp_path / "logs" / n).stat().st_size <= 0.002 * 1024 * 1024 + 1000 for n in logs)

    # A broken settings file is an error on stderr, and the server still runs.
    cfg.write_text("logging:\n  level: loud\n")
    p = subprocess.run([str(server), "grep", "--index", str(out / "repo"), "beta"], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "E_CONFIG" in p.stderr and "logging.level" in p.stderr, p.stderr


def test_cache_stats_and_invalidate(indexer, tmp_path):
    repo = small_repo(tmp_path / "repo")
    out = tmp_path / "snaps"
    env = dict(os.environ, CODE_INDEX_METRICS=str(tmp_path / "m.jsonl"), CODE_INDEX_SNAPSHOTS=str(out),
               CODE_INDEX_CACHE=str(tmp_path / "server"))
    run = lambda *a: subprocess.run([str(indexer), *a], capture_output=True, text=True, env=env)
    assert run("sync", str(repo), "--no-embeddings").returncode == 0
    (repo / "a.py").write_text("def alpha():\n    return 2\n")
    assert run("invalidate-file", str(repo / "a.py")).returncode == 0
    (tmp_path / "server" / "tables").mkdir(parents=True)
    (tmp_path / "server" / "tables" / "x.duckdb").write_bytes(b"0" * 1000)
    p = run("cache", "stats", "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["snapshots"]["repo"]["snapshots"] == 1 and s["snapshots"]["repo"]["overlays"] == 1
    assert s["table_caches"]["files"] == 1 and s["table_caches"]["bytes"] == 1000
    assert "hit rate" in run("cache", "stats").stdout
    # The metrics line measures the metrics file (and its rotations), not the
    # folder it sits in.
    (tmp_path / "unrelated.bin").write_bytes(b"0" * 2_000_000)
    m = s["metrics"]
    assert m["files"] == 1 and m["bytes"] == (tmp_path / "m.jsonl").stat().st_size, m
    # Table caches: one listing this repo, one another's, one with no list (an
    # older server's): invalidate drops this repo's and the unlisted one.
    tables = tmp_path / "server" / "tables"
    (tables / "mine.duckdb").write_bytes(b"0")
    (tables / "mine.repos").write_text("other\nrepo\n")
    (tables / "theirs.duckdb").write_bytes(b"0")
    (tables / "theirs.repos").write_text("other\n")
    p = run("invalidate", str(repo), "--json")
    assert p.returncode == 0, p.stderr
    removed = json.loads(p.stdout)["removed"]
    assert any(r.startswith("overlay:") for r in removed) and any(r.endswith("x.duckdb") for r in removed)
    assert any(r.endswith("mine.duckdb") for r in removed) and not (tables / "mine.repos").exists()
    assert (tables / "theirs.duckdb").is_file() and (tables / "theirs.repos").is_file()
    # A name with nothing to invalidate is an error naming the ones there are.
    p = run("invalidate", "nosuchrepo")
    assert p.returncode == 2 and "E_NO_SNAPSHOT" in p.stderr and "known repositories there: repo" in p.stderr, p.stderr
    assert not (out / "repo" / ".overlays").exists() or not any((out / "repo" / ".overlays").iterdir())
    assert (out / "repo" / "latest").is_file()
    # The next sync builds the edit the dropped overlay held.
    s = json.loads(run("sync", str(repo), "--json").stdout)
    assert s["action"] == "built" and s["changed_paths"] == 1


def test_no_metrics_or_logs_without_home(indexer, tmp_path):
    repo = small_repo(tmp_path / "repo", git=False)
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "CODE_INDEX_METRICS", "CODE_INDEX_LOG_DIR")}
    p = subprocess.run([str(indexer), "index", str(repo), "--out", str(tmp_path / "out"), "--no-embeddings"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # Never written relative to the working directory.
    assert not (tmp_path / ".cache").exists()
