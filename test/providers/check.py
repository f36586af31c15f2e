#!/usr/bin/env python3
"""Are the tools toolspec writes accepted by each provider's own validator?

Usage:
  check.py writers --toolspec PROGRAM --corpus DIR [--report FILE] SOURCE...
      Every tool of every corpus file (DIR/SERVER.json, a real MCP
      server's tools/list) and of every SOURCE (the repo's fixtures) is
      converted with `PROGRAM convert --to DIALECT' into each dialect,
      and each tool written goes through its provider's validators
      (validators.py).  Every MCP source is also converted MCP -> MCP,
      which must give back each tool as it was: every key, in its order.
  check.py gptel --dumps DIR [--report FILE] [SOURCE...]
      The JSON real gptel's `gptel--parse-tools' made for its OpenAI
      (chat completions), OpenAI Responses, Anthropic and Gemini backends from the tools toolspec registered
      (test/providers/gptel-dump.el): DIR/SOURCE.BACKEND.json, and
      DIR/SOURCE.error where importing SOURCE failed.

Prints a table per dialect (tools, accepted, refused), the refusals
counted by validator and class, then each refusal with its source, tool
and the validator's message.  Its last line is "providers (MODE): N
passed, M failed", one test per dialect; exits 1 on any refusal.
"""

import argparse
import collections
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validators  # noqa: E402

DIALECTS = ["openai", "openai-responses", "openai-strict", "anthropic", "gemini",
            "ollama", "bedrock", "mcp", "json-schema"]
GPTEL_BACKENDS = ["openai", "openai-responses", "anthropic", "gemini"]
IDENTITY = "mcp->mcp identity"


class Results:
    def __init__(self):
        self.tools = collections.Counter()
        self.refused_tools = collections.Counter()
        self.refusals = []  # (dialect, source, tool, validator, class, message, serial)
        self.order = []
        self.serial = 0

    def add(self, dialect, source, tool, refusals):
        if dialect not in self.order:
            self.order.append(dialect)
        self.tools[dialect] += 1
        self.serial += 1
        if refusals:
            self.refused_tools[dialect] += 1
        for v, cls, msg in refusals:
            self.refusals.append((dialect, source, tool, v, cls, msg, self.serial))

    def whole(self, dialect, source, validator, cls, msg, count=1):
        """A refusal of a whole source of COUNT tools: none of them could be judged."""
        self.add(dialect, source, f"(whole file: {count} tools)", [(validator, cls, msg)])
        self.tools[dialect] += count - 1
        self.refused_tools[dialect] += count - 1

    def report(self, mode, out):
        w = max([len(d) for d in self.order] + [8])
        lines = [f"{'dialect':<{w}}  {'tools':>6}  {'accepted':>8}  {'refused':>7}"]
        for d in self.order:
            lines.append(f"{d:<{w}}  {self.tools[d]:>6}  {self.tools[d] - self.refused_tools[d]:>8}  "
                         f"{self.refused_tools[d]:>7}")
        print("\n".join(lines))
        by_class = collections.Counter((d, v, c) for d, _, _, v, c, _, _ in self.refusals)
        tools_by_class = collections.defaultdict(set)
        for d, _, _, v, c, _, n in self.refusals:
            tools_by_class[(d, v, c)].add(n)
        if by_class:
            print("\nRefusals by dialect, validator and class (tools; messages):")
            for (d, v, c), n in sorted(by_class.items(), key=lambda x: (self.order.index(x[0][0]), x[0][1], -x[1])):
                print(f"  {d:<{w}}  {v:<26} {len(tools_by_class[(d, v, c)]):>5}; {n:>5}  {c}")
            print("\nEach refusal (dialect, source, tool, validator: message):")
            for d, s, t, v, c, m, _ in self.refusals:
                print(f"  REFUSED {d} {s} {t} {v}: {m}")
        if out:
            with open(out, "w", encoding="utf-8") as f:
                json.dump({
                    "dialects": {d: {"tools": self.tools[d], "refused": self.refused_tools[d]} for d in self.order},
                    "classes": [{"dialect": d, "validator": v, "class": c, "messages": n,
                                 "tools": len(tools_by_class[(d, v, c)])}
                                for (d, v, c), n in by_class.items()],
                    "refusals": [dict(zip(("dialect", "source", "tool", "validator", "class", "message"), r))
                                 for r in self.refusals],
                }, f, indent=1, ensure_ascii=False)
        failed = sum(1 for d in self.order if self.refused_tools[d])
        passed = len(self.order) - failed
        print(f"\ntools: {sum(self.tools.values())} judged, "
              f"{sum(self.tools.values()) - sum(self.refused_tools.values())} accepted, "
              f"{sum(self.refused_tools.values())} refused; {len(self.refusals)} refusals")
        print(f"providers ({mode}): {passed} passed, {failed} failed")
        return failed == 0


def ordered_diffs(a, b, path=()):
    """Each difference between A and B: keys, their order, values and types.
    Yields (kind, path, key, message)."""
    w = validators.where
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k not in b:
                yield "dropped", path, k, f"{w(path)}: {k!r} dropped"
        for k in b:
            if k not in a:
                yield "added", path, k, f"{w(path)}: {k!r} added: {json.dumps(b[k])[:100]}"
        for k in a:
            if k in b:
                yield from ordered_diffs(a[k], b[k], path + (k,))
        if [k for k in a if k in b] != [k for k in b if k in a]:
            yield "reordered", path, None, f"{w(path)}: keys {list(a)} became {list(b)}"
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from ordered_diffs(x, y, path + (i,))
    elif type(a) is not type(b) or a != b:
        yield "changed", path[:-1], path[-1] if path else None, \
            f"{w(path)}: {json.dumps(a)[:100]} became {json.dumps(b)[:100]}"


def level(path):
    """Where a difference is, for its class: tool, schema root, schema..."""
    if not path:
        return "tool"
    if path[0] in ("inputSchema", "outputSchema"):
        inner = [p for p in path[1:]]
        return f"{path[0]} root" if not inner else f"{path[0]} subschema"
    return str(path[0])


def identity_refusals(src, out, most=20):
    """The differences MCP -> toolspec -> MCP made to one tool."""
    found = []
    for kind, path, key, msg in ordered_diffs(src, out):
        if len(found) == most:
            found.append(("identity", "more differences", "(more differences not shown)"))
            break
        if kind == "changed" and len(path) >= 1 and path[-1] in ("properties", "$defs"):
            key_s = f" (a member of {path[-1]})"
            path = path[:-1]
        elif kind == "changed" and path and isinstance(path[-1], int):
            key_s = f" ({path[-2] if len(path) > 1 else ''} item)"
        else:
            key_s = f" {key!r}" if isinstance(key, str) else ""
        found.append(("identity", f"{kind}{key_s} at {level(path)}", msg))
    return found


def convert(program, path, dialect, from_format="auto"):
    # --force: a file where `check' finds errors is written anyway (and
    # exits 1), so that every tool toolspec writes is judged.
    p = subprocess.run([program, "convert", "--force", "--quiet", "--compact", "--from", from_format,
                        "--to", dialect, path],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    if p.returncode not in (0, 1) or not p.stdout.strip():
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"exit {p.returncode}: {' | '.join(err[:3])[:300]}"
    try:
        return json.loads(p.stdout), None
    except ValueError as e:
        return None, f"output is not JSON: {e}"


def tool_count(path):
    """How many tools the JSON document at PATH holds, as far as its shape says (else 1)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return 1
    if isinstance(doc, dict):
        for key in ("tools", "functionDeclarations", "functions"):
            if isinstance(doc.get(key), list):
                return max(len(doc[key]), 1)
    return max(len(doc), 1) if isinstance(doc, list) else 1


def writers(args):
    res = Results()
    sources = [(os.path.join(args.corpus, f), os.path.splitext(f)[0], True)
               for f in sorted(os.listdir(args.corpus)) if f.endswith(".json")]
    if len(sources) < 8:
        sys.exit(f"check: only {len(sources)} corpus files in {args.corpus}: run scripts/setup-providers.sh")
    for s in args.sources:
        rel = os.path.relpath(s)
        sources.append((s, s if rel.startswith("..") else rel, False))
    for path, label, is_corpus in sources:
        for dialect in DIALECTS:
            doc, err = convert(args.toolspec, path, dialect)
            if doc is None:
                res.whole(dialect, label, "toolspec convert", "conversion failed", err, tool_count(path))
                continue
            try:
                tools = validators.split(dialect, doc)
            except (KeyError, TypeError) as e:
                res.whole(dialect, label, "toolspec convert", "not the dialect's document",
                          f"the document is not {dialect}'s shape: {e!r}")
                continue
            for tool in tools:
                res.add(dialect, label, validators.name_of(dialect, tool), validators.CHECKS[dialect](tool))
        # MCP -> toolspec -> MCP: every tool as it was.
        with open(path, encoding="utf-8") as f:
            try:
                src = json.load(f)
            except ValueError:
                src = None
        if not (isinstance(src, dict) and isinstance(src.get("tools"), list)
                and all(isinstance(t, dict) and "name" in t and "inputSchema" in t for t in src["tools"])):
            continue  # not an MCP document (Bedrock's is {"tools": [{"toolSpec"...}]})
        if os.path.basename(path) in args.no_identity:
            continue
        doc, err = convert(args.toolspec, path, "mcp", "mcp")
        if doc is None:
            res.whole(IDENTITY, label, "toolspec convert", "conversion failed", err, len(src["tools"]))
            continue
        out = doc.get("tools") if isinstance(doc, dict) else None
        if not isinstance(out, list) or len(out) != len(src["tools"]):
            res.whole(IDENTITY, label, "identity", "tool count changed",
                      f"{len(src['tools'])} tools became {len(out) if isinstance(out, list) else out!r}")
            continue
        for a, b in zip(src["tools"], out):
            res.add(IDENTITY, label, a.get("name", "?") if isinstance(a, dict) else "?", identity_refusals(a, b))
    return res


def gptel(args):
    res = Results()
    counts = {os.path.splitext(os.path.basename(f))[0]: tool_count(f) for f in args.sources}
    files = sorted(os.listdir(args.dumps))
    sources = sorted({f.rsplit(".", 2)[0] for f in files if f.endswith((".json", ".error"))})
    if len(sources) < 8:
        sys.exit(f"check: only {len(sources)} sources dumped in {args.dumps}")
    for source in sources:
        err_file = os.path.join(args.dumps, source + ".error")
        for backend in GPTEL_BACKENDS:
            dialect = "gptel-" + backend
            path = os.path.join(args.dumps, f"{source}.{backend}.json")
            if os.path.exists(err_file) or not os.path.exists(path):
                msg = open(err_file, encoding="utf-8").read().strip() if os.path.exists(err_file) \
                    else "gptel made nothing"
                res.whole(dialect, source, "gptel", msg.split(":", 1)[0][:60], msg[:300],
                          counts.get(source, 1))
                continue
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            for tool in validators.split(dialect, doc):
                res.add(dialect, source, validators.name_of(dialect, tool), validators.CHECKS[dialect](tool))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    w = sub.add_parser("writers")
    w.add_argument("--toolspec", required=True)
    w.add_argument("--corpus", required=True)
    w.add_argument("--report")
    w.add_argument("--no-identity", action="append", default=[],
                   help="a source file name whose MCP round trip is not checked")
    w.add_argument("sources", nargs="*")
    g = sub.add_parser("gptel")
    g.add_argument("--dumps", required=True)
    g.add_argument("--report")
    g.add_argument("sources", nargs="*", help="the files dumped, for their tool counts")
    args = ap.parse_args()
    n = validators.self_test()
    print(f"validators: {n} self-checks passed (each judge refuses a known-bad tool, accepts a good one)\n")
    res = writers(args) if args.mode == "writers" else gptel(args)
    ok = res.report(args.mode, args.report)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
