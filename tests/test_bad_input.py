"""No input crashes the server: a matrix of malformed calls across every tool
and resource, sent through the official Python MCP SDK to a server on a real
django snapshot. Each is answered within 5 s with a coded error (or, where
the input is legal, a correct result), and the server answers a good call
after each. Then the same server under concurrency: eight clients' worth of
calls at once get the answers one client gets alone, and its memory stays
bounded over a burst of 1,000 calls."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError as McpError

from helpers import build

pytestmark = pytest.mark.corpus

CODES = {
    "INVALID_ARGUMENT", "INVALID_PATTERN", "INVALID_CURSOR", "UNKNOWN_FIELD", "UNKNOWN_REPO",
    "UNKNOWN_LANG", "NOT_FOUND", "QUERY_TOO_COMPLEX", "BUDGET_EXCEEDED",
}
OK = "ok"

# (tool, arguments, expected): expected is an error code, or OK for a legal call.
CASES: list[tuple[str, dict, str]] = [
    # grep
    ("grep", {}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": 5}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": None}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": ""}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "("}, "INVALID_PATTERN"),
    ("grep", {"pattern": "[z-a]"}, "INVALID_PATTERN"),
    ("grep", {"pattern": "a{9999}{9999}"}, "INVALID_PATTERN"),
    ("grep", {"pattern": "(" * 10_000}, "INVALID_PATTERN"),
    ("grep", {"pattern": "a{99999}"}, OK),
    ("grep", {"pattern": "x" * 20_000}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "a\x00b"}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "limit": -1}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "limit": 0}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "limit": 10**12}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "limit": 10**30}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "limit": "10"}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "limit": 2.5}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "limit": 5.0}, OK),
    ("grep", {"pattern": "x", "limit": None}, OK),
    ("grep", {"pattern": "x", "limit": True}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "context_lines": 21}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "context_lines": -3}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "before": 10**6}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "after": [1]}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "max_count": -1}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "fixed_string": "yes"}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "multiline": 1}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "glob": 5}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "glob": [5]}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "glob": {"a": 1}}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "glob": "[invalid"}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "glob": ["*.py"] * 300}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "path": "/etc"}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "path": "../.."}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "path": "django/../../etc"}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "path": "C:\\Windows"}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "path": "django/no/such/dir"}, "NOT_FOUND"),
    ("find_definitions", {"symbol": "save", "path": "no_such_dir"}, "NOT_FOUND"),
    ("grep", {"pattern": "x", "lang": "klingon"}, "UNKNOWN_LANG"),
    ("grep", {"pattern": "x", "lang": "Python"}, "UNKNOWN_LANG"),
    ("grep", {"pattern": "x", "repo": "nope"}, "UNKNOWN_REPO"),
    ("grep", {"pattern": "x", "cursor": "garbage!!"}, "INVALID_CURSOR"),
    ("grep", {"pattern": "x", "cursor": "A" * 5000}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "cursor": 7}, "INVALID_ARGUMENT"),
    ("grep", {"pattern": "x", "count_only": True, "cursor": "eyJxIjoiIiwicCI6WzBdfQ"}, "INVALID_CURSOR"),
    ("grep", {"pattern": "x", "query": "x"}, "INVALID_ARGUMENT"),
    # search_files
    ("search_files", {}, "INVALID_ARGUMENT"),
    ("search_files", {"pattern": []}, "INVALID_ARGUMENT"),
    ("search_files", {"pattern": "[unclosed"}, "INVALID_PATTERN"),
    ("search_files", {"pattern": "(", "regex": True}, "INVALID_PATTERN"),
    ("search_files", {"pattern": "*.py", "limit": 0}, "INVALID_ARGUMENT"),
    ("search_files", {"pattern": "*.py", "limit": 1001}, "INVALID_ARGUMENT"),
    ("search_files", {"pattern": "*.py", "lang": "cobol"}, "UNKNOWN_LANG"),
    ("search_files", {"pattern": "*.py", "cursor": "garbage"}, "INVALID_CURSOR"),
    ("search_files", {"pattern": "*.py", "repo": 3}, "INVALID_ARGUMENT"),
    # read_file
    ("read_file", {}, "INVALID_ARGUMENT"),
    ("read_file", {"path": "/etc/passwd"}, "INVALID_ARGUMENT"),
    ("read_file", {"path": "/home/me/django/django/db/models/query.py"}, "INVALID_ARGUMENT"),
    ("read_file", {"path": "../../etc/passwd"}, "INVALID_ARGUMENT"),
    ("read_file", {"path": "no/such/file.py"}, "NOT_FOUND"),
    ("read_file", {"path": "django"}, "NOT_FOUND"),
    ("read_file", {"path": "django/__init__.py", "start_line": 0}, "INVALID_ARGUMENT"),
    ("read_file", {"path": "django/__init__.py", "start_line": -5}, "INVALID_ARGUMENT"),
    ("read_file", {"path": "django/__init__.py", "start_line": 10, "end_line": 2}, "INVALID_ARGUMENT"),
    ("read_file", {"path": "django/__init__.py", "start_line": 10**15}, "INVALID_ARGUMENT"),
    ("read_file", {"path": "django/__init__.py", "end_line": 10**15}, OK),
    # search_symbols
    ("search_symbols", {}, "INVALID_ARGUMENT"),
    ("search_symbols", {"query": ""}, "INVALID_ARGUMENT"),
    ("search_symbols", {"query": "(", "regex": True}, "INVALID_PATTERN"),
    ("search_symbols", {"query": "save", "kind": "bogus"}, "INVALID_ARGUMENT"),
    ("search_symbols", {"query": "save", "limit": 5000}, "INVALID_ARGUMENT"),
    ("search_symbols", {"query": "save", "cursor": "garbage"}, "INVALID_CURSOR"),
    ("search_symbols", {"query": "save", "lang": "elvish"}, "UNKNOWN_LANG"),
    ("search_symbols", {"query": "save", "path": "/abs"}, "INVALID_ARGUMENT"),
    ("search_symbols", {"query": "%_'\"\\;--"}, OK),
    # find_definitions / find_references
    ("find_definitions", {"symbol": ""}, "INVALID_ARGUMENT"),
    ("find_definitions", {"symbol": 123}, "INVALID_ARGUMENT"),
    ("find_definitions", {"symbol": "x" * 20_000}, "INVALID_ARGUMENT"),
    ("find_definitions", {"symbol": "save", "path": "/abs"}, "INVALID_ARGUMENT"),
    ("find_definitions", {"symbol": "save", "limit": 0}, "INVALID_ARGUMENT"),
    ("find_definitions", {"symbol": "save", "kind": 5}, "INVALID_ARGUMENT"),
    ("find_definitions", {"symbol": "save", "cursor": "garbage"}, "INVALID_CURSOR"),
    ("find_definitions", {"symbol": "no_such_symbol_xyz"}, OK),
    ("find_references", {"symbol": ""}, "INVALID_ARGUMENT"),
    ("find_references", {"symbol": "save", "cursor": "garbage"}, "INVALID_CURSOR"),
    ("find_references", {"symbol": "save", "limit": -1}, "INVALID_ARGUMENT"),
    ("find_references", {"symbol": "save", "path": "../x"}, "INVALID_ARGUMENT"),
    # search (the query language)
    ("search", {"query": "(" * 10_000}, "INVALID_ARGUMENT"),
    ("search", {"query": "-" * 20_000}, "INVALID_ARGUMENT"),
    ("search", {"query": " or ".join(["a"] * 20_000)}, "INVALID_ARGUMENT"),
    ("search", {"query": " or ".join(["a"] * 100)}, "QUERY_TOO_COMPLEX"),
    ("search", {"query": "(" * 100 + "x"}, "QUERY_TOO_COMPLEX"),
    ("search", {"query": "-" * 100 + "x"}, "QUERY_TOO_COMPLEX"),
    ("search", {"query": ""}, "INVALID_ARGUMENT"),
    ("search", {"query": "filee:x"}, "UNKNOWN_FIELD"),
    ("search", {"query": "regex:("}, "INVALID_PATTERN"),
    ("search", {"query": "file:( x"}, "INVALID_PATTERN"),
    ("search", {"query": "lang:klingon x"}, "UNKNOWN_LANG"),
    ("search", {"query": "case:maybe x"}, "INVALID_ARGUMENT"),
    ("search", {"query": "\"open"}, "INVALID_ARGUMENT"),
    ("search", {"query": "a or"}, "INVALID_ARGUMENT"),
    ("search", {"query": "sym:"}, "INVALID_ARGUMENT"),
    ("search", {"query": "x", "limit": 0}, "INVALID_ARGUMENT"),
    ("search", {"query": "x", "cursor": "garbage"}, "INVALID_CURSOR"),
    ("search", {"query": "repo:django sym:get_or_create"}, OK),
    ("search", {"query": "repo:nope sym:get_or_create"}, "UNKNOWN_REPO"),
    ("search", {"query": 'regex:"def\\s+get_or_create\\(self"'}, OK),
    # list_repos / health
    ("list_repos", {"x": 1}, "INVALID_ARGUMENT"),
    ("changes", {"limit": 0}, "INVALID_ARGUMENT"),
    ("health", {"repo": "django"}, "INVALID_ARGUMENT"),
    # search_code
    ("search_code", {}, "INVALID_ARGUMENT"),
    ("search_code", {"query": ""}, "INVALID_ARGUMENT"),
    ("search_code", {"query": "x", "mode": "fuzzy"}, "INVALID_ARGUMENT"),
    ("search_code", {"query": "x", "limit": 51}, "INVALID_ARGUMENT"),
    ("search_code", {"query": "x", "include_tests": "maybe"}, "INVALID_ARGUMENT"),
    ("search_code", {"query": "x", "lang": "klingon"}, "UNKNOWN_LANG"),
    ("search_code", {"query": "x", "path": "/abs"}, "INVALID_ARGUMENT"),
    ("search_code", {"query": "(", "mode": "regex"}, "INVALID_PATTERN"),
    ("search_code", {"query": "x", "cursor": "garbage"}, "INVALID_CURSOR"),
    ("search_code", {"query": "x", "max_per_file": 0}, "INVALID_ARGUMENT"),
    ("search_code", {"query": "x" * 20_000}, "INVALID_ARGUMENT"),
    # related_files / call_graph
    ("related_files", {}, "INVALID_ARGUMENT"),
    ("related_files", {"path": "no/such.py"}, "NOT_FOUND"),
    ("related_files", {"path": "django/db/models/query.py", "limit": 0}, "INVALID_ARGUMENT"),
    ("related_files", {"path": "../../etc/passwd"}, "INVALID_ARGUMENT"),
    ("call_graph", {"symbol": ""}, "INVALID_ARGUMENT"),
    ("call_graph", {"symbol": "save", "depth": 4}, "INVALID_ARGUMENT"),
    ("call_graph", {"symbol": "save", "depth": -1}, "INVALID_ARGUMENT"),
    ("call_graph", {"symbol": "save", "direction": "sideways"}, "INVALID_ARGUMENT"),
]

# (uri, expected): a code the protocol error must name, or OK.
RESOURCE_CASES = [
    ("codeindex://health", OK),
    ("codeindex://relevant?path=django/db/models/query.py", OK),
    ("codeindex://nope", "NOT_FOUND"),
    ("codeindex://relevant?path=/etc/passwd", "INVALID_ARGUMENT"),
    ("codeindex://relevant?path=../../x", "INVALID_ARGUMENT"),
    ("codeindex://relevant?path=no/such.py", "NOT_FOUND"),
    ("codeindex://relevant", "INVALID_ARGUMENT"),
    ("codeindex://relevant?query=" + "x" * 20_000, "INVALID_ARGUMENT"),
]


def session_run(server_bin: Path, index: Path, body):
    async def main():
        params = StdioServerParameters(command=str(server_bin), args=["serve", "--index", str(index)])
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return await body(s)

    return asyncio.run(main())


def body_of(res) -> dict:
    """The structured error body of a tool result."""
    sc = res.structured_content or {}
    if not sc and res.content:
        try:
            sc = json.loads(res.content[0].text)
        except (ValueError, AttributeError):
            sc = {}
    return sc


async def good_call(s) -> None:
    res = await asyncio.wait_for(s.call_tool("grep", {"pattern": "def get_or_create", "glob": "*.py"}), 10)
    assert not res.is_error and res.structured_content["matches"], "the server no longer answers a good call"


def test_bad_input_matrix(server_bin, django_snapshot):
    assert len(CASES) + len(RESOURCE_CASES) >= 80

    async def body(s):
        failures, slow = [], []
        for tool, args, want in CASES:
            t0 = time.monotonic()
            try:
                res = await asyncio.wait_for(s.call_tool(tool, args), 5)
            except asyncio.TimeoutError:
                failures.append(f"{tool} {str(args)[:80]}: no answer within 5 s")
                await good_call(s)
                continue
            except McpError as e:
                failures.append(f"{tool} {str(args)[:80]}: protocol error, not a tool result: {e}")
                await good_call(s)
                continue
            took = time.monotonic() - t0
            if want == OK:
                if res.is_error:
                    failures.append(f"{tool} {str(args)[:80]}: legal input answered with an error: {res.content[0].text[:200]}")
            else:
                b = body_of(res)
                if not res.is_error:
                    failures.append(f"{tool} {str(args)[:80]}: expected {want}, got a result")
                elif b.get("code") != want or not b.get("message") or not b.get("hint"):
                    failures.append(f"{tool} {str(args)[:80]}: expected {want}, got {b or res.content[0].text[:200]}")
            if took > 5:
                slow.append((tool, took))
            await good_call(s)
        for uri, want in RESOURCE_CASES:
            try:
                r = await asyncio.wait_for(s.read_resource(uri), 5)
                if want != OK:
                    failures.append(f"{uri[:80]}: expected {want}, got a resource")
                else:
                    assert r.contents and r.contents[0].text
            except McpError as e:
                if want == OK or want not in str(e):
                    failures.append(f"{uri[:80]}: expected {want}, got {e}")
            await good_call(s)
        # What was not searched is said: the binary files django's manifest counts.
        for tool, args in [("grep", {"pattern": "def get_or_create"}), ("search", {"query": "get_or_create"})]:
            res = await s.call_tool(tool, args)
            ni = res.structured_content.get("not_indexed") or {}
            if ni.get("binary") != skipped["binary"] or "not searched" not in res.content[0].text:
                failures.append(f"{tool}: not_indexed {ni} against the manifest's {skipped}")
        # A regex over the size limit is worded as ripgrep words it.
        res = await s.call_tool("grep", {"pattern": "a{9999}{9999}"})
        if "Compiled regex exceeds size limit of" not in body_of(res).get("message", ""):
            failures.append(f"size limit wording: {body_of(res)}")
        # An absolute path through the checkout: the hint names the repo-relative one.
        res = await s.call_tool("read_file", {"path": "/home/me/django/django/db/models/query.py"})
        if '"django/db/models/query.py"' not in body_of(res).get("hint", ""):
            failures.append(f"absolute path hint: {body_of(res)}")
        # A cursor made for another query is refused.
        a = await s.call_tool("grep", {"pattern": "import", "limit": 1})
        cur = a.structured_content["next_cursor"]
        for tool, args in [("grep", {"pattern": "export", "limit": 1}), ("search_files", {"pattern": "*.py"}),
                           ("search", {"query": "import"})]:
            res = await s.call_tool(tool, {**args, "cursor": cur})
            if body_of(res).get("code") != "INVALID_CURSOR":
                failures.append(f"{tool} with another query's cursor: {body_of(res)}")
        # An unknown tool is a protocol error (MCP's "unknown tool"), and the server lives on.
        res = None
        try:
            res = await s.call_tool("no_such_tool", {})
        except McpError:
            pass
        if res is not None and not res.is_error:
            failures.append("an unknown tool answered without an error")
        await good_call(s)
        return failures, slow

    skipped = django_snapshot.manifest["skipped"]
    assert skipped["binary"] > 0, "django has binary files: the not_indexed check needs them"
    failures, slow = session_run(server_bin, django_snapshot.dir, body)
    assert not failures, f"{len(failures)} of {len(CASES) + len(RESOURCE_CASES)} cases failed:\n" + "\n".join(failures)
    assert not slow, slow


def test_paths_cursors_and_pages_as_agents_send_them(server_bin, django_snapshot):
    """What agents really send: `./` and `\\` paths mean the repo path; a path the
    index lacks is NOT_FOUND with a hint, not an empty success; an empty
    cursor is the first page; the text of every paged tool carries its
    next_cursor; find_references pages stay within the structured budget."""

    async def body(s):
        failures = []
        scope = "django/db/models"
        base = await s.call_tool("grep", {"pattern": "def get_or_create", "path": scope})
        want = [(m["path"], m["line"]) for m in base.structured_content["matches"]]
        assert want, "the scoped grep finds get_or_create"
        for p in ["./" + scope, scope.replace("/", "\\"), scope + "/", "./django/./db//models"]:
            r = await s.call_tool("grep", {"pattern": "def get_or_create", "path": p})
            got = [(m["path"], m["line"]) for m in (r.structured_content or {}).get("matches", [])]
            if got != want:
                failures.append(f"grep path {p!r}: {got} != {want}")
        r = await s.call_tool("find_definitions", {"symbol": "QuerySet", "path": "./django/db/models/query.py"})
        if not r.structured_content or not r.structured_content.get("symbols"):
            failures.append(f"find_definitions with ./ path: {r.content[0].text[:200]}")
        for p, hint_has in [("django/db/modelz", '"django/db"'), ("Django/db", '"django/db"')]:
            r = await s.call_tool("search_symbols", {"query": "save", "path": p})
            b = body_of(r)
            if b.get("code") != "NOT_FOUND" or hint_has not in b.get("hint", ""):
                failures.append(f"path {p!r}: {b or r.content[0].text[:200]}")
        a = await s.call_tool("grep", {"pattern": "import", "limit": 3})
        b = await s.call_tool("grep", {"pattern": "import", "limit": 3, "cursor": ""})
        if b.is_error or b.structured_content["matches"] != a.structured_content["matches"]:
            failures.append(f"an empty cursor is not the first page: {b.content[0].text[:200]}")
        paged = [
            ("grep", {"pattern": "TODO", "limit": 2}),
            ("grep", {"pattern": "TODO", "count_only": True, "limit": 3}),
            ("search_files", {"pattern": "**/*.py", "limit": 5}),
            ("search_symbols", {"query": "save", "limit": 3}),
            ("find_definitions", {"symbol": "save", "limit": 2}),
            ("find_references", {"symbol": "save", "limit": 2}),
            ("search", {"query": "lang:python import", "limit": 3}),
            ("search_code", {"query": "parse a date string", "mode": "keyword", "limit": 3}),
        ]
        for tool, args in paged:
            r = await s.call_tool(tool, args)
            cur = (r.structured_content or {}).get("next_cursor")
            if not cur:
                failures.append(f"{tool} {args}: expected a next page")
            elif cur not in r.content[0].text:
                failures.append(f"{tool} {args}: the text lacks its next_cursor")
        r = await s.call_tool("grep", {"pattern": "TODO", "count_only": True, "limit": 3})
        if len(r.structured_content["counts"]) != 3:
            failures.append(f"count_only limit 3: {len(r.structured_content['counts'])} files")
        # Names as agents copy them: a module (or package directory) before the name,
        # Go's method expressions.
        for sym, want in [("query.QuerySet", ("django/db/models/query.py", "QuerySet")),
                          ("models.QuerySet", ("django/db/models/query.py", "QuerySet")),
                          ("(*QuerySet).get_or_create", ("django/db/models/query.py", "QuerySet.get_or_create"))]:
            r = await s.call_tool("find_definitions", {"symbol": sym})
            got = [(x["path"], x["qualified_name"]) for x in (r.structured_content or {}).get("symbols", [])]
            if want not in got:
                failures.append(f"find_definitions {sym!r}: {got[:5]}")
        # A relationship answer says how many results come from the code graph.
        r = await s.call_tool("search_code", {"query": "what calls get_or_create", "limit": 50})
        m = re.search(r"(\d+) from the code graph", r.content[0].text)
        page_graph = sum(h["why"].startswith("calls ") for h in r.structured_content["results"])
        if not m or not page_graph or not page_graph <= int(m.group(1)) <= r.structured_content["total_count"]:
            failures.append(f"relationship header: {r.content[0].text[:200]} ({page_graph} graph hits on the page)")
        # The header places the page in the ranking, and says when the ranking is cut at its cap.
        n = len(r.structured_content["results"])
        total = r.structured_content["total_count"]
        want = f"results 1-{n} of " + (f"the {total} best-ranked" if total >= 200 else str(total))
        if not r.content[0].text.startswith(want):
            failures.append(f"search_code header: {r.content[0].text[:120]!r}, want {want!r}")
        # A quoted regex reads as written: the same hits as unquoted.
        q1 = await s.call_tool("search", {"query": r'regex:"def\s+get_or_create\(self"'})
        q2 = await s.call_tool("search", {"query": r"regex:def\s+get_or_create\(self"})
        n1, n2 = (q1.structured_content or {}).get("total_hits"), (q2.structured_content or {}).get("total_hits")
        if not n1 or n1 != n2:
            failures.append(f"quoted regex: {n1} hits, unquoted {n2}")
        # A common name: many definitions, many usages; each page within budget.
        r = await s.call_tool("find_references", {"symbol": "get", "limit": 50})
        sc = r.structured_content
        size = len(json.dumps(sc))
        if size > 40_000 or len(sc["definitions"]) > 20 or sc["total_definitions"] <= 20:
            failures.append(f"find_references get: {size} bytes, {len(sc['definitions'])} of {sc['total_definitions']} definitions")
        r2 = await s.call_tool("find_references", {"symbol": "get", "limit": 50, "cursor": sc["next_cursor"]})
        sc2 = r2.structured_content
        if sc2["definitions"] or sc2["files"][0]["path"] <= sc["files"][-1]["path"]:
            failures.append("find_references page 2 repeats definitions or does not go on")
        return failures

    failures = session_run(server_bin, django_snapshot.dir, body)
    assert not failures, "\n".join(failures)


def test_a_server_started_before_the_first_build(server_bin, indexer, corpora, tmp_path):
    """The README's .mcp.json points at a snapshots directory that the first
    build fills: the server starts on it while it is empty, answers every tool with a
    coded NOT_FOUND that says how to build one, and serves the first
    snapshot written there without a restart."""
    snaps = tmp_path / "snapshots"
    snaps.mkdir()  # empty: the first build has not run yet

    async def main():
        params = StdioServerParameters(command=str(server_bin), args=["serve", "--index", str(snaps)])
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                res = await s.call_tool("grep", {"pattern": "mergeMap"})
                b = body_of(res)
                assert res.is_error and b.get("code") == "NOT_FOUND" and "code-indexer index" in b.get("hint", ""), b
                res = await s.call_tool("list_repos", {})
                assert not res.is_error and res.structured_content["repos"] == [], res.content[0].text
                build(indexer, corpora / "ts-rxjs", snaps, "--no-embeddings")
                for _ in range(50):
                    res = await s.call_tool("grep", {"pattern": "export function mergeMap"})
                    if not res.is_error:
                        break
                    await asyncio.sleep(0.2)
                assert not res.is_error and res.structured_content["matches"], res.content[0].text

    asyncio.run(main())


def server_pid(binary: Path) -> int:
    """The pid of the one running server process started from `binary` by this test process."""
    me = os.getpid()
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            exe = os.readlink(d / "exe")
        except OSError:
            continue
        if ppid == me and exe == str(binary.resolve()):
            found.append(int(d.name))
    assert len(found) == 1, found
    return found[0]


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


VOLATILE = {"elapsed_ms", "uptime_seconds"}


def stable(x):
    if isinstance(x, dict):
        return {k: stable(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [stable(v) for v in x]
    return x


CALLS = [
    ("grep", {"pattern": r"def get_or_create\(", "glob": "*.py"}),
    ("grep", {"pattern": "TODO", "count_only": True}),
    ("search_files", {"pattern": "**/models/*.py"}),
    ("read_file", {"path": "django/db/models/query.py", "start_line": 1, "end_line": 40}),
    ("search_symbols", {"query": "QuerySet"}),
    ("find_definitions", {"symbol": "QuerySet.get_or_create"}),
    ("find_references", {"symbol": "get_or_create", "limit": 5}),
    ("search", {"query": "lang:python sym:get_or_create -file:tests"}),
    ("list_repos", {}),
    ("changes", {}),
    ("health", {}),
    ("search_code", {"query": "parse a date string", "mode": "keyword"}),
    ("related_files", {"path": "django/db/models/query.py"}),
    ("call_graph", {"symbol": "QuerySet.get_or_create", "direction": "callees"}),
    ("grep", {"pattern": "x", "lang": "klingon"}),
]


def test_concurrent_clients_and_a_burst(server_bin, django_snapshot):
    async def body(s):
        alone = []
        for tool, args in CALLS:
            r = await s.call_tool(tool, args)
            alone.append((r.is_error, stable(r.structured_content)))
        # Eight clients' worth of calls at once: every tool, eight times over.
        together = await asyncio.gather(*[s.call_tool(t, a) for _ in range(8) for t, a in CALLS])
        diffs = []
        for i, r in enumerate(together):
            want = alone[i % len(CALLS)]
            if (r.is_error, stable(r.structured_content)) != want:
                diffs.append(CALLS[i % len(CALLS)][0])
        pid = server_pid(server_bin)
        batch = [(t, a) for _ in range(200 // len(CALLS) + 1) for t, a in CALLS][:200]
        rss = []
        # One burst of 200 to warm the caches, then 1,000 calls in bursts of 200.
        for burst in range(6):
            await asyncio.gather(*[s.call_tool(t, a) for t, a in batch])
            rss.append(rss_kb(pid))
        await asyncio.sleep(2.5)  # the server gives memory back after 1 s idle
        idle = rss_kb(pid)
        await good_call(s)
        return diffs, rss, idle

    diffs, rss, idle = session_run(server_bin, django_snapshot.dir, body)
    assert not diffs, f"concurrent answers differ from one client's for: {sorted(set(diffs))}"
    # Caches and DuckDB's buffers fill, then level off: nothing is kept per
    # call. Warm = after the first burst of 200 concurrent calls.
    warm = rss[0]
    assert max(rss) <= warm * 2, f"RSS (kB) after each burst of 200 calls: {rss}"
    assert idle <= warm * 1.5, f"idle RSS {idle} kB after 1,000 calls, {warm} kB once warm (bursts: {rss})"


def test_two_repos_with_the_same_paths_are_told_apart(server_bin, indexer, tmp_path):
    """Two loaded repositories hold the same path: the text channel says which
    repository each result is from (the structured `repo` always did), and
    read_file says which one answered and that the other holds the path too.
    With one repository selected, no labels."""
    out = tmp_path / "out"
    for name, body in (("alpha", "return 1"), ("beta", "return 2")):
        repo = tmp_path / name
        (repo / "pkg").mkdir(parents=True)
        (repo / "pkg" / "common.py").write_text(f"def shared_fn():\n    {body}\n\n\nclass SharedThing:\n    pass\n")
        (repo / "pkg" / f"{name}_only.py").write_text("from pkg.common import shared_fn\n\n\ndef caller():\n    return shared_fn()\n")
        build(indexer, repo, out, "--no-embeddings")

    async def body(s):
        failures = []
        labelled = [
            ("grep", {"pattern": "shared_fn", "repo": "all"}),
            ("grep", {"pattern": "shared_fn", "repo": "all", "count_only": True}),
            ("find_definitions", {"symbol": "shared_fn", "repo": "all"}),
            ("search_symbols", {"query": "Shared", "repo": "all"}),
            ("search_files", {"pattern": "**/common.py", "repo": "all"}),
            ("find_references", {"symbol": "shared_fn", "repo": "all"}),
            ("search", {"query": "shared_fn"}),
            ("search_code", {"query": "shared_fn", "repo": "all", "mode": "keyword"}),
        ]
        for tool, args in labelled:
            r = await s.call_tool(tool, args)
            t = r.content[0].text
            repos = {x["repo"] for k in ("matches", "counts", "symbols", "files", "hits", "results")
                     for x in (r.structured_content or {}).get(k, [])}
            if r.is_error or repos != {"alpha", "beta"}:
                failures.append(f"{tool}: expected results from both repos: {t[:200]}")
                continue
            # Every result line follows the label of its own repo.
            a, b = t.find("== repo alpha =="), t.find("== repo beta ==")
            if a < 0 or b < 0:
                failures.append(f"{tool}: no repo labels in the text: {t[:300]}")
        for tool, args in labelled[:1] + labelled[2:3]:
            r = await s.call_tool(tool, {**args, "repo": "alpha"})
            if "== repo" in r.content[0].text:
                failures.append(f"{tool} with one repo selected: labelled anyway")
        r = await s.call_tool("read_file", {"path": "pkg/common.py"})
        first = r.content[0].text.splitlines()[0]
        other = "beta" if r.structured_content["repo"] == "alpha" else "alpha"
        if f"(repo {r.structured_content['repo']}; also in {other}: pass repo" not in first:
            failures.append(f"read_file of an ambiguous path: {first}")
        r = await s.call_tool("read_file", {"path": "pkg/alpha_only.py"})
        if "(repo alpha)" not in r.content[0].text.splitlines()[0]:
            failures.append(f"read_file names its repo: {r.content[0].text.splitlines()[0]}")
        return failures

    failures = session_run(server_bin, out, body)
    assert not failures, "\n".join(failures)


def test_read_file_truncated_kinds_and_empty_patterns(server_bin, django_snapshot):
    """`truncated` is true exactly when not every line asked for came back;
    kinds are accepted in any case and by common aliases; an empty file
    pattern is an error like grep's; related_files can leave tests out."""
    big = django_snapshot.repo / "django/db/models/query.py"
    n = len(big.read_text().splitlines())

    async def body(s):
        failures = []
        r = await s.call_tool("read_file", {"path": "django/db/models/query.py", "start_line": 10, "end_line": 12})
        sc = r.structured_content
        if sc["truncated"] or (sc["line"], sc["end_line"]) != (10, 12):
            failures.append(f"a range returned whole is not truncated: {sc['line']}-{sc['end_line']} {sc['truncated']}")
        r = await s.call_tool("read_file", {"path": "django/db/models/query.py", "start_line": 1, "end_line": n})
        sc = r.structured_content
        if not sc["truncated"] or sc["end_line"] >= n or f"continue with start_line {sc['end_line'] + 1}" not in r.content[0].text:
            failures.append(f"a range cut by the budget: end {sc['end_line']} of {n}, truncated {sc['truncated']}")
        r = await s.call_tool("read_file", {"path": "django/db/models/query.py", "start_line": n - 5})
        if r.structured_content["truncated"] or r.structured_content["end_line"] != n:
            failures.append("the end of the file asked for without end_line is not truncated")
        want = await s.call_tool("search_symbols", {"query": "QuerySet", "kind": "class"})
        for k in ("Class", "CLASS", "classes"):
            got = await s.call_tool("search_symbols", {"query": "QuerySet", "kind": k})
            if got.is_error or got.structured_content["symbols"] != want.structured_content["symbols"]:
                failures.append(f"kind {k!r}: {got.content[0].text[:200]}")
        want = await s.call_tool("find_definitions", {"symbol": "slugify", "kind": "function"})
        for k in ("func", "def", "fn", "Function"):
            got = await s.call_tool("find_definitions", {"symbol": "slugify", "kind": k})
            if got.is_error or got.structured_content["symbols"] != want.structured_content["symbols"]:
                failures.append(f"kind {k!r}: {got.content[0].text[:200]}")
        bad = await s.call_tool("search_symbols", {"query": "QuerySet", "kind": "klass"})
        if body_of(bad).get("code") != "INVALID_ARGUMENT":
            failures.append("an unknown kind is still refused")
        r = await s.call_tool("search_files", {"pattern": " "})
        if body_of(r).get("code") != "INVALID_ARGUMENT":
            failures.append(f"empty search_files pattern: {r.content[0].text[:200]}")
        r = await s.call_tool("grep", {"pattern": "zzqqxx_never_there"})
        if r.content[0].text.lower().count("no matches") != 1:
            failures.append(f"grep's no-match text repeats itself: {r.content[0].text[:200]}")
        q = "django/db/models/query.py"
        allf = (await s.call_tool("related_files", {"path": q, "limit": 50})).structured_content["files"]
        ex = (await s.call_tool("related_files", {"path": q, "limit": 50, "include_tests": "exclude"})).structured_content["files"]
        only = (await s.call_tool("related_files", {"path": q, "limit": 50, "include_tests": "only"})).structured_content["files"]
        is_test = lambda p: p.startswith("tests/")
        if not any(is_test(f["path"]) for f in allf):
            failures.append("query.py has tests among its related files")
        if any(is_test(f["path"]) for f in ex) or not ex:
            failures.append(f"include_tests exclude: {[f['path'] for f in ex][:5]}")
        if not only or not all(is_test(f["path"]) for f in only):
            failures.append(f"include_tests only: {[f['path'] for f in only][:5]}")
        nontest = [f["path"] for f in allf if not is_test(f["path"])]
        if [f["path"] for f in ex][:len(nontest)] != nontest[:len(ex)]:
            failures.append("exclude keeps the order of the non-test files")
        r = await s.call_tool("related_files", {"path": q, "include_tests": "maybe"})
        if body_of(r).get("code") != "INVALID_ARGUMENT":
            failures.append("a bad include_tests value is refused")
        return failures

    failures = session_run(server_bin, django_snapshot.dir, body)
    assert not failures, "\n".join(failures)
