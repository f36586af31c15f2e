#!/usr/bin/env python3
"""Build the function-calling catalog the benchmarks import.

The source is the Berkeley Function Calling Leaderboard's data (the
bfcl-eval package): every function definition offered to the models in
its test categories.  They are written as one MCP `tools/list' result,
{"tools": [{"name", "description", "inputSchema"}, ...]}, the document an
MCP client such as mcp.el receives, each definition's `parameters' as
its `inputSchema' exactly as BFCL has it: Python- and Java-flavoured type
names (`dict', `float', `any', `ArrayList', ""), names that providers
refuse (`math.sum'), `required' naming undeclared properties.  Readers
meet such files in the wild; an earlier version of this script cleaned
them first, which hid what toolspec did with them.

Names are made unique, not valid: a definition seen again under the same
name with another body gets a numbered suffix (`math.sum_1'); an
identical one is kept once.

Usage: make-catalog.py DATA-DIR OUT.json [LIMIT [TIMES]]

LIMIT (0: all) keeps the first tools; TIMES > 1 writes the catalog that
many times over, each copy's names suffixed (`_c2'...), for a catalog of
the same kind of tools TIMES as long.
"""
import glob
import json
import os
import sys


def main():
    data, dest = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    times = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    seen = {}
    tools = []
    for path in sorted(glob.glob(os.path.join(data, "BFCL_v*_*.json"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                for fn in entry.get("function") or []:
                    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                        continue
                    base = fn["name"]
                    params = fn.get("parameters")
                    if params is None:
                        params = {"type": "object", "properties": {}}
                    body = json.dumps([fn.get("description", ""), params], sort_keys=True)
                    bodies = seen.setdefault(base, {})
                    if body in bodies:
                        continue
                    n = len(bodies)
                    bodies[body] = n
                    tools.append({
                        "name": base if n == 0 else f"{base}_{n}",
                        "description": fn.get("description") or "",
                        "inputSchema": params,
                    })
    if limit:
        tools = tools[:limit]
    copies = list(tools)
    for n in range(2, times + 1):
        copies += [dict(t, name=f"{t['name'][:56]}_c{n}") for t in tools]
    tools = copies
    with open(dest, "w", encoding="utf-8") as f:
        json.dump({"tools": tools}, f, ensure_ascii=False)
    print(f"{dest}: {len(tools)} tools, {os.path.getsize(dest)} bytes")


if __name__ == "__main__":
    main()
