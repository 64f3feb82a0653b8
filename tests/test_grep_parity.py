"""The server's grep engine against ripgrep, case by case, on real corpora.

Each case runs `rg --json` in the corpus and `code-index-mcp grep` over the
corpus snapshot with the same flags, and compares the matches: (path, first
line) of every match, the byte columns of the submatches on single-line
matches, and the context lines. Every page is fetched through the opaque
cursor (page size 97), so the comparison also proves that paging returns
each match exactly once, in order.

rg runs with no size limit, as the indexer (files over 1 MiB are indexed as
text). Files the
indexer leaves out on purpose (default exclusions, NUL bytes) and files with
redacted secrets are not compared: their content differs by design.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from helpers import DEFAULT_MAX_FILE_SIZE

pytestmark = pytest.mark.corpus

# (corpus, flags, pattern). Flags use rg's spelling; the server CLI accepts the same ones.
CASES = [
    # literals and smart case
    ("django", ["-g", "*.py"], "get_or_create"),
    ("django", [], "QuerySet"),
    ("django", ["-i"], "queryset"),
    ("django", ["-s"], "queryset"),
    ("django", [], "select_related"),
    ("django", ["-F"], "self.assertEqual(response.status_code, 200)"),
    ("django", ["-F", "-g", "*.txt"], "**kwargs"),
    # classes, alternation, anchors
    ("django", ["-g", "*.py"], r"^class \w+\(models\.Model\):"),
    ("django", ["-g", "*.py"], r"^\s+def (save|delete|clean)\("),
    ("django", [], r"TODO|FIXME|XXX"),
    ("django", ["-g", "*.py"], r"^from django\.db import"),
    ("django", ["-g", "*.py"], r"raise \w+Error\($"),
    ("django", [], r"[0-9]{4}-[0-9]{2}-[0-9]{2}"),
    ("django", ["-g", "*.html"], r"\{% block \w+ %\}"),
    # whole word, globs, negation, path filters
    ("django", ["-w"], "atomic"),
    ("django", ["-w", "-i"], "Cursor"),
    ("django", ["-g", "*.py", "-g", "!tests/**"], r"def test_\w+"),
    ("django", ["-g", "!*.txt", "-g", "!*.py"], "deprecat"),
    ("django", ["-g", "django/db/**"], "connection.ops"),
    ("django", ["--path", "django/contrib/admin"], r"ModelAdmin\b"),
    ("django", ["--path", "django/db/models/query.py"], r"def \w+"),
    # context and max count
    ("django", ["-C", "2", "-g", "*.py"], "class Meta:"),
    ("django", ["-B", "1", "-g", "*.py"], r"@cached_property"),
    ("django", ["-A", "3", "--path", "django/utils"], r"^def "),
    ("django", ["-m", "1", "-g", "*.py"], r"import"),
    ("django", ["-m", "2", "-A", "1"], "Http404"),
    # multiline: functions with bodies, docstrings, config blocks
    ("django", ["-U", "-g", "*.py"], r"class Meta:\n\s+abstract = True"),
    ("django", ["-U", "-g", "*.py"], r'def get_queryset\(self\):\n\s+"""[^"]*"""'),
    ("django", ["-U", "-g", "*.py"], r"def __str__\(self\):\n\s+return [^\n]+"),
    ("django", ["-U", "-g", "*.txt"], r"\.\. code-block:: python\n\n\s+from"),
    ("django", ["-U", "-g", "*.py"], r"(?-s)try:\n\s+import \w+\n\s*except ImportError:"),
    ("django", ["-U", "-i", "-g", "*.cfg"], r"\[flake8\].*?max-line-length"),
    # go-stdlib
    ("go-stdlib", ["-g", "*.go"], r"^func \(\w+ \*?Server\) \w+"),
    ("go-stdlib", ["-w", "-g", "*.go"], "ServeHTTP"),
    ("go-stdlib", ["-g", "*.go", "-g", "!*_test.go"], r"^type \w+ interface \{"),
    ("go-stdlib", ["-F", "--path", "src/net/http"], "http.StatusOK"),
    ("go-stdlib", ["-U", "-g", "*.go"], r"func \(\w+ \*Reader\) Read\(p \[\]byte\) \(n int, err error\) \{\n"),
    ("go-stdlib", ["-i", "-m", "3", "-g", "*.go"], r"deprecated:"),
    ("go-stdlib", ["-C", "1", "--path", "src/sort"], r"^func Slice"),
    ("go-stdlib", ["-U", "-g", "*.go"], r"(?s)^import \(.*?\)"),
    ("go-stdlib", [], r"\bgo1\.1[0-9]\b"),
    # rust-crates
    ("rust-crates", ["-g", "*.rs"], r"^\s*pub fn \w+<"),
    ("rust-crates", ["-w", "-g", "*.rs"], "unsafe"),
    ("rust-crates", ["-U", "-g", "*.rs"], r"#\[derive\([^)]*\)\]\n\s*pub (struct|enum) \w+"),
    ("rust-crates", ["-g", "*.rs", "-g", "!**/tests/**"], r"impl<'de> Deserialize<'de> for"),
    ("rust-crates", ["-U", "-g", "Cargo.toml"], r'\[dependencies\.\w+\]\nversion = "[^"]+"'),
    ("rust-crates", ["-F", "-i"], "todo!()"),
    ("rust-crates", ["-B", "2", "-g", "*.rs"], r"^\s*#\[inline\(always\)\]"),
    # the n-gram planner's hard cases: Unicode classes and case folds,
    # alternations of literals, optional and counted parts, byte classes
    ("rust-crates", [], r"\p{Greek}"),
    ("rust-crates", ["-i"], r"kelvin|straße|ǆ\w+"),
    ("rust-crates", [], r"[αβγδ]\w*"),
    ("django", ["-i"], r"(select|prefetch)_related\(\s*[\x27\x22]"),
    ("django", [], r"colou?r"),
    ("django", ["-w"], r"[Qq]uery[Ss]et{1}s?"),
    ("go-stdlib", ["-F"], "a.b*c"),
    ("go-stdlib", [], r"(?-u:\xE2\x80[\x98\x99])"),
    ("go-stdlib", ["-i", "-w"], r"utf-?8"),
    ("ts-rxjs", ["-g", "*.ts"], r"export (function|const) \w+Map\b"),
    ("ts-rxjs", [], r"zzz_no_such_literal_qqq"),
]


def rg_flags(flags: list[str]) -> list[str]:
    """rg spelling of the flags: the server's default is smart case (rg -S; rg's
    own default is case-sensitive); -U means -U --multiline-dotall; --path
    becomes the search path."""
    out = [] if ("-s" in flags or "-i" in flags) else ["-S"]
    i = 0
    while i < len(flags):
        f = flags[i]
        if f == "--path":
            i += 2
            continue
        if f == "-U":
            out += ["-U", "--multiline-dotall"]
        else:
            out.append(f)
        i += 1
    return out


def search_path(flags: list[str]) -> str:
    return flags[flags.index("--path") + 1] if "--path" in flags else "."


def rg_matches(root: Path, flags: list[str], pattern: str):
    size = ["--max-filesize", str(DEFAULT_MAX_FILE_SIZE)] if DEFAULT_MAX_FILE_SIZE else []
    cmd = ["rg", "--json", *size, *rg_flags(flags), "-e", pattern, "--", search_path(flags)]
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    assert p.returncode in (0, 1), f"rg failed: {cmd}\n{p.stderr}"
    matches, context = {}, set()
    for line in p.stdout.splitlines():
        msg = json.loads(line)
        if msg["type"] not in ("match", "context"):
            continue
        d = msg["data"]
        path = d["path"].get("text")
        if path is None:
            continue
        path = os.path.normpath(path)
        ln = d["line_number"]
        if msg["type"] == "context":
            context.add((path, ln))
            continue
        text = d["lines"].get("text", "")
        starts = tuple(s["start"] for s in d["submatches"])
        matches[(path, ln)] = (text.count("\n") <= 1 and not text.rstrip("\n").count("\n"), starts)
    return matches, context


def our_matches(server: Path, snap_dir: Path, flags: list[str], pattern: str, ngram: str = "on"):
    cmd = [str(server), "grep", "--index", str(snap_dir), "--limit", "97", *flags, "--", pattern]
    env = {**os.environ, "CODE_INDEX_NGRAM": ngram}
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert p.returncode == 0, f"{cmd}\n{p.stderr}"
    out = json.loads(p.stdout)
    matches, context, order = {}, set(), []
    for m in out["matches"]:
        key = (m["path"], m["line"])
        order.append(key)
        matches[key] = (m["clipped"], tuple(s["start"] for s in m["submatches"]))
        for c in m.get("before", []) + m.get("after", []):
            context.add((m["path"], c["line"]))
    return matches, context, order, out["files"]


@pytest.fixture(scope="session")
def server_bin(indexer) -> Path:
    p = indexer.parent / "code-index-mcp"
    assert p.is_file(), f"{p} missing: build the workspace (cargo build --release --workspace)"
    return p


def test_case_count():
    assert len(CASES) >= 40


@pytest.mark.parametrize("ngram", ["on", "off"])
@pytest.mark.parametrize("corpus,flags,pattern", CASES, ids=[f"{c}:{' '.join(f)}:{p}"[:80] for c, f, p in CASES])
def test_grep_matches_ripgrep(corpus, flags, pattern, ngram, snapshots, server_bin):
    """Every case twice: files narrowed by the n-gram index (`on`), and the
    full scan of every selected file (`off`, CODE_INDEX_NGRAM=off)."""
    snap = snapshots(corpus)
    files = snap.read("files", ["path", "has_secrets"]).to_pylist()
    indexed = {f["path"] for f in files}
    secret = {f["path"] for f in files if f["has_secrets"]}
    rg, rg_ctx = rg_matches(snap.repo, flags, pattern)
    ours, our_ctx, order, _ = our_matches(server_bin, snap.dir, flags, pattern, ngram)
    rg = {k: v for k, v in rg.items() if k[0] in indexed and k[0] not in secret}
    rg_ctx = {k for k in rg_ctx if k[0] in indexed and k[0] not in secret}
    ours_cmp = {k: v for k, v in ours.items() if k[0] not in secret}
    missing = sorted(set(rg) - set(ours_cmp))
    extra = sorted(set(ours_cmp) - set(rg))
    assert not missing and not extra, f"missing {len(missing)}: {missing[:10]}\nextra {len(extra)}: {extra[:10]}"
    assert len(order) == len(set(order)), "a match was returned twice across pages"
    assert order == sorted(order, key=lambda k: (k[0], k[1])), "matches are not in (path, line) order"
    # Submatch byte offsets on single-line matches that were not clipped.
    for k, (single, starts) in rg.items():
        clipped, our_starts = ours_cmp[k]
        if single and not clipped:
            assert our_starts == starts, f"{k}: submatch starts {our_starts} != rg {starts}"
    # Context lines (rg prints a line once: as context or as a match).
    our_ctx_cmp = {k for k in our_ctx if k[0] not in secret} - set(ours_cmp)
    assert our_ctx_cmp == rg_ctx, f"context differs: missing {sorted(rg_ctx - our_ctx_cmp)[:10]} extra {sorted(our_ctx_cmp - rg_ctx)[:10]}"
    if not rg:
        pytest.skip("no matches in this corpus (the case still checks that we find none)")


@pytest.mark.parametrize("corpus,pattern", [
    ("django", "get_or_create"),
    ("go-stdlib", "ServeHTTP"),
    ("rust-crates", "impl<'de> Deserialize<'de> for"),
])
def test_ngram_index_narrows_the_scan(corpus, pattern, snapshots, server_bin):
    """A selective literal scans only the files holding its n-grams: at most
    twice the files rg finds it in, and fewer than 5% of the snapshot."""
    snap = snapshots(corpus)
    total = len(snap.read("files", ["path"]))
    rg, _ = rg_matches(snap.repo, ["-F"], pattern)
    rg_files = {p for p, _ in rg}
    _, _, _, scanned = our_matches(server_bin, snap.dir, ["-F"], pattern)
    _, _, _, full = our_matches(server_bin, snap.dir, ["-F"], pattern, "off")
    assert full == total
    assert len(rg_files) <= scanned <= max(2 * len(rg_files), 3), (scanned, len(rg_files))
    assert scanned < total / 20
