"""The TypeScript MCP SDK (`@modelcontextprotocol/sdk`, pinned in
tests/ts/package-lock.json, installed by scripts/setup.sh) as a second real
client: it lists the tools, resources and templates, calls every tool with
its output validated by the SDK's Ajv, reads the resources, and prints no
warning (Ajv used to print "unknown format uint64" at every start)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from test_bad_input import CALLS

pytestmark = pytest.mark.corpus

TS_DIR = Path(__file__).resolve().parent / "ts"
ALL_TOOLS = {"grep", "search_files", "read_file", "search_symbols", "find_definitions", "find_references", "search",
             "list_repos", "health", "search_code", "related_files", "call_graph", "changes"}


def ts_client_dir() -> Path:
    home = Path(os.environ.get("CODE_INDEX_HOME") or Path.home() / ".cache" / "code-index")
    return home / "ts-client"


def test_typescript_sdk_calls_every_tool(indexer, django_snapshot, tmp_path):
    client = ts_client_dir()
    if not (client / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail(f"the TypeScript SDK is not installed in {client}: run scripts/setup.sh --deps-only", pytrace=False)
    (client / "client.mjs").write_text((TS_DIR / "client.mjs").read_text())
    calls = [[t, a] for t, a in CALLS] + [["grep", {"pattern": "x", "limit": -1}], ["search", {"query": "(" * 100}]]
    calls_file = tmp_path / "calls.json"
    calls_file.write_text(json.dumps(calls))
    p = subprocess.run(["node", str(client / "client.mjs"), str(indexer.parent / "code-index-mcp"), str(django_snapshot.dir),
                        str(calls_file)], capture_output=True, text=True, timeout=300, cwd=client)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stderr.strip() == "", f"the TypeScript client printed warnings:\n{p.stderr[:3000]}"
    r = json.loads(p.stdout)
    assert r["server"]["name"] == "code-index-mcp"
    assert {t["name"] for t in r["tools"]} == ALL_TOOLS
    assert all(t["hasOutputSchema"] for t in r["tools"])
    assert r["resources"] == ["codeindex://health"]
    assert r["templates"] == ["codeindex://relevant{?path,query}"]
    called = {c["name"] for c in r["calls"]}
    assert called == ALL_TOOLS, ALL_TOOLS - called
    thrown = [c for c in r["calls"] if "thrown" in c]
    assert not thrown, thrown
    for c in r["calls"][: len(CALLS)]:
        if c["name"] == "grep" and c["args"].get("lang") == "klingon":
            assert c["isError"] and c["structured"]["code"] == "UNKNOWN_LANG"
        else:
            assert not c["isError"], c
            assert c["structured"], c
    grep = next(c for c in r["calls"] if c["name"] == "grep" and "get_or_create" in c["args"]["pattern"])
    assert any(m["path"] == "django/db/models/query.py" for m in grep["structured"]["matches"])
    bad_limit, bad_query = r["calls"][-2:]
    assert bad_limit["isError"] and bad_limit["structured"]["code"] == "INVALID_ARGUMENT"
    assert "1..=1000" in bad_limit["structured"]["hint"]
    assert bad_query["isError"] and bad_query["structured"]["code"] == "QUERY_TOO_COMPLEX"
    assert all("thrown" not in x and x["bytes"] > 0 for x in r["reads"]), r["reads"]
