"""`.venv/bin/python plot/survey_workloads.py` runs heapbench_plot/tools/survey_workloads.py, as before the tools moved
there: commands recorded with this path still run (plot/tests/test_layers.py keeps each such file
to these lines)."""
import sys

from heapbench_plot.tools.survey_workloads import main

if __name__ == "__main__":
    sys.exit(main())
