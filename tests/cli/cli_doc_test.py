"""docs/cli.md keeps up with the binary: every flag that `heapbench --help`
shows (heapbench's own, Google Benchmark's passed on and refused) has a
heading there, every subcommand a section, and every flag of a subcommand's
--help a heading in that section. A flag added without its paragraph fails.

usage: cli_doc_test.py PATH/TO/heapbench PATH/TO/REPOSITORY
"""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from heapbench_run import run  # noqa: E402

BINARY = None
ROOT = None
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9_-]*|-h)(?![\w-])")


def flags_in(help_text):
    """The flags a --help names at the start of its lines (not those its prose mentions)."""
    out = []
    for line in help_text.splitlines():
        m = re.match(r"\s+((?:-h,)?--[a-z][a-z0-9_-]*|-h)", line)
        if m:
            out += m.group(1).split(",")
    return out


def sections(doc):
    """docs/cli.md's '## ' sections: title -> the flags its '### ' headings name."""
    out, current = {}, None
    for line in doc.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = set()
        elif line.startswith("### ") and current is not None:
            out[current] |= set(FLAG.findall(line))
    return out


class CliDoc(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(ROOT, "docs", "cli.md")) as f:
            cls.doc = f.read()
        cls.sections = sections(cls.doc)
        cls.help = run(BINARY, "--help").stdout

    def test_every_flag_of_heapbench_help_has_a_heading(self):
        flags = flags_in(self.help)
        self.assertIn("--sizes", flags)
        self.assertIn("--benchmark_filter", flags)
        self.assertIn("--benchmark_min_time", flags, "refused flags are listed too")
        documented = set().union(*(f for title, f in self.sections.items() if not title.startswith("heapbench ")))
        missing = [f for f in flags if f not in documented]
        self.assertEqual(missing, [], "flags in --help without a '### `--flag`' heading in docs/cli.md")

    def test_every_subcommand_has_a_section_with_its_flags(self):
        subcommands = re.findall(r"(?m)^  ([a-z][a-z-]*) {2,}\S", self.help.split("Subcommands:")[1].split("\n\n")[0])
        self.assertIn("advise", subcommands)
        for name in subcommands:
            with self.subTest(subcommand=name):
                section = self.sections.get(f"heapbench {name}")
                self.assertIsNotNone(section, f"no '## heapbench {name}' section")
                r = run(BINARY, name, "--help")
                self.assertEqual(r.returncode, 0, r.stderr)
                flags = flags_in(r.stdout)
                self.assertIn("--help", flags)
                self.assertEqual([f for f in flags if f not in section and f != "-h"], [])

    def test_the_exit_codes_are_the_programs(self):
        with open(os.path.join(ROOT, "src", "orchestrate", "exit_codes.hpp")) as f:
            codes = sorted({int(v) for v in re.findall(r"\bkExit\w+ = (\d+),", f.read())})
        table = re.findall(r"(?m)^\| (\d+) \|", self.doc.split("## Exit codes")[1].split("\n## ")[0])
        self.assertEqual([int(c) for c in table], codes)


if __name__ == "__main__":
    BINARY = os.path.abspath(sys.argv.pop(1))
    ROOT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
