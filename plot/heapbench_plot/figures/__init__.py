"""The figures layer (heapbench_plot/__init__.py): the one figure style, the readability checks
every figure passes as it is saved, and the drawings several tools share. Imports reader/ only."""
