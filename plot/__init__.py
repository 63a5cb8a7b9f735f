"""heapbench's plotting tools (plot/), installed as the package heapbench_plot: see
docs/plots.md. Each module is also a script (`.venv/bin/python plot/<tool>.py`) and
imports its neighbours by their flat names (`import style`), so the package puts its
own folder on the path."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
