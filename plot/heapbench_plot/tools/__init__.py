"""The tools (heapbench_plot/__init__.py): one module a command-line tool, its main() named in
pyproject.toml's [project.scripts]. A tool imports reader/ and figures/, never another tool."""
