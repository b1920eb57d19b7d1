"""Deferred tools over MCP, checked with the official Python MCP SDK.

Usage: search_client.py HTTP_URL

Opens two sessions. Each lists the tools that are not deferred and
`search_tools`; the first searches, hears that its list changed, and
lists the tool it found; the second hears nothing and still lists
without it, yet may call it: deferral is no permission. Prints one line
per check and a closing `N passed, N failed` line; exits non-zero on any
failure.
"""

import asyncio
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

results = []


def check(name, condition, detail=""):
    results.append(bool(condition))
    print(f"{'ok  ' if condition else 'FAIL'} {name}" + (f": {detail}" if detail and not condition else ""), flush=True)


def text_of(result):
    return "".join(block.text for block in result.content if getattr(block, "type", None) == "text")


class Heard:
    """The tool list changes a session was told of."""

    def __init__(self):
        self.changed = asyncio.Event()

    async def __call__(self, message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.changed.set()


async def names(session):
    return sorted(tool.name for tool in (await session.list_tools()).tools)


async def main(url):
    heard_a, heard_b = Heard(), Heard()
    async with streamable_http_client(url) as (read_a, write_a, *_), streamable_http_client(url) as (read_b, write_b, *_):
        async with ClientSession(read_a, write_a, message_handler=heard_a) as a, ClientSession(
            read_b, write_b, message_handler=heard_b
        ) as b:
            await a.initialize()
            await b.initialize()
            first = await names(a)
            check("the first list has the tools not deferred, and search_tools", first == ["list_orders", "search_tools"], first)

            found = await a.call_tool("search_tools", {"query": "will I need an umbrella in Oslo"})
            tools = (found.structured_content or {}).get("tools", [])
            check("a search finds the deferred tool", [t["name"] for t in tools][:1] == ["forecast"], text_of(found))
            check("with its input schema", tools and "city" in tools[0]["inputSchema"].get("properties", {}), tools)

            try:
                await asyncio.wait_for(heard_a.changed.wait(), 10)
                check("the searching session hears its list changed", True)
            except asyncio.TimeoutError:
                check("the searching session hears its list changed", False, "no notification")
            after = await names(a)
            check("and lists the tool it found", after == ["forecast", "list_orders", "search_tools"], after)
            called = await a.call_tool("forecast", {"city": "Oslo"})
            check("and calls it", called.is_error is False and "Oslo" in text_of(called), text_of(called))

            await asyncio.sleep(0.5)
            check("another session hears nothing", not heard_b.changed.is_set())
            other = await names(b)
            check("and lists without it", other == ["list_orders", "search_tools"], other)
            direct = await b.call_tool("forecast", {"city": "Bergen"})
            check("yet may call it: deferral is no permission", direct.is_error is False and "Bergen" in text_of(direct), text_of(direct))


asyncio.run(main(sys.argv[1]))
failed = results.count(False)
print(f"{len(results) - failed} passed, {failed} failed", flush=True)
sys.exit(1 if failed else 0)
