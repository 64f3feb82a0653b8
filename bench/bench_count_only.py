"""Time grep's count_only through the MCP SDK: python3 bench/bench_count_only.py SERVER INDEX PATTERN...

Starts `SERVER serve --index INDEX`, warms it with one call, then for each pattern times three
count_only calls (the 2nd and 3rd append `(?:)` so the server's count cache does not answer) and
prints the first line of the answer and the best time. Compare with `rg -c PATTERN` on the checkout.
"""
import asyncio
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(server, index, pats):
    params = StdioServerParameters(command=server, args=["serve", "--index", index])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            await s.call_tool("grep", {"pattern": "zzqq", "count_only": True})
            for p in pats:
                ts = []
                for i in range(3):
                    t = time.time()
                    res = await s.call_tool("grep", {"pattern": p + "(?:)" * i, "count_only": True})
                    ts.append(time.time() - t)
                print(repr(p), res.content[0].text.splitlines()[0], "best %.2fs" % min(ts))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
