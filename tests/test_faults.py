"""Faults lose nothing. Each fault is made for real: a build killed with
SIGKILL while it writes, damaged snapshot files (truncated, one byte
flipped), a full disk (a small tmpfs) during a build, and a download cut off
mid-way by a real HTTP server on loopback. After each, the snapshot that was
good before is still there, byte for byte, and still served."""

from __future__ import annotations

import http.server
import json
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from helpers import build, copy_tree, diff_trees, run_cli

pytestmark = pytest.mark.corpus

ROOT = Path(__file__).resolve().parent.parent


def served_files(server_bin: Path, index: Path, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(server_bin), "sql", "--index", str(index), "--json", "SELECT count(*) FROM files"],
                          capture_output=True, text=True, timeout=300, env=env)


def tmp_dirs(repo_out: Path) -> list[str]:
    return [p.name for p in repo_out.iterdir() if p.name.startswith(".tmp")] if repo_out.is_dir() else []


def test_build_killed_mid_write_keeps_the_previous_snapshot(indexer, server_bin, corpora, tmp_path):
    repo = copy_tree(corpora / "ts-rxjs", tmp_path / "proj")
    out = tmp_path / "out"
    good = build(indexer, repo, out, "--no-embeddings")
    before = tmp_path / "before"
    shutil.copytree(good.dir, before)
    # Enough new code that the next build writes for a while.
    shutil.copytree(corpora / "django" / "django", repo / "bulk")
    killed_while = None
    for attempt in range(3):
        p = subprocess.Popen([str(indexer), "index", str(repo), "--out", str(out), "--no-embeddings", "--threads", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 600
        while p.poll() is None and time.monotonic() < deadline:
            written = [f for d in tmp_dirs(out / "proj") for f in (out / "proj" / d).glob("*.parquet") if f.stat().st_size > 0]
            if written:
                p.send_signal(signal.SIGKILL)
                killed_while = sorted(f.name for f in written)
                break
            time.sleep(0.005)
        p.wait()
        if killed_while:
            break
        # The build finished before a table reached the disk: start from the good snapshot again.
        (out / "proj" / "latest").write_text(good.id + "\n")
    assert killed_while, "could not catch the build while it wrote"
    assert (out / "proj" / "latest").read_text().strip() == good.id
    assert not diff_trees(before, good.dir), diff_trees(before, good.dir)
    r = served_files(server_bin, out / "proj")
    assert r.returncode == 0, r.stderr
    files_rows = next(f["rows"] for f in good.manifest["files"] if f["name"] == "files.parquet")
    assert json.loads(r.stdout)["rows"] == [[files_rows]]
    # The next build sweeps the dead build's temp dir and lands.
    again = build(indexer, repo, out, "--no-embeddings")
    assert again.id != good.id
    assert tmp_dirs(out / "proj") == []
    assert (out / "proj" / "latest").read_text().strip() == again.id


@pytest.fixture(scope="module")
def vec_snapshot(indexer, tmp_path_factory) -> Path:
    """A tiny snapshot with vectors, so vectors.faiss is among the files damaged."""
    repo = tmp_path_factory.mktemp("vecrepo") / "vecrepo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "dates.py").write_text('def parse_date(s):\n    """Parse an ISO date string."""\n    return s.split("-")\n')
    (repo / "pkg" / "retry.py").write_text("import time\n\ndef retry(f, n=3):\n    for i in range(n):\n        try:\n            return f()\n        except Exception:\n            time.sleep(2 ** i)\n")
    (repo / "README.md").write_text("# vecrepo\n\nDates and retries.\n")
    snap = build(indexer, repo, tmp_path_factory.mktemp("vecout"))
    assert (snap.dir / "vectors.faiss").is_file()
    return snap.dir


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_damaged_files_are_refused_by_name(server_bin, vec_snapshot, tmp_path, damage):
    names = [f["name"] for f in json.loads((vec_snapshot / "manifest.json").read_text())["files"]] + ["manifest.json"]
    assert "vectors.faiss" in names and "files.parquet" in names
    for name in names:
        bad = tmp_path / f"{damage}-{name}"
        shutil.copytree(vec_snapshot, bad)
        data = bytearray((bad / name).read_bytes())
        if damage == "truncate":
            data = data[: len(data) // 2]
        else:
            data[len(data) // 2] ^= 0xFF
        (bad / name).write_bytes(bytes(data))
        r = served_files(server_bin, bad)
        assert r.returncode != 0, f"{damage}d {name} was served"
        assert "E_SNAPSHOT_INVALID" in r.stderr and name in r.stderr, f"{damage}d {name}: {r.stderr[-800:]}"
        # The server refuses it at start too, with the same coded error.
        s = subprocess.run([str(server_bin), "serve", "--index", str(bad)], capture_output=True, text=True,
                           timeout=60, stdin=subprocess.DEVNULL)
        assert s.returncode != 0 and "E_SNAPSHOT_INVALID" in s.stderr and name in s.stderr, s.stderr[-800:]


def test_full_disk_during_a_build(indexer, server_bin, tmp_path):
    mnt = tmp_path / "small-disk"
    mnt.mkdir()
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if m.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {m.stderr.strip()}")
    try:
        repo = tmp_path / "full"
        (repo / "src").mkdir(parents=True)
        (repo / "src" / "a.py").write_text("def a():\n    return 1\n")
        out = mnt / "out"
        good = build(indexer, repo, out, "--no-embeddings")
        before = tmp_path / "before"
        shutil.copytree(good.dir, before)
        # ~8 MB of text that compresses little: more than the disk has left.
        import random
        rnd = random.Random(7)
        for i in range(16):
            (repo / "src" / f"data{i}.txt").write_text(
                "\n".join("".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(100)) for _ in range(5000)))
        r = run_cli(indexer, "index", repo, "--out", out, "--no-embeddings", check=False)
        assert r.returncode != 0, "the build fitted: make the data larger"
        assert "error[E_" in r.stderr and "hint:" in r.stderr, r.stderr[-1500:]
        assert "space" in r.stderr.lower(), r.stderr[-1500:]
        assert (out / "full" / "latest").read_text().strip() == good.id
        assert not diff_trees(before, good.dir)
        assert tmp_dirs(out / "full") == [], "a half-written snapshot was left behind"
        assert served_files(server_bin, out / "full").returncode == 0
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


class CutHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files, but a .tar.zst is cut off after half its bytes (the
    Content-Length promises all of them)."""

    def log_message(self, *a):
        pass

    def do_GET(self):
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if path.name.endswith(".tar.zst"):
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data)


def serve_dir(directory: Path, handler=http.server.SimpleHTTPRequestHandler):
    h = lambda *a, **k: handler(*a, directory=str(directory), **k)  # noqa: E731
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def publish(indexer, repo: Path, pub: Path) -> tuple[Path, dict]:
    p = subprocess.run(["bash", str(ROOT / "ci/publish-snapshot.sh"), str(repo), str(pub)], capture_output=True, text=True,
                       env={"CODE_INDEXER": str(indexer), "CODE_INDEX_ARGS": "--no-embeddings", "PATH": "/usr/bin:/bin:/usr/local/bin"},
                       timeout=300)
    assert p.returncode == 0, p.stderr
    tarball, manifest = [Path(x) for x in p.stdout.split()]
    return tarball, json.loads(manifest.read_text())


def test_download_cut_midway_leaves_the_cache_as_it_was(indexer, server_bin, corpora, tmp_path):
    repo = copy_tree(corpora / "ts-rxjs", tmp_path / "rx")
    good_tar, good_m = publish(indexer, repo, tmp_path / "pub1")
    (repo / "extra.ts").write_text("export const added = 1;\n")
    new_tar, new_m = publish(indexer, repo, tmp_path / "pub2")
    assert new_m["snapshot_id"] != good_m["snapshot_id"]
    cache = tmp_path / "cache"
    env = {"CODE_INDEX_CACHE": str(cache), "PATH": "/usr/bin:/bin"}
    ok = serve_dir(good_tar.parent)
    try:
        r = served_files(server_bin, f"http://127.0.0.1:{ok.server_port}/{good_tar.name}", env)
        assert r.returncode == 0, r.stderr
    finally:
        ok.shutdown()
    downloads = cache / "downloads" / good_m["repo"]
    before = tmp_path / "cache-before"
    shutil.copytree(downloads, before)
    cut = serve_dir(new_tar.parent, CutHandler)
    try:
        r = served_files(server_bin, f"http://127.0.0.1:{cut.server_port}/{new_tar.name}", env)
    finally:
        cut.shutdown()
    assert r.returncode != 0, "a cut download was served"
    assert "error[" in r.stderr and "hint:" in r.stderr, r.stderr[-1500:]
    assert not diff_trees(before, downloads), diff_trees(before, downloads)
    assert not (downloads / new_m["snapshot_id"]).exists()
