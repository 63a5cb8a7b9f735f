"""`.venv/bin/python plot/apps.py` runs heapbench_plot/tools/apps.py, as before the tools moved
there: commands recorded with this path still run (plot/tests/test_layers.py keeps each such file
to these lines)."""
import sys

from heapbench_plot.tools.apps import main

if __name__ == "__main__":
    sys.exit(main())
