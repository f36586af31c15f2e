#!/usr/bin/env python3
"""Build the function-calling catalog the benchmarks import.

The source is the Berkeley Function Calling Leaderboard's data (the
bfcl-eval package): every function definition offered to the models in
its test categories.  They are written as one MCP `tools/list' result,
{"tools": [{"name", "description", "inputSchema"}, ...]}, the document an
MCP client such as mcp.el receives:

  - BFCL's Python-flavoured type names become JSON Schema's (dict ->
    object, float -> number, tuple -> array, any -> no type...);
  - names are made valid tool names (dots -> underscores) and unique
    (a definition seen again under the same name with another body gets
    a numbered suffix; an identical one is kept once).

Usage: make-catalog.py DATA-DIR OUT.json [LIMIT [TIMES]]

LIMIT (0: all) keeps the first tools; TIMES > 1 writes the catalog that
many times over, each copy's names suffixed (`_c2'...), for a catalog of
the same kind of tools TIMES as long.
"""
import glob
import json
import os
import re
import sys

TYPES = {
    "dict": "object", "HashMap": "object", "object": "object",
    "float": "number", "double": "number", "number": "number",
    "integer": "integer", "long": "integer", "int": "integer",
    "string": "string", "String": "string", "char": "string",
    "boolean": "boolean", "Boolean": "boolean", "bool": "boolean",
    "array": "array", "tuple": "array", "Array": "array", "ArrayList": "array",
    "list": "array",
}


def schema(s):
    if isinstance(s, list):
        return [schema(x) for x in s]
    if not isinstance(s, dict):
        return s
    out = {}
    for k, v in s.items():
        if k == "type" and isinstance(v, str):
            t = TYPES.get(v)
            if t:
                out[k] = t
            continue
        if k == "properties" and isinstance(v, dict):
            out[k] = {pk: schema(pv) for pk, pv in v.items()}
        elif k in ("items", "additionalProperties") and isinstance(v, dict):
            out[k] = schema(v)
        elif k in ("anyOf", "oneOf", "allOf") and isinstance(v, list):
            out[k] = [schema(x) for x in v]
        else:
            out[k] = v
    # An enum of items written on the array itself.
    if out.get("type") == "array" and "enum" in out:
        items = out.setdefault("items", {})
        if isinstance(items, dict):
            items.setdefault("enum", out.pop("enum"))
    # Enums of strings on another type (BFCL has "True"/"False" on
    # booleans and "1".."5" on integers): the values say the type.
    enum = out.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(x, str) for x in enum) \
       and out.get("type") not in (None, "string"):
        out["type"] = "string"
    # BFCL lists required properties that are not declared: JSON Schema
    # allows it, but clients reject it; keep the declared ones.
    if isinstance(out.get("required"), list):
        props = out.get("properties") if isinstance(out.get("properties"), dict) else {}
        out["required"] = [r for r in out["required"] if r in props]
        if not out["required"]:
            del out["required"]
    return out


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
                    base = re.sub(r"[^A-Za-z0-9_-]", "_", fn["name"])[:56] or "tool"
                    params = schema(fn.get("parameters") or {"type": "object", "properties": {}})
                    params["type"] = "object"
                    params.setdefault("properties", {})
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
