"""heapbench's command line has one CLI::App tree (issue 54, item 3): the root
in bench/app.cpp (CommandTree), the run's flags at its root, each subcommand's
app below it, and Google Benchmark's flags whose values heapbench checks among
the root's options (add_benchmark_flags). No other code in src/ or bench/
makes a CLI::App of its own to parse or to print help: a second app is a
second parser whose help can drift from what the first one takes. The host
tests build one command's part alone (tests/host/parse_alone.hpp); they are
not looked at here.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A CLI::App made: a variable or member of that type, braced or not, or one
# made on the heap. References, pointers and subcommands (add_subcommand) are not.
MADE = re.compile(r"CLI::App(\s+\w+\s*(\{[^}]*\})?\s*;|\s*\{|\s*\(|>\s*\()|make_(unique|shared)<CLI::App>")


def made_apps(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if MADE.search(line) and not line.strip().startswith("//")]


def sources():
    for folder in ("src", "bench"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in {".cpp", ".hpp", ".cu", ".cuh", ".h"}:
                yield path


def test_the_program_makes_one_cli_app():
    found = []
    for path in sources():
        found += [f"{path.relative_to(ROOT)}: {line}" for line in made_apps(path.read_text(encoding="utf-8"))]
    assert found == ["bench/app.cpp: CLI::App root_;"], "CLI::App made outside heapbench's one tree:\n" + "\n".join(found)


def test_the_check_sees_what_it_looks_for():
    # What src/ held before: the run's, advise's, check's and Google Benchmark's own apps.
    assert made_apps("  CLI::App app;")
    assert made_apps('  CLI::App app{"Google Benchmark\'s flags that heapbench checks"};')
    assert made_apps("  auto a = std::make_unique<CLI::App>();")
    assert not made_apps("void build(CLI::App& app);")
    assert not made_apps("  CLI::App* app = root_.add_subcommand(s->name);")
    assert not made_apps("std::variant<Plan, int> plan_run(const CLI::App& app, const RunCommandLine& run);")
    assert len(list(sources())) > 50
