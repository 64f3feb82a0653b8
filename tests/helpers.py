"""Shared helpers for the end-to-end tests: running the `code-indexer` CLI,
reading snapshots, and the independent oracles (ripgrep's file list and our
own reading of the documented default exclusions).

Kept out of conftest.py so test modules can import them by name.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

REPO_ROOT = Path(__file__).resolve().parent.parent
SCHEMAS_RS = REPO_ROOT / "schemas" / "src" / "lib.rs"
# `shared/` sits beside the repository checkout (the repo's parent dir).
SHARED_DIR = REPO_ROOT.parent / "shared"
CORPORA_SCRIPT = SHARED_DIR / "bench" / "corpora.sh"
TEST_CORPORA = ("django", "go-stdlib", "rust-crates", "ts-rxjs", "ts-effect")

TABLES = ("files", "chunks", "symbols", "references", "edges", "patterns")
PARQUET_FILES = tuple(f"{t}.parquet" for t in TABLES)
# The indexer's default size limit: none, as rg. Files over PARSE_MAX_BYTES are indexed as text only.
DEFAULT_MAX_FILE_SIZE = None
PARSE_MAX_BYTES = 1024 * 1024

MANIFEST_KEYS = {
    "schema_version",
    "feature_version",
    "tool",
    "tool_version",
    "repo",
    "git",
    "config_hash",
    "input_hash",
    "snapshot_id",
    "files",
    "skipped",
    "embeddings",
}
GIT_KEYS = {"commit", "branch", "commit_time", "dirty"}
SKIPPED_KEYS = {"default_excluded", "config_excluded", "too_large", "binary", "unreadable"}
def _kv_keys() -> tuple[str, ...]:
    """The Parquet key-value metadata keys, as schemas/src/lib.rs lists them (KV_KEYS)."""
    text = SCHEMAS_RS.read_text()
    m = re.search(r"pub const KV_KEYS: &\[&str\] = &\[(.*?)\];", text, re.S)
    assert m, f"KV_KEYS not found in {SCHEMAS_RS}"
    return tuple(re.findall(r'"([\w.]+)"', m.group(1)))



# Generous: a cold build of go-stdlib on a loaded 2-core machine.
BUILD_TIMEOUT = 1800


# --------------------------------------------------------------------------
# Locating things


def ort_tools() -> Path | None:
    """The private directory where scripts/setup.sh installs onnxruntime's
    Python package (with onnx and numpy); None when it is missing."""
    d = Path(os.environ.get("CODE_INDEX_HOME") or Path.home() / ".cache/code-index") / "pytools/onnxruntime-1.31.1"
    return d if (d / "onnxruntime").is_dir() else None


def indexer_path() -> Path:
    """The binary under test: $CODE_INDEXER, else the release build in
    $CARGO_TARGET_DIR (default ~/.cache/code-index/target)."""
    env = os.environ.get("CODE_INDEXER")
    if env:
        return Path(env)
    target = os.environ.get("CARGO_TARGET_DIR") or str(Path.home() / ".cache" / "code-index" / "target")
    return Path(target) / "release" / "code-indexer"


def corpora_root() -> Path:
    env = os.environ.get("CODE_INDEX_CORPORA")
    return Path(env) if env else Path.home() / ".cache" / "code-index" / "corpora"


# --------------------------------------------------------------------------
# Running the CLI


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def json(self):
        try:
            return json.loads(self.stdout)
        except json.JSONDecodeError as e:
            raise AssertionError(f"stdout of {self.cmdline()} is not one JSON value ({e}):\n{self.stdout[:2000]}") from e

    def cmdline(self) -> str:
        return " ".join(self.args)

    def describe(self) -> str:
        return (
            f"$ {self.cmdline()}\nexit {self.returncode} after {self.seconds:.1f}s\n"
            f"--- stdout ---\n{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}"
        )


def run_cli(indexer: Path, *args, check: bool = True, timeout: float = BUILD_TIMEOUT, cwd=None, prefix=(), env=None) -> Run:
    """Run `code-indexer ARGS`; with check=True a non-zero exit fails the test
    with the full command, exit code and output."""
    cmd = [*map(str, prefix), str(indexer), *map(str, args)]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    run = Run(cmd, p.returncode, p.stdout, p.stderr, time.monotonic() - t0)
    if check and p.returncode != 0:
        raise AssertionError(f"command failed:\n{run.describe()}")
    return run


@dataclass
class Snapshot:
    """A snapshot written by `code-indexer index ... --json`."""

    dir: Path
    out: Path
    repo: Path
    info: dict
    seconds: float
    manifest: dict = field(init=False)

    def __post_init__(self):
        self.manifest = json.loads((self.dir / "manifest.json").read_text())

    @property
    def id(self) -> str:
        return self.dir.name

    def table(self, name: str) -> Path:
        return self.dir / f"{name}.parquet"

    def read(self, name: str, columns=None):
        return pq.read_table(self.table(name), columns=columns)

    def paths(self) -> set[str]:
        return set(self.read("files", ["path"]).column("path").to_pylist())


def search_code(server_bin: Path, snap_dir: Path, query: str, mode: str, limit: int, env: dict | None = None) -> list[dict]:
    """`code-index-mcp search-code` over one snapshot: its results, with
    `env` (e.g. `CODE_INDEX_RANK`) on top of this process's environment."""
    p = subprocess.run(
        [str(server_bin), "search-code", "--index", str(snap_dir), "--mode", mode, "--limit", str(limit), query],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["results"]


def build(indexer: Path, repo: Path, out: Path, *extra, timeout: float = BUILD_TIMEOUT) -> Snapshot:
    """`code-indexer index REPO --out OUT --json EXTRA...` and the snapshot it wrote."""
    run = run_cli(indexer, "index", repo, "--out", out, "--json", *extra, timeout=timeout)
    info = run.json()
    assert isinstance(info, dict) and "snapshot_dir" in info, f"unexpected --json output: {run.stdout[:1000]}"
    snap_dir = Path(info["snapshot_dir"])
    if not snap_dir.is_absolute():
        snap_dir = (Path.cwd() / snap_dir).resolve()
    assert (snap_dir / "manifest.json").is_file(), f"no manifest in {snap_dir}\n{run.describe()}"
    return Snapshot(dir=snap_dir, out=Path(out), repo=Path(repo), info=info, seconds=run.seconds)


# --------------------------------------------------------------------------
# Files and trees


def sha256_file(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every regular file below root (hidden ones too), by relative path."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def diff_trees(a: Path, b: Path) -> list[str]:
    """Human-readable differences between two directory trees (empty: identical)."""
    ta, tb = tree_bytes(a), tree_bytes(b)
    problems = []
    for k in sorted(ta.keys() - tb.keys()):
        problems.append(f"only in {a}: {k}")
    for k in sorted(tb.keys() - ta.keys()):
        problems.append(f"only in {b}: {k}")
    for k in sorted(ta.keys() & tb.keys()):
        if ta[k] != tb[k]:
            problems.append(f"differs: {k} ({len(ta[k])} vs {len(tb[k])} bytes)")
    return problems


def copy_tree(src: Path, dst: Path, ignore_git: bool = False) -> Path:
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(".git") if ignore_git else None)
    return dst


def git(repo: Path, *args, env_extra=None) -> str:
    """Run git with a fixed identity and clock so commits are reproducible."""
    env = dict(os.environ)
    env.update(
        {
            "GIT_AUTHOR_NAME": "Test",
            "GIT_AUTHOR_EMAIL": "test@example.com",
            "GIT_COMMITTER_NAME": "Test",
            "GIT_COMMITTER_EMAIL": "test@example.com",
            "GIT_AUTHOR_DATE": "2024-01-02T03:04:05+00:00",
            "GIT_COMMITTER_DATE": "2024-01-02T03:04:05+00:00",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
    )
    env.update(env_extra or {})
    p = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env)
    assert p.returncode == 0, f"git {' '.join(args)} failed: {p.stderr}"
    return p.stdout.strip()


def git_init(repo: Path) -> None:
    git(repo, "init", "-q", "-b", "main")


def git_commit_all(repo: Path, message: str, date: str = "2024-01-02T03:04:05+00:00") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, env_extra={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
    return git(repo, "rev-parse", "HEAD")


ALPHA = "def alpha():\n    return 1\n"


def small_repo(root: Path, files: dict[str, str] | None = None, git: bool = True) -> Path:
    """A directory with `files` (default: a.py defining alpha), committed to
    a fresh git repository on `main` unless `git` is false."""
    root.mkdir()
    for name, text in (files or {"a.py": ALPHA}).items():
        (root / name).write_text(text)
    if git:
        git_init(root)
        git_commit_all(root, "init")
    return root


# --------------------------------------------------------------------------
# The walk oracle: ripgrep's file list minus the documented default exclusions


def rg_files(root: Path, max_filesize: int | None = DEFAULT_MAX_FILE_SIZE, follow: bool = False) -> set[str]:
    """Paths (relative, '/'-separated) that `rg --files` (`rg -L --files` with
    `follow`) lists in root."""
    cmd = ["rg", "--no-config", "--files", "-0"] + (["-L"] if follow else [])
    if max_filesize is not None:
        cmd += ["--max-filesize", str(max_filesize)]
    env = {k: v for k, v in os.environ.items() if k != "RIPGREP_CONFIG_PATH"}
    p = subprocess.run(cmd, cwd=root, capture_output=True, env=env)
    # rg exits 1 when it lists nothing, 2 on errors (it still lists what it can:
    # with -L, a link loop or a dangling link is such an error).
    ok = (0, 1, 2) if follow else (0, 1)
    assert p.returncode in ok, f"rg --files failed in {root}: {p.stderr.decode(errors='replace')}"
    return {s.decode("utf-8", errors="surrogateescape") for s in p.stdout.split(b"\0") if s}


# Directory names the contract excludes that are *not* hidden (hidden ones,
# such as .mypy_cache, .pytest_cache, .tox, .venv, are already skipped by rg).
EXCLUDED_DIR_NAMES = frozenset({"node_modules", "__pycache__"})
# Editor swap and backup files (vim: .swp/.swo; emacs and others: trailing ~).
EDITOR_SUFFIXES = (".swp", ".swo", "~")


@dataclass
class Expected:
    """What the files table should hold, with the reasons for each exclusion."""

    kept: set[str]
    default_excluded: set[str]
    binary: set[str]


@functools.lru_cache(maxsize=None)
def _is_venv_dir(root: Path, rel_dir: str) -> bool:
    # A virtual environment is recognised by its marker file (PEP 405), not
    # by a name: `env/` or `venv/` may well be source.
    return (root / rel_dir / "pyvenv.cfg").is_file()


def is_default_excluded(root: Path, rel: str) -> bool:
    """The contract's default exclusions, by path (see EXCLUDED_DIR_NAMES)."""
    parts = rel.split("/")
    if any(p in EXCLUDED_DIR_NAMES for p in parts[:-1]):
        return True
    if any(_is_venv_dir(root, "/".join(parts[:i])) for i in range(1, len(parts))):
        return True
    return parts[-1].endswith(EDITOR_SUFFIXES)


def expected_files(root: Path, max_filesize: int | None = DEFAULT_MAX_FILE_SIZE, follow: bool = False) -> Expected:
    """`rg --files [--max-filesize N] [-L]` minus default exclusions minus binaries,
    computed here independently of the builder."""
    kept, excluded, binary = set(), set(), set()
    for rel in rg_files(root, max_filesize, follow):
        if is_default_excluded(root, rel):
            excluded.add(rel)
        elif b"\0" in (root / rel).read_bytes():
            binary.add(rel)
        else:
            kept.add(rel)
    return Expected(kept, excluded, binary)


def describe_set_diff(expected: set[str], got: set[str], root: Path | None = None, limit: int = 30) -> str:
    missing = sorted(expected - got)
    extra = sorted(got - expected)

    def size(rel):
        try:
            return f" ({(root / rel).stat().st_size} B)" if root else ""
        except OSError:
            return ""

    lines = [f"expected {len(expected)}, got {len(got)}; missing {len(missing)}, unexpected {len(extra)}"]
    lines += [f"  missing:    {m}{size(m)}" for m in missing[:limit]]
    lines += [f"  unexpected: {e}{size(e)}" for e in extra[:limit]]
    return "\n".join(lines)


# --------------------------------------------------------------------------
# The schema contract, read from schemas/src/lib.rs (the single source of truth)

_RUST_TO_ARROW = {"Utf8": "string", "Int64": "int64", "Int32": "int32", "Boolean": "bool", "Float32": "float"}


def schema_columns() -> dict[str, list[tuple[str, str, bool]]]:
    """{table: [(column, arrow type name, nullable)]} parsed from schemas/src/lib.rs."""
    text = SCHEMAS_RS.read_text()
    tables = {}
    for m in re.finditer(r"pub fn (\w+)_table\(\) -> Table \{(.*?)\n\}", text, re.S):
        body = m.group(2)
        name = re.search(r'name: "(\w+)"', body).group(1)
        cols = [
            (c, _RUST_TO_ARROW[t], n == "true")
            for c, t, n in re.findall(r'c\("(\w+)",\s*(\w+),\s*(true|false),', body)
        ]
        tables[name] = cols
    assert set(tables) == set(TABLES), f"could not parse the tables of {SCHEMAS_RS}: {sorted(tables)}"
    return tables


def line_count(text: str) -> int:
    """Lines as the schema defines them: a final line without newline counts."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


KV_KEYS = _kv_keys()


# --------------------------------------------------------------------------
# vectors.faiss, read independently of FAISS (exact layout only)


def read_faiss_flat(path: Path) -> tuple[int, int, list[int], list[list[float]]]:
    """(dimension, metric, ids, vectors) of an `IDMap,Flat` FAISS file, parsed
    from FAISS's documented on-disk layout (index header, the flat codes, the
    id map). metric 0 is inner product. Fails on any other layout."""
    import struct

    b = Path(path).read_bytes()
    pos = 0

    def take(n: int) -> bytes:
        nonlocal pos
        out = b[pos : pos + n]
        assert len(out) == n, f"{path}: truncated at byte {pos}"
        pos += n
        return out

    def header() -> tuple[int, int, int]:
        (d,) = struct.unpack("<i", take(4))
        (ntotal,) = struct.unpack("<q", take(8))
        take(16)  # two unused int64
        take(1)  # is_trained
        (metric,) = struct.unpack("<i", take(4))
        if metric > 1:
            take(4)  # metric_arg
        return d, ntotal, metric

    assert take(4) == b"IxMp", f"{path}: not an IDMap index"
    d, n, metric = header()
    inner = take(4)
    assert inner in (b"IxFI", b"IxF2"), f"{path}: inner index {inner!r} is not Flat"
    d2, n2, _ = header()
    assert (d2, n2) == (d, n)
    (size,) = struct.unpack("<q", take(8))
    assert size == n * d, (size, n, d)
    xb = struct.unpack(f"<{size}f", take(4 * size))
    (isz,) = struct.unpack("<q", take(8))
    ids = list(struct.unpack(f"<{isz}q", take(8 * isz)))
    assert pos == len(b), f"{path}: {len(b) - pos} trailing bytes"
    return d, metric, ids, [list(xb[i * d : (i + 1) * d]) for i in range(n)]


# --------------------------------------------------------------------------
# What the builder embeds, redone independently

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def naturalize(s: str) -> str:
    """The builder's identifier-to-words rewrite (schemas/src/embed.rs), redone
    independently: parseHTTPDate -> parse http date, max_age_x -> max age x."""

    def words(m):
        w = m.group(0)
        inner_upper = any(c.isupper() for c in w[1:]) and any(c.islower() for c in w)
        if len(w) <= 3 or not (("_" in w.strip("_")) or inner_upper):
            return w
        parts = []
        for seg in filter(None, w.split("_")):
            cur = ""
            for k, ch in enumerate(seg):
                boundary = k > 0 and ch.isupper() and (
                    seg[k - 1].islower() or (seg[k - 1].isupper() and k + 1 < len(seg) and seg[k + 1].islower()))
                if boundary and cur:
                    parts.append(cur)
                    cur = ""
                cur += ch
            if cur:
                parts.append(cur)
        return " ".join(p.lower() for p in parts)

    return _IDENT.sub(words, s)


def model_header(header: str) -> str:
    """The context header as the model sees it: its `file:` and `in:` lines
    (the `defines:` / `related:` name lists are for keyword search only)."""
    return "".join(l + "\n" for l in header.split("\n") if not l.startswith(("defines: ", "related: ")))


def signature_input(sym: dict) -> str:
    """A definition's signature vector input: `Container: ` when the signature
    does not name its container, the signature, then the doc's first paragraph."""
    sig = sym["signature"].strip()
    out = f"{sym['container']}: " if sym["container"] and sym["container"] not in sig else ""
    out += sig
    doc = (sym["doc"] or "").strip()
    if doc:
        out += "\n" + doc.split("\n\n")[0][:600]
    return out


TYPE_KINDS = ("class", "struct", "interface", "trait", "enum")


def type_input(sym: dict, content: bytes) -> str | None:
    """A type's input: its signature input when it has a doc, else its
    container, its text from its first byte, cut at 400 (cut_at)."""
    if (sym["doc"] or "").strip():
        return signature_input(sym) if (sym["signature"] or "").strip() else None
    body = content[sym["start_byte"] : sym["end_byte"]].decode()
    out = f"{sym['container']}: " if sym["container"] else ""
    return cut_at(out + body, 400)


_WORD = re.compile(r"[A-Za-z]{3,}")
_TEST_MARK = re.compile(r"#\[(test|rstest)|#\[.*::test[\](]|@Test|@ParameterizedTest")


def _marks(content: bytes, start: int) -> list[str]:
    """A definition's attribute/annotation lines: right above it, and its own leading ones."""
    text = content.decode(errors="replace")
    head = content[:start].decode(errors="replace")
    line_start = head.rfind("\n") + 1
    above = []
    for l in reversed(head[:line_start].split("\n")[:-1]):
        l = l.strip()
        if not (l.startswith("#[") or l.startswith("@")) or len(above) == 8:
            break
        above.append(l)
    own = []
    for l in content[start:].decode(errors="replace").split("\n"):
        l = l.strip()
        if not (l.startswith("#[") or l.startswith("@")) or len(own) == 8:
            break
        own.append(l)
    return above + own


def is_test_function(d: dict, content: bytes, is_test_file: bool) -> bool:
    """A test itself: in a test file a function/method named test… (test_x, TestX,
    testX, test1; not testing), or marked #[test] / #[tokio::test] / @Test anywhere."""
    if d["kind"] not in ("function", "method", "constructor"):
        return False
    n = d["name"]
    if is_test_file and len(n) >= 4 and n[:4].lower() == "test" and (len(n) == 4 or n[4] == "_" or (n[4].isascii() and (n[4].isupper() or n[4].isdigit()))):
        return True
    return any(_TEST_MARK.match(l) for l in _marks(content, d["start_byte"]))


def chunk_inputs(snap: Snapshot) -> dict[int, list[str]]:
    """What the builder embeds per chunk (recipe v6), redone from the tables,
    in the builder's order: the chunk (model header, then text), then (except
    for a class summary) one signature input per function or method starting
    inside it that is not a test, then (outside test files) one input per type
    starting inside it; identifiers as words. A chunk that is one
    function (the first definition starting in it is a function with a
    signature, reaching the chunk's end) is its signature input alone, or
    nothing when that function is a test; a test file's module-level,
    whole-file and class-summary chunks, and a chunk with fewer than three
    words (3+ letters), have no input; in code with a grammar, nor has a
    chunk's own text when a function or type with an input of its own starts
    within its first 200 bytes. Inputs of code in a language with a grammar
    are cut at 200 bytes (cut_at).
    Windows and the 2000-character cut are not redone: only chunks under 800
    bytes (which have neither) are exact."""
    files = snap.read("files", ["path", "content", "language"]).to_pylist()
    content = {r["path"]: r["content"].encode() for r in files}
    parsed = {r["path"] for r in files if r["language"] not in ("markdown", "text")}
    defs = snap.read("symbols", ["path", "kind", "name", "start_byte", "end_byte", "signature", "container", "doc"]).to_pylist()
    by_path: dict[str, list[dict]] = {}
    for d in defs:
        by_path.setdefault(d["path"], []).append(d)
    signature_kinds = ("function", "method", "constructor")
    out = {}
    cols = ["chunk_id", "path", "kind", "context_header", "text", "start_byte", "end_byte", "is_test"]
    for c in snap.read("chunks", cols).to_pylist():
        text = c["text"] if c["text"] is not None else content[c["path"]][c["start_byte"] : c["end_byte"]].decode()
        if (c["is_test"] and c["kind"] in ("block", "file", "class_summary", "window")) or len(_WORD.findall(text)) < 3:
            out[c["chunk_id"]] = []
            continue
        ins = [model_header(c["context_header"]) + text]
        inside = [d for d in by_path.get(c["path"], []) if c["start_byte"] <= d["start_byte"] < c["end_byte"]]
        if c["kind"] != "class_summary":  # a class summary is embedded as itself only
            funcs = [d for d in inside if d["kind"] in signature_kinds]
            tests = [d for d in funcs if is_test_function(d, content[c["path"]], c["is_test"])]
            signed = [d for d in funcs if d not in tests and (d["signature"] or "").strip()]
            ins += [signature_input(d) for d in signed]
            first = min(inside, key=lambda d: d["start_byte"]) if inside else None
            whole = True  # ins[0] is still the chunk's own text
            lead_until = c["start_byte"] + PARSED_INPUT_CHARS
            lead = any(d["start_byte"] < lead_until for d in signed)
            if (len(signed) + len(tests) == 1 and c["kind"] in ("method", "definition") and first is not None
                    and first["kind"] in signature_kinds and (first["signature"] or "").strip()
                    and first["end_byte"] + 2 >= c["end_byte"]):
                if tests:
                    out[c["chunk_id"]] = []
                    continue
                ins = ins[1:]
                whole = lead = False
            if not c["is_test"]:
                for d in inside:
                    if d["kind"] in TYPE_KINDS:
                        t = type_input(d, content[c["path"]])
                        if t is not None:
                            ins.append(t)
                            lead |= d["start_byte"] < lead_until
            # Recipe v6: in parsed code, a chunk that a definition with an
            # input of its own opens (within its first 200 bytes) has no
            # input of its own text.
            if c["path"] in parsed and whole and lead and len(ins) > 1:
                ins = ins[1:]
        ins = [naturalize(t) for t in ins]
        out[c["chunk_id"]] = [cut_at(t, PARSED_INPUT_CHARS) for t in ins] if c["path"] in parsed else ins
    return out


PARSED_INPUT_CHARS = 200


def cut_at(s: str, limit: int) -> str:
    """The builder's cut (in UTF-8 bytes): at the last line break past limit/2
    within the first `limit` bytes, else at the last character boundary."""
    b = s.encode()
    if len(b) <= limit:
        return s
    cut = limit
    while cut > 0 and (b[cut] & 0xC0) == 0x80:
        cut -= 1
    i = b.rfind(b"\n", 0, cut)
    keep = i if i > limit // 2 else cut
    return b[:keep].decode()


def rg_lines(root: Path, *args) -> set[tuple[str, int]]:
    """(path, line) of each line `rg ARGS` matches under root."""
    p = subprocess.run(["rg", "-n", "--with-filename", "--no-heading", *args], cwd=root, capture_output=True, text=True)
    assert p.returncode in (0, 1), p.stderr
    out = set()
    for line in p.stdout.splitlines():
        path, ln, _ = line.split(":", 2)
        out.add((path.removeprefix("./"), int(ln)))
    return out


# --------------------------------------------------------------------------
# A static HTTP server on loopback (published snapshots)


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """`python -m http.server` serving `directory` on a free loopback port."""

    def __init__(self, directory: Path):
        import socket
        import sys
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(self.port), "--bind", "127.0.0.1", "--directory", str(directory)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("http.server did not start")

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
