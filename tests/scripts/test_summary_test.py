"""scripts/test_summary.py: the count on the last line of `make test`, and why each failed test
failed, read from logs shaped as ctest, unittest and GoogleTest print them.

Run with the system Python: `python3 -m unittest -v test_summary_test` from this directory."""
import os
import sys
import tempfile
import unittest

ROOT = os.environ.get("DISTTRAIN_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import test_summary  # noqa: E402

CTEST_LOG = """\
      Start 900: e2e_lifecycle
      Start 902: e2e_real_node
900/925 Test #900: e2e_lifecycle ....................   Passed  100.00 sec
902/925 Test #902: e2e_real_node ....................***Failed  507.12 sec
test_a (realnode_test.RealNodeTest.test_a) ... ok
test_b (realnode_test.RealNodeTest.test_b) ... FAIL
test_c (realnode_test.RealNodeTest.test_c) ... ERROR

======================================================================
ERROR: test_c (realnode_test.RealNodeTest.test_c)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "realnode_test.py", line 190, in test_c
    wait_until("the job to succeed", ...)
  File "kube.py", line 40, in wait_until
    raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
TimeoutError: timed out after 600 s waiting for the job to succeed

======================================================================
FAIL: test_b (realnode_test.RealNodeTest.test_b)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "realnode_test.py", line 12, in test_b
    self.assertEqual(1, 0, "the chief's exit code")
AssertionError: 1 != 0 : the chief's exit code

----------------------------------------------------------------------
Ran 3 tests in 500.000s

FAILED (failures=1, errors=1)

      Start 903: operator_api_test
903/925 Test #903: operator_api_test ................***Failed    1.00 sec
[==========] Running 2 tests from 1 test suite.
[  FAILED  ] QueueReason.Names
[==========] 2 tests ran.
[  PASSED  ] 1 test.
[  FAILED  ] 1 test, listed below:
[  FAILED  ] QueueReason.Names

 1 FAILED TEST
904/925 Test #904: e2e_scale ........................***Timeout 900.01 sec
test_a (scale_test.ScaleTest.test_a) ... ok

96% tests passed, 3 tests failed out of 925

The following tests FAILED:
\t902 - e2e_real_node (Failed)
\t903 - operator_api_test (Failed)
\t904 - e2e_scale (Timeout)
Errors while running CTest
"""


class FailuresTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="test-summary-")
        with open(os.path.join(self.dir, "ctest.log"), "w") as f:
            f.write(CTEST_LOG)

    def test_each_failed_test_says_which_cases_failed_and_why(self):
        self.assertEqual(test_summary.failures(self.dir), [
            "  e2e_real_node: ERROR test_c: TimeoutError: timed out after 600 s waiting for the job to succeed",
            "  e2e_real_node: FAIL test_b: AssertionError: 1 != 0 : the chief's exit code",
            "  operator_api_test: FAILED QueueReason.Names",
            "  e2e_scale: ran past its ctest timeout",
        ])

    def test_a_failure_without_cases_shows_its_last_line(self):
        self.assertEqual(test_summary.reasons("Failed", "starting\nkubectl: connection refused\n"),
                         ["Failed; its last line: kubectl: connection refused"])

    def test_many_cases_and_long_lines_are_cut(self):
        out = "".join(f"FAIL: t{i} (m.C.t{i})\n---\nAssertionError: {'x' * 500}\n\n" for i in range(6))
        lines = test_summary.reasons("Failed", out)
        self.assertEqual(len(lines), test_summary.MAX_CASES + 1)
        self.assertEqual(lines[-1], "... and 2 more")
        self.assertTrue(all(len(l) <= test_summary.MAX_WIDTH for l in lines))

    def test_a_run_without_failures_says_nothing(self):
        with open(os.path.join(self.dir, "ctest.log"), "w") as f:
            f.write("100% tests passed, 0 tests failed out of 3\n")
        self.assertEqual(test_summary.failures(self.dir), [])


class CountsTest(unittest.TestCase):
    def test_counts_every_ctest_test_and_skips_apart(self):
        d = tempfile.mkdtemp(prefix="test-summary-")
        with open(os.path.join(d, "ctest.log"), "w") as f:
            f.write(CTEST_LOG)
        with open(os.path.join(d, "gpu.log"), "w") as f:
            f.write("100% tests passed, 0 tests failed out of 1\n"
                    "The following tests did not run:\n\t 68 - cuda_kernels (Skipped)\n")
        with open(os.path.join(d, "steps"), "w") as f:
            f.write(f"failed {d}/ctest.log\npassed {d}/gpu.log\n")
        self.assertEqual(test_summary.counts(d), (922, 3, 1))


if __name__ == "__main__":
    unittest.main()
