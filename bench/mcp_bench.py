#!/usr/bin/env python3
"""MCP servers and a client for the mcp-serve and mcp-client cases of bench/bench.el.

Run with the Python of the provider venv (it has the MCP SDK, `mcp'):

  mcp_bench.py sdk-server
      The Python MCP SDK's server (MCPServer) on stdio with one trivial
      tool, echo(text) -> text.
  mcp_bench.py catalog-server FILE N
      A standard-library MCP server on stdio listing the first N tools of
      FILE, an MCP tools/list result, in one page (so that the time is the
      client's, not the server's); it answers `initialize', `tools/list'
      and `ping', and refuses `server/discover' as a handshake-era server.
  mcp_bench.py client ROUNDS CALLS LEAK NAME=COMMAND-JSON...
      The Python MCP SDK's client, connected on stdio to each server (its
      command a JSON array).  For each of ROUNDS rounds and each server in
      turn it prints "ready NAME", waits for a line on stdin, makes CALLS
      calls of echo and prints "time NAME SECONDS-PER-CALL".  Then, if
      LEAK > 0, it prints "mark before", waits for a line, makes LEAK calls
      of the first server's echo, prints "mark after", waits for a line
      and exits.  The driver uses the waits to alternate with its own
      work, or to measure its memory at the marks.  With
      TOOLSPEC_BENCH_MCP_ERA=modern in the environment it speaks the
      stateless revision (`server/discover'), else the handshake one.
"""
import asyncio
import json
import os
import sys
import time


def sdk_server():
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")

    @server.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    server.run()


def catalog_server(path, n):
    with open(path, encoding="utf-8") as f:
        tools = json.load(f)["tools"][:n]
    out = sys.stdout
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method = msg.get("method")
        if method == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"],
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "bench-catalog", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "ping":
            result = {}
        else:
            out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                  "error": {"code": -32601, "message": f"Method not found: {method}"}}) + "\n")
            out.flush()
            continue
        out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        out.flush()


def wait_go():
    if not sys.stdin.readline():
        sys.exit(0)


async def client(rounds, calls, leak, servers):
    from contextlib import AsyncExitStack
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async with AsyncExitStack() as stack:
        sessions = []
        for name, command in servers:
            params = StdioServerParameters(command=command[0], args=command[1:])
            read, write = await stack.enter_async_context(stdio_client(params))
            s = await stack.enter_async_context(ClientSession(read, write))
            if os.environ.get("TOOLSPEC_BENCH_MCP_ERA") == "modern":
                await s.discover()
            else:
                await s.initialize()
            r = await s.call_tool("echo", {"text": "warm"})
            if r.is_error or r.content[0].text != "warm":
                print(f"error {name} echo answered {r.content!r}", flush=True)
                sys.exit(1)
            sessions.append((name, s))
        for _ in range(rounds):
            for name, s in sessions:
                print(f"ready {name}", flush=True)
                wait_go()
                t0 = time.perf_counter()
                for i in range(calls):
                    r = await s.call_tool("echo", {"text": f"hello {i}"})
                    if r.is_error:
                        print(f"error {name} {r.content!r}", flush=True)
                        sys.exit(1)
                print(f"time {name} {(time.perf_counter() - t0) / calls!r}", flush=True)
        if leak > 0:
            name, s = sessions[0]
            print("mark before", flush=True)
            wait_go()
            for i in range(leak):
                r = await s.call_tool("echo", {"text": f"leak {i}"})
                if r.is_error:
                    print(f"error {name} {r.content!r}", flush=True)
                    sys.exit(1)
            print("mark after", flush=True)
            wait_go()


def main():
    mode = sys.argv[1]
    if mode == "sdk-server":
        sdk_server()
    elif mode == "catalog-server":
        catalog_server(sys.argv[2], int(sys.argv[3]))
    elif mode == "client":
        rounds, calls, leak = (int(x) for x in sys.argv[2:5])
        servers = []
        for spec in sys.argv[5:]:
            name, command = spec.split("=", 1)
            servers.append((name, json.loads(command)))
        asyncio.run(client(rounds, calls, leak, servers))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
