"""The CLI's edges: bad input gives a coded error with a hint and leaves
earlier snapshots alone; `init`, `status` and `secrets` do what they say."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import yaml

from helpers import TABLES, build, git_commit_all, git_init, sha256_file

ERROR_RE = re.compile(r"error\[([A-Za-z0-9_]+)\]:")


def assert_coded_error(run, *, names=(), exit_code=2):
    """Exit code, an `error[CODE]:` line and a `hint:` line; `names` must
    appear in the hint (the file to fix)."""
    assert run.returncode == exit_code, f"expected exit {exit_code}:\n{run.describe()}"
    assert ERROR_RE.search(run.stderr), f"no error[CODE]: in stderr:\n{run.describe()}"
    hints = [line for line in run.stderr.splitlines() if "hint:" in line]
    assert hints, f"no hint: line in stderr:\n{run.describe()}"
    for n in names:
        assert any(n in h for h in hints), f"hint does not name {n!r}:\n{run.describe()}"
    assert "panicked" not in run.stderr and "RUST_BACKTRACE" not in run.stderr, run.describe()
    return ERROR_RE.search(run.stderr).group(1)


def snapshot_state(out: Path) -> dict[str, str]:
    """Every file and directory under out (hidden too), with file hashes."""
    state = {}
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out).as_posix()
        state[rel] = sha256_file(p) if p.is_file() else "dir"
    return state


@pytest.fixture
def small_repo(tmp_path) -> Path:
    repo = tmp_path / "smallrepo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "core.py").write_text("class Engine:\n    def run(self):\n        return helper()\n\n\ndef helper():\n    return 1\n")
    (repo / "README.md").write_text("# Small\n\nA tiny repo.\n")
    return repo


# --------------------------------------------------------------------------
# Bad input


def test_missing_repo_path(cli, tmp_path):
    missing = tmp_path / "does-not-exist"
    run = cli("index", missing, "--out", tmp_path / "out", check=False)
    assert_coded_error(run)
    assert str(missing) in run.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("manifest.json"))


def test_repo_path_is_a_file(cli, tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    run = cli("index", f, "--out", tmp_path / "out", check=False)
    assert_coded_error(run)
    assert str(f) in run.stderr


@pytest.mark.parametrize(
    "config,what",
    [
        ("exclude: [unclosed\n  - x: [\n", "invalid YAML"),
        ('exclude: ["a[b"]\n', "invalid glob"),
        ("exclude: \"*.py\"\nnot_a_key: 1\n", "unknown key"),
    ],
)
def test_broken_config_fails_and_keeps_earlier_snapshot(cli, indexer, small_repo, tmp_path, config, what):
    out = tmp_path / "out"
    good = build(indexer, small_repo, out, "--no-embeddings")
    before = snapshot_state(out)
    (small_repo / ".code-index.yaml").write_text(config)
    run = cli("index", small_repo, "--out", out, "--no-embeddings", check=False)
    assert_coded_error(run, names=(".code-index.yaml",))
    if what == "invalid glob":
        assert "a[b" in run.stderr
    assert snapshot_state(out) == before, f"a failed build ({what}) changed {out}"
    assert (out / "smallrepo" / "latest").read_text().strip() == good.id


def _unreadable_prefix(probe: Path) -> list[str] | None:
    """A command prefix under which `probe` (chmod 000) cannot be read, or None.
    As root, chmod 000 stops nobody; dropping CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH from the bounding set makes root obey file modes."""
    prefixes = [[]]
    if os.geteuid() == 0:
        prefixes = [["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                     "--inh-caps=-dac_override,-dac_read_search", "--"]]  # fmt: skip
    for prefix in prefixes:
        try:
            p = subprocess.run([*prefix, "cat", str(probe)], capture_output=True)
        except FileNotFoundError:
            continue
        if p.returncode != 0:
            return prefix
    return None


def test_unreadable_file(cli, indexer, small_repo, tmp_path):
    out = tmp_path / "out"
    good = build(indexer, small_repo, out, "--no-embeddings")
    before = snapshot_state(out)
    secret = small_repo / "pkg" / "locked.py"
    secret.write_text("x = 1\n")
    secret.chmod(0)
    try:
        prefix = _unreadable_prefix(secret)
        if prefix is None:
            pytest.skip("cannot make a file unreadable here (root without setpriv/capability drop)")
        run = cli("index", small_repo, "--out", out, "--no-embeddings", check=False, prefix=prefix)
        assert_coded_error(run, names=("locked.py",))
        assert snapshot_state(out) == before, "a failed build changed the out dir (or left a temp dir)"

        run = cli("index", small_repo, "--out", out, "--no-embeddings", "--skip-unreadable", "--json", prefix=prefix)
        info = run.json()
        snap_dir = Path(info["snapshot_dir"])
        manifest = json.loads((snap_dir / "manifest.json").read_text())
        assert info["skipped"]["unreadable"] == 1, info
        # The snapshot the build reports must carry the same facts as its summary
        # (here its data files equal the earlier good build's: same data, other skips).
        assert manifest["skipped"]["unreadable"] == 1, (
            f"manifest of {snap_dir.name} says skipped={manifest['skipped']}, the build's summary {info['skipped']}"
        )
        paths = set(pq.read_table(snap_dir / "files.parquet", columns=["path"]).column("path").to_pylist())
        assert "pkg/locked.py" not in paths and "pkg/core.py" in paths
        assert good.id in {p.name for p in (out / "smallrepo").iterdir()}, "the earlier snapshot was removed"
    finally:
        secret.chmod(0o644)


def test_bad_previous(cli, small_repo, tmp_path):
    bogus = tmp_path / "not-a-snapshot"
    bogus.mkdir()
    run = cli("index", small_repo, "--out", tmp_path / "out", "--previous", bogus, check=False)
    assert run.returncode != 0, run.describe()
    assert ERROR_RE.search(run.stderr), run.describe()


def test_status_of_a_non_snapshot(cli, tmp_path):
    run = cli("status", tmp_path, check=False)
    assert_coded_error(run)


# --------------------------------------------------------------------------
# init


def test_init_writes_a_config_that_round_trips(cli, indexer, small_repo, tmp_path):
    cfg = small_repo / ".code-index.yaml"
    run = cli("init", small_repo)
    assert cfg.is_file(), run.describe()
    text = cfg.read_text()
    parsed = yaml.safe_load(text)
    assert parsed is None or isinstance(parsed, dict), f"starter config is not a mapping: {parsed!r}"

    again = cli("init", small_repo, check=False)
    assert again.returncode != 0, "init overwrote an existing config without --force"
    assert ERROR_RE.search(again.stderr) and "hint:" in again.stderr, again.describe()
    assert cfg.read_text() == text

    cfg.write_text("# my edits\n" + text)
    cli("init", small_repo, "--force")
    assert cfg.read_text() == text, "--force should write the starter file again"

    a = build(indexer, small_repo, tmp_path / "a", "--no-embeddings")
    assert a.info["files"] >= 3
    if isinstance(parsed, dict):
        # Same settings in other words (re-serialised) -> same config hash.
        cfg.write_text(yaml.safe_dump(parsed, sort_keys=True))
        b = build(indexer, small_repo, tmp_path / "b", "--no-embeddings")
        assert b.manifest["config_hash"] == a.manifest["config_hash"]
        assert b.id == a.id


# --------------------------------------------------------------------------
# status


def test_status_reports_behind_head(cli, indexer, small_repo, tmp_path):
    git_init(small_repo)
    first = git_commit_all(small_repo, "first")
    snap = build(indexer, small_repo, tmp_path / "out", "--no-embeddings")
    g = snap.manifest["git"]
    assert g["commit"] == first and g["branch"] == "main" and g["dirty"] is False
    assert g["commit_time"].startswith("2024-01-02")

    st = cli("status", snap.dir, "--repo", small_repo, "--json").json()
    assert st["behind_head"] is False and st["commits_behind"] == 0, st

    (small_repo / "pkg" / "new.py").write_text("y = 2\n")
    git_commit_all(small_repo, "second", date="2024-02-03T04:05:06+00:00")
    (small_repo / "pkg" / "newer.py").write_text("z = 3\n")
    git_commit_all(small_repo, "third", date="2024-02-04T04:05:06+00:00")
    st = cli("status", snap.dir, "--repo", small_repo, "--json").json()
    assert st["behind_head"] is True and st["commits_behind"] == 2, st

    text = cli("status", snap.dir, "--repo", small_repo).stdout
    assert snap.id in text and "behind" in text.lower(), text
    assert "files" in text


def test_dirty_tree_is_recorded(indexer, small_repo, tmp_path):
    git_init(small_repo)
    git_commit_all(small_repo, "first")
    (small_repo / "pkg" / "core.py").write_text("# edited\n")
    snap = build(indexer, small_repo, tmp_path / "out", "--no-embeddings")
    assert snap.manifest["git"]["dirty"] is True


# --------------------------------------------------------------------------
# secrets

AWS_KEY = "AKIAZ7QW3RTY5UIM2PLN"  # AKIA + 16 base32 characters; not a real key
PG_PASSWORD = "Sup3rS3cretPw0rd"
PG_URL = f"postgres://app_user:{PG_PASSWORD}@db.internal.example:5432/app"
KEY_BODY = [
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo",
]
IGNORED_KEY = "AKIAQ2WE4RTY6UIO7PAS"


@pytest.fixture
def secrets_repo(tmp_path) -> tuple[Path, dict[str, bytes]]:
    repo = tmp_path / "secretrepo"
    files = {
        "app/settings.py": f'DEBUG = False\nAWS_ACCESS_KEY_ID = "{AWS_KEY}"\nREGION = "eu-west-1"\n',
        "app/db.py": f'import os\n\nDATABASE_URL = os.environ.get("DATABASE_URL", "{PG_URL}")\n',
        "deploy/server.pem": "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(KEY_BODY) + "\n-----END RSA PRIVATE KEY-----\n",
        "fixtures/fake_credentials.py": f'# test fixture, not a real key\nKEY = "{IGNORED_KEY}"\n',
        "app/clean.py": "def f():\n    return 'nothing to see'\n",
        ".code-index.yaml": 'secrets:\n  ignore: ["fixtures/**"]\n',
    }
    data = {}
    for rel, text in files.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        data[rel] = text.encode()
    return repo, data


SECRET_NEEDLES = [AWS_KEY, PG_PASSWORD, *KEY_BODY]


def test_secrets_list(cli, secrets_repo):
    repo, data = secrets_repo
    findings = cli("secrets", repo, "--list", "--json").json()
    assert isinstance(findings, list)
    for f in findings:
        assert {"path", "line", "kind"} <= set(f), f
        assert isinstance(f["line"], int) and f["line"] >= 1 and f["kind"]
    by_path = {}
    for f in findings:
        by_path.setdefault(f["path"], []).append(f)
    assert 2 in [f["line"] for f in by_path.get("app/settings.py", [])], findings
    assert 3 in [f["line"] for f in by_path.get("app/db.py", [])], findings
    assert any(1 <= f["line"] <= 5 for f in by_path.get("deploy/server.pem", [])), findings
    assert "fixtures/fake_credentials.py" not in by_path, "secrets.ignore did not hide the fixture's finding"
    assert "app/clean.py" not in by_path

    human = cli("secrets", repo, "--list")
    for out in (json.dumps(findings), human.stdout, human.stderr):
        for needle in SECRET_NEEDLES:
            assert needle not in out, f"`secrets --list` prints the secret {needle[:8]}..."
    for path in ("app/settings.py", "app/db.py", "deploy/server.pem"):
        assert path in human.stdout


def test_secrets_redacted_in_snapshot(indexer, secrets_repo, tmp_path):
    repo, data = secrets_repo
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    rows = {r["path"]: r for r in snap.read("files").to_pylist()}
    for path in ("app/settings.py", "app/db.py", "deploy/server.pem"):
        r = rows[path]
        original = data[path].decode()
        stored = r["content"]
        assert r["has_secrets"] is True and r["secret_count"] >= 1, (path, r["has_secrets"], r["secret_count"])
        assert len(stored.encode()) == len(data[path]) and len(stored) == len(original), f"{path}: redaction changed the length"
        changed = [i for i, (a, b) in enumerate(zip(original, stored)) if a != b]
        assert changed, f"{path}: nothing redacted"
        assert all(stored[i] == "*" for i in changed), f"{path}: redaction is not '*'"
        # The hash is of what is published: a guess of the secret cannot be confirmed against it.
        assert r["content_sha256"] == hashlib.sha256(stored.encode()).hexdigest() != hashlib.sha256(data[path]).hexdigest()
        assert r["line_count"] == original.count("\n")
    assert "*" * len(PG_PASSWORD) in rows["app/db.py"]["content"]

    ignored = rows["fixtures/fake_credentials.py"]
    assert ignored["has_secrets"] is False and ignored["content"] == data["fixtures/fake_credentials.py"].decode()
    assert rows["app/clean.py"]["has_secrets"] is False

    # No secret survives anywhere in the snapshot: chunks, symbol signatures, ...
    for t in TABLES:
        table = pq.read_table(snap.table(t))
        for name in table.column_names:
            col = table.column(name)
            if not pa.types.is_string(col.type):
                continue
            for needle in SECRET_NEEDLES:
                assert not pc.any(pc.match_substring(col, needle)).as_py(), f"{t}.{name} holds a secret ({needle[:8]}...)"
    for p in snap.dir.iterdir():
        raw = p.read_bytes()
        for needle in SECRET_NEEDLES:
            assert needle.encode() not in raw, p.name

    # The server says a file was redacted, and how many secrets (its text has only '*' there).
    import asyncio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def read(paths):
        params = StdioServerParameters(command=str(indexer.parent / "code-index-mcp"), args=["serve", "--index", str(snap.dir)])
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return [await s.call_tool("read_file", {"path": p}) for p in paths]

    red, clean = asyncio.run(read(["app/db.py", "app/clean.py"]))
    assert red.structured_content["redacted_secrets"] == rows["app/db.py"]["secret_count"] >= 1
    assert f"[{rows['app/db.py']['secret_count']} secret(s) in this file were redacted" in red.content[0].text
    assert "redacted_secrets" not in clean.structured_content and "redacted" not in clean.content[0].text


def test_secret_ignore_values(cli, secrets_repo):
    """`secrets.ignore_values` (documented harmless values) hides a finding too."""
    repo, _ = secrets_repo
    (repo / ".code-index.yaml").write_text(f'secrets:\n  ignore: ["fixtures/**"]\n  ignore_values: ["{AWS_KEY}"]\n')
    findings = cli("secrets", repo, "--list", "--json").json()
    assert not any(f["path"] == "app/settings.py" for f in findings), findings
    assert any(f["path"] == "app/db.py" for f in findings)


# --------------------------------------------------------------------------
# naming


def test_name_flag_and_config_name(indexer, small_repo, tmp_path):
    a = build(indexer, small_repo, tmp_path / "out", "--no-embeddings", "--name", "custom-name")
    assert a.dir.parent == tmp_path / "out" / "custom-name"
    assert a.manifest["repo"] == "custom-name" and a.info["repo"] == "custom-name"
    (small_repo / ".code-index.yaml").write_text("name: from-config\n")
    b = build(indexer, small_repo, tmp_path / "out", "--no-embeddings")
    assert b.dir.parent == tmp_path / "out" / "from-config" and b.manifest["repo"] == "from-config"
    # The flag wins over the config.
    c = build(indexer, small_repo, tmp_path / "out", "--no-embeddings", "--name", "flag-wins")
    assert c.manifest["repo"] == "flag-wins"
    assert (tmp_path / "out" / "custom-name" / "latest").read_text().strip() == a.id


@pytest.mark.parametrize("env, code, name", [
    ({"CODE_INDEX_DUCKDB_MEMORY": "lots"}, "E_CONFIG", "CODE_INDEX_DUCKDB_MEMORY"),
    ({"CODE_INDEX_CACHE": "/proc/no-such-dir"}, "E_CACHE", "CODE_INDEX_CACHE"),
])
def test_server_environment_errors_are_coded(indexer, small_repo, tmp_path, env, code, name):
    """A bad server setting stops it with its own code and names the variable to fix."""
    out = tmp_path / "out"
    build(indexer, small_repo, out)
    server = indexer.parent / "code-index-mcp"
    run = subprocess.run([str(server), "sql", "--index", str(out), "SELECT 1"], capture_output=True, text=True,
                         env={**os.environ, "CODE_INDEX_CACHE": str(tmp_path / "cache"), **env})
    assert run.returncode == 2, run.stderr
    m = ERROR_RE.search(run.stderr)
    assert m and m.group(1) == code, run.stderr
    assert any(name in line for line in run.stderr.splitlines() if "hint:" in line), run.stderr
    assert "panicked" not in run.stderr


def test_sync_outside_a_repository_refuses(cli, tmp_path):
    """`sync` with no argument, run where there is no .git or config (here
    or above), must not index the whole directory (/tmp, $HOME)."""
    d = tmp_path / "nogit" / "sub"
    d.mkdir(parents=True)
    (d / "a.py").write_text("def f():\n    return 1\n")
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "CODE_INDEX_HOME": str(home / ".cache/code-index")}
    env.pop("CODE_INDEX_SNAPSHOTS", None)
    run = cli("sync", "--no-embeddings", check=False, cwd=d, env=env)
    assert_coded_error(run)
    assert "not inside a repository" in run.stderr and f"code-indexer sync {d}" in run.stderr, run.stderr
    assert not list(home.rglob("manifest.json")), "a snapshot was written"


def test_output_piped_into_head_stops_quietly(indexer, server_bin, tmp_path):
    """`| head` closes the pipe early: the commands stop like rg or cat do,
    not with a Rust panic (exit 101). The outputs are far larger than a pipe's buffer."""
    repo = tmp_path / "big"
    repo.mkdir()
    (repo / "big.py").write_text("".join(f"def f{i}():\n    return {i}\n" for i in range(20000)))
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    for cmd in (
        [indexer, "sql", snap.dir, "SELECT name FROM symbols", "--max-rows", "100000"],
        [server_bin, "grep", "--index", snap.dir, "return", "--limit", "1000"],
        [server_bin, "sql", "--index", snap.dir, "--max-rows", "100000", "SELECT name FROM symbols"],
    ):
        p = subprocess.run(["bash", "-c", '"$@" | head -c 1 >/dev/null; echo "${PIPESTATUS[0]}" >&2', "x", *map(str, cmd)],
                           capture_output=True, text=True, timeout=120)
        status = p.stderr.strip().splitlines()[-1]
        assert "panicked" not in p.stderr and status in ("0", "141"), (cmd[1], status, p.stderr[-500:])


@pytest.mark.parametrize("sig", ["INT", "TERM"])
def test_an_interrupted_build_leaves_nothing_behind(indexer, corpora, tmp_path, sig):
    """Ctrl-C (or SIGTERM) during `index` removes the snapshot being written
    (no `.tmp-<pid>` left until the next build), exits 130, and leaves the
    earlier snapshot and `latest` byte for byte; a first build leaves no
    empty repository directory."""
    import signal
    import time
    tree = tmp_path / "tree"
    subprocess.run(["cp", "-a", str(corpora / "django"), str(tree)], check=True)
    out = tmp_path / "out"

    def interrupted():
        p = subprocess.Popen([str(indexer), "index", str(tree), "--out", str(out), "--no-embeddings"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while not list(out.glob("*/.tmp-*")) and time.time() < deadline and p.poll() is None:
            time.sleep(0.01)
        assert p.poll() is None, "the build finished before it could be interrupted"
        p.send_signal(getattr(signal, "SIG" + sig))
        _, err = p.communicate(timeout=60)
        return p.returncode, err

    rc, err = interrupted()
    assert rc == 130 and "interrupted" in err and "panicked" not in err, (rc, err)
    assert not out.exists() or not any(out.rglob("*")), sorted(out.rglob("*"))[:5]
    # With an earlier snapshot.
    build(indexer, tree, out, "--no-embeddings")
    before = snapshot_state(out)
    (tree / "django" / "added_probe.py").write_text("def probe():\n    return 1\n")
    rc, err = interrupted()
    assert rc == 130, err
    assert snapshot_state(out) == before


def test_diff_refuses_a_damaged_snapshot(indexer, small_repo, tmp_path):
    """`diff` checks every table against its manifest's sha256, as `status`
    and the server do: a damaged table is a coded error, not a diff of garbage."""
    out = tmp_path / "out"
    a = build(indexer, small_repo, out, "--no-embeddings")
    (small_repo / "pkg" / "more.py").write_text("def more():\n    return 2\n")
    b = build(indexer, small_repo, out, "--no-embeddings")
    ok = subprocess.run([str(indexer), "diff", str(a.dir), str(b.dir), "--json"], capture_output=True, text=True)
    assert ok.returncode == 0 and "more.py" in ok.stdout, ok.stderr
    # chunks.parquet is a table diff never reads: its damage must be found all the same.
    p = b.dir / "chunks.parquet"
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))
    for args in ([a.dir, b.dir], [b.dir, a.dir]):
        r = subprocess.run([str(indexer), "diff", *map(str, args), "--json"], capture_output=True, text=True)
        assert r.returncode == 2 and "E_SNAPSHOT_INVALID" in r.stderr and "chunks.parquet" in r.stderr and "hint:" in r.stderr, r.stderr
        assert r.stdout == ""


def test_init_lists_source_modules_first_and_says_what_it_left_out(cli, tmp_path):
    """More modules than the starter file lists: it says how many it lists of
    how many, puts source packages before test apps and larger before smaller,
    and its navigation docs are text files, not the docs folder's images."""
    repo = tmp_path / "proj"
    (repo / "src" / "core").mkdir(parents=True)
    (repo / "src" / "core" / "__init__.py").write_text("")
    for i in range(5):
        (repo / "src" / "core" / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    for t in range(60):
        d = repo / "tests" / f"app{t:02}"
        d.mkdir(parents=True)
        (d / "__init__.py").write_text("")
        (d / "test_x.py").write_text("def test_x():\n    assert True\n")
    (repo / "docs" / "img").mkdir(parents=True)
    (repo / "docs" / "guide.md").write_text("# Guide\n")
    (repo / "docs" / "img" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    (repo / "docs" / "style.css").write_text("body { color: red }\n")
    run = cli("init", repo)
    text = (repo / ".code-index.yaml").read_text()
    listed = re.findall(r"^  - path: (\S+)", text, re.M)
    inferred = int(re.search(r"\((\d+) modules inferred, (\d+) listed", run.stdout).group(1))
    assert inferred >= 61 and len(listed) == 50 and f"50 of the {inferred} inferred modules" in text, (run.stdout, text[:800])
    assert listed[0] == "src/core", listed[:3]
    docs = re.search(r"# navigation docs found: (.*)", text).group(1)
    assert "guide.md" in docs and "logo.png" not in docs and "style.css" not in docs, docs
    assert isinstance(yaml.safe_load(text), dict)


def test_a_module_path_that_holds_no_file_is_warned_about(indexer, small_repo, tmp_path):
    """`modules: [{path: nope}]` (a typo, a moved directory) describes nothing:
    the build goes on and says which configured path holds no indexed file."""
    (small_repo / ".code-index.yaml").write_text(
        "modules:\n  - path: pkg\n    description: the package\n  - path: nope\n    description: a typo\n")
    p = subprocess.run([str(indexer), "index", str(small_repo), "--out", str(tmp_path / "out"), "--no-embeddings"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    warnings = [l for l in p.stderr.splitlines() if l.startswith("warning:")]
    assert len(warnings) == 1 and '"nope"' in warnings[0] and ".code-index.yaml" in warnings[0], p.stderr
