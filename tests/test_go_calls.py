"""Go calls resolve by Go's scoping, not by a bare name: `pkg.F` is `F` of the
package the file imports as `pkg`, `x.M` is a method, a bare `F` is a
function of the file's own package. Checked on a small tree whose every
edge is known, and on the Go standard library against its import lines
(the oracle: the directory each import names)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import duckdb
import pytest

from helpers import build

FILES = {
    "go.mod": "module example.com/m\n\ngo 1.21\n",
    "srv/srv.go": """package srv

import (
\t"net"

\t"example.com/m/lst"
)

type Server struct{}

// Serve is the package function.
func Serve(x int) {}

// Serve is the method.
func (s *Server) Serve(x int) {}

func (s *Server) Run() {
\tln := lst.Listen()
\ts.Serve(1)
\tServe(2)
\tnet.Listen("tcp", "")
\t_ = len(ln)
}
""",
    "lst/lst.go": "package lst\n\nfunc Listen() []int { return nil }\n",
    "tls/tls.go": "package tls\n\nfunc Listen() []int { return nil }\n\nfunc Serve(x int) {}\n",
}


def calls(snap_dir: Path, where: str = "true") -> list[tuple]:
    con = duckdb.connect()
    return con.execute(
        f"""SELECT e.src_path, e.src_symbol, e.dst_name, e.line, e.resolved, s.path, s.qualified_name, s.kind
            FROM read_parquet('{snap_dir}/edges.parquet') e
            LEFT JOIN read_parquet('{snap_dir}/symbols.parquet') s ON s.symbol_id = e.dst_symbol_id
            WHERE e.kind = 'calls' AND ({where}) ORDER BY e.src_path, e.line, e.dst_name"""
    ).fetchall()


def test_go_calls_follow_go_scoping(indexer, tmp_path):
    repo = tmp_path / "repo"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    got = {(r[2], r[5], r[6], r[7]) for r in calls(snap.dir, "e.src_symbol = 'Server.Run'")}
    assert got == {
        ("lst.Listen", "lst/lst.go", "Listen", "function"),  # the imported package's, not tls'
        ("s.Serve", "srv/srv.go", "Server.Serve", "method"),  # a method, not the package function
        ("Serve", "srv/srv.go", "Serve", "function"),  # the own package's function, not the method
        ("net.Listen", None, None, None),  # a package outside the repository: unresolved
        ("len", None, None, None),  # a builtin: unresolved
    }, got


IMPORT_RE = re.compile(r'^(\w+)\.(\w+)$')
# `import f "fmt"` or, inside an import block, `f "fmt"` on a line of its own.
RENAMED_RE = re.compile(r'^\s*(?:import\s+)?([A-Za-z_]\w*)\s+"([^"]+)"\s*$', re.M)


def go_package_name(spec: str) -> str:
    parts = spec.split("/")
    last = parts[-1]
    if re.fullmatch(r"v\d+", last) and len(parts) > 1:
        last = parts[-2]
    last = re.sub(r"\.v\d+$", "", last)
    return last.removeprefix("go-")


@pytest.mark.corpus
def test_go_stdlib_calls_land_in_the_imported_package(go_snapshot):
    con = duckdb.connect()
    d = go_snapshot.dir
    # The name each import binds, read from the source's import lines: its
    # own (`f "fmt"`), else the package's by convention.
    renamed: dict[str, dict[str, str]] = {}
    for path, content in con.execute(
        f"""SELECT path, content FROM read_parquet('{d}/files.parquet')
            WHERE path LIKE '%.go' AND regexp_matches(content, '\\w\\s+"[^"]+"\\s*\\n')"""
    ).fetchall():
        for name, spec in RENAMED_RE.findall(content):
            if name not in ("import", "return", "_"):
                renamed.setdefault(path, {})[spec] = name
    imports: dict[str, dict[str, str | None]] = {}
    for src, spec, dst in con.execute(
        f"SELECT src_path, dst_name, dst_path FROM read_parquet('{d}/edges.parquet') WHERE kind = 'imports'"
    ).fetchall():
        name = renamed.get(src, {}).get(spec) or go_package_name(spec)
        imports.setdefault(src, {})[name] = dst
    checked, wrong, unresolved_inside = 0, [], 0
    # A local that shadows an import (`p, err := plugin.Open(…)` beside an import of package `p`)
    # carries its type (feature 19): its calls are the type's, not the package's.
    for src, _sym, name, line, resolved, dst_path, _q, _k in calls(
            d, "e.src_path LIKE '%.go' AND e.receiver_type IS NULL"):
        m = IMPORT_RE.match(name)
        if not m or m.group(1) not in imports.get(src, {}) or m.group(1) == "C":
            continue  # cgo's C.f is a C function beside the file
        want_dir = imports[src][m.group(1)]
        if want_dir is None:
            assert not resolved, f"{src}:{line} {name} resolved outside the repository to {dst_path}"
            continue
        if not resolved:
            unresolved_inside += 1
            continue
        checked += 1
        if dst_path.rsplit("/", 1)[0] != want_dir:
            wrong.append(f"{src}:{line} {name} -> {dst_path} (imports {want_dir})")
    assert checked > 20_000, checked
    assert not wrong, f"{len(wrong)} of {checked}: " + "; ".join(wrong[:10])

    # The audit's cases, each read from the source line.
    rows = calls(d, "e.src_path = 'src/net/http/server.go' AND e.src_symbol = 'Server.ListenAndServe'")
    by_name = {r[2]: (r[5], r[6]) for r in rows}
    assert by_name["net.Listen"] == ("src/net/dial.go", "Listen"), by_name
    assert by_name["srv.Serve"] == ("src/net/http/server.go", "Server.Serve"), by_name
    gz = calls(d, "e.dst_name = 'gzip.NewReader' AND e.resolved")
    assert gz and all(r[5].startswith("src/compress/gzip/") for r in gz), gz[:5]
    assert any(r[0] == "src/internal/profile/profile.go" for r in gz), gz[:5]
    # A bare name never resolves into another package.
    stray = con.execute(
        f"""SELECT count(*) FROM read_parquet('{d}/edges.parquet') e
            JOIN read_parquet('{d}/symbols.parquet') s ON s.symbol_id = e.dst_symbol_id
            WHERE e.kind = 'calls' AND e.src_path LIKE '%.go' AND NOT contains(e.dst_name, '.')
              AND regexp_replace(s.path, '/[^/]*$', '') <> regexp_replace(e.src_path, '/[^/]*$', '')"""
    ).fetchone()[0]
    assert stray == 0, stray
