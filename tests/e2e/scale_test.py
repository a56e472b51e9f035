"""100 jobs of 7 pods applied at once all reach Succeeded, and no parameter server is left."""
import unittest

from scale_harness import run_scale


class ScaleTest(unittest.TestCase):
    def test_hundred_jobs_of_seven_pods_all_succeed(self):
        result = run_scale(jobs=100)
        print(result)
        self.assertEqual(result["ps_pods_left"], 0)
        self.assertEqual(result["ps_teardown_samples"], 200)
        self.assertEqual(result["operator_exit_code"], 0)


if __name__ == "__main__":
    unittest.main()
