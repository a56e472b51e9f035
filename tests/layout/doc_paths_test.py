"""Every repository path a doc or a source comment names exists (issue #59): a newcomer who follows
`operator/controller/job_events.h` from docs/architecture.md, or `trainer/kernels/*_cuda.cu` from a
header's comment, finds it.

Where it looks:
- the docs: README.md, docs/**/*.md, charts/**/README.md and examples/**/README.md; but not
  docs/notes/, the lab notes, which are history: they name files as they were on the day (a test
  since renamed, a file since moved) and are not brought up to date;
- the comments (`//` and `/* */`, not string literals nor #include lines) of the C++ headers and
  sources (*.h, *.cc) under operator/, trainer/, common/, plugin/ and tests/.

What a repository path is: a token that starts with one of the top-level folders (operator/,
trainer/, common/, plugin/, tests/, docs/, scripts/, charts/, deploy/, crds/, examples/, bench/,
proto/, .ci/) and goes on with path characters (letters, digits, `_ - . / *`), not preceded by a
path character (so `proto/disttrain/trainer/v1` names proto/, not trainer/, and a URL's
`.../training-operator/...` names nothing). A `:line` or `#anchor` after it and a sentence's
closing punctuation are dropped. A token with `*` is a glob and must match something. A short form,
a path from below the top (`controller/job_events.h`, `internal/reconcile_pass.h`, `notes/kueue.md`)
that ends in a file's extension, must be the tail of some repository path: that is how the docs and
comments name a file near the one they are in, and how a move (operator/controller/ to
operator/policy/) leaves a stale name behind. Not paths: placeholders (a token followed by `<...>`
or `{...}`, or holding `...`/`…`), a rate (`examples/s`, `examples/sec`), and anything under a build
folder (`build/`, written by the build, not kept in the repository).

And the docs' relative Markdown links (`[x](operations.md#metrics-and-alerts)`, docs/notes/
included: a link is followed, not read as history) reach a file, and their `#anchor` one of its
headings as GitHub names them, so no link points to a heading that moved.

Run with the system Python: `python3 -m unittest -v doc_paths_test` from this directory."""
import glob
import os
import re
import unittest

ROOT = os.environ.get("DISTTRAIN_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
TOP = ("operator", "trainer", "common", "plugin", "tests", "docs", "scripts", "charts", "deploy", "crds",
       "examples", "bench", "proto", r"\.ci")
PATH = re.compile(r"(?<![\w./*\-$])((?:%s)/[\w./*\-]*)" % "|".join(TOP))
SHORT = re.compile(r"(?<![\w./*\-$:])([A-Za-z_][\w-]*/[\w./-]*\.(?:h|cc|cu|py|sh|md|yaml|proto|json|txt))\b")
RATES = ("examples/s", "examples/sec", "examples/second")
SOURCE_FOLDERS = ("operator", "trainer", "common", "plugin", "tests")
SKIPPED_DOCS = ("docs/notes/",)


def docs(root=ROOT):
    if os.path.exists(os.path.join(root, "README.md")):
        yield "README.md"
    for pattern in ("docs/**/*.md", "charts/**/README.md", "examples/**/README.md"):
        for path in sorted(glob.glob(os.path.join(root, pattern), recursive=True)):
            rel = os.path.relpath(path, root)
            if not rel.startswith(SKIPPED_DOCS):
                yield rel


def cxx_sources(root=ROOT):
    for folder in SOURCE_FOLDERS:
        for d, dirs, files in os.walk(os.path.join(root, folder)):
            dirs[:] = sorted(x for x in dirs if x != "build" and not x.startswith("."))
            for f in sorted(files):
                if f.endswith((".h", ".cc")):
                    yield os.path.relpath(os.path.join(d, f), root)


def comment_lines(text):
    """(line number, comment text) of each `//` or `/* */` comment, string and char literals skipped."""
    out, line, i, n = [], 1, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append((line, text[i + 2:end]))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            for k, part in enumerate(text[i + 2:end].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, end)
            i = end + 2
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2:open_paren]
            end = text.find(")" + delimiter + '"', open_paren)
            end = n if end < 0 else end + len(delimiter) + 2
            line += text.count("\n", i, end)
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def _tokens(pattern, line):
    for m in pattern.finditer(line):
        token, rest = m.group(1), line[m.end():]
        if rest[:1] in ("<", "{") or rest.startswith(("...", "…")) or "..." in token:
            continue  # a placeholder: tests/unit/<path>_test.cc, trainer/ps/{a,b}.cc, docs/...
        token = token.rstrip(".")
        if "/build/" in "/" + token + "/" or token in RATES:
            continue
        yield token


def named_paths(line):
    """The repository paths (from the top) a line of text names, placeholders and build outputs left out."""
    return list(_tokens(PATH, line))


def short_paths(line):
    """The paths from below the top (`kube/protobuf.h`) a line names."""
    top = tuple(t.replace("\\", "") + "/" for t in TOP)
    return [t for t in _tokens(SHORT, line) if not t.startswith(top)]


def exists(token, root=ROOT):
    if "*" in token:
        return bool(glob.glob(os.path.join(root, token), recursive=True))
    return os.path.exists(os.path.join(root, token))


def repository_files(root=ROOT):
    """Every file and folder of the tree as "/path", build outputs and hidden folders left out."""
    out = set()
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in ("build", "__pycache__", "node_modules") and not x.startswith(".")]
        for f in dirs + files:
            out.add("/" + os.path.relpath(os.path.join(d, f), root))
    return out


def tail_exists(token, files):
    return any(f.endswith("/" + token) for f in files)


LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchor(heading):
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    out, seen, fenced = set(), {}, False
    with open(path, errors="replace") as f:
        for text in f:
            if text.startswith("```"):
                fenced = not fenced
            elif not fenced and re.match(r"#{1,6} ", text):
                a = anchor(text.lstrip("#"))
                out.add(a if a not in seen else f"{a}-{seen[a]}")
                seen[a] = seen.get(a, 0) + 1
    return out


def broken_links(root=ROOT):
    """["file:line: target"] for each relative link of a doc whose file or heading does not exist."""
    broken, cache = [], {}
    paths = list(docs(root)) + sorted(os.path.relpath(p, root) for p in
                                      glob.glob(os.path.join(root, "docs/notes/**/*.md"), recursive=True))
    for path in paths:
        with open(os.path.join(root, path), errors="replace") as f:
            for number, text in enumerate(f, 1):
                for target in LINK.findall(text):
                    if re.match(r"[a-z]+:", target):
                        continue  # https:, mailto:
                    file, _, heading = target.partition("#")
                    full = os.path.normpath(os.path.join(root, os.path.dirname(path), file)) if file else \
                        os.path.join(root, path)
                    if not os.path.exists(full):
                        broken.append(f"{path}:{number}: {target}")
                    elif heading and full.endswith(".md"):
                        if full not in cache:
                            cache[full] = anchors(full)
                        if heading not in cache[full]:
                            broken.append(f"{path}:{number}: {target}")
    return broken


def stale_paths(root=ROOT):
    """["file:line: path"] for each path a doc or a source comment names that does not exist."""
    stale, files = [], repository_files(root)

    def check(path, number, text):
        for token in named_paths(text):
            if not exists(token, root):
                stale.append(f"{path}:{number}: {token}")
        for token in short_paths(text):
            if not tail_exists(token, files):
                stale.append(f"{path}:{number}: {token}")

    for path in docs(root):
        with open(os.path.join(root, path), errors="replace") as f:
            for number, text in enumerate(f, 1):
                check(path, number, text)
    for path in cxx_sources(root):
        with open(os.path.join(root, path), errors="replace") as f:
            for number, text in comment_lines(f.read()):
                check(path, number, text)
    return stale


class DocPathsTest(unittest.TestCase):
    def test_what_counts_as_a_path(self):
        self.assertEqual(named_paths("see `operator/main.cc:42` and docs/kueue.md#multikueue."),
                         ["operator/main.cc", "docs/kueue.md"])
        self.assertEqual(named_paths("proto/disttrain/trainer/v1/ and github.com/kubeflow/training-operator/pkg"),
                         ["proto/disttrain/trainer/v1/"])
        self.assertEqual(named_paths("tests/unit/<path>_test.cc, trainer/ps/{a,b}.cc, docs/..., build/bin/x, "
                                     "tests/build/y"), [])
        self.assertEqual(named_paths("the kernels (trainer/kernels/*_cuda.cu)"), ["trainer/kernels/*_cuda.cu"])
        self.assertEqual(named_paths("1,200 examples/s, 9 examples/sec"), [])
        self.assertEqual(short_paths("(`kube/protobuf.h`, notes/kueue.md#x, ../examples/a.yaml, k8s.io/api/b.proto, "
                                     "https://x.org/a/b.md, build/gpu-bundle/run.sh, operator/main.cc)"),
                         ["kube/protobuf.h", "notes/kueue.md"])

    def test_the_checker_reads_comments_not_strings(self):
        text = ('#include "operator/gone.h"\n'
                'auto s = "docs/gone.md";  // see docs/here.md\n'
                '/* one\n   scripts/gone.sh */\n'
                "int x = 1'000; char c = '/'; // trainer/gone.h\n")
        self.assertEqual(comment_lines(text), [(2, " see docs/here.md"), (3, " one"), (4, "   scripts/gone.sh "),
                                               (5, " trainer/gone.h")])

    def test_the_checker_finds_a_stale_path(self):
        import tempfile
        with tempfile.TemporaryDirectory() as root:
            def write(path, text):
                os.makedirs(os.path.dirname(os.path.join(root, path)) or root, exist_ok=True)
                with open(os.path.join(root, path), "w") as f:
                    f.write(text)
            write("trainer/kernels/axpy_cuda.cu", "")
            write("operator/x.h", "// moved to operator/y.h, kernels in trainer/kernels/*_cuda.cu\n")
            write("operator/policy/z.h", "// see policy/z.h, not controller/z.h\n")
            write("README.md", "Read docs/a.md and\nscripts/gone.sh, trainer/kernels/*_hip.cu.\n")
            write("docs/a.md", "ok: operator/x.h:3\n")
            write("docs/notes/old.md", "history: operator/z.h\n")
            self.assertEqual(stale_paths(root), ["README.md:2: scripts/gone.sh", "README.md:2: trainer/kernels/*_hip.cu",
                                                 "operator/x.h:1: operator/y.h", "operator/policy/z.h:1: controller/z.h"])

    def test_the_checker_finds_a_link_to_a_heading_that_moved(self):
        import tempfile
        self.assertEqual(anchor(" The operator's CPU against the bare client's (2026-11-28, `x`)"),
                         "the-operators-cpu-against-the-bare-clients-2026-11-28-x")
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "docs", "notes"))
            with open(os.path.join(root, "docs", "a.md"), "w") as f:
                f.write("# A\n## Kept\n```\n# not a heading\n```\n## Kept\n")
            with open(os.path.join(root, "docs", "notes", "b.md"), "w") as f:
                f.write("[1](../a.md#kept) [2](../a.md#kept-1) [3](../a.md#moved) [4](../gone.md) "
                        "[5](https://x.org/#y) [6](#b)\n")
            self.assertEqual(broken_links(root), ["docs/notes/b.md:1: ../a.md#moved", "docs/notes/b.md:1: ../gone.md",
                                                  "docs/notes/b.md:1: #b"])

    def test_every_link_reaches_its_file_and_heading(self):
        broken = broken_links()
        self.assertEqual(broken, [], "relative links whose file or heading does not exist:\n" + "\n".join(broken))

    def test_every_path_named_exists(self):
        self.assertGreater(len(list(docs())), 8, "found the docs")
        self.assertGreater(len(list(cxx_sources())), 200, "found the sources")
        stale = stale_paths()
        self.assertEqual(stale, [], "paths named by a doc or a comment that do not exist:\n" + "\n".join(stale))


if __name__ == "__main__":
    unittest.main()
