"""`.venv/bin/python plot/page.py` runs heapbench_plot/tools/page.py, as before the tools moved
there: commands recorded with this path still run (plot/tests/test_layers.py keeps each such file
to these lines)."""
import sys

from heapbench_plot.tools.page import main

if __name__ == "__main__":
    sys.exit(main())
