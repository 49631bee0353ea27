# test_docs.py - runs the complete example of docs/python.md and compares
# what it prints with the output the page shows after it.
import os
import subprocess
import sys

from conftest import BUILD, REPO

MARK = "<!-- run-by-tests: python_example.py -->"


def blocks_after(lines, start):
    """The fenced blocks from line `start` on, as lists of lines."""
    i = start
    while i < len(lines):
        if lines[i].startswith("```"):
            j = lines.index("```", i + 1)
            yield lines[i + 1 : j]
            i = j + 1
        else:
            i += 1


def test_the_guides_complete_example_prints_what_the_page_shows(tmp_path):
    lines = (REPO / "docs" / "python.md").read_text(encoding="utf-8").split("\n")
    assert MARK in lines, f"docs/python.md has no {MARK}"
    found = blocks_after(lines, lines.index(MARK) + 1)
    program, shown = next(found), next(found)
    assert program[0].startswith("# python_example.py - ")
    (tmp_path / "python_example.py").write_text("\n".join(program) + "\n")
    # Run from a folder where build/ and examples/ are where the page says.
    os.symlink(BUILD, tmp_path / "build")
    os.symlink(REPO / "examples", tmp_path / "examples")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(BUILD / "python"), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "python_example.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.rstrip("\n").split("\n") == shown
