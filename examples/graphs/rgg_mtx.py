#!/usr/bin/env python3
"""A random geometric graph as a Matrix Market file, for `heapbench --graph=FILE.mtx`.

2^SCALE points drawn uniformly in the unit square (numpy, seeded), an edge between
every two closer than 0.55 * sqrt(ln n / n): the rule of the 10th DIMACS
Implementation Challenge's rgg_n_2_* graphs, whose degrees are near-uniform
(about 12 per vertex), unlike R-MAT's hubs. Written as a symmetric pattern matrix,
through a temporary file and a rename.

  .venv/bin/python examples/graphs/rgg_mtx.py 18 rgg_n_2_18.mtx     # 262,144 vertices, about 20 MB
  build/heapbench --patterns=graph --graph=rgg_n_2_18.mtx --heaps=4G --benchmark_out=graph-mtx.json
"""
import argparse
import os
import sys
import tempfile

import numpy as np
from scipy.spatial import cKDTree


def write_rgg(scale: int, path: str, seed: int) -> int:
    n = 1 << scale
    points = np.random.default_rng(seed).random((n, 2))
    pairs = cKDTree(points).query_pairs(0.55 * np.sqrt(np.log(n) / n), output_type="ndarray")
    lower = np.column_stack([pairs.max(axis=1), pairs.min(axis=1)]) + 1  # one-based, below the diagonal
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".rgg-", suffix=".mtx")
    try:
        with os.fdopen(fd, "w") as f:
            f.write("%%MatrixMarket matrix coordinate pattern symmetric\n")
            f.write(f"% random geometric graph: 2^{scale} points, radius 0.55*sqrt(ln n/n), numpy seed {seed}\n")
            f.write(f"{n} {n} {len(lower)}\n")
            np.savetxt(f, lower, fmt="%d")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return len(lower)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, as heapbench's tools say it
        self.exit(2, f"rgg_mtx: {message} (rgg_mtx.py --help)\n")


def main(argv=None) -> int:
    ap = _Parser(description=__doc__.splitlines()[0])
    ap.add_argument("scale", type=int, help="log2 of the vertices, 4 to 24")
    ap.add_argument("out", help="the .mtx file to write")
    ap.add_argument("--seed", type=int, default=20261202, help="numpy's seed (default: the one of results/H200/workloads)")
    args = ap.parse_args(argv)
    if not 4 <= args.scale <= 24:
        ap.error(f"scale {args.scale}: 4 to 24")
    try:
        edges = write_rgg(args.scale, args.out, args.seed)
    except OSError as e:
        print(f"rgg_mtx: {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    print(f"{args.out}: {1 << args.scale} vertices, {edges} undirected edges")
    return 0


if __name__ == "__main__":
    sys.exit(main())
