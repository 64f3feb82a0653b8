#!/usr/bin/env python3
"""Hostile calls through the real client, for a time: random arguments for
every tool (keys from the tool's own input schema plus strangers; values
from a pool of hostile strings, numbers, nesting), sent by the official
Python MCP SDK to a server on a real snapshot. Every call must be answered
within 5 s, as a result or a coded error, and the server must answer a good
call after every 50. Prints the calls made and the codes seen.

    python3 bench/fuzz_mcp.py SNAPSHOT_DIR [SECONDS] [SEED]
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import random
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or Path.home() / ".cache/code-index/target")
SERVER = TARGET / "release" / "code-index-mcp"

STRINGS = [
    "", " ", "a", "def", "get_or_create", "QuerySet.get_or_create", "django/db/models/query.py", "django/",
    "/etc/passwd", "../../x", "C:\\x", "*.py", "**/*.py", "!*.py", "{a,{b}}", "[", "(", ")", "a{99999}",
    "a{9999}{9999}", "(?x)", "\\", "\\b\\w+\\b", ".*" * 50, "(a|b)*c" * 20, "é日本\u0000x", "\u202e", "%s%n",
    "lang:python sym:save -file:tests", "(" * 30, "-" * 40 + "x", " or ".join(["a"] * 80), "\"open", "filee:x",
    "regex:(", "case:maybe x", "all", "python", "Python", "klingon", "callers", "callees", "hybrid", "regex",
    "exclude", "only", "x" * 5000, "x" * 20000, "eyJxIjoiIiwicCI6WzBdfQ", "garbage!!",
]
NUMBERS = [0, 1, 2, 3, 5, 20, 21, 50, 51, 1000, 1001, -1, -(2**63), 2**63, 2**64, 10**30, 2.5, 5.0, 1e300, float("nan")]


def typed(rng: random.Random, schema: dict):
    """A value of the type the schema asks for (in range, mostly)."""
    types = schema.get("type") or []
    types = [types] if isinstance(types, str) else types
    if not types and "anyOf" in schema:
        return rng.choice(STRINGS)
    t = rng.choice([t for t in types if t != "null"] or ["string"])
    if t == "integer":
        lo, hi = schema.get("minimum", 0), schema.get("maximum", 100)
        return rng.randint(int(lo), int(min(hi, lo + 200)))
    if t == "boolean":
        return rng.random() < 0.5
    return rng.choice(STRINGS)


def value(rng: random.Random, depth: int = 0):
    r = rng.random()
    if r < 0.45:
        s = rng.choice(STRINGS)
        return s if rng.random() < 0.8 else s + rng.choice(STRINGS)
    if r < 0.7:
        return rng.choice(NUMBERS)
    if r < 0.8:
        return rng.choice([True, False, None])
    if depth < 2 and r < 0.9:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if depth < 2:
        return {rng.choice(STRINGS)[:10]: value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return "x"


async def main(snapshot: str, seconds: float, seed: int) -> int:
    rng = random.Random(seed)
    params = StdioServerParameters(command=str(SERVER), args=["serve", "--index", snapshot])
    codes: collections.Counter = collections.Counter()
    slow, calls = [], 0
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = {t.name: t.input_schema.get("properties") or {} for t in (await s.list_tools()).tools}
            names = sorted(tools)
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                tool = rng.choice(names)
                props = tools[tool]
                keys = list(props) + (["bogus"] if rng.random() < 0.1 else [])
                args = {}
                for k in rng.sample(keys, rng.randint(0, min(4, len(keys)))):
                    # Mostly well-typed (to reach the tools' bodies), sometimes anything.
                    args[k] = typed(rng, props[k]) if k in props and rng.random() < 0.8 else value(rng)
                if "nan" in json.dumps(args, default=str).lower():
                    args = {k: v for k, v in args.items() if not (isinstance(v, float) and v != v)}
                t0 = time.monotonic()
                try:
                    res = await asyncio.wait_for(s.call_tool(tool, args), 5)
                except asyncio.TimeoutError:
                    print(f"NO ANSWER within 5 s: {tool} {json.dumps(args)[:300]}", flush=True)
                    return 1
                took = time.monotonic() - t0
                calls += 1
                if took > 2:
                    slow.append((round(took, 2), tool, json.dumps(args)[:200]))
                if res.is_error:
                    sc = res.structured_content or {}
                    code = sc.get("code")
                    if not code:
                        print(f"UNCODED error: {tool} {json.dumps(args)[:300]}: {res.content[0].text[:200]}", flush=True)
                        return 1
                    codes[code] += 1
                else:
                    codes["ok"] += 1
                if calls % 50 == 0:
                    good = await asyncio.wait_for(s.call_tool("list_repos", {}), 10)
                    assert not good.is_error
    print(f"{calls} calls in {seconds:.0f} s (seed {seed}): {dict(codes.most_common())}")
    print(f"slowest (> 2 s): {sorted(slow, reverse=True)[:5]}")
    return 0


if __name__ == "__main__":
    snap = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 300
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    sys.exit(asyncio.run(main(snap, secs, seed)))
