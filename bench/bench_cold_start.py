#!/usr/bin/env python3
"""First start on a snapshot the server has never seen (an empty table cache),
through the official Python MCP client:

    python3 bench/bench_cold_start.py SNAPSHOT_DIR

Prints the time to ready (spawn → initialized), a grep's answer right after,
and the first find_definitions (which waits for the table cache the server
builds in the background), then the same call again.
"""

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/code-index/target"))
SERVER = TARGET / "release/code-index-mcp"


async def main(snap: str) -> None:
    with tempfile.TemporaryDirectory() as cache:
        t0 = time.perf_counter()
        p = StdioServerParameters(command=str(SERVER), args=["serve", "--index", snap],
                                  env={**os.environ, "CODE_INDEX_CACHE": cache})
        async with stdio_client(p) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                print(f"ready {time.perf_counter() - t0:.2f} s")
                t = time.perf_counter()
                res = await s.call_tool("grep", {"pattern": "kmem_cache_alloc(", "fixed_string": True, "limit": 5})
                print(f"grep {1000 * (time.perf_counter() - t):.1f} ms, answered at {time.perf_counter() - t0:.2f} s, error={res.is_error}")
                t = time.perf_counter()
                res = await s.call_tool("find_definitions", {"symbol": "task_struct"})
                print(f"first find_definitions {time.perf_counter() - t:.2f} s (waits for the table cache), "
                      f"answered at {time.perf_counter() - t0:.2f} s, error={res.is_error}")
                t = time.perf_counter()
                res = await s.call_tool("find_definitions", {"symbol": "kmalloc"})
                print(f"next find_definitions {1000 * (time.perf_counter() - t):.1f} ms, error={res.is_error}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
