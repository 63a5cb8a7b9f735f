"""Import the PPoPP'21 GPU allocator survey's published results into heapbench results files.

usage: heapbench-import-survey SURVEY_RESULTS_DIR -o OUTDIR [--gpu NAME] [--sizes pow2|all|LIST]

What the survey's files hold and how they become entries: heapbench_plot/reader/survey_import.py.
"""
from __future__ import annotations

import re
import sys

from heapbench_plot.reader.heapbench_results import finish
from heapbench_plot.reader.survey_import import SurveyError, import_survey, parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.sizes not in ("pow2", "all") and not re.fullmatch(r"\d+(,\d+)*", args.sizes):
        print(f"heapbench-import-survey: --sizes {args.sizes!r} is not pow2, all or a list of bytes", file=sys.stderr)
        return 2
    return finish("heapbench-import-survey", lambda: import_survey(args.results, args.out, args), args.out,
                  (SurveyError, OSError))


if __name__ == "__main__":
    sys.exit(main())
