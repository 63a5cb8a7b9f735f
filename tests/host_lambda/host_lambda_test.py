"""heapbench_host_lambda runs on the CPU: every case runs and reports a rate, in
Google Benchmark's JSON. No timing is asserted (performance lives in results/).

usage: host_lambda_test.py PATH/TO/heapbench_host_lambda
"""
import json
import os
import subprocess
import sys
import tempfile

EXPECTED = {f"host_lambda/{kind}/{n}" for kind in ("plain", "host_device", "function_pointer", "std_function")
            for n in (1024, 1048576)}


def main():
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        r = subprocess.run([sys.argv[1], "--benchmark_min_time=0.001", f"--benchmark_out={out}",
                            "--benchmark_out_format=json"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        with open(out) as f:
            runs = {b["name"]: b for b in json.load(f)["benchmarks"]}
    assert set(runs) == EXPECTED, sorted(runs)
    for name, b in runs.items():
        assert not b.get("error_occurred"), name
        assert b["calls_per_s"] > 0, b
    print(f"{len(runs)} host lambda cases checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
