"""`.venv/bin/python plot/figures.py` runs heapbench_plot/tools/figures.py, as before the tools moved
there: commands recorded with this path still run (plot/tests/test_layers.py keeps each such file
to these lines)."""
import sys

from heapbench_plot.tools.figures import main

if __name__ == "__main__":
    sys.exit(main())
