"""Answers an approval asked through `elicitation/create`, with the official
Python MCP SDK.

Usage: elicitation_client.py TARGET ANSWER TOOL ARGUMENTS_JSON

TARGET is a Streamable HTTP URL, or `stdio:BINARY` for a server started
with `BINARY --stdio`. ANSWER is `accept` or `decline` (the client declares
the elicitation capability and answers so), or `none` (the client declares
no such capability). Calls TOOL with ARGUMENTS_JSON once and prints:
- `asked: TOOL_LINE | DIGEST_LINE` when the server asked the person;
- `result: ok TEXT` or `result: error TEXT`;
- `request id: ID` when the result waits for approval (its `_meta`).
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.streamable_http import streamable_http_client

APPROVAL_REQUIRED = "toolwright/approvalRequired"


def say(line):
    print(line, flush=True)


def connect(target):
    if target.startswith("stdio:"):
        return stdio_client(StdioServerParameters(command=target[len("stdio:"):], args=["--stdio"]))
    return streamable_http_client(target)


async def main(target, answer, tool, arguments):
    async def elicit(context, params):
        lines = params.message.splitlines()
        tool = next(line for line in lines if line.startswith("tool: "))
        digest = next(line for line in lines if line.startswith("digest: "))
        say(f"asked: {tool} | {digest}")
        return types.ElicitResult(action=answer, content={"note": f"{answer}ed by the test"} if answer == "accept" else None)

    callback = None if answer == "none" else elicit
    async with connect(target) as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            await session.initialize()
            result = await session.call_tool(tool, json.loads(arguments))
            text = " ".join(block.text for block in result.content if block.type == "text")
            say(f"result: {'error' if result.is_error else 'ok'} {text}")
            meta = result.meta or {}
            if APPROVAL_REQUIRED in meta:
                say(f"request id: {meta[APPROVAL_REQUIRED].get('id')}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:5])))
