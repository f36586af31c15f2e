"""The Python MCP SDK's client against `toolspec serve` and a batch Emacs.

Run by test/mcp_serve.rs as: python serve_client.py TOOLSPEC EMACS MODULE REPO
Starts an Emacs serving gptel tools (test/mcp/serve-emacs.el), then the
SDK's stdio client starts `toolspec serve --socket ...` and, in both
protocol eras, lists the tools (compared with `toolspec-export ... 'mcp'),
calls them (sync, async, failing, bad arguments, confirmed and refused at
Emacs's real y-or-n-p) and sees a list change.  Before Emacs is up, the
same client gets zero tools and a clear error.  Prints one line per
check; exits non-zero on the first failure.
"""
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOLSPEC, EMACS, MODULE, REPO = sys.argv[1:5]


def ok(cond, what):
    if not cond:
        print(f"FAIL: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def text_of(result):
    return result.content[0].text, bool(result.is_error)


async def session(sock, work, modern=False, url=None):
    changed = asyncio.Event()

    async def handler(message):
        if isinstance(message, types.ServerNotification) and isinstance(message, types.ToolListChangedNotification):
            changed.set()
        root = getattr(message, "root", message)
        if isinstance(root, types.ToolListChangedNotification):
            changed.set()

    async def run(read, write):
        async with ClientSession(read, write, message_handler=handler) as s:
            if modern:
                result = await s.discover()
                ok("2026-07-28" in result.supported_versions, "modern: server/discover offers 2026-07-28")
            else:
                await s.initialize()
            await work(s, changed)

    if url:
        async with streamable_http_client(url) as (read, write):
            await run(read, write)
    else:
        params = StdioServerParameters(command=TOOLSPEC, args=["serve", "--socket", sock])
        async with stdio_client(params) as (read, write):
            await run(read, write)


async def offline(sock):
    async def work(s, _changed):
        tools = await s.list_tools()
        ok(tools.tools == [], "without Emacs: the handshake succeeds with zero tools")
        text, err = text_of(await s.call_tool("add", {"a": 1, "b": 2}))
        ok(err and "Emacs is not serving tools on" in text and "toolspec-mcp-server-mode" in text,
           f"without Emacs: a call says why ({text[:60]}...)")
    await session(sock, work)


def main():
    tmp = tempfile.mkdtemp(prefix="toolspec-serve-test")
    sock = os.path.join(tmp, "sock", "mcp.sock")
    asyncio.run(offline(sock))

    env = dict(os.environ, TOOLSPEC_TEST_OUT=tmp)
    emacs = subprocess.Popen(
        [EMACS, "--batch", "-Q", "-L", os.path.join(REPO, "lisp"), "-L", os.path.join(REPO, ".deps/gptel")]
        + (["-l", "compat"] if os.environ.get("TOOLSPEC_EMACS_PRELOAD_COMPAT") else [])
        + ["--eval", f'(setq toolspec-module-file "{MODULE}" toolspec-mcp-server-socket "{sock}")',
           "-l", os.path.join(REPO, "test/mcp/serve-emacs.el")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    stderr = []

    # What Emacs prints, standard output (where batch Emacs asks its
    # questions) and error (messages) alike.
    def drain(stream):
        # Chunks, not lines: a question ends without a newline.
        for chunk in iter(lambda: stream.read1(4096), b""):
            stderr.append(chunk.decode("utf-8", "replace"))
    threading.Thread(target=drain, args=(emacs.stderr,), daemon=True).start()
    threading.Thread(target=drain, args=(emacs.stdout,), daemon=True).start()
    try:
        deadline = time.time() + 30
        while "READY" not in "".join(stderr):
            if emacs.poll() is not None or time.time() > deadline:
                print("".join(stderr))
                ok(False, "Emacs started the server")
            time.sleep(0.05)
        ok(oct(os.stat(os.path.dirname(sock)).st_mode & 0o777) == "0o700", "the socket's directory is mode 700")
        exported = json.load(open(os.path.join(tmp, "export-plists.json")))["tools"]
        plain = {t["name"]: t for t in json.load(open(os.path.join(tmp, "export-gptel.json")))["tools"]}

        def answer(key):
            emacs.stdin.write(key.encode() + b"\n")
            emacs.stdin.flush()

        async def work_for(era):
            async def work(s, changed):
                listed = (await s.list_tools()).tools
                names = [t.name for t in listed]
                ok(names == [t["name"] for t in exported], f"{era}: tools/list names {names}")
                ok("private" not in names, f"{era}: a tool not named is not exposed")
                for t, e in zip(listed, exported):
                    wire = t.model_dump(by_alias=True, exclude_none=True, mode="json")
                    ok(compact(wire["inputSchema"]) == compact(e["inputSchema"]) == compact(plain[t.name]["inputSchema"]),
                       f"{era}: {t.name}: inputSchema byte-identical to toolspec-export 'mcp")
                    ok(wire.get("description") == e["description"], f"{era}: {t.name}: description")
                    for key in ("title", "annotations"):
                        if key in e:
                            ok({k: v for k, v in wire[key].items()} == e[key] if key == "annotations" else wire[key] == e[key],
                               f"{era}: {t.name}: {key} {e[key]}")
                ok(text_of(await s.call_tool("add", {"a": 2, "b": 40})) == ("42", False), f"{era}: sync call")
                ok(text_of(await s.call_tool("shout", {"word": "ho", "opts": {"times": 2, "bang": True}}))
                   == ("HO HO!", False), f"{era}: async call with a nested object")
                text, err = text_of(await s.call_tool("fail", {"why": "testing"}))
                ok(err and "Failed because testing" in text, f"{era}: a failing tool is an isError result: {text}")
                text, err = text_of(await s.call_tool("shout", {"word": "(shell-command \"touch x\")"}))
                ok(err and text.startswith("Error: invalid arguments for tool shout: word:"),
                   f"{era}: bad arguments are refused before any elisp runs: {text[:70]}")
                before = "".join(stderr).count("Run it?")
                answer("y")
                ok(text_of(await s.call_tool("erase", {"note": "n1"})) == ("erased n1", False),
                   f"{era}: a :confirm tool runs when the user answers y")
                answer("n")
                text, err = text_of(await s.call_tool("erase", {"note": "n2"}))
                ok(err and "declined" in text, f"{era}: a refusal reaches the client as an error: {text}")
                time.sleep(0.2)
                printed = "".join(stderr)
                ok(printed.count("Run it?") - before == 2
                   and 'asks to run tool erase with {"note":"n2"}' in printed,
                   f"{era}: Emacs asked the user twice, naming the tool and arguments")
                return changed
            return work

        async def handshake():
            async def work(s, changed):
                await (await work_for("handshake"))(s, changed)
                ok(text_of(await s.call_tool("grow", {})) == ("made", False), "handshake: a tool makes another")
                await asyncio.wait_for(changed.wait(), 10)
                ok(True, "handshake: notifications/tools/list_changed received")
                names = [t.name for t in (await s.list_tools()).tools]
                ok("grown" in names, f"handshake: the new tool is listed: {names}")
                # Emacs's server goes away and comes back: the bridge
                # answers meanwhile, reconnects and says the list changed.
                changed.clear()
                ok(text_of(await s.call_tool("bounce", {})) == ("bouncing", False), "handshake: the server bounces")
                await asyncio.sleep(0.5)
                text, err = text_of(await s.call_tool("add", {"a": 1, "b": 2}))
                ok(err and "Emacs is not serving tools on" in text, f"handshake: while Emacs is away: {text[:50]}...")
                await asyncio.wait_for(changed.wait(), 10)
                ok(text_of(await s.call_tool("add", {"a": 1, "b": 2})) == ("3", False),
                   "handshake: reconnected, told the list changed, calls work again")
                names = [t.name for t in (await s.list_tools()).tools]
                exported[:] = [{"name": n} for n in names]
            await session(sock, work)

        async def modern():
            async def work(s, changed):
                listed = (await s.list_tools()).tools
                ok([t.name for t in listed][0] == "grown", "modern: tools/list")
                ok(text_of(await s.call_tool("add", {"a": 1, "b": 1})) == ("2", False), "modern: sync call")
                text, err = text_of(await s.call_tool("add", {"a": 1}))
                ok(err and "b" in text, f"modern: a missing argument: {text[:70]}")
            await session(sock, work, modern=True)

        asyncio.run(handshake())
        asyncio.run(modern())

        # Streamable HTTP on loopback, both eras.
        http = subprocess.Popen([TOOLSPEC, "serve", "--socket", sock, "--http", "127.0.0.1:0"],
                                stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
        try:
            first = http.stderr.readline().decode()
            ok("MCP at http://127.0.0.1:" in first, f"toolspec serve --http says where: {first.strip()}")
            url = first.split("MCP at ")[1].split(",")[0]

            async def over_http(modern):
                era = "http modern" if modern else "http handshake"
                async def work(s, _changed):
                    names = [t.name for t in (await s.list_tools()).tools]
                    ok("add" in names and "private" not in names, f"{era}: tools/list")
                    ok(text_of(await s.call_tool("shout", {"word": "hi"})) == ("HI", False), f"{era}: async call")
                    answer("n")
                    text, err = text_of(await s.call_tool("erase", {"note": "n3"}))
                    ok(err and "declined" in text, f"{era}: refused")
                await session(sock, work, modern=modern, url=url)
            asyncio.run(over_http(False))
            asyncio.run(over_http(True))
        finally:
            http.kill()
            http.wait()
        print("all checks passed")
    finally:
        emacs.kill()
        emacs.wait()


main()
