"""Hears `notifications/tools/list_changed` with the official Python MCP SDK.

Usage: list_changed_client.py HTTP_URL

Connects over Streamable HTTP (with a session), lists the tools and prints
`listed: NAMES`, then waits (at most 30 s) for the server to say that the
tool list changed. When it does, prints `notified`, lists again and prints
`relisted: NAMES` and `notifications: N`; otherwise prints `no notification`
and exits non-zero. The test that runs it changes the registry once it has
read the `listed` line.
"""

import asyncio
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

TOOL_LIST_CHANGED = "notifications/tools/list_changed"


def say(line):
    print(line, flush=True)


async def main(url):
    heard = []
    changed = asyncio.Event()

    async def on_message(message):
        if getattr(message, "method", None) == TOOL_LIST_CHANGED:
            heard.append(message)
            changed.set()

    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            initialized = await session.initialize()
            tools = initialized.capabilities.tools
            say(f"capability listChanged: {tools.list_changed if tools else None}")
            listed = await session.list_tools()
            say("listed: " + ",".join(tool.name for tool in listed.tools))
            try:
                await asyncio.wait_for(changed.wait(), timeout=30)
            except TimeoutError:
                say("no notification")
                return 1
            say("notified")
            relisted = await session.list_tools()
            say("relisted: " + ",".join(tool.name for tool in relisted.tools))
            say(f"notifications: {len(heard)}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
