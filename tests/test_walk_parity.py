"""The files table holds exactly what ripgrep would search: `rg --files` (with
`--max-filesize N` when a limit is set) in the same tree, minus the documented default exclusions
(node_modules, __pycache__, Python venvs, editor swap/backup files), minus
files containing a NUL byte. The oracle is computed here, independently of the
builder (helpers.expected_files)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from helpers import (
    DEFAULT_MAX_FILE_SIZE,
    PARSE_MAX_BYTES,
    build,
    copy_tree,
    describe_set_diff,
    expected_files,
    git_commit_all,
    git_init,
    is_default_excluded,
    rg_files,
)


def check_parity(snap, root: Path, max_filesize: int | None = DEFAULT_MAX_FILE_SIZE, follow: bool = False):
    exp = expected_files(root, max_filesize, follow)
    got = snap.paths()
    assert got == exp.kept, "files table != rg --files minus exclusions:\n" + describe_set_diff(exp.kept, got, root)
    # The manifest counts what was left out; binaries and size are countable here.
    skipped = snap.manifest["skipped"]
    assert skipped["binary"] == len(exp.binary), (
        f"skipped.binary={skipped['binary']}, files with a NUL byte among rg's list: {len(exp.binary)} "
        f"(e.g. {sorted(exp.binary)[:5]})"
    )
    too_large = {
        p for p in rg_files(root, None, follow) - rg_files(root, max_filesize, follow) if not is_default_excluded(root, p)
    }
    assert skipped["too_large"] == len(too_large), f"skipped.too_large={skipped['too_large']}, expected {sorted(too_large)[:10]}"
    if exp.default_excluded:
        assert skipped["default_excluded"] >= 1
    assert snap.info["files"] == len(exp.kept)
    return exp


@pytest.mark.corpus
@pytest.mark.parametrize("corpus", ["django", "go-stdlib", "rust-crates", "ts-rxjs"])
def test_corpus_parity(snapshots, corpus):
    snap = snapshots(corpus)
    exp = check_parity(snap, snap.repo)
    print(f"{corpus}: {len(exp.kept)} files, {len(exp.default_excluded)} default-excluded, {len(exp.binary)} binary")


# --------------------------------------------------------------------------
# A small synthetic repository with every rule in it

LATIN1 = "caf\xe9 = 'na\xefve'\n".encode("latin-1")


def make_tree(root: Path) -> None:
    files: dict[str, bytes] = {
        "main.py": b"def main():\n    return 1\n",
        "pkg/__init__.py": b"",
        "pkg/mod.py": b"from pkg import x\n",
        "empty.txt": b"",
        "dir with space/\u00fcn\u00efcode.py": b"x = 1\n",
        # git ignore rules (applied only inside a git work tree)
        ".gitignore": b"ignored_by_git/\n*.log\n!keep.log\n",
        "ignored_by_git/a.py": b"a = 1\n",
        "build.log": b"log\n",
        "keep.log": b"kept\n",
        "sub/.gitignore": b"local_ignored.txt\n",
        "sub/local_ignored.txt": b"no\n",
        "sub/kept.txt": b"yes\n",
        # .ignore and .rgignore apply everywhere
        ".ignore": b"ignored_by_dotignore.txt\n",
        "ignored_by_dotignore.txt": b"no\n",
        ".rgignore": b"ignored_by_rgignore/\n",
        "ignored_by_rgignore/x.py": b"x = 2\n",
        # hidden files and directories
        ".hidden_file.py": b"h = 1\n",
        ".hidden_dir/inside.py": b"h = 2\n",
        ".mypy_cache/3.11/x.json": b"{}\n",
        ".tox/py311/lib/x.py": b"t = 1\n",
        # binaries: NUL at the start, and one far beyond the first read buffer
        "image.bin": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)),
        "late_nul.txt": b"a" * 100_000 + b"\0" + b"b" * 10,
        # default exclusions
        "node_modules/pkg/index.js": b"module.exports = 1;\n",
        "web/node_modules/dep/lib.js": b"exports.x = 2;\n",
        "__pycache__/main.cpython-311.pyc": b"\x00\x01compiled",
        "pkg/__pycache__/mod.py": b"y = 1\n",
        "venv/pyvenv.cfg": b"home = /usr/bin\n",
        "venv/lib/python3.11/site-packages/six.py": b"six = 6\n",
        "env/settings.py": b"not_a_venv = True\n",
        "main.py.swp": b"vim swap (text for the test)\n",
        "main.py~": b"backup\n",
        # size: kept by default (as rg); with --max-file-size 1048576, exactly the
        # limit is kept and one byte over is not. Over 1 MiB: text only, not parsed.
        "big_exact.txt": (b"x" * 1023 + b"\n") * 1024,
        "big_over.txt": (b"x" * 1023 + b"\n") * 1024 + b"y",
        "big_code.py": b"def big_function():\n    return 1\n" + b"# filler line\n" * 80_000,
        # not UTF-8: kept, converted lossily
        "latin1.py": LATIN1,
    }
    assert len(files["big_exact.txt"]) == PARSE_MAX_BYTES
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    # A symlink: ripgrep does not follow links unless asked to.
    os.symlink("main.py", root / "link.py")
    os.symlink("pkg", root / "pkg_link")


@pytest.fixture(scope="module")
def synthetic_git(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("synthetic") / "walkrepo"
    root.mkdir()
    make_tree(root)
    git_init(root)
    git_commit_all(root, "initial")
    return root


@pytest.fixture(scope="module")
def synthetic_plain(tmp_path_factory, synthetic_git) -> Path:
    """The same tree without .git: .gitignore files no longer apply."""
    return copy_tree(synthetic_git, tmp_path_factory.mktemp("plain") / "walkrepo", ignore_git=True)


def test_oracle_sanity(synthetic_git, synthetic_plain):
    """The synthetic tree exercises every rule (guards the test, not the builder)."""
    exp = expected_files(synthetic_git)
    assert {"main.py", "keep.log", "sub/kept.txt", "big_exact.txt", "big_over.txt", "big_code.py", "latin1.py", "empty.txt",
            "env/settings.py"} <= exp.kept  # fmt: skip
    for gone in ("build.log", "ignored_by_git/a.py", "sub/local_ignored.txt", "ignored_by_dotignore.txt",
                 "ignored_by_rgignore/x.py", ".hidden_file.py", "link.py"):  # fmt: skip
        assert gone not in exp.kept | exp.default_excluded | exp.binary, gone
    assert exp.binary == {"image.bin", "late_nul.txt"}
    assert {"node_modules/pkg/index.js", "web/node_modules/dep/lib.js", "pkg/__pycache__/mod.py",
            "venv/lib/python3.11/site-packages/six.py", "main.py.swp", "main.py~"} <= exp.default_excluded  # fmt: skip
    plain = expected_files(synthetic_plain)
    assert {"build.log", "ignored_by_git/a.py", "sub/local_ignored.txt"} <= plain.kept
    assert "ignored_by_dotignore.txt" not in plain.kept


@pytest.mark.parametrize("variant", ["git", "plain"])
def test_synthetic_parity(indexer, tmp_path, synthetic_git, synthetic_plain, variant):
    root = synthetic_git if variant == "git" else synthetic_plain
    snap = build(indexer, root, tmp_path / "out", "--no-embeddings")
    check_parity(snap, root)
    files = pq.read_table(snap.table("files")).to_pylist()
    by_path = {f["path"]: f for f in files}
    lossy = by_path["latin1.py"]
    assert lossy["is_lossy"] is True
    assert "\ufffd" in lossy["content"]
    assert lossy["content_sha256"] == hashlib.sha256(LATIN1).hexdigest()
    assert lossy["size_bytes"] == len(LATIN1)
    assert by_path["main.py"]["is_lossy"] is False
    assert by_path["empty.txt"]["line_count"] == 0 and by_path["empty.txt"]["content"] == ""
    assert by_path["big_exact.txt"]["size_bytes"] == PARSE_MAX_BYTES
    assert by_path["big_exact.txt"]["line_count"] == 1024
    assert by_path["big_over.txt"]["size_bytes"] == PARSE_MAX_BYTES + 1
    assert snap.manifest["skipped"]["too_large"] == 0
    # Past the parse limit a file is text only: its content is whole, but it
    # has no symbols or chunks.
    big = by_path["big_code.py"]
    assert big["size_bytes"] > PARSE_MAX_BYTES and big["content"].startswith("def big_function():")
    syms = pq.read_table(snap.table("symbols"), columns=["path"]).column("path").to_pylist()
    chunks = pq.read_table(snap.table("chunks"), columns=["path"]).column("path").to_pylist()
    assert "big_code.py" not in syms and "big_code.py" not in chunks
    assert "main.py" in chunks
    assert snap.manifest["skipped"]["binary"] == 2
    if variant == "git":
        git = snap.manifest["git"]
        assert git["commit"] and len(git["commit"]) == 40 and git["branch"] == "main"
        assert git["commit_time"] and git["commit_time"].startswith("2024-01-02")


def test_max_file_size_flag(indexer, tmp_path, synthetic_plain):
    limit = 1024 * 1024
    snap = build(indexer, synthetic_plain, tmp_path / "out", "--no-embeddings", "--max-file-size", str(limit))
    check_parity(snap, synthetic_plain, limit)
    assert "big_exact.txt" in snap.paths() and "big_over.txt" not in snap.paths()
    assert snap.manifest["skipped"]["too_large"] == 2


def test_max_file_size_from_config(indexer, tmp_path, synthetic_plain):
    root = copy_tree(synthetic_plain, tmp_path / "walkrepo")
    (root / ".code-index.yaml").write_text("max_file_size: 100\n")
    snap = build(indexer, root, tmp_path / "out", "--no-embeddings")
    # The config file itself is hidden, so rg does not list it either.
    check_parity(snap, root, 100)
    assert "latin1.py" in snap.paths() and "big_exact.txt" not in snap.paths()


def test_follow_symlinks_matches_rg_L(indexer, tmp_path, synthetic_plain):
    """`--follow-symlinks` (or `follow_symlinks: true`) lists what `rg -L --files`
    lists: a linked file under the link's path, a linked directory walked, a
    link to a file outside the tree included; a link loop and a dangling link
    are skipped, not fatal. Without it, links are skipped, as rg does."""
    root = copy_tree(synthetic_plain, tmp_path / "walkrepo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shared.py").write_text("def shared():\n    return 2\n")
    os.symlink(outside / "shared.py", root / "shared_link.py")
    os.symlink("..", root / "pkg" / "loop")
    os.symlink("missing.py", root / "dangling.py")
    # The oracle itself sees the links (guards the test).
    followed = expected_files(root, follow=True).kept
    assert {"link.py", "pkg_link/mod.py", "shared_link.py"} <= followed
    assert not any(p.startswith("pkg/loop/") for p in followed) and "dangling.py" not in followed

    plain = build(indexer, root, tmp_path / "out0", "--no-embeddings")
    check_parity(plain, root)
    assert "link.py" not in plain.paths()

    snap = build(indexer, root, tmp_path / "out1", "--no-embeddings", "--follow-symlinks")
    check_parity(snap, root, follow=True)
    files = {f["path"]: f for f in pq.read_table(snap.table("files")).to_pylist()}
    assert files["shared_link.py"]["content"] == "def shared():\n    return 2\n"
    syms = pq.read_table(snap.table("symbols"), columns=["path", "name"]).to_pylist()
    assert {"path": "shared_link.py", "name": "shared"} in syms

    (root / ".code-index.yaml").write_text("follow_symlinks: true\n")
    from_config = build(indexer, root, tmp_path / "out2", "--no-embeddings")
    assert from_config.paths() == snap.paths()


def test_config_exclude_and_include(indexer, tmp_path, synthetic_plain):
    root = copy_tree(synthetic_plain, tmp_path / "walkrepo")
    (root / ".code-index.yaml").write_text('exclude: ["*.txt", "pkg/**"]\n')
    snap = build(indexer, root, tmp_path / "out", "--no-embeddings")
    exp = expected_files(root)
    want = {p for p in exp.kept if not p.endswith(".txt") and not p.startswith("pkg/")}
    got = snap.paths()
    assert got == want, describe_set_diff(want, got, root)
    # Excluded files that were also too large or binary may be counted either way.
    assert snap.manifest["skipped"]["config_excluded"] >= len(exp.kept) - len(want)

    (root / ".code-index.yaml").write_text('include: ["*.py"]\n')
    snap = build(indexer, root, tmp_path / "out2", "--no-embeddings")
    want = {p for p in exp.kept if p.endswith(".py")}
    assert snap.paths() == want, describe_set_diff(want, snap.paths(), root)
