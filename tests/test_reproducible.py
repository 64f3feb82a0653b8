"""Equal inputs give equal bytes: thread count does not matter, an
incremental build (--previous) equals a full build of the same tree, and a
build killed half-way leaves what was there before untouched."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers import (
    build,
    copy_tree,
    diff_trees,
    sha256_file,
    tree_bytes,
)

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def rust_copy(corpora, tmp_path_factory) -> Path:
    """A private copy of rust-crates (named so, since the name is the default
    snapshot name)."""
    return copy_tree(corpora / "rust-crates", tmp_path_factory.mktemp("repro") / "rust-crates")


@pytest.fixture(scope="module")
def rust_full(indexer, rust_copy, tmp_path_factory):
    """A default build of the unmodified copy (also the --previous of later builds)."""
    return build(indexer, rust_copy, tmp_path_factory.mktemp("rust-full"), "--no-embeddings")


def test_thread_count_does_not_change_bytes(indexer, rust_copy, rust_full, tmp_path):
    a = build(indexer, rust_copy, tmp_path / "t1", "--no-embeddings", "--threads", "1")
    b = build(indexer, rust_copy, tmp_path / "t2", "--no-embeddings", "--threads", "2")
    assert a.id == b.id == rust_full.id
    problems = diff_trees(tmp_path / "t1", tmp_path / "t2")
    assert not problems, "--threads 1 and --threads 2 differ:\n" + "\n".join(problems)
    problems = diff_trees(tmp_path / "t1", rust_full.out)
    assert not problems, "--threads 1 and the default thread count differ:\n" + "\n".join(problems)
    # The whole out dir: <name>/<id>/{manifest.json, *.parquet} and <name>/latest.
    assert set(tree_bytes(tmp_path / "t1")) >= {f"rust-crates/{a.id}/manifest.json", "rust-crates/latest"}
    print(f"rust-crates: --threads 1 {a.seconds:.1f}s, --threads 2 {b.seconds:.1f}s, snapshot {a.id}")


def test_same_tree_elsewhere_gives_same_snapshot(indexer, rust_copy, rust_full, tmp_path):
    """Where the tree lives (and where the output goes) is not part of the
    snapshot: a copy at another path, with the same name, builds the same bytes."""
    other = copy_tree(rust_copy, tmp_path / "elsewhere" / "deeper" / "rust-crates")
    b = build(indexer, other, tmp_path / "b" / "nested", "--no-embeddings")
    assert b.id == rust_full.id
    assert not diff_trees(rust_full.dir, b.dir)


def _rs_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.rs") if p.is_file())


def test_previous_equals_full_build(indexer, rust_copy, rust_full, tmp_path):
    repo = copy_tree(rust_copy, tmp_path / "rust-crates")
    before = rust_full  # same tree, same name

    # Modify two files, add one, delete one. The edits add definitions and a
    # call across files, so symbols and edges change, not only content.
    rs = _rs_files(repo)
    modified = [rs[len(rs) // 3], rs[2 * len(rs) // 3]]
    deleted = rs[len(rs) // 2]
    with open(modified[0], "a") as f:
        f.write("\npub fn code_index_added_fn() -> u32 {\n    code_index_new_helper()\n}\n")
    with open(modified[1], "a") as f:
        f.write("\n// code-index test edit\npub struct CodeIndexAdded;\n")
    added = modified[0].parent / "code_index_new_file.rs"
    added.write_text("pub fn code_index_new_helper() -> u32 {\n    42\n}\n")
    deleted.unlink()
    rels = lambda ps: [p.relative_to(repo).as_posix() for p in ps]  # noqa: E731

    incr = build(indexer, repo, tmp_path / "incr", "--no-embeddings", "--previous", before.dir)
    full = build(indexer, repo, tmp_path / "full", "--no-embeddings")
    assert incr.id == full.id
    problems = diff_trees(tmp_path / "incr", tmp_path / "full")
    assert not problems, "--previous build differs from a full build:\n" + "\n".join(problems)
    assert full.id != before.id

    reused = incr.info["reused_files"]
    files = incr.info["files"]
    assert 0 < reused <= files - 3, f"reused_files={reused} of {files} (2 modified + 1 added cannot be reused)"
    paths = full.paths()
    assert rels([added])[0] in paths and rels([deleted])[0] not in paths
    assert set(rels(modified)) <= paths
    print(f"--previous: reused {reused}/{files}; full {full.seconds:.1f}s vs incremental {incr.seconds:.1f}s")


def test_previous_ignored_when_config_changes(indexer, rust_copy, rust_full, tmp_path):
    """A different config changes what every file yields (tests, limits), so an
    incremental build must still equal a full build."""
    repo = copy_tree(rust_copy, tmp_path / "rust-crates")
    before = rust_full
    (repo / ".code-index.yaml").write_text('test_patterns: ["**/benches/**"]\n')
    incr = build(indexer, repo, tmp_path / "incr", "--no-embeddings", "--previous", before.dir)
    full = build(indexer, repo, tmp_path / "full", "--no-embeddings")
    assert incr.id == full.id != before.id
    assert not diff_trees(incr.dir, full.dir)


def test_manifest_describes_each_build(indexer, tmp_path):
    """Two builds whose data files are equal but whose skipped counts differ
    (a binary file was added) each get a manifest that tells their own facts:
    the snapshot a build reports must not carry another build's manifest."""
    repo = tmp_path / "skips"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text("def a():\n    return 1\n")
    first = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    assert first.manifest["skipped"]["binary"] == 0
    (repo / "src" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    second = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    assert second.info["skipped"]["binary"] == 1
    assert second.manifest["skipped"]["binary"] == 1, (
        f"snapshot {second.id} (first build: {first.id}) has manifest skipped={second.manifest['skipped']}, "
        f"but the build that reported it skipped {second.info['skipped']}"
    )


# --------------------------------------------------------------------------
# A killed build


def _entries(d: Path) -> set[str]:
    return {p.name for p in d.iterdir()} if d.is_dir() else set()


def test_killed_build_leaves_previous_snapshot_intact(indexer, go_snapshot, corpora, tmp_path):
    out = tmp_path / "out"
    name = "go-stdlib"
    shutil.copytree(go_snapshot.dir, out / name / go_snapshot.id)
    (out / name / "latest").write_text((go_snapshot.out / name / "latest").read_text())
    original = {rel: sha256_file(out / rel) for rel in tree_bytes(out)}

    full_time = go_snapshot.seconds
    # An early kill (walking/parsing) and a late one (writing Parquet, renaming).
    kill_points = sorted({0.5, max(1.5, full_time * 0.85)})
    landed = []
    for delay in kill_points:
        # A different size limit makes a different input (config hash), so the
        # killed build would have written a new snapshot, not the existing one.
        cmd = [str(indexer), "index", str(corpora / name), "--out", str(out), "--no-embeddings", "--json",
               "--max-file-size", "1048000"]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            landed.append(delay)
        proc.wait()
        if delay not in landed:
            # The build finished before the kill (a loaded machine ran it faster
            # than the session's first build): undo it; nothing was interrupted.
            for e in _entries(out / name):
                if not e.startswith(".") and e not in (go_snapshot.id, "latest"):
                    shutil.rmtree(out / name / e)
            (out / name / "latest").write_text((go_snapshot.out / name / "latest").read_text())
            continue

        now = {rel: sha256_file(out / rel) for rel in tree_bytes(out) if not _hidden_rel(rel)}
        assert now == original, f"after a kill at {delay:.1f}s the earlier snapshot changed: " + json.dumps(
            sorted(set(now.items()) ^ set(original.items()))[:10]
        )
        visible = {e for e in _entries(out / name) if not e.startswith(".")}
        assert visible == {go_snapshot.id, "latest"}, f"after a kill at {delay:.1f}s: {sorted(_entries(out / name))}"
        assert {e for e in _entries(out) if not e.startswith(".")} == {name}
    if not landed:
        pytest.skip(f"every build finished before the kill ({kill_points}); nothing was interrupted")
    leftovers = sorted(e for e in _entries(out / name) | _entries(out) if e.startswith("."))
    print(f"kills at {landed}s; hidden leftovers before the next build: {leftovers}")

    # A later build ignores or cleans the leftovers, and (same input) gives the same snapshot.
    again = build(indexer, corpora / name, out, "--no-embeddings", "--previous", out / name / go_snapshot.id)
    assert again.id == go_snapshot.id
    assert again.info["reused_files"] == again.info["files"], "nothing changed, every file should be reused"
    assert not diff_trees(again.dir, go_snapshot.dir)
    assert (out / name / "latest").read_text().strip() == go_snapshot.id
    visible = {e for e in _entries(out / name) if not e.startswith(".")}
    assert visible == {go_snapshot.id, "latest"}
    still = sorted(e for e in _entries(out / name) | _entries(out) if e.startswith("."))
    print(f"hidden leftovers after the next build: {still}")


def _hidden_rel(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))
