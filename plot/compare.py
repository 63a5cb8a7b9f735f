"""`.venv/bin/python plot/compare.py` runs heapbench_plot/tools/compare.py, as before the tools moved
there: commands recorded with this path still run (plot/tests/test_layers.py keeps each such file
to these lines)."""
import sys

from heapbench_plot.tools.compare import main

if __name__ == "__main__":
    sys.exit(main())
