"""Drives the gateway example with the official Python MCP SDK.

Usage: gateway_client.py HTTP_URL FILE

Lists the gateway's own tools and `search_tools` (the upstreams' are
deferred), searches, lists the qualified tools it found of two upstreams,
calls a tool of each upstream, then asks to write FILE: the write
waits for approval, so this prints `pending` and waits for a line on
stdin saying it was approved, calls again (it runs), and once more (it
waits again: one approval, one write). Prints one line per check and a
closing `N passed, N failed` line; exits non-zero on any failure.
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


async def main(url, path):
    async with streamable_http_client(url) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            first = {tool.name for tool in (await session.list_tools()).tools}
            check("lists its own tools and search_tools first", first == {"add_note", "list_notes", "search_tools"}, sorted(first))
            for query in ("echo a message back", "read a text file", "write a file", "list a directory"):
                await session.call_tool("search_tools", {"query": query})
            names = {tool.name for tool in (await session.list_tools()).tools}
            wanted = {"everything_echo", "files_read_text_file", "files_write_file", "add_note"}
            check("finds and lists qualified tools of both upstreams", wanted <= names, sorted(names))

            echoed = await session.call_tool("everything_echo", {"message": "hi"})
            check("calls server-everything", text_of(echoed) == "Echo: hi", text_of(echoed))
            listed = await session.call_tool("files_list_directory", {"path": path.rsplit("/", 1)[0]})
            check("calls server-filesystem", listed.is_error is False and "[FILE]" in text_of(listed), text_of(listed))

            arguments = {"path": path, "content": "from python"}
            asked = await session.call_tool("files_write_file", arguments)
            waits = asked.is_error is True and "approval" in text_of(asked)
            check("a write waits for approval", waits, text_of(asked))
            if not waits:
                return
            print("pending", flush=True)
            sys.stdin.readline()
            wrote = await session.call_tool("files_write_file", arguments)
            check("once approved, it runs", wrote.is_error is False, text_of(wrote))
            again = await session.call_tool("files_write_file", arguments)
            check("and runs only once", again.is_error is True and "approv" in text_of(again), text_of(again))


asyncio.run(main(sys.argv[1], sys.argv[2]))
failed = results.count(False)
print(f"{len(results) - failed} passed, {failed} failed", flush=True)
sys.exit(1 if failed else 0)
