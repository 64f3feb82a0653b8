"""Overlays: `code-indexer invalidate-file` keeps a served snapshot in step with
the files an agent edits, on a copy of the real django tree.

A server is started on the snapshot, the tree is edited (a function renamed and
one added, a file deleted, a file added), `invalidate-file` runs — once driven
by the JSON a Claude Code PostToolUse hook receives — and the same server,
without a restart, answers from the edited text: grep equals ripgrep over the
edited tree, the symbol tools see the new names and not the old, the deleted
file is gone, results from edited files say so, and `health` lists the overlay.
The overlay's rows equal those of a full build of the edited tree, and the
snapshot's bytes never change."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from helpers import build, copy_tree, git_init, rg_lines, sha256_file

pytestmark = pytest.mark.corpus

TEXT = "django/utils/text.py"
DELETED = "django/utils/baseconv.py"
ADDED = "django/utils/overlay_added.py"


@pytest.fixture(scope="module")
def tree(corpora, tmp_path_factory):
    root = copy_tree(corpora / "django", tmp_path_factory.mktemp("overlay") / "django", ignore_git=True)
    git_init(root)
    return root


def rows(path: Path, table: str, paths: set[str], path_col: str, drop: tuple[str, ...] = ()) -> list[tuple]:
    t = pq.read_table(path / f"{table}.parquet").to_pylist()
    keep = [r for r in t if r[path_col] in paths]
    return sorted((tuple((k, v) for k, v in r.items() if k not in drop) for r in keep), key=repr)


def test_overlay_follows_edits_without_restart(indexer, tree, tmp_path):
    server = indexer.parent / "code-index-mcp"
    out = tmp_path / "snaps"
    base = build(indexer, tree, out, "--no-embeddings")
    base_hashes = {p.name: sha256_file(p) for p in base.dir.iterdir()}
    assert (tree / DELETED).is_file() and (tree / TEXT).is_file()
    text = (tree / TEXT).read_text()
    old_name = re.search(r"^def (\w+)\(", text, re.M).group(1)
    new_name = f"{old_name}_renamed_for_overlay"
    env = dict(os.environ, CODE_INDEX_SNAPSHOTS=str(out))

    def edit_and_invalidate():
        (tree / TEXT).write_text(
            re.sub(rf"^def {old_name}\(", f"def {new_name}(", text, count=1, flags=re.M)
            + '\n\ndef overlay_probe_wrap(value):\n    """Wrap a value for the overlay test."""\n    return value\n'
        )
        (tree / DELETED).unlink()
        (tree / ADDED).write_text(
            "class OverlayAdded:\n    def overlay_added_method(self):\n        return overlay_probe_wrap(1)\n"
        )
        # As Claude Code's PostToolUse hook on Edit calls it: the JSON on stdin,
        # the snapshot found through CODE_INDEX_SNAPSHOTS.
        hook = {"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(tree / TEXT)}}
        p = subprocess.run([str(indexer), "invalidate-file"], input=json.dumps(hook), capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stderr
        assert "overlay" in p.stdout, p.stdout
        p = subprocess.run(
            [str(indexer), "invalidate-file", str(tree / DELETED), str(tree / ADDED), "--index", str(out / "django"), "--json"],
            capture_output=True,
            text=True,
        )
        assert p.returncode == 0, p.stderr
        (done,) = json.loads(p.stdout)
        # The second call keeps the first call's path.
        assert done["replaces"] == sorted([TEXT, DELETED, ADDED]), done
        assert done["files"] == 2 and done["base"] == base.id
        return Path(done["overlay_dir"])

    async def main():
        params = StdioServerParameters(command=str(server), args=["serve", "--index", str(out / "django")])
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                before = await s.call_tool("search_symbols", {"query": old_name})
                assert (TEXT, old_name) in [(x["path"], x["name"]) for x in before.structured_content["symbols"]]
                overlay_dir = edit_and_invalidate()
                time.sleep(0.3)
                got = {}
                for pat in [rf"def {old_name}\b", r"overlay_probe_wrap", r"^class \w+", r"def \w+\(value"]:
                    matches, cursor = [], None
                    while True:
                        res = await s.call_tool("grep", {"pattern": pat, **({"cursor": cursor} if cursor else {})})
                        matches += res.structured_content["matches"]
                        cursor = res.structured_content.get("next_cursor")
                        if not cursor:
                            break
                    got[pat] = {"matches": matches}
                    assert len(matches) == len({(m["path"], m["line"]) for m in matches}), pat
                    assert {(m["path"], m["line"]) for m in matches} == rg_lines(tree, "-S", "-e", pat), pat
                probe = got["overlay_probe_wrap"]
                assert all(m.get("overlay") is True for m in probe["matches"]), probe
                assert "invalidate-file" in (await s.call_tool("grep", {"pattern": "overlay_probe_wrap"})).content[0].text
                # Results from files the overlay does not touch are not marked.
                assert any(not m.get("overlay") for m in got[r"^class \w+"]["matches"])

                deleted = await s.call_tool("read_file", {"path": DELETED})
                assert deleted.is_error and deleted.structured_content["code"] == "NOT_FOUND"
                files = await s.call_tool("search_files", {"pattern": "baseconv"})
                assert not files.structured_content["files"], files.structured_content
                added = await s.call_tool("read_file", {"path": ADDED})
                assert "overlay_added_method" in added.content[0].text and added.structured_content.get("overlay") is True

                sym = await s.call_tool("search_symbols", {"query": new_name})
                assert [(x["path"], x["name"], x.get("overlay")) for x in sym.structured_content["symbols"]] == [(TEXT, new_name, True)]
                gone = await s.call_tool("search_symbols", {"query": old_name})
                assert (TEXT, old_name) not in [(x["path"], x["name"]) for x in gone.structured_content["symbols"]]
                defs = await s.call_tool("find_definitions", {"symbol": "OverlayAdded"})
                assert [d["path"] for d in defs.structured_content["symbols"]] == [ADDED], defs.structured_content
                code = await s.call_tool("search_code", {"query": "overlay_added_method", "mode": "keyword"})
                assert code.structured_content["results"][0]["path"] == ADDED, code.structured_content

                ch = (await s.call_tool("changes", {})).structured_content
                (rc,) = ch["repos"]
                assert (rc["files_added"], rc["files_removed"], rc["files_changed"]) == ([ADDED], [DELETED], [TEXT])
                by = {(x["change"], x["qualified_name"]): x for x in rc["symbols"]}
                assert ("added", new_name) in by and ("removed", old_name) in by, sorted(by)
                # The new function's caller (in the added file) is named.
                probe = by[("added", "overlay_probe_wrap")]
                assert [(u["path"], u["enclosing_symbol"]) for u in probe["used_by"]] == [(ADDED, "OverlayAdded.overlay_added_method")]

                health = (await s.call_tool("health", {})).structured_content
                (snap,) = health["snapshots"]
                assert snap["snapshot_id"] == base.id
                assert snap["overlay"]["overlay_id"] == overlay_dir.name
                assert snap["overlay"]["paths"] == sorted([TEXT, DELETED, ADDED])
                return overlay_dir

    overlay_dir = asyncio.run(main())

    # The snapshot is untouched; the overlay is a verified snapshot directory
    # beside it, naming its base.
    assert {p.name: sha256_file(p) for p in base.dir.iterdir()} == base_hashes
    om = json.loads((overlay_dir / "manifest.json").read_text())
    assert om["overlay"] == {"base": base.id, "replaces": sorted([TEXT, DELETED, ADDED])}
    for f in om["files"]:
        assert sha256_file(overlay_dir / f["name"]) == f["sha256"]

    # The overlay's rows are those of a full build of the edited tree.
    full = build(indexer, tree, tmp_path / "full", "--no-embeddings")
    paths = {TEXT, ADDED}
    for table, col, drop in [
        ("files", "path", ()),
        ("chunks", "path", ()),
        ("symbols", "path", ("symbol_id", "parent_id")),
        ("references", "path", ()),
        ("edges", "src_path", ("src_symbol_id", "dst_symbol_id", "dst_path", "resolved")),
    ]:
        assert rows(overlay_dir, table, paths, col, drop) == rows(full.dir, table, paths, col, drop), table

    # `diff` of the snapshot and its overlay, against the two full builds' tables.
    d = json.loads(subprocess.run([str(indexer), "diff", str(out / "django"), "--json"], capture_output=True, text=True, check=True).stdout)
    assert d["old"] == base.id and d["new"] == overlay_dir.name
    f = d["diff"]["files"]
    assert ([x["path"] for x in f["added"]], [x["path"] for x in f["removed"]], [x["path"] for x in f["changed"]]) == ([ADDED], [DELETED], [TEXT])
    every = {TEXT, DELETED, ADDED}

    def keys(snap_dir):
        t = pq.read_table(snap_dir / "symbols.parquet", columns=["path", "qualified_name", "kind"]).to_pylist()
        return {(r["path"], r["qualified_name"], r["kind"]) for r in t if r["path"] in every}

    before, after = keys(base.dir), keys(full.dir)
    sym = d["diff"]["symbols"]
    as_keys = lambda xs: {(x["path"], x["qualified_name"], x["kind"]) for x in xs}
    assert as_keys(sym["added"]) == after - before
    assert as_keys(sym["removed"]) == before - after
    assert (TEXT, new_name, "function") in as_keys(sym["added"]) and (TEXT, old_name, "function") in as_keys(sym["removed"])
    # The text form, for a terminal.
    t = subprocess.run([str(indexer), "diff", str(out / "django")], capture_output=True, text=True, check=True).stdout
    assert f"+ {ADDED}" in t and f"- {DELETED}" in t and f"~ {TEXT}" in t and "symbols" in t


def test_invalidate_file_errors(indexer, tmp_path):
    # Outside any repository: a coded error; from a hook, silence.
    lone = tmp_path / "lone.py"
    lone.write_text("x = 1\n")
    p = subprocess.run([str(indexer), "invalidate-file", str(lone)], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2 and "E_NO_SNAPSHOT" in p.stderr and "hint:" in p.stderr, p.stderr
    hook = json.dumps({"tool_input": {"file_path": str(lone)}})
    p = subprocess.run([str(indexer), "invalidate-file"], input=hook, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # A repository that was never indexed.
    repo = tmp_path / "repo"
    repo.mkdir()
    git_init(repo)
    (repo / "a.py").write_text("def a():\n    return 1\n")
    env = dict(os.environ, CODE_INDEX_SNAPSHOTS=str(tmp_path / "none"))
    p = subprocess.run([str(indexer), "invalidate-file", str(repo / "a.py")], capture_output=True, text=True, env=env)
    assert p.returncode == 2 and "E_NO_SNAPSHOT" in p.stderr, p.stderr
    p = subprocess.run([str(indexer), "invalidate-file"], input=json.dumps({"tool_input": {"file_path": str(repo / "a.py")}}),
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    # The configuration changed since the snapshot: a full build is needed.
    out = tmp_path / "out"
    build(indexer, repo, out, "--no-embeddings")
    (repo / ".code-index.yaml").write_text("exclude: ['*.md']\n")
    p = subprocess.run([str(indexer), "invalidate-file", str(repo / "a.py"), "--index", str(out / "repo")], capture_output=True, text=True)
    assert p.returncode == 2 and "E_CONFIG_CHANGED" in p.stderr, p.stderr
    assert not (out / "repo" / ".overlays").exists()


def test_invalidate_a_deleted_directory(indexer, server_bin, tmp_path):
    """`rm -r dir`: a file of the deleted directory, or the directory itself,
    is invalidated (its files leave the served view); the parent that no
    longer exists must not make the file look outside the repository."""
    repo = tmp_path / "repo"
    (repo / "pkg" / "sub").mkdir(parents=True)
    git_init(repo)
    (repo / "a.py").write_text("def alpha_kept():\n    return 1\n")
    (repo / "pkg" / "c.py").write_text("def gamma_gone():\n    return 3\n")
    (repo / "pkg" / "sub" / "b.py").write_text("def beta_gone():\n    return 2\n")
    out = tmp_path / "out"
    build(indexer, repo, out, "--no-embeddings")

    def served(pattern):
        p = subprocess.run([str(server_bin), "grep", "--index", str(out / "repo"), pattern], capture_output=True, text=True, check=True)
        return sorted({m["path"] for m in json.loads(p.stdout)["matches"]})

    assert served("_gone") == ["pkg/c.py", "pkg/sub/b.py"]
    import shutil
    shutil.rmtree(repo / "pkg" / "sub")
    p = subprocess.run([str(indexer), "invalidate-file", str(repo / "pkg" / "sub" / "b.py"), "--index", str(out / "repo"), "--json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)[0]["replaces"] == ["pkg/sub/b.py"]
    assert served("_gone") == ["pkg/c.py"]
    # The hook form, for a file of a deleted directory, relative to the checkout.
    shutil.rmtree(repo / "pkg")
    hook = json.dumps({"tool_input": {"file_path": str(repo / "pkg" / "c.py")}})
    p = subprocess.run([str(indexer), "invalidate-file", "--index", str(out / "repo")], input=hook, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert served("_gone") == [] and served("alpha_kept") == ["a.py"]
    # A directory stands for every file under it, deleted or on disk.
    (repo / "newdir").mkdir()
    (repo / "newdir" / "d.py").write_text("def delta_new():\n    return 4\n")
    p = subprocess.run([str(indexer), "invalidate-file", str(repo / "newdir"), "--index", str(out / "repo"), "--json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)[0]["replaces"] == ["newdir/d.py", "pkg/c.py", "pkg/sub/b.py"]
    assert served("delta_new") == ["newdir/d.py"]


def test_results_from_files_changed_since_the_snapshot_are_marked_stale(indexer, server_bin, tmp_path):
    """Served from the checkout's directory (the default repo), a result from
    a file that changed since the snapshot (edited, committed or not, and no
    overlay yet) says so: `"stale": true` and a note with the fix. Unchanged
    files are not marked; an overlay of the file clears the mark; a server
    started elsewhere does not guess."""
    from helpers import git_commit_all
    repo = tmp_path / "staleproj"
    repo.mkdir()
    git_init(repo)
    (repo / "a.py").write_text("def alpha_fn():\n    return 1\n")
    (repo / "b.py").write_text("def beta_fn():\n    return 2\n")
    git_commit_all(repo, "first")
    out = tmp_path / "out"
    build(indexer, repo, out, "--no-embeddings")

    async def session(cwd, body):
        params = StdioServerParameters(command=str(server_bin), args=["serve", "--index", str(out / "staleproj")], cwd=str(cwd))
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return await body(s)

    def marks(res):
        return {m["path"]: m.get("stale", False) for m in res.structured_content["matches"]}

    async def body(s):
        r = await s.call_tool("grep", {"pattern": "_fn"})
        assert marks(r) == {"a.py": False, "b.py": False} and "stale" not in r.content[0].text
        (repo / "a.py").write_text("def alpha_fn_renamed():\n    return 1\n")
        time.sleep(3.2)  # the server reads the checkout's state at most every 3 s
        r = await s.call_tool("grep", {"pattern": "_fn"})
        assert marks(r) == {"a.py": True, "b.py": False}, r.structured_content
        assert "(stale: this file changed in the checkout" in r.content[0].text and "invalidate-file" in r.content[0].text
        d = await s.call_tool("find_definitions", {"symbol": "alpha_fn"})
        assert d.structured_content["symbols"][0].get("stale") is True
        git_commit_all(repo, "rename")  # committed: the snapshot is behind HEAD
        time.sleep(3.2)
        assert marks(await s.call_tool("grep", {"pattern": "_fn"})) == {"a.py": True, "b.py": False}
        p = subprocess.run([str(indexer), "invalidate-file", str(repo / "a.py"), "--index", str(out / "staleproj")], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        deadline = time.time() + 20
        while time.time() < deadline:
            time.sleep(0.5)
            r = await s.call_tool("grep", {"pattern": "_fn"})
            if any(m.get("overlay") for m in r.structured_content["matches"]):
                break
        ms = r.structured_content["matches"]
        assert sorted((m["path"], m.get("overlay", False), m.get("stale", False)) for m in ms) == [("a.py", True, False), ("b.py", False, False)], ms
        return True

    assert asyncio.run(session(repo, body))
    (repo / "b.py").write_text("def beta_fn_changed():\n    return 2\n")

    async def elsewhere(s):
        time.sleep(0.1)
        r = await s.call_tool("grep", {"pattern": "_fn"})
        return marks(r)

    assert not any(asyncio.run(session(tmp_path, elsewhere)).values())
