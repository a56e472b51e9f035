"""Fault injection between the operator and the API server (fault_harness.py): with 100
jobs running through latency spikes, connection resets, black-holed and stalled connections, an
API-server restart with a forced 410 and five SIGKILLs of the operator, every job ends in the
right state, no pod is created twice without cause, no parameter server is left, and the
operator's requests stay bounded."""
import json
import unittest

from fault_harness import run_faults

# A retry storm would be thousands per job; a healthy run makes about 20-30 per job (pod,
# Service, status and event writes, deletes, watches and lists after each restart).
MAX_REQUESTS_PER_JOB = 100


class FaultInjectionTest(unittest.TestCase):
    def test_every_job_ends_right_through_network_faults_and_operator_kills(self):
        result = run_faults(jobs=100)
        print(json.dumps(result))
        self.assertEqual(result["wrong_terminal_state"], [])
        self.assertEqual(result["duplicate_pods"], [])
        self.assertEqual(result["operator_kills"], 5)
        self.assertLessEqual(result["requests_per_job"], MAX_REQUESTS_PER_JOB)
        self.assertEqual(result["operator_exit_code"], 0)


if __name__ == "__main__":
    unittest.main()
