"""`.venv/bin/python plot/export.py` runs heapbench_plot/tools/export.py, as before the tools moved
there: commands recorded with this path still run (plot/tests/test_layers.py keeps each such file
to these lines)."""
import sys

from heapbench_plot.tools.export import main

if __name__ == "__main__":
    sys.exit(main())
