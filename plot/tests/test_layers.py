"""plot/'s layers (heapbench_plot/__init__.py, docs/development.md "Adding a plot tool"): every
import of the package runs down, reader <- figures <- tools, and no tool imports another; every
console script is a tool's main(); the files plot/<tool>.py only start a tool. Imports are read
with ast, those inside functions included."""
import ast
import importlib.util
import re
import sys
import tomllib

import pytest
from conftest import PLOT, ROOT

PACKAGE = PLOT / "heapbench_plot"
LAYERS = ("reader", "figures", "tools")
# What each layer may import of the package: its own layer and those below, a tool no other tool.
MAY_IMPORT = {"reader": {"reader"}, "figures": {"reader", "figures"}, "tools": {"reader", "figures"}}
# Tools with no console script, each with the reason (a new tool is a console script).
NOT_SCRIPTS = {
    "bench_scale": "a benchmark that writes docs/plot-scale.md, run as .venv/bin/python plot/bench_scale.py",
    "gate_power": "writes docs/gate-power*.md, run as .venv/bin/python plot/gate_power.py",
}


def modules():
    """{(layer, module name): path} of every module of the three layers."""
    return {(p.parent.name, p.stem): p for layer in LAYERS for p in sorted((PACKAGE / layer).glob("*.py"))
            if p.stem != "__init__"}


def package_imports(path):
    """[(line, the heapbench_plot module imported)] of every import of the package in path, at any depth.
    `from heapbench_plot.tools import figures` names heapbench_plot.tools.figures."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: a relative import (the package's imports name it in full)"
            if node.module and node.module.split(".")[0] == "heapbench_plot":
                for alias in node.names:
                    name = f"{node.module}.{alias.name}"
                    found.append((node.lineno, name if node.module.count(".") == 1 else node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "heapbench_plot"]
    return found


def layer_of(name):
    """(layer, module) of a dotted name heapbench_plot.<layer>.<module>; module is None for a layer itself."""
    parts = name.split(".")
    assert len(parts) >= 2 and parts[1] in LAYERS, f"{name}: not in a layer ({', '.join(LAYERS)})"
    return parts[1], parts[2] if len(parts) > 2 else None


def test_the_package_is_its_three_layers():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    assert not loose, f"modules outside reader/, figures/, tools/: {loose}"
    assert sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(LAYERS)


def violations(layer, module, path):
    """What the imports of heapbench_plot/<layer>/<module>.py (read from `path`) break of the layers."""
    found = []
    for line, name in package_imports(path):
        to_layer, to_module = layer_of(name)
        where = f"heapbench_plot/{layer}/{module}.py:{line} imports {name}"
        if to_module is None:
            found.append(f"{where}: import the module, not the layer")
        elif layer == "tools" and to_layer == "tools":
            found.append(f"{where}: a tool imports reader/ and figures/ only, never another tool")
        elif to_layer not in MAY_IMPORT[layer]:
            found.append(f"{where}: {layer}/ imports {', '.join(sorted(MAY_IMPORT[layer]))} only")
    return found


@pytest.mark.parametrize("key", sorted(modules()), ids=lambda k: "/".join(k))
def test_imports_run_down_and_no_tool_imports_another(key):
    assert violations(*key, modules()[key]) == []


@pytest.mark.parametrize("layer, text", [
    ("tools", "from heapbench_plot.tools import compare\n"),
    ("tools", "def f():\n    from heapbench_plot.tools.compare import main\n"),
    ("figures", "import heapbench_plot.tools.page\n"),
    ("reader", "from heapbench_plot.figures.style import api_label\n"),
    ("tools", "from heapbench_plot import figures\n"),
])
def test_an_import_against_the_layers_is_found(layer, text, tmp_path):
    path = tmp_path / "planted.py"
    path.write_text(text)
    try:
        found = violations(layer, "planted", path)
    except AssertionError as e:  # not in a layer at all
        found = [str(e)]
    assert found, text


@pytest.mark.parametrize("key", sorted(modules()), ids=lambda k: "/".join(k))
def test_an_import_inside_a_function_says_why_it_is_not_at_the_top(key):
    # Imports sit at a module's top, where its dependencies can be read at a glance; one inside a
    # function (a heavy import the module's other callers never need) says why in a comment on its
    # line or on the comment lines just above it (or above the imports it follows).
    path = modules()[key]
    lines = path.read_text().splitlines()
    tree = ast.parse("\n".join(lines))
    top = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
            k = node.lineno - 1
            while "#" not in lines[k] and k > 0 and lines[k - 1].strip().startswith(("import ", "from ")):
                k -= 1
            said = "#" in lines[k] or lines[k - 1].strip().startswith("#")
            assert said, f"{path.relative_to(PLOT)}:{node.lineno}: {lines[node.lineno - 1].strip()}: move it to the top"


def test_every_console_script_is_a_tool_and_every_tool_a_console_script():
    scripts = tomllib.loads((PLOT / "pyproject.toml").read_text())["project"]["scripts"]
    targets = {}
    for name, target in scripts.items():
        module, _, func = target.partition(":")
        layer, tool = layer_of(module)
        assert (layer, func) == ("tools", "main"), f"{name} = {target}: a console script is heapbench_plot.tools.<tool>:main"
        targets[tool] = name
    tools = {m for layer, m in modules() if layer == "tools"}
    assert tools - set(targets) == set(NOT_SCRIPTS), "a tool without a console script, or one listed that has one"


def launcher_text(tool):
    return (f'"""`.venv/bin/python plot/{tool}.py` runs heapbench_plot/tools/{tool}.py, as before the tools moved\n'
            f'there: commands recorded with this path still run (plot/tests/test_layers.py keeps each such file\n'
            f'to these lines)."""\nimport sys\n\nfrom heapbench_plot.tools.{tool} import main\n\n'
            f'if __name__ == "__main__":\n    sys.exit(main())\n')


@pytest.mark.parametrize("path", sorted(PLOT.glob("*.py")), ids=lambda p: p.name)
def test_a_file_in_plot_only_starts_the_tool_of_its_name(path):
    assert (PACKAGE / "tools" / path.name).exists(), f"plot/{path.name}: no tool heapbench_plot/tools/{path.name}"
    assert path.read_text() == launcher_text(path.stem)


def section(title):
    text = (ROOT / "docs" / "development.md").read_text()
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_figure_recipe_names_modules_and_functions_that_exist():
    text = section("Adding a figure")
    named = re.findall(r"`((?:reader|figures|tools)/\w+\.py)`(?:'s\s+`(\w+)`)?", text)
    assert named
    for path, function in named:
        assert (PACKAGE / path).exists(), f"Adding a figure names {path}"
        if function:
            assert re.search(rf"^def {function}\(", (PACKAGE / path).read_text(), re.M), f"{path}'s {function}"


def test_the_tool_recipe_lists_every_module_of_reader_and_figures():
    bullets = dict(re.findall(r"^- `(reader|figures|tools)/`:(.*?)(?=^- |^\n)", section("Adding a plot tool"),
                              re.M | re.S))
    assert set(bullets) == set(LAYERS)
    for layer in ("reader", "figures"):
        assert set(re.findall(r"`(\w+)\.py`", bullets[layer])) == {m for lay, m in modules() if lay == layer}, layer


def recipe():
    """docs/development.md's "Adding a plot tool": (the files it names, its code blocks as (language, text))."""
    section_text = section("Adding a plot tool")
    return (re.findall(r"^\d\. `([^`]+)`", section_text, re.M),
            re.findall(r"^```(\w+)\n(.*?)^```", section_text, re.M | re.S))


def test_the_recipe_builds_a_tool_of_three_files(tmp_path, monkeypatch, capsys):
    files, blocks = recipe()
    (tool_file, script_file, test_file) = files
    (module_text, test_text), (script,) = ([b for lang, b in blocks if lang == k] for k in ("python", "toml"))
    stem = re.fullmatch(r"plot/heapbench_plot/tools/(\w+)\.py", tool_file)[1]
    assert (script_file, test_file) == ("plot/pyproject.toml", f"plot/tests/test_{stem}.py")
    assert not (PACKAGE / "tools" / f"{stem}.py").exists(), "the recipe's example is a tool of its own: rename it"
    # The console script's line names the tool's main, as every other line of [project.scripts].
    (name, target), = tomllib.loads(script).items()
    assert target == f"heapbench_plot.tools.{stem}:main" and name.startswith("heapbench-")
    # The module keeps the layers and runs; the recipe's test passes against it.
    path = tmp_path / f"{stem}.py"
    path.write_text(module_text)
    assert violations("tools", stem, path) == []
    spec = importlib.util.spec_from_file_location(f"heapbench_plot.tools.{stem}", path)
    tool = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, tool)
    spec.loader.exec_module(tool)
    with pytest.raises(SystemExit) as e:
        tool.main(["--help"])
    assert e.value.code == 0 and "usage:" in capsys.readouterr().out
    scope = {}
    exec(compile(test_text, test_file, "exec"), scope)
    tests = [f for n, f in scope.items() if n.startswith("test_")]
    assert tests
    for test in tests:
        test(capsys)
