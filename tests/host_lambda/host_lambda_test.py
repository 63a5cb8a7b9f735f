"""heapbench_host_lambda runs on the CPU: every case runs and reports a rate, in
Google Benchmark's JSON. No timing is asserted (performance lives in results/).

usage: host_lambda_test.py PATH/TO/heapbench_host_lambda
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import run_results, script_args  # noqa: E402

EXPECTED = {f"host_lambda/{kind}/{n}" for kind in ("plain", "host_device", "function_pointer", "std_function")
            for n in (1024, 1048576)}


def main():
    _, doc = run_results(script_args().binary, "--benchmark_min_time=0.001", "--benchmark_out_format=json")
    runs = {b["name"]: b for b in doc["benchmarks"]}
    assert set(runs) == EXPECTED, sorted(runs)
    for name, b in runs.items():
        assert not b.get("error_occurred"), name
        assert b["calls_per_s"] > 0, b
    print(f"{len(runs)} host lambda cases checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
