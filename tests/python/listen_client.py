"""Hears the tool list change on a `subscriptions/listen` stream (MCP 2026-07-28),
with the official Python MCP SDK: the protocol era without sessions, where any
replica behind a load balancer can answer.

Usage: listen_client.py HTTP_URL [BEARER_TOKEN]

Lists the tools and prints `listed: NAMES` and `version: V` (the negotiated
protocol version), opens a listen stream for tool list changes and prints
`listening`, then waits (at most 30 s) for an event. When one arrives, prints
`notified`, lists again and prints `relisted: NAMES`; otherwise prints
`no notification` and exits non-zero. The test that runs it changes the
tools once it has read the `listening` line.
"""

import asyncio
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def say(line):
    print(line, flush=True)


async def main(url, token):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    async with Client(transport, cache=None) as client:
        listed = await client.list_tools()
        say("listed: " + ",".join(tool.name for tool in listed.tools))
        say(f"version: {client.session.protocol_version}")
        async with client.listen(tools_list_changed=True) as subscription:
            say("listening")
            try:
                async with asyncio.timeout(30):
                    async for _event in subscription:
                        break
            except TimeoutError:
                say("no notification")
                return 1
        say("notified")
        relisted = await client.list_tools()
        say("relisted: " + ",".join(tool.name for tool in relisted.tools))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)))
