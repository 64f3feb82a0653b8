"""code-index-mcp driven by the official Python `mcp` SDK over stdio, on a
real django snapshot: tool listing with schemas, every tool, paging through
cursors, coded errors, the response budget, and refusal of damaged snapshots.
Answers are checked against ripgrep and the corpus itself."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers import rg_lines
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.corpus

TOOLS = {"grep", "search_files", "read_file", "list_repos", "health", "search_symbols", "find_definitions", "find_references", "search"}


@pytest.fixture(scope="session")
def server_bin(indexer) -> Path:
    p = indexer.parent / "code-index-mcp"
    assert p.is_file(), f"{p} missing: build the workspace"
    return p


@pytest.fixture(scope="session")
def django(snapshots):
    return snapshots("django")


def session_run(server_bin: Path, index: Path, body, extra: tuple[str, ...] = ()):
    """Run `body(session)` against a fresh server process (`extra`: more serve flags)."""

    async def main():
        params = StdioServerParameters(command=str(server_bin), args=["serve", "--index", str(index), *extra])
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                init = await s.initialize()
                return await body(s, init)

    return asyncio.run(main())


async def all_pages(s, tool: str, args: dict) -> list[tuple[dict, int]]:
    """Every page of a tool call, following next_cursor: (structured content, text length) each."""
    pages, cursor = [], None
    while True:
        res = await s.call_tool(tool, {**args, **({"cursor": cursor} if cursor else {})})
        pages.append((res.structured_content, len(res.content[0].text)))
        cursor = res.structured_content.get("next_cursor")
        if not cursor:
            return pages


def test_tools_listed_with_schemas(server_bin, django):
    async def body(s, init):
        tools = (await s.list_tools()).tools
        return init, tools

    init, tools = session_run(server_bin, django.dir, body)
    assert init.server_info.name == "code-index-mcp"
    assert init.capabilities.resources is not None
    by_name = {t.name: t for t in tools}
    assert TOOLS <= set(by_name), sorted(by_name)
    for name in TOOLS:
        t = by_name[name]
        assert t.input_schema.get("type") == "object", name
        assert t.output_schema and t.output_schema.get("type") == "object", name
        assert t.annotations and t.annotations.read_only_hint is True, name
        assert t.description and len(t.description) > 20, name
    grep = by_name["grep"]
    props = grep.input_schema["properties"]
    for p in ["pattern", "fixed_string", "case_sensitive", "whole_word", "multiline", "glob", "path", "repo", "lang",
              "context_lines", "before", "after", "max_count", "limit", "cursor", "count_only"]:
        assert p in props, p
    assert "multiline" in grep.description and "search_symbols" in grep.description


@pytest.mark.parametrize("extra", [(), ("--plain-content",)], ids=["compressed", "plain"])
def test_grep_pages_equal_ripgrep(server_bin, django, extra):
    """Paging through 500+ matches returns each exactly once, in order, and equals rg,
    with file texts held compressed (the default) or plain."""

    async def body(s, init):
        got, cursor, pages = [], None, 0
        while True:
            args = {"pattern": r"self\.assert\w+\(", "glob": "*.py", "limit": 200}
            if cursor:
                args["cursor"] = cursor
            res = await s.call_tool("grep", args)
            assert not res.is_error, res.content[0].text
            sc = res.structured_content
            pages += 1
            got += [(m["path"], m["line"]) for m in sc["matches"]]
            assert len(res.content[0].text) < 100_000
            if not sc["has_more"]:
                assert sc.get("next_cursor") is None
                return got, pages
            cursor = sc["next_cursor"]

    got, pages = session_run(server_bin, django.dir, body, extra)
    expected = rg_lines(django.repo, "-S", "-g", "*.py", r"self\.assert\w+\(")
    secret = {r["path"] for r in django.read("files", ["path", "has_secrets"]).to_pylist() if r["has_secrets"]}
    expected = {e for e in expected if e[0] not in secret}
    got_cmp = [g for g in got if g[0] not in secret]
    assert len(got) > 500 and pages > 3
    assert len(got) == len(set(got)), "a match came twice"
    assert got == sorted(got), "pages are not in (path, line) order"
    assert set(got_cmp) == expected


def test_grep_errors_are_coded(server_bin, django):
    async def body(s, init):
        out = {}
        for name, args in {
            "bad_regex": {"pattern": "foo("},
            "empty": {"pattern": ""},
            "limit": {"pattern": "x", "limit": 1001},
            "repo": {"pattern": "x", "repo": "nope"},
            "garbled": {"pattern": "x", "cursor": "!!not-a-cursor"},
            "context": {"pattern": "x", "context_lines": 21},
            "after": {"pattern": "x", "after": 100000},
        }.items():
            res = await s.call_tool("grep", args)
            out[name] = (res.is_error, res.structured_content)
        first = await s.call_tool("grep", {"pattern": "import", "limit": 5})
        other = await s.call_tool("grep", {"pattern": "class", "limit": 5, "cursor": first.structured_content["next_cursor"]})
        out["foreign_cursor"] = (other.is_error, other.structured_content)
        empty = await s.call_tool("grep", {"pattern": "zzzQqqNeverThere", "whole_word": True})
        out["empty_result"] = (empty.is_error, empty.structured_content)
        return out

    out = session_run(server_bin, django.dir, body)
    expect = {"bad_regex": "INVALID_PATTERN", "empty": "INVALID_ARGUMENT", "limit": "INVALID_ARGUMENT",
              "repo": "UNKNOWN_REPO", "garbled": "INVALID_CURSOR", "foreign_cursor": "INVALID_CURSOR",
              "context": "INVALID_ARGUMENT", "after": "INVALID_ARGUMENT"}
    for name, code in expect.items():
        is_error, sc = out[name]
        assert is_error, name
        assert sc["code"] == code, (name, sc)
        assert sc["message"] and sc["hint"], (name, sc)
    assert "django" in out["repo"][1]["hint"]
    assert "unclosed group" in out["bad_regex"][1]["message"]
    assert "0..=20" in out["context"][1]["hint"] and "read_file" in out["context"][1]["hint"]
    is_error, sc = out["empty_result"]
    assert not is_error and sc["matches"] == [] and "whole_word" in sc["hint"] and "case_sensitive" in sc["hint"]


def test_count_only_matches_rg_count(server_bin, django):
    """Counts per file equal `rg -c`; a pattern in most files pages its
    counts within the response budget, each file exactly once."""
    async def body(s, init):
        return {p: await all_pages(s, "grep", {"pattern": p, "count_only": True}) for p in ("get_or_create", "e")}

    out = session_run(server_bin, django.dir, body)
    # Redacted secrets change counts: compare the files without any.
    files = {r["path"]: r for r in django.read("files", ["path", "has_secrets"]).to_pylist()}
    indexed = {p for p, r in files.items() if not r["has_secrets"]}
    for pattern, pages in out.items():
        p = subprocess.run(["rg", "-c", "-S", pattern], cwd=django.repo, capture_output=True, text=True)
        expected = {line.rsplit(":", 1)[0].removeprefix("./"): int(line.rsplit(":", 1)[1]) for line in p.stdout.splitlines()}
        expected = {k: v for k, v in expected.items() if k in indexed}
        got = [(c["path"], c["count"]) for sc, _ in pages for c in sc["counts"]]
        assert len(got) == len({p for p, _ in got}), pattern
        assert {p: n for p, n in got if p in indexed} == expected, pattern
        assert all(len(sc["counts"]) == sc["returned"] and text_len <= 26_000 for sc, text_len in pages)
        assert [sc["has_more"] for sc, _ in pages] == [True] * (len(pages) - 1) + [False]
    assert len(out["get_or_create"]) == 1 and len(out["e"]) > 3


def test_response_budget(server_bin, django):
    async def body(s, init):
        files = await all_pages(s, "search_files", {"pattern": "**/*.py", "limit": 1000})
        syms = await s.call_tool("search_symbols", {"query": "test", "limit": 1000})
        grep = await s.call_tool("grep", {"pattern": "e", "limit": 1000, "context_lines": 3})
        return grep, files, syms

    res, files, syms = session_run(server_bin, django.dir, body)
    # Listing tools at limit 1000 page by the budget too, each item once.
    listed = [f["path"] for sc, _ in files for f in sc["files"]]
    assert len(files) > 1 and all(n <= 26_000 for _, n in files)
    assert len(listed) == len(set(listed)) == files[0][0]["total_count"]
    assert len(syms.content[0].text) <= 26_000 and syms.structured_content["has_more"]
    text = res.content[0].text
    sc = res.structured_content
    # ~6k tokens by default; never near the 25k hard cap.
    assert len(text) <= 26_000, len(text)
    assert len(json.dumps(sc)) < 100_000
    assert sc["has_more"] and sc["next_cursor"] and 0 < sc["returned"] < 1000


def test_search_files_read_file_repos_health(server_bin, django):
    async def body(s, init):
        files = (await s.call_tool("search_files", {"pattern": "django/db/models/*.py", "limit": 1000})).structured_content
        page1 = (await s.call_tool("search_files", {"pattern": "*.py", "limit": 10})).structured_content
        page2 = (await s.call_tool("search_files", {"pattern": "*.py", "limit": 10, "cursor": page1["next_cursor"]})).structured_content
        rf = (await s.call_tool("read_file", {"path": "django/db/models/query.py", "start_line": 10, "end_line": 20})).structured_content
        missing = await s.call_tool("read_file", {"path": "django/db/models/qeury.py"})
        empty = await s.call_tool("read_file", {"path": "tests/sessions_tests/__init__.py"})
        minified = await s.call_tool("read_file", {"path": "django/contrib/admin/static/admin/js/vendor/jquery/jquery.min.js", "start_line": 2})
        missing = (missing, empty, minified)
        repos = (await s.call_tool("list_repos", {})).structured_content
        health = (await s.call_tool("health", {})).structured_content
        res = await s.read_resource("codeindex://health")
        return files, page1, page2, rf, missing, repos, health, res

    files, page1, page2, rf, missing, repos, health, res = session_run(server_bin, django.dir, body)
    all_paths = django.paths()
    expected = {p for p in all_paths if p.startswith("django/db/models/") and "/" not in p[len("django/db/models/"):] and p.endswith(".py")}
    assert {f["path"] for f in files["files"]} == expected and files["total_count"] == len(expected)
    assert all(f["language"] == "python" and f["size_bytes"] > 0 and f["line"] == 1 for f in files["files"])
    qf = next(f for f in files["files"] if f["path"] == "django/db/models/query.py")
    assert qf["end_line"] == len((django.repo / "django/db/models/query.py").read_text().splitlines())
    assert page1["total_count"] == page2["total_count"] > 20
    assert not {f["path"] for f in page1["files"]} & {f["path"] for f in page2["files"]}
    src = (django.repo / "django/db/models/query.py").read_text().splitlines(keepends=True)
    assert rf["content"] == "".join(src[9:20]) and (rf["line"], rf["end_line"]) == (10, 20) and rf["total_lines"] == len(src)
    missing, empty, minified = missing
    # An empty file is an empty answer, not an error.
    assert not empty.is_error, empty.content
    assert (empty.structured_content["content"], empty.structured_content["total_lines"]) == ("", 0)
    # A line longer than the response budget comes clipped, flagged truncated.
    line2 = (django.repo / "django/contrib/admin/static/admin/js/vendor/jquery/jquery.min.js").read_text().splitlines()[1]
    assert len(line2) > 24_000
    mf = minified.structured_content
    assert not minified.is_error and mf["clipped"] and (mf["line"], mf["end_line"]) == (2, 2)
    assert mf["truncated"]  # the one line asked for did not come back whole
    assert line2.startswith(mf["content"].rstrip("\n")) and len(mf["content"]) <= 24_001
    assert missing.is_error and missing.structured_content["code"] == "NOT_FOUND"
    assert "django/db/models/query.py" in missing.structured_content["hint"] or "search_files" in missing.structured_content["hint"]
    assert repos["repos"][0]["repo"] == "django" and repos["repos"][0]["snapshot_id"] == django.id
    assert repos["repos"][0]["files"] == len(all_paths)
    assert health["status"] == "ok" and health["snapshots"][0]["schema_version"] == django.manifest["schema_version"]
    rows = {t["table"]: (t.get("rows"), t["bytes"]) for t in health["snapshots"][0]["tables"]}
    # Tables have rows; index files (ngrams.bin, ...) have bytes only, not "0 rows".
    assert rows == {f["name"].removesuffix(".parquet"): (f["rows"] if f["name"].endswith(".parquet") or f["name"] == "vectors.faiss" else None, f["bytes"])
                    for f in django.manifest["files"]}
    assert rows["ngrams.bin"][0] is None and rows["ngrams.bin"][1] > 0 and rows["symbols"][0] > 0
    assert json.loads(res.contents[0].text)["snapshots"][0]["snapshot_id"] == django.id


def test_damaged_or_foreign_snapshots_are_refused(server_bin, django, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(django.dir, bad)
    data = bytearray((bad / "symbols.parquet").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (bad / "symbols.parquet").write_bytes(bytes(data))
    p = subprocess.run([str(server_bin), "serve", "--index", str(bad)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode != 0
    assert "symbols.parquet" in p.stderr and "does not match its manifest" in p.stderr and "code-indexer index" in p.stderr
    old = tmp_path / "old"
    shutil.copytree(django.dir, old)
    m = json.loads((old / "manifest.json").read_text())
    m["schema_version"] = 999
    (old / "manifest.json").write_text(json.dumps(m))
    p = subprocess.run([str(server_bin), "serve", "--index", str(old)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode != 0 and "schema version 999" in p.stderr and "rebuild" in p.stderr
    p = subprocess.run([str(server_bin), "serve", "--index", str(tmp_path / "nothing")], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode != 0 and "does not exist" in p.stderr


def test_symbols_definitions_and_references(server_bin, django):
    async def body(s, init):
        out = {}
        out["search"] = (await s.call_tool("search_symbols", {"query": "QuerySet", "limit": 50})).structured_content
        out["regex"] = (await s.call_tool("search_symbols", {"query": "^Test.*Case$", "regex": True, "kind": "class", "limit": 1000})).structured_content
        out["page2"] = (await s.call_tool("search_symbols", {"query": "QuerySet", "limit": 50, "cursor": out["search"]["next_cursor"]})).structured_content if out["search"].get("next_cursor") else None
        out["defs"] = (await s.call_tool("find_definitions", {"symbol": "QuerySet.get_or_create"})).structured_content
        out["defs_path"] = (await s.call_tool("find_definitions", {"symbol": "get_or_create", "path": "django/db/models/query.py"})).structured_content
        out["refs"] = []
        cursor = None
        while True:
            args = {"symbol": "get_or_create", "limit": 7}
            if cursor:
                args["cursor"] = cursor
            r = (await s.call_tool("find_references", args)).structured_content
            out["refs"].append(r)
            cursor = r.get("next_cursor")
            if not cursor:
                break
        out["typo"] = (await s.call_tool("search_symbols", {"query": "get_or_craete"})).structured_content
        bad = await s.call_tool("find_definitions", {"symbol": "x", "kind": "klass"})
        out["bad_kind"] = (bad.is_error, bad.structured_content)
        out["many"] = await all_pages(s, "find_definitions", {"symbol": "__init__", "limit": 200})
        return out

    out = session_run(server_bin, django.dir, body)
    # Ranked: exact names first, every result contains the query, all are definitions.
    syms = out["search"]["symbols"]
    assert syms[0]["name"] == "QuerySet" and syms[0]["kind"] == "class" and syms[0]["path"] == "django/db/models/query.py"
    rg_def = rg_lines(django.repo, "-s", r"^class QuerySet\b", "django/db/models/query.py")
    assert (syms[0]["path"], syms[0]["name_line"]) in rg_def
    assert all("queryset" in (x["qualified_name"].lower()) for x in syms)
    ranks = [0 if x["name"] == "QuerySet" or x["qualified_name"] == "QuerySet" else 1 if x["name"].lower().startswith("queryset") else 2 for x in syms]
    assert ranks == sorted(ranks)
    if out["page2"]:
        assert not {(x["path"], x["line"], x["qualified_name"]) for x in syms} & {(x["path"], x["line"], x["qualified_name"]) for x in out["page2"]["symbols"]}
    # Regex over names equals the classes whose `class X(` line rg finds.
    regex_names = {(x["path"], x["name_line"]) for x in out["regex"]["symbols"]}
    rg_classes = rg_lines(django.repo, "-s", "-g", "*.py", r"^\s*class Test\w*Case\b")
    assert regex_names == rg_classes
    # find_definitions, qualified and by path.
    d = out["defs"]["symbols"]
    assert [(x["path"], x["qualified_name"]) for x in d] == [("django/db/models/query.py", "QuerySet.get_or_create")]
    assert {x["qualified_name"] for x in out["defs_path"]["symbols"]} == {"QuerySet.get_or_create"}
    # More definitions than one answer holds: pages within the response budget, each definition once.
    many = out["many"]
    n_init = len(rg_lines(django.repo, "-g", "*.py", r"^\s*(async\s+)?def __init__\("))
    first = many[0][0]
    assert first["has_more"] and "narrow" in first["hint"] and len(many) > 2
    assert first["total_count"] >= 0.9 * n_init and first["total_count"] > 200, (first["total_count"], n_init)
    seen = [(x["path"], x["line"], x["qualified_name"]) for sc, _ in many for x in sc["symbols"]]
    assert len(seen) == len(set(seen)) == first["total_count"]
    assert all(text_len <= 26_000 for _, text_len in many)
    # find_references: usages = every whole-word occurrence (rg -w) except the definition lines; each file once across pages.
    pages = out["refs"]
    files = [f for p in pages for f in p["files"]]
    assert len(files) == len({(f["repo"], f["path"]) for f in files}) == pages[0]["total_files"]
    got = {(f["path"], u["line"]) for f in files for u in f["usages"]}
    defs = {(x["path"], x["name_line"]) for x in pages[0]["definitions"]}
    secret = {r["path"] for r in django.read("files", ["path", "has_secrets"]).to_pylist() if r["has_secrets"]}
    expected = {e for e in rg_lines(django.repo, "-s", "-w", "-F", "get_or_create") if e[0] in django.paths()} - defs
    assert {g for g in got if g[0] not in secret} == {e for e in expected if e[0] not in secret}
    kinds = {u["source"] for f in files for u in f["usages"]}
    assert kinds == {"reference", "text"}
    call = [u for f in files if f["path"] == "django/contrib/auth/backends.py" for u in f["usages"] if u["source"] == "reference"]
    assert call and call[0]["ref_kind"] == "call" and call[0]["enclosing_symbol"] == "RemoteUserBackend.authenticate"
    # Suggestions and coded errors.
    assert out["typo"]["total_count"] == 0 and "get_or_create" in out["typo"]["hint"]
    assert out["bad_kind"][0] and out["bad_kind"][1]["code"] == "INVALID_ARGUMENT" and "function" in out["bad_kind"][1]["hint"]


def test_sql_cli_is_read_only_and_bounded(server_bin, django):
    import duckdb

    def sql(q, *extra):
        return subprocess.run([str(server_bin), "sql", "--index", str(django.dir), "--json", *extra, q], capture_output=True, text=True, timeout=120)

    p = sql("SELECT kind, count(*) AS n FROM symbols GROUP BY kind ORDER BY n DESC, kind")
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    expected = duckdb.sql(f"SELECT kind, count(*) AS n FROM '{django.table('symbols')}' GROUP BY kind ORDER BY n DESC, kind").fetchall()
    assert got["columns"] == ["kind", "n"] and [tuple(r) for r in got["rows"]] == expected
    p = sql("SELECT path FROM files", "--max-rows", "10")
    assert p.returncode == 0 and len(json.loads(p.stdout)["rows"]) == 10 and json.loads(p.stdout)["truncated"]
    for q, word in [("DROP TABLE symbols", "SELECT"), ("SELECT 1; DROP TABLE files", "SELECT"),
                    ("SELECT * FROM read_csv('/etc/passwd')", "disabled"), ("SELECT * FROM nope", "nope")]:
        p = sql(q)
        assert p.returncode == 2 and word in p.stderr and "hint:" in p.stderr, (q, p.stderr)
    p = sql("SELECT count(*) FROM refs a, refs b", "--timeout", "1")
    assert p.returncode == 2 and "BUDGET_EXCEEDED" in p.stderr
    # Errors in the user's words: no DuckDB internals, no wrapped query, no internal tables.
    for q, want in [("DELETE FROM symbols", "only a read-only SELECT is allowed"), ("COPY files TO 'x.csv'", "only a read-only SELECT"),
                    ("", "the query is empty"), ("  ;", "the query is empty"), ("SELEC path FROM files", "SQL syntax error"),
                    ("SELECT * FROM symbolz", "symbolz")]:
        p = sql(q)
        assert p.returncode == 2 and want in p.stderr and "hint:" in p.stderr, (q, p.stderr)
        assert "serialized to json" not in p.stderr and "LIMIT 101" not in p.stderr and "ov_" not in p.stderr, (q, p.stderr)
    # Every table the schema documents is queryable; patterns agrees with pyarrow.
    p = sql("SELECT count(*) AS n, count(DISTINCT pattern_id) AS k FROM patterns")
    assert p.returncode == 0, p.stderr
    t = pq.read_table(django.table("patterns"), columns=["pattern_id"]).column("pattern_id").to_pylist()
    assert json.loads(p.stdout)["rows"] == [[len(t), len(set(t))]] and len(t) > 0
    # No rows still names the columns.
    p = sql("SELECT path, language FROM files LIMIT 0")
    assert p.returncode == 0 and json.loads(p.stdout) == {"columns": ["path", "language"], "rows": [], "truncated": False}, p.stdout


def test_search_query_language(server_bin, django):
    async def body(s, init):
        out = {}
        for name, q in {
            "literal": "get_or_create",
            "neg": "get_or_create -lang:python",
            "or": '("def save(" or "def delete(") file:django/db/models/base\\.py',
            "sym": "lang:python sym:get_or_create -file:tests",
            "files": "file:migrations/0001 lang:python",
            "case": "QuerySet case:yes",
        }.items():
            hits, cursor = [], None
            while True:
                args = {"query": q, "limit": 100}
                if cursor:
                    args["cursor"] = cursor
                r = await s.call_tool("search", args)
                assert not r.is_error, (q, r.content[0].text)
                sc = r.structured_content
                hits += sc["hits"]
                cursor = sc.get("next_cursor")
                if not cursor:
                    break
            out[name] = (sc, hits)
        bad = await s.call_tool("search", {"query": "filee:models.py"})
        out["bad"] = (bad.is_error, bad.structured_content)
        paren = await s.call_tool("search", {"query": "(foo"})
        out["paren"] = (paren.is_error, paren.structured_content)
        todo = await s.call_tool("search", {"query": "TODO:"})
        out["todo"] = (todo.is_error, todo.structured_content)
        bad_re = await s.call_tool("search", {"query": "regex:foo("})
        out["bad_re"] = (bad_re.is_error, bad_re.structured_content)
        return out

    out = session_run(server_bin, django.dir, body)
    files = {r["path"]: r for r in django.read("files", ["path", "language", "has_secrets"]).to_pylist()}
    ok = lambda p: p in files and not files[p]["has_secrets"]
    lines = lambda hits: {(h["path"], h["line"]) for h in hits if ok(h["path"])}
    rg = lambda *a: {e for e in rg_lines(django.repo, *a) if ok(e[0])}
    sc, hits = out["literal"]
    assert len(hits) == sc["total_hits"] == len({(h["path"], h["line"]) for h in hits}), "each hit exactly once across pages"
    assert lines(hits) == rg("-S", "-F", "get_or_create")
    assert lines(out["neg"][1]) == {e for e in rg("-S", "-F", "get_or_create") if files[e[0]]["language"] != "python"}
    assert lines(out["or"][1]) == rg("-S", "-F", "-e", "def save(", "-e", "def delete(", "django/db/models/base.py")
    sym_hits = out["sym"][1]
    assert sym_hits and all(h["kind"] == "symbol" and "tests" not in h["path"] and files[h["path"]]["language"] == "python" for h in sym_hits)
    assert {(h["path"], h["line"]) for h in sym_hits} >= {("django/db/models/query.py", 906)}
    fh = out["files"][1]
    assert {h["path"] for h in fh} == {p for p, r in files.items() if "migrations/0001" in p and r["language"] == "python"}
    assert lines(out["case"][1]) == rg("-s", "-F", "QuerySet")
    is_error, sc = out["bad"]
    assert is_error and sc["code"] == "UNKNOWN_FIELD" and "file:" in sc["hint"] and "sym:" in sc["hint"]
    assert out["paren"][0] and out["paren"][1]["code"] == "INVALID_ARGUMENT"
    # A word with a colon is not a field: the error says so and how to quote it.
    is_error, sc = out["todo"]
    assert is_error and sc["code"] == "UNKNOWN_FIELD" and '"todo:"' in sc["hint"].lower(), sc
    # A bad regex: atom gets a hint in the query language's terms (no grep-only flags).
    is_error, sc = out["bad_re"]
    assert is_error and sc["code"] == "INVALID_PATTERN" and "quoted string" in sc["hint"] and "fixed_string" not in sc["hint"], sc


def test_default_repo_and_behind_head(server_bin, indexer, tmp_path):
    """Started inside a checkout of a loaded repo, the server defaults to it and
    reports, from git HEAD only, that the snapshot is behind."""
    repo = tmp_path / "demo"
    repo.mkdir()
    (repo / "a.py").write_text("def alpha():\n    return 1\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "one"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)
    out = tmp_path / "snaps"
    subprocess.run([str(indexer), "index", str(repo), "--out", str(out)], check=True, capture_output=True)
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.py").write_text("def alpha():\n    pass\n")
    subprocess.run([str(indexer), "index", str(other), "--out", str(out)], check=True, capture_output=True)
    (repo / "b.py").write_text("x = 1\n")
    for args in (["add", "."], ["commit", "-qm", "two"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)

    async def main():
        params = StdioServerParameters(command=str(server_bin), args=["serve", "--index", str(out)], cwd=str(repo))
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                h = (await s.call_tool("health", {})).structured_content
                d = (await s.call_tool("find_definitions", {"symbol": "alpha"})).structured_content
                a = (await s.call_tool("find_definitions", {"symbol": "alpha", "repo": "all"})).structured_content
                return h, d, a

    h, d, a = asyncio.run(main())
    by_repo = {x["repo"]: x for x in h["snapshots"]}
    assert by_repo["demo"]["behind_head"] is True and by_repo["demo"]["commits_behind"] == 1
    assert by_repo["other"]["behind_head"] is None
    assert {x["repo"] for x in d["symbols"]} == {"demo"}
    assert {x["repo"] for x in a["symbols"]} == {"demo", "other"}
    # code-indexer sql runs the server's SQL over a snapshot.
    p = subprocess.run([str(indexer), "sql", str(out / "demo"), "--json", "SELECT name FROM symbols ORDER BY name"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["rows"] == [["alpha"]]


def test_table_tools_on_a_large_repo(server_bin, snapshots):
    """The symbol tools on go-stdlib (11k files, 100k+ symbols) within the
    server's DuckDB memory cap: a cap too small fails these with an
    out-of-memory error. Definitions are checked against rg."""
    go = snapshots("go-stdlib")

    async def body(s, init):
        out = {}
        for name, args in [("search_symbols", {"query": "NewReader", "limit": 20}),
                           ("find_definitions", {"symbol": "Reader"}),
                           ("find_references", {"symbol": "NewReader", "limit": 20}),
                           ("search_symbols", {"query": "^New[A-Z]\\w*Reader$", "regex": True, "kind": "function", "limit": 1000})]:
            r = await s.call_tool(name, args)
            assert not r.is_error, (name, r.content[0].text[:300])
            out[name + str(len(out))] = r.structured_content
        # After 1 s without calls the server drops DuckDB's cached blocks and
        # sets its memory limit back: the same calls must answer the same.
        await asyncio.sleep(1.8)
        for name, args in [("find_definitions", {"symbol": "Reader"}),
                           ("search_symbols", {"query": "^New[A-Z]\\w*Reader$", "regex": True, "kind": "function", "limit": 1000})]:
            r = await s.call_tool(name, args)
            assert not r.is_error, ("after idle", name, r.content[0].text[:300])
            out[name + "_after_idle"] = r.structured_content
        return out

    out = session_run(server_bin, go.dir, body)
    assert out["find_definitions_after_idle"]["symbols"] == out["find_definitions1"]["symbols"]
    assert out["search_symbols_after_idle"]["symbols"] == out["search_symbols3"]["symbols"]
    defs = out["find_definitions1"]["symbols"]
    rg_types = {e for e in rg_lines(go.repo, "-s", r"^type Reader\b", "src") if e[0] in go.paths()}
    got = {(d["path"], d["name_line"]) for d in defs if d["kind"] in ("struct", "interface", "type")}
    assert rg_types and rg_types <= got, (rg_types - got)
    assert out["search_symbols0"]["symbols"][0]["name"] == "NewReader"
    assert out["find_references2"]["total_files"] > 10
    rg_funcs = {e for e in rg_lines(go.repo, "-s", r"^func New[A-Z]\w*Reader\(", "src") if e[0] in go.paths()}
    got = {(x["path"], x["name_line"]) for x in out["search_symbols3"]["symbols"]}
    assert rg_funcs and rg_funcs == got, (rg_funcs ^ got)
