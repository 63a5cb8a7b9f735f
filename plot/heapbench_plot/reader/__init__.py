"""The reader layer (heapbench_plot/__init__.py): results files read and checked, the tables
several tools share, files written. Imports nothing else of heapbench_plot."""
