"""`.venv/bin/python plot/bench_scale.py` runs heapbench_plot/tools/bench_scale.py, as before the tools moved
there: commands recorded with this path still run (plot/tests/test_layers.py keeps each such file
to these lines)."""
import sys

from heapbench_plot.tools.bench_scale import main

if __name__ == "__main__":
    sys.exit(main())
