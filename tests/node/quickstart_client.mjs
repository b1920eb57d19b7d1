// Drives the quickstart's MCP server with the official TypeScript MCP SDK,
// the client library of most desktop hosts and editors.
//
// Usage: node quickstart_client.mjs SERVER_BINARY HTTP_URL
//
// Runs the same checks over stdio (the binary started with --stdio, as the
// non-admin caller `local`) and over Streamable HTTP (a server already
// listening at HTTP_URL, called as the non-admin `bob-token`). Prints one
// line per check and a closing `N passed, N failed` line; exits non-zero on
// any failure.
//
// `Client.callTool` checks `structuredContent` against the tool's output
// schema, error results included, and throws when it does not match: a
// call that throws here would be an error in the host too.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const results = [];

function check(name, condition, detail = "") {
  results.push(Boolean(condition));
  const shown = detail && !condition ? `: ${typeof detail === "string" ? detail : JSON.stringify(detail)}` : "";
  console.log(`${condition ? "ok  " : "FAIL"} ${name}${shown}`);
}

function textOf(result) {
  return result.content.filter((block) => block.type === "text").map((block) => block.text).join("");
}

// A call the SDK refuses (it throws) is a failed check, not a crash.
async function call(client, transport, name, args) {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (error) {
    check(`${transport}: the SDK accepts the result of ${name}`, false, error.message);
    return { content: [], isError: undefined, thrown: true };
  }
}

async function exercise(transport, connection, caller) {
  const client = new Client({ name: "toolwright-tests", version: "1.0.0" });
  await client.connect(connection);

  const listed = await client.listTools();
  const tools = Object.fromEntries(listed.tools.map((tool) => [tool.name, tool]));
  const names = Object.keys(tools).sort();
  check(`${transport}: lists the three tools`, names.join() === "add_task,delete_task,list_tasks", names);
  check(`${transport}: read tool is annotated read-only`, tools.list_tasks?.annotations?.readOnlyHint === true);
  check(
    `${transport}: destructive tool is annotated destructive`,
    tools.delete_task?.annotations?.destructiveHint === true,
  );
  check(
    `${transport}: every tool has an output schema`,
    listed.tools.every((tool) => tool.outputSchema?.type === "object"),
  );

  const read = await call(client, transport, "list_tasks", {});
  check(`${transport}: read call succeeds`, read.isError === false, textOf(read));
  check(
    `${transport}: read call has structured output`,
    JSON.stringify(read.structuredContent) === JSON.stringify({ result: [] }),
    read.structuredContent,
  );

  const denied = await call(client, transport, "delete_task", { id: 1 });
  check(`${transport}: denied call is an error result`, denied.isError === true);
  check(
    `${transport}: denied call says so, safely`,
    textOf(denied) === "You are not allowed to call this tool.",
    textOf(denied),
  );

  const invalid = await call(client, transport, "add_task", { title: "" });
  check(`${transport}: invalid arguments are an error result`, invalid.isError === true);
  check(`${transport}: invalid arguments name the path`, textOf(invalid).includes("/title"), textOf(invalid));

  const smuggled = await call(client, transport, "list_tasks", { store: "mine" });
  check(`${transport}: unexpected arguments are refused`, smuggled.isError === true, textOf(smuggled));

  const pending = await call(client, transport, "add_task", { title: "water the plants" });
  check(`${transport}: a write waits for approval`, pending.isError === true, textOf(pending));
  const request = pending._meta?.["toolwright/approvalRequired"] ?? {};
  check(
    `${transport}: the approval request names tool, arguments and digest`,
    request.key === "tasks.add" &&
      JSON.stringify(request.arguments) === JSON.stringify({ title: "water the plants" }) &&
      request.digest?.length === 64,
    pending._meta,
  );
  check(
    `${transport}: the request is recorded for the caller, with an id to decide it by`,
    Number.isInteger(request.id) && request.requested_by === caller,
    pending._meta,
  );
  const again = await call(client, transport, "add_task", { title: "water the plants" });
  check(
    `${transport}: asking again finds the same request`,
    request.id !== undefined && again._meta?.["toolwright/approvalRequired"]?.id === request.id,
    again._meta,
  );

  await client.close();
}

const [binary, url] = process.argv.slice(2);
await exercise("stdio", new StdioClientTransport({ command: binary, args: ["--stdio"] }), "local");
await exercise(
  "http",
  new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: "Bearer bob-token" } },
  }),
  "bob",
);
const passed = results.filter(Boolean).length;
const failed = results.length - passed;
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
