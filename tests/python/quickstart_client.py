"""Drives the quickstart's MCP server with the official Python MCP SDK.

Usage: quickstart_client.py SERVER_BINARY HTTP_URL

Runs the same checks over stdio (the binary started with --stdio, as the
non-admin caller `local`) and over Streamable HTTP (a server already
listening at HTTP_URL, called as the non-admin `bob-token`). Prints one line
per check and a closing `N passed, N failed` line; exits non-zero on any
failure.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

results = []


def check(name, condition, detail=""):
    results.append(bool(condition))
    print(f"{'ok  ' if condition else 'FAIL'} {name}" + (f": {detail}" if detail and not condition else ""))


def text_of(result):
    return "".join(block.text for block in result.content if getattr(block, "type", None) == "text")


async def exercise(session, transport, caller):
    await session.initialize()

    listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    check(f"{transport}: lists the three tools", set(tools) == {"add_task", "delete_task", "list_tasks"}, sorted(tools))
    listing = tools.get("list_tasks")
    check(
        f"{transport}: read tool is annotated read-only",
        listing is not None and listing.annotations is not None and listing.annotations.read_only_hint is True,
    )
    check(
        f"{transport}: destructive tool is annotated destructive",
        tools["delete_task"].annotations.destructive_hint is True,
    )
    check(f"{transport}: input schemas are objects", all(t.input_schema.get("type") == "object" for t in tools.values()))

    read = await session.call_tool("list_tasks", {})
    check(f"{transport}: read call succeeds", read.is_error is False, text_of(read))
    check(
        f"{transport}: read call has structured output",
        read.structured_content == {"result": []},
        read.structured_content,
    )

    denied = await session.call_tool("delete_task", {"id": 1})
    check(f"{transport}: denied call is an error result", denied.is_error is True)
    check(
        f"{transport}: denied call says so, safely",
        text_of(denied) == "You are not allowed to call this tool.",
        text_of(denied),
    )

    invalid = await session.call_tool("add_task", {"title": ""})
    check(f"{transport}: invalid arguments are an error result", invalid.is_error is True)
    check(f"{transport}: invalid arguments name the path", "/title" in text_of(invalid), text_of(invalid))

    smuggled = await session.call_tool("list_tasks", {"store": "mine"})
    check(f"{transport}: unexpected arguments are refused", smuggled.is_error is True, text_of(smuggled))

    pending = await session.call_tool("add_task", {"title": "water the plants"})
    check(f"{transport}: a write waits for approval", pending.is_error is True)
    request = (pending.meta or {}).get("toolwright/approvalRequired", {})
    check(
        f"{transport}: the approval request names tool, arguments and digest",
        request.get("key") == "tasks.add"
        and request.get("arguments") == {"title": "water the plants"}
        and len(request.get("digest", "")) == 64,
        json.dumps(pending.meta),
    )
    check(
        f"{transport}: the request is recorded for the caller, with an id to decide it by",
        isinstance(request.get("id"), int) and request.get("requested_by") == caller,
        json.dumps(pending.meta),
    )
    again = await session.call_tool("add_task", {"title": "water the plants"})
    check(
        f"{transport}: asking again finds the same request",
        request.get("id") is not None
        and (again.meta or {}).get("toolwright/approvalRequired", {}).get("id") == request.get("id"),
        json.dumps(again.meta),
    )
    check(
        f"{transport}: structured content is only ever the tool's output",
        pending.structured_content is None,
        json.dumps(pending.structured_content),
    )


async def over_stdio(binary):
    params = StdioServerParameters(command=binary, args=["--stdio"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, "stdio", "local")


async def over_http(url):
    client = create_mcp_http_client(headers={"Authorization": "Bearer bob-token"})
    async with client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, "http", "bob")


async def main():
    binary, url = sys.argv[1], sys.argv[2]
    await over_stdio(binary)
    await over_http(url)
    passed = sum(results)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
