"""The documentation site builds strictly, its generated pages hold every command, setting and metric, and the
README stays a front door (short, the two commands, no development journal)."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
INSTALL_AND_RUN = "pip install -r requirements.txt -e . && python app.py"
TEST_COMMAND = "pip install -q -r requirements-dev.txt -e . && python -m pytest"
COMMIT_HASH = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", re.I)
"""A word of 7-40 hex digits with at least one digit and one letter: what a commit name looks like."""
NOT_SETTINGS = {"MASC_TEST_POSTGRES_URL", "MASC_REQUIRE_E2E", "MASC_REQUIRE_POSTGRES"}
"""`MASC_*` variables the docs may name that the test suite reads, not `Settings`."""


def _load_hooks():
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "hooks" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def hooks():
    return _load_hooks()


def _page(hooks, relative: str) -> str:
    """A docs page as the build renders its Markdown: generation markers replaced."""
    return hooks.expand((DOCS / relative).read_text(encoding="utf-8"))


def _markdown_files() -> list[Path]:
    return [README, ROOT / "CHANGELOG.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]


def _subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """Every (nested) subcommand path of `parser`, with its parser; read from argparse itself, not the hook."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _subcommands(sub, (*path, name))


@pytest.mark.slow
def test_the_site_builds_strictly_with_the_generated_pages(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    cli = (tmp_path / "site" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "masc-ui db" in cli and "generated:" not in cli
    masc = (tmp_path / "site" / "metrics" / "masc" / "index.html").read_text(encoding="utf-8")
    assert 'id="metric-cp"' in masc
    api = (tmp_path / "site" / "api" / "metrics" / "index.html").read_text(encoding="utf-8")
    assert "score_many" in api  # mkdocstrings rendered the MaSC engine's docstrings


def test_every_cli_command_has_its_place_on_the_cli_page(hooks):
    from masc_ui.cli import build_parser

    page = _page(hooks, "cli.md")
    commands = list(_subcommands(build_parser()))
    assert commands
    missing = [" ".join(path) for path, _ in commands if f"### `masc-ui {' '.join(path)}`" not in page]
    assert not missing, f"commands without a section on the CLI page: {missing}"
    forms = [
        f"masc-ui {' '.join(path)} {choice}"
        for path, sub in commands
        for action in sub._actions
        if not action.option_strings and action.choices and not isinstance(action, argparse._SubParsersAction)
        for choice in action.choices
    ]
    assert "masc-ui db check" in forms
    assert not [form for form in forms if f"`{form}`" not in page], "command forms missing from the CLI page"
    options = [
        (path, option)
        for path, sub in commands
        for action in sub._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    ]
    assert not [o for o in options if f"`{o[1]}" not in page], "options missing from the CLI page"


def test_every_setting_and_its_variable_has_its_place_on_the_settings_page(hooks):
    from masc_ui.settings import ENV, Settings

    page = _page(hooks, "settings.md")
    for field in dataclasses.fields(Settings):
        row = next((line for line in page.splitlines() if f'id="setting-{field.name}"' in line), None)
        assert row is not None, f"setting {field.name} has no row on the settings page"
        assert f"`{ENV[field.name]}`" in row, f"setting {field.name}: its variable {ENV[field.name]} is not in its row"
        meaning = row.strip().strip("|").split(" | ")[-1].strip()
        assert meaning, f"setting {field.name} has no attribute docstring to say what it means"
    assert "`DATABASE_URL`" in page and "`SPACE_ID`" in page


def test_every_registered_metric_has_its_place_on_its_family_page(hooks):
    from masc_ui.metrics.base import FAMILIES
    from masc_ui.metrics.registry import list_metrics

    specs = list_metrics(None)
    assert {s.media for s in specs} == {"image", "video"}
    pages = {family: _page(hooks, f"metrics/{family}.md") for family in FAMILIES}
    misplaced = [s.name for s in specs if f'id="metric-{s.name}"' not in pages[s.family]]
    assert not misplaced, f"metrics missing from their family's page: {misplaced}"
    overview = _page(hooks, "metrics/index.md")
    assert all(f"]({family}.md)" in overview for family in FAMILIES)


def test_the_generator_refuses_an_unknown_marker(hooks):
    with pytest.raises(ValueError, match="unknown"):
        hooks.expand("<!-- generated: nothing -->")
    with pytest.raises(ValueError, match="family"):
        hooks.expand("<!-- generated: metric-family nosuchfamily -->")


def test_the_prose_names_only_commands_and_settings_that_exist():
    from masc_ui.cli import build_parser
    from masc_ui.settings import ENV

    commands = {path[0] for path, _ in _subcommands(build_parser())}
    variables = set(ENV.values()) | NOT_SETTINGS
    unknown_commands, unknown_variables = set(), set()
    for path in _markdown_files():
        text = path.read_text(encoding="utf-8")
        unknown_commands |= {
            f"{path.name}: {m}" for m in re.findall(r"masc-ui ([a-z][a-z-]*)", text) if m not in commands
        }
        unknown_variables |= {
            f"{path.name}: {m}" for m in re.findall(r"\bMASC_[A-Z0-9_]*[A-Z0-9]\b", text) if m not in variables
        }
    assert not unknown_commands, sorted(unknown_commands)
    assert not unknown_variables, sorted(unknown_variables)


def test_the_readme_is_a_front_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    assert [INSTALL_AND_RUN] in [b.strip().splitlines() for b in blocks]
    assert [TEST_COMMAND] in [b.strip().splitlines() for b in blocks]
    assert text.startswith("---\ntitle: MaSC Workbench\n")


def test_the_readme_cpu_install_matches_the_pinned_torch():
    text = README.read_text(encoding="utf-8")
    pins = [
        line
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.startswith(("torch==", "torchvision=="))
    ]
    assert len(pins) == 2
    line = next(ln for ln in text.splitlines() if "download.pytorch.org/whl/cpu" in ln)
    assert line == f"pip install {' '.join(pins)} --index-url https://download.pytorch.org/whl/cpu"


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_commit_names_in_the_readme_or_the_docs(path):
    found = COMMIT_HASH.findall(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(ROOT)} names commits: {found}"


def test_the_commit_name_pattern():
    assert COMMIT_HASH.findall("measured at c6b22fe and 3b6e65d, then 0.2.0 and float32 and 2048 and facade")
    assert COMMIT_HASH.findall("c6b22fe 3b6e65d") == ["c6b22fe", "3b6e65d"]
    assert not COMMIT_HASH.findall("2026-12-01, 1,000 SIGKILLs, bf16, #808080, defaced, 12345678")


@pytest.mark.slow
def test_the_readme_library_example_runs(tmp_path, monkeypatch, capsys):
    """The README's library example, as written, on the demo profile (the demo checkpoints go to a fresh home)."""
    text = README.read_text(encoding="utf-8")
    code = re.search(r"## As a library\n.*?```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(ROOT)
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    values = ast.literal_eval(printed)  # the example prints a dict: metric name -> rounded value
    assert set(values) == {"cp", "pf", "clip_i", "dino_i"} and all(isinstance(v, float) for v in values.values())


def _resolves(dotted: str) -> bool:
    """Whether `dotted` names a module (found, not run: `masc_ui.__main__` would start the CLI), or an attribute (a
    class, function, constant) of an importable module."""
    import importlib
    import importlib.util

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, AttributeError, ValueError):
            found = False
        if not found:
            continue
        if cut == len(parts):
            return True
        target = importlib.import_module(module)
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


def test_the_prose_names_only_modules_files_and_objects_that_exist():
    """Every `masc_ui.*` / `storage.*` name and every source path the docs write in code spans still exists (a move
    or a rename of the package shows up here, with the page to update)."""
    stale = set()
    for path in _markdown_files():
        for span in re.findall(r"`([^`\n]+)`", path.read_text(encoding="utf-8")):
            for name in re.findall(r"\b((?:masc_ui|storage)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)", span):
                if not _resolves(name.rstrip(".")):
                    stale.add(f"{path.relative_to(ROOT)}: {name}")
            for file in re.findall(r"\b((?:masc_ui|storage|tests|bench|scripts)/[\w/.-]*\w)", span):
                if not (ROOT / file).exists():
                    stale.add(f"{path.relative_to(ROOT)}: {file}")
    assert not stale, sorted(stale)
