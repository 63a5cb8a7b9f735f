"""A script of scripts/ (a file with no .py) loaded as a module, for the tests that call its functions."""
import importlib.machinery
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_script(name: str, module: str):
    """scripts/<name> as the module `module`, registered in sys.modules (dataclasses look their module up there)."""
    loader = importlib.machinery.SourceFileLoader(module, str(ROOT / "scripts" / name))
    spec = importlib.util.spec_from_loader(module, loader)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    loader.exec_module(mod)
    return mod
