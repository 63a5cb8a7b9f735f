"""heapbench's plotting tools (plot/), installed as the package heapbench_plot: see
docs/plots.md, and docs/development.md for its layers. Imports run one way:

- reader/: reads and checks results files and computes the tables several tools share;
  writes files (through a temporary name and a rename). Imports nothing else of the package.
- figures/: the one figure style, the readability checks, and the drawings several tools
  share. Imports reader/ only.
- tools/: one module a command-line tool (a main()), named in pyproject.toml's
  [project.scripts]. Imports reader/ and figures/, never another tool.

plot/tests/test_layers.py holds these rules."""
