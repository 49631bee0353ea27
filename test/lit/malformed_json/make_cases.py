#!/usr/bin/env python3
"""make_cases.py - writes each malformed fusion of cases.json into OUTDIR.

cases.json names a base fusion (valid) and, for each case, a JSON Patch
(RFC 6902: add, remove, replace) that breaks it in one way; OUTDIR/CASE.json
is the base with the patch applied. A "nest" op puts arrays nested that
deep at its path (written as text: json.dumps would recurse as deep).
Cases that are not JSON at all are files of their own beside this script.
"""
import json
import pathlib
import sys


def pointer(path):
    """The keys of a JSON pointer ("/segments/0/launch")."""
    if path == "":
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


NESTED = "@@nested arrays@@"


def apply(doc, op):
    if op["op"] == "nest":
        op = {"op": "replace", "path": op["path"], "value": NESTED}
    keys = pointer(op["path"])
    if not keys:  # the whole document
        return op["value"]
    parent = doc
    for k in keys[:-1]:
        parent = parent[int(k)] if isinstance(parent, list) else parent[k]
    last = keys[-1]
    kind = op["op"]
    if isinstance(parent, list):
        if kind == "add":
            parent.insert(len(parent) if last == "-" else int(last), op["value"])
        elif kind == "remove":
            del parent[int(last)]
        elif kind == "replace":
            parent[int(last)] = op["value"]
    else:
        if kind in ("add", "replace"):
            parent[last] = op["value"]
        elif kind == "remove":
            del parent[last]
    if kind not in ("add", "remove", "replace"):
        sys.exit(f"make_cases.py: unknown op '{kind}'")
    return doc


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_cases.py OUTDIR")
    here = pathlib.Path(__file__).resolve().parent
    spec = json.loads((here / "cases.json").read_text())
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, patch in spec["cases"].items():
        doc = json.loads((here / spec["base"]).read_text())
        depth = 0
        for op in patch:
            depth = op.get("depth", depth)
            doc = apply(doc, op)
        text = json.dumps(doc, indent=2).replace(json.dumps(NESTED), "[" * depth + "]" * depth)
        (out / f"{name}.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
