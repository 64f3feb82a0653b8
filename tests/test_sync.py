"""`code-indexer sync` and `watch` on a git copy of the real django tree: a
sync after a commit equals a fresh full build of that commit (the same
snapshot id, so the same bytes), reads only what git says changed, clears the
overlay, and a running server moves to the new snapshot without a restart;
`diff` of the two snapshots lists exactly the symbols the commit changed;
`watch` builds on its timer, skips a locked repository and stops on SIGTERM."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from helpers import build, copy_tree, git, git_commit_all, git_init, rg_lines, small_repo

pytestmark = pytest.mark.corpus

TEXT = "django/utils/text.py"


@pytest.fixture(scope="module")
def tree(corpora, tmp_path_factory):
    root = copy_tree(corpora / "django", tmp_path_factory.mktemp("sync") / "django", ignore_git=True)
    git_init(root)
    git_commit_all(root, "base")
    return root


def sync(indexer, tree, out, *extra) -> dict:
    p = subprocess.run(
        [str(indexer), "sync", str(tree), "--index", str(out / "django"), "--no-embeddings", "--json", *extra],
        capture_output=True, text=True, timeout=600,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def symbol_keys(snap_dir: Path) -> set[tuple]:
    t = pq.read_table(snap_dir / "symbols.parquet", columns=["path", "qualified_name", "kind"]).to_pylist()
    return {(r["path"], r["qualified_name"], r["kind"]) for r in t}


def test_sync_after_a_commit_equals_a_full_build_and_the_server_follows(indexer, tree, tmp_path):
    server = indexer.parent / "code-index-mcp"
    out = tmp_path / "snaps"
    first = sync(indexer, tree, out)
    assert first["action"] == "first-build" and first["changed_paths"] is None
    again = sync(indexer, tree, out)
    assert again["action"] == "up-to-date" and again["snapshot_id"] == first["snapshot_id"]
    assert again["changed_paths"] == 0
    base_dir = out / "django" / first["snapshot_id"]

    text = (tree / TEXT).read_text()
    old_name = re.search(r"^def (\w+)\(", text, re.M).group(1)
    new_name = f"{old_name}_synced"

    async def main():
        params = StdioServerParameters(command=str(server), args=["serve", "--index", str(out / "django")])
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                # An edit, its overlay, then the commit and a sync.
                (tree / TEXT).write_text(re.sub(rf"^def {old_name}\(", f"def {new_name}(", text, count=1, flags=re.M))
                p = subprocess.run([str(indexer), "invalidate-file", str(tree / TEXT), "--index", str(out / "django")],
                                   capture_output=True, text=True)
                assert p.returncode == 0, p.stderr
                time.sleep(0.3)
                h = (await s.call_tool("health", {})).structured_content["snapshots"][0]
                assert h["overlay"]["paths"] == [TEXT]
                assert h["branch"] == "main" and h["commit"] == git(tree, "rev-parse", "HEAD")
                git_commit_all(tree, "rename")
                synced = sync(indexer, tree, out)
                assert synced["action"] == "built" and synced["previous"] == first["snapshot_id"]
                # git named the one changed file; every other file was reused unread.
                assert synced["changed_paths"] == 1 and synced["reused_files"] == synced["files"] - 1, synced
                assert f"overlay:{first['snapshot_id']}" in synced["removed"]
                assert not (out / "django" / ".overlays" / first["snapshot_id"]).exists()
                # The same server moves to the new snapshot, overlay gone.
                deadline = time.time() + 60
                while True:
                    h = (await s.call_tool("health", {})).structured_content["snapshots"][0]
                    if h["snapshot_id"] == synced["snapshot_id"] or time.time() > deadline:
                        break
                    time.sleep(0.3)
                assert h["snapshot_id"] == synced["snapshot_id"] and "overlay" not in h, h
                sym = (await s.call_tool("search_symbols", {"query": new_name})).structured_content["symbols"]
                assert [(x["path"], x["name"], x.get("overlay")) for x in sym] == [(TEXT, new_name, None)]
                gone = (await s.call_tool("search_symbols", {"query": old_name})).structured_content["symbols"]
                assert (TEXT, old_name) not in [(x["path"], x["name"]) for x in gone]
                res = await s.call_tool("grep", {"pattern": rf"def {new_name}\b|def {old_name}\b"})
                got = {(m["path"], m["line"]) for m in res.structured_content["matches"]}
                assert got == rg_lines(tree, "-S", "-e", rf"def {new_name}\b|def {old_name}\b")
                return synced

    synced = asyncio.run(main())
    # A fresh full build of the commit is the very same snapshot.
    full = build(indexer, tree, tmp_path / "full", "--no-embeddings")
    assert full.id == synced["snapshot_id"]

    # diff of the two snapshots lists exactly what the commit changed.
    d = subprocess.run([str(indexer), "diff", str(base_dir), str(out / "django"), "--json"],
                       capture_output=True, text=True, check=True)
    d = json.loads(d.stdout)["diff"]
    before, after = symbol_keys(base_dir), symbol_keys(full.dir)
    keys = lambda xs: {(x["path"], x["qualified_name"], x["kind"]) for x in xs}
    assert keys(d["symbols"]["added"]) == after - before == {(TEXT, new_name, "function")}
    assert keys(d["symbols"]["removed"]) == before - after == {(TEXT, old_name, "function")}
    assert [f["path"] for f in d["files"]["changed"]] == [TEXT] and not d["files"]["added"] and not d["files"]["removed"]

    # Uncommitted changes: built once, then up to date while unwritten;
    # the snapshot again equals a full build of the tree.
    (tree / "django" / "utils" / "sync_untracked.py").write_text("def sync_untracked():\n    return 2\n")
    s1 = sync(indexer, tree, out)
    assert s1["action"] == "built" and s1["changed_paths"] == 1
    s2 = sync(indexer, tree, out)
    assert s2["action"] == "up-to-date" and s2["snapshot_id"] == s1["snapshot_id"]
    assert build(indexer, tree, tmp_path / "full2", "--no-embeddings").id == s1["snapshot_id"]
    # Older snapshots beyond --keep are removed (keep 2: the last two).
    kept = sorted(p.name for p in (out / "django").iterdir() if (p / "manifest.json").is_file())
    assert kept == sorted([synced["snapshot_id"], s1["snapshot_id"]])


def test_watch_builds_on_its_timer_skips_a_locked_repo_and_stops_on_sigterm(indexer, tmp_path):
    repo = small_repo(tmp_path / "repo")
    out = tmp_path / "out"
    # A held lock: this round skips the repository with E_BUSY.
    (out / "repo").mkdir(parents=True)
    with open(out / "repo" / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        p = subprocess.run([str(indexer), "watch", "--repos", str(repo), "--out", str(out), "--once", "--json", "--no-embeddings"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["error"] == "E_BUSY", p.stdout
    w = subprocess.Popen([str(indexer), "watch", "--repos", str(repo), "--out", str(out), "--interval", "300ms", "--json", "--no-embeddings"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = json.loads(w.stdout.readline())
        assert first["action"] == "first-build", first
        (repo / "b.py").write_text("def beta():\n    return 2\n")
        git_commit_all(repo, "b")
        while True:
            line = json.loads(w.stdout.readline())
            if line["action"] != "up-to-date":
                break
        assert line["action"] == "built" and line["changed_paths"] == 1, line
        w.send_signal(signal.SIGTERM)
        assert w.wait(timeout=20) == 0
    finally:
        if w.poll() is None:
            w.kill()
    t = pq.read_table(out / "repo" / line["snapshot_id"] / "symbols.parquet", columns=["name"]).to_pylist()
    assert {r["name"] for r in t} == {"alpha", "beta"}


def test_sync_without_git_uses_file_stats(indexer, tmp_path):
    repo = small_repo(tmp_path / "plain", git=False)
    out = tmp_path / "out"
    run = lambda: json.loads(subprocess.run(
        [str(indexer), "sync", str(repo), "--index", str(out / "plain"), "--no-embeddings", "--json"],
        capture_output=True, text=True, check=True).stdout)
    assert run()["action"] == "first-build"
    s = run()
    assert s["action"] == "up-to-date" and s["changed_paths"] is None
    (repo / "a.py").write_text("def alpha():\n    return 10\n")
    s = run()
    assert s["action"] == "built" and s["changed_paths"] is None and s["reused_files"] == 0


def test_sync_follows_links_when_the_config_says_so(indexer, tmp_path):
    """With `follow_symlinks: true`, a file read through a link is fresh after
    `sync` when its target changes: git sees only the link, so sync hashes
    every file instead of asking git (the previous binary kept the link's old
    content)."""
    repo = tmp_path / "linked"
    (repo / "real").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "real" / "a.py").write_text("def alpha():\n    return 1\n")
    os.symlink("../real/a.py", repo / "src" / "a.py")
    (repo / ".code-index.yaml").write_text("follow_symlinks: true\n")
    git_init(repo)
    git_commit_all(repo, "initial")
    out = tmp_path / "out"
    run = lambda: json.loads(subprocess.run(
        [str(indexer), "sync", str(repo), "--index", str(out / "linked"), "--no-embeddings", "--json"],
        capture_output=True, text=True, check=True).stdout)
    assert run()["action"] == "first-build"
    (repo / "real" / "a.py").write_text("def beta():\n    return 2\n")
    s = run()
    assert s["action"] == "built" and s["changed_paths"] is None
    snap = out / "linked" / (out / "linked" / "latest").read_text().strip()
    files = {r["path"]: r["content"] for r in pq.read_table(snap / "files.parquet", columns=["path", "content"]).to_pylist()}
    assert files == {"real/a.py": "def beta():\n    return 2\n", "src/a.py": "def beta():\n    return 2\n"}
    assert ("src/a.py", "beta", "function") in symbol_keys(snap)


def test_sync_errors(indexer, tmp_path):
    p = subprocess.run([str(indexer), "sync", str(tmp_path / "missing"), "--no-embeddings"], capture_output=True, text=True)
    assert p.returncode == 2 and "E_REPO_NOT_FOUND" in p.stderr and "hint:" in p.stderr
    p = subprocess.run([str(indexer), "watch", "--interval", "0s"], capture_output=True, text=True)
    assert p.returncode == 2 and "more than zero" in p.stderr


def test_hooks_sync_the_default_branch_after_merge_and_checkout(indexer, tmp_path):
    repo = small_repo(tmp_path / "hooked")
    out = tmp_path / "out"
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    # Another tool's hook is kept.
    (hooks / "post-merge").write_text("#!/bin/sh\necho other-tool >> \"$(git rev-parse --git-dir)/other.log\"\n")
    p = subprocess.run([str(indexer), "sync", str(repo), "--index", str(out / "hooked"), "--no-embeddings", "--json"],
                       capture_output=True, text=True, check=True)
    first = json.loads(p.stdout)
    p = subprocess.run([str(indexer), "hooks", "install", str(repo), "--index", str(out / "hooked"), "--json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    done = json.loads(p.stdout)
    assert done["default_branch"] == "main" and len(done["hooks"]) == 2
    # Installing twice leaves one block.
    subprocess.run([str(indexer), "hooks", "install", str(repo), "--index", str(out / "hooked")], check=True, capture_output=True)
    text = (hooks / "post-merge").read_text()
    assert text.count(">>> code-index >>>") == 1 and "other-tool" in text

    def latest_after(prev: str) -> str:
        deadline = time.time() + 60
        while time.time() < deadline:
            cur = (out / "hooked" / "latest").read_text().strip()
            if cur != prev:
                return cur
            time.sleep(0.2)
        raise AssertionError("the hook did not sync: " + (repo / ".git" / "code-index-sync.log").read_text())

    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "b.py").write_text("def beta():\n    return 2\n")
    git_commit_all(repo, "b")
    time.sleep(1)
    # Checking out a branch other than the default one syncs nothing.
    assert (out / "hooked" / "latest").read_text().strip() == first["snapshot_id"]
    git(repo, "checkout", "-q", "main")
    (repo / "c.py").write_text("def gamma():\n    return 3\n")
    git_commit_all(repo, "c")
    git(repo, "merge", "-q", "--no-edit", "feature")
    merged = latest_after(first["snapshot_id"])
    deadline = time.time() + 60
    while time.time() < deadline:
        merged = (out / "hooked" / "latest").read_text().strip()
        names = {r["name"] for r in pq.read_table(out / "hooked" / merged / "symbols.parquet", columns=["name"]).to_pylist()}
        if names == {"alpha", "beta", "gamma"}:
            break
        time.sleep(0.3)
    assert names == {"alpha", "beta", "gamma"}
    assert (repo / ".git" / "other.log").read_text().strip() == "other-tool"
    subprocess.run([str(indexer), "hooks", "uninstall", str(repo)], check=True, capture_output=True)
    assert ">>> code-index" not in (hooks / "post-merge").read_text() and not (hooks / "post-checkout").exists()
    p = subprocess.run([str(indexer), "hooks", "install", str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 2 and "E_NOT_GIT" in p.stderr


def test_a_table_cache_built_under_an_overlay_keeps_the_bases_rows(indexer, tmp_path):
    # A server started while an overlay exists builds the bases' table cache;
    # a later start without the overlay reuses it and must find every row.
    server = indexer.parent / "code-index-mcp"
    repo = small_repo(tmp_path / "repo")
    out = tmp_path / "out"
    build(indexer, repo, out, "--no-embeddings")
    (repo / "a.py").write_text("def alpha():\n    return 1\n\n\ndef alpha_two():\n    return 2\n")
    subprocess.run([str(indexer), "invalidate-file", str(repo / "a.py"), "--index", str(out / "repo")], check=True, capture_output=True)
    env = dict(os.environ, CODE_INDEX_CACHE=str(tmp_path / "cache"))
    count = lambda: json.loads(subprocess.run(
        [str(server), "sql", "--index", str(out / "repo"), "--json", "SELECT count(*) AS n FROM symbols WHERE path = 'a.py'"],
        capture_output=True, text=True, env=env, check=True).stdout)["rows"]
    assert count() == [[2]]
    shutil.rmtree(out / "repo" / ".overlays")
    assert count() == [[1]]
    # Each table cache lists the repositories it holds, so `invalidate <repo>`
    # can drop only that repository's.
    lists = list((tmp_path / "cache" / "tables").glob("*.repos"))
    assert lists and all(p.read_text() == "repo\n" and p.with_suffix(".duckdb").is_file() for p in lists), lists
    p = subprocess.run([str(indexer), "invalidate", "repo", "--index", str(out / "repo"), "--json"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert not list((tmp_path / "cache" / "tables").glob("*.duckdb"))
