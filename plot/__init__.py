"""heapbench's plotting tools (plot/), installed as the package heapbench_plot: see
docs/plots.md. Each module is also a script (`.venv/bin/python plot/<tool>.py`) and
imports its neighbours as `heapbench_plot.<module>`, which the editable install
(scripts/setup) resolves to this folder, so no module puts plot/ on sys.path."""
