#!/usr/bin/env python3
"""Gather the function-calling catalog of the bfcl-eval wheel, as it is.

Usage: make_catalog.py BFCL_EVAL.whl OUT.json

The Berkeley Function Calling Leaderboard's data offers the models
function definitions: in each test entry's "function" list
(bfcl_eval/data/BFCL_*.json, one JSON entry a line) and in the
multi-turn function docs (bfcl_eval/data/multi_turn_func_doc/*.json, one
function a line).  OUT.json is a JSON array of every distinct definition
(equal JSON counts once), in the order first met, each exactly as
the data has it: BFCL's own type names ("dict", "float", "any", "",
"ArrayList"...), dotted names, required properties that are not
declared.  Nothing is cleaned: this is the real-world input the
failure-isolation tests read.  The wheel's METADATA is kept beside it
(OUT.json.METADATA) for its version and licence.
"""

import json
import sys
import zipfile


def main():
    whl, out = sys.argv[1], sys.argv[2]
    seen = set()
    functions = []
    skipped = 0
    with zipfile.ZipFile(whl) as z:
        names = sorted(z.namelist())
        for name in names:
            entries = name.startswith("bfcl_eval/data/BFCL_") and name.endswith(".json")
            docs = name.startswith("bfcl_eval/data/multi_turn_func_doc/") and name.endswith(".json")
            if not (entries or docs):
                continue
            for line in z.read(name).decode("utf-8").splitlines():
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except ValueError:
                    skipped += 1
                    continue
                fns = item.get("function") if entries else [item]
                if not isinstance(fns, list):
                    continue
                for fn in fns:
                    key = json.dumps(fn, sort_keys=True)
                    if key not in seen:
                        seen.add(key)
                        functions.append(fn)
        meta = [n for n in names if n.endswith(".dist-info/METADATA")]
        if meta:
            with open(out + ".METADATA", "wb") as f:
                f.write(z.read(meta[0]))
    if len(functions) < 1000:
        sys.exit(f"make_catalog: only {len(functions)} functions in {whl}")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(functions, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{out}: {len(functions)} functions ({skipped} lines of the data are not JSON)")


if __name__ == "__main__":
    main()
