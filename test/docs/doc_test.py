#!/usr/bin/env python3
"""doc_test.py REPO BUILD [PAGE.md...] - runs what README.md and docs/*.md
show, on the host backend, and fails where a page and the tool disagree.

A page marks what is checked with an HTML comment on the line before a
fenced block (or a table):

  <!-- doc-test: run -->          the block holds `$ COMMAND` lines, each
                                  followed by the output the page shows
  <!-- doc-test: file NAME -->    the block is written to NAME, for later
                                  commands of the same page to use
  <!-- doc-test: program -->      the block is a whole Host IR program that
                                  `hostjit check` accepts
  <!-- doc-test: same-as PATH --> the block is the repository file PATH
                                  (without its leading comments, unless
                                  the block starts with one)
  <!-- doc-test: excerpt-of PATH --> the block's lines appear, in one
                                  run, in the repository file PATH
  <!-- doc-test: output-of CMD --> the block is what CMD prints
  <!-- doc-test: messages [COL] --> every backticked message in the
                                  table's column COL (1-based; the last by
                                  default), or every line of the fenced
                                  block, is checked, word for word
                                  (placeholders aside), by some test
  <!-- doc-test: lists SET -->    the table's first column names (in
                                  backticks) exactly the members of SET:
                                  jit-calls (HJ_JIT_FN in runtime_abi.def)
                                  or stats (the counters of stats.def)
  <!-- doc-test: skip REASON -->  not checked, and the reason why
  <!-- compiled-by-tests: NAME --> (scripts/extract_doc_example.py) the
                                  doc_example test compiles and runs it
  <!-- run-by-tests: NAME -->     test/python/test_docs.py runs it with
                                  Python and compares what it prints with
                                  the block that follows it

Every relative link of a page must name a file of the repository, and an
anchor (`page.md#a-heading`) a heading of that page.

A block with `$ ` lines, or one that starts like a program (`kernel @`,
`func @`), must carry a mark, so a new example cannot go unchecked.

The pages show a machine without a GPU: where a CUDA driver can be
loaded, the test exits 77 (skipped). The pages are read as a reader reads
them: README.md, then the pages in the order it first links them, then the
rest; their commands run with bash from one scratch copy of the repository
(with `build`, the build folder, linked) and one object cache, so the paths
a page shows are the paths a reader types from the repository root, and
what an earlier page compiled is in the cache for a later one. Nothing may
change the working tree (git's view of it, before and after). Besides:

  <!-- doc-test: lists environment --> the table's first column names
                                  exactly the environment variables the
                                  code reads (getenv, os.environ, the
                                  scripts' ${HOSTJIT_...})
  docs/cli.md                     each command's section names every flag
                                  of its --help, and its usage block and
                                  option tables none that --help lacks Output is
stdout and stderr together. In the shown output, a line `...` stands for any
lines, `...` within a line for any text, and durations (`3.40 us`,
`15.133 ms`) match any duration. A command whose shown output has
`error:` must fail; any other must succeed.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARK = re.compile(r"^<!-- doc-test: (\w[\w-]*)(?: (.*?))? -->$")
DURATION = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)? ?(?:ns|us|ms|s)\b")
KINDS = {"run", "file", "program", "same-as", "excerpt-of", "output-of", "messages", "lists", "skip"}
# What a `lists` table names, each from the file that lists it once:
# (file, regex whose group 1 is a name).
LISTS = {
    "jit-calls": ("runtime/include/hostjit/runtime_abi.def", r"^HJ_JIT_FN\([^,]+, (\w+),"),
    "stats": ("runtime/include/hostjit/stats.def", r"^HJ_STAT\((\w+),"),
}
# `lists environment`: every variable the code reads, found in its sources
# (getenv("X") in C and C++, and every "HOSTJIT_X" or "NCCL_X" string there,
# which the settings helpers pass to getenv; os.environ reads of HOSTJIT_X
# and NCCL_X in Python; ${HOSTJIT_X} in the scripts).
ENV_SOURCES = ("runtime", "lib", "jit", "tools", "python", "examples", "bench", "test", "scripts", ".ci", "setup.py")
# Left out: the scripts and tools kept with past GPU runs' results (their
# own diagnostics, such as a sampler's settings, not hostjit's).
ENV_SKIP = (os.path.join("bench", "results"),)
ENV_PATTERNS = [
    ((".cpp", ".h", ".c", ".cc"), r'getenv\("([A-Za-z_][A-Za-z0-9_]*)"\)'),
    ((".cpp", ".h", ".c", ".cc"), r'"((?:HOSTJIT|NCCL)_[A-Z0-9_]+)"'),
    ((".py",), r'os\.environ(?:\.get\(|\[)"((?:HOSTJIT|NCCL)_[A-Z0-9_]+)"(?!\]\s*=[^=])'),
    ((".sh", "run"), r'\$\{?((?:HOSTJIT|NCCL)_[A-Z0-9_]+)'),
]


class Page:
    def __init__(self, path, rel):
        self.path, self.rel = path, rel
        self.lines = open(path, encoding="utf-8").read().split("\n")
        self.failures = []
        self.updates = []  # (first line, line count, new lines) for --update

    def fail(self, line, what):
        self.failures.append(f"{self.rel}:{line}: {what}")


def fence(line):
    """Whether a line opens or closes a fenced block (indented in a list too)."""
    return line.lstrip().startswith("```")


def blocks(page):
    """Yields (mark, argument, first line number, body lines) for each fenced
    block and each marked table; mark is None where there is none."""
    lines = page.lines
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i].strip())
        if m and m.group(1) not in KINDS:
            page.fail(i + 1, f"unknown mark '{m.group(1)}'; expected one of {', '.join(sorted(KINDS))}")
        if m and m.group(1) in ("messages", "lists") and not (i + 1 < len(lines) and fence(lines[i + 1])):
            j = i + 1
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            if j == i + 1:
                page.fail(i + 1, f"a table must follow '{lines[i].strip()}'")
            yield m.group(1), m.group(2), i + 2, lines[i + 1 : j]
            i = j
            continue
        if fence(lines[i]):
            prev = lines[i - 1].strip() if i > 0 else ""
            pm = MARK.match(prev)
            indent = len(lines[i]) - len(lines[i].lstrip())
            j = i + 1
            while j < len(lines) and not fence(lines[j]):
                j += 1
            body = [l[indent:] if l[:indent].strip() == "" else l for l in lines[i + 1 : j]]
            if pm:
                yield pm.group(1), pm.group(2), i + 2, body
            elif prev.startswith("<!-- compiled-by-tests:"):
                # extract_doc_example.py hands it to the compiler (test/CMakeLists.txt).
                yield "skip", "compiled and run by the doc_example test", i + 2, body
            elif prev.startswith("<!-- run-by-tests:"):
                yield "skip", "run by test/python/test_docs.py", i + 2, body
            else:
                yield None, None, i + 2, body
            i = j + 1
            continue
        if m and m.group(1) not in ("messages", "lists"):
            if i + 1 >= len(lines) or not fence(lines[i + 1]):
                page.fail(i + 1, f"a fenced block must follow '{lines[i].strip()}'")
        i += 1


def commands(body, first):
    """Splits a run block into (line, command, shown output lines)."""
    out = []
    k = 0
    while k < len(body):
        if not body[k].startswith("$ "):
            k += 1
            continue
        line = first + k
        cmd = body[k][2:]
        while cmd.endswith("\\") and k + 1 < len(body):
            k += 1
            cmd = cmd[:-1] + " " + body[k].strip()
        k += 1
        shown = []
        start = first + k
        while k < len(body) and not body[k].startswith("$ "):
            shown.append(body[k])
            k += 1
        while shown and not shown[-1].strip():
            shown.pop()
        out.append((line, cmd, shown, start))
    return out


def line_pattern(shown):
    rx = ""
    for tok in re.split("(" + DURATION.pattern + r"|\.\.\.)", shown.rstrip()):
        if tok == "...":
            rx += ".*"
        elif DURATION.fullmatch(tok):
            rx += DURATION.pattern
        else:
            rx += re.escape(tok)
    return re.compile(rx + r"\s*$")


def matches(shown, actual):
    """Whether the actual lines fit the shown ones (see the top of the file)."""
    pats = [None if s.strip() == "..." else line_pattern(s) for s in shown]

    memo = {}

    def go(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(pats):
            r = j == len(actual)
        elif pats[i] is None:
            r = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            r = j < len(actual) and pats[i].match(actual[j]) is not None and go(i + 1, j + 1)
        memo[key] = r
        return r

    return go(0, 0)


def scratch(repo, build):
    """A copy of the repository for the pages' commands (so that nothing they
    write lands in the working tree), with `build` linked and one object
    cache for every page, as a reader has."""
    d = tempfile.mkdtemp(prefix="hostjit-doc-")
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in os.listdir(repo):
        if name in ("build", ".git", "carry") or name.startswith("build-"):
            continue
        src, dst = os.path.join(repo, name), os.path.join(d, name)
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, dst, symlinks=True, ignore=skip)
        else:
            shutil.copy2(src, dst, follow_symlinks=False)
    os.symlink(build, os.path.join(d, "build"))
    os.mkdir(os.path.join(d, "cache"), 0o700)
    return d


def reading_order(repo):
    """README.md, then the pages in the order README first links them, then
    any other page: the order a reader takes them in."""
    order = ["README.md"]
    for m in re.finditer(r"\]\((docs/[\w.-]+\.md)[#)]", open(os.path.join(repo, "README.md"), encoding="utf-8").read()):
        if m.group(1) not in order and os.path.exists(os.path.join(repo, m.group(1))):
            order.append(m.group(1))
    rest = sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(repo, "docs")) if f.endswith(".md"))
    return order + [p for p in rest if p not in order]


def tree_state(repo):
    """The working tree's untracked and modified files (git's view), or None
    without git."""
    try:
        p = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=all"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return set(p.stdout.decode("utf-8", "replace").splitlines()) if p.returncode == 0 else None


def run(cmd, cwd):
    # The reader's environment, less hostjit's own variables (a developer's
    # HOSTJIT_TIME_COMPILE would change what commands print).
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOSTJIT_")}
    env["HOSTJIT_CACHE_DIR"] = os.path.join(cwd, "cache")
    # A sanitizer build's Python module needs the sanitizers' runtimes loaded
    # first: HOSTJIT_DOC_PYTHON_ENV (test/CMakeLists.txt) holds the settings
    # for commands that run Python.
    if "python3" in cmd:
        for item in os.environ.get("HOSTJIT_DOC_PYTHON_ENV", "").split():
            k, _, v = item.partition("=")
            env[k] = v
    try:
        p = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=300)
    except subprocess.TimeoutExpired:
        return 124, ["doc_test: the command did not end in 300 s"]
    return p.returncode, p.stdout.decode("utf-8", "replace").rstrip("\n").split("\n") if p.stdout else []


def check_page(page, repo, work, corpus):
    marked = 0
    for mark, arg, first, body in blocks(page):
        if mark is None:
            if any(l.startswith("$ ") for l in body):
                page.fail(first - 1, "a shell example without a doc-test mark (run, or skip with a reason)")
            elif any(re.match(r"(kernel|func) @", l) for l in body):
                page.fail(first - 1, "a program without a doc-test mark (program, file, same-as, excerpt-of or skip)")
            continue
        marked += 1
        if mark == "skip":
            if not arg:
                page.fail(first - 2, "'skip' needs a reason")
            continue
        if mark == "messages":
            if arg and not arg.isdigit():
                page.fail(first - 1, f"messages takes a column number, not '{arg}'")
                continue
            check_messages(page, first, body, corpus, int(arg) if arg else -1)
            continue
        if mark == "lists":
            check_list(page, first, body, repo, arg)
            continue
        text = "\n".join(body) + "\n"
        if mark == "file":
            with open(os.path.join(work, arg), "w", encoding="utf-8") as f:
                f.write(text)
        elif mark in ("same-as", "excerpt-of"):
            try:
                want = open(os.path.join(repo, arg), encoding="utf-8").read()
            except OSError as e:
                page.fail(first - 2, f"{mark} {arg}: {e.strerror}")
                continue
            if mark == "excerpt-of":
                if ("\n" + text) not in ("\n" + want):
                    page.fail(first, f"the block is not a run of whole lines of {arg}")
                continue
            if not body or not body[0].startswith("//"):
                # Shown without the file's leading comments.
                lines = want.split("\n")
                while lines and (lines[0].startswith("//") or not lines[0].strip()):
                    lines.pop(0)
                want = "\n".join(lines)
            if want != text:
                page.fail(first, f"the block differs from {arg}")
        elif mark == "program":
            path = os.path.join(work, "doc_program.hir")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            rc, out = run("build/bin/hostjit check doc_program.hir", work)
            if rc != 0:
                page.fail(first, "the program does not check:\n    " + "\n    ".join(out))
        elif mark == "output-of":
            rc, out = run(arg, work)
            shown = list(body)
            while shown and not shown[-1].strip():
                shown.pop()
            if rc != 0 or not matches(shown, out):
                page.fail(first, f"{arg} (exit {rc}) printed:\n    " + "\n    ".join(out))
        elif mark == "run":
            cmds = commands(body, first)
            if not cmds:
                page.fail(first - 2, "a run block needs `$ ` command lines")
            for line, cmd, shown, start in cmds:
                rc, out = run(cmd, work)
                wants_error = any("error:" in s for s in shown)
                if (rc != 0) != wants_error:
                    page.fail(line, f"`{cmd}` exited {rc}, expected {'failure' if wants_error else 'success'}:\n    "
                              + "\n    ".join(out))
                elif not matches(shown, out):
                    page.fail(line, f"`{cmd}` printed what the page does not show:\n    " + "\n    ".join(out))
                    page.updates.append((start, len(shown), out))
    return marked


DTYPES = r"(?:f16|bf16|f32|f64|i8|i16|i32|i64|u8|u32|u64|bool)"


def message_pattern(msg):
    """A message as a regex whose placeholders match what a test gives them:
    `X`, `WHAT`, `I`, `L` (capitals), `...`, `'x'`, `@k`, `%v`, numbers,
    dtypes and file names (`fusion.json`). The words around them must be
    the tool's."""
    rx = ""
    for tok in re.split(r"([\w./-]+\.(?:json|hir)\b|\.\.\.|'[^']*'|@\w+|%\w+|\b[A-Z]{1,4}\b|\b\d+\b|\b" + DTYPES + r"\b)", msg):
        if not tok:
            continue
        if tok == "...":
            rx += ".*"
        elif re.fullmatch(r"[\w./-]+\.(?:json|hir)", tok):
            rx += r"\S*"
        elif tok.startswith("'"):
            rx += "'[^']*'"
        elif tok[0] in "@%":
            rx += re.escape(tok[0]) + r"\w+"
        elif re.fullmatch(r"[A-Z]{1,4}", tok):
            rx += r"\S+"
        elif re.fullmatch(r"\d+", tok):
            rx += r"-?\d+"
        elif re.fullmatch(DTYPES, tok):
            rx += DTYPES
        else:
            rx += re.escape(tok)
    # The whole message: it ends where a test's line or string does.
    return re.compile(rx + r'(?=$|"|\\n)', re.MULTILINE)


def checked(msg, corpus):
    """Whether some test's text holds the message (see message_pattern)."""
    rx = message_pattern(msg)
    # Only texts that hold the message's longest fixed word can match.
    words = re.findall(r"[a-z_]{4,}", re.sub(r"'[^']*'|%\w+|@\w+", " ", msg))
    key = max(words, key=len) if words else ""
    return any(key in t and rx.search(t) for t in corpus)


def check_messages(page, first, rows, corpus, column):
    if rows and not rows[0].startswith("|"):
        # A fenced block of messages: each line is one.
        for k, line in enumerate(rows):
            if line.strip() and not checked(line.strip(), corpus):
                page.fail(first + k, f"no test checks the message `{line.strip()}`")
        return
    for k, row in enumerate(rows):
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if not cells or set(cells[0]) <= set("-: "):
            continue
        if k == 0:
            continue  # the header
        cell = cells[column - 1 if column > 0 else column] if len(cells) >= abs(column) else ""
        if not re.findall(r"`([^`]+)`", cell):
            page.fail(first + k, "a row of a messages table without a quoted message in its column")
        for msg in re.findall(r"`([^`]+)`", cell):
            if not checked(msg, corpus):
                page.fail(first + k, f"no test checks the message `{msg}`")


def environment_read(repo):
    """The environment variables the repository's code reads."""
    names = set()
    for top in ENV_SOURCES:
        path = os.path.join(repo, top)
        walk = [(repo, [], [top])] if os.path.isfile(path) else os.walk(path)
        for root, _, files in walk:
            if os.path.relpath(root, repo).startswith(ENV_SKIP):
                continue
            for f in files:
                for suffixes, rx in ENV_PATTERNS:
                    if f.endswith(suffixes) or f in suffixes:
                        text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
                        names.update(re.findall(rx, text))
    return names


def check_environment(page, first, rows, repo):
    want = environment_read(repo)
    shown = set()
    for row in rows[2:]:
        cells = row.strip().strip("|").split("|")
        shown.update(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", cells[0]))
    for name in sorted(want - shown):
        page.fail(first, f"the table leaves out {name}, which the code reads")
    for name in sorted(shown - want):
        page.fail(first, f"the table names {name}, which no code reads")


def check_list(page, first, rows, repo, what):
    if what == "environment":
        check_environment(page, first, rows, repo)
        return
    if what not in LISTS:
        page.fail(first - 1, f"lists what? expected environment or one of {', '.join(sorted(LISTS))}")
        return
    path, rx = LISTS[what]
    want = set()
    for line in open(os.path.join(repo, path), encoding="utf-8"):
        m = re.match(rx, line)
        if m:
            want.add(m.group(1))
    shown = set()
    for row in rows[2:]:
        cell = row.strip().strip("|").split("|")[0]
        for name in re.findall(r"`([^`]+)`", cell):
            m = re.match(r"\w+", name)
            if not m:
                page.fail(first, f"the table names `{name}`, which is no identifier")
                continue
            shown.add(m.group(0))
    for name in sorted(want - shown):
        page.fail(first, f"the table leaves out {name} ({path})")
    for name in sorted(shown - want):
        page.fail(first, f"the table names {name}, which {path} does not list")


FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-o)(?![\w-])")


def check_cli_flags(page, build):
    """docs/cli.md: each command's section names every flag its --help
    names, and its usage block and option tables name no flag --help does
    not."""
    sections, name, start = {}, None, 0
    for n, line in enumerate(page.lines, 1):
        m = re.match(r"## (?:The demo: )?`(hostjit(?:-demo)?)(?: ([a-z-]+))?`", line)
        if m:
            name, start = " ".join(x for x in m.groups() if x), n
            sections[name] = (start, [])
        elif line.startswith("## "):
            name = None
        elif name:
            sections[name][1].append(line)
    for command, (start, lines) in sections.items():
        if command == "hostjit":
            continue
        words = command.split()
        binary = os.path.join(build, "bin", words[0])
        p = subprocess.run([binary] + words[1:] + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=60)
        helped = set(FLAG.findall(p.stdout.decode("utf-8", "replace")))
        body = "\n".join(lines)
        for flag in sorted(helped):
            if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", body):
                page.fail(start, f"`{command} --help` names {flag}, which this section does not")
        # The usage block (the first fenced block) and the option tables.
        shown, fenced, seen_block = set(), False, False
        for line in lines:
            if line.startswith("```"):
                if fenced:
                    seen_block = True
                fenced = not fenced
                continue
            if (fenced and not seen_block) or (line.startswith("| `-") and not fenced):
                shown.update(FLAG.findall(line.split("|")[1] if line.startswith("|") else line))
        for flag in sorted(shown - helped):
            page.fail(start, f"this section names {flag}, which `{command} --help` does not")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped,
    spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    out, fenced = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            out.add(slug(line.lstrip("#")))
    return out


def check_links(page, repo):
    here = os.path.dirname(page.path)
    fenced = False
    for n, line in enumerate(page.lines, 1):
        if line.startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(here, path)) if path else page.path
            if not full.startswith(repo) or not os.path.exists(full):
                page.fail(n, f"the link {target} names no file of the repository")
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                page.fail(n, f"the link {target}: {os.path.relpath(full, repo)} has no heading #{anchor}")


def load_corpus(repo):
    texts = []
    for sub in ("test/lit", "test/unit"):
        for root, _, files in os.walk(os.path.join(repo, sub)):
            for f in files:
                if f.endswith((".hir", ".test", ".json", ".cpp", ".txt")):
                    text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
                    if not f.endswith(".cpp"):
                        # Only what FileCheck checks: "// CHECK: ..." or
                        # "; J01: ...", not -NOT lines, RUN lines or comments.
                        text = "\n".join(l for l in text.split("\n")
                                         if re.match(r"\s*(//|;)\s*[A-Z][A-Z0-9_]*(-NEXT|-SAME|-DAG)?:", l)
                                         and not re.match(r"\s*(//|;)\s*RUN:", l))
                    # FileCheck's line expressions stand for a line number.
                    texts.append(re.sub(r"\[\[# @LINE[^\]]*\]\]", "1", text))
    return texts


def cuda_driver_present():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def main():
    # --update (for a person, never in CI): replaces each shown output that
    # does not match with what the command printed; review the diff.
    update = "--update" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--update"]
    if len(args) < 2:
        sys.exit("usage: doc_test.py [--update] REPO BUILD [PAGE.md...]")
    repo, build = os.path.abspath(args[0]), os.path.abspath(args[1])
    pages = args[2:] or reading_order(repo)
    if cuda_driver_present():
        # The pages show a machine without a GPU: the host backend, and the
        # errors of a missing driver.
        print("doc_test: SKIPPED: a CUDA driver is here; the pages show the output of a machine without one")
        sys.exit(77)
    corpus = load_corpus(repo)
    failures, marked = [], 0
    # The pages in order, in one scratch copy with one cache, as a reader
    # who starts at the README takes them; the working tree must come out
    # as it went in.
    before = tree_state(repo)
    work = scratch(repo, build)
    try:
        for rel in pages:
            page = Page(os.path.join(repo, rel), rel)
            marked += check_page(page, repo, work, corpus)
            check_links(page, repo)
            if rel == os.path.join("docs", "cli.md"):
                check_cli_flags(page, build)
            failures += page.failures
            if update and page.updates:
                lines = page.lines
                for start, count, new in sorted(page.updates, reverse=True):
                    lines[start - 1 : start - 1 + count] = new
                with open(page.path, "w", encoding="utf-8") as f:
                    f.write("\n".join(lines))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    after = tree_state(repo)
    if before is not None and after is not None:
        for entry in sorted(after - before):
            failures.append(f"the pages' commands changed the working tree: {entry}")
    for f in failures:
        print(f)
    print(f"doc_test: {len(pages)} pages, {marked} marked blocks and tables, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
