"""Safe to publish: the CI gate (`index --secrets=fail`), `secrets --list`
that never prints a secret (unless --reveal on a terminal), and signed
snapshots: `code-indexer keygen` / `sign`, and a server that trusts a key
refuses a snapshot whose signature is missing, wrong, or by another key, from
a local directory and from a download alike."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from helpers import build, git_init, run_cli
from test_faults import publish, serve_dir

ROOT = Path(__file__).resolve().parent.parent
SECRET = "ghp_" + "Zx81Qv2LmT0pRw5KcY7nBd4HsJ6gFa9UeXi3"  # a GitHub token's shape, random
SECRET_LINE = f'GITHUB_TOKEN = "{SECRET}"\n'


@pytest.fixture
def repo(tmp_path) -> Path:
    r = tmp_path / "signed"
    (r / "pkg").mkdir(parents=True)
    (r / "pkg" / "core.py").write_text("def run():\n    return 1\n")
    return r


@pytest.fixture(scope="module")
def server_bin(indexer) -> Path:
    return indexer.parent / "code-index-mcp"


def keygen(indexer, d: Path) -> tuple[Path, str]:
    r = run_cli(indexer, "keygen", "--out", d)
    public = r.stdout.strip()
    assert public.startswith("ed25519:"), r.stdout
    return d / "code-index.key", public


def load(server_bin: Path, index, *keys: str, env=None) -> subprocess.CompletedProcess:
    args = [str(server_bin), "sql", "--index", str(index), "--json"]
    for k in keys:
        args += ["--trust-key", k]
    return subprocess.run(args + ["SELECT count(*) FROM files"], capture_output=True, text=True, timeout=120, env=env)


def test_secrets_fail_gate(indexer, repo, tmp_path):
    out = tmp_path / "out"
    good = build(indexer, repo, out, "--no-embeddings")
    (repo / "pkg" / "settings.py").write_text(SECRET_LINE)
    for how in (["--secrets=fail"], []):
        if not how:
            (repo / ".code-index.yaml").write_text("secrets:\n  action: fail\n")
        r = run_cli(indexer, "index", repo, "--out", out, "--no-embeddings", *how, check=False)
        assert r.returncode == 2, r.describe()
        assert "error[E_SECRETS_FOUND]" in r.stderr and "pkg/settings.py:1: github_token" in r.stderr, r.stderr
        assert SECRET not in r.stderr + r.stdout and SECRET[4:12] not in r.stderr + r.stdout
        assert "hint:" in r.stderr and "ignore_values" in r.stderr
        assert (out / "signed" / "latest").read_text().strip() == good.id
        assert sorted(p.name for p in (out / "signed").iterdir()) == sorted([good.id, "latest"])
    # The flag overrides the config: redact publishes it masked, as a build
    # without the setting would (the action is not part of the config hash).
    snap = build(indexer, repo, out, "--no-embeddings", "--secrets=redact")
    (repo / ".code-index.yaml").unlink()
    plain = build(indexer, repo, tmp_path / "plain", "--no-embeddings")
    assert plain.id == snap.id
    content = {r["path"]: r["content"] for r in snap.read("files").to_pylist()}
    assert SECRET not in content["pkg/settings.py"] and "*" * len(SECRET) in content["pkg/settings.py"]


def test_secrets_list_shows_no_secret_unless_revealed_on_a_terminal(indexer, repo):
    (repo / "pkg" / "settings.py").write_text(SECRET_LINE)
    rows = run_cli(indexer, "secrets", repo, "--list", "--json").json()
    assert [(r["path"], r["line"], r["kind"]) for r in rows] == [("pkg/settings.py", 1, "github_token")]
    assert len(rows[0]["fingerprint"]) == 12 and "value" not in rows[0]
    plain = run_cli(indexer, "secrets", repo, "--list", "--reveal")
    assert SECRET not in plain.stdout and rows[0]["fingerprint"] in plain.stdout, "--reveal printed into a pipe"
    tty = subprocess.run(["script", "-qec", f"{indexer} secrets {repo} --list --reveal", "/dev/null"],
                         capture_output=True, text=True, timeout=60)
    assert SECRET in tty.stdout, tty.stdout


def test_keygen_sign_and_verify(indexer, server_bin, repo, tmp_path):
    key, public = keygen(indexer, tmp_path / "keys")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    again = run_cli(indexer, "keygen", "--out", tmp_path / "keys", check=False)
    assert again.returncode == 2 and "E_KEY_EXISTS" in again.stderr
    _, other = keygen(indexer, tmp_path / "other")
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")

    # Unsigned: served when no key is trusted; refused when one is.
    assert load(server_bin, snap.dir).returncode == 0
    r = load(server_bin, snap.dir, public)
    assert r.returncode != 0 and "E_SIGNATURE_MISSING" in r.stderr, r.stderr

    run_cli(indexer, "sign", snap.dir, "--key", key)
    assert (snap.dir / "manifest.sig").is_file()
    r = load(server_bin, snap.dir, public)
    assert r.returncode == 0, r.stderr
    # Also through the environment, and the key may be one of several.
    env = dict(os.environ, CODE_INDEX_TRUSTED_KEYS=f"{other},{public}")
    assert load(server_bin, snap.dir, env=env).returncode == 0
    # Another key only.
    r = load(server_bin, snap.dir, other)
    assert r.returncode != 0 and "E_SIGNATURE_UNTRUSTED" in r.stderr, r.stderr

    # A tampered manifest: the signature no longer holds.
    bad = tmp_path / "bad-manifest"
    shutil.copytree(snap.dir, bad)
    m = json.loads((bad / "manifest.json").read_text())
    m["git"]["branch"] = "evil"
    (bad / "manifest.json").write_text(json.dumps(m, indent=2))
    r = load(server_bin, bad, public)
    assert r.returncode != 0 and "E_SIGNATURE_INVALID" in r.stderr, r.stderr
    # A tampered table: the signed manifest's sha256 no longer matches.
    bad = tmp_path / "bad-table"
    shutil.copytree(snap.dir, bad)
    data = bytearray((bad / "symbols.parquet").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (bad / "symbols.parquet").write_bytes(bytes(data))
    r = load(server_bin, bad, public)
    assert r.returncode != 0 and "E_SNAPSHOT_INVALID" in r.stderr and "symbols.parquet" in r.stderr, r.stderr
    # A signature file that is not one.
    bad = tmp_path / "bad-sig"
    shutil.copytree(snap.dir, bad)
    (bad / "manifest.sig").write_text("{}")
    r = load(server_bin, bad, public)
    assert r.returncode != 0 and "E_SIGNATURE_INVALID" in r.stderr, r.stderr
    # A malformed key is refused with its code, and so is an empty one (`--trust-key "$UNSET"`
    # must not turn the check off).
    for bad_key in ("ed25519:nope", ""):
        r = load(server_bin, snap.dir, bad_key)
        assert r.returncode != 0 and "E_SIGNING_KEY" in r.stderr, r.stderr
    # Signing without a key says how to get one.
    r = run_cli(indexer, "sign", snap.dir, check=False, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 2 and "E_SIGNING_KEY" in r.stderr and "keygen" in r.stderr


def test_health_says_which_are_signed(indexer, server_bin, repo, tmp_path):
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    key, public = keygen(indexer, tmp_path / "keys")
    signed = build(indexer, repo, tmp_path / "a", "--no-embeddings", "--name", "signedrepo")
    run_cli(indexer, "sign", signed.dir, "--key", key)
    plain = build(indexer, repo, tmp_path / "b", "--no-embeddings", "--name", "plainrepo")

    async def health(*args):
        params = StdioServerParameters(command=str(server_bin), args=["serve", *args])
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                res = await s.call_tool("health", {})
                return {h["repo"]: (h["signed"], h["verified_by"]) for h in res.structured_content["snapshots"]}

    got = asyncio.run(health("--index", str(signed.dir), "--index", str(plain.dir)))
    assert got == {"signedrepo": (True, None), "plainrepo": (False, None)}
    key_id = json.loads((signed.dir / "manifest.sig").read_text())["key_id"]
    got = asyncio.run(health("--index", str(signed.dir), "--trust-key", public))
    assert got == {"signedrepo": (True, key_id)}


def test_signed_publish_and_download(indexer, server_bin, corpora, tmp_path):
    key, public = keygen(indexer, tmp_path / "keys")
    _, other = keygen(indexer, tmp_path / "other")
    repo = shutil.copytree(corpora / "ts-rxjs", tmp_path / "rx")
    env_sign = {"CODE_INDEX_SIGNING_KEY": key.read_text()}
    p = subprocess.run(["bash", str(ROOT / "ci/publish-snapshot.sh"), str(repo), str(tmp_path / "pub")], capture_output=True,
                       text=True, env={"CODE_INDEXER": str(indexer), "CODE_INDEX_ARGS": "--no-embeddings",
                                       "PATH": "/usr/bin:/bin:/usr/local/bin", **env_sign}, timeout=300)
    assert p.returncode == 0, p.stderr
    tarball, manifest = [Path(x) for x in p.stdout.split()]
    assert manifest.with_suffix(".sig").is_file()
    listing = subprocess.run(["tar", "-t", "--zstd", "-f", str(tarball)], capture_output=True, text=True).stdout.split()
    assert "manifest.sig" in listing
    srv = serve_dir(tarball.parent)
    try:
        url = f"http://127.0.0.1:{srv.server_port}/{tarball.name}"
        cache = tmp_path / "cache"
        env = {"CODE_INDEX_CACHE": str(cache), "PATH": "/usr/bin:/bin"}
        r = load(server_bin, url, other, env=env)
        assert r.returncode != 0 and "E_SIGNATURE_UNTRUSTED" in r.stderr, r.stderr
        assert not any((cache / "downloads").rglob("manifest.json")), "a refused download was kept"
        r = load(server_bin, url, public, env=env)
        assert r.returncode == 0, r.stderr
    finally:
        srv.shutdown()
    # Unsigned publishing still works and is refused by a server that trusts a key.
    unsigned_tar, _ = publish(indexer, repo, tmp_path / "pub2")
    srv = serve_dir(unsigned_tar.parent)
    try:
        r = load(server_bin, f"http://127.0.0.1:{srv.server_port}/{unsigned_tar.name}", public,
                 env={"CODE_INDEX_CACHE": str(tmp_path / "cache2"), "PATH": "/usr/bin:/bin"})
        assert r.returncode != 0 and "E_SIGNATURE_MISSING" in r.stderr, r.stderr
    finally:
        srv.shutdown()


def test_keygen_keeps_keys_out_of_checkouts_and_status_names_the_signer(indexer, repo, tmp_path):
    """The secret key never lands in a checkout by default: `--out` inside a
    git work tree is refused, and the default is ~/.config/code-index/keys.
    keygen prints the key id that `sign` and `status` use."""
    git_init(repo)
    r = run_cli(indexer, "keygen", "--out", repo / "keys", check=False)
    assert r.returncode == 2 and "E_OUT_DIR" in r.stderr and "inside the git checkout" in r.stderr and "hint:" in r.stderr, r.stderr
    assert not (repo / "keys").exists()
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home)}
    env.pop("XDG_CONFIG_HOME", None)
    k = subprocess.run([str(indexer), "keygen"], cwd=repo, capture_output=True, text=True, env=env)
    assert k.returncode == 0, k.stderr
    key = home / ".config" / "code-index" / "keys" / "code-index.key"
    assert key.is_file() and (key.stat().st_mode & 0o777) == 0o600 and not list(repo.rglob("code-index.key"))
    key_id = re.search(r"key id:\s+([0-9a-f]{16})", k.stderr).group(1)
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    st = lambda: run_cli(indexer, "status", snap.dir, check=False)
    assert "signed    no" in st().stdout
    s = run_cli(indexer, "sign", snap.dir, "--key", key)
    assert key_id in s.stdout
    assert f"signed    by key {key_id}" in st().stdout
    assert json.loads(run_cli(indexer, "status", snap.dir, "--json").stdout)["signed_by"] == key_id
