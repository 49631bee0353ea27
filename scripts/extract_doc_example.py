#!/usr/bin/env python3
"""extract_doc_example.py DOC.md NAME OUT - writes the fenced code block that
follows `<!-- compiled-by-tests: NAME -->` in DOC.md to OUT, so the tests
compile exactly what the documentation shows."""
import sys

def main():
    doc, name, out = sys.argv[1:4]
    lines = open(doc, encoding="utf-8").read().split("\n")
    marker = f"<!-- compiled-by-tests: {name} -->"
    try:
        start = lines.index(marker) + 1
    except ValueError:
        sys.exit(f"{doc}: no '{marker}'")
    if not lines[start].startswith("```"):
        sys.exit(f"{doc}:{start + 1}: a fenced code block must follow '{marker}'")
    end = lines.index("```", start + 1)
    text = "\n".join(lines[start + 1 : end]) + "\n"
    try:
        if open(out, encoding="utf-8").read() == text:
            return  # unchanged: keep the file's time, so nothing rebuilds
    except OSError:
        pass
    open(out, "w", encoding="utf-8").write(text)

if __name__ == "__main__":
    main()
