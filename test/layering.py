#!/usr/bin/env python3
"""layering.py - checks that includes point down the layers (docs/architecture.md).

Each folder of the library may include its own layer's headers and those of
the layers it builds on; each room of the runtime (runtime/src/ROOM) those of
the rooms below it; only jit/ includes LLVM; no source file is longer than
MAX_LINES; no two files of one folder include each other's headers,
directly or through others of that folder (a file's unit is its stem:
x.h with x.cpp); no class holds more than MAX_MEMBERS data members (those
named with a trailing underscore, this code's convention); nothing refers to the folder beside the repository that its
developers share (users never have it).
Prints every violation and exits 1 if there is one.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUTSIDE = "/".join(["..", "shared"])  # the developers' folder beside the repository
# Layers, lowest first: the folders (sources and headers) of each, and the
# layers it may include besides its own. fusion and jit both build on exec;
# neither includes the other.
LAYERS = [
    ("runtime", ["runtime"], []),
    ("ir", ["lib/ir", "include/hostjit/ir"], ["runtime"]),
    ("text", ["lib/text", "include/hostjit/text"], ["ir", "runtime"]),
    ("verify", ["lib/verify", "include/hostjit/verify"], ["text", "ir", "runtime"]),
    ("exec", ["lib/exec", "include/hostjit/exec"], ["verify", "text", "ir", "runtime"]),
    ("fusion", ["lib/fusion", "include/hostjit/fusion"], ["exec", "verify", "text", "ir", "runtime"]),
    ("jit", ["jit"], ["exec", "verify", "text", "ir", "runtime"]),
    # The Python module sits on top, as the command line does.
    ("python", ["python"], ["jit", "fusion", "exec", "verify", "text", "ir", "runtime"]),
]
# The runtime's rooms (runtime/src/ROOM), lowest first, and the rooms each
# may include besides its own; every room may include the runtime's public
# headers (runtime/include).
RUNTIME_ROOMS = [
    ("base", []),
    ("comm", ["base"]),
    ("backend", ["comm", "base"]),
    ("host", ["backend", "comm", "base"]),
    ("cache", ["base"]),
    ("image", ["base"]),
    ("cuda", ["backend", "comm", "cache", "image", "base"]),
    ("record", ["comm", "base"]),
    ("memory", ["record", "backend", "comm", "base"]),
    ("streams", ["backend", "comm", "base"]),
    ("profile", ["backend", "comm", "base"]),
    ("graph", ["profile", "memory", "record", "backend", "comm", "base"]),
    ("core", ["profile", "graph", "streams", "memory", "record", "backend", "comm", "base"]),
    ("api", ["core", "profile", "graph", "streams", "memory", "record", "image", "backend", "comm", "base"]),
]
# No source file of the product is much longer than this.
MAX_LINES = 650


def runtime_problems():
    problems = []
    src = ROOT / "runtime" / "src"
    rooms = {name: set(below) | {name} for name, below in RUNTIME_ROOMS}
    for f in sorted(src.rglob("*")):
        if not f.is_file():
            continue
        rel = f.relative_to(src)
        if len(rel.parts) != 2 or rel.parts[0] not in rooms:
            problems.append(f"runtime/src/{rel}: not in a room of the runtime (one of {', '.join(rooms)})")
            continue
        room = rel.parts[0]
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
            if not m or m.group(1).startswith("hostjit/"):
                continue
            target = m.group(1).split("/")[0]
            if target not in rooms:
                problems.append(f"runtime/src/{rel}:{n}: includes \"{m.group(1)}\"; runtime includes name their room")
            elif target not in rooms[room]:
                problems.append(f"runtime/src/{rel}:{n}: room '{room}' includes {m.group(1)} from room '{target}', "
                                "which it may not use")
    return problems


# Every folder of product code: the library, its headers, the runtime, the
# JIT, the command line and the Python package.
PRODUCT_FOLDERS = ("runtime", "jit", "lib", "include", "tools", "python")


def long_files():
    problems = []
    for folder in PRODUCT_FOLDERS:
        for f in sorted((ROOT / folder).rglob("*")):
            if f.suffix in {".h", ".cpp", ".c", ".def", ".py"} and f.is_file():
                n = len(f.read_text(errors="replace").splitlines())
                if n > MAX_LINES:
                    problems.append(f"{f.relative_to(ROOT)}: {n} lines; split it by concern (at most {MAX_LINES})")
    return problems


# No class of the product holds more data members than this (an owner with
# more is several owners).
MAX_MEMBERS = 20


def large_classes():
    problems = []
    for folder in PRODUCT_FOLDERS:
        for f in sorted((ROOT / folder).rglob("*.h")):
            text = f.read_text(errors="replace")
            for m in re.finditer(r"^(?:class|struct) (\w+)[^;{()]*\{", text, re.M):
                depth, i = 1, m.end()
                top = []  # the body outside nested braces
                while depth and i < len(text):
                    ch = text[i]
                    if ch == "{":
                        depth += 1
                    elif ch == "}":
                        depth -= 1
                    elif depth == 1:
                        top.append(ch)
                    i += 1
                members = 0
                for line in "".join(top).splitlines():
                    line = line.split("//")[0].strip()
                    if not line.endswith(";") or line.startswith(("using ", "friend ", "typedef ", "return ")):
                        continue
                    members += len(re.findall(r"\b\w+_\s*(?:=[^,;]*)?[,;]", line))
                if members > MAX_MEMBERS:
                    line_no = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{f.relative_to(ROOT)}:{line_no}: {m.group(1)} holds {members} data members; "
                                    f"split it into owners (at most {MAX_MEMBERS})")
    return problems


# Folders whose units (a stem: x.h and x.cpp) may not include each other in
# a cycle.
def include_cycles():
    problems = []
    folders = set()
    for folder in PRODUCT_FOLDERS:
        for f in (ROOT / folder).rglob("*"):
            if f.suffix in {".h", ".cpp"} and f.is_file():
                folders.add(f.parent)
    for d in sorted(folders):
        uses = {}
        for f in sorted(d.iterdir()):
            if f.suffix not in {".h", ".cpp"}:
                continue
            for line in f.read_text(errors="replace").splitlines():
                m = re.match(r'\s*#\s*include\s*"([^"]+\.h)"', line)
                if not m:
                    continue
                target = d / pathlib.Path(m.group(1)).name
                # "room/x.h" in the runtime, "x.h" beside the file elsewhere
                if target.is_file() and (m.group(1).count("/") == 0 or m.group(1).split("/")[-2] == d.name):
                    if target.stem != f.stem:
                        uses.setdefault(f.stem, set()).add(target.stem)
        state = {}

        def visit(u, path):
            state[u] = 1
            for v in sorted(uses.get(u, ())):
                if state.get(v) == 1:
                    cycle = path[path.index(v):] + [v]
                    problems.append(f"{d.relative_to(ROOT)}: units include each other: {' -> '.join(cycle)}")
                elif v not in state:
                    visit(v, path + [v])
            state[u] = 2

        for u in sorted(uses):
            if u not in state:
                visit(u, [u])
    return problems


# The layer a quoted include belongs to, by its path.
def layer_of_include(path):
    if path.startswith("hostjit/runtime.h") or path.endswith(".def") and path.startswith("hostjit/") and "/" not in path[8:]:
        return "runtime"
    m = re.match(r"hostjit/(ir|text|verify|fusion|exec)/", path)
    if m:
        return m.group(1)
    if path == "hostjit/jit.h":
        return "jit"
    if path.startswith("pybind11/"):
        return "python"
    return None  # a header of the same folder ("lexer.h"), or a system header

def main():
    problems = []
    for name, folders, below in LAYERS:
        allowed = {name, *below}
        for folder in folders:
            for f in sorted((ROOT / folder).rglob("*")):
                if f.suffix not in {".h", ".hpp", ".cpp", ".c", ".def"}:
                    continue
                for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                    m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
                    if not m:
                        continue
                    inc = m.group(2)
                    where = f"{f.relative_to(ROOT)}:{n}"
                    if inc.startswith("llvm/") and name != "jit":
                        problems.append(f"{where}: includes {inc}; only jit/ includes LLVM")
                    layer = layer_of_include(inc)
                    if layer and layer not in allowed:
                        problems.append(f"{where}: layer '{name}' includes {inc} from layer '{layer}', which it may not use")
    for f in sorted(ROOT.rglob("*")):
        if any(p in f.parts for p in ("build", ".git", "carry")) or not f.is_file() or f.parts[len(ROOT.parts)].startswith("build-"):
            continue
        if f.suffix in {".h", ".hpp", ".cpp", ".c", ".md", ".txt", ".sh", ".py", ".hir", ".json", ".cu", ".in", ".test"}:
            if OUTSIDE in f.read_text(errors="replace"):
                problems.append(f"{f.relative_to(ROOT)}: refers to {OUTSIDE}, which users of the project never have")
    problems += runtime_problems()
    problems += long_files()
    problems += include_cycles()
    problems += large_classes()
    for p in problems:
        print(p)
    print(f"layering: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0

if __name__ == "__main__":
    sys.exit(main())
