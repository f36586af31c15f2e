#!/usr/bin/env python3
"""Start one MCP server on stdio and save its tools/list result as it is.

Usage: list_tools.py OUT.json [--env NAME=VALUE]... -- COMMAND [ARG]...

Speaks newline-delimited JSON-RPC 2.0 (the MCP stdio transport):
initialize, notifications/initialized, then tools/list, following
nextCursor until the last page.  OUT.json gets {"tools": [...]}: the
tools of every page in the order the server sent them, each exactly as
the server wrote it (key order kept, nothing added, dropped or
normalised).  The server's stderr is kept in OUT.json.stderr.

Exits non-zero, saying why, when the server does not start, answers
with an error, sends something that is not JSON-RPC, lists no tools or
takes more than the time limit: a server that cannot be listed is a
failure of the setup, never skipped.
"""

import json
import os
import select
import subprocess
import sys
import time

PROTOCOL = "2025-11-25"
TIMEOUT = float(os.environ.get("LIST_TOOLS_TIMEOUT", "60"))
MAX_PAGES = 100


def fail(msg):
    print(f"list_tools: {msg}", file=sys.stderr)
    sys.exit(1)


class Server:
    def __init__(self, argv, env, stderr):
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr, env=env, start_new_session=True)
        self.buf = b""
        self.deadline = time.monotonic() + TIMEOUT
        self.next_id = 1

    def send(self, obj):
        self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
        self.proc.stdin.flush()

    def read_line(self):
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = self.deadline - time.monotonic()
            if left <= 0:
                fail(f"no answer within {TIMEOUT:.0f} s")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                fail(f"the server closed its output (exit status {self.proc.poll()})")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.read_line().strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                fail(f"not JSON on stdout: {line[:200]!r}")
            if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
                fail(f"not a JSON-RPC 2.0 message: {line[:200]!r}")
            if "id" in msg and "method" in msg:
                # A request from the server (roots/list, ping...): answer
                # that this client has no such method.
                self.send({"jsonrpc": "2.0", "id": msg["id"],
                           "error": {"code": -32601, "message": "Method not found"}})
                continue
            if msg.get("id") != rid:
                continue  # a notification (logging, list_changed)
            if "error" in msg:
                fail(f"{method} answered with an error: {json.dumps(msg['error'])}")
            if not isinstance(msg.get("result"), dict):
                fail(f"{method} answered without a result object: {line[:200]!r}")
            return msg["result"]

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main():
    args = sys.argv[1:]
    if len(args) < 3 or "--" not in args:
        fail(__doc__.splitlines()[2])
    out = args[0]
    sep = args.index("--")
    env = dict(os.environ)
    opts = args[1:sep]
    while opts:
        if opts[0] != "--env" or len(opts) < 2 or "=" not in opts[1]:
            fail(f"bad option {opts[0]!r}")
        k, v = opts[1].split("=", 1)
        env[k] = v
        opts = opts[2:]
    argv = args[sep + 1:]
    with open(out + ".stderr", "wb") as err:
        server = Server(argv, env, err)
        try:
            init = server.request("initialize", {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "toolspec-corpus", "version": "1"},
            })
            server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            tools = []
            cursor = None
            for _ in range(MAX_PAGES):
                params = {} if cursor is None else {"cursor": cursor}
                page = server.request("tools/list", params)
                if not isinstance(page.get("tools"), list):
                    fail("tools/list result has no tools array")
                tools.extend(page["tools"])
                cursor = page.get("nextCursor")
                if not cursor:
                    break
            else:
                fail(f"more than {MAX_PAGES} pages")
        finally:
            server.close()
    if not tools:
        fail("the server listed no tools")
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        json.dump({"tools": tools}, f, ensure_ascii=False, indent=2)
        f.write("\n")
    os.replace(out + ".tmp", out)
    info = init.get("serverInfo", {})
    print(f"{os.path.basename(out)}: {len(tools)} tools "
          f"({info.get('name', '?')} {info.get('version', '?')}, protocol {init.get('protocolVersion')})")


if __name__ == "__main__":
    main()
