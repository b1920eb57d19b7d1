"""Send initialize + tools/list to a stdio MCP server; print its tools as a JSON array."""
import json, subprocess, sys, time, select

cmd = sys.argv[1:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

def send(msg):
    p.stdin.write(json.dumps(msg) + "\n"); p.stdin.flush()

def recv(want_id):
    while True:
        line = p.stdout.readline()
        if not line:
            raise SystemExit("server closed")
        msg = json.loads(line)
        if msg.get("id") == want_id and ("result" in msg or "error" in msg):
            return msg
        if "method" in msg and "id" in msg:  # a request from the server (roots/list...)
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"roots": []} if msg["method"] == "roots/list" else {}})

send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18",
    "capabilities": {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}, "url": {}},
                     "tasks": {"requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}}},
    "clientInfo": {"name": "toolwright-bench-capture", "version": "0"}}})
recv(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
time.sleep(1.5)
tools, cursor, n = [], None, 2
while True:
    params = {"cursor": cursor} if cursor else {}
    send({"jsonrpc": "2.0", "id": n, "method": "tools/list", "params": params})
    r = recv(n)["result"]; n += 1
    tools += r["tools"]
    cursor = r.get("nextCursor")
    if not cursor:
        break
p.kill()
out = [{k: t[k] for k in ("name", "title", "description", "inputSchema") if k in t} for t in tools]
print(json.dumps(out, indent=2, ensure_ascii=False))
