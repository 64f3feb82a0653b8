"""ci/publish-snapshot.sh, run as CI would run it: a first publish, then a
second with the first tarball as the previous snapshot. The tarball unpacks
to the very snapshot the manifest copy describes, and packing is
deterministic."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from helpers import REPO_ROOT, build, copy_tree, diff_trees

SCRIPT = REPO_ROOT / "ci" / "publish-snapshot.sh"
WORKFLOW = REPO_ROOT / "ci" / "github-workflow.yml"


def publish(indexer: Path, repo: Path, out: Path, previous: Path | None = None) -> tuple[Path, Path, str]:
    args = ["bash", str(SCRIPT), str(repo), str(out)] + ([str(previous)] if previous else [])
    env = dict(os.environ, CODE_INDEXER=str(indexer), CODE_INDEX_ARGS="--no-embeddings")
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, f"{' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr[-3000:]}"
    lines = p.stdout.split()
    assert len(lines) == 2, f"expected two paths on stdout, got {p.stdout!r}"
    tarball, manifest = map(Path, lines)
    assert tarball.is_file() and manifest.is_file()
    return tarball, manifest, p.stderr


def unpack(tarball: Path) -> dict[str, tuple[tarfile.TarInfo, bytes]]:
    raw = subprocess.run(["zstd", "-q", "-d", "-c", str(tarball)], capture_output=True, check=True).stdout
    members = {}
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tf:
        for m in tf.getmembers():
            members[m.name] = (m, tf.extractfile(m).read() if m.isfile() else b"")
    return members


def check_published(tarball: Path, manifest_path: Path, repo_name: str) -> dict:
    manifest = json.loads(manifest_path.read_text())
    sid = manifest["snapshot_id"]
    assert tarball.name == f"{repo_name}-{sid}.tar.zst"
    assert manifest_path.name == f"{repo_name}-{sid}.manifest.json"
    members = unpack(tarball)
    names = set(members)
    # The directory's contents at the top level: no leading directory, no "./".
    assert all("/" not in n and not n.startswith(".") for n in names), sorted(names)
    assert names == {"manifest.json"} | {f["name"] for f in manifest["files"]}
    assert members["manifest.json"][1] == manifest_path.read_bytes(), "manifest copy differs from the packed one"
    for f in manifest["files"]:
        info, data = members[f["name"]]
        assert len(data) == f["bytes"] and hashlib.sha256(data).hexdigest() == f["sha256"], f["name"]
    for info, _ in members.values():
        assert info.mtime == 0 and info.uid == 0 and info.gid == 0, (info.name, info.mtime, info.uid)
    return manifest


@pytest.fixture
def small_corpus(corpora, tmp_path) -> Path:
    # rxjs: 260 TypeScript files, a realistic but quick tree.
    return copy_tree(corpora / "ts-rxjs", tmp_path / "rxjs-copy")


def test_publish_twice_with_previous(indexer, small_corpus, tmp_path):
    t1, m1, _ = publish(indexer, small_corpus, tmp_path / "pub1")
    first = check_published(t1, m1, "rxjs-copy")

    # Same snapshot as a direct build (the script adds nothing to it).
    direct = build(indexer, small_corpus, tmp_path / "direct", "--no-embeddings")
    assert direct.id == first["snapshot_id"]

    # Change the tree, publish again with the first tarball as --previous.
    (small_corpus / "internal" / "code_index_added.ts").write_text("export function codeIndexAdded(): number {\n  return 1;\n}\n")
    t2, m2, log = publish(indexer, small_corpus, tmp_path / "pub2", previous=t1)
    second = check_published(t2, m2, "rxjs-copy")
    assert second["snapshot_id"] != first["snapshot_id"]
    assert "retrying without it" not in log, f"the build with --previous failed:\n{log}"
    summary = [line for line in log.splitlines() if "summary:" in line]
    assert summary, log
    assert json.loads(summary[0].split("summary:", 1)[1])["reused_files"] > 0

    # Publishing the unchanged tree again (previous given as a directory this
    # time) packs byte-identical files: the tar and zstd steps are deterministic.
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    for name, (_, data) in unpack(t2).items():
        (unpacked / name).write_bytes(data)
    t3, m3, _ = publish(indexer, small_corpus, tmp_path / "pub3", previous=unpacked)
    assert t3.name == t2.name and t3.read_bytes() == t2.read_bytes()
    assert m3.read_bytes() == m2.read_bytes()
    assert not diff_trees(tmp_path / "pub2", tmp_path / "pub3")


def test_publish_rejects_bad_usage(indexer, tmp_path):
    env = dict(os.environ, CODE_INDEXER=str(indexer))
    p = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env)
    assert p.returncode != 0 and "publish-snapshot.sh" in p.stderr
    p = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "nope"), str(tmp_path / "out")], capture_output=True, text=True, env=env)
    assert p.returncode != 0 and "nope" in p.stderr
    assert not list((tmp_path).glob("out/*")), "nothing may be published on failure"


def test_workflow_shape():
    wf = yaml.safe_load(WORKFLOW.read_text())
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "push" in on and "workflow_dispatch" in on
    (job,) = wf["jobs"].values()
    steps = job["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["uses"] == "actions/upload-artifact@v4"
    assert upload["with"]["name"] == "code-index-snapshot"
    assert ".tar.zst" in upload["with"]["path"] and ".manifest.json" in upload["with"]["path"]
    scripts = "\n".join(s.get("run", "") for s in steps)
    assert "ci/publish-snapshot.sh" in scripts
    assert "gh run download" in scripts and "gh run list" in scripts
    assert re.search(r'scripts/setup\.sh"?\s+--deps-only', scripts)
    assert any("GH_TOKEN" in (s.get("env") or {}) for s in steps)
    assert wf["permissions"]["actions"] == "read"
    # The embedding cache persists across runs (and --previous seeds it from the last snapshot).
    caches = [s for s in steps if s.get("uses", "").startswith("actions/cache@")]
    assert any("code-index/embeddings" in c["with"]["path"] for c in caches)
