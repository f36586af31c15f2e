#!/usr/bin/env python3
"""A small MCP server on stdio for toolspec-mcp's tests (standard library only).

Usage: mcp-test-server.py [--ask] LOG [PROTOCOL]

Every message it receives is appended to LOG, one JSON line each, so a
test can tell what reached the server.  It answers `initialize' with
PROTOCOL (default: the version the client asked for), lists its tools
two per page, and has these tools:

  add(a, b)        a + b, as text and as structuredContent {"sum": ...}
  grow()           adds the tool `extra' and sends tools/list_changed
  extra()          "extra ran" (listed only after grow)
  fail()           a result with isError
  big(n)           a text of n characters
  sleep()          never answers (for timeouts and cancellation)
  crash()          exits at once with status 3
  mixed()          an image, an audio clip, a resource link and
                   embedded text and blob resources
  badshape()       structuredContent that does not match its outputSchema
  ask(schema)      (listed with --ask only) sends elicitation/create with the message "Tell me
                   about you" and SCHEMA (a JSON text) as requestedSchema,
                   and answers with the client's answer as JSON text:
                   {"capabilities": the client's elicitation capability,
                    "result": ..., "error": ...}
"""
import json
import sys

argv = [a for a in sys.argv[1:] if a != "--ask"]
log_path = argv[0]
protocol = argv[1] if len(argv) > 1 else None

OBJ = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "add", "description": "Add two numbers",
     "inputSchema": {"type": "object",
                     "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                     "required": ["a", "b"]},
     "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}},
                      "required": ["sum"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "grow", "description": "Add a tool", "inputSchema": OBJ},
    {"name": "fail", "description": "Fail", "inputSchema": OBJ},
    {"name": "big", "description": "A long text",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}},
                     "required": ["n"]}},
    {"name": "sleep", "description": "Never answer", "inputSchema": OBJ},
    {"name": "crash", "description": "Exit", "inputSchema": OBJ},
    {"name": "mixed", "description": "Media and resources", "inputSchema": OBJ,
     "annotations": {"readOnlyHint": True, "destructiveHint": True}},
    {"name": "badshape", "description": "Wrong structured content", "inputSchema": OBJ,
     "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}},
                      "required": ["sum"]}},
]
ASK = {"name": "ask", "description": "Ask the user",
              "inputSchema": {"type": "object",
                              "properties": {"schema": {"type": "string"}},
                              "required": ["schema"]}}
if "--ask" in sys.argv[1:]:
    TOOLS.append(ASK)
EXTRA = {"name": "extra", "description": "Added by grow", "inputSchema": OBJ}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(t):
    return {"content": [{"type": "text", "text": t}]}


def call(name, args):
    if name == "add":
        s = args["a"] + args["b"]
        return {"content": [{"type": "text", "text": json.dumps({"sum": s})}],
                "structuredContent": {"sum": s}}
    if name == "grow":
        if EXTRA not in TOOLS:
            TOOLS.append(EXTRA)
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return text("grown")
    if name == "extra":
        return text("extra ran")
    if name == "fail":
        return {"content": [{"type": "text", "text": "the disk is full"}], "isError": True}
    if name == "big":
        return text("x" * args["n"])
    if name == "crash":
        sys.exit(3)
    if name == "mixed":
        return {"content": [
            {"type": "image", "mimeType": "image/png", "data": "AAAA" * 256},
            {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"},
            {"type": "resource_link", "uri": "file:///tmp/a.txt", "name": "a.txt",
             "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "mem://note", "mimeType": "text/plain",
                                              "text": "embedded note"}},
            {"type": "resource", "resource": {"uri": "mem://blob",
                                              "mimeType": "application/octet-stream",
                                              "blob": "AAAAAAAA"}}]}
    if name == "badshape":
        return {"content": [], "structuredContent": {"total": "seven"}}
    return None


client_capabilities = {}
asking = {}

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    with open(log_path, "a") as log:
        log.write(line + "\n")
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method is None:
        if mid in asking:
            send({"jsonrpc": "2.0", "id": asking.pop(mid), "result": text(json.dumps({
                "capabilities": client_capabilities.get("elicitation"),
                "result": msg.get("result"), "error": msg.get("error")}))})
        continue
    params = msg.get("params") or {}
    if method == "tools/call" and params.get("name") == "ask":
        asking["elicit-%s" % mid] = mid
        send({"jsonrpc": "2.0", "id": "elicit-%s" % mid, "method": "elicitation/create",
              "params": {"message": "Tell me about you",
                         "requestedSchema": json.loads(params["arguments"]["schema"])}})
        continue
    if method == "initialize":
        client_capabilities = params.get("capabilities") or {}
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": protocol or params.get("protocolVersion"),
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "toolspec-test-server", "version": "1"}}})
    elif method == "tools/list":
        start = int(params.get("cursor") or 0)
        page = {"tools": TOOLS[start:start + 2]}
        if start + 2 < len(TOOLS):
            page["nextCursor"] = str(start + 2)
        send({"jsonrpc": "2.0", "id": mid, "result": page})
    elif method == "tools/call":
        if params.get("name") == "sleep":
            continue
        result = call(params.get("name"), params.get("arguments") or {})
        if result is None:
            send({"jsonrpc": "2.0", "id": mid,
                  "error": {"code": -32602, "message": "Unknown tool"}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "result": result})
    else:
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32601, "message": "Method not found"}})
