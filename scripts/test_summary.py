#!/usr/bin/env python3
"""The last line of `make test` (scripts/test.sh): every test of the run in one count,

    tests: N passed, M failed, K skipped

read from the logs the run's steps left in LOG_DIR: ctest's (every ctest test: unit, trainer
processes, cluster suites), the sanitizers' (each ASan+UBSan ctest case, each TSan GoogleTest
case, and the clang -Wthread-safety build as one check) and the gpu tests' (ctest). A ctest test
that did not run (exit 77: no real node, no GPU) is skipped, never passed. LOG_DIR/steps says how
each step ended ("passed PATH" or "failed PATH"); a step that failed although its log shows no
failure (it crashed, a build broke, or a signal stopped it) counts as one failure.

With --failures, it prints instead why each failed ctest test of LOG_DIR/ctest.log failed, a few
lines a test, for a reader who sees only the tail of a CI log: the failed Python test cases with
their exception's line, the failed GoogleTest cases, or the timeout.

    scripts/test_summary.py [--failures] LOG_DIR
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


CTEST_FAILED_LIST = re.compile(r"^The following tests FAILED:\n((?:\s+\d+ - .*\n?)+)", re.M)
CTEST_RESULT = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\**(\w+)", re.M)
CTEST_NEXT = re.compile(r"^\s*(\d+/\d+ Test\s+#\d+:|Start\s+\d+:|\d+% tests passed)", re.M)
UNITTEST_CASE = re.compile(r"^(FAIL|ERROR): (\S+)", re.M)
EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failure)\b.*$")
GTEST_CASE = re.compile(r"^\[  FAILED  \] (\S+\.\S+)(?! tests?, listed)", re.M)
MAX_CASES, MAX_WIDTH = 4, 240


def failed_tests(text):
    """The names ctest lists under "The following tests FAILED:", in its order."""
    names = []
    for block in CTEST_FAILED_LIST.findall(text):
        for line in block.splitlines():
            m = re.match(r"\s+\d+ - (\S+)", line)
            if m and m.group(1) not in names:
                names.append(m.group(1))
    return names


def output_of(text, name):
    """(result, output) of ctest test `name` in a --output-on-failure log: the result word
    (Failed, Timeout, ...) and the lines ctest printed after its result line."""
    for m in CTEST_RESULT.finditer(text):
        if m.group(1) == name:
            rest = text[m.end():]
            nxt = CTEST_NEXT.search(rest, rest.find("\n") + 1)
            return m.group(2), rest[:nxt.start() if nxt else len(rest)]
    return "", ""


def reasons(result, output):
    """A few lines saying why a test failed, from its output."""
    lines = []
    for m in UNITTEST_CASE.finditer(output):
        # The exception's line: the last one of the traceback that names one.
        body = re.split(r"^(?:=+|-+)$", output[m.end():], maxsplit=2, flags=re.M)
        trace = body[1] if len(body) > 1 else ""
        exc = [l for l in trace.splitlines() if EXCEPTION.match(l)]
        lines.append(f"{m.group(1)} {m.group(2)}" + (f": {exc[-1].strip()}" if exc else ""))
    lines += [f"FAILED {c}" for c in dict.fromkeys(GTEST_CASE.findall(output))]
    if result == "Timeout":
        lines.append("ran past its ctest timeout")
    if not lines:
        tail = [l.strip() for l in output.splitlines() if l.strip()]
        lines.append(f"{result or 'failed'}; its last line: {tail[-1]}" if tail else result or "failed")
    more = len(lines) - MAX_CASES
    lines = lines[:MAX_CASES] + ([f"... and {more} more"] if more > 0 else [])
    return [l if len(l) <= MAX_WIDTH else l[:MAX_WIDTH - 3] + "..." for l in lines]


def failures(log_dir):
    path = os.path.join(log_dir, "ctest.log")
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        text = f.read()
    out = []
    for name in failed_tests(text):
        out += [f"  {name}: {line}" for line in reasons(*output_of(text, name))]
    return out


def main():
    args = sys.argv[1:]
    if args[:1] == ["--failures"] and len(args) == 2:
        for line in failures(args[1]):
            print(line)
        return 0
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    passed, failed, skipped = counts(args[0])
    print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
