"""The layout of the sources: the folder is the library, and the include graph of the sources (operator/, trainer/, common/, plugin/, bench/) as a newcomer
reads it (issue #33):

- no cycle between units: a unit is a file's path without its extension (x.h with x.cc), and unit A
  depends on unit B when a file of A includes B's header; two units that need each other are one
  concept split in two, or a helper that should sit under internal/;
- a header under some/folder/internal/ is included only from some/folder/ (and below), and from the
  tests: it is that folder's private helper (abseil's convention).

Each library's sources live in the folders that name it (the pure core `disttrain_api` in
operator/api/, operator/policy/ and operator/queueing/; the reconciler alone in operator/controller/),
and every source of those folders is built into that library.

Run with the system Python: `python3 -m unittest -v include_graph_test` from this directory."""
import os
import re
import sys
import unittest

ROOT = os.environ.get("DISTTRAIN_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
FOLDERS = ("operator", "trainer", "common", "plugin", "bench")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(folders=FOLDERS):
    for folder in folders:
        for d, _, files in os.walk(os.path.join(ROOT, folder)):
            for f in files:
                if f.endswith((".h", ".cc", ".cu")):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


def includes(path):
    with open(os.path.join(ROOT, path), errors="replace") as f:
        return [i for i in INCLUDE.findall(f.read()) if os.path.exists(os.path.join(ROOT, i))]


def unit(path):
    return os.path.splitext(path)[0]


def unit_graph():
    graph = {}
    for path in sources():
        deps = graph.setdefault(unit(path), set())
        deps.update(unit(i) for i in includes(path) if unit(i) != unit(path))
    return graph


def cycles(graph):
    """Strongly connected components of more than one unit (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


# Library -> the folders its sources live in (a folder listed here holds no other library's source).
LIBRARY_FOLDERS = {
    "disttrain_common": ["common/"],
    "disttrain_api": ["operator/api/", "operator/policy/", "operator/queueing/"],
    "disttrain_kube": ["operator/kube/"],
    "disttrain_runtime": ["operator/runtime/"],
    "disttrain_reconciler": ["operator/controller/"],
    "disttrain_operator_cli": ["operator/cli/"],
    "disttrain_plugin": ["plugin/"],
    "disttrain_kernels": ["trainer/kernels/"],
}


def library_sources():
    """{library: [source paths]} from the add_library/target_sources calls of the CMakeLists.txt files."""
    out = {}
    for folder in ("common", "operator", "plugin", "trainer", os.path.join("trainer", "kernels")):
        cmake = os.path.join(ROOT, folder, "CMakeLists.txt")
        with open(cmake) as f:
            text = re.sub(r"#.*", "", f.read())
        for call, name, body in re.findall(r"\b(add_library|target_sources)\((\w+)([^)]*)\)", text):
            for word in body.split():
                if word.endswith((".cc", ".cu")) and "$" not in word:
                    out.setdefault(name, []).append(os.path.normpath(os.path.join(folder, word)))
    return out


class IncludeGraphTest(unittest.TestCase):
    def test_the_checker_finds_a_cycle(self):
        self.assertEqual(cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}), [["a", "b", "c"]])
        self.assertEqual(cycles({"a": {"b"}, "b": set()}), [])

    def test_no_two_units_need_each_other(self):
        graph = unit_graph()
        self.assertGreater(len(graph), 100, "found the sources")
        found = cycles(graph)
        print(f"{len(graph)} units, {sum(len(d) for d in graph.values())} dependencies, {len(found)} cycles")
        self.assertEqual(found, [], "units that include each other (directly or through others)")

    def test_each_library_lives_in_its_folders_and_they_hold_no_other(self):
        libraries = library_sources()
        for library, folders in LIBRARY_FOLDERS.items():
            with self.subTest(library=library):
                self.assertIn(library, libraries)
                strays = [s for s in libraries[library] if not s.startswith(tuple(folders))]
                self.assertEqual(strays, [], f"{library} builds sources outside {folders}")
                built = set(libraries[library])
                for folder in folders:
                    # Sources of a subfolder with its own library (trainer/kernels) are not this one's.
                    unbuilt = [p for p in sources([folder.rstrip("/")]) if p.endswith(".cc") and p not in built
                               and not any(p in srcs for other, srcs in libraries.items() if other != library)
                               and os.path.basename(p) != "main.cc"]
                    self.assertEqual(unbuilt, [], f"sources of {folder} that {library} does not build")

    def test_internal_headers_are_included_only_by_their_folder(self):
        offenders = []
        for path in sources():
            for inc in includes(path):
                if "/internal/" in inc:
                    owner = inc.split("/internal/", 1)[0] + "/"
                    if not path.startswith(owner):
                        offenders.append(f"{path} includes {inc}")
        self.assertEqual(offenders, [])


if __name__ == "__main__":
    unittest.main()
