"""Tests one-to-one with their units (issue #33): a newcomer finds the test of `x.cc` as
`tests/unit/<the same folders>/x_test.cc`, and every unit test names the source it tests.

- Every source under operator/, trainer/, common/ and plugin/ has its same-named test at the
  mirrored path, but the main.cc files, which only wire (the cli and trainer-process suites run
  them as processes).
- Every `tests/unit/.../y_test.cc` names a source of the mirrored folder: `y.cc` or `y.h`, or a
  topic of one (`job_reconciler_elastic_test.cc` tests job_reconciler's elastic steps).

Run with the system Python: `python3 -m unittest -v test_names_test` from this directory."""
import os
import unittest

ROOT = os.environ.get("DISTTRAIN_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
FOLDERS = ("operator", "trainer", "common", "plugin")

# Unit tests of a group of sources rather than of one, and which.
GROUP_TESTS = {
    "trainer/kernels/cuda_kernels_test.cc": "the CUDA kernels (trainer/kernels/*_cuda.cu) against the CPU ones",
}


def sources(root=ROOT):
    for folder in FOLDERS:
        for d, _, files in os.walk(os.path.join(root, folder)):
            for f in files:
                if f.endswith(".cc") and f != "main.cc":
                    yield os.path.relpath(os.path.join(d, f), root)


def unit_tests(root=ROOT):
    base = os.path.join(root, "tests", "unit")
    for d, _, files in os.walk(base):
        for f in files:
            if f.endswith("_test.cc"):
                yield os.path.relpath(os.path.join(d, f), base)


def mirrored_test(source):
    return os.path.join("tests", "unit", os.path.splitext(source)[0] + "_test.cc")


def untested(root=ROOT):
    return sorted(s for s in sources(root) if not os.path.exists(os.path.join(root, mirrored_test(s))))


def nameless(root=ROOT):
    """Unit tests whose name is no source of the mirrored folder, nor a topic of one."""
    out = []
    for test in unit_tests(root):
        if test in GROUP_TESTS:
            continue
        folder, name = os.path.split(test[:-len("_test.cc")])
        src = os.path.join(root, folder)
        names = {os.path.splitext(f)[0] for f in os.listdir(src)} if os.path.isdir(src) else set()
        if not any(name == n or name.startswith(n + "_") for n in names):
            out.append(test)
    return sorted(out)


class TestNamesTest(unittest.TestCase):
    def test_the_checker_finds_a_source_without_its_test_and_a_test_without_its_source(self):
        import tempfile
        with tempfile.TemporaryDirectory() as root:
            def touch(path):
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                open(os.path.join(root, path), "w").close()
            for path in ("trainer/ps/adagrad.cc", "trainer/ps/dynsgd.cc", "trainer/main.cc", "operator/controller/job_reconciler.cc",
                         "tests/unit/trainer/ps/adagrad_test.cc",
                         "tests/unit/trainer/ps/helpers_test.cc",
                         "tests/unit/operator/controller/job_reconciler_elastic_test.cc"):
                touch(path)
            self.assertEqual(untested(root),
                             ["operator/controller/job_reconciler.cc", "trainer/ps/dynsgd.cc"])
            self.assertEqual(nameless(root), ["trainer/ps/helpers_test.cc"])

    def test_every_source_has_its_same_named_test(self):
        all_sources = list(sources())
        self.assertGreater(len(all_sources), 100, "found the sources")
        missing = untested()
        print(f"{len(all_sources)} sources, {len(all_sources) - len(missing)} with their test")
        self.assertEqual(missing, [], "sources whose test is not at tests/unit/<path>_test.cc")

    def test_every_unit_test_names_its_source(self):
        self.assertEqual(nameless(), [], "tests/unit files that name no source of their folder")


if __name__ == "__main__":
    unittest.main()
