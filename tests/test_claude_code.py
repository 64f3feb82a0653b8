"""The Claude Code integration as the README documents it, end to end on a
copy of django: the README's setup commands, its `.mcp.json` (the server is
started from it) and its `.claude/settings.json` (each hook command run with
the JSON Claude Code sends it). After an edit through the PostToolUse hook,
grep, search_symbols, find_references and search_code answer from the new
text and flag it; a deleted file disappears from every tool."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from helpers import copy_tree, git_commit_all, git_init, rg_lines

pytestmark = pytest.mark.corpus

README = Path(__file__).resolve().parent.parent / "README.md"
TEXT, HTML, DELETED = "django/utils/text.py", "django/utils/html.py", "django/utils/baseconv.py"


def setup_blocks() -> tuple[list[str], dict, dict]:
    """The README section's shell commands, .mcp.json and settings.json."""
    text = README.read_text()
    section = text.split("### Claude Code: the whole setup", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.S)
    sh = [b for lang, b in blocks if lang == "sh"][0]
    commands = [l.split("#", 1)[0].strip() for l in sh.splitlines() if l.strip()]
    mcp, settings = [json.loads(b) for lang, b in blocks if lang == "json"]
    return commands, mcp, settings


def hook_command(settings: dict, event: str, tool: str) -> str:
    for entry in settings["hooks"][event]:
        if re.fullmatch(entry["matcher"], tool):
            return entry["hooks"][0]["command"]
    raise AssertionError(f"no {event} hook for {tool}")


def test_readme_setup_end_to_end(indexer, corpora, tmp_path):
    commands, mcp, settings = setup_blocks()
    home = tmp_path / "home"
    home.mkdir()
    tree = copy_tree(corpora / "django", tmp_path / "django", ignore_git=True)
    git_init(tree)
    git_commit_all(tree, "base")
    env = dict(os.environ, HOME=str(home), PATH=f"{indexer.parent}:{os.environ['PATH']}")
    for k in ("CODE_INDEX_SNAPSHOTS", "CODE_INDEX_CACHE", "CODE_INDEX_METRICS", "CODE_INDEX_CONFIG", "CODE_INDEX_LOG_DIR"):
        env.pop(k, None)
    for c in commands:
        args = shlex.split(c)
        if args[:2] == ["code-indexer", "sync"]:
            args.append("--no-embeddings")  # the test machine's model lives under the real HOME
        p = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, (c, p.stderr)
    assert (home / ".cache/code-index/snapshots/django/latest").is_file()
    assert ">>> code-index" in (tree / ".git/hooks/post-merge").read_text()

    def hook(event: str, tool: str, path: Path) -> subprocess.CompletedProcess:
        payload = {"session_id": "t", "hook_event_name": event, "tool_name": tool,
                   "tool_input": {"file_path": str(path)}, "cwd": str(tree)}
        return subprocess.run(["sh", "-c", hook_command(settings, event, tool)], input=json.dumps(payload),
                              cwd=tree, env=env, capture_output=True, text=True, timeout=300)

    # PreToolUse on Read: what else to read, as the hook's JSON answer.
    p = hook("PreToolUse", "Read", tree / "django/utils/dateparse.py")
    assert p.returncode == 0, p.stderr
    ctx = json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Read next for `django/utils/dateparse.py`" in ctx and "- `django/" in ctx, ctx

    server = mcp["mcpServers"]["code-index"]
    args = [os.path.expandvars(a.replace("${HOME}", str(home))) for a in server["args"]]

    async def main():
        params = StdioServerParameters(command=server["command"], args=args, env=env, cwd=str(tree))
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                # Edits through Claude Code's Edit tool, each followed by the PostToolUse hook.
                with open(tree / TEXT, "a") as f:
                    f.write('\n\ndef cc_probe_helper(value):\n    """Claude Code probe helper."""\n    return value\n')
                assert hook("PostToolUse", "Edit", tree / TEXT).returncode == 0
                with open(tree / HTML, "a") as f:
                    f.write("\n\ndef cc_probe_caller():\n    from django.utils.text import cc_probe_helper\n    return cc_probe_helper(1)\n")
                p = hook("PostToolUse", "Edit", tree / HTML)
                assert p.returncode == 0, p.stderr
                time.sleep(0.3)
                res = (await s.call_tool("grep", {"pattern": "cc_probe_helper"})).structured_content
                assert {(m["path"], m["line"]) for m in res["matches"]} == rg_lines(tree, "-S", "-e", "cc_probe_helper")
                assert all(m.get("overlay") for m in res["matches"])
                sym = (await s.call_tool("search_symbols", {"query": "cc_probe_helper"})).structured_content["symbols"]
                assert [(x["path"], x.get("overlay")) for x in sym] == [(TEXT, True)]
                refs = (await s.call_tool("find_references", {"symbol": "cc_probe_helper"})).structured_content
                ref_paths = {f["path"]: f.get("overlay") for f in refs["files"]}
                assert ref_paths.get(HTML) is True, refs
                code = (await s.call_tool("search_code", {"query": "cc_probe_helper", "mode": "keyword"})).structured_content
                assert code["results"][0]["path"] in (TEXT, HTML) and code["results"][0].get("overlay") is True

                # A deleted file disappears from every tool.
                (tree / DELETED).unlink()
                assert hook("PostToolUse", "Write", tree / DELETED).returncode == 0
                time.sleep(0.3)
                gone = await s.call_tool("read_file", {"path": DELETED})
                assert gone.is_error and gone.structured_content["code"] == "NOT_FOUND"
                assert not (await s.call_tool("search_files", {"pattern": "baseconv"})).structured_content["files"]
                g = (await s.call_tool("grep", {"pattern": "BaseConverter"})).structured_content["matches"]
                assert DELETED not in {m["path"] for m in g}
                assert {(m["path"], m["line"]) for m in g} == rg_lines(tree, "-S", "-e", "BaseConverter")
                sy = (await s.call_tool("search_symbols", {"query": "BaseConverter"})).structured_content["symbols"]
                assert DELETED not in {x["path"] for x in sy}
                fr = (await s.call_tool("find_references", {"symbol": "BaseConverter"})).structured_content["files"]
                assert DELETED not in {x["path"] for x in fr}
                sc = (await s.call_tool("search_code", {"query": "BaseConverter base36", "mode": "keyword"})).structured_content["results"]
                assert DELETED not in {x["path"] for x in sc}
                h = (await s.call_tool("health", {})).structured_content["snapshots"][0]
                assert sorted(h["overlay"]["paths"]) == sorted([TEXT, HTML, DELETED])
                assert h["working_tree_changes"] == 3 and h["commits_behind"] == 0

    asyncio.run(main())
