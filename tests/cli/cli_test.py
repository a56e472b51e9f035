"""Command-line contract of the built binaries: --help, --version and exit codes."""
import os
import subprocess
import unittest

BIN = os.environ.get("DISTTRAIN_BIN", os.path.join(os.path.dirname(__file__), "../../build/bin"))
BINARIES = ["disttrain-operator", "disttrain-trainer"]


def run(binary, *args):
    return subprocess.run([os.path.join(BIN, binary), *args], capture_output=True, text=True,
                          timeout=30)


class CliTest(unittest.TestCase):
    def test_help_exits_zero_and_documents_flags(self):
        for binary in BINARIES:
            with self.subTest(binary=binary):
                r = run(binary, "--help")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(f"Usage: {binary}", r.stdout)
                self.assertIn("--version", r.stdout)

    def test_version_prints_the_release(self):
        for binary in BINARIES:
            with self.subTest(binary=binary):
                r = run(binary, "--version")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertRegex(r.stdout, rf"^{binary} \d+\.\d+\.\d+\n$")

    def test_unknown_flag_exits_2_and_names_it(self):
        for binary in BINARIES:
            with self.subTest(binary=binary):
                r = run(binary, "--no-such-flag")
                self.assertEqual(r.returncode, 2)
                self.assertIn("unknown flag --no-such-flag", r.stderr)


if __name__ == "__main__":
    unittest.main()
