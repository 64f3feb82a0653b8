"""`code-index-mcp --index http(s)://…`: a snapshot published by
ci/publish-snapshot.sh is downloaded from a real HTTP server on loopback,
verified and cached; a damaged download is refused and leaves the cache as
it was."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import HttpServer

pytestmark = pytest.mark.corpus

ROOT = Path(__file__).resolve().parent.parent


def test_download_verify_cache_and_refuse_damage(server_bin, indexer, corpora, tmp_path):
    pub = tmp_path / "pub"
    p = subprocess.run(["bash", str(ROOT / "ci/publish-snapshot.sh"), str(corpora / "ts-rxjs"), str(pub)],
                       capture_output=True, text=True, env={"CODE_INDEXER": str(indexer), "CODE_INDEX_ARGS": "--no-embeddings", "PATH": "/usr/bin:/bin:/usr/local/bin"}, timeout=300)
    assert p.returncode == 0, p.stderr
    tarball, manifest = [Path(x) for x in p.stdout.split()]
    m = json.loads(manifest.read_text())
    cache = tmp_path / "cache"
    env = {"CODE_INDEX_CACHE": str(cache), "PATH": "/usr/bin:/bin"}
    http = HttpServer(pub)
    try:
        def sql(url):
            return subprocess.run([str(server_bin), "sql", "--index", url, "--json", "SELECT count(*) AS n FROM files"],
                                  capture_output=True, text=True, env=env, timeout=120)

        r = sql(http.url(tarball.name))
        assert r.returncode == 0, r.stderr
        files_rows = next(f["rows"] for f in m["files"] if f["name"] == "files.parquet")
        assert json.loads(r.stdout)["rows"] == [[files_rows]]
        dest = cache / "downloads" / m["repo"] / m["snapshot_id"]
        assert json.loads((dest / "manifest.json").read_text()) == m
        # The manifest URL works too, and the cache is reused.
        stamp = (dest / "manifest.json").stat().st_mtime_ns
        assert sql(http.url(manifest.name)).returncode == 0
        assert (dest / "manifest.json").stat().st_mtime_ns == stamp

        # A damaged tarball (one flipped byte) under a manifest claiming another id: refused, cache untouched.
        bad = tmp_path / "bad"
        bad.mkdir()
        data = bytearray(tarball.read_bytes())
        data[len(data) // 2] ^= 0xFF
        (bad / "x-0000000000000000.tar.zst").write_bytes(bytes(data))
        m2 = dict(m, snapshot_id="0000000000000000")
        (bad / "x-0000000000000000.manifest.json").write_text(json.dumps(m2))
        http.close()
        http = HttpServer(bad)
        r = sql(http.url("x-0000000000000000.tar.zst"))
        assert r.returncode != 0 and "E_SNAPSHOT_INVALID" in r.stderr, r.stderr
        assert not (cache / "downloads" / m["repo"] / "0000000000000000").exists()
        assert not [x for x in (cache / "downloads" / m["repo"]).iterdir() if x.name.startswith(".tmp")]
        assert json.loads((dest / "manifest.json").read_text()) == m
        r = sql(http.url("missing-1.tar.zst"))
        assert r.returncode != 0 and "404" in r.stderr
        r = sql(http.url("not-a-snapshot.zip"))
        assert r.returncode != 0 and "publish-snapshot" in r.stderr
    finally:
        http.close()


def test_download_a_snapshot_directory(server_bin, indexer, corpora, tmp_path):
    """A URL ending in / names a snapshot directory served as static files:
    manifest.json lists the files, each is fetched and verified."""
    out = tmp_path / "snaps"
    p = subprocess.run([str(indexer), "index", str(corpora / "ts-rxjs"), "--out", str(out), "--no-embeddings", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    snap = Path(json.loads(p.stdout)["snapshot_dir"])
    m = json.loads((snap / "manifest.json").read_text())
    cache = tmp_path / "cache"
    env = {"CODE_INDEX_CACHE": str(cache), "PATH": "/usr/bin:/bin"}
    http = HttpServer(out)
    try:
        rel = f"{m['repo']}/{m['snapshot_id']}/"
        r = subprocess.run([str(server_bin), "sql", "--index", http.url(rel), "--json", "SELECT count(*) AS n FROM symbols"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        rows = next(f["rows"] for f in m["files"] if f["name"] == "symbols.parquet")
        assert json.loads(r.stdout)["rows"] == [[rows]]
        dest = cache / "downloads" / m["repo"] / m["snapshot_id"]
        for f in m["files"]:
            assert (dest / f["name"]).read_bytes() == (snap / f["name"]).read_bytes()
        # A directory whose file does not match its manifest is refused; nothing is left behind.
        bad = out / "bad" / "0000000000000001"
        shutil.copytree(snap, bad)
        m2 = dict(m, repo="bad", snapshot_id="0000000000000001")
        (bad / "manifest.json").write_text(json.dumps(m2))
        with open(bad / "symbols.parquet", "r+b") as fh:
            fh.seek(100)
            b = fh.read(1)
            fh.seek(100)
            fh.write(bytes([b[0] ^ 0xFF]))
        r = subprocess.run([str(server_bin), "sql", "--index", http.url("bad/0000000000000001/manifest.json"), "SELECT 1"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode != 0 and "E_SNAPSHOT_INVALID" in r.stderr, r.stderr
        assert not (cache / "downloads" / "bad" / "0000000000000001").exists()
    finally:
        http.close()
