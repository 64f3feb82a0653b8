"""`code-indexer sync` with a configured `snapshot_url`: the snapshot CI
published with ci/publish-snapshot.sh is downloaded from a real HTTP server
on loopback, verified and made `latest` (a running server follows it); the
working tree's differences from its commit are overlaid; a damaged or
unsigned download, or one of another repository, is refused and leaves the
index as it was."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from helpers import HttpServer, git, git_commit_all, small_repo

ROOT = Path(__file__).resolve().parent.parent


def publish(indexer, repo: Path, pub: Path, prev: Path | None = None) -> dict:
    """CI's job: publish-snapshot.sh; the published manifest."""
    args = ["bash", str(ROOT / "ci/publish-snapshot.sh"), str(repo), str(pub)] + ([str(prev)] if prev else [])
    p = subprocess.run(args, capture_output=True, text=True, timeout=300,
                       env={"CODE_INDEXER": str(indexer), "CODE_INDEX_ARGS": "--no-embeddings",
                            "PATH": "/usr/bin:/bin:/usr/local/bin"})
    assert p.returncode == 0, p.stderr
    tarball, manifest = [Path(x) for x in p.stdout.split()]
    m = json.loads(manifest.read_text())
    assert json.loads((pub / f"{m['repo']}-latest.manifest.json").read_text()) == m
    assert tarball.name == f"{m['repo']}-{m['snapshot_id']}.tar.zst"
    return m


def sync(indexer, repo: Path, index: Path, *extra, ok: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([str(indexer), "sync", str(repo), "--index", str(index), "--json", *extra],
                       capture_output=True, text=True, timeout=300)
    assert (p.returncode == 0) == ok, p.stderr
    return p


def test_sync_downloads_the_published_snapshot(indexer, tmp_path):
    server = indexer.parent / "code-index-mcp"
    pub = tmp_path / "pub"
    pub.mkdir()
    http = HttpServer(pub)
    try:
        url = http.url("proj-latest.manifest.json")
        (tmp_path / "ci").mkdir()
        ci = small_repo(tmp_path / "ci" / "proj", {
            "a.py": "def alpha():\n    return 1\n",
            "b.py": "def beta():\n    return alpha()\n",
            ".code-index.yaml": f"snapshot_url: {url}\n",
        })
        m1 = publish(indexer, ci, pub)
        dev = tmp_path / "dev" / "proj"
        git(tmp_path, "clone", "-q", str(ci), str(dev))
        out = tmp_path / "snaps"
        index = out / "proj"

        first = json.loads(sync(indexer, dev, index).stdout)
        assert (first["action"], first["snapshot_id"], first["url"]) == ("downloaded", m1["snapshot_id"], url)
        assert "overlay_paths" not in first  # a clean clone of the published commit
        assert (index / "latest").read_text().strip() == m1["snapshot_id"]
        snap = index / m1["snapshot_id"]
        assert json.loads((snap / "manifest.json").read_text()) == m1
        assert not list(index.glob(".tmp-*"))
        stamp = (snap / "manifest.json").stat().st_mtime_ns
        again = json.loads(sync(indexer, dev, index).stdout)
        assert again["action"] == "up-to-date" and (snap / "manifest.json").stat().st_mtime_ns == stamp

        async def main():
            params = StdioServerParameters(command=str(server), args=["serve", "--index", str(out)])
            async with stdio_client(params) as (r, w):
                async with ClientSession(r, w) as s:
                    await s.initialize()

                    async def names(q):
                        res = (await s.call_tool("search_symbols", {"query": q})).structured_content
                        return {x["name"] for x in res["symbols"]}

                    assert "beta" in await names("beta")
                    # CI publishes the next commit; the developer pulls it and edits a file.
                    (ci / "b.py").write_text("def gamma():\n    return alpha()\n")
                    git_commit_all(ci, "rename beta", date="2024-01-03T03:04:05+00:00")
                    m2 = publish(indexer, ci, pub, pub / f"proj-{m1['snapshot_id']}.tar.zst")
                    assert m2["snapshot_id"] != m1["snapshot_id"]
                    git(dev, "pull", "-q", "--ff-only")
                    (dev / "a.py").write_text("def alpha_edited():\n    return 2\n")
                    second = json.loads(sync(indexer, dev, index).stdout)
                    assert (second["action"], second["previous"], second["snapshot_id"]) == (
                        "downloaded", m1["snapshot_id"], m2["snapshot_id"])
                    assert second["overlay_paths"] == 1
                    await asyncio.sleep(0.4)
                    # The same server process answers from the download and its overlay.
                    got = await names("gamma")
                    assert "gamma" in got and "beta" not in await names("beta")
                    hits = (await s.call_tool("search_symbols", {"query": "alpha_edited"})).structured_content["symbols"]
                    assert [h["name"] for h in hits][:1] == ["alpha_edited"] and hits[0].get("overlay") is True
                    h = (await s.call_tool("health", {})).structured_content["snapshots"][0]
                    assert h["snapshot_id"] == m2["snapshot_id"]
                    return m2

        m2 = asyncio.run(main())

        # A damaged download is refused; latest, its files and the overlay stay.
        (ci / "c.py").write_text("def delta():\n    return 3\n")
        git_commit_all(ci, "add c", date="2024-01-04T03:04:05+00:00")
        m3 = publish(indexer, ci, pub)
        tar = pub / f"proj-{m3['snapshot_id']}.tar.zst"
        good = tar.read_bytes()
        subprocess.run(["bash", "-c", f"zstd -q -d -c {tar} > {tmp_path}/t.tar"], check=True)
        raw = bytearray((tmp_path / "t.tar").read_bytes())
        i = raw.index(b"delta")
        raw[i:i + 5] = b"DELTA"
        (tmp_path / "t.tar").write_bytes(raw)
        subprocess.run(["bash", "-c", f"zstd -q -f -c {tmp_path}/t.tar > {tar}"], check=True)
        p = sync(indexer, dev, index, ok=False)
        assert "E_SNAPSHOT_INVALID" in p.stderr and "does not match its manifest" in p.stderr, p.stderr
        assert (index / "latest").read_text().strip() == m2["snapshot_id"]
        assert not (index / m3["snapshot_id"]).exists() and not list(index.glob(".tmp-*"))
        assert (index / ".overlays" / m2["snapshot_id"]).is_dir()

        # Only signed snapshots, when a key is trusted.
        tar.write_bytes(good)
        keys = tmp_path / "keys"
        k = subprocess.run([str(indexer), "keygen", "--out", str(keys)], capture_output=True, text=True)
        assert k.returncode == 0, k.stderr
        p = sync(indexer, dev, index, "--trust-key", k.stdout.strip(), ok=False)
        assert "E_SIGNATURE_MISSING" in p.stderr, p.stderr
        assert (index / "latest").read_text().strip() == m2["snapshot_id"]
        third = json.loads(sync(indexer, dev, index).stdout)
        assert third["action"] == "downloaded" and third["snapshot_id"] == m3["snapshot_id"]

        # Another repository's snapshots.
        p = sync(indexer, dev, out / "other", ok=False)
        assert "E_SNAPSHOT_INVALID" in p.stderr and "indexed as 'other'" in p.stderr, p.stderr
        assert [p.name for p in (out / "other").iterdir()] == [".lock"]
    finally:
        http.close()
