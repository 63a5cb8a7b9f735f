"""`.venv/bin/python plot/survey.py` runs heapbench_plot/tools/survey.py, as before the tools moved
there: commands recorded with this path still run (plot/tests/test_layers.py keeps each such file
to these lines)."""
import sys

from heapbench_plot.tools.survey import main

if __name__ == "__main__":
    sys.exit(main())
