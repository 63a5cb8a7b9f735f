"""`.venv/bin/python plot/report.py` runs heapbench_plot/tools/report.py, as before the tools moved
there: commands recorded with this path still run (plot/tests/test_layers.py keeps each such file
to these lines)."""
import sys

from heapbench_plot.tools.report import main

if __name__ == "__main__":
    sys.exit(main())
