"""The `>>>` examples in the package's docstrings run and print what they say (doctest), so documented
examples cannot drift from the code."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _modules_with_examples() -> list[str]:
    found = []
    for path in sorted([*ROOT.joinpath("masc_ui").rglob("*.py"), *ROOT.joinpath("storage").rglob("*.py")]):
        if ">>> " in path.read_text():
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


MODULES = _modules_with_examples()


def test_the_package_has_examples():
    assert len(MODULES) >= 5, MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (output above)"
