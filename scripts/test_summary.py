#!/usr/bin/env python3
"""The last line of `make test` (scripts/test.sh): every test of the run in one count,

    tests: N passed, M failed, K skipped

read from the logs the run's steps left in LOG_DIR: ctest's (every ctest test: unit, trainer
processes, cluster suites), the sanitizers' (each ASan+UBSan ctest case, each TSan GoogleTest
case, and the clang -Wthread-safety build as one check) and the gpu tests' (ctest). A ctest test
that did not run (exit 77: no real node, no GPU) is skipped, never passed. LOG_DIR/steps says how
each step ended ("passed PATH" or "failed PATH"); a step that failed although its log shows no
failure (it crashed, a build broke, or a signal stopped it) counts as one failure.

    scripts/test_summary.py LOG_DIR
"""
import os
import re
import sys

CTEST_TOTAL = re.compile(r"^\d+% tests passed, (\d+) tests? failed out of (\d+)", re.M)
CTEST_SKIPPED = re.compile(r"^\s*\d+ - \S+ \((Skipped|Not Run)\)", re.M)
GTEST_PASSED = re.compile(r"^\[  PASSED  \] (\d+) tests?\.", re.M)
GTEST_FAILED = re.compile(r"^\[  FAILED  \] (\d+) tests?, listed below", re.M)


def ctest_counts(text):
    """(passed, failed, skipped) of every ctest run in `text`."""
    passed = failed = skipped = 0
    for m in CTEST_TOTAL.finditer(text):
        failed += int(m.group(1))
        passed += int(m.group(2)) - int(m.group(1))
    # ctest counts a skipped test among the passed ones; the summary does not.
    n = len(CTEST_SKIPPED.findall(text))
    return passed - n, failed, skipped + n


def gtest_counts(text):
    passed = sum(int(n) for n in GTEST_PASSED.findall(text))
    failed = sum(int(n) for n in GTEST_FAILED.findall(text))
    return passed, failed


def step_results(log_dir):
    """{log file name: "passed" or "failed"} from LOG_DIR/steps."""
    out = {}
    path = os.path.join(log_dir, "steps")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                result, _, log = line.strip().partition(" ")
                out[os.path.basename(log)] = result
    return out


def counts(log_dir):
    passed = failed = skipped = 0
    results = step_results(log_dir)
    for name in ("ctest.log", "sanitize.log", "gpu.log", "stopped"):
        path = os.path.join(log_dir, name)
        text = ""
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                text = f.read()
        elif name not in results:
            continue
        p, fl, s = ctest_counts(text)
        if name == "sanitize.log":
            # After the ASan ctest run: the TSan suites' GoogleTest cases, and the clang build.
            gp, gf = gtest_counts(text)
            p, fl = p + gp, fl + gf
            if "sanitize: all checks passed" in text:
                p += 1
        if fl == 0 and results.get(name) == "failed":
            fl = 1
        passed, failed, skipped = passed + p, failed + fl, skipped + s
    return passed, failed, skipped


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    passed, failed, skipped = counts(sys.argv[1])
    print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
